/* disrupt/optimize.c - `--optimize` (issue item 5): a consolidation that
 * can beat Karpenter's one greedy command, under the same rules - the
 * allowances of every pool and reason at the start of the pass, candidates
 * only (so do-not-disrupt, PDBs, NodePool templates, consolidateAfter and
 * policies hold as for Karpenter), Karpenter's replacement price rules and
 * Balanced approval - on the plan's what-if session, each accepted move
 * kept for the next question:
 *   1. emptiness: the empty consolidatable candidates within the Empty
 *      allowance (as Karpenter), one delete;
 *   2. deletion: every consolidatable candidate (not only the first 100),
 *      least requested first (the larger of its cpu and memory fractions,
 *      then the higher price), is deleted when all its pods fit on the nodes
 *      left; one delete of all of them;
 *   3. groups: the remaining candidates, most expensive first, each starts
 *      a group that takes the next candidates (a window of GROUP_WINDOW, at
 *      most GROUP_MAX nodes) while Karpenter's consolidation decision for
 *      the group (delete, or replace by one strictly cheaper node) saves
 *      more; each accepted group is one command, at most
 *      DISRUPT_SPARE_SLOTS - 1 replacements.
 * The caller keeps Karpenter's plan unless this one is strictly better.
 * Work bound: phase 2 places each candidate's pods at most once and stops
 * after DELETE_FAILS failed tries; phase 3 runs at most GROUP_EVALS
 * consolidation decisions (each the scheduler's work for the group's pods
 * and the option filter) and stops after GROUP_UNPLACED leftover pods. */
#include "disrupt/state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GROUP_WINDOW 16
#define GROUP_MAX 8
#define GROUP_EVALS 1024
/* A pod that fits nowhere costs the scheduler's failure analysis (O(nodes)
 * reason strings): phase 2 stops after DELETE_FAILS failed tries (one such
 * pod each), phase 3 after GROUP_UNPLACED pods left over in its decisions. */
#define DELETE_FAILS 256
#define GROUP_UNPLACED 512

typedef struct opt_ctx {
    disrupt_state *s;
    berth_ksession *ks;
    int64_t (*al)[BERTH_DR_BUDGET_COUNT];
    uint8_t *used;              /* per node: taken by a move */
    uint32_t *moving, *placed;
    uint32_t nspare;            /* replacement slots used (from 1) */
    double *key;                /* sort keys per node */
} opt_ctx;

static int cmp_key_asc(const void *a, const void *b, void *ctx)
{
    const opt_ctx *sort_c = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    double kx = sort_c->key[x], ky = sort_c->key[y];
    if (kx != ky)
        return kx < ky ? -1 : 1;
    return (x > y) - (x < y);
}

/* The larger of the node's requested cpu and memory fractions, from the
 * pods that would move; lower first, then the higher price. */
static double requested_fraction(const disrupt_state *s, uint32_t n)
{
    const berth_kcluster *k = &s->m->kube;
    const berth_knode *kn = &k->nodes[n];
    double cpu = 0, mem = 0;
    for (uint32_t j = 0; j < s->n[n].npods; j++) {
        const berth_kpod *p = &k->pods[s->n[n].pods[j]];
        cpu += (double)p->req[BERTH_KRES_CPU];
        mem += (double)p->req[BERTH_KRES_MEMORY];
    }
    double fc = kn->alloc[BERTH_KRES_CPU] > 0 ? cpu / (double)kn->alloc[BERTH_KRES_CPU] : 0;
    double fm = kn->alloc[BERTH_KRES_MEMORY] > 0 ? mem / (double)kn->alloc[BERTH_KRES_MEMORY] : 0;
    return fc > fm ? fc : fm;
}

/* Keeps what the session did since the last commit: records the pods
 * placed onto real nodes so that later moves of those nodes take them. */
static void record_moves(opt_ctx *c, const uint32_t *pods, const uint32_t *placed, uint32_t n)
{
    disrupt_state *s = c->s;
    for (uint32_t i = 0; i < n; i++)
        if (placed[i] != BERTH_KUBE_NONE && placed[i] < s->nn) {
            s->in_next[pods[i]] = s->in_head[placed[i]];
            s->in_head[placed[i]] = pods[i];
        }
}

/* Moves the pods of nodes (with a new node for option o when o is not
 * NULL) for good; *ok 0 (and nothing changed) when some pod does not fit.
 * The pods are placed one by one in kube queue order (as one batch would
 * be), stopping at the first that does not fit. */
static int commit_move(opt_ctx *c, const uint32_t *nodes, uint32_t n, const disrupt_option *o,
                       int *ok)
{
    disrupt_state *s = c->s;
    uint64_t mk = berth_ksession_mark(c->ks);
    uint32_t nmove = 0;
    berth_error e;
    *ok = 0;
    int rc = disrupt_evict_nodes(s, nodes, n, c->moving, &nmove);
    if (!rc && o) {
        char name[48];
        snprintf(name, sizeof name, "berth-optimized-%u", c->nspare);
        const char *nm = berth_arena_strdup(&s->opt_arena, name);
        berth_knode hn;
        uint32_t at;
        rc = !nm ? BERTH_ENOMEM : disrupt_option_node(s, &s->opt_arena, o, nm, &hn);
        if (!rc)
            rc = berth_ksession_spare(c->ks, c->nspare, &hn, &at);
    }
    if (!rc) {
        berth_kube_queue_sort(&s->m->kube, c->moving, nmove);
        *ok = 1;
        for (uint32_t i = 0; i < nmove && *ok && !rc; i++) {
            rc = berth_ksession_place(c->ks, &c->moving[i], 1, &c->placed[i], NULL, NULL, &e);
            if (rc == BERTH_ENOFIT) {
                rc = 0;
                *ok = 0;
                s->unplaced++;
            }
        }
    }
    if (rc || !*ok) {
        int rb = berth_ksession_rollback(c->ks, mk);
        return rc ? rc : rb;
    }
    record_moves(c, c->moving, c->placed, nmove);
    /* the pools' usage for the limits of later questions */
    disrupt_limits_remove_nodes(s, nodes, n);
    if (o) {
        disrupt_limits_add(s, s->lim_used, o->pool, o->type, 1);
        c->nspare++;
    }
    return 0;
}

static int budget_left(const opt_ctx *c, uint32_t n, berth_dreason r)
{
    return c->al[c->s->n[n].pool][r] > 0;
}

static int add_delete(disrupt_state *s, berth_dplan *alt, const uint32_t *nodes, uint32_t n,
                      berth_dreason reason)
{
    berth_daction *a;
    int rc;
    if (!n)
        return 0;
    if ((rc = disrupt_add_action(alt, &a)) || (rc = disrupt_set_nodes(a, nodes, n, s)))
        return rc;
    a->reason = reason;
    return 0;
}

int disrupt_optimize(disrupt_state *s, const berth_dplan *karpenter, berth_dplan *alt)
{
    const berth_disrupt *m = s->m;
    memset(alt, 0, sizeof *alt);
    opt_ctx c = {s, disrupt_session(s), NULL, NULL, NULL, NULL, 1, NULL};
    if (!c.ks)
        return BERTH_ENOMEM;
    uint64_t base = berth_ksession_mark(c.ks);
    /* every question builds on the moves kept so far: the session path */
    int reference = s->reference;
    s->reference = 0;
    c.al = malloc((m->npools + 1) * sizeof *c.al);
    c.used = calloc(s->nn + 1, 1);
    c.moving = malloc((m->kube.npods + 1) * sizeof *c.moving);
    c.placed = malloc((m->kube.npods + 1) * sizeof *c.placed);
    c.key = malloc((s->nn + 1) * sizeof *c.key);
    s->in_head = malloc((s->nn + DISRUPT_SPARE_SLOTS + 1) * sizeof *s->in_head);
    s->in_next = malloc((m->kube.npods + 1) * sizeof *s->in_next);
    uint32_t *list = malloc((s->nn + 1) * sizeof *list);
    uint32_t *taken = malloc((s->nn + 1) * sizeof *taken);
    uint32_t *group = malloc((GROUP_MAX + 2) * sizeof *group);
    int64_t *lim_saved = malloc((s->nlim + 1) * sizeof *lim_saved);
    int rc = 0;
    if (lim_saved && s->nlim)
        memcpy(lim_saved, s->lim_used, s->nlim * sizeof *lim_saved);
    if (!c.al || !c.used || !c.moving || !c.placed || !c.key || !s->in_head || !s->in_next ||
        !list || !taken || !group || !lim_saved) {
        rc = BERTH_ENOMEM;
        goto out;
    }
    for (uint32_t i = 0; i < s->nn + DISRUPT_SPARE_SLOTS; i++)
        s->in_head[i] = BERTH_KUBE_NONE;
    for (uint32_t p = 0; p < m->npools; p++)
        memcpy(c.al[p], karpenter->pools[p].allowed, sizeof c.al[p]);
    /* Karpenter's expirations stand */
    for (uint32_t i = 0; i < karpenter->nactions; i++)
        if (karpenter->actions[i].reason == BERTH_DR_EXPIRED) {
            uint32_t n = karpenter->actions[i].nodes[0];
            if ((rc = add_delete(s, alt, &n, 1, BERTH_DR_EXPIRED)))
                goto out;
        }
    /* 1. emptiness */
    uint32_t nt = 0;
    for (uint32_t i = 0; i < s->norder; i++) {
        uint32_t n = s->order[i];
        const disrupt_node *d = &s->n[n];
        if (!d->empty || m->pools[d->pool].consolidate_after == BERTH_DURATION_NEVER ||
            !d->consolidatable || !budget_left(&c, n, BERTH_DR_EMPTY))
            continue;
        int ok;
        if ((rc = commit_move(&c, &n, 1, NULL, &ok)))
            goto out;
        if (!ok)
            continue;
        c.al[d->pool][BERTH_DR_EMPTY]--;
        c.used[n] = 1;
        taken[nt++] = n;
    }
    if ((rc = add_delete(s, alt, taken, nt, BERTH_DR_EMPTY)))
        goto out;
    /* 2. deletion, least requested first */
    uint32_t nl = 0;
    for (uint32_t i = 0; i < s->norder; i++) {
        uint32_t n = s->order[i];
        if (!c.used[n] && disrupt_consolidation_eligible(s, n)) {
            c.key[n] = requested_fraction(s, n) - s->n[n].price * 1e-9;
            list[nl++] = n;
        }
    }
    qsort_r(list, nl, sizeof *list, cmp_key_asc, (void *)&c);
    nt = 0;
    double saved = 0;
    uint32_t fails = 0;
    for (uint32_t i = 0; i < nl && fails < DELETE_FAILS; i++) {
        uint32_t n = list[i];
        if (!budget_left(&c, n, BERTH_DR_UNDERUTILIZED))
            continue;
        taken[nt] = n;
        if (!disrupt_balanced_ok(s, taken, nt + 1, saved + s->n[n].price))
            continue;
        int ok;
        if ((rc = commit_move(&c, &n, 1, NULL, &ok)))
            goto out;
        if (!ok) {
            fails++;
            continue;
        }
        c.al[s->n[n].pool][BERTH_DR_UNDERUTILIZED]--;
        c.used[n] = 1;
        saved += s->n[n].price;
        nt++;
    }
    if ((rc = add_delete(s, alt, taken, nt, BERTH_DR_UNDERUTILIZED)))
        goto out;
    /* 3. groups onto the nodes left plus one cheaper node, most expensive
     * first */
    uint32_t nr = 0;
    for (uint32_t i = 0; i < nl; i++)
        if (!c.used[list[i]]) {
            c.key[list[i]] = -s->n[list[i]].price;
            list[nr++] = list[i];
        }
    qsort_r(list, nr, sizeof *list, cmp_key_asc, (void *)&c);
    uint32_t evals = 0;
    uint64_t unplaced0 = s->unplaced;
    for (uint32_t i = 0; i < nr && evals < GROUP_EVALS && c.nspare < DISRUPT_SPARE_SLOTS &&
                         s->unplaced - unplaced0 < GROUP_UNPLACED;
         i++) {
        uint32_t first = list[i];
        if (c.used[first] || !budget_left(&c, first, BERTH_DR_UNDERUTILIZED))
            continue;
        uint32_t ng = 1;
        group[0] = first;
        int best = 0;
        double best_sav = 0;
        disrupt_repl best_r;
        memset(&best_r, 0, sizeof best_r);
        for (uint32_t j = i; j < nr && j <= i + GROUP_WINDOW && ng <= GROUP_MAX &&
                            evals < GROUP_EVALS && s->unplaced - unplaced0 < GROUP_UNPLACED;
             j++) {
            if (j > i) {
                uint32_t n = list[j];
                if (c.used[n] || ng == GROUP_MAX)
                    continue;
                /* the pool's allowance must cover the group */
                int64_t need = 1;
                for (uint32_t g = 0; g < ng; g++)
                    need += s->n[group[g]].pool == s->n[n].pool;
                if (c.al[s->n[n].pool][BERTH_DR_UNDERUTILIZED] < need)
                    continue;
                group[ng++] = n;
            }
            disrupt_repl r;
            char why[240] = "";
            int res = 0;
            evals++;
            if ((rc = disrupt_consolidate(s, group, ng, ng > 1, &r, why, sizeof why, &res)))
                goto out;
            double sav = 0;
            for (uint32_t g = 0; g < ng; g++)
                sav += s->n[group[g]].price;
            if (res == 2)
                sav -= disrupt_option_offering(s, &r.chosen)->price;
            if (res && (!best || sav > best_sav + 1e-12)) {
                best = res;
                best_sav = sav;
                best_r = r;
            } else if (j > i) {
                ng--; /* this node does not help: leave it out */
            }
        }
        /* group holds exactly the nodes of the best result (a node that did
         * not improve it was left out again) */
        if (!best)
            continue;
        int res = best;
        disrupt_repl r = best_r;
        int ok;
        if ((rc = commit_move(&c, group, ng, res == 2 ? &r.chosen : NULL, &ok)))
            goto out;
        if (!ok)
            continue;
        berth_daction *a;
        if ((rc = disrupt_add_action(alt, &a)) || (rc = disrupt_set_nodes(a, group, ng, s)) ||
            (res == 2 && (rc = disrupt_fill_repl(s, a, &r))))
            goto out;
        a->reason = BERTH_DR_UNDERUTILIZED;
        for (uint32_t g = 0; g < ng; g++) {
            c.used[group[g]] = 1;
            c.al[s->n[group[g]].pool][BERTH_DR_UNDERUTILIZED]--;
        }
    }
out:
    s->reference = reference;
    berth_ksession_rollback(c.ks, base);
    if (lim_saved && s->nlim)
        memcpy(s->lim_used, lim_saved, s->nlim * sizeof *lim_saved);
    free(lim_saved);
    free(s->in_head);
    free(s->in_next);
    s->in_head = s->in_next = NULL;
    free(c.al);
    free(c.used);
    free(c.moving);
    free(c.placed);
    free(c.key);
    free(list);
    free(taken);
    free(group);
    if (rc)
        berth_dplan_free(alt);
    return rc;
}
