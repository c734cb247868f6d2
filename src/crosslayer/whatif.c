/* crosslayer/whatif.c - the kube view that follows the Nexus timeline
 * (berth_xl_on_step, called by berth_nexus_run after each step): per step,
 * or per batch of a runtime upgrade, the nodes whose VMs stop are cordoned
 * (excluded from the cluster's what-if session) and drained in rounds as
 * kubectl drain retries evictions (drain.c decides each one; evicted pods
 * are placed by the session, and once running count healthy again, which
 * may let the next eviction through); pods still refused after the rounds
 * hold the drain for its limit and then go down with the node and are
 * recreated; nodes that come back are uncordoned and pending pods retried.
 * Each phase is recorded (counts, moved and pending pods, holds, workloads
 * below desired, PDBs below their minimum). */
#include "crosslayer/state.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "berth/grow.h"

void berth_xl_init(berth_xl *x)
{
    memset(x, 0, sizeof *x);
    berth_arena_init(&x->arena, 0);
}

static void cluster_free(berth_xl_cluster *c)
{
    if (c->s)
        berth_ksession_close(c->s);
    berth_nameidx_free(&c->vm_nodes);
    free(c->vm_name);
    free(c->node_vm);
    free(c->down);
    free(c->next);
    free(c->draining);
    free(c->pod_node);
    free(c->healthy);
    free(c->ready);
    free(c->dnd);
    free(c->wl);
    free(c->pp_start);
    free(c->pp);
    free(c->pdb_expected);
    free(c->pdb_healthy);
    free(c->wl_name);
    free(c->wl_desired);
    free(c->wl_running);
    free(c->cand);
    free(c->ev);
    free(c->placed);
    free(c->why);
    free(c->pending);
    xl_buy_free(c);
    xl_saved_free(c);
    berth_kube_free(&c->k);
    free(c);
}

void berth_xl_free(berth_xl *x)
{
    for (uint32_t i = 0; i < x->nclusters; i++)
        cluster_free(x->clusters[i]);
    free(x->clusters);
    for (uint32_t i = 0; i < x->warnings.n; i++)
        free(x->warnings.items[i].kind);
    free(x->warnings.items);
    free(x->phases);
    free(x->pods);
    free(x->holds);
    free(x->shorts);
    free(x->pdbs);
    free(x->launches);
    for (uint32_t i = 0; i < x->norders; i++)
        free(x->orders[i].racks);
    free(x->orders);
    free(x->asrcs);
    berth_arena_free(&x->arena);
    memset(x, 0, sizeof *x);
}

int berth_xl_cluster_for(berth_xl *x, const char *cluster, berth_kcluster **k, uint32_t *index)
{
    for (uint32_t i = 0; i < x->nclusters; i++)
        if (!strcmp(x->clusters[i]->name, cluster)) {
            *k = &x->clusters[i]->k;
            if (index)
                *index = i;
            return 0;
        }
    if (berth_grow((void **)&x->clusters, &x->capclusters, x->nclusters + 1, sizeof *x->clusters, 0))
        return BERTH_ENOMEM;
    berth_xl_cluster *c = calloc(1, sizeof *c);
    char *name = berth_arena_strdup(&x->arena, cluster);
    if (!c || !name) {
        free(c);
        return BERTH_ENOMEM;
    }
    c->name = name;
    berth_kube_init(&c->k);
    x->clusters[x->nclusters] = c;
    if (index)
        *index = x->nclusters;
    x->nclusters++;
    *k = &c->k;
    return 0;
}

const char *berth_xl_cluster_name(const berth_xl *x, uint32_t cluster)
{
    return x->clusters[cluster]->name;
}

const berth_kcluster *berth_xl_kube(const berth_xl *x, uint32_t cluster)
{
    return &x->clusters[cluster]->k;
}

int berth_xl_prepare(berth_xl *x, const berth_nexus *nx, berth_error *e)
{
    for (uint32_t i = 0; i < x->nclusters; i++) {
        berth_xl_cluster *c = x->clusters[i];
        uint32_t s = 0;
        while (s < nx->nspecs && strcmp(nx->specs[s].name, c->name))
            s++;
        if (s == nx->nspecs)
            return berth_error_set(e, BERTH_EINVAL,
                                   "--workloads %s=...: no KubernetesCluster named '%s' in the "
                                   "estate",
                                   c->name, c->name);
        int rc = berth_kube_expand(&c->k, e);
        if (!rc)
            rc = xl_drain_init(c, e);
        if (!rc)
            rc = xl_buy_prepare(x, c, e);
        if (rc)
            return rc;
        for (uint32_t j = 0; j < c->k.skipped.n; j++) {
            const berth_skip *sk = &c->k.skipped.items[j];
            if (sk->message ? berth_skips_warn(&x->warnings, "cluster %s: %s", c->name, sk->kind)
                            : berth_skips_warn(&x->warnings, "cluster %s: skipped %u %s%s%s",
                                               c->name, sk->count, sk->kind,
                                               sk->note ? " " : "", sk->note ? sk->note : ""))
                return berth_error_set(e, BERTH_ENOMEM, "out of memory");
        }
    }
    return 0;
}

/* ---- recording ---- */

static const char *str(berth_xl *x, const char *s)
{
    return s ? berth_arena_strdup(&x->arena, s) : NULL;
}

int xl_push_pod(berth_xl *x, const berth_xl_cluster *c, uint32_t pod, const char *from,
                const char *to, const char *reason, int forced)
{
    if (berth_grow((void **)&x->pods, &x->cappods, x->npods + 1, sizeof *x->pods, 0))
        return BERTH_ENOMEM;
    const berth_kpod *p = &c->k.pods[pod];
    x->pods[x->npods++] = (berth_xl_pod){p->ns, p->name, from, to, reason, forced};
    return 0;
}

static int push_hold(berth_xl *x, const berth_xl_cluster *c, uint32_t pod, const char *reason)
{
    if (berth_grow((void **)&x->holds, &x->capholds, x->nholds + 1, sizeof *x->holds, 0))
        return BERTH_ENOMEM;
    const berth_kpod *p = &c->k.pods[pod];
    const char *r = str(x, reason);
    if (!r)
        return BERTH_ENOMEM;
    x->holds[x->nholds++] = (berth_xl_hold){p->ns, p->name, c->k.nodes[c->pod_node[pod]].name, r,
                                            BERTH_XL_DRAIN_LIMIT_MINUTES};
    return 0;
}

/* ---- one phase ---- */

static int node_down(const berth_nexus *nx, const berth_xl_cluster *c, uint32_t n,
                     const berth_upgrade_batch *bt)
{
    uint32_t v = c->node_vm[n];
    if (v == BERTH_XL_NONE)
        return 0;
    uint32_t m = nx->vms[v].machine;
    if (m == BERTH_NEXUS_NONE || nx->machines[m].down)
        return 1;
    return bt && m >= bt->first_machine && m < bt->first_machine + bt->machines_down;
}

/* Places pods[0..n) (unbound) through the session: placed ones become
 * healthy and are recorded as moved (from: their old node's name, or NULL
 * for a pending pod, recorded as recovered), the others go pending. */
static int place(berth_xl *x, berth_xl_cluster *c, berth_xl_phase *ph, uint32_t *pods, uint32_t n,
                 const char **from, int forced, int recovering, berth_error *e)
{
    if (!n)
        return 0;
    for (uint32_t i = 0; i < n; i++)
        c->why[i] = NULL;
    int rc = berth_ksession_place(c->s, pods, n, c->placed, c->why, &x->arena, e);
    if (rc && rc != BERTH_ENOFIT)
        return rc;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t p = pods[i], to = c->placed[i];
        c->pod_node[p] = to;
        ph->forced += forced != 0;
        if (to == BERTH_KUBE_NONE) {
            if (recovering)
                continue; /* still pending: recorded when it went pending */
            c->pending[c->npending++] = p;
            if (xl_push_pod(x, c, p, from ? from[i] : NULL, NULL, c->why[i], forced))
                return BERTH_ENOMEM;
            continue;
        }
        c->ready[p] = 1; /* the drain waits for the new pod to be Ready */
        xl_set_healthy(c, p, 1);
        if (recovering) {
            ph->recovered++;
            continue;
        }
        ph->moved++;
        if (xl_push_pod(x, c, p, from ? from[i] : NULL, c->k.nodes[to].name, NULL, forced))
            return BERTH_ENOMEM;
    }
    return 0;
}

int xl_run_phase(berth_xl *x, berth_xl_cluster *c, const berth_nexus *nx, uint32_t step,
                 uint32_t batch, const berth_upgrade_batch *bt, uint32_t ci, berth_error *e)
{
    berth_kcluster *k = &c->k;
    int64_t now = c->now + (bt ? bt->start_minute * 60 : 0);
    uint32_t nnew = 0, nup = 0, ndown = 0;
    for (uint32_t n = 0; n < k->nnodes; n++) {
        c->next[n] = (uint8_t)node_down(nx, c, n, bt);
        ndown += c->next[n];
        nnew += c->next[n] && !c->down[n];
        nup += !c->next[n] && c->down[n];
    }
    if (!nnew && !nup)
        return 0; /* the step (or batch) does not touch this cluster */
    if (berth_grow((void **)&x->phases, &x->capphases, x->nphases + 1, sizeof *x->phases, 0))
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    berth_xl_phase *ph = &x->phases[x->nphases];
    memset(ph, 0, sizeof *ph);
    ph->step = step;
    ph->batch = batch;
    ph->cluster = ci;
    ph->nodes = k->nnodes;
    ph->nodes_down = ndown;
    ph->pod0 = x->npods;
    ph->hold0 = x->nholds;
    ph->short0 = x->nshorts;
    ph->pdb0 = x->npdbs;
    ph->launch0 = x->nlaunches;
    if (bt)
        ph->minutes = (bt->vms_down ? BERTH_XL_DRAIN_LIMIT_MINUTES : 0) +
                      nx->steps[step].strategy.reimage_minutes;
    int rc = 0;
    /* nodes back: uncordoned, their remaining pods (DaemonSets) run again */
    for (uint32_t n = 0; n < k->nnodes; n++) {
        c->draining[n] = c->next[n] && !c->down[n];
        if (!c->next[n] && c->down[n])
            berth_ksession_exclude(c->s, n, 0);
        if (c->draining[n])
            berth_ksession_exclude(c->s, n, 1); /* cordon */
    }
    uint32_t ncand = 0;
    for (uint32_t p = 0; p < k->npods; p++) {
        uint32_t n = c->pod_node[p];
        if (n == BERTH_KUBE_NONE)
            continue;
        if (!c->next[n] && c->down[n])
            xl_set_healthy(c, p, 1);
        if (!c->draining[n])
            continue;
        const berth_kpod *pod = &k->pods[p];
        if (xl_is_daemon(pod) || pod->mirror || pod->terminating)
            ph->ds_left += xl_is_daemon(pod);
        else
            c->cand[ncand++] = p;
    }
    /* pending pods retried on the nodes that came back */
    if (nup && c->npending) {
        uint32_t n = c->npending;
        memcpy(c->ev, c->pending, n * sizeof *c->ev);
        c->npending = 0;
        if ((rc = place(x, c, ph, c->ev, n, NULL, 0, 1, e)))
            return rc;
        for (uint32_t i = 0; i < n; i++)
            if (c->placed[i] == BERTH_KUBE_NONE)
                c->pending[c->npending++] = c->ev[i];
    }
    /* drain rounds: evict what the eviction API allows, place it, retry */
    for (;;) {
        uint32_t nev = 0, left = 0;
        char why[320];
        for (uint32_t i = 0; i < ncand; i++) {
            uint32_t p = c->cand[i];
            if (!xl_may_evict(c, p, now, why, sizeof why)) {
                c->cand[left++] = p;
                continue;
            }
            c->ev[nev++] = p;
            xl_set_healthy(c, p, 0);
        }
        if (!nev)
            break;
        ncand = left;
        const char **names = berth_arena_alloc(&x->arena, nev * sizeof *names);
        if (!names)
            return berth_error_set(e, BERTH_ENOMEM, "out of memory");
        for (uint32_t i = 0; i < nev; i++) {
            uint32_t p = c->ev[i];
            names[i] = k->nodes[c->pod_node[p]].name;
            if ((rc = berth_ksession_evict(c->s, p)))
                return berth_error_set(e, rc, "crosslayer: evicting a pod: %s",
                                       berth_strerror(rc));
            c->pod_node[p] = BERTH_KUBE_NONE;
        }
        if ((rc = place(x, c, ph, c->ev, nev, names, 0, 0, e)))
            return rc;
    }
    /* refused until the drain limit: held, then down with the node */
    if (ncand) {
        char why[320];
        for (uint32_t i = 0; i < ncand; i++) {
            uint32_t p = c->cand[i];
            xl_may_evict(c, p, now, why, sizeof why);
            if (push_hold(x, c, p, why))
                return berth_error_set(e, BERTH_ENOMEM, "out of memory");
        }
        const char **names = berth_arena_alloc(&x->arena, ncand * sizeof *names);
        if (!names)
            return berth_error_set(e, BERTH_ENOMEM, "out of memory");
        for (uint32_t i = 0; i < ncand; i++) {
            uint32_t p = c->cand[i];
            names[i] = k->nodes[c->pod_node[p]].name;
            xl_set_healthy(c, p, 0);
            if ((rc = berth_ksession_evict(c->s, p)))
                return berth_error_set(e, rc, "crosslayer: evicting a pod: %s",
                                       berth_strerror(rc));
            c->pod_node[p] = BERTH_KUBE_NONE;
        }
        if ((rc = place(x, c, ph, c->cand, ncand, names, 1, 0, e)))
            return rc;
    }
    /* the nodes stop: what stays on them is down */
    for (uint32_t p = 0; p < k->npods; p++) {
        uint32_t n = c->pod_node[p];
        if (n != BERTH_KUBE_NONE && c->next[n])
            xl_set_healthy(c, p, 0);
    }
    memcpy(c->down, c->next, k->nnodes);
    ph->pending = c->npending;
    /* workloads below desired, PDBs below their minimum */
    memset(c->wl_running, 0, (c->nwl ? c->nwl : 1) * sizeof *c->wl_running);
    for (uint32_t p = 0; p < k->npods; p++) {
        uint32_t n = c->pod_node[p];
        if (c->wl[p] != BERTH_KUBE_NONE && n != BERTH_KUBE_NONE && !c->down[n])
            c->wl_running[c->wl[p]]++;
    }
    for (uint32_t w = 0; w < c->nwl; w++) {
        if (c->wl_running[w] >= c->wl_desired[w])
            continue;
        if (berth_grow((void **)&x->shorts, &x->capshorts, x->nshorts + 1, sizeof *x->shorts, 0))
            return berth_error_set(e, BERTH_ENOMEM, "out of memory");
        x->shorts[x->nshorts++] = (berth_xl_short){c->wl_name[w], c->wl_running[w], c->wl_desired[w]};
    }
    for (uint32_t b = 0; b < k->npdbs; b++) {
        int64_t want = berth_kpdb_desired(&k->pdbs[b], c->pdb_expected[b]);
        if (c->pdb_healthy[b] >= want)
            continue;
        if (berth_grow((void **)&x->pdbs, &x->cappdbs, x->npdbs + 1, sizeof *x->pdbs, 0))
            return berth_error_set(e, BERTH_ENOMEM, "out of memory");
        x->pdbs[x->npdbs++] = (berth_xl_pdb){k->pdbs[b].ns, k->pdbs[b].name, c->pdb_healthy[b], want};
    }
    ph = &x->phases[x->nphases++];
    ph->npods = x->npods - ph->pod0;
    ph->nholds = x->nholds - ph->hold0;
    ph->nshorts = x->nshorts - ph->short0;
    ph->npdbs = x->npdbs - ph->pdb0;
    if (x->trial)
        return 0;
    if ((rc = xl_buy_phase(x, c, ph, now, e)))
        return rc;
    if (x->advise && x->autoscaler == BERTH_XL_AUTOSCALER_NONE && c->npending &&
        nx->steps[step].kind == BERTH_STEP_RUNTIME_UPGRADE &&
        (rc = xl_extra_nodes(x, c, nx, ph, e)))
        return rc;
    if (x->on_phase)
        x->on_phase(x->phase_ctx, x, ci, c->down, c->pod_node);
    return 0;
}

/* The NKS cluster was deleted: its nodes and pods are gone. */
static int cluster_deleted(berth_xl *x, berth_xl_cluster *c, uint32_t step, uint32_t ci,
                           berth_error *e)
{
    if (berth_grow((void **)&x->phases, &x->capphases, x->nphases + 1, sizeof *x->phases, 0))
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    berth_xl_phase *ph = &x->phases[x->nphases++];
    memset(ph, 0, sizeof *ph);
    ph->step = step;
    ph->batch = BERTH_XL_NONE;
    ph->cluster = ci;
    ph->nodes = ph->nodes_down = c->k.nnodes;
    ph->deleted = 1;
    ph->pod0 = x->npods;
    ph->hold0 = x->nholds;
    ph->short0 = x->nshorts;
    ph->pdb0 = x->npdbs;
    for (uint32_t p = 0; p < c->k.npods; p++)
        ph->lost += c->pod_node[p] != BERTH_KUBE_NONE;
    c->gone = 1;
    return 0;
}

int berth_xl_on_step(void *ctx, const berth_nexus *nx, uint32_t step, berth_error *e)
{
    berth_xl *x = ctx;
    const berth_step *st = &nx->steps[step];
    for (uint32_t ci = 0; ci < x->nclusters; ci++) {
        berth_xl_cluster *c = x->clusters[ci];
        if (c->gone)
            continue;
        uint32_t cid = berth_nexus_find_cluster(nx, c->name);
        int live = cid != BERTH_NEXUS_NONE && nx->clusters[cid].status != BERTH_CLUSTER_DELETED;
        if (!live) {
            int rc = c->opened ? cluster_deleted(x, c, step, ci, e) : 0;
            if (rc)
                return rc;
            continue;
        }
        int rc;
        if (!c->opened) {
            if ((rc = xl_open(x, c, nx, cid, e)))
                return rc;
            for (uint32_t p = 0; p < c->k.npods; p++)
                if (c->pod_node[p] != BERTH_KUBE_NONE)
                    xl_set_healthy(c, p, 1);
        } else if (xl_check_vms(x, c, nx, cid)) {
            return berth_error_set(e, BERTH_ENOMEM, "out of memory");
        }
    }
    /* the bare-metal rack order: tried before the given order runs */
    if (st->kind == BERTH_STEP_RUNTIME_UPGRADE && x->advise &&
        x->autoscaler == BERTH_XL_AUTOSCALER_NONE) {
        int rc = xl_rack_order(x, nx, step, e);
        if (rc)
            return rc;
    }
    for (uint32_t ci = 0; ci < x->nclusters; ci++) {
        berth_xl_cluster *c = x->clusters[ci];
        if (c->gone || !c->opened)
            continue;
        int rc;
        if (st->kind == BERTH_STEP_RUNTIME_UPGRADE)
            for (uint32_t b = 0; b < st->nbatches; b++)
                if ((rc = xl_run_phase(x, c, nx, step, b, &st->batches[b], ci, e)))
                    return rc;
        if ((rc = xl_run_phase(x, c, nx, step, BERTH_XL_NONE, NULL, ci, e)))
            return rc;
    }
    if (st->kind == BERTH_STEP_RUNTIME_UPGRADE && x->advise &&
        x->autoscaler == BERTH_XL_AUTOSCALER_NONE)
        xl_rack_order_finish(x, nx, step);
    return 0;
}

uint32_t berth_xl_upgrade_pdb_breaches(const berth_nexus *nx, const berth_xl *x)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < x->nphases; i++)
        n += x->phases[i].npdbs > 0 && x->phases[i].step < nx->nsteps &&
             nx->steps[x->phases[i].step].kind == BERTH_STEP_RUNTIME_UPGRADE;
    return n;
}
