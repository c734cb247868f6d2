/* fleet/model.c - the fleet model: member clusters, placements, bindings
 * and policy snapshots as flat vectors; finalize (name order, duplicate
 * names, binding resolution, current policy snapshots, obsolete bindings);
 * property lookup; RFC 3339 times; member-cluster eligibility
 * (SPEC 3.1). */
#include "fleet/state.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


void berth_fleet_init(berth_fleet *f)
{
    memset(f, 0, sizeof *f);
    berth_arena_init(&f->arena, 0);
}

void berth_fleet_free(berth_fleet *f)
{
    free(f->clusters);
    free(f->placements);
    free(f->bindings);
    free(f->snapshots);
    free(f->placement_order);
    berth_skips_free(&f->skipped);
    berth_arena_free(&f->arena);
    memset(f, 0, sizeof *f);
}

static int cmp_cluster(const void *a, const void *b)
{
    return strcmp(((const berth_member_cluster *)a)->name, ((const berth_member_cluster *)b)->name);
}

uint32_t berth_fleet_find_cluster(const berth_fleet *f, const char *name)
{
    if (f->finalized) {
        uint32_t lo = 0, hi = f->nclusters;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            int c = strcmp(f->clusters[mid].name, name);
            if (c == 0)
                return mid;
            if (c < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        return BERTH_FLEET_NONE;
    }
    for (uint32_t i = 0; i < f->nclusters; i++)
        if (!strcmp(f->clusters[i].name, name))
            return i;
    return BERTH_FLEET_NONE;
}

uint32_t berth_fleet_find_placement(const berth_fleet *f, const char *name)
{
    if (f->finalized && f->placement_order) {
        uint32_t lo = 0, hi = f->nplacements;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            int c = strcmp(f->placements[f->placement_order[mid]].name, name);
            if (c == 0)
                return f->placement_order[mid];
            if (c < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        return BERTH_FLEET_NONE;
    }
    for (uint32_t i = 0; i < f->nplacements; i++)
        if (!strcmp(f->placements[i].name, name))
            return i;
    return BERTH_FLEET_NONE;
}

/* placement indices by (name, index) */
static int cmp_pl_name(const void *a, const void *b, void *ctx)
{
    const berth_fleet *sort_fleet = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    int c = strcmp(sort_fleet->placements[x].name, sort_fleet->placements[y].name);
    return c ? c : (x < y ? -1 : x > y);
}

/* binding indices by (placement, cluster, index) */
static int cmp_binding(const void *a, const void *b, void *ctx)
{
    const berth_fleet *sort_fleet = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    const berth_fleet_binding *p = &sort_fleet->bindings[x], *q = &sort_fleet->bindings[y];
    if (p->placement != q->placement)
        return p->placement < q->placement ? -1 : 1;
    if (p->cluster != q->cluster)
        return p->cluster < q->cluster ? -1 : 1;
    return x < y ? -1 : x > y;
}

static const char *placement_kind_of(const char *key)
{
    return strchr(key, '/') ? "ResourcePlacement" : "ClusterResourcePlacement";
}

/* Snapshot i: its placement must exist; a latest one becomes the
 * placement's current snapshot (first_latest[p]: the first latest seen, to
 * reject a second; it must agree with berth.io/policy-snapshot). */
static int resolve_snapshot(berth_fleet *f, uint32_t i, uint32_t *first_latest, berth_error *e)
{
    const berth_fleet_psnap *ps = &f->snapshots[i];
    uint32_t p = berth_fleet_find_placement(f, ps->placement_name);
    if (p == BERTH_FLEET_NONE)
        return berth_error_set(e, BERTH_EINVAL,
                               "%s: metadata.labels.kubernetes-fleet.io/parent-CRP: no %s named "
                               "'%s'",
                               ps->where, placement_kind_of(ps->placement_name),
                               ps->placement_name);
    berth_fleet_placement *pl = &f->placements[p];
    if (!ps->latest)
        return 0;
    if (first_latest[p] != UINT32_MAX) {
        const berth_fleet_psnap *q = &f->snapshots[first_latest[p]];
        return berth_error_set(e, BERTH_EINVAL,
                               "%s: metadata.labels.kubernetes-fleet.io/is-latest-snapshot: "
                               "placement '%s' already has a latest policy snapshot, '%s' (%s)",
                               ps->where, pl->name, q->name, q->where);
    }
    if (pl->snapshot_annotation && strcmp(pl->snapshot_annotation, ps->name))
        return berth_error_set(e, BERTH_EINVAL,
                               "%s: metadata.name: the latest policy snapshot of placement '%s' "
                               "is '%s', but its annotation berth.io/policy-snapshot says '%s' "
                               "(%s)",
                               ps->where, pl->name, ps->name, pl->snapshot_annotation, pl->where);
    first_latest[p] = i;
    pl->snapshot = ps->name;
    return 0;
}

int berth_fleet_finalize(berth_fleet *f, berth_error *e)
{
    if (f->finalized)
        return 0;
    if (f->nclusters > 1)
        qsort(f->clusters, f->nclusters, sizeof *f->clusters, cmp_cluster);
    for (uint32_t i = 1; i < f->nclusters; i++)
        if (!strcmp(f->clusters[i].name, f->clusters[i - 1].name)) {
            const char *a = f->clusters[i - 1].where, *b = f->clusters[i].where;
            if (strcmp(a, b) > 0) {
                const char *t = a;
                a = b;
                b = t;
            }
            return berth_error_set(e, BERTH_EINVAL,
                                   "%s: metadata.name: a second MemberCluster named '%s' (first at %s)",
                                   b, f->clusters[i].name, a);
        }
    /* duplicate placement names: sort (name, index); report the earliest
     * placement that has an earlier namesake, with the first of its name */
    uint32_t *ord = malloc((f->nplacements ? f->nplacements : 1) * sizeof *ord);
    if (!ord)
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < f->nplacements; i++)
        ord[i] = i;
    if (f->nplacements > 1)
        qsort_r(ord, f->nplacements, sizeof *ord, cmp_pl_name, (void *)f);
    uint32_t dup_i = UINT32_MAX, dup_j = 0;
    for (uint32_t k = 1; k < f->nplacements; k++)
        if (!strcmp(f->placements[ord[k]].name, f->placements[ord[k - 1]].name) &&
            (k == 1 || strcmp(f->placements[ord[k - 1]].name, f->placements[ord[k - 2]].name)) &&
            ord[k] < dup_i) {
            dup_i = ord[k];       /* second of its name */
            dup_j = ord[k - 1];   /* first of its name */
        }
    if (dup_i != UINT32_MAX) {
        free(ord);
        return berth_error_set(e, BERTH_EINVAL,
                               "%s: metadata.name: a second %s named '%s' (first at %s)",
                               f->placements[dup_i].where,
                               placement_kind_of(f->placements[dup_i].name),
                               f->placements[dup_i].name,
                               f->placements[dup_j].where);
    }
    free(f->placement_order);
    f->placement_order = ord;
    f->finalized = 1;
    /* the current policy snapshot of each placement: its latest snapshot
     * object, else its annotation berth.io/policy-snapshot */
    uint32_t *first_latest = malloc((f->nplacements ? f->nplacements : 1) * sizeof *first_latest);
    if (!first_latest)
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < f->nplacements; i++) {
        f->placements[i].snapshot = f->placements[i].snapshot_annotation;
        first_latest[i] = UINT32_MAX;
    }
    int src = 0;
    for (uint32_t i = 0; i < f->nsnapshots && !src; i++)
        src = resolve_snapshot(f, i, first_latest, e);
    free(first_latest);
    if (src)
        return src;
    /* resolve every binding; the first failure in input order wins, and a
     * duplicate (placement, cluster) pair of Scheduled / Bound bindings
     * counts at its second binding. Unscheduled bindings are ignored by
     * the scheduler (KubeFleet's classifyBindings): their cluster may be
     * gone. */
    uint32_t res_i = UINT32_MAX;
    for (uint32_t i = 0; i < f->nbindings; i++) {
        berth_fleet_binding *b = &f->bindings[i];
        b->placement = berth_fleet_find_placement(f, b->placement_name);
        b->cluster = b->placement == BERTH_FLEET_NONE ? BERTH_FLEET_NONE
                                                       : berth_fleet_find_cluster(f, b->cluster_name);
        if (b->placement == BERTH_FLEET_NONE ||
            (b->cluster == BERTH_FLEET_NONE && b->state != BERTH_BINDING_UNSCHEDULED)) {
            res_i = i;
            break;
        }
        const char *cur = f->placements[b->placement].snapshot;
        b->obsolete = b->state != BERTH_BINDING_UNSCHEDULED && cur &&
                      strcmp(b->snapshot ? b->snapshot : "", cur) != 0;
    }
    uint32_t nb = res_i == UINT32_MAX ? f->nbindings : res_i;
    dup_i = UINT32_MAX;
    if (nb > 1) {
        uint32_t *bo = malloc(nb * sizeof *bo);
        if (!bo)
            return berth_error_set(e, BERTH_ENOMEM, "out of memory");
        uint32_t nbo = 0;
        for (uint32_t i = 0; i < nb; i++)
            if (f->bindings[i].state != BERTH_BINDING_UNSCHEDULED)
                bo[nbo++] = i;
        nb = nbo;
        qsort_r(bo, nb, sizeof *bo, cmp_binding, (void *)f);
        for (uint32_t k = 1; k < nb; k++) {
            const berth_fleet_binding *p = &f->bindings[bo[k]], *q = &f->bindings[bo[k - 1]];
            if (p->placement != q->placement || p->cluster != q->cluster)
                continue;
            if (k >= 2 && f->bindings[bo[k - 2]].placement == p->placement &&
                f->bindings[bo[k - 2]].cluster == p->cluster)
                continue;   /* third or later of the pair: the second is earlier */
            if (bo[k] < dup_i) {
                dup_i = bo[k];
                dup_j = bo[k - 1];
            }
        }
        free(bo);
    }
    if (dup_i != UINT32_MAX) {
        const berth_fleet_binding *b = &f->bindings[dup_i];
        return berth_error_set(e, BERTH_EINVAL,
                               "%s: spec.targetCluster: placement '%s' already has a binding "
                               "to cluster '%s' (%s)",
                               b->where, b->placement_name, b->cluster_name,
                               f->bindings[dup_j].where);
    }
    if (res_i != UINT32_MAX) {
        const berth_fleet_binding *b = &f->bindings[res_i];
        if (b->placement == BERTH_FLEET_NONE)
            return berth_error_set(e, BERTH_EINVAL,
                                   "%s: metadata.labels.kubernetes-fleet.io/parent-CRP: no %s "
                                   "named '%s'",
                                   b->where, placement_kind_of(b->placement_name),
                                   b->placement_name);
        return berth_error_set(e, BERTH_EINVAL,
                               "%s: spec.targetCluster: no MemberCluster named '%s'", b->where,
                               b->cluster_name);
    }
    return 0;
}

static const berth_quantity *find_prop(const berth_member_cluster *m, const char *name)
{
    for (uint32_t i = 0; i < m->nprops; i++)
        if (!strcmp(m->props[i].name, name))
            return &m->props[i].value;
    return NULL;
}

const berth_quantity *berth_fleet_cluster_prop(const berth_fleet *f, uint32_t c, const char *name)
{
    const berth_member_cluster *m = &f->clusters[c];
    const berth_quantity *q = find_prop(m, name);
    if (q)
        return q;
    /* node-count has two spellings (SPEC 3) */
    static const char *const nc[] = {"kubernetes-fleet.io/node-count",
                                     "kubernetes.azure.com/node-count"};
    if (!strcmp(name, nc[0]))
        return find_prop(m, nc[1]);
    if (!strcmp(name, nc[1]))
        return find_prop(m, nc[0]);
    return NULL;
}


static void fmt_age(int64_t ms, char *buf, size_t size)
{
    int64_t s = ms / 1000;
    if (s >= 3600)
        snprintf(buf, size, "%" PRId64 "h%" PRId64 "m%" PRId64 "s", s / 3600, s / 60 % 60, s % 60);
    else
        snprintf(buf, size, "%" PRId64 "m%" PRId64 "s", s / 60, s % 60);
}

int berth_fleet_eligible(const berth_member_cluster *m, int64_t now_ms, char *buf, size_t size)
{
    char tmp[1];
    if (!buf) {
        buf = tmp;
        size = sizeof tmp;
    }
    if (m->leaving) {
        snprintf(buf, size, "cluster is leaving the fleet (deletionTimestamp is set)");
        return 0;
    }
    if (!m->has_agent) {
        snprintf(buf, size,
                 "cluster is not connected to the fleet: member agent status is not available");
        return 0;
    }
    if (!m->joined) {
        snprintf(buf, size, "cluster is not connected to the fleet: member agent is not joined yet");
        return 0;
    }
    if (m->heartbeat_ms == BERTH_FLEET_TIME_UNSET) {
        snprintf(buf, size, "cluster is not connected to the fleet: no heartbeat received");
        return 0;
    }
    if (now_ms - m->heartbeat_ms > BERTH_FLEET_HEARTBEAT_TIMEOUT_MS) {
        char age[48];
        fmt_age(now_ms - m->heartbeat_ms, age, sizeof age);
        snprintf(buf, size,
                 "cluster is not connected to the fleet: no recent heartbeat signals (%s since "
                 "last heartbeat)",
                 age);
        return 0;
    }
    if (m->healthy < 0) {
        snprintf(buf, size, "cluster is not connected to the fleet: health condition from member "
                            "agent is not available");
        return 0;
    }
    if (m->healthy == 0 && (m->healthy_since_ms == BERTH_FLEET_TIME_UNSET ||
                            now_ms - m->healthy_since_ms > BERTH_FLEET_HEALTH_TIMEOUT_MS)) {
        snprintf(buf, size, "cluster is not healthy for more than 5m0s");
        return 0;
    }
    if (size)
        buf[0] = 0;
    return 1;
}
