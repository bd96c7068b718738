/* fuzz_cli.c — the bench driver's command line (bench/args.c) in both forms: `--kernel K
 * --OPTION VALUE ...` and the UTS reference's `uts -t T -b B ...`, each value checked against
 * the kernel's option table; for UTS then the tree's parameters as the kernel checks them
 * (uts_params_of).  The input is the argument vector, NUL-separated (at most 64). */
#include "fuzz/fuzz.h"
#include "bench/args.h"
#include "uts/tree.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 4096)
        return 0;
    char *copy = fz_str(data, size);
    char *argv[66];
    int argc = 0;
    char prog[] = "fk-bench-fuzz";
    argv[argc++] = prog;
    for (size_t i = 0, start = 0; i <= size && argc < 65; i++)
        if (i == size || copy[i] == 0) {
            argv[argc++] = copy + start;
            start = i + 1;
        }
    argv[argc] = NULL;
    bench_ctx c;
    memset(&c, 0, sizeof c);
    bench_cli cli;
    char err[512];
    if (bench_cli_parse(argc, argv, &c, &cli, err, sizeof err) == BENCH_CLI_RUN && c.kernel == &bench_uts) {
        uts_params p;
        const uts_preset *preset;
        uts_params_of(&c.v, &p, &preset, err, sizeof err);
    }
    free(copy);
    return 0;
}
