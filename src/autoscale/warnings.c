/* autoscale/warnings.c - the input the autoscaler ignores, said out loud
 * (docs/autoscale.md "Warnings"): headroom units larger than every
 * instance type their group allows, Nodes labelled with a virtual node
 * group that is not in the input, Nodes that belong to no group, Pods
 * bound to a Node that is not in the input. Each is one line in the
 * model's skip list (berth_skips_warn): stderr and the JSON `warnings` of
 * `autoscale plan`, `autoscale simulate` and the service.
 * Work: O(groups x headroom x types + nodes x groups + pods log nodes). */
#include "autoscale/state.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "berth/quantity.h"

static int cmp_node(const void *a, const void *b, void *ctx)
{
    const berth_knode *n = ctx;
    return strcmp(n[*(const uint32_t *)a].name, n[*(const uint32_t *)b].name);
}

static int node_exists(const berth_kcluster *k, const uint32_t *idx, const char *name)
{
    uint32_t lo = 0, hi = k->nnodes;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int c = strcmp(k->nodes[idx[mid]].name, name);
        if (!c)
            return 1;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

/* Whether one unit of h fits an empty node of some type v allows (its
 * allocatable: capacity minus node overhead). */
static int unit_fits_some_type(const berth_autoscale *m, const berth_vng *v, const berth_headroom *h)
{
    for (uint32_t t = 0; t < m->ntypes; t++) {
        const berth_instance_type *it = &m->types[t];
        if (capacity_vng_allows_type(v, it) && h->cpu <= it->cpu && h->memory <= it->memory &&
            h->gpu <= it->gpus)
            return 1;
    }
    return 0;
}

static int warn_headroom(berth_autoscale *m)
{
    for (uint32_t g = 0; g < m->nvngs; g++) {
        const berth_vng *v = &m->vngs[g];
        for (uint32_t i = 0; i < v->nheadroom; i++) {
            const berth_headroom *h = &v->headroom[i];
            if (h->units <= 0 || unit_fits_some_type(m, v, h))
                continue;
            char cpu[48], mem[48];
            berth_quantity_format((berth_quantity){(__int128)h->cpu * 1000000}, cpu, sizeof cpu);
            berth_quantity_format((berth_quantity){(__int128)h->memory * 1000000000}, mem,
                                  sizeof mem);
            int rc = berth_skips_warn(&m->kube.skipped,
                                      "VirtualNodeGroup %s: headroom unit (cpu %s, memory %s, "
                                      "gpu %" PRId64 ") is larger than the allocatable of every "
                                      "instance type the group allows (its %" PRId64
                                      " unit%s never held)",
                                      v->name, cpu, mem, h->gpu, h->units,
                                      h->units == 1 ? " is" : "s are");
            if (rc)
                return rc;
        }
    }
    return 0;
}

int berth_autoscale_warnings(berth_autoscale *m)
{
    const berth_kcluster *k = &m->kube;
    int rc = warn_headroom(m);
    if (rc)
        return rc;
    berth_warn_names bad_label = {0}, no_group = {0}, pods = {0};
    for (uint32_t i = 0; i < k->nnodes; i++) {
        const berth_knode *n = &k->nodes[i];
        const char *v = berth_labels_get(&n->labels, BERTH_VNG_LABEL);
        if (berth_autoscale_node_vng(m, i) >= 0)
            continue;
        if (v)
            berth_warn_names_add(&bad_label, "%s (%s)", n->name, v);
        else
            berth_warn_names_add(&no_group, "%s", n->name);
    }
    uint32_t *idx = malloc((k->nnodes + 1) * sizeof *idx);
    if (!idx)
        return BERTH_ENOMEM;
    for (uint32_t i = 0; i < k->nnodes; i++)
        idx[i] = i;
    qsort_r(idx, k->nnodes, sizeof *idx, cmp_node, (void *)k->nodes);
    for (uint32_t p = 0; p < k->npods; p++) {
        const berth_kpod *pd = &k->pods[p];
        if (pd->node_name && !pd->terminating && !node_exists(k, idx, pd->node_name))
            berth_warn_names_add(&pods, "%s/%s (node %s)", pd->ns, pd->name, pd->node_name);
    }
    free(idx);
    berth_skips *s = &m->kube.skipped;
    rc = berth_skips_warn_names(s, &bad_label, "Node",
                                "labelled " BERTH_VNG_LABEL " with a group that is not in the "
                                "input (in no group: never scaled down or replaced, counted for "
                                "no group's maxNodes or headroom)");
    rc = rc ? rc
            : berth_skips_warn_names(s, &no_group, "Node",
                                     "in no virtual node group (no " BERTH_VNG_LABEL
                                     " label, and no group whose labels and taints they all "
                                     "carry: never scaled down or replaced, counted for no "
                                     "group's maxNodes or headroom)");
    rc = rc ? rc
            : berth_skips_warn_names(s, &pods, "Pod",
                                     "bound to a Node that is not in the input (ignored: "
                                     "neither pending nor placed)");
    return rc;
}
