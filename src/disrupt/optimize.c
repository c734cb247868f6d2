/* disrupt/optimize.c - `--optimize` (issues 5 and 18): a consolidation
 * that can beat Karpenter's one greedy command, under the same rules - the
 * allowances of every pool and reason at the start of the pass, candidates
 * only (so do-not-disrupt, PDBs, NodePool templates, consolidateAfter and
 * policies hold as for Karpenter), Karpenter's replacement price rules and
 * Balanced approval - on the plan's what-if session, each accepted move
 * kept for the next question:
 *   1. emptiness: the empty consolidatable candidates within the Empty
 *      allowance (as Karpenter), one delete;
 *   then trials, each from the state after 1, the one saving the most per
 *   hour kept (ties: more nodes gone). A trial takes an order of the
 *   consolidation candidates and runs rounds (at most TRIAL_ROUNDS, while a
 *   round replaces nodes: new nodes may leave room) of
 *   2. deletion: each candidate in the order is deleted when all its pods
 *      fit on the nodes left; one delete per round;
 *   3. groups: the remaining candidates, in the order, each start a group
 *      that takes the next ones (a window of GROUP_WINDOW, at most
 *      GROUP_MAX nodes) while Karpenter's consolidation decision for the
 *      group (delete, or replace by one strictly cheaper node) saves more;
 *      each accepted group one command, at most DISRUPT_SPARE_SLOTS - 1
 *      replacements.
 *   A trial may also run, first,
 *   P. prefix commands: Karpenter's multi-node consolidation repeated (the
 *      longest prefix of the candidates left, at most PREFIX_MAX, that its
 *      decision deletes or replaces by one strictly cheaper node, found by
 *      binary search as multinodeconsolidation.go firstNConsolidationOption
 *      does; a first candidate no prefix takes is passed over);
 *   F. fill commands (also after 2 in each round): groups of up to
 *      FILL_MAX candidates whose loads fill one new node of some option
 *      best (the option only shapes the group: Karpenter's decision, pods
 *      onto the nodes left first and the rest onto one strictly cheaper
 *      node, picks the replacement);
 *   and every trial ends with P over the candidates it kept. Every command
 *   is committed as Karpenter's decision placed it: its pods onto the nodes
 *   left in kube queue order, then the leftovers onto its one new node.
 *   The orders: by the saving a deletion buys (price per the cheapest
 *   price of the capacity its pods request), dearest first, by price minus
 *   that cost of its requests, least requested first; one trial runs 3
 *   before 2, two run F, two P; when budgets bind, one first deletes the
 *   within-budgets bound's choice (per pool the allowance's dearest
 *   candidates, at most BOUND_GROUP_MAX) as one command when Karpenter's
 *   decision allows it.
 *   Then SHAPE_TRIALS shape-front trials (the best order with the
 *   candidates whose pods have the shape of the staying nodes' free room
 *   first, as much as 1/2, 1, 2 times that room) and a local search from
 *   the best order (and its trial's phases): a candidate the base trial
 *   kept goes first (insert), one it deleted goes last (drop), or both at
 *   once (swap: the next insert and the next drop not yet tried as a
 *   swap), in turn; when none is left, a kick (a few random transpositions
 *   of the base order, fixed seed) whose trial becomes the base, better or
 *   not (iterated local search; the best plan is kept).
 * The caller keeps Karpenter's plan unless this one is strictly better.
 * Work bound: phase 2 places each candidate's pods at most once per round
 * and stops after DELETE_FAILS x max(1, FAIL_NODES / nodes) failed tries;
 * phase 3 runs at most GROUP_EVALS consolidation decisions (each the
 * scheduler's work for the group's pods and the option filter) and stops
 * after GROUP_UNPLACED x max(1, FAIL_NODES / nodes) leftover pods; P runs
 * at most PREFIX_EVALS decisions (each of at most PREFIX_MAX nodes' pods),
 * F at most FILL_EVALS decisions and FILL_SEEDS x FILL_OPTIONS x FILL_MAX
 * x FILL_WINDOW load comparisons, each stopping after the same leftover
 * pods as 3; every phase launches at most DISRUPT_SPARE_SLOTS - 1 new
 * nodes in a trial; at most MAX_TRIALS trials, a trial starting only while
 * the work so far plus the last trial's stays within max(TRIAL_WORK_FACTOR
 * x the first trial's, TRIAL_NODE_WORK / nodes, TRIAL_SMALL_WORK / nodes^2)
 * moves and decisions, and none after a trial that saves the ceiling (per
 * pool the prices of the allowance's dearest candidates, compared in
 * integer micro-dollars) (disrupt_optimize); shape-front and kick trials
 * count as trials, and building their orders costs one pass over the
 * nodes and pods (the staying room, once) and a sort of the candidates
 * per shape-front trial, O(candidates) per kick. */
#include "disrupt/state.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GROUP_WINDOW 16
#define GROUP_MAX 4
#define GROUP_EVALS 1024
/* A pod that fits nowhere costs the scheduler's failure analysis (O(nodes)
 * reason strings): phase 2 stops after DELETE_FAILS failed tries (one such
 * pod each), phase 3 after GROUP_UNPLACED pods left over in its decisions. */
#define DELETE_FAILS 256
#define GROUP_UNPLACED 512
/* ... both raised on estates of fewer than FAIL_NODES nodes by FAIL_NODES /
 * nodes (the same failure-analysis work as on FAIL_NODES nodes) */
#define FAIL_NODES 10000u
/* Trials (orders of phase 2 and local-search moves), see disrupt_optimize */
#define MAX_TRIALS 192
#define TRIAL_WORK_FACTOR 2
#define TRIAL_NODE_WORK 6000000u
/* ... and on estates below about 800 nodes TRIAL_SMALL_WORK / nodes^2: a
 * unit of work there costs about nodes, so the search costs at most
 * TRIAL_SMALL_WORK / nodes node-moves, what TRIAL_NODE_WORK allows at 800
 * nodes (issue 18: more local search where it is cheap) */
#define TRIAL_SMALL_WORK 4800000000u
/* rounds of phases 2 and 3 in a trial, while a round replaces nodes */
#define TRIAL_ROUNDS 8
/* the within-budgets group of a MODE_BOUND_GROUP trial: Karpenter's
 * multi-node limit */
#define BOUND_GROUP_MAX 100
/* prefix commands (MODE_PREFIX): Karpenter's multi-node consolidation
 * repeated on the optimiser's order, at most PREFIX_MAX nodes a command
 * (its batch limit) and PREFIX_EVALS consolidation decisions a trial */
#define PREFIX_MAX 100
#define PREFIX_EVALS 256
/* fill commands (MODE_FILL): per seed candidate (at most FILL_SEEDS a
 * phase) and new-node option (at most FILL_OPTIONS: per type the cheapest,
 * the lowest price per capacity first) a group of at most FILL_MAX nodes
 * among the FILL_WINDOW candidates after the seed in the order, so at most
 * FILL_SEEDS x FILL_OPTIONS x FILL_MAX x FILL_WINDOW load comparisons and
 * FILL_EVALS consolidation decisions a phase */
#define FILL_MAX 32
#define FILL_WINDOW 64
#define FILL_OPTIONS 32
#define FILL_EVALS 256
#define FILL_SEEDS 256
/* kicks of the local search (iterated local search, issue 18 item 1): when
 * no insert, drop or swap is left, KICK_SWAPS_MIN + (kick number %
 * KICK_SWAPS_SPAN) random transpositions of the local search's base order,
 * drawn from KICK_SEED (the same plan on every run) */
#define KICK_SWAPS_MIN 2
#define KICK_SWAPS_SPAN 3
#define KICK_SEED 0x9e3779b97f4a7c15ull
/* ... at most KICKS_PER_CANDIDATE x candidates kicks (a tiny estate has few
 * orders worth trying) */
#define KICKS_PER_CANDIDATE 4
/* shape-front trials, after the orders: candidates of the staying nodes'
 * free-room shape in front, as much load as 1/2, 1, 2, ... times that room */
#define SHAPE_TRIALS 3
enum { MODE_GROUPS_FIRST = 1, MODE_BOUND_GROUP = 2, MODE_PREFIX = 4, MODE_FILL = 8 };

enum { ORD_SAVING, ORD_PRICE, ORD_NET, ORD_FRACTION };

typedef struct opt_ctx {
    disrupt_state *s;
    berth_ksession *ks;
    int64_t (*al)[BERTH_DR_BUDGET_COUNT];
    uint8_t *used;              /* per node: taken by a move */
    uint32_t *moving, *placed, *left;
    uint32_t nspare;            /* replacement slots used (from 1) */
    double *key;                /* sort keys per node */
    uint8_t *skip;              /* per node: passed over by the prefix commands */
    double *load;               /* per node: cpu, memory, pods that would move (fill) */
    uint32_t *fopt, nfopt;      /* the options that shape fill groups */
    uint64_t max_fails, max_unplaced; /* DELETE_FAILS, GROUP_UNPLACED, scaled */
    int balanced;               /* some pool's policy is Balanced */
} opt_ctx;

/* xorshift64: the kicks' positions (the state is the caller's) */
static uint64_t xorshift(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static int cmp_key_asc(const void *a, const void *b, void *ctx)
{
    const opt_ctx *sort_c = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    double kx = sort_c->key[x], ky = sort_c->key[y];
    if (kx != ky)
        return kx < ky ? -1 : 1;
    return (x > y) - (x < y);
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
 * As Karpenter's simulation decided the command (and disrupt_consolidate
 * did): the pods are placed in kube queue order onto the nodes left, then
 * the leftovers onto the new node. Without a new node the pods are placed
 * one by one, stopping at the first that does not fit. */
static int commit_move(opt_ctx *c, const uint32_t *nodes, uint32_t n, const disrupt_option *o,
                       int *ok)
{
    disrupt_state *s = c->s;
    uint64_t mk = berth_ksession_mark(c->ks);
    uint32_t nmove = 0;
    berth_error e;
    *ok = 0;
    int rc = disrupt_evict_nodes(s, nodes, n, c->moving, &nmove);
    if (!rc) {
        berth_kube_queue_sort(&s->m->kube, c->moving, nmove);
        *ok = 1;
    }
    if (!rc && o) {
        /* the nodes left first (one batch, as the decision placed them) */
        rc = berth_ksession_place(c->ks, c->moving, nmove, c->placed, NULL, NULL, &e);
        if (rc == BERTH_ENOFIT)
            rc = 0;
        uint32_t nleft = 0;
        for (uint32_t i = 0; !rc && i < nmove; i++)
            if (c->placed[i] == BERTH_KUBE_NONE)
                c->left[nleft++] = c->moving[i];
        s->unplaced += nleft;
        char name[48];
        snprintf(name, sizeof name, "berth-optimized-%u", c->nspare);
        const char *nm = rc ? NULL : berth_arena_strdup(&s->opt_arena, name);
        berth_knode hn;
        uint32_t at;
        if (!rc)
            rc = !nm ? BERTH_ENOMEM : disrupt_option_node(s, &s->opt_arena, o, nm, &hn);
        if (!rc)
            rc = berth_ksession_spare(c->ks, c->nspare, &hn, &at);
        for (uint32_t i = 0; i < nleft && *ok && !rc; i++) {
            uint32_t pl;
            rc = berth_ksession_place(c->ks, &c->left[i], 1, &pl, NULL, NULL, &e);
            if (rc == BERTH_ENOFIT) {
                rc = 0;
                *ok = 0;
            }
        }
        /* kept: the pods placed onto real nodes (c->placed is the batch's) */
        if (!rc && *ok)
            record_moves(c, c->moving, c->placed, nmove);
    } else if (!rc) {
        for (uint32_t i = 0; i < nmove && *ok && !rc; i++) {
            rc = berth_ksession_place(c->ks, &c->moving[i], 1, &c->placed[i], NULL, NULL, &e);
            if (rc == BERTH_ENOFIT) {
                rc = 0;
                *ok = 0;
                s->unplaced++;
            }
        }
        if (!rc && *ok)
            record_moves(c, c->moving, c->placed, nmove);
    }
    if (rc || !*ok) {
        int rb = berth_ksession_rollback(c->ks, mk);
        return rc ? rc : rb;
    }
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

/* The trial's phases 2 and 3 with `order` for phase 2, appended to t;
 * *work += the moves tried and consolidation decisions run. */
static int trial_delete(opt_ctx *c, const uint32_t *order, uint32_t nl, uint32_t *taken,
                        berth_dplan *t, uint64_t *work)
{
    disrupt_state *s = c->s;
    int rc = 0;
    /* 2. deletion in the given order */
    uint32_t nt = 0;
    double saved = 0;
    uint32_t fails = 0;
    for (uint32_t i = 0; i < nl && fails < c->max_fails; i++) {
        uint32_t n = order[i];
        if (c->used[n] || !budget_left(c, n, BERTH_DR_UNDERUTILIZED))
            continue;
        taken[nt] = n;
        /* without a Balanced pool every move is approved: the check (linear
         * in the nodes taken so far) is skipped */
        if (c->balanced && !disrupt_balanced_ok(s, taken, nt + 1, saved + s->n[n].price))
            continue;
        int ok;
        (*work)++;
        if ((rc = commit_move(c, &n, 1, NULL, &ok)))
            return rc;
        if (!ok) {
            fails++;
            continue;
        }
        c->al[s->n[n].pool][BERTH_DR_UNDERUTILIZED]--;
        c->used[n] = 1;
        saved += s->n[n].price;
        nt++;
    }
    return add_delete(s, t, taken, nt, BERTH_DR_UNDERUTILIZED);
}

static int trial_groups(opt_ctx *c, const uint32_t *order, uint32_t nl, uint32_t *rest,
                        uint32_t *group, berth_dplan *t, uint64_t *work)
{
    disrupt_state *s = c->s;
    int rc = 0;
    /* 3. groups onto the nodes left plus one cheaper node, in the trial's
     * order */
    uint32_t nr = 0;
    for (uint32_t i = 0; i < nl; i++)
        if (!c->used[order[i]] && budget_left(c, order[i], BERTH_DR_UNDERUTILIZED))
            rest[nr++] = order[i];
    uint32_t evals = 0;
    uint64_t unplaced0 = s->unplaced;
    for (uint32_t i = 0; i < nr && evals < GROUP_EVALS && c->nspare < DISRUPT_SPARE_SLOTS &&
                         s->unplaced - unplaced0 < c->max_unplaced;
         i++) {
        uint32_t first = rest[i];
        if (c->used[first] || !budget_left(c, first, BERTH_DR_UNDERUTILIZED))
            continue;
        uint32_t ng = 1;
        group[0] = first;
        int best = 0;
        double best_sav = 0;
        disrupt_repl best_r;
        memset(&best_r, 0, sizeof best_r);
        for (uint32_t j = i; j < nr && j <= i + GROUP_WINDOW && ng <= GROUP_MAX &&
                            evals < GROUP_EVALS && s->unplaced - unplaced0 < c->max_unplaced;
             j++) {
            if (j > i) {
                uint32_t n = rest[j];
                if (c->used[n] || ng == GROUP_MAX)
                    continue;
                /* the pool's allowance must cover the group */
                int64_t need = 1;
                for (uint32_t g = 0; g < ng; g++)
                    need += s->n[group[g]].pool == s->n[n].pool;
                if (c->al[s->n[n].pool][BERTH_DR_UNDERUTILIZED] < need)
                    continue;
                group[ng++] = n;
            }
            disrupt_repl r;
            char why[240] = "";
            int res = 0;
            evals++;
            (*work)++;
            if ((rc = disrupt_consolidate(s, group, ng, ng > 1, &r, why, sizeof why, &res)))
                return rc;
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
        if ((rc = commit_move(c, group, ng, res == 2 ? &r.chosen : NULL, &ok)))
            return rc;
        if (!ok)
            continue;
        berth_daction *a;
        if ((rc = disrupt_add_action(t, &a)) || (rc = disrupt_set_nodes(a, group, ng, s)) ||
            (res == 2 && (rc = disrupt_fill_repl(s, a, &r))))
            return rc;
        a->reason = BERTH_DR_UNDERUTILIZED;
        for (uint32_t g = 0; g < ng; g++) {
            c->used[group[g]] = 1;
            c->al[s->n[group[g]].pool][BERTH_DR_UNDERUTILIZED]--;
        }
    }
    return 0;
}

/* A price per hour in micro-dollars: trials' savings are compared as
 * integers, so that two sums of the same prices in another order compare
 * equal (a trial that reaches the ceiling below stops the search). */
static int64_t micro(double price)
{
    return (int64_t)llround(price * 1e6);
}

/* What a trial saves per hour (micro-dollars) and the nodes it removes
 * net. */
static int64_t trial_saving(const disrupt_state *s, const berth_dplan *t, int64_t *net)
{
    int64_t sav = 0;
    *net = 0;
    for (uint32_t i = 0; i < t->nactions; i++) {
        const berth_daction *a = &t->actions[i];
        for (uint32_t j = 0; j < a->nnodes; j++)
            sav += micro(s->n[a->nodes[j]].price);
        for (uint32_t j = 0; j < a->nreplacements; j++)
            sav -= micro(a->replacements[j].price);
        *net += (int64_t)a->nnodes - (int64_t)a->nreplacements;
    }
    return sav;
}

/* The most any trial can save (micro-dollars) and remove: per pool the
 * prices of its Underutilized allowance's dearest candidates (a trial
 * deletes only candidates, within the allowances, and a replacement only
 * costs). A trial that reaches both cannot be beaten. tmp: room for nl
 * nodes, left for the pools; c->key is overwritten. */
static void trial_ceiling(opt_ctx *c, const uint32_t *list, uint32_t nl, uint32_t *tmp,
                          int64_t *left, int64_t *sav, int64_t *net)
{
    const disrupt_state *s = c->s;
    *sav = *net = 0;
    for (uint32_t i = 0; i < nl; i++) {
        c->key[list[i]] = -s->n[list[i]].price;
        tmp[i] = list[i];
    }
    qsort_r(tmp, nl, sizeof *tmp, cmp_key_asc, c);
    for (uint32_t p = 0; p < s->m->npools; p++)
        left[p] = c->al[p][BERTH_DR_UNDERUTILIZED];
    for (uint32_t i = 0; i < nl; i++) {
        int p = s->n[tmp[i]].pool;
        if (left[p] > 0) {
            left[p]--;
            *sav += micro(s->n[tmp[i]].price);
            (*net)++;
        }
    }
}

/* One trial: phase 2 with `order`, then phase 3 (groups_first: phase 3,
 * then phase 2), its actions appended to t; *work += the moves tried and
 * consolidation decisions run. */
/* The within-budgets bound's choice as one command: per pool, its
 * Underutilized allowance of the candidates first in `order` (dearest
 * first), at most BOUND_GROUP_MAX nodes in all (Karpenter's multi-node
 * limit), deleted or replaced by one node when Karpenter's decision for the
 * group allows it; nothing when it does not. */
static int trial_bound_group(opt_ctx *c, const uint32_t *order, uint32_t nl, uint32_t *taken,
                             berth_dplan *t, uint64_t *work)
{
    disrupt_state *s = c->s;
    uint32_t ng = 0;
    for (uint32_t i = 0; i < nl && ng < BOUND_GROUP_MAX; i++) {
        uint32_t n = order[i];
        if (c->used[n])
            continue;
        int64_t in_pool = 0;
        for (uint32_t g = 0; g < ng; g++)
            in_pool += s->n[taken[g]].pool == s->n[n].pool;
        if (c->al[s->n[n].pool][BERTH_DR_UNDERUTILIZED] > in_pool)
            taken[ng++] = n;
    }
    if (ng < 2)
        return 0;
    disrupt_repl r;
    char why[240] = "";
    int res = 0, ok = 0, rc;
    (*work)++;
    if ((rc = disrupt_consolidate(s, taken, ng, 1, &r, why, sizeof why, &res)) || !res)
        return rc;
    if ((rc = commit_move(c, taken, ng, res == 2 ? &r.chosen : NULL, &ok)) || !ok)
        return rc;
    berth_daction *a;
    if ((rc = disrupt_add_action(t, &a)) || (rc = disrupt_set_nodes(a, taken, ng, s)) ||
        (res == 2 && (rc = disrupt_fill_repl(s, a, &r))))
        return rc;
    a->reason = BERTH_DR_UNDERUTILIZED;
    for (uint32_t g = 0; g < ng; g++) {
        c->used[taken[g]] = 1;
        c->al[s->n[taken[g]].pool][BERTH_DR_UNDERUTILIZED]--;
    }
    return 0;
}

/* Prefix commands: Karpenter's multi-node consolidation
 * (multinodeconsolidation.go firstNConsolidationOption) repeated: the
 * candidates left in `order` within the allowances (at most PREFIX_MAX),
 * a binary search for the longest prefix that Karpenter's decision deletes
 * or replaces by one strictly cheaper node, that prefix one command, kept
 * for the next; when no prefix of two or more goes, the first candidate is
 * passed over. */
static int trial_prefix(opt_ctx *c, const uint32_t *order, uint32_t nl, uint32_t *taken,
                        uint8_t *skip, berth_dplan *t, uint64_t *work)
{
    disrupt_state *s = c->s;
    int rc = 0;
    uint32_t evals = 0;
    uint64_t unplaced0 = s->unplaced;
    memset(skip, 0, s->nn);
    int64_t(*al)[BERTH_DR_BUDGET_COUNT] = c->al;
    while (evals < PREFIX_EVALS && c->nspare < DISRUPT_SPARE_SLOTS &&
           s->unplaced - unplaced0 < c->max_unplaced) {
        uint32_t ng = 0;
        for (uint32_t i = 0; i < nl && ng < PREFIX_MAX; i++) {
            uint32_t n = order[i];
            if (c->used[n] || skip[n])
                continue;
            int64_t in_pool = 0;
            for (uint32_t g = 0; g < ng; g++)
                in_pool += s->n[taken[g]].pool == s->n[n].pool;
            if (al[s->n[n].pool][BERTH_DR_UNDERUTILIZED] > in_pool)
                taken[ng++] = n;
        }
        if (ng < 2)
            break;
        uint32_t lo = 1, hi = ng - 1, best_len = 0;
        int best = 0;
        disrupt_repl best_r;
        memset(&best_r, 0, sizeof best_r);
        while (lo <= hi && evals < PREFIX_EVALS) {
            uint32_t mid = (lo + hi) / 2;
            disrupt_repl r;
            char why[240] = "";
            int res = 0;
            evals++;
            (*work)++;
            if ((rc = disrupt_consolidate(s, taken, mid + 1, 1, &r, why, sizeof why, &res)))
                return rc;
            if (res) {
                best = res;
                best_len = mid + 1;
                best_r = r;
                lo = mid + 1;
            } else {
                if (mid == 1)
                    break;
                hi = mid - 1;
            }
        }
        int ok = 0;
        if (best && (rc = commit_move(c, taken, best_len, best == 2 ? &best_r.chosen : NULL, &ok)))
            return rc;
        if (!ok) {
            skip[taken[0]] = 1;
            continue;
        }
        berth_daction *a;
        if ((rc = disrupt_add_action(t, &a)) || (rc = disrupt_set_nodes(a, taken, best_len, s)) ||
            (best == 2 && (rc = disrupt_fill_repl(s, a, &best_r))))
            return rc;
        a->reason = BERTH_DR_UNDERUTILIZED;
        for (uint32_t g = 0; g < best_len; g++) {
            c->used[taken[g]] = 1;
            al[s->n[taken[g]].pool][BERTH_DR_UNDERUTILIZED]--;
        }
    }
    return 0;
}

/* What would move off node n now (cpu, memory, pods): its own pods still
 * on it and those moved onto it. */
static void node_load(const opt_ctx *c, uint32_t n, double v[3])
{
    const disrupt_state *s = c->s;
    const berth_kcluster *k = &s->m->kube;
    v[0] = v[1] = v[2] = 0;
    for (uint32_t j = 0; j < s->n[n].npods; j++) {
        uint32_t p = s->n[n].pods[j];
        if (berth_ksession_node_of(c->ks, p) != n || !disrupt_pod_moves(s, p))
            continue;
        v[0] += (double)k->pods[p].req[BERTH_KRES_CPU];
        v[1] += (double)k->pods[p].req[BERTH_KRES_MEMORY];
        v[2] += 1;
    }
    for (uint32_t p = s->in_head[n]; p != BERTH_KUBE_NONE; p = s->in_next[p]) {
        if (berth_ksession_node_of(c->ks, p) != n)
            continue;
        v[0] += (double)k->pods[p].req[BERTH_KRES_CPU];
        v[1] += (double)k->pods[p].req[BERTH_KRES_MEMORY];
        v[2] += 1;
    }
}

/* Fill commands: each candidate left in `order` (a seed) starts, per
 * new-node option (the FILL_OPTIONS cheapest types), a group that takes,
 * among the FILL_WINDOW candidates after the seed, the one whose load
 * fills the option's node most (cpu and memory fractions summed) while
 * the group's load fits it, up to FILL_MAX nodes; the group with the
 * largest price minus the option's price is proposed to Karpenter's
 * decision (its pods go to the nodes left first, then to one strictly
 * cheaper new node) and committed when it goes. The option only shapes
 * the group: the decision picks the replacement as the plain pass does. */
static int trial_fill(opt_ctx *c, const uint32_t *order, uint32_t nl, uint32_t *rest,
                      uint32_t *taken, berth_dplan *t, uint64_t *work)
{
    disrupt_state *s = c->s;
    double *load = c->load;
    const uint32_t *fopt = c->fopt;
    uint32_t nfopt = c->nfopt;
    int rc = 0;
    uint32_t nr = 0;
    for (uint32_t i = 0; i < nl; i++)
        if (!c->used[order[i]] && budget_left(c, order[i], BERTH_DR_UNDERUTILIZED))
            rest[nr++] = order[i];
    for (uint32_t i = 0; i < nr; i++)
        node_load(c, rest[i], &load[3 * (size_t)rest[i]]);
    uint32_t evals = 0;
    uint64_t unplaced0 = s->unplaced;
    uint32_t group[FILL_MAX], cand[FILL_WINDOW], seeds = 0;
    uint8_t ingrp[FILL_WINDOW];
    for (uint32_t i = 0; i < nr && evals < FILL_EVALS && seeds < FILL_SEEDS &&
                         c->nspare < DISRUPT_SPARE_SLOTS && s->unplaced - unplaced0 < c->max_unplaced;
         i++) {
        uint32_t seed = rest[i];
        if (c->used[seed] || !budget_left(c, seed, BERTH_DR_UNDERUTILIZED))
            continue;
        seeds++;
        uint32_t nc = 0;
        for (uint32_t j = i + 1; j < nr && nc < FILL_WINDOW; j++)
            if (!c->used[rest[j]])
                cand[nc++] = rest[j];
        double best_est = 0;
        uint32_t best_ng = 0;
        for (uint32_t oi = 0; oi < nfopt; oi++) {
            const berth_knode *on = &s->opt_nodes[fopt[oi]];
            double cap[3] = {(double)on->alloc[BERTH_KRES_CPU],
                             (double)on->alloc[BERTH_KRES_MEMORY], (double)on->alloc_pods};
            double oprice = disrupt_option_offering(s, &s->opts[fopt[oi]])->price;
            const double *sv = &load[3 * (size_t)seed];
            if (sv[0] > cap[0] || sv[1] > cap[1] || sv[2] > cap[2] || cap[0] <= 0 || cap[1] <= 0)
                continue;
            double ld[3] = {sv[0], sv[1], sv[2]}, price = s->n[seed].price;
            uint32_t ng = 1;
            taken[0] = seed;
            /* per window slot: 1 in the group, 2 left out (its pool's
             * allowance does not cover the group) */
            memset(ingrp, 0, nc);
            while (ng < FILL_MAX) {
                int pick = -1;
                double pf = 0;
                for (uint32_t j = 0; j < nc; j++) {
                    const double *v = &load[3 * (size_t)cand[j]];
                    if (ingrp[j] || ld[0] + v[0] > cap[0] || ld[1] + v[1] > cap[1] ||
                        ld[2] + v[2] > cap[2])
                        continue;
                    double f = (ld[0] + v[0]) / cap[0] + (ld[1] + v[1]) / cap[1];
                    if (pick < 0 || f > pf) {
                        pick = (int)j;
                        pf = f;
                    }
                }
                if (pick < 0)
                    break;
                uint32_t n = cand[pick];
                /* the pool's allowance must cover the group */
                int64_t need = 1;
                for (uint32_t g = 0; g < ng; g++)
                    need += s->n[taken[g]].pool == s->n[n].pool;
                if (c->al[s->n[n].pool][BERTH_DR_UNDERUTILIZED] < need) {
                    ingrp[pick] = 2;
                    continue;
                }
                ingrp[pick] = 1;
                const double *v = &load[3 * (size_t)n];
                for (int r = 0; r < 3; r++)
                    ld[r] += v[r];
                price += s->n[n].price;
                taken[ng++] = n;
            }
            if (ng >= 2 && price - oprice > best_est + 1e-12) {
                best_est = price - oprice;
                best_ng = ng;
                memcpy(group, taken, ng * sizeof *group);
            }
        }
        if (!best_ng)
            continue;
        disrupt_repl r;
        char why[240] = "";
        int res = 0, ok = 0;
        evals++;
        (*work)++;
        if ((rc = disrupt_consolidate(s, group, best_ng, 1, &r, why, sizeof why, &res)))
            return rc;
        if (!res)
            continue;
        if ((rc = commit_move(c, group, best_ng, res == 2 ? &r.chosen : NULL, &ok)))
            return rc;
        if (!ok)
            continue;
        berth_daction *a;
        if ((rc = disrupt_add_action(t, &a)) || (rc = disrupt_set_nodes(a, group, best_ng, s)) ||
            (res == 2 && (rc = disrupt_fill_repl(s, a, &r))))
            return rc;
        a->reason = BERTH_DR_UNDERUTILIZED;
        for (uint32_t g = 0; g < best_ng; g++) {
            c->used[group[g]] = 1;
            c->al[s->n[group[g]].pool][BERTH_DR_UNDERUTILIZED]--;
        }
        /* the nodes that received pods carry more now */
        for (uint32_t j = i + 1; j < nr; j++)
            if (!c->used[rest[j]])
                node_load(c, rest[j], &load[3 * (size_t)rest[j]]);
    }
    return 0;
}

static int run_trial(opt_ctx *c, const uint32_t *order, uint32_t nl, int mode, uint32_t *rest,
                     uint32_t *taken, uint32_t *group, berth_dplan *t, uint64_t *work)
{
    int rc = 0, groups_first = mode & MODE_GROUPS_FIRST;
    if ((mode & MODE_BOUND_GROUP) && (rc = trial_bound_group(c, order, nl, taken, t, work)))
        return rc;
    if ((mode & MODE_PREFIX) && (rc = trial_prefix(c, order, nl, taken, c->skip, t, work)))
        return rc;
    if ((mode & MODE_FILL) && (rc = trial_fill(c, order, nl, rest, taken, t, work)))
        return rc;
    for (uint32_t round = 0; round < TRIAL_ROUNDS && !rc; round++) {
        uint32_t n0 = t->nactions;
        if (groups_first)
            rc = trial_groups(c, order, nl, rest, group, t, work);
        else
            rc = trial_delete(c, order, nl, taken, t, work);
        if (rc)
            break;
        if (!rc && (mode & MODE_FILL))
            rc = trial_fill(c, order, nl, rest, taken, t, work);
        if (rc)
            break;
        if (groups_first)
            rc = trial_delete(c, order, nl, taken, t, work);
        else
            rc = trial_groups(c, order, nl, rest, group, t, work);
        /* a round that replaced nodes may have left room on the new ones */
        int replaced = 0;
        for (uint32_t i = n0; i < t->nactions; i++)
            replaced |= t->actions[i].nreplacements > 0;
        if (!replaced)
            break;
    }
    /* 4. the candidates still kept: prefix commands over them */
    if (!rc)
        rc = trial_prefix(c, order, nl, taken, c->skip, t, work);
    return rc;
}

/* The state a trial starts from (after phase 1), restored after each. */
typedef struct opt_snap {
    uint64_t mark;
    int64_t (*al)[BERTH_DR_BUDGET_COUNT];
    uint8_t *used;
    uint32_t *in_head, *in_next;
    int64_t *lim;
    uint32_t nspare;
} opt_snap;

static void snap_take(const opt_ctx *c, opt_snap *sn)
{
    const disrupt_state *s = c->s;
    sn->mark = berth_ksession_mark(c->ks);
    memcpy(sn->al, c->al, s->m->npools * sizeof *c->al);
    memcpy(sn->used, c->used, s->nn);
    memcpy(sn->in_head, s->in_head, (s->nn + DISRUPT_SPARE_SLOTS) * sizeof *s->in_head);
    memcpy(sn->in_next, s->in_next, s->m->kube.npods * sizeof *s->in_next);
    if (s->nlim)
        memcpy(sn->lim, s->lim_used, s->nlim * sizeof *sn->lim);
    sn->nspare = c->nspare;
}

static int snap_restore(opt_ctx *c, const opt_snap *sn)
{
    disrupt_state *s = c->s;
    memcpy(c->al, sn->al, s->m->npools * sizeof *c->al);
    memcpy(c->used, sn->used, s->nn);
    memcpy(s->in_head, sn->in_head, (s->nn + DISRUPT_SPARE_SLOTS) * sizeof *s->in_head);
    memcpy(s->in_next, sn->in_next, s->m->kube.npods * sizeof *s->in_next);
    if (s->nlim)
        memcpy(s->lim_used, sn->lim, s->nlim * sizeof *sn->lim);
    c->nspare = sn->nspare;
    return berth_ksession_rollback(c->ks, sn->mark);
}

/* Moves t's actions to the end of dst (t is left empty). */
static int take_actions(berth_dplan *dst, berth_dplan *t)
{
    for (uint32_t i = 0; i < t->nactions; i++) {
        berth_daction *a;
        int rc = disrupt_add_action(dst, &a);
        if (rc)
            return rc;
        *a = t->actions[i];
        memset(&t->actions[i], 0, sizeof t->actions[i]);
    }
    t->nactions = 0;
    return 0;
}

/* Per unit of cpu and memory the lowest price among the candidates and the
 * usable replacement options: what the requests of a node cost at best
 * elsewhere. */
static void unit_prices(disrupt_state *s, const uint32_t *list, uint32_t nl, double u[2])
{
    u[0] = u[1] = 0;
    const berth_kcluster *k = &s->m->kube;
    for (uint32_t i = 0; i < nl; i++) {
        const berth_knode *kn = &k->nodes[list[i]];
        double pr = s->n[list[i]].price;
        for (int r = 0; r < 2; r++) {
            int64_t a = kn->alloc[r ? BERTH_KRES_MEMORY : BERTH_KRES_CPU];
            if (a > 0 && pr > 0 && (u[r] == 0 || pr / (double)a < u[r]))
                u[r] = pr / (double)a;
        }
    }
    if (disrupt_options_ready(s))
        return; /* out of memory: the candidates' prices alone */
    for (uint32_t i = 0; i < s->nopts; i++) {
        double pr = disrupt_option_offering(s, &s->opts[i])->price;
        for (int r = 0; r < 2; r++) {
            int64_t a = s->opt_nodes[i].alloc[r ? BERTH_KRES_MEMORY : BERTH_KRES_CPU];
            if (a > 0 && pr > 0 && (u[r] == 0 || pr / (double)a < u[r]))
                u[r] = pr / (double)a;
        }
    }
}

/* c->fopt: per instance type its cheapest usable option, at most
 * FILL_OPTIONS of them, those with the lowest price per the value of their
 * cpu and memory at the unit prices u first. */
static int fill_options(opt_ctx *c, const double u[2])
{
    disrupt_state *s = c->s;
    c->nfopt = 0;
    if (disrupt_options_ready(s))
        return BERTH_ENOMEM;
    double *key = malloc((s->nopts + 1) * sizeof *key);
    if (!key || !(c->fopt = malloc((s->nopts + 1) * sizeof *c->fopt))) {
        free(key);
        return BERTH_ENOMEM;
    }
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->nopts; i++) {
        double pr = disrupt_option_offering(s, &s->opts[i])->price;
        uint32_t j = 0;
        while (j < n && s->opts[c->fopt[j]].type != s->opts[i].type)
            j++;
        if (j == n)
            c->fopt[n++] = i;
        else if (pr < disrupt_option_offering(s, &s->opts[c->fopt[j]])->price)
            c->fopt[j] = i;
    }
    for (uint32_t i = 0; i < n; i++) {
        const berth_knode *on = &s->opt_nodes[c->fopt[i]];
        double val = (double)on->alloc[BERTH_KRES_CPU] * u[0] +
                     (double)on->alloc[BERTH_KRES_MEMORY] * u[1];
        key[i] = disrupt_option_offering(s, &s->opts[c->fopt[i]])->price / (val + 1e-12);
    }
    /* insertion sort by key: a few hundred types at most */
    for (uint32_t i = 1; i < n; i++) {
        uint32_t f = c->fopt[i];
        double k = key[i];
        uint32_t j = i;
        for (; j > 0 && key[j - 1] > k; j--) {
            key[j] = key[j - 1];
            c->fopt[j] = c->fopt[j - 1];
        }
        key[j] = k;
        c->fopt[j] = f;
    }
    c->nfopt = n < FILL_OPTIONS ? n : FILL_OPTIONS;
    free(key);
    return 0;
}

/* The sort key (ascending) of candidate n for phase-2 order `ord`: req
 * holds the cpu and memory requests of the pods that would move off it,
 * frac the larger of their fractions of its allocatable. */
static double order_key(const disrupt_state *s, uint32_t n, int ord, const double u[2],
                        const double req[2], double frac)
{
    double price = s->n[n].price;
    double dom = req[0] * u[0] > req[1] * u[1] ? req[0] * u[0] : req[1] * u[1];
    switch (ord) {
    case ORD_SAVING: /* price released per (cheapest) price of the capacity it needs */
        return -(price / (dom + 1e-9));
    case ORD_PRICE: /* dearest first: the within-budgets bound's choice */
        return -price + dom * 1e-9;
    case ORD_NET: /* price released minus what its requests cost at best */
        return -(price - req[0] * u[0] - req[1] * u[1]);
    default: /* ORD_FRACTION: least requested first, then the higher price */
        return frac - price * 1e-9;
    }
}

int disrupt_optimize(disrupt_state *s, const berth_dplan *karpenter, berth_dplan *alt)
{
    const berth_disrupt *m = s->m;
    memset(alt, 0, sizeof *alt);
    opt_ctx c = {s, disrupt_session(s), NULL, NULL, NULL, NULL, NULL, 1, NULL, NULL, NULL, NULL,
                 0, DELETE_FAILS, GROUP_UNPLACED, 0};
    for (uint32_t p = 0; p < m->npools; p++)
        c.balanced |= m->pools[p].policy == BERTH_CP_BALANCED;
    if (s->nn && s->nn < FAIL_NODES) {
        c.max_fails = (uint64_t)DELETE_FAILS * FAIL_NODES / s->nn;
        c.max_unplaced = (uint64_t)GROUP_UNPLACED * FAIL_NODES / s->nn;
    }
    if (!c.ks)
        return BERTH_ENOMEM;
    /* every question builds on the moves kept so far: the session path */
    int reference = s->reference;
    s->reference = 0;
    berth_dplan trial, best;
    memset(&trial, 0, sizeof trial);
    memset(&best, 0, sizeof best);
    opt_snap sn = {0, NULL, NULL, NULL, NULL, NULL, 0};
    c.al = malloc((m->npools + 1) * sizeof *c.al);
    c.used = calloc(s->nn + 1, 1);
    c.moving = malloc((m->kube.npods + 1) * sizeof *c.moving);
    c.placed = malloc((m->kube.npods + 1) * sizeof *c.placed);
    c.left = malloc((m->kube.npods + 1) * sizeof *c.left);
    c.key = malloc((s->nn + 1) * sizeof *c.key);
    c.skip = malloc(s->nn + 1);
    c.load = malloc((3 * (size_t)s->nn + 1) * sizeof *c.load);
    s->in_head = malloc((s->nn + DISRUPT_SPARE_SLOTS + 1) * sizeof *s->in_head);
    s->in_next = malloc((m->kube.npods + 1) * sizeof *s->in_next);
    sn.al = malloc((m->npools + 1) * sizeof *sn.al);
    sn.used = malloc(s->nn + 1);
    sn.in_head = malloc((s->nn + DISRUPT_SPARE_SLOTS + 1) * sizeof *sn.in_head);
    sn.in_next = malloc((m->kube.npods + 1) * sizeof *sn.in_next);
    sn.lim = malloc((s->nlim + 1) * sizeof *sn.lim);
    uint32_t *list = malloc((s->nn + 1) * sizeof *list);
    uint32_t *order = malloc((s->nn + 1) * sizeof *order);
    uint32_t *best_order = malloc((s->nn + 1) * sizeof *best_order);
    uint32_t *base_order = malloc((s->nn + 1) * sizeof *base_order);
    uint32_t *rest = malloc((s->nn + 1) * sizeof *rest);
    uint32_t *taken = malloc((s->nn + 1) * sizeof *taken);
    uint32_t *group = malloc((GROUP_MAX + 2) * sizeof *group);
    double *req = malloc((2 * (size_t)s->nn + 1) * sizeof *req);
    double *frac = malloc((s->nn + 1) * sizeof *frac);
    uint8_t *gone = malloc(s->nn + 1), *tried = calloc(s->nn + 1, 1);
    int64_t *lim_saved = malloc((s->nlim + 1) * sizeof *lim_saved);
    int64_t *pool_left = malloc((m->npools + 1) * sizeof *pool_left);
    int rc = 0;
    if (lim_saved && s->nlim)
        memcpy(lim_saved, s->lim_used, s->nlim * sizeof *lim_saved);
    if (!c.al || !c.used || !c.skip || !c.load || !c.moving || !c.placed || !c.left || !c.key || !s->in_head || !s->in_next ||
        !sn.al || !sn.used || !sn.in_head || !sn.in_next || !sn.lim || !list || !order ||
        !best_order || !base_order || !rest || !taken || !group || !req || !frac || !gone || !tried ||
        !lim_saved || !pool_left) {
        rc = BERTH_ENOMEM;
        goto out;
    }
    for (uint32_t i = 0; i < s->nn + DISRUPT_SPARE_SLOTS; i++)
        s->in_head[i] = BERTH_KUBE_NONE;
    for (uint32_t i = 0; i < m->kube.npods; i++)
        s->in_next[i] = BERTH_KUBE_NONE;
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
    /* the consolidation candidates and what would move off each */
    uint32_t nl = 0;
    const berth_kcluster *k = &m->kube;
    for (uint32_t i = 0; i < s->norder; i++) {
        uint32_t n = s->order[i];
        if (c.used[n] || !disrupt_consolidation_eligible(s, n))
            continue;
        double cpu = 0, mem = 0;
        for (uint32_t j = 0; j < s->n[n].npods; j++) {
            const berth_kpod *p = &k->pods[s->n[n].pods[j]];
            cpu += (double)p->req[BERTH_KRES_CPU];
            mem += (double)p->req[BERTH_KRES_MEMORY];
        }
        const berth_knode *kn = &k->nodes[n];
        double fc = kn->alloc[BERTH_KRES_CPU] > 0 ? cpu / (double)kn->alloc[BERTH_KRES_CPU] : 0;
        double fm = kn->alloc[BERTH_KRES_MEMORY] > 0 ? mem / (double)kn->alloc[BERTH_KRES_MEMORY]
                                                     : 0;
        req[2 * n] = cpu;
        req[2 * n + 1] = mem;
        frac[n] = fc > fm ? fc : fm;
        list[nl++] = n;
    }
    double u[2];
    unit_prices(s, list, nl, u);
    /* the free room (cpu, memory at the unit prices) of the nodes that
     * stay whatever the plan does: neither candidates nor deleted above */
    double room[2] = {0, 0};
    for (uint32_t i = 0; i < nl; i++)
        c.used[list[i]] |= 2;
    for (uint32_t n = 0; n < s->nn; n++) {
        if (c.used[n])
            continue;
        double f[2] = {(double)k->nodes[n].alloc[BERTH_KRES_CPU],
                       (double)k->nodes[n].alloc[BERTH_KRES_MEMORY]};
        for (uint32_t j = 0; j < s->n[n].npods; j++) {
            f[0] -= (double)k->pods[s->n[n].pods[j]].req[BERTH_KRES_CPU];
            f[1] -= (double)k->pods[s->n[n].pods[j]].req[BERTH_KRES_MEMORY];
        }
        for (int r = 0; r < 2; r++)
            room[r] += f[r] > 0 ? f[r] * u[r] : 0;
    }
    for (uint32_t i = 0; i < nl; i++)
        c.used[list[i]] &= 1;
    if ((rc = fill_options(&c, u)))
        goto out;
    /* trials: phases 2 and 3 for each order of `orders`, then local-search
     * moves on the best order (below); each from the same state, the best
     * kept. Work bound: at most MAX_TRIALS trials, and a trial starts only
     * while the work so far plus the last trial's stays within
     * max(TRIAL_WORK_FACTOR x the first trial's work, TRIAL_NODE_WORK /
     * nodes, TRIAL_SMALL_WORK / nodes^2) (work = moves tried in phase 2 + consolidation decisions in
     * phase 3, each a scheduling run over the estate's nodes; the first
     * trial always runs and is itself bounded as in the header). So on a
     * large estate the optimiser costs at most about TRIAL_WORK_FACTOR
     * times one trial, on a small one it searches more. */
    snap_take(&c, &sn);
    uint64_t limit = 0;
    uint64_t work = 0, last = 0;
    uint32_t trials = 0;
    int have = 0, final = 0;
    uint32_t exhausted = 0; /* local-search kinds without a move left (bits) */
    int64_t best_sav = 0, best_net = 0, ceil_sav, ceil_net;
    trial_ceiling(&c, list, nl, rest, pool_left, &ceil_sav, &ceil_net);
    int best_gf = 0, base_gf = 0;
    int64_t base_sav = 0, base_net = 0;
    uint32_t kicks = 0;
    uint64_t rng = KICK_SEED;
    /* phase-2 orders and their modes (phase 3 first; the within-budgets
     * group first, tried only when some pool's allowance is below its
     * candidates) */
    int binds = 0;
    for (uint32_t p = 0; p < m->npools && !binds; p++) {
        int64_t cands = 0;
        for (uint32_t i = 0; i < nl; i++)
            cands += s->n[list[i]].pool == (int)p;
        binds = cands > c.al[p][BERTH_DR_UNDERUTILIZED];
    }
    /* the first trial is the one a large estate gets alone: dearest first
     * with the within-budgets group when budgets bind, else by saving */
    static const int orders_b[] = {ORD_PRICE, ORD_SAVING, ORD_PRICE, ORD_SAVING, ORD_NET,
                                   ORD_FRACTION};
    static const int modes_b[] = {MODE_BOUND_GROUP, 0, 0, MODE_GROUPS_FIRST, 0, 0};
    static const int orders_u[] = {ORD_SAVING, ORD_PRICE, ORD_SAVING, ORD_NET, ORD_FRACTION,
                                   ORD_SAVING, ORD_FRACTION, ORD_NET, ORD_FRACTION};
    static const int modes_u[] = {0, 0, MODE_GROUPS_FIRST, 0, 0,
                                  MODE_FILL, MODE_FILL, MODE_PREFIX, MODE_PREFIX};
    const int *orders = binds ? orders_b : orders_u, *modes = binds ? modes_b : modes_u;
    uint32_t norders = binds ? (uint32_t)(sizeof orders_b / sizeof orders_b[0])
                             : (uint32_t)(sizeof orders_u / sizeof orders_u[0]);
    /* local search on the base order (the best trial's, or the last
     * kick's): insert = a candidate the base trial kept goes first
     * (dearest first); drop = one it deleted in phase 2 goes last (least
     * price per requested capacity first); swap = both; in turn; when none
     * is left, a kick */
    for (uint32_t step = 0; !final && trials < MAX_TRIALS && (!trials || work + last <= limit);
         step++) {
        uint32_t no = nl;
        int gf = step < norders ? modes[step] : base_gf, kicked = 0;
        if (step < norders) {
            for (uint32_t i = 0; i < nl; i++)
                c.key[list[i]] = order_key(s, list[i], orders[step], u, &req[2 * list[i]],
                                           frac[list[i]]);
            memcpy(order, list, nl * sizeof *order);
            qsort_r(order, nl, sizeof *order, cmp_key_asc, (void *)&c);
        } else if (step < norders + SHAPE_TRIALS) {
            /* shape front: the best order with the candidates whose pods
             * are most of the shape of the staying nodes' free room (cpu
             * and memory at the unit prices; cosine) in front, most
             * aligned first, their load up to 1/2, 1, 2 times that room,
             * so that those nodes fill with pods of their shape first:
             * where blocked nodes fill with pods of the other shape their
             * dominant resource stays idle (issue 18 item 1) */
            double rl = sqrt(room[0] * room[0] + room[1] * room[1]);
            if (rl <= 0)
                continue;
            for (uint32_t i = 0; i < nl; i++) {
                const double *q = &req[2 * best_order[i]];
                double lv[2] = {q[0] * u[0], q[1] * u[1]};
                double ll = sqrt(lv[0] * lv[0] + lv[1] * lv[1]);
                c.key[best_order[i]] =
                    ll > 0 ? -(lv[0] * room[0] + lv[1] * room[1]) / (ll * rl) : 0;
                taken[i] = best_order[i];
            }
            qsort_r(taken, nl, sizeof *taken, cmp_key_asc, (void *)&c);
            double want = rl * 0.5 * (double)(1u << (step - norders)), got = 0;
            no = 0;
            memset(c.skip, 0, s->nn);
            for (uint32_t i = 0; i < nl && got < want; i++) {
                const double *q = &req[2 * taken[i]];
                got += sqrt(q[0] * u[0] * q[0] * u[0] + q[1] * u[1] * q[1] * u[1]);
                order[no++] = taken[i];
                c.skip[taken[i]] = 1;
            }
            for (uint32_t i = 0; i < nl; i++)
                if (!c.skip[best_order[i]])
                    order[no++] = best_order[i];
            gf = best_gf;
        } else if (exhausted == 7) {
            /* a kick: KICK_SWAPS_MIN.. pairs of the base order swapped
             * (positions drawn by a fixed-seed xorshift, so the plan is
             * reproducible); the local search goes on from that trial
             * whether or not it is better (the best plan is kept apart) */
            if (nl < 2 || kicks >= KICKS_PER_CANDIDATE * nl)
                break;
            memcpy(order, base_order, nl * sizeof *order);
            uint32_t nsw = KICK_SWAPS_MIN + kicks++ % KICK_SWAPS_SPAN;
            for (uint32_t k2 = 0; k2 < nsw; k2++) {
                uint32_t a = (uint32_t)(xorshift(&rng) % nl), b = (uint32_t)(xorshift(&rng) % nl);
                uint32_t tmp = order[a];
                order[a] = order[b];
                order[b] = tmp;
            }
            gf = best_gf;
            kicked = 1;
        } else {
            /* the next move not tried yet, in turn: insert, drop, swap (the
             * next insert and the next drop of their own kind at once) */
            uint32_t kind = (step - norders - SHAPE_TRIALS) % 3;
            uint32_t pick[2] = {BERTH_KUBE_NONE, BERTH_KUBE_NONE};
            for (int mv = 0; mv < 2; mv++) {
                int insert = mv == 0;
                uint8_t bit = kind == 2 ? (insert ? 4 : 8) : (insert ? 1 : 2);
                if ((kind == 0 && !insert) || (kind == 1 && insert))
                    continue;
                double pk = 0;
                for (uint32_t i = 0; i < nl; i++) {
                    uint32_t n = base_order[i];
                    if (tried[n] & bit || gone[n] != (insert ? 0 : 1))
                        continue;
                    double kk = insert ? s->n[n].price
                                       : -order_key(s, n, ORD_SAVING, u, &req[2 * n], frac[n]);
                    if (pick[mv] == BERTH_KUBE_NONE || (insert ? kk > pk : kk < pk)) {
                        pick[mv] = n;
                        pk = kk;
                    }
                }
            }
            if ((kind != 1 && pick[0] == BERTH_KUBE_NONE) ||
                (kind != 0 && pick[1] == BERTH_KUBE_NONE)) {
                /* this kind is exhausted (until a better trial); stop when
                 * all three are */
                exhausted |= 1u << kind;
                continue;
            }
            if (pick[0] != BERTH_KUBE_NONE)
                tried[pick[0]] |= kind == 2 ? 4 : 1;
            if (pick[1] != BERTH_KUBE_NONE)
                tried[pick[1]] |= kind == 2 ? 8 : 2;
            no = 0;
            if (pick[0] != BERTH_KUBE_NONE)
                order[no++] = pick[0];
            for (uint32_t i = 0; i < nl; i++)
                if (base_order[i] != pick[0] && base_order[i] != pick[1])
                    order[no++] = base_order[i];
            if (pick[1] != BERTH_KUBE_NONE)
                order[no++] = pick[1];
        }
        uint64_t w0 = work;
        rc = run_trial(&c, order, no, gf, rest, taken, group, &trial, &work);
        last = work - w0;
        if (!trials++) {
            limit = last * TRIAL_WORK_FACTOR;
            if (s->nn && TRIAL_NODE_WORK / s->nn > limit)
                limit = TRIAL_NODE_WORK / s->nn;
            if (s->nn && TRIAL_SMALL_WORK / ((uint64_t)s->nn * s->nn) > limit)
                limit = TRIAL_SMALL_WORK / ((uint64_t)s->nn * s->nn);
        }
        int64_t net = 0, sav = rc ? 0 : trial_saving(s, &trial, &net);
        /* the last trial leaves its moves in place: the session is closed
         * below instead of undoing them. A trial that saves the ceiling
         * (and removes as many nodes) cannot be beaten: the last. */
        final = trials >= MAX_TRIALS || work + last > limit ||
                (sav >= ceil_sav && net >= ceil_net);
        int rb = rc || final ? 0 : snap_restore(&c, &sn);
        if (rc || (rc = rb))
            goto out;
        /* the base of the local search: the best trial, or the last kick */
        if (kicked || !have || sav > base_sav || (sav == base_sav && net > base_net)) {
            base_sav = sav;
            base_net = net;
            base_gf = gf;
            memcpy(base_order, order, nl * sizeof *order);
            exhausted = 0;
            if (kicked)
                memset(tried, 0, s->nn);
            memset(gone, 0, s->nn);
            /* 1 deleted, 2 replaced (neither move takes it) */
            for (uint32_t i = 0; i < trial.nactions; i++)
                for (uint32_t j = 0; j < trial.actions[i].nnodes; j++)
                    gone[trial.actions[i].nodes[j]] = trial.actions[i].nreplacements ? 2 : 1;
        }
        if (!have || sav > best_sav || (sav == best_sav && net > best_net)) {
            berth_dplan_free(&best);
            best = trial;
            memset(&trial, 0, sizeof trial);
            have = 1;
            best_sav = sav;
            best_net = net;
            best_gf = gf;
            memcpy(best_order, order, nl * sizeof *order);
        }
        berth_dplan_free(&trial);
    }
    if (have && (rc = take_actions(alt, &best)))
        goto out;
out:
    s->reference = reference;
    /* the what-if session is not needed at its base again (the plan's
     * outcome does not schedule): closed rather than rolled back through
     * every move the trials kept; a later question would reopen it */
    berth_ksession_close(c.ks);
    s->ks = NULL;
    if (lim_saved && s->nlim)
        memcpy(s->lim_used, lim_saved, s->nlim * sizeof *lim_saved);
    berth_dplan_free(&trial);
    berth_dplan_free(&best);
    free(lim_saved);
    free(pool_left);
    free(s->in_head);
    free(s->in_next);
    s->in_head = s->in_next = NULL;
    free(c.al);
    free(c.used);
    free(c.moving);
    free(c.placed);
    free(c.left);
    free(c.key);
    free(c.skip);
    free(c.load);
    free(c.fopt);
    free(sn.al);
    free(sn.used);
    free(sn.in_head);
    free(sn.in_next);
    free(sn.lim);
    free(list);
    free(order);
    free(best_order);
    free(base_order);
    free(rest);
    free(taken);
    free(group);
    free(req);
    free(frac);
    free(gone);
    free(tried);
    if (rc)
        berth_dplan_free(alt);
    return rc;
}
