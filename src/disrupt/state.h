/* disrupt/state.h - internal: the planner's per-node view at one moment
 * (candidates.c), the pool allowances, and the re-placement simulation
 * over the kube pipeline (simulate.c). */
#ifndef BERTH_DISRUPT_STATE_H
#define BERTH_DISRUPT_STATE_H

#include "berth/disrupt.h"

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
} disrupt_state;

/* candidates.c */
int disrupt_state_init(disrupt_state *s, const berth_disrupt *m, const berth_dplan_options *o);
void disrupt_state_free(disrupt_state *s);
/* A pod the simulation moves: reschedulable and not blocking. */
int disrupt_pod_reschedulable(const disrupt_state *s, uint32_t pod);
/* Whether pod's do-not-disrupt is active at s->now. */
int disrupt_pod_dnd_active(const disrupt_state *s, uint32_t pod);
/* Whether pod's PDBs block its eviction; names the PDB in why. */
int disrupt_pod_pdb_blocked(const disrupt_state *s, uint32_t pod, char *why, size_t size);

/* simulate.c */
typedef struct disrupt_option {
    uint32_t pool, type, offering;
} disrupt_option;

typedef struct disrupt_sim {
    int ok;                     /* every moved pod fits */
    uint32_t nnew;              /* new nodes needed (0 or more) */
    disrupt_option *feasible;   /* max_new == 1: every option that hosts the rest */
    uint32_t nfeasible;
    disrupt_option *chosen;     /* max_new > 1: the options taken, in order */
    uint32_t nchosen;
    char why[200];
} disrupt_sim;

/* Moves the reschedulable pods of the candidate nodes onto the remaining
 * nodes, then onto at most max_new new nodes. */
int disrupt_simulate(disrupt_state *s, const uint32_t *cands, uint32_t nc, uint32_t max_new,
                     disrupt_sim *out);
void disrupt_sim_free(disrupt_sim *r);
const berth_offering *disrupt_option_offering(const disrupt_state *s, const disrupt_option *o);

#endif
