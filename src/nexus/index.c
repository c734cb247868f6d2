/* nexus/index.c - the nexus placement index and incremental counters.
 *
 * Per (rack, SKU) it counts machines that fit the SKU (and those that also
 * host an extra-large VM); per SKU an 8-ary min tree over racks (a node's
 * eight children are one cache line) of the packed rack key (context-pool
 * VMs, no-XL-host flag, utilisation ppm, rack index), UINT64_MAX where
 * nothing fits. The leaves are not stored: a leaf is the rack's SKU-free
 * key (one array shared by every SKU) ORed with its fit class for the SKU
 * (a byte), so a rack's change is one key write, not one per SKU. The tree
 * of the SKU being placed (hot) follows every change at once; the others
 * catch up from a shared change log when next read. narrow() takes the
 * rack named in the root's key, and runs branch and bound over the tree
 * only to evaluate racks that already hold VMs of the context cluster
 * exactly (their machine-spread term can be > 0); it hands the pipeline
 * the one machine the full scan would pick there: inside a rack every
 * machine shares the rack terms, so the pick is the lowest fitting machine
 * with the fewest context-cluster VMs, then packing extra-large; per-SKU
 * fit bit columns and the context-cluster bit column find it in a few
 * words (a rack of 100 machines is 2-3 words). Cost per placement:
 * O(active SKUs) fit flags, O(log8 racks) for the hot tree's path (it stops
 * where the minimum holds), O(1) to log, O(machines per rack / 64) to
 * pick; a SKU's catch-up is at most one level-1 recomputation per group
 * changed since its last read. Hot state is packed so that a placement
 * touches few cache lines: one record per machine, one per rack, the
 * rack's counters of every SKU side by side, a machine's two fit bits of a
 * SKU in one line, one line per tree level. */
#include "nexus/state.h"
#include "core/invariant.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_RACK_BITS 24
#define KEY_UTIL_BITS 20
#define KEY_PC_SHIFT (KEY_RACK_BITS + KEY_UTIL_BITS + 1)

static uint64_t pack_key(uint32_t pc, uint32_t noxl, uint32_t util, uint32_t r)
{
    if (pc > 0xFFFF)
        pc = 0xFFFF;
    return ((uint64_t)pc << KEY_PC_SHIFT) | ((uint64_t)noxl << (KEY_RACK_BITS + KEY_UTIL_BITS)) |
           ((uint64_t)util << KEY_RACK_BITS) | r;
}

void nexus_state_free(berth_nexus *nx)
{
    berth_nexus_state *s = nx->state;
    if (!s)
        return;
    berth_cycle_free(&s->cycle);
    free(s->mach);
    free(s->rack);
    free(s->fitcnt);
    free(s->bits);
    free(s->cls);
    free(s->ctxbits);
    free(s->rkey);
    free(s->need_cpu);
    free(s->need_mem);
    free(s->need_cells);
    if (s->tree)
        for (uint32_t i = 0; i < s->nskus; i++)
            free(s->tree[i]);
    free(s->tree);
    free(s->clog);
    free(s->glast);
    free(s->cursor);
    free(s->gseen);
    free(s->gscratch);
    free(s->slot);
    free(s->active);
    free(s->touched_racks);
    free(s->touched_machines);
    free(s->allowed);
    free(s->placed);
    free(s);
    nx->state = NULL;
}

int nexus_machine_fits(const berth_nexus *nx, uint32_t m, const nexus_req *rq)
{
    const berth_machine *mm = &nx->machines[m];
    const berth_cell *c = &nx->cells[mm->first_cell];
    uint32_t got = 0;
    for (uint32_t i = 0; i < mm->ncells; i++)
        got += (c[i].cpu - c[i].used_cpu >= rq->cell_cpu) &
               (c[i].memory - c[i].used_memory >= rq->cell_mem);
    return got >= rq->ncells;
}

void nexus_req_for_pool(const berth_nexus *nx, uint32_t pool, nexus_req *rq)
{
    const berth_pool *p = &nx->pools[pool];
    const berth_sku *k = &nx->skus[p->sku];
    memset(rq, 0, sizeof *rq);
    rq->sku = p->sku;
    rq->pool = pool;
    rq->cluster = p->cluster;
    rq->ncells = k->numa_cells > 1 ? (uint32_t)k->numa_cells : 1;
    rq->cell_cpu = (int32_t)((k->host_vcpu + (int32_t)rq->ncells - 1) / (int32_t)rq->ncells);
    rq->cell_mem = (k->memory + (int64_t)rq->ncells - 1) / (int64_t)rq->ncells;
    rq->xl = k->extra_large;
    rq->chosen_cell = BERTH_NEXUS_NONE;
    berth_nexus_state *st = nx->state;
    if (p->nzones && st) {
        memset(st->allowed, 0, nx->nracks);
        for (uint32_t i = 0; i < p->nzones; i++)
            st->allowed[p->zones[i]] = 1;
        rq->allowed = st->allowed;
    }
}

static void sku_req(const berth_nexus *nx, uint32_t sku, nexus_req *rq)
{
    const berth_sku *k = &nx->skus[sku];
    memset(rq, 0, sizeof *rq);
    rq->sku = sku;
    rq->ncells = k->numa_cells > 1 ? (uint32_t)k->numa_cells : 1;
    rq->cell_cpu = (int32_t)((k->host_vcpu + (int32_t)rq->ncells - 1) / (int32_t)rq->ncells);
    rq->cell_mem = (k->memory + (int64_t)rq->ncells - 1) / (int64_t)rq->ncells;
    rq->xl = k->extra_large;
}

/* Zeroed memory on a cache-line boundary (rows of 64 bytes stay one line). */
static void *zalloc64(size_t n, size_t size)
{
    size_t bytes = (n * size + 63) & ~(size_t)63;
    void *p = aligned_alloc(64, bytes ? bytes : 64);
    if (p)
        memset(p, 0, bytes ? bytes : 64);
    return p;
}

#define KEY_NOXL (1ull << (KEY_RACK_BITS + KEY_UTIL_BITS))

/* The fit class of a rack from its two counters of a SKU. */
static inline uint8_t cls_of(const uint32_t *cnt)
{
    return (uint8_t)((cnt[0] == 0 ? NEXUS_CLS_NOFIT : 0) | (cnt[1] == 0 ? NEXUS_CLS_NOXL : 0));
}

/* What a rack's class ORs into its shared key to make sku's leaf, per
 * class: all ones when nothing fits, the no-XL-host bit for an extra-large
 * SKU when no fitting machine hosts an extra-large VM. */
typedef struct cls_tab {
    uint64_t or[4];
} cls_tab;

static inline cls_tab cls_tab_of(const berth_nexus *nx, uint32_t s)
{
    cls_tab t = {{0, nx->skus[s].extra_large ? KEY_NOXL : 0, UINT64_MAX, UINT64_MAX}};
    return t;
}

/* The slot's class row (cls of rack 0). */
static inline const uint8_t *cls_row(const berth_nexus_state *st, uint32_t a)
{
    return st->cls + (size_t)a * 8 * st->ngroups;
}

/* Level-1 node g: the minimum of its eight leaves (rk = rkey + 8g, cl =
 * the slot's class row + 8g). */
static inline uint64_t group_min(const uint64_t *rk, const uint8_t *cl, const uint64_t *or4)
{
#define LEAF(i) (rk[i] | or4[cl[i] & 3])
    uint64_t v0 = LEAF(0), v1 = LEAF(1), v2 = LEAF(2), v3 = LEAF(3);
    uint64_t v4 = LEAF(4), v5 = LEAF(5), v6 = LEAF(6), v7 = LEAF(7);
#undef LEAF
    uint64_t a = v0 < v1 ? v0 : v1, b = v2 < v3 ? v2 : v3;
    uint64_t d = v4 < v5 ? v4 : v5, e = v6 < v7 ? v6 : v7;
    a = a < b ? a : b;
    d = d < e ? d : e;
    return a < d ? a : d;
}

static inline void bit_put(uint64_t *w, uint32_t m, int on)
{
    uint64_t b = 1ull << (m & 63);
    if (on)
        w[m >> 6] |= b;
    else
        w[m >> 6] &= ~b;
}

/* The lowest machine in [lo, hi) whose bit is set in a and clear in not
 * (NULL: no exclusion), or BERTH_NEXUS_NONE. Word w of a is a[w * stride]. */
static uint32_t first_in(const uint64_t *a, size_t stride, const uint64_t *not, uint32_t lo,
                         uint32_t hi)
{
    if (lo >= hi)
        return BERTH_NEXUS_NONE;
    uint32_t w = lo >> 6, last = (hi - 1) >> 6;
    uint64_t x = (a[w * stride] & ~(not ? not[w] : 0)) & (~0ull << (lo & 63));
    for (;;) {
        if (w == last) {
            if (hi & 63)
                x &= (1ull << (hi & 63)) - 1;
            return x ? (w << 6) + (uint32_t)__builtin_ctzll(x) : BERTH_NEXUS_NONE;
        }
        if (x)
            return (w << 6) + (uint32_t)__builtin_ctzll(x);
        w++;
        x = a[w * stride] & ~(not ? not[w] : 0);
    }
}

static uint32_t rack_util_of(const nexus_rstate *rs)
{
    uint64_t u = rs->cap_cpu > 0 ? (uint64_t)rs->used_cpu * 1000000u / (uint64_t)rs->cap_cpu : 0;
    return (uint32_t)(u > 1000000u ? 1000000u : u);
}

static void hot_update(berth_nexus_state *st, uint32_t r);

void nexus_rack_rekey(berth_nexus *nx, uint32_t r)
{
    berth_nexus_state *st = nx->state;
    nexus_rstate *rs = &st->rack[r];
    rs->util = rack_util_of(rs);
    st->rkey[r] = pack_key(rs->ctx_pool, 0, rs->util, r);
    uint32_t g = r >> 3;
    if (st->hot != BERTH_NEXUS_NONE)
        hot_update(st, r);
    /* log the group for the other trees unless it is logged after the
     * latest flush: then its entry lies ahead of every cursor */
    if (st->glast[g] <= st->lastflush) {
        st->clog[st->clog_end & st->clog_mask] = g;
        st->glast[g] = ++st->clog_end;
    }
}

static inline uint64_t min8(const uint64_t *c)
{
    uint64_t a = c[0] < c[1] ? c[0] : c[1], b = c[2] < c[3] ? c[2] : c[3];
    uint64_t d = c[4] < c[5] ? c[4] : c[5], e = c[6] < c[7] ? c[6] : c[7];
    a = a < b ? a : b;
    d = d < e ? d : e;
    return a < d ? a : d;
}

/* Recomputes every node of sku's tree (activation, or a SKU whose cursor
 * fell out of the log). Padding nodes stay UINT64_MAX. */
static void tree_build(berth_nexus *nx, uint32_t s)
{
    berth_nexus_state *st = nx->state;
    uint64_t *t = st->tree[s];
    const uint8_t *cl = cls_row(st, st->slot[s]);
    cls_tab tab = cls_tab_of(nx, s);
    uint64_t *l1 = t + st->toff[1];
    uint32_t n = st->ngroups;
    for (uint32_t g = 0; g < n; g++)
        l1[g] = group_min(st->rkey + 8 * (size_t)g, cl + 8 * (size_t)g, tab.or);
    for (uint32_t k = 2; k <= st->tlevels; k++) {
        n = (n + 7) / 8; /* real nodes of level k */
        for (uint32_t j = 0; j < n; j++)
            t[st->toff[k] + j] = min8(t + st->toff[k - 1] + 8 * (size_t)j);
    }
}

/* Level-1 node g of tree t changed: re-minimise its path, stopping at the
 * first node whose minimum stays the same. */
static inline void path_up(const berth_nexus_state *st, uint64_t *t, uint32_t g)
{
    for (uint32_t k = 2; k <= st->tlevels; k++) {
        uint64_t mn = min8(t + st->toff[k - 1] + (g & ~7u));
        g >>= 3;
        uint64_t *p = t + st->toff[k] + g;
        if (*p == mn)
            break;
        *p = mn;
    }
}

/* Rack r changed (its key or class): bring the hot SKU's tree up to date
 * at once. The tree was up to date but for r, and a key holds its rack's
 * index, so the level-1 node's minimum names its rack: a leaf that drops
 * below it (a context pool's count reset) replaces it up the path as far as
 * it is smaller; only a rise of the node's own minimum (the rack just
 * placed on) recomputes the node from its eight leaves. */
static void hot_update(berth_nexus_state *st, uint32_t r)
{
    uint64_t *t = st->hot_tree; /* level 1 is at offset 0 */
    uint32_t g = r >> 3;
    uint64_t leaf = st->rkey[r] | st->hot_tab[st->hot_cls[r] & 3], cur = t[g];
    if (cur != UINT64_MAX && (uint32_t)(cur & ((1u << KEY_RACK_BITS) - 1)) == r) {
        if (leaf == cur)
            return;
        if (leaf > cur) {
            t[g] = group_min(st->rkey + 8 * (size_t)g, st->hot_cls + 8 * (size_t)g,
                             st->hot_tab);
            path_up(st, t, g);
            return;
        }
    } else if (leaf >= cur) {
        return;
    }
    /* a smaller minimum: it replaces each node on the path it is below */
    t[g] = leaf;
    for (uint32_t k = 2; k <= st->tlevels; k++) {
        g >>= 3;
        uint64_t *p = t + st->toff[k] + g;
        if (*p <= leaf)
            break;
        *p = leaf;
    }
}

/* Makes s (an active SKU or BERTH_NEXUS_NONE) the hot SKU: the one whose
 * tree every change updates at once (the SKU being placed: its tree is
 * read after every change). The previous hot SKU is up to date, so its
 * cursor moves to the end of the log. */
static void set_hot(berth_nexus *nx, uint32_t s)
{
    berth_nexus_state *st = nx->state;
    if (st->hot == s)
        return;
    if (st->hot != BERTH_NEXUS_NONE)
        st->cursor[st->hot] = st->lastflush = st->clog_end;
    st->hot = BERTH_NEXUS_NONE;
    if (s != BERTH_NEXUS_NONE) {
        nexus_index_flush(nx, s);
        st->hot_tree = st->tree[s];
        st->hot_cls = cls_row(st, st->slot[s]);
        cls_tab tab = cls_tab_of(nx, s);
        memcpy(st->hot_tab, tab.or, sizeof st->hot_tab);
    }
    st->hot = s;
}

void nexus_index_flush(berth_nexus *nx, uint32_t s)
{
    berth_nexus_state *st = nx->state;
    uint64_t from = st->cursor[s], end = st->clog_end;
    if (from == end || s == st->hot)
        return;
    st->cursor[s] = st->lastflush = end;
    if (end - from > (uint64_t)st->clog_mask + 1) {
        tree_build(nx, s); /* entries overwritten: rebuild */
        return;
    }
    uint64_t *t = st->tree[s];
    uint32_t *ls = st->gscratch, n = 0;
    /* each logged group once */
    for (uint64_t p = from; p < end; p++) {
        uint32_t g = st->clog[p & st->clog_mask];
        uint64_t bit = 1ull << (g & 63);
        if (st->gseen[g >> 6] & bit)
            continue;
        st->gseen[g >> 6] |= bit;
        ls[n++] = g;
    }
    for (uint32_t d = 0; d < n; d++)
        st->gseen[ls[d] >> 6] = 0;
    /* level 1 from the leaves; the list keeps the nodes that changed */
    const uint8_t *cl = cls_row(st, st->slot[s]);
    cls_tab tab = cls_tab_of(nx, s);
    uint64_t *l1 = t + st->toff[1];
    uint32_t cnt = 0;
    for (uint32_t d = 0; d < n; d++) {
        uint32_t g = ls[d];
        uint64_t mn = group_min(st->rkey + 8 * (size_t)g, cl + 8 * (size_t)g, tab.or);
        if (l1[g] != mn) {
            l1[g] = mn;
            ls[cnt++] = g;
        }
    }
    if (cnt == 1) {
        path_up(st, t, ls[0]);
        return;
    }
    /* several: level by level, a node shared by several paths is
     * recomputed once (a second visit finds its minimum already right) and
     * a node whose minimum stays the same ends its paths */
    for (uint32_t k = 2; k <= st->tlevels && cnt; k++) {
        const uint64_t *c = t + st->toff[k - 1];
        uint64_t *p = t + st->toff[k];
        uint32_t out = 0;
        for (uint32_t d = 0; d < cnt; d++) {
            uint32_t j = ls[d] >> 3;
            uint64_t mn = min8(c + 8 * (size_t)j);
            if (p[j] == mn)
                continue;
            p[j] = mn;
            ls[out++] = j;
        }
        cnt = out;
    }
}

/* Does machine m fit one VM of active SKU s (schedulable not checked)? */
static inline int fits_sku(const berth_nexus *nx, const berth_nexus_state *st, uint32_t m,
                           uint32_t s)
{
    const berth_machine *mm = &nx->machines[m];
    const berth_cell *c = &nx->cells[mm->first_cell];
    int32_t cpu = st->need_cpu[s];
    int64_t mem = st->need_mem[s];
    uint32_t got = 0;
    for (uint32_t i = 0; i < mm->ncells; i++)
        got += (c[i].cpu - c[i].used_cpu >= cpu) & (c[i].memory - c[i].used_memory >= mem);
    return got >= st->need_cells[s];
}

/* Sets machine m's fit flags for the SKU of slot a to nf: counters, class
 * and bit columns. bitrow: the slot row of m's word (bits + 2 * (m / 64) *
 * sstride), cntrow: the slot row of m's rack r (fitcnt + 2 * r * sstride),
 * cls0: the class of rack r in slot 0 (cls + r; slot a's is 8 * ngroups * a
 * further). */
static inline void set_fit(uint64_t *bitrow, uint32_t *cntrow, uint8_t *cls0, size_t clstride,
                           uint32_t m, uint32_t a, uint32_t nf)
{
    uint64_t *w = bitrow + 2 * a;
    uint32_t sh = m & 63;
    uint32_t of = (uint32_t)((w[0] >> sh) & 1) | (uint32_t)((w[1] >> sh) & 1) << 1;
    if (nf == of)
        return;
    uint32_t *cnt = cntrow + 2 * a;
    cnt[0] += (nf & 1u) - (of & 1u);
    cnt[1] += (nf >> 1) - (of >> 1);
    cls0[a * clstride] = cls_of(cnt);
    w[0] ^= (uint64_t)((nf ^ of) & 1u) << sh;
    w[1] ^= (uint64_t)((nf ^ of) >> 1) << sh;
}

/* Recomputes fit flags of machine m for every SKU; adjusts rack counters. */
static void machine_refit(berth_nexus *nx, uint32_t m)
{
    berth_nexus_state *st = nx->state;
    uint32_t r = nx->machines[m].rack;
    const nexus_mstate *ms = &st->mach[m];
    uint32_t hosts = ms->xl_cnt > 0 ? NEXUS_XLFIT : 0;
    int sched = ms->sched != 0;
    uint64_t *bitrow = st->bits + 2 * (size_t)(m >> 6) * st->sstride;
    uint32_t *cntrow = st->fitcnt + 2 * (size_t)r * st->sstride;
    uint8_t *cls0 = st->cls + r;
    size_t clstride = 8 * (size_t)st->ngroups;
    for (uint32_t a = 0; a < st->nactive; a++) {
        uint32_t s = st->active[a];
        uint32_t nf = 0;
        if (sched && fits_sku(nx, st, m, s))
            nf = NEXUS_FIT | hosts;
        set_fit(bitrow, cntrow, cls0, clstride, m, a, nf);
    }
}

void nexus_machine_changed(berth_nexus *nx, uint32_t m)
{
    machine_refit(nx, m);
    nexus_rack_rekey(nx, nx->machines[m].rack);
}

int nexus_index_init(berth_nexus *nx)
{
    berth_nexus_state *st = nx->state;
    uint32_t R = nx->nracks, M = nx->nmachines, S = nx->nskus;
    st->nskus = S;
    st->nracks = R;
    /* tree levels: level 0 (not stored) holds R leaves, each level above
     * one node per 8 of the level below, up to a single root at level 1 or
     * above; every stored level padded to 8 */
    st->ngroups = R ? (R + 7) / 8 : 1;
    uint32_t c = st->ngroups, off = 0, k = 1;
    st->toff[0] = 0;
    for (;;) {
        st->toff[k] = off;
        off += (c + 7) & ~7u;
        if (c == 1 || k == NEXUS_TREE_MAXLEVELS)
            break;
        c = (c + 7) / 8;
        k++;
    }
    st->tlevels = k;
    st->tsize = off;
    size_t G8 = 8 * (size_t)st->ngroups;
    /* the log: a power of two, at least 8 entries per group (a SKU that
     * falls further behind is rebuilt: one recomputation per 8 changes) */
    uint32_t cap = 16;
    while (cap < G8 && cap < (1u << 30))
        cap *= 2;
    st->clog_mask = cap - 1;
    st->mach = zalloc64(M ? M : 1, sizeof *st->mach);
    st->rack = zalloc64(R ? R : 1, sizeof *st->rack);
    st->sstride = 8;
    st->words = (M + 63) / 64;
    st->fitcnt = zalloc64((size_t)R * st->sstride * 2 + 1, sizeof *st->fitcnt);
    st->bits = zalloc64((size_t)st->words * st->sstride * 2 + 1, sizeof *st->bits);
    st->slot = malloc((S + 1) * sizeof *st->slot);
    st->ctxbits = calloc((size_t)st->words + 1, sizeof *st->ctxbits);
    st->cls = malloc(G8 * st->sstride);
    st->rkey = zalloc64(G8, sizeof *st->rkey);
    st->clog = malloc((size_t)cap * sizeof *st->clog);
    st->glast = calloc(st->ngroups, sizeof *st->glast);
    st->cursor = calloc(S + 1, sizeof *st->cursor);
    st->gseen = calloc((st->ngroups + 63) / 64, sizeof *st->gseen);
    st->gscratch = malloc(st->ngroups * sizeof *st->gscratch);
    st->need_cpu = calloc(S + 1, sizeof *st->need_cpu);
    st->need_mem = calloc(S + 1, sizeof *st->need_mem);
    st->need_cells = calloc(S + 1, sizeof *st->need_cells);
    st->tree = calloc(S + 1, sizeof *st->tree);
    st->active = calloc(S + 1, sizeof *st->active);
    st->allowed = calloc(R ? R : 1, 1);
    if (!st->mach || !st->rack || !st->fitcnt || !st->tree || !st->active || !st->allowed ||
        !st->bits || !st->ctxbits || !st->need_cpu || !st->need_mem || !st->need_cells ||
        !st->slot || !st->cls || !st->rkey || !st->clog || !st->glast || !st->cursor ||
        !st->gseen || !st->gscratch)
        return BERTH_ENOMEM;
    memset(st->cls, NEXUS_CLS_NOFIT | NEXUS_CLS_NOXL, G8 * st->sstride);
    for (uint32_t s = 0; s < S; s++)
        st->slot[s] = BERTH_NEXUS_NONE;
    st->ctx_cluster = st->ctx_pool = BERTH_NEXUS_NONE;
    st->hot = BERTH_NEXUS_NONE;
    for (uint32_t m = 0; m < M; m++) {
        const berth_machine *mm = &nx->machines[m];
        st->mach[m].sched = !mm->cordoned && !mm->down;
        for (uint32_t i = 0; i < mm->ncells; i++) {
            st->rack[mm->rack].cap_cpu += nx->cells[mm->first_cell + i].cpu;
            st->rack[mm->rack].used_cpu += nx->cells[mm->first_cell + i].used_cpu;
        }
    }
    for (size_t r = 0; r < G8; r++)
        st->rkey[r] = UINT64_MAX;
    for (uint32_t r = 0; r < R; r++) {
        st->rack[r].util = rack_util_of(&st->rack[r]);
        st->rkey[r] = pack_key(0, 0, st->rack[r].util, r);
    }
    return 0;
}

/* Doubles sstride (a SKU beyond the current row width becomes active):
 * re-lays the slot-indexed columns out; every active slot keeps its place
 * in the row. Rare: at most log2(SKUs) times in a state's life. */
static int grow_slots(berth_nexus_state *st, uint32_t R)
{
    size_t old = st->sstride, nw = 2 * old;
    uint32_t *fc = zalloc64((size_t)R * nw * 2 + 1, sizeof *fc);
    uint64_t *bits = zalloc64((size_t)st->words * nw * 2 + 1, sizeof *bits);
    size_t G8 = 8 * (size_t)st->ngroups;
    uint8_t *cls = malloc(G8 * nw);
    if (!fc || !bits || !cls) {
        free(fc);
        free(bits);
        free(cls);
        return BERTH_ENOMEM;
    }
    for (size_t r = 0; r < R; r++)
        memcpy(fc + 2 * r * nw, st->fitcnt + 2 * r * old, 2 * old * sizeof *fc);
    /* class rows are slot-major: the old rows stay, the new ones start empty */
    memcpy(cls, st->cls, G8 * old);
    memset(cls + G8 * old, NEXUS_CLS_NOFIT | NEXUS_CLS_NOXL, G8 * (nw - old));
    for (size_t w = 0; w < st->words; w++)
        memcpy(bits + 2 * w * nw, st->bits + 2 * w * old, 2 * old * sizeof *bits);
    free(st->fitcnt);
    free(st->bits);
    free(st->cls);
    st->fitcnt = fc;
    st->bits = bits;
    st->cls = cls;
    if (st->hot != BERTH_NEXUS_NONE)
        st->hot_cls = cls_row(st, st->slot[st->hot]);
    st->sstride = (uint32_t)nw;
    return 0;
}

int nexus_sku_activate(berth_nexus *nx, uint32_t s)
{
    berth_nexus_state *st = nx->state;
    if (st->tree[s])
        return 0;
    size_t bytes = ((size_t)st->tsize * sizeof(uint64_t) + 63) & ~(size_t)63;
    uint64_t *t = aligned_alloc(64, bytes);
    if (!t)
        return BERTH_ENOMEM;
    if (st->nactive == st->sstride && grow_slots(st, nx->nracks)) {
        free(t);
        return BERTH_ENOMEM;
    }
    uint32_t a = st->nactive;
    nexus_req rq;
    sku_req(nx, s, &rq);
    st->need_cpu[s] = rq.cell_cpu;
    st->need_mem[s] = rq.cell_mem;
    st->need_cells[s] = (uint8_t)rq.ncells;
    for (uint32_t m = 0; m < nx->nmachines; m++) {
        uint32_t f = 0;
        if (st->mach[m].sched && fits_sku(nx, st, m, s))
            f = NEXUS_FIT | (st->mach[m].xl_cnt > 0 ? NEXUS_XLFIT : 0);
        uint32_t r = nx->machines[m].rack;
        set_fit(st->bits + 2 * (size_t)(m >> 6) * st->sstride,
                st->fitcnt + 2 * (size_t)r * st->sstride, st->cls + r, 8 * (size_t)st->ngroups,
                m, a, f);
    }
    st->slot[s] = a;
    for (uint32_t i = 0; i < st->tsize; i++)
        t[i] = UINT64_MAX;
    st->tree[s] = t;
    tree_build(nx, s);
    /* up to date now: the log so far is behind it (and, as for a flush,
     * behind the next change's append rule) */
    st->cursor[s] = st->lastflush = st->clog_end;
    st->active[st->nactive++] = s;
    return 0;
}

static int touch(uint32_t **arr, uint32_t *n, uint32_t *cap, uint32_t v)
{
    if (*n >= *cap && nexus_grow((void **)arr, cap, *n + 1, sizeof **arr))
        return BERTH_ENOMEM;
    (*arr)[(*n)++] = v;
    return 0;
}

/* Context counters: ctx_* are kept for the cluster and pool being placed;
 * touched lists let clearing cost what setting cost. */
void nexus_ctx_clear(berth_nexus *nx)
{
    berth_nexus_state *st = nx->state;
    if (st->touched_lost) {
        /* a touched list missed an entry (out of memory): clear them all, so
         * that no stale count steers a later placement (found by `make
         * torture`: a different answer, exit 0) */
        st->touched_lost = 0;
        st->ntouched_machines = st->ntouched_racks = 0;
        for (uint32_t m = 0; m < nx->nmachines; m++) {
            st->mach[m].ctx_cnt = 0;
            st->mach[m].ctx_xl = 0;
        }
        for (uint32_t w = 0; w < st->words; w++)
            st->ctxbits[w] = 0;
        for (uint32_t r = 0; r < nx->nracks; r++) {
            int rekey = st->rack[r].ctx_pool != 0;
            st->rack[r].ctx_pool = 0;
            st->rack[r].ctx_cluster = 0;
            if (rekey)
                nexus_rack_rekey(nx, r);
        }
    }
    for (uint32_t i = 0; i < st->ntouched_machines; i++) {
        uint32_t m = st->touched_machines[i];
        st->mach[m].ctx_cnt = 0;
        st->mach[m].ctx_xl = 0;
        bit_put(st->ctxbits, m, 0);
    }
    for (uint32_t i = 0; i < st->ntouched_racks; i++) {
        nexus_rstate *rs = &st->rack[st->touched_racks[i]];
        int rekey = rs->ctx_pool != 0;
        rs->ctx_pool = 0;
        rs->ctx_cluster = 0;
        if (rekey)
            nexus_rack_rekey(nx, st->touched_racks[i]);
    }
    st->ntouched_machines = st->ntouched_racks = 0;
    st->ctx_cluster = st->ctx_pool = BERTH_NEXUS_NONE;
}

/* Counts VM v into the context counters (+1) or out (-1). */
void nexus_ctx_count(berth_nexus *nx, uint32_t vm, int delta, int rekey)
{
    berth_nexus_state *st = nx->state;
    const berth_vm *v = &nx->vms[vm];
    const berth_pool *p = &nx->pools[v->pool];
    if (p->cluster != st->ctx_cluster || v->machine == BERTH_NEXUS_NONE)
        return;
    uint32_t m = v->machine, r = nx->machines[m].rack;
    nexus_mstate *ms = &st->mach[m];
    nexus_rstate *rs = &st->rack[r];
    if (delta > 0) {
        if (ms->ctx_cnt == 0 && ms->ctx_xl == 0 &&
            touch(&st->touched_machines, &st->ntouched_machines, &st->captouched_machines, m))
            st->touched_lost = 1;
        if (rs->ctx_cluster == 0 && rs->ctx_pool == 0 &&
            touch(&st->touched_racks, &st->ntouched_racks, &st->captouched_racks, r))
            st->touched_lost = 1;
    }
    ms->ctx_cnt += (uint32_t)delta;
    bit_put(st->ctxbits, m, ms->ctx_cnt != 0);
    rs->ctx_cluster += (uint32_t)delta;
    if (nx->skus[p->sku].extra_large)
        ms->ctx_xl += (uint32_t)delta;
    if (v->pool == st->ctx_pool) {
        rs->ctx_pool += (uint32_t)delta;
        if (rekey)
            nexus_rack_rekey(nx, r);
    }
}

void nexus_ctx_set(berth_nexus *nx, uint32_t cluster, uint32_t pool)
{
    berth_nexus_state *st = nx->state;
    if (cluster == st->ctx_cluster && cluster != BERTH_NEXUS_NONE) {
        /* the next pool of the same cluster: the cluster counters stay, only
         * the pool's rack counters change (its racks are already touched,
         * as they hold VMs of the cluster) */
        if (pool == st->ctx_pool)
            return;
        if (st->touched_lost) {
            /* a rack may be missing from the touched list (out of memory):
             * every rack's pool counter goes, or the previous pool's count
             * would steer this pool's spread (found by `make torture`:
             * seed-scenarios.yaml N = 100, other placements, exit 0) */
            for (uint32_t r = 0; r < nx->nracks; r++)
                if (st->rack[r].ctx_pool) {
                    st->rack[r].ctx_pool = 0;
                    nexus_rack_rekey(nx, r);
                }
        }
        for (uint32_t i = 0; i < st->ntouched_racks; i++) {
            uint32_t r = st->touched_racks[i];
            if (st->rack[r].ctx_pool) {
                st->rack[r].ctx_pool = 0;
                nexus_rack_rekey(nx, r);
            }
        }
        st->ctx_pool = pool;
        const berth_pool *p = &nx->pools[pool];
        for (uint32_t j = 0; j < p->nvms; j++) {
            const berth_vm *v = &nx->vms[p->vms[j]];
            if (v->machine == BERTH_NEXUS_NONE)
                continue;
            uint32_t r = nx->machines[v->machine].rack;
            st->rack[r].ctx_pool++;
            nexus_rack_rekey(nx, r);
        }
        return;
    }
    nexus_ctx_clear(nx);
    st->ctx_cluster = cluster;
    st->ctx_pool = pool;
    const berth_cluster *c = &nx->clusters[cluster];
    for (uint32_t i = 0; i < c->npools; i++) {
        const berth_pool *p = &nx->pools[c->pools[i]];
        for (uint32_t j = 0; j < p->nvms; j++)
            nexus_ctx_count(nx, p->vms[j], +1, 1);
    }
}

/* ---- narrow: branch and bound over the SKU's rack tree ---- */

typedef unsigned __int128 u128;

static u128 exact_of(uint64_t key, uint32_t k2)
{
    uint64_t pc = key >> KEY_PC_SHIFT;
    uint64_t lo = key & ((1ull << KEY_PC_SHIFT) - 1);
    return ((u128)pc << 96) | ((u128)k2 << 64) | lo;
}

/* Exact rack key for a rack holding VMs of the context cluster, and in
 * *best_m the machine the full scan would pick in that rack: the fewest VMs
 * of the context cluster, then (extra-large SKU) one hosting another
 * cluster's extra-large VM, then the lowest index. A fitting machine
 * without context-cluster VMs has 0 of them and packs exactly when it hosts
 * any extra-large VM (NEXUS_XLFIT); only when every fitting machine of the
 * rack hosts the context cluster are their counters compared one by one. */
static u128 rack_exact(const berth_nexus *nx, uint32_t r, const nexus_req *rq, uint64_t bound,
                       uint32_t *best_m)
{
    const berth_nexus_state *st = nx->state;
    const berth_rack *rk = &nx->racks[r];
    uint32_t lo = rk->first_machine, hi = lo + rk->nmachines;
    const uint64_t *fit = st->bits + 2 * (size_t)st->slot[rq->sku];
    const uint64_t *xlfit = fit + 1;
    size_t stride = 2 * (size_t)st->sstride;
    uint32_t best_k2 = UINT32_MAX, best_noxl = 1, bm = BERTH_NEXUS_NONE;
    uint32_t m = BERTH_NEXUS_NONE;
    if (rq->xl)
        m = first_in(xlfit, stride, st->ctxbits, lo, hi);
    if (m != BERTH_NEXUS_NONE) {
        best_k2 = 0;
        best_noxl = 0;
        bm = m;
    } else if ((m = first_in(fit, stride, st->ctxbits, lo, hi)) != BERTH_NEXUS_NONE) {
        best_k2 = 0;
        best_noxl = rq->xl ? 1 : 0;
        bm = m;
    } else {
        for (m = first_in(fit, stride, NULL, lo, hi); m != BERTH_NEXUS_NONE;
             m = first_in(fit, stride, NULL, m + 1, hi)) {
            const nexus_mstate *ms = &st->mach[m];
            uint32_t k2 = ms->ctx_cnt;
            uint32_t noxl = rq->xl ? !(ms->xl_cnt > ms->ctx_xl) : 0;
            if (k2 < best_k2 || (k2 == best_k2 && noxl < best_noxl)) {
                best_k2 = k2;
                best_noxl = noxl;
                bm = m;
            }
        }
    }
    *best_m = bm;
    if (best_k2 == UINT32_MAX)
        return ~(u128)0;
    uint64_t key = pack_key((uint32_t)(bound >> KEY_PC_SHIFT), best_noxl, st->rack[r].util, r);
    return exact_of(key, best_k2);
}

int nexus_narrow(void *state, const void *req, uint32_t *cand, uint32_t cap)
{
    berth_nexus *nx = state;
    const nexus_req *rq = req;
    berth_nexus_state *st = nx->state;
    /* the descent resolves ties to the lowest rack and machine: other
     * tie-breaks take the full scan (the reference) */
    if (!st->use_index || st->tiebreak != BERTH_TIE_FIRST)
        return -1;
    const uint64_t *t = st->tree[rq->sku];
    if (!t || cap == 0)
        return -1;
    set_hot(nx, rq->sku);
    uint32_t top = st->tlevels;
    if (t[st->toff[top]] == UINT64_MAX)
        return 0;
    u128 best = ~(u128)0;
    uint32_t best_rack = BERTH_NEXUS_NONE, best_m = BERTH_NEXUS_NONE;
    uint64_t best_leaf = UINT64_MAX;
    /* first the minimum's rack (a key ends in its rack's index): when its
     * exact key adds nothing (no context-cluster VMs to spread from: the
     * common case) no other rack can beat it, so the bound below prunes at
     * the root */
    uint64_t root = t[st->toff[top]];
    const uint8_t *cl = cls_row(st, st->slot[rq->sku]);
    cls_tab tab = cls_tab_of(nx, rq->sku);
    uint32_t j = (uint32_t)(root & ((1u << KEY_RACK_BITS) - 1));
    if (NEVER(j >= st->nracks || (st->rkey[j] | tab.or[cl[j] & 3]) != root))
        return -1;
    if (!rq->allowed || rq->allowed[j]) {
        uint32_t m = BERTH_NEXUS_NONE;
        best = st->rack[j].ctx_cluster ? rack_exact(nx, j, rq, root, &m) : exact_of(root, 0);
        if (best != ~(u128)0) {
            best_rack = j;
            best_m = m;
            best_leaf = root;
        }
    }
    /* branch and bound: (level, node) pairs, children pushed only while
     * they can still beat the best; at most 8 per level on the stack */
    uint32_t stack[8 * (NEXUS_TREE_MAXLEVELS + 1) + 1];
    int sp = 0;
    stack[sp++] = top << 27;
    while (sp) {
        uint32_t e = stack[--sp], k = e >> 27, n = e & ((1u << 27) - 1);
        uint64_t key = t[st->toff[k] + n];
        if (key == UINT64_MAX || exact_of(key, 0) >= best)
            continue;
        if (k == 1) {
            /* the leaves, lowest rack first */
            for (uint32_t r = 8 * n; r < 8 * n + 8; r++) {
                uint64_t leaf = st->rkey[r] | tab.or[cl[r] & 3];
                uint32_t m = BERTH_NEXUS_NONE;
                if (leaf == UINT64_MAX || exact_of(leaf, 0) >= best ||
                    (rq->allowed && !rq->allowed[r]))
                    continue;
                u128 ex = st->rack[r].ctx_cluster ? rack_exact(nx, r, rq, leaf, &m)
                                                  : exact_of(leaf, 0);
                if (ex < best) {
                    best = ex;
                    best_rack = r;
                    best_m = m;
                    best_leaf = leaf;
                }
            }
            continue;
        }
        const uint64_t *c = t + st->toff[k - 1] + 8 * (size_t)n;
        /* lower indices popped first */
        for (uint32_t i = 8; i-- > 0;)
            if (c[i] != UINT64_MAX && exact_of(c[i], 0) < best)
                stack[sp++] = ((k - 1) << 27) | (8 * n + i);
    }
    if (best_rack == BERTH_NEXUS_NONE)
        return 0;
    if (best_m == BERTH_NEXUS_NONE) {
        /* a rack without context-cluster VMs: every fitting machine has the
         * same rack terms and machine spread 0; the leaf's no-XL-host bit
         * says whether one packs with another cluster's extra-large VM */
        const berth_rack *rk = &nx->racks[best_rack];
        uint32_t lo = rk->first_machine, hi = lo + rk->nmachines;
        int noxl = (int)((best_leaf >> (KEY_RACK_BITS + KEY_UTIL_BITS)) & 1);
        const uint64_t *col = st->bits + 2 * (size_t)st->slot[rq->sku] + (rq->xl && !noxl);
        best_m = first_in(col, 2 * (size_t)st->sstride, NULL, lo, hi);
    }
    if (NEVER(best_m == BERTH_NEXUS_NONE))
        return -1;
    /* the machine's lines, fetched side by side while the pipeline runs
     * (its filters, scores, reserve and the updates read them all) */
    const berth_machine *mm = &nx->machines[best_m];
    __builtin_prefetch(&st->mach[best_m]);
    __builtin_prefetch(st->bits + 2 * (size_t)(best_m >> 6) * st->sstride, 1);
    __builtin_prefetch(st->bits + 2 * (size_t)(best_m >> 6) * st->sstride + 8, 1);
    __builtin_prefetch(&st->ctxbits[best_m >> 6], 1);
    if (mm->ncells) {
        __builtin_prefetch(&nx->cells[mm->first_cell], 1);
        __builtin_prefetch(&nx->cells[mm->first_cell + mm->ncells - 1], 1);
    }
    /* the full scan's pick; the pipeline's filters and scores re-check it */
    cand[0] = best_m;
    return 1;
}

/* ---- self-check (tests): every counter, flag and tree from the model ---- */

static int check_fail(char *msg, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int check_fail(char *msg, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, size, fmt, ap);
    va_end(ap);
    return -1;
}

int nexus_index_check(berth_nexus *nx, char *msg, size_t size)
{
    berth_nexus_state *st = nx->state;
    if (!st)
        return 0;
    uint32_t S = st->nskus, R = nx->nracks, SS = st->sstride;
    size_t G8 = 8 * (size_t)st->ngroups;
    /* the change log: every cursor within it, scratch clear; then every
     * active tree brought up to date */
    for (uint32_t g = 0; g < st->ngroups; g++)
        if (st->glast[g] > st->clog_end || ((st->gseen[g >> 6] >> (g & 63)) & 1))
            return check_fail(msg, size, "log: group %u last logged at %llu of %llu, or seen", g,
                              (unsigned long long)st->glast[g],
                              (unsigned long long)st->clog_end);
    if (st->lastflush > st->clog_end)
        return check_fail(msg, size, "log: last flush beyond the end");
    for (uint32_t s = 0; s < S; s++) {
        if (!st->tree[s])
            continue;
        if (s == st->hot)
            continue; /* kept up to date at every change: the node checks below */
        if (st->cursor[s] > st->lastflush)
            return check_fail(msg, size, "%s: cursor beyond the last flush", nx->skus[s].name);
        nexus_index_flush(nx, s);
        if (st->cursor[s] != st->clog_end)
            return check_fail(msg, size, "%s: flush left pending changes", nx->skus[s].name);
    }
    for (uint32_t g = 0; g < (st->ngroups + 63) / 64; g++)
        if (st->gseen[g])
            return check_fail(msg, size, "log: scratch bits left set");
    for (size_t r = R; r < G8; r++)
        if (st->rkey[r] != UINT64_MAX)
            return check_fail(msg, size, "padding rack key %zu is set", r);
    if (st->ctx_cluster != BERTH_NEXUS_NONE || st->ctx_pool != BERTH_NEXUS_NONE)
        return check_fail(msg, size, "placement context left set");
    uint32_t *xl = calloc(nx->nmachines + 1, sizeof *xl);
    if (!xl)
        return check_fail(msg, size, "out of memory");
    for (uint32_t v = 0; v < nx->nvms; v++)
        if (nx->vms[v].machine != BERTH_NEXUS_NONE &&
            nx->skus[nx->pools[nx->vms[v].pool].sku].extra_large)
            xl[nx->vms[v].machine]++;
    int rc = 0;
    for (uint32_t m = 0; m < nx->nmachines && !rc; m++) {
        const berth_machine *mm = &nx->machines[m];
        const nexus_mstate *ms = &st->mach[m];
        if (ms->sched != (uint32_t)(!mm->cordoned && !mm->down))
            rc = check_fail(msg, size, "sched of %s stale", mm->name);
        else if (ms->xl_cnt != xl[m])
            rc = check_fail(msg, size, "xl_cnt of %s = %u, VMs say %u", mm->name, ms->xl_cnt,
                            xl[m]);
        else if (ms->ctx_cnt || ms->ctx_xl || ((st->ctxbits[m / 64] >> (m % 64)) & 1))
            rc = check_fail(msg, size, "context machine counters not cleared on %s", mm->name);
    }
    for (uint32_t r = 0; r < R && !rc; r++) {
        const berth_rack *rk = &nx->racks[r];
        const nexus_rstate *rs = &st->rack[r];
        int64_t used = 0, cap = 0;
        for (uint32_t m = rk->first_machine; m < rk->first_machine + rk->nmachines; m++)
            for (uint32_t c = 0; c < nx->machines[m].ncells; c++) {
                used += nx->cells[nx->machines[m].first_cell + c].used_cpu;
                cap += nx->cells[nx->machines[m].first_cell + c].cpu;
            }
        if (rs->used_cpu != used || rs->cap_cpu != cap) {
            rc = check_fail(msg, size, "rack %s used/cap %lld/%lld, cells say %lld/%lld",
                            rk->name, (long long)rs->used_cpu, (long long)rs->cap_cpu,
                            (long long)used, (long long)cap);
            break;
        }
        if (rs->util != (uint32_t)(cap ? used * 1000000 / cap : 0)) {
            rc = check_fail(msg, size, "rack %s util %u ppm stale", rk->name, rs->util);
            break;
        }
        if (st->rkey[r] != pack_key(0, 0, rs->util, r)) {
            rc = check_fail(msg, size, "rack %s key %llx stale", rk->name,
                            (unsigned long long)st->rkey[r]);
            break;
        }
        if (rs->ctx_pool || rs->ctx_cluster) {
            rc = check_fail(msg, size, "context rack counters not cleared on rack %s", rk->name);
            break;
        }
        for (uint32_t s = 0; s < S && !rc; s++) {
            if (!st->tree[s])
                continue; /* SKU not indexed (yet) */
            nexus_req rq;
            sku_req(nx, s, &rq);
            uint32_t fc = 0, xc = 0;
            for (uint32_t m = rk->first_machine; m < rk->first_machine + rk->nmachines; m++) {
                const berth_machine *mm = &nx->machines[m];
                int fits = !mm->cordoned && !mm->down && nexus_machine_fits(nx, m, &rq);
                uint32_t want = fits ? NEXUS_FIT | (xl[m] ? NEXUS_XLFIT : 0) : 0;
                if (nexus_fit_flags(st, m, s) != want) {
                    rc = check_fail(msg, size, "fit flags of %s for %s are %u, expected %u",
                                    mm->name, nx->skus[s].name, nexus_fit_flags(st, m, s), want);
                    break;
                }
                fc += fits;
                xc += fits && xl[m];
            }
            if (rc)
                break;
            const uint32_t *cnt = st->fitcnt + 2 * ((size_t)r * SS + st->slot[s]);
            if (cnt[0] != fc || cnt[1] != xc) {
                rc = check_fail(msg, size, "rack %s %s fit counters %u/%u, expected %u/%u",
                                rk->name, nx->skus[s].name, cnt[0], cnt[1], fc, xc);
                break;
            }
            uint8_t cl = cls_row(st, st->slot[s])[r];
            if (cl != cls_of(cnt)) {
                rc = check_fail(msg, size, "rack %s %s fit class %u, counters say %u", rk->name,
                                nx->skus[s].name, cl, cls_of(cnt));
                break;
            }
            uint64_t noxl = nx->skus[s].extra_large && xc == 0;
            uint64_t key = fc == 0 ? UINT64_MAX : pack_key(0, (uint32_t)noxl, rs->util, r);
            cls_tab tab = cls_tab_of(nx, s);
            uint64_t leaf = st->rkey[r] | tab.or[cl & 3];
            if (leaf != key)
                rc = check_fail(msg, size, "index leaf of rack %s for %s is %llx, expected %llx",
                                rk->name, nx->skus[s].name, (unsigned long long)leaf,
                                (unsigned long long)key);
        }
    }
    free(xl);
    /* every inner node the minimum of its eight children; padding empty */
    for (uint32_t s = 0; s < S && !rc; s++) {
        const uint64_t *t = st->tree[s];
        if (!t)
            continue;
        const uint8_t *cl = cls_row(st, st->slot[s]);
        cls_tab tab = cls_tab_of(nx, s);
        uint32_t n = st->ngroups;
        for (uint32_t k = 1; k <= st->tlevels; k++) {
            uint32_t padded = (k < st->tlevels ? st->toff[k + 1] : st->tsize) - st->toff[k];
            for (uint32_t j = 0; j < padded; j++) {
                uint64_t want = j >= n   ? UINT64_MAX
                                : k == 1 ? group_min(st->rkey + 8 * (size_t)j, cl + 8 * (size_t)j,
                                                     tab.or)
                                         : min8(t + st->toff[k - 1] + 8 * (size_t)j);
                if (t[st->toff[k] + j] != want)
                    return check_fail(msg, size, "index node %u of level %u of %s is not the "
                                      "min of its children", j, k, nx->skus[s].name);
            }
            n = (n + 7) / 8;
        }
    }
    return rc;
}
