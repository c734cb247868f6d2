/* berth/hash.h - the one byte-string hash for berth's in-memory tables
 * (kube signature maps and pod classes, the fit index's class table, the
 * extender's node cache and reason texts): eight bytes a step, then a
 * final mix, so a table of power-of-two size can take the low bits (a
 * table's slots are rebuilt by berth_slots_rebuild, berth/grow.h).
 * Not stable across versions: never stored, never printed. Names looked up
 * by NUL-terminated string use berth/nameidx.h instead.
 * Pure function: safe from any thread. */
#ifndef BERTH_HASH_H
#define BERTH_HASH_H

#include <stddef.h>
#include <stdint.h>
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

#endif
