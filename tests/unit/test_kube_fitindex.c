/* test_kube_fitindex.c - the per-pod-class fit index (kube/fitindex.c)
 * against the what-if session it indexes, question by question.
 *
 * Random small clusters (nodes of a few sizes, some tainted, labelled by
 * team, unschedulable, some holding an image; pods of a few request sizes, some with a team
 * nodeSelector or a toleration, some tolerating a taint no node has (so the larger clusters
 * have more static entries than a change-log entry's relevance mask covers, and the
 * index's rank answers for the rest), and a few the index must leave to the
 * session: host ports, images, anti-affinity, matchFields pins; in a fifth
 * of the clusters PreferNoSchedule taints, which make TaintToleration's
 * score vary by node, also left to the session) start with
 * every pod bound at random (over-committed nodes included). Two sessions
 * over the same cluster then run scale-down's questions: a node's pods are
 * evicted, the node is excluded, its pods are placed again one at a time,
 * and the question is kept or rolled back. Session A asks the index first
 * (the session when it declines), session B asks the session alone; every
 * decision must be the same node, and every unplaced pod the same
 * "0/N nodes are available" text. The index must have answered most pods
 * itself (both placements and fits-nowhere), so the comparison is not
 * vacuous. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "berth/kube.h"
#include "berth/random.h"
#include "kube/fitindex.h"

#define MI (1024LL * 1024)
#define GI (1024LL * MI)
#define HOSTNAME "kubernetes.io/hostname"
#define MAXP 400

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

static const char *TEAMS[] = {"t1", "t2", "t3"};
static const berth_taint TAINTS[] = {
    {"dedicated", "t1", BERTH_EFFECT_NOSCHEDULE},
    {"dedicated", "t2", BERTH_EFFECT_NOSCHEDULE},
    {"spot", "true", BERTH_EFFECT_PREFERNOSCHEDULE},
    {"maint", NULL, BERTH_EFFECT_NOEXECUTE},
};

/* prefer: PreferNoSchedule taints may occur (then TaintToleration's score
 * varies by node and the index leaves those classes to the session) */
static void gen_node(berth_arena *a, berth_knode *nd, const char *name, int prefer)
{
    memset(nd, 0, sizeof *nd);
    nd->name = name;
    berth_label *l = aalloc(a, 3 * sizeof *l);
    uint32_t nl = 0;
    l[nl++] = (berth_label){HOSTNAME, name};
    if (chance(60))
        l[nl++] = (berth_label){"team", TEAMS[rnd(3)]};
    nd->labels = (berth_labels){l, nl};
    berth_labels_sort(&nd->labels);
    nd->alloc[BERTH_KRES_CPU] = 1000 * (2 + 2 * (int64_t)rnd(3));
    nd->alloc[BERTH_KRES_MEMORY] = (4 + 4 * (int64_t)rnd(3)) * GI;
    nd->alloc[BERTH_KRES_EPHEMERAL] = 100 * GI;
    nd->alloc_pods = 6 + rnd(10);
    if (chance(30)) {
        /* one taint, or two: then nodes of different hard-taint sets
         * (kube/taintsets.h) can give a pod the same reason text, which
         * the FitError counts must merge */
        nd->taints = aalloc(a, 2 * sizeof *nd->taints);
        nd->ntaints = chance(40) ? 2 : 1;
        for (uint32_t i = 0; i < nd->ntaints; i++) {
            uint32_t t = rnd(4);
            nd->taints[i] = TAINTS[t == 2 && !prefer ? 0 : t];
        }
    }
    nd->unschedulable = chance(4);
    if (chance(30)) {
        /* the image some pods name: ImageLocality then scores those pods
         * by node, which the index must leave to the session */
        nd->images = aalloc(a, sizeof *nd->images);
        nd->images[0] = (berth_kimage){"img/app:1", 700 * MI};
        nd->nimages = 1;
    }
}

static void gen_pod(berth_kcluster *k, berth_kpod *p, uint32_t i)
{
    berth_arena *a = &k->arena;
    p->ns = "default";
    p->name = fmt(a, "pod-%03u", i);
    p->order = i;
    p->created = 1000;
    p->has_created = 1;
    berth_label *l = aalloc(a, sizeof *l);
    l[0] = (berth_label){"app", chance(50) ? "web" : "db"};
    p->labels = (berth_labels){l, 1};
    p->ncontainers = 1;
    p->containers = aalloc(a, sizeof *p->containers);
    p->containers[0].name = "c";
    /* a few sizes: classes repeat, and the big ones often fit nowhere */
    static const int64_t cpu[] = {250, 500, 1000, 3000};
    p->containers[0].req[BERTH_KRES_CPU] = cpu[rnd(4)];
    p->containers[0].req[BERTH_KRES_MEMORY] = (int64_t)(1 + rnd(3)) * 512 * MI;
    p->containers[0].has_req = (1u << BERTH_KRES_CPU) | (1u << BERTH_KRES_MEMORY);
    if (chance(30)) {
        berth_label *s = aalloc(a, sizeof *s);
        s[0] = (berth_label){"team", TEAMS[rnd(3)]};
        p->node_selector = (berth_labels){s, 1};
    }
    p->tols = aalloc(a, 2 * sizeof *p->tols);
    if (chance(30)) {
        const berth_taint *t = &TAINTS[rnd(4)];
        p->tols[p->ntols++] = (berth_toleration){t->key, t->value,
                                                 t->value ? BERTH_TOL_EQUAL : BERTH_TOL_EXISTS,
                                                 BERTH_EFFECT_ALL, -1};
    }
    if (chance(40)) {
        /* a toleration of a taint no node has: the same verdicts, another
         * static entry, so the larger clusters have more of them than a log
         * entry's relevance mask covers (the index's rank answers the rest) */
        p->tols[p->ntols++] = (berth_toleration){fmt(a, "unused-%u", rnd(64)), NULL,
                                                 BERTH_TOL_EXISTS, BERTH_EFFECT_ALL, -1};
    }
    uint32_t odd = rnd(100);
    if (odd < 3) {
        p->ports = aalloc(a, sizeof *p->ports);
        p->ports[0] = (berth_kport){8080, BERTH_PROTO_TCP, "0.0.0.0"};
        p->nports = 1;
    } else if (odd < 6) {
        p->containers[0].image = "img/app:1";
    } else if (odd < 9) {
        berth_kaffinity_term *t = aalloc(a, sizeof *t);
        berth_requirement *r = aalloc(a, sizeof *r);
        const char **v = aalloc(a, sizeof *v);
        /* their own app, so that only they meet an existing pod's term */
        l[0].value = "cache";
        v[0] = "cache";
        *r = (berth_requirement){"app", BERTH_SEL_IN, v, 1};
        t->selector = (berth_selector){r, 1, 0};
        t->topology_key = HOSTNAME;
        p->anti_req = t;
        p->nanti_req = 1;
    } else if (odd < 11 && k->nnodes) {
        p->has_req_affinity = 1;
        p->req_terms = aalloc(a, sizeof *p->req_terms);
        p->nreq_terms = 1;
        berth_requirement *f = aalloc(a, sizeof *f);
        const char **v = aalloc(a, sizeof *v);
        v[0] = k->nodes[rnd(k->nnodes)].name;
        *f = (berth_requirement){"metadata.name", BERTH_SEL_IN, v, 1};
        p->req_terms[0].fields = f;
        p->req_terms[0].nfields = 1;
    }
    berth_labels_sort(&p->labels);
    berth_kube_pod_requests(k, p);
}

typedef struct stats {
    uint32_t placed, none, asked, questions;
} stats;

/* tiny: 3-5 nodes, 12-31 pods and 300 questions, so that a question
 * changes more nodes than there are (the change log keeps what a retouch
 * reads, not only the last N entries) and the log turns over many times */
static void one_world(uint64_t seed, stats *st, int tiny)
{
    berth_rng_seed(&G, seed);
    berth_kcluster k;
    berth_kube_init(&k);
    berth_arena *a = &k.arena;
    uint32_t N = tiny ? 3 + rnd(3) : 3 + rnd(40);
    k.nodes = calloc(N, sizeof *k.nodes);
    k.nnodes = k.capnodes = N;
    for (uint32_t n = 0; n < N; n++)
        gen_node(a, &k.nodes[n], fmt(a, "n-%03u", (n * 37) % 1000), seed % 5 == 0);
    k.namespaces = calloc(1, sizeof *k.namespaces);
    k.nnamespaces = k.capnamespaces = 1;
    k.namespaces[0].name = "default";
    uint32_t P = tiny ? 12 + rnd(20) : N + rnd(4 * N);
    if (P > MAXP)
        P = MAXP;
    k.pods = calloc(P, sizeof *k.pods);
    k.npods = k.cappods = P;
    uint32_t pod_node[MAXP];
    for (uint32_t i = 0; i < P; i++) {
        gen_pod(&k, &k.pods[i], i);
        pod_node[i] = rnd(N);
    }
    berth_error e = {0};
    berth_ksession *A = NULL, *B = NULL;
    assert_int_equal(berth_ksession_open(&A, &k, pod_node, 0, NULL, &e), 0);
    assert_int_equal(berth_ksession_open(&B, &k, pod_node, 0, NULL, &e), 0);
    kube_fitidx *x = NULL;
    assert_int_equal(kube_fitidx_open(&x, A), 0);
    assert_non_null(x);
    berth_arena wa;
    berth_arena_init(&wa, 0);
    uint8_t gone[64] = {0};
    uint32_t steps = tiny ? 300 : N + rnd(N);
    for (uint32_t q = 0; q < steps; q++) {
        uint32_t n = rnd(N);
        if (gone[n])
            continue;
        st->questions++;
        uint64_t ma = berth_ksession_mark(A), mb = berth_ksession_mark(B);
        uint64_t pos = kube_fitidx_pos(x);
        uint32_t pods[MAXP], np = 0;
        for (uint32_t p = 0; p < P; p++)
            if (berth_ksession_node_of(A, p) == n) {
                assert_int_equal(berth_ksession_node_of(B, p), n);
                pods[np++] = p; /* pod order: the queue order here */
                assert_int_equal(berth_ksession_evict(A, p), 0);
                assert_int_equal(berth_ksession_evict(B, p), 0);
            }
        berth_ksession_exclude(A, n, 1);
        berth_ksession_exclude(B, n, 1);
        assert_int_equal(kube_fitidx_touch(x, n), 0);
        int all = 1;
        for (uint32_t i = 0; i < np; i++) {
            uint32_t pa = BERTH_KUBE_NONE, pb = BERTH_KUBE_NONE;
            const char *wa_why = NULL, *wb_why = NULL;
            int answer;
            /* odd seeds: the index's own text (read below, before it is
             * asked again) */
            assert_int_equal(
                kube_fitidx_place(x, pods[i], &answer, &pa, &wa_why, seed & 1 ? NULL : &wa), 0);
            if (answer == KUBE_FIT_ASK) {
                st->asked++;
                int rc = berth_ksession_place(A, &pods[i], 1, &pa, &wa_why, &wa, &e);
                assert_true(rc == 0 || rc == BERTH_ENOFIT);
                if (pa != BERTH_KUBE_NONE)
                    assert_int_equal(kube_fitidx_touch(x, pa), 0);
            } else if (answer == KUBE_FIT_PLACED) {
                st->placed++;
            } else {
                st->none++;
            }
            int rc = berth_ksession_place(B, &pods[i], 1, &pb, &wb_why, &wa, &e);
            assert_true(rc == 0 || rc == BERTH_ENOFIT);
            if (pa != pb || (pa == BERTH_KUBE_NONE && strcmp(wa_why ? wa_why : "(null)",
                                                              wb_why ? wb_why : "(null)"))) {
                fprintf(stderr, "seed %llu question %u pod %s (answer %d): index %u \"%s\", "
                                "session %u \"%s\"\n",
                        (unsigned long long)seed, q, k.pods[pods[i]].name, answer, pa,
                        wa_why ? wa_why : "", pb, wb_why ? wb_why : "");
                fail();
            }
            all &= pa != BERTH_KUBE_NONE;
        }
        if (all && chance(60)) {
            gone[n] = 1; /* the node goes: its pods stay where they moved */
        } else {
            assert_int_equal(berth_ksession_rollback(A, ma), 0);
            assert_int_equal(berth_ksession_rollback(B, mb), 0);
            assert_int_equal(kube_fitidx_retouch(x, pos), 0);
        }
    }
    kube_fitidx_close(x);
    berth_ksession_close(A);
    berth_ksession_close(B);
    berth_arena_free(&wa);
    berth_kube_free(&k);
}

/* Worlds seed first..last (tiny: see one_world); what the index answered. */
static stats run_worlds(uint64_t first, uint64_t last, int tiny)
{
    stats st = {0};
    for (uint64_t seed = first; seed <= last; seed++)
        one_world(seed, &st, tiny);
    fprintf(stderr, "#%s %u questions: %u placed and %u fits-nowhere by the index, %u asked\n",
            tiny ? " tiny:" : "", st.questions, st.placed, st.none, st.asked);
    return st;
}

static void test_index_matches_session(void **state)
{
    (void)state;
    stats st = run_worlds(1, 300, 0);
    /* the index answered most pods itself, both ways */
    assert_true(st.placed > 1000);
    assert_true(st.none > 300);
    assert_true(st.asked > 50);
    assert_true(st.asked * 2 < st.placed + st.none);
}

static void test_tiny_long(void **state)
{
    (void)state;
    stats st = run_worlds(1001, 1040, 1);
    assert_true(st.questions > 5000);
    assert_true(st.placed > 1000);
    assert_true(st.none > 300);
}

/* A profile the index does not answer for (percentageOfNodesToScore
 * sampling): no index. */
static void test_declines_sampling(void **state)
{
    (void)state;
    berth_rng_seed(&G, 7);
    berth_kcluster k;
    berth_kube_init(&k);
    k.percentage_of_nodes_to_score = 50;
    k.nodes = calloc(2, sizeof *k.nodes);
    k.nnodes = k.capnodes = 2;
    gen_node(&k.arena, &k.nodes[0], "a", 0);
    gen_node(&k.arena, &k.nodes[1], "b", 0);
    berth_error e = {0};
    berth_ksession *A = NULL;
    assert_int_equal(berth_ksession_open(&A, &k, NULL, 0, NULL, &e), 0);
    kube_fitidx *x = (kube_fitidx *)&e;
    assert_int_equal(kube_fitidx_open(&x, A), 0);
    assert_null(x);
    berth_ksession_close(A);
    berth_kube_free(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_index_matches_session),
        cmocka_unit_test(test_tiny_long),
        cmocka_unit_test(test_declines_sampling),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
