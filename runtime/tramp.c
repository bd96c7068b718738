/* tramp.c — slow calls that preserve every register (x86-64).
 *
 * The task macros call a few slow paths from the middle of a task (frame allocation past a
 * stacklet's end, FK_ALLOC past it, the free that empties a stacklet, a push that grows
 * the deque or serves a thief).  As
 * ordinary calls they would clobber the caller-saved registers, and every value the task
 * keeps across them would need a callee-saved register: that costs the fast path (and
 * leaves, which share the prologue) more than the slow path ever costs.  So the macros
 * reach them through these stubs (forkscope/impl.h, FK__STUB_CALL_): an asm `call` that the
 * compiler believes clobbers nothing but its output and the flags.  A stub saves the
 * general registers the C function may clobber; the frame stack's stubs first try a quick
 * path that uses the general registers only (below), and otherwise save the whole extended
 * state (x87, SSE, AVX and whatever else XCR0 enables) with XSAVE, or FXSAVE where XSAVE is
 * missing, call the C function, and restore everything.  That costs ~0.1-0.2 us (more with
 * AVX-512), paid only on slow paths.  The asm call steps over the caller's red zone; the stub realigns the stack.
 *
 * Other architectures and sanitizer builds call the C functions directly. */
#include <cpuid.h>

#include "worker.h"

#if FK__STUBS

/* Read by the stubs: bytes of the save area (a multiple of 64), and whether to use XSAVE. */
uint64_t fk__stub_save_bytes = 512;
unsigned char fk__stub_xsave = 0;

__attribute__((constructor)) static void stub_setup(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE) || !(c & bit_XSAVE))
        return; /* FXSAVE: 512 bytes */
    __cpuid_count(0xd, 0, a, b, c, d); /* ebx: bytes for the features XCR0 enables */
    fk__stub_save_bytes = ((uint64_t)b + 63) & ~(uint64_t)63;
    fk__stub_xsave = 1;
}

/* One stub: fn is the C function (arguments in rdi, rsi, rdx; result in rax).  A stub for a
 * function without a result (QUICK_VOID_STUB) keeps rax as well: a task's own result may be
 * there.  A QUICK stub first calls fn_quick, compiled to use the general registers only
 * (FK__GPR_ONLY), with the same arguments: if it returns non-zero (a pointer, or an int
 * for a void fn), the slow path is done and no vector state needs saving (the common
 * slow paths are a few pointer moves: stepping into the cached stacklet and back, which a
 * recursion whose depth swings across a stacklet's end does at every swing); else fn runs
 * with everything saved. */
#define QUICK_CALL(fn, TEST, ARG)                                                          \
    "  and $-16, %rsp\n" ARG                                                               \
    "  call " #fn "_quick\n"                                                               \
    "  " TEST "\n"                                                                         \
    "  jz 6f\n"                                                                            \
    "  mov %rax, %rbx\n"                                                                   \
    "  jmp 4f\n"                                                                           \
    "6:\n"
#define STUB(fn) STUB_(fn, "", "", "", "  mov %rbx, %rax\n", "-72", "")
/* fk__alloc_slow takes its argument in rax, which no task parameter uses (a frame is
 * allocated at a task's entry, where rdi, rsi, rdx... hold the task's own arguments). */
#define QUICK_STUB_RAX(fn)                                                                 \
    STUB_(fn, "  push %rax\n", QUICK_CALL(fn, "test %rax, %rax", "  mov %rax, %rdi\n"),      \
          "  mov -80(%rbp), %rdi\n", "  mov %rbx, %rax\n", "-72", "")
#define QUICK_VOID_STUB(fn) STUB_(fn, "  push %rax\n", QUICK_CALL(fn, "test %eax, %eax", ""), "", "", "-80", "  pop %rax\n")
#define STUB_(fn, PUSH_RAX, QUICK, ARGS, RESULT, SAVED, POP_RAX)                                \
    __asm__(".text\n"                                                                             \
            ".globl " #fn "_stub\n"                                                               \
            ".type " #fn "_stub, @function\n" #fn "_stub:\n"                                      \
            "  .cfi_startproc\n"                                                                  \
            "  push %rbp\n"                                                                       \
            "  .cfi_def_cfa_offset 16\n"                                                          \
            "  .cfi_offset %rbp, -16\n"                                                           \
            "  mov %rsp, %rbp\n"                                                                  \
            "  .cfi_def_cfa_register %rbp\n"                                                      \
            "  push %rcx\n push %rdx\n push %rsi\n push %rdi\n push %r8\n push %r9\n"             \
            "  push %r10\n push %r11\n push %rbx\n" PUSH_RAX QUICK                                \
            "  sub fk__stub_save_bytes(%rip), %rsp\n"                                             \
            "  and $-64, %rsp\n"                                                                  \
            "  cmpb $0, fk__stub_xsave(%rip)\n"                                                   \
            "  je 1f\n"                                                                           \
            "  xor %eax, %eax\n" /* XRSTOR needs the header's reserved bytes zero */              \
            "  mov %rax, 512(%rsp)\n mov %rax, 520(%rsp)\n mov %rax, 528(%rsp)\n"                 \
            "  mov %rax, 536(%rsp)\n mov %rax, 544(%rsp)\n mov %rax, 552(%rsp)\n"                 \
            "  mov %rax, 560(%rsp)\n mov %rax, 568(%rsp)\n"                                       \
            "  mov $-1, %eax\n mov $-1, %edx\n"                                                   \
            "  xsave (%rsp)\n"                                                                    \
            "  jmp 2f\n"                                                                          \
            "1: fxsave (%rsp)\n"                                                                  \
            "2: mov -32(%rbp), %rdi\n mov -24(%rbp), %rsi\n mov -16(%rbp), %rdx\n" ARGS            \
            "  call " #fn "\n"                                                                    \
            "  mov %rax, %rbx\n"                                                                  \
            "  cmpb $0, fk__stub_xsave(%rip)\n"                                                   \
            "  je 3f\n"                                                                           \
            "  mov $-1, %eax\n mov $-1, %edx\n"                                                   \
            "  xrstor (%rsp)\n"                                                                   \
            "  jmp 4f\n"                                                                          \
            "3: fxrstor (%rsp)\n"                                                                 \
            "4:" RESULT                                                                           \
            "  lea " SAVED "(%rbp), %rsp\n" POP_RAX                                               \
            "  pop %rbx\n pop %r11\n pop %r10\n pop %r9\n pop %r8\n pop %rdi\n pop %rsi\n"        \
            "  pop %rdx\n pop %rcx\n"                                                             \
            "  pop %rbp\n"                                                                        \
            "  .cfi_def_cfa %rsp, 8\n"                                                            \
            "  ret\n"                                                                             \
            "  .cfi_endproc\n"                                                                    \
            ".size " #fn "_stub, .-" #fn "_stub\n")

QUICK_STUB_RAX(fk__alloc_slow);
QUICK_VOID_STUB(fk__free_slow);
STUB(fk__push_slow);

#else
/* No stubs: the macros call the C functions. */
typedef int fk__tramp_unused;
#endif
