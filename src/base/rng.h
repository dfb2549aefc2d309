/* rng.h: a small, seedable, portable RNG (splitmix64 seeding xoshiro-style
 * state), so runs reproduce bit for bit on any machine. */
#ifndef GATELAB_RNG_H
#define GATELAB_RNG_H

#include <stdint.h>

typedef struct {
    uint64_t s[4];
} Rng;

void rng_seed(Rng *r, uint64_t seed);
/* Seed from several words (e.g. seed, split, step, index). */
void rng_seed4(Rng *r, uint64_t a, uint64_t b, uint64_t c, uint64_t d);
uint64_t rng_u64(Rng *r);
/* Uniform in [0, 1). */
double rng_uniform(Rng *r);
/* Uniform integer in [0, n). */
uint32_t rng_below(Rng *r, uint32_t n);
/* Standard normal (Box-Muller). */
double rng_normal(Rng *r);

#endif
