/* error.c — error codes, fatal errors and misuse reports. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "guard.h"
#include "worker.h"
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

#define MSG_ENTRY(name, msg) msg,
#define NAME_ENTRY(name, msg) #name,
static const char *const messages[] = {"success", FK_ERRNO_MAP(MSG_ENTRY)};
static const char *const names[] = {"OK", FK_ERRNO_MAP(NAME_ENTRY)};

const char *fk_strerror(int err) {
    return err <= 0 && -err < FK__ERRI_COUNT_ ? messages[-err] : "unknown error";
}

const char *fk_err_name(int err) {
    return err <= 0 && -err < FK__ERRI_COUNT_ ? names[-err] : "UNKNOWN";
}

void fk__fatal(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("forkscope: fatal: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

void fk__bad_resume(const fk__task_info *task, uint64_t idx) {
    fk__fatal("task %s resumed at point %llu, which its body does not have: is an FK_FORK, FK_CALL, "
              "FK_JOIN or FK_SWITCH_TO inside a switch statement of the task? (not allowed)", task->name,
              (unsigned long long)(idx - FK__RP_BASE));
}

void fk__misuse(const char *what, const char *task, const char *file, int line) {
    fprintf(stderr, "forkscope: misuse in task %s (%s:%d): %s\n", task, file, line, what);
    abort();
}

/* A result address in the calling thread's C stack is a local of some task (frame-stack
 * variants: FK__DBG_SLOT in debug builds, fk__at_check for FK_FORK_AT and FK_CALL_AT in
 * release builds).  The thread's stack bounds are looked up once per thread. */
void fk__check_cstack_slot(const void *slot, const char *what, const char *task, const char *file, int line) {
    static _Thread_local int known; /* 1: [lo, hi) is this thread's stack; -1: unknown */
    static _Thread_local char *lo, *hi;
    if (!slot)
        return; /* no result (a void task) */
    if (!known)
        known = fk__thread_stack(&lo, &hi) == 0 ? 1 : -1;
    int local = known == 1 && (const char *)slot >= lo && (const char *)slot < hi;
#if defined(__SANITIZE_ADDRESS__)
    /* ASan's use-after-return detection (on by default from GCC 13 and Clang 15) moves
     * address-taken locals to a "fake stack" on the heap */
    local = local || __asan_addr_is_in_fake_stack(__asan_get_current_fake_stack(), (void *)(uintptr_t)slot, NULL, NULL);
#endif
    if (local) {
        char msg[512];
        snprintf(msg, sizeof msg,
                 "%s is in the C stack (a local variable or a parameter?): the task may continue on another worker from its "
                 "frame, where no C local survives, and the child may finish after the local is gone; store the "
                 "result in a member of the frame: FK_FORK(x, ...) or FK_CALL(x, ...) store it to f->x", what);
        fk__misuse(msg, task, file, line);
    }
}

#if FK_DEBUG
/* v as FK__ASSERT_CMP prints it: signed or unsigned decimal, large values also in hex. */
static const char *cmp_value(char *buf, size_t size, int is_signed, unsigned long long v) {
    if (is_signed)
        snprintf(buf, size, "%lld", (long long)v);
    else if (v > 0xffff)
        snprintf(buf, size, "%llu = %#llx", v, v);
    else
        snprintf(buf, size, "%llu", v);
    return buf;
}

void fk__assert_cmp_fail(const char *file, int line, const char *a, const char *op, const char *b, int a_signed,
                         unsigned long long va, int b_signed, unsigned long long vb) {
    char sa[64], sb[64];
    fk__fatal("%s:%d: check failed: %s %s %s (%s %s %s)", file, line, a, op, b,
              cmp_value(sa, sizeof sa, a_signed, va), op, cmp_value(sb, sizeof sb, b_signed, vb));
}

/* FK_ALLOC in debug builds: each block has a header linking it to the task's previous
 * block, so that FK_FREE can check FILO order and FK_RETURN can check none is left. */
typedef struct dbg_block {
    void *prev;
    uint64_t magic;
} dbg_block;
#define BLOCK_MAGIC 0xA110CA7EDB10C000ull

void *fk__dbg_alloc(fk_frame *f, size_t n, int has_frame, const char *task, const char *file, int line) {
    if (!has_frame)
        fk__misuse("FK_ALLOC before FK_BEGIN", task, file, line);
    if (f->dbg_scope)
        fk__misuse("FK_ALLOC inside a fork-join scope (between FK_FORK and FK_JOIN)", task, file, line);
    dbg_block *b = fk__alloc(FK__ROUND(sizeof *b) + n);
    b->prev = f->dbg_top_alloc;
    b->magic = BLOCK_MAGIC;
    void *p = (char *)b + FK__ROUND(sizeof *b);
    f->dbg_top_alloc = p;
    return p;
}

void fk__dbg_free(fk_frame *f, void *p, const char *task, const char *file, int line) {
    if (f->dbg_scope)
        fk__misuse("FK_FREE inside a fork-join scope (between FK_FORK and FK_JOIN)", task, file, line);
    if (!p || p != f->dbg_top_alloc)
        fk__misuse("FK_FREE out of order: not the task's latest FK_ALLOC block", task, file, line);
    dbg_block *b = (dbg_block *)(void *)((char *)p - FK__ROUND(sizeof *b));
    if (b->magic != BLOCK_MAGIC)
        fk__misuse("FK_FREE of a corrupted block", task, file, line);
    f->dbg_top_alloc = b->prev;
    b->magic = 0;
    fk__free(b);
}
#endif
