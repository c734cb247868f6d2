/* tests/unit/test_fleet.c - Fleet placement (SPEC 3, 3.1): the seed's
 * sorter tables at several weights, rounding edges, min = max, missing
 * properties, name tie-breaks, topology spread over rounds, invalid
 * policies, eligibility, PickFixed, bindings; fast path == reference. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "berth/fleet.h"

#define NOW "2024-05-01T12:00:00Z"

static char yaml[65536];

static void member(const char *name, const char *labels, const char *props, const char *extra)
{
    char b[2048];
    snprintf(b, sizeof b,
             "---\napiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\n"
             "metadata: {name: %s, labels: {%s}}\n%s"
             "status:\n  agentStatus:\n  - type: MemberAgent\n"
             "    lastReceivedHeartbeat: \"2024-05-01T11:59:00Z\"\n"
             "    conditions:\n    - {type: Joined, status: \"True\"}\n"
             "    - {type: Healthy, status: \"True\", lastTransitionTime: \"2024-04-01T00:00:00Z\"}\n"
             "  properties: {%s}\n",
             name, labels, extra ? extra : "", props);
    strcat(yaml, b);
}

static void crp(const char *name, const char *policy)
{
    char b[4096];
    snprintf(b, sizeof b,
             "---\napiVersion: placement.kubernetes-fleet.io/v1beta1\n"
             "kind: ClusterResourcePlacement\nmetadata: {name: %s}\nspec:\n  policy:\n%s\n",
             name, policy);
    strcat(yaml, b);
}

typedef struct run {
    berth_fleet f;
    berth_fleet_ctx *ctx;
    berth_fleet_outcome o;
} run;

static void start(run *r, int reference)
{
    berth_fleet_init(&r->f);
    berth_error e;
    berth_error_clear(&e);
    berth_source src;
    berth_fleet_options opt = {0};
    opt.reference = reference;
    assert_int_equal(berth_time_parse(NOW, &opt.now_ms), 0);
    int rc = berth_doc_load_buffer(&r->f.arena, "t.yaml", yaml, strlen(yaml), &src, &e);
    if (!rc)
        rc = berth_fleet_load(&r->f, &src, 0, &e);
    if (!rc)
        rc = berth_fleet_finalize(&r->f, &e);
    if (!rc)
        rc = berth_fleet_ctx_new(&r->f, &opt, &r->ctx, &e);
    if (rc)
        fprintf(stderr, "%s\n", e.msg);
    assert_int_equal(rc, 0);
}

static void stop(run *r)
{
    berth_fleet_ctx_free(r->ctx);
    berth_fleet_free(&r->f);
    yaml[0] = 0;
}

static void place(run *r, const char *name)
{
    uint32_t p = berth_fleet_find_placement(&r->f, name);
    assert_int_not_equal(p, BERTH_FLEET_NONE);
    assert_int_equal(berth_fleet_place(r->ctx, p, &r->o), 0);
}

static int64_t aff(run *r, const char *cl)
{
    uint32_t c = berth_fleet_find_cluster(&r->f, cl);
    assert_int_not_equal(c, BERTH_FLEET_NONE);
    return r->o.affinity[c];
}

static const char *selected(run *r)
{
    static char b[1024];
    b[0] = 0;
    for (uint32_t i = 0; i < r->o.nselected; i++) {
        if (i)
            strcat(b, ",");
        strcat(b, r->f.clusters[r->o.selected[i]].name);
    }
    return b;
}

static void seed_clusters(void)
{
    member("bravelion", "env: prod", "kubernetes.azure.com/per-cpu-core-cost: {value: \"1\"}, "
           "resources.kubernetes-fleet.io/available-cpu: {value: \"100\"}", NULL);
    member("smartfish", "env: prod", "kubernetes.azure.com/per-cpu-core-cost: {value: \"0.2\"}, "
           "resources.kubernetes-fleet.io/available-cpu: {value: \"20\"}", NULL);
    member("jumpingcat", "env: test", "kubernetes.azure.com/per-cpu-core-cost: {value: \"0.1\"}, "
           "resources.kubernetes-fleet.io/available-cpu: {value: \"10\"}", NULL);
}

static void sorter_policy(char *b, size_t n, int w, const char *prop, const char *order, int num)
{
    snprintf(b, n,
             "    placementType: PickN\n    numberOfClusters: %d\n    affinity:\n"
             "      clusterAffinity:\n        preferredDuringSchedulingIgnoredDuringExecution:\n"
             "        - weight: %d\n          preference: {propertySorter: {name: %s, sortOrder: %s}}",
             num, w, prop, order);
}

static void test_seed_tables(void **state)
{
    (void)state;
    /* weight: expected (desc cpu: bravelion, smartfish, jumpingcat), (asc cost) */
    static const struct { int w; int64_t d[3], a[3]; } cases[] = {
        {100, {100, 11, 0}, {0, 89, 100}},
        {20, {20, 2, 0}, {0, 18, 20}},
        {9, {9, 1, 0}, {0, 8, 9}},
        {-100, {-100, -11, 0}, {0, -89, -100}},
        {45, {45, 5, 0}, {0, 40, 45}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (int ref = 0; ref < 2; ref++) {
            run r;
            char b[1024];
            seed_clusters();
            sorter_policy(b, sizeof b, cases[i].w, "resources.kubernetes-fleet.io/available-cpu",
                          "Descending", 3);
            crp("desc", b);
            sorter_policy(b, sizeof b, cases[i].w, "kubernetes.azure.com/per-cpu-core-cost",
                          "Ascending", 3);
            crp("asc", b);
            start(&r, ref);
            place(&r, "desc");
            assert_int_equal(aff(&r, "bravelion"), cases[i].d[0]);
            assert_int_equal(aff(&r, "smartfish"), cases[i].d[1]);
            assert_int_equal(aff(&r, "jumpingcat"), cases[i].d[2]);
            if (cases[i].w > 0)
                assert_string_equal(selected(&r), "bravelion,smartfish,jumpingcat");
            place(&r, "asc");
            assert_int_equal(aff(&r, "bravelion"), cases[i].a[0]);
            assert_int_equal(aff(&r, "smartfish"), cases[i].a[1]);
            assert_int_equal(aff(&r, "jumpingcat"), cases[i].a[2]);
            if (cases[i].w > 0)
                assert_string_equal(selected(&r), "jumpingcat,smartfish,bravelion");
            assert_int_equal(r.o.status, BERTH_FLEET_FULFILLED);
            stop(&r);
        }
    }
}

static void test_rounding_edges(void **state)
{
    (void)state;
    /* values 0, 4, 10: the middle one is at 40 % */
    static const struct { int w; int64_t mid; } cases[] = {{7, 3}, {8, 3}, {-7, -3}, {-8, -3},
                                                         {5, 2}, {-5, -2}, {10, 4}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run r;
        char b[1024];
        member("a", "", "p: {value: \"0\"}", NULL);
        member("b", "", "p: {value: \"4\"}", NULL);
        member("c", "", "p: {value: \"10\"}", NULL);
        member("d", "", "", NULL);   /* missing property -> 0 */
        sorter_policy(b, sizeof b, cases[i].w, "p", "Descending", 1);
        crp("x", b);
        start(&r, 0);
        place(&r, "x");
        assert_int_equal(aff(&r, "b"), cases[i].mid);
        assert_int_equal(aff(&r, "a"), 0);
        assert_int_equal(aff(&r, "c"), cases[i].w);
        assert_int_equal(aff(&r, "d"), 0);
        stop(&r);
    }
    /* 2.5 -> 3 and -2.5 -> -3: weight 5 at 50 % */
    run r;
    char b[1024];
    member("a", "", "p: {value: \"0\"}", NULL);
    member("b", "", "p: {value: \"1\"}", NULL);
    member("c", "", "p: {value: \"2\"}", NULL);
    sorter_policy(b, sizeof b, 5, "p", "Ascending", 1);
    crp("x", b);
    sorter_policy(b, sizeof b, -5, "p", "Ascending", 1);
    crp("y", b);
    start(&r, 0);
    place(&r, "x");
    assert_int_equal(aff(&r, "b"), 3);
    place(&r, "y");
    assert_int_equal(aff(&r, "b"), -3);
    stop(&r);
}

static void test_min_equals_max_and_ties(void **state)
{
    (void)state;
    run r;
    char b[1024];
    member("alpha", "", "p: {value: \"5\"}", NULL);
    member("beta", "", "p: {value: \"5000m\"}", NULL);
    member("gamma", "", "p: {value: \"5\"}", NULL);
    sorter_policy(b, sizeof b, 50, "p", "Descending", 2);
    crp("x", b);
    start(&r, 0);
    place(&r, "x");
    assert_int_equal(aff(&r, "alpha"), 0);
    assert_int_equal(aff(&r, "beta"), 0);
    /* full tie: name descending */
    assert_string_equal(selected(&r), "gamma,beta");
    stop(&r);
}

static void test_required_and_invalid(void **state)
{
    (void)state;
    static const struct { const char *expr; int invalid; const char *sel; } cases[] = {
        {"{name: p, operator: Ge, values: [\"5\"]}", 0, "c,b"},
        {"{name: p, operator: Gt, values: [\"5\"]}", 0, "c"},
        {"{name: p, operator: Eq, values: [\"5000m\"]}", 0, "b"},
        {"{name: p, operator: Ne, values: [\"5\"]}", 0, "c,a"},
        {"{name: p, operator: Le, values: [\"1\"]}", 0, "a"},
        {"{name: p, operator: Lt, values: [\"1\"]}", 0, ""},
        {"{name: p, operator: Ge, values: [\"1\", \"2\"]}", 1, ""},
        {"{name: p, operator: Ge, values: []}", 1, ""},
        {"{name: p, operator: Ge, values: [\"5 cores\"]}", 1, ""},
        {"{name: p, operator: GreaterThan, values: [\"5\"]}", 1, ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run r;
        char b[1024];
        member("a", "", "p: {value: \"1\"}", NULL);
        member("b", "", "p: {value: \"5\"}", NULL);
        member("c", "", "p: {value: \"9\"}", NULL);
        member("d", "", "", NULL);   /* lacks p: fails every expression */
        snprintf(b, sizeof b,
                 "    placementType: PickAll\n    affinity:\n      clusterAffinity:\n"
                 "        requiredDuringSchedulingIgnoredDuringExecution:\n"
                 "          clusterSelectorTerms:\n          - propertySelector:\n"
                 "              matchExpressions: [%s]",
                 cases[i].expr);
        crp("x", b);
        start(&r, (int)(i & 1));
        place(&r, "x");
        if (cases[i].invalid) {
            assert_int_equal(r.o.status, BERTH_FLEET_POLICY_ERROR);
            assert_true(strstr(r.o.reason, "t.yaml:") != NULL);
        } else {
            assert_int_equal(r.o.status, BERTH_FLEET_FULFILLED);
            assert_string_equal(selected(&r), cases[i].sel);
            assert_int_equal(r.o.cstatus[3], BERTH_FLEET_FILTERED);
        }
        stop(&r);
    }
}

static void test_spread_rounds(void **state)
{
    (void)state;
    for (int ref = 0; ref < 2; ref++) {
        run r;
        /* zone a has the best clusters; spread must alternate zones */
        member("a1", "zone: a", "p: {value: \"10\"}", NULL);
        member("a2", "zone: a", "p: {value: \"9\"}", NULL);
        member("a3", "zone: a", "p: {value: \"8\"}", NULL);
        member("b1", "zone: b", "p: {value: \"2\"}", NULL);
        member("b2", "zone: b", "p: {value: \"1\"}", NULL);
        member("c1", "zone: c", "p: {value: \"0\"}", NULL);
        crp("x", "    placementType: PickN\n    numberOfClusters: 5\n    affinity:\n"
                 "      clusterAffinity:\n        preferredDuringSchedulingIgnoredDuringExecution:\n"
                 "        - weight: 100\n          preference: {propertySorter: {name: p, sortOrder: Descending}}\n"
                 "    topologySpreadConstraints:\n    - {maxSkew: 1, topologyKey: zone}");
        crp("y", "    placementType: PickN\n    numberOfClusters: 6\n"
                 "    topologySpreadConstraints:\n    - {maxSkew: 1, topologyKey: zone}");
        start(&r, ref);
        place(&r, "x");
        /* round 1: all 0 -> any change +1: best affinity a1; round 2: b/c -1 ... */
        assert_string_equal(selected(&r), "a1,b1,c1,a2,b2");
        assert_int_equal(r.o.status, BERTH_FLEET_FULFILLED);
        place(&r, "y");
        /* a3 would make skew 2 with c at 1: filtered, shortfall */
        assert_int_equal(r.o.nselected, 5);
        assert_int_equal(r.o.status, BERTH_FLEET_UNFULFILLED);
        assert_string_equal(selected(&r), "c1,b2,a3,b1,a2");
        assert_int_equal(r.o.cstatus[0], BERTH_FLEET_FILTERED);
        stop(&r);
    }
}

static void test_eligibility(void **state)
{
    (void)state;
    static const struct { const char *hb, *joined, *healthy, *since; int leaving, ok; } cases[] = {
        {"2024-05-01T11:55:00Z", "True", "True", "2024-04-01T00:00:00Z", 0, 1},
        {"2024-05-01T11:54:59Z", "True", "True", "2024-04-01T00:00:00Z", 0, 0},
        {"2024-05-01T11:59:00Z", "False", "True", "2024-04-01T00:00:00Z", 0, 0},
        {"2024-05-01T11:59:00Z", "True", NULL, NULL, 0, 0},
        {"2024-05-01T11:59:00Z", "True", "False", "2024-05-01T11:56:00Z", 0, 1},
        {"2024-05-01T11:59:00Z", "True", "False", "2024-05-01T11:54:00Z", 0, 0},
        {"2024-05-01T11:59:00Z", "True", "Unknown", "2024-05-01T11:50:00Z", 0, 0},
        {"2024-05-01T11:59:00Z", "True", "True", "2024-04-01T00:00:00Z", 1, 1 - 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char doc[2048], h[256] = "";
        if (cases[i].healthy)
            snprintf(h, sizeof h, "    - {type: Healthy, status: \"%s\", lastTransitionTime: \"%s\"}\n",
                     cases[i].healthy, cases[i].since);
        snprintf(doc, sizeof doc,
                 "---\napiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\n"
                 "metadata: {name: m%s}\nstatus:\n  agentStatus:\n  - type: MemberAgent\n"
                 "    lastReceivedHeartbeat: \"%s\"\n    conditions:\n"
                 "    - {type: Joined, status: \"%s\"}\n%s",
                 cases[i].leaving ? ", deletionTimestamp: \"2024-05-01T11:00:00Z\"" : "",
                 cases[i].hb, cases[i].joined, h);
        strcat(yaml, doc);
        run r;
        start(&r, 0);
        char why[256];
        int64_t now;
        berth_time_parse(NOW, &now);
        assert_int_equal(berth_fleet_eligible(&r.f.clusters[0], now, why, sizeof why), cases[i].ok);
        stop(&r);
    }
}

static void test_pickfixed_and_bindings(void **state)
{
    (void)state;
    run r;
    member("a", "", "p: {value: \"1\"}", NULL);
    member("b", "", "p: {value: \"2\"}", NULL);
    member("c", "", "p: {value: \"3\"}", NULL);
    member("d", "", "p: {value: \"4\"}", "spec: {taints: [{key: k, value: v, effect: NoSchedule}]}\n");
    strcat(yaml, "---\napiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\n"
                 "metadata: {name: gone}\n");
    crp("fixed", "    placementType: PickFixed\n    clusterNames: [c, nope, gone, d]");
    crp("shrink", "    placementType: PickN\n    numberOfClusters: 1\n    affinity:\n"
                  "      clusterAffinity:\n        preferredDuringSchedulingIgnoredDuringExecution:\n"
                  "        - weight: 100\n          preference: {propertySorter: {name: p, sortOrder: Descending}}");
    crp("grow", "    placementType: PickN\n    numberOfClusters: 3");
    static const char *const binds[][3] = {{"shrink", "a", "Bound"}, {"shrink", "b", "Scheduled"},
                                           {"shrink", "c", "Bound"}, {"grow", "a", "Bound"},
                                           {"grow", "gone", "Unscheduled"}};
    for (int i = 0; i < 5; i++) {
        char doc[1024];
        snprintf(doc, sizeof doc,
                 "---\napiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ClusterResourceBinding\n"
                 "metadata: {name: b%d, labels: {kubernetes-fleet.io/parent-CRP: %s}}\n"
                 "spec: {targetCluster: %s, state: %s}\n",
                 i, binds[i][0], binds[i][1], binds[i][2]);
        strcat(yaml, doc);
    }
    start(&r, 0);
    place(&r, "fixed");
    assert_string_equal(selected(&r), "c,d");   /* PickFixed ignores taints */
    assert_int_equal(r.o.nnotfound, 1);
    assert_string_equal(r.o.notfound[0], "nope");
    assert_int_equal(r.o.status, BERTH_FLEET_UNFULFILLED);
    assert_int_equal(r.o.cstatus[berth_fleet_find_cluster(&r.f, "gone")], BERTH_FLEET_INVALID);
    place(&r, "shrink");
    /* release b (Scheduled) first, then the lower-scored Bound a; keep c */
    assert_string_equal(selected(&r), "c");
    place(&r, "grow");
    /* a held; d is tainted, gone ineligible: c, b by name descending */
    assert_string_equal(selected(&r), "a,c,b");
    assert_int_equal(r.o.status, BERTH_FLEET_FULFILLED);
    stop(&r);
}

static void test_load_errors(void **state)
{
    (void)state;
    static const struct { const char *doc, *frag; int strict; } cases[] = {
        {"apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ClusterResourcePlacement\n"
         "metadata: {name: x}\nspec:\n  policy: {placementType: PickSome}\n",
         "t.yaml:5:27: spec.policy.placementType", 0},
        {"apiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\nmetadata: {name: x}\n"
         "spec: {taints: [{key: k, effect: NoExecute}]}\n",
         "spec.taints[0].effect", 0},
        {"apiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\nmetadata: {name: x}\n"
         "spec: {identiti: {}}\n",
         "spec.identiti: unknown field", 1},
        {"apiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\nmetadata: {name: x}\n"
         "status: {properties: {p: {value: abc}}}\n",
         "status.properties.p.value", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        berth_fleet f;
        berth_fleet_init(&f);
        berth_error e;
        berth_error_clear(&e);
        berth_source src;
        int rc = berth_doc_load_buffer(&f.arena, "t.yaml", cases[i].doc, strlen(cases[i].doc), &src, &e);
        if (!rc)
            rc = berth_fleet_load(&f, &src, cases[i].strict, &e);
        assert_int_equal(rc, BERTH_EINVAL);
        if (!strstr(e.msg, cases[i].frag))
            fail_msg("'%s' lacks '%s'", e.msg, cases[i].frag);
        berth_fleet_free(&f);
    }
    /* unknown fields are fine without strict */
    berth_fleet f;
    berth_fleet_init(&f);
    berth_source src;
    berth_error e;
    const char *ok = cases[2].doc;
    assert_int_equal(berth_doc_load_buffer(&f.arena, "t.yaml", ok, strlen(ok), &src, &e), 0);
    assert_int_equal(berth_fleet_load(&f, &src, 0, &e), 0);
    berth_fleet_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_tables),        cmocka_unit_test(test_rounding_edges),
        cmocka_unit_test(test_min_equals_max_and_ties), cmocka_unit_test(test_required_and_invalid),
        cmocka_unit_test(test_spread_rounds),      cmocka_unit_test(test_eligibility),
        cmocka_unit_test(test_pickfixed_and_bindings), cmocka_unit_test(test_load_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
