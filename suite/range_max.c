/* A segment tree over [0, n): node x covers [lo, hi], its children 2x and 2x + 1 the halves.
 * add[x] is a value added to every entry below x and not pushed down; mx[x] is the largest
 * entry below x, counting the adds at x and under it but not those of x's ancestors. */
#include "range_max.h"

#include <stdlib.h>

struct mb_range_max {
  int32_t n;
  int64_t *mx, *add;
};

mb_range_max *mb_range_max_new(int32_t n) {
  mb_range_max *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->n = n > 0 ? n : 1;
  t->mx = calloc(4 * (size_t)t->n, sizeof *t->mx);
  t->add = calloc(4 * (size_t)t->n, sizeof *t->add);
  if (!t->mx || !t->add) {
    mb_range_max_free(t);
    return NULL;
  }
  return t;
}

void mb_range_max_free(mb_range_max *t) {
  if (!t) return;
  free(t->mx);
  free(t->add);
  free(t);
}

int32_t mb_range_max_size(const mb_range_max *t) { return t->n; }

static int64_t max2(int64_t a, int64_t b) { return a > b ? a : b; }

static void add_at(mb_range_max *t, int32_t x, int32_t lo, int32_t hi, int32_t a, int32_t b,
                   int64_t v) {
  if (b < lo || hi < a) return;
  if (a <= lo && hi <= b) {
    t->mx[x] += v;
    t->add[x] += v;
    return;
  }
  int32_t mid = lo + (hi - lo) / 2;
  add_at(t, 2 * x, lo, mid, a, b, v);
  add_at(t, 2 * x + 1, mid + 1, hi, a, b, v);
  t->mx[x] = max2(t->mx[2 * x], t->mx[2 * x + 1]) + t->add[x];
}

static int64_t max_at(const mb_range_max *t, int32_t x, int32_t lo, int32_t hi, int32_t a,
                      int32_t b) {
  if (b < lo || hi < a) return INT64_MIN;
  if (a <= lo && hi <= b) return t->mx[x];
  int32_t mid = lo + (hi - lo) / 2;
  int64_t m = max2(max_at(t, 2 * x, lo, mid, a, b), max_at(t, 2 * x + 1, mid + 1, hi, a, b));
  return m + t->add[x]; /* x overlaps [a, b], so one child does: m is an entry */
}

/* The recursions clip [first, last] to [0, n) themselves: a node outside the range is skipped. */
void mb_range_max_add(mb_range_max *t, int32_t first, int32_t last, int64_t v) {
  if (first <= last) add_at(t, 1, 0, t->n - 1, first, last, v);
}

int64_t mb_range_max_get(const mb_range_max *t, int32_t first, int32_t last) {
  return first <= last ? max_at(t, 1, 0, t->n - 1, first, last) : INT64_MIN;
}
