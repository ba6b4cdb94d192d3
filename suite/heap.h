/* Binary heaps: the one priority queue every module uses (bound's sweep over end times, greedy's
 * lazy queue, the packing generator's cuttable rectangles), instead of a hand-written heap
 * each.
 *
 * Why a macro: MB_HEAP_DEFINE(prefix, type, less) defines static inline functions for one
 * element type and one order, so `less` is inlined and elements are moved as `type`, not
 * through void * and an element size with a comparison function pointer as with qsort: the
 * code compiles to what the hand-written heaps did (the generator at 10^6 buffers runs as fast
 * as with its own heap). `MB_HEAP_DEFINE(prefix, type, less);` at file scope defines, for a
 * `static bool less(type a, type b)` declared before it:
 *
 *   void prefix_push(type *h, int32_t *n, type x);        adds x; *n grows by one
 *   type prefix_pop(type *h, int32_t *n);                 removes and returns the top
 *   void prefix_replace_top(type *h, int32_t n, type x);  the top becomes x (pop then push,
 *                                                         in one sift)
 *
 * Contract.
 * - h[0 .. *n) is the heap and h[0] the top when *n > 0 (read it directly to peek). The array
 *   and its capacity are the caller's: push needs *n < capacity, pop and replace_top need a
 *   non-empty heap; nothing is checked (every caller sizes h for all it can ever hold).
 * - less(a, b) is true when a must come out before b, a strict weak order. The top is an
 *   element no other is less than: `a < b` makes a min-heap, `a > b` a max-heap.
 * - Ties (neither less than the other) come out in an order that depends only on the sequence
 *   of operations, not a FIFO one. The algorithm is fixed: push sifts x up while it is less than
 *   its parent; pop moves the last element into the hole at the top and sifts it down, taking
 *   the right child only if it is less than the left and stopping when the child is not less
 *   than it. These are exactly the comparisons of the heaps this replaced, so a caller whose
 *   `less` leaves ties keeps its old output; callers that need an order independent of the
 *   heap break ties in `less` (greedy by buffer id, the generator by rectangle index).
 * - Elements are copied by value: keep `type` small (a key and an index). */
#ifndef MB_HEAP_H
#define MB_HEAP_H

#include <stdbool.h>
#include <stdint.h>

#if defined(__GNUC__)
#define MB_HEAP_UNUSED __attribute__((unused))
#else
#define MB_HEAP_UNUSED
#endif

#define MB_HEAP_DEFINE(prefix, type, less)                                                       \
  /* Places x in the hole at i of h[0 .. n) and sifts it down. */                                \
  MB_HEAP_UNUSED static inline void prefix##_sift_down_(type *h, int32_t n, int32_t i, type x) { \
    for (;;) {                                                                                   \
      int32_t c = 2 * i + 1;                                                                     \
      if (c >= n) break;                                                                         \
      if (c + 1 < n && less(h[c + 1], h[c])) c++;                                                \
      if (!less(h[c], x)) break;                                                                 \
      h[i] = h[c];                                                                               \
      i = c;                                                                                     \
    }                                                                                            \
    h[i] = x;                                                                                    \
  }                                                                                              \
                                                                                                 \
  MB_HEAP_UNUSED static inline void prefix##_push(type *h, int32_t *n, type x) {                 \
    int32_t i = (*n)++;                                                                          \
    while (i > 0 && less(x, h[(i - 1) / 2])) {                                                   \
      h[i] = h[(i - 1) / 2];                                                                     \
      i = (i - 1) / 2;                                                                           \
    }                                                                                            \
    h[i] = x;                                                                                    \
  }                                                                                              \
                                                                                                 \
  MB_HEAP_UNUSED static inline type prefix##_pop(type *h, int32_t *n) {                          \
    type top = h[0];                                                                             \
    if (--(*n) > 0) prefix##_sift_down_(h, *n, 0, h[*n]);                                        \
    return top;                                                                                  \
  }                                                                                              \
                                                                                                 \
  MB_HEAP_UNUSED static inline void prefix##_replace_top(type *h, int32_t n, type x) {           \
    prefix##_sift_down_(h, n, 0, x);                                                             \
  }                                                                                              \
  struct prefix##_heap_ /* takes the caller's semicolon */

#endif
