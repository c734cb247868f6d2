/* kube/load.c - decodes the Kubernetes input kinds of SPEC 2 / 6.1 into a
 * berth_kcluster: v1 Node, Pod, Namespace, Service, ReplicationController,
 * apps/v1 Deployment, ReplicaSet, StatefulSet, DaemonSet, batch/v1 Job
 * (load_workloads.c), scheduling.k8s.io/v1 PriorityClass, policy/v1
 * PodDisruptionBudget (kept for disruption planning), v1
 * PersistentVolumeClaim and PersistentVolume (VolumeZone: pods' claims are
 * resolved to their PVs' zone labels when a load ends), List (and any
 * <Kind>List: typed lists' items take kind Kind) and
 * kubescheduler.config.k8s.io/v1 KubeSchedulerConfiguration: the table
 * below, walked by berth_dec_walk (io/walk.c). Other kinds are counted in
 * k->skipped (berth_dec_skip), errors with --strict.
 *
 * Objects are read as the API server reads them: fields berth does not use
 * are ignored, unless strict, where a field outside the real API's field
 * set is an error. A used field with a wrong type or value is always a
 * located error ("file:line:col: spec.containers[0].resources.requests.cpu:
 * invalid quantity '1.2.3': invalid number"). Pods in phase Succeeded or
 * Failed are skipped (the scheduler's informer never sees them). A
 * container limit without a request defaults the request (API defaulting).
 * docs/kube-input.md lists every field read. The planners that add kinds
 * of their own (disruption, autoscaling) load through berth_kdocs_walk and
 * keep their per-node and per-pod tables with berth_krows_sync. */
#include "k8s/k8s.h"
#include "kube/load.h"
#include "berth/time.h"
#include "berth/grow.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ---- dispatch: the kube loader's kinds for berth_dec_walk (io/walk.c) ---- */

static int ld_node(void *k, berth_dec *d, const berth_node *doc, const berth_kind_handler *h)
{
    return kube_load_node(k, d, doc);
}

static int ld_pod(void *k, berth_dec *d, const berth_node *doc, const berth_kind_handler *h)
{
    return kube_load_pod(k, d, doc);
}

static int ld_namespace(void *k, berth_dec *d, const berth_node *doc, const berth_kind_handler *h)
{
    return kube_load_namespace(k, d, doc);
}

static int ld_service(void *k, berth_dec *d, const berth_node *doc, const berth_kind_handler *h)
{
    return kube_load_service(k, d, doc);
}

static int ld_workload(void *k, berth_dec *d, const berth_node *doc, const berth_kind_handler *h)
{
    return kube_load_workload(k, d, doc, h->kind);
}

static int ld_pc(void *k, berth_dec *d, const berth_node *doc, const berth_kind_handler *h)
{
    return kube_load_priority_class(k, d, doc);
}

static int ld_pdb(void *k, berth_dec *d, const berth_node *doc, const berth_kind_handler *h)
{
    return kube_load_pdb(k, d, doc);
}

static int ld_pvc(void *k, berth_dec *d, const berth_node *doc, const berth_kind_handler *h)
{
    return kube_load_pvc(k, d, doc);
}

static int ld_pv(void *k, berth_dec *d, const berth_node *doc, const berth_kind_handler *h)
{
    return kube_load_pv(k, d, doc);
}

static int ld_ksc(void *k, berth_dec *d, const berth_node *doc, const berth_kind_handler *h)
{
    return kube_load_ksc(k, d, doc);
}

static const char *const v1[] = {"v1", NULL};
static const char *const apps[] = {"apps/v1", NULL};
static const char *const batch[] = {"batch/v1", NULL};
static const char *const policy[] = {"policy/v1", "policy/v1beta1", NULL};
static const char *const sched[] = {"scheduling.k8s.io/v1", NULL};
static const char *const ksc[] = {"kubescheduler.config.k8s.io/v1", NULL};
#define TOP kube_top_fields

/* in the order of the unknown-kind hint; PriorityClass and
 * KubeSchedulerConfiguration check their own top-level fields */
static const berth_kind_handler kinds[] = {
    {"Node", v1, NULL, TOP, 0, ld_node, NULL, 0},
    {"Pod", v1, NULL, TOP, 0, ld_pod, NULL, 0},
    {"Namespace", v1, NULL, TOP, 0, ld_namespace, NULL, 0},
    {"Service", v1, NULL, TOP, 0, ld_service, NULL, 0},
    {"Deployment", apps, NULL, TOP, 0, ld_workload, NULL, 0},
    {"ReplicaSet", apps, NULL, TOP, 0, ld_workload, NULL, 0},
    {"StatefulSet", apps, NULL, TOP, 0, ld_workload, NULL, 0},
    {"ReplicationController", v1, NULL, TOP, 0, ld_workload, NULL, 0},
    {"DaemonSet", apps, NULL, TOP, 0, ld_workload, NULL, 0},
    {"Job", batch, NULL, TOP, 0, ld_workload, NULL, 0},
    {"PriorityClass", sched, NULL, NULL, 0, ld_pc, NULL, 0},
    {"PodDisruptionBudget", policy, NULL, TOP, 0, ld_pdb, NULL, 0},
    {"PersistentVolumeClaim", v1, NULL, TOP, 0, ld_pvc, NULL, 0},
    {"PersistentVolume", v1, NULL, TOP, 0, ld_pv, NULL, 0},
    {"KubeSchedulerConfiguration", ksc, NULL, NULL, 0, ld_ksc, NULL, 0},
    /* skipped with their own warning text (not "unknown") */
    {"CronJob", NULL, NULL, NULL, 0, NULL, "not expanded: berth places what runs now", 0},
};

static const char *const list_fields[] = {"apiVersion", "kind", "metadata", "items", NULL};

static const berth_walker walker = {
    "kube", kinds, sizeof kinds / sizeof *kinds, 0, list_fields, NULL, NULL,
};

/* The file's pods share one copy of each namespace name, and their
 * spec.nodeName is the node's own name string when that node is loaded:
 * the same texts, so that the planners' per-pod comparisons (a pod's node
 * against the previous one's, its namespace against the previous one's)
 * are pointer tests that read no string at random. Only a speed-up: the
 * readers compare texts when pointers differ, so it stops sharing when out
 * of memory. */
static void share_names(berth_kcluster *k, uint32_t first_pod)
{
    if (k->node_names.n)
        for (uint32_t p = first_pod; p < k->npods; p++) {
            berth_kpod *pod = &k->pods[p];
            uint32_t n = pod->node_name ? berth_nameidx_find(&k->node_names, pod->node_name)
                                        : BERTH_NAMEIDX_NONE;
            if (n != BERTH_NAMEIDX_NONE && n < k->nnodes &&
                !strcmp(k->nodes[n].name, pod->node_name))
                pod->node_name = k->nodes[n].name;
        }
    if (k->npods - first_pod < 2)
        return;
    berth_nameidx ns;
    berth_nameidx_init(&ns);
    const char *last_ns = NULL;
    for (uint32_t p = first_pod; p < k->npods; p++) {
        berth_kpod *pod = &k->pods[p];
        if (!pod->ns || pod->ns == last_ns)
            continue;
        uint32_t had;
        int rc = berth_nameidx_add(&ns, pod->ns, p, &had);
        if (rc < 0)
            break;
        if (rc == 1)
            pod->ns = k->pods[had].ns;
        last_ns = pod->ns;
    }
    berth_nameidx_free(&ns);
}

/* What a file's load ends with: requests need the final resource table
 * (computed once the file is in), the pods share namespace names, and
 * volume zones need every file's PVCs and PVs (resolved again whenever a
 * file brings PVCs, PVs or pods with claims). */
static int load_end(berth_kcluster *k, uint32_t first_pod, berth_error *e)
{
    for (uint32_t p = first_pod; p < k->npods; p++)
        berth_kube_pod_requests(k, &k->pods[p]);
    share_names(k, first_pod);
    if (k->volumes_stale) {
        if (kube_resolve_volumes(k))
            return berth_error_set(e, BERTH_ENOMEM, "out of memory");
        k->volumes_stale = 0;
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
    int rc = berth_dec_walk_source(&d, src, &walker, k);
    return rc ? rc : load_end(k, first_pod, e);
}

int berth_kdocs_forward(void *ctx, berth_dec *d, const berth_node *doc, const char *kind)
{
    berth_kdocs *kd = ctx;
    (void)kind;
    /* decoded now (a streamed List releases each item after its walk),
     * with the field path of a document of its own, as berth_kube_load
     * would report it */
    char saved[sizeof d->path];
    size_t plen = d->plen;
    memcpy(saved, d->path, plen + 1);
    d->plen = 0;
    d->path[0] = '\0';
    int rc = berth_dec_walk(d, doc, 1, &walker, kd->k);
    memcpy(d->path, saved, plen + 1);
    d->plen = plen;
    kd->n++;
    return rc;
}

int berth_kdocs_walk(berth_kcluster *k, berth_dec *d, const berth_source *src, int strict,
                     const berth_walker *w, void *ctx, berth_kdocs *kd, int *any,
                     berth_error *e)
{
    berth_dec_init(d, &k->arena, src->path, e);
    d->strict = strict;
    d->skips = &k->skipped;
    *kd = (berth_kdocs){k, k->npods, 0};
    int rc = berth_dec_walk_source(d, src, w, ctx);
    *any = kd->n > 0;
    if (!rc)
        rc = load_end(k, kd->first_pod, e);
    d->plen = 0;
    d->path[0] = 0;
    return rc;
}

/* path set: the file at path; else buf[0, len) named name */
static int kdocs_stream(berth_kcluster *k, berth_dec *d, const char *path, const char *name,
                        const char *buf, size_t len, int strict, const berth_walker *w, void *ctx,
                        berth_kdocs *kd, int *any, berth_error *e)
{
    name = berth_arena_strdup(&k->arena, path ? (strcmp(path, "-") ? path : "<stdin>") : name);
    if (!name)
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    berth_dec_init(d, &k->arena, name, e);
    d->strict = strict;
    d->skips = &k->skipped;
    *kd = (berth_kdocs){k, k->npods, 0};
    *any = 0;
    size_t ndocs = 0;
    int rc = path ? berth_dec_walk_file(d, path, w, ctx, &ndocs)
                  : berth_dec_walk_buffer(d, buf, len, w, ctx, &ndocs);
    *any = kd->n > 0;
    if (!rc && !ndocs)
        rc = berth_error_set(e, BERTH_EINVAL, "%s: no input documents (an empty file or stream)",
                             name);
    if (!rc)
        rc = load_end(k, kd->first_pod, e);
    return rc;
}

int berth_kdocs_walk_file(berth_kcluster *k, berth_dec *d, const char *path, int strict,
                          const berth_walker *w, void *ctx, berth_kdocs *kd, int *any,
                          berth_error *e)
{
    return kdocs_stream(k, d, path, NULL, NULL, 0, strict, w, ctx, kd, any, e);
}

int berth_kdocs_walk_buffer(berth_kcluster *k, berth_dec *d, const char *name, const char *buf,
                            size_t len, int strict, const berth_walker *w, void *ctx,
                            berth_kdocs *kd, int *any, berth_error *e)
{
    return kdocs_stream(k, d, NULL, name, buf, len, strict, w, ctx, kd, any, e);
}

int berth_kube_load_file(berth_kcluster *k, const char *path, int strict, berth_error *e)
{
    berth_dec d;
    berth_kdocs kd;
    int any;
    return kdocs_stream(k, &d, path, NULL, NULL, 0, strict, &walker, k, &kd, &any, e);
}

static int krows_extend(berth_dec *d, const berth_krows *t, uint32_t want, void *ctx)
{
    if (want > *t->n && berth_grow(t->rows, t->cap, want, t->size, 0))
        return berth_error_set(d->err, BERTH_ENOMEM, "out of memory");
    int rc = 0;
    for (; !rc && *t->n < want; ++*t->n)
        rc = t->fill(ctx, d, *t->n, (char *)*t->rows + (size_t)*t->n * t->size);
    return rc;
}

int berth_krows_sync(berth_dec *d, const berth_kcluster *k, const berth_krows *nodes,
                     const berth_krows *pods, void *ctx)
{
    int rc = krows_extend(d, nodes, k->nnodes, ctx);
    return rc ? rc : krows_extend(d, pods, k->npods, ctx);
}
