/* heap.h: MB_HEAP_DEFINE's heaps, for a min and a max order, against qsort and a brute-force
 * model on random arrays with many ties, push, pop and replace_top interleaved; and the order
 * among ties, which the contract fixes, against a copy of the hand-written heap it replaced. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "heap.h"
#include "rng.h"
#include "support.h"

typedef struct item {
  int32_t key, id;
} item;

static bool min_less(item a, item b) { return a.key < b.key; }
static bool max_less(item a, item b) { return a.key > b.key; }
/* a strict total order: by key descending, then id ascending */
static bool total_less(item a, item b) { return a.key > b.key || (a.key == b.key && a.id < b.id); }

MB_HEAP_DEFINE(min_heap, item, min_less);
MB_HEAP_DEFINE(max_heap, item, max_less);
MB_HEAP_DEFINE(total_heap, item, total_less);

static int cmp_key_up(const void *a, const void *b) {
  int32_t x = ((const item *)a)->key, y = ((const item *)b)->key;
  return (x > y) - (x < y);
}
static int cmp_key_down(const void *a, const void *b) { return cmp_key_up(b, a); }
static int cmp_total(const void *a, const void *b) {
  const item *x = a, *y = b;
  return total_less(*x, *y) ? -1 : total_less(*y, *x) ? 1 : 0;
}

typedef struct order {
  bool (*less)(item, item);
  void (*push)(item *, int32_t *, item);
  item (*pop)(item *, int32_t *);
  void (*replace_top)(item *, int32_t, item);
  int (*cmp)(const void *, const void *);
} order;

static const order MIN = {min_less, min_heap_push, min_heap_pop, min_heap_replace_top, cmp_key_up};
static const order MAX = {max_less, max_heap_push, max_heap_pop, max_heap_replace_top,
                          cmp_key_down};

/* The heap property: no element is less than its parent. */
static void check_heap(const order *o, const item *h, int32_t n) {
  for (int32_t i = 1; i < n; i++) assert_false(o->less(h[i], h[(i - 1) / 2]));
}

/* Random keys from [0, range): range 4 gives mostly ties. Ids are 0 .. n-1. */
static void random_items(mb_rng *rng, item *a, int32_t n, int32_t range) {
  for (int32_t i = 0; i < n; i++) a[i] = (item){(int32_t)mb_rng_below(rng, (uint64_t)range), i};
}

/* Push all, pop all: the keys come out as qsort orders them, and every id once. */
static void check_sorts(const order *o, mb_rng *rng, int32_t n, int32_t range) {
  item *a = malloc(sizeof *a * (size_t)n), *h = malloc(sizeof *h * (size_t)n);
  bool *seen = calloc((size_t)n, sizeof *seen);
  assert_non_null(a);
  assert_non_null(h);
  assert_non_null(seen);
  random_items(rng, a, n, range);
  int32_t len = 0;
  for (int32_t i = 0; i < n; i++) {
    o->push(h, &len, a[i]);
    assert_int_equal(len, i + 1);
  }
  check_heap(o, h, len);
  qsort(a, (size_t)n, sizeof *a, o->cmp);
  for (int32_t i = 0; i < n; i++) {
    item x = o->pop(h, &len);
    assert_int_equal(len, n - 1 - i);
    assert_int_equal(x.key, a[i].key);
    assert_false(seen[x.id]);
    seen[x.id] = true;
    check_heap(o, h, len);
  }
  free(a);
  free(h);
  free(seen);
}

static void test_push_all_pop_all_matches_qsort(void **state) {
  (void)state;
  mb_rng rng;
  mb_rng_seed(&rng, 11);
  const int32_t sizes[] = {1, 2, 3, 7, 8, 64, 1000};
  const int32_t ranges[] = {1, 4, 1000000};
  for (int rep = 0; rep < 20; rep++)
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
      for (size_t r = 0; r < sizeof ranges / sizeof *ranges; r++) {
        check_sorts(&MIN, &rng, sizes[s], ranges[r]);
        check_sorts(&MAX, &rng, sizes[s], ranges[r]);
      }
}

/* Push, pop and replace_top interleaved at random against a brute-force model (an unsorted
 * array of what is in the heap): a pop returns an element of the model with the extreme key,
 * and at the end the remaining elements come out as qsort orders them. */
static void check_interleaved(const order *o, mb_rng *rng, int32_t cap, int32_t range) {
  item *h = malloc(sizeof *h * (size_t)cap), *model = malloc(sizeof *model * (size_t)cap);
  assert_non_null(h);
  assert_non_null(model);
  int32_t len = 0, n_model = 0, next_id = 0;
  for (int32_t step = 0; step < 4 * cap; step++) {
    uint64_t op = mb_rng_below(rng, 3);
    item x = {(int32_t)mb_rng_below(rng, (uint64_t)range), next_id++};
    if (len == 0 || (op == 0 && len < cap)) {
      o->push(h, &len, x);
      model[n_model++] = x;
    } else {
      /* the top is an element of the model no other is less than */
      item top = h[0];
      int32_t at = -1;
      for (int32_t j = 0; j < n_model; j++) {
        assert_false(o->less(model[j], top));
        if (model[j].id == top.id) at = j;
      }
      assert_true(at >= 0);
      assert_int_equal(model[at].key, top.key);
      if (op == 1) {
        item y = o->pop(h, &len);
        assert_int_equal(y.id, top.id);
        model[at] = model[--n_model];
      } else {
        o->replace_top(h, len, x);
        model[at] = x;
      }
    }
    assert_int_equal(len, n_model);
    check_heap(o, h, len);
  }
  qsort(model, (size_t)n_model, sizeof *model, o->cmp);
  for (int32_t j = 0; j < n_model; j++) assert_int_equal(o->pop(h, &len).key, model[j].key);
  assert_int_equal(len, 0);
  free(h);
  free(model);
}

static void test_interleaved_matches_model(void **state) {
  (void)state;
  mb_rng rng;
  mb_rng_seed(&rng, 12);
  const int32_t caps[] = {1, 2, 5, 16, 300};
  const int32_t ranges[] = {1, 3, 50};
  for (int rep = 0; rep < 10; rep++)
    for (size_t c = 0; c < sizeof caps / sizeof *caps; c++)
      for (size_t r = 0; r < sizeof ranges / sizeof *ranges; r++) {
        check_interleaved(&MIN, &rng, caps[c], ranges[r]);
        check_interleaved(&MAX, &rng, caps[c], ranges[r]);
      }
}

/* With a strict total order (the generator's and greedy's) the popped element is determined,
 * ids included: each pop is the model's least element, and a drain is qsort's sequence. */
static void test_total_order_pops_exactly_sorted(void **state) {
  (void)state;
  mb_rng rng;
  mb_rng_seed(&rng, 13);
  enum { CAP = 500 };
  static item h[CAP], model[CAP];
  for (int rep = 0; rep < 20; rep++) {
    int32_t len = 0, n_model = 0, next_id = 0;
    for (int step = 0; step < 3 * CAP; step++) {
      if (len == 0 || (len < CAP && mb_rng_below(&rng, 3) != 0)) {
        item x = {(int32_t)mb_rng_below(&rng, 5), next_id++};
        total_heap_push(h, &len, x);
        model[n_model++] = x;
      } else {
        int32_t least = 0;
        for (int32_t j = 1; j < n_model; j++)
          if (total_less(model[j], model[least])) least = j;
        item y = total_heap_pop(h, &len);
        assert_int_equal(y.key, model[least].key);
        assert_int_equal(y.id, model[least].id);
        model[least] = model[--n_model];
      }
    }
    qsort(model, (size_t)n_model, sizeof *model, cmp_total);
    for (int32_t j = 0; j < n_model; j++) {
      item y = total_heap_pop(h, &len);
      assert_int_equal(y.key, model[j].key);
      assert_int_equal(y.id, model[j].id);
    }
    assert_int_equal(len, 0);
  }
}

/* The hand-written min-heap the four modules had (suite/cli/bench_core.c's lanes, here on
 * item.key), whose order among ties the contract keeps. */
static void ref_push(item *h, int32_t *n, item x) {
  int32_t i = (*n)++;
  while (i > 0 && h[(i - 1) / 2].key > x.key) {
    h[i] = h[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h[i] = x;
}

static item ref_pop(item *h, int32_t *n) {
  item top = h[0], last = h[--*n];
  int32_t i = 0;
  for (;;) {
    int32_t c = 2 * i + 1;
    if (c >= *n) break;
    if (c + 1 < *n && h[c + 1].key < h[c].key) c++;
    if (h[c].key >= last.key) break;
    h[i] = h[c];
    i = c;
  }
  if (*n > 0) h[i] = last;
  return top;
}

static void test_ties_come_out_as_the_old_heaps(void **state) {
  (void)state;
  mb_rng rng;
  mb_rng_seed(&rng, 14);
  enum { CAP = 200 };
  static item h[CAP], ref[CAP];
  for (int rep = 0; rep < 50; rep++) {
    int32_t len = 0, n_ref = 0, next_id = 0;
    for (int step = 0; step < 2000; step++) {
      if (len == 0 || (len < CAP && mb_rng_below(&rng, 2) == 0)) {
        item x = {(int32_t)mb_rng_below(&rng, 4), next_id++};
        min_heap_push(h, &len, x);
        ref_push(ref, &n_ref, x);
      } else {
        item y = min_heap_pop(h, &len), z = ref_pop(ref, &n_ref);
        assert_int_equal(y.key, z.key);
        assert_int_equal(y.id, z.id); /* the same one of the tied elements */
      }
      assert_int_equal(len, n_ref);
      assert_memory_equal(h, ref, sizeof *h * (size_t)len);
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_push_all_pop_all_matches_qsort),
      cmocka_unit_test(test_interleaved_matches_model),
      cmocka_unit_test(test_total_order_pops_exactly_sorted),
      cmocka_unit_test(test_ties_come_out_as_the_old_heaps),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
