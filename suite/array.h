/* Growable arrays: the one doubling policy every module uses for its append-only arrays. */
#ifndef MB_ARRAY_H
#define MB_ARRAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Ensures *data (capacity *cap elements of `elem` bytes) holds at least `need` elements,
 * doubling from 64. False (and *data untouched) when out of memory or when `need` exceeds
 * INT32_MAX elements: callers report their own error. */
bool mb_array_reserve(void **data, int32_t *cap, int64_t need, size_t elem);

#endif
