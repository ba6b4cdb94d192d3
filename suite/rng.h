/* Deterministic pseudo-random numbers (xoshiro256**, seeded through splitmix64).
 * Every random choice in mallocbench goes through an mb_rng owned by the caller:
 * no rand(), no hidden state, identical streams on every platform. */
#ifndef MB_RNG_H
#define MB_RNG_H

#include <stdint.h>

typedef struct mb_rng {
  uint64_t s[4];
} mb_rng;

void mb_rng_seed(mb_rng *rng, uint64_t seed);
/* A child stream derived from (rng's seed material, stream id); does not advance rng. */
mb_rng mb_rng_split(const mb_rng *rng, uint64_t stream);
uint64_t mb_rng_next(mb_rng *rng);
/* Uniform in [0, n) without modulo bias; n > 0. */
uint64_t mb_rng_below(mb_rng *rng, uint64_t n);
/* Uniform in [lo, hi] (inclusive), lo <= hi. */
int64_t mb_rng_range(mb_rng *rng, int64_t lo, int64_t hi);
/* Uniform double in [0, 1). */
double mb_rng_uniform(mb_rng *rng);
/* Standard normal (Box-Muller). */
double mb_rng_normal(mb_rng *rng);
/* Standard Gumbel sample: -log(-log(U)). */
double mb_rng_gumbel(mb_rng *rng);
/* Gamma(shape, 1) sample (Marsaglia-Tsang); used for Dirichlet noise. */
double mb_rng_gamma(mb_rng *rng, double shape);
/* A uniformly drawn index i in [0, n) with mask[i] != 0 and i != except (-1: exclude none), by
 * one mb_rng_below over their count (the k-th such index); -1, drawing nothing, when there is
 * none. Random legal play, for one: mb_rng_pick(rng, legal_mask, n_actions, -1). */
int32_t mb_rng_pick(mb_rng *rng, const uint8_t *mask, int32_t n, int32_t except);

#endif
