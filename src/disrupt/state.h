/* disrupt/state.h - internal: the planner's per-node view at one moment
 * and its indexes (candidates.c), the pool allowances, the re-placement
 * simulation over the kube pipeline and its what-if session (simulate.c),
 * the pass pieces the optimiser shares (plan.c, optimize.c) and the lower
 * bound (bound.c). */
#ifndef BERTH_DISRUPT_STATE_H
#define BERTH_DISRUPT_STATE_H

#include "berth/disrupt.h"

typedef struct disrupt_option {
    uint32_t rank;              /* the pool's place in pool_order (iteration order) */
    uint32_t pool, type, offering;
} disrupt_option;

typedef struct disrupt_node {
    uint32_t node;              /* kube node index */
    int claim, pool, type;      /* indices, -1 when none */
    const char *zone;
    int ct;                     /* berth_capacity_type, -1 when unlabelled */
    int managed, initialized, deleting, ready, expired;
    double price, rdc;
    int empty;
    uint32_t *pods;             /* kube pods bound here */
    uint32_t npods;
    int candidate;              /* passes every candidate rule */
    int pod_blocked;            /* blocked only by its pods (do-not-disrupt, PDB) */
    char block[200];
    int drifted;
    int64_t drift_at;
    int consolidatable;         /* now >= base + consolidateAfter */
    int resolvable;             /* instance type, zone, capacity type known */
    int listed;                 /* in the plan's blocked list (add_blocked: a flag, not a
                                 * scan of the list per entry) */
} disrupt_node;

typedef struct disrupt_state {
    const berth_disrupt *m;
    int64_t now;
    int spot_to_spot;
    disrupt_node *n;            /* per kube node */
    uint32_t nn;
    uint32_t *pod_node;         /* per kube pod: node index or BERTH_KUBE_NONE */
    int64_t *pdb_allowed;       /* per PDB */
    uint32_t *order;            /* candidates, by price / rdc, highest first */
    uint32_t norder;
    int64_t (*allowed)[BERTH_DR_BUDGET_COUNT]; /* per pool, decremented by methods */
    int64_t *pool_nodes, *pool_disrupting;
    double *pool_cost, *pool_rdc;   /* per pool: managed nodes' prices and RDCs (Balanced) */
    /* indexes built once (candidates.c) */
    uint32_t *node_by_name;     /* kube node indices sorted by name */
    int32_t *pod_pdb;           /* per pod: its first matching PDB, -1 when none */
    uint8_t *pod_npdb;          /* per pod: matching PDBs (saturates at 255) */
    int reference;              /* berth_dplan_options.reference */
    uint32_t threads;           /* berth_dplan_options.threads: the what-if session's
                                 * per-node loops (simulate.c disrupt_session) */
    const berth_cancel *cancel; /* berth_dplan_options.cancel (NULL: none) */
    uint32_t cancel_tick;       /* questions since the last look at it */
    /* simulate.c: the what-if session (opened on first use, its base mark
     * has deleting and expired nodes excluded and their pods evicted), the
     * usable replacement options with their hypothetical nodes, and whether
     * some pod carries a required pod anti-affinity term */
    berth_ksession *ks;
    uint64_t ks_base;
    berth_arena opt_arena;
    disrupt_option *opts;
    berth_knode *opt_nodes;
    uint8_t *opt_use;           /* per option: usable for the current question */
    uint32_t nopts;
    int opts_ready, any_anti;
    uint32_t *sim_moving, *sim_placed; /* per pod: scratch of each question */
    uint64_t unplaced;          /* pods that found no node in session questions (each
                                 * costs the scheduler's failure analysis, O(nodes)) */
    /* optimize.c: pods moved onto a node by committed moves (per node the
     * first, per pod the next; NULL outside the optimiser) */
    uint32_t *in_head, *in_next;
    /* limits.c: pools in Karpenter's weight order and each pool's rank;
     * per limit slot (lim_off[pool] + i for the pool's limits[i]) the
     * pool's usage, the usage of the current question (candidates taken
     * out) and scratch for drift rounds */
    uint32_t *pool_order, *pool_rank;
    uint32_t *lim_off, nlim;
    int64_t *lim_used, *lim_q, *lim_round;
    /* simulate.c: available offerings whose node does not satisfy its pool,
     * with the reason (for the replacement's `excluded` list) */
    struct disrupt_reject *rejects;
    uint32_t nrejects;
    /* fitcert.c: the counting certificate's free room, static classes and
     * scratch (built on first use) */
    struct disrupt_cert *cert;
    /* parallel.c: the worker contexts of speculative candidate evaluation
     * (built on first use; NULL in a worker and below the threshold) */
    struct disrupt_workers *workers;
} disrupt_state;

typedef struct disrupt_reject {
    disrupt_option o;
    const char *why;            /* in opt_arena */
} disrupt_reject;

/* limits.c */
int disrupt_limits_init(disrupt_state *s);
/* The capacity of instance type it in resource res (cpu millicores,
 * memory bytes, pods, nvidia.com/gpu; nodes 1; others 0). */
int64_t disrupt_type_capacity(const berth_instance_type *it, const char *res);
/* What node n uses of res against its pool's limits. */
int64_t disrupt_node_usage(const disrupt_state *s, uint32_t n, const char *res);
/* s->lim_q = the usage with the candidates taken out. */
void disrupt_limits_question(disrupt_state *s, const uint32_t *cands, uint32_t nc);
/* Whether a node of option o fits its pool's limits given the usage
 * `used` (per slot); why (may be NULL) says which limit it breaks. */
int disrupt_option_within_limits(const disrupt_state *s, const disrupt_option *o,
                                 const int64_t *used, char *why, size_t size);
/* used += sign x the capacity of a node of `type` in `pool`'s limited resources. */
void disrupt_limits_add(const disrupt_state *s, int64_t *used, uint32_t pool, uint32_t type,
                        int sign);
/* s->lim_used -= what nodes use (a committed removal). */
void disrupt_limits_remove_nodes(disrupt_state *s, const uint32_t *nodes, uint32_t n);

/* drift.c: berth_nodeclaim_drifted with the claim's node given (NULL when
 * none), for callers that already know it. */
int disrupt_claim_drifted(const berth_disrupt *m, const berth_nodeclaim *c, const berth_knode *nd,
                          char *why, size_t size);

/* candidates.c */
int disrupt_state_init(disrupt_state *s, const berth_disrupt *m, const berth_dplan_options *o);
/* The kube node named name, BERTH_KUBE_NONE when none (binary search). */
uint32_t disrupt_node_find(const disrupt_state *s, const char *name);
void disrupt_state_free(disrupt_state *s);
/* A pod the simulation moves: reschedulable and not blocking. */
int disrupt_pod_reschedulable(const disrupt_state *s, uint32_t pod);
/* Whether pod's do-not-disrupt is active at s->now. */
int disrupt_pod_dnd_active(const disrupt_state *s, uint32_t pod);
/* Whether pod's PDBs block its eviction; names the PDB in why. */
int disrupt_pod_pdb_blocked(const disrupt_state *s, uint32_t pod, char *why, size_t size);
/* Whether a pod of a disrupted node is placed again: reschedulable, its
 * do-not-disrupt not active, its PDBs not blocking. */
int disrupt_pod_moves(const disrupt_state *s, uint32_t pod);

/* simulate.c */
typedef struct disrupt_sim {
    int ok;                     /* every moved pod fits */
    uint32_t nnew;              /* new nodes needed (0 or more) */
    disrupt_option *feasible;   /* max_new == 1: every option that hosts the rest */
    uint32_t nfeasible;
    disrupt_option *chosen;     /* max_new > 1: the options taken, in order */
    uint32_t nchosen;
    char why[200];
    /* the session path keeps the moved pods placed until disrupt_sim_free;
     * filtered = 1: feasible came from the cheap filter (requests,
     * selectors, taints) and a choice is confirmed by disrupt_sim_confirm */
    disrupt_state *s;
    uint64_t mark;
    int open, filtered;
    uint32_t *left;             /* pods that did not fit the remaining nodes */
    uint32_t nleft;
    int pool_rank;              /* max_new == 1: the rank of the pool offering the new
                                 * node (disrupt_question_pool), -1 none */
    int first_pod;              /* the pod that chose it, -1 none */
    uint32_t *left0;            /* max_new > 1: the leftovers before the first new node */
    uint32_t nleft0;
} disrupt_sim;

/* Moves the reschedulable pods of the candidate nodes onto the remaining
 * nodes, then onto at most max_new new nodes. s->reference: one
 * berth_kube_schedule_view per question and per option (the reference);
 * otherwise the what-if session, and for max_new == 1 with plain leftover
 * pods the options are filtered without scheduling (exact for such pods,
 * see simulate.c). */
int disrupt_simulate(disrupt_state *s, const uint32_t *cands, uint32_t nc, uint32_t max_new,
                     disrupt_sim *out);
/* Confirms that option o hosts every leftover pod with one scheduling run
 * on a spare node (*ok 1), for a sim with filtered = 1. When it does not,
 * sim->feasible is recomputed by scheduling every option (filtered = 0). */
int disrupt_sim_confirm(disrupt_sim *sim, const disrupt_option *o, int *ok);
void disrupt_sim_free(disrupt_sim *r);
/* The session (opened on first use; its base mark has deleting and expired
 * nodes excluded and their pods evicted); NULL on error. Spare slot 0 is
 * the simulation's, drift uses up to DISRUPT_SPARE_SLOTS, the optimiser's
 * replacements take 1.. */
#define DISRUPT_SPARE_SLOTS 64
berth_ksession *disrupt_session(disrupt_state *s);
/* In the open session: excludes the candidates, evicts every pod on them
 * (also pods the optimiser moved there) and lists in moving (room for
 * every pod of the cluster) the reschedulable, unblocked ones to re-place. */
int disrupt_evict_nodes(disrupt_state *s, const uint32_t *cands, uint32_t nc, uint32_t *moving,
                        uint32_t *nmoving);
const berth_offering *disrupt_option_offering(const disrupt_state *s, const disrupt_option *o);
/* The options of a question's new node (docs/disrupt.md "NodePool weight
 * and limits"): s->opt_use[i] = 1 for the usable options within the
 * limits (usage `used`) of the first pool in weight order that has one
 * hosting the first leftover pod in Karpenter's queue order (*first) on
 * its own (requests, selectors, taints); its rank, or -1. */
int disrupt_question_pool(disrupt_state *s, const int64_t *used, const uint32_t *left,
                          uint32_t nleft, int *first);
/* Builds s->opts / s->opt_nodes / s->rejects once. */
int disrupt_options_ready(disrupt_state *s);
/* Whether every pod of left fits on n together: requests, selectors,
 * taints (exact for plain pods); why (may be NULL) names the first pod
 * and the reason when not. */
int disrupt_option_hosts_why(const disrupt_state *s, const berth_knode *n, const uint32_t *left,
                             uint32_t nleft, char *why, size_t size);
/* The hypothetical node for option o (SPEC 4.1 rule 7) named name, its
 * labels in a: 0, -1 when the offering does not satisfy the pool's
 * requirements, or BERTH_ENOMEM. */
int disrupt_option_node(const disrupt_state *s, berth_arena *a, const disrupt_option *o,
                        const char *name, berth_knode *out);
/* The first usable option at or after *o in (pool, type, offering) order:
 * an available offering whose node (disrupt_option_node, named name, its
 * labels in a) satisfies the pool. 1 with *o and *node set, 0 when none is
 * left, or BERTH_ENOMEM. Every option:
 *   for (disrupt_option o = {0}; (rc = disrupt_option_next(s, a, nm, &o, &n)) > 0; o.offering++) */
int disrupt_option_next(const disrupt_state *s, berth_arena *a, const char *name,
                        disrupt_option *o, berth_knode *node);

/* plan.c: the pieces of a pass the optimiser shares */
typedef struct disrupt_repl {
    int ok;
    disrupt_option chosen;
    char why[200];
    berth_dexcluded excluded[BERTH_DEXCLUDED_MAX]; /* cheaper offerings not taken */
    uint32_t nexcluded;
} disrupt_repl;
int disrupt_add_action(berth_dplan *p, berth_daction **out);
/* nodes = the kube nodes of idx (state indices), savings = their prices */
int disrupt_set_nodes(berth_daction *a, const uint32_t *idx, uint32_t n, const disrupt_state *s);
int disrupt_fill_replacement(disrupt_state *s, berth_daction *a, const disrupt_option *o,
                             uint32_t n);
/* The same for one consolidation replacement, with its `excluded` list. */
int disrupt_fill_repl(disrupt_state *s, berth_daction *a, const disrupt_repl *r);
/* minValues (InstanceTypes.SatisfiesMinValues): every requirement with
 * minValues of the pool of the kept options (keep[i] for o[i]) has that
 * many distinct values among them; 0 with why when not. */
int disrupt_min_values_ok(const disrupt_state *s, const disrupt_option *o, const uint8_t *keep,
                          uint32_t n, char *why, size_t size);
/* The `excluded` list of a drift's single replacement x (sim: its
 * simulation, max_new > 1). 0 or BERTH_ENOMEM. */
int disrupt_explain_drift(disrupt_state *s, const disrupt_sim *sim, berth_dreplacement *x);
/* Balanced (v1.14): every Balanced pool among the candidates approves. */
int disrupt_balanced_ok(const disrupt_state *s, const uint32_t *cands, uint32_t nc, double savings);
/* computeConsolidation on the session's current state: *decision 0
 * nothing (why says why), 1 delete, 2 replace (r->chosen). */
int disrupt_consolidate(disrupt_state *s, const uint32_t *cands, uint32_t nc, int multi,
                        disrupt_repl *r, char *why, size_t size, int *decision);
/* Consolidation needs: policy, consolidateAfter, resolvable, not empty,
 * consolidatable. */
int disrupt_consolidation_eligible(const disrupt_state *s, uint32_t n);

/* optimize.c: an alternative consolidation into alt (actions only) within
 * the allowances at the start of the pass (karpenter->pools); Karpenter's
 * expirations are copied first. The what-if session is closed after (the
 * next question reopens it at its base) rather than rolled back. */
int disrupt_optimize(disrupt_state *s, const berth_dplan *karpenter, berth_dplan *alt);

/* fitcert.c: 1 when the kube scheduler is certain to place every pod of
 * moving on the nodes left at the session's base once cands are excluded
 * (a sufficient condition for plain pods, see fitcert.c), 0 when unknown
 * (schedule), or BERTH_ENOMEM. Valid only while the session is at its
 * base (or not open). */
int disrupt_cert_all_fit(disrupt_state *s, const uint32_t *cands, uint32_t nc,
                         const uint32_t *moving, uint32_t nmove);
void disrupt_cert_free(disrupt_state *s);

/* parallel.c: speculative candidate evaluation (docs/disrupt.md
 * "Threads"). Whether this plan evaluates candidates on its threads:
 * threads > 1, the session path (not reference), BERTH_PAR_MIN nodes or
 * more; below that every question runs on the plan's own state. */
int disrupt_par_on(const disrupt_state *s);
/* Questions per batch (the plan's threads). */
uint32_t disrupt_par_width(const disrupt_state *s);
/* One computeConsolidation question of a batch: its candidates (in), and
 * disrupt_consolidate's answer (out: rc, decision, replacement, why) and
 * the pods it left unplaced. */
typedef struct disrupt_question {
    const uint32_t *cands;
    uint32_t nc;
    int multi;
    int rc, res;
    disrupt_repl r;
    char why[240];
    uint64_t unplaced;
} disrupt_question;
/* Answers q[0..nq) (nq <= disrupt_par_width) at once, each on its own
 * worker context from the state at the session's base (every question as
 * disrupt_consolidate on s would answer it first). 0 or BERTH_ENOMEM; each
 * question's own error is in its rc. */
int disrupt_consolidate_many(disrupt_state *s, disrupt_question *q, uint32_t nq);
void disrupt_workers_free(disrupt_state *s);
/* The parallel binary search over prefix lengths (plan.c): one round's
 * probes are the next `depth` levels of the sequential search's decision
 * tree from [lo, hi] (heap order: the children of tree node k are 2k + 1,
 * taken when k's probe fails, and 2k + 2 when it succeeds); slot[k] is the
 * question of tree node k (-1: the search ends before it), mid[q] the
 * probe of question q, (lo + hi) / 2 of its interval. */
#define DISRUPT_PROBE_DEPTH_MAX 5
#define DISRUPT_PROBE_MAX ((1u << DISRUPT_PROBE_DEPTH_MAX) - 1)
typedef struct disrupt_probes {
    uint32_t np, nq;
    uint32_t lo[DISRUPT_PROBE_MAX], hi[DISRUPT_PROBE_MAX];
    int slot[DISRUPT_PROBE_MAX];
    uint32_t mid[DISRUPT_PROBE_MAX];
} disrupt_probes;
/* The tree depth for T threads: floor(log2(T + 1)), at most
 * DISRUPT_PROBE_DEPTH_MAX. */
uint32_t disrupt_probe_depth(uint32_t threads);
/* The round's probes from [lo, hi] (lo <= hi). */
void disrupt_probes_plan(disrupt_probes *t, uint32_t depth, uint32_t lo, uint32_t hi);
/* The questions the sequential search asks, in order, given each
 * question's answer ok[q] (nonzero: the prefix works): into taken, their
 * count returned; the last one taken decides the next round's [lo, hi]. */
uint32_t disrupt_probes_walk(const disrupt_probes *t, const int *ok, uint32_t *taken);

/* bound.c */
/* The lower bound of berth_disrupt_bound on this state. */
int disrupt_bound(const disrupt_state *s, berth_dbound *out);
/* nodes_before/after and cost_before/after of p's actions. */
int disrupt_outcome(const disrupt_state *s, berth_dplan *p);

#endif
