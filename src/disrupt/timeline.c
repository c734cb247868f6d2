/* disrupt/timeline.c - `disrupt simulate`: the simulation clock from
 * --from to --to by --step over a disruption model. Per step: launched
 * replacements that are Ready join the cluster and their candidates are
 * tainted; every tainted node gets one drain round (termination.c) and
 * leaves when empty; pods without a node are re-scheduled with the kube
 * pipeline (berth_kube_schedule_view, excluding nodes being disrupted);
 * then berth_disrupt_plan runs at the step's time (nodes being disrupted
 * count for budgets, PDB allowances as the run left them) and its actions
 * start: deletes taint at once, replacements launch first. Recorded: the
 * first and last steps and every step with an event. Work per step: one
 * plan, O(pods) passes only when something drains or waits, one
 * scheduling run when pods wait and capacity changed. */
#include "disrupt/timeline.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "berth/grow.h"
#include "k8s/k8s.h"

#define DISRUPTED_TAINT "karpenter.sh/disrupted"

const char *berth_devent_name(berth_devent_type t)
{
    static const char *const n[] = {"launch",  "taint",   "evict",
                                    "delete", "blocked", "unschedulable"};
    return (unsigned)t < sizeof n / sizeof *n ? n[t] : "?";
}

const char *disrupt_tl_str(disrupt_tl *t, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return berth_arena_strdup(&t->out->arena, buf);
}

/* ---- node names -> kube indices ---- */

/* Rebuilt after each change of the node table (a removal shifts the
 * nodes after it, and a node comes and goes with its NodeClaim): their
 * slots and keys kept. The claims' index keeps the first claim of a node
 * name, as berth_disrupt_claim_of's scan finds it (a scan per node was
 * O(nodes x claims) at the start alone). */
static int rebuild(disrupt_tl *t)
{
    const berth_disrupt *m = t->m;
    const berth_kcluster *k = &m->kube;
    if (berth_nameidx_reserve(&t->node_idx, k->nnodes) ||
        berth_nameidx_reserve(&t->claim_idx, m->nclaims))
        return BERTH_ENOMEM;
    berth_nameidx_clear(&t->node_idx);
    berth_nameidx_clear(&t->claim_idx);
    for (uint32_t n = 0; n < k->nnodes; n++)
        if (berth_nameidx_add(&t->node_idx, k->nodes[n].name, n, NULL) < 0)
            return BERTH_ENOMEM; /* (reserved: never) */
    for (uint32_t c = 0; c < m->nclaims; c++)
        if (m->claims[c].node_name &&
            berth_nameidx_add(&t->claim_idx, m->claims[c].node_name, c, NULL) < 0)
            return BERTH_ENOMEM;
    return 0;
}

uint32_t disrupt_tl_node_index(const disrupt_tl *t, const char *name)
{
    uint32_t n = berth_nameidx_find(&t->node_idx, name);
    return n == BERTH_NAMEIDX_NONE ? BERTH_KUBE_NONE : n;
}

/* berth_disrupt_claim_of through the index: the NodeClaim of node `name`,
 * -1 when none. */
static int claim_of(const disrupt_tl *t, const char *name)
{
    uint32_t c = berth_nameidx_find(&t->claim_idx, name);
    return c == BERTH_NAMEIDX_NONE ? -1 : (int)c;
}

/* ---- events and pods ---- */

int disrupt_tl_event(disrupt_tl *t, berth_devent_type type, const char *node,
                     const berth_kpod *pod, const char *reason)
{
    berth_dtimeline *o = t->out;
    if (berth_grow((void **)&o->events, &o->capevents, o->nevents + 1, sizeof *o->events, 0))
        return BERTH_ENOMEM;
    o->events[o->nevents++] =
        (berth_devent){type, node, pod ? pod->ns : NULL, pod ? pod->name : NULL, reason};
    return 0;
}

static int push_pending(disrupt_tl *t, uint32_t pod)
{
    if (berth_grow((void **)&t->pending, &t->cappending, t->npending + 1, sizeof *t->pending, 0))
        return BERTH_ENOMEM;
    t->pending[t->npending++] = pod;
    return 0;
}

int disrupt_tl_unbind(disrupt_tl *t, uint32_t pod, int gone)
{
    berth_kpod *p = &t->m->kube.pods[pod];
    berth_dpod *x = &t->m->pod_info[pod];
    p->node_name = NULL;
    x->ready = 0;
    x->nominated = NULL;
    t->dirty = 1;
    if (gone) {
        p->terminating = 1;
        t->pod_state[pod] = DTL_POD_GONE;
        return 0;
    }
    t->pod_state[pod] = DTL_POD_PENDING;
    t->pod_flags[pod] &= (uint8_t)~DTL_PF_REPORTED;
    if (t->pod_pdb[pod] >= 0 && !(t->pod_flags[pod] & DTL_PF_UNAVAIL)) {
        t->pdb_unavail[t->pod_pdb[pod]]++;
        t->pod_flags[pod] |= DTL_PF_UNAVAIL;
    }
    return push_pending(t, pod);
}

/* ---- disrupted nodes, launches ---- */

static int track(disrupt_tl *t, const char *name, int reason, int32_t cmd)
{
    if (berth_grow((void **)&t->tn, &t->captn, t->ntn + 1, sizeof *t->tn, 0))
        return BERTH_ENOMEM;
    disrupt_tl_node *n = &t->tn[t->ntn++];
    memset(n, 0, sizeof *n);
    n->name = name;
    n->reason = reason;
    n->cmd = cmd;
    n->grace = -1;
    n->last_round = INT64_MIN;
    uint32_t idx = disrupt_tl_node_index(t, name);
    if (idx != BERTH_KUBE_NONE) {
        t->m->node_info[idx].deleting = 1; /* counted as disrupting, takes no pods */
        t->m->node_info[idx].marked = 1;
    }
    if (cmd >= 0)
        t->cmd[cmd].live++;
    return 0;
}

static int taint(disrupt_tl *t, disrupt_tl_node *n, const char *why)
{
    uint32_t idx = disrupt_tl_node_index(t, n->name);
    if (idx == BERTH_KUBE_NONE)
        return BERTH_EINTERNAL;
    int rc = berth_disrupt_taint(t->m, idx, DISRUPTED_TAINT, BERTH_EFFECT_NOSCHEDULE);
    if (rc)
        return rc;
    n->tainted = 1;
    n->deleted_at = t->now;
    int c = claim_of(t, n->name);
    n->grace = c >= 0 && t->m->claims[c].has_termination_grace ? t->m->claims[c].termination_grace
                                                               : -1;
    return disrupt_tl_event(t, BERTH_DEV_TAINT, n->name, NULL, why);
}

/* The pending DaemonSet pods made for node `name` go with it (the
 * DaemonSet controller deletes a pod whose node is gone). */
static void drop_daemon_pods(disrupt_tl *t, const char *name)
{
    uint32_t keep = 0;
    for (uint32_t i = 0; i < t->npending; i++) {
        uint32_t p = t->pending[i];
        const berth_kpod *pd = &t->m->kube.pods[p];
        const char *target = k8s_pod_is_daemon(pd) ? k8s_daemon_target(pd) : NULL;
        if (target && !strcmp(target, name)) {
            t->m->kube.pods[p].terminating = 1;
            t->pod_state[p] = DTL_POD_GONE;
            continue;
        }
        t->pending[keep++] = p;
    }
    t->npending = keep;
}

static int remove_node(disrupt_tl *t, disrupt_tl_node *n)
{
    uint32_t idx = disrupt_tl_node_index(t, n->name);
    if (idx == BERTH_KUBE_NONE)
        return BERTH_EINTERNAL;
    t->cost -= berth_node_price(t->m, idx);
    drop_daemon_pods(t, n->name);
    berth_disrupt_remove_node(t->m, idx);
    n->removed = 1;
    n->held = NULL;
    if (n->cmd >= 0)
        t->cmd[n->cmd].live--;
    t->dirty = 1;
    int rc = rebuild(t);
    if (!rc)
        rc = disrupt_tl_event(t, BERTH_DEV_DELETE, n->name, NULL,
                              n->reason >= 0 ? berth_dreason_name((berth_dreason)n->reason)
                                             : "already being deleted");
    return rc;
}

/* A replacement joins the cluster; its command's candidates are tainted
 * once every replacement of the command is Ready. */
static int ready(disrupt_tl *t, disrupt_tl_launch *l)
{
    uint32_t idx;
    int rc = berth_disrupt_add_node(t->m, l->pool, l->type, l->offering, l->name, l->launched,
                                    t->now, &idx);
    if (rc || (rc = rebuild(t)))
        return rc;
    l->ready = 1;
    t->cost += berth_node_price(t->m, idx);
    t->dirty = 1;
    disrupt_tl_cmd *c = &t->cmd[l->cmd];
    if (--c->launching)
        return 0;
    for (uint32_t i = 0; !rc && i < t->ntn; i++) {
        disrupt_tl_node *n = &t->tn[i];
        if (n->removed || n->tainted || n->cmd != l->cmd)
            continue;
        const char *why = disrupt_tl_str(t, "%s: replacement %s is Ready",
                                         berth_dreason_name((berth_dreason)n->reason), l->name);
        rc = why ? taint(t, n, why) : BERTH_ENOMEM;
    }
    return rc;
}

/* Whether name is a replacement whose candidates are still being removed
 * (Karpenter keeps such a node nominated for their pods). */
static const char *protected_for(const disrupt_tl *t, const char *name)
{
    for (uint32_t i = 0; i < t->nln; i++) {
        const disrupt_tl_launch *l = &t->ln[i];
        if (!l->ready || strcmp(l->name, name) || !t->cmd[l->cmd].live)
            continue;
        for (uint32_t j = 0; j < t->ntn; j++)
            if (!t->tn[j].removed && t->tn[j].cmd == l->cmd)
                return t->tn[j].name;
    }
    return NULL;
}

/* The NodePool, InstanceType and offering of a planned replacement. */
static int resolve(const berth_disrupt *m, const berth_dreplacement *r, uint32_t *pool,
                   uint32_t *type, uint32_t *offering)
{
    int p = -1;
    for (uint32_t i = 0; i < m->npools; i++)
        if (!strcmp(m->pools[i].name, r->nodepool))
            p = (int)i;
    int ty = berth_instance_type_find(m->types, m->ntypes, r->instance_type);
    const berth_offering *of =
        ty >= 0 ? berth_instance_offering(&m->types[ty], r->zone, r->capacity_type) : NULL;
    if (p < 0 || !of)
        return BERTH_EINTERNAL;
    *pool = (uint32_t)p;
    *type = (uint32_t)ty;
    *offering = (uint32_t)(of - m->types[ty].offerings);
    return 0;
}

static int launch(disrupt_tl *t, const berth_dreplacement *r, int32_t cmd, const char *cands)
{
    const berth_disrupt *m = t->m;
    uint32_t pool, type, offering;
    if (resolve(m, r, &pool, &type, &offering))
        return BERTH_EINTERNAL;
    char name[256];
    for (;;) {
        snprintf(name, sizeof name, "%s-sim-%u", r->nodepool, ++t->counter);
        int taken = disrupt_tl_node_index(t, name) != BERTH_KUBE_NONE;
        for (uint32_t i = 0; !taken && i < t->nln; i++)
            taken = !strcmp(t->ln[i].name, name);
        if (!taken)
            break;
    }
    if (berth_grow((void **)&t->ln, &t->capln, t->nln + 1, sizeof *t->ln, 0))
        return BERTH_ENOMEM;
    disrupt_tl_launch *l = &t->ln[t->nln];
    memset(l, 0, sizeof *l);
    if (!(l->name = disrupt_tl_str(t, "%s", name)))
        return BERTH_ENOMEM;
    l->pool = pool;
    l->type = type;
    l->offering = offering;
    l->launched = t->now;
    l->ready_at = t->now + t->o->launch_delay;
    l->cmd = cmd;
    t->nln++;
    t->cmd[cmd].launching++;
    const char *why = disrupt_tl_str(t, "replaces %s: %s %s %s, %.4f per hour", cands,
                                     r->instance_type, berth_capacity_type_name(r->capacity_type),
                                     r->zone, r->price);
    return why ? disrupt_tl_event(t, BERTH_DEV_LAUNCH, l->name, NULL, why) : BERTH_ENOMEM;
}

/* ---- re-scheduling ---- */

static int reschedule(disrupt_tl *t, berth_error *e)
{
    berth_disrupt *m = t->m;
    berth_kcluster *k = &m->kube;
    if (!t->npending || !t->dirty)
        return 0;
    t->dirty = 0;
    uint8_t *excluded = calloc(k->nnodes + 1, 1);
    uint32_t *pod_node = malloc((k->npods + 1) * sizeof *pod_node);
    const char **placed = calloc(t->npending + 1, sizeof *placed);
    const char **why = calloc(t->npending + 1, sizeof *why);
    int32_t *claim = malloc((k->nnodes + 1) * sizeof *claim);
    berth_arena a;
    berth_arena_init(&a, 0);
    int rc = 0;
    if (!excluded || !pod_node || !placed || !why || !claim) {
        rc = berth_error_set(e, BERTH_ENOMEM, "out of memory");
        goto out;
    }
    for (uint32_t n = 0; n < k->nnodes; n++) {
        excluded[n] = (uint8_t)m->node_info[n].deleting;
        claim[n] = -2;
    }
    for (uint32_t p = 0; p < k->npods; p++)
        pod_node[p] = t->pod_state[p] == DTL_POD_BOUND
                          ? disrupt_tl_node_index(t, k->pods[p].node_name)
                          : BERTH_KUBE_NONE;
    berth_kview v = {excluded, pod_node, NULL, 0, t->pending, t->npending, NULL, NULL,
                     t->o->cancel};
    if ((rc = berth_kube_schedule_view(k, &v, placed, why, &a, e)))
        goto out;
    uint32_t keep = 0;
    for (uint32_t i = 0; i < t->npending && !rc; i++) {
        uint32_t p = t->pending[i];
        uint32_t n = disrupt_tl_node_index(t, placed[i]);
        if (n == BERTH_KUBE_NONE) {
            t->pending[keep++] = p;
            if (!(t->pod_flags[p] & DTL_PF_REPORTED)) {
                t->pod_flags[p] |= DTL_PF_REPORTED;
                const char *r = disrupt_tl_str(t, "%s", why[i] ? why[i] : "no node fits");
                rc = r ? disrupt_tl_event(t, BERTH_DEV_UNSCHEDULABLE, NULL, &k->pods[p], r)
                       : berth_error_set(e, BERTH_ENOMEM, "out of memory");
            }
            continue;
        }
        k->pods[p].node_name = k->nodes[n].name;
        m->pod_info[p].ready = 1;
        m->pod_info[p].started = t->now;
        m->pod_info[p].has_start_time = 1;
        t->pod_state[p] = DTL_POD_BOUND;
        if (t->pod_flags[p] & DTL_PF_UNAVAIL) {
            t->pdb_unavail[t->pod_pdb[p]]--;
            t->pod_flags[p] &= (uint8_t)~DTL_PF_UNAVAIL;
        }
        if (claim[n] == -2)
            claim[n] = claim_of(t, k->nodes[n].name);
        if (claim[n] >= 0)
            m->claims[claim[n]].last_pod_event = t->now;
    }
    t->npending = keep;
out:
    free(excluded);
    free(pod_node);
    free(placed);
    free(why);
    free(claim);
    berth_arena_free(&a);
    return rc;
}

/* ---- one step ---- */

static int oom(berth_error *e)
{
    return berth_error_set(e, BERTH_ENOMEM, "out of memory");
}

static int internal(berth_error *e, int rc)
{
    return rc == BERTH_ENOMEM ? oom(e)
                              : berth_error_set(e, rc, "simulation failed: %s", berth_strerror(rc));
}

/* Launches that are Ready, drain rounds, removals, re-scheduling. */
static int advance(disrupt_tl *t, berth_error *e)
{
    berth_kcluster *k = &t->m->kube;
    int rc = 0;
    for (uint32_t i = 0; !rc && i < t->nln; i++)
        if (!t->ln[i].ready && t->ln[i].ready_at <= t->now)
            rc = ready(t, &t->ln[i]);
    if (rc)
        return internal(e, rc);
    uint32_t ndrain = 0;
    for (uint32_t i = 0; i < t->ntn; i++)
        ndrain += !t->tn[i].removed && t->tn[i].tainted && t->tn[i].last_round < t->now;
    if (ndrain) {
        /* bucket the bound pods of the draining nodes (pod index order) */
        int32_t *slot = malloc((k->nnodes + 1) * sizeof *slot);
        uint32_t *start = calloc(t->ntn + 2, sizeof *start);
        uint32_t *fill = calloc(t->ntn + 2, sizeof *fill);
        uint32_t *pods = NULL;
        if (!slot || !start || !fill)
            rc = BERTH_ENOMEM;
        for (uint32_t n = 0; !rc && n < k->nnodes; n++)
            slot[n] = -1;
        for (uint32_t i = 0; !rc && i < t->ntn; i++) {
            const disrupt_tl_node *d = &t->tn[i];
            uint32_t idx = d->removed || !d->tainted || d->last_round >= t->now
                               ? BERTH_KUBE_NONE : disrupt_tl_node_index(t, d->name);
            if (idx != BERTH_KUBE_NONE)
                slot[idx] = (int32_t)i;
        }
        uint32_t total = 0;
        for (uint32_t p = 0; !rc && p < k->npods; p++) {
            if (t->pod_state[p] != DTL_POD_BOUND)
                continue;
            uint32_t n = disrupt_tl_node_index(t, k->pods[p].node_name);
            if (n != BERTH_KUBE_NONE && slot[n] >= 0) {
                start[slot[n] + 1]++;
                total++;
            }
        }
        if (!rc && !(pods = malloc((total + 1) * sizeof *pods)))
            rc = BERTH_ENOMEM;
        for (uint32_t i = 0; !rc && i < t->ntn; i++)
            start[i + 1] += start[i];
        for (uint32_t p = 0; !rc && p < k->npods; p++) {
            if (t->pod_state[p] != DTL_POD_BOUND)
                continue;
            uint32_t n = disrupt_tl_node_index(t, k->pods[p].node_name);
            if (n != BERTH_KUBE_NONE && slot[n] >= 0) {
                uint32_t s = (uint32_t)slot[n];
                pods[start[s] + fill[s]++] = p;
            }
        }
        for (uint32_t i = 0; !rc && i < t->ntn; i++) {
            disrupt_tl_node *d = &t->tn[i];
            if (d->removed || !d->tainted || d->last_round >= t->now)
                continue;
            int empty = 0;
            rc = disrupt_tl_drain(t, d, pods + start[i], start[i + 1] - start[i], &empty);
            if (rc || !empty)
                continue;
            /* what is left dies with the node (DaemonSet, mirror, tolerating pods) */
            for (uint32_t j = start[i]; !rc && j < start[i + 1]; j++)
                if (t->pod_state[pods[j]] == DTL_POD_BOUND)
                    rc = disrupt_tl_unbind(t, pods[j], 1);
            if (!rc)
                rc = remove_node(t, d);
        }
        free(slot);
        free(start);
        free(fill);
        free(pods);
        if (rc)
            return internal(e, rc);
    }
    return reschedule(t, e);
}

typedef struct blk {
    berth_dsim_blocked *v;
    uint32_t n, cap;
} blk;

static int blk_add(blk *b, const char *node, const char *reason)
{
    if (berth_grow((void **)&b->v, &b->cap, b->n + 1, sizeof *b->v, 0))
        return BERTH_ENOMEM;
    b->v[b->n++] = (berth_dsim_blocked){node, reason};
    return 0;
}

static int reschedulable(const berth_disrupt *m, uint32_t pod)
{
    const berth_kpod *p = &m->kube.pods[pod];
    return !p->terminating && !m->pod_info[pod].mirror &&
           !(p->owner_kind && !strcmp(p->owner_kind, "DaemonSet"));
}

/* Karpenter simulates a command with the pods of the nodes being deleted
 * and the pending pods as well (they need room too); the plan moves only
 * its candidates' pods. Before a drift or consolidation starts, the
 * timeline places all of them as the plan's simulation does (simulate.c):
 * first on the nodes that stay and the replacements still launching (the
 * existing and in-flight capacity), then the pods left over, with those
 * placements pinned, on the command's own replacements one at a time (each
 * run pins what the new node took). Scheduling everything at once let a
 * small pod that fits a kept node take the new node from the pod the plan
 * had bought it for, and the command never started. *ok = 0 (why set)
 * when some pod would be left without room. Work: 1 + replacements
 * scheduling runs (the second and later only when pods are left). */
static int validate(disrupt_tl *t, const berth_daction *a, int *ok, char *why, size_t size,
                    berth_error *e)
{
    berth_disrupt *m = t->m;
    berth_kcluster *k = &m->kube;
    uint32_t nhyp = a->nreplacements, np = 0;
    for (uint32_t i = 0; i < t->nln; i++)
        nhyp += !t->ln[i].ready;
    uint8_t *excluded = calloc(k->nnodes + 1, 1);
    uint32_t *pod_node = malloc((k->npods + 1) * sizeof *pod_node);
    uint32_t *pending = malloc((k->npods + 1) * sizeof *pending);
    const char **placed = calloc(k->npods + 1, sizeof *placed);
    const char **bind = calloc(k->npods + 1, sizeof *bind);
    berth_knode *hyp = calloc(nhyp + 1, sizeof *hyp);
    berth_arena ar;
    berth_arena_init(&ar, 0);
    int rc = 0;
    *ok = 1;
    if (!excluded || !pod_node || !pending || !placed || !bind || !hyp) {
        rc = berth_error_set(e, BERTH_ENOMEM, "out of memory");
        goto out;
    }
    for (uint32_t n = 0; n < k->nnodes; n++)
        excluded[n] = (uint8_t)m->node_info[n].deleting;
    for (uint32_t i = 0; i < a->nnodes; i++)
        excluded[a->nodes[i]] = 1;
    for (uint32_t p = 0; p < k->npods; p++) {
        pod_node[p] = BERTH_KUBE_NONE;
        if (t->pod_state[p] == DTL_POD_PENDING) {
            if (!k8s_pod_is_daemon(&k->pods[p])) /* not provisionable (IsOwnedByDaemonSet) */
                pending[np++] = p;
            continue;
        }
        if (t->pod_state[p] != DTL_POD_BOUND)
            continue;
        uint32_t n = disrupt_tl_node_index(t, k->pods[p].node_name);
        pod_node[p] = n;
        if (n != BERTH_KUBE_NONE && excluded[n] && reschedulable(m, p))
            pending[np++] = p;
    }
    uint32_t h = 0, inflight = nhyp - a->nreplacements; /* hyp[0..inflight) launching */
    for (uint32_t i = 0; i < t->nln + a->nreplacements; i++) {
        uint32_t pool, type, offering;
        if (i < t->nln) {
            if (t->ln[i].ready)
                continue;
            pool = t->ln[i].pool;
            type = t->ln[i].type;
            offering = t->ln[i].offering;
        } else if (resolve(m, &a->replacements[i - t->nln], &pool, &type, &offering)) {
            rc = berth_error_set(e, BERTH_EINTERNAL, "a planned replacement is not in the catalog");
            goto out;
        }
        char nm[48];
        snprintf(nm, sizeof nm, "berth-validate-%u", h + 1);
        const char *name = berth_arena_strdup(&ar, nm);
        if (!name ||
            berth_disrupt_template_node(m, pool, type, offering, name, 1, &ar, &hyp[h]) < 0) {
            rc = berth_error_set(e, BERTH_ENOMEM, "out of memory");
            goto out;
        }
        h++;
    }
    /* the existing and in-flight nodes first, then each new node */
    uint32_t left = np;
    for (uint32_t nv = inflight; left && nv <= h; nv++) {
        berth_kview v = {excluded, pod_node, hyp, nv, pending, np, bind, NULL, t->o->cancel};
        if ((rc = berth_kube_schedule_view(k, &v, placed, NULL, NULL, e)))
            goto out;
        left = 0;
        for (uint32_t i = 0; i < np; i++) {
            bind[i] = placed[i];
            left += placed[i] == NULL;
        }
    }
    if (left) {
        *ok = 0;
        snprintf(why, size,
                 "%s %s waits: %u pod(s) of nodes being deleted, pending pods or its own would "
                 "find no room", a->replace ? "replacement" : "deletion",
                 berth_dreason_name(a->reason), left);
    }
out:
    free(excluded);
    free(pod_node);
    free(pending);
    free(placed);
    free(bind);
    free(hyp);
    berth_arena_free(&ar);
    return rc;
}

/* The plan at t->now and the start of its actions; the plan's blocked
 * nodes (minus those being disrupted) go to cur with reasons copied. */
static int plan_step(disrupt_tl *t, blk *cur, berth_arena *scratch, berth_error *e)
{
    berth_disrupt *m = t->m;
    berth_kcluster *k = &m->kube;
    for (uint32_t i = 0; i < k->npdbs; i++) {
        k->pdbs[i].has_disruptions_allowed = 1;
        k->pdbs[i].disruptions_allowed = t->pdb_allow[i];
    }
    berth_dplan_options po;
    memset(&po, 0, sizeof po);
    po.now = t->now;
    po.spot_to_spot = t->o->spot_to_spot;
    po.cancel = t->o->cancel;
    berth_dplan p;
    int rc = berth_disrupt_plan(m, &po, &p, e);
    if (rc)
        return rc;
    const char **names = malloc((k->nnodes + 1) * sizeof *names);
    if (!names) {
        berth_dplan_free(&p);
        return oom(e);
    }
    for (uint32_t i = 0; !rc && i < p.nblocked; i++) {
        uint32_t n = p.blocked[i].node;
        if (m->node_info[n].deleting) /* being disrupted: its drain says more */
            continue;
        const char *r = berth_arena_strdup(scratch, p.blocked[i].reason);
        rc = r ? blk_add(cur, k->nodes[n].name, r) : BERTH_ENOMEM;
    }
    for (uint32_t i = 0; !rc && i < p.nactions; i++) {
        const berth_daction *a = &p.actions[i];
        uint32_t nn = 0;
        const char *prot = NULL, *prot_node = NULL;
        for (uint32_t j = 0; j < a->nnodes; j++) {
            const char *nm = k->nodes[a->nodes[j]].name;
            if (m->node_info[a->nodes[j]].deleting)
                continue;
            const char *cand = protected_for(t, nm);
            if (cand) {
                prot = cand;
                prot_node = nm;
                continue;
            }
            names[nn++] = nm;
        }
        int whole = a->replace || a->reason == BERTH_DR_UNDERUTILIZED;
        if (prot) {
            char buf[300];
            snprintf(buf, sizeof buf, "replacement for %s, which is still being drained", prot);
            const char *r = berth_arena_strdup(scratch, buf);
            if (!r || (rc = blk_add(cur, prot_node, r))) {
                rc = BERTH_ENOMEM;
                break;
            }
            if (whole)
                continue; /* a consolidation or replacement is all or nothing */
        }
        if (!nn)
            continue;
        if (a->reason == BERTH_DR_DRIFTED || a->reason == BERTH_DR_UNDERUTILIZED) {
            int ok = 1;
            char why[240];
            if ((rc = validate(t, a, &ok, why, sizeof why, e))) {
                free(names);
                berth_dplan_free(&p);
                return rc;
            }
            if (!ok) {
                const char *r = berth_arena_strdup(scratch, why);
                for (uint32_t j = 0; !rc && j < nn; j++)
                    rc = r ? blk_add(cur, names[j], r) : BERTH_ENOMEM;
                continue;
            }
        }
        t->out->steps[t->out->nsteps - 1].disruptions[a->reason] += nn;
        if (!a->replace) {
            for (uint32_t j = 0; !rc && j < nn; j++) {
                if ((rc = track(t, names[j], (int)a->reason, -1)))
                    break;
                rc = taint(t, &t->tn[t->ntn - 1], berth_dreason_name(a->reason));
            }
            continue;
        }
        if (berth_grow((void **)&t->cmd, &t->capcmd, t->ncmd + 1, sizeof *t->cmd, 0)) {
            rc = BERTH_ENOMEM;
            break;
        }
        int32_t c = (int32_t)t->ncmd++;
        t->cmd[c] = (disrupt_tl_cmd){0, 0};
        char list[256] = "";
        for (uint32_t j = 0; j < nn; j++) {
            size_t l = strlen(list);
            snprintf(list + l, sizeof list - l, "%s%s", j ? "," : "", names[j]);
        }
        for (uint32_t j = 0; !rc && j < nn; j++)
            rc = track(t, names[j], (int)a->reason, c);
        for (uint32_t j = 0; !rc && j < a->nreplacements; j++)
            rc = launch(t, &a->replacements[j], c, list);
    }
    free(names);
    berth_dplan_free(&p);
    return rc ? internal(e, rc) : 0;
}

static uint32_t hptr(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 29;
    x *= 0x9E3779B97F4A7C15ull;
    return (uint32_t)(x >> 32);
}

/* The step's blocked set: compared with the previous one (events for new
 * or changed entries; entries are keyed by the node's name pointer, which
 * is stable for a node's life); reasons are copied into the timeline's
 * arena only when they change. Work: O(entries). */
static int record_blocked(disrupt_tl *t, blk *cur, blk *prev, int *changed)
{
    *changed = cur->n != prev->n;
    uint32_t cap = 16;
    while (cap < 2 * prev->n + 2)
        cap <<= 1;
    if (cap > t->bcap) {
        uint32_t *h = realloc(t->bidx, cap * sizeof *h);
        if (!h)
            return BERTH_ENOMEM;
        t->bidx = h;
        t->bcap = cap;
    }
    memset(t->bidx, 0, cap * sizeof *t->bidx);
    for (uint32_t j = 0; j < prev->n; j++) {
        uint32_t i = hptr(prev->v[j].node) & (cap - 1);
        while (t->bidx[i])
            i = (i + 1) & (cap - 1);
        t->bidx[i] = j + 1;
    }
    for (uint32_t i = 0; i < cur->n; i++) {
        const berth_dsim_blocked *pv = NULL;
        if (i < prev->n && prev->v[i].node == cur->v[i].node)
            pv = &prev->v[i];
        for (uint32_t h = hptr(cur->v[i].node) & (cap - 1); !pv && t->bidx[h];
             h = (h + 1) & (cap - 1))
            if (prev->v[t->bidx[h] - 1].node == cur->v[i].node)
                pv = &prev->v[t->bidx[h] - 1];
        if (pv && !strcmp(pv->reason, cur->v[i].reason)) {
            cur->v[i].reason = pv->reason;
            if (pv != &prev->v[i])
                *changed = 1;
            continue;
        }
        *changed = 1;
        if (!(cur->v[i].reason = disrupt_tl_str(t, "%s", cur->v[i].reason)))
            return BERTH_ENOMEM;
        int rc = disrupt_tl_event(t, BERTH_DEV_BLOCKED, cur->v[i].node, NULL, cur->v[i].reason);
        if (rc)
            return rc;
    }
    return 0;
}

static void init_free(disrupt_tl *t)
{
    free(t->tn);
    free(t->ln);
    free(t->cmd);
    free(t->pod_pdb);
    free(t->pod_state);
    free(t->pod_flags);
    free(t->pending);
    free(t->pdb_base);
    free(t->pdb_unavail);
    free(t->pdb_allow);
    berth_nameidx_free(&t->node_idx);
    berth_nameidx_free(&t->claim_idx);
    free(t->bidx);
}

static int init(disrupt_tl *t)
{
    berth_disrupt *m = t->m;
    berth_kcluster *k = &m->kube;
    size_t np = k->npods + 1, nb = k->npdbs + 1;
    t->pod_pdb = malloc(np * sizeof *t->pod_pdb);
    t->pod_state = calloc(np, 1);
    t->pod_flags = calloc(np, 1);
    t->pdb_base = calloc(nb, sizeof *t->pdb_base);
    t->pdb_unavail = calloc(nb, sizeof *t->pdb_unavail);
    t->pdb_allow = calloc(nb, sizeof *t->pdb_allow);
    if (!t->pod_pdb || !t->pod_state || !t->pod_flags || !t->pdb_base || !t->pdb_unavail ||
        !t->pdb_allow || rebuild(t))
        return BERTH_ENOMEM;
    for (uint32_t i = 0; i < k->npdbs; i++)
        t->pdb_base[i] = berth_pdb_disruptions_allowed(m, i);
    for (uint32_t p = 0; p < k->npods; p++) {
        berth_kpod *pd = &k->pods[p];
        t->pod_pdb[p] = -1;
        for (uint32_t i = 0; i < k->npdbs; i++)
            if (berth_kpdb_matches(&k->pdbs[i], pd))
                t->pod_pdb[p] = t->pod_pdb[p] == -1 ? (int32_t)i : -2;
        uint32_t n = disrupt_tl_node_index(t, pd->node_name);
        if (n != BERTH_KUBE_NONE) {
            pd->node_name = k->nodes[n].name; /* one pointer per node from now on */
            t->pod_state[p] = DTL_POD_BOUND;
        } else if (pd->terminating) {
            pd->node_name = NULL;
            t->pod_state[p] = DTL_POD_GONE;
        } else {
            pd->node_name = NULL;
            t->pod_state[p] = DTL_POD_PENDING;
            if (push_pending(t, p))
                return BERTH_ENOMEM;
        }
    }
    t->dirty = 1;
    for (uint32_t n = 0; n < k->nnodes; n++)
        t->cost += berth_node_price(m, n);
    /* nodes already being deleted in the input drain from the first step */
    for (uint32_t n = 0; n < k->nnodes; n++) {
        const berth_knode *nd = &k->nodes[n];
        int c = claim_of(t, nd->name), del = m->node_info[n].deleting;
        del |= c >= 0 && m->claims[c].deleting;
        for (uint32_t i = 0; i < nd->ntaints; i++)
            del |= !strcmp(nd->taints[i].key, DISRUPTED_TAINT);
        if (!del)
            continue;
        if (track(t, nd->name, DTL_REASON_DELETING, -1) ||
            berth_disrupt_taint(m, n, DISRUPTED_TAINT, BERTH_EFFECT_NOSCHEDULE))
            return BERTH_ENOMEM;
        disrupt_tl_node *d = &t->tn[t->ntn - 1];
        d->tainted = 1;
        d->deleted_at = t->now;
        d->grace = c >= 0 && m->claims[c].has_termination_grace ? m->claims[c].termination_grace
                                                                : -1;
    }
    return 0;
}

/* Drops removed nodes and launches nobody waits for any more. */
static void compact(disrupt_tl *t)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < t->ntn; i++)
        if (!t->tn[i].removed)
            t->tn[k++] = t->tn[i];
    t->ntn = k;
    k = 0;
    for (uint32_t i = 0; i < t->nln; i++)
        if (!t->ln[i].ready || t->cmd[t->ln[i].cmd].live)
            t->ln[k++] = t->ln[i];
    t->nln = k;
}

int berth_disrupt_simulate(berth_disrupt *m, const berth_dsim_options *o, berth_dtimeline *out,
                           berth_error *e)
{
    memset(out, 0, sizeof *out);
    berth_arena_init(&out->arena, 0);
    if (o->step <= 0)
        return berth_error_set(e, BERTH_EINVAL, "the step must be positive");
    if (o->to < o->from)
        return berth_error_set(e, BERTH_EINVAL, "the end of the window is before its start");
    if (o->launch_delay < 0)
        return berth_error_set(e, BERTH_EINVAL, "the launch delay must not be negative");
    uint64_t nsteps = (uint64_t)(o->to - o->from) / (uint64_t)o->step + 1;
    if (nsteps > BERTH_DSIM_MAX_STEPS)
        return berth_error_set(e, BERTH_EINVAL,
                               "%llu steps from the start to the end of the window; at most %d "
                               "(use a larger step or a shorter window)",
                               (unsigned long long)nsteps, BERTH_DSIM_MAX_STEPS);
    out->from = o->from;
    out->to = o->to;
    out->step = o->step;
    out->launch_delay = o->launch_delay;
    disrupt_tl t;
    memset(&t, 0, sizeof t);
    t.m = m;
    t.o = o;
    t.out = out;
    t.now = o->from;
    blk cur = {0}, prev = {0};
    int rc = init(&t);
    if (rc) {
        rc = oom(e);
        goto done;
    }
    out->nodes_start = m->kube.nnodes;
    out->cost_start = t.cost;
    int have_range = 0;
    uint32_t range0 = 0, rangen = 0;
    for (uint64_t s = 0; s < nsteps; s++) {
        if (berth_cancel_expired(o->cancel)) {
            rc = berth_error_set(e, BERTH_ETIMEDOUT, "stopped at the deadline");
            break;
        }
        t.now = o->from + (int64_t)s * o->step;
        /* the step is written optimistically and dropped when uneventful */
        if (berth_grow((void **)&out->steps, &out->capsteps, out->nsteps + 1, sizeof *out->steps,
                       0)) {
            rc = oom(e);
            break;
        }
        berth_dstep *st = &out->steps[out->nsteps++];
        memset(st, 0, sizeof *st);
        st->at = t.now;
        st->event0 = out->nevents;
        for (uint32_t i = 0; i < m->kube.npdbs; i++) {
            int64_t a = t.pdb_base[i] - t.pdb_unavail[i];
            t.pdb_allow[i] = a > 0 ? a : 0;
        }
        cur.n = 0;
        berth_arena scratch;
        berth_arena_init(&scratch, 0);
        if ((rc = advance(&t, e)) || (rc = plan_step(&t, &cur, &scratch, e)) ||
            (rc = advance(&t, e))) {
            berth_arena_free(&scratch);
            break;
        }
        for (uint32_t i = 0; i < t.ntn && !rc; i++)
            if (!t.tn[i].removed && t.tn[i].held)
                rc = blk_add(&cur, t.tn[i].name, t.tn[i].held);
        int changed = 0;
        if (!rc)
            rc = record_blocked(&t, &cur, &prev, &changed);
        berth_arena_free(&scratch);
        if (rc) {
            rc = oom(e);
            break;
        }
        compact(&t);
        if (changed || !have_range) {
            for (uint32_t i = 0; i < cur.n && !rc; i++)
                if (berth_grow((void **)&out->blocked, &out->capblocked, out->nblocked + 1,
                               sizeof *out->blocked, 0))
                    rc = oom(e);
                else
                    out->blocked[out->nblocked++] = cur.v[i];
            if (rc)
                break;
            range0 = out->nblocked - cur.n;
            rangen = cur.n;
            have_range = 1;
        }
        blk tmp = prev;
        prev = cur;
        cur = tmp;
        st = &out->steps[out->nsteps - 1];
        st->nevents = out->nevents - st->event0;
        st->blocked0 = range0;
        st->nblocked = rangen;
        st->nodes = m->kube.nnodes;
        st->cost = t.cost;
        st->pending = t.npending;
        for (int r = 0; r <= BERTH_DR_EXPIRED; r++)
            out->disruptions[r] += st->disruptions[r];
        out->nsteps_run++;
        int keep = s == 0 || s + 1 == nsteps || st->nevents;
        for (int r = 0; r <= BERTH_DR_EXPIRED; r++)
            keep |= st->disruptions[r] != 0;
        if (!keep)
            out->nsteps--;
    }
    out->nodes_end = m->kube.nnodes;
    out->cost_end = t.cost;
    out->pending_end = t.npending;
done:
    free(cur.v);
    free(prev.v);
    init_free(&t);
    if (rc)
        berth_dtimeline_free(out);
    return rc;
}

void berth_dtimeline_free(berth_dtimeline *t)
{
    free(t->steps);
    free(t->events);
    free(t->blocked);
    berth_arena_free(&t->arena);
    memset(t, 0, sizeof *t);
}
