/* tests/unit/test_fleet_bindings.c - bindings as KubeFleet's scheduler reads
 * them (pkg/scheduler/framework/frameworkutils.go classifyBindings, the
 * sameplacementaffinity plugin): Unscheduled bindings are ignored (no +1,
 * their cluster may be gone); a Scheduled or Bound binding made under a
 * policy snapshot other than the placement's latest one is obsolete: its
 * cluster is not held, is filtered and scored again, does not count toward
 * spread domains or the shrink, and gets the +1 tie-break. The latest
 * snapshot comes from ClusterSchedulingPolicySnapshot objects or the
 * berth.io/policy-snapshot annotation; without either every binding is
 * current. Then the namespaced ResourcePlacement with ResourceBinding and
 * SchedulingPolicySnapshot, and the located errors. Inputs are shaped as
 * `kubectl get -o yaml` prints them (uid, creationTimestamp, ownerReferences,
 * status). Every case runs on the fast path and the reference scan. */
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

static void add(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t n = strlen(yaml);
    vsnprintf(yaml + n, sizeof yaml - n, fmt, ap);
    va_end(ap);
}

/* a healthy, joined member with property p and optional zone label */
static void member(const char *name, const char *p, const char *zone)
{
    add("---\napiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\n"
        "metadata:\n  name: %s\n  uid: 5d1a2c3e-%s\n  creationTimestamp: \"2024-04-01T00:00:00Z\"\n"
        "  labels: {fleet.azure.com/location: eastus%s%s}\n"
        "spec:\n  identity: {kind: ServiceAccount, name: fleet-member-agent, namespace: fleet-system}\n"
        "  heartbeatPeriodSeconds: 60\n"
        "status:\n  agentStatus:\n  - type: MemberAgent\n"
        "    lastReceivedHeartbeat: \"2024-05-01T11:59:30Z\"\n"
        "    conditions:\n"
        "    - {type: Joined, status: \"True\", reason: Joined, lastTransitionTime: \"2024-04-01T00:00:00Z\", observedGeneration: 1}\n"
        "    - {type: Healthy, status: \"True\", reason: Healthy, lastTransitionTime: \"2024-04-01T00:00:00Z\", observedGeneration: 1}\n"
        "  properties:\n    p: {value: \"%s\", observationTime: \"2024-05-01T11:59:00Z\"}\n",
        name, name, zone ? ", zone: " : "", zone ? zone : "", p);
}

/* A CRP (ns NULL) or ResourcePlacement; extra: lines under metadata */
static void placement(const char *ns, const char *name, const char *meta, const char *policy)
{
    add("---\napiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: %s\nmetadata:\n"
        "  name: %s\n%s%s%s  generation: 2\n  uid: 7a7a-%s\n%s"
        "spec:\n  resourceSelectors: [{group: \"\", kind: Namespace, name: app, version: v1}]\n"
        "  policy:\n%s\n  revisionHistoryLimit: 10\n"
        "status:\n  observedResourceIndex: \"0\"\n  conditions:\n"
        "  - {type: ClusterResourcePlacementScheduled, status: \"False\", reason: SchedulingPolicyUnfulfilled, observedGeneration: 2, lastTransitionTime: \"2024-05-01T11:00:00Z\"}\n",
        ns ? "ResourcePlacement" : "ClusterResourcePlacement", name, ns ? "  namespace: " : "",
        ns ? ns : "", ns ? "\n" : "", name, meta ? meta : "", policy);
}

/* A (Cluster)SchedulingPolicySnapshot NAME of placement PARENT */
static void snapshot(const char *ns, const char *name, const char *parent, const char *latest)
{
    add("---\napiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: %s\nmetadata:\n"
        "  name: %s\n%s%s%s"
        "  labels: {kubernetes-fleet.io/parent-CRP: %s, kubernetes-fleet.io/is-latest-snapshot: "
        "\"%s\", kubernetes-fleet.io/policy-index: \"%c\"}\n"
        "  annotations: {kubernetes-fleet.io/CRP-generation: \"1\", "
        "kubernetes-fleet.io/number-of-clusters: \"2\"}\n"
        "  ownerReferences: [{apiVersion: placement.kubernetes-fleet.io/v1beta1, kind: %s, "
        "name: %s, uid: 7a7a-%s, controller: true, blockOwnerDeletion: true}]\n"
        "spec:\n  policyHash: ZTNiMGM0NDI5OGZjMWMxNDlhZmJmNGM4OTk2ZmI5MjQyN2FlNDFlNDY0OWI5MzRjYTQ5NTk5MWI3ODUyYjg1NQ==\n"
        "status:\n  observedCRPGeneration: 1\n  conditions: []\n",
        ns ? "SchedulingPolicySnapshot" : "ClusterSchedulingPolicySnapshot", name,
        ns ? "  namespace: " : "", ns ? ns : "", ns ? "\n" : "", parent, latest,
        name[strlen(name) - 1], ns ? "ResourcePlacement" : "ClusterResourcePlacement", parent,
        parent);
}

/* A (Cluster)ResourceBinding of PARENT to CLUSTER; snap NULL: no
 * schedulingPolicySnapshotName */
static void binding(const char *ns, const char *name, const char *parent, const char *cluster,
                    const char *state, const char *snap)
{
    add("---\napiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: %s\nmetadata:\n"
        "  name: %s\n%s%s%s  generation: 1\n  uid: 9b9b-%s\n"
        "  creationTimestamp: \"2024-04-30T10:00:00Z\"\n"
        "  finalizers: [kubernetes-fleet.io/work-cleanup, kubernetes-fleet.io/scheduler-cr-binding-cleanup]\n"
        "  labels: {kubernetes-fleet.io/parent-CRP: %s}\n"
        "spec:\n  state: %s\n  resourceSnapshotName: %s-0-snapshot\n%s%s%s"
        "  targetCluster: %s\n"
        "  clusterDecision: {clusterName: %s, selected: true, reason: \"picked by scheduling policy\"}\n"
        "status:\n  conditions:\n"
        "  - {type: RolloutStarted, status: \"True\", reason: RolloutStarted, observedGeneration: 1, lastTransitionTime: \"2024-04-30T10:00:01Z\"}\n",
        ns ? "ResourceBinding" : "ClusterResourceBinding", name, ns ? "  namespace: " : "",
        ns ? ns : "", ns ? "\n" : "", name, parent, state, parent,
        snap ? "  schedulingPolicySnapshotName: " : "", snap ? snap : "", snap ? "\n" : "", cluster,
        cluster);
}

typedef struct run {
    berth_fleet f;
    berth_fleet_ctx *ctx;
    berth_fleet_outcome o;
    berth_error e;
} run;

static int start(run *r, int reference)
{
    berth_fleet_init(&r->f);
    r->ctx = NULL;
    berth_error_clear(&r->e);
    berth_source src;
    berth_fleet_options opt = {0};
    opt.reference = reference;
    assert_int_equal(berth_time_parse(NOW, &opt.now_ms), 0);
    int rc = berth_doc_load_buffer(&r->f.arena, "t.yaml", yaml, strlen(yaml), &src, &r->e);
    if (!rc)
        rc = berth_fleet_load(&r->f, &src, 1, &r->e);   /* strict: every field is known */
    if (!rc)
        rc = berth_fleet_finalize(&r->f, &r->e);
    if (!rc)
        rc = berth_fleet_ctx_new(&r->f, &opt, &r->ctx, &r->e);
    return rc;
}

static void stop(run *r)
{
    berth_fleet_ctx_free(r->ctx);
    berth_fleet_free(&r->f);
}

/* "selected list|reason of cluster why" for placement name */
static const char *outcome(run *r, const char *name, const char *why)
{
    static char b[2048];
    uint32_t p = berth_fleet_find_placement(&r->f, name);
    assert_int_not_equal(p, BERTH_FLEET_NONE);
    assert_int_equal(berth_fleet_place(r->ctx, p, &r->o), 0);
    b[0] = 0;
    for (uint32_t i = 0; i < r->o.nselected; i++)
        snprintf(b + strlen(b), sizeof b - strlen(b), "%s%s", i ? "," : "",
                 r->f.clusters[r->o.selected[i]].name);
    if (why) {
        uint32_t c = berth_fleet_find_cluster(&r->f, why);
        assert_int_not_equal(c, BERTH_FLEET_NONE);
        snprintf(b + strlen(b), sizeof b - strlen(b), "|");
        berth_fleet_reason(r->ctx, c, b + strlen(b), sizeof b - strlen(b));
    }
    return b;
}

/* Runs the current yaml on both paths and checks placement name. */
static void expect(const char *name, const char *want_sel, const char *why, const char *want_why)
{
    for (int ref = 0; ref <= 1; ref++) {
        run r;
        int rc = start(&r, ref);
        if (rc)
            fail_msg("load: %s", r.e.msg);
        const char *got = outcome(&r, name, why);
        const char *bar = strchr(got, '|');
        size_t n = bar ? (size_t)(bar - got) : strlen(got);
        if (strlen(want_sel) != n || strncmp(got, want_sel, n) ||
            (want_why && (!bar || !strstr(bar, want_why))))
            fail_msg("%s (%s): got '%s', want '%s' and '%s'", name, ref ? "reference" : "fast",
                     got, want_sel, want_why ? want_why : "");
        stop(&r);
    }
}

static const char sorter[] =
    "    placementType: PickN\n    numberOfClusters: 2\n    affinity:\n      clusterAffinity:\n"
    "        preferredDuringSchedulingIgnoredDuringExecution:\n"
    "        - weight: 100\n          preference: {propertySorter: {name: p, sortOrder: Descending}}";

static void four(void)
{
    yaml[0] = 0;
    member("a", "1", "z1");
    member("b", "2", "z1");
    member("c", "3", "z2");
    member("d", "4", "z2");
}

static void test_obsolete_and_unscheduled(void **st)
{
    (void)st;
    /* scores a 0, b 33, c 67, d 100; latest snapshot pn-1 */
    four();
    placement(NULL, "pn", NULL, sorter);
    snapshot(NULL, "pn-0", "pn", "false");
    snapshot(NULL, "pn-1", "pn", "true");
    binding(NULL, "pn-a", "pn", "a", "Bound", "pn-0");       /* obsolete */
    binding(NULL, "pn-d", "pn", "d", "Scheduled", "pn-1");   /* held */
    binding(NULL, "pn-c", "pn", "c", "Unscheduled", "pn-0"); /* ignored */
    /* d held; one pick by score: c (67) beats b (33) and a (0 + 1) */
    expect("pn", "d,c", "a", "ranked below the 2 picked clusters (obsolete binding");
    expect("pn", "d,c", "d", "already holds the placement (binding Scheduled)");

    /* the +1 decides a tie: no preferences, one pick */
    four();
    placement(NULL, "tie", NULL, "    placementType: PickN\n    numberOfClusters: 1");
    snapshot(NULL, "tie-1", "tie", "True");                  /* ParseBool spelling */
    binding(NULL, "tie-b", "tie", "b", "Bound", "tie-0");
    expect("tie", "b", "b", "picked by score (obsolete binding from an older policy snapshot: +1)");
    /* an Unscheduled binding gives nothing: the larger name wins */
    four();
    placement(NULL, "tie", NULL, "    placementType: PickN\n    numberOfClusters: 1");
    snapshot(NULL, "tie-1", "tie", "true");
    binding(NULL, "tie-b", "tie", "b", "Unscheduled", "tie-1");
    expect("tie", "d", "b", "ranked below");
    /* a binding without schedulingPolicySnapshotName is obsolete once the
     * latest snapshot is known ("" differs from its name) */
    four();
    placement(NULL, "tie", NULL, "    placementType: PickN\n    numberOfClusters: 1");
    snapshot(NULL, "tie-1", "tie", "true");
    binding(NULL, "tie-b", "tie", "b", "Bound", NULL);
    expect("tie", "b", "b", "obsolete binding");
    /* an obsolete cluster is filtered again: b now fails the required term */
    four();
    placement(NULL, "req", NULL,
              "    placementType: PickN\n    numberOfClusters: 1\n    affinity:\n"
              "      clusterAffinity:\n        requiredDuringSchedulingIgnoredDuringExecution:\n"
              "          clusterSelectorTerms:\n          - labelSelector: {matchLabels: {zone: z2}}");
    snapshot(NULL, "req-1", "req", "true");
    binding(NULL, "req-b", "req", "b", "Bound", "req-0");
    expect("req", "d", "b", "ClusterAffinity");
    /* the same binding under the latest snapshot is held without filtering */
    four();
    placement(NULL, "req", NULL,
              "    placementType: PickN\n    numberOfClusters: 1\n    affinity:\n"
              "      clusterAffinity:\n        requiredDuringSchedulingIgnoredDuringExecution:\n"
              "          clusterSelectorTerms:\n          - labelSelector: {matchLabels: {zone: z2}}");
    snapshot(NULL, "req-1", "req", "true");
    binding(NULL, "req-b", "req", "b", "Bound", "req-1");
    expect("req", "b", "b", "already holds");
}

static void test_spread_and_shrink(void **st)
{
    (void)st;
    static const char spread[] =
        "    placementType: PickN\n    numberOfClusters: 2\n"
        "    topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone}]";
    /* a held in z1; b's obsolete binding does not count toward z1: the
     * second pick must go to z2 (b would make z1 2 vs 0) */
    four();
    placement(NULL, "sp", NULL, spread);
    snapshot(NULL, "sp-1", "sp", "true");
    binding(NULL, "sp-a", "sp", "a", "Bound", "sp-1");
    binding(NULL, "sp-b", "sp", "b", "Bound", "sp-0");
    expect("sp", "a,d", "b", "TopologySpreadConstraints");
    /* without a known snapshot both bindings hold: nothing to pick */
    four();
    placement(NULL, "sp", NULL, spread);
    binding(NULL, "sp-a", "sp", "a", "Bound", "sp-1");
    binding(NULL, "sp-b", "sp", "b", "Bound", "sp-0");
    expect("sp", "a,b", "b", "already holds");
    /* the annotation names the current snapshot as well */
    four();
    placement(NULL, "sp", "  annotations: {berth.io/policy-snapshot: sp-1}\n", spread);
    binding(NULL, "sp-a", "sp", "a", "Bound", "sp-1");
    binding(NULL, "sp-b", "sp", "b", "Bound", "sp-0");
    expect("sp", "a,d", NULL, NULL);
    /* shrink counts current bindings only: N = 1 with a, c current and d
     * obsolete releases one of a, c (the lower score, a), not d's */
    four();
    placement(NULL, "sh", NULL,
              "    placementType: PickN\n    numberOfClusters: 1\n    affinity:\n"
              "      clusterAffinity:\n        preferredDuringSchedulingIgnoredDuringExecution:\n"
              "        - weight: 100\n          preference: {propertySorter: {name: p, sortOrder: "
              "Descending}}");
    snapshot(NULL, "sh-1", "sh", "true");
    binding(NULL, "sh-a", "sh", "a", "Bound", "sh-1");
    binding(NULL, "sh-c", "sh", "c", "Bound", "sh-1");
    binding(NULL, "sh-d", "sh", "d", "Bound", "sh-0");
    expect("sh", "c", "a", "released");
}

static void test_resource_placement(void **st)
{
    (void)st;
    four();
    /* a CRP and a ResourcePlacement with one name: different placements */
    placement(NULL, "web", NULL, "    placementType: PickN\n    numberOfClusters: 1");
    placement("apps", "web", NULL, sorter);
    snapshot("apps", "web-1", "web", "true");
    binding(NULL, "web-a", "web", "a", "Bound", NULL);        /* the CRP's */
    binding("apps", "web-b", "web", "b", "Bound", "web-0");  /* the RP's, obsolete */
    binding("apps", "web-c", "web", "c", "Scheduled", "web-1");
    expect("web", "a", "a", "already holds");                 /* no snapshot known: held */
    expect("apps/web", "c,d", "b", "obsolete binding");
    /* the JSON names the kind and namespace */
    run r;
    assert_int_equal(start(&r, 0), 0);
    uint32_t p = berth_fleet_find_placement(&r.f, "apps/web");
    assert_int_equal(berth_fleet_place(r.ctx, p, &r.o), 0);
    assert_string_equal(r.f.placements[p].ns, "apps");
    stop(&r);
}

static void test_errors(void **st)
{
    (void)st;
    static const struct {
        int what;
        const char *frag;
    } cases[] = {
        {0, "t.yaml:"},
        {0, "placement 'pn' already has a latest policy snapshot, 'pn-1'"},
        {1, "its annotation berth.io/policy-snapshot says 'pn-9'"},
        {2, "metadata.labels.kubernetes-fleet.io/parent-CRP: no ClusterResourcePlacement named "
            "'nope'"},
        {3, "metadata.labels.kubernetes-fleet.io/is-latest-snapshot: expected \"true\" or "
            "\"false\", got 'yes'"},
        {4, "no ResourcePlacement named 'other/pn'"},
        {5, "placement 'pn' already has a binding to cluster 'a'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        four();
        placement(NULL, "pn", cases[i].what == 1 ? "  annotations: {berth.io/policy-snapshot: pn-9}\n"
                                                 : NULL, sorter);
        snapshot(NULL, "pn-1", "pn", "true");
        if (cases[i].what == 0)
            snapshot(NULL, "pn-2", "pn", "true");
        if (cases[i].what == 2)
            snapshot(NULL, "nope-0", "nope", "true");
        if (cases[i].what == 3)
            snapshot(NULL, "pn-0", "pn", "yes");
        if (cases[i].what == 4)
            binding("other", "x", "pn", "a", "Bound", "pn-1");
        if (cases[i].what == 5) {
            binding(NULL, "x", "pn", "a", "Bound", "pn-1");
            binding(NULL, "y", "pn", "a", "Scheduled", "pn-0");
        }
        run r;
        int rc = start(&r, 0);
        if (rc != BERTH_EINVAL || !strstr(r.e.msg, cases[i].frag))
            fail_msg("case %zu: rc %d '%s', want '%s'", i, rc, r.e.msg, cases[i].frag);
        stop(&r);
    }
    /* an Unscheduled binding may name a cluster that is gone, and one
     * Unscheduled and one Scheduled binding may share a cluster */
    four();
    placement(NULL, "pn", NULL, sorter);
    binding(NULL, "x", "pn", "left-the-fleet", "Unscheduled", "pn-0");
    binding(NULL, "y", "pn", "a", "Unscheduled", "pn-0");
    binding(NULL, "z", "pn", "a", "Scheduled", "pn-1");
    expect("pn", "a,d", NULL, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_obsolete_and_unscheduled),
        cmocka_unit_test(test_spread_and_shrink),
        cmocka_unit_test(test_resource_placement),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
