/* kube/fit.c - `berth kube fit`: how many more replicas of one workload fit
 * now beyond those it runs, where they land, and why the next one does not
 * (the question kubernetes-sigs/cluster-capacity answers, with berth's full
 * scheduler: every filter, score, profile and the queue).
 *
 * The cluster's own pending pods are scheduled first (as kube schedule
 * would, without preemption); then replicas of the workload are added in
 * batches of 1, 2, 4, ... (named as its controller would name them:
 * berth_kube_expand_more) and scheduled, until one does not fit or the
 * limit is reached. Identical replicas in a fixed state: once one fails,
 * every later one fails too, so the batches waste at most as many
 * scheduling cycles as replicas placed. */
#include "berth/kube.h"
#include "berth/grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int scalable(const berth_kcontroller *c)
{
    return c->type != BERTH_KCTL_DAEMONSET;
}

static int same_ctl(const berth_kcontroller *a, const berth_kcontroller *b)
{
    return !strcmp(a->kind, b->kind) && !strcmp(a->ns, b->ns) && !strcmp(a->name, b->name);
}

typedef struct fit_ctx {
    berth_kcluster *k;
    uint32_t first;           /* pods of the current batch: first.. */
    const char *reason;       /* the first unplaced replica's FitError */
} fit_ctx;

static void on_decision(void *vctx, const berth_kcluster *k, const berth_kdecision *d)
{
    fit_ctx *c = vctx;
    (void)k;
    if (c->reason || d->pod < c->first || d->node != BERTH_KUBE_NONE)
        return;
    c->reason = berth_arena_strdup(&c->k->arena, d->summary ? d->summary : "not scheduled");
}

/* appends n copies of a bare pod template named <name>-<seq> */
static int more_pods(berth_kcluster *k, const berth_kpod *t, uint32_t *seq, uint32_t n,
                     berth_error *e)
{
    if (berth_grow((void **)&k->pods, &k->cappods, k->npods + n, sizeof *k->pods, 1u << 24))
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < n; i++) {
        char buf[320];
        snprintf(buf, sizeof buf, "%s-%u", t->name, ++*seq);
        const char *name = berth_arena_strdup(&k->arena, buf);
        if (!name)
            return berth_error_set(e, BERTH_ENOMEM, "out of memory");
        berth_kpod *p = &k->pods[k->npods];
        *p = *t;
        p->name = name;
        p->order = k->npods++;
        p->node_name = NULL;
        p->assumed = 0;
        p->generated = 1;
    }
    return 0;
}

/* the index of node name in k's name-ordered nodes (k->nnodes when absent) */
static uint32_t node_index(const berth_kcluster *k, const char *name)
{
    uint32_t lo = 0, hi = k->nnodes;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (strcmp(k->nodes[mid].name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < k->nnodes && !strcmp(k->nodes[lo].name, name) ? lo : k->nnodes;
}

/* the nodes' free pod slots (allocatable pods less the pods bound there);
 * nodes are in name order once scheduled */
static uint64_t free_slots(const berth_kcluster *k)
{
    uint64_t total = 0;
    uint32_t *bound = calloc(k->nnodes ? k->nnodes : 1, sizeof *bound);
    if (!bound)
        return UINT32_MAX; /* no bound: the search's own cap applies */
    for (uint32_t p = 0; p < k->npods; p++)
        if (k->pods[p].node_name) {
            uint32_t nd = node_index(k, k->pods[p].node_name);
            if (nd < k->nnodes)
                bound[nd]++;
        }
    for (uint32_t n = 0; n < k->nnodes; n++)
        if (k->nodes[n].alloc_pods > (int64_t)bound[n])
            total += (uint64_t)(k->nodes[n].alloc_pods - bound[n]);
    free(bound);
    return total;
}

static int fit_run(berth_kcluster *k, uint32_t first_ctl, uint32_t first_pod, uint32_t max,
                   const berth_kprofile *profile, const berth_cancel *cancel, berth_kfit *out,
                   berth_error *e)
{
    memset(out, 0, sizeof *out);
    out->max = max;
    /* the subject: the first Deployment, ReplicaSet, ReplicationController,
     * StatefulSet or Job of the workload file, else its first pod */
    uint32_t subject = BERTH_KUBE_NONE;
    for (uint32_t c = first_ctl; c < k->ncontrollers && subject == BERTH_KUBE_NONE; c++)
        if (scalable(&k->controllers[c]))
            subject = c;
    berth_kpod tmpl;
    int bare = 0;
    if (subject != BERTH_KUBE_NONE) {
        /* the workload file's object replaces the cluster's (as if applied) */
        for (uint32_t c = 0; c < first_ctl; c++)
            if (same_ctl(&k->controllers[c], &k->controllers[subject])) {
                memmove(&k->controllers[c], &k->controllers[c + 1],
                        (k->ncontrollers - c - 1) * sizeof *k->controllers);
                k->ncontrollers--;
                subject--;
                first_ctl--;
                c--;
            }
        berth_kcontroller *ct = &k->controllers[subject];
        /* its running pods stay; berth_kube_expand adds none for it */
        ct->replicas = 0;
        ct->completions = ct->completions < 0 ? -1 : ct->succeeded;
        char buf[400];
        snprintf(buf, sizeof buf, "%s/%s/%s", ct->kind, ct->ns, ct->name);
        out->workload = berth_arena_strdup(&k->arena, buf);
    } else if (first_pod < k->npods) {
        bare = 1;
        tmpl = k->pods[first_pod];
        memmove(&k->pods[first_pod], &k->pods[first_pod + 1],
                (k->npods - first_pod - 1) * sizeof *k->pods);
        k->npods--;
        char buf[400];
        snprintf(buf, sizeof buf, "Pod/%s/%s", tmpl.ns, tmpl.name);
        out->workload = berth_arena_strdup(&k->arena, buf);
    } else
        return berth_error_set(e, BERTH_EINVAL,
                               "the workload file has no Deployment, ReplicaSet, "
                               "ReplicationController, StatefulSet, Job or Pod");
    if (!out->workload)
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    int rc = berth_kube_expand(k, e);
    if (rc)
        return rc;
    if (bare) {
        tmpl.workload = NULL;
        berth_kube_pod_requests(k, &tmpl);
    }
    /* the cluster as kube schedule leaves it (no preemption) */
    berth_kube_options opt = {.profile = profile, .tiebreak = BERTH_TIE_FIRST, .cancel = cancel};
    rc = berth_kube_schedule(k, &opt, e);
    if (rc && rc != BERTH_ENOFIT)
        return rc;
    const char *wl = out->workload;
    for (uint32_t p = 0; p < k->npods; p++) {
        berth_kpod *pod = &k->pods[p];
        if (!pod->terminating && !bare && pod->workload && !strcmp(pod->workload, wl)) {
            out->existing++;
            out->existing_placed += pod->node_name != NULL;
        }
        /* pods left pending sit out the replicas' runs (they failed; the
         * cluster only fills up) */
        if (!pod->node_name)
            pod->terminating = 1;
    }
    out->per_node = berth_arena_alloc(&k->arena, (k->nnodes ? k->nnodes : 1) * sizeof *out->per_node);
    if (!out->per_node)
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    memset(out->per_node, 0, (k->nnodes ? k->nnodes : 1) * sizeof *out->per_node);
    fit_ctx fc = {k, 0, NULL};
    opt.on_decision = on_decision;
    opt.ctx = &fc;
    uint32_t batch = 1, seq = 0, limit = max ? max : BERTH_KUBE_MAX_GENERATED;
    /* every replica takes a pod slot: no more than the free slots can fit,
     * so one past them always ends the search with a failure (and its
     * reason) without creating pods no node could hold */
    uint64_t slots = free_slots(k);
    if (!max && slots + 1 < limit)
        limit = (uint32_t)(slots + 1);
    while (out->fits < limit) {
        uint32_t n = batch < limit - out->fits ? batch : limit - out->fits;
        fc.first = k->npods;
        rc = bare ? more_pods(k, &tmpl, &seq, n, e) : berth_kube_expand_more(k, subject, n, e);
        if (rc)
            return rc;
        rc = berth_kube_schedule(k, &opt, e);
        if (rc && rc != BERTH_ENOFIT)
            return rc;
        uint32_t placed = 0;
        for (uint32_t p = fc.first; p < k->npods; p++) {
            berth_kpod *pod = &k->pods[p];
            if (!pod->node_name)
                continue;
            placed++;
            uint32_t nd = node_index(k, pod->node_name);
            if (nd < k->nnodes)
                out->per_node[nd]++;
        }
        out->fits += placed;
        if (placed < n) {
            out->reason = fc.reason ? fc.reason : "not scheduled";
            return 0;
        }
        if (batch < (1u << 16))
            batch *= 2;
    }
    out->at_max = 1;
    return 0;
}

int berth_kube_fit(berth_kcluster *k, uint32_t first_ctl, uint32_t first_pod, uint32_t max,
                   const berth_kprofile *profile, const berth_cancel *cancel, berth_kfit *out,
                   berth_error *e)
{
    int rc = fit_run(k, first_ctl, first_pod, max, profile, cancel, out, e);
    if (rc == BERTH_ETIMEDOUT)
        memset(out, 0, sizeof *out); /* no partial answer */
    return rc;
}
