/* kube/preempt.c - DefaultPreemption for berth_kube_schedule: a pod that
 * fits nowhere looks for a node where deleting lower-priority pods lets it
 * fit, as kube-scheduler's PostFilter does (upstream
 * pkg/scheduler/framework/preemption/preemption.go: findCandidates,
 * DryRunPreemption, pickOneNodeForPreemption; and
 * pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go:
 * PodEligibleToPreemptOthers, SelectVictimsOnNode,
 * filterPodsWithPDBViolation). The search runs on the scheduler's own
 * state and leaves it as it found it; the commit deletes the victims
 * (kube_evict: every column and counter, the fast path's change log) and
 * assumes the preemptor on its nominated node. docs/kube.md "Preemption"
 * states the rules and where berth is deterministic instead of random. */
#include "kube/state.h"
#include "kube/terms.h"
#include "berth/grow.h"

#include <stdlib.h>
#include <string.h>

/* upstream DefaultPreemptionArgs defaults */
#define MIN_CANDIDATE_NODES_PERCENTAGE 10
#define MIN_CANDIDATE_NODES_ABSOLUTE 100

struct kube_preempt {
    uint32_t nnodes;
    int64_t min_priority;  /* lowest priority of any pod: no one below can be a victim */
    uint32_t *cand;        /* node status pass: batch */
    uint8_t *verdict;      /* per batch slot */
    uint8_t *status;       /* per node: first failing filter's verdict */
    uint32_t *pv;          /* potential victims of the node being evaluated */
    uint8_t *viol;         /* per pv slot: its PDB would be violated */
    uint32_t *cur, *best;  /* victims of the node being evaluated, of the best so far */
    uint32_t cap;          /* size of pv, viol, cur, best */
    int pdb_ready;
    int64_t *allowed;      /* per PDB: disruptions allowed for the rest of the run */
    int64_t *left;         /* per PDB: uses by the node being evaluated (filterPodsWithPDBViolation's
                            * per-call decrement), zero between nodes */
    /* per pod, the PDBs selecting it (pdb_selects), found on first need:
     * pool[first[pod] .. first[pod] + count[pod]), first UINT32_MAX until then */
    uint32_t *first, *count;
    uint32_t *pool;
    uint32_t npool, cappool;
};

/* One candidate's figures, compared by pickOneNodeForPreemption's order. */
typedef struct cand_score {
    uint32_t node;
    int64_t violations;    /* NumPDBViolations */
    int64_t highest;       /* priority of the most important victim */
    int64_t sum;           /* sum of (priority + MaxInt32 + 1) */
    int64_t count;         /* victims */
    int64_t earliest;      /* earliest start of the highest-priority victims */
} cand_score;

void kube_preempt_free(kube_loop *L)
{
    kube_preempt *P = L->pre;
    if (!P)
        return;
    free(P->cand);
    free(P->verdict);
    free(P->status);
    free(P->pv);
    free(P->viol);
    free(P->cur);
    free(P->best);
    free(P->allowed);
    free(P->left);
    free(P->first);
    free(P->count);
    free(P->pool);
    free(P);
    L->pre = NULL;
}

static int ensure(kube_loop *L)
{
    const berth_kcluster *k = L->s.k;
    if (!L->pre && !(L->pre = calloc(1, sizeof *L->pre)))
        return BERTH_ENOMEM;
    kube_preempt *P = L->pre;
    if (!P->cand) {
        uint32_t N = k->nnodes ? k->nnodes : 1;
        P->nnodes = k->nnodes;
        P->min_priority = INT64_MAX;
        for (uint32_t i = 0; i < k->npods; i++)
            if (k->pods[i].priority < P->min_priority)
                P->min_priority = k->pods[i].priority;
        P->cand = malloc(N * sizeof *P->cand);
        P->verdict = malloc(N);
        P->status = malloc(N);
        if (!P->cand || !P->verdict || !P->status)
            return BERTH_ENOMEM;
    }
    if (!P->pdb_ready) {
        /* the budgets as the run starts: status.disruptionsAllowed, else
         * computed from the matching pods (every pod healthy) */
        uint32_t nb = k->npdbs ? k->npdbs : 1;
        P->allowed = malloc(nb * sizeof *P->allowed);
        P->left = calloc(nb, sizeof *P->left);
        if (!P->allowed || !P->left)
            return BERTH_ENOMEM;
        for (uint32_t b = 0; b < k->npdbs; b++)
            P->allowed[b] = berth_kpdb_count_allowed(k, &k->pdbs[b], NULL, NULL);
        if (k->npdbs) {
            uint32_t np = k->npods ? k->npods : 1;
            P->first = malloc(np * sizeof *P->first);
            P->count = calloc(np, sizeof *P->count);
            if (!P->first || !P->count)
                return BERTH_ENOMEM;
            memset(P->first, 0xff, np * sizeof *P->first);
        }
        P->pdb_ready = 1;
    }
    return 0;
}

static int grow_victims(kube_preempt *P, uint32_t n)
{
    if (n <= P->cap)
        return 0;
    uint32_t nc = P->cap ? P->cap : 16;
    while (nc < n)
        nc *= 2;
    uint32_t *pv = realloc(P->pv, nc * sizeof *pv);
    if (pv)
        P->pv = pv;
    uint8_t *viol = realloc(P->viol, nc);
    if (viol)
        P->viol = viol;
    uint32_t *cur = realloc(P->cur, nc * sizeof *cur);
    if (cur)
        P->cur = cur;
    uint32_t *best = realloc(P->best, nc * sizeof *best);
    if (best)
        P->best = best;
    if (!pv || !viol || !cur || !best)
        return BERTH_ENOMEM;
    P->cap = nc;
    return 0;
}

/* util.GetPodStartTime: status.startTime; berth then takes
 * creationTimestamp (upstream: the current time), and a pod with neither
 * counts as started after every timestamped pod. */
static int64_t start_of(const berth_kpod *p)
{
    return p->has_started ? p->started : p->has_created ? p->created : INT64_MAX;
}

/* util.MoreImportantPod as a total order: higher priority first, then the
 * earlier start, then input order. */
static int cmp_importance(const void *a, const void *b, void *ctx)
{
    const berth_kcluster *k = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    const berth_kpod *px = &k->pods[x], *py = &k->pods[y];
    if (px->priority != py->priority)
        return px->priority > py->priority ? -1 : 1;
    int64_t sx = start_of(px), sy = start_of(py);
    if (sx != sy)
        return sx < sy ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* filterPodsWithPDBViolation's match: same namespace, the pod has labels,
 * the selector is not empty (upstream: a nil or empty selector matches
 * nothing here, unlike the eviction API) and matches. */
static int pdb_selects(const berth_kpdb *b, const berth_kpod *p)
{
    return p->labels.n && !b->selector.nothing && b->selector.n && berth_kpdb_matches(b, p);
}

/* The PDBs selecting pod (*out, *n), cached per pod. */
static int pdbs_of(kube_preempt *P, const berth_kcluster *k, uint32_t pod, const uint32_t **out,
                   uint32_t *n)
{
    *n = 0;
    *out = NULL;
    if (!k->npdbs)
        return 0;
    if (P->first[pod] == UINT32_MAX) {
        const berth_kpod *p = &k->pods[pod];
        uint32_t start = P->npool;
        for (uint32_t b = 0; b < k->npdbs; b++) {
            if (!pdb_selects(&k->pdbs[b], p))
                continue;
            if (berth_grow((void **)&P->pool, &P->cappool, P->npool + 1, sizeof *P->pool, 0))
                return BERTH_ENOMEM;
            P->pool[P->npool++] = b;
        }
        P->first[pod] = start;
        P->count[pod] = P->npool - start;
    }
    *n = P->count[pod];
    *out = *n ? P->pool + P->first[pod] : NULL; /* no offset from a NULL pool */
    return 0;
}

/* ---- trial removal on one node ---- */

/* light: the pod has no host ports and no spread or affinity context that
 * filters (PodTopologySpread, InterPodAffinity pass whatever is on the
 * node), so only NodeResourcesFit reads the node's pods: a trial removal
 * changes the columns it reads (requested, pod count) and nothing else.
 * Otherwise (and always with --reference) the pod really leaves the node
 * (kube_unassume, spread and affinity counters included) and the pod's
 * request context is prepared again before each check. */
typedef struct trial {
    kube_loop *L;
    const berth_profile *prof;
    const berth_kplugin *filter_of;
    kube_req *rq;
    uint32_t node;
    int light;
} trial;

static void light_columns(kube_sched *s, uint32_t pod, uint32_t node, int64_t sign)
{
    const berth_kpod *p = &s->k->pods[pod];
    for (uint32_t r = 0; r < s->k->nres; r++)
        KS_REQ_OF(s, r, node) += sign * p->req[r];
    KS_NPODS_OF(s, node) += sign;
}

static int trial_remove(trial *t, uint32_t pod)
{
    kube_sched *s = &t->L->s;
    if (t->light) {
        light_columns(s, pod, t->node, -1);
        return 0;
    }
    return kube_unassume(s, pod, t->node, !s->k->pods[pod].assumed);
}

static int trial_add(trial *t, uint32_t pod)
{
    kube_sched *s = &t->L->s;
    if (t->light) {
        light_columns(s, pod, t->node, 1);
        return 0;
    }
    return s->k->pods[pod].assumed ? kube_assume(s, pod, t->node)
                                   : kube_assume_bound(s, pod, t->node);
}

/* Whether the pod passes the filters on t->node in the current state:
 * every filter (all = 1), or in light mode those that read the node's pods. */
static int trial_fits(trial *t, int all, int *err)
{
    kube_sched *s = &t->L->s;
    if (!t->light) {
        kube_req_free(s, t->rq);
        if ((*err = kube_req_init(s, t->rq, t->rq->pod)))
            return 0;
    }
    uint8_t v = BERTH_FIT;
    for (uint32_t f = 0; f < t->prof->nfilters && v == BERTH_FIT; f++) {
        if (t->light && !all && t->filter_of[f] != BERTH_KP_NODE_RESOURCES_FIT)
            continue;
        t->prof->filters[f]->filter(s, t->rq, &t->node, 1, &v);
    }
    if (kube_terms_failed(t->rq)) { /* a filter ran out of memory: no verdict */
        *err = BERTH_ENOMEM;
        return 0;
    }
    return v == BERTH_FIT;
}

/* SelectVictimsOnNode: the victims on t->node (into P->cur, most important
 * first) and the PDB violations among them; 0 victims when the node is no
 * candidate. The state is restored before returning. */
static int select_victims(trial *t, uint32_t *nvictims, int64_t *violations)
{
    kube_sched *s = &t->L->s;
    const berth_kcluster *k = s->k;
    kube_preempt *P = t->L->pre;
    const berth_kpod *pre = t->rq->p;
    uint32_t n = t->node;
    *nvictims = 0;
    *violations = 0;
    int rc = grow_victims(P, s->plist[n].n);
    if (rc)
        return rc;
    /* potential victims: every pod on the node of lower priority */
    uint32_t npv = 0;
    for (uint32_t i = 0; i < s->plist[n].n; i++) {
        uint32_t q = s->plist[n].pods[i];
        if (k->pods[q].priority < pre->priority)
            P->pv[npv++] = q;
    }
    if (!npv)
        return 0; /* "No preemption victims found for incoming pod" */
    uint32_t removed = 0;
    for (; removed < npv && !rc; removed++)
        rc = trial_remove(t, P->pv[removed]);
    int fits = !rc && trial_fits(t, 1, &rc);
    uint32_t nv = 0;
    if (fits) {
        /* by importance, then PDB-violating ones reprieved first */
        qsort_r(P->pv, npv, sizeof *P->pv, cmp_importance, (void *)k);
        /* P->left: this node's uses of each budget (all zero between
         * nodes: the entries touched are cleared again below) */
        for (uint32_t i = 0; i < npv && !rc; i++) {
            const uint32_t *bs;
            uint32_t nb;
            rc = pdbs_of(P, k, P->pv[i], &bs, &nb);
            P->viol[i] = 0;
            for (uint32_t j = 0; j < nb; j++)
                if (P->allowed[bs[j]] - ++P->left[bs[j]] < 0)
                    P->viol[i] = 1;
        }
        for (uint32_t i = 0; i < npv && !rc && k->npdbs; i++) {
            const uint32_t *bs;
            uint32_t nb;
            rc = pdbs_of(P, k, P->pv[i], &bs, &nb);
            for (uint32_t j = 0; j < nb; j++)
                P->left[bs[j]] = 0;
        }
        for (int pass = 1; pass >= 0 && !rc; pass--)
            for (uint32_t i = 0; i < npv && !rc; i++) {
                if (P->viol[i] != pass)
                    continue;
                uint32_t q = P->pv[i];
                if ((rc = trial_add(t, q)))
                    break;
                if (trial_fits(t, 0, &rc) || rc)
                    continue; /* reprieved */
                if ((rc = trial_remove(t, q)))
                    break;
                P->cur[nv++] = q;
                *violations += pass;
            }
        /* victims most important first (upstream sorts again when both
         * groups were non-empty; the order is total, so always) */
        qsort_r(P->cur, nv, sizeof *P->cur, cmp_importance, (void *)k);
        /* put the victims back */
        for (uint32_t i = 0; i < nv && !rc; i++)
            rc = trial_add(t, P->cur[i]);
    } else {
        for (uint32_t i = 0; i < removed && !rc; i++)
            rc = trial_add(t, P->pv[i]);
    }
    if (rc)
        return rc;
    *nvictims = nv;
    return 0;
}

static void score_of(const berth_kcluster *k, uint32_t node, const uint32_t *v, uint32_t nv,
                     int64_t violations, cand_score *c)
{
    c->node = node;
    c->violations = violations;
    c->highest = k->pods[v[0]].priority;
    c->sum = 0;
    c->count = nv;
    c->earliest = INT64_MAX;
    for (uint32_t i = 0; i < nv; i++) {
        const berth_kpod *q = &k->pods[v[i]];
        c->sum += q->priority + (int64_t)INT32_MAX + 1;
        if (q->priority == c->highest && start_of(q) < c->earliest)
            c->earliest = start_of(q);
    }
}

/* NodeResourcesFit's UnschedulableAndUnresolvable (upstream since
 * kubernetes/kubernetes#131345): a resource the filter checks is requested
 * beyond the node's whole allocatable, so even an empty node would not do. */
static int beyond_allocatable(const kube_sched *s, const berth_kpod *p, uint32_t n)
{
    uint32_t ignored = s->prof ? s->prof->ignored_res : 0;
    for (uint32_t r = 0; r < s->k->nres; r++) {
        if (p->req[r] <= 0 || (r >= BERTH_KRES_FIRST_EXT && (ignored >> r & 1u)))
            continue;
        if (p->req[r] > KS_ALLOC_OF(s, r, n))
            return 1;
    }
    return 0;
}

/* pickOneNodeForPreemption: > 0 when a is the better candidate. Fewest PDB
 * violations, lowest highest priority, smallest priority sum, fewest
 * victims, latest earliest start; equal: neither (the caller keeps the
 * lower node name). */
static int better(const cand_score *a, const cand_score *b)
{
    if (a->violations != b->violations)
        return a->violations < b->violations;
    if (a->highest != b->highest)
        return a->highest < b->highest;
    if (a->sum != b->sum)
        return a->sum < b->sum;
    if (a->count != b->count)
        return a->count < b->count;
    return a->earliest > b->earliest;
}

int kube_preempt_find(kube_loop *L, const berth_profile *prof, const berth_kplugin *filter_of,
                      kube_req *rq, kube_preempt_result *out)
{
    out->node = BERTH_KUBE_NONE;
    out->victims = NULL;
    out->nvictims = 0;
    kube_sched *s = &L->s;
    const berth_kcluster *k = s->k;
    const berth_kpod *p = rq->p;
    /* PodEligibleToPreemptOthers: preemptionPolicy Never */
    if (p->preemption_policy == 1 || !k->nnodes)
        return 0;
    int rc = ensure(L);
    if (rc)
        return rc;
    kube_preempt *P = L->pre;
    if (p->priority <= P->min_priority)
        return 0; /* no pod anywhere has a lower priority */
    /* each node's status is its first failing filter's: only Unschedulable
     * (BERTH_UNFIT) nodes can be helped by removing pods */
    uint32_t n = 0;
    for (uint32_t nd = 0; nd < k->nnodes; nd++) {
        P->status[nd] = BERTH_UNRESOLVABLE;
        if (!s->off || !s->off[nd])
            P->cand[n++] = nd;
    }
    for (uint32_t f = 0; f < prof->nfilters && n; f++) {
        memset(P->verdict, BERTH_FIT, n);
        prof->filters[f]->filter(s, rq, P->cand, n, P->verdict);
        if (kube_terms_failed(rq))
            return BERTH_ENOMEM; /* a filter ran out of memory: no verdict */
        uint32_t m = 0;
        int fit = filter_of[f] == BERTH_KP_NODE_RESOURCES_FIT;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t nd = P->cand[i];
            if (P->verdict[i] == BERTH_FIT)
                P->cand[m++] = nd;
            else if (fit && P->verdict[i] == BERTH_UNFIT && beyond_allocatable(s, p, nd))
                P->status[nd] = BERTH_UNRESOLVABLE;
            else
                P->status[nd] = P->verdict[i];
        }
        n = m;
    }
    uint32_t npotential = 0;
    for (uint32_t nd = 0; nd < k->nnodes; nd++)
        npotential += P->status[nd] == BERTH_UNFIT;
    if (!npotential)
        return 0;
    /* calculateNumCandidates */
    uint32_t want = (uint32_t)((uint64_t)npotential * MIN_CANDIDATE_NODES_PERCENTAGE / 100);
    if (want < MIN_CANDIDATE_NODES_ABSOLUTE)
        want = MIN_CANDIDATE_NODES_ABSOLUTE;
    if (want > npotential)
        want = npotential;
    const kube_terms_req *q = rq->terms;
    trial t = {.L = L, .prof = prof, .filter_of = filter_of, .rq = rq,
               .light = !s->reference && !p->nports && (!q || (!q->npf && !q->naff && !q->nanti))};
    /* DryRunPreemption from offset 0 over the potential nodes in name
     * order: stop once a candidate violates no PDB and `want` are found
     * (violating ones beyond `want` are not kept, as upstream's list) */
    uint32_t nonviolating = 0, violating = 0, nbest = 0;
    cand_score best = {.node = BERTH_KUBE_NONE};
    for (uint32_t nd = 0; nd < k->nnodes && !rc; nd++) {
        if (P->status[nd] != BERTH_UNFIT)
            continue;
        t.node = nd;
        uint32_t nv;
        int64_t viol;
        if ((rc = select_victims(&t, &nv, &viol)) || !nv)
            continue;
        if (viol && violating >= want)
            continue;
        if (viol)
            violating++;
        else
            nonviolating++;
        cand_score c;
        score_of(k, nd, P->cur, nv, viol, &c);
        if (best.node == BERTH_KUBE_NONE || better(&c, &best)) {
            best = c;
            uint32_t *tmp = P->best;
            P->best = P->cur;
            P->cur = tmp;
            nbest = nv;
        }
        if (nonviolating && nonviolating + violating >= want)
            break;
    }
    if (!t.light) {
        /* the request context again as the state now is (the reasons read it) */
        kube_req_free(s, rq);
        int rc2 = kube_req_init(s, rq, rq->pod);
        rc = rc ? rc : rc2;
    }
    if (rc || best.node == BERTH_KUBE_NONE)
        return rc;
    out->node = best.node;
    out->victims = P->best;
    out->nvictims = nbest;
    return 0;
}

int kube_preempt_commit(kube_loop *L, uint32_t pod, const kube_preempt_result *r)
{
    kube_sched *s = &L->s;
    berth_kcluster *k = s->k;
    kube_preempt *P = L->pre;
    int rc = 0;
    for (uint32_t i = 0; i < r->nvictims && !rc; i++) {
        uint32_t v = r->victims[i];
        berth_kpod *vp = &k->pods[v];
        /* the victim is deleted: it leaves every column and counter (then
         * it is terminating, never before: the counters skip such pods) */
        rc = kube_evict(s, v, r->node, !vp->assumed);
        vp->terminating = 1;
        const uint32_t *bs;
        uint32_t nb;
        if (!rc)
            rc = pdbs_of(P, k, v, &bs, &nb);
        for (uint32_t j = 0; !rc && j < nb; j++)
            if (P->allowed[bs[j]] > 0)
                P->allowed[bs[j]]--;
    }
    if (rc)
        return rc;
    k->pods[pod].node_name = k->nodes[r->node].name;
    k->pods[pod].assumed = 1;
    return kube_place(s, pod, r->node, 0);
}
