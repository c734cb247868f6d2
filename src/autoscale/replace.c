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
 * Two paths give the same replacements: the plain one (reference) asks a
 * view of the whole cluster per candidate (capacity_schedule); the fast
 * one asks one what-if session for the pass (the old node's pods leave, a
 * spare slot stands for the new node, rejected questions roll back), with
 * the group and zone counts kept live (capacity_counts).
 * Work bound: docs/autoscale.md "Replacements". */
#include "autoscale/state.h"
#include "core/invariant.h"
#include "kube/fitindex.h"

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

/* The fast path's what-if session for the pass. It holds, between
 * questions, what a view holds: the existing nodes not removed with their
 * pods, and the scale-up's new nodes with theirs (spare slot 2r+1 for the
 * one whose name ranks r among them); the removed nodes are excluded and
 * empty; a replacement's new node and the pods that went to it are not
 * there (a view hides them from the later questions). A question's new
 * node takes spare slot 2r, r the scale-up nodes whose names sort before
 * its own, so spare nodes tie by name as in a view. */
typedef struct rfast {
    berth_ksession *ks;
    uint32_t nk;                  /* kube nodes (the session's real ones) */
    uint32_t *up, nup;            /* scale-up nodes by name */
    uint32_t *rank;               /* per new node below first_new: its slot's rank */
    uint32_t cur;                 /* the question's new node, in an even slot (NONE: none) */
    uint32_t *hid, *hid_node, nhid; /* spot interruption: the scale-up pods set aside */
    uint32_t *sp;                 /* session answers */
    uint64_t mark;
    berth_error err;
    capacity_counts cnt;
} rfast;

typedef struct rwork {
    capacity_pass *s;
    uint32_t *pods, *scratch, *placed, *wpods, *wplaced;
    uint8_t *waits;
    const char **why;
    uint32_t first_new;           /* the first new node opened by a replacement */
    rfast *f;                     /* the open session (NULL: reference, or not yet open) */
    rfast *lazy;                  /* the fast path's session before it opens (fast_need) */
} rwork;

/* Group g is below its spot share: spot nodes < ceil(spotPercentage x
 * non-reserved nodes / 100) (existing not removed, and new). */
static int wants_spot(const capacity_pass *s, uint32_t g)
{
    int64_t spot, total;
    capacity_group_counts(s, g, &spot, &total);
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

static int cmp_hyp_name(const void *a, const void *b, void *ctx)
{
    const capacity_pass *sort_s = ctx;
    return strcmp(sort_s->n[*(const uint32_t *)a].hyp->name,
                  sort_s->n[*(const uint32_t *)b].hyp->name);
}

static void fast_close(rfast *f)
{
    berth_ksession_close(f->ks);
    free(f->up);
    free(f->rank);
    free(f->hid);
    free(f->hid_node);
    free(f->sp);
    capacity_counts_free(&f->cnt);
    memset(f, 0, sizeof *f);
}

/* Opens the pass's session (the state the class comment describes). */
static int fast_open(rfast *f, capacity_pass *s, uint32_t first_new)
{
    const berth_kcluster *k = &s->m->kube;
    memset(f, 0, sizeof *f);
    f->nk = k->nnodes;
    f->cur = BERTH_KUBE_NONE;
    uint32_t nnew = first_new - s->nexisting;
    uint32_t *pn = malloc(((size_t)k->npods + 1) * sizeof *pn);
    f->up = malloc(((size_t)nnew + 1) * sizeof *f->up);
    f->rank = malloc(((size_t)nnew + 1) * sizeof *f->rank);
    f->hid = malloc(((size_t)k->npods + 1) * sizeof *f->hid);
    f->hid_node = malloc(((size_t)k->npods + 1) * sizeof *f->hid_node);
    f->sp = malloc(((size_t)k->npods + 1) * sizeof *f->sp);
    int rc = pn && f->up && f->rank && f->hid && f->hid_node && f->sp ? 0 : BERTH_ENOMEM;
    for (uint32_t n = s->nexisting; !rc && n < first_new; n++)
        if (!s->n[n].removed)
            f->up[f->nup++] = n;
    if (!rc) {
        qsort_r(f->up, f->nup, sizeof *f->up, cmp_hyp_name, s);
        for (uint32_t r = 0; r < f->nup; r++)
            f->rank[f->up[r] - s->nexisting] = r;
        for (uint32_t q = 0; q < k->npods; q++) {
            uint32_t n = s->pod_node[q];
            pn[q] = n != BERTH_KUBE_NONE && n < s->nexisting && !s->n[n].removed ? n
                                                                                : BERTH_KUBE_NONE;
        }
        rc = berth_ksession_open(&f->ks, k, pn, 2 * f->nup + 1, NULL, &f->err);
    }
    free(pn);
    if (!rc) {
        berth_ksession_set_cancel(f->ks, s->cancel);
        /* the per-node loops on the plan's threads (docs/autoscale.md
         * "Threads"; no worker started: the calling thread, same answers) */
        if (berth_ksession_set_threads(f->ks, s->threads) == BERTH_ENOMEM)
            rc = BERTH_ENOMEM;
    }
    for (uint32_t n = 0; !rc && n < s->nexisting; n++)
        if (s->n[n].removed)
            berth_ksession_exclude(f->ks, n, 1);
    uint32_t sn;
    for (uint32_t r = 0; !rc && r < f->nup; r++)
        rc = berth_ksession_spare(f->ks, 2 * r + 1, s->n[f->up[r]].hyp, &sn);
    for (uint32_t q = 0; !rc && q < k->npods; q++) {
        uint32_t n = s->pod_node[q];
        if (n != BERTH_KUBE_NONE && n >= s->nexisting && n < first_new && !s->n[n].removed)
            rc = berth_ksession_bind(f->ks, q, f->nk + 2 * f->rank[n - s->nexisting] + 1);
    }
    if (!rc) {
        berth_ksession_commit(f->ks);
        rc = capacity_counts_build(s, &f->cnt);
    }
    return rc;
}

/* The fast path's session and counts, opened by the pass's first need (a
 * question, or a group's spot share): a pass with nothing to replace opens
 * none (at 50,000 nodes the open is a tenth of a scale-down plan). Until
 * then the pass changes nothing a session copies, so a late open copies
 * what an eager one would have. */
static int fast_need(rwork *w)
{
    if (w->f || !w->lazy)
        return 0;
    int rc = fast_open(w->lazy, w->s, w->first_new);
    if (rc)
        return rc;
    w->f = w->lazy;
    w->s->cnt = &w->f->cnt;
    return 0;
}

/* session node -> pass node */
static uint32_t fast_cap(const rfast *f, uint32_t sn)
{
    if (sn == BERTH_KUBE_NONE || sn < f->nk)
        return sn;
    uint32_t slot = sn - f->nk;
    return slot & 1 ? f->up[slot >> 1] : f->cur;
}

/* pass node (existing or scale-up's, not the question's) -> session node */
static uint32_t fast_session(const rfast *f, const capacity_pass *s, uint32_t n)
{
    return n < f->nk ? n : f->nk + 2 * f->rank[n - s->nexisting] + 1;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The movable pods on node n in pod order (the scan's order), from the
 * session's list of the node. */
static uint32_t fast_pods_on(const rwork *w, uint32_t n)
{
    uint32_t c = 0, m;
    const uint32_t *on = berth_ksession_pods_on(w->f->ks, n, &m);
    for (uint32_t i = 0; i < m; i++) {
        BERTH_ASSERT(w->s->pod_node[on[i]] == n);
        if (capacity_pod_movable(w->s, on[i]))
            w->pods[c++] = on[i];
    }
    qsort(w->pods, c, sizeof *w->pods, cmp_u32);
    return c;
}

/* Every pod on session node sn leaves it (the last first: an evict
 * shortens the list from its end); with keep, each is noted with its node
 * in f->hid / f->hid_node (to be bound back). */
static int fast_empty(rfast *f, uint32_t sn, int keep)
{
    const uint32_t *on;
    uint32_t m;
    int rc = 0;
    while (!rc && (on = berth_ksession_pods_on(f->ks, sn, &m)) && m) {
        if (keep) {
            f->hid[f->nhid] = on[m - 1];
            f->hid_node[f->nhid++] = sn;
        }
        rc = berth_ksession_evict(f->ks, on[m - 1]);
    }
    return rc;
}

/* place_pods through the session: the old node n and its pods leave, the
 * new node nn takes its slot; on a spot interruption the scale-up's nodes
 * and their pods step aside for the first round. The changes stay until
 * fast_settle. */
static int place_fast(rwork *w, uint32_t n, uint32_t nn, uint32_t np, int now,
                      const char **unfit_why)
{
    capacity_pass *s = w->s;
    rfast *f = w->f;
    berth_ksession *ks = f->ks;
    f->mark = berth_ksession_mark(ks);
    int rc = fast_empty(f, n, 0);
    berth_ksession_exclude(ks, n, 1);
    for (uint32_t i = 0; i < np; i++) {
        w->placed[i] = BERTH_KUBE_NONE;
        w->waits[i] = 0;
    }
    const uint32_t *list = w->pods;
    uint32_t cnt = np;
    if (now && !rc) {
        /* first on the nodes registered now (as a view of the existing
         * nodes: the new ones, with their pods, are not there yet) */
        f->nhid = 0;
        for (uint32_t r = 0; r < f->nup && !rc; r++) {
            rc = fast_empty(f, f->nk + 2 * r + 1, 1);
            berth_ksession_exclude(ks, f->nk + 2 * r + 1, 1);
        }
        if (!rc)
            rc = berth_ksession_place(ks, w->pods, np, f->sp, NULL, NULL, &f->err);
        rc = rc == BERTH_ENOFIT ? 0 : rc;
        cnt = 0;
        for (uint32_t i = 0; i < np && !rc; i++) {
            if (f->sp[i] != BERTH_KUBE_NONE) {
                w->placed[i] = f->sp[i];
                capacity_place(s, w->pods[i], f->sp[i]);
            } else {
                w->scratch[cnt] = i;
                w->wpods[cnt++] = w->pods[i];
            }
        }
        /* then the rest waits for the new nodes: back with their pods */
        for (uint32_t r = 0; r < f->nup && !rc; r++)
            berth_ksession_exclude(ks, f->nk + 2 * r + 1, 0);
        for (uint32_t j = 0; j < f->nhid && !rc; j++)
            rc = berth_ksession_bind(ks, f->hid[j], f->hid_node[j]);
        list = w->wpods;
        if (!cnt)
            return rc;
    }
    /* the new node's slot: among the spare nodes in name order */
    uint32_t lo = 0, hi = f->nup, sn;
    const char *name = s->n[nn].hyp->name;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (strcmp(s->n[f->up[mid]].hyp->name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    f->cur = nn;
    if (!rc)
        rc = berth_ksession_spare(ks, 2 * lo, s->n[nn].hyp, &sn);
    if (!rc)
        rc = berth_ksession_place(ks, list, cnt, f->sp, w->why, s->arena, &f->err);
    rc = rc == BERTH_ENOFIT ? 0 : rc;
    for (uint32_t j = 0; j < cnt && !rc; j++) {
        uint32_t i = now ? w->scratch[j] : j, to = fast_cap(f, f->sp[j]);
        w->placed[i] = to;
        w->waits[i] = (uint8_t)now;
        if (to != BERTH_KUBE_NONE)
            capacity_place(s, w->pods[i], to);
        else
            *unfit_why = w->why[j];
    }
    return rc;
}

/* After a question: rejected (keep 0), its changes roll back; accepted,
 * the session is brought to the state the next view shows: node n gone
 * with its pods, the pods that moved to the other nodes there (assumed,
 * as the decisions placed them), the new node nn and its pods not there. */
static int fast_settle(rwork *w, uint32_t n, uint32_t nn, uint32_t np, int keep)
{
    rfast *f = w->f;
    int rc = berth_ksession_rollback(f->ks, f->mark);
    f->cur = BERTH_KUBE_NONE;
    if (rc || !keep)
        return rc;
    rc = fast_empty(f, n, 0);
    berth_ksession_exclude(f->ks, n, 1);
    for (uint32_t i = 0; i < np && !rc; i++) {
        uint32_t to = w->placed[i];
        if (to == BERTH_KUBE_NONE || to == nn)
            continue;
        if (NEVER(berth_ksession_placed(f->ks, w->pods[i])))
            return BERTH_EINVAL;
        rc = kube_session_assume(f->ks, w->pods[i],
                                 kube_session_node(f->ks, fast_session(f, w->s, to)));
    }
    berth_ksession_commit(f->ks);
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
    int now = r == BERTH_REPLACE_SPOT_INTERRUPTION, asked = 0;
    int rc = fast_need(w);
    if (rc)
        return rc;
    if (w->f)
        np = fast_pods_on(w, n);
    else
        for (uint32_t p = 0; p < m->kube.npods; p++)
            if (s->pod_node[p] == n && capacity_pod_movable(s, p))
                w->pods[np++] = p;
    memcpy(w->scratch, w->pods, np * sizeof *w->pods);
    /* the old node goes: its group count and reservation are free for the new one */
    c->removed = 1;
    s->vng_nodes[g]--;
    capacity_counts_add(s, n, -1);
    give_back(s, n);
    uint32_t nn = BERTH_KUBE_NONE;
    rc = capacity_open_hosting(s, g, w->scratch, np, tier, &nn, why, size);
    if (!rc) {
        for (uint32_t i = 0; i < np; i++)
            capacity_unplace(s, w->pods[i]);
        const char *unfit = NULL;
        asked = w->f != NULL;
        rc = w->f ? place_fast(w, n, nn, np, now, &unfit) : place_pods(w, nn, np, now, &unfit);
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
            capacity_counts_add(s, nn, -1);
            give_back(s, nn);
            s->node_res[nn] = -1;
        }
    }
    if (asked) {
        int src = fast_settle(w, n, nn, np, !rc);
        rc = rc ? rc : src;
        if (src && src != BERTH_ENOMEM && !w->f->err.msg[0])
            berth_error_set(&w->f->err, src, "what-if session refused a step (%d)", src);
    }
    if (rc) {
        s->n[n].removed = 0; /* (not c: opening the new node may move s->n) */
        s->vng_nodes[g]++;
        capacity_counts_add(s, n, 1);
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
    for (uint32_t i = 0; i < opt->ninterrupt; i++)
        if (berth_nameidx_find(&s->node_idx, opt->interrupt[i]) >= m->kube.nnodes)
            return berth_error_set(e, BERTH_EINVAL, "--interrupt: no node named '%s'",
                                   opt->interrupt[i]);
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
    uint8_t *rolled = calloc(s->nexisting + 1, 1), *interrupted = calloc(s->nexisting + 1, 1);
    rfast fast;
    memset(&fast, 0, sizeof fast);
    if (!w.pods || !w.scratch || !w.placed || !w.wpods || !w.wplaced || !w.waits || !w.why ||
        !order || !rolled || !interrupted) {
        rc = BERTH_ENOMEM;
        goto out;
    }
    /* the nodes named by --interrupt (names are unique: kube/load_node.c) */
    for (uint32_t i = 0; i < opt->ninterrupt; i++)
        interrupted[berth_nameidx_find(&s->node_idx, opt->interrupt[i])] = 1;
    if (!s->reference)
        w.lazy = &fast;
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
        if (interrupted[n])
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
        if (rc == BERTH_ENOFIT && c->ct == BERTH_CT_ON_DEMAND) {
            if ((rc = fast_need(&w)))
                break;
            rc = BERTH_ENOFIT;
            if (wants_spot(s, (uint32_t)c->vng))
                rc = replace_node(&w, n, BERTH_REPLACE_REVERT_TO_SPOT, BERTH_CT_SPOT, why,
                                  sizeof why);
        }
        if (rc == BERTH_ENOFIT)
            rc = 0;
    }
    if (rc && rc != BERTH_ENOMEM && fast.err.msg[0])
        rc = berth_error_set(e, rc, "%s", fast.err.msg);
out:
    s->cnt = NULL;
    fast_close(&fast);
    free(interrupted);
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
