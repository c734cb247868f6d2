/* disrupt/candidates.c - the planner's view of every node at one moment
 * (SPEC 4.1): NodeClaim / Node / NodePool links, price, EvictionCost and
 * RescheduleDisruptionCost, emptiness, the candidate rules (initialised,
 * not deleting, not nominated, do-not-disrupt on nodes, NodePool templates
 * and pods, PDB blocking), expiration, drift, consolidatability, the
 * candidate order and the per-pool budget allowances. Lookups go through
 * indexes built once: nodes by name and NodeClaims by node name (sorted,
 * binary search), nominations in one pass over the pods, PDBs grouped by
 * namespace with each pod matched once (which also yields the counts of a
 * computed disruptionsAllowed). Work: O((nodes + claims) log nodes + pods
 * x PDBs of the pod's namespace). */
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
    return berth_dpod_dnd_active(x, s->now);
}

int disrupt_pod_moves(const disrupt_state *s, uint32_t pod)
{
    char why[8];
    return disrupt_pod_reschedulable(s, pod) && !disrupt_pod_dnd_active(s, pod) &&
           !disrupt_pod_pdb_blocked(s, pod, why, sizeof why);
}

static int tolerates_disrupted(const berth_kpod *p)
{
    berth_taint t = {"karpenter.sh/disrupted", "", BERTH_EFFECT_NOSCHEDULE};
    return berth_tolerations_tolerate(p->tols, p->ntols, &t);
}

int disrupt_pod_pdb_blocked(const disrupt_state *s, uint32_t pod, char *why, size_t size)
{
    const berth_kcluster *k = &s->m->kube;
    const berth_kpod *p = &k->pods[pod];
    int first = s->pod_pdb[pod], count = s->pod_npdb[pod];
    if (!count)
        return 0;
    /* evictable: active, not tolerating the disrupted taint, not a mirror pod */
    if (p->terminating || tolerates_disrupted(p) || s->m->pod_info[pod].mirror)
        return 0;
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

/* ---- indexes: nodes by name, claims by node name, PDBs by namespace ---- */

static int cmp_node_name(const void *a, const void *b, void *ctx)
{
    const berth_disrupt *sort_m = ctx;
    return strcmp(sort_m->kube.nodes[*(const uint32_t *)a].name,
                  sort_m->kube.nodes[*(const uint32_t *)b].name);
}

static int cmp_claim_node(const void *a, const void *b, void *ctx)
{
    const berth_disrupt *sort_m = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    int c = strcmp(sort_m->claims[x].node_name, sort_m->claims[y].node_name);
    return c ? c : (x > y) - (x < y);
}

static int cmp_pdb_ns(const void *a, const void *b, void *ctx)
{
    const berth_disrupt *sort_m = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    int c = strcmp(sort_m->kube.pdbs[x].ns, sort_m->kube.pdbs[y].ns);
    return c ? c : (x > y) - (x < y);
}

uint32_t disrupt_node_find(const disrupt_state *s, const char *name)
{
    const berth_kcluster *k = &s->m->kube;
    uint32_t lo = 0, hi = s->nn;
    while (name && lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int c = strcmp(k->nodes[s->node_by_name[mid]].name, name);
        if (!c)
            return s->node_by_name[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return BERTH_KUBE_NONE;
}

/* The last claim (in input order) whose node name is name, -1 when none:
 * the original linear scan kept the last match. */
static int claim_find(const berth_disrupt *m, const uint32_t *by_node, const char *name)
{
    uint32_t lo = 0, hi = m->nclaims;
    while (lo < hi) { /* first index with node_name > name */
        uint32_t mid = lo + (hi - lo) / 2;
        if (strcmp(m->claims[by_node[mid]].node_name, name) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo && !strcmp(m->claims[by_node[lo - 1]].node_name, name))
        return (int)by_node[lo - 1];
    return -1;
}

/* Per pod its matching PDBs (first and count), per PDB its allowance:
 * each pod is tested against the PDBs of its namespace only. */
static int index_pdbs(disrupt_state *s)
{
    const berth_kcluster *k = &s->m->kube;
    uint32_t *by_ns = malloc((k->npdbs + 1) * sizeof *by_ns);
    int64_t *expected = calloc(k->npdbs + 1, sizeof *expected);
    int64_t *healthy = calloc(k->npdbs + 1, sizeof *healthy);
    if (!by_ns || !expected || !healthy) {
        free(by_ns);
        free(expected);
        free(healthy);
        return BERTH_ENOMEM;
    }
    for (uint32_t i = 0; i < k->npdbs; i++)
        by_ns[i] = i;
    qsort_r(by_ns, k->npdbs, sizeof *by_ns, cmp_pdb_ns, (void *)s->m);
    for (uint32_t p = 0; p < k->npods; p++) {
        const berth_kpod *pod = &k->pods[p];
        s->pod_pdb[p] = -1;
        s->pod_npdb[p] = 0;
        if (!k->npdbs)
            continue;
        uint32_t lo = 0, hi = k->npdbs;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (strcmp(k->pdbs[by_ns[mid]].ns, pod->ns) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (uint32_t j = lo; j < k->npdbs && !strcmp(k->pdbs[by_ns[j]].ns, pod->ns); j++) {
            uint32_t b = by_ns[j];
            if (!berth_selector_matches(&k->pdbs[b].selector, &pod->labels))
                continue;
            if (s->pod_pdb[p] < 0 || (int32_t)b < s->pod_pdb[p])
                s->pod_pdb[p] = (int32_t)b;
            if (s->pod_npdb[p] < 255)
                s->pod_npdb[p]++;
            if (!pod->terminating) {
                expected[b]++;
                healthy[b] += s->m->pod_info[p].ready;
            }
        }
    }
    for (uint32_t i = 0; i < k->npdbs; i++)
        s->pdb_allowed[i] = berth_kpdb_allowed(&k->pdbs[i], expected[i], healthy[i]);
    free(by_ns);
    free(expected);
    free(healthy);
    return 0;
}

static int cmp_order(const void *a, const void *b, void *ctx)
{
    const disrupt_state *sort_s = ctx;
    const disrupt_node *x = &sort_s->n[*(const uint32_t *)a], *y = &sort_s->n[*(const uint32_t *)b];
    double kx = x->price / x->rdc, ky = y->price / y->rdc;
    if (kx != ky)
        return kx > ky ? -1 : 1;
    return strcmp(sort_s->m->kube.nodes[x->node].name, sort_s->m->kube.nodes[y->node].name);
}

void disrupt_state_free(disrupt_state *s)
{
    for (uint32_t i = 0; s->n && i < s->nn; i++) /* n failed to allocate: nothing to free */
        free(s->n[i].pods);
    free(s->n);
    free(s->pod_node);
    free(s->pdb_allowed);
    free(s->order);
    free(s->allowed);
    free(s->pool_nodes);
    free(s->pool_disrupting);
    free(s->pool_cost);
    free(s->pool_rdc);
    free(s->node_by_name);
    free(s->pod_pdb);
    free(s->pod_npdb);
    if (s->ks)
        berth_ksession_close(s->ks);
    free(s->opts);
    free(s->opt_nodes);
    free(s->opt_use);
    free(s->sim_moving);
    free(s->sim_placed);
    free(s->pool_order);
    free(s->pool_rank);
    free(s->lim_off);
    free(s->lim_used);
    free(s->lim_q);
    free(s->lim_round);
    free(s->rejects);
    disrupt_cert_free(s);
    disrupt_workers_free(s);
    berth_arena_free(&s->opt_arena);
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
    berth_arena_init(&s->opt_arena, 0);
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
    s->pool_cost = calloc(m->npools ? m->npools : 1, sizeof *s->pool_cost);
    s->pool_rdc = calloc(m->npools ? m->npools : 1, sizeof *s->pool_rdc);
    s->node_by_name = malloc((k->nnodes ? k->nnodes : 1) * sizeof *s->node_by_name);
    s->pod_pdb = malloc((k->npods ? k->npods : 1) * sizeof *s->pod_pdb);
    s->pod_npdb = malloc(k->npods ? k->npods : 1);
    uint32_t *claim_by_node = malloc((m->nclaims ? m->nclaims : 1) * sizeof *claim_by_node);
    uint32_t *nominated = malloc((k->nnodes ? k->nnodes : 1) * sizeof *nominated);
    uint32_t *npods = calloc(k->nnodes ? k->nnodes : 1, sizeof *npods);
    s->reference = o->reference;
    s->threads = o->threads;
    s->cancel = o->cancel;
    if (!s->n || !s->pod_node || !s->pdb_allowed || !s->order || !s->allowed || !s->pool_nodes ||
        !s->pool_disrupting || !s->pool_cost || !s->pool_rdc || !s->node_by_name || !s->pod_pdb ||
        !s->pod_npdb || !claim_by_node || !nominated || !npods || index_pdbs(s))
        goto oom;
    for (uint32_t n = 0; n < k->nnodes; n++) {
        s->node_by_name[n] = n;
        nominated[n] = BERTH_KUBE_NONE;
    }
    qsort_r(s->node_by_name, k->nnodes, sizeof *s->node_by_name, cmp_node_name, (void *)m);
    for (uint32_t c = 0; c < m->nclaims; c++)
        claim_by_node[c] = c;
    qsort_r(claim_by_node, m->nclaims, sizeof *claim_by_node, cmp_claim_node, (void *)m);
    /* pods per node (one lookup per distinct run of names), nominations */
    for (uint32_t p = 0; p < k->npods; p++) {
        s->pod_node[p] = BERTH_KUBE_NONE;
        const char *nn = k->pods[p].node_name;
        if (!nn) {
            const char *nom = m->pod_info[p].nominated;
            uint32_t at = nom ? disrupt_node_find(s, nom) : BERTH_KUBE_NONE;
            if (at != BERTH_KUBE_NONE && nominated[at] == BERTH_KUBE_NONE)
                nominated[at] = p;
            continue;
        }
        uint32_t found;
        if (p && k->pods[p - 1].node_name && !strcmp(k->pods[p - 1].node_name, nn))
            found = s->pod_node[p - 1];
        else
            found = disrupt_node_find(s, nn);
        s->pod_node[p] = found;
        if (found != BERTH_KUBE_NONE)
            npods[found]++;
    }
    for (uint32_t n = 0; n < k->nnodes; n++) {
        s->n[n].pods = malloc((npods[n] ? npods[n] : 1) * sizeof *s->n[n].pods);
        if (!s->n[n].pods)
            goto oom;
    }
    for (uint32_t p = 0; p < k->npods; p++)
        if (s->pod_node[p] != BERTH_KUBE_NONE) {
            disrupt_node *dn = &s->n[s->pod_node[p]];
            dn->pods[dn->npods++] = p;
        }
    for (uint32_t i = 0; i < k->nnodes; i++) {
        disrupt_node *dn = &s->n[i];
        const berth_knode *nd = &k->nodes[i];
        const berth_dnode *xi = &m->node_info[i];
        dn->node = i;
        dn->claim = dn->pool = -1;
        dn->ready = xi->ready;
        dn->claim = claim_find(m, claim_by_node, nd->name);
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
        /* StateNode.Initialized: the Node's karpenter.sh/initialized=true
         * label (the NodeClaim's Initialized condition is set with it) */
        dn->initialized = xi->initialized_label;
        int disrupted_taint = 0;
        for (uint32_t t = 0; t < nd->ntaints; t++)
            if (!strcmp(nd->taints[t].key, "karpenter.sh/disrupted"))
                disrupted_taint = 1;
        /* StateNode.MarkedForDeletion: marked (berth: the disrupted taint) or
         * Deleted (the NodeClaim deleting or InstanceTerminating) */
        int marked = disrupted_taint || xi->marked ||
                     (cl && (cl->deleting || cl->instance_terminating));
        dn->deleting = xi->deleting || marked;
        dn->rdc = 1;
        for (uint32_t j = 0; j < dn->npods; j++)
            if (disrupt_pod_reschedulable(s, dn->pods[j])) {
                double c = berth_eviction_cost(m, dn->pods[j]);
                dn->rdc += c > 0 ? c : 0;
            }
        dn->empty = dn->rdc <= 1;
        if (!dn->managed)
            continue;
        if (dn->pool >= 0) {
            s->pool_cost[dn->pool] += dn->price;
            s->pool_rdc[dn->pool] += dn->rdc;
        }
        const berth_nodepool *np = dn->pool >= 0 ? &m->pools[dn->pool] : NULL;
        /* expiration: creation + expireAfter, no budgets, no opt-outs */
        if (cl && np && np->expire_after != BERTH_DURATION_NEVER && cl->has_created && !dn->deleting &&
            s->now >= cl->created + np->expire_after)
            dn->expired = 1;
        /* counted for budgets (disruption/helpers.go BuildDisruptionBudgetMapping):
         * managed (a NodeClaim) and initialised (the Node label), not
         * InstanceTerminating; disrupting: not Ready or marked for deletion
         * (the Node's own deletionTimestamp does not count when it has a
         * NodeClaim, as StateNode.Deleted; expired in this pass included) */
        if (np && cl && dn->initialized && !cl->instance_terminating) {
            s->pool_nodes[dn->pool]++;
            if (!dn->ready || marked || dn->expired)
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
        if (dn->candidate && nominated[i] != BERTH_KUBE_NONE)
            block(dn, "node is nominated for pending pod %s/%s", k->pods[nominated[i]].ns,
                  k->pods[nominated[i]].name);
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
            dn->drifted = disrupt_claim_drifted(m, cl, nd, NULL, 0); /* cl is nd's claim */
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
    qsort_r(s->order, s->norder, sizeof *s->order, cmp_order, (void *)s);
    free(claim_by_node);
    free(nominated);
    free(npods);
    if (disrupt_limits_init(s)) {
        disrupt_state_free(s);
        return BERTH_ENOMEM;
    }
    return 0;
oom:
    free(claim_by_node);
    free(nominated);
    free(npods);
    disrupt_state_free(s);
    return BERTH_ENOMEM;
}
