/* nexus/index.c - the nexus placement index and incremental counters.
 *
 * Per (rack, SKU) it counts machines that fit the SKU (and those that also
 * host an extra-large VM); per SKU an 8-ary min tree over racks (a node's
 * eight children are one cache line) holds the packed rack key
 * (context-pool VMs, no-XL-host flag, utilisation ppm, rack index),
 * UINT64_MAX where nothing fits. narrow() finds the best rack by
 * branch and bound over that tree, evaluating racks that already hold VMs
 * of the context cluster exactly (their machine-spread term can be > 0),
 * and hands the pipeline the one machine the full scan would pick there:
 * inside a rack every machine shares the rack terms, so the pick is the
 * lowest fitting machine with the fewest context-cluster VMs, then packing
 * extra-large; per-SKU fit bit columns and the context-cluster bit column
 * find it in a few words (a rack of 100 machines is 2-3 words). Cost per
 * placement: O(active SKUs * log8 racks) to update (a tree walk stops where
 * the minimum no longer changes), O(log8 racks + machines per rack / 64) to
 * pick, independent of the number of racks otherwise. Hot state is packed
 * so that a placement touches few cache lines: one record per machine, one
 * per rack, the rack's counters of every SKU side by side, a machine's two
 * fit bits of a SKU in one line, one line per tree level. */
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
    free(s->ctxbits);
    free(s->need_cpu);
    free(s->need_mem);
    free(s->need_cells);
    if (s->tree)
        for (uint32_t i = 0; i < s->nskus; i++)
            free(s->tree[i]);
    free(s->tree);
    if (s->dirty)
        for (uint32_t i = 0; i < s->nskus; i++)
            free(s->dirty[i]);
    free(s->dirty);
    free(s->ndirty);
    free(s->dirty_flag);
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

static uint64_t leaf_key(const berth_nexus *nx, uint32_t r, uint32_t s)
{
    const berth_nexus_state *st = nx->state;
    size_t i = (size_t)r * st->sstride + st->slot[s];
    if (st->fitcnt[2 * i] == 0)
        return UINT64_MAX;
    uint32_t noxl = nx->skus[s].extra_large ? st->fitcnt[2 * i + 1] == 0 : 0;
    return pack_key(st->rack[r].ctx_pool, noxl, st->rack[r].util, r);
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

void nexus_rack_rekey(berth_nexus *nx, uint32_t r)
{
    berth_nexus_state *st = nx->state;
    st->rack[r].util = rack_util_of(&st->rack[r]);
    uint8_t *flag = st->dirty_flag + (size_t)r * st->sstride;
    for (uint32_t a = 0; a < st->nactive; a++) {
        if (flag[a])
            continue;
        flag[a] = 1;
        uint32_t s = st->active[a];
        st->dirty[s][st->ndirty[s]++] = r;
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

void nexus_index_flush(berth_nexus *nx, uint32_t s)
{
    berth_nexus_state *st = nx->state;
    uint32_t n = st->ndirty[s];
    if (!n)
        return;
    uint64_t *t = st->tree[s];
    uint32_t *ls = st->dirty[s];
    size_t S = st->sstride, a = st->slot[s];
    uint64_t xlbit = nx->skus[s].extra_large ? 1ull << (KEY_RACK_BITS + KEY_UTIL_BITS) : 0;
    uint32_t cnt = 0;
    /* re-key the leaves; the list keeps the ones that changed */
    for (uint32_t d = 0; d < n; d++) {
        uint32_t r = ls[d];
        size_t ri = (size_t)r * S + a;
        st->dirty_flag[ri] = 0;
        const nexus_rstate *rs = &st->rack[r];
        uint64_t v = st->fitcnt[2 * ri] ? pack_key(rs->ctx_pool, 0, rs->util, r) |
                                              (st->fitcnt[2 * ri + 1] == 0 ? xlbit : 0)
                                        : UINT64_MAX;
        if (t[r] != v) {
            t[r] = v;
            ls[cnt++] = r;
        }
    }
    st->ndirty[s] = 0;
    if (cnt == 1) {
        /* one path (the common case: the last placement's rack): stop at
         * the first node whose minimum stays the same */
        uint32_t j = ls[0];
        for (uint32_t k = 1; k <= st->tlevels; k++) {
            uint64_t mn = min8(t + st->toff[k - 1] + (j & ~7u));
            j >>= 3;
            uint64_t *p = t + st->toff[k] + j;
            if (*p == mn)
                break;
            *p = mn;
        }
        return;
    }
    /* several: level by level, a node shared by several paths is
     * recomputed once (a second visit finds its minimum already right) and
     * a node whose minimum stays the same ends its paths */
    for (uint32_t k = 1; k <= st->tlevels && cnt; k++) {
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

/* Sets machine m's fit flags for the SKU of slot a to nf: counters and bit
 * columns. bitrow: the slot row of m's word (bits + 2 * (m / 64) *
 * sstride), cntrow: the slot row of m's rack (fitcnt + 2 * rack * sstride). */
static inline void set_fit(uint64_t *bitrow, uint32_t *cntrow, uint32_t m, uint32_t a, uint32_t nf)
{
    uint64_t *w = bitrow + 2 * a;
    uint32_t sh = m & 63;
    uint32_t of = (uint32_t)((w[0] >> sh) & 1) | (uint32_t)((w[1] >> sh) & 1) << 1;
    if (nf == of)
        return;
    uint32_t *cnt = cntrow + 2 * a;
    cnt[0] += (nf & 1u) - (of & 1u);
    cnt[1] += (nf >> 1) - (of >> 1);
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
    for (uint32_t a = 0; a < st->nactive; a++) {
        uint32_t s = st->active[a];
        uint32_t nf = 0;
        if (sched && fits_sku(nx, st, m, s))
            nf = NEXUS_FIT | hosts;
        set_fit(bitrow, cntrow, m, a, nf);
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
    /* tree levels: level 0 holds R leaves, each level above one node per 8
     * of the level below, up to a single root; every level padded to 8 */
    uint32_t c = R ? R : 1, off = 0, k = 0;
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
    st->mach = zalloc64(M ? M : 1, sizeof *st->mach);
    st->rack = zalloc64(R ? R : 1, sizeof *st->rack);
    st->sstride = 8;
    st->words = (M + 63) / 64;
    st->fitcnt = zalloc64((size_t)R * st->sstride * 2 + 1, sizeof *st->fitcnt);
    st->bits = zalloc64((size_t)st->words * st->sstride * 2 + 1, sizeof *st->bits);
    st->slot = malloc((S + 1) * sizeof *st->slot);
    st->ctxbits = calloc((size_t)st->words + 1, sizeof *st->ctxbits);
    st->need_cpu = calloc(S + 1, sizeof *st->need_cpu);
    st->need_mem = calloc(S + 1, sizeof *st->need_mem);
    st->need_cells = calloc(S + 1, sizeof *st->need_cells);
    st->tree = calloc(S + 1, sizeof *st->tree);
    st->dirty = calloc(S + 1, sizeof *st->dirty);
    st->ndirty = calloc(S + 1, sizeof *st->ndirty);
    st->dirty_flag = calloc((size_t)R * st->sstride + 1, 1);
    st->active = calloc(S + 1, sizeof *st->active);
    st->allowed = calloc(R ? R : 1, 1);
    if (!st->mach || !st->rack || !st->fitcnt || !st->tree || !st->active || !st->allowed ||
        !st->bits || !st->ctxbits || !st->need_cpu || !st->need_mem || !st->need_cells ||
        !st->dirty || !st->ndirty || !st->dirty_flag || !st->slot)
        return BERTH_ENOMEM;
    for (uint32_t s = 0; s < S; s++)
        st->slot[s] = BERTH_NEXUS_NONE;
    st->ctx_cluster = st->ctx_pool = BERTH_NEXUS_NONE;
    for (uint32_t m = 0; m < M; m++) {
        const berth_machine *mm = &nx->machines[m];
        st->mach[m].sched = !mm->cordoned && !mm->down;
        for (uint32_t i = 0; i < mm->ncells; i++) {
            st->rack[mm->rack].cap_cpu += nx->cells[mm->first_cell + i].cpu;
            st->rack[mm->rack].used_cpu += nx->cells[mm->first_cell + i].used_cpu;
        }
    }
    for (uint32_t r = 0; r < R; r++)
        st->rack[r].util = rack_util_of(&st->rack[r]);
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
    uint8_t *df = calloc((size_t)R * nw + 1, 1);
    if (!fc || !bits || !df) {
        free(fc);
        free(bits);
        free(df);
        return BERTH_ENOMEM;
    }
    for (size_t r = 0; r < R; r++) {
        memcpy(fc + 2 * r * nw, st->fitcnt + 2 * r * old, 2 * old * sizeof *fc);
        memcpy(df + r * nw, st->dirty_flag + r * old, old);
    }
    for (size_t w = 0; w < st->words; w++)
        memcpy(bits + 2 * w * nw, st->bits + 2 * w * old, 2 * old * sizeof *bits);
    free(st->fitcnt);
    free(st->bits);
    free(st->dirty_flag);
    st->fitcnt = fc;
    st->bits = bits;
    st->dirty_flag = df;
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
    uint32_t *dl = malloc((nx->nracks ? nx->nracks : 1) * sizeof *dl);
    if (!t || !dl) {
        free(t);
        free(dl);
        return BERTH_ENOMEM;
    }
    if (st->nactive == st->sstride && grow_slots(st, nx->nracks)) {
        free(t);
        free(dl);
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
        set_fit(st->bits + 2 * (size_t)(m >> 6) * st->sstride,
                st->fitcnt + 2 * (size_t)nx->machines[m].rack * st->sstride, m, a, f);
    }
    st->slot[s] = a;
    for (uint32_t i = 0; i < st->tsize; i++)
        t[i] = UINT64_MAX;
    for (uint32_t r = 0; r < nx->nracks; r++)
        t[r] = leaf_key(nx, r, s);
    uint32_t n = nx->nracks ? nx->nracks : 1;
    for (uint32_t k = 1; k <= st->tlevels; k++) {
        n = (n + 7) / 8; /* real nodes of level k; the padding stays UINT64_MAX */
        for (uint32_t j = 0; j < n; j++)
            t[st->toff[k] + j] = min8(t + st->toff[k - 1] + 8 * (size_t)j);
    }
    st->tree[s] = t;
    st->dirty[s] = dl;
    st->ndirty[s] = 0;
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
    const berth_nexus_state *st = nx->state;
    /* the descent resolves ties to the lowest rack and machine: other
     * tie-breaks take the full scan (the reference) */
    if (!st->use_index || st->tiebreak != BERTH_TIE_FIRST)
        return -1;
    const uint64_t *t = st->tree[rq->sku];
    if (!t || cap == 0)
        return -1;
    nexus_index_flush(nx, rq->sku);
    uint32_t top = st->tlevels;
    if (t[st->toff[top]] == UINT64_MAX)
        return 0;
    u128 best = ~(u128)0;
    uint32_t best_rack = BERTH_NEXUS_NONE, best_m = BERTH_NEXUS_NONE;
    uint64_t best_leaf = UINT64_MAX;
    /* first the minimum's path, one cache line a level: its leaf holds the
     * smallest key, and when its exact key adds nothing (no context-cluster
     * VMs to spread from: the common case) no other rack can beat it, so the
     * bound below prunes at the root */
    uint64_t root = t[st->toff[top]];
    uint32_t j = 0;
    for (uint32_t k = top; k > 0; k--) {
        const uint64_t *c = t + st->toff[k - 1] + 8 * (size_t)j;
        uint32_t i = 0;
        while (i < 7 && c[i] != root)
            i++;
        j = 8 * j + i;
    }
    if (NEVER(t[j] != root))
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
        if (k == 0) {
            uint32_t m = BERTH_NEXUS_NONE;
            if (rq->allowed && !rq->allowed[n])
                continue;
            u128 ex = st->rack[n].ctx_cluster ? rack_exact(nx, n, rq, key, &m) : exact_of(key, 0);
            if (ex < best) {
                best = ex;
                best_rack = n;
                best_m = m;
                best_leaf = key;
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
    /* pending re-keys: each listed once, flagged exactly when listed */
    for (uint32_t s = 0; s < S; s++) {
        if (!st->tree[s]) {
            if (st->ndirty[s])
                return check_fail(msg, size, "inactive SKU %s has pending re-keys",
                                  nx->skus[s].name);
            continue;
        }
        uint32_t flagged = 0;
        for (uint32_t r = 0; r < R; r++)
            flagged += st->dirty_flag[(size_t)r * SS + st->slot[s]];
        if (flagged != st->ndirty[s] || st->ndirty[s] > R)
            return check_fail(msg, size, "%s: %u racks flagged dirty, %u listed",
                              nx->skus[s].name, flagged, st->ndirty[s]);
        for (uint32_t d = 0; d < st->ndirty[s]; d++)
            if (st->dirty[s][d] >= R ||
                !st->dirty_flag[(size_t)st->dirty[s][d] * SS + st->slot[s]])
                return check_fail(msg, size, "%s: listed dirty rack %u not flagged",
                                  nx->skus[s].name, st->dirty[s][d]);
        nexus_index_flush(nx, s);
        if (st->ndirty[s])
            return check_fail(msg, size, "%s: flush left pending re-keys", nx->skus[s].name);
    }
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
            uint64_t noxl = nx->skus[s].extra_large && xc == 0;
            uint64_t key = fc == 0 ? UINT64_MAX : pack_key(0, (uint32_t)noxl, rs->util, r);
            if (st->tree[s][r] != key)
                rc = check_fail(msg, size, "index leaf of rack %s for %s is %llx, expected %llx",
                                rk->name, nx->skus[s].name, (unsigned long long)st->tree[s][r],
                                (unsigned long long)key);
        }
    }
    free(xl);
    /* every inner node the minimum of its eight children; padding empty */
    for (uint32_t s = 0; s < S && !rc; s++) {
        const uint64_t *t = st->tree[s];
        if (!t)
            continue;
        uint32_t leaves_end = st->tlevels ? st->toff[1] : st->tsize;
        for (uint32_t i = R; i < leaves_end; i++)
            if (t[i] != UINT64_MAX)
                return check_fail(msg, size, "padding leaf %u of %s is set", i, nx->skus[s].name);
        uint32_t n = R ? R : 1;
        for (uint32_t k = 1; k <= st->tlevels; k++) {
            n = (n + 7) / 8;
            for (uint32_t j = 0; j < n; j++)
                if (t[st->toff[k] + j] != min8(t + st->toff[k - 1] + 8 * (size_t)j))
                    return check_fail(msg, size, "index node %u of level %u of %s is not the "
                                      "min of its children", j, k, nx->skus[s].name);
        }
    }
    return rc;
}
