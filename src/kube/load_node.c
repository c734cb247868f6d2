/* kube/load_node.c - v1 Node: allocatable, taints, unschedulable, Ready
 * condition, images, usage, and what the planners read beyond scheduling
 * (annotations, deletionTimestamp, status.capacity as written); the
 * loader's node-name index. */
#include "k8s/k8s.h"
#include "kube/load.h"
#include "berth/time.h"
#include "berth/grow.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int dec_taints(berth_kcluster *k, berth_dec *d, const berth_node *spec, berth_knode *nd)
{
    static const char *const tf[] = {"key", "value", "effect", "timeAdded", NULL};
    return berth_dec_taints(d, &k->arena, spec, "taints", tf, d->strict, &nd->taints,
                            &nd->ntaints);
}

uint32_t kube_node_index_find(const berth_kcluster *k, const char *name)
{
    uint32_t i = berth_nameidx_find(&k->node_names, name);
    return i == BERTH_NAMEIDX_NONE ? BERTH_KUBE_NONE : i;
}

/* The index is rebuilt from the nodes when it lost step with them (the
 * scheduler re-sorted them and dropped it). */
int kube_node_index_add(berth_kcluster *k, uint32_t id)
{
    if (k->node_names.n != id) {
        berth_nameidx_free(&k->node_names);
        for (uint32_t n = 0; n < id; n++)
            if (berth_nameidx_put(&k->node_names, k->nodes[n].name, n))
                return BERTH_ENOMEM;
    }
    return berth_nameidx_put(&k->node_names, k->nodes[id].name, id) ? BERTH_ENOMEM : 0;
}

/* status.conditions[type=Ready]: not_ready 1 (False) / 2 (Unknown) and its
 * lastTransitionTime; other conditions are accepted and ignored. */
static int dec_ready(berth_dec *d, const berth_node *status, berth_knode *nd)
{
    berth_node *cs = NULL;
    int rc = berth_dec_seq(d, status, "conditions", 0, &cs);
    for (size_t i = 0; !rc && cs && i < cs->n; i++) {
        const berth_node *c = cs->items[i];
        const berth_node *t = c->type == BERTH_NODE_MAP ? berth_node_get(c, "type") : NULL;
        if (!t || t->type != BERTH_NODE_SCALAR || strcmp(t->str, "Ready"))
            continue;
        size_t p = berth_dec_push(d, "conditions");
        berth_dec_push_index(d, i);
        const char *st = NULL, *since = NULL;
        if (!(rc = berth_dec_str(d, c, "status", 1, &st)) &&
            !(rc = berth_dec_str(d, c, "lastTransitionTime", 0, &since))) {
            nd->not_ready = !strcmp(st, "True") ? 0 : !strcmp(st, "False") ? 1 : 2;
            int64_t ms = 0;
            if (since && berth_time_parse(since, &ms))
                rc = k8s_fail_at(d, c, "lastTransitionTime",
                             "expected an RFC 3339 time such as 2024-05-01T12:00:00Z, got '%s'",
                             since);
            else if (since)
                nd->not_ready_since = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
        }
        berth_dec_pop(d, p);
    }
    return rc;
}

int kube_load_node(berth_kcluster *k, berth_dec *d, const berth_node *doc)
{
    berth_knode nd;
    memset(&nd, 0, sizeof nd);
    k8s_meta meta;
    int rc = k8s_dec_metadata(k, d, doc, 0, &meta);
    if (rc)
        return rc;
    nd.name = meta.name;
    nd.labels = meta.labels;
    /* kept past the document (a streamed List releases its items' nodes) */
    if (meta.annotations && !(nd.annotations = berth_node_copy(&k->arena, meta.annotations)))
        return berth_error_set(d->err, BERTH_ENOMEM, "out of memory");
    size_t pm = berth_dec_push(d, "metadata");
    int64_t deleted_at = 0;
    rc = k8s_dec_time_at(d, meta.node, "deletionTimestamp", &deleted_at, &nd.deleting);
    berth_dec_pop(d, pm);
    if (rc)
        return rc;
    berth_node *spec = NULL, *status = NULL;
    if ((rc = berth_dec_map(d, doc, "spec", 0, &spec)) ||
        (rc = berth_dec_map(d, doc, "status", 0, &status)))
        return rc;
    if (spec) {
        static const char *const sf[] = {"podCIDR", "podCIDRs", "providerID", "unschedulable",
                                         "taints", "configSource", "externalID", NULL};
        size_t p = berth_dec_push(d, "spec");
        if (!(rc = k8s_known(d, spec, sf)) && !(rc = berth_dec_bool(d, spec, "unschedulable", 0,
                                                                &nd.unschedulable)))
            rc = dec_taints(k, d, spec, &nd);
        berth_dec_pop(d, p);
        if (rc)
            return rc;
    }
    nd.alloc_pods = -1;
    if (status) {
        static const char *const stf[] = {"capacity", "allocatable", "phase", "conditions",
                                          "addresses", "daemonEndpoints", "nodeInfo", "images",
                                          "volumesInUse", "volumesAttached", "config",
                                          "runtimeHandlers", "features", "usage", NULL};
        size_t p = berth_dec_push(d, "status");
        rc = k8s_known(d, status, stf);
        const char *which = berth_node_get(status, "allocatable") ? "allocatable" : "capacity";
        if (!rc)
            rc = k8s_dec_res_list(k, d, status, which, nd.alloc, NULL, &nd.alloc_pods, 1);
        if (!rc)
            rc = k8s_dec_quantities(k, d, status, "capacity", &nd.capacity, &nd.ncapacity);
        if (!rc)
            rc = dec_ready(d, status, &nd);
        berth_node *imgs = NULL;
        if (!rc)
            rc = berth_dec_seq(d, status, "images", 0, &imgs);
        if (!rc && imgs) {
            size_t total = 0;
            for (size_t i = 0; i < imgs->n; i++) {
                berth_node *names = berth_node_get(imgs->items[i], "names");
                total += names && names->type == BERTH_NODE_SEQ ? names->n : 0;
            }
            nd.images = k8s_alloc(k, total, sizeof *nd.images);
            if (!nd.images)
                rc = ENOMEM_(d);
            for (size_t i = 0; !rc && i < imgs->n; i++) {
                const berth_node *im = imgs->items[i];
                size_t p2 = berth_dec_push(d, "images");
                berth_dec_push_index(d, i);
                static const char *const imf[] = {"names", "sizeBytes", NULL};
                const char **names = NULL;
                uint32_t nn = 0;
                int64_t size = 0;
                if (im->type != BERTH_NODE_MAP)
                    rc = berth_dec_fail(d, im, "expected a mapping with names, sizeBytes");
                if (!rc && !(rc = k8s_known(d, im, imf)) &&
                    !(rc = k8s_dec_str_list(k, d, im, "names", &names, &nn)))
                    rc = berth_dec_int(d, im, "sizeBytes", 0, 0, INT64_MAX, &size);
                for (uint32_t j = 0; !rc && j < nn && nd.nimages < total; j++)
                    nd.images[nd.nimages++] = (berth_kimage){names[j], size};
                berth_dec_pop(d, p2);
            }
        }
        berth_dec_pop(d, p);
        if (rc)
            return rc;
    }
    if (nd.alloc_pods < 0)
        nd.alloc_pods = 110; /* kubelet's default maxPods when the input omits pods */
    if ((rc = k8s_dec_usage(k, d, status, &meta, nd.usage, &nd.has_usage)))
        return rc;
    /* usage-aware admission (SPEC 2.4): per-VM overhead reserved on the host */
    const berth_node *ov = meta.annotations ? berth_node_get(meta.annotations, VM_OVERHEAD_ANN)
                                            : NULL;
    if (ov) {
        size_t p = berth_dec_push(d, "metadata.annotations");
        berth_dec_push(d, VM_OVERHEAD_ANN);
        berth_quantity q;
        rc = berth_dec_node_quantity(d, ov, &q);
        if (!rc && berth_quantity_cmp(q, (berth_quantity){0}) < 0)
            rc = berth_dec_fail(d, ov, "must not be negative, got '%s'", ov->str);
        if (!rc)
            nd.overhead_reserve = berth_quantity_value(q);
        berth_dec_pop(d, p);
        if (rc)
            return rc;
    }
    if (kube_node_index_find(k, nd.name) != BERTH_KUBE_NONE) {
        size_t p = berth_dec_push(d, "metadata.name");
        rc = berth_dec_fail(d, berth_node_get(meta.node, "name"), "node '%s' appears twice",
                            nd.name);
        berth_dec_pop(d, p);
        return rc;
    }
    if ((rc = berth_grow_append((void **)&k->nodes, &k->capnodes, k->nnodes + 1, sizeof *k->nodes,
                                KUBE_MAX_NODES)))
        return k8s_grow_fail(d, doc, rc, "nodes", KUBE_MAX_NODES);
    k->nodes[k->nnodes++] = nd;
    if (kube_node_index_add(k, k->nnodes - 1))
        return berth_error_set(d->err, BERTH_ENOMEM, "out of memory");
    return 0;
}

