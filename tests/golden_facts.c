/* golden_facts.c — prints what the harness knows about each kernel and each configuration, so
 * that a change that moves those facts around (issue 21: kernels that describe themselves) can
 * be shown to change none of them.  scripts/golden-test.sh compares its output with
 * tests/golden/facts.txt.
 *
 *     golden_facts KERNELS          every kernel at its defaults: option rows, blocks, the
 *                                   answer a command variant is checked against, the paper's
 *                                   words, the memory-fit note, the plan's estimates
 *     golden_facts CONFIG...        every benchmark of each configuration: the same facts at
 *                                   its params, then `run --dry-run` at 2 and at 16 cores
 *
 * Deterministic on any machine: the cores are given, not read; the caller sets
 * FORKSCOPE_DRIVER (every driver "exists") and runs from the source tree. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness/analyze/fit.h"
#include "harness/analyze/stats.h"
#include "harness/config/command.h"
#include "harness/config/config.h"
#include "harness/config/kernels.h"
#include "harness/report/report.h"
#include "harness/run/plan.h"
#include "harness/run/sweep.h"

/* The variants whose estimates are printed for a kernel at its defaults: one of each kind
 * the estimate tells apart. */
static const char *const est_variants[] = {"serial", "cont-seg-busy", "child-native-busy", "child-fiber-busy-any",
                                           "omp", "omp-llvm", "tbb", "lace"};

/* The note a memory fit of this kernel carries (fit.c), from a small made-up cell set. */
static const char *memory_note(const char *kernel, char *buf, size_t len) {
    hx_cell cells[4];
    char bname[] = "b", vname[] = "v", kname[64];
    snprintf(kname, sizeof kname, "%s", kernel);
    memset(cells, 0, sizeof cells);
    for (int i = 0; i < 4; i++) {
        cells[i].benchmark = bname;
        cells[i].kernel = kname;
        cells[i].variant = vname;
        cells[i].workers = 1L << i;
        cells[i].mem = 1000 + 100.0 * (1 << i);
        cells[i].mem_se = 10;
    }
    hx_summary s;
    memset(&s, 0, sizeof s);
    s.cells = cells;
    s.ncells = 4;
    hx_fit *fits;
    size_t n = hx_fit_all(&s, &fits);
    snprintf(buf, len, "%s", n ? fits[0].note : "(no fit)");
    hx_fit_free_all(fits, n);
    return buf;
}

static void bench_facts(const hx_bench *b) {
    char note[400];
    char *params = hx_stats_render_params(b->params); /* (as report.md renders them) */
    printf("  benchmark %s: kernel %s, params {%s}\n", b->name, b->kernel, params);
    printf("    blocks: %d\n", hx_kernels_block(b->kernel));
    printf("    checkable by command: %d\n", hx_command_checkable(b->kernel));
    double a;
    int rc = hx_command_expected(b, &a);
    if (rc)
        printf("    expected answer: none (%s)\n", rc == -ENOTSUP ? "ENOTSUP" : "error");
    else
        printf("    expected answer: %.17g\n", a);
    const char *paper = hx_report_paper_text(b->kernel, params);
    printf("    paper at 112: %s\n", paper ? paper : "(none)");
    printf("    memory note: %s\n", memory_note(b->kernel, note, sizeof note));
    free(params);
}

static void plan_facts(const hx_config *cfg) {
    hx_plan p;
    if (hx_plan_build(cfg, &p)) {
        printf("  plan: internal error\n");
        hx_plan_free(&p);
        return;
    }
    printf("  plan: %zu cells, %zu runs; skipped: serial %zu, command %zu, peer %zu, blocking %zu\n", p.ncells,
           p.nruns, p.nskipped_serial, p.nskipped_command, p.nskipped_peer, p.nskipped_blocking);
    for (size_t i = 0; i < p.ncells; i++)
        printf("    %-48s est %.6g s at 2 cores, %.6g s at 16\n", p.cells[i].id, hx_plan_estimate(&p.cells[i], 2),
               hx_plan_estimate(&p.cells[i], 16));
    hx_plan_free(&p);
}

static int load(const char *path, unsigned cores, hx_config *cfg) {
    hx_diag d = {0};
    int rc = hx_config_load(path, cores, cfg, &d);
    if (rc) {
        printf("%s: does not load:\n", path);
        hx_config_diag_print(&d, stdout);
    }
    hx_config_diag_free(&d);
    return rc;
}

static int kernels(void) {
    int bad = 0;
    for (size_t ki = 0; bench_descs[ki]; ki++) {
        const hx_kernel_info *k = bench_descs[ki];
        printf("kernel %s\n", k->name);
        for (const hx_kopt *o = k->opts; o->name; o++)
            printf("  option %s: type %d, default %s, range [%.17g, %.17g], pow2 %d, choices %s: %s\n", o->name,
                   (int)o->type, o->def, o->min, o->max, o->pow2, o->choices ? o->choices : "-", o->help);
        /* The kernel at its defaults, in a configuration of its own. */
        char path[] = "/tmp/golden-facts-XXXXXX";
        int fd = mkstemp(path);
        FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
        if (!f) {
            perror("golden_facts: temporary file");
            return 1;
        }
        fprintf(f, "{\"name\": \"golden-%s\", \"benchmarks\": [{\"name\": \"%s\", \"kernel\": \"%s\"}],\n", k->name,
                k->name, k->name);
        fprintf(f, " \"variants\": [");
        for (size_t v = 0; v < sizeof est_variants / sizeof *est_variants; v++)
            fprintf(f, "%s\"%s\"", v ? ", " : "", est_variants[v]);
        fprintf(f, "], \"workers\": [1, 2, 16], \"calibrate\": false}\n");
        fclose(f);
        hx_config cfg;
        if (load(path, 16, &cfg)) {
            bad = 1;
        } else {
            bench_facts(&cfg.benchmarks[0]);
            plan_facts(&cfg);
            hx_config_free(&cfg);
        }
        unlink(path);
    }
    return bad;
}

static int config(const char *path) {
    printf("config %s\n", path);
    hx_config cfg;
    if (load(path, 2, &cfg))
        return 1;
    for (size_t b = 0; b < cfg.nbenchmarks; b++)
        bench_facts(&cfg.benchmarks[b]);
    hx_config_free(&cfg);
    fflush(stdout);
    for (unsigned cores = 2; cores <= 16; cores += 14) {
        printf("  dry run at %u cores:\n", cores);
        fflush(stdout);
        hx_sweep_opts o = {.config_path = path, .outdir = "build/golden/no-such-dir", .dry_run = 1,
                           .live_progress = 0, .plan_out = stdout, .cores = cores};
        char dir[4096];
        int rc = hx_sweep_run(&o, dir, sizeof dir);
        fflush(stdout);
        printf("  dry run at %u cores: rc %d\n", cores, rc);
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: golden_facts KERNELS | CONFIG...\n");
        return 2;
    }
    if (!getenv("FORKSCOPE_DRIVER")) {
        fprintf(stderr, "golden_facts: set FORKSCOPE_DRIVER (scripts/golden-test.sh does): which drivers are built "
                        "must not change the facts\n");
        return 2;
    }
    if (!strcmp(argv[1], "KERNELS"))
        return kernels();
    int bad = 0;
    for (int i = 1; i < argc; i++)
        bad |= config(argv[i]);
    return bad;
}
