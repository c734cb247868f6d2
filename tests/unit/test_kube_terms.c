/* tests/unit/test_kube_terms.c - PodTopologySpread and InterPodAffinity
 * (SPEC 2.5) on hand-computed cases: spread filter (maxSkew, minDomains,
 * missing key, selector matching the pod itself or not, matchLabelKeys),
 * spread score numbers (ln weights, hostname, normalisation), system
 * default spreading, inter-pod affinity filter branches (including the
 * "no pod matches anywhere but the pod matches its own terms" exception),
 * anti-affinity symmetry (existing pods' terms), score normalisation; then
 * the incremental counters against the plain reference (s->reference) on
 * random clusters, pod by pod with assumes in between, on a wide
 * cluster with ~900 signatures (the count arrays' slabs, huge ones
 * included), and across the sparse-to-dense promotion of a signature's
 * counts, counted in and out again.
 *
 * Clusters are built by hand: node and pod strings and arrays live in the
 * cluster's arena; nodes are named n0.. so the name sort keeps order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "berth/kube.h"
#include "kube/state.h"
#include "kube/terms.h"

#define ZONE "topology.kubernetes.io/zone"
#define HOST "kubernetes.io/hostname"

typedef struct fx {
    berth_kcluster k;
    berth_kprofile prof;
    kube_sched s;
    kube_req r;
    int inited, prepared;
    uint32_t cand[64];
    uint8_t v[64];
    int64_t out[64];
} fx;

static char *adup(fx *f, const char *s)
{
    char *c = berth_arena_strdup(&f->k.arena, s);
    assert_non_null(c);
    return c;
}

static void *aalloc(fx *f, size_t n)
{
    void *p = berth_arena_alloc(&f->k.arena, n ? n : 1);
    assert_non_null(p);
    return p;
}

/* "k=v,k2=v2" -> sorted labels */
static berth_labels mklabels(fx *f, const char *spec)
{
    berth_labels l = {0};
    if (!spec || !*spec)
        return l;
    char *buf = adup(f, spec);
    uint32_t n = 1;
    for (const char *c = spec; *c; c++)
        n += *c == ',';
    l.items = aalloc(f, n * sizeof *l.items);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        assert_non_null(eq);
        *eq = 0;
        l.items[l.n++] = (berth_label){tok, eq + 1};
    }
    berth_labels_sort(&l);
    return l;
}

/* "k=v,k2=v2" -> In requirements; "" -> empty selector; NULL -> nothing */
static berth_selector mksel(fx *f, const char *spec)
{
    berth_selector s = {0};
    if (!spec) {
        s.nothing = 1;
        return s;
    }
    berth_labels l = mklabels(f, spec);
    s.reqs = aalloc(f, (l.n + 1) * sizeof *s.reqs);
    for (uint32_t i = 0; i < l.n; i++) {
        const char **v = aalloc(f, sizeof *v);
        v[0] = l.items[i].value;
        s.reqs[i] = (berth_requirement){l.items[i].key, BERTH_SEL_IN, v, 1};
    }
    s.n = l.n;
    return s;
}

static const char *const names[] = {
    "n00", "n01", "n02", "n03", "n04", "n05", "n06", "n07", "n08", "n09", "n10", "n11",
    "n12", "n13", "n14", "n15", "n16", "n17", "n18", "n19", "n20", "n21", "n22", "n23",
    "n24", "n25", "n26", "n27", "n28", "n29", "n30", "n31"};

static fx *fx_new(uint32_t nnodes, uint32_t npods)
{
    fx *f = calloc(1, sizeof *f);
    assert_non_null(f);
    berth_kube_init(&f->k);
    f->k.nodes = calloc(nnodes ? nnodes : 1, sizeof *f->k.nodes);
    f->k.pods = calloc(npods ? npods : 1, sizeof *f->k.pods);
    assert_non_null(f->k.nodes);
    assert_non_null(f->k.pods);
    f->k.nnodes = f->k.capnodes = nnodes;
    f->k.npods = f->k.cappods = npods;
    for (uint32_t n = 0; n < nnodes; n++) {
        f->k.nodes[n].name = names[n];
        f->k.nodes[n].alloc_pods = 110;
    }
    for (uint32_t p = 0; p < npods; p++) {
        f->k.pods[p].ns = "default";
        f->k.pods[p].name = "p";
        f->k.pods[p].order = p;
    }
    berth_kube_default_profile(&f->k, &f->prof);
    for (uint32_t i = 0; i < 64; i++)
        f->cand[i] = i;
    return f;
}

static void node_labels(fx *f, uint32_t n, const char *spec)
{
    f->k.nodes[n].labels = mklabels(f, spec);
}

static void pod_labels(fx *f, uint32_t p, const char *spec)
{
    f->k.pods[p].labels = mklabels(f, spec);
}

static void bind(fx *f, uint32_t p, uint32_t n)
{
    f->k.pods[p].node_name = f->k.nodes[n].name;
}

static berth_kspread *add_spread(fx *f, uint32_t p, int32_t skew, const char *key, int dns,
                                 const char *sel)
{
    berth_kpod *pod = &f->k.pods[p];
    berth_kspread *old = pod->spread;
    pod->spread = aalloc(f, (pod->nspread + 1) * sizeof *pod->spread);
    if (pod->nspread)
        memcpy(pod->spread, old, pod->nspread * sizeof *old);
    berth_kspread *c = &pod->spread[pod->nspread++];
    memset(c, 0, sizeof *c);
    c->max_skew = skew;
    c->topology_key = key;
    c->do_not_schedule = dns;
    c->selector = mksel(f, sel);
    c->min_domains = 1;
    c->honor_node_affinity = 1;
    return c;
}

static berth_kaffinity_term mkterm(fx *f, const char *sel, const char *key, int32_t w)
{
    berth_kaffinity_term t;
    memset(&t, 0, sizeof t);
    t.selector = mksel(f, sel);
    t.topology_key = key;
    t.weight = w;
    return t;
}

static void add_term(fx *f, berth_kaffinity_term **arr, uint32_t *n, berth_kaffinity_term t)
{
    berth_kaffinity_term *old = *arr;
    *arr = aalloc(f, (*n + 1) * sizeof **arr);
    if (*n)
        memcpy(*arr, old, *n * sizeof *old);
    (*arr)[(*n)++] = t;
}

static void fx_sched(fx *f, int reference)
{
    assert_int_equal(kube_sched_init(&f->s, &f->k, &f->prof, reference), 0);
    f->inited = 1;
}

static void fx_prepare(fx *f, uint32_t pod)
{
    if (f->prepared)
        kube_req_free(&f->s, &f->r);
    assert_int_equal(kube_req_init(&f->s, &f->r, pod), 0);
    f->prepared = 1;
}

static void fx_free(fx *f)
{
    if (f->prepared)
        kube_req_free(&f->s, &f->r);
    if (f->inited)
        kube_sched_free(&f->s);
    berth_kube_free(&f->k);
    free(f);
}

static void filt(fx *f, const berth_filter_plugin *pl)
{
    memset(f->v, BERTH_FIT, sizeof f->v);
    pl->filter(&f->s, &f->r, f->cand, f->k.nnodes, f->v);
}

static void score(fx *f, const berth_score_plugin *pl, uint32_t n)
{
    for (uint32_t i = 0; i < 64; i++)
        f->out[i] = -999;
    pl->score(&f->s, &f->r, f->cand, n, f->out);
    if (pl->normalize)
        pl->normalize(&f->s, &f->r, f->out, n);
}

static void why(fx *f, const berth_filter_plugin *pl, uint32_t node, char *buf)
{
    pl->reason(&f->s, &f->r, node, buf, 256);
}

/* 4 zoned nodes: n0 n1 in zone a, n2 n3 in zone b (+ hostnames) */
static fx *zoned(uint32_t nnodes, uint32_t npods)
{
    fx *f = fx_new(nnodes, npods);
    char b[128];
    for (uint32_t n = 0; n < nnodes; n++) {
        snprintf(b, sizeof b, "%s=%s,%s=%s", ZONE, n < 2 ? "a" : n < 4 ? "b" : "c", HOST,
                 names[n]);
        node_labels(f, n, b);
    }
    return f;
}

/* ---- PodTopologySpread filter ---- */

static void test_spread_filter(void **state)
{
    (void)state;
    char buf[256];
    fx *f = zoned(4, 4);
    pod_labels(f, 0, "app=x");
    pod_labels(f, 1, "app=x");
    pod_labels(f, 2, "app=y");
    bind(f, 0, 0);
    bind(f, 1, 1);
    bind(f, 2, 2);
    pod_labels(f, 3, "app=x");
    berth_kspread *c = add_spread(f, 3, 1, ZONE, 1, "app=x");
    fx_sched(f, 0);
    fx_prepare(f, 3);
    filt(f, &kube_pts_filter);
    /* zone a: 2 + 1 - 0 = 3 > 1; zone b: 0 + 1 - 0 = 1 */
    assert_int_equal(f->v[0], BERTH_UNFIT);
    assert_int_equal(f->v[1], BERTH_UNFIT);
    assert_int_equal(f->v[2], BERTH_FIT);
    assert_int_equal(f->v[3], BERTH_FIT);
    why(f, &kube_pts_filter, 0, buf);
    assert_string_equal(buf, "node(s) didn't match pod topology spread constraints");
    /* maxSkew 2: zone a 3 > 2 still fails; maxSkew 3 passes */
    c->max_skew = 3;
    fx_prepare(f, 3);
    filt(f, &kube_pts_filter);
    assert_int_equal(f->v[0], BERTH_FIT);
    /* the selector does not match the pod itself: no +1 */
    pod_labels(f, 3, "app=z");
    c->max_skew = 2;
    fx_prepare(f, 3);
    filt(f, &kube_pts_filter);
    assert_int_equal(f->v[0], BERTH_FIT); /* 2 + 0 - 0 = 2 */
    c->max_skew = 1;
    fx_prepare(f, 3);
    filt(f, &kube_pts_filter);
    assert_int_equal(f->v[0], BERTH_UNFIT);
    assert_int_equal(f->v[2], BERTH_FIT);
    fx_free(f);
    /* pods of another namespace are not counted */
    f = zoned(4, 3);
    pod_labels(f, 0, "app=x");
    pod_labels(f, 1, "app=x");
    bind(f, 0, 0);
    bind(f, 1, 1);
    pod_labels(f, 2, "app=x");
    f->k.pods[2].ns = "other";
    add_spread(f, 2, 1, ZONE, 1, "app=x");
    fx_sched(f, 0);
    fx_prepare(f, 2);
    filt(f, &kube_pts_filter);
    assert_int_equal(f->v[0], BERTH_FIT);
    fx_free(f);
}

static void test_spread_min_domains(void **state)
{
    (void)state;
    char buf[256];
    fx *f = zoned(5, 6);
    node_labels(f, 4, "other=1"); /* n4 lacks the zone key */
    for (uint32_t p = 0; p < 5; p++) {
        pod_labels(f, p, "app=x");
    }
    /* zone a: 2, zone b: 3 -> min 2 */
    bind(f, 0, 0);
    bind(f, 1, 1);
    bind(f, 2, 2);
    bind(f, 3, 3);
    bind(f, 4, 3);
    bind(f, 5, 4);
    pod_labels(f, 5, "app=x");
    f->k.pods[5].node_name = NULL;
    berth_kspread *c = add_spread(f, 5, 1, ZONE, 1, "app=x");
    fx_sched(f, 0);
    fx_prepare(f, 5);
    filt(f, &kube_pts_filter);
    assert_int_equal(f->v[0], BERTH_FIT);   /* 2 + 1 - 2 = 1 */
    assert_int_equal(f->v[2], BERTH_UNFIT); /* 3 + 1 - 2 = 2 */
    assert_int_equal(f->v[4], BERTH_UNRESOLVABLE);
    why(f, &kube_pts_filter, 4, buf);
    assert_string_equal(buf,
                        "node(s) didn't match pod topology spread constraints (missing required label)");
    /* minDomains 3 > 2 domains: min = 0 -> 2 + 1 > 1 */
    c->min_domains = 3;
    fx_prepare(f, 5);
    filt(f, &kube_pts_filter);
    assert_int_equal(f->v[0], BERTH_UNFIT);
    c->max_skew = 3;
    fx_prepare(f, 5);
    filt(f, &kube_pts_filter);
    assert_int_equal(f->v[0], BERTH_FIT);   /* 3 <= 3 */
    assert_int_equal(f->v[2], BERTH_UNFIT); /* 4 > 3 */
    fx_free(f);
}

static void test_spread_node_affinity_policy(void **state)
{
    (void)state;
    fx *f = zoned(4, 3);
    pod_labels(f, 0, "app=x");
    pod_labels(f, 1, "app=x");
    bind(f, 0, 0);
    bind(f, 1, 1);
    pod_labels(f, 2, "app=x");
    /* the pod only wants zone a: honoring node affinity, zone b is not a
     * domain, so min = 2 and zone a passes */
    f->k.pods[2].node_selector = mklabels(f, ZONE "=a");
    berth_kspread *c = add_spread(f, 2, 1, ZONE, 1, "app=x");
    fx_sched(f, 0);
    fx_prepare(f, 2);
    filt(f, &kube_pts_filter);
    assert_int_equal(f->v[0], BERTH_FIT);
    c->honor_node_affinity = 0;
    fx_prepare(f, 2);
    filt(f, &kube_pts_filter);
    assert_int_equal(f->v[0], BERTH_UNFIT);
    fx_free(f);
}

static void test_spread_match_label_keys(void **state)
{
    (void)state;
    fx *f = zoned(4, 3);
    pod_labels(f, 0, "app=x,rev=1");
    pod_labels(f, 1, "app=x,rev=1");
    bind(f, 0, 0);
    bind(f, 1, 1);
    pod_labels(f, 2, "app=x,rev=2");
    berth_kspread *c = add_spread(f, 2, 1, ZONE, 1, "app=x");
    static const char *mlk[] = {"rev"};
    c->match_label_keys = mlk;
    c->nmatch_label_keys = 1;
    fx_sched(f, 0);
    fx_prepare(f, 2);
    filt(f, &kube_pts_filter);
    assert_int_equal(f->v[0], BERTH_FIT); /* rev=2 pods: none */
    c->nmatch_label_keys = 0;
    fx_prepare(f, 2);
    filt(f, &kube_pts_filter);
    assert_int_equal(f->v[0], BERTH_UNFIT);
    fx_free(f);
}

/* ---- PodTopologySpread score ---- */

static void test_spread_score(void **state)
{
    (void)state;
    fx *f = zoned(4, 3);
    pod_labels(f, 0, "app=x");
    pod_labels(f, 1, "app=x");
    bind(f, 0, 0);
    bind(f, 1, 0);
    pod_labels(f, 2, "app=x");
    add_spread(f, 2, 1, ZONE, 0, "app=x");
    fx_sched(f, 0);
    fx_prepare(f, 2);
    /* w = ln(2 + 2); a: round(2 x 1.386) = 3, b: 0; 100 x (3 + 0 - s) / 3 */
    score(f, &kube_pts_score, 4);
    assert_int_equal(f->out[0], 0);
    assert_int_equal(f->out[1], 0);
    assert_int_equal(f->out[2], 100);
    assert_int_equal(f->out[3], 100);
    /* + hostname maxSkew 2, w = ln(4 + 2) = 1.792:
     * n0: 2.773 + 3.584 + 1 = 7.36 -> 7; n1: 2.773 + 1 -> 4; n2, n3: 1
     * -> 100 x (7 + 1 - s) / 7: 14, 57, 100, 100 */
    add_spread(f, 2, 2, HOST, 0, "app=x");
    fx_prepare(f, 2);
    score(f, &kube_pts_score, 4);
    assert_int_equal(f->out[0], 14);
    assert_int_equal(f->out[1], 57);
    assert_int_equal(f->out[2], 100);
    assert_int_equal(f->out[3], 100);
    /* only n0 and n2 are candidates: zone w = ln 4, host w = ln 4:
     * n0: 2.773 + 2.773 + 1 = 6.55 -> 7; n2: 1 -> 100 x (8 - s) / 7 */
    f->cand[0] = 0;
    f->cand[1] = 2;
    score(f, &kube_pts_score, 2);
    assert_int_equal(f->out[0], 14);
    assert_int_equal(f->out[1], 100);
    fx_free(f);
}

static void test_spread_score_ignored(void **state)
{
    (void)state;
    fx *f = zoned(3, 2);
    node_labels(f, 2, "x=1"); /* lacks the zone */
    pod_labels(f, 0, "app=x");
    bind(f, 0, 0);
    pod_labels(f, 1, "app=x");
    add_spread(f, 1, 1, ZONE, 0, "app=x");
    fx_sched(f, 0);
    fx_prepare(f, 1);
    /* candidates n0, n1 (zone a) and n2 (ignored): w = ln 3, both a:
     * round(1.0986) = 1; max 1, min 1 -> 100 x (1 + 1 - 1) / 1 = 100 */
    score(f, &kube_pts_score, 3);
    assert_int_equal(f->out[0], 100);
    assert_int_equal(f->out[1], 100);
    assert_int_equal(f->out[2], 0);
    /* no constraints: score skipped (0) */
    f->k.pods[1].nspread = 0;
    fx_prepare(f, 1);
    score(f, &kube_pts_score, 3);
    assert_int_equal(f->out[0], 0);
    assert_int_equal(f->out[2], 0);
    fx_free(f);
}

static void test_spread_system_defaults(void **state)
{
    (void)state;
    fx *f = zoned(4, 3);
    pod_labels(f, 0, "app=x");
    pod_labels(f, 1, "app=x");
    bind(f, 0, 0);
    bind(f, 1, 0);
    pod_labels(f, 2, "app=x,tier=web");
    f->k.workloads = calloc(3, sizeof *f->k.workloads);
    assert_non_null(f->k.workloads);
    f->k.nworkloads = f->k.capworkloads = 3;
    f->k.workloads[0] = (berth_kworkload){"Service", "default", "svc", mksel(f, "app=x")};
    f->k.workloads[1] = (berth_kworkload){"DaemonSet", "default", "ds", mksel(f, "app=x")};
    f->k.workloads[2] = (berth_kworkload){"Service", "other", "svc2", mksel(f, "app=x")};
    fx_sched(f, 0);
    fx_prepare(f, 2);
    kube_terms_req *q = f->r.terms;
    assert_int_equal(q->nps, 2);
    assert_int_equal(q->npf, 0);
    assert_int_equal(q->ps[0].max_skew, 3);
    assert_int_equal(q->ps[1].max_skew, 5);
    /* hostname w = ln 6 = 1.792, zone w = ln 4 = 1.386:
     * n0: 2 x 1.792 + 2 + 2 x 1.386 + 4 = 12.36 -> 12; n1: 2.773 + 6 -> 9;
     * n2, n3: 6 -> 100 x (12 + 6 - s) / 12: 50, 75, 100, 100 */
    score(f, &kube_pts_score, 4);
    assert_int_equal(f->out[0], 50);
    assert_int_equal(f->out[1], 75);
    assert_int_equal(f->out[2], 100);
    filt(f, &kube_pts_filter);
    for (uint32_t n = 0; n < 4; n++)
        assert_int_equal(f->v[n], BERTH_FIT);
    /* no selecting Service/RS/SS/RC: no constraints */
    f->k.workloads[0].kind = "Deployment";
    fx_prepare(f, 2);
    assert_int_equal(((kube_terms_req *)f->r.terms)->nps, 0);
    /* own constraints replace the defaults */
    f->k.workloads[0].kind = "ReplicaSet";
    add_spread(f, 2, 1, ZONE, 1, "app=x");
    fx_prepare(f, 2);
    q = f->r.terms;
    assert_int_equal(q->nps, 0);
    assert_int_equal(q->npf, 1);
    /* system defaulting off */
    f->k.pods[2].nspread = 0;
    f->prof.spread_system_defaults = 0;
    fx_prepare(f, 2);
    assert_int_equal(((kube_terms_req *)f->r.terms)->nps, 0);
    fx_free(f);
}

/* The default selector's workload lookup is indexed by each selector's
 * first In requirement; a selector without one (Exists only) sits in a
 * general list that every pod consults, and a workload's kind is read at use. */
static void test_spread_defaults_without_in_anchor(void **state)
{
    (void)state;
    fx *f = zoned(4, 3);
    pod_labels(f, 0, "tier=web");
    bind(f, 0, 0);
    pod_labels(f, 2, "tier=web");
    f->k.workloads = calloc(2, sizeof *f->k.workloads);
    assert_non_null(f->k.workloads);
    f->k.nworkloads = f->k.capworkloads = 2;
    berth_requirement *ex = aalloc(f, sizeof *ex);
    *ex = (berth_requirement){"tier", BERTH_SEL_EXISTS, NULL, 0};
    f->k.workloads[0] = (berth_kworkload){"ReplicaSet", "default", "rs", {ex, 1, 0}};
    f->k.workloads[1] = (berth_kworkload){"Service", "default", "svc", mksel(f, "app=y")};
    fx_sched(f, 0);
    fx_prepare(f, 2);
    kube_terms_req *q = f->r.terms;
    assert_int_equal(q->nps, 2); /* the Exists-only ReplicaSet selects the pod */
    score(f, &kube_pts_score, 4);
    assert_true(f->out[0] < f->out[1]); /* n0 holds the matching pod */
    /* a pod without the label: no workload selects it */
    pod_labels(f, 1, "app=z");
    fx_prepare(f, 1);
    assert_int_equal(((kube_terms_req *)f->r.terms)->nps, 0);
    fx_free(f);
}

/* ---- InterPodAffinity filter ---- */

static void test_affinity_filter(void **state)
{
    (void)state;
    char buf[256];
    fx *f = zoned(5, 3);
    node_labels(f, 4, "x=1"); /* lacks the zone */
    pod_labels(f, 0, "app=db");
    bind(f, 0, 0);
    pod_labels(f, 1, "app=web");
    berth_kpod *p = &f->k.pods[1];
    add_term(f, &p->aff_req, &p->naff_req, mkterm(f, "app=db", ZONE, 0));
    pod_labels(f, 2, "app=db");
    p = &f->k.pods[2];
    add_term(f, &p->aff_req, &p->naff_req, mkterm(f, "app=cache", ZONE, 0));
    fx_sched(f, 0);
    fx_prepare(f, 1);
    filt(f, &kube_ipa_filter);
    assert_int_equal(f->v[0], BERTH_FIT);
    assert_int_equal(f->v[1], BERTH_FIT);
    assert_int_equal(f->v[2], BERTH_UNRESOLVABLE);
    assert_int_equal(f->v[4], BERTH_UNRESOLVABLE);
    why(f, &kube_ipa_filter, 2, buf);
    assert_string_equal(buf, "node(s) didn't match pod affinity rules");
    /* no app=cache pod anywhere, and the pod does not match its own term */
    fx_prepare(f, 2);
    filt(f, &kube_ipa_filter);
    for (uint32_t n = 0; n < 5; n++)
        assert_int_equal(f->v[n], BERTH_UNRESOLVABLE);
    /* ... it does: every node with the key passes */
    pod_labels(f, 2, "app=cache");
    fx_prepare(f, 2);
    filt(f, &kube_ipa_filter);
    for (uint32_t n = 0; n < 4; n++)
        assert_int_equal(f->v[n], BERTH_FIT);
    assert_int_equal(f->v[4], BERTH_UNRESOLVABLE);
    /* term in another namespace: the db pod does not count */
    f->k.pods[1].aff_req[0].namespaces = (const char *[]){"prod"};
    f->k.pods[1].aff_req[0].nnamespaces = 1;
    fx_prepare(f, 1);
    filt(f, &kube_ipa_filter);
    assert_int_equal(f->v[0], BERTH_UNRESOLVABLE);
    /* namespaceSelector {}: every namespace */
    f->k.pods[1].aff_req[0].nnamespaces = 0;
    f->k.pods[1].aff_req[0].has_ns_selector = 1;
    fx_prepare(f, 1);
    filt(f, &kube_ipa_filter);
    assert_int_equal(f->v[0], BERTH_FIT);
    assert_int_equal(f->v[2], BERTH_UNRESOLVABLE);
    fx_free(f);
}

static void test_anti_affinity_filter(void **state)
{
    (void)state;
    char buf[256];
    fx *f = zoned(4, 4);
    pod_labels(f, 0, "app=x");
    bind(f, 0, 0);
    /* an existing pod on n2 refusing app=web in its zone */
    pod_labels(f, 1, "app=y");
    bind(f, 1, 2);
    berth_kpod *p = &f->k.pods[1];
    add_term(f, &p->anti_req, &p->nanti_req, mkterm(f, "app=web", ZONE, 0));
    pod_labels(f, 2, "app=x");
    p = &f->k.pods[2];
    add_term(f, &p->anti_req, &p->nanti_req, mkterm(f, "app=x", HOST, 0));
    pod_labels(f, 3, "app=web");
    fx_sched(f, 0);
    fx_prepare(f, 2);
    filt(f, &kube_ipa_filter);
    assert_int_equal(f->v[0], BERTH_UNFIT);
    assert_int_equal(f->v[1], BERTH_FIT);
    assert_int_equal(f->v[2], BERTH_FIT);
    why(f, &kube_ipa_filter, 0, buf);
    assert_string_equal(buf, "node(s) didn't match pod anti-affinity rules");
    /* symmetry: app=web may not go to zone b */
    fx_prepare(f, 3);
    filt(f, &kube_ipa_filter);
    assert_int_equal(f->v[0], BERTH_FIT);
    assert_int_equal(f->v[1], BERTH_FIT);
    assert_int_equal(f->v[2], BERTH_UNFIT);
    assert_int_equal(f->v[3], BERTH_UNFIT);
    why(f, &kube_ipa_filter, 3, buf);
    assert_string_equal(buf, "node(s) didn't satisfy existing pods anti-affinity rules");
    /* assume pod 2 on n1: app=x is now on n0 and n1 */
    kube_req_free(&f->s, &f->r);
    f->prepared = 0;
    assert_int_equal(kube_assume(&f->s, 2, 1), 0);
    pod_labels(f, 3, "app=x");
    p = &f->k.pods[3];
    add_term(f, &p->anti_req, &p->nanti_req, mkterm(f, "app=x", HOST, 0));
    fx_prepare(f, 3);
    filt(f, &kube_ipa_filter);
    assert_int_equal(f->v[0], BERTH_UNFIT);
    assert_int_equal(f->v[1], BERTH_UNFIT);
    assert_int_equal(f->v[2], BERTH_FIT);
    /* pod 2's own anti-affinity also refuses pod 3 (app=x) on n1 only */
    p->nanti_req = 0;
    fx_prepare(f, 3);
    filt(f, &kube_ipa_filter);
    assert_int_equal(f->v[0], BERTH_FIT);
    assert_int_equal(f->v[1], BERTH_UNFIT);
    why(f, &kube_ipa_filter, 1, buf);
    assert_string_equal(buf, "node(s) didn't satisfy existing pods anti-affinity rules");
    fx_free(f);
}

/* ---- InterPodAffinity score ---- */

static void test_affinity_score(void **state)
{
    (void)state;
    fx *f = zoned(4, 3);
    pod_labels(f, 0, "app=db");
    bind(f, 0, 0);
    pod_labels(f, 1, "app=web");
    berth_kpod *p = &f->k.pods[1];
    add_term(f, &p->aff_pref, &p->naff_pref, mkterm(f, "app=db", ZONE, 10));
    fx_sched(f, 0);
    fx_prepare(f, 1);
    score(f, &kube_ipa_score, 4);
    assert_int_equal(f->out[0], 100);
    assert_int_equal(f->out[1], 100);
    assert_int_equal(f->out[2], 0);
    assert_int_equal(f->out[3], 0);
    /* - 5 on the db's host: n0 5, n1 10, others 0 -> 50, 100, 0, 0 */
    add_term(f, &p->anti_pref, &p->nanti_pref, mkterm(f, "app=db", HOST, 5));
    fx_prepare(f, 1);
    score(f, &kube_ipa_score, 4);
    assert_int_equal(f->out[0], 50);
    assert_int_equal(f->out[1], 100);
    assert_int_equal(f->out[2], 0);
    /* -4 on n0 vs 3 elsewhere... (int)(100 x (s - min) / (max - min)):
     * weights 10 zone, 7 host -> n0 3, n1 10, n2 n3 0: 30, 100, 0 */
    p->anti_pref[0].weight = 7;
    fx_prepare(f, 1);
    score(f, &kube_ipa_score, 4);
    assert_int_equal(f->out[0], 30);
    assert_int_equal(f->out[1], 100);
    assert_int_equal(f->out[2], 0);
    /* existing pods' terms matching the incoming pod: the db pod's
     * required affinity to app=web (hardPodAffinityWeight 1 per zone a)
     * and preferred anti-affinity weight 3 per host n0 */
    p->naff_pref = p->nanti_pref = 0;
    fx_free(f);

    f = zoned(4, 3);
    pod_labels(f, 0, "app=db");
    p = &f->k.pods[0];
    add_term(f, &p->aff_req, &p->naff_req, mkterm(f, "app=web", ZONE, 0));
    add_term(f, &p->anti_pref, &p->nanti_pref, mkterm(f, "app=web", HOST, 3));
    bind(f, 0, 2);
    pod_labels(f, 1, "app=web");
    pod_labels(f, 2, "app=other");
    f->prof.hard_pod_affinity_weight = 5;
    fx_sched(f, 0);
    fx_prepare(f, 1);
    /* n2: 5 - 3 = 2, n3: 5, n0 n1: 0 -> 0, 0, 40, 100 */
    score(f, &kube_ipa_score, 4);
    assert_int_equal(f->out[0], 0);
    assert_int_equal(f->out[1], 0);
    assert_int_equal(f->out[2], 40);
    assert_int_equal(f->out[3], 100);
    /* a pod nothing refers to: all 0 */
    fx_prepare(f, 2);
    score(f, &kube_ipa_score, 4);
    for (uint32_t n = 0; n < 4; n++)
        assert_int_equal(f->out[n], 0);
    assert_int_equal(((kube_terms_req *)f->r.terms)->nisc, 0);
    fx_free(f);
}

/* ---- incremental vs reference on random clusters ---- */

static uint64_t rs;
static uint32_t seen_reject[2][3], seen_score[2];
static uint32_t rnd(uint32_t n)
{
    rs = rs * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rs >> 33) % n;
}

static const char *const apps[] = {"a", "b", "c", "d"};
static const char *const nss[] = {"default", "prod", "dev"};
static const char *const keys[] = {ZONE, HOST, "rack"};

static berth_kaffinity_term rterm(fx *f)
{
    char b[64];
    snprintf(b, sizeof b, "app=%s", apps[rnd(4)]);
    berth_kaffinity_term t = mkterm(f, rnd(8) ? b : "", keys[rnd(3)], 1 + (int32_t)rnd(50));
    switch (rnd(5)) {
    case 0:
        t.namespaces = aalloc(f, sizeof(char *));
        t.namespaces[0] = nss[rnd(3)];
        t.nnamespaces = 1;
        break;
    case 1:
        t.has_ns_selector = 1;
        t.ns_selector = mksel(f, rnd(2) ? "" : "env=prod");
        break;
    default:
        break;
    }
    return t;
}

static uint64_t vs_reference(fx *a, const uint32_t *pending, uint32_t npend, uint64_t seed);

static void random_cluster(uint64_t seed, int with_defaults)
{
    rs = seed;
    uint32_t nn = 3 + rnd(10), np = 10 + rnd(40);
    fx *a = fx_new(nn, np);
    char b[256];
    /* Namespace objects for two of the three */
    a->k.namespaces = calloc(2, sizeof *a->k.namespaces);
    assert_non_null(a->k.namespaces);
    a->k.nnamespaces = a->k.capnamespaces = 2;
    a->k.namespaces[0] = (berth_knamespace){"prod", mklabels(a, "env=prod")};
    a->k.namespaces[1] = (berth_knamespace){"dev", mklabels(a, "env=dev")};
    for (uint32_t n = 0; n < nn; n++) {
        int off = 0;
        b[0] = 0;
        if (rnd(6))
            off += snprintf(b + off, sizeof b - off, "%s=z%u,", ZONE, rnd(3));
        if (rnd(8))
            off += snprintf(b + off, sizeof b - off, "%s=%s,", HOST, names[rnd(8) ? n : 0]);
        if (rnd(2))
            off += snprintf(b + off, sizeof b - off, "rack=r%u,", rnd(4));
        if (off)
            b[off - 1] = 0;
        else
            snprintf(b, sizeof b, "x=1");
        node_labels(a, n, b);
        if (!rnd(5)) {
            a->k.nodes[n].taints = aalloc(a, sizeof(berth_taint));
            a->k.nodes[n].taints[0] = (berth_taint){"t", "v", BERTH_EFFECT_NOSCHEDULE};
            a->k.nodes[n].ntaints = 1;
        }
    }
    if (with_defaults) {
        a->k.workloads = calloc(2, sizeof *a->k.workloads);
        assert_non_null(a->k.workloads);
        a->k.nworkloads = a->k.capworkloads = 2;
        a->k.workloads[0] = (berth_kworkload){"Service", "default", "s", mksel(a, "app=a")};
        a->k.workloads[1] = (berth_kworkload){"ReplicaSet", "default", "r", mksel(a, "app=b")};
    }
    uint32_t *pending = calloc(np, sizeof *pending);
    uint32_t npend = 0;
    for (uint32_t p = 0; p < np; p++) {
        berth_kpod *pod = &a->k.pods[p];
        snprintf(b, sizeof b, "app=%s,rev=%u", apps[rnd(4)], rnd(2));
        pod_labels(a, p, b);
        pod->ns = nss[rnd(3)];
        pod->terminating = !rnd(10);
        uint32_t ns = rnd(3);
        for (uint32_t i = 0; i < ns; i++) {
            snprintf(b, sizeof b, "app=%s", apps[rnd(4)]);
            berth_kspread *c =
                add_spread(a, p, 1 + (int32_t)rnd(3), keys[rnd(3)], (int)rnd(2),
                           rnd(10) ? b : "");
            c->min_domains = 1 + (int32_t)rnd(4);
            c->honor_node_affinity = (int)rnd(2);
            c->honor_node_taints = (int)rnd(2);
            if (!rnd(4)) {
                static const char *mlk[] = {"rev"};
                c->match_label_keys = mlk;
                c->nmatch_label_keys = 1;
            }
        }
        if (!rnd(4)) {
            snprintf(b, sizeof b, "%s=z%u", ZONE, rnd(3));
            pod->node_selector = mklabels(a, b);
        }
        if (!rnd(6)) {
            pod->tols = aalloc(a, sizeof(berth_toleration));
            pod->tols[0] = (berth_toleration){"t", NULL, BERTH_TOL_EXISTS, BERTH_EFFECT_ALL, -1};
            pod->ntols = 1;
        }
        if (!rnd(4))
            add_term(a, &pod->aff_req, &pod->naff_req, rterm(a));
        if (!rnd(8))
            add_term(a, &pod->aff_req, &pod->naff_req, rterm(a));
        if (!rnd(3))
            add_term(a, &pod->anti_req, &pod->nanti_req, rterm(a));
        if (!rnd(3))
            add_term(a, &pod->aff_pref, &pod->naff_pref, rterm(a));
        if (!rnd(3))
            add_term(a, &pod->anti_pref, &pod->nanti_pref, rterm(a));
        if (rnd(3))
            bind(a, p, rnd(nn));
        else
            pending[npend++] = p;
    }
    vs_reference(a, pending, npend, seed);
    free(pending);
    fx_free(a);
}

/* Schedules a's pending pods in order with the incremental counters and
 * with the reference side by side, comparing every filter verdict, reason
 * and score (ties broken by rnd); returns the incremental scheduler's pod
 * class replays (kube_terms.pclass_hits). */
static uint64_t vs_reference(fx *a, const uint32_t *pending, uint32_t npend, uint64_t seed)
{
    uint32_t nn = a->k.nnodes;
    kube_sched inc, ref;
    assert_int_equal(kube_sched_init(&inc, &a->k, &a->prof, 0), 0);
    assert_int_equal(kube_sched_init(&ref, &a->k, &a->prof, 1), 0);
    uint8_t vi[64], vr[64];
    int64_t si[64], sr[64];
    char bi[256], br[256];
    const berth_filter_plugin *fl[2] = {&kube_pts_filter, &kube_ipa_filter};
    const berth_score_plugin *sl[2] = {&kube_pts_score, &kube_ipa_score};
    for (uint32_t i = 0; i < npend; i++) {
        uint32_t pod = pending[i];
        kube_req ri, rr;
        assert_int_equal(kube_req_init(&inc, &ri, pod), 0);
        assert_int_equal(kube_req_init(&ref, &rr, pod), 0);
        uint32_t feas[64], nf = 0;
        uint8_t ok[64];
        memset(ok, 1, sizeof ok);
        for (int f = 0; f < 2; f++) {
            memset(vi, 0, sizeof vi);
            memset(vr, 0, sizeof vr);
            fl[f]->filter(&inc, &ri, a->cand, nn, vi);
            fl[f]->filter(&ref, &rr, a->cand, nn, vr);
            for (uint32_t n = 0; n < nn; n++) {
                if (vi[n] != vr[n])
                    fail_msg("seed %llu pod %u filter %d node %u: %d vs %d",
                             (unsigned long long)seed, pod, f, n, vi[n], vr[n]);
                fl[f]->reason(&inc, &ri, n, bi, sizeof bi);
                fl[f]->reason(&ref, &rr, n, br, sizeof br);
                assert_string_equal(bi, br);
                if (vi[n]) {
                    ok[n] = 0;
                    seen_reject[f][vi[n]]++;
                }
            }
        }
        for (uint32_t n = 0; n < nn; n++)
            if (ok[n])
                feas[nf++] = n;
        int64_t total[64] = {0};
        for (int sc = 0; sc < 2 && nf; sc++) {
            sl[sc]->score(&inc, &ri, feas, nf, si);
            sl[sc]->score(&ref, &rr, feas, nf, sr);
            for (uint32_t j = 0; j < nf; j++) {
                if (si[j] != sr[j])
                    fail_msg("seed %llu pod %u score %d node %u: %lld vs %lld",
                             (unsigned long long)seed, pod, sc, feas[j], (long long)si[j],
                             (long long)sr[j]);
                assert_true(si[j] >= 0 && si[j] <= 100);
                if (si[j] > 0 && si[j] < 100)
                    seen_score[sc]++;
                total[j] += si[j];
            }
        }
        kube_req_free(&inc, &ri);
        kube_req_free(&ref, &rr);
        if (!nf)
            continue;
        uint32_t best = 0;
        for (uint32_t j = 1; j < nf; j++)
            if (total[j] > total[best] || (total[j] == total[best] && rnd(2)))
                best = j;
        assert_int_equal(kube_assume(&inc, pod, feas[best]), 0);
        assert_int_equal(kube_assume(&ref, pod, feas[best]), 0);
    }
    uint64_t hits = inc.terms->pclass_hits;
    kube_sched_free(&inc);
    kube_sched_free(&ref);
    return hits;
}

/* Replaces a's nodes by nn nodes n0000.. (110 pods each) labelled with a
 * zone z0..z(nzones-1), round robin, and their hostname. */
static void fx_zoned_nodes(fx *a, uint32_t nn, uint32_t nzones)
{
    char b[128];
    free(a->k.nodes);
    a->k.nodes = calloc(nn, sizeof *a->k.nodes);
    assert_non_null(a->k.nodes);
    a->k.nnodes = a->k.capnodes = nn;
    for (uint32_t n = 0; n < nn; n++) {
        snprintf(b, sizeof b, "n%04u", n);
        a->k.nodes[n].name = adup(a, b);
        a->k.nodes[n].alloc_pods = 110;
        snprintf(b, sizeof b, "%s=z%u,%s=n%04u", ZONE, n % nzones, HOST, n);
        node_labels(a, n, b);
    }
}

/* Many signatures on a wide cluster: the count arrays come from slabs that
 * double from 4 arrays and, past 2 MB, are 2 MB-aligned huge-page slabs
 * (terms.c cnt_alloc). 2,000 nodes and 300 apps give ~900 signatures of
 * 8 KB, so arrays live in every kind of slab, the huge ones included; an
 * array overlapping another or its slab's end shows as a verdict differing
 * from the reference (or a crash under AddressSanitizer). Each app's
 * pending pod has hostname anti-affinity to its app, so its rejections are
 * known: exactly the nodes running the app. */
static void test_many_signatures_vs_reference(void **state)
{
    (void)state;
    enum { NN = 2000, NAPPS = 300 };
    fx *a = fx_new(0, 3 * NAPPS);
    char b[128];
    fx_zoned_nodes(a, NN, 3);
    for (uint32_t k = 0; k < NAPPS; k++) {
        snprintf(b, sizeof b, "app=a%u", k);
        for (uint32_t j = 0; j < 3; j++)
            pod_labels(a, 3 * k + j, b);
        bind(a, 3 * k, (k * 7) % NN);
        bind(a, 3 * k + 1, (k * 13 + 1) % NN);
        berth_kpod *p = &a->k.pods[3 * k + 2];
        add_term(a, &p->anti_req, &p->nanti_req, mkterm(a, b, HOST, 0));
        add_spread(a, 3 * k + 2, 1, ZONE, 1, b);
    }
    uint32_t *cand = calloc(NN, sizeof *cand);
    uint8_t *vi = calloc(NN, 1), *vr = calloc(NN, 1);
    uint8_t *host = calloc(NN, 1);
    assert_true(cand && vi && vr && host);
    for (uint32_t n = 0; n < NN; n++)
        cand[n] = n;
    kube_sched inc, ref;
    assert_int_equal(kube_sched_init(&inc, &a->k, &a->prof, 0), 0);
    assert_int_equal(kube_sched_init(&ref, &a->k, &a->prof, 1), 0);
    /* dense counts from the start (a signature of 3 pods would stay
     * sparse): no signature exists yet, the bound pods carry no terms */
    assert_int_equal(inc.terms->nsigs, 0);
    inc.terms->sparse_max = 0;
    const berth_filter_plugin *fl[2] = {&kube_pts_filter, &kube_ipa_filter};
    for (uint32_t k = 0; k < NAPPS; k++) {
        uint32_t pod = 3 * k + 2;
        kube_req ri, rr;
        assert_int_equal(kube_req_init(&inc, &ri, pod), 0);
        assert_int_equal(kube_req_init(&ref, &rr, pod), 0);
        memset(host, 0, NN);
        host[(k * 7) % NN] = host[(k * 13 + 1) % NN] = 1;
        uint32_t pick = NN;
        for (int f = 0; f < 2; f++) {
            memset(vi, 0, NN);
            memset(vr, 0, NN);
            fl[f]->filter(&inc, &ri, cand, NN, vi);
            fl[f]->filter(&ref, &rr, cand, NN, vr);
            for (uint32_t n = 0; n < NN; n++) {
                if (vi[n] != vr[n])
                    fail_msg("app %u filter %d node %u: %d vs %d", k, f, n, vi[n], vr[n]);
                if (f == 1 && (vi[n] != 0) != host[n])
                    fail_msg("app %u node %u: anti-affinity verdict %d", k, n, vi[n]);
            }
            if (f == 1)
                for (uint32_t j = 0; j < NN && pick == NN; j++) {
                    uint32_t n = (k * 31 + j) % NN;
                    if (!vi[n])
                        pick = n;
                }
        }
        kube_req_free(&inc, &ri);
        kube_req_free(&ref, &rr);
        assert_true(pick < NN);
        assert_int_equal(kube_assume(&inc, pod, pick), 0);
        assert_int_equal(kube_assume(&ref, pod, pick), 0);
    }
    /* the signatures filled more than the first 2 MB slab; every count
     * array keeps its id in front (sig_of), lies apart from every other
     * one and counts only on the nodes its nz lists (a neighbour's write
     * into it would count elsewhere) */
    const kube_terms *t = inc.terms;
    assert_true(t->nsigs > 600);
    const int32_t **arr = calloc(t->nsigs, sizeof *arr);
    assert_non_null(arr);
    for (uint32_t i = 0; i < t->nsigs; i++) {
        const kube_sig *g = &t->sigs[i];
        assert_int_equal(((const uint32_t *)g->cnt)[-1], i);
        int64_t all = 0, listed = 0;
        for (uint32_t n = 0; n < NN; n++)
            all += g->cnt[n] != 0;
        for (uint32_t j = 0; j < g->nnz; j++)
            listed += g->cnt[g->nz[j]] != 0;
        assert_int_equal(all, listed);
        arr[i] = g->cnt;
    }
    for (uint32_t i = 0; i < t->nsigs; i++)
        for (uint32_t j = i + 1; j < t->nsigs; j++)
            assert_true(arr[j] - 2 >= arr[i] + NN || arr[i] - 2 >= arr[j] + NN);
    free(arr);
    kube_sched_free(&inc);
    kube_sched_free(&ref);
    free(cand);
    free(vi);
    free(vr);
    free(host);
    fx_free(a);
}

/* Filters (verdicts and reasons) and scores of pod on every node, the
 * incremental counters against the reference, and the own-term counts of
 * qh (a request for pod held since before the changes); returns the
 * feasible count. */
static uint32_t same_as_reference(kube_sched *inc, kube_sched *ref, uint32_t pod, uint32_t nn,
                                  const kube_terms_req *qh, uint32_t *cand, uint8_t *vi,
                                  uint8_t *vr, int64_t *si, int64_t *sr)
{
    const berth_filter_plugin *fl[2] = {&kube_pts_filter, &kube_ipa_filter};
    const berth_score_plugin *sl[2] = {&kube_pts_score, &kube_ipa_score};
    char bi[256], br[256];
    kube_req ri, rr;
    assert_int_equal(kube_req_init(inc, &ri, pod), 0);
    assert_int_equal(kube_req_init(ref, &rr, pod), 0);
    uint32_t nf = 0;
    for (uint32_t n = 0; n < nn; n++)
        cand[n] = n;
    uint8_t *ok = vr + nn;
    memset(ok, 1, nn);
    for (int f = 0; f < 2; f++) {
        memset(vi, 0, nn);
        memset(vr, 0, nn);
        fl[f]->filter(inc, &ri, cand, nn, vi);
        fl[f]->filter(ref, &rr, cand, nn, vr);
        for (uint32_t n = 0; n < nn; n++) {
            if (vi[n] != vr[n])
                fail_msg("pod %u filter %d node %u: %d vs %d", pod, f, n, vi[n], vr[n]);
            fl[f]->reason(inc, &ri, n, bi, sizeof bi);
            fl[f]->reason(ref, &rr, n, br, sizeof br);
            assert_string_equal(bi, br);
            if (vi[n])
                ok[n] = 0;
        }
    }
    for (uint32_t n = 0; n < nn; n++)
        if (ok[n])
            cand[nf++] = n;
    for (int sc = 0; sc < 2 && nf; sc++) {
        sl[sc]->score(inc, &ri, cand, nf, si);
        sl[sc]->score(ref, &rr, cand, nf, sr);
        for (uint32_t j = 0; j < nf; j++)
            if (si[j] != sr[j])
                fail_msg("pod %u score %d node %u: %lld vs %lld", pod, sc, cand[j],
                         (long long)si[j], (long long)sr[j]);
    }
    /* the counts the incremental requests read (dense arrays or windows)
     * are the reference's own-term counts, node by node */
    const kube_terms_req *qi = ri.terms, *qr = rr.terms;
    assert_int_equal(qi->nanti, qr->nanti);
    assert_int_equal(qi->npf, qr->npf);
    for (uint32_t n = 0; n < nn; n++) {
        assert_int_equal(qi->anti[0].cnt[n], qr->anti[0].cnt[n]);
        assert_int_equal(qi->pf[0].cnt[n], qr->pf[0].cnt[n]);
        assert_int_equal(qh->anti[0].cnt[n], qr->anti[0].cnt[n]);
        assert_int_equal(qh->pf[0].cnt[n], qr->pf[0].cnt[n]);
    }
    kube_req_free(inc, &ri);
    kube_req_free(ref, &rr);
    return nf;
}

/* Sparse counts promoted to dense (terms.c sig_promote): 200 nodes, an app
 * of 150 pods (each on its own node, each carrying a preferred
 * anti-affinity term against the probe's app) and a probe pod whose spread
 * constraints, required anti-affinity and preferred affinity all count the
 * app. The app is assumed a few pods, partly counted out again (a sparse
 * count back at 0), assumed on 150 nodes (past KUBE_SPARSE_MAX: its
 * signatures turn dense, then count again on the nodes back at 0) and
 * counted out to none, the probe's filters,
 * reasons, scores and counts compared with the reference at every step. A
 * request for the probe is held throughout, so the windows it reads are
 * lent across the promotion and must follow every change. */
static void test_sparse_promotion_vs_reference(void **state)
{
    (void)state;
    enum { NN = 200, NA = 150, PROBE = NA };
    fx *a = fx_new(0, NA + 1);
    fx_zoned_nodes(a, NN, 4);
    for (uint32_t i = 0; i < NA; i++) {
        berth_kpod *p = &a->k.pods[i];
        pod_labels(a, i, "app=a");
        add_term(a, &p->anti_pref, &p->nanti_pref, mkterm(a, "app=b", HOST, 3));
        add_term(a, &p->aff_pref, &p->naff_pref, mkterm(a, "app=a", ZONE, 2));
    }
    berth_kpod *pr = &a->k.pods[PROBE];
    pod_labels(a, PROBE, "app=b");
    add_spread(a, PROBE, 40, ZONE, 1, "app=a");
    add_spread(a, PROBE, 1, HOST, 0, "app=a");
    add_term(a, &pr->anti_req, &pr->nanti_req, mkterm(a, "app=a", HOST, 0));
    add_term(a, &pr->aff_pref, &pr->naff_pref, mkterm(a, "app=a", ZONE, 5));
    uint32_t *cand = calloc(NN, sizeof *cand);
    uint8_t *vi = calloc(NN, 1), *vr = calloc(2 * NN, 1);
    int64_t *si = calloc(NN, sizeof *si), *sr = calloc(NN, sizeof *sr);
    assert_true(cand && vi && vr && si && sr);
    kube_sched inc, ref;
    assert_int_equal(kube_sched_init(&inc, &a->k, &a->prof, 0), 0);
    assert_int_equal(kube_sched_init(&ref, &a->k, &a->prof, 1), 0);
    kube_req held;
    assert_int_equal(kube_req_init(&inc, &held, PROBE), 0);
    const kube_terms_req *qh = held.terms;
    const kube_terms *t = inc.terms;
    uint32_t anti_sig = qh->anti[0].sig;
    assert_null(t->sigs[anti_sig].cnt); /* sparse, read through a window */
    assert_non_null(t->sigs[anti_sig].win);
    /* (pods to assume, to count out) per phase; node of pod i: 7i mod NN */
    static const int32_t steps[][2] = {{10, 6}, {NA, NA}};
    uint8_t *on = calloc(NA, 1);
    assert_non_null(on);
    uint32_t feasible = 0, checks = 0;
    for (uint32_t ph = 0; ph < 2; ph++) {
        for (int32_t j = 0; j < steps[ph][0]; j++) {
            /* the second phase from the last pod: the nodes counted out
             * before (listed at 0 while sparse) count again once dense */
            int32_t i = ph ? steps[ph][0] - 1 - j : j;
            if (on[i])
                continue;
            uint32_t n = (uint32_t)(7 * i) % NN;
            assert_int_equal(kube_assume(&inc, (uint32_t)i, n), 0);
            assert_int_equal(kube_assume(&ref, (uint32_t)i, n), 0);
            on[i] = 1;
            feasible += same_as_reference(&inc, &ref, PROBE, NN, qh, cand, vi, vr, si, sr);
            checks++;
            assert_int_equal(qh->anti[0].cnt[n], 1);
        }
        if (ph == 1) /* 150 nodes: the app's signatures are dense now */
            assert_non_null(t->sigs[anti_sig].cnt);
        /* counted out in another order: odd ones first */
        for (int32_t k = 0; k < steps[ph][1]; k++) {
            int32_t i = k < (steps[ph][1] + 1) / 2 ? 2 * k + 1 : 2 * (k - (steps[ph][1] + 1) / 2);
            if (i >= steps[ph][0] || !on[i])
                continue;
            uint32_t n = (uint32_t)(7 * i) % NN;
            assert_int_equal(kube_unassume(&inc, (uint32_t)i, n, 0), 0);
            assert_int_equal(kube_unassume(&ref, (uint32_t)i, n, 0), 0);
            on[i] = 0;
            feasible += same_as_reference(&inc, &ref, PROBE, NN, qh, cand, vi, vr, si, sr);
            checks++;
            assert_int_equal(qh->anti[0].cnt[n], 0);
        }
    }
    /* everything counted out: the held window reads all zero */
    for (uint32_t n = 0; n < NN; n++)
        assert_int_equal(qh->anti[0].cnt[n], 0);
    /* steps compared: 10 + 6 in, 146 + 150 in and out; the probe fit
     * somewhere (its anti-affinity leaves the nodes without the app) */
    assert_int_equal(checks, 10 + 6 + 146 + 150);
    assert_true(feasible > 0);
    kube_req_free(&inc, &held);
    /* the window given back is all zero again */
    assert_int_equal(t->nwfree, t->nwin);
    for (uint32_t w = 0; w < t->nwfree; w++)
        for (uint32_t n = 0; n < NN; n++)
            assert_int_equal(t->wfree[w][n], 0);
    kube_sched_free(&inc);
    kube_sched_free(&ref);
    free(on);
    free(cand);
    free(vi);
    free(vr);
    free(si);
    free(sr);
    fx_free(a);
}

static void test_random_vs_reference(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 400; seed++)
        random_cluster(seed, (int)(seed & 1));
    /* the random clusters reach every branch */
    for (int f = 0; f < 2; f++) {
        print_message("filter %d: %u unfit, %u unresolvable; score %d: %u strict\n", f,
                      seen_reject[f][1], seen_reject[f][2], f, seen_score[f]);
        assert_true(seen_reject[f][1] > 20 && seen_reject[f][2] > 20 && seen_score[f] > 20);
    }
}

/* ---- pod classes ---- */

/* pod p stamped from template kind (9 kinds, each differing from kind 0 in
 * one thing kube_terms_prepare reads: namespace, a term's selector, its
 * topology key, labels, a preferred term's weight), see test_pod_classes */
static void class_pod(fx *f, uint32_t p, uint32_t kind)
{
    berth_kpod *pod = &f->k.pods[p];
    pod->ns = kind == 1 ? "other" : "default";
    pod_labels(f, p, kind == 4 ? "app=web,tier=x" : kind == 7 ? "app=cache" : "app=web");
    if (kind == 7) {
        /* a term of its own (a pod without any has no class) selecting
         * nothing here: only the existing pods' terms (kind 8's) select it */
        add_term(f, &pod->anti_pref, &pod->nanti_pref, mkterm(f, "app=none", HOST, 1));
        return;
    }
    if (kind == 8) {
        pod_labels(f, p, "app=x");
        add_term(f, &pod->anti_req, &pod->nanti_req, mkterm(f, "app=cache", HOST, 0));
        return;
    }
    berth_kspread *c = add_spread(f, p, 1, ZONE, 1, "app=web");
    if (kind == 4) {
        static const char *mlk[] = {"tier"};
        c->match_label_keys = mlk;
        c->nmatch_label_keys = 1;
    }
    add_term(f, &pod->anti_req, &pod->nanti_req,
             mkterm(f, kind == 2 ? "app=db" : "app=web", kind == 3 ? ZONE : HOST, 0));
    if (kind == 5 || kind == 6) {
        add_term(f, &pod->anti_pref, &pod->nanti_pref,
                 mkterm(f, "app=web", HOST, kind == 5 ? 1 : 20));
        add_term(f, &pod->aff_pref, &pod->naff_pref, mkterm(f, "app=db", ZONE, 5));
    }
}

/* Pods of a few templates, interleaved: the second and later pods of a
 * template are answered from its class (kube_pclass), and every answer
 * equals the reference's. A class key missing one of the things the
 * templates differ in (say the namespace) makes two templates share
 * signatures and the verdicts differ; kind 7's class is made before any
 * pod carries a term selecting it (kind 8's anti-affinity, a carrier
 * signature made when that pod is assumed), so kept carriers that are not
 * looked up again show as a missed "existing pods anti-affinity"; and kind
 * 8's own term makes a MATCH signature (app=cache) after kind 7's first
 * pod was counted, so a kept list of the signatures counting kind 7's pods
 * that is not looked up again leaves its later pods out of kind 8's
 * counts. (Each of the three breakages, tried on purpose, fails here.) */
static void test_pod_classes(void **state)
{
    (void)state;
    enum { NB = 5, ROUNDS = 6, KINDS = 9 };
    fx *a = zoned(8, NB + ROUNDS * KINDS);
    static const char *const bound[NB][2] = {{"app=web", "default"}, {"app=db", "default"},
                                             {"app=web", "default"}, {"app=cache", "default"},
                                             {"app=web", "other"}};
    for (uint32_t p = 0; p < NB; p++) {
        pod_labels(a, p, bound[p][0]);
        a->k.pods[p].ns = bound[p][1];
        bind(a, p, p);
    }
    uint32_t pending[ROUNDS * KINDS], np = 0;
    for (uint32_t r = 0; r < ROUNDS; r++)
        for (uint32_t k = 0; k < KINDS; k++) {
            /* kind 7 before kind 8 in the first round, after it later */
            uint32_t kind = r ? (k + 3 * r) % KINDS : (k + 7) % KINDS;
            uint32_t p = NB + np;
            class_pod(a, p, kind);
            pending[np++] = p;
        }
    rs = 77;
    uint64_t hits = vs_reference(a, pending, np, 77);
    assert_int_equal(hits, np - KINDS);
    fx_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spread_filter),
        cmocka_unit_test(test_spread_min_domains),
        cmocka_unit_test(test_spread_node_affinity_policy),
        cmocka_unit_test(test_spread_match_label_keys),
        cmocka_unit_test(test_spread_score),
        cmocka_unit_test(test_spread_score_ignored),
        cmocka_unit_test(test_spread_system_defaults),
        cmocka_unit_test(test_spread_defaults_without_in_anchor),
        cmocka_unit_test(test_affinity_filter),
        cmocka_unit_test(test_anti_affinity_filter),
        cmocka_unit_test(test_affinity_score),
        cmocka_unit_test(test_random_vs_reference),
        cmocka_unit_test(test_pod_classes),
        cmocka_unit_test(test_many_signatures_vs_reference),
        cmocka_unit_test(test_sparse_promotion_vs_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
