/* tests/unit/test_disrupt_nodepool.c - what a NodePool allows a replacement
 * (docs/disrupt.md "Instance type labels", "NodePool weight and limits"):
 * the Standard_D8s_v3 that may not become a Standard_B2s under
 * karpenter.azure.com/sku-family In [D] (and does without it), AWS category
 * and generation requirements (also under the EKS Auto Mode keys), pods
 * selecting derived labels on the new node, Karpenter's weight order (and
 * the later name first on equal weights), limits capping a launch
 * (candidates do not count, a launching NodeClaim does, "nodes"), minValues,
 * and the `excluded` reasons. Both planning paths (session and reference)
 * must agree on every case. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "berth/disrupt.h"
#include "berth/fleet.h"

#include "disrupt_fixture.h"

#define NOW "2024-05-01T12:00:00Z"

static void pool(buf *b, const char *name, const char *extra_spec, const char *reqs)
{
    add(b, "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: %s}\nspec:\n%s"
           "  disruption: {consolidateAfter: 0s, budgets: [{nodes: \"100%%\"}]}\n"
           "  template:\n    spec:\n"
           "      nodeClassRef: {group: karpenter.azure.com, kind: AKSNodeClass, name: default}\n"
           "      requirements:\n%s",
        name, extra_spec ? extra_spec : "",
        reqs ? reqs : "      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}\n");
}

static void itype(buf *b, const char *name, const char *cpu, const char *mem, double price)
{
    add(b, "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: %s}\nspec:\n"
           "  capacity: {cpu: \"%s\", memory: %s, pods: 110}\n"
           "  offerings: [{zone: z1, capacityType: on-demand, price: %g}]\n",
        name, cpu, mem, price);
}

/* A managed, initialised node of pool/type with the claim's labels. */
static void node(buf *b, const char *name, const char *pool_name, const char *type, const char *cpu)
{
    add(b, "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: %s\n"
           "  labels: {karpenter.sh/nodepool: %s, node.kubernetes.io/instance-type: %s}\n"
           "  creationTimestamp: \"2024-04-30T00:00:00Z\"\n"
           "status:\n  nodeName: %s\n  conditions:\n"
           "  - {type: Initialized, status: \"True\", lastTransitionTime: \"2024-04-30T00:05:00Z\"}\n"
           "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n"
           "  labels: {karpenter.sh/nodepool: %s, karpenter.sh/initialized: \"true\", "
           "node.kubernetes.io/instance-type: %s, karpenter.sh/capacity-type: on-demand, "
           "topology.kubernetes.io/zone: z1, kubernetes.io/hostname: %s}\n"
           "status:\n  capacity: {cpu: \"%s\", memory: 32Gi, pods: \"110\"}\n"
           "  allocatable: {cpu: \"%s\", memory: 32Gi, pods: \"110\"}\n"
           "  conditions: [{type: Ready, status: \"True\"}]\n",
        name, pool_name, type, name, name, pool_name, type, name, cpu, cpu);
}

static void pod(buf *b, const char *name, const char *node_name, const char *cpu,
                const char *selector)
{
    add(b, "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: default\n"
           "  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: u1, controller: true}]\n"
           "spec:\n  nodeName: %s\n%s  containers:\n  - name: c\n"
           "    resources: {requests: {cpu: \"%s\", memory: 1Gi}}\n"
           "status:\n  phase: Running\n  startTime: \"2024-04-30T00:00:00Z\"\n"
           "  conditions: [{type: Ready, status: \"True\"}]\n",
        name, node_name, selector ? selector : "", cpu);
}

typedef struct result {
    char action[256];           /* "replace:TYPE@POOL" or "delete" or "none" */
    char excluded[1024];        /* "TYPE=reason | ..." */
} result;

/* Plans b both ways (session and reference) and requires they agree. */
static void plan(const buf *b, result *out)
{
    result r[2];
    for (int ref = 0; ref < 2; ref++) {
        berth_disrupt m;
        berth_error e;
        if (load_model(&m, b, &e))
            fail_msg("load: %s\n%s", e.msg, b->s);
        int64_t ms;
        assert_int_equal(berth_time_parse(NOW, &ms), 0);
        berth_dplan_options o = {ms / 1000, 0, ref, 0};
        berth_dplan p;
        if (berth_disrupt_plan(&m, &o, &p, &e))
            fail_msg("plan: %s", e.msg);
        snprintf(r[ref].action, sizeof r[ref].action, "none");
        r[ref].excluded[0] = 0;
        for (uint32_t i = 0; i < p.nactions; i++) {
            const berth_daction *a = &p.actions[i];
            if (!a->replace) {
                snprintf(r[ref].action, sizeof r[ref].action, "delete");
                continue;
            }
            snprintf(r[ref].action, sizeof r[ref].action, "replace:%s@%s",
                     a->replacements[0].instance_type, a->replacements[0].nodepool);
            size_t n = 0;
            for (uint32_t k = 0; k < a->replacements[0].nexcluded; k++) {
                const berth_dexcluded *x = &a->replacements[0].excluded[k];
                n += (size_t)snprintf(r[ref].excluded + n, sizeof r[ref].excluded - n, "%s%s=%s",
                                      k ? " | " : "", x->instance_type, x->reason);
                if (n >= sizeof r[ref].excluded)
                    break;
            }
        }
        berth_dplan_free(&p);
        berth_disrupt_free(&m);
    }
    if (strcmp(r[0].action, r[1].action) || strcmp(r[0].excluded, r[1].excluded))
        fail_msg("session and reference disagree:\n  %s %s\n  %s %s", r[0].action, r[0].excluded,
                 r[1].action, r[1].excluded);
    *out = r[0];
}

static void expect_excluded(const result *r, const char *type, const char *frag)
{
    char key[128];
    snprintf(key, sizeof key, "%s=", type);
    const char *at = strstr(r->excluded, key);
    const char *end = at ? strstr(at, " | ") : NULL;
    size_t n = at ? (end ? (size_t)(end - at) : strlen(at)) : 0;
    char one[400];
    snprintf(one, sizeof one, "%.*s", (int)n, at ? at : "");
    if (!at || !strstr(one, frag))
        fail_msg("excluded %s: '%s', expected '%s' (all: %s)", type, one, frag, r->excluded);
}

#define SKU_D "      - {key: karpenter.azure.com/sku-family, operator: In, values: [D]}\n"
#define OD "      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}\n"

static void azure_estate(buf *b, const char *reqs)
{
    b->n = 0;
    pool(b, "general-purpose", NULL, reqs);
    itype(b, "Standard_D8s_v3", "8", "32Gi", 0.384);
    itype(b, "Standard_D2s_v3", "2", "8Gi", 0.096);
    itype(b, "Standard_B2s", "2", "4Gi", 0.0416);
    node(b, "d8", "general-purpose", "Standard_D8s_v3", "8");
    pod(b, "api", "d8", "1500m", NULL);
}

static void test_d8s_v3_never_b2s(void **st)
{
    (void)st;
    static buf b;
    result r;
    azure_estate(&b, OD SKU_D);
    plan(&b, &r);
    assert_string_equal(r.action, "replace:Standard_D2s_v3@general-purpose");
    expect_excluded(&r, "Standard_B2s",
                    "NodePool general-purpose requires karpenter.azure.com/sku-family In [D] (B)");
    /* the same NodePool without the family requirement takes the B2s: the
     * requirement is what keeps it out */
    azure_estate(&b, OD);
    plan(&b, &r);
    assert_string_equal(r.action, "replace:Standard_B2s@general-purpose");
    /* NotIn and Lt on derived labels */
    azure_estate(&b, OD "      - {key: karpenter.azure.com/sku-family, operator: NotIn, values: [B]}\n"
                        "      - {key: karpenter.azure.com/sku-cpu, operator: Lt, values: [\"3\"]}\n");
    plan(&b, &r);
    assert_string_equal(r.action, "replace:Standard_D2s_v3@general-purpose");
    expect_excluded(&r, "Standard_B2s", "sku-family NotIn [B] (B)");
    /* DoesNotExist on a key the provider defines for every type */
    azure_estate(&b, OD "      - {key: karpenter.azure.com/sku-family, operator: DoesNotExist}\n");
    plan(&b, &r);
    assert_string_equal(r.action, "none");
    /* a requirement on a key nobody defines is allowed (Intersects) */
    azure_estate(&b, OD "      - {key: example.com/team, operator: Exists}\n");
    plan(&b, &r);
    assert_string_equal(r.action, "replace:Standard_B2s@general-purpose");
}

static void aws_estate(buf *b, const char *prefix, int pod_selector)
{
    char reqs[600];
    snprintf(reqs, sizeof reqs,
             OD "      - {key: %sinstance-category, operator: In, values: [m]}\n"
                "      - {key: %sinstance-generation, operator: Gt, values: [\"6\"]}\n",
             prefix, prefix);
    b->n = 0;
    pool(b, "default", NULL, reqs);
    itype(b, "m7i.2xlarge", "8", "32Gi", 0.4032);
    itype(b, "m7i.large", "2", "8Gi", 0.1008);
    itype(b, "m6i.large", "2", "8Gi", 0.096);
    itype(b, "c5.large", "2", "4Gi", 0.085);
    node(b, "ip-1", "default", "m7i.2xlarge", "8");
    pod(b, "api", "ip-1", "1500m",
        pod_selector ? "  nodeSelector: {karpenter.k8s.aws/instance-size: large}\n" : NULL);
}

static void test_aws_category_generation(void **st)
{
    (void)st;
    static buf b;
    result r;
    aws_estate(&b, "karpenter.k8s.aws/", 0);
    plan(&b, &r);
    assert_string_equal(r.action, "replace:m7i.large@default");
    expect_excluded(&r, "c5.large", "karpenter.k8s.aws/instance-category In [m] (c)");
    expect_excluded(&r, "m6i.large", "karpenter.k8s.aws/instance-generation Gt 6 (6)");
    /* EKS Auto Mode NodePools use the same keys under eks.amazonaws.com/ */
    aws_estate(&b, "eks.amazonaws.com/", 0);
    plan(&b, &r);
    assert_string_equal(r.action, "replace:m7i.large@default");
    expect_excluded(&r, "c5.large", "eks.amazonaws.com/instance-category In [m] (c)");
    /* the pod selects a derived label: the new node carries it */
    aws_estate(&b, "karpenter.k8s.aws/", 1);
    plan(&b, &r);
    assert_string_equal(r.action, "replace:m7i.large@default");
}

static void test_pod_selects_derived_label(void **st)
{
    (void)st;
    static buf b;
    result r;
    /* no NodePool requirement on arch, but the pod asks for arm64 */
    b.n = 0;
    pool(&b, "p", NULL, OD);
    itype(&b, "Standard_D8s_v3", "8", "32Gi", 0.384);
    itype(&b, "Standard_D2s_v3", "2", "8Gi", 0.096);
    itype(&b, "Standard_D2ps_v5", "2", "8Gi", 0.12);
    node(&b, "d8", "p", "Standard_D8s_v3", "8");
    pod(&b, "arm", "d8", "1", "  nodeSelector: {kubernetes.io/arch: arm64}\n");
    plan(&b, &r);
    assert_string_equal(r.action, "replace:Standard_D2ps_v5@p");
    expect_excluded(&r, "Standard_D2s_v3", "nodeSelector / required node affinity does not match");
}

static void weights_estate(buf *b, const char *wa, const char *wb)
{
    b->n = 0;
    char ea[40] = "", eb[40] = "";
    if (wa)
        snprintf(ea, sizeof ea, "  weight: %s\n", wa);
    if (wb)
        snprintf(eb, sizeof eb, "  weight: %s\n", wb);
    pool(b, "alpha", ea, OD "      - {key: node.kubernetes.io/instance-type, operator: In, values: [D8, D2]}\n");
    pool(b, "beta", eb, OD "      - {key: node.kubernetes.io/instance-type, operator: In, values: [D8, D4]}\n");
    itype(b, "D8", "8", "32Gi", 0.40);
    itype(b, "D4", "4", "16Gi", 0.20);
    itype(b, "D2", "2", "8Gi", 0.10);
    node(b, "n", "alpha", "D8", "8");
    pod(b, "w", "n", "1500m", NULL);
}

static void test_weight_order(void **st)
{
    (void)st;
    static buf b;
    result r;
    /* equal weights: the later name first (OrderByWeight), although alpha's D2
     * is cheaper */
    weights_estate(&b, NULL, NULL);
    plan(&b, &r);
    assert_string_equal(r.action, "replace:D4@beta");
    expect_excluded(&r, "D2", "NodePool beta (weight 0) comes first in weight order");
    /* a higher weight first */
    weights_estate(&b, "50", NULL);
    plan(&b, &r);
    assert_string_equal(r.action, "replace:D2@alpha");
    weights_estate(&b, "50", "60");
    plan(&b, &r);
    assert_string_equal(r.action, "replace:D4@beta");
}

static void test_limits_cap_launch(void **st)
{
    (void)st;
    static buf b;
    result r;
    /* cpu 10: the candidate's 8 cpu do not count while it is replaced
     * (SimulateScheduling leaves candidates out), so a D2 fits */
    b.n = 0;
    pool(&b, "p", "  limits: {cpu: \"10\"}\n", OD);
    itype(&b, "D8", "8", "32Gi", 0.40);
    itype(&b, "D4", "4", "16Gi", 0.20);
    itype(&b, "D2", "2", "8Gi", 0.10);
    node(&b, "n", "p", "D8", "8");
    pod(&b, "w", "n", "3", NULL);
    plan(&b, &r);
    assert_string_equal(r.action, "replace:D4@p");
    /* a second 8-cpu node leaves 2 cpu: no D4; the 3-cpu pod fits no D2 */
    b.n = 0;
    pool(&b, "p", "  limits: {cpu: \"10\"}\n", OD);
    itype(&b, "D8", "8", "32Gi", 0.40);
    itype(&b, "D4", "4", "16Gi", 0.20);
    itype(&b, "D2", "2", "8Gi", 0.10);
    node(&b, "n", "p", "D8", "8");
    node(&b, "full", "p", "D8", "8");
    pod(&b, "w", "n", "3", NULL);
    pod(&b, "big", "full", "7", NULL);
    plan(&b, &r);
    assert_string_equal(r.action, "none");
    /* without the limit the D4 launches: the limit is what stops it */
    b.n = 0;
    pool(&b, "p", NULL, OD);
    itype(&b, "D8", "8", "32Gi", 0.40);
    itype(&b, "D4", "4", "16Gi", 0.20);
    node(&b, "n", "p", "D8", "8");
    node(&b, "full", "p", "D8", "8");
    pod(&b, "w", "n", "3", NULL);
    pod(&b, "big", "full", "7", NULL);
    plan(&b, &r);
    assert_string_equal(r.action, "replace:D4@p");
    /* nodes: 1 with a NodeClaim still launching (no Node): no new node */
    b.n = 0;
    pool(&b, "p", "  limits: {nodes: \"2\"}\n", OD);
    itype(&b, "D8", "8", "32Gi", 0.40);
    itype(&b, "D4", "4", "16Gi", 0.20);
    node(&b, "n", "p", "D8", "8");
    node(&b, "full", "p", "D8", "8");
    pod(&b, "w", "n", "3", NULL);
    pod(&b, "big", "full", "7", NULL);
    plan(&b, &r);
    assert_string_equal(r.action, "replace:D4@p"); /* 2 nodes, the candidate's place is free */
    add(&b, "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: launching\n"
            "  labels: {karpenter.sh/nodepool: p, node.kubernetes.io/instance-type: D4}\n"
            "  creationTimestamp: \"2024-05-01T11:59:00Z\"\nstatus: {}\n");
    plan(&b, &r);
    assert_string_equal(r.action, "none");
    /* the limit of one pool sends the node to the next one */
    b.n = 0;
    pool(&b, "zeta", "  limits: {memory: 10Gi}\n", OD);
    pool(&b, "alpha", NULL, OD);
    itype(&b, "D8", "8", "32Gi", 0.40);
    itype(&b, "D4", "4", "16Gi", 0.20);
    node(&b, "n", "alpha", "D8", "8");
    pod(&b, "w", "n", "3", NULL);
    plan(&b, &r);
    assert_string_equal(r.action, "replace:D4@alpha");
}

static void test_min_values(void **st)
{
    (void)st;
    static buf b;
    result r;
    const char *reqs =
        OD "      - {key: node.kubernetes.io/instance-type, operator: Exists, minValues: %s}\n";
    char rq[300];
    for (int mv = 2; mv <= 3; mv++) {
        snprintf(rq, sizeof rq, reqs, mv == 2 ? "2" : "3");
        b.n = 0;
        pool(&b, "p", NULL, rq);
        itype(&b, "D8", "8", "32Gi", 0.40);
        itype(&b, "D4", "4", "16Gi", 0.20);
        itype(&b, "D4a", "4", "16Gi", 0.21);
        node(&b, "n", "p", "D8", "8");
        pod(&b, "w", "n", "3", NULL);
        plan(&b, &r);
        /* two types below 0.40 host the pod: minValues 2 holds, 3 does not */
        assert_string_equal(r.action, mv == 2 ? "replace:D4@p" : "none");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_d8s_v3_never_b2s),
        cmocka_unit_test(test_aws_category_generation),
        cmocka_unit_test(test_pod_selects_derived_label),
        cmocka_unit_test(test_weight_order),
        cmocka_unit_test(test_limits_cap_launch),
        cmocka_unit_test(test_min_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
