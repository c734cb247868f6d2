/* nexus/advise.c - best-practice advice over a placed estate (SPEC 1.7). */
#include "berth/advice.h"
#include "nexus/state.h"

#include <stdlib.h>
#include <string.h>

typedef struct advbuf {
    berth_nexus *nx;
    berth_advice *items;
    uint32_t n, cap;
} advbuf;

static int add(advbuf *b, berth_advice_kind k, const char *code, uint32_t cluster, uint32_t pool,
               const char *fmt, ...) __attribute__((format(printf, 6, 7)));

#include <stdarg.h>
static int add(advbuf *b, berth_advice_kind k, const char *code, uint32_t cluster, uint32_t pool,
               const char *fmt, ...)
{
    if (b->n == b->cap) {
        uint32_t nc = b->cap ? b->cap * 2 : 16;
        berth_advice *p = berth_arena_alloc(&b->nx->arena, nc * sizeof *p);
        if (!p)
            return BERTH_ENOMEM;
        if (b->n)
            memcpy(p, b->items, b->n * sizeof *p);
        b->items = p;
        b->cap = nc;
    }
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    berth_advice *a = &b->items[b->n++];
    a->kind = k;
    a->code = code;
    a->cluster = cluster;
    a->pool = pool;
    a->message = berth_arena_strdup(&b->nx->arena, msg);
    return a->message ? 0 : BERTH_ENOMEM;
}

static int64_t pool_vcpu(const berth_nexus *nx, const berth_pool *p)
{
    return (int64_t)p->count * nx->skus[p->sku].host_vcpu;
}

static int64_t cluster_vcpu(const berth_nexus *nx, const berth_cluster *c)
{
    int64_t t = 0;
    for (uint32_t i = 0; i < c->npools; i++)
        t += pool_vcpu(nx, &nx->pools[c->pools[i]]);
    return t;
}

/* Zones alternate when no two chosen racks are adjacent in site order. */
static int alternating(const berth_pool *p)
{
    for (uint32_t i = 0; i < p->nzones; i++)
        for (uint32_t j = 0; j < p->nzones; j++)
            if (p->zones[i] + 1 == p->zones[j])
                return 0;
    return 1;
}

int berth_nexus_advise(berth_nexus *nx, berth_advice **out, uint32_t *n)
{
    advbuf b = {nx, NULL, 0, 0};
    int rc = 0;
    for (uint32_t ci = 0; ci < nx->nclusters && !rc; ci++) {
        const berth_cluster *c = &nx->clusters[ci];
        if (c->status == BERTH_CLUSTER_DELETED)
            continue;
        /* larger clusters before smaller ones */
        int64_t mine = cluster_vcpu(nx, c);
        for (uint32_t cj = 0; cj < ci && !rc; cj++) {
            const berth_cluster *o = &nx->clusters[cj];
            if (o->status == BERTH_CLUSTER_DELETED)
                continue;
            int64_t theirs = cluster_vcpu(nx, o);
            if (theirs < mine) {
                rc = add(&b, BERTH_ADVICE_CLUSTER_ORDER, "ClusterOrder", ci, BERTH_NEXUS_NONE,
                         "cluster %s (%lld host vCPU) was created after the smaller cluster %s "
                         "(%lld): create larger clusters first so they pack better",
                         c->name, (long long)mine, o->name, (long long)theirs);
                break;
            }
        }
        uint32_t cp_pool = BERTH_NEXUS_NONE;
        for (uint32_t pi = 0; pi < c->npools && !rc; pi++) {
            uint32_t pid = c->pools[pi];
            const berth_pool *p = &nx->pools[pid];
            const berth_sku *sku = &nx->skus[p->sku];
            if (p->role == BERTH_ROLE_CONTROL_PLANE)
                cp_pool = pid;
            if (p->role == BERTH_ROLE_WORKER && p->nzones) {
                int small_ok = p->count <= 3 && p->nzones >= (uint32_t)p->count && alternating(p);
                if (!small_ok)
                    rc = add(&b, BERTH_ADVICE_POOL_ZONES, "PoolAvailabilityZones", ci, pid,
                             "pool %s/%s pins %d VMs to %u of %u racks with availabilityZones: "
                             "avoid it, or make the set as large as possible (small pools of 2-3 "
                             "VMs may use alternating racks such as [1,3,5,7])",
                             c->name, p->name, p->count, p->nzones, nx->nracks);
            }
            /* larger pools before smaller ones, above all extra-large SKUs */
            for (uint32_t pj = 0; pj < pi && !rc; pj++) {
                const berth_pool *o = &nx->pools[c->pools[pj]];
                if (o->role != BERTH_ROLE_WORKER || p->role != BERTH_ROLE_WORKER)
                    continue;
                int both_xl = sku->extra_large && nx->skus[o->sku].extra_large;
                if ((both_xl && o->count < p->count) ||
                    (!both_xl && pool_vcpu(nx, o) < pool_vcpu(nx, p))) {
                    rc = add(&b, BERTH_ADVICE_POOL_ORDER, "PoolOrder", ci, pid,
                             "pool %s/%s (%d x %s) comes after the smaller pool %s (%d x %s): "
                             "list larger pools first%s",
                             c->name, p->name, p->count, sku->name, o->name, o->count,
                             nx->skus[o->sku].name,
                             both_xl ? ", above all for extra-large SKUs" : "");
                    break;
                }
            }
        }
        /* control-plane majority in one rack */
        if (!rc && cp_pool != BERTH_NEXUS_NONE && nx->pools[cp_pool].nvms > 1) {
            const berth_pool *p = &nx->pools[cp_pool];
            uint32_t *per = calloc(nx->nracks, sizeof *per);
            if (!per)
                return BERTH_ENOMEM;
            for (uint32_t i = 0; i < p->nvms; i++)
                per[nx->machines[nx->vms[p->vms[i]].machine].rack]++;
            for (uint32_t r = 0; r < nx->nracks; r++)
                if (2 * per[r] > p->nvms) {
                    rc = add(&b, BERTH_ADVICE_CONTROL_PLANE_RACK, "ControlPlaneRackMajority", ci,
                             cp_pool,
                             "cluster %s has %u of its %u control-plane VMs in rack %s: a "
                             "runtime upgrade of that rack takes its control plane below quorum",
                             c->name, per[r], p->nvms, nx->racks[r].name);
                    break;
                }
            free(per);
        }
        /* failed: reduce the count before the SKU */
        for (uint32_t pi = 0; pi < c->npools && !rc && c->status == BERTH_CLUSTER_FAILED; pi++) {
            uint32_t pid = c->pools[pi];
            const berth_pool *p = &nx->pools[pid];
            if ((uint32_t)p->count <= p->nvms)
                continue;
            uint64_t *per = calloc(nx->nracks, sizeof *per);
            if (!per)
                return BERTH_ENOMEM;
            uint64_t fit = berth_nexus_max_fit(nx, p->sku, per);
            if (p->nzones) {
                fit = 0;
                for (uint32_t z = 0; z < p->nzones; z++)
                    fit += per[p->zones[z]];
            }
            free(per);
            uint64_t have = p->nvms;
            if (fit >= (uint64_t)p->count - have)
                continue; /* this pool's count fits now: it was released with its cluster */
            rc = add(&b, BERTH_ADVICE_REDUCE_COUNT, "ReduceCountBeforeSku", ci, pid,
                     "pool %s/%s failed at %d x %s: %llu fit now%s; reduce the count before "
                     "choosing a smaller SKU (VMs are NUMA-aligned, so a smaller SKU at the same "
                     "count often fails too)",
                     c->name, p->name, p->count, nx->skus[p->sku].name,
                     (unsigned long long)(fit + have), p->nzones ? " in its zones" : "");
        }
    }
    *out = b.items;
    *n = b.n;
    return rc;
}
