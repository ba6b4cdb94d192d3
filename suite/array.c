#include "array.h"

#include <stdlib.h>

bool mb_array_reserve(void **data, int32_t *cap, int64_t need, size_t elem) {
  if (need <= *cap) return true;
  if (need > INT32_MAX) return false;
  int64_t ncap = *cap > 0 ? (int64_t)*cap * 2 : 64;
  while (ncap < need) ncap *= 2;
  if (ncap > INT32_MAX) ncap = INT32_MAX;
  if ((uint64_t)ncap > SIZE_MAX / elem) return false;
  void *p = realloc(*data, (size_t)ncap * elem);
  if (!p) return false;
  *data = p;
  *cap = (int32_t)ncap;
  return true;
}
