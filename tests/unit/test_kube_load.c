/* tests/unit/test_kube_load.c - the kube input decoder (SPEC 6.1):
 * `kubectl get nodes,pods -A -o yaml` output as is (also with --strict),
 * Node and Pod fields (also those only the planners read: annotations,
 * deletion, capacity as written, Ready, mirror, nominations), workloads and
 * namespaces, KubeSchedulerConfiguration with each NodeResourcesFit
 * strategy and plugin sets, located errors, and the planners' per-node and
 * per-pod tables (berth_krows_sync). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "berth/kube.h"

#define MI (1024LL * 1024)
#define GI (1024LL * MI)

static int load_str(berth_kcluster *k, const char *yaml, int strict, berth_error *e)
{
    berth_kube_init(k);
    berth_error_clear(e);
    berth_source src;
    int rc = berth_doc_load_buffer(&k->arena, "t.yaml", yaml, strlen(yaml), &src, e);
    if (!rc)
        rc = berth_kube_load(k, &src, strict, e);
    return rc;
}

static void load_ok(berth_kcluster *k, const char *yaml)
{
    berth_error e;
    if (load_str(k, yaml, 1, &e))
        fail_msg("load failed: %s", e.msg);
}

/* Expects a load error containing every fragment (NULL-terminated). */
static void load_bad(const char *yaml, int strict, const char *frag1, const char *frag2)
{
    berth_kcluster k;
    berth_error e;
    int rc = load_str(&k, yaml, strict, &e);
    if (rc != BERTH_EINVAL)
        fail_msg("expected EINVAL for:\n%s\ngot %d (%s)", yaml, rc, e.msg);
    if (frag1 && !strstr(e.msg, frag1))
        fail_msg("message '%s' lacks '%s'", e.msg, frag1);
    if (frag2 && !strstr(e.msg, frag2))
        fail_msg("message '%s' lacks '%s'", e.msg, frag2);
    berth_kube_free(&k);
}

static void test_kubectl_list(void **st)
{
    (void)st;
    for (int strict = 0; strict < 2; strict++) {
        berth_kcluster k;
        berth_kube_init(&k);
        berth_error e;
        berth_error_clear(&e);
        berth_source src;
        int rc = berth_doc_load_file(&k.arena, "examples/kube/kubectl-list.yaml", &src, &e);
        if (!rc)
            rc = berth_kube_load(&k, &src, strict, &e);
        if (rc)
            fail_msg("kubectl-list.yaml: %s", e.msg);
        assert_int_equal(k.nnodes, 3);
        assert_int_equal(k.npods, 6);
        const berth_knode *n0 = &k.nodes[0];
        assert_string_equal(n0->name, "aks-pool1-12345678-vmss000000");
        assert_int_equal(n0->alloc[BERTH_KRES_CPU], 3860);
        assert_int_equal(n0->alloc[BERTH_KRES_MEMORY], 12880168LL * 1024);
        assert_int_equal(n0->alloc[BERTH_KRES_EPHEMERAL], 119703055367LL);
        assert_int_equal(n0->alloc_pods, 110);
        /* zero hugepages add no column */
        assert_int_equal(k.nres, 3);
        assert_string_equal(berth_labels_get(&n0->labels, "topology.kubernetes.io/zone"),
                            "eastus-1");
        for (uint32_t i = 1; i < n0->labels.n; i++)
            assert_true(strcmp(n0->labels.items[i - 1].key, n0->labels.items[i].key) < 0);
        assert_int_equal(n0->nimages, 3);
        assert_int_equal(k.nodes[2].ntaints, 1);
        assert_int_equal(k.nodes[2].taints[0].effect, BERTH_EFFECT_NOSCHEDULE);
        const berth_kpod *proxy = &k.pods[0];
        assert_string_equal(proxy->ns, "kube-system");
        assert_int_equal(proxy->priority, 2000001000);
        assert_int_equal(proxy->nports, 1);
        assert_int_equal(proxy->ports[0].port, 10256);
        assert_string_equal(proxy->ports[0].ip, "0.0.0.0");
        assert_string_equal(proxy->owner_kind, "DaemonSet");
        assert_int_equal(proxy->ntols, 2);
        assert_int_equal(proxy->tols[0].toleration_seconds, 300);
        assert_non_null(proxy->node_name);
        const berth_kpod *pending = &k.pods[4];
        assert_string_equal(pending->name, "web-6f7c9d8b5-ccccc");
        assert_null(pending->node_name);
        assert_int_equal(pending->req[BERTH_KRES_CPU], 500);
        assert_int_equal(pending->req[BERTH_KRES_MEMORY], 512 * MI);
        assert_int_equal(pending->qos, BERTH_QOS_BURSTABLE);
        assert_true(pending->has_created);
        assert_int_equal(pending->created, 1714633204); /* 2024-05-02T07:00:04Z */
        assert_int_equal(k.pods[5].qos, BERTH_QOS_GUARANTEED);
        assert_int_equal(k.pods[1].qos, BERTH_QOS_BURSTABLE);
        /* the pods share their namespace's name and their node's name
         * (kube/load.c share_names): same texts, one copy each */
        for (uint32_t p = 0; p < k.npods; p++) {
            for (uint32_t q = 0; q < p; q++)
                if (!strcmp(k.pods[p].ns, k.pods[q].ns))
                    assert_ptr_equal(k.pods[p].ns, k.pods[q].ns);
            for (uint32_t n = 0; n < k.nnodes && k.pods[p].node_name; n++)
                if (!strcmp(k.pods[p].node_name, k.nodes[n].name))
                    assert_ptr_equal(k.pods[p].node_name, k.nodes[n].name);
        }
        assert_ptr_equal(proxy->node_name, k.nodes[0].name);
        berth_kube_free(&k);
    }
}

static const char *NODE =
    "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels: {zone: b, a: x}\n"
    "  annotations: {berth.io/usage-memory: 70Gi}\n"
    "spec:\n  unschedulable: true\n  taints:\n  - {key: k, value: v, effect: PreferNoSchedule}\n"
    "status:\n  capacity: {cpu: \"8\", memory: 32Gi, nvidia.com/gpu: \"2\"}\n"
    "  usage: {cpu: 1500m}\n";

static void test_node(void **st)
{
    (void)st;
    berth_kcluster k;
    load_ok(&k, NODE);
    const berth_knode *n = &k.nodes[0];
    assert_true(n->unschedulable);
    assert_string_equal(n->labels.items[0].key, "a");
    assert_int_equal(n->alloc[BERTH_KRES_CPU], 8000);
    assert_int_equal(n->alloc[berth_kube_resource(&k, "nvidia.com/gpu", 0)], 2);
    assert_int_equal(n->alloc_pods, 110); /* default when the input omits it */
    assert_true(n->has_usage);
    assert_int_equal(n->usage[BERTH_KRES_CPU], 1500);
    assert_int_equal(n->usage[BERTH_KRES_MEMORY], 70 * GI);
    assert_int_equal(n->taints[0].effect, BERTH_EFFECT_PREFERNOSCHEDULE);
    berth_kube_free(&k);
}

static const char *POD_FULL =
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: shop\n"
    "  labels: {app: web, tier: front}\n"
    "  deletionTimestamp: \"2024-05-02T07:00:00Z\"\n"
    "spec:\n  schedulerName: my-sched\n  priority: 100\n"
    "  nodeSelector: {disk: ssd}\n"
    "  containers:\n  - name: c\n    image: nginx\n"
    "    ports: [{containerPort: 80, hostPort: 8080, protocol: UDP, hostIP: 10.0.0.1}, "
    "{containerPort: 81}]\n"
    "  tolerations:\n  - {operator: Exists}\n  - {key: a, value: b, effect: NoSchedule}\n"
    "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
    "        nodeSelectorTerms:\n        - matchExpressions: [{key: size, operator: Gt, "
    "values: [\"4\"]}]\n          matchFields: [{key: metadata.name, operator: In, values: "
    "[n1]}]\n        - {}\n"
    "      preferredDuringSchedulingIgnoredDuringExecution:\n"
    "      - {weight: 7, preference: {matchExpressions: [{key: z, operator: Exists}]}}\n"
    "    podAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
    "      - {labelSelector: {matchLabels: {app: db}}, topologyKey: zone, namespaces: [a, b]}\n"
    "    podAntiAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution:\n"
    "      - weight: 50\n        podAffinityTerm:\n          topologyKey: kubernetes.io/hostname\n"
    "          namespaceSelector: {}\n          labelSelector: {matchExpressions: [{key: app, "
    "operator: In, values: [web]}]}\n          matchLabelKeys: [tier]\n"
    "  topologySpreadConstraints:\n  - maxSkew: 2\n    topologyKey: zone\n"
    "    whenUnsatisfiable: DoNotSchedule\n    minDomains: 3\n    nodeTaintsPolicy: Honor\n"
    "    labelSelector: {matchLabels: {app: web}}\n    matchLabelKeys: [tier, missing]\n"
    "  - {maxSkew: 1, topologyKey: host, whenUnsatisfiable: ScheduleAnyway}\n";

static void test_pod_fields(void **st)
{
    (void)st;
    berth_kcluster k;
    load_ok(&k, POD_FULL);
    const berth_kpod *p = &k.pods[0];
    assert_string_equal(p->ns, "shop");
    assert_true(p->terminating);
    assert_string_equal(p->scheduler_name, "my-sched");
    assert_int_equal(p->priority, 100);
    assert_string_equal(berth_labels_get(&p->node_selector, "disk"), "ssd");
    assert_int_equal(p->nports, 1);
    assert_int_equal(p->ports[0].proto, BERTH_PROTO_UDP);
    assert_string_equal(p->ports[0].ip, "10.0.0.1");
    assert_int_equal(p->ntols, 2);
    assert_int_equal(p->tols[0].op, BERTH_TOL_EXISTS);
    assert_int_equal(p->tols[0].effect, BERTH_EFFECT_ALL);
    assert_true(p->has_req_affinity);
    assert_int_equal(p->nreq_terms, 2);
    assert_int_equal(p->req_terms[0].nexprs, 1);
    assert_int_equal(p->req_terms[0].exprs[0].op, BERTH_SEL_GT);
    assert_int_equal(p->req_terms[0].nfields, 1);
    assert_int_equal(p->req_terms[1].nexprs + p->req_terms[1].nfields, 0);
    assert_int_equal(p->npref_terms, 1);
    assert_int_equal(p->pref_terms[0].weight, 7);
    assert_int_equal(p->naff_req, 1);
    assert_int_equal(p->aff_req[0].nnamespaces, 2);
    assert_false(p->aff_req[0].has_ns_selector);
    assert_int_equal(p->nanti_pref, 1);
    assert_int_equal(p->anti_pref[0].weight, 50);
    assert_true(p->anti_pref[0].has_ns_selector);
    assert_int_equal(p->anti_pref[0].ns_selector.n, 0);
    assert_int_equal(p->anti_pref[0].selector.n, 2); /* + tier In [front] */
    assert_int_equal(p->nspread, 2);
    assert_int_equal(p->spread[0].max_skew, 2);
    assert_true(p->spread[0].do_not_schedule);
    assert_int_equal(p->spread[0].min_domains, 3);
    assert_true(p->spread[0].honor_node_affinity);
    assert_true(p->spread[0].honor_node_taints);
    assert_int_equal(p->spread[0].selector.n, 2);
    assert_int_equal(p->spread[0].nmatch_label_keys, 2);
    assert_false(p->spread[1].do_not_schedule);
    assert_int_equal(p->spread[1].min_domains, 1);
    assert_false(p->spread[1].honor_node_taints);
    assert_true(p->spread[1].selector.nothing);
    berth_kube_free(&k);
}

/* What the planners read beyond scheduling, decoded once here: typed
 * lists as the API server returns them (items without kind), managedFields,
 * conditions, ownerReferences with uid. */
static const char *PLANNER_FIELDS =
    "apiVersion: v1\nkind: NodeList\nmetadata: {resourceVersion: \"812\"}\nitems:\n"
    "- metadata:\n    name: n1\n    uid: 3b0c4e1a-0f5e-4d8e-9a55-2f1b7c9d0e11\n"
    "    deletionTimestamp: \"2024-05-01T11:00:00Z\"\n"
    "    labels: {karpenter.sh/initialized: \"true\"}\n"
    "    annotations: {karpenter.sh/do-not-disrupt: \"true\", node.alpha.kubernetes.io/ttl: \"0\"}\n"
    "    managedFields: [{manager: kubelet, operation: Update, apiVersion: v1}]\n"
    "  spec: {providerID: \"azure:///n1\"}\n"
    "  status:\n    capacity: {cpu: \"4\", memory: 16Gi, pods: \"110\", hugepages-1Gi: \"0\"}\n"
    "    allocatable: {cpu: 3860m, memory: 13Gi, pods: \"110\"}\n"
    "    conditions:\n    - {type: MemoryPressure, status: \"False\"}\n"
    "    - {type: Ready, status: \"False\", lastTransitionTime: \"2024-05-01T10:00:00Z\"}\n"
    "- metadata: {name: n2}\n"
    "---\n"
    "apiVersion: v1\nkind: PodList\nmetadata: {resourceVersion: \"813\"}\nitems:\n"
    "- metadata:\n    name: web-0\n    namespace: shop\n"
    "    creationTimestamp: \"2024-05-01T09:00:00Z\"\n"
    "    annotations: {kubernetes.io/config.mirror: 4f2a, controller.kubernetes.io/pod-deletion-cost: \"-7\"}\n"
    "    ownerReferences: [{apiVersion: v1, kind: Node, name: n1, uid: 3b0c4e1a-0f5e-4d8e-9a55-2f1b7c9d0e11, controller: true}]\n"
    "  spec: {nodeName: n1, containers: [{name: c, image: nginx}]}\n"
    "  status:\n    phase: Running\n    startTime: \"2024-05-01T09:00:05Z\"\n"
    "    nominatedNodeName: n2\n"
    "    conditions:\n    - {type: PodScheduled, status: \"True\"}\n"
    "    - {type: Ready, status: \"True\"}\n    - {type: Ready, status: \"False\"}\n"
    "- metadata: {name: web-1, namespace: shop}\n  spec: {containers: [{name: c}]}\n"
    "  status: {phase: Pending, conditions: [{type: Ready}]}\n";

static void test_planner_fields(void **st)
{
    (void)st;
    berth_kcluster k;
    load_ok(&k, PLANNER_FIELDS);
    assert_int_equal(k.nnodes, 2);
    const berth_knode *n = &k.nodes[0];
    assert_true(n->deleting);
    assert_int_equal(n->not_ready, 1);
    assert_string_equal(berth_kube_annotation(n->annotations, "karpenter.sh/do-not-disrupt"),
                        "true");
    assert_null(berth_kube_annotation(n->annotations, "karpenter.sh/nodepool-hash"));
    assert_int_equal(n->ncapacity, 4); /* as written, beside allocatable */
    assert_string_equal(n->capacity[1].name, "memory");
    assert_true(berth_quantity_value(n->capacity[1].q) == 16 * GI);
    assert_string_equal(n->capacity[3].name, "hugepages-1Gi");
    assert_int_equal(n->alloc[BERTH_KRES_CPU], 3860);
    n = &k.nodes[1];
    assert_false(n->deleting);
    assert_null(n->annotations);
    assert_int_equal(n->ncapacity, 0);
    assert_int_equal(k.npods, 2);
    const berth_kpod *p = &k.pods[0];
    assert_true(p->ready); /* the first Ready condition */
    assert_true(p->mirror);
    assert_string_equal(p->nominated, "n2");
    assert_string_equal(berth_kube_annotation(p->annotations,
                                              "controller.kubernetes.io/pod-deletion-cost"), "-7");
    assert_int_equal(p->line, 25); /* the item's first line */
    assert_int_equal(p->col, 3);
    assert_true(p->has_started);
    p = &k.pods[1];
    assert_false(p->ready);
    assert_false(p->mirror);
    assert_null(p->nominated);
    assert_null(p->annotations);
    berth_kube_free(&k);

    /* what the object layer rejects, located */
    load_bad("apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus:\n"
             "  allocatable: {cpu: \"1\"}\n  capacity: {cpu: 1x}\n",
             0, "t.yaml:6:19: status.capacity.cpu: invalid quantity '1x'", NULL);
    load_bad("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}]}\n"
             "status: {nominatedNodeName: {a: b}}\n",
             0, "t.yaml:5:29: status.nominatedNodeName: expected a string", NULL);
}

static void test_workloads(void **st)
{
    (void)st;
    berth_kcluster k;
    load_ok(&k, "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop, labels: {team: a}}\n---\n"
                "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\n"
                "spec: {selector: {app: web}, ports: [{port: 80}], type: ClusterIP}\n---\n"
                "apiVersion: v1\nkind: Service\nmetadata: {name: ext}\nspec: {type: ExternalName, "
                "externalName: x.example}\n---\n"
                "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: web-1, namespace: shop}\n"
                "spec:\n  replicas: 3\n  selector: {matchLabels: {app: web}}\n"
                "  template: {metadata: {labels: {app: web}}, spec: {containers: []}}\n---\n"
                "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\n"
                "spec: {serviceName: db, selector: {matchExpressions: [{key: app, operator: In, "
                "values: [db]}]}, template: {spec: {containers: []}}}\n---\n"
                "apiVersion: v1\nkind: ReplicationController\nmetadata: {name: rc}\n"
                "spec: {selector: {app: old}}\n---\n"
                "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: ds}\n"
                "spec: {selector: {matchLabels: {app: ds}}, template: {spec: {containers: []}}}\n---\n"
                "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: pdb}\n"
                "spec: {minAvailable: 1, selector: {matchLabels: {app: web}}}\n");
    assert_int_equal(k.nnamespaces, 1);
    assert_string_equal(berth_labels_get(&k.namespaces[0].labels, "team"), "a");
    assert_int_equal(k.nworkloads, 5); /* the selector-less Service is skipped */
    assert_string_equal(k.workloads[0].kind, "Service");
    assert_string_equal(k.workloads[0].ns, "shop");
    assert_int_equal(k.workloads[0].selector.n, 1);
    assert_string_equal(k.workloads[1].kind, "ReplicaSet");
    assert_string_equal(k.workloads[2].kind, "StatefulSet");
    assert_string_equal(k.workloads[2].ns, "default");
    assert_string_equal(k.workloads[3].kind, "ReplicationController");
    assert_string_equal(k.workloads[4].kind, "DaemonSet");
    berth_kube_free(&k);
}

static void test_ksc(void **st)
{
    (void)st;
    berth_kcluster k;
    load_ok(&k,
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
            "percentageOfNodesToScore: 40\nprofiles:\n"
            "- schedulerName: least\n"
            "- schedulerName: most\n  percentageOfNodesToScore: 10\n  plugins:\n"
            "    score:\n      disabled: [{name: ImageLocality}]\n"
            "      enabled: [{name: NodeResourcesFit, weight: 7}]\n"
            "    filter:\n      disabled: [{name: NodePorts}]\n"
            "    preFilter:\n      disabled: [{name: VolumeBinding}]\n"
            "  pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
            "      ignoredResources: [example.com/foo]\n"
            "      scoringStrategy:\n        type: MostAllocated\n"
            "        resources: [{name: cpu, weight: 2}, {name: nvidia.com/gpu, weight: 5}, "
            "{name: memory}]\n"
            "  - name: DefaultPreemption\n    args: {minCandidateNodesPercentage: 10}\n"
            "- schedulerName: ratio\n  plugins:\n    multiPoint:\n      disabled: [{name: '*'}]\n"
            "      enabled: [{name: NodeResourcesFit, weight: 3}, {name: NodeName}]\n"
            "  pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n"
            "        type: RequestedToCapacityRatio\n"
            "        requestedToCapacityRatio:\n          shape:\n"
            "          - {utilization: 0, score: 10}\n          - {utilization: 100, score: 0}\n"
            "  - name: NodeResourcesBalancedAllocation\n    args: {resources: [{name: cpu, weight: "
            "1}, {name: memory, weight: 1}, {name: nvidia.com/gpu, weight: 1}]}\n"
            "  - name: InterPodAffinity\n    args: {hardPodAffinityWeight: 5}\n"
            "  - name: PodTopologySpread\n    args:\n      defaultingType: List\n"
            "      defaultConstraints:\n      - {maxSkew: 1, topologyKey: zone, "
            "whenUnsatisfiable: ScheduleAnyway}\n");
    assert_int_equal(k.nprofiles, 3);
    assert_int_equal(k.percentage_of_nodes_to_score, 40);
    const berth_kprofile *l = berth_kube_find_profile(&k, "least");
    assert_non_null(l);
    assert_int_equal(l->fit_strategy, BERTH_FIT_LEAST_ALLOCATED);
    assert_int_equal(l->percentage_of_nodes_to_score, 40);
    assert_int_equal(l->weight[BERTH_KP_TAINT_TOLERATION], 3);
    const berth_kprofile *m = berth_kube_find_profile(&k, "most");
    assert_int_equal(m->fit_strategy, BERTH_FIT_MOST_ALLOCATED);
    assert_int_equal(m->percentage_of_nodes_to_score, 10);
    assert_false(m->scores & (1u << BERTH_KP_IMAGE_LOCALITY));
    assert_false(m->filters & (1u << BERTH_KP_NODE_PORTS));
    assert_true(m->filters & (1u << BERTH_KP_NODE_RESOURCES_FIT));
    assert_int_equal(m->weight[BERTH_KP_NODE_RESOURCES_FIT], 7);
    assert_int_equal(m->nfit_res, 3);
    uint32_t gpu = berth_kube_resource(&k, "nvidia.com/gpu", 0);
    assert_int_equal(m->fit_res[1].res, gpu);
    assert_int_equal(m->fit_res[1].weight, 5);
    assert_int_equal(m->fit_res[2].res, BERTH_KRES_MEMORY);
    assert_int_equal(m->fit_res[2].weight, 1);
    assert_true(m->ignored_res & (1u << berth_kube_resource(&k, "example.com/foo", 0)));
    const berth_kprofile *r = berth_kube_find_profile(&k, "ratio");
    assert_int_equal(r->fit_strategy, BERTH_FIT_REQUESTED_TO_CAPACITY_RATIO);
    assert_int_equal(r->filters, (1u << BERTH_KP_NODE_RESOURCES_FIT) | (1u << BERTH_KP_NODE_NAME));
    assert_int_equal(r->scores, 1u << BERTH_KP_NODE_RESOURCES_FIT);
    assert_int_equal(r->weight[BERTH_KP_NODE_RESOURCES_FIT], 3);
    assert_int_equal(r->nshape, 2);
    assert_int_equal(r->shape_util[1], 100);
    assert_int_equal(r->shape_score[0], 10);
    assert_int_equal(r->nfit_res, 2); /* defaults cpu, memory */
    assert_int_equal(r->nbalanced_res, 3);
    assert_int_equal(r->hard_pod_affinity_weight, 5);
    assert_false(r->spread_system_defaults);
    assert_int_equal(r->ndefault_spread, 1);
    assert_null(berth_kube_find_profile(&k, "nope"));
    berth_kube_free(&k);

    /* the example file */
    berth_kube_init(&k);
    berth_error e;
    berth_source src;
    int rc = berth_doc_load_file(&k.arena, "examples/kube/scheduler-config.yaml", &src, &e);
    if (!rc)
        rc = berth_kube_load(&k, &src, 1, &e);
    if (rc)
        fail_msg("scheduler-config.yaml: %s", e.msg);
    assert_int_equal(k.profiles[0].fit_strategy, BERTH_FIT_MOST_ALLOCATED);
    assert_false(k.profiles[0].scores & (1u << BERTH_KP_BALANCED_ALLOCATION));
    berth_kube_free(&k);

    /* no profiles: one default profile carrying the top-level percentage */
    load_ok(&k, "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                "percentageOfNodesToScore: 20\n");
    assert_int_equal(k.nprofiles, 1);
    assert_string_equal(k.profiles[0].name, "default-scheduler");
    assert_int_equal(k.profiles[0].percentage_of_nodes_to_score, 20);
    berth_kube_free(&k);
}

#define KSC "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
#define POD "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"

static void test_errors(void **st)
{
    (void)st;
    load_bad(POD "  containers:\n  - name: c\n    resources:\n      requests:\n        cpu: 1.2.3\n",
             0, "t.yaml:9:14: spec.containers[0].resources.requests.cpu: invalid quantity '1.2.3': "
                "invalid number",
             NULL);
    load_bad(POD "  containers:\n  - {name: c, resources: {requests: {cpu: \"2\"}, limits: "
                 "{cpu: \"1\"}}}\n",
             0, "less than or equal to its limit", NULL);
    load_bad(POD "  containers:\n  - {name: c, resoures: {}}\n", 1,
             "spec.containers[0].resoures", "did you mean 'resources'");
    /* unknown fields are fine unless strict */
    berth_kcluster k;
    load_ok(&k, POD "  containers:\n  - {name: c}\n  volumes: [{name: v, emptyDir: {}}]\n");
    berth_kube_free(&k);
    berth_error e;
    assert_int_equal(load_str(&k, POD "  containers: []\n  bogus: 1\n", 0, &e), 0);
    berth_kube_free(&k);
    load_bad(POD "  containers: []\n  bogus: 1\n", 1, "spec.bogus", "unknown field");
    load_bad(POD "  containers: []\n  tolerations: [{key: a, operator: Exists, value: b}]\n", 0,
             "spec.tolerations[0]", "invalid toleration");
    load_bad(POD "  containers: []\n  topologySpreadConstraints: [{maxSkew: 0, topologyKey: z, "
                 "whenUnsatisfiable: DoNotSchedule}]\n",
             0, "spec.topologySpreadConstraints[0].maxSkew", "out of range");
    load_bad(POD "  containers: []\n  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDur"
                 "ingExecution: {nodeSelectorTerms: [{matchExpressions: [{key: a, operator: "
                 "Near}]}]}}}\n",
             0, "operator", "unknown operator 'Near'");
    load_bad("apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {allocatable: {memory: "
             "-1Gi}}\n",
             0, "status.allocatable.memory", "must not be negative");
    load_bad("apiVersion: apps/v2\nkind: ReplicaSet\nmetadata: {name: r}\nspec: {}\n", 0,
             "apiVersion", "apps/v1");
    /* kinds berth does not read are skipped (test_kube_input.c), errors when strict */
    load_bad("apiVersion: v1\nkind: Gadget\nmetadata: {name: r}\n", 1, "unknown kind 'Gadget'", NULL);
    load_bad("apiVersion: v1\nkind: Deployment\nmetadata: {name: r}\n", 0, "needs apiVersion apps/v1",
             NULL);
    load_bad(KSC "profiles:\n- plugins:\n    score:\n      enabled: [{name: NodeResourceFit}]\n", 0,
             "profiles[0].plugins.score.enabled[0].name", "unknown plugin 'NodeResourceFit'");
    load_bad(KSC "profiles:\n- plugins:\n    score:\n      enabled: [{name: NodeName}]\n", 0,
             "has no score extension point", NULL);
    load_bad(KSC "profiles:\n- plugins:\n    score:\n      enabled: [{name: ImageLocality, "
                 "weight: 0}]\n",
             0, "weight", "out of range");
    load_bad(KSC "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
                 "      scoringStrategy:\n        resources: [{name: cpu, weight: 101}]\n",
             0, "scoringStrategy.resources[0].weight", "out of range");
    load_bad(KSC "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
                 "      scoringStrategy:\n        type: RequestedToCapacityRatio\n"
                 "        requestedToCapacityRatio:\n          shape: [{utilization: 50, score: "
                 "1}, {utilization: 50, score: 2}]\n",
             0, "shape[1].utilization", "strictly increasing");
    load_bad(KSC "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
                 "      scoringStrategy:\n        type: RequestedToCapacityRatio\n"
                 "        requestedToCapacityRatio:\n          shape: [{utilization: 50, score: "
                 "11}]\n",
             0, "shape[0].score", "out of range");
    load_bad(KSC "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
                 "      scoringStrategy: {type: Balanced}\n",
             0, "scoringStrategy.type", "LeastAllocated");
    load_bad(KSC "profiles:\n- {schedulerName: a}\n- {schedulerName: a}\n", 0, "defined twice",
             NULL);
    load_bad(KSC "profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args:\n"
                 "      defaultConstraints: [{maxSkew: 1, topologyKey: z, whenUnsatisfiable: "
                 "ScheduleAnyway}]\n",
             0, "defaultConstraints", "defaultingType System");
}

/* NodeAffinityArgs.addedAffinity, node-affinity values the API server
 * accepts but labels.NewRequirement rejects, and the empty toleration
 * operator (issue 11 item 6) */
static void test_node_affinity_args(void **st)
{
    (void)st;
    berth_kcluster k;
    load_ok(&k, KSC "profiles:\n- schedulerName: a\n  pluginConfig:\n  - name: NodeAffinity\n"
                    "    args:\n      addedAffinity:\n"
                    "        requiredDuringSchedulingIgnoredDuringExecution:\n"
                    "          nodeSelectorTerms:\n"
                    "          - matchExpressions: [{key: pool, operator: In, values: [apps]}]\n"
                    "          - matchFields: [{key: metadata.name, operator: NotIn, values: [n1]}]\n"
                    "        preferredDuringSchedulingIgnoredDuringExecution:\n"
                    "        - {weight: 0, preference: {matchExpressions: [{key: x, operator: "
                    "Exists}]}}\n"
                    "        - {weight: 150, preference: {matchExpressions: [{key: gen, operator: "
                    "Gt, values: [\"3\"]}]}}\n"
                    "- schedulerName: nothing\n  pluginConfig:\n  - name: NodeAffinity\n"
                    "    args:\n      addedAffinity:\n"
                    "        requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: []}\n"
                    "- schedulerName: plain\n");
    const berth_kprofile *a = berth_kube_find_profile(&k, "a");
    assert_non_null(a);
    assert_true(a->has_added_req);
    assert_int_equal(a->nadded_req, 2);
    assert_int_equal(a->added_req[0].nexprs, 1);
    assert_string_equal(a->added_req[0].exprs[0].key, "pool");
    assert_int_equal(a->added_req[1].nfields, 1);
    assert_int_equal(a->added_req[1].fields[0].op, BERTH_SEL_NOTIN);
    assert_int_equal(a->nadded_pref, 2);
    assert_int_equal(a->added_pref[0].weight, 0);
    assert_int_equal(a->added_pref[1].weight, 150);
    assert_int_equal(a->added_pref[1].term.exprs[0].op, BERTH_SEL_GT);
    const berth_kprofile *n = berth_kube_find_profile(&k, "nothing");
    assert_true(n->has_added_req);
    assert_int_equal(n->nadded_req, 0);
    assert_int_equal(n->nadded_pref, 0);
    const berth_kprofile *pl = berth_kube_find_profile(&k, "plain");
    assert_false(pl->has_added_req);
    assert_int_equal(pl->nadded_pref, 0);
    berth_kube_free(&k);

    /* addedAffinity must parse (upstream nodeaffinity.New fails otherwise) */
    load_bad(KSC "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n    args:\n"
                 "      addedAffinity:\n        requiredDuringSchedulingIgnoredDuringExecution:\n"
                 "          nodeSelectorTerms:\n"
                 "          - matchExpressions: [{key: pool, operator: In, values: [\"a b\"]}]\n",
             0,
             "profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuring"
             "Execution.nodeSelectorTerms[0].matchExpressions[0]",
             "invalid requirement");
    load_bad(KSC "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n    args:\n"
                 "      addedAffinity:\n        preferredDuringSchedulingIgnoredDuringExecution:\n"
                 "        - {weight: 1, preference: {matchExpressions: [{key: g, operator: Lt, "
                 "values: [ten]}]}}\n",
             0, "preference.matchExpressions[0]", "Gt and Lt need an integer value");
    load_bad(KSC "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n    args:\n"
                 "      addedAffinity:\n        preferredDuringSchedulingIgnoredDuringExecution:\n"
                 "        - {weight: -1, preference: {matchExpressions: [{key: g, operator: "
                 "Exists}]}}\n",
             0, "preferredDuringSchedulingIgnoredDuringExecution[0].weight", NULL);
    load_bad(KSC "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n    args:\n"
                 "      addedAffinity: {requiredDuringSchedulingRequiredDuringExecution: {}}\n",
             1, "addedAffinity.requiredDuringSchedulingRequiredDuringExecution", "unknown field");

    /* a pod's node-affinity values: what the API server accepts loads; a
     * term holding a value labels.NewRequirement rejects is marked invalid */
    load_ok(&k, POD "  containers: []\n  affinity:\n    nodeAffinity:\n"
                    "      requiredDuringSchedulingIgnoredDuringExecution:\n"
                    "        nodeSelectorTerms:\n"
                    "        - matchExpressions: [{key: zone, operator: NotIn, values: [\"z 1\"]}]\n"
                    "        - matchExpressions: [{key: zone, operator: In, values: [z1]}]\n"
                    "        - matchExpressions: [{key: gen, operator: Gt, values: [\"-1\"]}]\n"
                    "      preferredDuringSchedulingIgnoredDuringExecution:\n"
                    "      - {weight: 3, preference: {matchExpressions: [{key: gen, operator: Lt, "
                    "values: [x]}]}}\n"
                    "      - {weight: 4, preference: {matchExpressions: [{key: zone, operator: In, "
                    "values: [z1, \"" "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" "\"]}]}}\n"
                    "      - {weight: 5, preference: {matchExpressions: [{key: zone, operator: "
                    "Exists}]}}\n");
    const berth_kpod *p = &k.pods[0];
    assert_int_equal(p->nreq_terms, 3);
    assert_true(p->req_terms[0].invalid);
    assert_false(p->req_terms[1].invalid);
    assert_true(p->req_terms[2].invalid); /* "-1": an integer, not a label value */
    assert_int_equal(p->npref_terms, 3);
    assert_true(p->pref_terms[0].term.invalid);
    assert_true(p->pref_terms[1].term.invalid); /* 64 characters */
    assert_false(p->pref_terms[2].term.invalid);
    /* the invalid term matches no node, not even one whose labels it names */
    berth_label zl[] = {{"gen", "5"}, {"zone", "z2"}};
    berth_knode nd = {.name = "n", .labels = {zl, 2}};
    assert_false(berth_kube_node_affinity_matches(p, &nd));
    zl[1].value = "z1";
    assert_true(berth_kube_node_affinity_matches(p, &nd));
    berth_kube_free(&k);
    /* what the API server itself rejects stays an error */
    load_bad(POD "  containers: []\n  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDur"
                 "ingExecution: {nodeSelectorTerms: [{matchExpressions: [{key: a, operator: "
                 "In, values: []}]}]}}}\n",
             0, "matchExpressions[0]", "need at least one value");
    load_bad(POD "  containers: []\n  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDur"
                 "ingExecution: {nodeSelectorTerms: [{matchExpressions: [{key: \"a b\", operator: "
                 "Exists}]}]}}}\n",
             0, "matchExpressions[0]", "invalid requirement");
    load_bad(POD "  containers: []\n  affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDur"
                 "ingExecution: [{weight: 1, preference: {matchExpressions: [{key: a, operator: "
                 "Gt, values: [\"1\", \"2\"]}]}}]}}\n",
             0, "matchExpressions[0]", "exactly one value");
    /* label selectors (pod affinity, spread, PDBs) keep full validation */
    load_bad(POD "  containers: []\n  affinity: {podAffinity: {requiredDuringSchedulingIgnoredDur"
                 "ingExecution: [{topologyKey: zone, labelSelector: {matchExpressions: [{key: app, "
                 "operator: In, values: [\"a b\"]}]}}]}}\n",
             0, "labelSelector.matchExpressions[0]", "invalid requirement");

    /* tolerations: an empty operator is Equal */
    load_ok(&k, POD "  containers: []\n  tolerations:\n  - {key: a, operator: \"\", value: b, "
                    "effect: NoSchedule}\n");
    assert_int_equal(k.pods[0].ntols, 1);
    assert_int_equal(k.pods[0].tols[0].op, BERTH_TOL_EQUAL);
    berth_taint ab = {"a", "b", BERTH_EFFECT_NOSCHEDULE}, ac = {"a", "c", BERTH_EFFECT_NOSCHEDULE};
    assert_true(berth_toleration_tolerates(&k.pods[0].tols[0], &ab));
    assert_false(berth_toleration_tolerates(&k.pods[0].tols[0], &ac));
    berth_kube_free(&k);
    load_bad(POD "  containers: []\n  tolerations: [{operator: \"\", value: b}]\n", 0,
             "spec.tolerations[0]", "operator must be Exists when key is empty");
    load_bad(POD "  containers: []\n  tolerations: [{key: a, operator: Equals}]\n", 0,
             "spec.tolerations[0].operator", "got 'Equals'");
}

/* berth_krows_sync: a planner's per-node and per-pod tables follow the
 * model's nodes and pods, each new row filled once in order; the first
 * fill error stops it. */
typedef struct {
    uint32_t i;
    int kind; /* 1 node, 2 pod */
} test_row;

typedef struct {
    uint32_t calls, fail_at; /* fail_at: the node row whose fill fails (UINT32_MAX: none) */
} row_ctx;

static int fill_node(void *vc, berth_dec *d, uint32_t i, void *row)
{
    (void)d;
    row_ctx *c = vc;
    c->calls++;
    *(test_row *)row = (test_row){i, 1};
    return i == c->fail_at ? BERTH_EINVAL : 0;
}

static int fill_pod(void *vc, berth_dec *d, uint32_t i, void *row)
{
    (void)d;
    ((row_ctx *)vc)->calls++;
    *(test_row *)row = (test_row){i, 2};
    return 0;
}

static void test_planner_rows(void **st)
{
    (void)st;
    berth_kcluster k;
    load_ok(&k, "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\n"
                "apiVersion: v1\nkind: Node\nmetadata: {name: b}\n---\n"
                "apiVersion: v1\nkind: Node\nmetadata: {name: c}\n---\n"
                POD "  containers: []\n---\n"
                "apiVersion: v1\nkind: Pod\nmetadata: {name: q}\nspec:\n  containers: []\n");
    assert_int_equal(k.nnodes, 3);
    assert_int_equal(k.npods, 2);
    berth_error e;
    berth_error_clear(&e);
    berth_dec d;
    berth_dec_init(&d, &k.arena, "t.yaml", &e);
    for (int round = 0; round < 2; round++) {
        test_row *nr = NULL, *pr = NULL;
        uint32_t nn = 0, capn = 0, np = 0, capp = 0;
        berth_krows nodes = {(void **)&nr, &nn, &capn, sizeof *nr, fill_node};
        berth_krows pods = {(void **)&pr, &np, &capp, sizeof *pr, fill_pod};
        row_ctx c = {0, round ? UINT32_MAX : 1};
        if (!round) { /* node row 1 fails: nodes stop after it, pods wait */
            assert_int_equal(berth_krows_sync(&d, &k, &nodes, &pods, &c), BERTH_EINVAL);
            assert_int_equal(nn, 2);
            assert_int_equal(np, 0);
            assert_int_equal(c.calls, 2);
            c.fail_at = UINT32_MAX;
        }
        assert_int_equal(berth_krows_sync(&d, &k, &nodes, &pods, &c), 0);
        assert_int_equal(nn, 3);
        assert_int_equal(np, 2);
        assert_int_equal(c.calls, 5);
        for (uint32_t i = 0; i < 3; i++)
            assert_true(nr[i].i == i && nr[i].kind == 1);
        for (uint32_t i = 0; i < 2; i++)
            assert_true(pr[i].i == i && pr[i].kind == 2);
        /* nothing new: no fill */
        assert_int_equal(berth_krows_sync(&d, &k, &nodes, &pods, &c), 0);
        assert_int_equal(c.calls, 5);
        free(nr);
        free(pr);
    }
    berth_kube_free(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kubectl_list), cmocka_unit_test(test_node),
        cmocka_unit_test(test_pod_fields),   cmocka_unit_test(test_workloads),
        cmocka_unit_test(test_ksc),          cmocka_unit_test(test_errors),
        cmocka_unit_test(test_node_affinity_args), cmocka_unit_test(test_planner_fields),
        cmocka_unit_test(test_planner_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
