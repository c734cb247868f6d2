/* kube/load.c - decodes the Kubernetes input kinds of SPEC 2 / 6.1 into a
 * berth_kcluster: v1 Node, Pod, Namespace, Service, ReplicationController,
 * apps/v1 Deployment, ReplicaSet, StatefulSet, DaemonSet, batch/v1 Job
 * (load_workloads.c), scheduling.k8s.io/v1 PriorityClass, policy/v1
 * PodDisruptionBudget (kept for disruption planning), v1
 * PersistentVolumeClaim and PersistentVolume (VolumeZone: pods' claims are
 * resolved to their PVs' zone labels when a load ends), List (and any
 * <Kind>List: typed lists' items take kind Kind) and
 * kubescheduler.config.k8s.io/v1 KubeSchedulerConfiguration. Other kinds
 * are counted in k->skipped (berth_dec_skip), errors with --strict.
 *
 * Objects are read as the API server reads them: fields berth does not use
 * are ignored, unless strict, where a field outside the real API's field
 * set is an error. A used field with a wrong type or value is always a
 * located error ("file:line:col: spec.containers[0].resources.requests.cpu:
 * invalid quantity '1.2.3': invalid number"). Pods in phase Succeeded or
 * Failed are skipped (the scheduler's informer never sees them). A
 * container limit without a request defaults the request (API defaulting).
 * docs/kube-input.md lists every field read. */
#include "k8s/k8s.h"
#include "kube/load.h"
#include "berth/fleet.h"
#include "berth/grow.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ---- node name index (duplicate checks while loading) ---- */

/* ---- dispatch ---- */

typedef enum kkind {
    K_NODE, K_POD, K_NAMESPACE, K_SERVICE, K_RC, K_RS, K_SS, K_DS, K_PDB, K_PVC, K_PV, K_KSC,
    K_DEPLOY, K_JOB, K_PC,
    K_COUNT
} kkind;

static const struct {
    const char *kind;
    const char *api[3];
} kinds[K_COUNT] = {
    [K_NODE] = {"Node", {"v1"}},
    [K_POD] = {"Pod", {"v1"}},
    [K_NAMESPACE] = {"Namespace", {"v1"}},
    [K_SERVICE] = {"Service", {"v1"}},
    [K_RC] = {"ReplicationController", {"v1"}},
    [K_RS] = {"ReplicaSet", {"apps/v1"}},
    [K_SS] = {"StatefulSet", {"apps/v1"}},
    [K_DS] = {"DaemonSet", {"apps/v1"}},
    [K_PDB] = {"PodDisruptionBudget", {"policy/v1", "policy/v1beta1"}},
    [K_PVC] = {"PersistentVolumeClaim", {"v1"}},
    [K_PV] = {"PersistentVolume", {"v1"}},
    [K_KSC] = {"KubeSchedulerConfiguration", {"kubescheduler.config.k8s.io/v1"}},
    [K_DEPLOY] = {"Deployment", {"apps/v1"}},
    [K_JOB] = {"Job", {"batch/v1"}},
    [K_PC] = {"PriorityClass", {"scheduling.k8s.io/v1"}},
};

static int check_api(berth_dec *d, const berth_node *doc, kkind kk)
{
    const char *api = NULL;
    int rc = berth_dec_str(d, doc, "apiVersion", 1, &api);
    if (rc)
        return rc;
    for (int i = 0; i < 3 && kinds[kk].api[i]; i++)
        if (!strcmp(api, kinds[kk].api[i]))
            return 0;
    char want[128];
    snprintf(want, sizeof want, "%s%s%s", kinds[kk].api[0], kinds[kk].api[1] ? " or " : "",
             kinds[kk].api[1] ? kinds[kk].api[1] : "");
    size_t p = berth_dec_push(d, "apiVersion");
    rc = berth_dec_fail(d, berth_node_get(doc, "apiVersion"), "kind %s needs apiVersion %s, got '%s'",
                        kinds[kk].kind, want, api);
    berth_dec_pop(d, p);
    return rc;
}

/* Kinds skipped with their own warning text (not "unknown"). */
static const char *skip_note(const char *kind)
{
    if (!strcmp(kind, "CronJob"))
        return "not expanded: berth places what runs now";
    return NULL;
}

static int load_doc(berth_kcluster *k, berth_dec *d, const berth_node *doc, int depth);

static int load_item(void *ctx, berth_dec *d, const berth_node *item, int depth)
{
    return load_doc(ctx, d, item, depth);
}

static int load_doc(berth_kcluster *k, berth_dec *d, const berth_node *doc, int depth)
{
    const char *kind = NULL;
    int rc = berth_dec_kind(d, doc, &kind);
    if (rc)
        return rc;
    if (berth_kind_is_list(kind)) {
        static const char *const lf[] = {"apiVersion", "kind", "metadata", "items", NULL};
        if ((rc = k8s_known(d, doc, lf)))
            return rc;
        return berth_dec_list(d, doc, depth, load_item, k);
    }
    int kk = -1;
    for (int i = 0; i < K_COUNT; i++)
        if (!strcmp(kinds[i].kind, kind))
            kk = i;
    if (kk < 0)
        return berth_dec_skip(d, doc, kind, skip_note(kind),
                              "kube input has Node, Pod, Namespace, Service, "
                              "Deployment, ReplicaSet, StatefulSet, ReplicationController, "
                              "DaemonSet, Job, PriorityClass, PodDisruptionBudget, "
                              "PersistentVolumeClaim, PersistentVolume, "
                              "KubeSchedulerConfiguration, List");
    if ((rc = check_api(d, doc, (kkind)kk)))
        return rc;
    if (kk != K_KSC && kk != K_PC && (rc = k8s_known(d, doc, kube_top_fields)))
        return rc;
    switch ((kkind)kk) {
    case K_NODE: return kube_load_node(k, d, doc);
    case K_POD: return kube_load_pod(k, d, doc);
    case K_NAMESPACE: return kube_load_namespace(k, d, doc);
    case K_SERVICE: return kube_load_service(k, d, doc);
    case K_RC:
    case K_RS:
    case K_SS:
    case K_DS:
    case K_DEPLOY:
    case K_JOB: return kube_load_workload(k, d, doc, kinds[kk].kind);
    case K_PC: return kube_load_priority_class(k, d, doc);
    case K_PDB: return kube_load_pdb(k, d, doc);
    case K_PVC: return kube_load_pvc(k, d, doc);
    case K_PV: return kube_load_pv(k, d, doc);
    case K_KSC: return kube_load_ksc(k, d, doc);
    case K_COUNT: break;
    }
    return 0;
}

int berth_kube_load(berth_kcluster *k, const berth_source *src, int strict, berth_error *e)
{
    berth_dec d;
    berth_dec_init(&d, &k->arena, src->path, e);
    d.strict = strict;
    d.skips = &k->skipped;
    uint32_t first_pod = k->npods;
    for (size_t i = 0; i < src->ndocs; i++) {
        d.plen = 0;
        d.path[0] = 0;
        int rc = load_doc(k, &d, src->docs[i], 0);
        if (rc)
            return rc;
    }
    /* requests need the final resource table: computed once the file is in */
    for (uint32_t p = first_pod; p < k->npods; p++)
        berth_kube_pod_requests(k, &k->pods[p]);
    /* volume zones need every file's PVCs and PVs: resolved again whenever
     * a file brings PVCs, PVs or pods with claims */
    if (k->volumes_stale) {
        if (kube_resolve_volumes(k))
            return berth_error_set(e, BERTH_ENOMEM, "out of memory");
        k->volumes_stale = 0;
    }
    return 0;
}
