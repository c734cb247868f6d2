/* crosslayer/drain.c - a node drain as the eviction API answers it
 * (kubectl drain's loop against pods/eviction): which PodDisruptionBudgets
 * cover each pod, how many of their pods are healthy (kept incrementally as
 * pods stop and start), whether one eviction is allowed now (desired
 * healthy from berth_kpdb_desired, kube/pdb.c; a pod under two budgets is
 * refused; an unhealthy pod goes when the budget is healthy or its policy
 * is AlwaysAllow), karpenter.sh/do-not-disrupt (read as the disruption
 * planner reads it: berth_dpod_dnd_active), and the workload each pod
 * counts toward. */
#include "crosslayer/state.h"
#include "berth/grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DND "karpenter.sh/do-not-disrupt"

int xl_is_daemon(const berth_kpod *p)
{
    return p->owner_kind && !strcmp(p->owner_kind, "DaemonSet");
}

void xl_set_healthy(berth_xl_cluster *c, uint32_t pod, int h)
{
    h = h && c->ready[pod];
    if (c->healthy[pod] == h)
        return;
    c->healthy[pod] = (uint8_t)h;
    for (uint32_t i = c->pp_start[pod]; i < c->pp_start[pod + 1]; i++)
        c->pdb_healthy[c->pp[i]] += h ? 1 : -1;
}

int xl_may_evict(const berth_xl_cluster *c, uint32_t pod, int64_t now, char *why, size_t size)
{
    const berth_kcluster *k = &c->k;
    const berth_kpod *p = &k->pods[pod];
    if (berth_dpod_dnd_active(&c->dnd[pod], now)) {
        snprintf(why, size, "pod has annotation " DND);
        return 0;
    }
    uint32_t n = c->pp_start[pod + 1] - c->pp_start[pod];
    if (n == 0)
        return 1;
    if (n > 1) {
        snprintf(why, size, "This pod has more than one PodDisruptionBudget, which the eviction "
                            "subresource does not support.");
        return 0;
    }
    uint32_t b = c->pp[c->pp_start[pod]];
    const berth_kpdb *d = &k->pdbs[b];
    int64_t desired = berth_kpdb_desired(d, c->pdb_expected[b]);
    if (!c->healthy[pod] && (d->always_allow || c->pdb_healthy[b] >= desired))
        return 1; /* an unhealthy pod: upstream's unhealthyPodEvictionPolicy */
    if (c->pdb_healthy[b] - desired > 0)
        return 1;
    snprintf(why, size,
             "Cannot evict pod as it would violate the pod's disruption budget "
             "(PodDisruptionBudget %s/%s: %lld healthy, %lld needed)",
             d->ns, d->name, (long long)c->pdb_healthy[b], (long long)desired);
    (void)p;
    return 0;
}

/* The PDBs of each pod (CSR), their expected counts, do-not-disrupt and
 * workload ids. O(pods x PDBs) once per cluster. */
int xl_drain_init(berth_xl_cluster *c, berth_error *e)
{
    const berth_kcluster *k = &c->k;
    uint32_t np = k->npods;
    c->pp_start = calloc((size_t)np + 1, sizeof *c->pp_start);
    c->pdb_expected = calloc(k->npdbs ? k->npdbs : 1, sizeof *c->pdb_expected);
    c->pdb_healthy = calloc(k->npdbs ? k->npdbs : 1, sizeof *c->pdb_healthy);
    c->dnd = calloc(np ? np : 1, sizeof *c->dnd);
    c->wl = malloc((np ? np : 1) * sizeof *c->wl);
    if (!c->pp_start || !c->pdb_expected || !c->pdb_healthy || !c->dnd || !c->wl)
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    uint32_t total = 0;
    for (uint32_t p = 0; p < np; p++) {
        for (uint32_t b = 0; b < k->npdbs; b++)
            if (!k->pods[p].terminating && berth_kpdb_matches(&k->pdbs[b], &k->pods[p]))
                total++;
        c->pp_start[p + 1] = total;
    }
    c->pp = malloc((total ? total : 1) * sizeof *c->pp);
    if (!c->pp)
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    for (uint32_t p = 0, at = 0; p < np; p++)
        for (uint32_t b = 0; b < k->npdbs; b++)
            if (!k->pods[p].terminating && berth_kpdb_matches(&k->pdbs[b], &k->pods[p])) {
                c->pp[at++] = b;
                c->pdb_expected[b]++;
            }
    berth_nameidx wi = {0};
    uint32_t capname = 0, capdesired = 0;
    for (uint32_t p = 0; p < np; p++) {
        const berth_kpod *pod = &k->pods[p];
        /* do-not-disrupt: "true" or a positive Go duration since the pod started */
        const char *v = berth_kube_annotation(pod->annotations, DND);
        int64_t ns = 0;
        if (v && !strcmp(v, "true"))
            c->dnd[p].dnd = 1;
        else if (v && !berth_go_duration_parse(v, &ns) && ns > 0) {
            c->dnd[p].dnd = 2;
            c->dnd[p].dnd_ns = ns;
            c->dnd[p].dnd_seconds = ns / 1000000000;
        }
        c->dnd[p].started = pod->has_started ? pod->started : pod->created;
        c->dnd[p].has_start_time = pod->has_started;
        if (pod->has_created && pod->created > c->now)
            c->now = pod->created;
        if (pod->has_started && pod->started > c->now)
            c->now = pod->started;
        c->wl[p] = BERTH_KUBE_NONE;
        if (!pod->workload || pod->terminating || xl_is_daemon(pod))
            continue;
        uint32_t had;
        int rc = berth_nameidx_add(&wi, pod->workload, c->nwl, &had);
        if (rc == BERTH_ENOMEM) {
            berth_nameidx_free(&wi);
            return berth_error_set(e, BERTH_ENOMEM, "out of memory");
        }
        if (rc == 1) {
            c->wl[p] = had;
            c->wl_desired[had]++;
            continue;
        }
        if (berth_grow((void **)&c->wl_name, &capname, c->nwl + 1, sizeof *c->wl_name, 0) ||
            berth_grow((void **)&c->wl_desired, &capdesired, c->nwl + 1, sizeof *c->wl_desired,
                       0)) {
            berth_nameidx_free(&wi);
            return berth_error_set(e, BERTH_ENOMEM, "out of memory");
        }
        c->wl_name[c->nwl] = pod->workload;
        c->wl_desired[c->nwl] = 1;
        c->wl[p] = c->nwl++;
    }
    berth_nameidx_free(&wi);
    c->wl_running = calloc(c->nwl ? c->nwl : 1, sizeof *c->wl_running);
    if (!c->wl_running)
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    return 0;
}
