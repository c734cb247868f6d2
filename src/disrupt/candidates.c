/* disrupt/candidates.c - the planner's view of every node at one moment
 * (SPEC 4.1): NodeClaim / Node / NodePool links, price, EvictionCost and
 * RescheduleDisruptionCost, emptiness, the candidate rules (initialised,
 * not deleting, not nominated, do-not-disrupt on nodes, NodePool templates
 * and pods, PDB blocking), expiration, drift, consolidatability, the
 * candidate order and the per-pool budget allowances. */
#include "disrupt/state.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DND "karpenter.sh/do-not-disrupt"

double berth_eviction_cost(const berth_disrupt *m, uint32_t pod)
{
    double c = 1.0 + (double)m->pod_info[pod].deletion_cost / (double)(1 << 27) +
               (double)m->kube.pods[pod].priority / (double)(1 << 25);
    return c < -10 ? -10 : c > 10 ? 10 : c;
}

static int type_by_name(const berth_disrupt *m, const char *name)
{
    for (uint32_t i = 0; name && i < m->ntypes; i++)
        if (!strcmp(m->types[i].name, name))
            return (int)i;
    return -1;
}

double berth_node_price(const berth_disrupt *m, uint32_t node)
{
    const berth_labels *l = &m->kube.nodes[node].labels;
    int t = type_by_name(m, berth_labels_get(l, "node.kubernetes.io/instance-type"));
    const char *zone = berth_labels_get(l, "topology.kubernetes.io/zone");
    int ct = berth_capacity_type_parse(berth_labels_get(l, "karpenter.sh/capacity-type"));
    if (t < 0 || !zone || ct < 0)
        return 0;
    const berth_instance_type *it = &m->types[t];
    for (uint32_t i = 0; i < it->nofferings; i++)
        if (!strcmp(it->offerings[i].zone, zone) && (int)it->offerings[i].capacity_type == ct)
            return it->offerings[i].price;
    return 0;
}

static int is_daemonset(const berth_kpod *p)
{
    return p->owner_kind && !strcmp(p->owner_kind, "DaemonSet");
}

int disrupt_pod_reschedulable(const disrupt_state *s, uint32_t pod)
{
    const berth_kpod *p = &s->m->kube.pods[pod];
    const berth_dpod *x = &s->m->pod_info[pod];
    int ss = p->owner_kind && !strcmp(p->owner_kind, "StatefulSet");
    return (!p->terminating || ss) && !is_daemonset(p) && !x->mirror;
}

int disrupt_pod_dnd_active(const disrupt_state *s, uint32_t pod)
{
    const berth_dpod *x = &s->m->pod_info[pod];
    if (s->m->kube.pods[pod].terminating)
        return 0;
    if (x->dnd == 1)
        return 1;
    return x->dnd == 2 && s->now < x->started + x->dnd_seconds;
}

static int tolerates_disrupted(const berth_kpod *p)
{
    berth_taint t = {"karpenter.sh/disrupted", "", BERTH_EFFECT_NOSCHEDULE};
    return berth_tolerations_tolerate(p->tols, p->ntols, &t);
}

static int pdb_matches(const berth_kpdb *b, const berth_kpod *p)
{
    return !strcmp(b->ns, p->ns) && berth_selector_matches(&b->selector, &p->labels);
}

int disrupt_pod_pdb_blocked(const disrupt_state *s, uint32_t pod, char *why, size_t size)
{
    const berth_kcluster *k = &s->m->kube;
    const berth_kpod *p = &k->pods[pod];
    /* evictable: active, not tolerating the disrupted taint, not a mirror pod */
    if (p->terminating || tolerates_disrupted(p) || s->m->pod_info[pod].mirror)
        return 0;
    int first = -1, count = 0;
    for (uint32_t i = 0; i < k->npdbs; i++)
        if (pdb_matches(&k->pdbs[i], p)) {
            if (first < 0)
                first = (int)i;
            count++;
        }
    if (count > 1) {
        snprintf(why, size, "pod %s/%s is matched by more than one PodDisruptionBudget", p->ns,
                 p->name);
        return 1;
    }
    if (count == 1 && s->pdb_allowed[first] == 0 &&
        !(k->pdbs[first].always_allow && !s->m->pod_info[pod].ready)) {
        snprintf(why, size, "PodDisruptionBudget %s/%s allows no disruption of pod %s",
                 k->pdbs[first].ns, k->pdbs[first].name, p->name);
        return 1;
    }
    return 0;
}

/* status.disruptionsAllowed, else computed from the matching pods. */
static int64_t pdb_allowed(const berth_disrupt *m, const berth_kpdb *b)
{
    if (b->has_disruptions_allowed)
        return b->disruptions_allowed;
    int64_t expected = 0, healthy = 0;
    for (uint32_t i = 0; i < m->kube.npods; i++) {
        const berth_kpod *p = &m->kube.pods[i];
        if (p->terminating || !pdb_matches(b, p))
            continue;
        expected++;
        healthy += m->pod_info[i].ready;
    }
    int64_t desired;
    if (b->has_min_available)
        desired = b->min_pct ? (b->min_available * expected + 99) / 100 : b->min_available;
    else if (b->has_max_unavailable)
        desired = expected - (b->max_pct ? (b->max_unavailable * expected + 99) / 100
                                         : b->max_unavailable);
    else
        desired = 0;
    int64_t a = healthy - desired;
    return a > 0 ? a : 0;
}

static const disrupt_state *sort_s;
static int cmp_order(const void *a, const void *b)
{
    const disrupt_node *x = &sort_s->n[*(const uint32_t *)a], *y = &sort_s->n[*(const uint32_t *)b];
    double kx = x->price / x->rdc, ky = y->price / y->rdc;
    if (kx != ky)
        return kx > ky ? -1 : 1;
    return strcmp(sort_s->m->kube.nodes[x->node].name, sort_s->m->kube.nodes[y->node].name);
}

void disrupt_state_free(disrupt_state *s)
{
    for (uint32_t i = 0; i < s->nn; i++)
        free(s->n[i].pods);
    free(s->n);
    free(s->pod_node);
    free(s->pdb_allowed);
    free(s->order);
    free(s->allowed);
    free(s->pool_nodes);
    free(s->pool_disrupting);
    memset(s, 0, sizeof *s);
}

static void block(disrupt_node *n, const char *fmt, const char *a, const char *b)
{
    if (!n->block[0])
        snprintf(n->block, sizeof n->block, fmt, a, b);
    n->candidate = 0;
}

int disrupt_state_init(disrupt_state *s, const berth_disrupt *m, const berth_dplan_options *o)
{
    memset(s, 0, sizeof *s);
    s->m = m;
    s->now = o->now;
    s->spot_to_spot = o->spot_to_spot;
    const berth_kcluster *k = &m->kube;
    s->nn = k->nnodes;
    s->n = calloc(k->nnodes ? k->nnodes : 1, sizeof *s->n);
    s->pod_node = malloc((k->npods ? k->npods : 1) * sizeof *s->pod_node);
    s->pdb_allowed = calloc(k->npdbs ? k->npdbs : 1, sizeof *s->pdb_allowed);
    s->order = malloc((k->nnodes ? k->nnodes : 1) * sizeof *s->order);
    s->allowed = calloc(m->npools ? m->npools : 1, sizeof *s->allowed);
    s->pool_nodes = calloc(m->npools ? m->npools : 1, sizeof *s->pool_nodes);
    s->pool_disrupting = calloc(m->npools ? m->npools : 1, sizeof *s->pool_disrupting);
    if (!s->n || !s->pod_node || !s->pdb_allowed || !s->order || !s->allowed || !s->pool_nodes ||
        !s->pool_disrupting)
        goto oom;
    for (uint32_t i = 0; i < k->npdbs; i++)
        s->pdb_allowed[i] = pdb_allowed(m, &k->pdbs[i]);
    /* pods per node (a linear name lookup per distinct run of names) */
    for (uint32_t p = 0; p < k->npods; p++) {
        s->pod_node[p] = BERTH_KUBE_NONE;
        const char *nn = k->pods[p].node_name;
        if (!nn)
            continue;
        uint32_t found = BERTH_KUBE_NONE;
        if (p && k->pods[p - 1].node_name && !strcmp(k->pods[p - 1].node_name, nn))
            found = s->pod_node[p - 1];
        for (uint32_t n = 0; found == BERTH_KUBE_NONE && n < k->nnodes; n++)
            if (!strcmp(k->nodes[n].name, nn))
                found = n;
        s->pod_node[p] = found;
        if (found == BERTH_KUBE_NONE)
            continue;
        disrupt_node *dn = &s->n[found];
        uint32_t *q = realloc(dn->pods, (dn->npods + 1) * sizeof *q);
        if (!q)
            goto oom;
        dn->pods = q;
        dn->pods[dn->npods++] = p;
    }
    for (uint32_t i = 0; i < k->nnodes; i++) {
        disrupt_node *dn = &s->n[i];
        const berth_knode *nd = &k->nodes[i];
        const berth_dnode *xi = &m->node_info[i];
        dn->node = i;
        dn->claim = dn->pool = -1;
        dn->ready = xi->ready;
        for (uint32_t c = 0; c < m->nclaims; c++)
            if (!strcmp(m->claims[c].node_name, nd->name))
                dn->claim = (int)c;
        const berth_nodeclaim *cl = dn->claim >= 0 ? &m->claims[dn->claim] : NULL;
        const char *pool = cl && cl->nodepool ? cl->nodepool
                                              : berth_labels_get(&nd->labels, "karpenter.sh/nodepool");
        for (uint32_t p = 0; pool && p < m->npools; p++)
            if (!strcmp(m->pools[p].name, pool))
                dn->pool = (int)p;
        dn->managed = cl != NULL || pool != NULL;
        dn->type = type_by_name(m, berth_labels_get(&nd->labels, "node.kubernetes.io/instance-type"));
        dn->zone = berth_labels_get(&nd->labels, "topology.kubernetes.io/zone");
        dn->ct = berth_capacity_type_parse(berth_labels_get(&nd->labels, "karpenter.sh/capacity-type"));
        dn->resolvable = dn->type >= 0 && dn->zone && dn->ct >= 0;
        dn->price = berth_node_price(m, i);
        dn->initialized = (cl && cl->initialized) || xi->initialized_label;
        int disrupted_taint = 0;
        for (uint32_t t = 0; t < nd->ntaints; t++)
            if (!strcmp(nd->taints[t].key, "karpenter.sh/disrupted"))
                disrupted_taint = 1;
        dn->deleting = xi->deleting || (cl && cl->deleting) || disrupted_taint;
        dn->rdc = 1;
        for (uint32_t j = 0; j < dn->npods; j++)
            if (disrupt_pod_reschedulable(s, dn->pods[j])) {
                double c = berth_eviction_cost(m, dn->pods[j]);
                dn->rdc += c > 0 ? c : 0;
            }
        dn->empty = dn->rdc <= 1;
        if (!dn->managed)
            continue;
        const berth_nodepool *np = dn->pool >= 0 ? &m->pools[dn->pool] : NULL;
        /* expiration: creation + expireAfter, no budgets, no opt-outs */
        if (cl && np && np->expire_after != BERTH_DURATION_NEVER && cl->has_created && !dn->deleting &&
            s->now >= cl->created + np->expire_after)
            dn->expired = 1;
        /* counted for budgets: managed and initialised; disrupting: not Ready
         * or marked for deletion (expired now included) */
        if (np && dn->initialized) {
            s->pool_nodes[dn->pool]++;
            if (!dn->ready || dn->deleting || dn->expired)
                s->pool_disrupting[dn->pool]++;
        }
        /* the candidate rules */
        dn->candidate = 1;
        if (!cl)
            block(dn, "node has no NodeClaim%s%s", "", "");
        else if (!dn->initialized)
            block(dn, "node is not initialized%s%s", "", "");
        else if (dn->deleting)
            block(dn, "node is already being deleted%s%s", "", "");
        else if (dn->expired)
            block(dn, "node has expired (deleted directly)%s%s", "", "");
        if (dn->candidate)
            for (uint32_t p = 0; p < k->npods; p++) {
                const berth_dpod *x = &m->pod_info[p];
                if (x->nominated && !k->pods[p].node_name && !strcmp(x->nominated, nd->name)) {
                    block(dn, "node is nominated for pending pod %s/%s", k->pods[p].ns,
                          k->pods[p].name);
                    break;
                }
            }
        if (dn->candidate && xi->do_not_disrupt)
            block(dn, "node has annotation " DND "=true%s%s", "", "");
        if (dn->candidate && !np)
            block(dn, "NodePool %s%s not found", pool ? pool : "(none)", "");
        if (dn->candidate && np) {
            const char *v = berth_labels_get(&np->annotations, DND);
            if (v && !strcmp(v, "true"))
                block(dn, "NodePool %s template has annotation " DND "=true%s", np->name, "");
        }
        if (dn->candidate && np) {
            dn->drifted = berth_nodeclaim_drifted(m, cl, NULL, 0);
            dn->drift_at = cl->drifted ? cl->drifted_at : 0;
            int64_t base = cl->last_pod_event ? cl->last_pod_event
                           : cl->initialized_at ? cl->initialized_at
                                                : cl->created;
            dn->consolidatable = np->consolidate_after != BERTH_DURATION_NEVER &&
                                 s->now >= base + np->consolidate_after;
        }
        /* pod-level blocks */
        for (uint32_t j = 0; dn->candidate && j < dn->npods; j++) {
            uint32_t p = dn->pods[j];
            char why[200];
            if (disrupt_pod_dnd_active(s, p)) {
                block(dn, "pod %s/%s has annotation " DND, k->pods[p].ns, k->pods[p].name);
                dn->pod_blocked = 1;
            } else if (disrupt_pod_pdb_blocked(s, p, why, sizeof why)) {
                block(dn, "%s%s", why, "");
                dn->pod_blocked = 1;
            }
        }
        if (dn->candidate)
            s->order[s->norder++] = i;
    }
    for (uint32_t p = 0; p < m->npools; p++)
        for (int r = 0; r < BERTH_DR_BUDGET_COUNT; r++) {
            int64_t b = berth_budgets_allowed(m->pools[p].budgets, m->pools[p].nbudgets,
                                              (berth_dreason)r, s->pool_nodes[p], s->now);
            int64_t a = b - s->pool_disrupting[p];
            s->allowed[p][r] = a > 0 ? a : 0;
        }
    sort_s = s;
    qsort(s->order, s->norder, sizeof *s->order, cmp_order);
    return 0;
oom:
    disrupt_state_free(s);
    return BERTH_ENOMEM;
}
