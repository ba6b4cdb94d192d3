#include "rng.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void mb_rng_seed(mb_rng *rng, uint64_t seed) {
  uint64_t x = seed;
  for (int i = 0; i < 4; i++) rng->s[i] = splitmix64(&x);
}

mb_rng mb_rng_split(const mb_rng *rng, uint64_t stream) {
  mb_rng child;
  uint64_t x = rng->s[0] ^ rotl(rng->s[1], 17) ^ rotl(rng->s[2], 31) ^ rotl(rng->s[3], 47);
  x ^= splitmix64(&stream);
  mb_rng_seed(&child, x);
  return child;
}

uint64_t mb_rng_next(mb_rng *rng) {
  uint64_t *s = rng->s;
  const uint64_t result = rotl(s[1] * 5, 7) * 9;
  const uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

uint64_t mb_rng_below(mb_rng *rng, uint64_t n) {
  uint64_t threshold = -n % n; /* 2^64 mod n */
  for (;;) {
    uint64_t r = mb_rng_next(rng);
    if (r >= threshold) return r % n;
  }
}

int64_t mb_rng_range(mb_rng *rng, int64_t lo, int64_t hi) {
  uint64_t span = (uint64_t)hi - (uint64_t)lo + 1;
  if (span == 0) return (int64_t)mb_rng_next(rng); /* full 64-bit range */
  return (int64_t)((uint64_t)lo + mb_rng_below(rng, span));
}

double mb_rng_uniform(mb_rng *rng) { return (double)(mb_rng_next(rng) >> 11) * 0x1.0p-53; }

double mb_rng_normal(mb_rng *rng) {
  double u1 = mb_rng_uniform(rng);
  double u2 = mb_rng_uniform(rng);
  if (u1 < 1e-300) u1 = 1e-300;
  return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

double mb_rng_gumbel(mb_rng *rng) {
  double u = mb_rng_uniform(rng);
  if (u < 1e-300) u = 1e-300;
  return -log(-log(u));
}

double mb_rng_gamma(mb_rng *rng, double shape) {
  if (shape < 1.0) {
    double u = mb_rng_uniform(rng);
    return mb_rng_gamma(rng, shape + 1.0) * pow(u > 1e-300 ? u : 1e-300, 1.0 / shape);
  }
  double d = shape - 1.0 / 3.0;
  double c = 1.0 / sqrt(9.0 * d);
  for (;;) {
    double x = mb_rng_normal(rng);
    double v = 1.0 + c * x;
    if (v <= 0) continue;
    v = v * v * v;
    double u = mb_rng_uniform(rng);
    if (u < 1.0 - 0.0331 * x * x * x * x) return d * v;
    if (log(u) < 0.5 * x * x + d * (1.0 - v + log(v))) return d * v;
  }
}

int32_t mb_rng_pick(mb_rng *rng, const uint8_t *mask, int32_t n, int32_t except) {
  int32_t count = 0;
  for (int32_t i = 0; i < n; i++) count += mask[i] && i != except;
  if (count == 0) return -1;
  int32_t k = (int32_t)mb_rng_below(rng, (uint64_t)count);
  for (int32_t i = 0; i < n; i++)
    if (mask[i] && i != except && k-- == 0) return i;
  return -1; /* not reached: k < count */
}
