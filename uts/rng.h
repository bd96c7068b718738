/* rng.h — UTS's splittable random number generator: every tree node is a SHA-1 state.
 *
 * A node's 20-byte state is its whole identity.  The root's state is the SHA-1 of 16 zero
 * bytes followed by the seed (4 bytes, big-endian); child i's state is the SHA-1 of the
 * parent's 20 bytes followed by i (4 bytes, big-endian).  A node's random number is the
 * big-endian word in bytes 16..19 of its state, masked to 31 bits.  These are the rules of
 * the UTS 2.1 reference implementation (Olivier et al., "UTS: An Unbalanced Tree Search
 * Benchmark", LCPC 2006; its rng/brg_sha1 generator), so any traversal
 * order, on any number of workers, sees the same tree.
 *
 * SHA-1 itself comes from nettle (libnettle); nothing here hashes by hand.  All functions
 * are pure and thread-safe: they read and write only the states they are given. */
#ifndef UTS_RNG_H
#define UTS_RNG_H

#include <stdint.h>

#define UTS_STATE_BYTES 20

typedef struct uts_state {
    uint8_t b[UTS_STATE_BYTES];
} uts_state;

/* Writes the root state for seed (the seed's two's-complement bits, big-endian). */
void uts_rng_root(uts_state *out, int32_t seed);

/* Writes child i of parent into out (out may not alias parent). */
void uts_rng_child(uts_state *out, const uts_state *parent, uint32_t i);

/* The state's random number, in [0, 2^31). */
static inline uint32_t uts_rng_rand(const uts_state *s) {
    return ((uint32_t)s->b[16] << 24 | (uint32_t)s->b[17] << 16 | (uint32_t)s->b[18] << 8 | (uint32_t)s->b[19]) &
           0x7fffffffu;
}

/* The state's random number as a real in [0, 1): rand / 2^31 (exact in a double). */
static inline double uts_rng_uniform(const uts_state *s) { return (double)uts_rng_rand(s) / 2147483648.0; }

/* Writes the state as 40 lower-case hex digits and a NUL into hex (41 bytes). */
void uts_rng_hex(const uts_state *s, char hex[2 * UTS_STATE_BYTES + 1]);

/* A static string naming the SHA-1 implementation in use, e.g. "nettle 3.8 sha1"
 * (the version is the one of the library loaded at run time). */
const char *uts_rng_library(void);

#endif
