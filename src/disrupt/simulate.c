/* disrupt/simulate.c - re-placing the pods of disrupted nodes with the
 * kube scheduling pipeline (SPEC 4.1 "Simulation"). Pods left over then try
 * hypothetical new nodes built from a NodePool template and an
 * InstanceType offering (labels: template labels, single-value In
 * requirements, nodepool, instance type, zone, capacity type, hostname;
 * taints: the template's; allocatable: the instance type's, capacity minus
 * node overhead, less the DaemonSet pods that would run there).
 *
 * Two paths with the same decisions:
 * - the reference (options.reference): a view of the cluster (remaining
 *   nodes, their bound pods, the moved pods pending) through
 *   berth_kube_schedule_view, then one more view per option and new node.
 *   Work: O(cluster) per question and per option.
 * - the session (default): one berth_ksession per plan; a question
 *   excludes the candidates, evicts their pods, places the moved ones and
 *   rolls back. Work: the scheduler's per-pod cost for the moved pods.
 *   For one new node (consolidation), when every leftover pod is plain (no
 *   required pod (anti-)affinity, no DoNotSchedule spread, no host ports,
 *   the default scheduler profile) and no pod carries a required
 *   anti-affinity term, the options are filtered as Karpenter does, without
 *   scheduling: the leftovers' summed requests and count within the
 *   option's capacity, each leftover's nodeSelector / required node
 *   affinity on its labels and its taints tolerated. That filter is exact
 *   for plain pods: they failed on the remaining nodes in queue order and
 *   those only filled up since (their filters are static or resources), so
 *   on a re-run they can only land on the new node, where they all fit iff
 *   the sums do. The chosen option is still confirmed by one scheduling run
 *   on a spare node (disrupt_sim_confirm); anything else schedules every
 *   option on a spare node. */
#include "disrupt/state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const berth_offering *disrupt_option_offering(const disrupt_state *s, const disrupt_option *o)
{
    return &s->m->types[o->type].offerings[o->offering];
}

/* Schedules `pending` (kube pod indices; bind[i] non-NULL pins pod i to
 * that node name) on the nodes not excluded plus the hypothetical nodes,
 * through the shared view scheduler (berth_kube_schedule_view). placed[i]
 * gets the node name or NULL. */
static int sched_view(disrupt_state *s, const uint8_t *excluded, const berth_knode *hyp,
                      uint32_t nhyp, const uint32_t *pending, uint32_t npending,
                      const char *const *bind, const char **placed)
{
    /* hypothetical nodes lose exact ties to the cluster's, as the
     * session's spare slots do */
    berth_kview v = {excluded, s->pod_node, hyp, nhyp, pending, npending, bind, NULL, s->cancel, 1};
    berth_error e;
    return berth_kube_schedule_view(&s->m->kube, &v, placed, NULL, NULL, &e);
}

/* A hypothetical node for option o, named name: the NodePool template's
 * Node (berth_disrupt_template_node, not initialised); 0, or -1 when the
 * offering does not satisfy the pool's requirements. */
int disrupt_option_node(const disrupt_state *s, berth_arena *a, const disrupt_option *o,
                        const char *name, berth_knode *out)
{
    int rc = berth_disrupt_template_node(s->m, o->pool, o->type, o->offering, name, 0, a, out);
    return rc > 0 ? -1 : rc;
}

int disrupt_option_next(const disrupt_state *s, berth_arena *a, const char *name,
                        disrupt_option *o, berth_knode *node)
{
    const berth_disrupt *m = s->m;
    for (; o->rank < m->npools; o->rank++, o->type = 0)
        for (o->pool = s->pool_order[o->rank]; o->type < m->ntypes; o->type++, o->offering = 0)
            for (; o->offering < m->types[o->type].nofferings; o->offering++) {
                if (!disrupt_option_offering(s, o)->available)
                    continue;
                int mk = disrupt_option_node(s, a, o, name, node);
                if (mk == BERTH_ENOMEM)
                    return mk;
                if (!mk)
                    return 1;
            }
    return 0;
}

void disrupt_sim_free(disrupt_sim *r)
{
    if (r->open && r->s && r->s->ks)
        berth_ksession_rollback(r->s->ks, r->mark);
    free(r->feasible);
    free(r->chosen);
    free(r->left);
    free(r->left0);
    memset(r, 0, sizeof *r);
}

static int push_option(disrupt_option **v, uint32_t *n, disrupt_option o)
{
    disrupt_option *q = realloc(*v, (*n + 1) * sizeof *q);
    if (!q)
        return BERTH_ENOMEM;
    *v = q;
    q[(*n)++] = o;
    return 0;
}

/* After the remaining nodes took what they could: whether the question is
 * answered, ok when nothing is left, else with why when no new node may
 * be added (max_new 0). */
static int settled(disrupt_sim *out, uint32_t left, uint32_t max_new)
{
    if (!left)
        out->ok = 1;
    else if (!max_new)
        snprintf(out->why, sizeof out->why, "%u pod(s) do not fit on the remaining nodes", left);
    return !left || !max_new;
}

/* The reference: one berth_kube_schedule_view per question and option. */
static int simulate_view(disrupt_state *s, const uint32_t *cands, uint32_t nc, uint32_t max_new,
                         disrupt_sim *out)
{
    const berth_disrupt *m = s->m;
    uint8_t *excluded = calloc(s->nn + 1, 1);
    uint32_t *moving = calloc(m->kube.npods + 1, sizeof *moving);
    const char **placed = calloc(m->kube.npods + 1, sizeof *placed);
    const char **bind = calloc(m->kube.npods + 1, sizeof *bind);
    const char **placed2 = calloc(m->kube.npods + 1, sizeof *placed2);
    berth_knode *hyp = calloc(max_new + 2, sizeof *hyp);
    berth_arena a;
    berth_arena_init(&a, 0);
    uint32_t nmove = 0, nhyp = 0;
    int rc = 0;
    if (!excluded || !moving || !placed || !bind || !placed2 || !hyp) {
        rc = BERTH_ENOMEM;
        goto out;
    }
    /* nodes that receive nothing: the candidates and nodes being deleted */
    for (uint32_t n = 0; n < s->nn; n++)
        excluded[n] = (uint8_t)(s->n[n].deleting || s->n[n].expired);
    for (uint32_t i = 0; i < nc; i++)
        excluded[cands[i]] = 1;
    for (uint32_t i = 0; i < nc; i++) {
        const disrupt_node *dn = &s->n[cands[i]];
        for (uint32_t j = 0; j < dn->npods; j++)
            if (disrupt_pod_moves(s, dn->pods[j]))
                moving[nmove++] = dn->pods[j];
    }
    if ((rc = sched_view(s, excluded, NULL, 0, moving, nmove, NULL, placed)))
        goto out;
    uint32_t left = 0;
    if (!(out->left = malloc((nmove + 1) * sizeof *out->left))) {
        rc = BERTH_ENOMEM;
        goto out;
    }
    for (uint32_t i = 0; i < nmove; i++) {
        bind[i] = placed[i];
        left += placed[i] == NULL;
        if (!placed[i])
            out->left[out->nleft++] = moving[i];
    }
    if (settled(out, left, max_new))
        goto out;
    if ((rc = disrupt_options_ready(s)))
        goto out;
    disrupt_limits_question(s, cands, nc);
    if (s->nlim)
        memcpy(s->lim_round, s->lim_q, s->nlim * sizeof *s->lim_round);
    if (!(out->left0 = malloc((out->nleft + 1) * sizeof *out->left0))) {
        rc = BERTH_ENOMEM;
        goto out;
    }
    memcpy(out->left0, out->left, out->nleft * sizeof *out->left0);
    out->nleft0 = out->nleft;
    for (uint32_t round = 0; round < max_new && left; round++) {
        int best = -1;
        uint32_t best_count = 0;
        double best_price = 0;
        disrupt_option best_o = {0};
        char name[48];
        snprintf(name, sizeof name, "berth-replacement-%u", round + 1);
        const char *nm = berth_arena_strdup(&a, name);
        if (!nm) {
            rc = BERTH_ENOMEM;
            goto out;
        }
        out->nleft = 0;
        for (uint32_t i = 0; i < nmove; i++)
            if (!bind[i])
                out->left[out->nleft++] = moving[i];
        int first, pr = disrupt_question_pool(s, s->lim_round, out->left, out->nleft, &first);
        if (max_new == 1) {
            out->pool_rank = pr;
            out->first_pod = first;
        }
        for (uint32_t oi = 0; oi < s->nopts; oi++) {
            if (!s->opt_use[oi])
                continue;
            disrupt_option op = s->opts[oi];
            if ((rc = disrupt_option_node(s, &a, &op, nm, &hyp[nhyp])))
                goto out;
            const berth_offering *of = disrupt_option_offering(s, &op);
            if ((rc = sched_view(s, excluded, hyp, nhyp + 1, moving, nmove, bind, placed2)))
                goto out;
            uint32_t got = 0;
            for (uint32_t i = 0; i < nmove; i++)
                got += !bind[i] && placed2[i];
            if (got == left && max_new == 1 &&
                (rc = push_option(&out->feasible, &out->nfeasible, op)))
                goto out;
            if (got > best_count || (got == best_count && got && of->price < best_price)) {
                best = 1;
                best_count = got;
                best_price = of->price;
                best_o = op;
            }
        }
        if (best < 0)
            break;
        if (max_new == 1) {
            if (best_count == left) {
                out->ok = 1;
                out->nnew = 1;
            }
            break;
        }
        /* commit the best node and pin its pods */
        if ((rc = disrupt_option_node(s, &a, &best_o, nm, &hyp[nhyp])) ||
            (rc = sched_view(s, excluded, hyp, nhyp + 1, moving, nmove, bind, placed2)) ||
            (rc = push_option(&out->chosen, &out->nchosen, best_o)))
            goto out;
        disrupt_limits_add(s, s->lim_round, best_o.pool, best_o.type, 1);
        nhyp++;
        left = 0;
        for (uint32_t i = 0; i < nmove; i++) {
            bind[i] = placed2[i];
            left += placed2[i] == NULL;
        }
        out->nnew = nhyp;
        if (!left)
            out->ok = 1;
    }
    if (!out->ok)
        snprintf(out->why, sizeof out->why,
                 "%u pod(s) fit neither the remaining nodes nor %s new node%s", left,
                 max_new == 1 ? "one" : "the", max_new == 1 ? "" : "s");
out:
    free(excluded);
    free(moving);
    free(placed);
    free(bind);
    free(placed2);
    free(hyp);
    berth_arena_free(&a);
    return rc;
}

/* ---- the session path ---- */

#define SPARE_NAME "berth-replacement-%u"

berth_ksession *disrupt_session(disrupt_state *s)
{
    if (s->ks)
        return s->ks;
    berth_error e;
    if (berth_ksession_open(&s->ks, &s->m->kube, s->pod_node, DISRUPT_SPARE_SLOTS, NULL, &e))
        return NULL;
    berth_ksession_set_cancel(s->ks, s->cancel);
    /* the per-node loops of its placements on the plan's threads (no
     * worker could start: the calling thread does it all, same answers) */
    if (berth_ksession_set_threads(s->ks, s->threads) == BERTH_ENOMEM) {
        berth_ksession_close(s->ks);
        s->ks = NULL;
        return NULL;
    }
    /* as the view: deleting and expired nodes receive nothing and their
     * pods are gone */
    for (uint32_t n = 0; n < s->nn; n++) {
        if (!s->n[n].deleting && !s->n[n].expired)
            continue;
        berth_ksession_exclude(s->ks, n, 1);
        for (uint32_t j = 0; j < s->n[n].npods; j++)
            if (berth_ksession_placed(s->ks, s->n[n].pods[j]) &&
                berth_ksession_evict(s->ks, s->n[n].pods[j])) {
                berth_ksession_close(s->ks);
                s->ks = NULL;
                return NULL;
            }
    }
    s->ks_base = berth_ksession_mark(s->ks);
    return s->ks;
}

/* The usable options (available offering, hypothetical node satisfying
 * its pool) with their nodes named as the first new node, built once. */
int disrupt_options_ready(disrupt_state *s)
{
    if (s->opts_ready)
        return 0;
    const berth_disrupt *m = s->m;
    uint32_t cap = 0;
    for (uint32_t t = 0; t < m->ntypes; t++)
        cap += m->types[t].nofferings;
    cap *= m->npools;
    s->opts = malloc((cap + 1) * sizeof *s->opts);
    s->opt_nodes = malloc((cap + 1) * sizeof *s->opt_nodes);
    if (!s->opts || !s->opt_nodes)
        return BERTH_ENOMEM;
    s->opt_use = malloc(cap + 1);
    s->rejects = malloc((cap + 1) * sizeof *s->rejects);
    if (!s->opt_use || !s->rejects)
        return BERTH_ENOMEM;
    char name[48];
    snprintf(name, sizeof name, SPARE_NAME, 1u);
    const char *nm = berth_arena_strdup(&s->opt_arena, name);
    if (!nm)
        return BERTH_ENOMEM;
    /* every offering of every pool, in pool weight order: usable ones, and
     * the others with why (for the replacements' `excluded`) */
    for (uint32_t r = 0; r < m->npools; r++)
        for (uint32_t t = 0; t < m->ntypes; t++)
            for (uint32_t f = 0; f < m->types[t].nofferings; f++) {
                disrupt_option op = {r, s->pool_order[r], t, f};
                char why[200] = "offering not available";
                int rc = 1;
                if (disrupt_option_offering(s, &op)->available)
                    rc = berth_disrupt_template_node_why(m, op.pool, t, f, nm, 0, &s->opt_arena,
                                                         &s->opt_nodes[s->nopts], why, sizeof why);
                if (rc < 0)
                    return rc;
                if (!rc) {
                    s->opts[s->nopts++] = op;
                    continue;
                }
                const char *w = berth_arena_strdup(&s->opt_arena, why);
                if (!w)
                    return BERTH_ENOMEM;
                s->rejects[s->nrejects++] = (disrupt_reject){op, w};
            }
    for (uint32_t p = 0; p < m->kube.npods && !s->any_anti; p++)
        s->any_anti = m->kube.pods[p].nanti_req > 0;
    s->opts_ready = 1;
    return 0;
}

/* Plain pods: their filters on existing nodes are static or resources. */
static int plain_pod(const disrupt_state *s, uint32_t pod)
{
    const berth_kcluster *k = &s->m->kube;
    const berth_kpod *p = &k->pods[pod];
    if (p->naff_req || p->nanti_req || p->nports || k->nprofiles ||
        (p->scheduler_name && strcmp(p->scheduler_name, "default-scheduler")))
        return 0;
    for (uint32_t i = 0; i < p->nspread; i++)
        if (p->spread[i].do_not_schedule)
            return 0;
    return 1;
}

int disrupt_option_hosts_why(const disrupt_state *s, const berth_knode *n, const uint32_t *left,
                             uint32_t nleft, char *why, size_t size)
{
    const berth_kcluster *k = &s->m->kube;
    int64_t sum[BERTH_KUBE_MAX_RES] = {0};
    if ((int64_t)nleft > n->alloc_pods) {
        if (why)
            snprintf(why, size, "%u pods exceed its %lld pods", nleft, (long long)n->alloc_pods);
        return 0;
    }
    for (uint32_t i = 0; i < nleft; i++) {
        const berth_kpod *p = &k->pods[left[i]];
        for (uint32_t r = 0; r < k->nres; r++)
            sum[r] += p->req[r];
    }
    for (uint32_t r = 0; r < k->nres; r++)
        if (sum[r] > n->alloc[r]) {
            if (why)
                snprintf(why, size, "the pods request more %s than it has", k->res_names[r]);
            return 0;
        }
    for (uint32_t i = 0; i < nleft; i++) {
        const berth_kpod *p = &k->pods[left[i]];
        const char *w = NULL;
        if (n->unschedulable)
            w = "it is unschedulable";
        else if (!berth_kube_node_affinity_matches(p, n))
            w = "its nodeSelector / required node affinity does not match";
        else if (berth_taints_first_untolerated(n->taints, n->ntaints, p->tols, p->ntols,
                                                BERTH_EFFECT_MASK_HARD))
            w = "it does not tolerate the taints";
        if (w) {
            if (why)
                snprintf(why, size, "pod %s/%s: %s", p->ns, p->name, w);
            return 0;
        }
    }
    return 1;
}

/* Whether every leftover fits on n together (exact for plain pods). */
static int option_hosts(const disrupt_state *s, const berth_knode *n, const uint32_t *left,
                        uint32_t nleft)
{
    return disrupt_option_hosts_why(s, n, left, nleft, NULL, 0);
}

/* Karpenter's queue order for new capacity (provisioning/scheduling/
 * queue.go byCPUAndMemoryDescending): the pod with the most cpu, then
 * memory, first; ties keep the given order. Index into left. */
static uint32_t first_new_pod(const disrupt_state *s, const uint32_t *left, uint32_t n)
{
    const berth_kpod *pods = s->m->kube.pods;
    uint32_t best = 0;
    for (uint32_t i = 1; i < n; i++) {
        const int64_t *a = pods[left[i]].req, *b = pods[left[best]].req;
        if (a[BERTH_KRES_CPU] > b[BERTH_KRES_CPU] ||
            (a[BERTH_KRES_CPU] == b[BERTH_KRES_CPU] && a[BERTH_KRES_MEMORY] > b[BERTH_KRES_MEMORY]))
            best = i;
    }
    return best;
}

int disrupt_question_pool(disrupt_state *s, const int64_t *used, const uint32_t *left,
                          uint32_t nleft, int *first)
{
    memset(s->opt_use, 0, s->nopts + 1);
    *first = -1;
    if (!nleft)
        return -1;
    uint32_t f = first_new_pod(s, left, nleft);
    *first = (int)left[f];
    char why[8];
    for (uint32_t g = 0; g < s->nopts;) {
        uint32_t e = g, any = 0;
        while (e < s->nopts && s->opts[e].rank == s->opts[g].rank)
            e++;
        /* the pool's options within its limits that take the first pod
         * alone, and minValues over them (Strict policy) */
        for (uint32_t i = g; i < e; i++) {
            s->opt_use[i] = disrupt_option_within_limits(s, &s->opts[i], used, NULL, 0) &&
                            option_hosts(s, &s->opt_nodes[i], &left[f], 1);
            any += s->opt_use[i];
        }
        if (any && disrupt_min_values_ok(s, s->opts, s->opt_use, s->nopts, why, sizeof why)) {
            for (uint32_t i = g; i < e; i++)
                s->opt_use[i] = (uint8_t)disrupt_option_within_limits(s, &s->opts[i], used, NULL, 0);
            return (int)s->opts[g].rank;
        }
        memset(s->opt_use + g, 0, e - g);
        g = e;
    }
    return -1;
}

/* Places the leftovers with spare slot `slot` activated as n; *got: how
 * many were placed (anywhere). The session is rolled back afterwards
 * unless keep is set. */
static int try_spare(disrupt_state *s, uint32_t slot, const berth_knode *n, const uint32_t *left,
                     uint32_t nleft, uint32_t *placed, int keep, uint32_t *got)
{
    uint64_t mk = berth_ksession_mark(s->ks);
    uint32_t node;
    berth_error e;
    int rc = berth_ksession_spare(s->ks, slot, n, &node);
    if (!rc) {
        rc = berth_ksession_place(s->ks, left, nleft, placed, NULL, NULL, &e);
        if (rc == BERTH_ENOFIT)
            rc = 0;
    }
    *got = 0;
    for (uint32_t i = 0; !rc && i < nleft; i++)
        *got += placed[i] != BERTH_KUBE_NONE;
    if (!keep || rc) {
        int rb = berth_ksession_rollback(s->ks, mk);
        if (!rc)
            rc = rb;
    }
    return rc;
}

/* Every usable option that hosts all leftovers, by scheduling each. */
static int schedule_options(disrupt_sim *out, uint32_t *placed)
{
    disrupt_state *s = out->s;
    out->nfeasible = 0;
    out->filtered = 0;
    for (uint32_t i = 0; i < s->nopts; i++) {
        uint32_t got;
        if (!s->opt_use[i])
            continue;
        int rc = try_spare(s, 0, &s->opt_nodes[i], out->left, out->nleft, placed, 0, &got);
        if (rc)
            return rc;
        if (got == out->nleft && (rc = push_option(&out->feasible, &out->nfeasible, s->opts[i])))
            return rc;
    }
    return 0;
}

int disrupt_sim_confirm(disrupt_sim *sim, const disrupt_option *o, int *ok)
{
    *ok = 1;
    if (!sim->filtered || !sim->open)
        return 0;
    disrupt_state *s = sim->s;
    uint32_t *placed = malloc((sim->nleft + 1) * sizeof *placed);
    if (!placed)
        return BERTH_ENOMEM;
    int rc = 0;
    uint32_t i = 0;
    while (i < s->nopts && memcmp(&s->opts[i], o, sizeof *o))
        i++;
    uint32_t got = 0;
    if (i < s->nopts)
        rc = try_spare(s, 0, &s->opt_nodes[i], sim->left, sim->nleft, placed, 0, &got);
    if (!rc && got != sim->nleft) {
        /* the filter disagreed with the scheduler: decide on the exact set */
        *ok = 0;
        rc = schedule_options(sim, placed);
    }
    free(placed);
    return rc;
}

int disrupt_evict_nodes(disrupt_state *s, const uint32_t *cands, uint32_t nc, uint32_t *moving,
                        uint32_t *nmoving)
{
    berth_ksession *ks = s->ks;
    uint32_t nmove = 0;
    int rc = 0;
    for (uint32_t i = 0; i < nc; i++) {
        const disrupt_node *dn = &s->n[cands[i]];
        berth_ksession_exclude(ks, cands[i], 1);
        uint32_t in = s->in_head ? s->in_head[cands[i]] : BERTH_KUBE_NONE;
        for (uint32_t j = 0; j < dn->npods || in != BERTH_KUBE_NONE;) {
            uint32_t p;
            if (j < dn->npods) {
                p = dn->pods[j++];
            } else { /* moved here by the optimiser */
                p = in;
                in = s->in_next[in];
                if (berth_ksession_node_of(ks, p) != cands[i])
                    continue;
            }
            if (berth_ksession_placed(ks, p) &&
                (rc = berth_ksession_evict(ks, p)))
                goto out;
            if (disrupt_pod_moves(s, p))
                moving[nmove++] = p;
        }
    }
out:
    *nmoving = nmove;
    return rc;
}

static int simulate_session(disrupt_state *s, const uint32_t *cands, uint32_t nc,
                            uint32_t max_new, disrupt_sim *out)
{
    const berth_disrupt *m = s->m;
    if (disrupt_options_ready(s))
        return BERTH_ENOMEM;
    /* scratch for every question of the plan, allocated once */
    if (!s->sim_moving) {
        s->sim_moving = malloc((m->kube.npods + 1) * sizeof *s->sim_moving);
        s->sim_placed = malloc((m->kube.npods + 1) * sizeof *s->sim_placed);
        if (!s->sim_moving || !s->sim_placed)
            return BERTH_ENOMEM;
    }
    if (!s->ks || berth_ksession_mark(s->ks) == s->ks_base) {
        /* at the base: the pods the session would move (disrupt_evict_nodes)
         * may be certain to fit without scheduling them (fitcert.c) */
        uint32_t nm = 0;
        for (uint32_t i = 0; i < nc; i++) {
            const disrupt_node *dn = &s->n[cands[i]];
            for (uint32_t j = 0; j < dn->npods; j++)
                if (disrupt_pod_moves(s, dn->pods[j]))
                    s->sim_moving[nm++] = dn->pods[j];
        }
        int c = disrupt_cert_all_fit(s, cands, nc, s->sim_moving, nm);
        if (c < 0)
            return c;
        if (c == 1) {
            out->s = s;
            if (!(out->left = malloc((nm + 1) * sizeof *out->left)))
                return BERTH_ENOMEM;
            out->ok = 1;
            return 0;
        }
    }
    berth_ksession *ks = disrupt_session(s);
    if (!ks)
        return BERTH_ENOMEM;
    out->s = s;
    out->mark = berth_ksession_mark(ks);
    out->open = 1;
    uint32_t *moving = s->sim_moving, *placed = s->sim_placed;
    berth_arena a;
    berth_arena_init(&a, 0);
    berth_error e;
    uint32_t nmove = 0;
    /* the candidates receive nothing and their pods are gone; the
     * reschedulable, unblocked ones are placed again */
    int rc = disrupt_evict_nodes(s, cands, nc, moving, &nmove);
    if (rc)
        goto out;
    if (!(out->left = malloc((nmove + 1) * sizeof *out->left))) {
        rc = BERTH_ENOMEM;
        goto out;
    }
    rc = berth_ksession_place(ks, moving, nmove, placed, NULL, NULL, &e);
    if (rc == BERTH_ENOFIT)
        rc = 0;
    if (rc)
        goto out;
    for (uint32_t i = 0; i < nmove; i++)
        if (placed[i] == BERTH_KUBE_NONE)
            out->left[out->nleft++] = moving[i];
    uint32_t left = out->nleft;
    s->unplaced += left;
    if (settled(out, left, max_new))
        goto out;
    disrupt_limits_question(s, cands, nc);
    if (max_new == 1) {
        /* the first pool (weight order) taking the first pod within its
         * limits gets the new node; its options must host them all */
        out->pool_rank = disrupt_question_pool(s, s->lim_q, out->left, left, &out->first_pod);
        int plain = !s->any_anti;
        for (uint32_t i = 0; plain && i < left; i++)
            plain = plain_pod(s, out->left[i]);
        if (plain) {
            out->filtered = 1;
            for (uint32_t i = 0; i < s->nopts; i++)
                if (s->opt_use[i] && option_hosts(s, &s->opt_nodes[i], out->left, left) &&
                    (rc = push_option(&out->feasible, &out->nfeasible, s->opts[i])))
                    goto out;
        } else if ((rc = schedule_options(out, placed))) {
            goto out;
        }
        if (out->nfeasible) {
            out->ok = 1;
            out->nnew = 1;
        }
    } else {
        /* drift: per round the option placing the most leftovers, then the
         * cheapest, committed before the next round */
        uint32_t rounds = max_new < DISRUPT_SPARE_SLOTS ? max_new : DISRUPT_SPARE_SLOTS;
        if (s->nlim)
            memcpy(s->lim_round, s->lim_q, s->nlim * sizeof *s->lim_round);
        if (!(out->left0 = malloc((out->nleft + 1) * sizeof *out->left0))) {
            rc = BERTH_ENOMEM;
            goto out;
        }
        memcpy(out->left0, out->left, out->nleft * sizeof *out->left0);
        out->nleft0 = out->nleft;
        for (uint32_t round = 0; round < rounds && out->nleft; round++) {
            int first;
            disrupt_question_pool(s, s->lim_round, out->left, out->nleft, &first);
            char name[48];
            snprintf(name, sizeof name, SPARE_NAME, round + 1);
            const char *nm = berth_arena_strdup(&a, name);
            if (!nm) {
                rc = BERTH_ENOMEM;
                goto out;
            }
            int best = -1;
            uint32_t best_count = 0;
            double best_price = 0;
            berth_knode hn;
            for (uint32_t i = 0; i < s->nopts; i++) {
                if (!s->opt_use[i])
                    continue;
                hn = s->opt_nodes[i];
                if (round && (rc = disrupt_option_node(s, &a, &s->opts[i], nm, &hn)))
                    goto out;
                uint32_t got;
                if ((rc = try_spare(s, round, &hn, out->left, out->nleft, placed, 0, &got)))
                    goto out;
                double price = disrupt_option_offering(s, &s->opts[i])->price;
                if (got > best_count || (got == best_count && got && price < best_price)) {
                    best = (int)i;
                    best_count = got;
                    best_price = price;
                }
            }
            if (best < 0)
                break;
            hn = s->opt_nodes[best];
            uint32_t got;
            if ((round && (rc = disrupt_option_node(s, &a, &s->opts[best], nm, &hn))) ||
                (rc = try_spare(s, round, &hn, out->left, out->nleft, placed, 1, &got)) ||
                (rc = push_option(&out->chosen, &out->nchosen, s->opts[best])))
                goto out;
            disrupt_limits_add(s, s->lim_round, s->opts[best].pool, s->opts[best].type, 1);
            uint32_t nl = 0;
            for (uint32_t i = 0; i < out->nleft; i++)
                if (placed[i] == BERTH_KUBE_NONE)
                    out->left[nl++] = out->left[i];
            out->nleft = nl;
            out->nnew = out->nchosen;
        }
        if (!out->nleft)
            out->ok = 1;
        left = out->nleft;
    }
    if (!out->ok)
        snprintf(out->why, sizeof out->why,
                 "%u pod(s) fit neither the remaining nodes nor %s new node%s", left,
                 max_new == 1 ? "one" : "the", max_new == 1 ? "" : "s");
out:
    if (rc || !out->filtered) {
        /* nothing to confirm later: back to the state before the question
         * (before freeing a: the drift rounds' spare nodes are named in it) */
        berth_ksession_rollback(ks, out->mark);
        out->open = 0;
    }
    berth_arena_free(&a); /* after the rollback: it reads the spare nodes' names */
    return rc;
}

int disrupt_simulate(disrupt_state *s, const uint32_t *cands, uint32_t nc, uint32_t max_new,
                     disrupt_sim *out)
{
    memset(out, 0, sizeof *out);
    out->pool_rank = out->first_pod = -1;
    if (berth_cancel_poll(s->cancel, &s->cancel_tick))
        return BERTH_ETIMEDOUT;
    int rc = s->reference ? simulate_view(s, cands, nc, max_new, out)
                          : simulate_session(s, cands, nc, max_new, out);
    if (rc) /* an error leaves nothing for the caller to free */
        disrupt_sim_free(out);
    return rc;
}
