/*
 * grow.h — the one grow-by-doubling of a heap array, for the launcher, the
 * egress proxy and the policy loader and compiler.  Header-only, and never
 * for the shim: it allocates, and the shim allocates nothing on its hot paths.
 */
#ifndef AIRLOCK_GROW_H
#define AIRLOCK_GROW_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/*
 * Makes room for at least `need` elements of `size` bytes in the array
 * `items` (realloc(3)'ed; NULL for none yet) whose capacity is *cap
 * elements, for an array that never holds more than `max` elements: when
 * need > *cap the capacity doubles, from `first` when it is 0, until it
 * holds need, but not past max.  Returns the array, moved or not, with *cap
 * updated; or NULL when need is over max or the memory or the size_t
 * arithmetic runs out, and then `items` is still valid and owned by the
 * caller and *cap unchanged.  Call it when need > *cap: otherwise it returns
 * items as they are, which is NULL for an array never allocated.
 */
static inline void *grow_array_max(void *items, size_t *cap, size_t need, size_t size,
				   size_t first, size_t max)
{
	size_t n = *cap ? *cap : (first ? first : 1);
	if (need <= *cap)
		return items;
	if (need > max)
		return NULL;
	while (n < need)
		n = n > max / 2 ? max : n * 2;
	if (n > max)
		n = max;
	if (size && n > SIZE_MAX / size)
		return NULL;
	void *grown = realloc(items, n * size);
	if (grown)
		*cap = n;
	return grown;
}

/*
 * grow_array_max() without a bound but size_t's.
 * Typical use, before appending one element:
 *
 *     struct item *more = grow_array(v, &cap, n + 1, sizeof *v, 16);
 *     if (!more)
 *             return -ENOMEM;   (v is still valid, and still the caller's to free)
 *     v = more;
 */
static inline void *grow_array(void *items, size_t *cap, size_t need, size_t size, size_t first)
{
	return grow_array_max(items, cap, need, size, first, SIZE_MAX);
}

#endif
