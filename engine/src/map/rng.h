/* Deterministic pseudo-random numbers for the searches (rng.c). */
#ifndef RW_MAP_RNG_H
#define RW_MAP_RNG_H

#include <stdint.h>

/* Deterministic pseudo-random numbers (splitmix64 seeded, xoshiro256**). */
typedef struct rw_rng {
    uint64_t s[4];
} rw_rng;
void rw_rng_seed(rw_rng *g, uint64_t seed);
uint64_t rw_rng_next(rw_rng *g);
double rw_rng_uniform(rw_rng *g);          /* [0, 1) */
uint32_t rw_rng_below(rw_rng *g, uint32_t n); /* [0, n), n > 0 */

#endif
