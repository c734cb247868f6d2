/* core/nameidx.c - the shared name -> index hash table (berth/nameidx.h):
 * linear probing over a power-of-two table, at most half full, the hash
 * kept per slot so growing and probing compare strings only on equal
 * hashes; the hash keyed per index (SipHash-2-4, libsodium), so input
 * names cannot be chosen to share slots. */
#include "berth/nameidx.h"
#include "berth/error.h"
#include "core/invariant.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

void berth_nameidx_init(berth_nameidx *x)
{
    memset(x, 0, sizeof *x);
}

void berth_nameidx_free(berth_nameidx *x)
{
    free(x->slot);
    memset(x, 0, sizeof *x);
}

void berth_nameidx_key_new(unsigned char key[BERTH_NAMEIDX_KEY])
{
    _Static_assert(BERTH_NAMEIDX_KEY == crypto_shorthash_KEYBYTES, "SipHash key size");
    size_t got = 0;
    while (got < BERTH_NAMEIDX_KEY) {
        ssize_t r = getrandom(key + got, BERTH_NAMEIDX_KEY - got, GRND_NONBLOCK);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    if (got == BERTH_NAMEIDX_KEY)
        return;
    /* no entropy yet (early boot) or no getrandom: the clock, this key's
     * address and a stack address (ASLR), hashed together */
    struct timespec t[2];
    clock_gettime(CLOCK_REALTIME, &t[0]);
    clock_gettime(CLOCK_MONOTONIC, &t[1]);
    uintptr_t a[2] = {(uintptr_t)key, (uintptr_t)&t};
    unsigned char seed[sizeof t + sizeof a], k0[crypto_shorthash_KEYBYTES] = {0};
    memcpy(seed, t, sizeof t);
    memcpy(seed + sizeof t, a, sizeof a);
    unsigned char h[2][crypto_shorthash_BYTES];
    crypto_shorthash(h[0], seed, sizeof seed, k0);
    k0[0] = 1;
    crypto_shorthash(h[1], seed, sizeof seed, k0);
    memcpy(key, h, BERTH_NAMEIDX_KEY);
}

static uint32_t hash_n(const unsigned char key[BERTH_NAMEIDX_KEY], const char *s, size_t n)
{
    unsigned char out[crypto_shorthash_BYTES];
    crypto_shorthash(out, (const unsigned char *)s, n, key);
    uint32_t h;
    memcpy(&h, out, sizeof h);
    return h;
}

uint32_t berth_nameidx_hash(const unsigned char key[BERTH_NAMEIDX_KEY], const char *s)
{
    return hash_n(key, s, strlen(s));
}

/* The slot holding name (hash h) or the empty slot where it would go. */
static uint32_t probe(const berth_nameidx *x, const char *name, uint32_t h)
{
    uint32_t mask = x->cap - 1, i = h & mask;
    for (; x->slot[i].name; i = (i + 1) & mask)
        if (x->slot[i].hash == h &&
            (x->slot[i].name == name || !strcmp(x->slot[i].name, name)))
            break;
    return i;
}

uint32_t berth_nameidx_hash_in(berth_nameidx *x, const char *name)
{
    if (!x->keyed) { /* empty since init or free: no hash was taken under the old key */
        berth_nameidx_key_new(x->key);
        x->keyed = 1;
    }
    return berth_nameidx_hash(x->key, name);
}

uint32_t berth_nameidx_find_hash(const berth_nameidx *x, const char *name, uint32_t h)
{
    if (!x->cap || !name)
        return BERTH_NAMEIDX_NONE;
    uint32_t i = probe(x, name, h);
    return x->slot[i].name ? x->slot[i].id : BERTH_NAMEIDX_NONE;
}

uint32_t berth_nameidx_find(const berth_nameidx *x, const char *name)
{
    if (!x->cap || !name)
        return BERTH_NAMEIDX_NONE;
    return berth_nameidx_find_hash(x, name, berth_nameidx_hash(x->key, name));
}

uint32_t berth_nameidx_find_n(const berth_nameidx *x, const char *s, size_t n)
{
    if (!x->cap || !s)
        return BERTH_NAMEIDX_NONE;
    uint32_t h = hash_n(x->key, s, n), mask = x->cap - 1;
    /* a slot's name is read up to n + 1 bytes, never past its terminator */
    for (uint32_t i = h & mask; x->slot[i].name; i = (i + 1) & mask)
        if (x->slot[i].hash == h && strnlen(x->slot[i].name, n + 1) == n &&
            !memcmp(x->slot[i].name, s, n))
            return x->slot[i].id;
    return BERTH_NAMEIDX_NONE;
}

/* Room for `want` names (at most half the slots in use). */
static int grow(berth_nameidx *x, uint32_t want)
{
    if (x->cap && 2 * (uint64_t)want <= x->cap)
        return 0;
    uint32_t cap = x->cap ? x->cap : 16;
    while (2 * (uint64_t)want > cap) {
        if (cap > UINT32_MAX / 4)
            return BERTH_ENOMEM;
        cap *= 2;
    }
    berth_nameidx_slot *t = calloc(cap, sizeof *t);
    if (!t)
        return BERTH_ENOMEM;
    for (uint32_t j = 0; j < x->cap; j++) {
        if (!x->slot[j].name)
            continue;
        uint32_t i = x->slot[j].hash & (cap - 1);
        while (t[i].name)
            i = (i + 1) & (cap - 1);
        t[i] = x->slot[j];
    }
    free(x->slot);
    x->slot = t;
    x->cap = cap;
    return 0;
}

static int insert(berth_nameidx *x, const char *name, uint32_t h, uint32_t id, uint32_t *had,
                  int replace)
{
    if (x->cap) {
        uint32_t i = probe(x, name, h);
        if (x->slot[i].name) {
            if (had)
                *had = x->slot[i].id;
            if (replace)
                x->slot[i].id = id;
            return replace ? 0 : 1;
        }
    }
    if (grow(x, x->n + 1))
        return BERTH_ENOMEM;
    uint32_t i = probe(x, name, h);
    x->slot[i] = (berth_nameidx_slot){name, h, id};
    x->n++;
    return 0;
}

int berth_nameidx_add_hash(berth_nameidx *x, const char *name, uint32_t h, uint32_t id,
                           uint32_t *had)
{
    if (!name)
        return BERTH_EINVAL;
    BERTH_ASSERT(x->keyed && h == berth_nameidx_hash(x->key, name));
    return insert(x, name, h, id, had, 0);
}

int berth_nameidx_add(berth_nameidx *x, const char *name, uint32_t id, uint32_t *had)
{
    if (!name)
        return BERTH_EINVAL;
    return insert(x, name, berth_nameidx_hash_in(x, name), id, had, 0);
}

int berth_nameidx_put(berth_nameidx *x, const char *name, uint32_t id)
{
    if (!name)
        return BERTH_EINVAL;
    return insert(x, name, berth_nameidx_hash_in(x, name), id, NULL, 1);
}

void berth_nameidx_clear(berth_nameidx *x)
{
    if (x->cap)
        memset(x->slot, 0, (size_t)x->cap * sizeof *x->slot);
    x->n = 0;
}

int berth_nameidx_reserve(berth_nameidx *x, uint32_t n)
{
    return grow(x, n);
}

uint32_t berth_nameidx_remove(berth_nameidx *x, const char *name, uint32_t id)
{
    if (!x->cap || !name)
        return BERTH_NAMEIDX_NONE;
    uint32_t mask = x->cap - 1, i = probe(x, name, berth_nameidx_hash(x->key, name));
    if (!x->slot[i].name || (id != BERTH_NAMEIDX_NONE && x->slot[i].id != id))
        return BERTH_NAMEIDX_NONE;
    uint32_t had = x->slot[i].id;
    x->slot[i].name = NULL;
    x->n--;
    /* backward shift (no tombstones): a later entry of the run moves into
     * the hole when its home slot is not in the cyclic range (i, j] */
    for (uint32_t j = (i + 1) & mask; x->slot[j].name; j = (j + 1) & mask) {
        uint32_t home = x->slot[j].hash & mask;
        if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
            x->slot[i] = x->slot[j];
            x->slot[j].name = NULL;
            i = j;
        }
    }
    return had;
}

uint32_t berth_nameidx_longest_run(const berth_nameidx *x)
{
    uint32_t best = 0, run = 0;
    /* twice round, so a run across the table's end counts whole */
    for (uint64_t j = 0; j < 2ull * x->cap; j++) {
        run = x->slot[j & (x->cap - 1)].name ? run + 1 : 0;
        if (run > best)
            best = run;
    }
    return best < x->cap ? best : x->cap;
}
