/* tests/unit/test_daemon_overhead.c - DaemonSet pods on hypothetical nodes
 * (k8s/daemons.c, autoscale/daemons.c): a disruption replacement leaves
 * room for the DaemonSets that would run on it (a consolidation that fit
 * without the DaemonSet no longer fits; a DaemonSet whose nodeSelector or
 * untolerated taint keeps it off the replacement takes nothing), the
 * autoscaler packs new nodes after their DaemonSet pods (Ocean and
 * cluster-autoscaler), a pending DaemonSet pod drives no scale-up, a
 * Deployment's unplaced replicas do, and nodes launched by the timelines
 * join with their DaemonSet pods' share taken. The Kubernetes objects are
 * written as kubectl emits them (a typed list, uids, managedFields, status
 * blocks, owner references with uid). */
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
#include "berth/fleet.h"
#include "yaml_buf.h"

#define AT "2024-05-01T12:00:00Z"

static int64_t at_secs(void)
{
    int64_t ms;
    assert_int_equal(berth_time_parse(AT, &ms), 0);
    return ms / 1000;
}

/* A DaemonSet as `kubectl get ds -o yaml` lists it; spec_extra goes under
 * its template's spec. */
static void daemonset(buf *b, const char *cpu, const char *spec_extra)
{
    add(b, "- apiVersion: apps/v1\n  kind: DaemonSet\n  metadata:\n    name: agent\n"
           "    namespace: kube-system\n    uid: 5d0c1a8e-0000-4000-8000-000000000001\n"
           "    resourceVersion: \"812\"\n    generation: 1\n"
           "    creationTimestamp: \"2024-04-01T00:00:00Z\"\n"
           "    managedFields:\n    - {manager: kubectl, operation: Update, apiVersion: apps/v1}\n"
           "  spec:\n    selector: {matchLabels: {app: agent}}\n"
           "    template:\n      metadata: {labels: {app: agent}}\n      spec:\n%s"
           "        containers:\n        - name: agent\n          image: agent:1\n"
           "          resources: {requests: {cpu: %s, memory: 128Mi}}\n"
           "  status: {currentNumberScheduled: 0, desiredNumberScheduled: 1, numberReady: 0}\n",
        spec_extra ? spec_extra : "", cpu);
}

/* ---- disruption ---- */

/* One D4 node (on-demand, 0.20/h) of pool "general" with two pods of 1
 * cpu and 800m: 1.8 cpu fit a D2 (2 cpu, 0.10/h) when nothing else runs
 * there. Types have no provider (made-up names): no kubelet overhead. */
static void disrupt_estate_cpu(buf *b, const char *pool_taints, const char *pod_tols,
                               const char *node_cpu)
{
    add(b, "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: general}\nspec:\n"
           "  template:\n    spec:\n"
           "      nodeClassRef: {group: karpenter.azure.com, kind: AKSNodeClass, name: default}\n"
           "%s"
           "  disruption: {consolidateAfter: 0s, budgets: [{nodes: \"100%%\"}]}\n",
        pool_taints ? pool_taints : "");
    static const char *const t[2][3] = {{"D2", "2", "0.10"}, {"D4", "4", "0.20"}};
    for (int i = 0; i < 2; i++)
        add(b, "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: %s}\nspec:\n"
               "  capacity: {cpu: \"%s\", memory: 16Gi, pods: 30}\n"
               "  offerings: [{zone: z1, capacityType: on-demand, price: %s}]\n",
            t[i][0], t[i][1], t[i][2]);
    add(b, "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: n4\n"
           "  labels: {karpenter.sh/nodepool: general, node.kubernetes.io/instance-type: D4, "
           "karpenter.sh/capacity-type: on-demand, topology.kubernetes.io/zone: z1}\n"
           "  creationTimestamp: \"2024-04-30T00:00:00Z\"\n"
           "status:\n  nodeName: n4\n  conditions:\n"
           "  - {type: Initialized, status: \"True\", lastTransitionTime: \"2024-04-30T00:05:00Z\"}\n");
    add(b, "---\napiVersion: v1\nkind: List\nmetadata: {resourceVersion: \"\"}\nitems:\n"
           "- apiVersion: v1\n  kind: Node\n  metadata:\n    name: n4\n    uid: node-n4\n"
           "    labels: {karpenter.sh/nodepool: general, node.kubernetes.io/instance-type: D4, "
           "karpenter.sh/capacity-type: on-demand, topology.kubernetes.io/zone: z1, "
           "kubernetes.io/hostname: n4, karpenter.sh/initialized: \"true\"}\n"
           "  status:\n    allocatable: {cpu: \"%s\", memory: 16Gi, pods: \"30\"}\n"
           "    conditions: [{type: Ready, status: \"True\"}]\n",
        node_cpu);
    static const char *const pods[2][2] = {{"web-1", "1"}, {"web-2", "800m"}};
    for (int i = 0; i < 2; i++)
        add(b, "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: %s\n    namespace: default\n"
               "    uid: pod-%s\n    ownerReferences:\n"
               "    - {apiVersion: apps/v1, kind: ReplicaSet, name: web-7c9f, uid: rs-web, "
               "controller: true, blockOwnerDeletion: true}\n"
               "  spec:\n    nodeName: n4\n%s    containers:\n    - name: c\n      image: web:1\n"
               "      resources: {requests: {cpu: \"%s\", memory: 1Gi}}\n"
               "  status:\n    phase: Running\n    startTime: \"2024-05-01T11:00:00Z\"\n"
               "    conditions: [{type: Ready, status: \"True\"}]\n",
            pods[i][0], pods[i][0], pod_tols ? pod_tols : "", pods[i][1]);
}

static void disrupt_estate(buf *b, const char *pool_taints, const char *pod_tols)
{
    disrupt_estate_cpu(b, pool_taints, pod_tols, "4");
}

typedef struct dfix {
    berth_disrupt m;
    berth_dplan p;
    char act[256];
} dfix;

static void dplan(dfix *f, const buf *b)
{
    berth_error e;
    berth_source src;
    berth_disrupt_init(&f->m);
    memset(&f->p, 0, sizeof f->p);
    if (berth_doc_load_buffer(&f->m.kube.arena, "t.yaml", b->s, b->n, &src, &e) ||
        berth_disrupt_load(&f->m, &src, 1, &e) || berth_disrupt_finalize(&f->m, &e))
        fail_msg("load: %s\n%s", e.msg, b->s);
    berth_dplan_options o = {at_secs(), 0, 0, 0};
    if (berth_disrupt_plan(&f->m, &o, &f->p, &e))
        fail_msg("plan: %s", e.msg);
    f->act[0] = 0;
    size_t n = 0;
    for (uint32_t i = 0; i < f->p.nactions; i++) {
        const berth_daction *a = &f->p.actions[i];
        n += (size_t)snprintf(f->act + n, sizeof f->act - n, "%s%s:%s",
                              i ? " | " : "", a->replace ? "replace" : "delete",
                              f->m.kube.nodes[a->nodes[0]].name);
        if (a->nreplacements)
            n += (size_t)snprintf(f->act + n, sizeof f->act - n, "->%s",
                                  a->replacements[0].instance_type);
    }
}

static void dfree(dfix *f)
{
    berth_dplan_free(&f->p);
    berth_disrupt_free(&f->m);
}

/* the replacement template node of pool 0, type `type`, offering 0 */
static berth_knode template_node(dfix *f, const char *type, berth_arena *a)
{
    berth_knode n;
    int t = berth_instance_type_find(f->m.types, f->m.ntypes, type);
    assert_true(t >= 0);
    assert_int_equal(berth_disrupt_template_node(&f->m, 0, (uint32_t)t, 0, "x", 0, a, &n), 0);
    return n;
}

static void test_disrupt_replacement_room(void **st)
{
    (void)st;
    berth_arena a;
    berth_arena_init(&a, 0);
    /* no DaemonSet: 1.8 cpu fit the cheaper D2 */
    buf *b = calloc(1, sizeof *b);
    disrupt_estate(b, NULL, NULL);
    dfix f;
    dplan(&f, b);
    assert_string_equal(f.act, "replace:n4->D2");
    assert_int_equal(template_node(&f, "D2", &a).alloc[0], 2000);
    dfree(&f);
    /* a DaemonSet of 500m on every node: a D2 keeps 1.5 cpu, too little;
     * no cheaper type hosts the pods, so nothing happens */
    b->n = 0;
    disrupt_estate(b, NULL, NULL);
    add(b, "---\napiVersion: v1\nkind: List\nmetadata: {resourceVersion: \"\"}\nitems:\n");
    daemonset(b, "500m", NULL);
    dplan(&f, b);
    assert_string_equal(f.act, "");
    berth_knode n = template_node(&f, "D2", &a);
    assert_int_equal(n.alloc[0], 1500);
    assert_int_equal(n.alloc[1], 16LL * 1024 * 1024 * 1024 - 128LL * 1024 * 1024);
    assert_int_equal(n.alloc_pods, 29);
    dfree(&f);
    /* the DaemonSet runs only on D4 nodes (its nodeSelector): the D2
     * replacement does not run it, the consolidation is back */
    b->n = 0;
    disrupt_estate(b, NULL, NULL);
    add(b, "---\napiVersion: v1\nkind: List\nmetadata: {resourceVersion: \"\"}\nitems:\n");
    daemonset(b, "500m", "        nodeSelector: {node.kubernetes.io/instance-type: D4}\n");
    dplan(&f, b);
    assert_string_equal(f.act, "replace:n4->D2");
    assert_int_equal(template_node(&f, "D2", &a).alloc[0], 2000);
    assert_int_equal(template_node(&f, "D4", &a).alloc[0], 3500);
    dfree(&f);
    /* the pool's nodes carry a taint the DaemonSet does not tolerate (the
     * workload does): nothing of the DaemonSet on the replacement */
    b->n = 0;
    disrupt_estate(b, "      taints: [{key: dedicated, value: web, effect: NoSchedule}]\n",
                   "    tolerations: [{key: dedicated, operator: Equal, value: web, "
                   "effect: NoSchedule}]\n");
    add(b, "---\napiVersion: v1\nkind: List\nmetadata: {resourceVersion: \"\"}\nitems:\n");
    daemonset(b, "500m", NULL);
    dplan(&f, b);
    assert_string_equal(f.act, "replace:n4->D2");
    dfree(&f);
    /* tolerating it (operator Exists) brings the DaemonSet back */
    b->n = 0;
    disrupt_estate(b, "      taints: [{key: dedicated, value: web, effect: NoSchedule}]\n",
                   "    tolerations: [{key: dedicated, operator: Equal, value: web, "
                   "effect: NoSchedule}]\n");
    add(b, "---\napiVersion: v1\nkind: List\nmetadata: {resourceVersion: \"\"}\nitems:\n");
    daemonset(b, "500m", "        tolerations: [{operator: Exists}]\n");
    dplan(&f, b);
    assert_string_equal(f.act, "");
    dfree(&f);
    free(b);
    berth_arena_free(&a);
}

/* `disrupt simulate`: the replacement joins with the DaemonSet's share
 * taken. n4 (1850m allocatable) has no room for the DaemonSet pod made for
 * it: that pending pod holds no consolidation back (Karpenter does not
 * provision for DaemonSet pods) and goes with n4 (it does not stay
 * pending). */
static void test_disrupt_simulate_daemons(void **st)
{
    (void)st;
    buf *b = calloc(1, sizeof *b);
    disrupt_estate_cpu(b, NULL, NULL, "1850m");
    add(b, "---\napiVersion: v1\nkind: List\nmetadata: {resourceVersion: \"\"}\nitems:\n");
    /* 100m: the pods still fit a D2 */
    daemonset(b, "100m", NULL);
    berth_disrupt m;
    berth_error e;
    berth_source src;
    berth_disrupt_init(&m);
    if (berth_doc_load_buffer(&m.kube.arena, "t.yaml", b->s, b->n, &src, &e) ||
        berth_disrupt_load(&m, &src, 1, &e) || berth_disrupt_finalize(&m, &e))
        fail_msg("load: %s", e.msg);
    int64_t t0 = at_secs();
    berth_dsim_options o = {t0, t0 + 600, 60, 60, 0};
    berth_dtimeline tl;
    memset(&tl, 0, sizeof tl);
    if (berth_disrupt_simulate(&m, &o, &tl, &e))
        fail_msg("simulate: %s", e.msg);
    assert_int_equal(tl.nodes_end, 1);
    assert_int_equal(m.kube.nnodes, 1);
    const berth_knode *n = &m.kube.nodes[0];
    assert_string_not_equal(n->name, "n4");
    assert_int_equal(n->alloc[0], 1900);
    assert_int_equal(n->alloc_pods, 29);
    /* the web pods run on the replacement, the agent pod for n4 is gone */
    assert_int_equal(tl.pending_end, 0);
    berth_dtimeline_free(&tl);
    berth_disrupt_free(&m);
    free(b);
}

/* ---- autoscaling ---- */

/* Group "general" (type s4: 4 cpu, 16Gi, 10 pods; no provider overhead),
 * one existing node "full" whose 1 cpu is taken; a DaemonSet of 1 cpu
 * (its pod for "full" cannot fit); a Deployment of `replicas` x 1 cpu. */
static void autoscale_estate(buf *b, int with_ds, int replicas)
{
    add(b, "apiVersion: berth.io/v1\nkind: VirtualNodeGroup\nmetadata: {name: general}\n"
           "spec: {spotPercentage: 0}\n---\n"
           "apiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: s4}\nspec:\n"
           "  capacity: {cpu: \"4\", memory: 16Gi, pods: 10}\n"
           "  offerings: [{zone: z1, capacityType: on-demand, price: 0.2}]\n---\n");
    add(b, "apiVersion: v1\nkind: List\nmetadata: {resourceVersion: \"\"}\nitems:\n"
           "- apiVersion: v1\n  kind: Node\n  metadata:\n    name: full\n    uid: node-full\n"
           "    labels: {berth.io/virtual-node-group: general, node.kubernetes.io/instance-type: s4, "
           "topology.kubernetes.io/zone: z1, karpenter.sh/capacity-type: on-demand, "
           "kubernetes.io/hostname: full}\n"
           "    managedFields:\n    - {manager: kubelet, operation: Update, apiVersion: v1}\n"
           "  status:\n    allocatable: {cpu: \"1\", memory: 4Gi, pods: \"10\"}\n"
           "    conditions: [{type: Ready, status: \"True\"}]\n"
           "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: db-0\n    namespace: default\n"
           "    uid: pod-db-0\n    ownerReferences:\n"
           "    - {apiVersion: apps/v1, kind: StatefulSet, name: db, uid: sts-db, controller: true}\n"
           "  spec:\n    nodeName: full\n    containers:\n    - name: c\n      image: db:1\n"
           "      resources: {requests: {cpu: \"1\", memory: 1Gi}}\n"
           "  status: {phase: Running, conditions: [{type: Ready, status: \"True\"}]}\n");
    if (with_ds)
        daemonset(b, "1", NULL);
    if (replicas)
        add(b, "- apiVersion: apps/v1\n  kind: Deployment\n  metadata:\n    name: web\n"
               "    namespace: default\n    uid: deploy-web\n    generation: 3\n"
               "  spec:\n    replicas: %d\n    selector: {matchLabels: {app: web}}\n"
               "    template:\n      metadata: {labels: {app: web}}\n      spec:\n"
               "        containers:\n        - name: web\n          image: web:2\n"
               "          resources: {requests: {cpu: \"1\", memory: 1Gi}}\n"
               "  status: {replicas: 0, readyReplicas: 0}\n",
            replicas);
}

typedef struct afix {
    berth_autoscale m;
    berth_aplan p;
} afix;

static void aplan(afix *f, const buf *b, berth_apolicy policy)
{
    berth_error e;
    berth_source src;
    berth_autoscale_init(&f->m);
    memset(&f->p, 0, sizeof f->p);
    if (berth_doc_load_buffer(&f->m.kube.arena, "t.yaml", b->s, b->n, &src, &e) ||
        berth_autoscale_load(&f->m, &src, 1, &e) || berth_autoscale_finalize(&f->m, &e))
        fail_msg("load: %s\n%s", e.msg, b->s);
    berth_aplan_options o = {0};
    o.now = at_secs();
    o.policy = policy;
    o.expander = BERTH_EXPANDER_LEAST_WASTE;
    if (berth_autoscale_plan(&f->m, &o, &f->p, &e))
        fail_msg("plan: %s", e.msg);
}

static void afree(afix *f)
{
    berth_aplan_free(&f->p);
    berth_autoscale_free(&f->m);
}

static uint32_t new_nodes(const afix *f)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < f->p.nup; i++)
        n += f->p.up[i].count;
    return n;
}

/* pods of the plan's scale-up whose name starts with prefix */
static uint32_t up_pods(const afix *f, const char *prefix)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < f->p.nup; i++)
        for (uint32_t j = 0; j < f->p.up[i].npods; j++)
            n += !strncmp(f->m.kube.pods[f->p.up[i].pods[j]].name, prefix, strlen(prefix));
    return n;
}

static const char *agent_unsched(const afix *f)
{
    for (uint32_t i = 0; i < f->p.nunsched; i++)
        if (!strncmp(f->m.kube.pods[f->p.unsched[i].pod].name, "agent-", 6))
            return f->p.unsched[i].reason;
    return NULL;
}

static void test_autoscale_daemons(void **st)
{
    (void)st;
    static const berth_apolicy pol[2] = {BERTH_POLICY_OCEAN, BERTH_POLICY_CLUSTER_AUTOSCALER};
    buf *b = calloc(1, sizeof *b);
    for (int i = 0; i < 2; i++) {
        afix f;
        /* the DaemonSet alone: its pod pinned to "full" does not fit there,
         * and no node is bought for it */
        b->n = 0;
        autoscale_estate(b, 1, 0);
        aplan(&f, b, pol[i]);
        assert_int_equal(f.p.nup, 0);
        const char *why = agent_unsched(&f);
        assert_non_null(why);
        assert_non_null(strstr(why, "DaemonSet pod for node full"));
        afree(&f);
        /* four web replicas that fit nowhere drive the scale-up; each new
         * s4 runs the DaemonSet (1 cpu), so it takes 3 of them: 2 nodes */
        b->n = 0;
        autoscale_estate(b, 1, 4);
        aplan(&f, b, pol[i]);
        assert_int_equal(new_nodes(&f), 2);
        assert_int_equal(up_pods(&f, "web-"), 4);
        assert_int_equal(up_pods(&f, "agent-"), 0);
        assert_non_null(agent_unsched(&f));
        afree(&f);
        /* without the DaemonSet one s4 takes all four */
        b->n = 0;
        autoscale_estate(b, 0, 4);
        aplan(&f, b, pol[i]);
        assert_int_equal(new_nodes(&f), 1);
        assert_int_equal(up_pods(&f, "web-"), 4);
        assert_int_equal(f.p.nunsched, 0);
        afree(&f);
    }
    free(b);
}

/* A DaemonSet that selects one group's label takes room only on that
 * group's nodes: the web pods (4 x 1 cpu) go to "general" (unlabelled,
 * the most general group), whose nodes do not run it. */
static void test_autoscale_daemon_selector(void **st)
{
    (void)st;
    buf *b = calloc(1, sizeof *b);
    autoscale_estate(b, 0, 4);
    daemonset(b, "1", "        nodeSelector: {team: data}\n");
    add(b, "---\napiVersion: berth.io/v1\nkind: VirtualNodeGroup\nmetadata: {name: data}\n"
           "spec: {labels: {team: data}, spotPercentage: 0}\n");
    afix f;
    aplan(&f, b, BERTH_POLICY_OCEAN);
    assert_int_equal(new_nodes(&f), 1);
    assert_int_equal(up_pods(&f, "web-"), 4);
    assert_int_equal(f.p.nunsched, 0); /* the DaemonSet runs on no existing node */
    afree(&f);
    free(b);
}

/* `autoscale simulate`: the launched node registers with the DaemonSet's
 * share taken (4 cpu - 1). */
static void test_autoscale_simulate_daemons(void **st)
{
    (void)st;
    buf *b = calloc(1, sizeof *b);
    autoscale_estate(b, 1, 2);
    berth_autoscale m;
    berth_error e;
    berth_source src;
    berth_autoscale_init(&m);
    if (berth_doc_load_buffer(&m.kube.arena, "t.yaml", b->s, b->n, &src, &e) ||
        berth_autoscale_load(&m, &src, 1, &e) || berth_autoscale_finalize(&m, &e))
        fail_msg("load: %s", e.msg);
    berth_atimeline t;
    berth_atimeline_init(&t);
    static const char ev[] = "apiVersion: berth.io/v1\nkind: AutoscaleEvent\nspec:\n"
                             "  at: 2024-05-01T12:03:00Z\n  type: PriceChange\n"
                             "  instanceType: s4\n  zone: z1\n  capacityType: on-demand\n"
                             "  price: 0.2\n";
    if (berth_doc_load_buffer(&m.kube.arena, "ev.yaml", ev, sizeof ev - 1, &src, &e) ||
        berth_atimeline_load_events(&t, &m, &src, &e))
        fail_msg("events: %s", e.msg);
    berth_atimeline_finish(&t);
    int64_t t0 = at_secs();
    berth_asim_options o = {t0, t0 + 300, 60, 120, 300, 0};
    berth_asim_result r;
    memset(&r, 0, sizeof r);
    if (berth_autoscale_simulate(&m, &t, &o, &r, &e))
        fail_msg("simulate: %s", e.msg);
    assert_int_equal(r.launched, 1);
    /* (the full node's pod then moves to the new one: Ocean scales it down) */
    const berth_knode *n = NULL;
    for (uint32_t i = 0; i < m.kube.nnodes; i++)
        if (!strncmp(m.kube.nodes[i].name, "general-", 8))
            n = &m.kube.nodes[i];
    assert_non_null(n);
    assert_int_equal(n->alloc[0], 3000);
    assert_int_equal(n->alloc_pods, 9);
    berth_asim_result_free(&r);
    berth_atimeline_free(&t);
    berth_autoscale_free(&m);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_disrupt_replacement_room),
        cmocka_unit_test(test_disrupt_simulate_daemons),
        cmocka_unit_test(test_autoscale_daemons),
        cmocka_unit_test(test_autoscale_daemon_selector),
        cmocka_unit_test(test_autoscale_simulate_daemons),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
