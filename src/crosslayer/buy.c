/* crosslayer/buy.c - the autoscaler's answer per phase of `simulate
 * --workloads --autoscaler`: what Karpenter, Spot Ocean or the
 * cluster-autoscaler would launch for the pods left pending. No packing of
 * its own: each cluster gets the planner's model (berth_disrupt or
 * berth_autoscale) loaded from the same kubectl files plus the
 * autoscaler's input, and per phase the model is set to the kube view's
 * state (pods where the what-if session has them, pending pods unbound,
 * nodes that are down cordoned) and the planner asked:
 * - ocean / cluster-autoscaler: one pass of berth_autoscale_plan, its
 *   scale-up (docs/autoscale.md);
 * - karpenter: the disruption planner's new-capacity path as a drift uses
 *   it (disrupt_simulate with 64 new nodes at most, plan.c's drift call):
 *   the pending pods are bound to one model-only node of the first
 *   NodePool, that node is the candidate, its pods go to the remaining
 *   nodes and then onto new nodes, per round the offering that takes the
 *   most, then the cheapest, NodePools in weight order within their
 *   limits (docs/disrupt.md "NodePool weight and limits"). Budgets are not
 *   asked (the pods are pending already: the model has no PDBs, which
 *   placement never reads) and do-not-disrupt is cleared in the model for
 *   the same reason. */
#include "crosslayer/state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "berth/grow.h"
#include "disrupt/state.h"

#define PHANTOM "berth-pending-pods"

int berth_xl_autoscaler_parse(const char *s)
{
    if (!strcmp(s, "karpenter"))
        return BERTH_XL_AUTOSCALER_KARPENTER;
    if (!strcmp(s, "ocean"))
        return BERTH_XL_AUTOSCALER_OCEAN;
    if (!strcmp(s, "cluster-autoscaler"))
        return BERTH_XL_AUTOSCALER_CLUSTER_AUTOSCALER;
    return -1;
}

const char *berth_xl_autoscaler_name(berth_xl_autoscaler a)
{
    switch (a) {
    case BERTH_XL_AUTOSCALER_KARPENTER: return "karpenter";
    case BERTH_XL_AUTOSCALER_OCEAN: return "ocean";
    case BERTH_XL_AUTOSCALER_CLUSTER_AUTOSCALER: return "cluster-autoscaler";
    default: return "none";
    }
}

int berth_xl_add_autoscaler_source(berth_xl *x, const char *cluster, const berth_source *src)
{
    if (berth_grow((void **)&x->asrcs, &x->capasrcs, x->nasrcs + 1, sizeof *x->asrcs, 0))
        return BERTH_ENOMEM;
    const char *c = cluster ? berth_arena_strdup(&x->arena, cluster) : NULL;
    if (cluster && !c)
        return BERTH_ENOMEM;
    x->asrcs[x->nasrcs].cluster = c;
    x->asrcs[x->nasrcs].src = *src;
    x->nasrcs++;
    return 0;
}

int berth_xl_add_source(berth_xl *x, uint32_t cluster, const berth_source *src)
{
    berth_xl_cluster *c = x->clusters[cluster];
    if (berth_grow((void **)&c->srcs, &c->capsrcs, c->nsrcs + 1, sizeof *c->srcs, 0))
        return BERTH_ENOMEM;
    c->srcs[c->nsrcs++] = *src;
    return 0;
}

void xl_buy_free(berth_xl_cluster *c)
{
    if (c->am) {
        berth_autoscale_free(c->am);
        free(c->am);
    }
    if (c->dm) {
        berth_disrupt_free(c->dm);
        free(c->dm);
    }
    free(c->m_node);
    free(c->srcs);
    c->am = NULL;
    c->dm = NULL;
    c->m_node = NULL;
    c->srcs = NULL;
}

static int warn_skips(berth_xl *x, const berth_xl_cluster *c, const berth_skips *sk)
{
    const char *a = berth_xl_autoscaler_name(x->autoscaler);
    for (uint32_t j = 0; j < sk->n; j++) {
        const berth_skip *s = &sk->items[j];
        if (s->message ? berth_skips_warn(&x->warnings, "cluster %s: %s: %s", c->name, a, s->kind)
                       : berth_skips_warn(&x->warnings, "cluster %s: %s: skipped %u %s%s%s",
                                          c->name, a, s->count, s->kind, s->note ? " " : "",
                                          s->note ? s->note : ""))
            return BERTH_ENOMEM;
    }
    return 0;
}

int xl_buy_prepare(berth_xl *x, berth_xl_cluster *c, berth_error *e)
{
    if (x->autoscaler == BERTH_XL_AUTOSCALER_NONE)
        return 0;
    for (uint32_t i = 0; i < x->nasrcs; i++) { /* CLUSTER= names a --workloads cluster */
        const char *n = x->asrcs[i].cluster;
        uint32_t j = 0;
        while (n && j < x->nclusters && strcmp(x->clusters[j]->name, n))
            j++;
        if (n && j == x->nclusters)
            return berth_error_set(e, BERTH_EINVAL,
                                   "--autoscaler-config %s=%s: no --workloads file for cluster "
                                   "'%s'", n, x->asrcs[i].src.path, n);
    }
    int karp = x->autoscaler == BERTH_XL_AUTOSCALER_KARPENTER;
    berth_kcluster *mk;
    int rc = 0;
    uint32_t given = 0;
    if (karp) {
        if (!(c->dm = calloc(1, sizeof *c->dm)))
            return berth_error_set(e, BERTH_ENOMEM, "out of memory");
        berth_disrupt_init(c->dm);
        mk = &c->dm->kube;
    } else {
        if (!(c->am = calloc(1, sizeof *c->am)))
            return berth_error_set(e, BERTH_ENOMEM, "out of memory");
        berth_autoscale_init(c->am);
        mk = &c->am->kube;
    }
    for (uint32_t i = 0; !rc && i < c->nsrcs + x->nasrcs; i++) {
        const berth_source *s;
        if (i < c->nsrcs) {
            s = &c->srcs[i];
        } else {
            const struct berth_xl_asrc *a = &x->asrcs[i - c->nsrcs];
            if (a->cluster && strcmp(a->cluster, c->name))
                continue;
            s = &a->src;
            given++;
        }
        rc = karp ? berth_disrupt_load(c->dm, s, x->strict, e)
                  : berth_autoscale_load(c->am, s, x->strict, e);
    }
    if (rc)
        return rc;
    if (!given)
        return berth_error_set(e, BERTH_EINVAL,
                               "--autoscaler %s: no --autoscaler-config file for cluster %s "
                               "(its %s and InstanceTypes)",
                               berth_xl_autoscaler_name(x->autoscaler), c->name,
                               karp ? "NodePools" : "VirtualNodeGroups");
    rc = karp ? berth_disrupt_finalize(c->dm, e) : berth_autoscale_finalize(c->am, e);
    if (rc)
        return rc;
    if (warn_skips(x, c, &mk->skipped))
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    /* the same pods in the same order as the kube view's model */
    const berth_kcluster *k = &c->k;
    if (mk->npods != k->npods)
        return berth_error_set(e, BERTH_EINVAL,
                               "cluster %s: the --autoscaler-config files hold pods (%u pods "
                               "with them, %u without); give pods only with --workloads",
                               c->name, mk->npods, k->npods);
    for (uint32_t p = 0; p < k->npods; p++)
        if (strcmp(mk->pods[p].name, k->pods[p].name) || strcmp(mk->pods[p].ns, k->pods[p].ns))
            return berth_error_set(e, BERTH_EINVAL, "cluster %s: pod %s/%s of the autoscaler's "
                                   "model is %s/%s in the kube view", c->name, mk->pods[p].ns,
                                   mk->pods[p].name, k->pods[p].ns, k->pods[p].name);
    if (karp) {
        berth_disrupt *m = c->dm;
        if (!m->npools || !m->ntypes)
            return berth_error_set(e, BERTH_EINVAL,
                                   "--autoscaler karpenter: cluster %s has no %s", c->name,
                                   m->npools ? "InstanceType" : "NodePool");
        uint32_t t = 0;
        while (t < m->ntypes && !m->types[t].nofferings)
            t++;
        if (t == m->ntypes)
            return berth_error_set(e, BERTH_EINVAL,
                                   "--autoscaler karpenter: cluster %s: no InstanceType has an "
                                   "offering", c->name);
        for (uint32_t p = 0; p < k->npods; p++)
            m->pod_info[p].dnd = 0; /* pending already: nothing to protect */
        /* no budget matters either, and placement never reads PDBs: the
         * planner then skips matching every pod to every PDB per phase */
        m->kube.npdbs = 0;
        if (berth_disrupt_add_node(m, 0, t, 0, PHANTOM, c->now, c->now, &c->phantom))
            return berth_error_set(e, BERTH_ENOMEM, "out of memory");
        m->kube.nodes[c->phantom].unschedulable = 1;
    }
    /* model node per kube-view node, by name */
    c->m_node = malloc((k->nnodes ? k->nnodes : 1) * sizeof *c->m_node);
    if (!c->m_node)
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    berth_nameidx idx = {0};
    for (uint32_t n = 0; n < mk->nnodes; n++) {
        uint32_t had;
        if (berth_nameidx_add(&idx, mk->nodes[n].name, n, &had) == BERTH_ENOMEM) {
            berth_nameidx_free(&idx);
            return berth_error_set(e, BERTH_ENOMEM, "out of memory");
        }
    }
    for (uint32_t n = 0; n < k->nnodes; n++) {
        uint32_t f = berth_nameidx_find(&idx, k->nodes[n].name);
        c->m_node[n] = f == BERTH_NAMEIDX_NONE ? BERTH_XL_NONE : f;
    }
    berth_nameidx_free(&idx);
    return 0;
}

/* The model's cluster as the kube view has it after the phase. */
static void sync_model(berth_xl_cluster *c, berth_kcluster *mk, const char *pending_node)
{
    const berth_kcluster *k = &c->k;
    for (uint32_t n = 0; n < k->nnodes; n++) {
        uint32_t mn = c->m_node[n];
        if (mn == BERTH_XL_NONE)
            continue;
        berth_knode *d = &mk->nodes[mn];
        memcpy(d->alloc, k->nodes[n].alloc, sizeof d->alloc); /* from the VM SKU (map.c) */
        d->alloc_pods = k->nodes[n].alloc_pods;
        d->unschedulable = k->nodes[n].unschedulable || c->down[n];
    }
    for (uint32_t p = 0; p < k->npods; p++) {
        if (k->pods[p].terminating)
            continue;
        uint32_t n = c->pod_node[p];
        uint32_t mn = n == BERTH_KUBE_NONE ? BERTH_XL_NONE : c->m_node[n];
        mk->pods[p].node_name = mn != BERTH_XL_NONE ? mk->nodes[mn].name : pending_node;
        mk->pods[p].assumed = 0;
    }
}

static int push_launch(berth_xl *x, berth_xl_phase *ph, berth_xl_launch l)
{
    /* the same group, type, zone and capacity type: one entry */
    for (uint32_t i = ph->launch0; i < x->nlaunches; i++) {
        berth_xl_launch *o = &x->launches[i];
        if (!strcmp(o->group, l.group) && !strcmp(o->instance_type, l.instance_type) &&
            !strcmp(o->zone, l.zone) && !strcmp(o->capacity_type, l.capacity_type) &&
            o->price == l.price) {
            o->count += l.count;
            o->pods += l.pods;
            return 0;
        }
    }
    if (berth_grow((void **)&x->launches, &x->caplaunches, x->nlaunches + 1, sizeof *x->launches,
                   0))
        return BERTH_ENOMEM;
    x->launches[x->nlaunches++] = l;
    return 0;
}

static int buy_ocean(berth_xl *x, berth_xl_cluster *c, berth_xl_phase *ph, int64_t now,
                     berth_error *e)
{
    berth_autoscale *m = c->am;
    sync_model(c, &m->kube, NULL);
    berth_aplan_options o = {0};
    o.now = now;
    o.policy = x->autoscaler == BERTH_XL_AUTOSCALER_CLUSTER_AUTOSCALER
                   ? BERTH_POLICY_CLUSTER_AUTOSCALER
                   : BERTH_POLICY_OCEAN;
    o.expander = BERTH_EXPANDER_LEAST_WASTE; /* deterministic (upstream's default is random) */
    berth_aplan p;
    memset(&p, 0, sizeof p);
    int rc = berth_autoscale_plan(m, &o, &p, e);
    if (rc)
        return rc;
    for (uint32_t i = 0; i < p.nup && !rc; i++) {
        const berth_ascaleup *u = &p.up[i];
        berth_xl_launch l = {m->vngs[u->vng].name, m->types[u->type].name,
                             u->zone ? u->zone : "",
                             berth_capacity_type_name(u->capacity_type), u->count, u->npods,
                             u->price};
        rc = push_launch(x, ph, l);
        ph->launch_nodes += u->count;
        ph->launch_placed += u->npods;
    }
    berth_aplan_free(&p);
    return rc ? berth_error_set(e, rc, "out of memory") : 0;
}

static int buy_karpenter(berth_xl *x, berth_xl_cluster *c, berth_xl_phase *ph, int64_t now,
                         berth_error *e)
{
    berth_disrupt *m = c->dm;
    sync_model(c, &m->kube, m->kube.nodes[c->phantom].name);
    berth_dplan_options o = {0};
    o.now = now;
    disrupt_state s;
    if (disrupt_state_init(&s, m, &o))
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    disrupt_sim sim;
    uint32_t cand = c->phantom;
    int rc = disrupt_simulate(&s, &cand, 1, DISRUPT_SPARE_SLOTS, &sim);
    if (rc) {
        disrupt_state_free(&s);
        return berth_error_set(e, rc, "karpenter: %s", rc == BERTH_ENOMEM ? "out of memory"
                                                                          : "planner failed");
    }
    uint32_t taken = sim.nleft0 >= sim.nleft ? sim.nleft0 - sim.nleft : 0;
    for (uint32_t i = 0; i < sim.nchosen && !rc; i++) {
        const disrupt_option *op = &sim.chosen[i];
        const berth_offering *of = disrupt_option_offering(&s, op);
        berth_xl_launch l = {m->pools[op->pool].name, m->types[op->type].name,
                             of->zone ? of->zone : "",
                             berth_capacity_type_name(of->capacity_type), 1, 0, of->price};
        rc = push_launch(x, ph, l);
        ph->launch_nodes++;
    }
    ph->launch_placed = taken;
    disrupt_sim_free(&sim);
    disrupt_state_free(&s);
    return rc ? berth_error_set(e, rc, "out of memory") : 0;
}

int xl_buy_phase(berth_xl *x, berth_xl_cluster *c, berth_xl_phase *ph, int64_t now,
                 berth_error *e)
{
    ph->launch0 = x->nlaunches;
    ph->nlaunches = 0;
    if (x->autoscaler == BERTH_XL_AUTOSCALER_NONE || !c->npending || ph->deleted)
        return 0;
    int rc = x->autoscaler == BERTH_XL_AUTOSCALER_KARPENTER ? buy_karpenter(x, c, ph, now, e)
                                                            : buy_ocean(x, c, ph, now, e);
    if (rc)
        return rc;
    ph->nlaunches = x->nlaunches - ph->launch0;
    ph->launch_per_hour = 0;
    for (uint32_t i = ph->launch0; i < x->nlaunches; i++)
        ph->launch_per_hour += x->launches[i].count * x->launches[i].price;
    ph->launch_left = c->npending > ph->launch_placed ? c->npending - ph->launch_placed : 0;
    ph->window_cost = ph->launch_per_hour * (double)ph->minutes / 60.0;
    return 0;
}
