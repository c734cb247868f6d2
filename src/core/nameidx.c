/* core/nameidx.c - the shared name -> index hash table (berth/nameidx.h):
 * linear probing over a power-of-two table, at most half full, the hash
 * kept per slot so growing and probing compare strings only on equal
 * hashes. */
#include "berth/nameidx.h"
#include "berth/error.h"

#include <stdlib.h>
#include <string.h>

void berth_nameidx_init(berth_nameidx *x)
{
    memset(x, 0, sizeof *x);
}

void berth_nameidx_free(berth_nameidx *x)
{
    free(x->slot);
    memset(x, 0, sizeof *x);
}

uint32_t berth_nameidx_hash(const char *s)
{
    uint32_t h = 2166136261u;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 16777619u;
    return h;
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

uint32_t berth_nameidx_find(const berth_nameidx *x, const char *name)
{
    if (!x->cap || !name)
        return BERTH_NAMEIDX_NONE;
    uint32_t i = probe(x, name, berth_nameidx_hash(name));
    return x->slot[i].name ? x->slot[i].id : BERTH_NAMEIDX_NONE;
}

static int grow(berth_nameidx *x)
{
    if (x->cap && 2 * (x->n + 1) <= x->cap)
        return 0;
    uint32_t cap = x->cap ? x->cap : 16;
    while (2 * (x->n + 1) > cap) {
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

static int insert(berth_nameidx *x, const char *name, uint32_t id, uint32_t *had, int replace)
{
    if (!name)
        return BERTH_EINVAL;
    uint32_t h = berth_nameidx_hash(name);
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
    if (grow(x))
        return BERTH_ENOMEM;
    uint32_t i = probe(x, name, h);
    x->slot[i] = (berth_nameidx_slot){name, h, id};
    x->n++;
    return 0;
}

int berth_nameidx_add(berth_nameidx *x, const char *name, uint32_t id, uint32_t *had)
{
    return insert(x, name, id, had, 0);
}

int berth_nameidx_put(berth_nameidx *x, const char *name, uint32_t id)
{
    return insert(x, name, id, NULL, 1);
}
