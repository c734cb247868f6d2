/* nexus/index.c - the nexus placement index and incremental counters.
 *
 * Per (rack, SKU) it counts machines that fit the SKU (and those that also
 * host an extra-large VM); per SKU a segment tree over racks holds the
 * packed rack key (context-pool VMs, no-XL-host flag, utilisation ppm, rack
 * index), UINT64_MAX where nothing fits. narrow() finds the best rack by
 * branch and bound over that tree, evaluating racks that already hold VMs
 * of the context cluster exactly (their machine-spread term can be > 0),
 * and hands that rack's machines to the pipeline. Cost per placement:
 * O(nskus * log racks) to update, O(log racks + machines per rack) to pick,
 * independent of the number of racks otherwise. */
#include "nexus/state.h"

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
    if (s->tree)
        for (uint32_t i = 0; i < s->nskus; i++)
            free(s->tree[i]);
    free(s->tree);
    free(s->active);
    free(s->touched_racks);
    free(s->touched_machines);
    free(s->allowed);
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

void nexus_rack_rekey(berth_nexus *nx, uint32_t r)
{
    berth_nexus_state *st = nx->state;
    uint32_t L = st->leaves;
    int64_t cap = st->rack_cap_cpu[r];
    uint64_t u = cap > 0 ? (uint64_t)st->rack_used_cpu[r] * 1000000u / (uint64_t)cap : 0;
    st->rack_util[r] = (uint32_t)(u > 1000000u ? 1000000u : u);
    for (uint32_t k = 0; k < st->nactive; k++) {
        uint32_t s = st->active[k];
        uint64_t *t = st->tree[s];
        uint32_t i = L + r;
        t[i] = leaf_key(nx, r, s);
        for (i >>= 1; i; i >>= 1) {
            uint64_t a = t[2 * i], b = t[2 * i + 1];
            t[i] = a < b ? a : b;
        }
    }
}

/* Recomputes fit flags of machine m for every SKU; adjusts rack counters. */
static void machine_refit(berth_nexus *nx, uint32_t m)
{
    berth_nexus_state *st = nx->state;
    uint32_t r = nx->machines[m].rack;
    uint8_t *f = st->fit + (size_t)m * st->nskus;
    uint32_t *fc = st->fit_cnt + (size_t)r * st->nskus;
    uint32_t *xc = st->xlfit_cnt + (size_t)r * st->nskus;
    int hosts_xl = st->xl_cnt[m] > 0;
    for (uint32_t a = 0; a < st->nactive; a++) {
        uint32_t s = st->active[a];
        nexus_req rq;
        sku_req(nx, s, &rq);
        uint8_t nf = 0;
        if (st->sched[m] && nexus_machine_fits(nx, m, &rq))
            nf = NEXUS_FIT | (hosts_xl ? NEXUS_XLFIT : 0);
        uint8_t of = f[s];
        if (nf == of)
            continue;
        fc[s] += (nf & NEXUS_FIT ? 1u : 0u) - (of & NEXUS_FIT ? 1u : 0u);
        xc[s] += (nf & NEXUS_XLFIT ? 1u : 0u) - (of & NEXUS_XLFIT ? 1u : 0u);
        f[s] = nf;
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
    st->tree = calloc(S, sizeof *st->tree);
    st->active = calloc(S, sizeof *st->active);
    st->allowed = calloc(R, 1);
    if (!st->sched || !st->xl_cnt || !st->ctx_cluster_cnt || !st->ctx_cluster_xl || !st->fit ||
        !st->rack_cap_cpu || !st->rack_used_cpu || !st->rack_util || !st->ctx_pool_cnt ||
        !st->ctx_cluster_rack || !st->fit_cnt || !st->xlfit_cnt || !st->tree || !st->active ||
        !st->allowed)
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
    if (!t)
        return BERTH_ENOMEM;
    nexus_req rq;
    sku_req(nx, s, &rq);
    for (uint32_t m = 0; m < nx->nmachines; m++) {
        uint8_t f = 0;
        if (st->sched[m] && nexus_machine_fits(nx, m, &rq))
            f = NEXUS_FIT | (st->xl_cnt[m] > 0 ? NEXUS_XLFIT : 0);
        st->fit[(size_t)m * st->nskus + s] = f;
        uint32_t r = nx->machines[m].rack;
        st->fit_cnt[(size_t)r * st->nskus + s] += f & NEXUS_FIT ? 1u : 0u;
        st->xlfit_cnt[(size_t)r * st->nskus + s] += f & NEXUS_XLFIT ? 1u : 0u;
    }
    for (uint32_t i = 0; i < 2 * L; i++)
        t[i] = UINT64_MAX;
    for (uint32_t r = 0; r < nx->nracks; r++)
        t[L + r] = leaf_key(nx, r, s);
    for (uint32_t i = L; --i > 0;)
        t[i] = t[2 * i] < t[2 * i + 1] ? t[2 * i] : t[2 * i + 1];
    st->tree[s] = t;
    st->active[st->nactive++] = s;
    return 0;
}

static int touch(uint32_t **arr, uint32_t *n, uint32_t *cap, uint32_t v)
{
    if (nexus_grow((void **)arr, cap, *n + 1, sizeof **arr))
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

/* Exact rack key for a rack holding VMs of the context cluster. */
static u128 rack_exact(const berth_nexus *nx, uint32_t r, const nexus_req *rq, uint64_t bound)
{
    const berth_nexus_state *st = nx->state;
    const berth_rack *rk = &nx->racks[r];
    uint32_t best_k2 = UINT32_MAX, best_noxl = 1;
    for (uint32_t m = rk->first_machine; m < rk->first_machine + rk->nmachines; m++) {
        if (!(st->fit[(size_t)m * st->nskus + rq->sku] & NEXUS_FIT))
            continue;
        uint32_t k2 = st->ctx_cluster_cnt[m];
        uint32_t noxl = rq->xl ? !(st->xl_cnt[m] > st->ctx_cluster_xl[m]) : 0;
        if (k2 < best_k2 || (k2 == best_k2 && noxl < best_noxl)) {
            best_k2 = k2;
            best_noxl = noxl;
        }
    }
    if (best_k2 == UINT32_MAX)
        return ~(u128)0;
    uint64_t key = pack_key((uint32_t)(bound >> KEY_PC_SHIFT), best_noxl, st->rack_util[r], r);
    return exact_of(key, best_k2);
}

int nexus_narrow(void *state, const void *req, uint32_t *cand, uint32_t cap)
{
    const berth_nexus *nx = state;
    const nexus_req *rq = req;
    const berth_nexus_state *st = nx->state;
    if (!st->use_index || st->tiebreak == BERTH_TIE_RANDOM)
        return -1;
    uint32_t L = st->leaves;
    const uint64_t *t = st->tree[rq->sku];
    if (!t)
        return -1;
    u128 best = ~(u128)0;
    uint32_t best_rack = BERTH_NEXUS_NONE;
    uint32_t stack[64];
    int sp = 0;
    stack[sp++] = 1;
    while (sp) {
        uint32_t i = stack[--sp];
        uint64_t k = t[i];
        if (k == UINT64_MAX || exact_of(k, 0) >= best)
            continue;
        if (i >= L) {
            uint32_t r = i - L;
            if (rq->allowed && !rq->allowed[r])
                continue;
            u128 ex = st->ctx_cluster_rack[r] ? rack_exact(nx, r, rq, k) : exact_of(k, 0);
            if (ex < best) {
                best = ex;
                best_rack = r;
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
    const berth_rack *rk = &nx->racks[best_rack];
    if (rk->nmachines > cap)
        return -1;
    /* the rack's machines that fit (the filters re-check them) */
    uint32_t n = 0;
    const uint8_t *fit = st->fit + rq->sku;
    size_t stride = st->nskus;
    for (uint32_t m = rk->first_machine; m < rk->first_machine + rk->nmachines; m++)
        if (fit[(size_t)m * stride] & NEXUS_FIT)
            cand[n++] = m;
    return (int)n;
}
