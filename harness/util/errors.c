/* errors.c — return codes to exit statuses and messages (errors.h). */
#include "harness/util/errors.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int hx_exit_status(int rc) {
    if (rc >= 0)
        return rc == 0 ? HX_EXIT_OK : HX_EXIT_INTERNAL;
#define X(name, code, text)                                                                  \
    if (rc == HX_E##name)                                                                    \
        return HX_EXIT_##name;
    HX_ERR_MAP(X)
#undef X
    return rc >= -HX_ERRNO_MAX ? HX_EXIT_IO : HX_EXIT_INTERNAL;
}

const char *hx_strerror(int rc) {
    if (rc == 0)
        return "success";
#define X(name, code, text)                                                                  \
    if (rc == HX_E##name)                                                                    \
        return text;
    HX_ERR_MAP(X)
#undef X
    return rc < 0 && rc >= -HX_ERRNO_MAX ? strerror(-rc) : "unknown error";
}

int hx_errf(char *err, size_t len, const char *fmt, ...) {
    if (err && len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, len, fmt, ap);
        va_end(ap);
    }
    return -EINVAL;
}
