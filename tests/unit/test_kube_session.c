/* test_kube_session.c - the incremental what-if session (berth_ksession)
 * against berth_kube_schedule_view, the rebuild-per-question oracle.
 *
 * Random small clusters (zones, hostnames, racks, taints, images, pods with
 * requests, nodeSelectors, tolerations, topology spread constraints, pod
 * (anti-)affinity, DaemonSet-like pods pinned by matchFields, system
 * default spreading through a ReplicaSet, host ports; nodes with observed
 * usage, a quarter of the worlds with the usage-aware profile, a quarter
 * with a profile's NodeAffinity addedAffinity) are first
 * scheduled once; then
 * what-if questions (remove some nodes: evict their pods, exclude them,
 * place the pods again; optionally with spare nodes, named to sort before
 * or after the nodes, the view's extra_last keeping them last in
 * tie-break order) are answered by the
 * session and by the view on the same state, decision by decision, why
 * text included. Rollback must give the same answers again, and the state
 * after a rollback must answer a different question exactly like a fresh
 * session; a long-lived session answers 150 questions in a row. Targeted
 * tests: evict + place restores the spread counters, exclusion is honoured
 * by the fast path (and by ImageLocality's image spread), undo of bind and
 * spare; a session with threads answers as one without; the session
 * shares the caller's pod table read only (never written, its
 * spec.nodeName and deletion mark unread after open). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <cmocka.h>

#include "berth/kube.h"
#include "berth/random.h"

#define MI (1024LL * 1024)
#define GI (1024LL * MI)
#define HOSTNAME "kubernetes.io/hostname"
#define ZONE "topology.kubernetes.io/zone"
#define MAXN 400
#define MAXP 160
#define NSPARE 2

static berth_rng G;
static uint32_t rnd(uint32_t n) { return (uint32_t)berth_rng_below(&G, n); }
static int chance(uint32_t pct) { return rnd(100) < pct; }

static const char *fmt(berth_arena *a, const char *f, ...)
{
    char buf[96];
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    return berth_arena_strdup(a, buf);
}

static void *aalloc(berth_arena *a, size_t n)
{
    void *p = berth_arena_alloc(a, n ? n : 1);
    assert_non_null(p);
    memset(p, 0, n ? n : 1);
    return p;
}

static const char *ZONES[] = {"z-a", "z-b", "z-c"};
static const char *APPS[] = {"web", "db", "batch"};
static const char *IMAGES[] = {"img/app:1", "img/db:2", "img/big:3"};
static const int64_t IMAGE_SIZE[] = {300 * MI, 800 * MI, 1500 * MI};
static const berth_taint TAINTS[] = {
    {"dedicated", "gpu", BERTH_EFFECT_NOSCHEDULE},
    {"spot", "true", BERTH_EFFECT_PREFERNOSCHEDULE},
    {"maint", NULL, BERTH_EFFECT_NOEXECUTE},
};

static berth_selector sel_app(berth_arena *a, const char *app)
{
    berth_requirement *r = aalloc(a, sizeof *r);
    const char **v = aalloc(a, sizeof *v);
    v[0] = app;
    *r = (berth_requirement){"app", BERTH_SEL_IN, v, 1};
    return (berth_selector){r, 1, 0};
}

static void gen_node(berth_arena *a, berth_knode *nd, const char *name, int spare)
{
    memset(nd, 0, sizeof *nd);
    nd->name = name;
    berth_label *l = aalloc(a, 4 * sizeof *l);
    uint32_t nl = 0;
    l[nl++] = (berth_label){HOSTNAME, name};
    if (chance(90))
        l[nl++] = (berth_label){ZONE, spare && chance(50) ? "z-new" : ZONES[rnd(3)]};
    if (chance(50))
        l[nl++] = (berth_label){"disk", rnd(2) ? "ssd" : "hdd"};
    nd->labels = (berth_labels){l, nl};
    berth_labels_sort(&nd->labels);
    nd->alloc[BERTH_KRES_CPU] = 1000 * (2 + (int64_t)rnd(6));
    nd->alloc[BERTH_KRES_MEMORY] = (2 + (int64_t)rnd(8)) * GI;
    nd->alloc[BERTH_KRES_EPHEMERAL] = 100 * GI;
    nd->alloc_pods = 4 + rnd(10);
    if (chance(40)) {
        nd->has_usage = 1;
        nd->usage[BERTH_KRES_CPU] = 100 * (int64_t)rnd(20);
        nd->usage[BERTH_KRES_MEMORY] = (int64_t)rnd(16) * 256 * MI;
    }
    if (chance(25)) {
        nd->taints = aalloc(a, sizeof *nd->taints);
        nd->taints[0] = TAINTS[rnd(3)];
        nd->ntaints = 1;
    }
    if (chance(35)) {
        nd->images = aalloc(a, sizeof *nd->images);
        uint32_t i = rnd(3);
        /* sizes differ per node: the first node (in name order, among
         * those in the view) reporting a name gives its size */
        nd->images[0] = (berth_kimage){IMAGES[i], IMAGE_SIZE[i] + (int64_t)rnd(3) * 200 * MI};
        nd->nimages = 1;
    }
}

static void gen_pod(berth_kcluster *k, berth_kpod *p, uint32_t i)
{
    berth_arena *a = &k->arena;
    p->ns = chance(70) ? "default" : "team";
    p->name = fmt(a, "pod-%u", i);
    p->order = i;
    p->priority = chance(20) ? 100 : 0;
    p->created = 1000 + rnd(50);
    p->has_created = 1;
    const char *app = APPS[rnd(3)];
    berth_label *l = aalloc(a, 2 * sizeof *l);
    l[0] = (berth_label){"app", app};
    p->labels = (berth_labels){l, 1};
    p->ncontainers = 1;
    p->containers = aalloc(a, sizeof *p->containers);
    p->containers[0].name = "c";
    p->containers[0].image = IMAGES[rnd(3)];
    if (chance(85)) {
        p->containers[0].req[BERTH_KRES_CPU] = 100 * (1 + rnd(10));
        p->containers[0].has_req |= 1u << BERTH_KRES_CPU;
    }
    if (chance(85)) {
        p->containers[0].req[BERTH_KRES_MEMORY] = (int64_t)(1 + rnd(8)) * 128 * MI;
        p->containers[0].has_req |= 1u << BERTH_KRES_MEMORY;
    }
    if (chance(15)) {
        berth_label *s = aalloc(a, sizeof *s);
        s[0] = (berth_label){ZONE, ZONES[rnd(3)]};
        p->node_selector = (berth_labels){s, 1};
    }
    if (chance(30)) {
        p->tols = aalloc(a, sizeof *p->tols);
        const berth_taint *t = &TAINTS[rnd(3)];
        p->tols[0] = (berth_toleration){t->key, NULL, BERTH_TOL_EXISTS, BERTH_EFFECT_ALL, -1};
        p->ntols = 1;
    }
    if (chance(5)) {
        p->ports = aalloc(a, sizeof *p->ports);
        p->ports[0] = (berth_kport){8080, BERTH_PROTO_TCP, "0.0.0.0"};
        p->nports = 1;
    }
    uint32_t kind = rnd(100);
    if (kind < 20) {
        p->spread = aalloc(a, sizeof *p->spread);
        p->nspread = 1;
        berth_kspread *c = &p->spread[0];
        c->max_skew = 1 + (int32_t)rnd(2);
        c->topology_key = chance(50) ? ZONE : HOSTNAME;
        c->do_not_schedule = chance(60);
        c->selector = sel_app(a, app);
        c->min_domains = 1;
        c->honor_node_affinity = 1;
    } else if (kind < 32) {
        berth_kaffinity_term *t = aalloc(a, sizeof *t);
        t->selector = sel_app(a, app);
        t->topology_key = chance(60) ? HOSTNAME : ZONE;
        t->weight = 10 + (int32_t)rnd(50);
        if (chance(50)) {
            p->anti_req = t;
            p->nanti_req = 1;
        } else {
            p->anti_pref = t;
            p->nanti_pref = 1;
        }
    } else if (kind < 42) {
        berth_kaffinity_term *t = aalloc(a, sizeof *t);
        t->selector = sel_app(a, APPS[rnd(3)]);
        t->topology_key = ZONE;
        t->weight = 10 + (int32_t)rnd(50);
        if (chance(40)) {
            p->aff_req = t;
            p->naff_req = 1;
        } else {
            p->aff_pref = t;
            p->naff_pref = 1;
        }
    } else if (kind < 48 && k->nnodes) {
        /* DaemonSet-like: pinned to one node by matchFields, tolerates all */
        p->owner_kind = "DaemonSet";
        p->owner_name = "ds";
        p->has_req_affinity = 1;
        p->req_terms = aalloc(a, sizeof *p->req_terms);
        p->nreq_terms = 1;
        berth_requirement *f = aalloc(a, sizeof *f);
        const char **v = aalloc(a, sizeof *v);
        v[0] = k->nodes[rnd(k->nnodes)].name;
        *f = (berth_requirement){"metadata.name", BERTH_SEL_IN, v, 1};
        p->req_terms[0].fields = f;
        p->req_terms[0].nfields = 1;
        p->tols = aalloc(a, sizeof *p->tols);
        p->tols[0] = (berth_toleration){NULL, NULL, BERTH_TOL_EXISTS, BERTH_EFFECT_ALL, -1};
        p->ntols = 1;
    } else if (kind < 60) {
        berth_label *l2 = aalloc(a, 2 * sizeof *l2);
        l2[0] = (berth_label){"app", app};
        l2[1] = (berth_label){"rs", "rs-1"};
        p->labels = (berth_labels){l2, 2};
        p->ns = "default";
    }
    berth_labels_sort(&p->labels);
    berth_kube_pod_requests(k, p);
}

typedef struct world {
    berth_kcluster k;
    berth_kprofile prof;
    const berth_kprofile *profile; /* NULL or &prof (usage-aware) */
    uint32_t pod_node[MAXP];
    berth_knode spare[NSPARE];
} world;

static uint32_t node_index(const berth_kcluster *k, const char *name)
{
    for (uint32_t n = 0; n < k->nnodes; n++)
        if (!strcmp(k->nodes[n].name, name))
            return n;
    return BERTH_KUBE_NONE;
}

/* A random cluster, scheduled once (the view with every pod pending) to
 * give the bound state the questions start from. */
static void gen_world(world *w, uint64_t seed, uint32_t min_nodes, uint32_t max_nodes,
                      int32_t pct)
{
    berth_rng_seed(&G, seed);
    berth_kcluster *k = &w->k;
    berth_kube_init(k);
    berth_arena *a = &k->arena;
    uint32_t N = min_nodes + rnd(max_nodes - min_nodes + 1);
    k->percentage_of_nodes_to_score = pct;
    /* a quarter of the worlds use the usage-aware profile for every pod */
    w->profile = NULL;
    if (seed % 4 == 0) {
        berth_kube_usage_aware_profile(k, &w->prof);
        w->profile = &w->prof;
    } else if (seed % 4 == 2) {
        /* another quarter: the default profile with NodeAffinityArgs
         * addedAffinity (nodes need disk NotIn [hdd], or zone z-new as
         * some spare nodes have; zone z-b preferred, weight 5) */
        berth_kube_default_profile(k, &w->prof);
        static const char *hdd[] = {"hdd"}, *znew[] = {"z-new"}, *zb[] = {"z-b"};
        berth_requirement *rq = aalloc(a, 3 * sizeof *rq);
        rq[0] = (berth_requirement){"disk", BERTH_SEL_NOTIN, hdd, 1};
        rq[1] = (berth_requirement){ZONE, BERTH_SEL_IN, znew, 1};
        rq[2] = (berth_requirement){ZONE, BERTH_SEL_IN, zb, 1};
        berth_kterm *req = aalloc(a, 2 * sizeof *req);
        req[0] = (berth_kterm){&rq[0], 1, NULL, 0, 0};
        req[1] = (berth_kterm){&rq[1], 1, NULL, 0, 0};
        berth_kpref_term *pref = aalloc(a, sizeof *pref);
        pref[0] = (berth_kpref_term){5, {&rq[2], 1, NULL, 0, 0}};
        w->prof.has_added_req = 1;
        w->prof.added_req = req;
        w->prof.nadded_req = 2;
        w->prof.added_pref = pref;
        w->prof.nadded_pref = 1;
        w->profile = &w->prof;
    }
    k->nodes = calloc(N, sizeof *k->nodes);
    k->nnodes = k->capnodes = N;
    uint8_t used[1000] = {0};
    for (uint32_t n = 0; n < N; n++) {
        uint32_t id = n; /* names in index order past 1,000 nodes */
        while (N <= 1000 && used[id = rnd(1000)])
            ;
        if (id < 1000)
            used[id] = 1;
        gen_node(a, &k->nodes[n], fmt(a, "n-%03u", id), 0);
        k->nodes[n].unschedulable = chance(5);
    }
    /* spares named to sort after the nodes or before them (the view then
     * keeps them last in tie-break order: extra_last) */
    const char *spare_fmt = chance(50) ? "zz-spare-%u" : "a-spare-%u";
    for (uint32_t i = 0; i < NSPARE; i++)
        gen_node(a, &w->spare[i], fmt(a, spare_fmt, i), 1);
    k->namespaces = calloc(2, sizeof *k->namespaces);
    k->nnamespaces = k->capnamespaces = 2;
    k->namespaces[0].name = "default";
    k->namespaces[1].name = "team";
    k->workloads = calloc(1, sizeof *k->workloads);
    k->nworkloads = k->capworkloads = 1;
    berth_requirement *r = aalloc(a, sizeof *r);
    const char **v = aalloc(a, sizeof *v);
    v[0] = "rs-1";
    *r = (berth_requirement){"rs", BERTH_SEL_IN, v, 1};
    k->workloads[0] = (berth_kworkload){"ReplicaSet", "default", "rs-1", {r, 1, 0}};
    uint32_t P = 10 + rnd(MAXP - 10);
    k->pods = calloc(P, sizeof *k->pods);
    k->npods = k->cappods = P;
    for (uint32_t i = 0; i < P; i++)
        gen_pod(k, &k->pods[i], i);
    /* the starting state */
    uint32_t pending[MAXP];
    const char *placed[MAXP];
    for (uint32_t i = 0; i < P; i++) {
        pending[i] = i;
        w->pod_node[i] = BERTH_KUBE_NONE;
    }
    berth_kview vw = {0};
    vw.profile = w->profile;
    vw.pod_node = w->pod_node;
    vw.pending = pending;
    vw.npending = P;
    berth_error e = {0};
    assert_int_equal(berth_kube_schedule_view(k, &vw, placed, NULL, NULL, &e), 0);
    for (uint32_t i = 0; i < P; i++)
        w->pod_node[i] = placed[i] ? node_index(k, placed[i]) : BERTH_KUBE_NONE;
}

static void free_world(world *w)
{
    berth_kube_free(&w->k);
}

/* One question: remove nodes rm[0..nrm) (their pods pending), with
 * nspare spare nodes; cur is the bound state before it (per pod), xcl the
 * nodes already excluded. Answers: the view's node name per pending pod. */
typedef struct question {
    uint32_t rm[4], nrm, nspare;
} question;

typedef struct answer {
    uint32_t npending;
    uint32_t pending[MAXP];
    const char *node[MAXP];
    const char *why[MAXP];
} answer;

static void random_question(const world *w, question *q)
{
    q->nrm = 1 + rnd(w->k.nnodes < 8 ? 1 : 3);
    for (uint32_t i = 0; i < q->nrm; i++) {
        uint32_t n;
        int dup;
        do {
            n = rnd(w->k.nnodes);
            dup = 0;
            for (uint32_t j = 0; j < i; j++)
                dup |= q->rm[j] == n;
        } while (dup);
        q->rm[i] = n;
    }
    q->nspare = chance(30) ? 1 + rnd(NSPARE) : 0;
}

/* The oracle: berth_kube_schedule_view on state (cur, xcl) with q. */
static void ask_view(const world *w, const uint32_t *cur, const uint8_t *xcl0,
                     const question *q, answer *ans, berth_arena *a)
{
    const berth_kcluster *k = &w->k;
    uint8_t xcl[MAXN];
    memcpy(xcl, xcl0, k->nnodes);
    for (uint32_t i = 0; i < q->nrm; i++)
        xcl[q->rm[i]] = 1;
    ans->npending = 0;
    for (uint32_t p = 0; p < k->npods; p++)
        for (uint32_t i = 0; i < q->nrm; i++)
            if (cur[p] == q->rm[i])
                ans->pending[ans->npending++] = p;
    berth_kview vw = {0};
    vw.profile = w->profile;
    vw.excluded = xcl;
    vw.pod_node = cur;
    vw.extra = w->spare;
    vw.nextra = q->nspare;
    vw.extra_last = 1; /* as the session's spare slots, whatever their names */
    vw.pending = ans->pending;
    vw.npending = ans->npending;
    berth_error e = {0};
    assert_int_equal(berth_kube_schedule_view(k, &vw, ans->node, ans->why, a, &e), 0);
}

static const char *session_name(const world *w, uint32_t node)
{
    if (node == BERTH_KUBE_NONE)
        return NULL;
    if (node < w->k.nnodes)
        return w->k.nodes[node].name;
    return w->spare[node - w->k.nnodes].name;
}

/* Set: the session is asked without reasons (it may then skip explaining an
 * unplaced pod) and compare() checks placements only. */
static int g_no_why;

/* The same question asked of the session (state changed in place). */
static void ask_session(const world *w, berth_ksession *s, const question *q, answer *ans,
                        berth_arena *a)
{
    const berth_kcluster *k = &w->k;
    ans->npending = 0;
    for (uint32_t p = 0; p < k->npods; p++)
        for (uint32_t i = 0; i < q->nrm; i++)
            if (berth_ksession_node_of(s, p) == q->rm[i])
                ans->pending[ans->npending++] = p;
    for (uint32_t i = 0; i < ans->npending; i++)
        assert_int_equal(berth_ksession_evict(s, ans->pending[i]), 0);
    for (uint32_t i = 0; i < q->nrm; i++)
        berth_ksession_exclude(s, q->rm[i], 1);
    for (uint32_t i = 0; i < q->nspare; i++) {
        uint32_t node;
        assert_int_equal(berth_ksession_spare(s, i, &w->spare[i], &node), 0);
        assert_int_equal(node, k->nnodes + i);
    }
    uint32_t placed[MAXP];
    berth_error e = {0};
    int rc = berth_ksession_place(s, ans->pending, ans->npending, placed,
                                  g_no_why ? NULL : ans->why, g_no_why ? NULL : a, &e);
    for (uint32_t i = 0; g_no_why && i < ans->npending; i++)
        ans->why[i] = NULL;
    assert_true(rc == 0 || rc == BERTH_ENOFIT);
    int any_unplaced = 0;
    for (uint32_t i = 0; i < ans->npending; i++) {
        ans->node[i] = session_name(w, placed[i]);
        any_unplaced |= placed[i] == BERTH_KUBE_NONE;
        assert_int_equal(berth_ksession_node_of(s, ans->pending[i]), placed[i]);
    }
    assert_int_equal(rc, any_unplaced ? BERTH_ENOFIT : 0);
}

static int g_fail;

static void compare(const char *what, uint64_t seed, const answer *x, const answer *y)
{
    assert_int_equal(x->npending, y->npending);
    for (uint32_t i = 0; i < x->npending; i++) {
        assert_int_equal(x->pending[i], y->pending[i]);
        const char *a = x->node[i], *b = y->node[i];
        int same = (!a && !b) || (a && b && !strcmp(a, b));
        const char *wa = x->why[i], *wb = y->why[i];
        int same_why = g_no_why || (!wa && !wb) || (wa && wb && !strcmp(wa, wb));
        if (!same || !same_why) {
            print_error("seed %llu %s: pod %u: %s / %s (%s | %s)\n", (unsigned long long)seed,
                        what, x->pending[i], a ? a : "-", b ? b : "-", wa ? wa : "",
                        wb ? wb : "");
            g_fail = 1;
        }
    }
}

/* cur/xcl after the question q was answered with ans */
static void apply(const world *w, uint32_t *cur, uint8_t *xcl, const question *q,
                  const answer *ans)
{
    for (uint32_t i = 0; i < q->nrm; i++)
        xcl[q->rm[i]] = 1;
    for (uint32_t i = 0; i < ans->npending; i++)
        cur[ans->pending[i]] = ans->node[i] ? node_index(&w->k, ans->node[i]) : BERTH_KUBE_NONE;
}

/* berth_ksession_pods_on agrees with node_of: every node (spare slots
 * included) lists exactly the pods on it, each once; a bad node lists
 * nothing. */
static void check_pods_on(const berth_ksession *s, const berth_kcluster *k)
{
    uint32_t count[MAXN + NSPARE] = {0}, nn = k->nnodes + NSPARE, m;
    for (uint32_t p = 0; p < k->npods; p++) {
        uint32_t n = berth_ksession_node_of(s, p);
        if (n != BERTH_KUBE_NONE)
            count[n]++;
    }
    for (uint32_t n = 0; n < nn; n++) {
        const uint32_t *on = berth_ksession_pods_on(s, n, &m);
        assert_int_equal(m, count[n]);
        for (uint32_t i = 0; i < m; i++) {
            assert_int_equal(berth_ksession_node_of(s, on[i]), n);
            for (uint32_t j = 0; j < i; j++)
                assert_int_not_equal(on[j], on[i]);
        }
    }
    assert_null(berth_ksession_pods_on(s, nn, &m));
    assert_int_equal(m, 0);
    assert_null(berth_ksession_pods_on(s, BERTH_KUBE_NONE, &m));
    assert_int_equal(m, 0);
}

static void one_world(uint64_t seed, uint32_t min_nodes, uint32_t max_nodes, int32_t pct)
{
    world w;
    gen_world(&w, seed, min_nodes, max_nodes, pct);
    const berth_kcluster *k = &w.k;
    berth_arena a;
    berth_arena_init(&a, 0);
    berth_ksession *s = NULL;
    berth_error e = {0};
    assert_int_equal(berth_ksession_open(&s, k, w.pod_node, NSPARE, w.profile, &e), 0);
    for (uint32_t p = 0; p < k->npods; p++)
        assert_int_equal(berth_ksession_node_of(s, p), w.pod_node[p]);
    uint8_t xcl[MAXN] = {0};
    uint32_t cur[MAXP];
    memcpy(cur, w.pod_node, sizeof cur);
    answer av, as, as2;
    question q1, q2;
    random_question(&w, &q1);
    /* spares joined to the second question only, so the first can be
     * nested under it without a slot in use twice */
    q1.nspare = 0;
    random_question(&w, &q2);
    uint64_t m0 = berth_ksession_mark(s);
    /* question 1 */
    ask_view(&w, cur, xcl, &q1, &av, &a);
    ask_session(&w, s, &q1, &as, &a);
    compare("q1", seed, &av, &as);
    /* question 2 on top of it (spares possibly) */
    uint32_t cur1[MAXP];
    uint8_t xcl1[MAXN];
    memcpy(cur1, cur, sizeof cur1);
    memcpy(xcl1, xcl, sizeof xcl1);
    apply(&w, cur1, xcl1, &q1, &as);
    uint64_t m1 = berth_ksession_mark(s);
    ask_view(&w, cur1, xcl1, &q2, &av, &a);
    ask_session(&w, s, &q2, &as2, &a);
    check_pods_on(s, k);
    /* a view binds q1's placements as existing pods, which the usage-aware
     * profile takes as already in the nodes' observed usage; the session
     * counts a placed pod's demand (as berth_kube_schedule does for every
     * pod it places), so only the other worlds compare here */
    if (!w.profile)
        compare("q2 after q1", seed, &av, &as2);
    /* rollback of q2 then the same question again */
    assert_int_equal(berth_ksession_rollback(s, m1), 0);
    for (uint32_t p = 0; p < k->npods; p++)
        assert_int_equal(berth_ksession_node_of(s, p), cur1[p]);
    check_pods_on(s, k);
    ask_session(&w, s, &q2, &as, &a);
    compare("q2 repeated", seed, &as2, &as);
    /* back to the start: q2 alone, against a fresh session and the view */
    assert_int_equal(berth_ksession_rollback(s, m0), 0);
    for (uint32_t p = 0; p < k->npods; p++)
        assert_int_equal(berth_ksession_node_of(s, p), w.pod_node[p]);
    check_pods_on(s, k);
    ask_session(&w, s, &q2, &as, &a);
    berth_ksession *fresh = NULL;
    assert_int_equal(berth_ksession_open(&fresh, k, w.pod_node, NSPARE, w.profile, &e), 0);
    ask_session(&w, fresh, &q2, &as2, &a);
    compare("q2 after rollback vs fresh", seed, &as2, &as);
    ask_view(&w, cur, xcl, &q2, &av, &a);
    compare("q2 after rollback vs view", seed, &av, &as);
    /* q1 again without reasons: the same placements */
    assert_int_equal(berth_ksession_rollback(s, m0), 0);
    ask_view(&w, cur, xcl, &q1, &av, &a);
    g_no_why = 1;
    ask_session(&w, s, &q1, &as, &a);
    compare("q1 without reasons", seed, &av, &as);
    g_no_why = 0;
    berth_ksession_close(fresh);
    berth_ksession_close(s);
    berth_arena_free(&a);
    free_world(&w);
}

static void test_oracle_random(void **state)
{
    (void)state;
    g_fail = 0;
    for (uint64_t seed = 1; seed <= 300; seed++)
        one_world(seed, 4, 64, 0);
    assert_int_equal(g_fail, 0);
}

/* One long-lived session: many questions, each rolled back, each compared
 * with the view on the starting state (no drift in counters, caches or
 * logs over time). */
static void test_long_session(void **state)
{
    (void)state;
    g_fail = 0;
    for (uint64_t seed = 501; seed <= 504; seed++) {
        world w;
        gen_world(&w, seed, 20, 48, 0);
        berth_arena a;
        berth_arena_init(&a, 0);
        berth_ksession *s = NULL;
        berth_error e = {0};
        assert_int_equal(berth_ksession_open(&s, &w.k, w.pod_node, NSPARE, w.profile, &e), 0);
        uint8_t xcl[MAXN] = {0};
        for (int i = 0; i < 150; i++) {
            question q;
            answer av, as;
            random_question(&w, &q);
            uint64_t m = berth_ksession_mark(s);
            ask_view(&w, w.pod_node, xcl, &q, &av, &a);
            ask_session(&w, s, &q, &as, &a);
            compare("long session", seed, &av, &as);
            assert_int_equal(berth_ksession_rollback(s, m), 0);
        }
        for (uint32_t p = 0; p < w.k.npods; p++)
            assert_int_equal(berth_ksession_node_of(s, p), w.pod_node[p]);
        berth_ksession_close(s);
        berth_arena_free(&a);
        free_world(&w);
    }
    assert_int_equal(g_fail, 0);
}

/* percentageOfNodesToScore (100+ nodes): the round robin over candidates
 * starts again at each place, as a fresh view's does */
static void test_oracle_percentage(void **state)
{
    (void)state;
    g_fail = 0;
    for (uint64_t seed = 1001; seed <= 1030; seed++)
        one_world(seed, 250, MAXN, 20 + (int32_t)(seed % 5) * 15);
    assert_int_equal(g_fail, 0);
}

/* berth_ksession_set_threads: on clusters of 1,024 nodes or more (the
 * pool's threshold) a session with 4 threads answers every question as a
 * session without them does, why text included; questions remove nodes
 * that hold pods, rolled back after each. */
static void test_threads_same_answers(void **state)
{
    (void)state;
    g_fail = 0;
    for (uint64_t seed = 2001; seed <= 2003; seed++) {
        world w;
        gen_world(&w, seed, 1030, 1100, 0);
        assert_true(w.k.nnodes >= 1024);
        berth_arena a;
        berth_arena_init(&a, 0);
        berth_ksession *s1 = NULL, *s4 = NULL;
        berth_error e = {0};
        assert_int_equal(berth_ksession_open(&s1, &w.k, w.pod_node, NSPARE, w.profile, &e), 0);
        assert_int_equal(berth_ksession_open(&s4, &w.k, w.pod_node, NSPARE, w.profile, &e), 0);
        assert_int_equal(berth_ksession_set_threads(s1, 1), 0);
        assert_int_equal(berth_ksession_set_threads(s4, 4), 0);
        assert_int_equal(berth_ksession_set_threads(s4, 2), 0); /* keeps its pool */
        uint32_t moved = 0;
        for (int i = 0; i < 40; i++) {
            question q;
            random_question(&w, &q);
            for (uint32_t j = 0; j < q.nrm; j++) { /* a node running a pod */
                uint32_t n = w.pod_node[rnd(w.k.npods)];
                int dup = n == BERTH_KUBE_NONE;
                for (uint32_t x = 0; x < j && !dup; x++)
                    dup = q.rm[x] == n;
                if (!dup)
                    q.rm[j] = n;
            }
            answer x1, x4;
            uint64_t m1 = berth_ksession_mark(s1), m4 = berth_ksession_mark(s4);
            ask_session(&w, s1, &q, &x1, &a);
            ask_session(&w, s4, &q, &x4, &a);
            compare("4 threads", seed, &x1, &x4);
            moved += x1.npending;
            assert_int_equal(berth_ksession_rollback(s1, m1), 0);
            assert_int_equal(berth_ksession_rollback(s4, m4), 0);
        }
        assert_true(moved >= 40); /* the questions moved pods */
        berth_ksession_close(s1);
        berth_ksession_close(s4);
        berth_arena_free(&a);
        free_world(&w);
    }
    assert_int_equal(g_fail, 0);
}

/* ---- targeted tests ---- */

static void small_cluster(berth_kcluster *k, uint32_t nnodes, uint32_t npods)
{
    berth_kube_init(k);
    berth_arena *a = &k->arena;
    k->nodes = calloc(nnodes, sizeof *k->nodes);
    k->nnodes = k->capnodes = nnodes;
    for (uint32_t n = 0; n < nnodes; n++) {
        berth_knode *nd = &k->nodes[n];
        nd->name = fmt(a, "node-%u", n);
        berth_label *l = aalloc(a, 2 * sizeof *l);
        l[0] = (berth_label){HOSTNAME, nd->name};
        l[1] = (berth_label){ZONE, ZONES[n % 3]};
        nd->labels = (berth_labels){l, 2};
        berth_labels_sort(&nd->labels);
        nd->alloc[BERTH_KRES_CPU] = 8000;
        nd->alloc[BERTH_KRES_MEMORY] = 16 * GI;
        nd->alloc_pods = 110;
    }
    k->pods = calloc(npods, sizeof *k->pods);
    k->npods = k->cappods = npods;
    for (uint32_t i = 0; i < npods; i++) {
        berth_kpod *p = &k->pods[i];
        p->ns = "default";
        p->name = fmt(a, "p-%u", i);
        p->order = i;
        p->ncontainers = 1;
        p->containers = aalloc(a, sizeof *p->containers);
        p->containers[0].req[BERTH_KRES_CPU] = 500;
        p->containers[0].req[BERTH_KRES_MEMORY] = GI;
        p->containers[0].has_req = 3;
    }
}

static void spread_pod(berth_kcluster *k, berth_kpod *p)
{
    berth_arena *a = &k->arena;
    berth_label *l = aalloc(a, sizeof *l);
    l[0] = (berth_label){"app", "web"};
    p->labels = (berth_labels){l, 1};
    p->spread = aalloc(a, sizeof *p->spread);
    p->nspread = 1;
    p->spread[0] = (berth_kspread){.max_skew = 1, .topology_key = ZONE, .do_not_schedule = 1,
                                   .selector = sel_app(a, "web"), .min_domains = 1,
                                   .honor_node_affinity = 1};
}

/* Three nodes in three zones, five spread pods (app web, maxSkew 1 over
 * zones), pods 0-2 bound one per node, 3 and 4 pending; a session over it. */
static void three_zones(berth_kcluster *k, berth_ksession **s)
{
    small_cluster(k, 3, 5);
    for (uint32_t i = 0; i < 5; i++)
        spread_pod(k, &k->pods[i]);
    for (uint32_t i = 0; i < 5; i++)
        berth_kube_pod_requests(k, &k->pods[i]);
    uint32_t pn[5] = {0, 1, 2, BERTH_KUBE_NONE, BERTH_KUBE_NONE};
    berth_error e = {0};
    assert_int_equal(berth_ksession_open(s, k, pn, 0, NULL, &e), 0);
}

/* commit keeps the changes so far for good: a rollback to a mark taken
 * before fails and changes nothing, a mark taken after still undoes what
 * follows it exactly, and marks keep growing across commits. */
static void test_commit(void **state)
{
    (void)state;
    berth_kcluster k;
    berth_ksession *s;
    berth_error e = {0};
    three_zones(&k, &s);
    uint64_t m0 = berth_ksession_mark(s);
    assert_int_equal(berth_ksession_evict(s, 1), 0);
    berth_ksession_exclude(s, 2, 1);
    uint64_t m1 = berth_ksession_mark(s);
    assert_true(m1 > m0);
    berth_ksession_commit(s);
    assert_int_equal(berth_ksession_mark(s), m1);
    assert_int_equal(berth_ksession_rollback(s, m0), BERTH_EINVAL);
    assert_int_equal(berth_ksession_node_of(s, 1), BERTH_KUBE_NONE);
    assert_int_equal(berth_ksession_rollback(s, m1), 0); /* nothing after it */
    /* node-2 stays excluded: pod 1 goes to node-0 or node-1, and the
     * rollback to m1 takes it off again */
    uint32_t pods[1] = {1}, placed[1];
    assert_int_equal(berth_ksession_place(s, pods, 1, placed, NULL, NULL, &e), 0);
    assert_true(placed[0] == 0 || placed[0] == 1);
    assert_int_equal(berth_ksession_node_of(s, 1), placed[0]);
    assert_int_equal(berth_ksession_rollback(s, m1 + 5), BERTH_EINVAL);
    assert_int_equal(berth_ksession_rollback(s, m1), 0);
    assert_int_equal(berth_ksession_node_of(s, 1), BERTH_KUBE_NONE);
    assert_int_equal(berth_ksession_node_of(s, 2), 2);
    /* a second commit with nothing new, then more: marks go on from m1 */
    berth_ksession_commit(s);
    assert_int_equal(berth_ksession_mark(s), m1);
    assert_int_equal(berth_ksession_evict(s, 0), 0);
    assert_int_equal(berth_ksession_mark(s), m1 + 1);
    assert_int_equal(berth_ksession_rollback(s, m1), 0);
    assert_int_equal(berth_ksession_node_of(s, 0), 0);
    berth_ksession_close(s);
    berth_kube_free(&k);
}

/* Three zones, one spread pod in each; evicting the one in zone z-b and
 * placing it again must put it back in z-b (every other zone would make
 * the skew 2): the counters forgot it on evict. A new spread pod after a
 * rollback then sees skew 0 everywhere again and goes to the emptiest. */
static void test_evict_place_restores_spread(void **state)
{
    (void)state;
    berth_kcluster k;
    berth_ksession *s;
    berth_error e = {0};
    three_zones(&k, &s);
    uint64_t m = berth_ksession_mark(s);
    assert_int_equal(berth_ksession_evict(s, 1), 0);
    /* a second spread pod must now go to node-1 (the only zone at 0) */
    uint32_t pods[1] = {3}, placed[1];
    assert_int_equal(berth_ksession_place(s, pods, 1, placed, NULL, NULL, &e), 0);
    assert_int_equal(placed[0], 1);
    /* now every zone has 1: pod 1 can go anywhere; rollback instead */
    assert_int_equal(berth_ksession_rollback(s, m), 0);
    assert_int_equal(berth_ksession_node_of(s, 1), 1);
    assert_int_equal(berth_ksession_node_of(s, 3), BERTH_KUBE_NONE);
    /* zones 1/1/1 again: pods 3 and 4 go to two different zones */
    uint32_t two[2] = {3, 4}, p2[2];
    assert_int_equal(berth_ksession_place(s, two, 2, p2, NULL, NULL, &e), 0);
    assert_int_not_equal(p2[0], p2[1]);
    /* evict both again: placing pod 4 alone must avoid neither zone */
    assert_int_equal(berth_ksession_evict(s, 3), 0);
    assert_int_equal(berth_ksession_evict(s, 4), 0);
    const char *why[1];
    berth_arena a;
    berth_arena_init(&a, 0);
    /* exclude every node: nothing fits, kube's summary says 0/0 */
    for (uint32_t n = 0; n < 3; n++)
        berth_ksession_exclude(s, n, 1);
    assert_int_equal(berth_ksession_place(s, pods, 1, placed, why, &a, &e), BERTH_ENOFIT);
    assert_int_equal(placed[0], BERTH_KUBE_NONE);
    assert_non_null(why[0]);
    assert_non_null(strstr(why[0], "0/0 nodes are available"));
    berth_arena_free(&a);
    berth_ksession_close(s);
    berth_kube_free(&k);
}

/* Plain pods take the fast path: after a first placement built the pod
 * class, excluding the node it picked must make the next identical pod go
 * elsewhere, and including it again must make it a candidate again. */
static void test_exclude_fast_path(void **state)
{
    (void)state;
    berth_kcluster k;
    small_cluster(&k, 4, 8);
    for (uint32_t i = 0; i < 8; i++)
        berth_kube_pod_requests(&k, &k.pods[i]);
    /* node-3 is the emptiest: bind 2 pods on each of the others */
    uint32_t pn[8] = {0, 0, 1, 1, 2, 2, BERTH_KUBE_NONE, BERTH_KUBE_NONE};
    berth_ksession *s;
    berth_error e = {0};
    assert_int_equal(berth_ksession_open(&s, &k, pn, 0, NULL, &e), 0);
    uint64_t m = berth_ksession_mark(s);
    uint32_t pod6[1] = {6}, pod7[1] = {7}, placed[1];
    assert_int_equal(berth_ksession_place(s, pod6, 1, placed, NULL, NULL, &e), 0);
    assert_int_equal(placed[0], 3);
    assert_int_equal(berth_ksession_evict(s, 6), 0);
    berth_ksession_exclude(s, 3, 1);
    assert_int_equal(berth_ksession_place(s, pod7, 1, placed, NULL, NULL, &e), 0);
    assert_int_not_equal(placed[0], 3);
    uint32_t first = placed[0];
    /* that node now has 3 pods; excluding the other two leaves only it */
    for (uint32_t n = 0; n < 3; n++)
        if (n != first)
            berth_ksession_exclude(s, n, 1);
    assert_int_equal(berth_ksession_place(s, pod6, 1, placed, NULL, NULL, &e), 0);
    assert_int_equal(placed[0], first);
    assert_int_equal(berth_ksession_evict(s, 6), 0);
    berth_ksession_exclude(s, 3, 0);
    assert_int_equal(berth_ksession_place(s, pod6, 1, placed, NULL, NULL, &e), 0);
    assert_int_equal(placed[0], 3);
    /* errors: a bound pod cannot be placed or bound, an unbound one not
     * evicted */
    assert_int_equal(berth_ksession_place(s, pod6, 1, placed, NULL, NULL, &e), BERTH_EINVAL);
    assert_int_equal(berth_ksession_bind(s, 6, 0), BERTH_EINVAL);
    assert_int_equal(berth_ksession_rollback(s, m), 0);
    assert_int_equal(berth_ksession_evict(s, 6), BERTH_EINVAL);
    /* after the rollback, pod 6 goes to node-3 again */
    assert_int_equal(berth_ksession_place(s, pod6, 1, placed, NULL, NULL, &e), 0);
    assert_int_equal(placed[0], 3);
    berth_ksession_close(s);
    berth_kube_free(&k);
}

/* bind and spare are undone by rollback; a spare takes pods while active */
static void test_bind_spare_undo(void **state)
{
    (void)state;
    berth_kcluster k;
    small_cluster(&k, 2, 4);
    for (uint32_t i = 0; i < 4; i++)
        berth_kube_pod_requests(&k, &k.pods[i]);
    uint32_t pn[4] = {0, 1, BERTH_KUBE_NONE, BERTH_KUBE_NONE};
    berth_ksession *s;
    berth_error e = {0};
    assert_int_equal(berth_ksession_open(&s, &k, pn, 1, NULL, &e), 0);
    uint64_t m = berth_ksession_mark(s);
    assert_int_equal(berth_ksession_bind(s, 2, 1), 0);
    assert_int_equal(berth_ksession_node_of(s, 2), 1);
    berth_knode big = k.nodes[0];
    big.name = "node-9";
    big.alloc[BERTH_KRES_CPU] = 64000;
    big.alloc[BERTH_KRES_MEMORY] = 256 * GI;
    uint32_t node;
    assert_int_equal(berth_ksession_spare(s, 0, &big, &node), 0);
    assert_int_equal(node, 2);
    /* a second activation of the slot, or a name in use, is refused */
    assert_int_equal(berth_ksession_spare(s, 0, &big, &node), BERTH_EINVAL);
    uint32_t pod3[1] = {3}, placed[1];
    assert_int_equal(berth_ksession_place(s, pod3, 1, placed, NULL, NULL, &e), 0);
    assert_int_equal(placed[0], 2); /* the big empty node scores best */
    assert_int_equal(berth_ksession_rollback(s, m), 0);
    assert_int_equal(berth_ksession_node_of(s, 2), BERTH_KUBE_NONE);
    assert_int_equal(berth_ksession_node_of(s, 3), BERTH_KUBE_NONE);
    assert_int_equal(berth_ksession_bind(s, 3, 2), BERTH_EINVAL); /* slot empty again */
    assert_int_equal(berth_ksession_place(s, pod3, 1, placed, NULL, NULL, &e), 0);
    assert_true(placed[0] < 2);
    /* the slot takes another node after the rollback */
    big.name = "node-8";
    assert_int_equal(berth_ksession_spare(s, 0, &big, &node), 0);
    assert_int_equal(node, 2);
    berth_ksession_close(s);
    berth_kube_free(&k);
}

/* The caller's nodes out of name order: the session still sees them in
 * name order (its first node on ties is the lowest name) and answers in
 * the caller's indices; in name order already, it keeps the caller's
 * order (no sort). Three equal empty nodes named node-2, node-0, node-1:
 * a pod goes to node-0, the caller's index 1, then to node-1 (index 2:
 * the emptiest, lowest name), and node_of and placed speak of the
 * caller's indices; berth_ksession_placed says whether a pod is on one. */
static void test_unsorted_caller_nodes(void **state)
{
    (void)state;
    for (int sorted = 0; sorted < 2; sorted++) {
        berth_kcluster k;
        small_cluster(&k, 3, 2);
        static const uint32_t order[3] = {2, 0, 1};
        for (uint32_t n = 0; n < 3; n++) {
            uint32_t id = sorted ? n : order[n];
            k.nodes[n].name = fmt(&k.arena, "node-%u", id);
            k.nodes[n].labels.items[0].value = k.nodes[n].name; /* sorted: hostname < zone */
            k.nodes[n].labels.items[1].value = ZONES[0];
        }
        for (uint32_t i = 0; i < 2; i++)
            berth_kube_pod_requests(&k, &k.pods[i]);
        uint32_t pn[2] = {BERTH_KUBE_NONE, BERTH_KUBE_NONE};
        berth_ksession *s;
        berth_error e = {0};
        assert_int_equal(berth_ksession_open(&s, &k, pn, 0, NULL, &e), 0);
        uint32_t pods[2] = {0, 1}, placed[2];
        assert_false(berth_ksession_placed(s, 0));
        assert_int_equal(berth_ksession_place(s, pods, 2, placed, NULL, NULL, &e), 0);
        assert_true(berth_ksession_placed(s, 0) && berth_ksession_placed(s, 1));
        assert_false(berth_ksession_placed(s, 2)); /* no such pod */
        assert_int_equal(placed[0], sorted ? 0 : 1);
        assert_int_equal(placed[1], sorted ? 1 : 2);
        assert_string_equal(k.nodes[placed[0]].name, "node-0");
        assert_string_equal(k.nodes[placed[1]].name, "node-1");
        assert_int_equal(berth_ksession_node_of(s, 0), placed[0]);
        berth_ksession_close(s);
        berth_kube_free(&k);
    }
}

/* A node's pod list is sized when the session opens (its bound pods and a
 * little room, kube_sched_size_lists) and moves to an allocation of its
 * own when more pods arrive: two pods bound on node-0, then eight more
 * placed there (node-1 excluded) and rolled back, twice; under
 * AddressSanitizer a list freed or grown in the wrong place fails. */
static void test_pod_lists_grow(void **state)
{
    (void)state;
    berth_kcluster k;
    small_cluster(&k, 2, 10);
    for (uint32_t i = 0; i < 10; i++)
        berth_kube_pod_requests(&k, &k.pods[i]);
    uint32_t pn[10];
    for (uint32_t i = 0; i < 10; i++)
        pn[i] = i < 2 ? 0 : BERTH_KUBE_NONE;
    berth_ksession *s;
    berth_error e = {0};
    assert_int_equal(berth_ksession_open(&s, &k, pn, 0, NULL, &e), 0);
    berth_ksession_exclude(s, 1, 1);
    uint32_t pods[8] = {2, 3, 4, 5, 6, 7, 8, 9}, placed[8];
    for (int round = 0; round < 2; round++) {
        uint64_t m = berth_ksession_mark(s);
        assert_int_equal(berth_ksession_place(s, pods, 8, placed, NULL, NULL, &e), 0);
        for (uint32_t i = 0; i < 8; i++)
            assert_int_equal(placed[i], 0);
        assert_int_equal(berth_ksession_evict(s, 0), 0); /* from the middle of a grown list */
        assert_false(berth_ksession_placed(s, 0));
        assert_int_equal(berth_ksession_rollback(s, m), 0);
        assert_int_equal(berth_ksession_node_of(s, 0), 0);
        assert_false(berth_ksession_placed(s, 9));
    }
    berth_ksession_close(s);
    berth_kube_free(&k);
}

/* ImageLocality counts only the nodes in the view: excluding a node that
 * has the pod's image lowers the image's spread, hence the score of every
 * other node having it, while the fast path's class only sees the
 * excluded node in its log. For a range of loads on the image node the
 * session must pick as the view does. */
static void test_exclude_image_spread(void **state)
{
    (void)state;
    int differ = 0;
    for (uint32_t load = 0; load < 24; load++) {
        berth_kcluster k;
        small_cluster(&k, 4, 26);
        berth_arena *a = &k.arena;
        for (uint32_t n = 0; n < 2; n++) {
            k.nodes[n].images = aalloc(a, sizeof *k.nodes[n].images);
            k.nodes[n].images[0] = (berth_kimage){"img/big:1", 900 * MI};
            k.nodes[n].nimages = 1;
        }
        uint32_t pn[26];
        for (uint32_t i = 0; i < 26; i++) {
            k.pods[i].containers[0].image = "img/big:1";
            k.pods[i].containers[0].req[BERTH_KRES_CPU] = 250;
            k.pods[i].containers[0].req[BERTH_KRES_MEMORY] = 256 * MI;
            berth_kube_pod_requests(&k, &k.pods[i]);
            pn[i] = i < load ? 0 : BERTH_KUBE_NONE;
        }
        berth_ksession *s;
        berth_error e = {0};
        assert_int_equal(berth_ksession_open(&s, &k, pn, 0, NULL, &e), 0);
        uint32_t x[1] = {24}, y[1] = {25}, placed[1];
        /* the class is built, then its pod leaves */
        assert_int_equal(berth_ksession_place(s, x, 1, placed, NULL, NULL, &e), 0);
        assert_int_equal(berth_ksession_evict(s, 24), 0);
        berth_ksession_exclude(s, 1, 1);
        assert_int_equal(berth_ksession_place(s, y, 1, placed, NULL, NULL, &e), 0);
        uint8_t xcl[4] = {0, 1, 0, 0};
        berth_kview vw = {0};
        vw.excluded = xcl;
        vw.pod_node = pn;
        vw.pending = y;
        vw.npending = 1;
        const char *name[1];
        assert_int_equal(berth_kube_schedule_view(&k, &vw, name, NULL, NULL, &e), 0);
        assert_non_null(name[0]);
        if (strcmp(name[0], k.nodes[placed[0]].name)) {
            print_error("load %u: view %s, session %s\n", load, name[0],
                        k.nodes[placed[0]].name);
            differ = 1;
        }
        berth_ksession_close(s);
        berth_kube_free(&k);
    }
    assert_int_equal(differ, 0);
}

/* The caller's pod table in read-only pages while a session uses it (a
 * write faults), back in k->pods' own memory afterwards. */
typedef struct ro_pods {
    berth_kpod *own, *ro;
    size_t bytes;
} ro_pods;

static void pods_read_only(berth_kcluster *k, ro_pods *r)
{
    r->own = k->pods;
    r->bytes = (size_t)k->npods * sizeof *k->pods;
    r->ro = mmap(NULL, r->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(r->ro != MAP_FAILED);
    memcpy(r->ro, r->own, r->bytes);
    assert_int_equal(mprotect(r->ro, r->bytes, PROT_READ), 0);
    k->pods = r->ro;
}

static void pods_writable(berth_kcluster *k, ro_pods *r)
{
    assert_memory_equal(r->ro, r->own, r->bytes);
    k->pods = r->own;
    assert_int_equal(munmap(r->ro, r->bytes), 0);
}

/* A session never writes the caller's pod table: random worlds whose pods
 * name their nodes (spec.nodeName) and some of which are terminating, the
 * table in read-only pages, sessions opened by spec.nodeName and by
 * pod_node, then evict / exclude / spare / place / bind / rollback; the
 * table is byte-identical afterwards. */
static void test_caller_pods_untouched(void **state)
{
    (void)state;
    for (uint64_t seed = 3001; seed <= 3040; seed++) {
        world w;
        gen_world(&w, seed, 4, 64, seed % 3 ? 0 : 50);
        berth_kcluster *k = &w.k;
        for (uint32_t p = 0; p < k->npods; p++) {
            k->pods[p].node_name = w.pod_node[p] == BERTH_KUBE_NONE
                                       ? NULL : k->nodes[w.pod_node[p]].name;
            k->pods[p].terminating = chance(10);
            k->pods[p].assumed = chance(10);
        }
        size_t bytes = (size_t)k->npods * sizeof *k->pods;
        berth_kpod *before = malloc(bytes);
        assert_non_null(before);
        memcpy(before, k->pods, bytes);
        ro_pods r;
        pods_read_only(k, &r);
        berth_arena a;
        berth_arena_init(&a, 0);
        berth_error e = {0};
        for (int by_name = 0; by_name < 2; by_name++) {
            berth_ksession *s = NULL;
            assert_int_equal(berth_ksession_open(&s, k, by_name ? NULL : w.pod_node, NSPARE,
                                                 w.profile, &e), 0);
            for (uint32_t p = 0; p < k->npods; p++)
                assert_int_equal(berth_ksession_node_of(s, p),
                                 before[p].terminating ? BERTH_KUBE_NONE : w.pod_node[p]);
            uint64_t m0 = berth_ksession_mark(s);
            question q;
            answer as;
            for (int i = 0; i < 3; i++) {
                random_question(&w, &q);
                if (i) /* a spare slot is taken once until rolled back */
                    q.nspare = 0;
                g_no_why = i == 1;
                ask_session(&w, s, &q, &as, &a);
            }
            g_no_why = 0;
            /* bind every pod left unbound (terminating ones included) */
            for (uint32_t p = 0; p < k->npods; p++)
                if (berth_ksession_node_of(s, p) == BERTH_KUBE_NONE)
                    assert_int_equal(berth_ksession_bind(s, p, rnd(k->nnodes)), 0);
            uint64_t m1 = berth_ksession_mark(s);
            random_question(&w, &q);
            q.nspare = 0;
            ask_session(&w, s, &q, &as, &a);
            assert_int_equal(berth_ksession_rollback(s, m1), 0);
            assert_int_equal(berth_ksession_rollback(s, m0), 0);
            random_question(&w, &q);
            ask_session(&w, s, &q, &as, &a); /* left in place at close */
            berth_ksession_close(s);
        }
        pods_writable(k, &r);
        assert_memory_equal(before, k->pods, bytes);
        free(before);
        berth_arena_free(&a);
        free_world(&w);
    }
}

/* The pending view: once a session binds or evicts a pod, the caller's
 * spec.nodeName and deletion mark of it mean nothing. Pods 3 and 4 are
 * terminating spread pods (app=web over zones) bound by the session in
 * zones z-b and z-c: they count, so the spread pod 5 can only go to z-a's
 * node-0, the busiest node (were they not counted, the emptier node-1 or
 * node-2 would win). Pods 0 (plain: the fast path) and 1 (a spread pod
 * of app=db: the full pipeline) name node-0 in the caller's table and are
 * bound there: evicted, node-0 excluded, they go elsewhere (the NodeName
 * filter would keep them on node-0). */
static void test_pending_view_ignores_caller_fields(void **state)
{
    (void)state;
    berth_kcluster k;
    small_cluster(&k, 3, 9);
    spread_pod(&k, &k.pods[1]);
    berth_label *db = aalloc(&k.arena, sizeof *db);
    db[0] = (berth_label){"app", "db"};
    k.pods[1].labels = (berth_labels){db, 1};
    k.pods[1].spread[0].selector = sel_app(&k.arena, "db");
    for (uint32_t i = 3; i < 6; i++)
        spread_pod(&k, &k.pods[i]);
    k.pods[3].terminating = k.pods[4].terminating = 1;
    k.pods[0].node_name = k.pods[1].node_name = "node-0";
    k.pods[3].node_name = k.pods[4].node_name = "node-0";
    for (uint32_t i = 6; i < 9; i++) { /* fillers on node-0 */
        k.pods[i].containers[0].req[BERTH_KRES_CPU] = 2000;
        k.pods[i].containers[0].req[BERTH_KRES_MEMORY] = 4 * GI;
    }
    for (uint32_t i = 0; i < 9; i++)
        berth_kube_pod_requests(&k, &k.pods[i]);
    uint32_t pn[9] = {0, 0, BERTH_KUBE_NONE, BERTH_KUBE_NONE, BERTH_KUBE_NONE,
                      BERTH_KUBE_NONE, 0, 0, 0};
    ro_pods r;
    pods_read_only(&k, &r);
    berth_ksession *s;
    berth_error e = {0};
    assert_int_equal(berth_ksession_open(&s, &k, pn, 0, NULL, &e), 0);
    assert_int_equal(berth_ksession_bind(s, 3, 1), 0);
    assert_int_equal(berth_ksession_bind(s, 4, 2), 0);
    uint32_t pod5[1] = {5}, two[2] = {0, 1}, placed[2];
    assert_int_equal(berth_ksession_place(s, pod5, 1, placed, NULL, NULL, &e), 0);
    assert_int_equal(placed[0], 0);
    assert_int_equal(berth_ksession_evict(s, 0), 0);
    assert_int_equal(berth_ksession_evict(s, 1), 0);
    berth_ksession_exclude(s, 0, 1);
    assert_int_equal(berth_ksession_place(s, two, 2, placed, NULL, NULL, &e), 0);
    assert_true(placed[0] == 1 || placed[0] == 2);
    assert_true(placed[1] == 1 || placed[1] == 2);
    berth_ksession_close(s);
    pods_writable(&k, &r);
    berth_kube_free(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_evict_place_restores_spread),
        cmocka_unit_test(test_commit),
        cmocka_unit_test(test_exclude_fast_path),
        cmocka_unit_test(test_bind_spare_undo),
        cmocka_unit_test(test_unsorted_caller_nodes),
        cmocka_unit_test(test_pod_lists_grow),
        cmocka_unit_test(test_exclude_image_spread),
        cmocka_unit_test(test_caller_pods_untouched),
        cmocka_unit_test(test_pending_view_ignores_caller_fields),
        cmocka_unit_test(test_oracle_random),
        cmocka_unit_test(test_oracle_percentage),
        cmocka_unit_test(test_long_session),
        cmocka_unit_test(test_threads_same_answers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
