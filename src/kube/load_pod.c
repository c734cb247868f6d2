/* kube/load_pod.c - v1 Pod: metadata, owners, spec (k8s/podspec.c), phase,
 * and what the planners read beyond scheduling (annotations, the Ready
 * condition, mirror pods, status.nominatedNodeName). */
#include "k8s/k8s.h"
#include "kube/load.h"
#include "berth/time.h"
#include "berth/grow.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kube_load_pod(berth_kcluster *k, berth_dec *d, const berth_node *doc)
{
    berth_kpod pod;
    memset(&pod, 0, sizeof pod);
    k8s_meta meta;
    int rc = k8s_dec_metadata(k, d, doc, 1, &meta);
    if (rc)
        return rc;
    pod.ns = meta.ns;
    pod.name = meta.name;
    pod.labels = meta.labels;
    pod.scheduler_name = "default-scheduler";
    /* kept past the document (a streamed List releases its items' nodes) */
    if (meta.annotations && !(pod.annotations = berth_node_copy(&k->arena, meta.annotations)))
        return berth_error_set(d->err, BERTH_ENOMEM, "out of memory");
    pod.line = doc->line;
    pod.col = doc->col;
    pod.mirror = berth_kube_annotation(meta.annotations, "kubernetes.io/config.mirror") != NULL;
    size_t p = berth_dec_push(d, "metadata");
    int64_t ignored_time = 0;
    if (!(rc = k8s_dec_time_at(d, meta.node, "creationTimestamp", &pod.created, &pod.has_created)) &&
        !(rc = k8s_dec_time_at(d, meta.node, "deletionTimestamp", &ignored_time, &pod.terminating)))
        rc = k8s_dec_controller_ref(d, meta.node, &pod.owner_kind, &pod.owner_name, &pod.owner_uid);
    berth_dec_pop(d, p);
    if (rc)
        return rc;
    berth_node *spec = NULL, *status = NULL;
    if ((rc = berth_dec_map(d, doc, "spec", 1, &spec)) ||
        (rc = berth_dec_map(d, doc, "status", 0, &status)))
        return rc;
    p = berth_dec_push(d, "spec");
    rc = k8s_dec_pod_spec(k, d, spec, &pod);
    berth_dec_pop(d, p);
    if (rc)
        return rc;
    const char *phase = NULL;
    if (status) {
        p = berth_dec_push(d, "status");
        if (!(rc = k8s_known(d, status, k8s_pod_status_fields)) &&
            !(rc = berth_dec_str(d, status, "phase", 0, &phase)))
            rc = k8s_dec_time_at(d, status, "startTime", &pod.started, &pod.has_started);
        berth_dec_pop(d, p);
        if (rc)
            return rc;
    }
    if ((rc = k8s_dec_usage(k, d, NULL, &meta, pod.usage, &pod.has_usage)))
        return rc;
    /* finished pods hold no resources: the scheduler never sees them */
    if (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed")))
        return 0;
    if (status) {
        pod.ready = k8s_condition_true(status, "Ready", 0);
        p = berth_dec_push(d, "status");
        rc = berth_dec_str(d, status, "nominatedNodeName", 0, &pod.nominated);
        berth_dec_pop(d, p);
        if (rc)
            return rc;
    }
    if ((rc = berth_grow_append((void **)&k->pods, &k->cappods, k->npods + 1, sizeof *k->pods,
                                KUBE_MAX_PODS)))
        return k8s_grow_fail(d, doc, rc, "pods", KUBE_MAX_PODS);
    pod.order = k->npods;
    k->pods[k->npods++] = pod;
    return 0;
}

