/* crosslayer/map.c - the mapping between the Nexus and Kubernetes layers:
 * which VM a Node is (annotation berth.io/vm, label
 * kubernetes.azure.com/nexus-vm, the node's name), which NKS cluster a
 * workload file belongs to, Nodes without VMs and VMs without Nodes
 * (warnings), a Node's allocatable from its VM's SKU when it gives none,
 * and opening a cluster's what-if session once its VMs exist. */
#include "crosslayer/state.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define ANN_VM "berth.io/vm"
#define LABEL_VM "kubernetes.azure.com/nexus-vm"

const char *xl_node_vm(const berth_knode *n)
{
    const char *v = berth_kube_annotation(n->annotations, ANN_VM);
    if (v && *v)
        return v;
    v = berth_labels_get(&n->labels, LABEL_VM);
    return v && *v ? v : n->name;
}

/* Whether vm is "<spec>-<pool of spec>-<digits>". */
static int names_vm_of(const berth_cluster_spec *cs, const char *vm)
{
    size_t ln = strlen(cs->name);
    if (strncmp(vm, cs->name, ln) || vm[ln] != '-')
        return 0;
    const char *rest = vm + ln + 1;
    const char *dash = strrchr(rest, '-');
    if (!dash || !dash[1] || dash == rest)
        return 0;
    for (const char *q = dash + 1; *q; q++)
        if (!isdigit((unsigned char)*q))
            return 0;
    size_t lp = (size_t)(dash - rest);
    for (uint32_t i = 0; i < cs->npools; i++)
        if (strlen(cs->pools[i].name) == lp && !strncmp(cs->pools[i].name, rest, lp))
            return 1;
    return 0;
}

int berth_xl_guess_cluster(const berth_nexus *nx, const berth_kcluster *k, const char **cluster,
                           const char **other)
{
    *cluster = *other = NULL;
    for (uint32_t n = 0; n < k->nnodes; n++) {
        const char *vm = xl_node_vm(&k->nodes[n]);
        for (uint32_t s = 0; s < nx->nspecs; s++) {
            if (!names_vm_of(&nx->specs[s], vm))
                continue;
            if (!*cluster)
                *cluster = nx->specs[s].name;
            else if (strcmp(*cluster, nx->specs[s].name)) {
                *other = nx->specs[s].name;
                return 2;
            }
        }
    }
    return *cluster ? 0 : 1;
}

int xl_check_vms(berth_xl *x, berth_xl_cluster *c, const berth_nexus *nx, uint32_t cid)
{
    berth_warn_names w = {0};
    for (uint32_t v = c->vms_checked; v < nx->nvms; v++) {
        const berth_vm *vm = &nx->vms[v];
        if (vm->machine == BERTH_NEXUS_NONE || nx->pools[vm->pool].cluster != cid)
            continue;
        char name[256];
        berth_nexus_vm_name(nx, v, name, sizeof name);
        uint32_t node = berth_nameidx_find(&c->vm_nodes, name);
        if (node == BERTH_NAMEIDX_NONE) {
            berth_warn_names_add(&w, "%s", name);
            continue;
        }
        c->node_vm[node] = v;
    }
    c->vms_checked = nx->nvms;
    if (!w.n)
        return 0;
    return berth_skips_warn(&x->warnings,
                            "cluster %s: %u VM%s without a Kubernetes Node (%s): no pod is placed "
                            "there",
                            c->name, w.n, w.n == 1 ? "" : "s", w.text);
}

/* Allocatable from the VM's SKU for a Node that gives neither
 * status.allocatable nor status.capacity. */
static void alloc_from_sku(const berth_nexus *nx, berth_knode *n, uint32_t vm)
{
    if (n->ncapacity || n->alloc[BERTH_KRES_CPU] || n->alloc[BERTH_KRES_MEMORY])
        return;
    const berth_sku *s = &nx->skus[nx->pools[nx->vms[vm].pool].sku];
    n->alloc[BERTH_KRES_CPU] = (int64_t)s->vcpu * 1000;
    n->alloc[BERTH_KRES_MEMORY] = s->memory;
}

int xl_open(berth_xl *x, berth_xl_cluster *c, const berth_nexus *nx, uint32_t cid, berth_error *e)
{
    berth_kcluster *k = &c->k;
    uint32_t nn = k->nnodes ? k->nnodes : 1, np = k->npods ? k->npods : 1;
    c->vm_name = calloc(nn, sizeof *c->vm_name);
    c->node_vm = malloc(nn * sizeof *c->node_vm);
    c->down = calloc(nn, 1);
    c->next = calloc(nn, 1);
    c->draining = calloc(nn, 1);
    if (!c->vm_name || !c->node_vm || !c->down || !c->next || !c->draining)
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    berth_warn_names dup = {0}, orphan = {0};
    for (uint32_t n = 0; n < k->nnodes; n++) {
        c->node_vm[n] = BERTH_XL_NONE;
        c->vm_name[n] = xl_node_vm(&k->nodes[n]);
        uint32_t had;
        int rc = berth_nameidx_add(&c->vm_nodes, c->vm_name[n], n, &had);
        if (rc < 0 || rc == BERTH_ENOMEM)
            return berth_error_set(e, BERTH_ENOMEM, "out of memory");
        if (rc == 1)
            berth_warn_names_add(&dup, "%s (nodes %s and %s)", c->vm_name[n],
                                 k->nodes[had].name, k->nodes[n].name);
    }
    c->vms_checked = 0;
    if (xl_check_vms(x, c, nx, cid))
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    for (uint32_t n = 0; n < k->nnodes; n++) {
        if (c->node_vm[n] == BERTH_XL_NONE)
            berth_warn_names_add(&orphan, "%s", k->nodes[n].name);
        else
            alloc_from_sku(nx, &k->nodes[n], c->node_vm[n]);
    }
    if ((dup.n && berth_skips_warn(&x->warnings,
                                   "cluster %s: %u VM%s named by two Nodes (%s): the first Node is "
                                   "the VM",
                                   c->name, dup.n, dup.n == 1 ? "" : "s", dup.text)) ||
        (orphan.n && berth_skips_warn(&x->warnings,
                                      "cluster %s: %u Node%s without a VM of the site (%s): never "
                                      "taken down by the timeline",
                                      c->name, orphan.n, orphan.n == 1 ? "" : "s", orphan.text)))
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    /* per pod state */
    c->pod_node = malloc(np * sizeof *c->pod_node);
    c->healthy = calloc(np, 1);
    c->ready = calloc(np, 1);
    c->cand = malloc(np * sizeof *c->cand);
    c->ev = malloc(np * sizeof *c->ev);
    c->placed = malloc(np * sizeof *c->placed);
    c->why = calloc(np, sizeof *c->why);
    c->pending = malloc(np * sizeof *c->pending);
    if (!c->pod_node || !c->healthy || !c->ready || !c->cand || !c->ev || !c->placed || !c->why ||
        !c->pending)
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    int rc = berth_ksession_open(&c->s, k, NULL, x->advise ? BERTH_XL_SPARE_MAX : 0, NULL, e);
    if (rc)
        return rc;
    c->npending = 0;
    for (uint32_t p = 0; p < k->npods; p++) {
        const berth_kpod *pod = &k->pods[p];
        c->pod_node[p] = berth_ksession_node_of(c->s, p);
        c->ready[p] = pod->ready || pod->generated;
        if (c->pod_node[p] == BERTH_KUBE_NONE && !pod->terminating)
            c->pending[c->npending++] = p;
    }
    /* the pods pending in the input (and those the workloads add) first */
    if (c->npending) {
        rc = berth_ksession_place(c->s, c->pending, c->npending, c->placed, NULL, NULL, e);
        if (rc && rc != BERTH_ENOFIT)
            return rc;
        uint32_t left = 0;
        for (uint32_t i = 0; i < c->npending; i++) {
            uint32_t p = c->pending[i];
            c->pod_node[p] = c->placed[i];
            if (c->placed[i] == BERTH_KUBE_NONE)
                c->pending[left++] = p;
            else
                c->start_placed++;
        }
        c->npending = left;
    }
    c->start_pending = c->npending;
    c->opened = 1;
    return 0;
}
