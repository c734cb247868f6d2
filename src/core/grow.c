/* core/grow.c - doubling growth for the flat tables of every layer. */
#include "berth/grow.h"
#include "berth/error.h"
#include "core/invariant.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int berth_grow(void **p, uint32_t *cap, uint32_t need, size_t elem, uint32_t limit)
{
    if (need <= *cap)
        return 0;
    if (NEVER(elem == 0))
        return BERTH_EINTERNAL;
    if (!limit)
        limit = UINT32_MAX / 2;
    if (need > limit)
        return BERTH_ELIMIT;
    uint32_t nc = *cap ? *cap : 8;
    while (nc < need)
        nc = nc > limit / 2 ? limit : nc * 2;
    BERTH_ASSERT(nc >= need && nc <= limit && nc > *cap);
    if (NEVER((size_t)nc > SIZE_MAX / elem))
        return BERTH_ELIMIT;
    void *q = realloc(*p, (size_t)nc * elem);
    if (!q)
        return BERTH_ENOMEM;
    memset((char *)q + (size_t)*cap * elem, 0, (size_t)(nc - *cap) * elem);
    *p = q;
    *cap = nc;
    return 0;
}
