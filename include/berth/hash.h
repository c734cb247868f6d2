/* berth/hash.h - the one byte-string hash for berth's in-memory tables
 * (kube signature maps and pod classes, the fit index's class table, the
 * extender's node cache and reason texts): eight bytes a step, then a
 * final mix, so a table of power-of-two size can take the low bits; and
 * the slots of such a table rebuilt from its entries' hashes.
 * Not stable across versions: never stored, never printed. Names looked up
 * by NUL-terminated string use berth/nameidx.h instead.
 * Pure function: safe from any thread. */
#ifndef BERTH_HASH_H
#define BERTH_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline uint64_t berth_hash_bytes(const char *s, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n, w;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    w = 0;
    memcpy(&w, s + i, n - i);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 29;
    return h;
}

/* The slots of an open-addressing table of cap slots (a power of two,
 * more than n) over entries 0..n) of an array whose elements, stride bytes
 * apart, hold their 64-bit hash at byte offset off: a slot holds entry + 1
 * (0: empty), placed by linear probing from the hash's low bits. A new
 * calloc'd array (the caller frees the old one), NULL when out of memory.
 * Reads the entries only: safe from any thread that may read them. */
static inline uint32_t *berth_hash_slots(const void *base, size_t stride, size_t off, uint32_t n,
                                         uint32_t cap)
{
    uint32_t *tab = calloc(cap, sizeof *tab);
    if (!tab)
        return NULL;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t h;
        memcpy(&h, (const char *)base + (size_t)i * stride + off, sizeof h);
        uint32_t j = (uint32_t)h & (cap - 1);
        while (tab[j])
            j = (j + 1) & (cap - 1);
        tab[j] = i + 1;
    }
    return tab;
}

#endif
