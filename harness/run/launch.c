/* launch.c — the launcher process: runs drivers, enforces limits, measures with wait4(). */
#include "harness/util/env.h"
#include "harness/run/launch.h"
#include "harness/run/cgroup.h"
#include "harness/util/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct hx_launcher {
    pid_t pid;
    int sock;
    char mech[PATH_MAX + 64];
};

/* ---- messages on the socket -------------------------------------------------------------------
 * Both ends are the same executable (the launcher is forked), so fixed parts go as structs. */

enum { MSG_HELLO = 'H', MSG_RUN = 'R', MSG_KILL = 'K', MSG_DONE = 'D' };

struct msg_hdr {
    uint32_t type, len; /* len: payload bytes after the header */
};
struct req_fixed {
    double time_limit_s;
    uint64_t mem_limit;
    uint32_t argc, envc; /* then argc + envc NUL-terminated strings */
};
struct res_fixed {
    int32_t exec_errno, exited, exit_code, signaled, signo, killed;
    double wall_s, user_s, sys_s;
    int64_t maxrss_kib, cg_peak_kib;
    uint32_t out_len, err_len; /* then the bytes of each */
};

static int write_all(int fd, const void *buf, size_t len) {
    const char *p = buf;
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

/* 0, or -1 on error or end of file (errno 0 then). */
static int read_all(int fd, void *buf, size_t len) {
    char *p = buf;
    while (len) {
        ssize_t r = read(fd, p, len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (r == 0)
                errno = 0;
            return -1;
        }
        p += r;
        len -= (size_t)r;
    }
    return 0;
}

static int send_msg(int fd, uint32_t type, const void *a, size_t alen, const void *b, size_t blen, const void *c,
                    size_t clen) {
    struct msg_hdr h = {type, (uint32_t)(alen + blen + clen)};
    if (write_all(fd, &h, sizeof h) || (alen && write_all(fd, a, alen)) || (blen && write_all(fd, b, blen)) ||
        (clen && write_all(fd, c, clen)))
        return -1;
    return 0;
}

/* ==== the launcher process ========================================================================= */

static hx_cg cg; /* the launcher's cgroup for memory limits (kind HX_CG_NONE: poll) */

static long rss_bytes(pid_t pid) {
    char path[64], buf[128];
    snprintf(path, sizeof path, "/proc/%d/statm", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    long size, resident;
    if (sscanf(buf, "%ld %ld", &size, &resident) != 2)
        return -1;
    return resident * sysconf(_SC_PAGESIZE);
}

/* The driver child, between fork and exec: its own process group, dies with the launcher,
 * default signal handling, stdin from /dev/null, the cgroup, the extra environment (NAME=value
 * sets, a bare NAME unsets). */
static void child_exec(char **argv, char **env, int out_w, int err_w, int exec_w, int join_cg) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (int s = 1; s < NSIG; s++)
        if (s != SIGKILL && s != SIGSTOP)
            signal(s, SIG_DFL);
    int nul = open("/dev/null", O_RDONLY);
    if (nul >= 0 && nul != 0) {
        dup2(nul, 0);
        close(nul);
    }
    dup2(out_w, 1);
    dup2(err_w, 2);
    if (join_cg) {
        int rc = hx_cg_join(&cg);
        if (rc) {
            int e = -rc;
            write_all(exec_w, &e, sizeof e);
            _exit(127);
        }
    }
    for (; env && *env; env++) /* NAME=value sets, a bare NAME unsets */
        if (strchr(*env, '='))
            putenv(*env);
        else
            unsetenv(*env);
    execv(argv[0], argv);
    int e = errno;
    write_all(exec_w, &e, sizeof e);
    _exit(127);
}

static void append_tail(char *tail, size_t *len, const char *buf, size_t n) {
    if (n >= HX_LAUNCH_ERR_TAIL) {
        memcpy(tail, buf + n - HX_LAUNCH_ERR_TAIL, HX_LAUNCH_ERR_TAIL);
        *len = HX_LAUNCH_ERR_TAIL;
        return;
    }
    if (*len + n > HX_LAUNCH_ERR_TAIL) {
        size_t drop = *len + n - HX_LAUNCH_ERR_TAIL;
        memmove(tail, tail + drop, *len - drop);
        *len -= drop;
    }
    memcpy(tail + *len, buf, n);
    *len += n;
}

/* Reads what is there on fd into out (up to the cap) or the stderr tail; 0 at end of file. */
static int drain(int fd, char **out, size_t *olen, size_t *ocap, char *tail, size_t *tlen) {
    char buf[4096];
    ssize_t r = read(fd, buf, sizeof buf);
    if (r < 0)
        return errno == EINTR || errno == EAGAIN ? 1 : 0;
    if (r == 0)
        return 0;
    if (tail) {
        append_tail(tail, tlen, buf, (size_t)r);
        return 1;
    }
    size_t keep = *olen + (size_t)r > HX_LAUNCH_OUT_MAX ? HX_LAUNCH_OUT_MAX - *olen : (size_t)r;
    if (*olen + keep + 1 > *ocap) {
        size_t cap = *ocap ? *ocap : 16384;
        while (cap < *olen + keep + 1)
            cap *= 2;
        char *p = realloc(*out, cap);
        if (!p)
            return 1;
        *out = p;
        *ocap = cap;
    }
    memcpy(*out + *olen, buf, keep);
    *olen += keep;
    return 1;
}

/* Runs one request; sends MSG_DONE.  Returns -1 if the harness is gone. */
/* A driver process being watched by the launcher. */
typedef struct child {
    pid_t pid;
    int pidfd;          /* -1 without pidfd_open: wait4 is polled */
    int out_fd, err_fd; /* read ends of its stdout and stderr */
    int polling_mem;    /* the memory limit is enforced by polling the RSS */
    double t0, deadline;
    uint64_t mem_limit;
    char *out; /* all of stdout */
    size_t olen, ocap;
    char tail[HX_LAUNCH_ERR_TAIL]; /* the end of stderr */
    size_t tlen;
    int status, gone; /* wait status; the harness went away */
    struct rusage ru;
} child;

/* Reads the next message from the harness while a driver runs: a kill request, or EOF (the
 * harness died: the driver is killed and the launcher will exit). */
static void watch_socket(int sock, child *ch, struct res_fixed *rs, int reaped) {
    struct msg_hdr h;
    if (read_all(sock, &h, sizeof h)) {
        ch->gone = 1;
        if (!reaped)
            kill(-ch->pid, SIGKILL);
    } else if (h.type == MSG_KILL && !reaped) {
        kill(-ch->pid, SIGKILL);
        if (!rs->killed)
            rs->killed = HX_KILLED_INTERRUPT;
    }
}

/* Waits for the driver to end, collecting its output, enforcing the time and memory
 * limits and obeying kill requests; then drains what is left in its pipes. */
static void watch_child(int sock, child *ch, struct res_fixed *rs) {
    int out_open = 1, err_open = 1, reaped = 0;
    double drain_until = 0;
    while (!reaped || out_open || err_open) {
        struct pollfd fds[4];
        int nf = 0, i_out = -1, i_err = -1, i_sock = -1;
        if (out_open)
            fds[i_out = nf++] = (struct pollfd){ch->out_fd, POLLIN, 0};
        if (err_open)
            fds[i_err = nf++] = (struct pollfd){ch->err_fd, POLLIN, 0};
        if (!ch->gone)
            fds[i_sock = nf++] = (struct pollfd){sock, POLLIN, 0};
        if (!reaped && ch->pidfd >= 0)
            fds[nf++] = (struct pollfd){ch->pidfd, POLLIN, 0};
        int timeout = reaped ? 20 : ch->polling_mem || ch->pidfd < 0 ? 10 : -1;
        if (!reaped && ch->deadline > 0 && !rs->killed) {
            int to = (int)((ch->deadline - hx_now()) * 1000) + 1;
            timeout = timeout < 0 || to < timeout ? (to < 0 ? 0 : to) : timeout;
        }
        int n = poll(fds, (nfds_t)nf, timeout);
        if (n < 0 && errno != EINTR)
            break;
        if (i_out >= 0 && fds[i_out].revents)
            out_open = drain(ch->out_fd, &ch->out, &ch->olen, &ch->ocap, NULL, NULL);
        if (i_err >= 0 && fds[i_err].revents)
            err_open = drain(ch->err_fd, NULL, NULL, NULL, ch->tail, &ch->tlen);
        if (i_sock >= 0 && fds[i_sock].revents)
            watch_socket(sock, ch, rs, reaped);
        if (!reaped) {
            if (wait4(ch->pid, &ch->status, WNOHANG, &ch->ru) == ch->pid) {
                reaped = 1;
                rs->wall_s = hx_now() - ch->t0;
                drain_until = hx_now() + 0.2;
                continue;
            }
            if (ch->deadline > 0 && hx_now() >= ch->deadline && !rs->killed) {
                kill(-ch->pid, SIGKILL);
                rs->killed = HX_KILLED_TIMEOUT;
            }
            if (ch->polling_mem && !rs->killed && rss_bytes(ch->pid) > (long)ch->mem_limit) {
                kill(-ch->pid, SIGKILL);
                rs->killed = HX_KILLED_MEMORY;
            }
        } else if (hx_now() > drain_until) {
            /* The driver is gone but something it started still holds its pipes. */
            kill(-ch->pid, SIGKILL);
            if (hx_now() > drain_until + 0.2)
                break;
        }
    }
}

/* The run's outcome from the wait status and rusage (and, with a cgroup, its OOM count). */
static void child_result(const child *ch, struct res_fixed *rs) {
    if (WIFEXITED(ch->status)) {
        rs->exited = 1;
        rs->exit_code = WEXITSTATUS(ch->status);
    } else if (WIFSIGNALED(ch->status)) {
        rs->signaled = 1;
        rs->signo = WTERMSIG(ch->status);
    }
    rs->user_s = (double)ch->ru.ru_utime.tv_sec + (double)ch->ru.ru_utime.tv_usec * 1e-6;
    rs->sys_s = (double)ch->ru.ru_stime.tv_sec + (double)ch->ru.ru_stime.tv_usec * 1e-6;
    rs->maxrss_kib = ch->ru.ru_maxrss;
}

/* Runs one request (argv, environment, limits) and replies with its result. */
static int run_one(int sock, char *payload, uint32_t plen) {
    struct req_fixed rq;
    struct res_fixed rs;
    memset(&rs, 0, sizeof rs);
    rs.cg_peak_kib = -1;
    if (plen < sizeof rq)
        return -1;
    memcpy(&rq, payload, sizeof rq);
    char **strs = hx_xcalloc((size_t)rq.argc + rq.envc + 2, sizeof *strs);
    char *p = payload + sizeof rq, *end = payload + plen;
    for (uint32_t i = 0; i < rq.argc + rq.envc && p < end; i++) {
        strs[i + (i >= rq.argc)] = p;
        p += strlen(p) + 1;
    }
    char **argv = strs, **env = strs + rq.argc + 1;

    child ch = {.pidfd = -1, .mem_limit = rq.mem_limit};
    int op[2] = {-1, -1}, ep[2] = {-1, -1}, xp[2] = {-1, -1};
    int join_cg = cg.kind != HX_CG_NONE && rq.mem_limit;
    if (pipe2(op, O_CLOEXEC) || pipe2(ep, O_CLOEXEC) || pipe2(xp, O_CLOEXEC)) {
        rs.exec_errno = errno;
        goto reply;
    }
    if (join_cg) {
        int rc = hx_cg_run_begin(&cg, (unsigned long long)rq.mem_limit);
        if (rc) {
            rs.exec_errno = -rc;
            goto reply;
        }
    }
    ch.t0 = hx_now();
    ch.pid = fork();
    if (ch.pid < 0) {
        rs.exec_errno = errno;
        goto reply;
    }
    if (ch.pid == 0)
        child_exec(argv, env, op[1], ep[1], xp[1], join_cg);
    setpgid(ch.pid, ch.pid); /* also here, so that a kill right after fork reaches the group */
    close(op[1]), close(ep[1]), close(xp[1]);
    op[1] = ep[1] = xp[1] = -1;
    fcntl(op[0], F_SETFL, O_NONBLOCK);
    fcntl(ep[0], F_SETFL, O_NONBLOCK);
#ifdef SYS_pidfd_open
    ch.pidfd = (int)syscall(SYS_pidfd_open, ch.pid, 0);
#endif
    ch.out_fd = op[0];
    ch.err_fd = ep[0];
    ch.polling_mem = rq.mem_limit && !join_cg;
    ch.deadline = rq.time_limit_s > 0 ? ch.t0 + rq.time_limit_s : 0;
    watch_child(sock, &ch, &rs);
    if (ch.pidfd >= 0)
        close(ch.pidfd);
    int xerr = 0;
    if (read(xp[0], &xerr, sizeof xerr) == (ssize_t)sizeof xerr)
        rs.exec_errno = xerr ? xerr : EIO;
    child_result(&ch, &rs);
    if (join_cg) {
        long long peak;
        if (hx_cg_run_end(&cg, &peak) && rs.signaled && rs.signo == SIGKILL && !rs.killed)
            rs.killed = HX_KILLED_MEMORY;
        rs.cg_peak_kib = peak;
    }
reply:
    for (int k = 0; k < 2; k++) {
        if (op[k] >= 0)
            close(op[k]);
        if (ep[k] >= 0)
            close(ep[k]);
        if (xp[k] >= 0)
            close(xp[k]);
    }
    rs.out_len = (uint32_t)ch.olen;
    rs.err_len = (uint32_t)ch.tlen;
    int rc = ch.gone ? -1 : send_msg(sock, MSG_DONE, &rs, sizeof rs, ch.out, ch.olen, ch.tail, ch.tlen);
    free(ch.out);
    free(strs);
    return rc;
}

static void launcher_main(int sock) __attribute__((noreturn));
static void launcher_main(int sock) {
    signal(SIGINT, SIG_IGN); /* the harness handles ^C and tells us (MSG_KILL) */
    signal(SIGTERM, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGCHLD, SIG_DFL);
    char desc[PATH_MAX + 64];
    hx_cg_setup(&cg, hx_env("FORKSCOPE_MEMLIMIT"), desc, sizeof desc);
    if (send_msg(sock, MSG_HELLO, desc, strlen(desc) + 1, NULL, 0, NULL, 0))
        goto out;
    for (;;) {
        struct msg_hdr h;
        if (read_all(sock, &h, sizeof h))
            break;
        char *payload = malloc(h.len ? h.len : 1);
        if (!payload || read_all(sock, payload, h.len)) {
            free(payload);
            break;
        }
        int rc = h.type == MSG_RUN ? run_one(sock, payload, h.len) : 0; /* a late MSG_KILL: nothing runs */
        free(payload);
        if (rc)
            break;
    }
out:
    hx_cg_teardown(&cg);
    _exit(0);
}

/* ==== the harness side ========================================================================== */

int hx_launcher_start(hx_launcher **out) {
    int sv[2];
    hx_launcher *l = calloc(1, sizeof *l);
    if (!l)
        return -ENOMEM;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
        int e = errno;
        free(l);
        return -e;
    }
    fflush(NULL); /* nothing buffered may be written twice */
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(sv[0]), close(sv[1]);
        free(l);
        return -e;
    }
    if (pid == 0) {
        close(sv[0]);
        launcher_main(sv[1]);
    }
    close(sv[1]);
    l->pid = pid;
    l->sock = sv[0];
    struct msg_hdr h;
    if (read_all(l->sock, &h, sizeof h) || h.type != MSG_HELLO || h.len > sizeof l->mech ||
        read_all(l->sock, l->mech, h.len)) {
        hx_launcher_stop(l);
        return -EPIPE;
    }
    l->mech[sizeof l->mech - 1] = 0;
    *out = l;
    return 0;
}

const char *hx_launcher_mechanism(const hx_launcher *l) { return l->mech; }

void hx_launcher_stop(hx_launcher *l) {
    if (!l)
        return;
    close(l->sock);
    while (waitpid(l->pid, NULL, 0) < 0 && errno == EINTR)
        ;
    free(l);
}

int hx_launcher_run(hx_launcher *l, const hx_run_req *req, hx_run_res *res, int intr_fd) {
    memset(res, 0, sizeof *res);
    struct req_fixed rq = {req->time_limit_s, req->mem_limit_bytes, 0, 0};
    size_t slen = 0;
    for (char *const *a = req->argv; *a; a++, rq.argc++)
        slen += strlen(*a) + 1;
    for (char *const *e = req->env; e && *e; e++, rq.envc++)
        slen += strlen(*e) + 1;
    char *strs = malloc(slen ? slen : 1), *p = strs;
    if (!strs)
        return -ENOMEM;
    for (char *const *a = req->argv; *a; a++)
        p = stpcpy(p, *a) + 1;
    for (char *const *e = req->env; e && *e; e++)
        p = stpcpy(p, *e) + 1;
    int rc = send_msg(l->sock, MSG_RUN, &rq, sizeof rq, strs, slen, NULL, 0);
    free(strs);
    if (rc)
        return -EPIPE;
    int kill_sent = 0;
    for (;;) {
        struct pollfd fds[2] = {{l->sock, POLLIN, 0}, {intr_fd, POLLIN, 0}};
        int n = poll(fds, intr_fd >= 0 && !kill_sent ? 2 : 1, req->tick ? 1000 : -1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (n == 0) { /* a second without news: let the caller show that time passes */
            req->tick(req->tick_arg);
            continue;
        }
        if (intr_fd >= 0 && !kill_sent && fds[1].revents) {
            if (send_msg(l->sock, MSG_KILL, NULL, 0, NULL, 0, NULL, 0))
                return -EPIPE;
            kill_sent = 1;
        }
        if (fds[0].revents)
            break;
    }
    struct msg_hdr h;
    struct res_fixed rs;
    if (read_all(l->sock, &h, sizeof h) || h.type != MSG_DONE || h.len < sizeof rs || read_all(l->sock, &rs, sizeof rs))
        return -EPIPE;
    res->out = malloc((size_t)rs.out_len + 1);
    res->err = malloc((size_t)rs.err_len + 1);
    if (!res->out || !res->err || read_all(l->sock, res->out, rs.out_len) || read_all(l->sock, res->err, rs.err_len)) {
        hx_run_res_free(res);
        return -EPIPE;
    }
    res->out[rs.out_len] = 0;
    res->err[rs.err_len] = 0;
    res->out_len = rs.out_len;
    res->err_len = rs.err_len;
    res->exec_errno = rs.exec_errno;
    res->exited = rs.exited;
    res->exit_code = rs.exit_code;
    res->signaled = rs.signaled;
    res->signo = rs.signo;
    res->killed = rs.killed;
    res->wall_s = rs.wall_s;
    res->user_s = rs.user_s;
    res->sys_s = rs.sys_s;
    res->maxrss_kib = (long)rs.maxrss_kib;
    res->cg_peak_kib = (long long)rs.cg_peak_kib;
    return 0;
}

void hx_run_res_free(hx_run_res *res) {
    free(res->out);
    free(res->err);
    res->out = res->err = NULL;
}
