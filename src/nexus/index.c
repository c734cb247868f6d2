/* nexus/index.c - the nexus placement index and incremental counters.
 *
 * Per (rack, SKU) it counts machines that fit the SKU (and those that also
 * host an extra-large VM); per SKU a segment tree over racks holds the
 * packed rack key (context-pool VMs, no-XL-host flag, utilisation ppm, rack
 * index), UINT64_MAX where nothing fits. narrow() finds the best rack by
 * branch and bound over that tree, evaluating racks that already hold VMs
 * of the context cluster exactly (their machine-spread term can be > 0),
 * and hands the pipeline the one machine the full scan would pick there:
 * inside a rack every machine shares the rack terms, so the pick is the
 * lowest fitting machine with the fewest context-cluster VMs, then packing
 * extra-large; per-SKU fit bit columns and the context-cluster bit column
 * find it in a few words (a rack of 100 machines is 2-3 words). Cost per
 * placement: O(active SKUs * log racks) to update (a tree walk stops where
 * the minimum no longer changes), O(log racks + machines per rack / 64) to
 * pick, independent of the number of racks otherwise. */
#include "nexus/state.h"
#include "core/invariant.h"

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
    free(s->sched);
    free(s->xl_cnt);
    free(s->ctx_cluster_cnt);
    free(s->ctx_cluster_xl);
    free(s->fit);
    free(s->rack_cap_cpu);
    free(s->rack_used_cpu);
    free(s->rack_util);
    free(s->ctx_pool_cnt);
    free(s->ctx_cluster_rack);
    free(s->fit_cnt);
    free(s->xlfit_cnt);
    free(s->fitbits);
    free(s->xlfitbits);
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

static uint64_t leaf_key(const berth_nexus *nx, uint32_t r, uint32_t s)
{
    const berth_nexus_state *st = nx->state;
    size_t i = (size_t)r * st->nskus + s;
    if (st->fit_cnt[i] == 0)
        return UINT64_MAX;
    uint32_t noxl = nx->skus[s].extra_large ? st->xlfit_cnt[i] == 0 : 0;
    return pack_key(st->ctx_pool_cnt[r], noxl, st->rack_util[r], r);
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
 * (NULL: no exclusion), or BERTH_NEXUS_NONE. */
static uint32_t first_in(const uint64_t *a, const uint64_t *not, uint32_t lo, uint32_t hi)
{
    if (lo >= hi)
        return BERTH_NEXUS_NONE;
    uint32_t w = lo >> 6, last = (hi - 1) >> 6;
    uint64_t x = (a[w] & ~(not ? not[w] : 0)) & (~0ull << (lo & 63));
    for (;;) {
        if (w == last) {
            if (hi & 63)
                x &= (1ull << (hi & 63)) - 1;
            return x ? (w << 6) + (uint32_t)__builtin_ctzll(x) : BERTH_NEXUS_NONE;
        }
        if (x)
            return (w << 6) + (uint32_t)__builtin_ctzll(x);
        w++;
        x = a[w] & ~(not ? not[w] : 0);
    }
}

void nexus_rack_rekey(berth_nexus *nx, uint32_t r)
{
    berth_nexus_state *st = nx->state;
    int64_t cap = st->rack_cap_cpu[r];
    uint64_t u = cap > 0 ? (uint64_t)st->rack_used_cpu[r] * 1000000u / (uint64_t)cap : 0;
    st->rack_util[r] = (uint32_t)(u > 1000000u ? 1000000u : u);
    uint8_t *flag = st->dirty_flag + r;
    size_t R = st->nracks;
    for (uint32_t k = 0; k < st->nactive; k++) {
        uint32_t s = st->active[k];
        if (flag[s * R])
            continue;
        flag[s * R] = 1;
        st->dirty[s][st->ndirty[s]++] = r;
    }
}

void nexus_index_flush(berth_nexus *nx, uint32_t s)
{
    berth_nexus_state *st = nx->state;
    uint32_t n = st->ndirty[s];
    if (!n)
        return;
    uint64_t *t = st->tree[s];
    const uint32_t *list = st->dirty[s];
    uint8_t *flag = st->dirty_flag + (size_t)s * st->nracks;
    uint64_t xlbit = nx->skus[s].extra_large ? 1ull << (KEY_RACK_BITS + KEY_UTIL_BITS) : 0;
    uint32_t L = st->leaves, depth = (uint32_t)__builtin_ctz(L) + 1;
    if ((uint64_t)n * depth > L) {
        /* many pending (a pool switch after a run of another SKU): re-key
         * the leaves in rack order (the flags, read 8 at a time, give the
         * list sorted), then go up level by level: a node shared by several
         * paths is recomputed once, and a node whose minimum stays the same
         * ends its paths. At most the union of the n paths, usually far
         * less; never the whole tree. */
        uint32_t *ls = st->dirty[s], k = 0, R = st->nracks;
        for (uint32_t r0 = 0; r0 < R && k < n; r0 += 8) {
            uint64_t w = 0;
            memcpy(&w, flag + r0, R - r0 >= 8 ? 8 : R - r0);
            if (!w)
                continue;
            for (uint32_t r = r0; r < r0 + 8 && r < R; r++)
                if (flag[r]) {
                    flag[r] = 0;
                    ls[k++] = r;
                }
        }
        if (NEVER(k != n))
            n = k;
        uint32_t cnt = 0;
        for (uint32_t d = 0; d < n; d++) {
            uint32_t r = ls[d];
            size_t ri = (size_t)r * st->nskus + s;
            uint64_t v = st->fit_cnt[ri] ? pack_key(st->ctx_pool_cnt[r], 0, st->rack_util[r], r) |
                                               (st->xlfit_cnt[ri] == 0 ? xlbit : 0)
                                         : UINT64_MAX;
            if (t[L + r] != v) {
                t[L + r] = v;
                ls[cnt++] = L + r;
            }
        }
        while (cnt) {
            uint32_t out = 0, prev = 0;
            for (uint32_t d = 0; d < cnt; d++) {
                uint32_t i = ls[d] >> 1;
                if (i == prev || i == 0)
                    continue;
                prev = i;
                uint64_t a = t[2 * i], b = t[2 * i + 1], mn = a < b ? a : b;
                if (t[i] == mn)
                    continue;
                t[i] = mn;
                ls[out++] = i;
            }
            cnt = out;
        }
        st->ndirty[s] = 0;
        return;
    }
    for (uint32_t d = 0; d < n; d++) {
        uint32_t r = list[d];
        flag[r] = 0;
        size_t ri = (size_t)r * st->nskus + s;
        uint64_t v = UINT64_MAX;
        if (st->fit_cnt[ri])
            v = pack_key(st->ctx_pool_cnt[r], 0, st->rack_util[r], r) |
                (st->xlfit_cnt[ri] == 0 ? xlbit : 0);
        uint32_t i = st->leaves + r;
        if (t[i] == v)
            continue;
        t[i] = v;
        /* the tree holds minima over its current leaves: stop at the first
         * node whose minimum stays the same */
        for (i >>= 1; i; i >>= 1) {
            uint64_t a = t[2 * i], b = t[2 * i + 1], mn = a < b ? a : b;
            if (t[i] == mn)
                break;
            t[i] = mn;
        }
    }
    st->ndirty[s] = 0;
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

/* Sets machine m's fit flags for SKU s to nf: counters and bit columns. */
static void set_fit(berth_nexus_state *st, uint32_t m, uint32_t r, uint32_t s, uint8_t nf)
{
    size_t fi = (size_t)m * st->nskus + s, ri = (size_t)r * st->nskus + s;
    uint8_t of = st->fit[fi];
    if (nf == of)
        return;
    st->fit_cnt[ri] += (nf & NEXUS_FIT ? 1u : 0u) - (of & NEXUS_FIT ? 1u : 0u);
    st->xlfit_cnt[ri] += (nf & NEXUS_XLFIT ? 1u : 0u) - (of & NEXUS_XLFIT ? 1u : 0u);
    st->fit[fi] = nf;
    bit_put(st->fitbits + (size_t)s * st->words, m, nf & NEXUS_FIT);
    bit_put(st->xlfitbits + (size_t)s * st->words, m, nf & NEXUS_XLFIT);
}

/* Recomputes fit flags of machine m for every SKU; adjusts rack counters. */
static void machine_refit(berth_nexus *nx, uint32_t m)
{
    berth_nexus_state *st = nx->state;
    uint32_t r = nx->machines[m].rack;
    uint8_t hosts = st->xl_cnt[m] > 0 ? NEXUS_XLFIT : 0;
    int sched = st->sched[m];
    for (uint32_t a = 0; a < st->nactive; a++) {
        uint32_t s = st->active[a];
        uint8_t nf = 0;
        if (sched && fits_sku(nx, st, m, s))
            nf = NEXUS_FIT | hosts;
        set_fit(st, m, r, s, nf);
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
    st->leaves = 1;
    while (st->leaves < R)
        st->leaves <<= 1;
    st->sched = calloc(M, 1);
    st->xl_cnt = calloc(M, sizeof *st->xl_cnt);
    st->ctx_cluster_cnt = calloc(M, sizeof *st->ctx_cluster_cnt);
    st->ctx_cluster_xl = calloc(M, sizeof *st->ctx_cluster_xl);
    st->fit = calloc((size_t)M * S, 1);
    st->rack_cap_cpu = calloc(R, sizeof *st->rack_cap_cpu);
    st->rack_used_cpu = calloc(R, sizeof *st->rack_used_cpu);
    st->rack_util = calloc(R, sizeof *st->rack_util);
    st->ctx_pool_cnt = calloc(R, sizeof *st->ctx_pool_cnt);
    st->ctx_cluster_rack = calloc(R, sizeof *st->ctx_cluster_rack);
    st->fit_cnt = calloc((size_t)R * S, sizeof *st->fit_cnt);
    st->xlfit_cnt = calloc((size_t)R * S, sizeof *st->xlfit_cnt);
    st->words = (M + 63) / 64;
    st->fitbits = calloc((size_t)S * st->words + 1, sizeof *st->fitbits);
    st->xlfitbits = calloc((size_t)S * st->words + 1, sizeof *st->xlfitbits);
    st->ctxbits = calloc((size_t)st->words + 1, sizeof *st->ctxbits);
    st->need_cpu = calloc(S + 1, sizeof *st->need_cpu);
    st->need_mem = calloc(S + 1, sizeof *st->need_mem);
    st->need_cells = calloc(S + 1, sizeof *st->need_cells);
    st->tree = calloc(S, sizeof *st->tree);
    st->dirty = calloc(S + 1, sizeof *st->dirty);
    st->ndirty = calloc(S + 1, sizeof *st->ndirty);
    st->dirty_flag = calloc((size_t)S * R + 1, 1);
    st->active = calloc(S, sizeof *st->active);
    st->allowed = calloc(R, 1);
    if (!st->sched || !st->xl_cnt || !st->ctx_cluster_cnt || !st->ctx_cluster_xl || !st->fit ||
        !st->rack_cap_cpu || !st->rack_used_cpu || !st->rack_util || !st->ctx_pool_cnt ||
        !st->ctx_cluster_rack || !st->fit_cnt || !st->xlfit_cnt || !st->tree || !st->active ||
        !st->allowed || !st->fitbits || !st->xlfitbits || !st->ctxbits || !st->need_cpu ||
        !st->need_mem || !st->need_cells || !st->dirty || !st->ndirty || !st->dirty_flag)
        return BERTH_ENOMEM;
    st->ctx_cluster = st->ctx_pool = BERTH_NEXUS_NONE;
    for (uint32_t m = 0; m < M; m++) {
        const berth_machine *mm = &nx->machines[m];
        st->sched[m] = !mm->cordoned && !mm->down;
        for (uint32_t c = 0; c < mm->ncells; c++) {
            st->rack_cap_cpu[mm->rack] += nx->cells[mm->first_cell + c].cpu;
            st->rack_used_cpu[mm->rack] += nx->cells[mm->first_cell + c].used_cpu;
        }
    }
    for (uint32_t r = 0; r < R; r++) {
        int64_t cap = st->rack_cap_cpu[r];
        uint64_t u = cap > 0 ? (uint64_t)st->rack_used_cpu[r] * 1000000u / (uint64_t)cap : 0;
        st->rack_util[r] = (uint32_t)(u > 1000000u ? 1000000u : u);
    }
    return 0;
}

int nexus_sku_activate(berth_nexus *nx, uint32_t s)
{
    berth_nexus_state *st = nx->state;
    if (st->tree[s])
        return 0;
    uint32_t L = st->leaves;
    uint64_t *t = malloc((size_t)2 * L * sizeof *t);
    uint32_t *dl = malloc((nx->nracks ? nx->nracks : 1) * sizeof *dl);
    if (!t || !dl) {
        free(t);
        free(dl);
        return BERTH_ENOMEM;
    }
    nexus_req rq;
    sku_req(nx, s, &rq);
    st->need_cpu[s] = rq.cell_cpu;
    st->need_mem[s] = rq.cell_mem;
    st->need_cells[s] = (uint8_t)rq.ncells;
    for (uint32_t m = 0; m < nx->nmachines; m++) {
        uint8_t f = 0;
        if (st->sched[m] && fits_sku(nx, st, m, s))
            f = NEXUS_FIT | (st->xl_cnt[m] > 0 ? NEXUS_XLFIT : 0);
        set_fit(st, m, nx->machines[m].rack, s, f);
    }
    for (uint32_t i = 0; i < 2 * L; i++)
        t[i] = UINT64_MAX;
    for (uint32_t r = 0; r < nx->nracks; r++)
        t[L + r] = leaf_key(nx, r, s);
    for (uint32_t i = L; --i > 0;)
        t[i] = t[2 * i] < t[2 * i + 1] ? t[2 * i] : t[2 * i + 1];
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
            st->ctx_cluster_cnt[m] = 0;
            st->ctx_cluster_xl[m] = 0;
        }
        for (uint32_t r = 0; r < nx->nracks; r++) {
            int rekey = st->ctx_pool_cnt[r] != 0;
            st->ctx_pool_cnt[r] = 0;
            st->ctx_cluster_rack[r] = 0;
            if (rekey)
                nexus_rack_rekey(nx, r);
        }
    }
    for (uint32_t i = 0; i < st->ntouched_machines; i++) {
        uint32_t m = st->touched_machines[i];
        st->ctx_cluster_cnt[m] = 0;
        st->ctx_cluster_xl[m] = 0;
        bit_put(st->ctxbits, m, 0);
    }
    for (uint32_t i = 0; i < st->ntouched_racks; i++) {
        uint32_t r = st->touched_racks[i];
        int rekey = st->ctx_pool_cnt[r] != 0;
        st->ctx_pool_cnt[r] = 0;
        st->ctx_cluster_rack[r] = 0;
        if (rekey)
            nexus_rack_rekey(nx, r);
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
    if (delta > 0) {
        if (st->ctx_cluster_cnt[m] == 0 && st->ctx_cluster_xl[m] == 0 &&
            touch(&st->touched_machines, &st->ntouched_machines, &st->captouched_machines, m))
            st->touched_lost = 1;
        if (st->ctx_cluster_rack[r] == 0 && st->ctx_pool_cnt[r] == 0 &&
            touch(&st->touched_racks, &st->ntouched_racks, &st->captouched_racks, r))
            st->touched_lost = 1;
    }
    st->ctx_cluster_cnt[m] += (uint32_t)delta;
    bit_put(st->ctxbits, m, st->ctx_cluster_cnt[m] != 0);
    st->ctx_cluster_rack[r] += (uint32_t)delta;
    if (nx->skus[p->sku].extra_large)
        st->ctx_cluster_xl[m] += (uint32_t)delta;
    if (v->pool == st->ctx_pool) {
        st->ctx_pool_cnt[r] += (uint32_t)delta;
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
            if (st->ctx_pool_cnt[r]) {
                st->ctx_pool_cnt[r] = 0;
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
            st->ctx_pool_cnt[r]++;
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
    const uint64_t *fit = st->fitbits + (size_t)rq->sku * st->words;
    const uint64_t *xlfit = st->xlfitbits + (size_t)rq->sku * st->words;
    uint32_t best_k2 = UINT32_MAX, best_noxl = 1, bm = BERTH_NEXUS_NONE;
    uint32_t m = BERTH_NEXUS_NONE;
    if (rq->xl)
        m = first_in(xlfit, st->ctxbits, lo, hi);
    if (m != BERTH_NEXUS_NONE) {
        best_k2 = 0;
        best_noxl = 0;
        bm = m;
    } else if ((m = first_in(fit, st->ctxbits, lo, hi)) != BERTH_NEXUS_NONE) {
        best_k2 = 0;
        best_noxl = rq->xl ? 1 : 0;
        bm = m;
    } else {
        for (m = first_in(fit, NULL, lo, hi); m != BERTH_NEXUS_NONE;
             m = first_in(fit, NULL, m + 1, hi)) {
            uint32_t k2 = st->ctx_cluster_cnt[m];
            uint32_t noxl = rq->xl ? !(st->xl_cnt[m] > st->ctx_cluster_xl[m]) : 0;
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
    uint64_t key = pack_key((uint32_t)(bound >> KEY_PC_SHIFT), best_noxl, st->rack_util[r], r);
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
    uint32_t L = st->leaves;
    const uint64_t *t = st->tree[rq->sku];
    if (!t || cap == 0)
        return -1;
    nexus_index_flush(nx, rq->sku);
    u128 best = ~(u128)0;
    uint32_t best_rack = BERTH_NEXUS_NONE, best_m = BERTH_NEXUS_NONE;
    uint64_t best_leaf = UINT64_MAX;
    if (t[1] == UINT64_MAX)
        return 0;
    /* first the minimum's path, one comparison a level: its leaf holds the
     * smallest key, and when its exact key adds nothing (no context-cluster
     * VMs to spread from: the common case) no other rack can beat it, so the
     * bound below prunes at the root */
    uint32_t i0 = 1;
    while (i0 < L)
        i0 = t[2 * i0] <= t[2 * i0 + 1] ? 2 * i0 : 2 * i0 + 1;
    if (!rq->allowed || rq->allowed[i0 - L]) {
        uint32_t r = i0 - L, m = BERTH_NEXUS_NONE;
        uint64_t k = t[i0];
        best = st->ctx_cluster_rack[r] ? rack_exact(nx, r, rq, k, &m) : exact_of(k, 0);
        if (best != ~(u128)0) {
            best_rack = r;
            best_m = m;
            best_leaf = k;
        }
    }
    uint32_t stack[64];
    int sp = 0;
    stack[sp++] = 1;
    while (sp) {
        uint32_t i = stack[--sp];
        uint64_t k = t[i];
        if (k == UINT64_MAX || exact_of(k, 0) >= best)
            continue;
        if (i >= L) {
            uint32_t r = i - L, m = BERTH_NEXUS_NONE;
            if (rq->allowed && !rq->allowed[r])
                continue;
            u128 ex = st->ctx_cluster_rack[r] ? rack_exact(nx, r, rq, k, &m) : exact_of(k, 0);
            if (ex < best) {
                best = ex;
                best_rack = r;
                best_m = m;
                best_leaf = k;
            }
            continue;
        }
        /* visit the smaller child first: push it last */
        uint32_t a = 2 * i, b = 2 * i + 1;
        if (t[a] <= t[b]) {
            stack[sp++] = b;
            stack[sp++] = a;
        } else {
            stack[sp++] = a;
            stack[sp++] = b;
        }
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
        const uint64_t *col = rq->xl && !noxl ? st->xlfitbits : st->fitbits;
        best_m = first_in(col + (size_t)rq->sku * st->words, NULL, lo, hi);
    }
    if (NEVER(best_m == BERTH_NEXUS_NONE))
        return -1;
    /* the full scan's pick; the pipeline's filters and scores re-check it */
    cand[0] = best_m;
    return 1;
}
