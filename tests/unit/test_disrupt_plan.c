/* tests/unit/test_disrupt_plan.c - the disruption pass (SPEC 4.1) on small
 * clusters written as YAML: empty versus underutilised, do-not-disrupt on
 * pods (also the duration form), nodes and NodePool templates, PDB-blocked
 * drains (and AlwaysAllow for unready pods), drift by template hash versus
 * widened requirements, expiration and expireAfter Never,
 * consolidateAfter, a cheaper replacement versus one that is not strictly
 * cheaper, spot-to-spot behind its gate, budgets per method, load errors. */
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

/* A NodePool; `extra_tspec` goes into spec.template.spec, `dis` is the
 * disruption block body, `tmeta` the template metadata body. */
static void pool(buf *b, const char *name, const char *tmeta, const char *tspec, const char *dis)
{
    add(b, "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: %s}\nspec:\n"
           "  template:\n    metadata: {%s}\n    spec:\n"
           "      nodeClassRef: {group: karpenter.azure.com, kind: AKSNodeClass, name: default}\n"
           "%s"
           "  disruption:\n%s",
        name, tmeta ? tmeta : "", tspec ? tspec : "",
        dis ? dis : "    consolidateAfter: 0s\n    budgets: [{nodes: \"100%\"}]\n");
}

static void types(buf *b)
{
    static const struct {
        const char *name, *cpu, *mem;
        double od, spot;
    } t[] = {{"D2", "2", "8Gi", 0.10, 0.02}, {"D4", "4", "16Gi", 0.20, 0.04},
             {"D8", "8", "32Gi", 0.40, 0.08}};
    for (int i = 0; i < 3; i++)
        add(b, "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: %s}\nspec:\n"
               "  capacity: {cpu: \"%s\", memory: %s, pods: 30}\n  offerings:\n"
               "  - {zone: z1, capacityType: on-demand, price: %g}\n"
               "  - {zone: z1, capacityType: spot, price: %g}\n",
            t[i].name, t[i].cpu, t[i].mem, t[i].od, t[i].spot);
}

/* A NodeClaim + Node pair. claim_extra: extra metadata lines of the claim;
 * node_ann: node annotations body. */
static void node(buf *b, const char *name, const char *pool_name, const char *type, const char *ct,
                 const char *claim_meta, const char *claim_status, const char *node_ann)
{
    add(b, "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: %s\n"
           "  labels: {karpenter.sh/nodepool: %s, node.kubernetes.io/instance-type: %s, "
           "karpenter.sh/capacity-type: %s, topology.kubernetes.io/zone: z1}\n"
           "  creationTimestamp: \"2024-04-30T00:00:00Z\"\n%s"
           "status:\n  nodeName: %s\n  conditions:\n"
           "  - {type: Initialized, status: \"True\", lastTransitionTime: \"2024-04-30T00:05:00Z\"}\n%s",
        name, pool_name, type, ct, claim_meta ? claim_meta : "", name,
        claim_status ? claim_status : "");
    const char *cpu = !strcmp(type, "D2") ? "2" : !strcmp(type, "D4") ? "4" : "8";
    add(b, "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n  annotations: {%s}\n"
           "  labels: {karpenter.sh/nodepool: %s, node.kubernetes.io/instance-type: %s, "
           "karpenter.sh/capacity-type: %s, topology.kubernetes.io/zone: z1, "
           "kubernetes.io/hostname: %s, karpenter.sh/initialized: \"true\"}\nstatus:\n  allocatable: {cpu: \"%s\", memory: 32Gi, pods: \"30\"}\n",
        name, node_ann ? node_ann : "", pool_name, type, ct, name, cpu);
}

static void pod(buf *b, const char *name, const char *node_name, const char *cpu, const char *meta)
{
    add(b, "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: default\n%s"
           "spec:\n  nodeName: %s\n  containers:\n  - name: c\n"
           "    resources: {requests: {cpu: \"%s\", memory: 1Gi}}\n"
           "status:\n  phase: Running\n  startTime: \"2024-05-01T11:00:00Z\"\n"
           "  conditions: [{type: Ready, status: \"True\"}]\n",
        name, meta ? meta : "", node_name, cpu);
}

typedef struct fixture {
    berth_disrupt m;
    berth_dplan p;
} fixture;

static int load(fixture *f, const buf *b, berth_error *e)
{
    memset(&f->p, 0, sizeof f->p);
    return load_model(&f->m, b, e);
}

static void plan_at(fixture *f, const buf *b, const char *at, int spot_to_spot)
{
    berth_error e;
    if (load(f, b, &e))
        fail_msg("load: %s\n%s", e.msg, b->s);
    int64_t ms;
    assert_int_equal(berth_time_parse(at, &ms), 0);
    berth_dplan_options o = {ms / 1000, spot_to_spot};
    if (berth_disrupt_plan(&f->m, &o, &f->p, &e))
        fail_msg("plan: %s", e.msg);
}

static void done(fixture *f)
{
    berth_dplan_free(&f->p);
    berth_disrupt_free(&f->m);
}

#define NOW "2024-05-01T12:00:00Z"

/* "reason:action:n1,n2" for every action, joined by " | " */
static const char *actions(const fixture *f)
{
    static char out[1024];
    size_t n = 0;
    out[0] = 0;
    for (uint32_t i = 0; i < f->p.nactions; i++) {
        const berth_daction *a = &f->p.actions[i];
        n += (size_t)snprintf(out + n, sizeof out - n, "%s%s:%s:", i ? " | " : "",
                              berth_dreason_name(a->reason), a->replace ? "replace" : "delete");
        for (uint32_t j = 0; j < a->nnodes; j++)
            n += (size_t)snprintf(out + n, sizeof out - n, "%s%s", j ? "," : "",
                                  f->m.kube.nodes[a->nodes[j]].name);
        if (a->nreplacements)
            n += (size_t)snprintf(out + n, sizeof out - n, "->%s/%s",
                                  a->replacements[0].instance_type,
                                  berth_capacity_type_name(a->replacements[0].capacity_type));
    }
    return out;
}

static const char *blocked(const fixture *f, const char *node_name)
{
    for (uint32_t i = 0; i < f->p.nblocked; i++)
        if (!strcmp(f->m.kube.nodes[f->p.blocked[i].node].name, node_name))
            return f->p.blocked[i].reason;
    return NULL;
}

static void expect_blocked(const fixture *f, const char *node_name, const char *frag)
{
    const char *r = blocked(f, node_name);
    if (!r || !strstr(r, frag))
        fail_msg("%s: blocked reason '%s', expected '%s'", node_name, r ? r : "(none)", frag);
}

/* ---- tests ---- */

static void test_empty_vs_underutilized(void **st)
{
    (void)st;
    static buf b;
    b.n = 0;
    pool(&b, "p", NULL, NULL, NULL);
    types(&b);
    node(&b, "empty", "p", "D4", "on-demand", NULL, NULL, NULL);
    node(&b, "busy", "p", "D4", "on-demand", NULL, NULL, NULL);
    node(&b, "other", "p", "D4", "on-demand", NULL, NULL, NULL);
    pod(&b, "w1", "busy", "500m", NULL);
    pod(&b, "w2", "other", "3", NULL);
    /* a DaemonSet pod does not make a node non-empty */
    pod(&b, "ds", "empty", "100m",
        "  ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: ds, uid: u, controller: true}]\n");
    fixture f;
    plan_at(&f, &b, NOW, 0);
    assert_string_equal(actions(&f), "Empty:delete:empty");
    assert_string_equal(f.p.method, "Emptiness");
    done(&f);
}

#define OD_ONLY \
    "      requirements:\n      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}\n"

static void test_underutilized_delete(void **st)
{
    (void)st;
    static buf b;
    b.n = 0;
    pool(&b, "p", NULL, OD_ONLY, NULL);
    types(&b);
    node(&b, "a", "p", "D4", "on-demand", NULL, NULL, NULL);
    node(&b, "b", "p", "D4", "on-demand", NULL, NULL, NULL);
    node(&b, "c", "p", "D4", "on-demand", NULL, NULL, NULL);
    pod(&b, "w1", "a", "1", NULL);
    pod(&b, "w2", "b", "1", NULL);
    pod(&b, "w3", "c", "1", NULL);
    fixture f;
    plan_at(&f, &b, NOW, 0);
    /* multi-node: a and b fit on c (delete); all three would need a D4,
     * the candidates' own type, not cheaper than the cheapest of them */
    assert_string_equal(actions(&f), "Underutilized:delete:a,b");
    assert_string_equal(f.p.method, "MultiNodeConsolidation");
    assert_true(f.p.actions[0].savings > 0.399 && f.p.actions[0].savings < 0.401);
    done(&f);
    /* two nodes only: both onto one cheaper D2 (0.10 < 0.40) */
    b.n = 0;
    pool(&b, "p", NULL, OD_ONLY, NULL);
    types(&b);
    node(&b, "a", "p", "D4", "on-demand", NULL, NULL, NULL);
    node(&b, "b", "p", "D4", "on-demand", NULL, NULL, NULL);
    pod(&b, "w1", "a", "1", NULL);
    pod(&b, "w2", "b", "1", NULL);
    plan_at(&f, &b, NOW, 0);
    assert_string_equal(actions(&f), "Underutilized:replace:a,b->D2/on-demand");
    assert_true(f.p.actions[0].savings > 0.299 && f.p.actions[0].savings < 0.301);
    done(&f);
}

static void test_do_not_disrupt_levels(void **st)
{
    (void)st;
    static buf b;
    b.n = 0;
    pool(&b, "p", NULL, NULL, NULL);
    pool(&b, "q", "annotations: {karpenter.sh/do-not-disrupt: \"true\"}", NULL, NULL);
    types(&b);
    node(&b, "pod-dnd", "p", "D4", "on-demand", NULL, NULL, NULL);
    node(&b, "pod-dnd-dur", "p", "D4", "on-demand", NULL, NULL, NULL);
    node(&b, "pod-dnd-old", "p", "D4", "on-demand", NULL, NULL, NULL);
    node(&b, "node-dnd", "p", "D4", "on-demand", NULL, NULL, "karpenter.sh/do-not-disrupt: \"true\"");
    node(&b, "pool-dnd", "q", "D4", "on-demand", NULL, NULL, NULL);
    pod(&b, "x1", "pod-dnd", "3", "  annotations: {karpenter.sh/do-not-disrupt: \"true\"}\n");
    /* started 11:00: a 2h duration is active at 12:00, 30m is not */
    pod(&b, "x2", "pod-dnd-dur", "3", "  annotations: {karpenter.sh/do-not-disrupt: 2h}\n");
    pod(&b, "x3", "pod-dnd-old", "3", "  annotations: {karpenter.sh/do-not-disrupt: 30m}\n");
    fixture f;
    plan_at(&f, &b, NOW, 0);
    expect_blocked(&f, "pod-dnd", "pod default/x1 has annotation karpenter.sh/do-not-disrupt");
    expect_blocked(&f, "pod-dnd-dur", "pod default/x2");
    assert_null(blocked(&f, "pod-dnd-old"));
    expect_blocked(&f, "node-dnd", "node has annotation karpenter.sh/do-not-disrupt");
    expect_blocked(&f, "pool-dnd", "NodePool q template");
    /* empty nodes: node-dnd and pool-dnd are empty but blocked */
    assert_true(strstr(actions(&f), "node-dnd") == NULL);
    assert_true(strstr(actions(&f), "pool-dnd") == NULL);
    done(&f);
}

static void test_pdb_blocks(void **st)
{
    (void)st;
    static buf b;
    b.n = 0;
    pool(&b, "p", NULL, NULL, NULL);
    types(&b);
    node(&b, "a", "p", "D4", "on-demand", NULL, NULL, NULL);
    node(&b, "b", "p", "D4", "on-demand", NULL, NULL, NULL);
    node(&b, "c", "p", "D4", "on-demand", NULL, NULL, NULL);
    pod(&b, "guarded", "a", "1", "  labels: {app: db}\n");
    pod(&b, "unready", "b", "1", "  labels: {app: cache}\n");
    pod(&b, "free", "c", "3", NULL);
    add(&b, "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: db, namespace: default}\n"
            "spec: {minAvailable: 1, selector: {matchLabels: {app: db}}}\nstatus: {disruptionsAllowed: 0}\n");
    add(&b, "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: cache, namespace: default}\n"
            "spec: {maxUnavailable: 0, unhealthyPodEvictionPolicy: AlwaysAllow, "
            "selector: {matchLabels: {app: cache}}}\nstatus: {disruptionsAllowed: 0}\n");
    fixture f;
    plan_at(&f, &b, NOW, 0);
    expect_blocked(&f, "a", "PodDisruptionBudget default/db allows no disruption");
    /* the cache pod is Ready, so AlwaysAllow does not help it */
    expect_blocked(&f, "b", "PodDisruptionBudget default/cache");
    done(&f);
    /* now the cache pod is not Ready: AlwaysAllow lets it go */
    char *pos = strstr(b.s, "name: unready");
    assert_non_null(pos);
    char *cond = strstr(pos, "status: \"True\"}]");
    assert_non_null(cond);
    memcpy(cond, "status: \"Fals\"}]", 16);
    plan_at(&f, &b, NOW, 0);
    assert_null(blocked(&f, "b"));
    done(&f);
}

static void test_drift(void **st)
{
    (void)st;
    static buf b;
    b.n = 0;
    /* requirements widened from [D4] to [D4, D8]: not drifted */
    pool(&b, "p", NULL,
         "      requirements:\n      - {key: node.kubernetes.io/instance-type, operator: In, values: [D4, D8]}\n",
         NULL);
    types(&b);
    node(&b, "a", "p", "D4", "on-demand", NULL, NULL, NULL);
    pod(&b, "w1", "a", "3", NULL);
    fixture f;
    plan_at(&f, &b, NOW, 0);
    assert_false(berth_nodeclaim_drifted(&f.m, &f.m.claims[0], NULL, 0));
    char hash[24];
    snprintf(hash, sizeof hash, "%s", f.m.pools[0].hash);
    done(&f);
    /* narrowing to [D8] drifts */
    b.n = 0;
    pool(&b, "p", NULL,
         "      requirements:\n      - {key: node.kubernetes.io/instance-type, operator: In, values: [D8]}\n",
         NULL);
    types(&b);
    node(&b, "a", "p", "D4", "on-demand", NULL, NULL, NULL);
    plan_at(&f, &b, NOW, 0);
    assert_true(berth_nodeclaim_drifted(&f.m, &f.m.claims[0], NULL, 0));
    done(&f);
    /* the claim carries the template hash: same template, not drifted; a
     * changed node class (image family) or label drifts and is replaced */
    char meta[160];
    snprintf(meta, sizeof meta,
             "  annotations: {karpenter.sh/nodepool-hash: \"%s\", karpenter.sh/nodepool-hash-version: %s}\n",
             hash, BERTH_DISRUPT_HASH_VERSION);
    b.n = 0;
    pool(&b, "p", NULL,
         "      requirements:\n      - {key: node.kubernetes.io/instance-type, operator: In, values: [D4, D8]}\n",
         NULL);
    types(&b);
    node(&b, "a", "p", "D4", "on-demand", meta, NULL, NULL);
    node(&b, "b", "p", "D4", "on-demand", NULL, NULL, NULL);
    pod(&b, "w1", "a", "3", NULL);
    pod(&b, "w2", "b", "3", NULL);
    plan_at(&f, &b, NOW, 0);
    assert_false(berth_nodeclaim_drifted(&f.m, &f.m.claims[0], NULL, 0));
    done(&f);
    char *ref = strstr(b.s, "name: default}");
    assert_non_null(ref);
    memcpy(ref, "name: azlinux", 13); /* "name: azlinux}" - another node class */
    plan_at(&f, &b, NOW, 0);
    char why[200];
    assert_true(berth_nodeclaim_drifted(&f.m, &f.m.claims[0], why, sizeof why));
    assert_non_null(strstr(why, "template hash"));
    /* the pod needs 3 cpu and b is full: one replacement node, the cheapest
     * that fits (the pool allows spot) */
    assert_string_equal(actions(&f), "Drifted:replace:a->D4/spot");
    done(&f);
}

static void test_drift_condition(void **st)
{
    (void)st;
    static buf b;
    b.n = 0;
    pool(&b, "p", NULL, NULL, NULL);
    types(&b);
    node(&b, "a", "p", "D4", "on-demand", NULL,
         "  - {type: Drifted, status: \"True\", lastTransitionTime: \"2024-05-01T10:00:00Z\"}\n", NULL);
    node(&b, "b", "p", "D4", "on-demand", NULL, NULL, NULL);
    pod(&b, "w1", "a", "1", NULL);
    pod(&b, "w2", "b", "1", NULL);
    fixture f;
    plan_at(&f, &b, NOW, 0);
    assert_string_equal(actions(&f), "Drifted:delete:a");
    done(&f);
}

static void test_expiration(void **st)
{
    (void)st;
    static buf b;
    b.n = 0;
    pool(&b, "p", NULL, "      expireAfter: 24h\n" OD_ONLY, NULL);
    pool(&b, "never", NULL, "      expireAfter: Never\n" OD_ONLY, NULL);
    types(&b);
    node(&b, "old", "p", "D4", "on-demand", NULL, NULL, "karpenter.sh/do-not-disrupt: \"true\"");
    node(&b, "kept", "never", "D4", "on-demand", NULL, NULL, NULL);
    pod(&b, "w1", "old", "3", NULL);
    pod(&b, "w2", "kept", "3", NULL);
    fixture f;
    plan_at(&f, &b, NOW, 0);
    /* created 2024-04-30T00:00Z + 24h <= now: deleted despite do-not-disrupt */
    assert_string_equal(actions(&f), "Expired:delete:old");
    /* (a replacement may come from any NodePool: both allow on-demand only,
     * and a D4 is not cheaper than the D4 "kept") */
    /* the expiring node counts as disrupting in its pool */
    assert_int_equal(f.p.pools[0].disrupting, 1);
    done(&f);
}

static void test_consolidate_after(void **st)
{
    (void)st;
    static buf b;
    b.n = 0;
    pool(&b, "p", NULL, NULL, "    consolidateAfter: 1h\n    budgets: [{nodes: \"100%\"}]\n");
    pool(&b, "n", NULL, NULL, "    consolidateAfter: Never\n");
    types(&b);
    /* last pod event 11:30: consolidatable from 12:30 (inclusive) */
    node(&b, "a", "p", "D4", "on-demand", NULL, "  lastPodEventTime: \"2024-05-01T11:30:00Z\"\n", NULL);
    node(&b, "b", "n", "D4", "on-demand", NULL, NULL, NULL);
    fixture f;
    plan_at(&f, &b, "2024-05-01T12:29:59Z", 0);
    assert_string_equal(actions(&f), "");
    done(&f);
    plan_at(&f, &b, "2024-05-01T12:30:00Z", 0);
    assert_string_equal(actions(&f), "Empty:delete:a");
    done(&f);
}

static void test_replacement_price(void **st)
{
    (void)st;
    static buf b;
    b.n = 0;
    pool(&b, "p", NULL,
         "      requirements:\n      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}\n",
         NULL);
    types(&b);
    /* a D8 with 3 cpu of pods: a D4 (0.20 < 0.40) replaces it */
    node(&b, "big", "p", "D8", "on-demand", NULL, NULL, NULL);
    pod(&b, "w1", "big", "3", NULL);
    fixture f;
    plan_at(&f, &b, NOW, 0);
    assert_string_equal(actions(&f), "Underutilized:replace:big->D4/on-demand");
    assert_true(f.p.actions[0].savings > 0.199 && f.p.actions[0].savings < 0.201);
    done(&f);
    /* a D4 with 3 cpu: only D4 / D8 fit, none strictly cheaper than 0.20 */
    b.n = 0;
    pool(&b, "p", NULL,
         "      requirements:\n      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}\n",
         NULL);
    types(&b);
    node(&b, "mid", "p", "D4", "on-demand", NULL, NULL, NULL);
    pod(&b, "w1", "mid", "3", NULL);
    plan_at(&f, &b, NOW, 0);
    assert_string_equal(actions(&f), "");
    expect_blocked(&f, "mid", "no replacement is cheaper");
    done(&f);
}

static void test_spot_rules(void **st)
{
    (void)st;
    static buf b;
    b.n = 0;
    pool(&b, "p", NULL, NULL, NULL);
    types(&b);
    node(&b, "s", "p", "D8", "spot", NULL, NULL, NULL);
    pod(&b, "w1", "s", "3", NULL);
    fixture f;
    plan_at(&f, &b, NOW, 0);
    expect_blocked(&f, "s", "SpotToSpotConsolidation is disabled");
    done(&f);
    /* enabled: a single spot node needs 15 cheaper spot types (3 here) */
    plan_at(&f, &b, NOW, 1);
    expect_blocked(&f, "s", "needs 15 cheaper spot instance types");
    done(&f);
    /* on-demand -> [on-demand, spot] launches spot */
    b.n = 0;
    pool(&b, "p", NULL, NULL, NULL);
    types(&b);
    node(&b, "od", "p", "D8", "on-demand", NULL, NULL, NULL);
    pod(&b, "w1", "od", "3", NULL);
    plan_at(&f, &b, NOW, 0);
    assert_string_equal(actions(&f), "Underutilized:replace:od->D4/spot");
    done(&f);
}

static void test_budget_blocks_method(void **st)
{
    (void)st;
    static buf b;
    b.n = 0;
    pool(&b, "p", NULL, NULL,
         "    budgets:\n    - {nodes: \"0\", reasons: [Empty]}\n    - {nodes: \"1\"}\n");
    types(&b);
    node(&b, "e1", "p", "D4", "on-demand", NULL, NULL, NULL);
    node(&b, "a", "p", "D4", "on-demand", NULL, NULL, NULL);
    node(&b, "b", "p", "D4", "on-demand", NULL, NULL, NULL);
    pod(&b, "w1", "a", "1", NULL);
    pod(&b, "w2", "b", "1", NULL);
    fixture f;
    plan_at(&f, &b, NOW, 0);
    assert_int_equal(f.p.pools[0].allowed[BERTH_DR_EMPTY], 0);
    assert_int_equal(f.p.pools[0].allowed[BERTH_DR_UNDERUTILIZED], 1);
    expect_blocked(&f, "e1", "allows no more Empty disruptions");
    assert_string_equal(actions(&f), "Underutilized:delete:a");
    done(&f);
}

/* Budget counting as BuildDisruptionBudgetMapping: a Node without the
 * karpenter.sh/initialized label (its NodeClaim's Initialized condition
 * notwithstanding) and a NodeClaim with InstanceTerminating=True are not
 * counted at all; a Node without a NodeClaim is not managed; a NotReady
 * node counts and is disrupting. */
static void test_budget_counting(void **st)
{
    (void)st;
    static buf b;
    b.n = 0;
    pool(&b, "p", NULL, NULL, "    consolidateAfter: 0s\n    budgets: [{nodes: \"50%\"}]\n");
    types(&b);
    node(&b, "a", "p", "D4", "on-demand", NULL, NULL, NULL);
    node(&b, "b", "p", "D4", "on-demand", NULL, NULL, NULL);
    node(&b, "c", "p", "D4", "on-demand", NULL, NULL, NULL);
    node(&b, "d", "p", "D4", "on-demand", NULL, NULL, NULL);
    node(&b, "term", "p", "D4", "on-demand", NULL,
         "  - {type: InstanceTerminating, status: \"True\", lastTransitionTime: \"2024-05-01T11:59:00Z\"}\n",
         NULL);
    /* NodeClaim Initialized, but the Node lacks the label */
    add(&b, "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: uninit\n"
            "  labels: {karpenter.sh/nodepool: p}\n  creationTimestamp: \"2024-04-30T00:00:00Z\"\n"
            "status:\n  nodeName: uninit\n  conditions:\n"
            "  - {type: Initialized, status: \"True\", lastTransitionTime: \"2024-04-30T00:05:00Z\"}\n"
            "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: uninit\n"
            "  labels: {karpenter.sh/nodepool: p, node.kubernetes.io/instance-type: D4, "
            "karpenter.sh/capacity-type: on-demand, topology.kubernetes.io/zone: z1}\n"
            "status:\n  allocatable: {cpu: \"4\", memory: 16Gi, pods: \"30\"}\n");
    /* a Node labelled for the pool without a NodeClaim */
    add(&b, "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: stray\n"
            "  labels: {karpenter.sh/nodepool: p, karpenter.sh/initialized: \"true\"}\n"
            "status:\n  allocatable: {cpu: \"4\", memory: 16Gi, pods: \"30\"}\n");
    /* a NotReady node: counted, and disrupting */
    add(&b, "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: sick\n"
            "  labels: {karpenter.sh/nodepool: p}\n  creationTimestamp: \"2024-04-30T00:00:00Z\"\n"
            "status:\n  nodeName: sick\n"
            "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: sick\n"
            "  labels: {karpenter.sh/nodepool: p, karpenter.sh/initialized: \"true\", "
            "node.kubernetes.io/instance-type: D4, karpenter.sh/capacity-type: on-demand, "
            "topology.kubernetes.io/zone: z1}\n"
            "status:\n  allocatable: {cpu: \"4\", memory: 16Gi, pods: \"30\"}\n"
            "  conditions: [{type: Ready, status: \"False\"}]\n");
    fixture f;
    plan_at(&f, &b, NOW, 0);
    /* counted: a, b, c, d, sick = 5; 50 % -> 3; minus 1 disrupting = 2 */
    assert_int_equal(f.p.pools[0].nodes, 5);
    assert_int_equal(f.p.pools[0].disrupting, 1);
    assert_int_equal(f.p.pools[0].allowed[BERTH_DR_EMPTY], 2);
    expect_blocked(&f, "uninit", "node is not initialized");
    expect_blocked(&f, "term", "already being deleted");
    assert_string_equal(actions(&f), "Empty:delete:a,b");
    done(&f);
    /* counting them would have allowed more: with the label on uninit and
     * without InstanceTerminating, 7 nodes -> 4 - 1 = 3 */
    b.n = 0;
    pool(&b, "p", NULL, NULL, "    consolidateAfter: 0s\n    budgets: [{nodes: \"50%\"}]\n");
    types(&b);
    node(&b, "a", "p", "D4", "on-demand", NULL, NULL, NULL);
    node(&b, "b", "p", "D4", "on-demand", NULL, NULL, NULL);
    node(&b, "c", "p", "D4", "on-demand", NULL, NULL, NULL);
    node(&b, "d", "p", "D4", "on-demand", NULL, NULL, NULL);
    node(&b, "term", "p", "D4", "on-demand", NULL, NULL, NULL);
    node(&b, "uninit", "p", "D4", "on-demand", NULL, NULL, NULL);
    node(&b, "sick", "p", "D4", "on-demand", NULL, NULL, NULL);
    plan_at(&f, &b, NOW, 0);
    assert_int_equal(f.p.pools[0].nodes, 7);
    assert_int_equal(f.p.pools[0].allowed[BERTH_DR_EMPTY], 4);
    done(&f);
}

/* do-not-disrupt durations as Go's time.ParseDuration; a pod without
 * status.startTime keeps an active duration (fail safe); an invalid or
 * non-positive value is as if absent. */
static void test_do_not_disrupt_durations(void **st)
{
    (void)st;
    static buf b;
    b.n = 0;
    pool(&b, "p", NULL, NULL, "    consolidateAfter: Never\n    budgets: [{nodes: \"100%\"}]\n");
    types(&b);
    static const char *const names[] = {"n-1h30m", "n-1.5h", "n-300ms", "n-neg", "n-junk", "n-nostart"};
    static const char *const vals[] = {"1h30m", "1.5h", "300ms", "-1s", "1d", "1m"};
    for (int i = 0; i < 6; i++)
        node(&b, names[i], "p", "D4", "on-demand", NULL, NULL, NULL);
    for (int i = 0; i < 5; i++) {
        char meta[120];
        snprintf(meta, sizeof meta, "  annotations: {karpenter.sh/do-not-disrupt: \"%s\"}\n", vals[i]);
        pod(&b, names[i] + 2, names[i], "1", meta);
    }
    /* no startTime: the 1m protection stays */
    add(&b, "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: nostart\n  namespace: default\n"
            "  creationTimestamp: \"2024-04-01T00:00:00Z\"\n"
            "  annotations: {karpenter.sh/do-not-disrupt: 1m}\n"
            "spec:\n  nodeName: n-nostart\n  containers:\n  - name: c\n"
            "    resources: {requests: {cpu: \"1\", memory: 1Gi}}\n"
            "status:\n  phase: Running\n  conditions: [{type: Ready, status: \"True\"}]\n");
    fixture f;
    /* pods started 11:00; at 12:29:59 1h30m and 1.5h are active */
    plan_at(&f, &b, "2024-05-01T12:29:59Z", 0);
    expect_blocked(&f, "n-1h30m", "pod default/1h30m has annotation");
    expect_blocked(&f, "n-1.5h", "pod default/1.5h has annotation");
    assert_null(blocked(&f, "n-300ms"));
    assert_null(blocked(&f, "n-neg"));
    assert_null(blocked(&f, "n-junk"));
    expect_blocked(&f, "n-nostart", "pod default/nostart has annotation");
    assert_int_equal(f.m.pod_info[0].dnd_ns, 5400000000000LL);
    assert_int_equal(f.m.pod_info[2].dnd_ns, 300000000LL);
    assert_int_equal(f.m.pod_info[3].dnd, 0);
    done(&f);
    /* at 12:30:00 both 90-minute protections are over; nostart's is not */
    plan_at(&f, &b, "2024-05-01T12:30:00Z", 0);
    assert_null(blocked(&f, "n-1h30m"));
    assert_null(blocked(&f, "n-1.5h"));
    expect_blocked(&f, "n-nostart", "pod default/nostart has annotation");
    done(&f);
}

static void test_load_errors(void **st)
{
    (void)st;
    static const struct {
        const char *yaml, *frag;
    } cases[] = {
        {"apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: p}\nspec:\n  template: {spec: {}}\n"
         "  disruption:\n    budgets: [{nodes: \"120%\"}]\n", "budgets[0].nodes"},
        {"apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: p}\nspec:\n  template: {spec: {}}\n"
         "  disruption:\n    budgets: [{nodes: \"1\", schedule: \"@daily\"}]\n", "schedule and duration"},
        {"apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: p}\nspec:\n  template: {spec: {}}\n"
         "  disruption:\n    budgets: [{nodes: \"1\", schedule: \"@daily\", duration: 30s}]\n", "duration"},
        {"apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: p}\nspec:\n  template: {spec: {}}\n"
         "  disruption:\n    budgets: [{nodes: \"1\", reasons: [Expired]}]\n", "reasons[0]"},
        {"apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: p}\nspec:\n  template: {spec: {}}\n"
         "  disruption:\n    consolidationPolicy: Sometimes\n", "consolidationPolicy"},
        {"apiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: x}\nspec:\n"
         "  capacity: {cpu: 2, memory: 8Gi}\n  offerings: [{zone: z, capacityType: spot, price: 1, color: red}]\n",
         "color"},
        {"apiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: x}\nspec:\n"
         "  capacity: {cpu: 2, memory: 8Gi}\n  offerings: [{zone: z, capacityType: cheap, price: 1}]\n",
         "capacityType"},
        {"apiVersion: v1\nkind: Gadget\nmetadata: {name: x}\n", "unknown kind"},
        /* what the planner reads beyond scheduling, decoded by the kube
         * loader and located there (a typed list's item: at the item) */
        {"apiVersion: v1\nkind: PodList\nitems:\n- metadata:\n    name: p\n    annotations:\n"
         "      controller.kubernetes.io/pod-deletion-cost: \"2147483648\"\n"
         "  spec: {containers: [{name: c}]}\n",
         "t.yaml:4:3: (document): metadata.annotations.controller.kubernetes.io/pod-deletion-cost: "
         "expected an int32, got '2147483648'"},
        {"apiVersion: v1\nkind: Node\nmetadata: {name: n, deletionTimestamp: soon}\n",
         "t.yaml:3:40: metadata.deletionTimestamp: expected an RFC 3339 time"},
        {"apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus:\n"
         "  allocatable: {cpu: \"4\", pods: \"30\"}\n  capacity: {cpu: \"4\", memory: -1Gi}\n",
         "t.yaml:6:32: status.capacity.memory: must not be negative, got '-1Gi'"},
        {"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}]}\n"
         "status: {nominatedNodeName: [n]}\n",
         "t.yaml:5:29: status.nominatedNodeName: expected a string, got a list"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        static buf b;
        b.n = 0;
        add(&b, "%s", cases[i].yaml);
        fixture f;
        berth_error e;
        int rc = load(&f, &b, &e);
        if (rc != BERTH_EINVAL || !strstr(e.msg, cases[i].frag) || !strstr(e.msg, "t.yaml:"))
            fail_msg("case %zu: rc %d, message '%s', expected '%s'", i, rc, e.msg, cases[i].frag);
        berth_disrupt_free(&f.m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_vs_underutilized), cmocka_unit_test(test_underutilized_delete),
        cmocka_unit_test(test_do_not_disrupt_levels),  cmocka_unit_test(test_pdb_blocks),
        cmocka_unit_test(test_drift),                  cmocka_unit_test(test_drift_condition),
        cmocka_unit_test(test_expiration),             cmocka_unit_test(test_consolidate_after),
        cmocka_unit_test(test_replacement_price),      cmocka_unit_test(test_spot_rules),
        cmocka_unit_test(test_budget_blocks_method),   cmocka_unit_test(test_load_errors),
        cmocka_unit_test(test_budget_counting),        cmocka_unit_test(test_do_not_disrupt_durations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
