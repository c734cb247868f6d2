/* core/grow.c - doubling growth for the flat tables and byte buffers of
 * every layer, the huge-page advice for the large ones, and the rebuild
 * of their open-addressing slot tables (and their longest run, for tests). */
#include "berth/grow.h"
#include "berth/error.h"
#include "core/invariant.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void berth_advise_huge(void *p, size_t len)
{
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = 2u * 1024u * 1024u;
    if (len < BERTH_HUGE_MIN)
        return;
    uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1), e = ((uintptr_t)p + len) & ~(huge - 1);
    if (e > a)
        (void)madvise((void *)a, e - a, MADV_HUGEPAGE); /* advice: a refusal changes nothing */
#else
    (void)p;
    (void)len;
#endif
}

/* berth_grow and berth_grow_append: the capacity first (need <= limit,
 * doubling from 8), the table realloc'ed, advised, and its new part zeroed
 * when `zero` */
static int grow_table(void **p, uint32_t *cap, uint32_t need, size_t elem, uint32_t limit, int zero)
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
    berth_advise_huge(q, (size_t)nc * elem); /* before the new part is touched */
    if (zero)
        memset((char *)q + (size_t)*cap * elem, 0, (size_t)(nc - *cap) * elem);
    *p = q;
    *cap = nc;
    return 0;
}

int berth_grow(void **p, uint32_t *cap, uint32_t need, size_t elem, uint32_t limit)
{
    return grow_table(p, cap, need, elem, limit, 1);
}

int berth_grow_append(void **p, uint32_t *cap, uint32_t need, size_t elem, uint32_t limit)
{
    return grow_table(p, cap, need, elem, limit, 0);
}

int berth_grow_bytes(void **p, size_t *cap, size_t need, size_t first)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : first ? first : 64;
    while (nc < need) {
        if (nc > SIZE_MAX / 2)
            return BERTH_ENOMEM;
        nc *= 2;
    }
    void *q = realloc(*p, nc);
    if (!q)
        return BERTH_ENOMEM;
    *p = q;
    *cap = nc;
    return 0;
}

int berth_slots_rebuild(uint32_t **table, uint32_t *cap, uint32_t ncap, const void *entries,
                        size_t stride, size_t hash_off, size_t hash_size, uint32_t n)
{
    if (NEVER(ncap <= n || (ncap & (ncap - 1)) || (hash_size != 4 && hash_size != 8)))
        return BERTH_EINTERNAL;
    uint32_t *t = calloc(ncap, sizeof *t);
    if (!t)
        return BERTH_ENOMEM;
    const char *e = entries;
    for (uint32_t k = 0; k < n; k++) {
        uint64_t h;
        if (hash_size == 8) {
            memcpy(&h, e + (size_t)k * stride + hash_off, sizeof h);
        } else {
            uint32_t h32;
            memcpy(&h32, e + (size_t)k * stride + hash_off, sizeof h32);
            h = h32;
        }
        uint32_t i = (uint32_t)h & (ncap - 1);
        while (t[i])
            i = (i + 1) & (ncap - 1);
        t[i] = k + 1;
    }
    free(*table);
    *table = t;
    *cap = ncap;
    return 0;
}

uint32_t berth_slots_longest_run(const uint32_t *table, uint32_t cap)
{
    uint32_t best = 0, run = 0;
    /* twice round, so a run across the table's end counts whole */
    for (uint64_t j = 0; cap && j < 2ull * cap; j++) {
        run = table[j & (cap - 1)] ? run + 1 : 0;
        if (run > best)
            best = run;
    }
    return best < cap ? best : cap;
}
