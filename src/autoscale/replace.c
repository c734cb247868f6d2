/* autoscale/replace.c - replacements (SPEC 5 "Replacement", Ocean policy),
 * decided after scale-up and scale-down: a node is replaced by a new one
 * for a spot interruption (--interrupt; drained at once), auto-heal (Ready
 * False or Unknown for longer than the grace), a cluster roll (--roll: the
 * first batch of a group), revert to reserved capacity (unused reservation
 * units or commitment) and revert to spot (an on-demand node of a group
 * below its spot share while a spot offering can host its pods). The new
 * node is chosen by scale-up's purchase order and option key
 * (capacity_open_hosting) and must host the old node's pods together; the
 * kube scheduler then places those pods with the old node gone. Also owns
 * the plan's "blocked" helper and the plan extras' release.
 * Work bound: docs/autoscale.md "Replacements". */
#include "autoscale/state.h"

#include "berth/grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *berth_replace_reason_name(berth_areason r)
{
    switch (r) {
    case BERTH_REPLACE_SPOT_INTERRUPTION: return "SpotInterruption";
    case BERTH_REPLACE_AUTOHEAL: return "AutoHeal";
    case BERTH_REPLACE_ROLL: return "Roll";
    case BERTH_REPLACE_REVERT_TO_RESERVED: return "RevertToReserved";
    case BERTH_REPLACE_REVERT_TO_SPOT: return "RevertToSpot";
    }
    return "?";
}

int capacity_add_blocked(capacity_pass *s, uint32_t node, const char *reason)
{
    berth_aplan *p = s->plan;
    if (berth_grow((void **)&p->blocked, &p->capblocked, p->nblocked + 1, sizeof *p->blocked, 0))
        return BERTH_ENOMEM;
    p->blocked[p->nblocked].node = node;
    snprintf(p->blocked[p->nblocked].reason, sizeof p->blocked[p->nblocked].reason, "%s", reason);
    p->nblocked++;
    return 0;
}

void capacity_free_plan_extras(berth_aplan *p)
{
    for (uint32_t i = 0; i < p->nrep; i++)
        free(p->rep[i].moves);
    free(p->rep);
    p->rep = NULL;
    p->nrep = p->caprep = 0;
    for (uint32_t i = 0; i < p->ndown; i++) {
        free(p->down[i].evicted);
        p->down[i].evicted = NULL;
    }
}

static int by_name(const void *a, const void *b, void *ctx)
{
    const capacity_pass *s = ctx;
    return strcmp(s->n[*(const uint32_t *)a].k->name, s->n[*(const uint32_t *)b].k->name);
}

typedef struct rwork {
    capacity_pass *s;
    uint32_t *pods, *scratch, *placed, *wpods, *wplaced;
    uint8_t *waits;
    const char **why;
    uint32_t first_new;           /* the first new node opened by a replacement */
} rwork;

/* Group g is below its spot share: spot nodes < ceil(spotPercentage x
 * non-reserved nodes / 100) (existing not removed, and new). */
static int wants_spot(const capacity_pass *s, uint32_t g)
{
    int64_t spot = 0, total = 0;
    for (uint32_t i = 0; i < s->nn; i++)
        if (!s->n[i].removed && s->n[i].vng == (int)g && s->n[i].ct != BERTH_CT_RESERVED) {
            total++;
            spot += s->n[i].ct == BERTH_CT_SPOT;
        }
    return spot < (s->m->vngs[g].spot_percentage * total + 99) / 100;
}

static void give_back(capacity_pass *s, uint32_t n)
{
    if (s->node_res[n] >= 0)
        s->res_left[s->node_res[n]] += s->node_res_cost[n];
}

/* Shows (hide 0) or hides (1) the new nodes of earlier replacements: each
 * is there for its own node's pods. */
static void hide_others(rwork *w, uint32_t self, int hide)
{
    for (uint32_t i = w->first_new; i < w->s->nn; i++)
        if (i != self && w->s->n[i].removed == (hide ? 0 : 2))
            w->s->n[i].removed = hide ? 2 : 0;
}

/* The kube scheduler places the np pods of w->pods (unplaced) on the
 * existing nodes, the scale-up's new nodes and the replacement nn; on a
 * spot interruption first on the nodes registered now (existing ones), the
 * rest waiting for the new nodes. Placed pods are placed; unfit ones keep
 * placed[i] == NONE and *unfit_why. */
static int place_pods(rwork *w, uint32_t nn, uint32_t np, int now, const char **unfit_why)
{
    capacity_pass *s = w->s;
    uint32_t all_new = s->nn - s->nexisting;
    hide_others(w, nn, 1);
    int rc = capacity_schedule(s, w->pods, np, now ? 0 : all_new, w->placed, w->why);
    uint32_t nwait = 0;
    for (uint32_t i = 0; !rc && i < np; i++) {
        w->waits[i] = 0;
        if (w->placed[i] != BERTH_KUBE_NONE)
            capacity_place(s, w->pods[i], w->placed[i]);
        else if (now)
            w->scratch[nwait++] = i;
        else
            *unfit_why = w->why[i];
    }
    for (uint32_t j = 0; !rc && j < nwait; j++)
        w->wpods[j] = w->pods[w->scratch[j]];
    if (!rc && nwait)
        rc = capacity_schedule(s, w->wpods, nwait, all_new, w->wplaced, w->why);
    for (uint32_t j = 0; !rc && j < nwait; j++) {
        uint32_t i = w->scratch[j];
        w->placed[i] = w->wplaced[j];
        w->waits[i] = 1;
        if (w->placed[i] != BERTH_KUBE_NONE)
            capacity_place(s, w->pods[i], w->placed[i]);
        else
            *unfit_why = w->why[j];
    }
    hide_others(w, nn, 0);
    return rc;
}

/* Replaces node n (reason r) by a new node of its group chosen within
 * capacity type `tier` (-1: the purchase order). 0 and a plan entry,
 * BERTH_ENOFIT with why (state unchanged), or BERTH_ENOMEM. */
static int replace_node(rwork *w, uint32_t n, berth_areason r, int tier, char *why, size_t size)
{
    capacity_pass *s = w->s;
    const berth_autoscale *m = s->m;
    capacity_node *c = &s->n[n];
    uint32_t g = (uint32_t)c->vng, np = 0;
    int now = r == BERTH_REPLACE_SPOT_INTERRUPTION;
    for (uint32_t p = 0; p < m->kube.npods; p++)
        if (s->pod_node[p] == n && capacity_pod_movable(s, p))
            w->pods[np++] = p;
    memcpy(w->scratch, w->pods, np * sizeof *w->pods);
    /* the old node goes: its group count and reservation are free for the new one */
    c->removed = 1;
    s->vng_nodes[g]--;
    give_back(s, n);
    uint32_t nn = BERTH_KUBE_NONE;
    int rc = capacity_open_hosting(s, g, w->scratch, np, tier, &nn, why, size);
    if (!rc) {
        for (uint32_t i = 0; i < np; i++)
            capacity_unplace(s, w->pods[i]);
        const char *unfit = NULL;
        rc = place_pods(w, nn, np, now, &unfit);
        for (uint32_t i = 0; !rc && i < np; i++)
            if (w->placed[i] == BERTH_KUBE_NONE) {
                const berth_kpod *kp = &m->kube.pods[w->pods[i]];
                snprintf(why, size, "pod %s/%s fits no node with the replacement: %s", kp->ns,
                         kp->name, unfit ? unfit : "no node fits");
                rc = BERTH_ENOFIT;
                break;
            }
        if (rc == BERTH_ENOFIT && now) {
            /* the node is reclaimed anyway: pods that fit nowhere stay pending */
            rc = 0;
            for (uint32_t i = 0; i < np && !rc; i++)
                if (w->placed[i] == BERTH_KUBE_NONE)
                    rc = capacity_add_unsched(s, w->pods[i], why);
        } else if (rc == BERTH_ENOFIT) {
            /* undo: drop the new node, put the pods back */
            for (uint32_t i = 0; i < np; i++) {
                capacity_unplace(s, w->pods[i]);
                capacity_place(s, w->pods[i], n);
            }
            s->n[nn].removed = 1;
            s->vng_nodes[g]--;
            give_back(s, nn);
            s->node_res[nn] = -1;
        }
    }
    if (rc) {
        s->n[n].removed = 0; /* (not c: opening the new node may move s->n) */
        s->vng_nodes[g]++;
        if (s->node_res[n] >= 0)
            s->res_left[s->node_res[n]] -= s->node_res_cost[n];
        return rc;
    }
    berth_aplan *p = s->plan;
    if (berth_grow((void **)&p->rep, &p->caprep, p->nrep + 1, sizeof *p->rep, 0))
        return BERTH_ENOMEM;
    berth_areplace *x = &p->rep[p->nrep];
    memset(x, 0, sizeof *x);
    x->moves = malloc((np + 1) * sizeof *x->moves);
    if (!x->moves)
        return BERTH_ENOMEM;
    p->nrep++;
    const capacity_node *c2 = &s->n[nn];
    x->node = n;
    x->reason = r;
    x->vng = g;
    x->type = (uint32_t)c2->type;
    x->capacity_type = (berth_capacity_type)c2->ct;
    x->zone = c2->zone;
    const berth_offering *of = berth_instance_offering(&m->types[c2->type], c2->zone,
                                                       (berth_capacity_type)c2->ct);
    x->price = of ? of->price : 0;
    x->reservation = s->node_res[nn] >= 0 ? m->res[s->node_res[nn]].name : NULL;
    x->new_node = c2->hyp->name;
    x->drain_immediately = now;
    for (uint32_t i = 0; i < np; i++) {
        uint32_t to = w->placed[i];
        if (to == BERTH_KUBE_NONE)
            continue;
        const char *name = to < s->nexisting ? s->n[to].k->name : s->n[to].hyp->name;
        x->moves[x->nmoves++] = (berth_arepmove){w->pods[i], name, w->waits[i]};
    }
    return 0;
}

static int check_options(const capacity_pass *s, const berth_aplan_options *opt, int *roll_g,
                         berth_error *e)
{
    const berth_autoscale *m = s->m;
    for (uint32_t i = 0; i < opt->ninterrupt; i++) {
        uint32_t n = 0;
        while (n < m->kube.nnodes && strcmp(m->kube.nodes[n].name, opt->interrupt[i]))
            n++;
        if (n == m->kube.nnodes)
            return berth_error_set(e, BERTH_EINVAL, "--interrupt: no node named '%s'",
                                   opt->interrupt[i]);
    }
    *roll_g = -1;
    if (opt->roll) {
        for (uint32_t g = 0; g < m->nvngs && *roll_g < 0; g++)
            if (!strcmp(m->vngs[g].name, opt->roll))
                *roll_g = (int)g;
        if (*roll_g < 0)
            return berth_error_set(e, BERTH_EINVAL, "--roll: no VirtualNodeGroup named '%s'",
                                   opt->roll);
    }
    if (opt->roll_percent < 0 || opt->roll_percent > 100)
        return berth_error_set(e, BERTH_EINVAL, "--roll: batch must be 1%%..100%%, got %lld%%",
                               (long long)opt->roll_percent);
    if (opt->has_autoheal_grace && opt->autoheal_grace < 0)
        return berth_error_set(e, BERTH_EINVAL, "--autoheal-grace must not be negative");
    return 0;
}

static int listed(const berth_aplan_options *opt, const char *name)
{
    for (uint32_t i = 0; i < opt->ninterrupt; i++)
        if (!strcmp(opt->interrupt[i], name))
            return 1;
    return 0;
}

int capacity_replace(capacity_pass *s, const berth_aplan_options *opt, berth_error *e)
{
    const berth_autoscale *m = s->m;
    int roll_g = -1;
    int rc = check_options(s, opt, &roll_g, e);
    if (rc)
        return rc;
    int64_t grace = opt->has_autoheal_grace ? opt->autoheal_grace : BERTH_AUTOHEAL_GRACE_DEFAULT;
    uint32_t np = m->kube.npods + 1;
    rwork w = {s, malloc(np * sizeof *w.pods), malloc(np * sizeof *w.scratch),
               malloc(np * sizeof *w.placed), malloc(np * sizeof *w.wpods),
               malloc(np * sizeof *w.wplaced), malloc(np), calloc(np, sizeof *w.why), s->nn};
    uint32_t *order = malloc((s->nexisting + 1) * sizeof *order);
    uint8_t *rolled = calloc(s->nexisting + 1, 1);
    if (!w.pods || !w.scratch || !w.placed || !w.wpods || !w.wplaced || !w.waits || !w.why ||
        !order || !rolled) {
        rc = BERTH_ENOMEM;
        goto out;
    }
    for (uint32_t i = 0; i < s->nexisting; i++)
        order[i] = i;
    qsort_r(order, s->nexisting, sizeof *order, by_name, s);
    if (roll_g >= 0) {
        /* the first batch, by name, of the group's nodes */
        int64_t cnt = 0, pct = opt->roll_percent ? opt->roll_percent : BERTH_ROLL_BATCH_DEFAULT;
        for (uint32_t i = 0; i < s->nexisting; i++)
            cnt += !s->n[i].removed && s->n[i].vng == roll_g;
        int64_t batch = (cnt * pct + 99) / 100;
        for (uint32_t i = 0; i < s->nexisting && batch > 0; i++)
            if (!s->n[order[i]].removed && s->n[order[i]].vng == roll_g) {
                rolled[order[i]] = 1;
                batch--;
            }
    }
    for (uint32_t oi = 0; oi < s->nexisting && !rc; oi++) {
        uint32_t n = order[oi];
        capacity_node *c = &s->n[n];
        const berth_knode *kn = c->k;
        if (c->removed)
            continue;
        char why[256] = "", msg[300];
        int forced = -1;
        if (listed(opt, kn->name))
            forced = BERTH_REPLACE_SPOT_INTERRUPTION;
        else if (kn->not_ready && (!kn->not_ready_since || opt->now - kn->not_ready_since > grace))
            forced = BERTH_REPLACE_AUTOHEAL;
        else if (rolled[n])
            forced = BERTH_REPLACE_ROLL;
        if (forced >= 0) {
            if (c->vng < 0) {
                snprintf(msg, sizeof msg, "%s: the node belongs to no virtual node group, so it "
                         "cannot be replaced", berth_replace_reason_name((berth_areason)forced));
                rc = capacity_add_blocked(s, n, msg);
                continue;
            }
            rc = replace_node(&w, n, (berth_areason)forced, -1, why, sizeof why);
            if (rc == BERTH_ENOFIT) {
                snprintf(msg, sizeof msg, "%s: no replacement: %s",
                         berth_replace_reason_name((berth_areason)forced), why);
                rc = capacity_add_blocked(s, n, msg);
            }
            continue;
        }
        /* cost replacements: nodes not already on a reservation */
        if (c->vng < 0 || s->node_res[n] >= 0 ||
            (c->ct != BERTH_CT_ON_DEMAND && c->ct != BERTH_CT_SPOT))
            continue;
        const berth_vng *v = &m->vngs[c->vng];
        rc = BERTH_ENOFIT;
        if (m->nres && (v->utilize_reserved || v->utilize_commitments))
            rc = replace_node(&w, n, BERTH_REPLACE_REVERT_TO_RESERVED, BERTH_CT_RESERVED, why,
                              sizeof why);
        c = &s->n[n]; /* replace_node may have opened a node and moved s->n */
        if (rc == BERTH_ENOFIT && c->ct == BERTH_CT_ON_DEMAND && wants_spot(s, (uint32_t)c->vng))
            rc = replace_node(&w, n, BERTH_REPLACE_REVERT_TO_SPOT, BERTH_CT_SPOT, why, sizeof why);
        if (rc == BERTH_ENOFIT)
            rc = 0;
    }
out:
    free(w.pods);
    free(w.scratch);
    free(w.placed);
    free(w.wpods);
    free(w.wplaced);
    free(w.waits);
    free(w.why);
    free(order);
    free(rolled);
    if (rc == BERTH_ENOMEM)
        rc = berth_error_set(e, rc, "out of memory planning replacements");
    return rc;
}
