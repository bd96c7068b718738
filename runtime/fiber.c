/* fiber.c — the context switch (x86-64, aarch64) and fiber stacks; see fiber.h. */
#include "fiber.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#endif
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#endif

/* ---- the switch ---------------------------------------------------------------------------
 *
 * fk__ctx_switch(save_sp, to_sp, arg): pushes the callee-saved state on the current stack,
 * stores the stack pointer in *save_sp, loads to_sp, pops that stack's state and returns
 * arg (to the point where the other fiber called fk__ctx_switch, or, for a new fiber, to
 * fk__ctx_entry, which calls the start function held in two callee-saved registers).
 *
 * The saved state, from the stack pointer up:
 *   x86-64:  MXCSR (4 bytes), x87 control word (2, padded), r15, r14, r13, r12, rbx, rbp,
 *            return address: 64 bytes;
 *   aarch64: x19..x28, x29, x30, d8..d15, FPCR, padding: 176 bytes (16-byte aligned). */
#if defined(__x86_64__)
#define CTX_FRAME 64
__asm__(".text\n"
        ".globl fk__ctx_switch\n"
        ".type fk__ctx_switch, @function\n"
        ".p2align 4\n"
        "fk__ctx_switch:\n"
        "    pushq %rbp\n"
        "    pushq %rbx\n"
        "    pushq %r12\n"
        "    pushq %r13\n"
        "    pushq %r14\n"
        "    pushq %r15\n"
        "    subq $8, %rsp\n"
        "    stmxcsr (%rsp)\n"
        "    fnstcw 4(%rsp)\n"
        "    movq %rsp, (%rdi)\n"
        "    movq %rsi, %rsp\n"
        "    ldmxcsr (%rsp)\n"
        "    fldcw 4(%rsp)\n"
        "    addq $8, %rsp\n"
        "    popq %r15\n"
        "    popq %r14\n"
        "    popq %r13\n"
        "    popq %r12\n"
        "    popq %rbx\n"
        "    popq %rbp\n"
        "    movq %rdx, %rax\n"
        "    ret\n"
        ".size fk__ctx_switch, .-fk__ctx_switch\n"
        /* A new fiber's first return lands here with rsp 16-byte aligned: call r12(arg, r13).
         * rip is marked undefined so that debuggers stop unwinding here. */
        ".globl fk__ctx_entry\n"
        ".type fk__ctx_entry, @function\n"
        ".p2align 4\n"
        "fk__ctx_entry:\n"
        "    .cfi_startproc\n"
        "    .cfi_undefined rip\n"
        "    movq %rax, %rdi\n"
        "    movq %r13, %rsi\n"
        "    callq *%r12\n"
        "    ud2\n"
        "    .cfi_endproc\n"
        ".size fk__ctx_entry, .-fk__ctx_entry\n");
#elif defined(__aarch64__)
#define CTX_FRAME 176
__asm__(".text\n"
        ".globl fk__ctx_switch\n"
        ".type fk__ctx_switch, %function\n"
        ".p2align 4\n"
        "fk__ctx_switch:\n"
        "    sub sp, sp, #176\n"
        "    stp x19, x20, [sp, #0]\n"
        "    stp x21, x22, [sp, #16]\n"
        "    stp x23, x24, [sp, #32]\n"
        "    stp x25, x26, [sp, #48]\n"
        "    stp x27, x28, [sp, #64]\n"
        "    stp x29, x30, [sp, #80]\n"
        "    stp d8, d9, [sp, #96]\n"
        "    stp d10, d11, [sp, #112]\n"
        "    stp d12, d13, [sp, #128]\n"
        "    stp d14, d15, [sp, #144]\n"
        "    mrs x9, fpcr\n"
        "    str x9, [sp, #160]\n"
        "    mov x9, sp\n"
        "    str x9, [x0]\n"
        "    mov sp, x1\n"
        "    ldr x9, [sp, #160]\n"
        "    msr fpcr, x9\n"
        "    ldp x19, x20, [sp, #0]\n"
        "    ldp x21, x22, [sp, #16]\n"
        "    ldp x23, x24, [sp, #32]\n"
        "    ldp x25, x26, [sp, #48]\n"
        "    ldp x27, x28, [sp, #64]\n"
        "    ldp x29, x30, [sp, #80]\n"
        "    ldp d8, d9, [sp, #96]\n"
        "    ldp d10, d11, [sp, #112]\n"
        "    ldp d12, d13, [sp, #128]\n"
        "    ldp d14, d15, [sp, #144]\n"
        "    add sp, sp, #176\n"
        "    mov x0, x2\n"
        "    ret\n"
        ".size fk__ctx_switch, .-fk__ctx_switch\n"
        /* A new fiber's first return lands here: call x19(arg, x20). */
        ".globl fk__ctx_entry\n"
        ".type fk__ctx_entry, %function\n"
        ".p2align 4\n"
        "fk__ctx_entry:\n"
        "    .cfi_startproc\n"
        "    .cfi_undefined x30\n"
        "    mov x1, x20\n"
        "    blr x19\n"
        "    brk #0\n"
        "    .cfi_endproc\n"
        ".size fk__ctx_entry, .-fk__ctx_entry\n");
#else
#error "fibers: no context switch for this architecture (x86-64 and aarch64 only)"
#endif

void fk__ctx_entry(void);

/* The initial saved state of a fiber that will call start(arg, f) on [lo, hi). */
static void *ctx_make(char *hi, void (*start)(void *, void *), void *f) {
    uintptr_t top = (uintptr_t)hi & ~(uintptr_t)15;
#if defined(__x86_64__)
    /* The return address sits at top - 8, so that after `ret` rsp = top (16-aligned) and the
     * call in fk__ctx_entry enters start with rsp = 8 mod 16, as the ABI requires. */
    uint64_t *s = (uint64_t *)(top - CTX_FRAME);
    uint32_t mxcsr;
    uint16_t fpucw;
    __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
    __asm__ volatile("fnstcw %0" : "=m"(fpucw));
    memset(s, 0, CTX_FRAME);
    memcpy((char *)s, &mxcsr, 4);
    memcpy((char *)s + 4, &fpucw, 2);
    s[3] = (uint64_t)(uintptr_t)f;     /* r13 */
    s[4] = (uint64_t)(uintptr_t)start; /* r12 */
    s[7] = (uint64_t)(uintptr_t)fk__ctx_entry;
    return s;
#else
    uint64_t *s = (uint64_t *)(top - CTX_FRAME);
    uint64_t fpcr;
    __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
    memset(s, 0, CTX_FRAME);
    s[0] = (uint64_t)(uintptr_t)start;        /* x19 */
    s[1] = (uint64_t)(uintptr_t)f;            /* x20 */
    s[11] = (uint64_t)(uintptr_t)fk__ctx_entry; /* x30 */
    s[20] = fpcr;
    return s;
#endif
}

/* ---- fibers ----------------------------------------------------------------------------- */

static _Thread_local fk__fiber *current;

/* What a fiber runs when first switched to; fn and data sit at the top of its stack. */
typedef struct start_info {
    fk__fiber_fn *fn;
    void *data;
} start_info;

static inline void note_arrived(fk__fiber *self) {
#if defined(__SANITIZE_ADDRESS__)
    __sanitizer_finish_switch_fiber(self->asan_fake, NULL, NULL);
#endif
    (void)self;
}

static void fiber_start(void *arg, void *fp) {
    fk__fiber *self = fp;
#if defined(__SANITIZE_ADDRESS__)
    __sanitizer_finish_switch_fiber(NULL, NULL, NULL);
#endif
    start_info *si = (start_info *)(void *)self->hi;
    si->fn(arg, si->data);
    abort(); /* a fiber's function must switch away for good, never return */
}

static inline void note_leaving(fk__fiber *from, fk__fiber *to, int for_good) {
#if defined(__SANITIZE_ADDRESS__)
    __sanitizer_start_switch_fiber(for_good ? NULL : &from->asan_fake, to->lo, (size_t)(to->hi - to->lo));
#endif
#if defined(__SANITIZE_THREAD__)
    __tsan_switch_to_fiber(to->tsan, 0);
#endif
    (void)from, (void)for_good;
    current = to;
    fk__guard_fiber_zone = to->map ? &to->guard : NULL;
}

void *fk__fiber_switch(fk__fiber *from, fk__fiber *to, void *arg) {
    note_leaving(from, to, 0);
    void *got = fk__ctx_switch(&from->sp, to->sp, arg);
    note_arrived(from);
    return got;
}

void fk__fiber_exit_to(fk__fiber *from, fk__fiber *to, void *arg) {
    note_leaving(from, to, 1);
    fk__ctx_switch(&from->sp, to->sp, arg);
    abort(); /* nobody resumes a fiber that left for good without restarting it */
}

fk__fiber *fk__fiber_current(void) { return current; }

int fk__fiber_thread_init(fk__fiber *main) {
    memset(main, 0, sizeof *main);
    int rc = fk__thread_stack(&main->lo, &main->hi);
    if (rc)
        return rc;
#if defined(__SANITIZE_THREAD__)
    main->tsan = __tsan_get_current_fiber();
#endif
    fk__guard_install();
    fk__guard_thread_enter();
    current = main;
    fk__guard_fiber_zone = NULL;
    return 0;
}

void fk__fiber_thread_exit(fk__fiber *main) {
    (void)main;
    current = NULL;
    fk__guard_fiber_zone = NULL;
    fk__guard_thread_leave();
}

fk__fiber *fk__fiber_new(size_t stack_bytes, fk__fiber_fn *fn, void *data, const char *what,
                         const char *hint) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t guard = (FK_FIBER_GUARD_BYTES + page - 1) / page * page;
    if (stack_bytes < FK__FIBER_MIN_STACK)
        stack_bytes = FK__FIBER_MIN_STACK;
    size_t top = (sizeof(fk__fiber) + sizeof(start_info) + 63) & ~(size_t)63;
    if (stack_bytes > SIZE_MAX / 2) {
        errno = ENOMEM;
        return NULL;
    }
    size_t bytes = (guard + stack_bytes + top + page - 1) / page * page;
    char *map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
                     -1, 0);
    if (map == MAP_FAILED)
        return NULL;
    if (mprotect(map, guard, PROT_NONE) != 0) {
        int e = errno;
        munmap(map, bytes);
        errno = e;
        return NULL;
    }
    /* [map, map+guard) guard | [lo, hi) stack | start_info | descriptor (at the very top) */
    fk__fiber *f = (fk__fiber *)(void *)(map + bytes - ((sizeof(fk__fiber) + 63) & ~(size_t)63));
    memset(f, 0, sizeof *f);
    f->map = map;
    f->map_bytes = bytes;
    f->lo = map + guard;
    f->hi = (char *)f - ((sizeof(start_info) + 15) & ~(size_t)15);
    f->guard = (fk__guard_zone){.lo = map, .hi = map + guard, .stack_bytes = (size_t)(f->hi - f->lo),
                                .what = what, .hint = hint};
#if defined(__SANITIZE_THREAD__)
    f->tsan = __tsan_create_fiber(0);
#endif
    fk__fiber_restart(f, fn, data);
    return f;
}

void fk__fiber_restart(fk__fiber *f, fk__fiber_fn *fn, void *data) {
    start_info *si = (start_info *)(void *)f->hi;
    si->fn = fn;
    si->data = data;
    f->sp = ctx_make(f->hi, fiber_start, f);
}

void fk__fiber_free(fk__fiber *f) {
    if (!f || !f->map)
        return;
#if defined(__SANITIZE_THREAD__)
    __tsan_destroy_fiber(f->tsan);
#endif
    munmap(f->map, f->map_bytes);
}
