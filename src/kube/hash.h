/* kube/hash.h - the one byte-string hash of the kube layer: the signature
 * maps (terms.c) and the pod-class table (fastpath.c) hash every pod's
 * texts with it, eight bytes a step. Pure function: safe from any thread. */
#ifndef BERTH_KUBE_HASH_H
#define BERTH_KUBE_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t kube_hash_bytes(const char *s, size_t n)
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
