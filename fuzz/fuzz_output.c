/* fuzz_output.c — what the harness reads from the programs it runs: a bench driver's JSON
 * on stdout (hx_records_driver_output), callgrind_annotate's report (hx_icount_parse,
 * hx_icount_parse3), and a command variant's output judged by its time and answer regexes
 * (hx_command_judge; the regexes come from a user's config, so they are fuzzed too).  The first byte picks which;
 * the rest is the text. */
#include "fuzz/fuzz.h"
#include "harness/config/command.h"
#include "harness/config/config.h"
#include "harness/run/icount.h"
#include "harness/run/records.h"
#include "harness/run/sweep.h"

static const char *const kernels[] = {"fib", "integrate", "nqueens", "uts", "matmul"};

/* A command variant with these regexes and a benchmark of kernel with params. */
static void judge(const char *time_re, const char *answer_re, const char *kernel, json_t *params,
                  const char *out) {
    hx_variant v;
    memset(&v, 0, sizeof v);
    v.kind = HX_VARIANT_COMMAND;
    v.spec = json_pack("{s:{s:s}, s:{s:s}}", "time", "regex", time_re, "answer", "regex", answer_re);
    hx_bench b;
    memset(&b, 0, sizeof b);
    snprintf(b.name, sizeof b.name, "%s", kernel);
    snprintf(b.kernel, sizeof b.kernel, "%s", kernel);
    b.params = params;
    double t;
    char note[256];
    hx_command_judge(&v, &b, out, &t, note, sizeof note);
    json_decref(v.spec);
    json_decref(params);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1)
        return 0;
    unsigned mode = data[0] % 4;
    const uint8_t *rest = data + 1;
    size_t n = size - 1;
    switch (mode) {
    case 0: { /* a driver's stdout */
        json_t *doc;
        double t, cpu;
        hx_records_driver_output((const char *)rest, n, &doc, &t, &cpu);
        json_decref(doc);
        break;
    }
    case 1: { /* callgrind_annotate --auto=no (--show=Ir,Dr,Dw), for one of the kernels */
        char *text = fz_str(rest, n);
        unsigned long long sum, sums[3];
        hx_icount_parse(text, kernels[size % 5], &sum);
        hx_icount_parse3(text, kernels[size % 5], sums);
        free(text);
        break;
    }
    case 2: { /* a command's output against the usual regexes */
        char *text = fz_str(rest, n);
        judge("time[:=] *([0-9.eE+-]+)", "(?:answer|result)[:=] *([0-9.eE+-]+)", "fib", json_pack("{s:i}", "n", 30),
              text);
        judge("([0-9.]+) s$", "^([0-9]+)$", "nqueens", json_pack("{s:i}", "n", 10), text);
        judge("t=([0-9.]+)", "= *([-0-9.eE+]+)", "integrate", json_pack("{s:i, s:f}", "n", 100, "eps", 1e-9), text);
        free(text);
        break;
    }
    default: { /* regexes from a config: time regex NUL answer regex NUL output */
        const uint8_t *part[3];
        size_t len[3];
        if (fz_split(rest, n, part, len, 3) < 3)
            break;
        char *tre = fz_str(part[0], len[0]), *are = fz_str(part[1], len[1]), *text = fz_str(part[2], len[2]);
        judge(tre, are, "fib", json_pack("{s:i}", "n", 20), text);
        free(tre);
        free(are);
        free(text);
        break;
    }
    }
    return 0;
}
