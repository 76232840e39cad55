/* Seeded pseudo-random numbers: xoshiro256** state filled by splitmix64,
 * so that every algorithm is reproducible for a given seed. */
#include "rng.h"

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void rw_rng_seed(rw_rng *g, uint64_t seed)
{
    for (int i = 0; i < 4; i++) g->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t rw_rng_next(rw_rng *g)
{
    uint64_t *s = g->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double rw_rng_uniform(rw_rng *g) { return (double)(rw_rng_next(g) >> 11) * 0x1.0p-53; }

uint32_t rw_rng_below(rw_rng *g, uint32_t n)
{
    /* Lemire's multiply-shift; the bias for n << 2^32 is negligible here. */
    return (uint32_t)(((rw_rng_next(g) >> 32) * (uint64_t)n) >> 32);
}
