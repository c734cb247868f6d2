/* kube/sched.c - the kube scheduling loop over the shared pipeline: node
 * columns, assume (bound pods, then each decision), the queue (priority,
 * then creation, then input order), one pipeline profile per scheduler
 * profile (enabled filters in SPEC 2.5 order, weighted scores), the
 * percentageOfNodesToScore round robin, decisions handed to the caller and
 * kube-scheduler's "0/N nodes are available: ..." summary. */
#include "berth/grow.h"
#include "berth/pool.h"
#include "kube/fastpath.h"
#include "kube/state.h"
#include "core/invariant.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- node name index ---- */

/* The node names come from the input: the index is the shared keyed one
 * (berth/nameidx.h), so names chosen to collide cannot make the session's
 * setup quadratic. */
uint32_t kube_node_by_name(const kube_sched *s, const char *name)
{
    uint32_t n = berth_nameidx_find(&s->node_idx, name);
    return n == BERTH_NAMEIDX_NONE ? BERTH_KUBE_NONE : n;
}

static int cmp_node_name(const void *a, const void *b)
{
    return strcmp(((const berth_knode *)a)->name, ((const berth_knode *)b)->name);
}

void kube_pod_demand(const berth_kpod *p, int64_t out[2])
{
    out[0] = p->demand[0];
    out[1] = p->demand[1];
}

/* ---- columns ---- */

#define KUBE_LIST_SLACK 3 /* room beyond the sized count (pods moving in) */

static int in_slab(const kube_sched *s, const uint32_t *p)
{
    uintptr_t a = (uintptr_t)p, lo = (uintptr_t)s->pslab;
    return s->pslab && a >= lo && a < lo + s->npslab * sizeof *s->pslab;
}

void kube_sched_free(kube_sched *s)
{
    kube_fast_free(s);
    if (s->terms)
        kube_terms_free(s);
    free(s->col);
    free(s->has_hard_taint);
    free(s->has_prefer_taint);
    free(s->taint_set);
    kube_taintsets_free(s->tsets);
    if (s->plist)
        for (uint32_t n = 0; n < s->k->nnodes; n++)
            if (!in_slab(s, s->plist[n].pods))
                free(s->plist[n].pods);
    free(s->plist);
    free(s->pslab);
    berth_nameidx_free(&s->node_idx);
    free(s->off);
    kube_plugins_free(s);
    memset(s, 0, sizeof *s);
}

int kube_sched_size_lists(kube_sched *s, const uint32_t *count)
{
    uint32_t N = s->k->nnodes;
    size_t total = 0;
    for (uint32_t n = 0; n < N; n++) {
        if (NEVER(s->plist[n].pods || s->plist[n].n))
            return BERTH_EINTERNAL; /* only empty lists (a fresh session's) */
        total += (size_t)count[n] + KUBE_LIST_SLACK;
    }
    if (!(s->pslab = malloc((total ? total : 1) * sizeof *s->pslab)))
        return BERTH_ENOMEM;
    s->npslab = total;
    size_t at = 0;
    for (uint32_t n = 0; n < N; n++) {
        s->plist[n].pods = s->pslab + at;
        s->plist[n].cap = count[n] + KUBE_LIST_SLACK;
        at += s->plist[n].cap;
    }
    return 0;
}

/* Room for one more pod in l: doubling; a list in the slab moves out. */
static int list_grow(kube_sched *s, kube_podlist *l)
{
    if (!in_slab(s, l->pods))
        return berth_grow((void **)&l->pods, &l->cap, l->n + 1, sizeof *l->pods, 0);
    uint32_t cap = l->cap * 2;
    uint32_t *p = malloc((size_t)cap * sizeof *p);
    if (!p)
        return BERTH_ENOMEM;
    memcpy(p, l->pods, (size_t)l->n * sizeof *p);
    l->pods = p;
    l->cap = cap;
    return 0;
}

int kube_assume(kube_sched *s, uint32_t pod, uint32_t node)
{
    const berth_kpod *p = &s->k->pods[pod];
    for (uint32_t r = 0; r < s->k->nres; r++)
        KS_REQ_OF(s, r, node) += p->req[r];
    KS_NZ_OF(s, 0, node) += p->req_nz[BERTH_KRES_CPU];
    KS_NZ_OF(s, 1, node) += p->req_nz[BERTH_KRES_MEMORY];
    int64_t d[2];
    kube_pod_demand(p, d);
    KS_USAGE_OF(s, 0, node) += d[0];
    KS_USAGE_OF(s, 1, node) += d[1];
    KS_NPODS_OF(s, node)++;
    if (s->plist[node].n == s->plist[node].cap && list_grow(s, &s->plist[node]))
        return BERTH_ENOMEM;
    s->plist[node].pods[s->plist[node].n++] = pod;
    return kube_terms_assume(s, pod, node);
}

int kube_assume_bound(kube_sched *s, uint32_t pod, uint32_t node)
{
    if (KS_FLAGS_OF(s, node) & KS_FLAG_USAGE) {
        /* observed usage already includes bound pods: count them once */
        int64_t d[2];
        kube_pod_demand(&s->k->pods[pod], d);
        KS_USAGE_OF(s, 0, node) -= d[0];
        KS_USAGE_OF(s, 1, node) -= d[1];
    }
    return kube_assume(s, pod, node);
}

int kube_unassume(kube_sched *s, uint32_t pod, uint32_t node, int bound)
{
    const berth_kpod *p = &s->k->pods[pod];
    uint32_t *on = s->plist[node].pods, n = s->plist[node].n, i = 0;
    while (i < n && on[i] != pod)
        i++;
    if (i == n)
        return BERTH_EINVAL;
    memmove(on + i, on + i + 1, (size_t)(n - i - 1) * sizeof *on);
    s->plist[node].n--;
    for (uint32_t r = 0; r < s->k->nres; r++)
        KS_REQ_OF(s, r, node) -= p->req[r];
    KS_NZ_OF(s, 0, node) -= p->req_nz[BERTH_KRES_CPU];
    KS_NZ_OF(s, 1, node) -= p->req_nz[BERTH_KRES_MEMORY];
    if (!bound || !(KS_FLAGS_OF(s, node) & KS_FLAG_USAGE)) {
        int64_t d[2];
        kube_pod_demand(p, d);
        KS_USAGE_OF(s, 0, node) -= d[0];
        KS_USAGE_OF(s, 1, node) -= d[1];
    }
    KS_NPODS_OF(s, node)--;
    return kube_terms_unassume(s, pod, node);
}

int kube_evict(kube_sched *s, uint32_t pod, uint32_t node, int bound)
{
    int rc = kube_unassume(s, pod, node, bound);
    return rc ? rc : kube_fast_assumed(s, node);
}

int kube_place(kube_sched *s, uint32_t pod, uint32_t node, int bound)
{
    int rc = bound ? kube_assume_bound(s, pod, node) : kube_assume(s, pod, node);
    return rc ? rc : kube_fast_assumed(s, node);
}

/* The static columns of node n from k->nodes[n] (no pods on it yet).
 * 0 or BERTH_ENOMEM (a new hard-taint set). */
static int node_columns(kube_sched *s, uint32_t n)
{
    const berth_knode *nd = &s->k->nodes[n];
    for (uint32_t r = 0; r < s->k->nres; r++)
        KS_ALLOC_OF(s, r, n) = nd->alloc[r];
    KS_APODS_OF(s, n) = nd->alloc_pods;
    KS_FLAGS_OF(s, n) = nd->has_usage ? KS_FLAG_USAGE : 0;
    s->has_hard_taint[n] = s->has_prefer_taint[n] = 0;
    for (uint32_t t = 0; t < nd->ntaints; t++) {
        if (nd->taints[t].effect == BERTH_EFFECT_NOSCHEDULE ||
            nd->taints[t].effect == BERTH_EFFECT_NOEXECUTE)
            s->has_hard_taint[n] = 1;
        if (nd->taints[t].effect == BERTH_EFFECT_PREFERNOSCHEDULE)
            s->has_prefer_taint[n] = 1;
    }
    KS_USAGE_OF(s, 0, n) = nd->has_usage ? nd->usage[BERTH_KRES_CPU] : 0;
    KS_USAGE_OF(s, 1, n) = nd->has_usage ? nd->usage[BERTH_KRES_MEMORY] : 0;
    return kube_taintsets_id(&s->tsets, nd->taints, nd->ntaints, &s->taint_set[n]);
}

/* A node's name in the index (the first of equal names keeps it, as
 * lookups found it before). */
static int name_insert(kube_sched *s, uint32_t n)
{
    return berth_nameidx_add(&s->node_idx, s->k->nodes[n].name, n, NULL) < 0 ? BERTH_ENOMEM : 0;
}

static void name_remove(kube_sched *s, uint32_t n)
{
    berth_nameidx_remove(&s->node_idx, s->k->nodes[n].name, n);
}

int kube_node_exclude(kube_sched *s, uint32_t n, int excluded)
{
    if (!s->off && !(s->off = calloc(s->k->nnodes ? s->k->nnodes : 1, 1)))
        return BERTH_ENOMEM;
    excluded = excluded != 0;
    if (s->off[n] == excluded)
        return 0;
    s->off[n] = (uint8_t)excluded;
    s->ncand = excluded ? s->ncand - 1 : s->ncand + 1;
    int all = kube_plugins_node_changed(s, n, 0, 0);
    return kube_fast_node_changed(s, n, 0, all);
}

int kube_node_activate(kube_sched *s, uint32_t n, const berth_knode *nd)
{
    s->k->nodes[n] = *nd;
    int trc = node_columns(s, n);
    trc = trc ? trc : name_insert(s, n);
    s->off[n] = 0;
    s->ncand++;
    int rc = kube_terms_node_changed(s, n);
    rc = rc ? rc : trc;
    int all = kube_plugins_node_changed(s, n, 1, 0); /* the slot held no images */
    int rc2 = kube_fast_node_changed(s, n, 1, all);
    return rc ? rc : rc2;
}

int kube_node_deactivate(kube_sched *s, uint32_t n, const berth_knode *placeholder)
{
    name_remove(s, n);
    int had_images = s->k->nodes[n].nimages != 0;
    s->k->nodes[n] = *placeholder;
    int trc = node_columns(s, n);
    s->off[n] = 1;
    s->ncand--;
    int rc = kube_terms_node_changed(s, n);
    rc = rc ? rc : trc;
    int all = kube_plugins_node_changed(s, n, 1, had_images);
    int rc2 = kube_fast_node_changed(s, n, 1, all);
    return rc ? rc : rc2;
}

int kube_sched_init(kube_sched *s, berth_kcluster *k, const berth_kprofile *prof, int reference)
{
    return kube_sched_init_spare(s, k, prof, reference, 0, 0, 0);
}

int kube_sched_init_spare(kube_sched *s, berth_kcluster *k, const berth_kprofile *prof,
                          int reference, uint32_t nspare, int pending_view, uint32_t tail)
{
    memset(s, 0, sizeof *s);
    s->k = k;
    s->pending_view = pending_view;
    s->prof = prof;
    s->reference = reference;
    s->arena = &k->arena;
    uint32_t N = k->nnodes ? k->nnodes : 1;
    uint32_t nreal = k->nnodes - nspare;
    s->ncand = nreal;
    /* candidates in name order: the lowest index is the lowest name (a
     * caller that keeps its nodes sorted, the extender, pays one pass);
     * the tail's after the others (hypothetical nodes that lose ties) */
    uint32_t nhead = tail < nreal ? nreal - tail : 0;
    if (!berth_kube_names_ascending(k->nodes, nhead) ||
        !berth_kube_names_ascending(k->nodes + nhead, nreal - nhead)) {
        qsort(k->nodes, nhead, sizeof *k->nodes, cmp_node_name);
        qsort(k->nodes + nhead, nreal - nhead, sizeof *k->nodes, cmp_node_name);
        /* the loader's name index points at the old order: drop it (a later
         * load rebuilds it) */
        berth_nameidx_free(&k->node_names);
    }
    /* node-major values (state.h): KS_REQ + nres requests, allocatable
     * pods, nres allocatable, the flags; whole lines, line-aligned */
    s->ka = KS_REQ + k->nres + 1;
    s->kflags = s->ka + k->nres;
    s->cstride = (s->kflags + 1 + 7) / 8 * 8;
    size_t colbytes = (size_t)N * s->cstride * sizeof *s->col;
    if ((s->col = aligned_alloc(64, colbytes)))
        memset(s->col, 0, colbytes);
    s->has_hard_taint = calloc(N, 1);
    s->has_prefer_taint = calloc(N, 1);
    s->taint_set = calloc(N ? N : 1, sizeof *s->taint_set);
    s->plist = calloc(N, sizeof *s->plist);
    if (!s->col || !s->has_hard_taint || !s->has_prefer_taint || !s->taint_set || !s->plist ||
        berth_nameidx_reserve(&s->node_idx, N))
        goto oom;
    if (nspare) {
        s->off = calloc(N, 1);
        if (!s->off)
            goto oom;
        memset(s->off + nreal, 1, nspare);
    }
    for (uint32_t n = 0; n < nreal; n++) {
        if (node_columns(s, n) || name_insert(s, n))
            goto oom;
    }
    if (kube_terms_init(s))
        goto oom;
    /* a run of pods on one node shares its name's text (the loader's
     * share_names): one lookup per run */
    const char *last = NULL;
    uint32_t last_n = BERTH_KUBE_NONE;
    for (uint32_t p = 0; p < k->npods && !pending_view; p++) {
        const berth_kpod *pod = &k->pods[p];
        if (!pod->node_name)
            continue;
        uint32_t n = pod->node_name == last ? last_n : kube_node_by_name(s, pod->node_name);
        last = pod->node_name;
        last_n = n;
        if (n == BERTH_KUBE_NONE)
            continue;
        /* without observed usage the bound pods' demand stands for it */
        if (kube_assume_bound(s, p, n))
            goto oom;
    }
    return 0;
oom:
    kube_sched_free(s);
    return BERTH_ENOMEM;
}

int kube_req_init(kube_sched *s, kube_req *r, uint32_t pod)
{
    memset(r, 0, sizeof *r);
    r->pod = pod;
    r->p = &s->k->pods[pod];
    return kube_terms_prepare(s, r);
}

void kube_req_free(kube_sched *s, kube_req *r)
{
    kube_terms_release(s, r);
}

/* ---- the loop ---- */

struct kube_prof_built {
    const berth_kprofile *kp;
    berth_profile p;
    const berth_filter_plugin *filters[BERTH_KP_COUNT];
    const berth_score_plugin *scores[BERTH_KP_COUNT];
    int64_t weights[BERTH_KP_COUNT];
    berth_kplugin filter_of[BERTH_KP_COUNT], score_of[BERTH_KP_COUNT];
};
typedef struct kube_prof_built prof_built;

/* berth_profile.prepare: what the plugins build lazily for this pod, built
 * before a batch is filtered or scored in parallel chunks. */
static int kube_par_prepare(void *state, const void *req, const uint32_t *cand, uint32_t n)
{
    kube_sched *s = state;
    const kube_req *r = req;
    (void)cand;
    int rc = kube_plugins_par_prepare(s, r, n);
    return rc ? rc : kube_terms_par_prepare(s, r);
}

static void build_profile(prof_built *b, const berth_kprofile *kp, berth_tiebreak tb)
{
    memset(b, 0, sizeof *b);
    b->kp = kp;
    uint32_t nf = 0, ns = 0;
    for (int i = 0; i < BERTH_KP_COUNT; i++) {
        berth_kplugin pl = (berth_kplugin)i;
        const berth_filter_plugin *f = kube_filter_plugin(pl);
        const berth_score_plugin *sc = kube_score_plugin(pl);
        if (f && (kp->filters & (1u << i))) {
            b->filter_of[nf] = pl;
            b->filters[nf++] = f;
        }
        if (sc && (kp->scores & (1u << i))) {
            b->score_of[ns] = pl;
            b->weights[ns] = kp->weight[i] > 0 ? kp->weight[i] : 1;
            b->scores[ns++] = sc;
        }
    }
    b->p.version = BERTH_PLUGIN_VERSION;
    b->p.name = kp->name;
    b->p.filters = b->filters;
    b->p.nfilters = nf;
    b->p.scores = b->scores;
    b->p.weights = b->weights;
    b->p.nscores = ns;
    b->p.combine = BERTH_COMBINE_SUM;
    b->p.tiebreak = tb;
    b->p.prepare = kube_par_prepare;
}

static int cmp_queue(const void *a, const void *b, void *ctx)
{
    const berth_kcluster *sort_k = ctx;
    const berth_kpod *x = &sort_k->pods[*(const uint32_t *)a], *y = &sort_k->pods[*(const uint32_t *)b];
    if (x->priority != y->priority)
        return x->priority > y->priority ? -1 : 1;
    /* a total order: a pod without creationTimestamp counts as created after
     * every timestamped pod (as if created when read); ties by input order */
    if (x->has_created != y->has_created)
        return x->has_created ? -1 : 1;
    if (x->has_created && x->created != y->created)
        return x->created < y->created ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* kube-scheduler's reasons counted over nodes (each node's first failing
 * plugin, every reason that plugin gave), at most KUBE_MAX_REASONS texts. */
#define KUBE_MAX_REASONS 64
typedef struct kube_reason_count {
    char text[160];
    uint32_t count;
} reason_count;

/* Adds count to each ';'-separated reason in buf (buf is cut up). */
static uint32_t add_reasons(char *buf, uint32_t count, reason_count *rc, uint32_t nrc)
{
    char *save = NULL;
    for (char *tok = strtok_r(buf, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
        while (*tok == ' ')
            tok++;
        uint32_t j = 0;
        while (j < nrc && strcmp(rc[j].text, tok) != 0)
            j++;
        if (j == nrc && nrc < KUBE_MAX_REASONS) {
            snprintf(rc[nrc].text, sizeof rc[nrc].text, "%s", tok);
            rc[nrc].count = 0;
            nrc++;
        }
        if (j < nrc)
            rc[j].count += count;
    }
    return nrc;
}

/* Nodes whose first failing plugin gives the same reason code (same text),
 * grouped so that each text is formatted once: an open-addressed table on
 * the stack; a node whose group finds no slot is formatted on its own. */
#define KUBE_REASON_GROUPS 256
typedef struct {
    uint32_t f, code, count, done; /* f = 0: empty slot */
} reason_group;

static reason_group *reason_group_find(reason_group *g, uint32_t f, uint32_t code, int add)
{
    uint32_t h = (code * 2654435761u) ^ (f * 40503u);
    for (uint32_t i = 0; i < KUBE_REASON_GROUPS; i++) {
        reason_group *x = &g[(h + i) % KUBE_REASON_GROUPS];
        if (x->f == f && x->code == code)
            return x;
        if (!x->f) {
            if (!add)
                return NULL;
            *x = (reason_group){f, code, 0, 0};
            return x;
        }
    }
    return NULL;
}

static uint32_t count_reasons(kube_sched *s, const prof_built *b, const kube_req *rq,
                              const berth_cycle *c, const uint32_t *examined, uint32_t nexamined,
                              uint32_t nnodes, uint32_t absent, reason_count *rc)
{
    uint32_t nrc = 0;
    if (rq->p->vol_error && (b->kp->filters & (1u << BERTH_KP_VOLUME_ZONE))) {
        /* VolumeZone's PreFilter rejects the pod on every node */
        snprintf(rc[0].text, sizeof rc[0].text, "%s", rq->p->vol_error);
        rc[0].count = nnodes;
        return 1;
    }
    /* first the nodes per (plugin, reason code); then, in node order, each
     * group's text at its first node with the group's count: the same
     * texts, counts and order as formatting every node */
    reason_group g[KUBE_REASON_GROUPS];
    memset(g, 0, sizeof g);
    for (uint32_t i = 0; i < nexamined; i++) {
        uint32_t n = examined[i];
        uint32_t f = c->first_reject[n];
        if (!f)
            continue;
        uint32_t code = kube_reason_code(s, rq, b->filter_of[f - 1], n);
        reason_group *x =
            code == KUBE_NO_REASON_CODE ? NULL : reason_group_find(g, f, code, 1);
        if (x)
            x->count++;
    }
    char buf[512];
    for (uint32_t i = 0; i < nexamined; i++) {
        uint32_t n = examined[i];
        uint32_t f = c->first_reject[n];
        if (!f)
            continue;
        uint32_t code = kube_reason_code(s, rq, b->filter_of[f - 1], n), count = 1;
        reason_group *x =
            code == KUBE_NO_REASON_CODE ? NULL : reason_group_find(g, f, code, 0);
        if (x) {
            if (x->done)
                continue;
            x->done = 1;
            count = x->count;
        }
        b->filters[f - 1]->reason(s, rq, n, buf, sizeof buf);
        nrc = add_reasons(buf, count, rc, nrc);
    }
    if (absent && nrc < KUBE_MAX_REASONS) {
        /* nodes outside NodeAffinity's PreFilter result (upstream
         * findNodesThatFitPod: SetAbsentNodesStatus) */
        snprintf(rc[nrc].text, sizeof rc[nrc].text, "node(s) didn't satisfy plugin(s) [NodeAffinity]");
        rc[nrc++].count = absent;
    }
    return nrc;
}

/* kube-scheduler's FitError text from the counts: "N reason" strings
 * sorted as strings, joined with ", ". */
static char *fit_error(const kube_req *rq, const prof_built *b, const reason_count *rc,
                       uint32_t nrc, uint32_t nnodes)
{
    if (rq->p->vol_error && (b->kp->filters & (1u << BERTH_KP_VOLUME_ZONE))) {
        /* VolumeZone's PreFilter rejects the pod before any node is
         * filtered: upstream's FitError then carries only its message */
        size_t cap = strlen(rq->p->vol_error) + 64;
        char *out = malloc(cap);
        if (out)
            snprintf(out, cap, "0/%u nodes are available: %s.", nnodes, rq->p->vol_error);
        return out;
    }
    char (*items)[200] = calloc(nrc ? nrc : 1, sizeof *items);
    size_t cap = 64 + nrc * 200;
    char *out = malloc(cap);
    if (!items || !out) {
        free(items);
        free(out);
        return NULL;
    }
    for (uint32_t j = 0; j < nrc; j++)
        snprintf(items[j], sizeof items[j], "%u %s", rc[j].count, rc[j].text);
    qsort(items, nrc, sizeof *items, (int (*)(const void *, const void *))strcmp);
    size_t off = (size_t)snprintf(out, cap, "0/%u nodes are available", nnodes);
    for (uint32_t j = 0; j < nrc; j++)
        off += (size_t)snprintf(out + off, cap - off, "%s%s", j ? ", " : ": ", items[j]);
    snprintf(out + off, cap - off, ".");
    free(items);
    return out;
}

/* The text of NodeAffinity's PreScore error for p (malloc'd). */
static char *prescore_error(const kube_sched *s, const berth_kpod *p)
{
    char *why = kube_affinity_prescore_error(s, p);
    if (!why)
        why = strdup("running PreScore plugin \"NodeAffinity\": a preferred term does not parse");
    return why;
}

void kube_queue_sort(const berth_kcluster *k, uint32_t *queue, uint32_t n)
{
    qsort_r(queue, n, sizeof *queue, cmp_queue, (void *)k);
}

int kube_loop_set_threads(kube_loop *L, uint32_t threads)
{
    /* once per loop; small clusters never split a batch */
    if (L->pool || threads <= 1 || L->s.k->nnodes < BERTH_PAR_MIN)
        return 0;
    int rc = berth_pool_create(&L->pool, threads);
    if (rc)
        return rc;
    if (berth_cycle_set_pool(&L->c, L->pool)) {
        berth_pool_destroy(L->pool);
        L->pool = NULL;
        return BERTH_ENOMEM;
    }
    L->s.pool = L->pool;
    return 0;
}

void kube_loop_free(kube_loop *L)
{
    kube_preempt_free(L);
    berth_pool_destroy(L->pool);
    free(L->rc);
    free(L->reasons);
    free(L->batch);
    free(L->built);
    berth_cycle_free(&L->c);
    kube_sched_free(&L->s);
    memset(L, 0, sizeof *L);
}

int kube_loop_init(kube_loop *L, berth_kcluster *k, const berth_kube_options *opt,
                   uint32_t nspare, int pending_view, berth_error *e)
{
    memset(L, 0, sizeof *L);
    /* preemption writes its victims and the preemptor into the pods
     * (kube/preempt.c), which a pending view (a what-if session over the
     * caller's read-only table) must never do: sessions do not offer it */
    if (NEVER(pending_view && opt->preempt))
        return berth_error_set(e, BERTH_EINTERNAL, "preemption in a what-if session");
    L->opt = opt;
    berth_kube_default_profile(k, &L->defprof);
    const berth_kprofile *first = opt->profile ? opt->profile
                                  : k->nprofiles ? &k->profiles[0] : &L->defprof;
    if (kube_sched_init_spare(&L->s, k, first, opt->reference, nspare, pending_view, opt->tail))
        return berth_error_set(e, BERTH_ENOMEM, "out of memory preparing %u nodes", k->nnodes);
    if (berth_cycle_init(&L->c, k->nnodes ? k->nnodes : 1, BERTH_KP_COUNT, opt->seed)) {
        kube_sched_free(&L->s);
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    }
    L->c.explain = 1; /* first_reject feeds the FitError summary */
    L->c.all_filters = opt->detail;
    L->batch = malloc((k->nnodes ? k->nnodes : 1) * sizeof *L->batch);
    L->built = calloc(k->nprofiles + 1, sizeof *L->built);
    L->rc = calloc(KUBE_MAX_REASONS, sizeof *L->rc);
    L->reasons = calloc(KUBE_MAX_REASONS, sizeof *L->reasons);
    if (!L->batch || !L->built || !L->rc || !L->reasons ||
        (!opt->reference && !opt->detail && !opt->reasons && kube_fast_init(&L->s))) {
        kube_loop_free(L);
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    }
    int prc = kube_loop_set_threads(L, opt->threads);
    if (prc) {
        kube_loop_free(L);
        if (prc == BERTH_ENOMEM)
            return berth_error_set(e, prc, "out of memory");
        return berth_error_set(e, prc, "cannot start %u threads", opt->threads);
    }
    for (uint32_t i = 0; i < k->nprofiles; i++)
        build_profile(&L->built[i], &k->profiles[i], opt->tiebreak);
    build_profile(&L->built[k->nprofiles], opt->profile ? opt->profile : &L->defprof,
                  opt->tiebreak);
    return 0;
}

/* NodeAffinity's PreFilter (upstream pkg/scheduler/framework/plugins/
 * nodeaffinity/node_affinity.go getPreFilterNodeNames): when every required
 * node-affinity term names nodes through matchFields metadata.name In (the
 * shape DaemonSet pods get), only those nodes are filtered: the requirements
 * of one term are intersected, the terms united. Writes the named nodes that
 * exist and are candidates into batch in index order and returns their
 * count, or BERTH_KUBE_NONE when the pod is not pinned this way. */
static uint32_t pinned_nodes(const kube_sched *s, const berth_kpod *p, uint32_t *batch)
{
    if (!p->has_req_affinity || !p->nreq_terms)
        return BERTH_KUBE_NONE;
    for (uint32_t t = 0; t < p->nreq_terms; t++) {
        const berth_kterm *tm = &p->req_terms[t];
        uint32_t f = 0;
        while (f < tm->nfields && tm->fields[f].op != BERTH_SEL_IN)
            f++;
        if (f == tm->nfields)
            return BERTH_KUBE_NONE; /* this term does not name nodes: every node */
    }
    uint32_t n = 0;
    for (uint32_t t = 0; t < p->nreq_terms; t++) {
        const berth_kterm *tm = &p->req_terms[t];
        for (uint32_t f = 0; f < tm->nfields; f++) {
            const berth_requirement *r = &tm->fields[f];
            if (r->op != BERTH_SEL_IN)
                continue;
            for (uint32_t v = 0; v < r->nvalues; v++) {
                /* in every other In requirement of the term too */
                int all = 1;
                for (uint32_t g = 0; g < tm->nfields && all; g++) {
                    const berth_requirement *o = &tm->fields[g];
                    if (g == f || o->op != BERTH_SEL_IN)
                        continue;
                    all = 0;
                    for (uint32_t w = 0; w < o->nvalues && !all; w++)
                        all = !strcmp(o->values[w], r->values[v]);
                }
                uint32_t nd = all ? kube_node_by_name(s, r->values[v]) : BERTH_KUBE_NONE;
                if (nd == BERTH_KUBE_NONE || (s->off && s->off[nd]))
                    continue;
                uint32_t i = n;
                while (i > 0 && batch[i - 1] > nd)
                    i--;
                if (i > 0 && batch[i - 1] == nd)
                    continue;
                memmove(batch + i + 1, batch + i, (n - i) * sizeof *batch);
                batch[i] = nd;
                n++;
            }
            break; /* the other In requirements only intersect */
        }
    }
    return n;
}

/* Assumes pod on node as kube_loop_pod decided: the pod's nodeName and
 * assumed mark (not under a session's pending view, which records it
 * itself), every column and counter, the fast path's change log. */
static int assume_decision(kube_sched *s, uint32_t pod, uint32_t node, berth_error *e)
{
    if (!s->pending_view) {
        s->k->pods[pod].node_name = s->k->nodes[node].name;
        s->k->pods[pod].assumed = 1;
    }
    if (kube_assume(s, pod, node) || kube_fast_assumed(s, node))
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    return 0;
}

int kube_loop_pod(kube_loop *L, uint32_t pod, uint32_t *placed, berth_error *e)
{
    kube_sched *sp = &L->s;
    berth_kcluster *k = sp->k;
    const berth_kube_options *opt = L->opt;
    berth_cycle *c = &L->c;
    uint32_t *batch = L->batch;
    const berth_kpod *p = &k->pods[pod];
    int rc = 0;
    /* the deadline: the clock every 8th pod (a pod costs far more) */
    if (opt->cancel && !(L->cancel_tick++ & 7) && berth_cancel_expired(opt->cancel)) {
        *placed = BERTH_KUBE_NONE;
        return berth_error_set(e, BERTH_ETIMEDOUT, "stopped at the deadline");
    }
    *placed = BERTH_KUBE_NONE;
    /* the profile: forced, or by schedulerName */
    const prof_built *b = &L->built[k->nprofiles];
    const char *sched_name = p->scheduler_name ? p->scheduler_name : "default-scheduler";
    if (!opt->profile && (k->nprofiles || strcmp(sched_name, "default-scheduler") != 0)) {
        b = NULL;
        for (uint32_t i = 0; i < k->nprofiles; i++)
            if (!strcmp(k->profiles[i].name, sched_name))
                b = &L->built[i];
        if (!b) {
            char why[300];
            snprintf(why, sizeof why,
                     "no scheduler profile named '%s': the pod is left for that scheduler",
                     sched_name);
            berth_kdecision d = {.pod = pod, .node = BERTH_KUBE_NONE, .summary = why,
                                 .nominated = BERTH_KUBE_NONE};
            if (opt->on_decision)
                opt->on_decision(opt->ctx, k, &d);
            return 0;
        }
    }
    sp->prof = b->kp;
    kube_req rq;
    if ((rc = kube_req_init(sp, &rq, pod)))
        return berth_error_set(e, rc, "out of memory");
    /* candidates: every node that is not off, or the percentageOfNodesToScore
     * round robin over them */
    uint32_t N = sp->ncand;
    int32_t pct = b->kp->percentage_of_nodes_to_score ? b->kp->percentage_of_nodes_to_score
                                                      : k->percentage_of_nodes_to_score;
    uint32_t start = 0, absent = 0;
    c->max_feasible = 0;
    uint32_t npin = (b->kp->filters & (1u << BERTH_KP_NODE_AFFINITY)) ? pinned_nodes(sp, p, batch)
                                                                       : BERTH_KUBE_NONE;
    if (npin != BERTH_KUBE_NONE) {
        absent = N - npin;
        N = npin;
    } else if (pct > 0 && pct < 100 && N >= 100) {
        uint64_t want = (uint64_t)N * (uint64_t)pct / 100;
        c->max_feasible = (uint32_t)(want < 100 ? 100 : want);
        start = sp->next_start % N;
    }
    if (npin == BERTH_KUBE_NONE && !c->max_feasible && sp->fast) {
        kube_fast_result fr;
        int fx = kube_fast_pick(sp, &b->p, &rq, &c->rng, &fr);
        if (fx >= 0 && kube_terms_failed(&rq))
            fx = BERTH_ENOMEM; /* a plugin that ran out of memory decided nothing */
        if (fx < 0) {
            kube_req_free(sp, &rq);
            return berth_error_set(e, fx, "out of memory");
        }
        if (fx == 2 && !opt->detail && (!opt->on_decision || L->no_summary)) {
            /* no node fits and nobody reads why: skip the full pipeline,
             * which would only explain it */
            berth_kdecision d;
            memset(&d, 0, sizeof d);
            d.pod = pod;
            d.node = d.nominated = BERTH_KUBE_NONE;
            kube_preempt_result pr = {.node = BERTH_KUBE_NONE};
            if (opt->preempt && (rc = kube_preempt_find(L, &b->p, b->filter_of, &rq, &pr))) {
                kube_req_free(sp, &rq);
                return berth_error_set(e, rc, "out of memory");
            }
            if (pr.nvictims) {
                d.node = d.nominated = pr.node;
                d.victims = pr.victims;
                d.nvictims = pr.nvictims;
            }
            if (opt->on_decision)
                opt->on_decision(opt->ctx, k, &d);
            if (pr.nvictims) {
                if (kube_preempt_commit(L, pod, &pr))
                    rc = berth_error_set(e, BERTH_ENOMEM, "out of memory");
                else
                    *placed = pr.node;
            }
            kube_req_free(sp, &rq);
            return rc;
        }
        if (fx == 1 && fr.nfeasible > 1 && kube_affinity_prescore_failed(sp, p)) {
            /* NodeAffinity's PreScore fails: a scheduling error for the pod */
            berth_kdecision d;
            memset(&d, 0, sizeof d);
            d.pod = pod;
            d.node = BERTH_KUBE_NONE;
            d.nfeasible = fr.nfeasible;
            d.score_plugins = b->score_of;
            d.score_weights = b->weights;
            d.filter_plugins = b->filter_of;
            d.nfilter_plugins = b->p.nfilters;
            d.sched = sp;
            d.req = &rq;
            char *why = opt->on_decision && !L->no_summary ? prescore_error(sp, p) : NULL;
            d.summary = why;
            if (opt->on_decision)
                opt->on_decision(opt->ctx, k, &d);
            free(why);
            kube_req_free(sp, &rq);
            return 0;
        }
        if (fx == 1) {
            berth_kdecision d;
            memset(&d, 0, sizeof d);
            d.pod = pod;
            d.nominated = BERTH_KUBE_NONE;
            d.node = fr.node;
            d.nfeasible = fr.nfeasible;
            d.total = fr.total;
            d.score_plugins = b->score_of;
            d.score_weights = b->weights;
            d.nscore_plugins = b->p.nscores;
            d.filter_plugins = b->filter_of;
            d.nfilter_plugins = b->p.nfilters;
            d.sched = sp;
            d.req = &rq;
            if (opt->on_decision)
                opt->on_decision(opt->ctx, k, &d);
            if ((rc = assume_decision(sp, pod, fr.node, e)) == 0)
                *placed = fr.node;
            kube_req_free(sp, &rq);
            return rc;
        }
    }
    if (npin != BERTH_KUBE_NONE) {
        /* batch already holds the named nodes */
    } else if (!sp->off || N == k->nnodes) {
        /* (start + i) % N with one division */
        uint32_t s0 = N ? start % N : 0;
        for (uint32_t i = 0; i < N; i++)
            batch[i] = s0 + i >= N ? s0 + i - N : s0 + i;
    } else {
        /* the candidates in node order, rotated to start */
        uint32_t m = 0;
        for (uint32_t nd = 0; nd < k->nnodes; nd++)
            if (!sp->off[nd])
                batch[(m++ + N - start) % N] = nd;
    }
    berth_pick pk;
    rc = berth_pipeline_pick_batch(&b->p, sp, &rq, c, batch, N, &pk);
    if (!rc && kube_terms_failed(&rq))
        rc = BERTH_ENOMEM; /* a plugin that ran out of memory decided nothing */
    if (rc) {
        kube_req_free(sp, &rq);
        return berth_error_set(e, rc, "scheduling failed: %s", berth_strerror(rc));
    }
    if (c->max_feasible)
        sp->next_start = (start + pk.examined) % N;
    berth_kdecision d;
    memset(&d, 0, sizeof d);
    d.pod = pod;
    d.node = pk.chosen == BERTH_NO_CANDIDATE ? BERTH_KUBE_NONE : pk.chosen;
    d.nfeasible = pk.nfeasible;
    d.feasible = c->feasible;
    d.plugin_scores = c->scores;
    d.totals = c->total;
    for (uint32_t i = 0; i < pk.nfeasible; i++)
        if (c->feasible[i] == pk.chosen)
            d.total = c->total[i];
    d.score_plugins = b->score_of;
    d.score_weights = b->weights;
    d.nscore_plugins = b->p.nscores;
    d.cap = c->cap;
    d.fail_mask = opt->detail ? c->reject_mask : NULL;
    d.filter_plugins = b->filter_of;
    d.nfilter_plugins = b->p.nfilters;
    d.examined = batch;
    d.nexamined = pk.examined;
    d.nominated = BERTH_KUBE_NONE;
    kube_preempt_result pr = {.node = BERTH_KUBE_NONE};
    if (d.node == BERTH_KUBE_NONE && opt->preempt &&
        (rc = kube_preempt_find(L, &b->p, b->filter_of, &rq, &pr))) {
        kube_req_free(sp, &rq);
        return berth_error_set(e, rc, "out of memory");
    }
    if (pr.nvictims) {
        /* nominated: placed there once the victims are gone */
        d.node = d.nominated = pr.node;
        d.victims = pr.victims;
        d.nvictims = pr.nvictims;
    }
    char *summary = NULL;
    uint32_t nrc = 0;
    int want_summary = d.node == BERTH_KUBE_NONE && opt->on_decision && !L->no_summary;
    if (opt->reasons || want_summary) {
        /* one formatted reason per examined node: only when someone reads it */
        nrc = count_reasons(sp, b, &rq, c, batch, pk.examined, N + absent, absent, L->rc);
        if (opt->reasons) {
            for (uint32_t j = 0; j < nrc; j++)
                L->reasons[j] = (berth_kreason){L->rc[j].text, L->rc[j].count};
            d.reasons = L->reasons;
            d.nreasons = nrc;
        }
    }
    if (d.node != BERTH_KUBE_NONE && pk.nfeasible > 1 && kube_affinity_prescore_failed(sp, p)) {
        /* NodeAffinity's PreScore fails (upstream runs PreScore only with
         * more than one feasible node): a scheduling error, no scores */
        d.node = BERTH_KUBE_NONE;
        d.total = 0;
        d.plugin_scores = NULL;
        d.totals = NULL;
        if (opt->on_decision && !L->no_summary)
            d.summary = summary = prescore_error(sp, p);
    } else if (want_summary) {
        summary = fit_error(&rq, b, L->rc, nrc, N + absent);
        if (!summary) { /* not a shorter message: that would be a wrong answer */
            kube_req_free(sp, &rq);
            return berth_error_set(e, BERTH_ENOMEM, "out of memory");
        }
        d.summary = summary;
    }
    d.sched = sp;
    d.req = &rq;
    if (opt->on_decision)
        opt->on_decision(opt->ctx, k, &d);
    free(summary);
    if (pr.nvictims) {
        if (kube_preempt_commit(L, pod, &pr))
            rc = berth_error_set(e, BERTH_ENOMEM, "out of memory");
        else
            *placed = pr.node;
    } else if (d.node != BERTH_KUBE_NONE) {
        if ((rc = assume_decision(sp, pod, d.node, e)) == 0)
            *placed = d.node;
    }
    kube_req_free(sp, &rq);
    return rc;
}

int berth_kube_schedule(berth_kcluster *k, const berth_kube_options *opt, berth_error *e)
{
    kube_loop L;
    int rc = kube_loop_init(&L, k, opt, 0, 0, e);
    if (rc)
        return rc;
    int unplaced = 0;
    uint32_t *queue = malloc((k->npods ? k->npods : 1) * sizeof *queue);
    if (!queue) {
        kube_loop_free(&L);
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    }
    uint32_t nq = 0;
    for (uint32_t p = 0; p < k->npods; p++)
        if (!k->pods[p].node_name)
            queue[nq++] = p;
    kube_queue_sort(k, queue, nq);
    for (uint32_t qi = 0; qi < nq && !rc; qi++) {
        uint32_t node;
        if (k->pods[queue[qi]].terminating) {
            /* kube-scheduler skips a pod being deleted (skipPodSchedule):
             * reported, not placed, not unschedulable */
            if (opt->on_decision) {
                berth_kdecision d;
                memset(&d, 0, sizeof d);
                d.pod = queue[qi];
                d.node = BERTH_KUBE_NONE;
                d.terminating = 1;
                d.summary = "not scheduled: the pod is terminating (metadata.deletionTimestamp "
                            "is set)";
                opt->on_decision(opt->ctx, k, &d);
            }
            continue;
        }
        rc = kube_loop_pod(&L, queue[qi], &node, e);
        unplaced |= node == BERTH_KUBE_NONE;
    }
    free(queue);
    kube_loop_free(&L);
    if (rc)
        return rc;
    return unplaced ? BERTH_ENOFIT : 0;
}

/* The reason a filter plugin gives for pod on node, in the state of the
 * decision being reported (valid inside an on_decision callback). */
void berth_kube_decision_reason(const berth_kdecision *d, uint32_t node, berth_kplugin f,
                                char *buf, size_t size)
{
    const berth_filter_plugin *fp = kube_filter_plugin(f);
    buf[0] = 0;
    if (fp && fp->reason)
        fp->reason(d->sched, d->req, node, buf, size);
}
