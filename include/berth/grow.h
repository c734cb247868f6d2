/* berth/grow.h - growable arrays: the one doubling rule every table uses.
 *
 * Threads: no shared state; a table belongs to its caller. */
#ifndef BERTH_GROW_H
#define BERTH_GROW_H

#include <stddef.h>
#include <stdint.h>

/* Makes *p hold at least `need` elements of `elem` bytes, doubling *cap
 * (from 8); new elements are zeroed. limit caps the capacity (0 = no cap
 * below UINT32_MAX / 2). Returns 0, BERTH_ELIMIT (need > limit) or
 * BERTH_ENOMEM; on failure *p and *cap are unchanged. */
int berth_grow(void **p, uint32_t *cap, uint32_t need, size_t elem, uint32_t limit);

#endif
