/* tests/unit/test_autoscale.c - the autoscaler pass (SPEC 5) on small
 * clusters written as YAML: each purchase tier (reservation, spot by
 * market score, on-demand fallback, fallbackToOd false), spotPercentage,
 * headroom, group matching by label and by taint, GPU pods, maxNodes,
 * each scale-down blocker (restrict-scale-down label, safe-to-evict
 * annotation, PDB, minNodes, no room) and DaemonSet pods ignored, and
 * load errors of the strict berth.io/v1 kinds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "autoscale_fixture.h"

/* m.small: 2 cpu 4Gi; m.large: 8 cpu 32Gi; g.gpu: 8 cpu 32Gi 1 GPU. */
static void types(buf *b, int spot_available)
{
    add(b, "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: m.small}\nspec:\n"
           "  capacity: {cpu: \"2\", memory: 4Gi, pods: 20}\n  offerings:\n"
           "  - {zone: z1, capacityType: on-demand, price: 0.10}\n"
           "  - {zone: z1, capacityType: spot, price: 0.03, interruptionRate: 0.1, available: %s}\n"
           "  - {zone: z2, capacityType: on-demand, price: 0.10}\n"
           "  - {zone: z2, capacityType: spot, price: 0.03, interruptionRate: 0.1, available: %s}\n",
        spot_available ? "true" : "false", spot_available ? "true" : "false");
    add(b, "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: m.large}\nspec:\n"
           "  capacity: {cpu: \"8\", memory: 32Gi, pods: 50}\n  offerings:\n"
           "  - {zone: z1, capacityType: on-demand, price: 0.40}\n"
           "  - {zone: z1, capacityType: spot, price: 0.10, interruptionRate: 0.05, available: %s}\n",
        spot_available ? "true" : "false");
    add(b, "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: g.gpu}\nspec:\n"
           "  capacity: {cpu: \"8\", memory: 32Gi, pods: 50, nvidia.com/gpu: 1}\n  offerings:\n"
           "  - {zone: z1, capacityType: on-demand, price: 2.0}\n"
           "  - {zone: z1, capacityType: spot, price: 0.9}\n");
}

static void vng(buf *b, const char *name, const char *spec)
{
    add(b, "---\napiVersion: berth.io/v1\nkind: VirtualNodeGroup\nmetadata: {name: %s}\nspec:\n%s",
        name, spec);
}

static void node(buf *b, const char *name, const char *vngname, const char *cpu, const char *ct,
                 const char *type, const char *zone)
{
    add(b, "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n  labels:\n"
           "    berth.io/virtual-node-group: %s\n    node.kubernetes.io/instance-type: %s\n"
           "    topology.kubernetes.io/zone: %s\n    karpenter.sh/capacity-type: %s\n"
           "    kubernetes.io/hostname: %s\n"
           "status:\n  allocatable: {cpu: \"%s\", memory: 16Gi, pods: \"30\"}\n",
        name, vngname, type, zone, ct, name, cpu);
}

/* A pod; node may be NULL (pending); extra goes under spec. */
static void pod(buf *b, const char *name, const char *nodename, const char *cpu, const char *meta,
                const char *extra)
{
    add(b, "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: default\n%s"
           "spec:\n%s%s%s%s  containers: [{name: c, resources: {requests: {cpu: \"%s\", memory: "
           "512Mi}}}]\n",
        name, meta ? meta : "", nodename ? "  nodeName: " : "", nodename ? nodename : "",
        nodename ? "\n" : "", extra ? extra : "", cpu);
}

/* One plan at AT with default options; a failure is printed. */
static void plan(run *r, buf *b)
{
    plan_opt(r, b, (berth_aplan_options){0});
    if (r->rc)
        fprintf(stderr, "error: %s\n", r->e.msg);
}

static const berth_ascaleup *up_of(run *r, const char *podname)
{
    for (uint32_t i = 0; i < r->p.nup; i++)
        for (uint32_t j = 0; j < r->p.up[i].npods; j++)
            if (!strcmp(r->m.kube.pods[r->p.up[i].pods[j]].name, podname))
                return &r->p.up[i];
    return NULL;
}

static int removed(run *r, const char *nodename)
{
    return down_of(r, nodename) != NULL;
}

static void test_spot_by_market_score(void **st)
{
    (void)st;
    static buf b;
    b.n = 0;
    types(&b, 1);
    vng(&b, "general", "  instanceTypes: [m.small, m.large]\n");
    for (int i = 0; i < 6; i++) {
        char n[16];
        snprintf(n, sizeof n, "w%d", i);
        pod(&b, n, NULL, "1500m", NULL, NULL);
    }
    run r;
    plan(&r, &b);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.p.nunsched, 0);
    /* six 1.5-cpu pods: one m.large spot (5 pods, 0.105/h) beats m.small
     * spot (1 pod per node, 0.033/h each) per packed work */
    const berth_ascaleup *u = up_of(&r, "w0");
    assert_non_null(u);
    assert_int_equal(u->capacity_type, BERTH_CT_SPOT);
    assert_string_equal(r.m.types[u->type].name, "m.large");
    uint32_t nodes = 0;
    for (uint32_t i = 0; i < r.p.nup; i++)
        nodes += r.p.up[i].count;
    assert_int_equal(nodes, 2);
    done(&r);
}

static void test_reservation_first(void **st)
{
    (void)st;
    static buf b;
    b.n = 0;
    types(&b, 1);
    vng(&b, "general", "  instanceTypes: [m.small]\n");
    add(&b, "---\napiVersion: berth.io/v1\nkind: Reservation\nmetadata: {name: ri}\n"
            "spec: {instanceType: m.small, zone: z2, count: 1}\n");
    pod(&b, "a", NULL, "1500m", NULL, NULL);
    pod(&b, "b", NULL, "1500m", NULL, NULL);
    run r;
    plan(&r, &b);
    assert_int_equal(r.rc, 0);
    const berth_ascaleup *ua = up_of(&r, "a"), *ub = up_of(&r, "b");
    assert_non_null(ua);
    assert_non_null(ub);
    assert_int_equal(ua->capacity_type, BERTH_CT_RESERVED);
    assert_string_equal(ua->zone, "z2");
    assert_string_equal(ua->reservation, "ri");
    assert_int_equal(ub->capacity_type, BERTH_CT_SPOT); /* the one unit is used */
    done(&r);
}

static void test_reservation_used_by_existing_node(void **st)
{
    (void)st;
    static buf b;
    b.n = 0;
    types(&b, 1);
    vng(&b, "general", "  instanceTypes: [m.small]\n");
    add(&b, "---\napiVersion: berth.io/v1\nkind: Reservation\nmetadata: {name: ri}\n"
            "spec: {instanceFamily: m, count: 1}\n");
    node(&b, "od-1", "general", "2", "on-demand", "m.small", "z1");
    pod(&b, "full", "od-1", "2", NULL, NULL);
    pod(&b, "a", NULL, "1500m", NULL, NULL);
    run r;
    plan(&r, &b);
    assert_int_equal(r.rc, 0);
    const berth_ascaleup *u = up_of(&r, "a");
    assert_non_null(u);
    assert_int_equal(u->capacity_type, BERTH_CT_SPOT);
    done(&r);
}

static void test_on_demand_fallback(void **st)
{
    (void)st;
    static buf b;
    b.n = 0;
    types(&b, 0);
    vng(&b, "general", "  instanceTypes: [m.small]\n");
    vng(&b, "strict", "  labels: {tier: strict}\n  instanceTypes: [m.small]\n"
                      "  fallbackToOd: false\n");
    pod(&b, "a", NULL, "1", NULL, NULL);
    pod(&b, "s", NULL, "1", NULL, "  nodeSelector: {tier: strict}\n");
    run r;
    plan(&r, &b);
    assert_int_equal(r.rc, 0);
    const berth_ascaleup *u = up_of(&r, "a");
    assert_non_null(u);
    assert_int_equal(u->capacity_type, BERTH_CT_ON_DEMAND);
    assert_non_null(unsched_of(&r, "s"));
    assert_non_null(strstr(unsched_of(&r, "s"), "fallbackToOd is false"));
    done(&r);
}

static void test_spot_percentage(void **st)
{
    (void)st;
    static buf b;
    b.n = 0;
    types(&b, 1);
    vng(&b, "general", "  instanceTypes: [m.small]\n  spotPercentage: 50\n");
    pod(&b, "a", NULL, "1500m", NULL, NULL);
    pod(&b, "b", NULL, "1500m", NULL, NULL);
    run r;
    plan(&r, &b);
    assert_int_equal(r.rc, 0);
    assert_int_equal(up_of(&r, "a")->capacity_type, BERTH_CT_SPOT);
    assert_int_equal(up_of(&r, "b")->capacity_type, BERTH_CT_ON_DEMAND);
    done(&r);
}

static void test_headroom(void **st)
{
    (void)st;
    static buf b;
    b.n = 0;
    types(&b, 1);
    vng(&b, "general", "  instanceTypes: [m.small]\n  zones: [z1]\n");
    add(&b, "---\napiVersion: berth.io/v1\nkind: Headroom\nmetadata: {name: hr}\n"
            "spec: {virtualNodeGroup: general, cpuPerUnit: \"1\", memoryPerUnit: 1Gi, "
            "numOfUnits: 3}\n");
    run r;
    plan(&r, &b);
    assert_int_equal(r.rc, 0);
    /* 3 units of 1 cpu: two m.small nodes (2 units each) */
    assert_int_equal(r.p.nup, 1);
    assert_int_equal(r.p.up[0].count, 2);
    assert_int_equal(r.p.up[0].headroom_units, 4);
    assert_int_equal(r.p.up[0].npods, 0);
    done(&r);
}

static void test_vng_match_label_taint_gpu(void **st)
{
    (void)st;
    static buf b;
    b.n = 0;
    types(&b, 1);
    vng(&b, "general", "  instanceTypes: [m.small, m.large]\n");
    vng(&b, "batch", "  labels: {team: batch}\n  instanceTypes: [m.small]\n");
    vng(&b, "gpu", "  labels: {accel: nvidia}\n  instanceTypes: [g.gpu]\n"
                   "  taints: [{key: nvidia.com/gpu, value: \"true\", effect: NoSchedule}]\n");
    pod(&b, "plain", NULL, "1", NULL, NULL);
    pod(&b, "batchy", NULL, "1", NULL, "  nodeSelector: {team: batch}\n");
    pod(&b, "trainer", NULL, "1", NULL,
        "  tolerations: [{key: nvidia.com/gpu, operator: Exists}]\n"
        "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
        "{nodeSelectorTerms: [{matchExpressions: [{key: accel, operator: In, values: [nvidia]}]}]}}}\n");
    /* a GPU request: only g.gpu offers it */
    add(&b, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: cuda, namespace: default}\nspec:\n"
            "  tolerations: [{key: nvidia.com/gpu, operator: Exists}]\n"
            "  containers: [{name: c, resources: {requests: {cpu: \"1\", nvidia.com/gpu: 1}, "
            "limits: {nvidia.com/gpu: 1}}}]\n");
    /* a GPU request without the toleration fits no group */
    add(&b, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: cuda-intolerant, namespace: default}\n"
            "spec:\n  containers: [{name: c, resources: {requests: {cpu: \"1\", nvidia.com/gpu: 1}, "
            "limits: {nvidia.com/gpu: 1}}}]\n");
    run r;
    plan(&r, &b);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.m.vngs[up_of(&r, "plain")->vng].name, "general");
    assert_string_equal(r.m.vngs[up_of(&r, "batchy")->vng].name, "batch");
    assert_string_equal(r.m.vngs[up_of(&r, "trainer")->vng].name, "gpu");
    assert_string_equal(r.m.vngs[up_of(&r, "cuda")->vng].name, "gpu");
    assert_non_null(unsched_of(&r, "cuda-intolerant"));
    assert_non_null(strstr(unsched_of(&r, "cuda-intolerant"), "untolerated taint"));
    done(&r);
}

static void test_vng_max(void **st)
{
    (void)st;
    static buf b;
    b.n = 0;
    types(&b, 1);
    vng(&b, "general", "  instanceTypes: [m.small]\n  maxNodes: 2\n");
    node(&b, "n1", "general", "2", "spot", "m.small", "z1");
    pod(&b, "busy", "n1", "2", NULL, NULL);
    for (int i = 0; i < 3; i++) {
        char n[16];
        snprintf(n, sizeof n, "p%d", i);
        pod(&b, n, NULL, "1500m", NULL, NULL);
    }
    run r;
    plan(&r, &b);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.p.nup, 1);
    assert_int_equal(r.p.up[0].count, 1);
    assert_int_equal(r.p.nunsched, 2);
    assert_non_null(strstr(r.p.unsched[0].reason, "maxNodes 2"));
    done(&r);
}

/* Two half-empty nodes; the pods of the emptier one fit on the other. */
static void scale_down_case(buf *b, const char *meta, const char *extra_docs, const char *spec)
{
    b->n = 0;
    types(b, 1);
    vng(b, "general", spec ? spec : "  instanceTypes: [m.small]\n");
    node(b, "big", "general", "8", "on-demand", "m.large", "z1");
    node(b, "little", "general", "8", "on-demand", "m.large", "z1");
    pod(b, "stay", "big", "3", NULL, NULL);
    pod(b, "mover", "little", "1", meta, NULL);
    add(b, "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: ds\n  namespace: default\n"
           "  ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: agent, uid: u1, "
           "controller: true}]\nspec:\n  nodeName: little\n  containers: [{name: c}]\n");
    if (extra_docs)
        add(b, "%s", extra_docs);
}

static void test_scale_down_moves(void **st)
{
    (void)st;
    static buf b;
    scale_down_case(&b, NULL, NULL, NULL);
    run r;
    plan(&r, &b);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.p.ndown, 1);
    assert_string_equal(r.m.kube.nodes[r.p.down[0].node].name, "little");
    assert_int_equal(r.p.down[0].nmoves, 1); /* the DaemonSet pod does not move */
    assert_string_equal(r.m.kube.pods[r.p.down[0].moves[0].pod].name, "mover");
    assert_string_equal(r.m.kube.nodes[r.p.down[0].moves[0].node].name, "big");
    assert_non_null(blocked_of(&r, "big")); /* then big cannot go: stay+mover fit nowhere */
    done(&r);
}

static void test_scale_down_blockers(void **st)
{
    (void)st;
    static buf b;
    run r;
    scale_down_case(&b, "  labels: {spotinst.io/restrict-scale-down: \"true\"}\n", NULL, NULL);
    plan(&r, &b);
    assert_int_equal(r.rc, 0);
    assert_false(removed(&r, "little"));
    assert_non_null(strstr(blocked_of(&r, "little"), "restrict-scale-down"));
    done(&r);

    scale_down_case(&b,
                    "  annotations: {cluster-autoscaler.kubernetes.io/safe-to-evict: \"false\"}\n",
                    NULL, NULL);
    plan(&r, &b);
    assert_false(removed(&r, "little"));
    assert_non_null(strstr(blocked_of(&r, "little"), "safe-to-evict"));
    done(&r);

    scale_down_case(&b, "  labels: {app: db}\n",
                    "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: db, "
                    "namespace: default}\nspec:\n  minAvailable: 1\n  selector: {matchLabels: "
                    "{app: db}}\n", NULL);
    plan(&r, &b);
    assert_false(removed(&r, "little"));
    assert_non_null(strstr(blocked_of(&r, "little"), "PodDisruptionBudget default/db"));
    done(&r);

    scale_down_case(&b, NULL, NULL, "  instanceTypes: [m.small]\n  minNodes: 2\n");
    plan(&r, &b);
    assert_int_equal(r.p.ndown, 0);
    assert_non_null(strstr(blocked_of(&r, "little"), "minNodes 2"));
    done(&r);
}

static void test_load_errors(void **st)
{
    (void)st;
    static const struct {
        const char *doc, *want;
    } cases[] = {
        {"apiVersion: berth.io/v1\nkind: VirtualNodeGroup\nmetadata: {name: a}\nspec: {maxNode: 3}\n",
         "maxNode"},
        {"apiVersion: berth.io/v1\nkind: VirtualNodeGroup\nmetadata: {name: a}\n"
         "spec: {minNodes: 3, maxNodes: 2}\n", "below minNodes"},
        {"apiVersion: berth.io/v1\nkind: VirtualNodeGroup\nmetadata: {name: a}\n"
         "spec: {spotPercentage: 101}\n", "spotPercentage"},
        {"apiVersion: berth.io/v1\nkind: Reservation\nmetadata: {name: r}\n"
         "spec: {instanceType: m.small, count: 1, hourlyCommitment: 2}\n", "exactly one of count"},
        {"apiVersion: berth.io/v1\nkind: Reservation\nmetadata: {name: r}\nspec: {count: 1}\n",
         "instanceFamily"},
        {"apiVersion: berth.io/v1\nkind: Headroom\nmetadata: {name: h}\nspec: {numOfUnits: 1}\n",
         "cpuPerUnit"},
        {"apiVersion: berth.io/v1\nkind: Headroom\nmetadata: {name: h}\n"
         "spec: {virtualNodeGroup: nope, cpuPerUnit: 1, numOfUnits: 1}\n", "no VirtualNodeGroup"},
        {"apiVersion: berth.io/v1\nkind: VirtualNodeGroup\nmetadata: {name: a}\n"
         "spec: {instanceTypes: [nope]}\n", "no InstanceType named 'nope'"},
        {"apiVersion: v2\nkind: VirtualNodeGroup\nmetadata: {name: a}\nspec: {}\n",
         "needs apiVersion berth.io/v1"},
        /* a Node annotation the planner reads from the kube model, located */
        {"apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata:\n"
         "    name: n\n    annotations: {berth.io/unneeded-since: \"5m ago\"}\n",
         "bad.yaml:8:44: metadata.annotations.berth.io/unneeded-since: expected an RFC 3339 time "
         "such as 2024-05-01T12:00:00Z, got '5m ago'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        berth_autoscale m;
        berth_autoscale_init(&m);
        berth_error e;
        berth_error_clear(&e);
        berth_source src;
        int rc = berth_doc_load_buffer(&m.kube.arena, "bad.yaml", cases[i].doc,
                                       strlen(cases[i].doc), &src, &e);
        if (!rc)
            rc = berth_autoscale_load(&m, &src, 0, &e);
        if (!rc)
            rc = berth_autoscale_finalize(&m, &e);
        if (rc != BERTH_EINVAL || !strstr(e.msg, cases[i].want))
            fail_msg("case %zu: rc %d msg '%s', want '%s'", i, rc, e.msg, cases[i].want);
        berth_autoscale_free(&m);
    }
}

static void test_market_score(void **st)
{
    (void)st;
    berth_offering o = {"z", BERTH_CT_SPOT, 0.10, 1, 0.2};
    assert_true(berth_market_score(&o, 3, 3) > 0.1199 && berth_market_score(&o, 3, 3) < 0.1201);
    assert_true(berth_market_score(&o, 5, 3) > berth_market_score(&o, 3, 3));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spot_by_market_score),
        cmocka_unit_test(test_reservation_first),
        cmocka_unit_test(test_reservation_used_by_existing_node),
        cmocka_unit_test(test_on_demand_fallback),
        cmocka_unit_test(test_spot_percentage),
        cmocka_unit_test(test_headroom),
        cmocka_unit_test(test_vng_match_label_taint_gpu),
        cmocka_unit_test(test_vng_max),
        cmocka_unit_test(test_scale_down_moves),
        cmocka_unit_test(test_scale_down_blockers),
        cmocka_unit_test(test_load_errors),
        cmocka_unit_test(test_market_score),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
