/* kube/view.c - what-if scheduling on a view of a cluster (used by the
 * disruption and autoscaling planners): a shallow copy with some nodes
 * excluded, hypothetical nodes added, the pods of included nodes bound and
 * the chosen pods pending, scheduled by berth_kube_schedule. Each call
 * rebuilds the whole scheduler state (O(nodes + pods)); for repeated
 * questions on one cluster use a what-if session (berth_ksession_*,
 * kube/session.c), which changes one state in place and rolls back, with
 * the same decisions. berth_kube_queue_sort gives planners that place pods
 * one at a time the kube queue order. */
#include "berth/kube.h"
#include "kube/state.h"

#include <stdlib.h>
#include <string.h>

void berth_kube_queue_sort(const berth_kcluster *k, uint32_t *pods, uint32_t n)
{
    kube_queue_sort(k, pods, n);
}

typedef struct view_ctx {
    uint32_t base, npending;
    const char **why;
    berth_arena *a;
    int oom;
} view_ctx;

static void on_decision(void *vc, const berth_kcluster *k, const berth_kdecision *d)
{
    view_ctx *c = vc;
    (void)k;
    if (d->node != BERTH_KUBE_NONE || d->pod < c->base || d->pod - c->base >= c->npending)
        return;
    const char *s = d->summary ? d->summary : "no node fits";
    c->why[d->pod - c->base] = berth_arena_strdup(c->a, s);
    if (!c->why[d->pod - c->base])
        c->oom = 1;
}

int berth_kube_schedule_view(const berth_kcluster *k, const berth_kview *vw, const char **placed,
                             const char **why, berth_arena *a, berth_error *e)
{
    berth_kcluster v;
    memset(&v, 0, sizeof v);
    berth_arena_init(&v.arena, 0);
    memcpy(v.res_names, k->res_names, sizeof v.res_names);
    v.nres = k->nres;
    v.workloads = k->workloads;
    v.nworkloads = k->nworkloads;
    v.namespaces = k->namespaces;
    v.nnamespaces = k->nnamespaces;
    v.profiles = k->profiles;
    v.nprofiles = k->nprofiles;
    v.percentage_of_nodes_to_score = k->percentage_of_nodes_to_score;
    v.nodes = malloc(((size_t)k->nnodes + vw->nextra + 1) * sizeof *v.nodes);
    v.pods = malloc(((size_t)k->npods + vw->npending + 1) * sizeof *v.pods);
    int rc = 0;
    if (!v.nodes || !v.pods) {
        rc = berth_error_set(e, BERTH_ENOMEM, "out of memory");
        goto out;
    }
    for (uint32_t n = 0; n < k->nnodes; n++)
        if (!vw->excluded || !vw->excluded[n])
            v.nodes[v.nnodes++] = k->nodes[n];
    for (uint32_t h = 0; h < vw->nextra; h++)
        v.nodes[v.nnodes++] = vw->extra[h];
    for (uint32_t p = 0; p < k->npods; p++) {
        uint32_t n = vw->pod_node[p];
        if (n == BERTH_KUBE_NONE || (vw->excluded && vw->excluded[n]) || k->pods[p].terminating)
            continue;
        berth_kpod pc = k->pods[p];
        pc.node_name = k->nodes[n].name;
        v.pods[v.npods++] = pc;
    }
    view_ctx c = {v.npods, vw->npending, why, a, 0};
    for (uint32_t i = 0; i < vw->npending; i++) {
        berth_kpod pc = k->pods[vw->pending[i]];
        pc.node_name = vw->bind && vw->bind[i] ? vw->bind[i] : NULL;
        pc.assumed = 0;
        pc.terminating = 0;
        v.pods[v.npods++] = pc;
        if (why)
            why[i] = NULL;
    }
    berth_kube_options opt = {0};
    opt.tiebreak = BERTH_TIE_FIRST;
    opt.profile = vw->profile;
    opt.cancel = vw->cancel;
    opt.tail = vw->extra_last ? vw->nextra : 0;
    if (why && a) {
        opt.on_decision = on_decision;
        opt.ctx = &c;
    }
    rc = berth_kube_schedule(&v, &opt, e);
    if (rc == BERTH_ENOFIT)
        rc = 0;
    if (!rc && c.oom)
        rc = berth_error_set(e, BERTH_ENOMEM, "out of memory");
    for (uint32_t i = 0; !rc && i < vw->npending; i++)
        placed[i] = v.pods[c.base + i].node_name;
out:
    free(v.nodes);
    free(v.pods);
    berth_arena_free(&v.arena);
    return rc;
}
