/* fuzz_config.c — the configuration parser (harness/config/config.c) and the plan it expands to:
 * any bytes as config.json must give 0 or a diagnosis, never a crash, a leak or a hang. */
#include "fuzz/fuzz.h"
#include "harness/config/config.h"
#include "harness/run/sweep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fz_write("config.json", data, size);
    hx_config cfg;
    hx_diag d = {0};
    if (hx_config_load(path, 8, &cfg, &d) == 0) {
        hx_plan p;
        hx_plan_build(&cfg, &p);
        hx_plan_free(&p);
        hx_config_free(&cfg);
    }
    hx_config_diag_free(&d);
    return 0;
}
