/* tests/hostile_names.h - names a hostile client would send against an
 * unkeyed hash table: n names ("p<hex>-" and five characters of [a-z0-9],
 * each at most 15 bytes, 16 apart in one block) whose FNV-1a 32 hashes
 * agree in their low `bits` bits (9..24), so under that hash they all
 * share one slot of a table of up to 2^bits slots. The index's hash before
 * it was keyed (core/nameidx.c) was FNV-1a. Used by tests/unit/test_nameidx.c
 * and bench/bench_kube.c. Returns a malloc'ed block or NULL (memory). */
#ifndef BERTH_TESTS_HOSTILE_NAMES_H
#define BERTH_TESTS_HOSTILE_NAMES_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline uint32_t hostile_fnv1a(const char *s)
{
    uint32_t h = 2166136261u;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 16777619u;
    return h;
}

/* A step h -> (h ^ c) * P is invertible on the low bits, so from the
 * target the last three characters are walked back, and the one before
 * them must close the gap (a table of the 36^3 walks by their bits above
 * the eighth). */
static inline char *hostile_names(uint32_t n, unsigned bits)
{
    static const char cs[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    const uint32_t P = 16777619u, mask = (1u << bits) - 1, target = 0x1234u & mask;
    const uint32_t nb = 1u << (bits - 8); /* buckets: the bits above the eighth */
    uint32_t Pinv = P; /* Newton: P * Pinv == 1 mod 2^32 */
    for (int i = 0; i < 5; i++)
        Pinv *= 2u - P * Pinv;
    enum { W = 36 * 36 * 36 };
    uint32_t *z = malloc(W * sizeof *z), *order = malloc(W * sizeof *order);
    uint32_t *first = calloc(nb + 1, sizeof *first), *fill = malloc(nb * sizeof *fill);
    char *out = calloc(n ? n : 1, 16);
    if (!z || !order || !first || !fill || !out || bits < 9 || bits > 24) {
        free(z);
        free(order);
        free(first);
        free(fill);
        free(out);
        return NULL;
    }
    for (uint32_t w = 0; w < W; w++) {
        uint32_t y = target;
        y = ((y * Pinv) ^ (unsigned char)cs[w % 36]) & mask;
        y = ((y * Pinv) ^ (unsigned char)cs[w / 36 % 36]) & mask;
        y = ((y * Pinv) ^ (unsigned char)cs[w / 1296]) & mask;
        z[w] = (y * Pinv) & mask; /* the state before the free character, xor it */
        first[(z[w] >> 8) + 1]++;
    }
    for (uint32_t b = 0; b < nb; b++)
        first[b + 1] += first[b];
    memcpy(fill, first, nb * sizeof *fill);
    for (uint32_t w = 0; w < W; w++)
        order[fill[z[w] >> 8]++] = w;
    uint32_t got = 0;
    for (uint32_t i = 0; got < n; i++) {
        char *name = out + (size_t)got * 16;
        int len = snprintf(name, 16, "p%x-", i);
        uint32_t s = hostile_fnv1a(name) & mask;
        for (uint32_t k = first[s >> 8]; k < first[(s >> 8) + 1]; k++) {
            uint32_t w = order[k];
            const char *c1 = memchr(cs, (int)((z[w] ^ s) & 0xff), 36);
            if (!c1)
                continue;
            name[len] = *c1;
            name[len + 1] = cs[w / 1296];
            name[len + 2] = cs[w / 36 % 36];
            name[len + 3] = cs[w % 36];
            name[len + 4] = 0;
            got++;
            break;
        }
    }
    free(z);
    free(order);
    free(first);
    free(fill);
    return out;
}

#endif
