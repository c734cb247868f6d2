/* autoscale/scaledown.c - scale-down (SPEC 5): existing nodes of a virtual
 * node group, least utilised first (max of cpu and memory requested over
 * allocatable, DaemonSet and mirror pods excluded; ties by name), are
 * removed when every pod on them moves to the remaining existing nodes
 * through the kube scheduler. A node is kept when its group is at
 * minNodes, a pod is labelled spotinst.io/restrict-scale-down: "true" or
 * annotated cluster-autoscaler.kubernetes.io/safe-to-evict: "false", a
 * PodDisruptionBudget allows fewer evictions than the node needs (the
 * allowance is spent across the plan), a pod fits nowhere else, or the
 * removal would break the group's headroom. DaemonSet pods are ignored.
 * The fast path asks the kube scheduler through one what-if session for
 * all candidates (a node's pods from the session, utilisation in one
 * pass); the plain
 * path (reference) schedules a view per candidate. Same decisions. With
 * threads, 1,024 nodes or more, the fast path asks the what-if questions of
 * several candidates at once on worker sessions and keeps the answers up to
 * the first acceptance (parallel.c; docs/autoscale.md "Threads"): the same
 * plan for every thread count. */
#include "autoscale/scaledown.h"
#include "core/invariant.h"

#include "berth/cancel.h"
#include "berth/grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Scale-down moves a pod unless it is a DaemonSet or mirror pod or is
 * terminating (read by the timeline too). */
int capacity_movable(const berth_autoscale *m, uint32_t pod)
{
    const berth_apod *ap = &m->pod_info[pod];
    return !ap->daemon && !ap->mirror && !m->kube.pods[pod].terminating;
}

static int movable(const capacity_pass *s, uint32_t pod)
{
    return s->pod_flags[pod] & CAPACITY_POD_MOVABLE;
}

/* max(cpu / allocatable cpu, mem / allocatable memory) of node c */
static double max_ratio(const capacity_node *c, int64_t cpu, int64_t mem)
{
    double u1 = c->alloc[0] > 0 ? (double)cpu / (double)c->alloc[0] : 0;
    double u2 = c->alloc[1] > 0 ? (double)mem / (double)c->alloc[1] : 0;
    return u1 > u2 ? u1 : u2;
}

static double utilisation(const capacity_pass *s, uint32_t n)
{
    int64_t cpu, mem;
    capacity_node_requests(s, n, &cpu, &mem);
    return max_ratio(&s->n[n], cpu, mem);
}

/* Fast: every node's utilisation in one pass over the pods (the same sums
 * as utilisation()). */
static void utilisation_all(const capacity_pass *s, double *util, int64_t *sum)
{
    const berth_kcluster *k = &s->m->kube;
    memset(sum, 0, ((size_t)s->nexisting * 2 + 2) * sizeof *sum);
    for (uint32_t p = 0; p < k->npods; p++) {
        uint32_t n = s->pod_node[p];
        if (n != BERTH_KUBE_NONE && n < s->nexisting && movable(s, p)) {
            sum[n * 2] += k->pods[p].req[BERTH_KRES_CPU];
            sum[n * 2 + 1] += k->pods[p].req[BERTH_KRES_MEMORY];
        }
    }
    for (uint32_t n = 0; n < s->nexisting; n++)
        util[n] = max_ratio(&s->n[n], sum[n * 2], sum[n * 2 + 1]);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Fast: the pods on node n in pod order, from the what-if session's list
 * of the node (the plan's session holds the pass's pods between
 * questions: the rejected ones are rolled back, the accepted ones kept).
 * An array, not links through the pods: once pods have moved, a node's
 * pods come from all over the pod table, and their lines are fetched
 * together. */
static uint32_t pods_on(const capacity_pass *s, const berth_ksession *ks, uint32_t n,
                        uint32_t *out)
{
    uint32_t c = 0, m;
    const uint32_t *on = berth_ksession_pods_on(ks, n, &m);
    for (uint32_t i = 0; i < m; i++) {
        /* the pass agrees (checked in debug builds: not read otherwise,
         * each pod's entry is a cache miss of its own at 50k nodes) */
        BERTH_ASSERT(s->pod_node[on[i]] == n);
        out[c++] = on[i];
    }
    if (c > 32) {
        qsort(out, c, sizeof *out, cmp_u32);
        return c;
    }
    for (uint32_t i = 1; i < c; i++) { /* few, mostly in order: insertion */
        uint32_t v = out[i], j = i;
        for (; j && out[j - 1] > v; j--)
            out[j] = out[j - 1];
        out[j] = v;
    }
    return c;
}

/* Fast: whether placing pods one at a time equals placing them in one call
 * (no percentageOfNodesToScore round robin, which restarts per call). */
static int per_pod_ok(const berth_kcluster *k)
{
    int32_t top = k->percentage_of_nodes_to_score;
    if (top > 0 && top < 100)
        return 0;
    for (uint32_t i = 0; i < k->nprofiles; i++) {
        int32_t p = k->profiles[i].percentage_of_nodes_to_score;
        if (p > 0 && p < 100)
            return 0;
    }
    return 1;
}

/* Fast: whether pods[0..n) are in the kube queue order the session uses
 * (priority, then creation, then input order): here, when they share
 * priority and creation and their input order ascends. */
static int in_queue_order(const berth_kcluster *k, const uint32_t *pods, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++) {
        const berth_kpod *a = &k->pods[pods[0]], *b = &k->pods[pods[i]];
        const berth_kpod *prev = &k->pods[pods[i - 1]];
        if (a->priority != b->priority || a->has_created != b->has_created ||
            (a->has_created && a->created != b->created) || prev->order >= b->order)
            return 0;
    }
    return 1;
}

int sd_open(capacity_pass *s, sd_ctx *c, uint32_t *pn, berth_error *e)
{
    const berth_kcluster *k = &s->m->kube;
    memset(c, 0, sizeof *c);
    c->arena = s->arena;
    c->cancel = s->cancel;
    for (uint32_t p = 0; p < k->npods; p++) {
        uint32_t n = s->pod_node[p];
        pn[p] = n != BERTH_KUBE_NONE && n < s->nexisting && !s->n[n].removed ? n
                                                                            : BERTH_KUBE_NONE;
    }
    berth_error se;
    berth_error_clear(&se);
    int rc = berth_ksession_open(&c->ks, k, pn, 0, NULL, &se);
    if (rc)
        return berth_error_set(e, rc, "%s", se.msg);
    berth_ksession_set_cancel(c->ks, s->cancel);
    /* the per-node loops of its placements on the plan's threads (no
     * worker could start: the calling thread does it all, same answers;
     * docs/autoscale.md "Threads") */
    if (berth_ksession_set_threads(c->ks, s->threads) == BERTH_ENOMEM)
        return berth_error_set(e, BERTH_ENOMEM, "out of memory planning scale-down");
    for (uint32_t n = 0; n < s->nexisting; n++)
        if (s->n[n].removed)
            berth_ksession_exclude(c->ks, n, 1);
    c->seq_ok = per_pod_ok(k);
    if (c->seq_ok && (rc = kube_fitidx_open(&c->fx, c->ks)))
        return berth_error_set(e, rc, "out of memory planning scale-down");
    return 0;
}

void sd_close(sd_ctx *c)
{
    kube_fitidx_close(c->fx);
    berth_ksession_close(c->ks);
    memset(c, 0, sizeof *c);
}

uint32_t sd_pods_on(const capacity_pass *s, const berth_ksession *ks, uint32_t n, uint32_t *out)
{
    return pods_on(s, ks, n, out);
}

int sd_utilisation_all(const capacity_pass *s, double *util)
{
    int64_t *sum = malloc(((size_t)s->nexisting * 2 + 2) * sizeof *sum);
    if (!sum)
        return BERTH_ENOMEM;
    utilisation_all(s, util, sum);
    free(sum);
    return 0;
}

/* comparator context: the pass and each node's utilisation */
typedef struct {
    const capacity_pass *s;
    const double *u;
} util_order;

static int cmp_util(const void *a, const void *b, void *ctx)
{
    const util_order *o = ctx;
    const capacity_pass *sort_s = o->s;
    const double *sort_u = o->u;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (sort_u[x] != sort_u[y])
        return sort_u[x] < sort_u[y] ? -1 : 1;
    return strcmp(sort_s->n[x].k->name, sort_s->n[y].k->name);
}

/* Fast: a candidate's sort key, the name as its rank in the session's
 * name order (the same order as strcmp, read from one flat array instead
 * of the names scattered over the estate) */
typedef struct {
    double u;
    uint32_t rank, n;
} util_key;

static int cmp_util_key(const void *a, const void *b, void *ctx)
{
    const util_key *x = a, *y = b;
    (void)ctx;
    if (x->u != y->u)
        return x->u < y->u ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
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

/* Fast: the answer of a question whose placements are made: all, or the
 * first pod that fits nowhere with the scheduler's text. */
static void answer_of(const berth_kcluster *k, sd_question *q)
{
    q->all = 1;
    for (uint32_t i = 0; i < q->npods && q->all; i++)
        if (q->placed[i] == BERTH_KUBE_NONE) {
            q->all = 0;
            const char *w = q->why[i] && strncmp(q->why[i], "0/0 ", 4) ? q->why[i]
                                                                       : "no other node to move to";
            snprintf(q->reason, sizeof q->reason, "pod %s/%s fits no other node: %s",
                     k->pods[q->pods[i]].ns, k->pods[q->pods[i]].name, w);
        }
}

int sd_whatif(sd_ctx *c, const berth_kcluster *k, sd_question *q)
{
    berth_ksession *ks = c->ks;
    kube_fitidx *fx = c->fx;
    uint32_t n = q->node, npods = q->npods, non = q->non;
    const uint32_t *pods = q->pods, *all_on = q->all_on;
    uint32_t *placed = q->placed;
    const char **why = q->why;
    int rc = 0;
    q->rc = q->all = 0;
    q->reason[0] = 0;
    berth_error_clear(&q->err);
    /* as a view without the node: all its pods leave, the movable ones are
     * placed on the others */
    berth_ksession_prefetch(ks, all_on, non);
    if (fx)
        kube_fitidx_prefetch(fx, pods, npods); /* only the moving pods ask it */
    q->mark = berth_ksession_mark(ks);
    q->fxpos = fx ? kube_fitidx_pos(fx) : 0;
    /* one at a time through the index (below): a movable pod leaves the
     * node just before it is placed, so a kept candidate never evicts (nor
     * rolls back) the pods after its first that fits nowhere. The same
     * answers: the node is excluded first, and the index reads no excluded
     * node's pods (its scores and reasons count candidates only; whether a
     * pod is inert depends on the signatures that exist, not on their
     * counts); the session, which counts spread and affinity, is asked only
     * once every pod has left. */
    int seq = c->seq_ok && in_queue_order(k, pods, npods), lazy = seq && fx;
    uint32_t out_n = lazy ? 0 : npods; /* pods[0..out_n) have left */
    for (uint32_t i = 0, j = 0; i < non && !rc; i++) {
        if (lazy && j < npods && pods[j] == all_on[i]) {
            j++;
            continue;
        }
        if (berth_ksession_placed(ks, all_on[i]))
            rc = berth_ksession_evict(ks, all_on[i]);
    }
    berth_ksession_exclude(ks, n, 1);
    if (fx && !rc)
        rc = kube_fitidx_touch(fx, n); /* its pods left, it is no candidate */
    berth_error se;
    berth_error_clear(&se);
    if (!rc && fx && npods && c->cancel && berth_cancel_expired(c->cancel)) {
        /* the index does not look at the clock: as the session would */
        snprintf(se.msg, sizeof se.msg, "stopped at the deadline");
        rc = BERTH_ETIMEDOUT;
    }
    if (!rc && seq) {
        /* the node stays when one pod fits nowhere, and the plan reports
         * the first such pod: in queue order pod by pod, stop there. The
         * fit index answers a plain pod in O(log N) (its class's max tree;
         * "fits nowhere" with the text kept per class), the session the
         * others */
        for (uint32_t i = 0; i < npods; i++)
            placed[i] = BERTH_KUBE_NONE;
        for (uint32_t i = 0; i < npods && !rc; i++) {
            int answer = KUBE_FIT_ASK;
            if (out_n == i && berth_ksession_placed(ks, pods[i]) &&
                (rc = berth_ksession_evict(ks, pods[i])))
                break;
            out_n = out_n > i + 1 ? out_n : i + 1;
            /* (a text of the index's own: answer_of reads it before the
             * index is asked again) */
            if (fx && (rc = kube_fitidx_place(fx, pods[i], &answer, &placed[i], &why[i], NULL)))
                break;
            if (answer == KUBE_FIT_NONE)
                break;
            if (answer == KUBE_FIT_PLACED)
                continue;
            for (; out_n < npods && !rc; out_n++) /* the session: every pod left */
                if (berth_ksession_placed(ks, pods[out_n]))
                    rc = berth_ksession_evict(ks, pods[out_n]);
            if (rc)
                break;
            rc = berth_ksession_place(ks, &pods[i], 1, &placed[i], &why[i], c->arena, &se);
            if (fx && placed[i] != BERTH_KUBE_NONE) {
                int trc = kube_fitidx_touch(fx, placed[i]);
                rc = rc ? rc : trc;
            }
            if (rc == BERTH_ENOFIT) {
                rc = 0;
                break;
            }
        }
    } else if (!rc) {
        rc = berth_ksession_place(ks, pods, npods, placed, why, c->arena, &se);
        for (uint32_t i = 0; fx && i < npods && rc != BERTH_ENOMEM; i++)
            if (placed[i] != BERTH_KUBE_NONE && kube_fitidx_touch(fx, placed[i]))
                rc = BERTH_ENOMEM;
    }
    if (rc == BERTH_ENOFIT)
        rc = 0;
    if (rc) {
        q->rc = rc;
        if (!se.msg[0]) /* the fit index's touch fails only for memory */
            snprintf(se.msg, sizeof se.msg, "%s",
                     rc == BERTH_ENOMEM ? "out of memory" : "what-if session failed");
        q->err = se;
        return rc;
    }
    answer_of(k, q);
    return 0;
}

int sd_rollback(sd_ctx *c, const sd_question *q)
{
    int rc = berth_ksession_rollback(c->ks, q->mark);
    if (!rc && c->fx)
        rc = kube_fitidx_retouch(c->fx, q->fxpos);
    return rc;
}

int sd_replay(sd_ctx *c, uint32_t node, const berth_amove *moves, uint32_t nmoves)
{
    int rc = 0;
    uint32_t m;
    const uint32_t *on;
    /* the last first: an evict shortens the list from its end */
    while (!rc && (on = berth_ksession_pods_on(c->ks, node, &m)) && m)
        rc = berth_ksession_evict(c->ks, on[m - 1]);
    berth_ksession_exclude(c->ks, node, 1);
    if (!rc && c->fx)
        rc = kube_fitidx_touch(c->fx, node);
    for (uint32_t i = 0; i < nmoves && !rc; i++) {
        /* every pod that moved was on node, so it has left: else the
         * session would hold it twice */
        if (NEVER(berth_ksession_node_of(c->ks, moves[i].pod) != BERTH_KUBE_NONE))
            return BERTH_EINVAL;
        rc = kube_session_assume(c->ks, moves[i].pod, kube_session_node(c->ks, moves[i].node));
        if (!rc && c->fx)
            rc = kube_fitidx_touch(c->fx, moves[i].node);
    }
    return rc;
}

/* PDBs: node's evictions pods[0..npods) against what is left of each
 * budget (pdb_need: per budget, counted up to the first short one) */
static void pdb_check(const berth_kcluster *k, const uint32_t *pods, uint32_t npods,
                      const int64_t *pdb_left, int64_t *pdb_need, char *reason, size_t size)
{
    memset(pdb_need, 0, (k->npdbs + 1) * sizeof *pdb_need);
    for (uint32_t i = 0; i < npods && !*reason; i++)
        for (uint32_t b = 0; b < k->npdbs && !*reason; b++)
            if (berth_kpdb_matches(&k->pdbs[b], &k->pods[pods[i]]) &&
                ++pdb_need[b] > pdb_left[b])
                snprintf(reason, size,
                         "PodDisruptionBudget %s/%s allows %lld more disruption(s), the node "
                         "needs %lld",
                         k->pdbs[b].ns, k->pdbs[b].name, (long long)pdb_left[b],
                         (long long)pdb_need[b]);
}

/* The checks before the what-if, on the plan's thread (they read what an
 * acceptance changes: group counts, PDB budgets, where pods are): node n's
 * pods (q->all_on, fast), its movable pods (q->pods) and pdb_need; reason
 * set when the node is kept. */
static void precheck(capacity_pass *s, uint32_t n, const berth_ksession *ks,
                     sd_question *q, const int64_t *pdb_left,
                     int64_t *pdb_need, char *reason, size_t size)
{
    const berth_autoscale *m = s->m;
    const berth_kcluster *k = &m->kube;
    const capacity_node *c = &s->n[n];
    const berth_vng *v = &m->vngs[c->vng];
    reason[0] = 0;
    q->node = n;
    q->npods = q->non = 0;
    if (s->vng_nodes[c->vng] - 1 < v->min_nodes) {
        snprintf(reason, size, "virtual node group %s is at minNodes %lld", v->name,
                 (long long)v->min_nodes);
        return;
    }
    int fast = ks != NULL;
    uint32_t npods = 0, non = fast ? pods_on(s, ks, n, q->all_on) : 0;
    q->non = non;
    for (uint32_t i = 0, p; !*reason && (fast ? i < non : i < k->npods); i++) {
        p = fast ? q->all_on[i] : i;
        if ((!fast && s->pod_node[p] != n) || !movable(s, p))
            continue;
        const berth_kpod *kp = &k->pods[p];
        if (s->pod_flags[p] & CAPACITY_POD_RESTRICT)
            snprintf(reason, size, "pod %s/%s is labelled " BERTH_RESTRICT_SCALE_DOWN ": \"true\"",
                     kp->ns, kp->name);
        else if (s->pod_flags[p] & CAPACITY_POD_NOT_SAFE)
            snprintf(reason, size, "pod %s/%s is annotated " BERTH_SAFE_TO_EVICT ": \"false\"",
                     kp->ns, kp->name);
        q->pods[npods++] = p;
    }
    q->npods = npods;
    if (*reason)
        return;
    pdb_check(k, q->pods, npods, pdb_left, pdb_need, reason, size);
}

/* The answer q taken on the plan's state: the pods move to their places
 * and the group's headroom is checked (unplaced: capacity_unplace and
 * removed are done already). 1: the node goes (the pass changed); 0: it
 * stays (the pass as before), reason set. */
static int decide(capacity_pass *s, const sd_question *q, int unplaced, char *reason, size_t size)
{
    capacity_node *c = &s->n[q->node];
    const berth_vng *v = &s->m->vngs[c->vng];
    int all = q->all;
    if (!all && !unplaced) {
        /* a pod fits nowhere: the pass stays as it is (its pods never left) */
        memcpy(reason, q->reason, size < sizeof q->reason ? size : sizeof q->reason);
        return 0;
    }
    if (!unplaced) {
        for (uint32_t i = 0; i < q->npods; i++)
            capacity_unplace(s, q->pods[i]);
        c->removed = 1;
    }
    if (!all)
        memcpy(reason, q->reason, size < sizeof q->reason ? size : sizeof q->reason);
    if (all) {
        /* the receiving nodes' sums, fetched together */
        for (uint32_t i = 0; i < q->npods; i++) {
            __builtin_prefetch(&s->n[q->placed[i]].req, 1);
            __builtin_prefetch(&s->n[q->placed[i]].npods, 1);
        }
        for (uint32_t i = 0; i < q->npods; i++)
            capacity_place(s, q->pods[i], q->placed[i]);
        s->vng_nodes[c->vng]--;
        for (uint32_t h = 0; all && h < v->nheadroom; h++)
            if (capacity_headroom_gap(s, (uint32_t)c->vng, h, NULL) < 0) {
                all = 0;
                snprintf(reason, size, "removing it would leave group %s short of its headroom",
                         v->name);
            }
        if (!all) {
            s->vng_nodes[c->vng]++;
            for (uint32_t i = 0; i < q->npods; i++)
                capacity_unplace(s, q->pods[i]);
        }
    }
    if (!all) {
        c->removed = 0;
        for (uint32_t i = 0; i < q->npods; i++)
            capacity_place(s, q->pods[i], q->node);
    }
    return all;
}

/* a candidate of a wave: kept by the checks (q < 0, reason) or question q */
typedef struct sd_item {
    uint32_t ci;
    int q;
    char reason[256];
} sd_item;

#define SD_ITEMS 64 /* a wave's candidates at most */

int capacity_scale_down(capacity_pass *s, berth_error *e)
{
    const berth_autoscale *m = s->m;
    const berth_kcluster *k = &m->kube;
    uint32_t *cand = malloc((s->nexisting + 1) * sizeof *cand);
    double *util = calloc(s->nexisting + 1, sizeof *util);
    int64_t *pdb_left = calloc(k->npdbs + 1, sizeof *pdb_left);
    int64_t *pdb_need = calloc(k->npdbs + 1, sizeof *pdb_need);
    uint32_t *pods = malloc((k->npods + 1) * sizeof *pods);
    uint32_t *placed = malloc((k->npods + 1) * sizeof *placed);
    const char **why = calloc(k->npods + 1, sizeof *why);
    /* a wave's questions: at most the threads and SD_ITEMS (more workers
     * would never be asked, yet replay every removal) */
    uint32_t T = s->threads > 1 ? (s->threads < SD_ITEMS ? s->threads : SD_ITEMS) : 1;
    sd_question *qs = calloc(T, sizeof *qs);
    sd_item *items = malloc(SD_ITEMS * sizeof *items);
    /* fast path: one what-if session for all candidates */
    int fast = !s->reference;
    uint32_t *all_on = NULL, *pn = NULL;
    int64_t *sum = NULL;
    berth_ksession *ks = NULL;
    kube_fitidx *fx = NULL; /* the fit index (kube/fitindex.c), NULL: the session alone */
    sd_workers *wk = NULL;
    int rc = 0, seq_ok = 0;
    if (!cand || !util || !pdb_left || !pdb_need || !pods || !placed || !why || !qs || !items) {
        rc = BERTH_ENOMEM;
        goto out;
    }
    if (fast) {
        all_on = malloc(((size_t)k->npods + 1) * sizeof *all_on);
        pn = malloc(((size_t)k->npods + 1) * sizeof *pn);
        sum = malloc(((size_t)s->nexisting * 2 + 2) * sizeof *sum);
        if (!all_on || !pn || !sum) {
            rc = BERTH_ENOMEM;
            goto out;
        }
        sd_ctx c0;
        rc = sd_open(s, &c0, pn, e);
        ks = c0.ks;
        fx = c0.fx;
        seq_ok = c0.seq_ok;
        if (rc) {
            fast = -1; /* message set */
            goto out;
        }
        utilisation_all(s, util, sum);
    }
    sd_ctx plan = {ks, fx, s->arena, s->cancel, seq_ok};
    for (uint32_t i = 0; i < k->npdbs; i++)
        pdb_left[i] = capacity_pdb_allowed(k, &k->pdbs[i]);
    uint32_t nc = 0;
    for (uint32_t n = 0; n < s->nexisting; n++)
        if (s->n[n].vng >= 0) {
            if (!fast)
                util[n] = utilisation(s, n);
            cand[nc++] = n;
        }
    if (fast) {
        util_key *key = malloc((nc + 1) * sizeof *key);
        if (!key) {
            rc = BERTH_ENOMEM;
            goto out;
        }
        for (uint32_t i = 0; i < nc; i++)
            key[i] = (util_key){util[cand[i]], kube_session_node(ks, cand[i]), cand[i]};
        qsort_r(key, nc, sizeof *key, cmp_util_key, NULL);
        for (uint32_t i = 0; i < nc; i++)
            cand[i] = key[i].n;
        free(key);
    } else {
        util_order uo = {s, util};
        qsort_r(cand, nc, sizeof *cand, cmp_util, &uo);
    }
    /* Waves (parallel.c, docs/autoscale.md "Threads"): the checks of the
     * next candidates in order, the questions of up to `width` of them at
     * once, the answers taken in candidate order up to the first accepted
     * one (the rest asked again). One thread: a wave is one question, the
     * sequential walk. */
    int par = fast > 0 && sd_par_on(s);
    uint32_t down0 = s->plan->ndown, run = 0, asked = 0, pdb_of = BERTH_KUBE_NONE;
    for (uint32_t ci = 0; ci < nc;) {
        uint32_t width = 1;
        if (par && asked >= SD_WARMUP)
            width = sd_width(run, T);
        if (width > 1 && !wk) {
            if ((rc = sd_workers_open(&wk, s, T, &plan, pn, down0))) {
                rc = berth_error_set(e, rc, "what-if worker session failed");
                fast = -1;
                goto out;
            }
            if (!wk) {
                par = 0; /* the sequential walk, same answers */
                width = 1;
            }
        }
        uint32_t ni = 0, nq = 0, off = 0;
        while (ci < nc && nq < width && ni < SD_ITEMS) {
            uint32_t n = cand[ci++];
            char reason[256];
            sd_question *q = &qs[nq];
            q->all_on = all_on ? all_on + off : NULL;
            q->pods = pods + off;
            q->placed = placed + off;
            q->why = why + off;
            pdb_of = BERTH_KUBE_NONE;
            precheck(s, n, fast ? ks : NULL, q, pdb_left, pdb_need, reason, sizeof reason);
            if (*reason) {
                if (!nq) { /* no question before it: kept */
                    if ((rc = block(s, n, "%s%s", reason, "")))
                        goto out;
                    continue;
                }
                items[ni].ci = ci - 1;
                items[ni].q = -1;
                memcpy(items[ni++].reason, reason, sizeof reason);
                continue;
            }
            off += q->non;
            pdb_of = n; /* pdb_need is this candidate's */
            items[ni].ci = ci - 1; /* (its reason is not read) */
            items[ni++].q = (int)nq++;
        }
        if (!nq)
            continue;
        int unplaced = 0;
        if (!fast) { /* the plain path schedules a view without the node */
            sd_question *q = &qs[0];
            for (uint32_t i = 0; i < q->npods; i++)
                capacity_unplace(s, q->pods[i]);
            s->n[q->node].removed = 1;
            unplaced = 1;
            if ((rc = capacity_schedule(s, q->pods, q->npods, 0, q->placed, q->why)))
                goto out;
            answer_of(k, q);
        } else if (nq == 1) {
            sd_whatif(&plan, k, &qs[0]);
        } else {
            sd_workers_ask(wk, &plan, k, qs, nq);
        }
        s->plan->down_questions += nq;
        s->plan->down_worker_questions += nq - 1;
        int took = -1, fallback = 0;
        for (uint32_t i = 0; i < ni && took < 0 && !fallback; i++) {
            const sd_item *it = &items[i];
            if (it->q < 0) {
                if ((rc = block(s, cand[it->ci], "%s%s", it->reason, "")))
                    goto out;
                continue;
            }
            sd_question *q = &qs[it->q];
            sd_ctx *cx = fast ? sd_workers_ctx(wk, &plan, (uint32_t)it->q) : NULL;
            if (q->rc == BERTH_ENOMEM && it->q > 0) {
                /* a worker ran out of memory: the plan's context is at
                 * the wave's start (every answer before was a rejection,
                 * rolled back): ask again from here, sequentially */
                ci = it->ci;
                fallback = 1;
                break;
            }
            if (q->rc) {
                rc = berth_error_set(e, q->rc, "%s", q->err.msg);
                fast = -1;
                goto out;
            }
            asked++;
            char reason[256];
            if (decide(s, q, unplaced, reason, sizeof reason)) {
                took = (int)i;
                break;
            }
            run++;
            int rb = fast ? sd_rollback(cx, q) : 0;
            if (rb && it->q == 0) {
                rc = berth_error_set(e, rb, "what-if session rollback failed");
                fast = -1;
                goto out;
            }
            if ((rc = block(s, q->node, "%s%s", reason, "")))
                goto out;
            if (rb) { /* a worker's: the walk goes on without the workers */
                ci = it->ci + 1;
                fallback = 1;
            }
        }
        if (fallback) {
            sd_workers_close(wk);
            wk = NULL;
            par = 0;
            continue;
        }
        if (took < 0)
            continue;
        /* accepted: the answers after it are dropped, asked again */
        const sd_item *acc = &items[took];
        sd_question *q = &qs[acc->q];
        ci = acc->ci + 1;
        run = 0;
        /* (each a worker's: question 0 comes first; a failed rollback
         * leaves the workers, not the plan, out of step) */
        for (uint32_t i = (uint32_t)took + 1; i < ni; i++)
            if (items[i].q > 0 &&
                sd_rollback(sd_workers_ctx(wk, &plan, (uint32_t)items[i].q), &qs[items[i].q]))
                fallback = 1;
        if (pdb_of != q->node) { /* its pdb_need again (later checks wrote theirs) */
            char reason[256] = "";
            pdb_check(k, q->pods, q->npods, pdb_left, pdb_need, reason, sizeof reason);
        }
        if ((rc = capacity_add_scaledown(s, q->node, util[q->node], q->pods, q->placed, q->npods,
                                         NULL, 0, pdb_left, pdb_need)))
            goto out;
        if (wk) { /* every other context takes the removal */
            const berth_ascaledown *d = &s->plan->down[s->plan->ndown - 1];
            if (!fallback)
                rc = sd_workers_replay(wk, &plan, (uint32_t)acc->q, d->node, d->moves,
                                       d->nmoves);
            else if (acc->q > 0) /* the workers go: the plan's context at least */
                rc = sd_replay(&plan, d->node, d->moves, d->nmoves);
            if (!rc)
                rc = sd_workers_defect(wk);
            if (rc) {
                rc = berth_error_set(e, rc, "what-if session replay failed");
                fast = -1;
                goto out;
            }
            if (fallback || sd_workers_broken(wk)) { /* the rest sequentially */
                sd_workers_close(wk);
                wk = NULL;
                par = 0;
            }
        }
        /* the removal is for good: no question goes back past it */
        if (fast > 0)
            sd_workers_commit(wk, &plan);
    }
out:
    sd_workers_close(wk);
    kube_fitidx_close(fx);
    berth_ksession_close(ks);
    free(all_on);
    free(pn);
    free(sum);
    free(cand);
    free(util);
    free(pdb_left);
    free(pdb_need);
    free(pods);
    free(placed);
    free(why);
    free(qs);
    free(items);
    if (rc && fast >= 0)
        rc = berth_error_set(e, rc, "out of memory planning scale-down");
    return rc;
}

/* ---- exported for cluster-autoscaler mode (state.h) ---- */

int capacity_add_scaledown(capacity_pass *s, uint32_t n, double util, const uint32_t *pods,
                           const uint32_t *placed, uint32_t npods, const uint32_t *gone,
                           uint32_t ngone, int64_t *pdb_left, const int64_t *pdb_need)
{
    berth_aplan *plan = s->plan;
    for (uint32_t b = 0; b < s->m->kube.npdbs; b++)
        pdb_left[b] -= pdb_need[b];
    if (berth_grow((void **)&plan->down, &plan->capdown, plan->ndown + 1, sizeof *plan->down, 0))
        return BERTH_ENOMEM;
    berth_ascaledown *d = &plan->down[plan->ndown++];
    memset(d, 0, sizeof *d);
    d->node = n;
    d->vng = (uint32_t)s->n[n].vng;
    d->utilisation = util;
    d->moves = malloc((npods + 1) * sizeof *d->moves);
    if (gone)
        d->evicted = malloc((ngone + 1) * sizeof *d->evicted);
    if (!d->moves || (gone && !d->evicted))
        return BERTH_ENOMEM;
    for (uint32_t i = 0; i < npods; i++)
        d->moves[d->nmoves++] = (berth_amove){pods[i], placed[i]};
    for (uint32_t i = 0; i < ngone; i++)
        d->evicted[d->nevicted++] = gone[i];
    return 0;
}

int64_t capacity_pdb_allowed(const berth_kcluster *k, const berth_kpdb *b)
{
    return berth_kpdb_count_allowed(k, b, NULL, NULL); /* every pod taken as healthy */
}

int capacity_pod_movable(const capacity_pass *s, uint32_t pod)
{
    return movable(s, pod);
}

void capacity_node_requests(const capacity_pass *s, uint32_t n, int64_t *cpu, int64_t *mem)
{
    const berth_kcluster *k = &s->m->kube;
    *cpu = *mem = 0;
    for (uint32_t p = 0; p < k->npods; p++)
        if (s->pod_node[p] == n && movable(s, p)) {
            *cpu += k->pods[p].req[BERTH_KRES_CPU];
            *mem += k->pods[p].req[BERTH_KRES_MEMORY];
        }
}

double capacity_utilisation(const capacity_pass *s, uint32_t n)
{
    return utilisation(s, n);
}
