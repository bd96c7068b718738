/* fuzz_results.c — the readers of a results directory: raw.jsonl, env.json and config.json
 * (the input split at NUL bytes, in that order) as `forkscope fit` (summary, fits,
 * report.md, the overhead table), `compare` (each side), `run --resume` and `slurm
 * status/merge` (hx_records_read_raw) read them; then summary.csv and fits.csv as written
 * are read back. */
#include "fuzz/fuzz.h"
#include "harness/cli/commands.h"
#include "harness/report/analysis.h"
#include "harness/report/report.h"
#include "harness/analyze/stats.h"
#include "harness/run/records.h"
#include "harness/run/sweep.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    if (!freopen("/dev/null", "w", stdout)) /* fit's summary lines */
        abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const uint8_t *part[3];
    size_t len[3];
    size_t k = fz_split(data, size, part, len, 3);
    const char *names[3] = {"raw.jsonl", "env.json", "config.json"};
    for (size_t i = 0; i < 3; i++)
        fz_write(names[i], i < k ? part[i] : NULL, i < k ? len[i] : 0);
    char raw[PATH_MAX], dir[PATH_MAX];
    fz_path("raw.jsonl", raw, sizeof raw);
    snprintf(dir, sizeof dir, "%s", fz_scratch());

    int why = 0;
    json_decref(hx_records_read_raw(raw, 0, &why));
    hx_compare_read(dir);
    char fit[] = "fit";
    char *argv[] = {fit, dir, NULL};
    if (hx_cmd_fit(2, argv) == 0) { /* read back what it wrote */
        char path[PATH_MAX], err[256];
        hx_summary s;
        hx_summary_read(fz_path("summary.csv", path, sizeof path), &s, err, sizeof err);
        hx_summary_free(&s);
        hx_fit *fits = NULL;
        size_t n = 0;
        hx_fits_read(fz_path("fits.csv", path, sizeof path), &fits, &n, err, sizeof err);
        hx_fit_free_all(fits, n);
    }
    return 0;
}
