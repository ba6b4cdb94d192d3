/* Helpers of the tests on long schedules (op-less workloads of up to 2^31 - 2 time steps):
 * a workload "spread out" in time, which every module must treat exactly as the original, and
 * an address-space limit under which nothing may allocate per time step.
 *
 * Header-only (static functions) so that each test file includes what it uses. */
#ifndef MB_TEST_LONG_SCHEDULE_H
#define MB_TEST_LONG_SCHEDULE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#include "rng.h"
#include "workload.h"

#ifndef __has_feature
#define __has_feature(x) 0
#endif
#if defined(__SANITIZE_ADDRESS__) || __has_feature(address_sanitizer)
#define MB_TEST_SANITIZED 1
#else
#define MB_TEST_SANITIZED 0
#endif

/* Each original time step t becomes the K steps [K t + C, K t + C + K): lengths scale by K
 * exactly (a power of two, so per-step densities scale exactly too) and the order of every
 * start and end is kept. A schedule of up to MB_TEST_SPREAD_MAX_T steps spreads to at most
 * K x MB_TEST_SPREAD_MAX_T + C < 2^31 - 2 steps. */
#define MB_TEST_SPREAD_K (1 << 21)
#define MB_TEST_SPREAD_C 12345
#define MB_TEST_SPREAD_MAX_T 1000

static inline int32_t mb_test_spread_start(int32_t t) {
  return MB_TEST_SPREAD_K * t + MB_TEST_SPREAD_C;
}
static inline int32_t mb_test_spread_end(int32_t t) {
  return MB_TEST_SPREAD_K * t + MB_TEST_SPREAD_C + MB_TEST_SPREAD_K - 1;
}

/* The op-less workload w (schedule_length <= MB_TEST_SPREAD_MAX_T) with every live range
 * spread as above and the same sizes, pins, benefits and slow time. NULL on failure. */
static inline mb_workload *mb_test_spread_workload(const mb_workload *w) {
  if (w->n_ops != 0 || w->schedule_length > MB_TEST_SPREAD_MAX_T) return NULL;
  mb_workload_builder *b = mb_builder_new(w->name, "spread");
  if (!b) return NULL;
  for (int32_t i = 0; i < w->n_buffers; i++) {
    const mb_buffer *buf = &w->buffers[i];
    mb_builder_add_buffer(b, buf->name, buf->size, mb_test_spread_start(buf->start),
                          mb_test_spread_end(buf->end), buf->pinned);
    mb_builder_set_benefit(b, i, buf->benefit_ps);
  }
  mb_builder_set_schedule(b, mb_test_spread_start(w->schedule_length), w->slow_time_ps);
  return mb_builder_finish(b, NULL);
}

/* A random op-less workload: n buffers on a schedule of T <= MB_TEST_SPREAD_MAX_T steps,
 * live ranges of 1..T/4 + 1 steps (some of the whole schedule), sizes 1..64 x 512 bytes, a
 * random benefit each, a few pinned. */
static inline mb_workload *mb_test_random_opless(mb_rng *rng, int32_t n, int32_t T) {
  mb_workload_builder *b = mb_builder_new("opless", "test");
  if (!b) return NULL;
  mb_time_ps total = 0;
  for (int32_t i = 0; i < n; i++) {
    char name[32];
    snprintf(name, sizeof name, "b%d", (int)i);
    int32_t len = mb_rng_below(rng, 10) == 0 ? T : 1 + (int32_t)mb_rng_below(rng, T / 4 + 1);
    if (len > T) len = T;
    int32_t start = (int32_t)mb_rng_below(rng, (uint64_t)(T - len + 1));
    int64_t size = 512 * mb_rng_range(rng, 1, 64);
    mb_builder_add_buffer(b, name, size, start, start + len - 1, mb_rng_below(rng, 20) == 0);
    mb_time_ps benefit = (mb_time_ps)mb_rng_range(rng, 1, 1000000);
    mb_builder_set_benefit(b, i, benefit);
    total += benefit;
  }
  mb_builder_set_schedule(b, T, 2 * total + 1);
  return mb_builder_finish(b, NULL);
}

/* tests/e2e/import.sh's big.csv as a workload: 3 buffers on a schedule of 2^31 - 2 steps (sizes
 * 1024, 2048, 512 live on [0, 2e9], [5, 2e9 + 1], [100, 300]; peak 3584 bytes first at t = 100),
 * benefit 1000 ps each, slow time 10000 ps. NULL on failure. */
static inline mb_workload *mb_test_big_schedule_workload(void) {
  mb_workload_builder *b = mb_builder_new("big", "test");
  if (!b) return NULL;
  mb_builder_add_buffer(b, "0", 1024, 0, 2000000000, false);
  mb_builder_add_buffer(b, "1", 2048, 5, 2000000001, false);
  mb_builder_add_buffer(b, "2", 512, 100, 300, false);
  for (int32_t i = 0; i < 3; i++) mb_builder_set_benefit(b, i, 1000);
  mb_builder_set_schedule(b, INT32_MAX - 1, 10000);
  return mb_builder_finish(b, NULL);
}

/* Lowers the soft address-space limit to the current size plus `headroom` bytes, so that an
 * allocation per time step of a long schedule fails (or the process dies) instead of passing
 * unnoticed on a machine with memory to spare; *saved keeps the old limit for
 * mb_test_memory_unlimit. False (and no limit) under AddressSanitizer, whose shadow memory
 * needs terabytes of address space, or when the size cannot be read. */
static inline bool mb_test_memory_limit(uint64_t headroom, struct rlimit *saved) {
  if (MB_TEST_SANITIZED) return false;
  FILE *f = fopen("/proc/self/statm", "r");
  unsigned long long pages = 0;
  bool ok = f && fscanf(f, "%llu", &pages) == 1;
  if (f) fclose(f);
  if (!ok || getrlimit(RLIMIT_AS, saved) != 0) return false;
  struct rlimit lim = *saved;
  lim.rlim_cur = (rlim_t)(pages * (unsigned long long)sysconf(_SC_PAGESIZE) + headroom);
  if (saved->rlim_max != RLIM_INFINITY && lim.rlim_cur > saved->rlim_max)
    lim.rlim_cur = saved->rlim_max;
  return setrlimit(RLIMIT_AS, &lim) == 0;
}

static inline void mb_test_memory_unlimit(bool limited, const struct rlimit *saved) {
  if (limited) setrlimit(RLIMIT_AS, saved);
}

#endif
