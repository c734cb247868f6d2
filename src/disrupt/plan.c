/* disrupt/plan.c - one disruption pass (SPEC 4.1 "Loop"): expirations,
 * then the first of Emptiness, Drift, multi-node and single-node
 * consolidation that acts; budgets decremented per node taken; the
 * replacement price rules (worst launch price strictly below the
 * candidates' price, reserved -> spot -> on-demand, on-demand -> mixed
 * restricted to spot, spot-to-spot behind its feature gate with 15 cheaper
 * options for one node, same-type filter for multi-node); Balanced
 * approval; blocked nodes with their reasons. */
#include "disrupt/state.h"
#include "berth/grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MULTI_MAX 100
/* single-node consolidation: questions answered on the plan's own state
 * before the rest go to speculative batches (docs/disrupt.md "Threads") */
#define SINGLE_WARMUP 4
#define SPOT_MIN_OPTIONS 15

int disrupt_add_action(berth_dplan *p, berth_daction **out)
{
    if (berth_grow((void **)&p->actions, &p->capactions, p->nactions + 1, sizeof *p->actions, 0))
        return BERTH_ENOMEM;
    *out = &p->actions[p->nactions++];
    memset(*out, 0, sizeof **out);
    return 0;
}

/* Lists node (kube index, s->n's too) as blocked with reason, once. */
static int add_blocked(disrupt_state *s, berth_dplan *p, uint32_t node, const char *reason)
{
    if (s->n[node].listed)
        return 0;
    if (berth_grow((void **)&p->blocked, &p->capblocked, p->nblocked + 1, sizeof *p->blocked, 0))
        return BERTH_ENOMEM;
    s->n[node].listed = 1;
    p->blocked[p->nblocked].node = node;
    snprintf(p->blocked[p->nblocked].reason, sizeof p->blocked[p->nblocked].reason, "%s", reason);
    p->nblocked++;
    return 0;
}

int disrupt_set_nodes(berth_daction *a, const uint32_t *idx, uint32_t n, const disrupt_state *s)
{
    a->nodes = malloc((n ? n : 1) * sizeof *a->nodes);
    if (!a->nodes)
        return BERTH_ENOMEM;
    a->nnodes = n;
    a->savings = 0;
    for (uint32_t i = 0; i < n; i++) {
        a->nodes[i] = s->n[idx[i]].node;
        a->savings += s->n[idx[i]].price;
    }
    return 0;
}

static int budget_block(disrupt_state *s, berth_dplan *p, uint32_t n, berth_dreason r)
{
    char why[200];
    snprintf(why, sizeof why, "disruption budget of NodePool %s allows no more %s disruptions",
             s->m->pools[s->n[n].pool].name, berth_dreason_name(r));
    return add_blocked(s, p, n, why);
}

/* ---- the replacement decision ---- */

/* Why a hosting option was dropped by the price rules (index aligned with
 * sim->feasible). */
enum { KEPT, DROP_SPOT_GATE, DROP_SPOT_ONLY, DROP_PRICE, DROP_SAME_TYPE };

/* Worst launch price of type t among the kept options: the most expensive
 * offering of the first capacity type present (reserved, spot, on-demand). */
static double worst_price(const disrupt_state *s, const disrupt_option *o, const uint8_t *keep,
                          uint32_t n, uint32_t type)
{
    for (int ct = 0; ct < BERTH_CT_COUNT; ct++) {
        double w = -1;
        for (uint32_t i = 0; i < n; i++) {
            if (!keep[i] || o[i].type != type)
                continue;
            const berth_offering *of = disrupt_option_offering(s, &o[i]);
            if ((int)of->capacity_type == ct && of->price > w)
                w = of->price;
        }
        if (w >= 0)
            return w;
    }
    return -1;
}

static void filter_by_price(const disrupt_state *s, const disrupt_option *o, uint8_t *keep,
                            uint8_t *drop, uint32_t n, double limit, int code)
{
    for (uint32_t i = 0; i < n; i++)
        if (keep[i] && !(worst_price(s, o, keep, n, o[i].type) < limit))
            drop[i] = (uint8_t)code;
    for (uint32_t i = 0; i < n; i++)
        if (drop[i] == code)
            keep[i] = 0;
}

static int better(const disrupt_state *s, const disrupt_option *a, const disrupt_option *b)
{
    const berth_offering *x = disrupt_option_offering(s, a), *y = disrupt_option_offering(s, b);
    if (x->capacity_type != y->capacity_type)
        return x->capacity_type < y->capacity_type;
    if (x->price != y->price)
        return x->price < y->price;
    int c = strcmp(s->m->types[a->type].name, s->m->types[b->type].name);
    if (c)
        return c < 0;
    return strcmp(x->zone, y->zone) < 0;
}

/* The value option o's node has for key: the offering's, the instance
 * type's, the template's, a single-value In requirement's; NULL none. */
static const char *option_label(const disrupt_state *s, const disrupt_option *o, const char *key)
{
    const berth_instance_type *it = &s->m->types[o->type];
    berth_label ol[BERTH_OFFERING_LABELS];
    uint32_t n = berth_offering_labels(it, &it->offerings[o->offering], ol);
    for (uint32_t i = 0; i < n; i++)
        if (!strcmp(ol[i].key, key))
            return ol[i].value;
    const char *v = berth_labels_get(&it->labels, key);
    if (v)
        return v;
    const berth_nodepool *np = &s->m->pools[o->pool];
    if ((v = berth_labels_get(&np->labels, key)))
        return v;
    for (uint32_t i = 0; i < np->nreqs; i++)
        if (np->reqs[i].op == BERTH_SEL_IN && np->reqs[i].nvalues == 1 &&
            !strcmp(np->reqs[i].key, key))
            return np->reqs[i].values[0];
    return NULL;
}

/* minValues (cloudprovider InstanceTypes.SatisfiesMinValues): every
 * requirement of the options' pool with minValues needs that many
 * distinct values of its key among the kept options. 1, or 0 with why. */
int disrupt_min_values_ok(const disrupt_state *s, const disrupt_option *o, const uint8_t *keep,
                          uint32_t n, char *why, size_t size)
{
    int pool = -1;
    for (uint32_t i = 0; i < n && pool < 0; i++)
        if (keep[i])
            pool = (int)o[i].pool;
    if (pool < 0)
        return 1;
    const berth_nodepool *np = &s->m->pools[pool];
    if (!np->min_values)
        return 1;
    const char **seen = NULL;
    for (uint32_t r = 0; r < np->nreqs; r++) {
        if (!np->min_values[r])
            continue;
        if (!seen && !(seen = malloc((n + 1) * sizeof *seen)))
            return 1; /* out of memory: do not block on it */
        uint32_t distinct = 0;
        for (uint32_t i = 0; i < n; i++) {
            const char *v = keep[i] ? option_label(s, &o[i], np->reqs[r].key) : NULL;
            uint32_t j = 0;
            while (v && j < distinct && strcmp(seen[j], v))
                j++;
            if (v && j == distinct)
                seen[distinct++] = v;
        }
        if (distinct < np->min_values[r]) {
            snprintf(why, size,
                     "minValues requirement is not met for label %s of NodePool %s (%u of %u)",
                     np->reqs[r].key, np->name, distinct, np->min_values[r]);
            free(seen);
            return 0;
        }
    }
    free(seen);
    return 1;
}

typedef struct xcand {
    disrupt_option o;
    double price;
    const char *why;            /* a reject's reason, else NULL */
} xcand;

static int cmp_xcand(const void *a, const void *b, void *ctx)
{
    const disrupt_state *s = ctx;
    const xcand *x = a, *y = b;
    if (x->price != y->price)
        return x->price < y->price ? -1 : 1;
    if (!x->why != !y->why) /* at one price, a usable option's reason first */
        return x->why ? 1 : -1;
    if (x->o.rank != y->o.rank)
        return x->o.rank < y->o.rank ? -1 : 1;
    int c = strcmp(s->m->types[x->o.type].name, s->m->types[y->o.type].name);
    if (c)
        return c;
    return (x->o.offering > y->o.offering) - (x->o.offering < y->o.offering);
}

static const char *drop_text(int code)
{
    switch (code) {
    case DROP_SPOT_GATE:
        return "spot candidates are replaced by spot only (spot-to-spot consolidation)";
    case DROP_SPOT_ONLY:
        return "an on-demand -> [on-demand, spot] replacement is restricted to spot";
    case DROP_PRICE:
        return "its worst launch price is not below the candidates' price";
    case DROP_SAME_TYPE:
        return "same instance type as a candidate, not cheaper than the cheapest of them";
    }
    return NULL;
}

/* The cheapest offerings below the chosen one's price that were not
 * taken, one per instance type, with the first reason that excluded each
 * (an unavailable offering, the NodePool's requirements or template
 * labels, its limits, a later NodePool in weight order, the pods, the
 * price rules, the capacity-type order). */
static int explain(disrupt_state *s, const disrupt_sim *sim, const uint8_t *drop,
                   const disrupt_option *chosen, disrupt_repl *r, const uint32_t *left,
                   uint32_t nleft)
{
    r->nexcluded = 0;
    double cp = disrupt_option_offering(s, chosen)->price;
    xcand *v = malloc((s->nopts + s->nrejects + 1) * sizeof *v);
    if (!v)
        return BERTH_ENOMEM; /* never a shorter list: the plan fails instead */
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->nrejects; i++) {
        double p = disrupt_option_offering(s, &s->rejects[i].o)->price;
        if (p < cp)
            v[n++] = (xcand){s->rejects[i].o, p, s->rejects[i].why};
    }
    for (uint32_t i = 0; i < s->nopts; i++) {
        double p = disrupt_option_offering(s, &s->opts[i])->price;
        if (p < cp && memcmp(&s->opts[i], chosen, sizeof *chosen))
            v[n++] = (xcand){s->opts[i], p, NULL};
    }
    qsort_r(v, n, sizeof *v, cmp_xcand, s);
    const berth_disrupt *m = s->m;
    const berth_nodepool *cpool = &m->pools[chosen->pool];
    for (uint32_t i = 0; i < n && r->nexcluded < BERTH_DEXCLUDED_MAX; i++) {
        int dup = 0;
        for (uint32_t j = 0; j < r->nexcluded && !dup; j++)
            dup = !strcmp(r->excluded[j].instance_type, m->types[v[i].o.type].name);
        if (dup)
            continue;
        const berth_offering *of = disrupt_option_offering(s, &v[i].o);
        berth_dexcluded *x = &r->excluded[r->nexcluded++];
        *x = (berth_dexcluded){m->types[v[i].o.type].name, of->zone, m->pools[v[i].o.pool].name,
                               of->capacity_type, of->price, ""};
        if (v[i].why) {
            snprintf(x->reason, sizeof x->reason, "%s", v[i].why);
            continue;
        }
        if (!disrupt_option_within_limits(s, &v[i].o, s->lim_q, x->reason, sizeof x->reason))
            continue;
        if (v[i].o.rank > chosen->rank) {
            snprintf(x->reason, sizeof x->reason,
                     "NodePool %s (weight %lld) comes first in weight order", cpool->name,
                     (long long)cpool->weight);
            continue;
        }
        int fi = -1;
        for (uint32_t j = 0; j < sim->nfeasible && fi < 0; j++)
            if (!memcmp(&sim->feasible[j], &v[i].o, sizeof v[i].o))
                fi = (int)j;
        if (fi < 0) {
            /* its node cannot take the pods (or its pool came first but could
             * not take the first pod alone) */
            uint32_t oi = 0;
            while (oi < s->nopts && memcmp(&s->opts[oi], &v[i].o, sizeof v[i].o))
                oi++;
            char w[160] = "";
            if (oi < s->nopts &&
                !disrupt_option_hosts_why(s, &s->opt_nodes[oi], left, nleft, w, sizeof w))
                snprintf(x->reason, sizeof x->reason, "cannot host the moved pods: %s", w);
            else
                snprintf(x->reason, sizeof x->reason,
                         "the kube scheduler does not place every moved pod on it");
            continue;
        }
        const char *d = drop ? drop_text(drop[fi]) : NULL;
        if (d)
            snprintf(x->reason, sizeof x->reason, "%s", d);
        else
            snprintf(x->reason, sizeof x->reason, "capacity type order: %s is launched first",
                     berth_capacity_type_name(disrupt_option_offering(s, chosen)->capacity_type));
    }
    free(v);
    return 0;
}

int disrupt_explain_drift(disrupt_state *s, const disrupt_sim *sim, berth_dreplacement *x)
{
    disrupt_repl r;
    memset(&r, 0, sizeof r);
    disrupt_sim none = *sim;
    none.nfeasible = 0; /* no price rules: every cheaper option failed before them */
    int rc = explain(s, &none, NULL, &sim->chosen[0], &r, sim->left0, sim->nleft0);
    if (rc)
        return rc;
    memcpy(x->excluded, r.excluded, sizeof r.excluded);
    x->nexcluded = r.nexcluded;
    return 0;
}

/* 0, or BERTH_ENOMEM (never reported as a reason: an allocation failure
 * is not a decision) */
static int decide_replacement(disrupt_state *s, const uint32_t *cands, uint32_t nc,
                              const disrupt_sim *sim, int multi, disrupt_repl *r)
{
    int rc = 0;
    memset(r, 0, sizeof *r);
    uint32_t n = sim->nfeasible;
    const disrupt_option *o = sim->feasible;
    uint8_t *keep = malloc(n + 1), *drop = calloc(n + 1, 1);
    if (!keep || !drop) {
        rc = BERTH_ENOMEM;
        goto out;
    }
    memset(keep, 1, n + 1);
    double price = 0;
    int all_spot = 1, has_spot = 0, has_od = 0;
    for (uint32_t i = 0; i < nc; i++) {
        price += s->n[cands[i]].price;
        all_spot &= s->n[cands[i]].ct == BERTH_CT_SPOT;
    }
    for (uint32_t i = 0; i < n; i++) {
        berth_capacity_type ct = disrupt_option_offering(s, &o[i])->capacity_type;
        has_spot |= ct == BERTH_CT_SPOT;
        has_od |= ct == BERTH_CT_ON_DEMAND;
    }
    /* the new NodeClaim's instance types must satisfy minValues at all */
    if (!disrupt_min_values_ok(s, o, keep, n, r->why, sizeof r->why))
        goto out;
    int spot_only = 0;
    if (all_spot && has_spot) {
        if (!s->spot_to_spot) {
            snprintf(r->why, sizeof r->why,
                     "SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node");
            goto out;
        }
        spot_only = 1;
    } else if (has_spot && has_od) {
        spot_only = 1; /* on-demand -> [on-demand, spot] is restricted to spot */
    }
    if (spot_only)
        for (uint32_t i = 0; i < n; i++)
            if (disrupt_option_offering(s, &o[i])->capacity_type != BERTH_CT_SPOT) {
                keep[i] = 0;
                drop[i] = all_spot ? DROP_SPOT_GATE : DROP_SPOT_ONLY;
            }
    filter_by_price(s, o, keep, drop, n, price, DROP_PRICE);
    if (multi) {
        /* replacing several nodes by one of their own types must beat the
         * cheapest such candidate (upstream filterOutSameType) */
        double maxp = 1e300;
        for (uint32_t i = 0; i < n; i++) {
            if (!keep[i])
                continue;
            for (uint32_t c = 0; c < nc; c++)
                if ((int)o[i].type == s->n[cands[c]].type && s->n[cands[c]].price < maxp)
                    maxp = s->n[cands[c]].price;
        }
        if (maxp < 1e300)
            filter_by_price(s, o, keep, drop, n, maxp, DROP_SAME_TYPE);
    }
    uint32_t types = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!keep[i])
            continue;
        int seen = 0;
        for (uint32_t j = 0; j < i; j++)
            seen |= keep[j] && o[j].type == o[i].type;
        types += !seen;
    }
    if (!types) {
        snprintf(r->why, sizeof r->why, "no replacement is cheaper than %.4f per hour", price);
        goto out;
    }
    /* RemoveInstanceTypeOptionsByPriceAndMinValues: the cheaper types must
     * still satisfy minValues */
    if (!disrupt_min_values_ok(s, o, keep, n, r->why, sizeof r->why))
        goto out;
    if (all_spot && spot_only && nc == 1 && types < SPOT_MIN_OPTIONS) {
        snprintf(r->why, sizeof r->why,
                 "spot-to-spot consolidation needs %d cheaper spot instance types, found %u",
                 SPOT_MIN_OPTIONS, types);
        goto out;
    }
    int best = -1;
    for (uint32_t i = 0; i < n; i++)
        if (keep[i] && (best < 0 || better(s, &o[i], &o[best])))
            best = (int)i;
    r->ok = 1;
    r->chosen = o[best];
    rc = explain(s, sim, drop, &r->chosen, r, sim->left, sim->nleft);
out:
    free(keep);
    free(drop);
    return rc;
}

static void set_requirements(const disrupt_state *s, berth_dreplacement *x, uint32_t pool)
{
    const berth_nodepool *np = &s->m->pools[pool];
    x->requirements = np->reqs;
    x->min_values = np->min_values;
    x->nrequirements = np->nreqs;
}

int disrupt_fill_replacement(disrupt_state *s, berth_daction *a, const disrupt_option *o,
                             uint32_t n)
{
    a->replace = 1;
    a->replacements = calloc(n ? n : 1, sizeof *a->replacements);
    if (!a->replacements)
        return BERTH_ENOMEM;
    for (uint32_t i = 0; i < n; i++) {
        const berth_offering *of = disrupt_option_offering(s, &o[i]);
        berth_dreplacement *x = &a->replacements[i];
        x->instance_type = s->m->types[o[i].type].name;
        x->zone = of->zone;
        x->nodepool = s->m->pools[o[i].pool].name;
        x->capacity_type = of->capacity_type;
        x->price = of->price;
        set_requirements(s, x, o[i].pool);
        a->savings -= of->price;
    }
    a->nreplacements = n;
    return 0;
}

int disrupt_fill_repl(disrupt_state *s, berth_daction *a, const disrupt_repl *r)
{
    int rc = disrupt_fill_replacement(s, a, &r->chosen, 1);
    if (rc)
        return rc;
    memcpy(a->replacements[0].excluded, r->excluded, sizeof r->excluded);
    a->replacements[0].nexcluded = r->nexcluded;
    return 0;
}

/* Balanced (v1.14): every Balanced pool in the move must approve. */
int disrupt_balanced_ok(const disrupt_state *s, const uint32_t *cands, uint32_t nc, double savings)
{
    for (uint32_t i = 0; i < nc; i++) {
        int pool = s->n[cands[i]].pool;
        if (s->m->pools[pool].policy != BERTH_CP_BALANCED)
            continue;
        if (savings <= 0)
            return 0;
        double pool_cost = s->pool_cost[pool], pool_rdc = s->pool_rdc[pool], cand_rdc = 0;
        for (uint32_t j = 0; j < nc; j++)
            if (s->n[cands[j]].pool == pool)
                cand_rdc += s->n[cands[j]].rdc;
        if (pool_cost <= 0 || pool_rdc <= 0 || cand_rdc <= 0)
            return 0;
        if ((savings / pool_cost) / (cand_rdc / pool_rdc) < 0.5)
            return 0;
    }
    return 1;
}

/* computeConsolidation: *decision 0 nothing, 1 delete, 2 replace. */
int disrupt_consolidate(disrupt_state *s, const uint32_t *cands, uint32_t nc, int multi,
                        disrupt_repl *r, char *why, size_t size, int *decision)
{
    *decision = 0;
    disrupt_sim sim;
    int rc = disrupt_simulate(s, cands, nc, 1, &sim);
    if (rc)
        return rc;
    int res = 0;
    double price = 0;
    for (uint32_t i = 0; i < nc; i++)
        price += s->n[cands[i]].price;
    memset(r, 0, sizeof *r);
    if (!sim.ok)
        snprintf(why, size, "%s", sim.why);
    else if (!sim.nnew)
        res = disrupt_balanced_ok(s, cands, nc, price) ? 1 : 0;
    else {
        int confirmed = 1;
        if ((rc = decide_replacement(s, cands, nc, &sim, multi, r)) ||
            (r->ok && (rc = disrupt_sim_confirm(&sim, &r->chosen, &confirmed))) ||
            (!confirmed && /* decide again on the scheduled set */
             (rc = decide_replacement(s, cands, nc, &sim, multi, r)))) {
            disrupt_sim_free(&sim);
            return rc;
        }
        if (!sim.nfeasible && !r->ok && !confirmed) {
            snprintf(why, size, "%u pod(s) fit neither the remaining nodes nor one new node",
                     sim.nleft);
        } else if (!r->ok)
            snprintf(why, size, "%s", r->why);
        else if (disrupt_balanced_ok(s, cands, nc,
                                     price - disrupt_option_offering(s, &r->chosen)->price))
            res = 2;
    }
    if (!res && sim.ok && !why[0])
        snprintf(why, size, "the Balanced policy does not approve the move");
    disrupt_sim_free(&sim);
    *decision = res;
    return 0;
}

int disrupt_consolidation_eligible(const disrupt_state *s, uint32_t n)
{
    const disrupt_node *d = &s->n[n];
    const berth_nodepool *np = &s->m->pools[d->pool];
    return np->policy != BERTH_CP_WHEN_EMPTY && np->consolidate_after != BERTH_DURATION_NEVER &&
           d->resolvable && !d->empty && d->consolidatable;
}

/* Multi-node consolidation's binary search over prefixes of multi on the
 * plan's threads (docs/disrupt.md "Threads"): with T threads, the probes
 * of the next d = floor(log2(T + 1)) levels of the search's decision tree
 * are answered at once (the probe mid of [lo, hi], then mid of
 * [lo, mid - 1] and of [mid + 1, hi], ...; disrupt_probes_plan), all from
 * the same state, and the search then walks down the tree by the answers
 * (disrupt_probes_walk): d levels per round, every probe it takes the one
 * the sequential search would ask next, so the answer is the sequential
 * one for any answers, monotone or not. */
static int multi_parallel(disrupt_state *s, const uint32_t *multi, uint32_t nm, int *best_kind,
                          uint32_t *best_len, disrupt_repl *best_r)
{
    uint32_t depth = disrupt_probe_depth(disrupt_par_width(s));
    disrupt_probes t;
    disrupt_question *q = calloc(DISRUPT_PROBE_MAX, sizeof *q);
    if (!q)
        return BERTH_ENOMEM;
    int ok[DISRUPT_PROBE_MAX];
    uint32_t taken[DISRUPT_PROBE_DEPTH_MAX];
    uint32_t lo = 1, hi = nm - 1;
    int rc = 0, stop = 0;
    while (!rc && !stop && lo <= hi) {
        disrupt_probes_plan(&t, depth, lo, hi);
        for (uint32_t i = 0; i < t.nq; i++)
            q[i] = (disrupt_question){.cands = multi, .nc = t.mid[i] + 1, .multi = 1};
        if ((rc = disrupt_consolidate_many(s, q, t.nq)))
            break;
        for (uint32_t i = 0; i < t.nq; i++)
            ok[i] = !q[i].rc && q[i].res;
        uint32_t nt = disrupt_probes_walk(&t, ok, taken);
        for (uint32_t j = 0; j < nt; j++) {
            const disrupt_question *a = &q[taken[j]];
            uint32_t mid = t.mid[taken[j]];
            s->unplaced += a->unplaced;
            if ((rc = a->rc))
                break;
            if (a->res) {
                *best_kind = a->res;
                *best_len = mid + 1;
                *best_r = a->r;
                lo = mid + 1;
            } else if (!mid) {
                stop = 1;
                break;
            } else {
                hi = mid - 1;
            }
        }
    }
    free(q);
    return rc;
}

/* Single-node consolidation on the plan's threads (docs/disrupt.md
 * "Threads"), after its first SINGLE_WARMUP questions: the next
 * disrupt_par_width candidates within their budgets
 * answered at once from the same state, the answers then taken in
 * candidate order exactly as the sequential loop takes them (budget-
 * blocked candidates listed in their place, failures listed, the first
 * success acts and ends the pass; later answers are dropped). Until a
 * success nothing the questions read changes (the allowances move only
 * when a candidate acts), so each answer is the sequential loop's. */
static int single_parallel(disrupt_state *s, berth_dplan *out, const uint32_t *rr, uint32_t nrr)
{
    uint32_t T = disrupt_par_width(s);
    disrupt_question *q = calloc(T, sizeof *q);
    uint32_t *cand = malloc(T * sizeof *cand);
    int rc = q && cand ? 0 : BERTH_ENOMEM;
    for (uint32_t i = 0; !rc && i < nrr;) {
        /* the batch: candidates i.. up to T within their budgets */
        uint32_t e = i, nq = 0;
        for (; e < nrr && nq < T; e++)
            if (s->allowed[s->n[rr[e]].pool][BERTH_DR_UNDERUTILIZED] > 0) {
                cand[nq] = rr[e];
                q[nq] = (disrupt_question){.cands = &cand[nq], .nc = 1, .multi = 0};
                nq++;
            }
        if (nq && (rc = disrupt_consolidate_many(s, q, nq)))
            break;
        for (uint32_t k = 0; i < e; i++) {
            uint32_t n = rr[i];
            if (s->allowed[s->n[n].pool][BERTH_DR_UNDERUTILIZED] <= 0) {
                if ((rc = budget_block(s, out, n, BERTH_DR_UNDERUTILIZED)))
                    break;
                continue;
            }
            disrupt_question *a = &q[k++];
            s->unplaced += a->unplaced;
            if ((rc = a->rc))
                break;
            if (!a->res && a->why[0] && (rc = add_blocked(s, out, n, a->why)))
                break;
            if (a->res) {
                berth_daction *act;
                if ((rc = disrupt_add_action(out, &act)) ||
                    (rc = disrupt_set_nodes(act, &n, 1, s)) ||
                    (a->res == 2 && (rc = disrupt_fill_repl(s, act, &a->r))))
                    break;
                act->reason = BERTH_DR_UNDERUTILIZED;
                s->allowed[s->n[n].pool][BERTH_DR_UNDERUTILIZED]--;
                out->method = "SingleNodeConsolidation";
                i = nrr; /* the pass ends */
                break;
            }
        }
    }
    free(q);
    free(cand);
    return rc;
}

/* Runs the optimiser and keeps its actions when they leave a strictly
 * lower cost per hour, or the same cost with fewer nodes. */
static int optimize(disrupt_state *s, berth_dplan *out)
{
    berth_dplan alt;
    int rc = disrupt_optimize(s, out, &alt);
    if (rc)
        return rc;
    if ((rc = disrupt_outcome(s, &alt))) {
        berth_dplan_free(&alt);
        return rc;
    }
    out->optimize_ran = 1;
    out->optimizer_nodes_after = alt.nodes_after;
    out->optimizer_cost_after = alt.cost_after;
    double eps = 1e-9;
    int better = alt.cost_after < out->cost_after - eps ||
                 (alt.cost_after <= out->cost_after + eps && alt.nodes_after < out->nodes_after);
    if (better) {
        berth_daction *acts = out->actions;
        uint32_t n = out->nactions, cap = out->capactions;
        out->actions = alt.actions;
        out->nactions = alt.nactions;
        out->capactions = alt.capactions;
        alt.actions = acts;
        alt.nactions = n;
        alt.capactions = cap;
        out->nodes_after = alt.nodes_after;
        out->cost_after = alt.cost_after;
        out->optimized = 1;
        out->method = "Optimizer";
    }
    berth_dplan_free(&alt);
    return 0;
}

int berth_disrupt_plan(const berth_disrupt *m, const berth_dplan_options *opt, berth_dplan *out,
                       berth_error *e)
{
    memset(out, 0, sizeof *out);
    out->at = opt->now;
    disrupt_state s;
    if (disrupt_state_init(&s, m, opt))
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    /* the bound, with the allowances as at the start of the pass */
    berth_dbound b = {0, 0, NULL, 0, 0};
    int rc = disrupt_bound(&s, &b);
    out->bound_nodes = b.nodes;
    out->bound_cost = b.cost;
    out->bound_method = b.method;
    out->bound_nodes_budgets = b.nodes_budgets;
    out->bound_cost_budgets = b.cost_budgets;
    uint32_t *list = malloc((s.nn + 1) * sizeof *list);
    out->pools = calloc(m->npools + 1, sizeof *out->pools);
    if (rc || !list || !out->pools) {
        rc = rc ? rc : BERTH_ENOMEM;
        goto done;
    }
    out->npools = m->npools;
    for (uint32_t p = 0; p < m->npools; p++) {
        out->pools[p].pool = p;
        out->pools[p].nodes = s.pool_nodes[p];
        out->pools[p].disrupting = s.pool_disrupting[p];
        memcpy(out->pools[p].allowed, s.allowed[p], sizeof s.allowed[p]);
    }
    /* expiration: deleted directly, one action per node, in name order */
    for (uint32_t n = 0; n < s.nn; n++) {
        if (!s.n[n].expired)
            continue;
        berth_daction *a;
        if ((rc = disrupt_add_action(out, &a)) || (rc = disrupt_set_nodes(a, &n, 1, &s)))
            goto done;
        a->reason = BERTH_DR_EXPIRED;
    }
    /* blocked candidates (drift may still take pod-blocked ones with a
     * terminationGracePeriod) */
    for (uint32_t n = 0; n < s.nn; n++)
        if (s.n[n].managed && !s.n[n].candidate && !s.n[n].expired && s.n[n].block[0] &&
            (rc = add_blocked(&s, out, n, s.n[n].block)))
            goto done;
    /* 1. Emptiness */
    uint32_t nl = 0;
    for (uint32_t i = 0; i < s.norder; i++) {
        uint32_t n = s.order[i];
        const disrupt_node *d = &s.n[n];
        if (!d->empty || m->pools[d->pool].consolidate_after == BERTH_DURATION_NEVER ||
            !d->consolidatable)
            continue;
        if (s.allowed[d->pool][BERTH_DR_EMPTY] <= 0) {
            if ((rc = budget_block(&s, out, n, BERTH_DR_EMPTY)))
                goto done;
            continue;
        }
        s.allowed[d->pool][BERTH_DR_EMPTY]--;
        list[nl++] = n;
    }
    if (nl) {
        berth_daction *a;
        if ((rc = disrupt_add_action(out, &a)) || (rc = disrupt_set_nodes(a, list, nl, &s)))
            goto done;
        a->reason = BERTH_DR_EMPTY;
        out->method = "Emptiness";
        goto done;
    }
    /* 2. Drift: empty first, then oldest drift, then candidate order */
    nl = 0;
    for (uint32_t n = 0; n < s.nn; n++) {
        const disrupt_node *d = &s.n[n];
        int tgp = d->claim >= 0 && m->claims[d->claim].has_termination_grace;
        if (d->drifted && (d->candidate || (d->pod_blocked && tgp)))
            list[nl++] = n;
    }
    for (uint32_t i = 1; i < nl; i++) /* stable insertion sort */
        for (uint32_t j = i; j > 0; j--) {
            const disrupt_node *x = &s.n[list[j - 1]], *y = &s.n[list[j]];
            int swap = 0;
            if (x->empty != y->empty)
                swap = y->empty;
            else if (x->drift_at != y->drift_at)
                swap = y->drift_at < x->drift_at;
            else
                swap = strcmp(m->kube.nodes[x->node].name, m->kube.nodes[y->node].name) > 0;
            if (!swap)
                break;
            uint32_t t = list[j];
            list[j] = list[j - 1];
            list[j - 1] = t;
        }
    for (uint32_t i = 0; i < nl; i++) {
        uint32_t n = list[i];
        if (s.allowed[s.n[n].pool][BERTH_DR_DRIFTED] <= 0) {
            if ((rc = budget_block(&s, out, n, BERTH_DR_DRIFTED)))
                goto done;
            continue;
        }
        disrupt_sim sim;
        if ((rc = disrupt_simulate(&s, &n, 1, 64, &sim)))
            goto done;
        if (sim.ok) {
            berth_daction *a;
            if ((rc = disrupt_add_action(out, &a)) || (rc = disrupt_set_nodes(a, &n, 1, &s)) ||
                (sim.nchosen && (rc = disrupt_fill_replacement(&s, a, sim.chosen, sim.nchosen)))) {
                disrupt_sim_free(&sim);
                goto done;
            }
            if (sim.nchosen == 1 && (rc = disrupt_explain_drift(&s, &sim, &a->replacements[0]))) {
                disrupt_sim_free(&sim);
                goto done;
            }
            a->reason = BERTH_DR_DRIFTED;
            s.allowed[s.n[n].pool][BERTH_DR_DRIFTED]--;
            out->method = "Drift";
            disrupt_sim_free(&sim);
            goto done;
        }
        char why[240];
        snprintf(why, sizeof why, "drifted, but %s", sim.why);
        disrupt_sim_free(&sim);
        if ((rc = add_blocked(&s, out, n, why)))
            goto done;
    }
    /* 3. multi-node consolidation */
    nl = 0;
    for (uint32_t i = 0; i < s.norder; i++) {
        uint32_t n = s.order[i];
        if (!disrupt_consolidation_eligible(&s, n))
            continue;
        int64_t *al = &s.allowed[s.n[n].pool][BERTH_DR_UNDERUTILIZED];
        if (*al <= 0) {
            if ((rc = budget_block(&s, out, n, BERTH_DR_UNDERUTILIZED)))
                goto done;
            continue;
        }
        list[nl++] = n;
    }
    /* the budget filter for this method (a copy: decremented per node) */
    {
        int64_t (*al)[BERTH_DR_BUDGET_COUNT] = malloc((m->npools + 1) * sizeof *al);
        uint32_t *multi = malloc((nl + 1) * sizeof *multi);
        if (!al || !multi) {
            free(al);
            free(multi);
            rc = BERTH_ENOMEM;
            goto done;
        }
        memcpy(al, s.allowed, m->npools * sizeof *al);
        uint32_t nm = 0;
        for (uint32_t i = 0; i < nl && nm < MULTI_MAX; i++)
            if (al[s.n[list[i]].pool][BERTH_DR_UNDERUTILIZED] > 0) {
                al[s.n[list[i]].pool][BERTH_DR_UNDERUTILIZED]--;
                multi[nm++] = list[i];
            }
        free(al);
        int best_kind = 0;
        uint32_t best_len = 0;
        disrupt_repl best_r;
        memset(&best_r, 0, sizeof best_r);
        if (nm >= 2 && disrupt_par_on(&s) && disrupt_par_width(&s) >= 3) {
            if ((rc = multi_parallel(&s, multi, nm, &best_kind, &best_len, &best_r))) {
                free(multi);
                goto done;
            }
        } else if (nm >= 2) {
            uint32_t lo = 1, hi = nm - 1;
            while (lo <= hi) {
                uint32_t mid = (lo + hi) / 2;
                disrupt_repl r;
                char why[240] = "";
                int res = 0;
                if ((rc = disrupt_consolidate(&s, multi, mid + 1, 1, &r, why, sizeof why, &res))) {
                    free(multi);
                    goto done;
                }
                if (res) {
                    best_kind = res;
                    best_len = mid + 1;
                    best_r = r;
                    lo = mid + 1;
                } else {
                    if (!mid)
                        break;
                    hi = mid - 1;
                }
            }
        }
        if (best_kind) {
            berth_daction *a;
            if ((rc = disrupt_add_action(out, &a)) || (rc = disrupt_set_nodes(a, multi, best_len, &s)) ||
                (best_kind == 2 && (rc = disrupt_fill_repl(&s, a, &best_r)))) {
                free(multi);
                goto done;
            }
            a->reason = BERTH_DR_UNDERUTILIZED;
            for (uint32_t i = 0; i < best_len; i++)
                s.allowed[s.n[multi[i]].pool][BERTH_DR_UNDERUTILIZED]--;
            out->method = "MultiNodeConsolidation";
            free(multi);
            goto done;
        }
        free(multi);
    }
    /* 4. single-node consolidation: round-robin by NodePool */
    {
        uint32_t *rr = malloc((nl + 1) * sizeof *rr);
        uint8_t *used = calloc(nl + 1, 1);
        int *pools = malloc((nl + 1) * sizeof *pools);
        uint32_t npools = 0, nrr = 0;
        if (!rr || !used || !pools) {
            free(rr);
            free(used);
            free(pools);
            rc = BERTH_ENOMEM;
            goto done;
        }
        for (uint32_t i = 0; i < nl; i++) {
            int seen = 0;
            for (uint32_t j = 0; j < npools; j++)
                seen |= pools[j] == s.n[list[i]].pool;
            if (!seen)
                pools[npools++] = s.n[list[i]].pool;
        }
        /* per round, each pool's next node in list order: one cursor per
         * pool, O(nodes x pools) in all (a scan from the start per pick was
         * O(nodes^2): most of a 10k-node plan that reaches this step) */
        uint32_t *cur = calloc(npools + 1, sizeof *cur);
        if (!cur) {
            free(rr);
            free(used);
            free(pools);
            rc = BERTH_ENOMEM;
            goto done;
        }
        while (nrr < nl)
            for (uint32_t pj = 0; pj < npools; pj++) {
                uint32_t i = cur[pj];
                while (i < nl && (used[i] || s.n[list[i]].pool != pools[pj]))
                    i++;
                cur[pj] = i;
                if (i < nl) {
                    used[i] = 1;
                    rr[nrr++] = list[i];
                }
            }
        free(cur);
        free(used);
        free(pools);
        /* the first SINGLE_WARMUP questions on the plan's own session
         * (a pass that acts at once opens no worker session), the rest
         * in speculative batches on the plan's threads */
        uint32_t asked = 0;
        for (uint32_t i = 0; i < nrr; i++) {
            uint32_t n = rr[i];
            if (asked == SINGLE_WARMUP && disrupt_par_on(&s)) {
                rc = single_parallel(&s, out, rr + i, nrr - i);
                break;
            }
            if (s.allowed[s.n[n].pool][BERTH_DR_UNDERUTILIZED] <= 0) {
                if ((rc = budget_block(&s, out, n, BERTH_DR_UNDERUTILIZED)))
                    break;
                continue;
            }
            disrupt_repl r;
            char why[240] = "";
            int res = 0;
            asked++;
            if ((rc = disrupt_consolidate(&s, &n, 1, 0, &r, why, sizeof why, &res)))
                break;
            if (!res && why[0] && (rc = add_blocked(&s, out, n, why)))
                break;
            if (res) {
                berth_daction *a;
                if ((rc = disrupt_add_action(out, &a)) || (rc = disrupt_set_nodes(a, &n, 1, &s)) ||
                    (res == 2 && (rc = disrupt_fill_repl(&s, a, &r))))
                    break;
                a->reason = BERTH_DR_UNDERUTILIZED;
                s.allowed[s.n[n].pool][BERTH_DR_UNDERUTILIZED]--;
                out->method = "SingleNodeConsolidation";
                break;
            }
        }
        free(rr);
    }
done:
    free(list);
    disrupt_workers_free(&s); /* the pass's batches are over: their sessions go */
    if (!rc)
        rc = disrupt_outcome(&s, out);
    if (!rc) {
        out->karpenter_nodes_after = out->nodes_after;
        out->karpenter_savings = out->cost_before - out->cost_after;
    }
    /* --optimize: a drift replacement is not a consolidation to compare */
    if (!rc && opt->optimize && !(out->method && !strcmp(out->method, "Drift")))
        rc = optimize(&s, out);
    /* a plan finished past the deadline is not kept either: the answer is
     * "stopped" whenever the limit passed before it was ready */
    if (!rc && berth_cancel_expired(opt->cancel))
        rc = BERTH_ETIMEDOUT;
    disrupt_state_free(&s);
    if (rc) {
        berth_dplan_free(out);
        return berth_error_set(e, rc, "planning failed: %s", berth_strerror(rc));
    }
    return 0;
}

void berth_dplan_free(berth_dplan *p)
{
    for (uint32_t i = 0; i < p->nactions; i++) {
        free(p->actions[i].nodes);
        free(p->actions[i].replacements);
    }
    free(p->actions);
    free(p->blocked);
    free(p->pools);
    memset(p, 0, sizeof *p);
}
