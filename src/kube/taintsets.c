/* kube/taintsets.c - hard-taint sets (kube/taintsets.h): nodes whose
 * NoSchedule and NoExecute taints are the same list (key, value and effect,
 * in order) share an id, so TaintToleration's verdict and reason text for
 * a pod are worked out once per set rather than read from every node's
 * taints, which lie scattered over the estate. A set keeps its own copy of
 * the taints: the nodes that named them may leave the scheduler (a spare
 * slot emptied) while the id stays. Sets are found by a hash of their
 * strings under a key drawn when the sets are created (berth/hash.h). */
#include "kube/taintsets.h"
#include "berth/error.h"
#include "berth/grow.h"
#include "berth/hash.h"

#include <stdlib.h>
#include <string.h>

typedef struct tset {
    berth_taint *taints; /* the hard ones, in the node's order; own copies */
    uint32_t n;
    uint64_t hash;
} tset;

struct kube_taintsets {
    berth_hashkey hkey; /* drawn at creation: the taints are the input's */
    tset *sets; /* id i + 1 is sets[i] */
    uint32_t nsets, capsets;
    uint32_t *tab, cap; /* open addressing over sets: index + 1; cap a power of two */
};

static int hard(berth_taint_effect e)
{
    return e == BERTH_EFFECT_NOSCHEDULE || e == BERTH_EFFECT_NOEXECUTE;
}

static const char *str(const char *s)
{
    return s ? s : "";
}

/* h and the keyed hash of s, combined: an odd multiple of their xor, so
 * the step is a bijection of h for each s and a list's hash depends on
 * every string's keyed hash in order */
static uint64_t mix(const berth_hashkey *k, uint64_t h, const char *s)
{
    s = str(s);
    return (h ^ berth_hash_keyed(k, s, strlen(s))) * 0x9e3779b97f4a7c15ull;
}

static uint64_t hash_of(const berth_hashkey *k, const berth_taint *t, uint32_t n)
{
    uint64_t h = 0x51ed27f1c0ffee01ull;
    for (uint32_t i = 0; i < n; i++)
        if (hard(t[i].effect)) {
            h = mix(k, h, t[i].key);
            h = mix(k, h, t[i].value);
            h = (h ^ (uint64_t)t[i].effect) * 0xff51afd7ed558ccdull;
        }
    return h ^ (h >> 31);
}

/* whether set x holds exactly the hard taints of t[0..n) */
static int same(const tset *x, const berth_taint *t, uint32_t n)
{
    uint32_t j = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!hard(t[i].effect))
            continue;
        if (j == x->n || x->taints[j].effect != t[i].effect ||
            strcmp(x->taints[j].key, str(t[i].key)) || strcmp(x->taints[j].value, str(t[i].value)))
            return 0;
        j++;
    }
    return j == x->n;
}

static int rehash(kube_taintsets *ts)
{
    return berth_slots_rebuild(&ts->tab, &ts->cap, ts->cap ? ts->cap * 2 : 16, ts->sets,
                               sizeof *ts->sets, offsetof(tset, hash), sizeof ts->sets->hash,
                               ts->nsets);
}

/* a new set from the hard taints of t[0..n) (m of them); its index */
static int add(kube_taintsets *ts, const berth_taint *t, uint32_t n, uint32_t m, uint64_t h)
{
    if (berth_grow((void **)&ts->sets, &ts->capsets, ts->nsets + 1, sizeof *ts->sets, 0))
        return BERTH_ENOMEM;
    tset *x = &ts->sets[ts->nsets];
    *x = (tset){calloc(m, sizeof *x->taints), 0, h};
    if (!x->taints)
        return BERTH_ENOMEM;
    for (uint32_t i = 0; i < n; i++) {
        if (!hard(t[i].effect))
            continue;
        berth_taint *c = &x->taints[x->n++];
        c->effect = t[i].effect;
        c->key = strdup(str(t[i].key));
        c->value = strdup(str(t[i].value));
        if (!c->key || !c->value) {
            for (uint32_t j = 0; j < x->n; j++) {
                free((char *)x->taints[j].key);
                free((char *)x->taints[j].value);
            }
            free(x->taints);
            return BERTH_ENOMEM;
        }
    }
    ts->nsets++;
    return 0;
}

int kube_taintsets_id(kube_taintsets **tsp, const berth_taint *t, uint32_t n, uint32_t *id)
{
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++)
        m += hard(t[i].effect) != 0;
    *id = 0;
    if (!m)
        return 0;
    if (!*tsp) {
        if (!(*tsp = calloc(1, sizeof **tsp)))
            return BERTH_ENOMEM;
        berth_hashkey_new(&(*tsp)->hkey);
    }
    kube_taintsets *ts = *tsp;
    if (2 * (ts->nsets + 1) > ts->cap && rehash(ts))
        return BERTH_ENOMEM;
    uint64_t h = hash_of(&ts->hkey, t, n);
    uint32_t at = (uint32_t)h & (ts->cap - 1);
    for (; ts->tab[at]; at = (at + 1) & (ts->cap - 1)) {
        const tset *x = &ts->sets[ts->tab[at] - 1];
        if (x->hash == h && same(x, t, n)) {
            *id = ts->tab[at];
            return 0;
        }
    }
    if (add(ts, t, n, m, h))
        return BERTH_ENOMEM;
    ts->tab[at] = ts->nsets;
    *id = ts->nsets;
    return 0;
}

uint32_t kube_taintsets_count(const kube_taintsets *ts)
{
    return ts ? ts->nsets : 0;
}

const berth_taint *kube_taintsets_first_untolerated(const kube_taintsets *ts, uint32_t id,
                                                    const berth_toleration *tols, uint32_t ntols)
{
    if (!ts || !id || id > ts->nsets)
        return NULL;
    const tset *x = &ts->sets[id - 1];
    return berth_taints_first_untolerated(x->taints, x->n, tols, ntols, BERTH_EFFECT_MASK_HARD);
}

uint32_t kube_taintsets_longest_run(const kube_taintsets *ts)
{
    return ts ? berth_slots_longest_run(ts->tab, ts->cap) : 0;
}

void kube_taintsets_free(kube_taintsets *ts)
{
    if (!ts)
        return;
    for (uint32_t i = 0; i < ts->nsets; i++) {
        for (uint32_t j = 0; j < ts->sets[i].n; j++) {
            free((char *)ts->sets[i].taints[j].key);
            free((char *)ts->sets[i].taints[j].value);
        }
        free(ts->sets[i].taints);
    }
    free(ts->sets);
    free(ts->tab);
    free(ts);
}
