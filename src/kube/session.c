/* kube/session.c - the incremental what-if session (berth_ksession): one
 * kube scheduler state (kube_loop) over a shallow copy of a cluster's node
 * table (nodes sorted by name, then the spare slots) and the caller's pod
 * table itself, shared read only as a pending view (kube_sched.
 * pending_view: every pod pending and not terminating to the scheduler);
 * where each pod is lives in the session's own arrays (pod_node,
 * pod_bound). Changed in place by evict / bind / exclude / spare / place
 * and restored exactly by an undo log. A question costs the kube
 * scheduler's per-pod work for the pods it moves (the fast path for plain
 * pods), never a rebuild of the columns, counters or caches. */
#include "berth/grow.h"
#include "kube/fastpath.h"
#include "kube/fitindex.h"
#include "kube/state.h"
#include "core/invariant.h"

#include <stdlib.h>
#include <string.h>

enum { U_EXCLUDE, U_EVICT, U_BIND, U_PLACE, U_SPARE };

typedef struct undo {
    uint8_t op, flag;   /* EXCLUDE: previous flag; EVICT: the pod was bound */
    uint32_t a, b;      /* pod or node (session index), node */
} undo;

struct berth_ksession {
    const berth_kcluster *src;
    berth_kcluster v;           /* nodes: k's sorted by name, then spare slots
                                 * (k's own when already in name order without
                                 * spare slots: nodes_shared); pods: k's own
                                 * (never written) */
    int nodes_shared;
    uint32_t nreal, nspare;
    uint32_t *to_v, *to_k;      /* real nodes: k index <-> session index */
    uint32_t *pod_node;         /* per pod: session node index or BERTH_KUBE_NONE */
    uint8_t *pod_bound;         /* per pod: bound (open, bind) rather than placed */
    uint8_t *excluded;          /* per session node */
    uint8_t *spare_on;          /* per spare slot */
    uint32_t *slot;             /* place: per pod, position in the caller's array */
    uint32_t *queue;
    berth_knode placeholder;    /* an empty spare slot */
    berth_kube_options opt;
    kube_loop L;
    undo *log;
    uint32_t nlog, caplog;
    uint64_t base;              /* changes kept for good (commit): a mark counts from 0 */
    int broken;                 /* an exclude ran out of memory */
    /* place: decisions of unplaced pods */
    const char **why;
    berth_arena *a;
    int oom;
};

static uint32_t to_session(const berth_ksession *s, uint32_t node)
{
    return node < s->nreal ? s->to_v[node] : node;
}

static uint32_t to_caller(const berth_ksession *s, uint32_t node)
{
    if (node == BERTH_KUBE_NONE)
        return node;
    return node < s->nreal ? s->to_k[node] : node;
}

static int cmp_src_node(const void *a, const void *b, void *ctx)
{
    const berth_kcluster *sort_src = ctx;
    const berth_knode *x = &sort_src->nodes[*(const uint32_t *)a];
    const berth_knode *y = &sort_src->nodes[*(const uint32_t *)b];
    return strcmp(x->name, y->name);
}

static int log_push(berth_ksession *s, int op, int flag, uint32_t a, uint32_t b)
{
    if (s->nlog == s->caplog &&
        berth_grow((void **)&s->log, &s->caplog, s->nlog + 1, sizeof *s->log, 0))
        return BERTH_ENOMEM;
    s->log[s->nlog++] = (undo){(uint8_t)op, (uint8_t)flag, a, b};
    return 0;
}

static void on_decision(void *ctx, const berth_kcluster *k, const berth_kdecision *d)
{
    berth_ksession *s = ctx;
    (void)k;
    if (d->node != BERTH_KUBE_NONE || !s->why || !s->a)
        return;
    const char *txt = d->summary ? d->summary : "no node fits";
    const char *c = berth_arena_strdup(s->a, txt);
    s->why[s->slot[d->pod]] = c;
    if (!c)
        s->oom = 1;
}

void berth_ksession_close(berth_ksession *s)
{
    if (!s)
        return;
    if (s->L.built)
        kube_loop_free(&s->L);
    if (!s->nodes_shared)
        free(s->v.nodes);
    berth_arena_free(&s->v.arena);
    free(s->to_v);
    free(s->to_k);
    free(s->pod_node);
    free(s->pod_bound);
    free(s->excluded);
    free(s->spare_on);
    free(s->slot);
    free(s->queue);
    free(s->log);
    free(s);
}

/* pod on session node n as a bound pod (not logged) */
static int bind_pod(berth_ksession *s, uint32_t pod, uint32_t n, int bound)
{
    int rc = kube_place(&s->L.s, pod, n, bound);
    s->pod_node[pod] = n;
    s->pod_bound[pod] = (uint8_t)bound;
    return rc;
}

static int unbind_pod(berth_ksession *s, uint32_t pod)
{
    uint32_t n = s->pod_node[pod];
    int rc = kube_evict(&s->L.s, pod, n, s->pod_bound[pod]);
    s->pod_node[pod] = BERTH_KUBE_NONE;
    s->pod_bound[pod] = 0;
    return rc;
}

int berth_ksession_open(berth_ksession **out, const berth_kcluster *k, const uint32_t *pod_node,
                        uint32_t nspare, const berth_kprofile *profile, berth_error *e)
{
    *out = NULL;
    berth_ksession *s = calloc(1, sizeof *s);
    if (!s)
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    s->src = k;
    s->nreal = k->nnodes;
    s->nspare = nspare;
    if ((uint64_t)k->nnodes + nspare >= BERTH_KUBE_NONE) {
        free(s);
        return berth_error_set(e, BERTH_EINVAL, "too many nodes: %u and %u spare slots",
                               k->nnodes, nspare);
    }
    berth_kcluster *v = &s->v;
    berth_arena_init(&v->arena, 0);
    memcpy(v->res_names, k->res_names, sizeof v->res_names);
    v->nres = k->nres;
    v->workloads = k->workloads;
    v->nworkloads = k->nworkloads;
    v->namespaces = k->namespaces;
    v->nnamespaces = k->nnamespaces;
    v->profiles = k->profiles;
    v->nprofiles = k->nprofiles;
    v->percentage_of_nodes_to_score = k->percentage_of_nodes_to_score;
    uint32_t N = k->nnodes + nspare, P = k->npods;
    /* nodes in name order (kube_sched_init's order, tie-break first); a
     * caller whose nodes are in name order already (a loaded model, or
     * kubectl's listing) pays one pass, not a sort reading every name
     * log N times; and without spare slots its table is the session's,
     * read only as the pods (kube_sched_init sorts and writes only nodes
     * out of order and spare slots): at 50,000 nodes a copy of 20 MB */
    int ascending = berth_kube_names_ascending(k->nodes, k->nnodes);
    s->nodes_shared = ascending && !nspare && k->nnodes;
    v->nodes = s->nodes_shared ? (berth_knode *)k->nodes : calloc(N ? N : 1, sizeof *v->nodes);
    /* the caller's pods, read only (const only in name: the pending view
     * writes nothing, see kube_sched.pending_view) */
    v->pods = (berth_kpod *)k->pods;
    s->to_v = malloc((k->nnodes ? k->nnodes : 1) * sizeof *s->to_v);
    s->to_k = malloc((k->nnodes ? k->nnodes : 1) * sizeof *s->to_k);
    s->pod_node = malloc((P ? P : 1) * sizeof *s->pod_node);
    s->pod_bound = calloc(P ? P : 1, 1);
    s->excluded = calloc(N ? N : 1, 1);
    s->spare_on = calloc(nspare ? nspare : 1, 1);
    s->slot = malloc((P ? P : 1) * sizeof *s->slot);
    s->queue = malloc((P ? P : 1) * sizeof *s->queue);
    int rc = 0;
    if (!v->nodes || !s->to_v || !s->to_k || !s->pod_node || !s->pod_bound ||
        !s->excluded || !s->spare_on || !s->slot || !s->queue) {
        rc = berth_error_set(e, BERTH_ENOMEM, "out of memory");
        goto fail;
    }
    for (uint32_t n = 0; n < k->nnodes; n++)
        s->to_k[n] = n;
    if (!ascending)
        qsort_r(s->to_k, k->nnodes, sizeof *s->to_k, cmp_src_node, (void *)k);
    for (uint32_t i = 0; i < k->nnodes; i++) {
        s->to_v[s->to_k[i]] = i;
        if (!s->nodes_shared)
            v->nodes[i] = k->nodes[s->to_k[i]];
    }
    s->placeholder.name = "";
    for (uint32_t i = 0; i < nspare; i++)
        v->nodes[k->nnodes + i] = s->placeholder;
    v->nnodes = N;
    /* pods: the session owns where each pod is (pod_node, pod_bound); a pod
     * counts (terminating or not) once bound or placed in the session, as a
     * view's pending pod */
    for (uint32_t p = 0; p < P; p++)
        s->pod_node[p] = BERTH_KUBE_NONE;
    v->npods = P;
    s->opt.profile = profile;
    s->opt.tiebreak = BERTH_TIE_FIRST;
    s->opt.on_decision = on_decision;
    s->opt.ctx = s;
    if ((rc = kube_loop_init(&s->L, v, &s->opt, nspare, 1, e)))
        goto fail;
    if (!s->L.s.off && !(s->L.s.off = calloc(N ? N : 1, 1))) {
        rc = berth_error_set(e, BERTH_ENOMEM, "out of memory");
        goto fail;
    }
    /* each pod's node (in pod_node for now), then the nodes' pod lists
     * sized at once (one allocation, written in place), then the binds */
    uint32_t *count = calloc(N ? N : 1, sizeof *count);
    if (!count) {
        rc = berth_error_set(e, BERTH_ENOMEM, "out of memory");
        goto fail;
    }
    for (uint32_t p = 0; p < P; p++) {
        const berth_kpod *kp = &k->pods[p];
        uint32_t n = BERTH_KUBE_NONE;
        if (kp->terminating)
            n = BERTH_KUBE_NONE; /* not bound in the session */
        else if (pod_node && pod_node[p] != BERTH_KUBE_NONE && pod_node[p] < k->nnodes)
            n = s->to_v[pod_node[p]];
        else if (!pod_node && kp->node_name)
            n = kube_node_by_name(&s->L.s, kp->node_name);
        s->pod_node[p] = n;
        if (n != BERTH_KUBE_NONE)
            count[n]++;
    }
    rc = kube_sched_size_lists(&s->L.s, count);
    free(count);
    for (uint32_t p = 0; p < P && !rc; p++) {
        uint32_t n = s->pod_node[p];
        s->pod_node[p] = BERTH_KUBE_NONE;
        if (n != BERTH_KUBE_NONE)
            rc = bind_pod(s, p, n, 1);
    }
    if (rc) {
        rc = berth_error_set(e, rc, "what-if session: %s", berth_strerror(rc));
        goto fail;
    }
    *out = s;
    return 0;
fail:
    berth_ksession_close(s);
    return rc;
}

void berth_ksession_exclude(berth_ksession *s, uint32_t node, int excluded)
{
    if (node >= s->nreal + s->nspare)
        return;
    uint32_t n = to_session(s, node);
    excluded = excluded != 0;
    if (n >= s->nreal && !s->spare_on[n - s->nreal])
        return; /* an empty spare slot receives nothing anyway */
    if (s->excluded[n] == excluded)
        return;
    if (log_push(s, U_EXCLUDE, s->excluded[n], n, 0)) {
        s->broken = 1;
        return;
    }
    s->excluded[n] = (uint8_t)excluded;
    if (kube_node_exclude(&s->L.s, n, excluded))
        s->broken = 1;
}

int berth_ksession_evict(berth_ksession *s, uint32_t pod)
{
    if (pod >= s->v.npods || s->pod_node[pod] == BERTH_KUBE_NONE)
        return BERTH_EINVAL;
    uint32_t n = s->pod_node[pod];
    if (log_push(s, U_EVICT, s->pod_bound[pod], pod, n))
        return BERTH_ENOMEM;
    return unbind_pod(s, pod);
}

int berth_ksession_bind(berth_ksession *s, uint32_t pod, uint32_t node)
{
    if (pod >= s->v.npods || s->pod_node[pod] != BERTH_KUBE_NONE ||
        node >= s->nreal + s->nspare)
        return BERTH_EINVAL;
    uint32_t n = to_session(s, node);
    if (n >= s->nreal && !s->spare_on[n - s->nreal])
        return BERTH_EINVAL;
    if (log_push(s, U_BIND, 1, pod, n))
        return BERTH_ENOMEM;
    return bind_pod(s, pod, n, 1);
}

int berth_ksession_spare(berth_ksession *s, uint32_t i, const berth_knode *n, uint32_t *node)
{
    if (i >= s->nspare || s->spare_on[i] || !n || !n->name || !n->name[0] ||
        kube_node_by_name(&s->L.s, n->name) != BERTH_KUBE_NONE)
        return BERTH_EINVAL;
    if (log_push(s, U_SPARE, 0, i, 0))
        return BERTH_ENOMEM;
    s->spare_on[i] = 1;
    *node = s->nreal + i;
    return kube_node_activate(&s->L.s, s->nreal + i, n);
}

int berth_ksession_place(berth_ksession *s, const uint32_t *pods, uint32_t n, uint32_t *placed,
                         const char **why, berth_arena *a, berth_error *e)
{
    if (s->broken)
        return berth_error_set(e, BERTH_ENOMEM, "out of memory in an earlier exclude");
    for (uint32_t i = 0; i < n; i++) {
        uint32_t p = pods[i];
        if (p >= s->v.npods || s->pod_node[p] != BERTH_KUBE_NONE)
            return berth_error_set(e, BERTH_EINVAL, "pod %u is not a pod of the session or is bound",
                                   p);
        s->slot[p] = BERTH_KUBE_NONE;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (s->slot[pods[i]] != BERTH_KUBE_NONE)
            return berth_error_set(e, BERTH_EINVAL, "pod %u is listed twice", pods[i]);
        s->slot[pods[i]] = i;
        placed[i] = BERTH_KUBE_NONE;
        if (why)
            why[i] = NULL;
    }
    memcpy(s->queue, pods, (size_t)n * sizeof *pods);
    kube_queue_sort(&s->v, s->queue, n);
    s->why = why;
    s->a = a;
    s->oom = 0;
    s->L.no_summary = !(why && a);
    /* as a fresh berth_kube_schedule (a view) starts its round robin */
    s->L.s.next_start = 0;
    int rc = 0, unplaced = 0;
    for (uint32_t qi = 0; qi < n && !rc; qi++) {
        uint32_t pod = s->queue[qi], node;
        rc = kube_loop_pod(&s->L, pod, &node, e);
        if (node == BERTH_KUBE_NONE) {
            unplaced = 1;
            continue;
        }
        /* kube_loop_pod assumed it: record it as placed */
        s->pod_node[pod] = node;
        s->pod_bound[pod] = 0;
        placed[s->slot[pod]] = to_caller(s, node);
        if (log_push(s, U_PLACE, 0, pod, node)) {
            /* a placement the log does not hold could not be rolled back */
            unbind_pod(s, pod);
            placed[s->slot[pod]] = BERTH_KUBE_NONE;
            if (!rc)
                rc = berth_error_set(e, BERTH_ENOMEM, "out of memory");
        }
    }
    s->why = NULL;
    s->a = NULL;
    if (!rc && s->oom)
        rc = berth_error_set(e, BERTH_ENOMEM, "out of memory");
    if (rc)
        return rc;
    return unplaced ? BERTH_ENOFIT : 0;
}

void berth_ksession_set_cancel(berth_ksession *s, const berth_cancel *c)
{
    s->opt.cancel = c;
}

int berth_ksession_set_threads(berth_ksession *s, uint32_t threads)
{
    return kube_loop_set_threads(&s->L, threads);
}

uint32_t berth_ksession_node_of(const berth_ksession *s, uint32_t pod)
{
    if (pod >= s->v.npods)
        return BERTH_KUBE_NONE;
    return to_caller(s, s->pod_node[pod]);
}

void berth_ksession_prefetch(const berth_ksession *s, const uint32_t *pods, uint32_t n)
{
    const berth_kpod *kp = s->v.pods;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t p = pods[i];
        if (p >= s->v.npods)
            continue;
        /* the record's lines from its start through its requests (demand,
         * req_nz, req[0..nres)): records are 848 bytes, not line-aligned,
         * so the lines of r .. r + 256 and of demand left req on a line of
         * its own for three pods in four. Read only: worker sessions share
         * the table. */
        const char *r = (const char *)&kp[p];
        const char *end = (const char *)&kp[p].req[s->v.nres ? s->v.nres : 1];
        for (const char *q = r; q < end; q += 64)
            __builtin_prefetch(q);
        __builtin_prefetch(end - 1);
        __builtin_prefetch(&s->pod_node[p], 1);
        __builtin_prefetch(&s->pod_bound[p], 1);
        kube_terms_prefetch(&s->L.s, p);
    }
}

const uint32_t *berth_ksession_pods_on(const berth_ksession *s, uint32_t node, uint32_t *n)
{
    uint32_t sn = node == BERTH_KUBE_NONE ? node : to_session(s, node);
    *n = 0;
    if (sn >= s->v.nnodes)
        return NULL;
    *n = s->L.s.plist[sn].n;
    return s->L.s.plist[sn].pods;
}

int berth_ksession_placed(const berth_ksession *s, uint32_t pod)
{
    return pod < s->v.npods && s->pod_node[pod] != BERTH_KUBE_NONE;
}

uint64_t berth_ksession_mark(const berth_ksession *s)
{
    return s->base + s->nlog;
}

void berth_ksession_commit(berth_ksession *s)
{
    s->base += s->nlog;
    s->nlog = 0;
}

int berth_ksession_rollback(berth_ksession *s, uint64_t mark)
{
    if (mark < s->base || mark - s->base > s->nlog)
        return BERTH_EINVAL; /* before a commit, or never handed out */
    int rc = 0;
    while (s->base + s->nlog > mark && !rc) {
        const undo u = s->log[--s->nlog];
        /* each entry undoes the newest change still in effect */
        if (NEVER(u.op == U_SPARE ? u.a >= s->nspare || !s->spare_on[u.a]
                  : u.op == U_EXCLUDE ? u.a >= s->v.nnodes
                  : u.a >= s->v.npods || u.b >= s->v.nnodes ||
                        (s->pod_node[u.a] == BERTH_KUBE_NONE) != (u.op == U_EVICT) ||
                        (u.op != U_EVICT && s->pod_node[u.a] != u.b)))
            return BERTH_EINTERNAL;
        switch (u.op) {
        case U_EXCLUDE:
            s->excluded[u.a] = u.flag;
            rc = kube_node_exclude(&s->L.s, u.a, u.flag);
            break;
        case U_EVICT:
            rc = bind_pod(s, u.a, u.b, u.flag);
            break;
        case U_BIND:
        case U_PLACE:
            rc = unbind_pod(s, u.a);
            break;
        default:
            s->spare_on[u.a] = 0;
            rc = kube_node_deactivate(&s->L.s, s->nreal + u.a, &s->placeholder);
            break;
        }
    }
    return rc;
}

/* ---- for the fit index (kube/fitindex.h) ---- */

kube_loop *kube_session_loop(berth_ksession *s)
{
    return &s->L;
}

uint32_t kube_session_node(const berth_ksession *s, uint32_t node)
{
    return node == BERTH_KUBE_NONE ? node : to_session(s, node);
}

uint32_t kube_session_caller_node(const berth_ksession *s, uint32_t node)
{
    return to_caller(s, node);
}

int kube_session_assume(berth_ksession *s, uint32_t pod, uint32_t n)
{
    /* an exclude that ran out of memory left a node a candidate that the
     * caller took out: no placement from here on (the fit index places
     * through this, not berth_ksession_place, which refuses alike) */
    if (s->broken)
        return BERTH_ENOMEM;
    /* as kube_loop_pod assumes a decision, and place records it */
    if (log_push(s, U_PLACE, 0, pod, n))
        return BERTH_ENOMEM;
    s->pod_node[pod] = n;
    s->pod_bound[pod] = 0;
    if (kube_assume(&s->L.s, pod, n) || kube_fast_assumed(&s->L.s, n))
        return BERTH_ENOMEM;
    return 0;
}
