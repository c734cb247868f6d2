/* tests/unit/test_kube_workloads.c - berth_kube_expand on objects shaped as
 * kubectl emits them (managedFields, status blocks, ownerReferences with
 * uid): Deployments with and without their ReplicaSets and live pods (the
 * newest revision's template, live pods of every ReplicaSet counted,
 * terminating ones not, pods of a ReplicaSet missing from the input),
 * ReplicaSet adoption by selector and uid checks, ReplicationController,
 * StatefulSet ordinals and claims (an existing zonal PVC applies
 * VolumeZone, a missing one is created unbound), Job counts, DaemonSets
 * (taints, the automatic tolerations, nodeSelector, pods already there, a
 * pinned pod that does not fit), PriorityClass resolution (globalDefault,
 * system classes, spec.priority kept, classes in a later file, the unknown
 * class error), terminating pending pods, the generated-pod cap, names
 * never colliding, and the disruption and autoscaling models keeping
 * their per-pod tables parallel. */
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
#include "berth/kube.h"

static int load_into(berth_kcluster *k, const char *yaml, berth_error *e)
{
    berth_error_clear(e);
    berth_source src;
    int rc = berth_doc_load_buffer(&k->arena, "t.yaml", yaml, strlen(yaml), &src, e);
    if (!rc)
        rc = berth_kube_load(k, &src, 1, e);
    return rc;
}

/* loads (strict) and expands; fails the test on error */
static void expand_ok(berth_kcluster *k, const char *yaml)
{
    berth_error e;
    berth_kube_init(k);
    if (load_into(k, yaml, &e) || berth_kube_expand(k, &e))
        fail_msg("load/expand failed: %s", e.msg);
}

/* load or expand must fail with EINVAL and a message holding both fragments */
static void expand_bad(const char *yaml, const char *frag1, const char *frag2)
{
    berth_kcluster k;
    berth_error e;
    berth_kube_init(&k);
    int rc = load_into(&k, yaml, &e);
    if (!rc)
        rc = berth_kube_expand(&k, &e);
    if (rc != BERTH_EINVAL)
        fail_msg("expected EINVAL, got %d (%s)", rc, e.msg);
    if (frag1 && !strstr(e.msg, frag1))
        fail_msg("message '%s' lacks '%s'", e.msg, frag1);
    if (frag2 && !strstr(e.msg, frag2))
        fail_msg("message '%s' lacks '%s'", e.msg, frag2);
    berth_kube_free(&k);
}

static const berth_kpod *pod_named(const berth_kcluster *k, const char *name)
{
    for (uint32_t i = 0; i < k->npods; i++)
        if (!strcmp(k->pods[i].name, name))
            return &k->pods[i];
    fail_msg("no pod %s", name);
    return NULL;
}

static uint32_t generated(const berth_kcluster *k)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < k->npods; i++)
        n += k->pods[i].generated;
    return n;
}

/* generated pods whose name starts with prefix */
static uint32_t generated_with(const berth_kcluster *k, const char *prefix)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < k->npods; i++)
        n += k->pods[i].generated && !strncmp(k->pods[i].name, prefix, strlen(prefix));
    return n;
}

#define NODE(name, zone, cpu, extra)                                                          \
    "- apiVersion: v1\n  kind: Node\n  metadata:\n    name: " name "\n    labels:\n"          \
    "      kubernetes.io/hostname: " name "\n      topology.kubernetes.io/zone: " zone "\n" \
    "    resourceVersion: \"101\"\n    uid: n-" name "\n  spec:\n    podCIDR: 10.0.0.0/24\n" \
    extra "  status:\n    allocatable: {cpu: \"" cpu "\", memory: 8Gi, pods: \"110\"}\n"          \
    "    capacity: {cpu: \"" cpu "\", memory: 8Gi, pods: \"110\"}\n"                             \
    "    conditions:\n    - {type: Ready, status: \"True\", reason: KubeletReady}\n"

#define LIST_HEAD "apiVersion: v1\nkind: List\nmetadata:\n  resourceVersion: \"\"\nitems:\n"

#define MANAGED                                                                        \
    "    managedFields:\n    - apiVersion: apps/v1\n      fieldsType: FieldsV1\n"         \
    "      fieldsV1: {f:spec: {f:replicas: {}}}\n      manager: kube-controller-manager\n" \
    "      operation: Update\n      time: \"2024-05-01T10:00:00Z\"\n"

/* ---- Deployment ---- */

#define DEPLOY(replicas)                                                                    \
    "- apiVersion: apps/v1\n  kind: Deployment\n  metadata:\n"                              \
    "    annotations: {deployment.kubernetes.io/revision: \"2\"}\n"                          \
    "    creationTimestamp: \"2024-05-01T10:00:00Z\"\n    generation: 2\n" MANAGED          \
    "    name: web\n    namespace: shop\n    resourceVersion: \"500\"\n    uid: dep-web\n"  \
    "  spec:\n    progressDeadlineSeconds: 600\n    replicas: " replicas "\n"               \
    "    revisionHistoryLimit: 10\n    selector: {matchLabels: {app: web}}\n"               \
    "    strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 25%, maxUnavailable: 25%}}\n" \
    "    template:\n      metadata:\n        creationTimestamp: null\n        labels: {app: web}\n" \
    "      spec:\n        containers:\n        - image: nginx:1.25\n          name: web\n"  \
    "          resources: {requests: {cpu: 300m, memory: 128Mi}}\n"                         \
    "          terminationMessagePath: /dev/termination-log\n"                               \
    "        dnsPolicy: ClusterFirst\n        restartPolicy: Always\n"                       \
    "        schedulerName: default-scheduler\n        terminationGracePeriodSeconds: 30\n" \
    "  status:\n    availableReplicas: 2\n    observedGeneration: 2\n    readyReplicas: 2\n" \
    "    replicas: 2\n    updatedReplicas: 1\n"                                               \
    "    conditions:\n    - {type: Available, status: \"True\", reason: MinimumReplicasAvailable}\n"

#define RS(name, hash, rev, replicas, cpu)                                                   \
    "- apiVersion: apps/v1\n  kind: ReplicaSet\n  metadata:\n"                                \
    "    annotations: {deployment.kubernetes.io/desired-replicas: \"4\", "                    \
    "deployment.kubernetes.io/max-replicas: \"5\", deployment.kubernetes.io/revision: \"" rev \
    "\"}\n    labels: {app: web, pod-template-hash: " hash "}\n" MANAGED                      \
    "    name: " name "\n    namespace: shop\n    ownerReferences:\n"                         \
    "    - {apiVersion: apps/v1, blockOwnerDeletion: true, controller: true, kind: Deployment, " \
    "name: web, uid: dep-web}\n    uid: rs-" name "\n  spec:\n    replicas: " replicas "\n"  \
    "    selector: {matchLabels: {app: web, pod-template-hash: " hash "}}\n"                  \
    "    template:\n      metadata:\n        creationTimestamp: null\n"                       \
    "        labels: {app: web, pod-template-hash: " hash "}\n      spec:\n"                  \
    "        containers:\n        - image: nginx\n          name: web\n"                      \
    "          resources: {requests: {cpu: " cpu ", memory: 128Mi}}\n"                        \
    "  status: {replicas: 1, readyReplicas: 1, availableReplicas: 1, observedGeneration: 1}\n"

#define OWNED_POD(name, kind, owner, uid, hashlabel, node, extra_meta)                          \
    "- apiVersion: v1\n  kind: Pod\n  metadata:\n    creationTimestamp: \"2024-05-01T10:05:00Z\"\n" \
    extra_meta "    generateName: " owner "-\n    labels: {app: web" hashlabel "}\n"                   \
    "    name: " name "\n    namespace: shop\n    ownerReferences:\n"                             \
    "    - {apiVersion: apps/v1, blockOwnerDeletion: true, controller: true, kind: " kind         \
    ", name: " owner ", uid: " uid "}\n    resourceVersion: \"600\"\n    uid: pod-" name "\n"     \
    "  spec:\n    containers:\n    - image: nginx\n      name: web\n"                             \
    "      resources: {requests: {cpu: 300m, memory: 128Mi}}\n    nodeName: " node "\n"           \
    "    priority: 0\n    tolerations:\n"                                                          \
    "    - {effect: NoExecute, key: node.kubernetes.io/not-ready, operator: Exists, "              \
    "tolerationSeconds: 300}\n  status:\n    phase: Running\n    qosClass: Burstable\n"           \
    "    conditions:\n    - {type: Ready, status: \"True\"}\n"

static void test_deployment_without_replicasets(void **st)
{
    (void)st;
    static const char *y = LIST_HEAD NODE("node-a", "z1", "4", "") DEPLOY("3");
    berth_kcluster k, k2;
    expand_ok(&k, y);
    assert_int_equal(k.npods, 3);
    assert_int_equal(generated(&k), 3);
    const berth_kpod *p = &k.pods[0];
    const char *hash = berth_labels_get(&p->labels, "pod-template-hash");
    assert_non_null(hash);
    assert_in_range(strlen(hash), 9, 10);
    assert_int_equal(strspn(hash, "bcdfghjklmnpqrstvwxz2456789"), strlen(hash));
    char rs[64];
    snprintf(rs, sizeof rs, "web-%s", hash);
    for (uint32_t i = 0; i < 3; i++) {
        p = &k.pods[i];
        assert_string_equal(p->ns, "shop");
        assert_string_equal(p->owner_kind, "ReplicaSet");
        assert_string_equal(p->owner_name, rs);
        assert_string_equal(p->workload, "Deployment/shop/web");
        assert_string_equal(berth_labels_get(&p->labels, "app"), "web");
        assert_int_equal(strncmp(p->name, rs, strlen(rs)), 0);
        assert_int_equal(strlen(p->name), strlen(rs) + 6); /* -xxxxx */
        assert_int_equal(p->req[BERTH_KRES_CPU], 300);
        assert_null(p->node_name);
        for (uint32_t j = 0; j < i; j++)
            assert_string_not_equal(k.pods[j].name, p->name);
    }
    /* the synthesized ReplicaSet's selector is there for the default spread */
    int found = 0;
    for (uint32_t w = 0; w < k.nworkloads; w++)
        if (!strcmp(k.workloads[w].kind, "ReplicaSet") && !strcmp(k.workloads[w].name, rs)) {
            found = 1;
            assert_true(berth_selector_matches(&k.workloads[w].selector, &k.pods[0].labels));
        }
    assert_true(found);
    /* deterministic: the same input gives the same names; expanding twice
     * changes nothing */
    expand_ok(&k2, y);
    for (uint32_t i = 0; i < 3; i++)
        assert_string_equal(k.pods[i].name, k2.pods[i].name);
    berth_error e;
    assert_int_equal(berth_kube_expand(&k2, &e), 0);
    assert_int_equal(k2.npods, 3);
    berth_kube_free(&k);
    berth_kube_free(&k2);
}

static void test_deployment_with_replicasets(void **st)
{
    (void)st;
    /* revision 1 (cpu 100m) and revision 2 (cpu 700m, the current one); a
     * live pod of each, a terminating pod of the current one: 4 - 2 = 2
     * new pods from revision 2's template, owned by that ReplicaSet; the
     * ReplicaSets' own replicas (1 and 3) are not expanded on their own */
    static const char *y =
        LIST_HEAD NODE("node-a", "z1", "8", "") DEPLOY("4")
        RS("web-5d8c7b9f4", "5d8c7b9f4", "1", "1", "100m")
        RS("web-7f6d4c8b9", "7f6d4c8b9", "2", "3", "700m")
        OWNED_POD("web-5d8c7b9f4-aaaaa", "ReplicaSet", "web-5d8c7b9f4", "rs-web-5d8c7b9f4",
                  ", pod-template-hash: 5d8c7b9f4", "node-a", "")
        OWNED_POD("web-7f6d4c8b9-bbbbb", "ReplicaSet", "web-7f6d4c8b9", "rs-web-7f6d4c8b9",
                  ", pod-template-hash: 7f6d4c8b9", "node-a", "")
        OWNED_POD("web-7f6d4c8b9-ccccc", "ReplicaSet", "web-7f6d4c8b9", "rs-web-7f6d4c8b9",
                  ", pod-template-hash: 7f6d4c8b9", "node-a",
                  "    deletionTimestamp: \"2024-05-01T11:00:00Z\"\n");
    berth_kcluster k;
    expand_ok(&k, y);
    assert_int_equal(k.npods, 5);
    assert_int_equal(generated(&k), 2);
    for (uint32_t i = 3; i < 5; i++) {
        const berth_kpod *p = &k.pods[i];
        assert_true(p->generated);
        assert_string_equal(p->owner_name, "web-7f6d4c8b9");
        assert_string_equal(p->owner_uid, "rs-web-7f6d4c8b9");
        assert_string_equal(p->workload, "Deployment/shop/web");
        assert_int_equal(p->req[BERTH_KRES_CPU], 700);
        assert_string_equal(berth_labels_get(&p->labels, "pod-template-hash"), "7f6d4c8b9");
    }
    /* existing pods: their workload is the Deployment */
    assert_string_equal(pod_named(&k, "web-5d8c7b9f4-aaaaa")->workload, "Deployment/shop/web");
    berth_kube_free(&k);
    /* replicas already met by live pods: nothing new */
    static const char *y2 =
        LIST_HEAD NODE("node-a", "z1", "8", "") DEPLOY("2")
        RS("web-7f6d4c8b9", "7f6d4c8b9", "2", "3", "700m")
        OWNED_POD("web-7f6d4c8b9-bbbbb", "ReplicaSet", "web-7f6d4c8b9", "rs-web-7f6d4c8b9",
                  ", pod-template-hash: 7f6d4c8b9", "node-a", "")
        OWNED_POD("web-7f6d4c8b9-ddddd", "ReplicaSet", "web-7f6d4c8b9", "rs-web-7f6d4c8b9",
                  ", pod-template-hash: 7f6d4c8b9", "node-a", "");
    expand_ok(&k, y2);
    assert_int_equal(generated(&k), 0);
    berth_kube_free(&k);
}

static void test_deployment_pods_of_missing_replicaset(void **st)
{
    (void)st;
    /* kubectl get deploy,pods (no ReplicaSets): pods of web-7f6d4c8b9
     * count toward Deployment web by the ReplicaSet naming rule; a pod of
     * an unrelated ReplicaSet (no matching hash label) does not */
    static const char *y =
        LIST_HEAD NODE("node-a", "z1", "8", "") DEPLOY("3")
        OWNED_POD("web-7f6d4c8b9-bbbbb", "ReplicaSet", "web-7f6d4c8b9", "rs-x",
                  ", pod-template-hash: 7f6d4c8b9", "node-a", "")
        OWNED_POD("web-other-ccccc", "ReplicaSet", "web-other", "rs-y", "", "node-a", "");
    berth_kcluster k;
    expand_ok(&k, y);
    assert_int_equal(generated(&k), 2);
    assert_string_equal(pod_named(&k, "web-7f6d4c8b9-bbbbb")->workload, "Deployment/shop/web");
    assert_string_equal(pod_named(&k, "web-other-ccccc")->workload, "ReplicaSet/shop/web-other");
    berth_kube_free(&k);
}

/* ---- ReplicaSet, ReplicationController ---- */

#define PLAIN_RS(name, replicas, uid)                                                       \
    "- apiVersion: apps/v1\n  kind: ReplicaSet\n  metadata:\n    name: " name              \
    "\n    namespace: shop\n    uid: " uid "\n  spec:\n    replicas: " replicas "\n"         \
    "    selector: {matchLabels: {app: web}}\n    template:\n      metadata: {labels: {app: web}}\n" \
    "      spec:\n        containers: [{name: c, resources: {requests: {cpu: 100m}}}]\n"

#define BARE_POD(name, ns, labels)                                                        \
    "- apiVersion: v1\n  kind: Pod\n  metadata: {name: " name ", namespace: " ns          \
    ", labels: " labels "}\n  spec:\n    containers: [{name: c}]\n    nodeName: node-a\n"

static void test_replicaset_ownership(void **st)
{
    (void)st;
    /* replicas 5: one pod owned by reference, one orphan adopted by
     * selector, one owned by reference with another uid (another object
     * of that name: not counted), one orphan in another namespace, one
     * terminating owned pod (replaced) */
    static const char *y =
        LIST_HEAD NODE("node-a", "z1", "8", "") PLAIN_RS("front", "5", "rs-front")
        OWNED_POD("front-aaaaa", "ReplicaSet", "front", "rs-front", "", "node-a", "")
        OWNED_POD("front-bbbbb", "ReplicaSet", "front", "rs-OLD", "", "node-a", "")
        OWNED_POD("front-ccccc", "ReplicaSet", "front", "rs-front", "", "node-a",
                  "    deletionTimestamp: \"2024-05-01T11:00:00Z\"\n")
        BARE_POD("orphan", "shop", "{app: web}") BARE_POD("elsewhere", "other", "{app: web}");
    berth_kcluster k;
    expand_ok(&k, y);
    assert_int_equal(generated_with(&k, "front-"), 3); /* 5 - (aaaaa + orphan) */
    assert_string_equal(pod_named(&k, "orphan")->workload, "ReplicaSet/shop/front");
    assert_null(pod_named(&k, "elsewhere")->workload);
    assert_string_equal(pod_named(&k, "front-ccccc")->workload, "ReplicaSet/shop/front");
    for (uint32_t i = 0; i < k.npods; i++)
        if (k.pods[i].generated) {
            assert_string_equal(k.pods[i].owner_kind, "ReplicaSet");
            assert_string_equal(k.pods[i].owner_uid, "rs-front");
            assert_int_equal(strlen(k.pods[i].name), strlen("front-") + 5);
        }
    berth_kube_free(&k);
}

static void test_replication_controller(void **st)
{
    (void)st;
    static const char *y =
        LIST_HEAD NODE("node-a", "z1", "8", "")
        "- apiVersion: v1\n  kind: ReplicationController\n  metadata: {name: legacy, namespace: shop, "
        "uid: rc-1}\n  spec:\n    replicas: 2\n    selector: {app: legacy}\n    template:\n"
        "      metadata: {labels: {app: legacy}}\n      spec:\n"
        "        containers: [{name: c, resources: {requests: {cpu: 50m}}}]\n"
        /* no selector: defaulted to the template's labels */
        "- apiVersion: v1\n  kind: ReplicationController\n  metadata: {name: nosel, namespace: shop}\n"
        "  spec:\n    template:\n      metadata: {labels: {tier: x}}\n      spec:\n"
        "        containers: [{name: c}]\n" BARE_POD("adopted", "shop", "{tier: x}");
    berth_kcluster k;
    expand_ok(&k, y);
    assert_int_equal(generated_with(&k, "legacy-"), 2);
    assert_int_equal(generated_with(&k, "nosel-"), 0); /* replicas 1, the orphan adopted */
    assert_string_equal(pod_named(&k, "adopted")->workload, "ReplicationController/shop/nosel");
    for (uint32_t i = 0; i < k.npods; i++)
        if (k.pods[i].generated)
            assert_string_equal(k.pods[i].workload, "ReplicationController/shop/legacy");
    berth_kube_free(&k);
}

/* ---- StatefulSet ---- */

static void test_statefulset_claims(void **st)
{
    (void)st;
    /* db-0 exists; data-db-1 exists, bound to a PV in zone z2; data-db-2
     * is missing: created unbound (no zone constraint, no error) */
    static const char *y =
        LIST_HEAD NODE("node-a", "z1", "4", "") NODE("node-b", "z2", "4", "")
        "- apiVersion: apps/v1\n  kind: StatefulSet\n  metadata: {name: db, namespace: shop, uid: sts-db, "
        "generation: 1}\n  spec:\n    replicas: 3\n    serviceName: db\n    podManagementPolicy: OrderedReady\n"
        "    selector: {matchLabels: {app: db}}\n    template:\n      metadata: {labels: {app: db}}\n"
        "      spec:\n        containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]\n"
        "    volumeClaimTemplates:\n    - apiVersion: v1\n      kind: PersistentVolumeClaim\n"
        "      metadata: {name: data}\n      spec: {accessModes: [ReadWriteOnce], "
        "resources: {requests: {storage: 1Gi}}}\n      status: {phase: Pending}\n"
        "  status: {replicas: 1, currentReplicas: 1, readyReplicas: 1}\n"
        "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: db-0\n    namespace: shop\n"
        "    labels: {app: db, statefulset.kubernetes.io/pod-name: db-0}\n    ownerReferences:\n"
        "    - {apiVersion: apps/v1, kind: StatefulSet, name: db, uid: sts-db, controller: true}\n"
        "  spec:\n    nodeName: node-a\n    containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]\n"
        "    volumes: [{name: data, persistentVolumeClaim: {claimName: data-db-0}}]\n"
        "- apiVersion: v1\n  kind: PersistentVolumeClaim\n  metadata: {name: data-db-0, namespace: shop}\n"
        "  spec: {volumeName: pv-0, storageClassName: zonal}\n  status: {phase: Bound}\n"
        "- apiVersion: v1\n  kind: PersistentVolumeClaim\n  metadata: {name: data-db-1, namespace: shop}\n"
        "  spec: {volumeName: pv-1, storageClassName: zonal}\n  status: {phase: Bound}\n"
        "- apiVersion: v1\n  kind: PersistentVolume\n  metadata:\n    name: pv-0\n"
        "    labels: {topology.kubernetes.io/zone: z1}\n  spec: {capacity: {storage: 1Gi}}\n"
        "- apiVersion: v1\n  kind: PersistentVolume\n  metadata:\n    name: pv-1\n"
        "    labels: {topology.kubernetes.io/zone: z2}\n  spec: {capacity: {storage: 1Gi}}\n";
    berth_kcluster k;
    expand_ok(&k, y);
    assert_int_equal(generated(&k), 2);
    const berth_kpod *p1 = pod_named(&k, "db-1"), *p2 = pod_named(&k, "db-2");
    assert_true(p1->generated && p2->generated);
    assert_string_equal(berth_labels_get(&p1->labels, "statefulset.kubernetes.io/pod-name"), "db-1");
    assert_string_equal(berth_labels_get(&p2->labels, "apps.kubernetes.io/pod-index"), "2");
    assert_non_null(berth_labels_get(&p1->labels, "controller-revision-hash"));
    assert_string_equal(p1->owner_kind, "StatefulSet");
    assert_string_equal(p1->workload, "StatefulSet/shop/db");
    assert_int_equal(p1->nclaims, 1);
    assert_string_equal(p1->claims[0], "data-db-1");
    assert_null(p1->vol_error);
    assert_int_equal(p1->nvol_zones, 1);
    assert_string_equal(p1->vol_zones[0].values[0], "z2");
    assert_string_equal(p2->claims[0], "data-db-2");
    assert_null(p2->vol_error);
    assert_int_equal(p2->nvol_zones, 0);
    int found = 0;
    for (uint32_t i = 0; i < k.npvcs; i++)
        if (!strcmp(k.pvcs[i].name, "data-db-2")) {
            found = 1;
            assert_null(k.pvcs[i].volume_name);
        }
    assert_true(found);
    /* db-1 must go to z2 (node-b); db-2 anywhere with room */
    berth_kube_options o = {.tiebreak = BERTH_TIE_FIRST};
    berth_error e;
    assert_int_equal(berth_kube_schedule(&k, &o, &e), 0);
    assert_string_equal(pod_named(&k, "db-1")->node_name, "node-b");
    berth_kube_free(&k);
}

/* ---- Job ---- */

#define JOB(name, spec, status)                                                               \
    "- apiVersion: batch/v1\n  kind: Job\n  metadata:\n    name: " name "\n    namespace: shop\n" \
    "    uid: job-" name "\n  spec:\n" spec "    selector: {matchLabels: "                        \
    "{batch.kubernetes.io/controller-uid: job-" name "}}\n    template:\n      metadata:\n"       \
    "        labels: {batch.kubernetes.io/controller-uid: job-" name                              \
    ", batch.kubernetes.io/job-name: " name ", controller-uid: job-" name ", job-name: " name "}\n" \
    "      spec:\n        restartPolicy: Never\n"                                                 \
    "        containers: [{name: c, resources: {requests: {cpu: 10m}}}]\n" status

#define JOB_POD(name, job, extra)                                                                \
    "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: " name "\n    namespace: shop\n"       \
    "    labels: {batch.kubernetes.io/controller-uid: job-" job ", batch.kubernetes.io/job-name: " \
    job "}\n    ownerReferences:\n    - {apiVersion: batch/v1, kind: Job, name: " job             \
    ", uid: job-" job ", controller: true}\n  spec:\n    nodeName: node-a\n"                      \
    "    containers: [{name: c}]\n" extra

static void test_job(void **st)
{
    (void)st;
    static const char *y =
        LIST_HEAD NODE("node-a", "z1", "8", "")
        /* completions 5, succeeded 3, parallelism 3: min(3, 2) = 2 active, one running */
        JOB("batch", "    parallelism: 3\n    completions: 5\n    backoffLimit: 6\n",
            "  status: {succeeded: 3, active: 1}\n")
        JOB_POD("batch-aaaaa", "batch", "")
        JOB_POD("batch-done", "batch", "  status: {phase: Succeeded}\n")
        /* completions unset: parallelism (defaults 1 when unset too) */
        JOB("par", "    parallelism: 2\n", "")
        JOB("one", "", "")
        /* completions unset and a pod succeeded: leave the running ones */
        JOB("tail", "    parallelism: 4\n", "  status: {succeeded: 1}\n")
        /* finished and suspended jobs create nothing */
        JOB("finished", "    completions: 3\n",
            "  status:\n    succeeded: 1\n    conditions:\n    - {type: Failed, status: \"True\", "
            "reason: BackoffLimitExceeded}\n")
        JOB("held", "    suspend: true\n    parallelism: 2\n", "")
        /* Indexed: the lowest free completion indexes in the names */
        JOB("ix", "    completionMode: Indexed\n    completions: 3\n    parallelism: 2\n", "");
    berth_kcluster k;
    expand_ok(&k, y);
    assert_int_equal(generated_with(&k, "batch-"), 1);
    assert_int_equal(generated_with(&k, "par-"), 2);
    assert_int_equal(generated_with(&k, "one-"), 1);
    assert_int_equal(generated_with(&k, "tail-"), 0);
    assert_int_equal(generated_with(&k, "finished-"), 0);
    assert_int_equal(generated_with(&k, "held-"), 0);
    assert_int_equal(generated_with(&k, "ix-0-"), 1);
    assert_int_equal(generated_with(&k, "ix-1-"), 1);
    for (uint32_t i = 0; i < k.npods; i++)
        if (k.pods[i].generated && !strncmp(k.pods[i].name, "par-", 4)) {
            assert_string_equal(k.pods[i].owner_kind, "Job");
            assert_string_equal(k.pods[i].workload, "Job/shop/par");
            assert_string_equal(berth_labels_get(&k.pods[i].labels, "job-name"), "par");
        }
    berth_kube_free(&k);
}

/* ---- DaemonSet ---- */

#define DS(extra_spec)                                                                        \
    "- apiVersion: apps/v1\n  kind: DaemonSet\n  metadata: {name: agent, namespace: kube-system, " \
    "uid: ds-agent}\n  spec:\n    selector: {matchLabels: {app: agent}}\n    template:\n"        \
    "      metadata: {labels: {app: agent}}\n      spec:\n" extra_spec                            \
    "        containers: [{name: c, resources: {requests: {cpu: 500m}}}]\n"

#define DS_POD(name, node_or_affinity)                                                          \
    "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: " name "\n    namespace: kube-system\n" \
    "    labels: {app: agent}\n    ownerReferences:\n    - {apiVersion: apps/v1, kind: DaemonSet, " \
    "name: agent, uid: ds-agent, controller: true}\n  spec:\n" node_or_affinity                     \
    "    containers: [{name: c, resources: {requests: {cpu: 500m}}}]\n"

static void test_daemonset(void **st)
{
    (void)st;
    static const char *y =
        LIST_HEAD NODE("plain", "z1", "4", "")
        NODE("tainted", "z1", "4", "    taints: [{key: dedicated, value: gpu, effect: NoSchedule}]\n")
        NODE("soft", "z1", "4", "    taints: [{key: dedicated, value: x, effect: PreferNoSchedule}]\n")
        NODE("cordoned", "z1", "4",
             "    unschedulable: true\n    taints: [{key: node.kubernetes.io/unschedulable, "
             "effect: NoSchedule, timeAdded: \"2024-05-01T10:00:00Z\"}]\n")
        NODE("pressure", "z1", "4",
             "    taints: [{key: node.kubernetes.io/memory-pressure, effect: NoSchedule}]\n")
        NODE("netdown", "z1", "4",
             "    taints: [{key: node.kubernetes.io/network-unavailable, effect: NoSchedule}]\n")
        NODE("windows", "z1", "4", "")
        NODE("running", "z1", "4", "") NODE("pinned", "z1", "4", "")
        NODE("tiny", "z1", "200m", "")
        DS("        nodeSelector: {topology.kubernetes.io/zone: z1}\n"
           "        affinity:\n          nodeAffinity:\n"
           "            requiredDuringSchedulingIgnoredDuringExecution:\n"
           "              nodeSelectorTerms:\n              - matchExpressions:\n"
           "                - {key: kubernetes.io/hostname, operator: NotIn, values: [windows]}\n")
        DS_POD("agent-aaaaa", "    nodeName: running\n")
        DS_POD("agent-bbbbb",
               "    affinity:\n      nodeAffinity:\n        requiredDuringSchedulingIgnoredDuringExecution:\n"
               "          nodeSelectorTerms:\n          - matchFields:\n"
               "            - {key: metadata.name, operator: In, values: [pinned]}\n");
    berth_kcluster k;
    expand_ok(&k, y);
    /* plain, soft, cordoned, pressure, tiny: not tainted (no toleration),
     * netdown (no hostNetwork), windows (affinity), running and pinned
     * (pods there) */
    assert_int_equal(generated(&k), 5);
    const char *want[5] = {"plain", "soft", "cordoned", "pressure", "tiny"};
    for (int w = 0; w < 5; w++) {
        int found = 0;
        for (uint32_t i = 0; i < k.npods; i++) {
            const berth_kpod *p = &k.pods[i];
            if (!p->generated)
                continue;
            assert_int_equal(p->nreq_terms, 1);
            assert_int_equal(p->req_terms[0].nfields, 1);
            assert_string_equal(p->req_terms[0].fields[0].key, "metadata.name");
            assert_int_equal(p->req_terms[0].nexprs, 0); /* replaced, not ANDed */
            found += !strcmp(p->req_terms[0].fields[0].values[0], want[w]);
            assert_string_equal(p->workload, "DaemonSet/kube-system/agent");
            assert_string_equal(p->owner_kind, "DaemonSet");
            assert_int_equal(strncmp(p->name, "agent-", 6), 0);
        }
        if (found != 1)
            fail_msg("node %s: %d daemon pods", want[w], found);
    }
    /* scheduled: each on its node; the one pinned to tiny does not fit */
    berth_kube_options o = {.tiebreak = BERTH_TIE_FIRST};
    berth_error e;
    assert_int_equal(berth_kube_schedule(&k, &o, &e), BERTH_ENOFIT);
    for (uint32_t i = 0; i < k.npods; i++) {
        const berth_kpod *p = &k.pods[i];
        if (!p->generated)
            continue;
        const char *target = p->req_terms[0].fields[0].values[0];
        if (!strcmp(target, "tiny"))
            assert_null(p->node_name);
        else
            assert_string_equal(p->node_name, target);
    }
    berth_kube_free(&k);
    /* hostNetwork: network-unavailable is tolerated too */
    expand_ok(&k, LIST_HEAD NODE("netdown", "z1", "4",
                                 "    taints: [{key: node.kubernetes.io/network-unavailable, "
                                 "effect: NoSchedule}]\n") DS("        hostNetwork: true\n"));
    assert_int_equal(generated(&k), 1);
    berth_kube_free(&k);
}

/* the pinned DaemonSet pod that does not fit: kube-scheduler's message */
typedef struct msgs {
    char text[8][400];
    int terminating[8];
    uint32_t n;
} msgs;

static void on_dec(void *ctx, const berth_kcluster *k, const berth_kdecision *d)
{
    msgs *m = ctx;
    (void)k;
    if (m->n < 8) {
        snprintf(m->text[m->n], sizeof m->text[0], "%s=%s", k->pods[d->pod].name,
                 d->node == BERTH_KUBE_NONE ? (d->summary ? d->summary : "-")
                                            : k->nodes[d->node].name);
        m->terminating[m->n++] = d->terminating;
    }
}

static void test_daemonset_pod_does_not_fit(void **st)
{
    (void)st;
    berth_kcluster k;
    expand_ok(&k, LIST_HEAD NODE("big", "z1", "4", "") NODE("tiny", "z1", "200m", "")
                      NODE("taint", "z1", "4",
                           "    taints: [{key: dedicated, value: gpu, effect: NoSchedule}]\n")
                          DS(""));
    msgs m = {0};
    berth_kube_options o = {.tiebreak = BERTH_TIE_FIRST, .on_decision = on_dec, .ctx = &m};
    berth_error e;
    assert_int_equal(berth_kube_schedule(&k, &o, &e), BERTH_ENOFIT);
    assert_int_equal(m.n, 2);
    int seen = 0;
    for (uint32_t i = 0; i < m.n; i++)
        if (strstr(m.text[i], "0/3 nodes are available")) {
            seen++;
            assert_non_null(strstr(m.text[i], "1 Insufficient cpu"));
            /* NodeAffinity's PreFilter narrows the pinned pod to its node:
             * the others are upstream's absent-nodes status */
            assert_non_null(strstr(m.text[i], "2 node(s) didn't satisfy plugin(s) [NodeAffinity]"));
            assert_null(strstr(m.text[i], "untolerated taint"));
        }
    assert_int_equal(seen, 1);
    berth_kube_free(&k);
}

/* ---- priorities ---- */

#define PC(name, value, extra)                                                            \
    "- apiVersion: scheduling.k8s.io/v1\n  kind: PriorityClass\n  metadata: {name: " name \
    ", uid: pc-" name ", resourceVersion: \"7\"}\n  value: " value "\n" extra             \
    "  preemptionPolicy: PreemptLowerPriority\n"

#define PRIO_POD(name, spec)                                                                   \
    "- apiVersion: v1\n  kind: Pod\n  metadata: {name: " name ", namespace: default}\n  spec:\n" \
    spec "    containers: [{name: c}]\n"

static void test_priority_classes(void **st)
{
    (void)st;
    static const char *y =
        LIST_HEAD PRIO_POD("high", "    priorityClassName: high\n")
        PRIO_POD("none", "")
        PRIO_POD("kept", "    priorityClassName: high\n    priority: 7\n")
        PRIO_POD("node-critical", "    priorityClassName: system-node-critical\n")
        PRIO_POD("cluster-critical", "    priorityClassName: system-cluster-critical\n")
        PC("high", "1000", "  description: important\n")
        PC("low-default", "50", "  globalDefault: true\n")
        PC("never", "10", "")
        /* the system class as kubectl lists it */
        PC("system-node-critical", "2000001000", "");
    berth_kcluster k;
    expand_ok(&k, y);
    assert_int_equal(pod_named(&k, "high")->priority, 1000);
    assert_int_equal(pod_named(&k, "none")->priority, 50);
    assert_string_equal(pod_named(&k, "none")->priority_class, "low-default");
    assert_int_equal(pod_named(&k, "kept")->priority, 7);
    assert_int_equal(pod_named(&k, "node-critical")->priority, 2000001000);
    assert_int_equal(pod_named(&k, "cluster-critical")->priority, 2000000000);
    const berth_kpriority_class *pc = berth_kube_priority_class(&k, "high");
    assert_non_null(pc);
    assert_string_equal(pc->preemption_policy, "PreemptLowerPriority");
    assert_null(berth_kube_priority_class(&k, "nope"));
    berth_kube_free(&k);
    /* two global defaults (a race upstream tolerates): the lowest value */
    expand_ok(&k, LIST_HEAD PRIO_POD("none", "") PC("a", "70", "  globalDefault: true\n")
                      PC("b", "60", "  globalDefault: true\n"));
    assert_int_equal(k.pods[0].priority, 60);
    berth_kube_free(&k);
    /* preemptionPolicy Never is kept */
    expand_ok(&k, "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: batch}\n"
                  "value: 5\npreemptionPolicy: Never\n");
    assert_string_equal(berth_kube_priority_class(&k, "batch")->preemption_policy, "Never");
    berth_kube_free(&k);
}

static void test_priority_class_in_later_file(void **st)
{
    (void)st;
    berth_kcluster k;
    berth_error e;
    berth_kube_init(&k);
    assert_int_equal(load_into(&k, LIST_HEAD PRIO_POD("p", "    priorityClassName: late\n")
                                   DEPLOY("1"), &e), 0);
    assert_int_equal(load_into(&k, LIST_HEAD PC("late", "300", ""), &e), 0);
    assert_int_equal(berth_kube_expand(&k, &e), 0);
    assert_int_equal(pod_named(&k, "p")->priority, 300);
    berth_kube_free(&k);
}

static void test_priority_errors(void **st)
{
    (void)st;
    /* an unknown class: exit 2 located at spec.priorityClassName */
    expand_bad(LIST_HEAD PRIO_POD("p", "    priorityClassName: missing\n"),
               "t.yaml:10:24: items[0].spec.priorityClassName", "no PriorityClass with name 'missing'");
    /* in a workload's template */
    expand_bad("apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: r}\nspec:\n  replicas: 1\n"
               "  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n"
               "    spec:\n      priorityClassName: gone\n      containers: [{name: c}]\n",
               "t.yaml:10:26: spec.template.spec.priorityClassName", "'gone'");
    /* validation of the class itself */
    expand_bad(LIST_HEAD PC("huge", "1000000001", ""), "value", "1000000000");
    expand_bad(LIST_HEAD PC("system-mine", "5", ""), "metadata.name", "reserved");
    expand_bad(LIST_HEAD PC("system-cluster-critical", "5", ""), "value", "2000000000");
    expand_bad("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: x}\n",
               "value", "required");
    expand_bad("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: x}\n"
               "value: 1\npreemptionPolicy: Sometimes\n", "preemptionPolicy", "Sometimes");
    expand_bad("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: x}\n"
               "value: 1\nglobalDefualt: true\n", "globalDefualt", "globalDefault");
}

/* ---- lifecycle, caps, names, errors ---- */

static void test_terminating_pending_pod(void **st)
{
    (void)st;
    berth_kcluster k;
    expand_ok(&k, LIST_HEAD NODE("node-a", "z1", "4", "")
                      "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: going\n"
                      "    namespace: default\n    deletionTimestamp: \"2024-05-01T11:00:00Z\"\n"
                      "    deletionGracePeriodSeconds: 30\n  spec:\n    containers: [{name: c}]\n"
                      "- apiVersion: v1\n  kind: Pod\n  metadata: {name: ok, namespace: default}\n"
                      "  spec:\n    containers: [{name: c}]\n");
    msgs m = {0};
    berth_kube_options o = {.tiebreak = BERTH_TIE_FIRST, .on_decision = on_dec, .ctx = &m};
    berth_error e;
    assert_int_equal(berth_kube_schedule(&k, &o, &e), 0); /* not unschedulable */
    assert_int_equal(m.n, 2);
    int seen = 0;
    for (uint32_t i = 0; i < 2; i++)
        if (m.terminating[i]) {
            seen++;
            assert_non_null(strstr(m.text[i], "going=not scheduled: the pod is terminating"));
        } else
            assert_string_equal(m.text[i], "ok=node-a");
    assert_int_equal(seen, 1);
    assert_null(pod_named(&k, "going")->node_name);
    berth_kube_free(&k);
}

static void test_cap(void **st)
{
    (void)st;
    expand_bad("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: huge}\nspec:\n"
               "  replicas: 1000000000\n  selector: {matchLabels: {a: b}}\n  template:\n"
               "    metadata: {labels: {a: b}}\n    spec:\n      containers: [{name: c}]\n",
               "t.yaml:5:13: spec.replicas", "at most 1048576 pods");
    expand_bad("apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: huge}\nspec:\n"
               "  replicas: 2000000000\n  selector: {matchLabels: {a: b}}\n  template:\n"
               "    metadata: {labels: {a: b}}\n    spec:\n      containers: [{name: c}]\n",
               "spec.replicas", "StatefulSet default/huge would create");
}

static void test_names_never_collide(void **st)
{
    (void)st;
    /* learn the first generated name, then give a bare pod that name */
    static const char *rs =
        LIST_HEAD "- apiVersion: apps/v1\n  kind: ReplicaSet\n  metadata: {name: r, namespace: default}\n"
        "  spec:\n    replicas: 2\n    selector: {matchLabels: {a: b}}\n    template:\n"
        "      metadata: {labels: {a: b}}\n      spec:\n        containers: [{name: c}]\n";
    berth_kcluster k;
    expand_ok(&k, rs);
    char taken[64];
    snprintf(taken, sizeof taken, "%s", k.pods[0].name);
    berth_kube_free(&k);
    char y[2048];
    snprintf(y, sizeof y,
             "%s- apiVersion: v1\n  kind: Pod\n  metadata: {name: %s, namespace: default}\n"
             "  spec:\n    containers: [{name: c}]\n",
             rs, taken);
    expand_ok(&k, y);
    assert_int_equal(k.npods, 3);
    assert_int_equal(generated(&k), 2);
    for (uint32_t i = 0; i < k.npods; i++)
        for (uint32_t j = 0; j < i; j++)
            assert_string_not_equal(k.pods[i].name, k.pods[j].name);
    berth_kube_free(&k);
}

static void test_workload_errors(void **st)
{
    (void)st;
    /* the template is decoded as a pod spec: located errors */
    expand_bad(LIST_HEAD "- apiVersion: apps/v1\n  kind: DaemonSet\n  metadata: {name: a}\n"
                         "  spec:\n    selector: {matchLabels: {app: a}}\n    template:\n"
                         "      metadata: {labels: {app: a}}\n      spec:\n"
                         "        containers: [{name: c, resources: {requests: {cpu: lots}}}]\n",
               "items[0].spec.template.spec.containers[0].resources.requests.cpu", "lots");
    expand_bad("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  replicas: -1\n"
               "  selector: {matchLabels: {a: b}}\n  template:\n    spec:\n      containers: []\n",
               "spec.replicas", NULL);
    expand_bad("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n"
               "  selector: {matchLabels: {a: b}}\n", "spec.template", "missing");
    /* --strict: a typo in a Deployment's spec */
    expand_bad("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  replica: 2\n"
               "  selector: {matchLabels: {a: b}}\n  template:\n    spec:\n      containers: []\n",
               "replica", "replicas");
    expand_bad("apiVersion: batch/v2\nkind: Job\nmetadata: {name: j}\nspec: {}\n", "apiVersion",
               "batch/v1");
}

/* ---- the disruption and autoscaling models ---- */

static void test_planner_tables_parallel(void **st)
{
    (void)st;
    static const char *y = LIST_HEAD NODE("node-a", "z1", "4", "") DEPLOY("3");
    berth_disrupt d;
    berth_disrupt_init(&d);
    berth_error e;
    berth_source src;
    assert_int_equal(berth_doc_load_buffer(&d.kube.arena, "t.yaml", y, strlen(y), &src, &e), 0);
    assert_int_equal(berth_disrupt_load(&d, &src, 1, &e), 0);
    assert_int_equal(berth_disrupt_finalize(&d, &e), 0);
    assert_int_equal(d.kube.npods, 3);
    assert_int_equal(d.npod_info, 3);
    assert_true(d.kube.pods[2].generated);
    berth_disrupt_free(&d);
    berth_autoscale a;
    berth_autoscale_init(&a);
    assert_int_equal(berth_doc_load_buffer(&a.kube.arena, "t.yaml", y, strlen(y), &src, &e), 0);
    assert_int_equal(berth_autoscale_load(&a, &src, 1, &e), 0);
    assert_int_equal(berth_autoscale_finalize(&a, &e), 0);
    assert_int_equal(a.kube.npods, 3);
    assert_int_equal(a.npod_info, 3);
    assert_int_equal(a.pod_info[2].safe_to_evict, -1);
    berth_autoscale_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deployment_without_replicasets),
        cmocka_unit_test(test_deployment_with_replicasets),
        cmocka_unit_test(test_deployment_pods_of_missing_replicaset),
        cmocka_unit_test(test_replicaset_ownership),
        cmocka_unit_test(test_replication_controller),
        cmocka_unit_test(test_statefulset_claims),
        cmocka_unit_test(test_job),
        cmocka_unit_test(test_daemonset),
        cmocka_unit_test(test_daemonset_pod_does_not_fit),
        cmocka_unit_test(test_priority_classes),
        cmocka_unit_test(test_priority_class_in_later_file),
        cmocka_unit_test(test_priority_errors),
        cmocka_unit_test(test_terminating_pending_pod),
        cmocka_unit_test(test_cap),
        cmocka_unit_test(test_names_never_collide),
        cmocka_unit_test(test_workload_errors),
        cmocka_unit_test(test_planner_tables_parallel),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
