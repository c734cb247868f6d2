/* capacity/scaledown.c - scale-down (SPEC 5): existing nodes of a virtual
 * node group, least utilised first (max of cpu and memory requested over
 * allocatable, DaemonSet and mirror pods excluded; ties by name), are
 * removed when every pod on them moves to the remaining existing nodes
 * through the kube scheduler. A node is kept when its group is at
 * minNodes, a pod is labelled spotinst.io/restrict-scale-down: "true" or
 * annotated cluster-autoscaler.kubernetes.io/safe-to-evict: "false", a
 * PodDisruptionBudget allows fewer evictions than the node needs (the
 * allowance is spent across the plan), a pod fits nowhere else, or the
 * removal would break the group's headroom. DaemonSet pods are ignored. */
#include "capacity/state.h"

#include "berth/grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int pdb_matches(const berth_kpdb *b, const berth_kpod *p)
{
    return !strcmp(b->ns, p->ns) && berth_selector_matches(&b->selector, &p->labels);
}

/* status.disruptionsAllowed, else from the matching pods (all taken as
 * healthy). */
static int64_t pdb_allowed(const berth_kcluster *k, const berth_kpdb *b)
{
    if (b->has_disruptions_allowed)
        return b->disruptions_allowed;
    int64_t expected = 0;
    for (uint32_t i = 0; i < k->npods; i++)
        expected += !k->pods[i].terminating && pdb_matches(b, &k->pods[i]);
    int64_t desired = 0;
    if (b->has_min_available)
        desired = b->min_pct ? (b->min_available * expected + 99) / 100 : b->min_available;
    else if (b->has_max_unavailable)
        desired = expected - (b->max_pct ? (b->max_unavailable * expected + 99) / 100
                                         : b->max_unavailable);
    int64_t a = expected - desired;
    return a > 0 ? a : 0;
}

static int movable(const capacity_pass *s, uint32_t pod)
{
    const berth_kpod *p = &s->m->kube.pods[pod];
    return !capacity_pod_is_daemon(p) && !s->m->pod_info[pod].mirror && !p->terminating;
}

static double utilisation(const capacity_pass *s, uint32_t n)
{
    const berth_kcluster *k = &s->m->kube;
    int64_t cpu = 0, mem = 0;
    for (uint32_t p = 0; p < k->npods; p++)
        if (s->pod_node[p] == n && movable(s, p)) {
            cpu += k->pods[p].req[BERTH_KRES_CPU];
            mem += k->pods[p].req[BERTH_KRES_MEMORY];
        }
    const capacity_node *c = &s->n[n];
    double u1 = c->alloc[0] > 0 ? (double)cpu / (double)c->alloc[0] : 0;
    double u2 = c->alloc[1] > 0 ? (double)mem / (double)c->alloc[1] : 0;
    return u1 > u2 ? u1 : u2;
}

static const capacity_pass *sort_s;
static const double *sort_u;
static int cmp_util(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (sort_u[x] != sort_u[y])
        return sort_u[x] < sort_u[y] ? -1 : 1;
    return strcmp(sort_s->n[x].k->name, sort_s->n[y].k->name);
}

static int block(capacity_pass *s, uint32_t node, const char *fmt, const char *a, const char *b)
{
    berth_aplan *p = s->plan;
    if (berth_grow((void **)&p->blocked, &p->capblocked, p->nblocked + 1, sizeof *p->blocked, 0))
        return BERTH_ENOMEM;
    p->blocked[p->nblocked].node = node;
    snprintf(p->blocked[p->nblocked].reason, sizeof p->blocked[p->nblocked].reason, fmt, a, b);
    p->nblocked++;
    return 0;
}

int capacity_scale_down(capacity_pass *s, berth_error *e)
{
    const berth_autoscale *m = s->m;
    const berth_kcluster *k = &m->kube;
    berth_aplan *plan = s->plan;
    uint32_t *cand = malloc((s->nexisting + 1) * sizeof *cand);
    double *util = calloc(s->nexisting + 1, sizeof *util);
    int64_t *pdb_left = calloc(k->npdbs + 1, sizeof *pdb_left);
    int64_t *pdb_need = calloc(k->npdbs + 1, sizeof *pdb_need);
    uint32_t *pods = malloc((k->npods + 1) * sizeof *pods);
    uint32_t *placed = malloc((k->npods + 1) * sizeof *placed);
    const char **why = calloc(k->npods + 1, sizeof *why);
    int rc = 0;
    if (!cand || !util || !pdb_left || !pdb_need || !pods || !placed || !why) {
        rc = BERTH_ENOMEM;
        goto out;
    }
    for (uint32_t i = 0; i < k->npdbs; i++)
        pdb_left[i] = pdb_allowed(k, &k->pdbs[i]);
    uint32_t nc = 0;
    for (uint32_t n = 0; n < s->nexisting; n++)
        if (s->n[n].vng >= 0) {
            util[n] = utilisation(s, n);
            cand[nc++] = n;
        }
    sort_s = s;
    sort_u = util;
    qsort(cand, nc, sizeof *cand, cmp_util);
    for (uint32_t ci = 0; ci < nc; ci++) {
        uint32_t n = cand[ci];
        capacity_node *c = &s->n[n];
        const berth_vng *v = &m->vngs[c->vng];
        if (s->vng_nodes[c->vng] - 1 < v->min_nodes) {
            char mn[32];
            snprintf(mn, sizeof mn, "%lld", (long long)v->min_nodes);
            if ((rc = block(s, n, "virtual node group %s is at minNodes %s", v->name, mn)))
                goto out;
            continue;
        }
        uint32_t npods = 0;
        char reason[256] = "";
        for (uint32_t p = 0; p < k->npods && !*reason; p++) {
            if (s->pod_node[p] != n || !movable(s, p))
                continue;
            const berth_kpod *kp = &k->pods[p];
            const char *r = berth_labels_get(&kp->labels, BERTH_RESTRICT_SCALE_DOWN);
            if (r && !strcmp(r, "true"))
                snprintf(reason, sizeof reason,
                         "pod %s/%s is labelled " BERTH_RESTRICT_SCALE_DOWN ": \"true\"", kp->ns,
                         kp->name);
            else if (m->pod_info[p].safe_to_evict == 0)
                snprintf(reason, sizeof reason,
                         "pod %s/%s is annotated " BERTH_SAFE_TO_EVICT ": \"false\"", kp->ns,
                         kp->name);
            pods[npods++] = p;
        }
        if (*reason) {
            if ((rc = block(s, n, "%s%s", reason, "")))
                goto out;
            continue;
        }
        /* PDBs: this node's evictions against what is left of each budget */
        memset(pdb_need, 0, (k->npdbs + 1) * sizeof *pdb_need);
        for (uint32_t i = 0; i < npods && !*reason; i++)
            for (uint32_t b = 0; b < k->npdbs && !*reason; b++)
                if (pdb_matches(&k->pdbs[b], &k->pods[pods[i]]) && ++pdb_need[b] > pdb_left[b])
                    snprintf(reason, sizeof reason,
                             "PodDisruptionBudget %s/%s allows %lld more disruption(s), the node "
                             "needs %lld", k->pdbs[b].ns, k->pdbs[b].name,
                             (long long)pdb_left[b], (long long)pdb_need[b]);
        if (*reason) {
            if ((rc = block(s, n, "%s%s", reason, "")))
                goto out;
            continue;
        }
        /* simulate: the remaining existing nodes take every pod */
        for (uint32_t i = 0; i < npods; i++)
            capacity_unplace(s, pods[i]);
        c->removed = 1;
        if ((rc = capacity_schedule(s, pods, npods, 0, placed, why)))
            goto out;
        int all = 1;
        for (uint32_t i = 0; i < npods && all; i++)
            if (placed[i] == BERTH_KUBE_NONE) {
                all = 0;
                const char *w = why[i] && strncmp(why[i], "0/0 ", 4) ? why[i]
                                                                   : "no other node to move to";
                snprintf(reason, sizeof reason, "pod %s/%s fits no other node: %s",
                         k->pods[pods[i]].ns, k->pods[pods[i]].name, w);
            }
        if (all) {
            for (uint32_t i = 0; i < npods; i++)
                capacity_place(s, pods[i], placed[i]);
            s->vng_nodes[c->vng]--;
            for (uint32_t h = 0; all && h < v->nheadroom; h++)
                if (capacity_headroom_gap(s, (uint32_t)c->vng, h, NULL) < 0) {
                    all = 0;
                    snprintf(reason, sizeof reason,
                             "removing it would leave group %s short of its headroom", v->name);
                }
            if (!all) {
                s->vng_nodes[c->vng]++;
                for (uint32_t i = 0; i < npods; i++)
                    capacity_unplace(s, pods[i]);
            }
        }
        if (!all) {
            c->removed = 0;
            for (uint32_t i = 0; i < npods; i++)
                capacity_place(s, pods[i], n);
            if ((rc = block(s, n, "%s%s", reason, "")))
                goto out;
            continue;
        }
        for (uint32_t b = 0; b < k->npdbs; b++)
            pdb_left[b] -= pdb_need[b];
        if (berth_grow((void **)&plan->down, &plan->capdown, plan->ndown + 1, sizeof *plan->down,
                       0)) {
            rc = BERTH_ENOMEM;
            goto out;
        }
        berth_ascaledown *d = &plan->down[plan->ndown++];
        memset(d, 0, sizeof *d);
        d->node = n;
        d->vng = (uint32_t)c->vng;
        d->utilisation = util[n];
        d->moves = malloc((npods + 1) * sizeof *d->moves);
        if (!d->moves) {
            rc = BERTH_ENOMEM;
            goto out;
        }
        for (uint32_t i = 0; i < npods; i++)
            d->moves[d->nmoves++] = (berth_amove){pods[i], placed[i]};
    }
out:
    free(cand);
    free(util);
    free(pdb_left);
    free(pdb_need);
    free(pods);
    free(placed);
    free(why);
    if (rc)
        rc = berth_error_set(e, rc, "out of memory planning scale-down");
    return rc;
}
