/* crosslayer/advice.c - the bare-metal advice of `simulate --workloads
 * --advise-upgrade` without an autoscaler (an NKS cluster cannot buy a
 * node):
 * - machines to add: after a phase that leaves pods pending, spare nodes
 *   copied from a node of the cluster's largest worker pool (its labels,
 *   taints and allocatable, a name and hostname of their own) are added to
 *   the what-if session one at a time and the pending pods placed by the
 *   scheduler after each, until every one is placed (or
 *   BERTH_XL_SPARE_MAX nodes did not do it); rolled back. The nodes are
 *   turned into machines of the site's kind (the first machine's NUMA
 *   cells) holding that many VMs of the pool's SKU.
 * - rack order: before a runtime upgrade's batches run, the racks are
 *   ordered greedily by impact: from the state before the upgrade, every
 *   rack not yet ordered is tried next (all its batches, every cluster),
 *   the one with the fewest batches leaving a PDB below its minimum, then
 *   the fewest pods pending summed over its batches, then the given order,
 *   is committed, and so on (racks x racks / 2 rack trials; more than
 *   BERTH_XL_ORDER_MAX_RACKS racks: not searched). Each trial saves the
 *   clusters' state and rolls the session back to a mark. After the real
 *   run, the given order's own figures are compared and the given order
 *   kept when the greedy one is not better, so the advice is never worse
 *   than the given order. */
#include "crosslayer/state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "berth/grow.h"

typedef struct xl_snap {
    uint32_t *pod_node, *pending, npending;
    uint8_t *healthy, *ready, *down;
    int64_t *pdb_healthy;
    uint64_t mark;
} xl_snap;

struct xl_saved {
    xl_snap base, committed;
};

static void snap_free(xl_snap *s)
{
    free(s->pod_node);
    free(s->pending);
    free(s->healthy);
    free(s->ready);
    free(s->down);
    free(s->pdb_healthy);
    memset(s, 0, sizeof *s);
}

void xl_saved_free(berth_xl_cluster *c)
{
    if (!c->saved)
        return;
    snap_free(&c->saved->base);
    snap_free(&c->saved->committed);
    free(c->saved);
    c->saved = NULL;
}

static int snap_alloc(xl_snap *s, const berth_xl_cluster *c)
{
    size_t np = c->k.npods ? c->k.npods : 1, nn = c->k.nnodes ? c->k.nnodes : 1,
           nb = c->k.npdbs ? c->k.npdbs : 1;
    s->pod_node = malloc(np * sizeof *s->pod_node);
    s->pending = malloc(np * sizeof *s->pending);
    s->healthy = malloc(np);
    s->ready = malloc(np);
    s->down = malloc(nn);
    s->pdb_healthy = malloc(nb * sizeof *s->pdb_healthy);
    return s->pod_node && s->pending && s->healthy && s->ready && s->down && s->pdb_healthy
               ? 0
               : BERTH_ENOMEM;
}

static void snap_take(xl_snap *s, const berth_xl_cluster *c)
{
    const berth_kcluster *k = &c->k;
    memcpy(s->pod_node, c->pod_node, k->npods * sizeof *s->pod_node);
    memcpy(s->pending, c->pending, c->npending * sizeof *s->pending);
    s->npending = c->npending;
    memcpy(s->healthy, c->healthy, k->npods);
    memcpy(s->ready, c->ready, k->npods);
    memcpy(s->down, c->down, k->nnodes);
    memcpy(s->pdb_healthy, c->pdb_healthy, k->npdbs * sizeof *s->pdb_healthy);
    s->mark = berth_ksession_mark(c->s);
}

static int snap_restore(const xl_snap *s, berth_xl_cluster *c)
{
    const berth_kcluster *k = &c->k;
    memcpy(c->pod_node, s->pod_node, k->npods * sizeof *c->pod_node);
    memcpy(c->pending, s->pending, s->npending * sizeof *c->pending);
    c->npending = s->npending;
    memcpy(c->healthy, s->healthy, k->npods);
    memcpy(c->ready, s->ready, k->npods);
    memcpy(c->down, s->down, k->nnodes);
    memcpy(c->pdb_healthy, s->pdb_healthy, k->npdbs * sizeof *c->pdb_healthy);
    return berth_ksession_rollback(c->s, s->mark);
}

/* ---- machines to add ---- */

/* VMs of SKU s that one empty machine like the site's first one holds. */
static uint32_t vms_per_machine(const berth_nexus *nx, const berth_sku *s)
{
    if (!nx->nmachines || s->host_vcpu <= 0 || s->memory <= 0)
        return 0;
    const berth_machine *m = &nx->machines[0];
    int64_t cpu = s->host_vcpu, mem = s->memory;
    uint32_t total = 0, split = s->numa_cells == 2 ? UINT32_MAX : 0;
    for (uint32_t i = 0; i < m->ncells; i++) {
        const berth_cell *cl = &nx->cells[m->first_cell + i];
        if (s->numa_cells == 2) { /* half on each cell */
            int64_t a = cl->cpu / ((cpu + 1) / 2), b = cl->memory / ((mem + 1) / 2);
            uint32_t n = (uint32_t)(a < b ? a : b);
            split = n < split ? n : split;
        } else {
            int64_t a = cl->cpu / cpu, b = cl->memory / mem;
            total += (uint32_t)(a < b ? a : b);
        }
    }
    return s->numa_cells == 2 ? (split == UINT32_MAX ? 0 : split) : total;
}

int xl_extra_nodes(berth_xl *x, berth_xl_cluster *c, const berth_nexus *nx, berth_xl_phase *ph,
                   berth_error *e)
{
    const berth_kcluster *k = &c->k;
    ph->extra_nodes = BERTH_XL_NONE;
    ph->extra_machines = 0;
    /* the worker pool with the most nodes, and its first node */
    uint32_t *per_pool = calloc(nx->npools ? nx->npools : 1, sizeof *per_pool);
    if (!per_pool)
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    uint32_t best = BERTH_XL_NONE, tmpl = BERTH_XL_NONE;
    for (uint32_t n = 0; n < k->nnodes; n++) {
        uint32_t v = c->node_vm[n];
        if (v == BERTH_XL_NONE)
            continue;
        uint32_t p = nx->vms[v].pool;
        if (nx->pools[p].role != BERTH_ROLE_WORKER)
            continue;
        per_pool[p]++;
        if (best == BERTH_XL_NONE || per_pool[p] > per_pool[best] ||
            (per_pool[p] == per_pool[best] && p < best))
            best = p;
    }
    for (uint32_t n = 0; best != BERTH_XL_NONE && n < k->nnodes && tmpl == BERTH_XL_NONE; n++)
        if (c->node_vm[n] != BERTH_XL_NONE && nx->vms[c->node_vm[n]].pool == best)
            tmpl = n;
    free(per_pool);
    if (tmpl == BERTH_XL_NONE)
        return 0;
    ph->extra_pool = nx->pools[best].name;
    const berth_knode *t = &k->nodes[tmpl];
    berth_arena a;
    berth_arena_init(&a, 0);
    uint32_t n = c->npending;
    uint32_t *left = berth_arena_alloc(&a, (n + 1) * sizeof *left);
    uint32_t *placed = berth_arena_alloc(&a, (n + 1) * sizeof *placed);
    berth_knode *spares = berth_arena_alloc(&a, BERTH_XL_SPARE_MAX * sizeof *spares);
    if (!left || !placed || !spares) {
        berth_arena_free(&a);
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    }
    memcpy(left, c->pending, n * sizeof *left);
    uint64_t mark = berth_ksession_mark(c->s);
    int rc = 0;
    for (uint32_t i = 0; i < BERTH_XL_SPARE_MAX && n && !rc; i++) {
        berth_knode *sp = &spares[i];
        *sp = *t;
        char name[64];
        snprintf(name, sizeof name, "berth-extra-%u", i + 1);
        sp->name = berth_arena_strdup(&a, name);
        sp->unschedulable = 0;
        sp->labels.items = berth_arena_alloc(&a, (t->labels.n + 1) * sizeof *sp->labels.items);
        if (!sp->name || !sp->labels.items) {
            rc = BERTH_ENOMEM;
            break;
        }
        for (uint32_t j = 0; j < t->labels.n; j++) {
            sp->labels.items[j] = t->labels.items[j];
            if (!strcmp(t->labels.items[j].key, "kubernetes.io/hostname"))
                sp->labels.items[j].value = sp->name;
        }
        uint32_t node;
        if ((rc = berth_ksession_spare(c->s, i, sp, &node)))
            break;
        rc = berth_ksession_place(c->s, left, n, placed, NULL, NULL, e);
        if (rc == BERTH_ENOFIT)
            rc = 0;
        uint32_t m = 0;
        for (uint32_t j = 0; j < n; j++)
            if (placed[j] == BERTH_KUBE_NONE)
                left[m++] = left[j];
        n = m;
        if (!n)
            ph->extra_nodes = i + 1;
    }
    int rb = berth_ksession_rollback(c->s, mark);
    berth_arena_free(&a);
    if (rc || rb)
        return berth_error_set(e, rc ? rc : rb, "crosslayer: extra nodes: %s",
                               (rc ? rc : rb) == BERTH_ENOMEM ? "out of memory" : "session failed");
    if (ph->extra_nodes != BERTH_XL_NONE) {
        uint32_t per = vms_per_machine(nx, &nx->skus[nx->pools[best].sku]);
        ph->extra_machines = per ? (ph->extra_nodes + per - 1) / per : 0;
    }
    (void)x;
    return 0;
}

/* ---- rack order ---- */

typedef struct counts {
    uint32_t nphases, npods, nholds, nshorts, npdbs, nlaunches;
} counts;

static counts counts_of(const berth_xl *x)
{
    return (counts){x->nphases, x->npods, x->nholds, x->nshorts, x->npdbs, x->nlaunches};
}

static void counts_back(berth_xl *x, counts n)
{
    x->nphases = n.nphases;
    x->npods = n.npods;
    x->nholds = n.nholds;
    x->nshorts = n.nshorts;
    x->npdbs = n.npdbs;
    x->nlaunches = n.nlaunches;
}

/* Runs rack r's batches of step st on every live cluster; adds its
 * breaches and pending pods. */
static int run_rack(berth_xl *x, const berth_nexus *nx, uint32_t step, uint32_t r,
                    uint32_t *breaches, uint64_t *pending, berth_error *e)
{
    const berth_step *st = &nx->steps[step];
    for (uint32_t ci = 0; ci < x->nclusters; ci++) {
        berth_xl_cluster *c = x->clusters[ci];
        if (c->gone || !c->opened)
            continue;
        for (uint32_t b = 0; b < st->nbatches; b++) {
            if (st->batches[b].rack != r)
                continue;
            uint32_t before = x->nphases;
            int rc = xl_run_phase(x, c, nx, step, b, &st->batches[b], ci, e);
            if (rc)
                return rc;
            for (uint32_t i = before; i < x->nphases; i++) {
                *breaches += x->phases[i].npdbs > 0;
                *pending += x->phases[i].pending;
            }
        }
    }
    return 0;
}

static int restore_all(berth_xl *x, int base, berth_error *e)
{
    for (uint32_t ci = 0; ci < x->nclusters; ci++) {
        berth_xl_cluster *c = x->clusters[ci];
        if (c->gone || !c->opened)
            continue;
        if (snap_restore(base ? &c->saved->base : &c->saved->committed, c))
            return berth_error_set(e, BERTH_EINVAL, "crosslayer: rack order: rollback failed");
    }
    return 0;
}

static void commit_all(berth_xl *x)
{
    for (uint32_t ci = 0; ci < x->nclusters; ci++) {
        berth_xl_cluster *c = x->clusters[ci];
        if (!c->gone && c->opened)
            snap_take(&c->saved->committed, c);
    }
}

int xl_rack_order(berth_xl *x, const berth_nexus *nx, uint32_t step, berth_error *e)
{
    const berth_step *st = &nx->steps[step];
    if (berth_grow((void **)&x->orders, &x->caporders, x->norders + 1, sizeof *x->orders, 0))
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    berth_xl_order *o = &x->orders[x->norders];
    memset(o, 0, sizeof *o);
    o->step = step;
    /* the racks in the given order */
    o->racks = malloc((st->nbatches ? st->nbatches : 1) * sizeof *o->racks);
    if (!o->racks)
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    x->norders++;
    for (uint32_t b = 0; b < st->nbatches; b++)
        if (!o->nracks || o->racks[o->nracks - 1] != st->batches[b].rack)
            o->racks[o->nracks++] = st->batches[b].rack;
    if (o->nracks > BERTH_XL_ORDER_MAX_RACKS || o->nracks < 2) {
        o->searched = o->nracks < 2;
        return 0;
    }
    o->searched = 1;
    int any = 0;
    for (uint32_t ci = 0; ci < x->nclusters; ci++) {
        berth_xl_cluster *c = x->clusters[ci];
        if (c->gone || !c->opened)
            continue;
        any = 1;
        if (!c->saved) {
            if (!(c->saved = calloc(1, sizeof *c->saved)) || snap_alloc(&c->saved->base, c) ||
                snap_alloc(&c->saved->committed, c))
                return berth_error_set(e, BERTH_ENOMEM, "out of memory");
        }
        snap_take(&c->saved->base, c);
        snap_take(&c->saved->committed, c);
    }
    if (!any)
        return 0;
    counts n0 = counts_of(x);
    x->trial = 1;
    int rc = 0;
    for (uint32_t pos = 0; pos < o->nracks && !rc; pos++) {
        uint32_t best = pos, best_b = UINT32_MAX;
        uint64_t best_p = UINT64_MAX;
        for (uint32_t i = pos; i < o->nracks && !rc; i++) {
            uint32_t b = 0;
            uint64_t p = 0;
            rc = run_rack(x, nx, step, o->racks[i], &b, &p, e);
            counts_back(x, n0);
            if (!rc)
                rc = restore_all(x, 0, e);
            if (!rc && (b < best_b || (b == best_b && p < best_p))) {
                best = i;
                best_b = b;
                best_p = p;
            }
        }
        if (rc)
            break;
        uint32_t t = o->racks[pos];
        o->racks[pos] = o->racks[best];
        o->racks[best] = t;
        o->advised_breaches += best_b;
        o->advised_pending += best_p;
        if (pos + 1 < o->nracks) {
            uint32_t b = 0;
            uint64_t p = 0;
            rc = run_rack(x, nx, step, o->racks[pos], &b, &p, e);
            counts_back(x, n0);
            if (!rc)
                commit_all(x);
        }
    }
    x->trial = 0;
    if (!rc)
        rc = restore_all(x, 1, e);
    return rc;
}

/* After the given order ran: its figures, and the given order kept when
 * the greedy one is not strictly better. */
void xl_rack_order_finish(berth_xl *x, const berth_nexus *nx, uint32_t step)
{
    if (!x->norders || x->orders[x->norders - 1].step != step)
        return;
    berth_xl_order *o = &x->orders[x->norders - 1];
    const berth_step *st = &nx->steps[step];
    o->given_breaches = 0;
    o->given_pending = 0;
    for (uint32_t i = 0; i < x->nphases; i++) {
        const berth_xl_phase *ph = &x->phases[i];
        if (ph->step != step || ph->batch == BERTH_XL_NONE)
            continue;
        o->given_breaches += ph->npdbs > 0;
        o->given_pending += ph->pending;
    }
    int better = o->searched && (o->advised_breaches < o->given_breaches ||
                                 (o->advised_breaches == o->given_breaches &&
                                  o->advised_pending < o->given_pending));
    if (!better) {
        o->nracks = 0;
        for (uint32_t b = 0; b < st->nbatches; b++)
            if (!o->nracks || o->racks[o->nracks - 1] != st->batches[b].rack)
                o->racks[o->nracks++] = st->batches[b].rack;
        o->advised_breaches = o->given_breaches;
        o->advised_pending = o->given_pending;
    }
}
