/* rng.c — UTS's SHA-1 splittable RNG on top of nettle's SHA-1 (see rng.h). */
#include <nettle/sha1.h>
#include <nettle/version.h>
#include <pthread.h>
#include <stdio.h>

#include "uts/rng.h"

_Static_assert(SHA1_DIGEST_SIZE == UTS_STATE_BYTES, "a UTS state is one SHA-1 digest");

static void put_be32(uint8_t out[4], uint32_t v) {
    out[0] = (uint8_t)(v >> 24);
    out[1] = (uint8_t)(v >> 16);
    out[2] = (uint8_t)(v >> 8);
    out[3] = (uint8_t)v;
}

void uts_rng_root(uts_state *out, int32_t seed) {
    uint8_t msg[16 + 4] = {0};
    put_be32(msg + 16, (uint32_t)seed);
    struct sha1_ctx ctx;
    sha1_init(&ctx);
    sha1_update(&ctx, sizeof msg, msg);
    sha1_digest(&ctx, UTS_STATE_BYTES, out->b);
}

/* One 24-byte message, hashed in one update: the hot path of the whole benchmark. */
void uts_rng_child(uts_state *out, const uts_state *parent, uint32_t i) {
    uint8_t msg[UTS_STATE_BYTES + 4];
    for (int k = 0; k < UTS_STATE_BYTES; k++)
        msg[k] = parent->b[k];
    put_be32(msg + UTS_STATE_BYTES, i);
    struct sha1_ctx ctx;
    sha1_init(&ctx);
    sha1_update(&ctx, sizeof msg, msg);
    sha1_digest(&ctx, UTS_STATE_BYTES, out->b);
}

void uts_rng_hex(const uts_state *s, char hex[2 * UTS_STATE_BYTES + 1]) {
    static const char digits[] = "0123456789abcdef";
    for (int k = 0; k < UTS_STATE_BYTES; k++) {
        hex[2 * k] = digits[s->b[k] >> 4];
        hex[2 * k + 1] = digits[s->b[k] & 15];
    }
    hex[2 * UTS_STATE_BYTES] = 0;
}

static char library[64];
static pthread_once_t library_once = PTHREAD_ONCE_INIT;

static void library_init(void) {
    int major = nettle_version_major(), minor = nettle_version_minor();
    if (major == NETTLE_VERSION_MAJOR && minor == NETTLE_VERSION_MINOR)
        snprintf(library, sizeof library, "nettle %d.%d sha1", major, minor);
    else
        snprintf(library, sizeof library, "nettle %d.%d sha1 (built against %d.%d)", major, minor,
                 NETTLE_VERSION_MAJOR, NETTLE_VERSION_MINOR);
}

const char *uts_rng_library(void) {
    pthread_once(&library_once, library_init);
    return library;
}
