/* kube/fastpath.c - the pod-class cache behind kube scheduling's fast path.
 *
 * Pods stamped from one template (same requests, tolerations, node
 * selector and affinity, images) form a class. For a class, the static
 * filters (NodeUnschedulable, NodeName, TaintToleration, NodeAffinity,
 * VolumeZone) and static raw scores (TaintToleration, NodeAffinity,
 * ImageLocality) are computed once over all nodes with the plugins
 * themselves; the dynamic parts (NodeResourcesFit filter and score,
 * BalancedAllocation) are kept per node and recomputed only for the nodes
 * assumed since the class was last used (an assume log). A pick is then an
 * argmax over one column. It serves pods whose spread/affinity context is
 * inert (no constraints, no terms, no existing pod's term matching them),
 * without host ports, in profiles made of these plugins, with every node
 * scored; anything else takes the full pipeline. Decisions are identical:
 * tests compare both paths. Classes are found by a keyed hash of their
 * key (kube_fast.hkey, one key per cache). */
#include "berth/hash.h"
#include "berth/grow.h"
#include "berth/pool.h"
#include "kube/fastpath.h"
#include "kube/podkey.h"
#include "kube/terms.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAST_MAX_CLASSES 4096
#define FAST_MAX_BYTES (512u * 1024u * 1024u)
#define FAST_MAX_LOG (1u << 22)
#define FAST_MIN_LOG 64u  /* the assume log's room before it drops entries */
#define FAST_CHUNK 256 /* nodes per chunk of a scan */

/* One chunk's share of a scan (filtered chunks, plain argmax): merged in
 * chunk order, so the answer does not depend on which thread ran it. */
typedef struct fast_slot {
    int32_t best;         /* INT32_MIN: nothing feasible in the chunk */
    uint32_t nfeasible;
    uint32_t nties;       /* nodes at best in the chunk */
    uint32_t first, last; /* first and last of them */
} fast_slot;


/* Block maxima over a column of part values (FAST_BLOCK values a block):
 * the argmax is a pass over the block maxima and one block; setting a value
 * is O(1). A block whose maximum went down keeps the old value as an upper
 * bound, flagged dirty (one byte per block, stored after the maxima: see
 * bm_alloc), and is rescanned only when a query reaches it (usually the
 * block of the node just assumed, once, instead of once per class and per
 * change). Small beside the column (1/64), so every class's index stays in
 * cache. */
#define FAST_BLOCK 64

/* A class's part values ordered by domain of topology key `key` (the
 * spread constraints' key; the domains and the order are the shared
 * fast_inv of the key): value by position, block maxima, feasible nodes per
 * domain. Rebuilt when node data changed (gen). */
typedef struct fast_part {
    uint32_t key, inv, nr, gen; /* nr = the key's values + 1 (no value) */
    int32_t *v;                 /* by position; NULL: a few domains (below) */
    int32_t *bm;                /* per block of positions */
    uint32_t *dcnt;             /* per domain */
} fast_part;

/* A key with at most FAST_DSMALL domains (zones, racks) keeps no copy of
 * the column: bm holds, per domain d, the block maxima of the class's own
 * column (node order) over the nodes of d (nblocks(N) entries at
 * d x nblocks(N), dirty flags after them as bm_alloc lays them out for
 * nr x nblocks(N) values). Refreshing a node touches its domain's block
 * maximum only, and the pick reads the class column itself: no permuted
 * copy to keep warm (a copy per class doubled the classes' working set). */
#define FAST_DSMALL 16

/* nodes by value of one topology key (counting sort; nodes without the key
 * last): group v is nodes[start[v] .. start[v + 1]), pos the inverse;
 * rebuilt in place when node data changed (gen) */
typedef struct fast_inv {
    uint32_t key, nvals, gen;
    int unique;         /* no two nodes share a value (e.g. the hostname): the
                         * domain of a node with the key is the node itself */
    uint32_t *start, *nodes, *pos;
} fast_inv;
#define FAST_NINV 8

/* a read issued early (no effect on what is computed) */
#if defined(__GNUC__) || defined(__clang__)
#define FAST_PREFETCH(p) __builtin_prefetch(p)
#else
#define FAST_PREFETCH(p) ((void)(p))
#endif
#define FAST_AHEAD 16

/* The dynamic columns (NodeResourcesFit filter and score,
 * BalancedAllocation, ImageLocality: what reads the node's requested
 * resources) depend only on the pod's requests and images: classes with
 * the same ones (e.g. the same requests with and without a toleration)
 * share one such column, refreshed once for the nodes assumed since, and
 * each class masks it with its static verdicts. Not used in what-if
 * sessions (a class there keeps its own ImageLocality column). */
typedef struct fast_dyn {
    char *key;
    size_t klen;
    uint32_t hash;
    const berth_profile *prof;
    int32_t *v;           /* weighted dynamic part; INT32_MIN where the fit fails */
    uint32_t pos;         /* assume log position consumed */
    uint32_t img_gen;
    int full;
} fast_dyn;

typedef struct fast_class {
    char *key;
    size_t klen;          /* the key's bytes (it may hold NULs: counts, pointers) */
    uint32_t hash;
    const berth_profile *prof;
    uint8_t *static_ok;
    int32_t *part;        /* weighted dynamic+ImageLocality part of the total;
                           * INT32_MIN where the node is not feasible now */
    uint32_t nfeasible;
    uint32_t *flist;      /* feasible nodes in node order (rebuilt when stale) */
    uint32_t nflist;
    int flist_stale;
    uint32_t pos;         /* assume log position consumed */
    int64_t constant;     /* weighted TaintToleration + NodeAffinity (constant) */
    /* what-if node changes (kube_fast_node_changed), applied lazily when
     * the class is next used: the pod that made the class (its spec is the
     * class's), its nodeName, the raw TaintToleration / NodeAffinity score
     * per score slot every statically feasible node shares (has_ref), the
     * number of candidates whose raw scores differ (static_ok ST_BAD; the
     * class is not used while nbad > 0), a pending full recomputation, the
     * data-change log position and image-spread generation consumed */
    uint32_t rep;
    const char *node_name;
    int has_ref, full;
    uint32_t dpos, img_gen;
    /* what-if sessions (s->off set): the weighted ImageLocality part per
     * node, so a change of the image spread (a node excluded) updates the
     * column without recomputing the rest */
    int32_t *img;
    uint32_t nbad;
    int64_t ref[BERTH_KP_COUNT];
    int32_t *bm;          /* block maxima of part */
    int bm_ok;            /* bm kept up to date (not while only the partition
                           * below is read: rebuilt when next needed) */
    /* the same values by topology domain of one key (the spread
     * constraints' key), built on first use: see fast_part */
    fast_part *pt;
    /* the shared dynamic column (fast_dyn), or -1: computed here */
    int32_t dyn;
} fast_class;

struct kube_fast {
    /* the key of the class table and the dynamic columns' hashes (pod
     * specs are the input's): drawn once by kube_fast_init (berth/hash.h) */
    berth_hashkey hkey;
    fast_class *classes;
    uint32_t nclasses, capclasses;
    uint32_t *table;      /* open addressing: class id + 1 */
    uint32_t last;        /* the class found last + 1 (0: none): a pod of the same
                           * class as the one before (replicas queue together)
                           * is found by a compare, not a hash */
    uint32_t tcap;
    uint32_t *log;        /* nodes assumed, in order */
    uint32_t nlog, caplog;
    uint32_t *seen, gen;  /* per node: generation of the last dedup that listed it */
    uint32_t *dlog;       /* nodes whose static data changed (spare slots), in order */
    uint32_t ndlog, capdlog;
    uint32_t img_gen;     /* bumped when ImageLocality's image spread changes */
    size_t bytes;
    /* scratch, sized to nodes */
    uint32_t *all, *list;
    uint8_t *verdict;
    int64_t *col, *col2;
    fast_slot *slot; /* per chunk of FAST_CHUNK nodes (the parallel scans) */
    char *keybuf;
    size_t keycap;
    /* plugin objects by id; profiles already judged (profile_ok) */
    const berth_filter_plugin *fplug[BERTH_KP_COUNT];
    const berth_score_plugin *splug[BERTH_KP_COUNT];
    const berth_profile *okprof[8];
    int okval[8];
    uint32_t nok;
    /* node data changes (kube_fast_node_changed with data): partitions and
     * inverse maps built before are stale */
    uint32_t data_gen;
    fast_inv inv[FAST_NINV];
    /* per node and per block: stamp of the pick that excluded it (or one
     * of its nodes) (indexed picks) */
    uint32_t *rej, *brej, rgen;
    int32_t *beff;        /* per block: bm_best's scratch */
    uint8_t *bexact;
    uint8_t *allow;       /* per domain of the partition key */
    uint32_t allowcap;
    /* shared dynamic columns (fast_dyn), found by key at class creation */
    fast_dyn *dyns;
    uint32_t ndyns, capdyns;
};

/* ---- block maxima ---- */

static uint32_t nblocks(uint32_t n)
{
    return n / FAST_BLOCK + 1;
}

static int32_t block_max(const int32_t *v, uint32_t n, uint32_t k)
{
    uint32_t lo = k * FAST_BLOCK, hi = lo + FAST_BLOCK < n ? lo + FAST_BLOCK : n;
    int32_t m = INT32_MIN;
    if (hi - lo == FAST_BLOCK) {
        /* eight independent lanes (vectorised at -O2) */
        const int32_t *p = v + lo;
        int32_t a[8] = {INT32_MIN, INT32_MIN, INT32_MIN, INT32_MIN,
                        INT32_MIN, INT32_MIN, INT32_MIN, INT32_MIN};
        for (uint32_t i = 0; i < FAST_BLOCK; i += 8)
            for (uint32_t u = 0; u < 8; u++)
                a[u] = p[i + u] > a[u] ? p[i + u] : a[u];
        for (uint32_t u = 0; u < 8; u++)
            m = a[u] > m ? a[u] : m;
        return m;
    }
    for (uint32_t i = lo; i < hi; i++)
        m = v[i] > m ? v[i] : m;
    return m;
}

/* block maxima for a column of n values, then their dirty flags */
static int32_t *bm_alloc(uint32_t n)
{
    return malloc(nblocks(n) * (sizeof(int32_t) + 1));
}

static uint8_t *bm_dirty(int32_t *bm, uint32_t n)
{
    return (uint8_t *)(bm + nblocks(n));
}

static void bm_build(const int32_t *v, uint32_t n, int32_t *bm)
{
    for (uint32_t k = 0; k < nblocks(n); k++)
        bm[k] = block_max(v, n, k);
    memset(bm_dirty(bm, n), 0, nblocks(n));
}

/* v[pos] := x; its block's maximum kept, or left as an upper bound and
 * flagged dirty when it went down */
static inline void bm_set(int32_t *v, uint32_t n, int32_t *bm, uint32_t pos, int32_t x)
{
    int32_t old = v[pos];
    uint32_t k = pos / FAST_BLOCK;
    v[pos] = x;
    if (x >= bm[k])
        bm[k] = x;
    else if (old == bm[k])
        bm_dirty(bm, n)[k] = 1;
}

/* block k's maximum made exact */
static inline void bm_clean(const int32_t *v, uint32_t n, int32_t *bm, uint32_t k)
{
    uint8_t *d = bm_dirty(bm, n);
    if (d[k]) {
        bm[k] = block_max(v, n, k);
        d[k] = 0;
    }
}

/* ---- per-domain block maxima (a key with few domains) ---- */

/* the length whose bm_alloc / bm_dirty layout holds pt's per-domain maxima */
static inline uint32_t dom_len(const fast_part *pt, uint32_t n)
{
    return pt->nr * nblocks(n) * FAST_BLOCK;
}

static inline uint32_t dom_of(const uint32_t *val, uint32_t nr, uint32_t nd)
{
    return val[nd] == KUBE_NOVAL ? nr - 1 : val[nd];
}

#if defined(__GNUC__) || defined(__clang__)
#define FAST_NOINLINE __attribute__((noinline))
#else
#define FAST_NOINLINE
#endif

/* the maximum of p[0 .. FAST_BLOCK) where q is key: a branch-free select
 * and max over a fixed count, vectorised at -O2 (kept out of line: inlined
 * into a caller's loop it is not) */
static FAST_NOINLINE int32_t masked_max(const int32_t *restrict p, const uint32_t *restrict q,
                                        uint32_t key)
{
    int32_t m = INT32_MIN;
    for (uint32_t i = 0; i < FAST_BLOCK; i++) {
        int32_t mask = -(int32_t)(q[i] == key);
        int32_t x = (p[i] & mask) | (INT32_MIN & ~mask);
        m = x > m ? x : m;
    }
    return m;
}

/* The per-block passes of a pick (dom_best, bm_best) in steps of FAST_VEC
 * values: a fixed count the compiler vectorises at -O2, a loop over a
 * run-time count it does not. */
#define FAST_VEC 16

/* the maximum of x[0 .. n), INT32_MIN when there is none */
static FAST_NOINLINE int32_t vec_max(const int32_t *x, uint32_t n)
{
    int32_t m = INT32_MIN;
    const int32_t *end = x + n;
    for (; end - x >= FAST_VEC; x += FAST_VEC) {
        int32_t c = INT32_MIN;
        for (uint32_t j = 0; j < FAST_VEC; j++)
            c = x[j] > c ? x[j] : c;
        m = c > m ? c : m;
    }
    for (; x < end; x++)
        m = *x > m ? *x : m;
    return m;
}

/* eff[k] = max(eff[k], x[k]) for k < n */
static FAST_NOINLINE void vec_merge(int32_t *restrict eff, const int32_t *restrict x, uint32_t n)
{
    int32_t *end = eff + n;
    for (; end - eff >= FAST_VEC; eff += FAST_VEC, x += FAST_VEC)
        for (uint32_t j = 0; j < FAST_VEC; j++)
            eff[j] = x[j] > eff[j] ? x[j] : eff[j];
    for (; eff < end; eff++, x++)
        *eff = *x > *eff ? *x : *eff;
}

/* The best block bound of eff[0 .. nb), at its first block (last: its
 * last); 0 when every bound is INT32_MIN (nothing left). */
static int vec_best(const int32_t *eff, uint32_t nb, int last, int32_t *best, uint32_t *at)
{
    int32_t m = vec_max(eff, nb);
    if (m == INT32_MIN)
        return 0;
    uint32_t k = last ? nb - 1 : 0;
    while (eff[k] != m)
        k = last ? k - 1 : k + 1;
    *best = m;
    *at = k;
    return 1;
}

/* the maximum of block k of v over the nodes whose value id is key
 * (KUBE_NOVAL: the nodes without the key) */
static int32_t dom_block_max(const int32_t *v, const uint32_t *val, uint32_t n, uint32_t k,
                             uint32_t key)
{
    uint32_t lo = k * FAST_BLOCK, hi = lo + FAST_BLOCK < n ? lo + FAST_BLOCK : n;
    int32_t m = INT32_MIN;
    if (hi - lo == FAST_BLOCK)
        return masked_max(v + lo, val + lo, key);
    for (uint32_t i = lo; i < hi; i++)
        if (val[i] == key && v[i] > m)
            m = v[i];
    return m;
}

/* One pass over block k of v: every domain's maximum there written back
 * (its dirty flag cleared), and the maximum over the nodes of allowed
 * domains not stamped rejected returned. */
static int32_t dom_scan(fast_part *pt, const int32_t *v, const uint32_t *val, uint32_t n,
                        uint32_t k, const uint8_t *allow, const uint32_t *rej, uint32_t rgen)
{
    uint32_t nb = nblocks(n), nr = pt->nr;
    uint32_t lo = k * FAST_BLOCK, hi = lo + FAST_BLOCK < n ? lo + FAST_BLOCK : n;
    int32_t dm[FAST_DSMALL], m = INT32_MIN;
    for (uint32_t d = 0; d < nr; d++)
        dm[d] = INT32_MIN;
    for (uint32_t i = lo; i < hi; i++) {
        uint32_t d = dom_of(val, nr, i);
        dm[d] = v[i] > dm[d] ? v[i] : dm[d];
        if (v[i] > m && allow[d] && rej[i] != rgen)
            m = v[i];
    }
    uint8_t *dirty = bm_dirty(pt->bm, dom_len(pt, n));
    for (uint32_t d = 0; d < nr; d++) {
        pt->bm[d * nb + k] = dm[d];
        dirty[d * nb + k] = 0;
    }
    return m;
}

/* pt's per-domain block maxima and counts from v (node order) */
static void dom_build(fast_part *pt, const int32_t *v, const uint32_t *val, uint32_t n)
{
    uint32_t nb = nblocks(n), nr = pt->nr;
    for (uint32_t i = 0; i < nr * nb; i++)
        pt->bm[i] = INT32_MIN;
    memset(bm_dirty(pt->bm, dom_len(pt, n)), 0, nr * nb);
    memset(pt->dcnt, 0, nr * sizeof *pt->dcnt);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t d = dom_of(val, nr, i);
        int32_t *m = &pt->bm[d * nb + i / FAST_BLOCK];
        *m = v[i] > *m ? v[i] : *m;
        pt->dcnt[d] += v[i] != INT32_MIN;
    }
}

/* node nd of domain d went from old to x (v[nd] already x) */
static inline void dom_set(fast_part *pt, uint32_t n, uint32_t d, uint32_t nd, int32_t old,
                           int32_t x)
{
    uint32_t nb = nblocks(n), at = d * nb + nd / FAST_BLOCK;
    if (x >= pt->bm[at])
        pt->bm[at] = x;
    else if (old == pt->bm[at])
        bm_dirty(pt->bm, dom_len(pt, n))[at] = 1;
}

/* The best node of v (node order) in an allowed domain and not stamped
 * rejected, first (last) among equals: the per-domain block maxima of the
 * allowed domains (the dirty ones cleaned first) give each block's
 * bound, exact when no node of the block is rejected; blocks are taken
 * best bound first as in bm_best, a block scanned (dom_scan) only when its
 * bound is the best left. O(blocks x allowed domains + dirty blocks +
 * blocks scanned). */
static int dom_best(fast_part *pt, const int32_t *v, const uint32_t *val, uint32_t n,
                    const uint8_t *allow, const uint32_t *rej, const uint32_t *brej,
                    uint32_t rgen, int last, int32_t *eff, uint8_t *exact, int32_t *bv,
                    uint32_t *bnode)
{
    uint32_t nb = nblocks(n), nr = pt->nr;
    uint8_t *dirty = bm_dirty(pt->bm, dom_len(pt, n));
    for (uint32_t k = 0; k < nb; k++) {
        eff[k] = INT32_MIN;
        exact[k] = brej[k] != rgen;
    }
    /* the allowed domains' dirty maxima cleaned (each once however many
     * changes made it dirty), then merged */
    for (uint32_t d = 0; d < nr; d++) {
        if (!allow[d] || !pt->dcnt[d])
            continue;
        int32_t *bm = pt->bm + d * nb;
        uint8_t *dd = dirty + d * nb;
        uint32_t key = d == nr - 1 ? KUBE_NOVAL : d;
        for (uint32_t k = 0; k < nb; k++) {
            if (dd[k]) {
                bm[k] = dom_block_max(v, val, n, k, key);
                dd[k] = 0;
            }
        }
        vec_merge(eff, bm, nb);
    }
    for (;;) {
        int32_t best;
        uint32_t at;
        if (!vec_best(eff, nb, last, &best, &at))
            return 0;
        uint32_t a = at * FAST_BLOCK, z = a + FAST_BLOCK < n ? a + FAST_BLOCK : n;
        if (!exact[at]) {
            eff[at] = dom_scan(pt, v, val, n, at, allow, rej, rgen);
            exact[at] = 1;
            continue;
        }
        for (uint32_t j = 0; j < z - a; j++) {
            uint32_t i = last ? z - 1 - j : a + j;
            if (v[i] == best && allow[dom_of(val, nr, i)] && rej[i] != rgen) {
                *bv = best;
                *bnode = i;
                return 1;
            }
        }
        return 0; /* not reached: the block's exact maximum is there */
    }
}

/* The best value in positions [lo, hi) of v whose node (perm[pos], or pos)
 * is not stamped rejected (rej[node] == rgen; blocks holding one have
 * brej[block] == rgen; rej NULL: none), and its first position (last:
 * its last). 0 when every position there is infeasible or rejected.
 *
 * Blocks are taken best bound first: a block's maximum is exact when the
 * block lies inside the range, holds no rejected node and is not dirty,
 * else an upper bound that is made exact (the block cleaned, or scanned)
 * only when it is the best bound left. So the cost is O(blocks in the range x (1 + blocks
 * scanned)), and a block is scanned only when its bound beats every exact
 * value: rejected nodes far below the best cost nothing. */
typedef struct bm_query {
    const int32_t *v;
    int32_t *bm;          /* dirty blocks are cleaned when reached */
    uint32_t n;           /* values in v */
    const uint32_t *perm, *rej, *brej;
    uint32_t rgen;
    int last;
    int32_t *eff;         /* scratch per block: the bound, or the exact value */
    uint8_t *exact;       /* scratch per block */
} bm_query;

static int rejected(const bm_query *b, uint32_t i)
{
    return b->rej && b->rej[b->perm ? b->perm[i] : i] == b->rgen;
}

static int32_t bm_scan(const bm_query *b, uint32_t lo, uint32_t hi)
{
    int32_t m = INT32_MIN;
    for (uint32_t i = lo; i < hi; i++)
        if (b->v[i] > m && !rejected(b, i))
            m = b->v[i];
    return m;
}

static int bm_best(const bm_query *b, uint32_t lo, uint32_t hi, int32_t *bv, uint32_t *bpos)
{
    if (lo >= hi)
        return 0;
    uint32_t k0 = lo / FAST_BLOCK, k1 = (hi - 1) / FAST_BLOCK;
    for (uint32_t k = k0; k <= k1; k++) {
        uint32_t a = k * FAST_BLOCK, z = a + FAST_BLOCK;
        bm_clean(b->v, b->n, b->bm, k);
        b->eff[k] = b->bm[k];
        b->exact[k] = a >= lo && z <= hi && !(b->rej && b->brej[k] == b->rgen);
    }
    for (;;) {
        int32_t best;
        uint32_t at;
        if (!vec_best(b->eff + k0, k1 - k0 + 1, b->last, &best, &at))
            return 0;
        at += k0;
        uint32_t a = at * FAST_BLOCK, z = a + FAST_BLOCK;
        a = a < lo ? lo : a;
        z = z > hi ? hi : z;
        if (!b->exact[at]) {
            b->eff[at] = bm_scan(b, a, z);
            b->exact[at] = 1;
            continue;
        }
        for (uint32_t j = 0; j < z - a; j++) {
            uint32_t i = b->last ? z - 1 - j : a + j;
            if (b->v[i] == best && !rejected(b, i)) {
                *bv = best;
                *bpos = i;
                return 1;
            }
        }
        return 0; /* not reached: the block's exact maximum is there */
    }
}

static void part_free(fast_part *pt)
{
    if (!pt)
        return;
    free(pt->v);
    free(pt->bm);
    free(pt->dcnt);
    free(pt);
}

static void class_free(fast_class *c)
{
    part_free(c->pt);
    c->pt = NULL;
    free(c->bm);
    free(c->key);
    free(c->flist);
    free(c->static_ok);
    free(c->part);
    free(c->img);
}

/* Forgets every class (they are built again on use). */
static void fast_drop_classes(kube_fast *f)
{
    for (uint32_t i = 0; i < f->nclasses; i++)
        class_free(&f->classes[i]);
    f->nclasses = 0;
    f->last = 0;
    for (uint32_t i = 0; i < f->ndyns; i++) {
        free(f->dyns[i].key);
        free(f->dyns[i].v);
    }
    f->ndyns = 0;
    f->bytes = 0;
    memset(f->table, 0, f->tcap * sizeof *f->table);
}

void kube_fast_free(kube_sched *s)
{
    kube_fast *f = s->fast;
    if (!f)
        return;
    for (uint32_t i = 0; i < f->nclasses; i++)
        class_free(&f->classes[i]);
    free(f->classes);
    for (uint32_t i = 0; i < f->ndyns; i++) {
        free(f->dyns[i].key);
        free(f->dyns[i].v);
    }
    free(f->dyns);
    free(f->table);
    free(f->log);
    free(f->dlog);
    free(f->seen);
    free(f->all);
    free(f->list);
    free(f->verdict);
    free(f->col);
    free(f->col2);
    free(f->slot);
    free(f->keybuf);
    for (uint32_t i = 0; i < FAST_NINV; i++) {
        free(f->inv[i].start);
        free(f->inv[i].nodes);
        free(f->inv[i].pos);
    }
    free(f->rej);
    free(f->brej);
    free(f->beff);
    free(f->bexact);
    free(f->allow);
    free(f);
    s->fast = NULL;
}

int kube_fast_init(kube_sched *s)
{
    uint32_t N = s->k->nnodes ? s->k->nnodes : 1;
    kube_fast *f = calloc(1, sizeof *f);
    if (!f)
        return BERTH_ENOMEM;
    s->fast = f;
    berth_hashkey_new(&f->hkey);
    f->all = malloc(N * sizeof *f->all);
    f->list = malloc(N * sizeof *f->list);
    f->verdict = malloc(N);
    f->col = malloc(N * sizeof *f->col);
    f->col2 = malloc(N * sizeof *f->col2);
    f->seen = calloc(N, sizeof *f->seen);
    f->slot = malloc((N / FAST_CHUNK + 1) * sizeof *f->slot);
    f->rej = calloc(N, sizeof *f->rej);
    f->brej = calloc(nblocks(N), sizeof *f->brej);
    f->beff = malloc(nblocks(N) * sizeof *f->beff);
    f->bexact = malloc(nblocks(N));
    f->tcap = 1024;
    f->table = calloc(f->tcap, sizeof *f->table);
    if (!f->all || !f->list || !f->verdict || !f->col || !f->col2 || !f->seen || !f->slot ||
        !f->table || !f->rej || !f->brej || !f->beff || !f->bexact) {
        kube_fast_free(s);
        return BERTH_ENOMEM;
    }
    for (uint32_t n = 0; n < N; n++)
        f->all[n] = n;
    for (uint32_t p = 0; p < BERTH_KP_COUNT; p++) {
        f->fplug[p] = kube_filter_plugin((berth_kplugin)p);
        f->splug[p] = kube_score_plugin((berth_kplugin)p);
    }
    return 0;
}

int kube_fast_assumed(kube_sched *s, uint32_t node)
{
    kube_fast *f = s->fast;
    if (!f)
        return 0;
    uint32_t N = s->k->nnodes, keep = 2 * N > FAST_MIN_LOG ? 2 * N : FAST_MIN_LOG;
    if (f->nlog == f->caplog && f->caplog >= keep) {
        /* full, and twice the nodes: the entries more than N back go (a
         * class that far behind recomputes every node and reads none), the
         * positions count from the first one kept; so a long what-if
         * session's log stays a few times N entries */
        uint32_t from = f->nlog - N;
        memmove(f->log, f->log + from, (size_t)N * sizeof *f->log);
        /* (one further behind reads from 0, N entries behind: it still
         * recomputes every node) */
        for (uint32_t i = 0; i < f->nclasses; i++)
            f->classes[i].pos = f->classes[i].pos < from ? 0 : f->classes[i].pos - from;
        for (uint32_t i = 0; i < f->ndyns; i++)
            f->dyns[i].pos = f->dyns[i].pos < from ? 0 : f->dyns[i].pos - from;
        f->nlog = N;
    }
    if (f->nlog == f->caplog &&
        berth_grow((void **)&f->log, &f->caplog, f->nlog + 1, sizeof *f->log, 0))
        return BERTH_ENOMEM;
    f->log[f->nlog++] = node;
    return 0;
}

static int is_static_filter(kube_sched *s, const berth_profile *prof, uint32_t j);
static int plugin_is(const kube_fast *f, const berth_profile *prof, uint32_t j, berth_kplugin p,
                     int score);

/* static_ok per node: 0 a static filter rejects it; 1 passes (and, when
 * the node is a candidate, its raw TaintToleration / NodeAffinity scores
 * are the class's shared ones); 2 passes but its raw scores differ (counted
 * in nbad: the class is not used while such a node is a candidate); 3
 * passes, raw scores not compared yet (the node is off). */
enum { ST_NO, ST_OK, ST_BAD, ST_UNCHECKED };

static void class_req(const kube_sched *s, const fast_class *c, berth_kpod *p, kube_req *r)
{
    *p = s->k->pods[c->rep];
    p->node_name = c->node_name;
    memset(r, 0, sizeof *r);
    r->pod = c->rep;
    r->p = p;
}

/* Compares node n's raw scores (n passes the static filters and is a
 * candidate) with the class's: ST_OK or ST_BAD. */
static void class_node_raw(kube_sched *s, fast_class *c, uint32_t n)
{
    const berth_profile *prof = c->prof;
    berth_kpod p;
    kube_req r;
    class_req(s, c, &p, &r);
    int64_t raw[BERTH_KP_COUNT] = {0}, constant = 0;
    int differ = 0;
    for (uint32_t j = 0; j < prof->nscores; j++) {
        if (!plugin_is(s->fast, prof, j, BERTH_KP_TAINT_TOLERATION, 1) &&
            !plugin_is(s->fast, prof, j, BERTH_KP_NODE_AFFINITY, 1))
            continue;
        prof->scores[j]->score(s, &r, &n, 1, &raw[j]);
        differ |= c->has_ref && raw[j] != c->ref[j];
        int64_t x = raw[j];
        if (prof->scores[j]->normalize)
            prof->scores[j]->normalize(s, &r, &x, 1);
        constant += (prof->weights ? prof->weights[j] : 1) * x;
    }
    c->static_ok[n] = ST_OK;
    if (differ) {
        c->static_ok[n] = ST_BAD;
        c->nbad++;
    } else if (!c->has_ref) {
        /* the class's first statically feasible candidate sets the constant */
        memcpy(c->ref, raw, sizeof raw);
        c->has_ref = 1;
        c->constant = constant;
    }
}

/* Node n's static data changed (a spare slot filled or emptied). */
static void class_node_static(kube_sched *s, fast_class *c, uint32_t n)
{
    const berth_profile *prof = c->prof;
    berth_kpod p;
    kube_req r;
    class_req(s, c, &p, &r);
    if (c->static_ok[n] == ST_BAD)
        c->nbad--;
    uint8_t v = BERTH_FIT;
    for (uint32_t j = 0; j < prof->nfilters; j++)
        if (is_static_filter(s, prof, j))
            prof->filters[j]->filter(s, &r, &n, 1, &v);
    c->static_ok[n] = v != BERTH_FIT ? ST_NO : s->off && s->off[n] ? ST_UNCHECKED : ST_OK;
    if (c->static_ok[n] == ST_OK)
        class_node_raw(s, c, n);
}

/* Node n became a candidate or stopped being one (same static data). */
static void class_node_onoff(kube_sched *s, fast_class *c, uint32_t n)
{
    int off = s->off && s->off[n];
    if (off && c->static_ok[n] == ST_BAD) {
        c->nbad--;
        c->static_ok[n] = ST_UNCHECKED;
    } else if (!off && c->static_ok[n] == ST_UNCHECKED) {
        class_node_raw(s, c, n);
    }
}

int kube_fast_node_changed(kube_sched *s, uint32_t n, int data, int all)
{
    kube_fast *f = s->fast;
    if (!f)
        return 0;
    f->img_gen += all != 0;
    f->data_gen += data != 0;
    if (data) {
        if (f->ndlog == f->capdlog && f->capdlog >= FAST_MAX_LOG) {
            /* a very long session: every class rebuilds when next used */
            fast_drop_classes(f);
            f->ndlog = 0;
        }
        if (f->ndlog == f->capdlog &&
            berth_grow((void **)&f->dlog, &f->capdlog, f->ndlog + 1, sizeof *f->dlog, 0))
            return BERTH_ENOMEM;
        f->dlog[f->ndlog++] = n;
    }
    return kube_fast_assumed(s, n);
}

/* ---- the class key: everything the cached plugins read of a pod ---- */

static int build_key(kube_sched *s, const berth_profile *prof, const berth_kpod *p, size_t *len)
{
    kube_podkey b = kube_podkey_start(&s->fast->keybuf, &s->fast->keycap);
    kube_podkey_put(&b, &prof, sizeof prof);
    kube_podkey_requests(&b, p, s->k->nres);
    kube_podkey_node_constraints(&b, p, kube_pod_node_name(s, p));
    kube_podkey_put(&b, &p->ninit, sizeof p->ninit);
    for (uint32_t i = 0; i < p->ninit; i++)
        kube_podkey_str(&b, p->init[i].image);
    kube_podkey_put(&b, &p->ncontainers, sizeof p->ncontainers);
    for (uint32_t i = 0; i < p->ncontainers; i++)
        kube_podkey_str(&b, p->containers[i].image);
    /* VolumeZone (a static filter): the resolved volume constraints */
    kube_podkey_str(&b, p->vol_error);
    kube_podkey_put(&b, &p->nvol_zones, sizeof p->nvol_zones);
    for (uint32_t i = 0; i < p->nvol_zones; i++) {
        kube_podkey_str(&b, p->vol_zones[i].key);
        kube_podkey_put(&b, &p->vol_zones[i].nvalues, sizeof p->vol_zones[i].nvalues);
        for (uint32_t j = 0; j < p->vol_zones[i].nvalues; j++)
            kube_podkey_str(&b, p->vol_zones[i].values[j]);
    }
    *len = b.len;
    return b.oom ? BERTH_ENOMEM : 0;
}

/* the shared dynamic column's key: what NodeResourcesFit,
 * BalancedAllocation and ImageLocality read of a pod */
static int build_dyn_key(kube_sched *s, const berth_profile *prof, const berth_kpod *p,
                         size_t *len)
{
    kube_podkey b = kube_podkey_start(&s->fast->keybuf, &s->fast->keycap);
    kube_podkey_put(&b, &prof, sizeof prof);
    kube_podkey_requests(&b, p, s->k->nres);
    kube_podkey_put(&b, &p->ninit, sizeof p->ninit);
    for (uint32_t i = 0; i < p->ninit; i++)
        kube_podkey_str(&b, p->init[i].image);
    kube_podkey_put(&b, &p->ncontainers, sizeof p->ncontainers);
    for (uint32_t i = 0; i < p->ncontainers; i++)
        kube_podkey_str(&b, p->containers[i].image);
    *len = b.len;
    return b.oom ? BERTH_ENOMEM : 0;
}

/* ---- eligibility ---- */

/* the plugin objects by id, looked up once (kube_fast_init) */
static int plugin_is(const kube_fast *f, const berth_profile *prof, uint32_t j, berth_kplugin p,
                     int score)
{
    return score ? prof->scores[j] == f->splug[p] : prof->filters[j] == f->fplug[p];
}

/* Profile made only of plugins the cache understands. */
static int profile_ok(kube_sched *s, const berth_profile *prof)
{
    /* totals must fit the int32 columns: 100 x sum of weights */
    int64_t wsum = 0;
    for (uint32_t j = 0; j < prof->nscores; j++)
        wsum += prof->weights ? prof->weights[j] : 1;
    if (wsum > INT32_MAX / 200)
        return 0;
    static const berth_kplugin filters[] = {
        BERTH_KP_NODE_UNSCHEDULABLE, BERTH_KP_NODE_NAME,    BERTH_KP_TAINT_TOLERATION,
        BERTH_KP_NODE_AFFINITY,      BERTH_KP_NODE_PORTS,   BERTH_KP_NODE_RESOURCES_FIT,
        BERTH_KP_VOLUME_ZONE,        BERTH_KP_POD_TOPOLOGY_SPREAD, BERTH_KP_INTER_POD_AFFINITY};
    static const berth_kplugin scores[] = {
        BERTH_KP_TAINT_TOLERATION,    BERTH_KP_NODE_AFFINITY,        BERTH_KP_NODE_RESOURCES_FIT,
        BERTH_KP_POD_TOPOLOGY_SPREAD, BERTH_KP_INTER_POD_AFFINITY,   BERTH_KP_BALANCED_ALLOCATION,
        BERTH_KP_IMAGE_LOCALITY};
    for (uint32_t j = 0; j < prof->nfilters; j++) {
        int ok = 0;
        for (size_t i = 0; i < sizeof filters / sizeof filters[0]; i++)
            ok |= plugin_is(s->fast, prof, j, filters[i], 0);
        if (!ok)
            return 0;
    }
    for (uint32_t j = 0; j < prof->nscores; j++) {
        int ok = 0;
        for (size_t i = 0; i < sizeof scores / sizeof scores[0]; i++)
            ok |= plugin_is(s->fast, prof, j, scores[i], 1);
        if (!ok)
            return 0;
    }
    return 1;
}

static int profile_ok_cached(kube_sched *s, const berth_profile *prof)
{
    kube_fast *f = s->fast;
    for (uint32_t i = 0; i < f->nok; i++)
        if (f->okprof[i] == prof)
            return f->okval[i];
    int ok = profile_ok(s, prof);
    if (f->nok < sizeof f->okprof / sizeof f->okprof[0]) {
        f->okprof[f->nok] = prof;
        f->okval[f->nok++] = ok;
    }
    return ok;
}

static int inert(const kube_req *r)
{
    const kube_terms_req *q = r->terms;
    return !q || (!q->npf && !q->nps && !q->naff && !q->nanti && !q->nisc);
}

/* ---- class construction and upkeep ---- */

static int is_static_filter(kube_sched *s, const berth_profile *prof, uint32_t j)
{
    return plugin_is(s->fast, prof, j, BERTH_KP_NODE_UNSCHEDULABLE, 0) ||
           plugin_is(s->fast, prof, j, BERTH_KP_NODE_NAME, 0) ||
           plugin_is(s->fast, prof, j, BERTH_KP_TAINT_TOLERATION, 0) ||
           plugin_is(s->fast, prof, j, BERTH_KP_NODE_AFFINITY, 0) ||
           plugin_is(s->fast, prof, j, BERTH_KP_VOLUME_ZONE, 0);
}

/* The dynamic plugins on nodes[0..n): f->verdict (fit) and f->col2 (the
 * weighted NodeResourcesFit + BalancedAllocation + ImageLocality sum);
 * img (a what-if class's column) gets the weighted ImageLocality part. */
static void dyn_compute(kube_sched *s, const berth_profile *prof, kube_req *r, int32_t *img,
                        const uint32_t *nodes, uint32_t n)
{
    kube_fast *f = s->fast;
    /* fit filter (the only dynamic filter in an eligible profile for an inert
     * pod without ports) */
    memset(f->verdict, BERTH_FIT, n);
    for (uint32_t j = 0; j < prof->nfilters; j++)
        if (plugin_is(s->fast, prof, j, BERTH_KP_NODE_RESOURCES_FIT, 0))
            prof->filters[j]->filter(s, r, nodes, n, f->verdict);
    for (uint32_t i = 0; i < n; i++)
        f->col2[i] = 0;
    for (uint32_t j = 0; j < prof->nscores; j++) {
        if (!plugin_is(s->fast, prof, j, BERTH_KP_NODE_RESOURCES_FIT, 1) &&
            !plugin_is(s->fast, prof, j, BERTH_KP_BALANCED_ALLOCATION, 1) &&
            !plugin_is(s->fast, prof, j, BERTH_KP_IMAGE_LOCALITY, 1))
            continue;
        prof->scores[j]->score(s, r, nodes, n, f->col);
        int64_t w = prof->weights ? prof->weights[j] : 1;
        for (uint32_t i = 0; i < n; i++)
            f->col2[i] += w * f->col[i];
        if (img && plugin_is(s->fast, prof, j, BERTH_KP_IMAGE_LOCALITY, 1))
            for (uint32_t i = 0; i < n; i++)
                img[nodes[i]] = (int32_t)(w * f->col[i]);
    }
}

/* The shared column d recomputed on nodes[0..n). */
static void dyn_refresh(kube_sched *s, const berth_profile *prof, kube_req *r, fast_dyn *d,
                        const uint32_t *nodes, uint32_t n)
{
    kube_fast *f = s->fast;
    dyn_compute(s, prof, r, NULL, nodes, n);
    for (uint32_t i = 0; i < n; i++)
        d->v[nodes[i]] = f->verdict[i] == BERTH_FIT ? (int32_t)f->col2[i] : INT32_MIN;
}

/* The nodes assumed since log position `from`, each once, into f->list
 * (their count returned). */
static uint32_t log_nodes(kube_fast *f, uint32_t from, uint32_t N)
{
    if (++f->gen == 0) {
        memset(f->seen, 0, N * sizeof *f->seen);
        f->gen = 1;
    }
    uint32_t m = 0;
    for (uint32_t i = from; i < f->nlog; i++) {
        uint32_t nd = f->log[i];
        f->list[m] = nd;
        m += f->seen[nd] != f->gen;
        f->seen[nd] = f->gen;
    }
    return m;
}

/* Brings the shared column d up to date with the assume log (and the
 * image spread). */
static void dyn_update(kube_sched *s, const berth_profile *prof, kube_req *r, fast_dyn *d)
{
    kube_fast *f = s->fast;
    uint32_t N = s->k->nnodes;
    if (d->img_gen != f->img_gen) {
        d->img_gen = f->img_gen;
        d->full |= kube_plugins_pod_images(s, r->p) != 0;
    }
    uint32_t pending = f->nlog - d->pos;
    if (d->full || pending >= N)
        dyn_refresh(s, prof, r, d, f->all, N);
    else if (pending == 0) {
        /* up to date (f->log may be NULL) */
    } else if (pending <= 16)
        dyn_refresh(s, prof, r, d, f->log + d->pos, pending);
    else
        dyn_refresh(s, prof, r, d, f->list, log_nodes(f, d->pos, N));
    d->pos = f->nlog;
    d->full = 0;
}

/* Recomputes the dynamic columns of class c for nodes[0..n) (from its
 * shared column when it has one, which is up to date). */
static void refresh(kube_sched *s, const berth_profile *prof, kube_req *r, fast_class *c,
                    const uint32_t *nodes, uint32_t n)
{
    kube_fast *f = s->fast;
    if (c->dyn >= 0) {
        const int32_t *dv = f->dyns[c->dyn].v;
        for (uint32_t i = 0; i < n; i++) {
            if (i + FAST_AHEAD < n)
                FAST_PREFETCH(&dv[nodes[i + FAST_AHEAD]]);
            int32_t x = dv[nodes[i]];
            f->col2[i] = x;
            f->verdict[i] = x != INT32_MIN ? BERTH_FIT : BERTH_UNFIT;
        }
    } else {
        dyn_compute(s, prof, r, c->img, nodes, n);
    }
    const uint8_t *off = s->off;
    if (off)
        for (uint32_t i = 0; i < n; i++)
            class_node_onoff(s, c, nodes[i]);
    fast_part *pt = c->pt;
    const uint32_t *val = pt ? s->terms->keys[pt->key].val : NULL;
    const uint32_t *pos = pt ? f->inv[pt->inv].pos : NULL;
    uint32_t N = s->k->nnodes;
    for (uint32_t i = 0; i < n; i++) {
        if (i + FAST_AHEAD < n) {
            /* the nodes are scattered: their lines asked for ahead */
            uint32_t a = nodes[i + FAST_AHEAD];
            FAST_PREFETCH(&c->part[a]);
            FAST_PREFETCH(&c->static_ok[a]);
            if (pt) {
                if (pt->v)
                    FAST_PREFETCH(&pos[a]);
                FAST_PREFETCH(&val[a]);
            }
        }
        uint32_t nd = nodes[i];
        int now = c->static_ok[nd] && f->verdict[i] == BERTH_FIT && !(off && off[nd]);
        int was = c->part[nd] != INT32_MIN;
        int32_t v = now ? (int32_t)f->col2[i] : INT32_MIN;
        if (v == c->part[nd])
            continue;
        c->nfeasible += (uint32_t)now - (uint32_t)was;
        c->flist_stale |= now != was;
        int32_t old = c->part[nd];
        if (c->bm_ok)
            bm_set(c->part, N, c->bm, nd, v);
        else
            c->part[nd] = v;
        if (pt) {
            uint32_t d = dom_of(val, pt->nr, nd);
            if (pt->v)
                bm_set(pt->v, N, pt->bm, pos[nd], v);
            else
                dom_set(pt, N, d, nd, old, v);
            pt->dcnt[d] += (uint32_t)now - (uint32_t)was;
        }
    }
}

/* The image spread changed: ImageLocality again on every node, the
 * difference added to each feasible node's part (O(nodes), no other
 * plugin runs). */
static void image_refresh(kube_sched *s, const berth_profile *prof, kube_req *r, fast_class *c)
{
    kube_fast *f = s->fast;
    uint32_t N = s->k->nnodes;
    for (uint32_t j = 0; j < prof->nscores; j++) {
        if (!plugin_is(s->fast, prof, j, BERTH_KP_IMAGE_LOCALITY, 1))
            continue;
        prof->scores[j]->score(s, r, f->all, N, f->col);
        int64_t w = prof->weights ? prof->weights[j] : 1;
        for (uint32_t nd = 0; nd < N; nd++) {
            int32_t v = (int32_t)(w * f->col[nd]);
            if (c->part[nd] != INT32_MIN && v != c->img[nd]) {
                c->part[nd] += v - c->img[nd];
                if (c->pt && c->pt->v)
                    c->pt->v[f->inv[c->pt->inv].pos[nd]] = c->part[nd];
            }
            c->img[nd] = v;
        }
        bm_build(c->part, N, c->bm);
        c->bm_ok = 1;
        if (c->pt && c->pt->v)
            bm_build(c->pt->v, N, c->pt->bm);
        else if (c->pt)
            dom_build(c->pt, c->part, s->terms->keys[c->pt->key].val, N);
    }
}

/* Weighted TaintToleration + NodeAffinity after normalisation when their raw
 * scores are the same on every statically feasible node (then the value
 * does not depend on which of them are feasible); -1 in *ok otherwise. */
static int constant_part(kube_sched *s, const berth_profile *prof, kube_req *r, fast_class *c,
                         int64_t *out)
{
    kube_fast *f = s->fast;
    uint32_t N = s->k->nnodes, m = 0;
    for (uint32_t nd = 0; nd < N; nd++)
        if (c->static_ok[nd] && !(s->off && s->off[nd]))
            f->list[m++] = nd;
    *out = 0;
    for (uint32_t j = 0; j < prof->nscores; j++) {
        if (!plugin_is(s->fast, prof, j, BERTH_KP_TAINT_TOLERATION, 1) &&
            !plugin_is(s->fast, prof, j, BERTH_KP_NODE_AFFINITY, 1))
            continue;
        if (!m)
            continue;
        prof->scores[j]->score(s, r, f->list, m, f->col);
        for (uint32_t i = 1; i < m; i++)
            if (f->col[i] != f->col[0])
                return 0;
        c->ref[j] = f->col[0];
        c->has_ref = 1;
        /* normalise a one-node column: any node's value is this value */
        int64_t v = f->col[0];
        if (prof->scores[j]->normalize)
            prof->scores[j]->normalize(s, r, &v, 1);
        *out += (prof->weights ? prof->weights[j] : 1) * v;
    }
    return 1;
}

/* The shared dynamic column for r's requests and images, created (and
 * its bytes added to *need) when new, brought up to date; -1 when the key
 * cannot be built (*rc set). O(columns) at class creation only. */
static int32_t find_dyn(kube_sched *s, const berth_profile *prof, kube_req *r, size_t *need,
                        int *rc)
{
    kube_fast *f = s->fast;
    uint32_t N = s->k->nnodes;
    size_t len;
    if ((*rc = build_dyn_key(s, prof, r->p, &len)))
        return -1;
    uint32_t h = (uint32_t)berth_hash_keyed(&f->hkey, f->keybuf, len);
    uint32_t i = 0;
    while (i < f->ndyns && !(f->dyns[i].hash == h && f->dyns[i].klen == len &&
                             f->dyns[i].prof == prof && !memcmp(f->dyns[i].key, f->keybuf, len)))
        i++;
    if (i == f->ndyns) {
        if (berth_grow((void **)&f->dyns, &f->capdyns, f->ndyns + 1, sizeof *f->dyns, 0)) {
            *rc = BERTH_ENOMEM;
            return -1;
        }
        fast_dyn *d = &f->dyns[i];
        memset(d, 0, sizeof *d);
        d->key = malloc(len ? len : 1);
        d->v = malloc((N ? N : 1) * sizeof *d->v);
        if (!d->key || !d->v) {
            free(d->key);
            free(d->v);
            *rc = BERTH_ENOMEM;
            return -1;
        }
        memcpy(d->key, f->keybuf, len);
        d->klen = len;
        d->hash = h;
        d->prof = prof;
        d->full = 1;
        d->img_gen = f->img_gen;
        f->ndyns++;
        *need += (size_t)N * sizeof(int32_t) + len;
    }
    dyn_update(s, prof, r, &f->dyns[i]);
    return (int32_t)i;
}

static fast_class *find_class(kube_sched *s, const berth_profile *prof, kube_req *r, int *rc)
{
    kube_fast *f = s->fast;
    size_t len;
    *rc = build_key(s, prof, r->p, &len);
    if (*rc)
        return NULL;
    if (f->last) {
        fast_class *c = &f->classes[f->last - 1];
        if (c->klen == len && c->prof == prof && !memcmp(c->key, f->keybuf, len))
            return c;
    }
    uint32_t h = (uint32_t)berth_hash_keyed(&f->hkey, f->keybuf, len);
    uint32_t mask = f->tcap - 1;
    for (uint32_t i = h & mask;; i = (i + 1) & mask) {
        uint32_t v = f->table[i];
        if (!v)
            break;
        fast_class *c = &f->classes[v - 1];
        if (c->hash == h && c->klen == len && !memcmp(c->key, f->keybuf, len) && c->prof == prof) {
            f->last = v;
            return c;
        }
    }
    /* new class */
    uint32_t N = s->k->nnodes;
    int with_img = 0;
    for (uint32_t j = 0; j < prof->nscores && s->off; j++)
        with_img |= plugin_is(s->fast, prof, j, BERTH_KP_IMAGE_LOCALITY, 1);
    /* column(s), static verdicts, key, block maxima, and room for a
     * partition by domain (its column and block maxima) */
    size_t need = (size_t)N * (1 + (with_img ? 3 : 2) * sizeof(int32_t)) + len + 1 +
                  2 * nblocks(N) * (sizeof(int32_t) + 1);
    if (f->nclasses >= FAST_MAX_CLASSES || f->bytes + need > FAST_MAX_BYTES)
        return NULL; /* full path for this pod */
    if (berth_grow((void **)&f->classes, &f->capclasses, f->nclasses + 1, sizeof *f->classes, 0)) {
        *rc = BERTH_ENOMEM;
        return NULL;
    }
    if (2 * (f->nclasses + 1) > f->tcap) {
        *rc = berth_slots_rebuild(&f->table, &f->tcap, f->tcap * 2, f->classes, sizeof *f->classes,
                                  offsetof(fast_class, hash), sizeof f->classes->hash,
                                  f->nclasses);
        if (*rc)
            return NULL;
        mask = f->tcap - 1;
    }
    fast_class *c = &f->classes[f->nclasses];
    memset(c, 0, sizeof *c);
    c->dyn = -1;
    c->key = malloc(len + 1);
    c->static_ok = malloc(N ? N : 1);
    c->part = malloc((N ? N : 1) * sizeof *c->part);
    if (with_img)
        c->img = malloc((N ? N : 1) * sizeof *c->img);
    c->bm = bm_alloc(N);
    if (!c->key || !c->static_ok || !c->part || (with_img && !c->img) || !c->bm) {
        free(c->bm);
        free(c->key);
        free(c->static_ok);
        free(c->part);
        free(c->img);
        *rc = BERTH_ENOMEM;
        return NULL;
    }
    for (uint32_t nd = 0; nd < N; nd++)
        c->part[nd] = INT32_MIN;
    bm_build(c->part, N, c->bm);
    c->bm_ok = 1;
    memcpy(c->key, f->keybuf, len);
    c->key[len] = '\0';
    c->klen = len;
    c->hash = h;
    c->prof = prof;
    c->rep = r->pod;
    c->node_name = kube_pod_node_name(s, r->p);
    c->dpos = f->ndlog;
    c->img_gen = f->img_gen;
    /* static filters over every node */
    memset(f->verdict, BERTH_FIT, N);
    for (uint32_t j = 0; j < prof->nfilters; j++)
        if (is_static_filter(s, prof, j))
            prof->filters[j]->filter(s, r, f->all, N, f->verdict);
    for (uint32_t nd = 0; nd < N; nd++)
        c->static_ok[nd] = f->verdict[nd] == BERTH_FIT;
    if (s->off)
        for (uint32_t nd = 0; nd < N; nd++)
            if (c->static_ok[nd] && s->off[nd])
                c->static_ok[nd] = ST_UNCHECKED;
    if (!constant_part(s, prof, r, c, &c->constant)) {
        free(c->key);
        free(c->static_ok);
        free(c->part);
        free(c->img);
        free(c->bm);
        return NULL; /* varying static scores: the full path normalises them */
    }
    if (!with_img) {
        /* the shared dynamic column (created on first use) */
        int32_t di = find_dyn(s, prof, r, &need, rc);
        if (*rc) {
            class_free(c);
            return NULL;
        }
        c->dyn = di;
    }
    refresh(s, prof, r, c, f->all, N);
    c->pos = f->nlog;
    f->bytes += need;
    uint32_t i = h & mask;
    while (f->table[i])
        i = (i + 1) & mask;
    f->table[i] = f->nclasses + 1;
    f->last = ++f->nclasses;
    return c;
}

/* A pod with spread or affinity context: the class gives the nodes that
 * pass every other filter and the rest of the score; PodTopologySpread and
 * InterPodAffinity run as plugins on those nodes only (the feasible set and
 * hence their normalisation are the pipeline's). */
/* Only spread/affinity FILTERS apply (their scores are 0 everywhere): the
 * total is part + constant. Nodes go through the two filters in chunks that
 * stay in L1, tracking the best value, its ties (in node order) and the
 * feasible count on the way: the same feasible set, winner and count as the
 * pipeline. */
typedef struct fast_scan {
    kube_sched *s;
    const berth_profile *prof;
    kube_req *r;
    const int32_t *part;
    const uint32_t *nodes; /* filtered chunks: the class's feasible list */
    uint32_t n;           /* nodes (filtered) or N (argmax) */
    uint32_t *ties;       /* filtered: chunk k's ties at ties + k * FAST_CHUNK */
    fast_slot *slot;
    int tiebreak;         /* argmax: which ties the merge reads */
} fast_scan;

/* Filtered chunk k: PodTopologySpread / InterPodAffinity filters on the
 * chunk's feasible nodes (each filter sees the survivors of the one
 * before), then the best part value and its ties in node order. */
static void filtered_chunk(void *ctx, uint32_t k)
{
    fast_scan *j = ctx;
    const berth_profile *prof = j->prof;
    kube_sched *s = j->s;
    uint32_t base = k * FAST_CHUNK;
    uint32_t n = j->n - base < FAST_CHUNK ? j->n - base : FAST_CHUNK;
    uint32_t list[FAST_CHUNK];
    uint8_t verdict[FAST_CHUNK];
    memcpy(list, j->nodes + base, n * sizeof *list);
    for (uint32_t f = 0; f < prof->nfilters && n; f++) {
        if (!plugin_is(s->fast, prof, f, BERTH_KP_POD_TOPOLOGY_SPREAD, 0) &&
            !plugin_is(s->fast, prof, f, BERTH_KP_INTER_POD_AFFINITY, 0))
            continue;
        memset(verdict, BERTH_FIT, n);
        prof->filters[f]->filter(j->s, j->r, list, n, verdict);
        uint32_t m = 0;
        for (uint32_t i = 0; i < n; i++) {
            list[m] = list[i];
            m += verdict[i] == BERTH_FIT;
        }
        n = m;
    }
    int32_t best = INT32_MIN;
    uint32_t nties = 0, *ties = j->ties + base;
    for (uint32_t i = 0; i < n; i++) {
        int32_t v = j->part[list[i]];
        if (v > best) {
            best = v;
            nties = 0;
        }
        if (v == best)
            ties[nties++] = list[i];
    }
    j->slot[k] = (fast_slot){best, n, nties, nties ? ties[0] : 0, nties ? ties[nties - 1] : 0};
}

/* Runs chunks [0, nch) of a scan over n nodes: on the pool when n >= min
 * (the filters' lazy state built first by the caller), else here, in
 * chunk order. */
static void fast_run(kube_sched *s, uint32_t n, uint32_t min, uint32_t nch, berth_pool_fn fn,
                     fast_scan *j)
{
    berth_pool_run(n >= min ? s->pool : NULL, nch, fn, j);
}

/* The merged best over slots [0, nch): the value, the ties' count, and the
 * chunk holding the chosen tie (first, last or the k-th at random, k drawn
 * once from rng as the one-thread scan draws it) with its rank there. */
static int32_t merge_slots(const fast_slot *slot, uint32_t nch, int tiebreak, berth_rng *rng,
                           uint32_t *nfeasible, uint32_t *chunk, uint32_t *rank)
{
    int32_t best = INT32_MIN;
    uint32_t nties = 0, nf = 0;
    for (uint32_t k = 0; k < nch; k++) {
        nf += slot[k].nfeasible;
        if (slot[k].nties && slot[k].best > best)
            best = slot[k].best;
    }
    for (uint32_t k = 0; k < nch; k++)
        if (slot[k].nties && slot[k].best == best)
            nties += slot[k].nties;
    *nfeasible = nf;
    if (!nties)
        return INT32_MIN;
    uint64_t want = 0;
    if (tiebreak == BERTH_TIE_RANDOM && nties > 1)
        want = berth_rng_below(rng, nties);
    else if (tiebreak == BERTH_TIE_LAST)
        want = nties - 1;
    for (uint32_t k = 0; k < nch; k++) {
        if (!slot[k].nties || slot[k].best != best)
            continue;
        if (want < slot[k].nties) {
            *chunk = k;
            *rank = (uint32_t)want;
            return best;
        }
        want -= slot[k].nties;
    }
    return INT32_MIN; /* not reached */
}

/* Only spread/affinity FILTERS apply (their scores are 0 everywhere): the
 * total is part + constant. Nodes go through the two filters in chunks that
 * stay in L1 (on the pool's threads when there are enough), tracking the
 * best value, its ties (in node order) and the feasible count per chunk;
 * merged in chunk order: the same feasible set, winner and count as the
 * pipeline. */
static int pick_filtered_chunks(kube_sched *s, const berth_profile *prof, kube_req *r,
                                berth_rng *rng, fast_class *c, kube_fast_result *out)
{
    kube_fast *f = s->fast;
    uint32_t N = s->k->nnodes;
    const int32_t *part = c->part;
    if (!c->flist || c->flist_stale) {
        if (!c->flist) {
            c->flist = malloc((N ? N : 1) * sizeof *c->flist);
            if (!c->flist)
                return BERTH_ENOMEM;
        }
        uint32_t m = 0;
        for (uint32_t nd = 0; nd < N; nd++) {
            c->flist[m] = nd;
            m += part[nd] != INT32_MIN;
        }
        c->nflist = m;
        c->flist_stale = 0;
    }
    uint32_t nch = (c->nflist + FAST_CHUNK - 1) / FAST_CHUNK;
    fast_scan j = {s, prof, r, part, c->flist, c->nflist, f->list, f->slot, prof->tiebreak};
    /* the filters' per-pod state is built before chunks share it */
    fast_run(s, kube_terms_par_prepare(s, r) ? 0 : c->nflist, BERTH_PAR_MIN, nch, filtered_chunk,
             &j);
    uint32_t nfeasible = 0, chunk = 0, rank = 0;
    int32_t best = merge_slots(f->slot, nch, prof->tiebreak, rng, &nfeasible, &chunk, &rank);
    if (!nfeasible)
        return 2; /* no node fits: the full path explains why */
    out->node = f->list[chunk * FAST_CHUNK + rank];
    out->nfeasible = nfeasible;
    out->total = (int64_t)best + c->constant;
    return 1;
}

/* ---- the per-domain index (PodTopologySpread / InterPodAffinity filters) ----
 *
 * kube-scheduler's PodTopologySpread PreFilter counts the matching pods per
 * domain once per pod and its Filter then checks one node's domain against
 * the global minimum (pkg/scheduler/framework/plugins/podtopologyspread/
 * filtering.go: calPreFilterState, Filter); InterPodAffinity's PreFilter
 * likewise builds per-(key, value) counts of matching existing pods and of
 * existing pods' anti-affinity terms (interpodaffinity/filtering.go:
 * getExistingAntiAffinityCounts, getIncomingAffinityAntiAffinityCounts) so
 * that Filter is a lookup per node. terms.c builds those per-domain totals
 * (pts_filter_ready, ipa_filter_ready); here a whole domain is judged at
 * once instead of each of its nodes, and the class's part values ordered
 * by domain answer "best feasible node in these domains" from a max tree. */

/* c's block maxima, rebuilt if they were left behind (O(nodes)) */
static void class_bm(kube_sched *s, fast_class *c)
{
    if (!c->bm_ok) {
        bm_build(c->part, s->k->nnodes, c->bm);
        c->bm_ok = 1;
    }
}

/* The nodes by value of topology key `key` (FAST_NINV keys kept; built
 * again in place after node data changed): its slot in f->inv, or
 * FAST_NINV when every slot holds another key. */
static uint32_t inverse(kube_sched *s, uint32_t key, int *rc)
{
    kube_fast *f = s->fast;
    const kube_tkey *tk = &s->terms->keys[key];
    uint32_t N = s->k->nnodes, i = 0;
    while (i < FAST_NINV && f->inv[i].start && f->inv[i].key != key)
        i++;
    if (i == FAST_NINV)
        return FAST_NINV;
    fast_inv *x = &f->inv[i];
    if (x->start && x->gen == f->data_gen && x->nvals == tk->nvals)
        return i;
    free(x->start);
    free(x->nodes);
    free(x->pos);
    memset(x, 0, sizeof *x);
    x->start = calloc((size_t)tk->nvals + 3, sizeof *x->start);
    x->nodes = malloc((N ? N : 1) * sizeof *x->nodes);
    x->pos = malloc((N ? N : 1) * sizeof *x->pos);
    if (!x->start || !x->nodes || !x->pos) {
        free(x->start);
        free(x->nodes);
        free(x->pos);
        memset(x, 0, sizeof *x);
        *rc = BERTH_ENOMEM;
        return FAST_NINV;
    }
    /* group g = value, or nvals for nodes without the key */
    const uint32_t *val = tk->val;
    uint32_t ng = tk->nvals + 1;
    for (uint32_t nd = 0; nd < N; nd++)
        x->start[(val[nd] == KUBE_NOVAL ? ng - 1 : val[nd]) + 2]++;
    x->unique = 1;
    for (uint32_t g = 0; g + 1 < ng; g++)
        x->unique &= x->start[g + 2] <= 1;
    for (uint32_t g = 0; g + 1 < ng; g++)
        x->start[g + 2] += x->start[g + 1];
    for (uint32_t nd = 0; nd < N; nd++) {
        uint32_t at = x->start[(val[nd] == KUBE_NOVAL ? ng - 1 : val[nd]) + 1]++;
        x->nodes[at] = nd;
        x->pos[nd] = at;
    }
    x->key = key;
    x->nvals = tk->nvals;
    x->gen = f->data_gen;
    return i;
}

/* c's part values by domain of topology key `key` (built or rebuilt when
 * missing, stale or for another key: O(nodes) then, O(1) otherwise); NULL
 * with *rc 0 when no key slot is free. */
static fast_part *class_part(kube_sched *s, fast_class *c, uint32_t key, int *rc)
{
    kube_fast *f = s->fast;
    uint32_t N = s->k->nnodes, nr = s->terms->keys[key].nvals + 1;
    uint32_t iv = inverse(s, key, rc);
    if (iv == FAST_NINV)
        return NULL;
    fast_part *pt = c->pt;
    if (pt && pt->key == key && pt->gen == f->data_gen && pt->nr == nr)
        return pt;
    part_free(pt);
    c->pt = NULL;
    pt = calloc(1, sizeof *pt);
    int small = nr <= FAST_DSMALL;
    if (pt) {
        pt->nr = nr;
        if (!small)
            pt->v = malloc((N ? N : 1) * sizeof *pt->v);
        pt->bm = bm_alloc(small ? dom_len(pt, N) : N);
        pt->dcnt = calloc(nr, sizeof *pt->dcnt);
    }
    if (!pt || (!small && !pt->v) || !pt->bm || !pt->dcnt) {
        part_free(pt);
        *rc = BERTH_ENOMEM;
        return NULL;
    }
    pt->key = key;
    pt->inv = iv;
    pt->gen = f->data_gen;
    if (small) {
        dom_build(pt, c->part, s->terms->keys[key].val, N);
        c->pt = pt;
        return pt;
    }
    const fast_inv *x = &f->inv[iv];
    for (uint32_t g = 0; g < nr; g++)
        for (uint32_t i = x->start[g]; i < x->start[g + 1]; i++) {
            pt->v[i] = c->part[x->nodes[i]];
            pt->dcnt[g] += pt->v[i] != INT32_MIN;
        }
    bm_build(pt->v, N, pt->bm);
    c->pt = pt;
    return pt;
}

/* With only the spread / affinity filters beside the class (no score of
 * theirs), tie-break first or last, no required pod affinity and the
 * DoNotSchedule constraints on one key K: the feasible nodes are the
 * class's feasible nodes in the domains of K that pass every spread
 * constraint and every anti-affinity total on K, minus the nodes an
 * anti-affinity total on another key excludes (listed from the touched
 * totals: the nodes of existing matching pods' domains). O(domains of K +
 * those nodes x log nodes) per pod instead of O(nodes). Returns as
 * kube_fast_pick; 0 when the pod is not of this shape (the chunk scan). */
static int pick_indexed(kube_sched *s, const berth_profile *prof, kube_req *r, fast_class *c,
                        kube_fast_result *out)
{
    kube_fast *f = s->fast;
    kube_terms_req *q = r->terms;
    kube_terms *t = s->terms;
    if (prof->tiebreak != BERTH_TIE_FIRST && prof->tiebreak != BERTH_TIE_LAST)
        return 0;
    int use_pts = 0, use_ipa = 0;
    for (uint32_t j = 0; j < prof->nfilters; j++) {
        use_pts |= plugin_is(f, prof, j, BERTH_KP_POD_TOPOLOGY_SPREAD, 0);
        use_ipa |= plugin_is(f, prof, j, BERTH_KP_INTER_POD_AFFINITY, 0);
    }
    use_pts &= q->npf != 0;
    use_ipa &= q->naff != 0 || q->nanti != 0;
    if (use_ipa && q->naff)
        return 0;
    uint32_t K = KUBE_NOVAL;
    if (use_pts) {
        K = q->pf[0].key;
        for (uint32_t i = 1; i < q->npf; i++)
            if (q->pf[i].key != K)
                return 0;
    }
    /* PodTopologySpread's per-domain totals (built once per pod) */
    if (kube_terms_pts_prepare(s, r))
        return 0;
    int rc = 0;
    fast_part *pt = NULL;
    uint32_t nr = 1;
    if (K != KUBE_NOVAL) {
        if (!(pt = class_part(s, c, K, &rc)))
            return rc; /* 0: no key slot free, the chunk scan */
        nr = pt->nr;
    }
    /* positions in the partition's order (a copy of the column), or node
     * order (no partition; a few domains: the class column itself) */
    const uint32_t *ppos = pt && pt->v ? f->inv[pt->inv].pos : NULL;
    if (pt)
        c->bm_ok = 0; /* the partition is read: the class's own maxima wait */
    else
        class_bm(s, c);
    if (nr > f->allowcap) {
        uint8_t *a = realloc(f->allow, nr);
        if (!a)
            return BERTH_ENOMEM;
        f->allow = a;
        f->allowcap = nr;
    }
    /* domains of K: Filter's verdict is the same for every node of one.
     * PodTopologySpread: the domain's matching pods against the minimum
     * (filtering.go Filter: matchNum + selfMatchNum - minMatchNum >
     * maxSkew fails); a node without the key fails. */
    for (uint32_t d = 0; d < nr; d++) {
        uint32_t v = pt && d < nr - 1 ? d : KUBE_NOVAL;
        int ok = 1;
        for (uint32_t i = 0; use_pts && i < q->npf && ok; i++) {
            const kube_pts_c *pc = &q->pf[i];
            if (v == KUBE_NOVAL) {
                ok = 0; /* the node lacks the key */
                break;
            }
            int64_t m = q->pool[pc->off + v];
            ok = (m < 0 ? 0 : m) <= (int64_t)pc->max_skew + pc->min - pc->self;
        }
        f->allow[d] = (uint8_t)ok;
    }
    /* InterPodAffinity's anti-affinity (the pod's own required terms and
     * existing pods' required terms matching it): a node fails when some
     * node of its domain of the term's key counts a matching pod
     * (filtering.go satisfyPodAntiAffinity, satisfyExistingPodsAntiAffinity
     * over the PreFilter's per-(key, value) counts). The nodes that count
     * are the term's signature's non-zero list: a domain of K is judged
     * whole; for another key the nodes of the domain are listed (few when
     * the key is fine-grained, e.g. the hostname) and stamped. */
    for (uint32_t i = 0; use_ipa && pt && i < q->nanti; i++) {
        const kube_term_ref *tr = &q->anti[i];
        if (tr->key != K)
            continue;
        const uint32_t *nz, *val = t->keys[K].val;
        int exact;
        uint32_t nnz = kube_terms_nz(s, tr, &nz, &exact);
        for (uint32_t j = 0; j < nnz; j++)
            if ((exact || tr->cnt[nz[j]] > 0) && val[nz[j]] != KUBE_NOVAL)
                f->allow[val[nz[j]]] = 0;
    }
    uint32_t nfeasible = 0;
    for (uint32_t d = 0; d < nr; d++)
        nfeasible += f->allow[d] ? (pt ? pt->dcnt[d] : c->nfeasible) : 0;
    if (++f->rgen == 0) {
        memset(f->rej, 0, s->k->nnodes * sizeof *f->rej);
        memset(f->brej, 0, nblocks(s->k->nnodes) * sizeof *f->brej);
        f->rgen = 1;
    }
    const uint32_t *kval = pt ? t->keys[K].val : NULL;
    uint32_t listed = 0, nrej = 0, budget = s->k->nnodes / 8 + 64;
    for (uint32_t i = 0; use_ipa && i < q->nanti; i++) {
        const kube_term_ref *tr = &q->anti[i];
        if (tr->key == K)
            continue;
        uint32_t ivs = inverse(s, tr->key, &rc);
        if (ivs == FAST_NINV)
            return rc;
        const fast_inv *iv = &f->inv[ivs];
        const uint32_t *nz, *val = t->keys[tr->key].val;
        int exact;
        uint32_t nnz = kube_terms_nz(s, tr, &nz, &exact);
        for (uint32_t j = 0; j < nnz; j++) {
            if (iv->unique && j + FAST_AHEAD < nnz) {
                /* the listed nodes are scattered: each one's lines (its
                 * value, stamp, position, and the class column the drop
                 * below reads) are asked for ahead, so the misses overlap */
                uint32_t a = nz[j + FAST_AHEAD];
                FAST_PREFETCH(&val[a]);
                FAST_PREFETCH(&f->rej[a]);
                FAST_PREFETCH(&c->part[a]);
                if (ppos)
                    FAST_PREFETCH(&ppos[a]);
                if (kval)
                    FAST_PREFETCH(&kval[a]);
            }
            uint32_t n = nz[j], v = val[n];
            /* the count itself is read only when some went back to 0 (it
             * is a cache miss per node otherwise) */
            if (v == KUBE_NOVAL || (!exact && tr->cnt[n] <= 0))
                continue;
            if (iv->unique) {
                /* the domain is n alone: no read of the inverse */
                if (f->rej[n] == f->rgen)
                    continue;
                if (++listed > budget)
                    return 0;
                f->rej[n] = f->rgen;
                f->brej[(ppos ? ppos[n] : n) / FAST_BLOCK] = f->rgen;
                f->list[nrej++] = n;
                continue;
            }
            for (uint32_t x = iv->start[v]; x < iv->start[v + 1]; x++) {
                uint32_t nd = iv->nodes[x];
                if (f->rej[nd] == f->rgen)
                    continue;
                if (++listed > budget)
                    return 0; /* a wide exclusion: the chunk scan */
                f->rej[nd] = f->rgen;
                f->brej[(ppos ? ppos[nd] : nd) / FAST_BLOCK] = f->rgen;
                f->list[nrej++] = nd;
            }
        }
    }
    /* the excluded nodes the domains counted: without a branch on the
     * class's column, whose reads (one cache line each) then overlap */
    uint32_t drop = 0;
    for (uint32_t i = 0; i < nrej; i++) {
        uint32_t nd = f->list[i];
        uint32_t d = !pt ? 0 : kval[nd] == KUBE_NOVAL ? nr - 1 : kval[nd];
        drop += (uint32_t)(c->part[nd] != INT32_MIN) & f->allow[d];
    }
    nfeasible -= drop;
    if (!nfeasible)
        return 2; /* no node fits: the full path explains why */
    /* the best allowed node: per domain (a range of positions), merged by
     * value, then node order */
    int last = prof->tiebreak == BERTH_TIE_LAST, found = 0;
    int32_t best = INT32_MIN;
    uint32_t node = 0;
    if (pt && !pt->v) {
        /* a few domains: one pass over the blocks of the class column */
        if (!dom_best(pt, c->part, kval, s->k->nnodes, f->allow, f->rej, f->brej, f->rgen, last,
                      f->beff, f->bexact, &best, &node))
            return 0; /* not reached: nfeasible > 0 */
        out->node = node;
        out->nfeasible = nfeasible;
        out->total = (int64_t)best + c->constant;
        return 1;
    }
    const uint32_t *perm = pt ? f->inv[pt->inv].nodes : NULL;
    const uint32_t *start = pt ? f->inv[pt->inv].start : NULL;
    bm_query bq = {pt ? pt->v : c->part, pt ? pt->bm : c->bm, s->k->nnodes, perm, f->rej,
                   f->brej, f->rgen, last, f->beff, f->bexact};
    for (uint32_t d = 0; d < nr; d++) {
        if (!f->allow[d] || (pt && !pt->dcnt[d]))
            continue;
        int32_t bv;
        uint32_t bpos;
        if (!bm_best(&bq, pt ? start[d] : 0, pt ? start[d + 1] : s->k->nnodes, &bv, &bpos))
            continue;
        uint32_t nd = perm ? perm[bpos] : bpos;
        if (!found || bv > best || (bv == best && (last ? nd > node : nd < node))) {
            found = 1;
            best = bv;
            node = nd;
        }
    }
    if (!found)
        return 0; /* not reached: nfeasible > 0 */
    out->node = node;
    out->nfeasible = nfeasible;
    out->total = (int64_t)best + c->constant;
    return 1;
}

static int pick_with_terms(kube_sched *s, const berth_profile *prof, kube_req *r, berth_rng *rng,
                           fast_class *c, kube_fast_result *out)
{
    kube_fast *f = s->fast;
    const kube_terms_req *tq = r->terms;
    uint32_t N = s->k->nnodes, n = 0;
    const int32_t *part = c->part;
    if (!tq->nps && !tq->nisc) {
        int rc = pick_indexed(s, prof, r, c, out);
        return rc ? rc : pick_filtered_chunks(s, prof, r, rng, c, out);
    }
    if (tq->nps == 2 && !tq->npf && !tq->naff && !tq->nanti && !tq->nisc) {
        /* no filter pass; PodTopologySpread the only score beside part:
         * the system default constraints (hostname and zone) fused with
         * the argmax when that is their shape */
        uint32_t npts = 0, jp = 0;
        for (uint32_t j = 0; j < prof->nscores; j++)
            if (plugin_is(s->fast, prof, j, BERTH_KP_POD_TOPOLOGY_SPREAD, 1)) {
                jp = j;
                npts++;
            }
        if (npts == 1 && !prof->scores[jp]->normalize) {
            kube_pts_pick pk;
            int rc = kube_pts_pick_hz(s, r, part, N, prof->weights ? prof->weights[jp] : 1,
                                      prof->tiebreak, rng, f->list, &pk);
            if (rc == 1) {
                out->node = pk.node;
                out->nfeasible = pk.nfeasible;
                out->total = pk.total + c->constant;
                return 1;
            }
            if (rc)
                return rc;
        }
    }
    for (uint32_t nd = 0; nd < N; nd++) {
        f->list[n] = nd;
        n += part[nd] != INT32_MIN;
    }
    for (uint32_t j = 0; j < prof->nfilters && n; j++) {
        /* each filter passes every node when the pod gives it nothing to
         * check (no DoNotSchedule constraint; no required term of its own or
         * of an existing pod against it): skip the pass */
        if (plugin_is(s->fast, prof, j, BERTH_KP_POD_TOPOLOGY_SPREAD, 0) ? !tq->npf
            : plugin_is(s->fast, prof, j, BERTH_KP_INTER_POD_AFFINITY, 0) ? !tq->naff && !tq->nanti
                                                                 : 1)
            continue;
        memset(f->verdict, BERTH_FIT, n);
        prof->filters[j]->filter(s, r, f->list, n, f->verdict);
        uint32_t k = 0;
        for (uint32_t i = 0; i < n; i++)
            if (f->verdict[i] == BERTH_FIT)
                f->list[k++] = f->list[i];
        n = k;
    }
    if (!n)
        return 2; /* no node fits: the full path explains why */
    const kube_terms_req *q = tq;
    /* the score plugins that do not score 0 everywhere (without
     * ScheduleAnyway constraints or score terms PodTopologySpread and
     * InterPodAffinity do); with only one, its weighted column joins the
     * static part in the argmax pass itself */
    uint32_t active[2], nact = 0;
    for (uint32_t j = 0; j < prof->nscores; j++)
        if (plugin_is(s->fast, prof, j, BERTH_KP_POD_TOPOLOGY_SPREAD, 1) ? q->nps
            : plugin_is(s->fast, prof, j, BERTH_KP_INTER_POD_AFFINITY, 1) ? q->nisc
                                                                  : 0)
            active[nact++] = j;
    int64_t best = INT64_MIN;
    uint32_t nties = 0, first = 0;
    if (nact == 1) {
        uint32_t j = active[0];
        prof->scores[j]->score(s, r, f->list, n, f->col);
        if (prof->scores[j]->normalize)
            prof->scores[j]->normalize(s, r, f->col, n);
        int64_t w = prof->weights ? prof->weights[j] : 1;
        for (uint32_t i = 0; i < n; i++) {
            int64_t v = part[f->list[i]] + w * f->col[i];
            f->col2[i] = v;
            if (v > best) {
                best = v;
                first = i;
                nties = 1;
            } else if (v == best)
                nties++;
        }
    } else {
        for (uint32_t i = 0; i < n; i++)
            f->col2[i] = part[f->list[i]];
        for (uint32_t a = 0; a < nact; a++) {
            uint32_t j = active[a];
            prof->scores[j]->score(s, r, f->list, n, f->col);
            if (prof->scores[j]->normalize)
                prof->scores[j]->normalize(s, r, f->col, n);
            int64_t w = prof->weights ? prof->weights[j] : 1;
            for (uint32_t i = 0; i < n; i++)
                f->col2[i] += w * f->col[i];
        }
        for (uint32_t i = 0; i < n; i++) {
            if (f->col2[i] > best) {
                best = f->col2[i];
                first = i;
                nties = 1;
            } else if (f->col2[i] == best) {
                nties++;
            }
        }
    }
    uint32_t chosen = first;
    if (prof->tiebreak == BERTH_TIE_RANDOM && nties > 1) {
        uint64_t k = berth_rng_below(rng, nties);
        for (uint32_t i = first; i < n; i++)
            if (f->col2[i] == best && k-- == 0) {
                chosen = i;
                break;
            }
    } else if (prof->tiebreak == BERTH_TIE_LAST && nties > 1) {
        for (uint32_t i = n; i-- > first;)
            if (f->col2[i] == best) {
                chosen = i;
                break;
            }
    }
    out->node = f->list[chosen];
    out->nfeasible = n;
    out->total = best + c->constant;
    return 1;
}

int kube_fast_pick(kube_sched *s, const berth_profile *prof, kube_req *r, berth_rng *rng,
                   kube_fast_result *out)
{
    kube_fast *f = s->fast;
    if (!f || s->reference || !profile_ok_cached(s, prof) || r->p->nports)
        return 0;
    int rc = 0;
    fast_class *c = find_class(s, prof, r, &rc);
    if (!c)
        return rc;
    uint32_t N = s->k->nnodes;
    if (c->pt && c->pt->gen != f->data_gen) {
        /* node data changed: domains may differ; rebuilt when next asked */
        part_free(c->pt);
        c->pt = NULL;
    }
    /* what-if changes since the class was last used: static data of
     * changed nodes, the image spread */
    for (; c->dpos < f->ndlog; c->dpos++)
        class_node_static(s, c, f->dlog[c->dpos]);
    int img_stale = 0;
    if (c->img_gen != f->img_gen) {
        c->img_gen = f->img_gen;
        if (kube_plugins_pod_images(s, &s->k->pods[c->rep])) {
            img_stale = c->img != NULL;
            c->full |= !c->img;
        }
    }
    /* bring the dynamic columns up to date (the shared one first) */
    if (c->dyn >= 0)
        dyn_update(s, prof, r, &f->dyns[c->dyn]);
    uint32_t pending = f->nlog - c->pos;
    if (img_stale && !c->full && pending < N)
        image_refresh(s, prof, r, c);
    if (c->full || pending >= N)
        refresh(s, prof, r, c, f->all, N);
    else if (pending == 0) {
        /* up to date (f->log may be NULL: no offset from it) */
    } else if (pending <= 16)
        refresh(s, prof, r, c, f->log + c->pos, pending);
    else /* the log lists a node once per change: refresh each once */
        refresh(s, prof, r, c, f->list, log_nodes(f, c->pos, N));
    c->pos = f->nlog;
    c->full = 0;
    if (c->nbad)
        return 0; /* a candidate's constant scores differ: the full path */
    if (!c->nfeasible)
        return 2; /* no node fits: the full path explains why */
    if (!inert(r))
        return pick_with_terms(s, prof, r, rng, c, out);
    /* argmax of part (INT32_MIN where infeasible) over the block maxima;
     * ties as the pipeline breaks them: first by index, last, or the k-th
     * of the ties at random (k drawn as the pipeline's scan draws it, over
     * the ties counted in the blocks that hold the best value) */
    const int32_t *part = c->part;
    class_bm(s, c);
    uint32_t nb = nblocks(N);
    int32_t best = INT32_MIN;
    uint32_t chosen = 0;
    if (prof->tiebreak != BERTH_TIE_RANDOM) {
        bm_query bq = {part, c->bm, N, NULL, NULL, NULL, 0, prof->tiebreak == BERTH_TIE_LAST,
                       f->beff, f->bexact};
        if (!bm_best(&bq, 0, N, &best, &chosen))
            return 2; /* not reached: nfeasible > 0 */
    } else {
        /* the ties are counted in the blocks at the best value: every
         * block's maximum exact first */
        for (uint32_t k = 0; k < nb; k++) {
            bm_clean(part, N, c->bm, k);
            best = c->bm[k] > best ? c->bm[k] : best;
        }
        uint32_t nties = 0;
        for (uint32_t k = 0; k < nb; k++)
            if (c->bm[k] == best)
                for (uint32_t i = k * FAST_BLOCK; i < N && i < (k + 1) * FAST_BLOCK; i++)
                    nties += part[i] == best;
        uint64_t want = nties > 1 ? berth_rng_below(rng, nties) : 0;
        for (uint32_t k = 0; k < nb; k++) {
            if (c->bm[k] != best)
                continue;
            for (uint32_t i = k * FAST_BLOCK; i < N && i < (k + 1) * FAST_BLOCK; i++)
                if (part[i] == best && want-- == 0) {
                    chosen = i;
                    k = nb;
                    break;
                }
        }
    }
    out->node = chosen;
    out->nfeasible = c->nfeasible;
    out->total = best + c->constant;
    return 1;
}
