/* disrupt/warnings.c - the input the disruption planner ignores, said out
 * loud (docs/disrupt.md "Warnings"): NodeClaims without their Node or
 * NodePool, Nodes of a NodePool that is not in the input, managed Nodes
 * without a price, Pods bound to a Node that is not in the input, NodePools
 * naming an AKSNodeClass that is missing. Each is one line in the model's
 * skip list (berth_skips_warn), so it reaches stderr and the JSON
 * `warnings` of `disrupt plan`, `disrupt simulate` and the service.
 * Work: O((nodes + claims + pods) log nodes). */
#include "berth/disrupt.h"

#include <stdlib.h>
#include <string.h>

static int cmp_node(const void *a, const void *b, void *ctx)
{
    const berth_knode *n = ctx;
    return strcmp(n[*(const uint32_t *)a].name, n[*(const uint32_t *)b].name);
}

static int cmp_claim(const void *a, const void *b, void *ctx)
{
    const berth_nodeclaim *c = ctx;
    return strcmp(c[*(const uint32_t *)a].node_name, c[*(const uint32_t *)b].node_name);
}

/* Index into idx (sorted by name()) of name, or -1. */
static int64_t find(const uint32_t *idx, uint32_t n, const char *name,
                    const char *(*key)(const void *v, uint32_t i), const void *v)
{
    uint32_t lo = 0, hi = n;
    while (name && lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int c = strcmp(key(v, idx[mid]), name);
        if (!c)
            return idx[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

static const char *node_key(const void *v, uint32_t i)
{
    return ((const berth_knode *)v)[i].name;
}

static const char *claim_key(const void *v, uint32_t i)
{
    return ((const berth_nodeclaim *)v)[i].node_name;
}

static int pool_exists(const berth_disrupt *m, const char *name)
{
    for (uint32_t p = 0; name && p < m->npools; p++)
        if (!strcmp(m->pools[p].name, name))
            return 1;
    return 0;
}

static const char *or_q(const char *s)
{
    return s ? s : "?";
}

int berth_disrupt_warnings(berth_disrupt *m)
{
    const berth_kcluster *k = &m->kube;
    berth_skips *s = &m->kube.skipped;
    uint32_t *nodes = malloc((k->nnodes + 1) * sizeof *nodes);
    uint32_t *claims = malloc((m->nclaims + 1) * sizeof *claims);
    if (!nodes || !claims) {
        free(nodes);
        free(claims);
        return BERTH_ENOMEM;
    }
    for (uint32_t i = 0; i < k->nnodes; i++)
        nodes[i] = i;
    for (uint32_t i = 0; i < m->nclaims; i++)
        claims[i] = i;
    qsort_r(nodes, k->nnodes, sizeof *nodes, cmp_node, (void *)k->nodes);
    qsort_r(claims, m->nclaims, sizeof *claims, cmp_claim, (void *)m->claims);
    berth_warn_names no_node = {0}, no_pool = {0}, node_pool = {0}, no_price = {0}, pods = {0};
    for (uint32_t c = 0; c < m->nclaims; c++) {
        const berth_nodeclaim *cl = &m->claims[c];
        int64_t n = find(nodes, k->nnodes, cl->node_name, node_key, k->nodes);
        if (n < 0 && !cl->deleting && !cl->instance_terminating) {
            if (strcmp(cl->node_name, cl->name))
                berth_warn_names_add(&no_node, "%s (node %s)", cl->name, cl->node_name);
            else
                berth_warn_names_add(&no_node, "%s", cl->name);
        }
        /* the planner's NodePool of a claim: its label, else its Node's */
        const char *pool = cl->nodepool ? cl->nodepool
                           : n >= 0 ? berth_labels_get(&k->nodes[n].labels, "karpenter.sh/nodepool")
                                    : NULL;
        if (!pool)
            berth_warn_names_add(&no_pool, "%s (no karpenter.sh/nodepool label)", cl->name);
        else if (!pool_exists(m, pool))
            berth_warn_names_add(&no_pool, "%s (NodePool %s)", cl->name, pool);
    }
    for (uint32_t i = 0; i < k->nnodes; i++) {
        const berth_knode *nd = &k->nodes[i];
        int64_t c = find(claims, m->nclaims, nd->name, claim_key, m->claims);
        const char *pool = berth_labels_get(&nd->labels, "karpenter.sh/nodepool");
        if (c < 0 && pool && !pool_exists(m, pool))
            berth_warn_names_add(&node_pool, "%s (NodePool %s)", nd->name, pool);
        if (c < 0 && !pool)
            continue; /* not managed: its price is not the planner's business */
        const char *type = berth_labels_get(&nd->labels, "node.kubernetes.io/instance-type");
        const char *zone = berth_labels_get(&nd->labels, "topology.kubernetes.io/zone");
        const char *cts = berth_labels_get(&nd->labels, "karpenter.sh/capacity-type");
        int t = berth_instance_type_find(m->types, m->ntypes, type);
        int ct = berth_capacity_type_parse(cts);
        const berth_offering *o = t >= 0 && zone && ct >= 0
                                      ? berth_instance_offering(&m->types[t], zone,
                                                                (berth_capacity_type)ct)
                                      : NULL;
        if (!o)
            berth_warn_names_add(&no_price, "%s (%s %s %s)", nd->name, or_q(type), or_q(zone),
                                 or_q(cts));
    }
    for (uint32_t p = 0; p < k->npods; p++) {
        const berth_kpod *pd = &k->pods[p];
        if (pd->node_name && !pd->terminating &&
            find(nodes, k->nnodes, pd->node_name, node_key, k->nodes) < 0)
            berth_warn_names_add(&pods, "%s/%s (node %s)", pd->ns, pd->name, pd->node_name);
    }
    free(nodes);
    free(claims);
    int rc = berth_skips_warn_names(s, &no_node, "NodeClaim",
                                    "whose Node is not in the input (taken as still launching: "
                                    "never disrupted, counted for its NodePool's limits)");
    rc = rc ? rc
            : berth_skips_warn_names(s, &no_pool, "NodeClaim",
                                     "whose NodePool is not in the input (never disrupted, "
                                     "counted for no NodePool's budgets or limits)");
    rc = rc ? rc
            : berth_skips_warn_names(s, &node_pool, "Node",
                                     "labelled karpenter.sh/nodepool with a NodePool that is not "
                                     "in the input (never disrupted)");
    rc = rc ? rc
            : berth_skips_warn_names(s, &no_price, "Node",
                                     "of a NodePool without a price (no InstanceType offering "
                                     "matches their instance type, zone and capacity type: taken "
                                     "as 0 per hour, so no replacement is cheaper)");
    rc = rc ? rc
            : berth_skips_warn_names(s, &pods, "Pod",
                                     "bound to a Node that is not in the input (ignored: "
                                     "neither moved nor counted)");
    /* AKSNodeClass drift: only when the input has AKSNodeClasses at all */
    for (uint32_t p = 0; !rc && m->nclasses && p < m->npools; p++) {
        const berth_nodepool *np = &m->pools[p];
        int azure = np->class_name && (!np->class_kind || !strcmp(np->class_kind, "AKSNodeClass")) &&
                    (!np->class_group || !strcmp(np->class_group, "karpenter.azure.com"));
        if (azure && !berth_nodepool_class(m, np))
            rc = berth_skips_warn(s, "NodePool %s: nodeClassRef names AKSNodeClass %s, which is "
                                     "not in the input (its NodeClaims' AKSNodeClass drift is "
                                     "not checked)", np->name, np->class_name);
    }
    return rc;
}
