/* tests/unit/test_planner_warnings.c - the planners' warnings about input
 * they ignore (disrupt/warnings.c, autoscale/warnings.c) and the shared list
 * they join (berth_skips_warn, berth_warn_names): NodeClaims without their
 * Node or NodePool, Nodes of a missing NodePool, unpriced managed Nodes,
 * Pods on missing Nodes, a missing AKSNodeClass; oversized headroom units,
 * Nodes labelled with a missing group or in no group; dedupe, the "and N
 * more" tail, messages not counted as skipped documents. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "berth/autoscale.h"
#include "berth/disrupt.h"

static int has(const berth_skips *s, const char *text)
{
    char line[1024];
    int n = 0;
    for (uint32_t i = 0; i < s->n; i++) {
        berth_skip_text(&s->items[i], line, sizeof line);
        n += !strcmp(line, text);
    }
    return n;
}

static void test_skips_warn(void **st)
{
    (void)st;
    berth_skips s = {0};
    assert_int_equal(berth_skips_add(&s, "Event", NULL), 0);
    assert_int_equal(berth_skips_warn(&s, "NodePool %s: gone", "a"), 0);
    assert_int_equal(berth_skips_warn(&s, "NodePool %s: gone", "a"), 0); /* deduped */
    assert_int_equal(berth_skips_add(&s, "NodePool a: gone", NULL), 0); /* a kind, not the message */
    assert_int_equal(s.n, 3);
    assert_int_equal(berth_skips_total(&s), 2);
    assert_int_equal(has(&s, "NodePool a: gone"), 1);
    assert_int_equal(has(&s, "skipped 1 Event"), 1);
    berth_warn_names w = {0};
    for (int i = 0; i < 7; i++)
        berth_warn_names_add(&w, "n%d", i);
    assert_int_equal(berth_skips_warn_names(&s, &w, "Node", "that are odd"), 0);
    assert_int_equal(has(&s, "7 Nodes that are odd: n0, n1, n2, n3, n4, and 2 more"), 1);
    berth_warn_names one = {0}, none = {0};
    berth_warn_names_add(&one, "x (%s)", "y");
    assert_int_equal(berth_skips_warn_names(&s, &one, "Pod", "w"), 0);
    assert_int_equal(berth_skips_warn_names(&s, &none, "Pod", "never"), 0);
    assert_int_equal(has(&s, "1 Pod w: x (y)"), 1);
    assert_int_equal(s.n, 5);
    berth_skips_free(&s);
}

static const char disrupt_yaml[] =
    "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: general}\nspec:\n"
    "  template:\n    spec:\n"
    "      nodeClassRef: {group: karpenter.azure.com, kind: AKSNodeClass, name: missing}\n"
    "---\napiVersion: karpenter.azure.com/v1beta1\nkind: AKSNodeClass\nmetadata: {name: default}\n"
    "spec: {}\n"
    "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: D4}\nspec:\n"
    "  capacity: {cpu: \"4\", memory: 16Gi}\n"
    "  offerings: [{zone: z1, capacityType: on-demand, price: 0.2}]\n"
    "---\napiVersion: karpenter.sh/v1\nkind: NodeClaimList\nitems:\n"
    "- metadata:\n    name: ok\n    labels: {karpenter.sh/nodepool: general}\n"
    "  status: {nodeName: node-ok}\n"
    "- metadata:\n    name: launching\n    labels: {karpenter.sh/nodepool: general}\n"
    "  status: {nodeName: node-launching}\n"
    "- metadata:\n    name: gone\n    labels: {karpenter.sh/nodepool: general}\n"
    "    deletionTimestamp: \"2024-05-01T11:00:00Z\"\n"
    "  status: {nodeName: node-gone}\n"
    "- metadata:\n    name: orphan\n    labels: {karpenter.sh/nodepool: batch}\n"
    "  status: {nodeName: node-orphan}\n"
    "---\napiVersion: v1\nkind: NodeList\nitems:\n"
    "- metadata:\n    name: node-ok\n    labels: {karpenter.sh/nodepool: general, "
    "node.kubernetes.io/instance-type: D4, topology.kubernetes.io/zone: z1, "
    "karpenter.sh/capacity-type: on-demand}\n"
    "  status: {allocatable: {cpu: \"4\", memory: 16Gi, pods: \"30\"}}\n"
    "- metadata:\n    name: node-orphan\n    labels: {karpenter.sh/nodepool: batch, "
    "node.kubernetes.io/instance-type: D4, topology.kubernetes.io/zone: z2, "
    "karpenter.sh/capacity-type: on-demand}\n"
    "  status: {allocatable: {cpu: \"4\", memory: 16Gi, pods: \"30\"}}\n"
    "- metadata:\n    name: node-legacy\n    labels: {karpenter.sh/nodepool: legacy}\n"
    "  status: {allocatable: {cpu: \"4\", memory: 16Gi, pods: \"30\"}}\n"
    "- metadata:\n    name: plain\n"
    "  status: {allocatable: {cpu: \"4\", memory: 16Gi, pods: \"30\"}}\n"
    "---\napiVersion: v1\nkind: PodList\nitems:\n"
    "- metadata: {name: lost, namespace: default, uid: 1}\n"
    "  spec: {nodeName: node-vanished, containers: [{name: c}]}\n"
    "  status: {phase: Running}\n"
    "- metadata: {name: fine, namespace: default, uid: 2}\n"
    "  spec: {nodeName: node-ok, containers: [{name: c}]}\n"
    "  status: {phase: Running}\n";

static void test_disrupt_warnings(void **st)
{
    (void)st;
    berth_disrupt m;
    berth_disrupt_init(&m);
    berth_error e;
    berth_source src;
    assert_int_equal(berth_doc_load_buffer(&m.kube.arena, "w.yaml", disrupt_yaml,
                                           sizeof disrupt_yaml - 1, &src, &e), 0);
    assert_int_equal(berth_disrupt_load(&m, &src, 0, &e), 0);
    assert_int_equal(berth_disrupt_finalize(&m, &e), 0);
    const berth_skips *s = &m.kube.skipped;
    /* the claim being deleted is not reported: its Node is just gone */
    assert_int_equal(has(s, "1 NodeClaim whose Node is not in the input (taken as still "
                            "launching: never disrupted, counted for its NodePool's limits): "
                            "launching (node node-launching)"), 1);
    assert_int_equal(has(s, "1 NodeClaim whose NodePool is not in the input (never disrupted, "
                            "counted for no NodePool's budgets or limits): orphan (NodePool batch)"),
                     1);
    /* node-orphan has a claim (reported there); node-legacy has none */
    assert_int_equal(has(s, "1 Node labelled karpenter.sh/nodepool with a NodePool that is not in "
                            "the input (never disrupted): node-legacy (NodePool legacy)"), 1);
    assert_int_equal(has(s, "2 Nodes of a NodePool without a price (no InstanceType offering "
                            "matches their instance type, zone and capacity type: taken as 0 per "
                            "hour, so no replacement is cheaper): node-orphan (D4 z2 on-demand), "
                            "node-legacy (? ? ?)"), 1);
    assert_int_equal(has(s, "1 Pod bound to a Node that is not in the input (ignored: neither "
                            "moved nor counted): default/lost (node node-vanished)"), 1);
    assert_int_equal(has(s, "NodePool general: nodeClassRef names AKSNodeClass missing, which is "
                            "not in the input (its NodeClaims' AKSNodeClass drift is not checked)"),
                     1);
    assert_int_equal(s->n, 6);
    assert_int_equal(berth_skips_total(s), 0);
    /* the plan still runs on what is there */
    berth_dplan p;
    memset(&p, 0, sizeof p);
    berth_dplan_options o = {.now = 1714564800};
    assert_int_equal(berth_disrupt_plan(&m, &o, &p, &e), 0);
    berth_dplan_free(&p);
    berth_disrupt_free(&m);
}

static const char autoscale_yaml[] =
    "apiVersion: berth.io/v1\nkind: VirtualNodeGroup\nmetadata: {name: general}\n"
    "spec:\n  labels: {pool: general}\n  instanceTypes: [m5.large]\n"
    "  headroom:\n  - {cpuPerUnit: \"1\", memoryPerUnit: 1Gi, numOfUnits: 2}\n"
    "  - {cpuPerUnit: 1500m, memoryPerUnit: 64Gi, numOfUnits: 4}\n"
    "---\napiVersion: berth.io/v1\nkind: VirtualNodeGroup\nmetadata: {name: gpu}\n"
    "spec:\n  labels: {accelerator: nvidia}\n"
    "---\napiVersion: berth.io/v1\nkind: Headroom\nmetadata: {name: g}\n"
    "spec: {virtualNodeGroup: gpu, cpuPerUnit: \"1\", memoryPerUnit: 1Gi, gpuPerUnit: 1, "
    "numOfUnits: 1}\n"
    "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: m5.large}\nspec:\n"
    "  capacity: {cpu: \"2\", memory: 8Gi}\n"
    "  offerings: [{zone: a, capacityType: on-demand, price: 0.096}]\n"
    "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: m5.24xlarge}\nspec:\n"
    "  capacity: {cpu: \"96\", memory: 384Gi}\n"
    "  offerings: [{zone: a, capacityType: on-demand, price: 4.6}]\n"
    "---\napiVersion: v1\nkind: NodeList\nitems:\n"
    "- metadata:\n    name: g1\n    labels: {pool: general}\n"
    "  status: {allocatable: {cpu: \"2\", memory: 8Gi, pods: \"30\"}}\n"
    "- metadata:\n    name: x1\n    labels: {berth.io/virtual-node-group: old}\n"
    "  status: {allocatable: {cpu: \"2\", memory: 8Gi, pods: \"30\"}}\n"
    "- metadata:\n    name: sys1\n"
    "  status: {allocatable: {cpu: \"2\", memory: 8Gi, pods: \"30\"}}\n";

static void test_autoscale_warnings(void **st)
{
    (void)st;
    berth_autoscale m;
    berth_autoscale_init(&m);
    berth_error e;
    berth_source src;
    assert_int_equal(berth_doc_load_buffer(&m.kube.arena, "a.yaml", autoscale_yaml,
                                           sizeof autoscale_yaml - 1, &src, &e), 0);
    assert_int_equal(berth_autoscale_load(&m, &src, 0, &e), 0);
    assert_int_equal(berth_autoscale_finalize(&m, &e), 0);
    const berth_skips *s = &m.kube.skipped;
    /* 64Gi is more than m5.large, the one type general allows (the 96-cpu
     * type it does not allow would hold it); 1 cpu / 1Gi fits */
    assert_int_equal(has(s, "VirtualNodeGroup general: headroom unit (cpu 1.5, memory 64Gi, "
                            "gpu 0) is larger than the allocatable of every instance type the "
                            "group allows (its 4 units are never held)"), 1);
    /* a GPU unit: no type has GPUs */
    assert_int_equal(has(s, "VirtualNodeGroup gpu: headroom unit (cpu 1, memory 1Gi, gpu 1) is "
                            "larger than the allocatable of every instance type the group allows "
                            "(its 1 unit is never held)"), 1);
    assert_int_equal(has(s, "1 Node labelled berth.io/virtual-node-group with a group that is not "
                            "in the input (in no group: never scaled down or replaced, counted "
                            "for no group's maxNodes or headroom): x1 (old)"), 1);
    assert_int_equal(has(s, "1 Node in no virtual node group (no berth.io/virtual-node-group "
                            "label, and no group whose labels and taints they all carry: never "
                            "scaled down or replaced, counted for no group's maxNodes or "
                            "headroom): sys1"), 1);
    assert_int_equal(s->n, 4);
    berth_autoscale_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_skips_warn),
        cmocka_unit_test(test_disrupt_warnings),
        cmocka_unit_test(test_autoscale_warnings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
