/* fuzz_csv.c — the CSV readers `forkscope plot` uses on a results directory a user may have
 * edited: summary.csv and fits.csv (the input split at the first NUL byte). */
#include "fuzz/fuzz.h"
#include "harness/analyze/fit.h"
#include "harness/report/report.h"
#include "harness/analyze/stats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const uint8_t *part[2];
    size_t len[2];
    size_t k = fz_split(data, size, part, len, 2);
    char err[256];
    hx_summary s;
    hx_summary_read(fz_write("summary.csv", part[0], len[0]), &s, err, sizeof err);
    hx_stats_derive(&s);
    hx_summary_free(&s);
    hx_fit *fits = NULL;
    size_t n = 0;
    hx_fits_read(fz_write("fits.csv", k > 1 ? part[1] : part[0], k > 1 ? len[1] : len[0]), &fits, &n, err,
                        sizeof err);
    hx_fit_free_all(fits, n);
    return 0;
}
