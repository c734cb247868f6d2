/* disrupt/bound.c - what a plan leaves (nodes and cost per hour after its
 * actions) and a lower bound on what any plan can leave (issue item 5).
 *
 * Definitions. A node is "alive" when it is neither being deleted nor
 * expired (the simulation never places pods on the others). The kept pods
 * K are the pods a consolidation must re-place when their node goes: bound
 * to an alive node, reschedulable (SPEC 4.1), without an active
 * do-not-disrupt and not blocked by a PDB. Resources r: cpu, memory and the
 * pod count (a pod counts 1).
 *   free_r  = sum over alive unmanaged nodes of max(0, allocatable_r -
 *             requests_r of the active pods bound there)
 *   S_r     = sum of requests_r of the K pods on alive managed nodes
 *   E_r     = sum over alive managed nodes of max(0, their K pods' requests_r
 *             - allocatable_r) (an estate overcommitted as given)
 *   D_r     = max(0, S_r - free_r - E_r)
 *   C_r     = the largest allocatable_r among alive managed nodes and the
 *             capacity_r of every usable option (an available offering of an
 *             instance type whose hypothetical node satisfies its NodePool)
 *   u_r     = the lowest price / allocatable_r among alive managed nodes and
 *             price / capacity_r among usable options
 *   nodes  >= U + max_r ceil(D_r / C_r)      (U = alive unmanaged nodes)
 *   cost   >= P_U + max_r D_r * u_r          (P_U = their prices)
 *
 * Why it is a lower bound on nodes_after and cost_after of every plan.
 * Plans act only on managed nodes (expiration and every method take
 * NodeClaim nodes), so the U alive unmanaged nodes remain, with their
 * pods. A plan removes a node only when its moved pods fit on the alive
 * nodes that remain plus the replacements it launches (the simulation
 * excludes deleting and expired nodes); pods not moved stay on nodes that
 * remain. So after the plan every K pod of a managed node sits on an alive
 * unmanaged node, on a managed node that remains, or on a replacement. The
 * unmanaged nodes can take at most free_r of resource r (their own pods
 * stay), so the managed nodes and replacements left, M of them, host at
 * least S_r - free_r of r. A remaining managed node j hosts its own K pods
 * that stay plus pods the scheduler put there within its allocatable, so at
 * most allocatable_jr + max(0, K requests_jr - allocatable_jr); a
 * replacement at most its option's capacity. Taking the excesses out, the
 * M nodes host at least D_r within capacities each at most C_r, so
 * M * C_r >= D_r for
 * every r, and nodes_after >= U + M >= U + ceil(D_r / C_r). For the cost:
 * each of the M nodes j with price p_j and capacity c_jr > 0 (allocatable
 * or the option's capacity) satisfies p_j = (p_j / c_jr) c_jr >= u_r c_jr
 * (p_j >= 0 when c_jr = 0), and sum_j c_jr >= D_r, so their total price is
 * >= u_r D_r; the U nodes add P_U and every
 * other remaining node a price >= 0. This is the LP relaxation of the
 * covering problem in one resource, maximised over resources. Leaving out
 * pods (DaemonSet, mirror, blocked ones) only lowers S_r, so it keeps the
 * bound valid. A second bound also counts that budgets cap the removals
 * (budget_bound below). Work: O(nodes log nodes + pods + options). */
#include "disrupt/state.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NRES 3 /* cpu, memory, pods */

static const char method[] =
    "nodes: unmanaged nodes + max over cpu, memory, pods of ceil((requests of the movable pods "
    "on managed nodes - free room on unmanaged nodes) / largest node or instance type); cost: "
    "their prices + max over the same resources of that demand x the lowest price per unit";

static int64_t amount(const berth_kpod *p, int r)
{
    return r == 2 ? 1 : p->req[r == 0 ? BERTH_KRES_CPU : BERTH_KRES_MEMORY];
}

static int64_t alloc_of(const berth_knode *n, int r)
{
    return r == 2 ? n->alloc_pods : n->alloc[r == 0 ? BERTH_KRES_CPU : BERTH_KRES_MEMORY];
}

static int64_t cap_of(const berth_instance_type *t, int r)
{
    return r == 0 ? t->cpu : r == 1 ? t->memory : t->pods;
}

static int alive(const disrupt_node *d)
{
    return !d->deleting && !d->expired;
}

static int cmp_price_desc(const void *a, const void *b, void *ctx)
{
    const disrupt_state *sort_s = ctx;
    double x = sort_s->n[*(const uint32_t *)a].price, y = sort_s->n[*(const uint32_t *)b].price;
    return x > y ? -1 : x < y;
}

/* Within the budgets: a plan removes the expired nodes and otherwise only
 * nodes a method may take, each spending one allowance of its reason
 * (s->allowed as at the start of the pass): Empty only empty
 * consolidatable candidates (E_p), Drifted only drifted ones (D_p, also
 * pod-blocked with a terminationGracePeriod), Underutilized only
 * consolidation-eligible candidates (U_p). Per pool at most k_p =
 * min(|E_p|, a_Empty) + min(|D_p|, a_Drifted) + min(|U_p|, a_Under), and at
 * most |E_p u D_p u U_p|, go; replacements only add. So nodes_after >=
 * nodes - expired - sum_p k_p, and cost_after >= cost - the expired nodes'
 * prices - the prices of the k_p dearest nodes of E_p u D_p u U_p per pool.
 * Raised to the resource bound when that is higher. */
static int budget_bound(const disrupt_state *s, berth_dbound *out)
{
    const berth_disrupt *m = s->m;
    uint32_t *take = malloc((s->nn + 1) * sizeof *take);
    if (!take)
        return BERTH_ENOMEM;
    int64_t nodes = s->nn;
    double cost = 0;
    for (uint32_t n = 0; n < s->nn; n++) {
        cost += s->n[n].price;
        if (s->n[n].expired) {
            nodes--;
            cost -= s->n[n].price;
        }
    }
    for (uint32_t p = 0; p < m->npools; p++) {
        uint32_t nt = 0;
        int64_t ne = 0, nd = 0, nu = 0;
        for (uint32_t n = 0; n < s->nn; n++) {
            const disrupt_node *d = &s->n[n];
            if (d->pool != (int)p || d->expired || !d->managed)
                continue;
            int tgp = d->claim >= 0 && m->claims[d->claim].has_termination_grace;
            int e = d->candidate && d->empty && d->consolidatable &&
                    m->pools[p].consolidate_after != BERTH_DURATION_NEVER;
            int dr = d->drifted && (d->candidate || (d->pod_blocked && tgp));
            int u = d->candidate && disrupt_consolidation_eligible(s, n);
            ne += e;
            nd += dr;
            nu += u;
            if (e || dr || u)
                take[nt++] = n;
        }
        const int64_t *a = s->allowed[p];
        int64_t k = (ne < a[BERTH_DR_EMPTY] ? ne : a[BERTH_DR_EMPTY]) +
                    (nd < a[BERTH_DR_DRIFTED] ? nd : a[BERTH_DR_DRIFTED]) +
                    (nu < a[BERTH_DR_UNDERUTILIZED] ? nu : a[BERTH_DR_UNDERUTILIZED]);
        if (k > (int64_t)nt)
            k = nt;
        qsort_r(take, nt, sizeof *take, cmp_price_desc, (void *)s);
        nodes -= k;
        for (int64_t i = 0; i < k; i++)
            cost -= s->n[take[i]].price;
    }
    free(take);
    out->nodes_budgets = nodes > out->nodes ? nodes : out->nodes;
    out->cost_budgets = cost > out->cost ? cost : out->cost;
    return 0;
}

int disrupt_bound(const disrupt_state *s, berth_dbound *out)
{
    const berth_disrupt *m = s->m;
    const berth_kcluster *k = &m->kube;
    double S[NRES] = {0}, freer[NRES] = {0}, C[NRES] = {0}, u[NRES], over[NRES] = {0};
    int64_t unmanaged = 0;
    double unmanaged_cost = 0;
    for (int r = 0; r < NRES; r++)
        u[r] = INFINITY;
    for (uint32_t n = 0; n < s->nn; n++) {
        const disrupt_node *d = &s->n[n];
        if (!alive(d))
            continue;
        const berth_knode *kn = &k->nodes[n];
        if (!d->managed) {
            unmanaged++;
            unmanaged_cost += d->price;
            int64_t used[NRES] = {0};
            for (uint32_t j = 0; j < d->npods; j++)
                if (!k->pods[d->pods[j]].terminating)
                    for (int r = 0; r < NRES; r++)
                        used[r] += amount(&k->pods[d->pods[j]], r);
            for (int r = 0; r < NRES; r++)
                if (alloc_of(kn, r) > used[r])
                    freer[r] += (double)(alloc_of(kn, r) - used[r]);
            continue;
        }
        for (int r = 0; r < NRES; r++) {
            double a = (double)alloc_of(kn, r);
            if (a > C[r])
                C[r] = a;
            if (a > 0 && d->price / a < u[r])
                u[r] = d->price / a;
        }
        double here[NRES] = {0};
        for (uint32_t j = 0; j < d->npods; j++) {
            uint32_t p = d->pods[j];
            if (!disrupt_pod_moves(s, p))
                continue;
            for (int r = 0; r < NRES; r++)
                here[r] += (double)amount(&k->pods[p], r);
        }
        for (int r = 0; r < NRES; r++) {
            S[r] += here[r];
            if (here[r] > (double)alloc_of(kn, r)) /* overcommitted as given */
                over[r] += here[r] - (double)alloc_of(kn, r);
        }
    }
    /* usable options */
    berth_arena a;
    berth_arena_init(&a, 0);
    berth_knode hn;
    int mk;
    for (disrupt_option op = {0}; (mk = disrupt_option_next(s, &a, "berth-bound", &op, &hn)) > 0;
         op.offering++) {
        double price = disrupt_option_offering(s, &op)->price;
        for (int r = 0; r < NRES; r++) {
            double c = (double)cap_of(&m->types[op.type], r);
            if (c > C[r])
                C[r] = c;
            if (c > 0 && price / c < u[r])
                u[r] = price / c;
        }
    }
    berth_arena_free(&a);
    if (mk)
        return mk;
    int64_t need = 0;
    double cost = 0;
    for (int r = 0; r < NRES; r++) {
        double D = S[r] - freer[r] - over[r];
        if (D <= 0 || C[r] <= 0)
            continue;
        /* exact integer ceil where the values are integers */
        int64_t q = (int64_t)(D / C[r]);
        if ((double)q * C[r] < D)
            q++;
        if (q > need)
            need = q;
        if (u[r] < INFINITY && D * u[r] > cost)
            cost = D * u[r];
    }
    out->nodes = unmanaged + need;
    out->cost = unmanaged_cost + cost;
    out->method = method;
    return budget_bound(s, out);
}

int disrupt_outcome(const disrupt_state *s, berth_dplan *p)
{
    uint8_t *gone = calloc(s->nn + 1, 1);
    if (!gone)
        return BERTH_ENOMEM;
    p->nodes_before = s->nn;
    p->cost_before = 0;
    for (uint32_t n = 0; n < s->nn; n++)
        p->cost_before += s->n[n].price;
    int64_t nodes = s->nn;
    double cost = p->cost_before;
    for (uint32_t i = 0; i < p->nactions; i++) {
        const berth_daction *a = &p->actions[i];
        for (uint32_t j = 0; j < a->nnodes; j++)
            if (!gone[a->nodes[j]]) {
                gone[a->nodes[j]] = 1;
                nodes--;
                cost -= s->n[a->nodes[j]].price;
            }
        nodes += a->nreplacements;
        for (uint32_t j = 0; j < a->nreplacements; j++)
            cost += a->replacements[j].price;
    }
    free(gone);
    p->nodes_after = nodes;
    p->cost_after = cost;
    return 0;
}

int berth_disrupt_bound(const berth_disrupt *m, const berth_dplan_options *opt, berth_dbound *out,
                        berth_error *e)
{
    disrupt_state s;
    if (disrupt_state_init(&s, m, opt))
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    int rc = disrupt_bound(&s, out);
    disrupt_state_free(&s);
    if (rc)
        return berth_error_set(e, rc, "bound: %s", berth_strerror(rc));
    return 0;
}
