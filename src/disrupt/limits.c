/* disrupt/limits.c - NodePool weight and limits for the planner's new
 * nodes (docs/disrupt.md "NodePool weight and limits"):
 * - the order in which NodePools offer new capacity, as Karpenter's
 *   nodepoolutils.OrderByWeight (kubernetes-sigs/karpenter
 *   pkg/utils/nodepool/nodepool.go): higher spec.weight first, equal
 *   weights by name, the later name first;
 * - spec.limits as the provisioning scheduler enforces them
 *   (pkg/controllers/provisioning/scheduling/scheduler.go: remainingResources
 *   = limits minus the capacity of the scheduler's state nodes,
 *   filterByRemainingResources, the "nodes" check of addToNewNodeClaim): a
 *   pool's usage is the capacity of its nodes that are not being deleted
 *   (Node status.capacity, else the instance type's capacity, else the
 *   allocatable; nodes = 1 each) plus its NodeClaims without a Node yet;
 *   the candidates of a question are not counted (SimulateScheduling
 *   leaves them out of the state nodes), so a replacement may use the room
 *   they free; an instance type is usable while its capacity of every
 *   limited resource is at most what remains and, for "nodes", one node
 *   remains. Work: O(nodes x limits) once, O(candidates x limits) per
 *   question, O(limits) per option. */
#include "disrupt/state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_pool(const void *a, const void *b, void *ctx)
{
    const berth_disrupt *m = ctx;
    const berth_nodepool *x = &m->pools[*(const uint32_t *)a], *y = &m->pools[*(const uint32_t *)b];
    if (x->weight != y->weight)
        return x->weight > y->weight ? -1 : 1;
    return -strcmp(x->name, y->name);
}

int64_t disrupt_type_capacity(const berth_instance_type *it, const char *res)
{
    if (!strcmp(res, "cpu"))
        return it->cpu;
    if (!strcmp(res, "memory"))
        return it->memory;
    if (!strcmp(res, "pods"))
        return it->pods;
    if (!strcmp(res, "nvidia.com/gpu"))
        return it->gpus;
    if (!strcmp(res, "nodes"))
        return 1;
    return 0;
}

int64_t disrupt_node_usage(const disrupt_state *s, uint32_t n, const char *res)
{
    const berth_dnode *x = &s->m->node_info[n];
    if (!strcmp(res, "nodes"))
        return 1;
    for (uint32_t i = 0; i < x->ncapacity; i++)
        if (!strcmp(x->capacity[i].resource, res))
            return x->capacity[i].value;
    if (s->n[n].type >= 0)
        return disrupt_type_capacity(&s->m->types[s->n[n].type], res);
    const berth_kcluster *k = &s->m->kube;
    const berth_knode *kn = &k->nodes[n];
    if (!strcmp(res, "pods"))
        return kn->alloc_pods;
    for (uint32_t r = 0; r < k->nres; r++)
        if (!strcmp(k->res_names[r], res))
            return kn->alloc[r];
    return 0;
}

int disrupt_limits_init(disrupt_state *s)
{
    const berth_disrupt *m = s->m;
    uint32_t np = m->npools;
    s->pool_order = malloc((np + 1) * sizeof *s->pool_order);
    s->pool_rank = malloc((np + 1) * sizeof *s->pool_rank);
    s->lim_off = malloc((np + 1) * sizeof *s->lim_off);
    if (!s->pool_order || !s->pool_rank || !s->lim_off)
        return BERTH_ENOMEM;
    uint32_t slots = 0;
    for (uint32_t p = 0; p < np; p++) {
        s->pool_order[p] = p;
        s->lim_off[p] = slots;
        slots += m->pools[p].nlimits;
    }
    s->lim_off[np] = slots;
    s->nlim = slots;
    qsort_r(s->pool_order, np, sizeof *s->pool_order, cmp_pool, (void *)m);
    for (uint32_t r = 0; r < np; r++)
        s->pool_rank[s->pool_order[r]] = r;
    s->lim_used = calloc(slots + 1, sizeof *s->lim_used);
    s->lim_q = calloc(slots + 1, sizeof *s->lim_q);
    s->lim_round = calloc(slots + 1, sizeof *s->lim_round);
    if (!s->lim_used || !s->lim_q || !s->lim_round)
        return BERTH_ENOMEM;
    if (!slots)
        return 0;
    for (uint32_t n = 0; n < s->nn; n++) {
        const disrupt_node *d = &s->n[n];
        if (d->pool < 0 || d->deleting || d->expired)
            continue;
        const berth_nodepool *pl = &m->pools[d->pool];
        for (uint32_t i = 0; i < pl->nlimits; i++)
            s->lim_used[s->lim_off[d->pool] + i] += disrupt_node_usage(s, n, pl->limits[i].resource);
    }
    /* NodeClaims without a Node yet (launching): their instance type */
    for (uint32_t c = 0; c < m->nclaims; c++) {
        const berth_nodeclaim *cl = &m->claims[c];
        if (cl->deleting || cl->instance_terminating || !cl->nodepool ||
            disrupt_node_find(s, cl->node_name) != BERTH_KUBE_NONE)
            continue;
        int pool = -1;
        for (uint32_t p = 0; p < np && pool < 0; p++)
            if (!strcmp(m->pools[p].name, cl->nodepool))
                pool = (int)p;
        int t = berth_instance_type_find(m->types, m->ntypes,
                                         berth_labels_get(&cl->labels, "node.kubernetes.io/instance-type"));
        if (pool < 0)
            continue;
        const berth_nodepool *pl = &m->pools[pool];
        for (uint32_t i = 0; i < pl->nlimits; i++) {
            const char *res = pl->limits[i].resource;
            s->lim_used[s->lim_off[pool] + i] +=
                !strcmp(res, "nodes") ? 1 : t >= 0 ? disrupt_type_capacity(&m->types[t], res) : 0;
        }
    }
    return 0;
}

void disrupt_limits_question(disrupt_state *s, const uint32_t *cands, uint32_t nc)
{
    if (!s->nlim)
        return;
    memcpy(s->lim_q, s->lim_used, s->nlim * sizeof *s->lim_q);
    for (uint32_t i = 0; i < nc; i++) {
        const disrupt_node *d = &s->n[cands[i]];
        if (d->pool < 0 || d->deleting || d->expired)
            continue;
        const berth_nodepool *pl = &s->m->pools[d->pool];
        for (uint32_t j = 0; j < pl->nlimits; j++)
            s->lim_q[s->lim_off[d->pool] + j] -= disrupt_node_usage(s, cands[i], pl->limits[j].resource);
    }
}

int disrupt_option_within_limits(const disrupt_state *s, const disrupt_option *o,
                                 const int64_t *used, char *why, size_t size)
{
    const berth_nodepool *pl = &s->m->pools[o->pool];
    const berth_instance_type *it = &s->m->types[o->type];
    for (uint32_t i = 0; i < pl->nlimits; i++) {
        const berth_dquantity *l = &pl->limits[i];
        int64_t left = l->value - used[s->lim_off[o->pool] + i];
        int64_t need = disrupt_type_capacity(it, l->resource);
        if (!strcmp(l->resource, "nodes") ? left < 1 : need > left) {
            if (why && size)
                snprintf(why, size, "NodePool %s limits: %s %lld of %s, %lld left", pl->name,
                         l->resource, (long long)need, it->name, (long long)(left > 0 ? left : 0));
            return 0;
        }
    }
    return 1;
}

void disrupt_limits_add(const disrupt_state *s, int64_t *used, uint32_t pool, uint32_t type,
                        int sign)
{
    const berth_nodepool *pl = &s->m->pools[pool];
    for (uint32_t i = 0; i < pl->nlimits; i++)
        used[s->lim_off[pool] + i] += sign * disrupt_type_capacity(&s->m->types[type],
                                                                   pl->limits[i].resource);
}

void disrupt_limits_remove_nodes(disrupt_state *s, const uint32_t *nodes, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        const disrupt_node *d = &s->n[nodes[i]];
        if (d->pool < 0 || d->deleting || d->expired)
            continue;
        const berth_nodepool *pl = &s->m->pools[d->pool];
        for (uint32_t j = 0; j < pl->nlimits; j++)
            s->lim_used[s->lim_off[d->pool] + j] -=
                disrupt_node_usage(s, nodes[i], pl->limits[j].resource);
    }
}
