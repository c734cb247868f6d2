/* disrupt/timeline.h - internal: the state of a `disrupt simulate` run
 * shared by the clock (timeline.c) and the drain state machine
 * (termination.c). */
#ifndef BERTH_DISRUPT_TIMELINE_H
#define BERTH_DISRUPT_TIMELINE_H

#include "berth/disrupt.h"

#define DTL_REASON_DELETING (-1) /* already being deleted in the input */

/* A node whose disruption has started. */
typedef struct disrupt_tl_node {
    const char *name;             /* the kube node's name (model arena) */
    int reason;                   /* berth_dreason or DTL_REASON_DELETING */
    int32_t cmd;                  /* replace command still launching, -1 none */
    int tainted;                  /* tainted and draining since deleted_at */
    int64_t deleted_at;
    int64_t grace;                /* NodeClaim terminationGracePeriod, -1 none */
    int64_t last_round;           /* time of its last drain round */
    int removed;
    const char *held;             /* why the drain waits (timeline arena), NULL */
} disrupt_tl_node;

/* A replacement NodeClaim on its way. */
typedef struct disrupt_tl_launch {
    const char *name;
    uint32_t pool, type, offering;
    int64_t launched, ready_at;
    int32_t cmd;
    int ready;
} disrupt_tl_launch;

/* A replace command: its candidates wait for its launches. */
typedef struct disrupt_tl_cmd {
    uint32_t launching;           /* launches not Ready yet */
    uint32_t live;                /* candidates not removed yet */
} disrupt_tl_cmd;

enum { DTL_POD_BOUND, DTL_POD_PENDING, DTL_POD_GONE };
enum { DTL_PF_REPORTED = 1, DTL_PF_UNAVAIL = 2 }; /* unschedulable event written; counted
                                                  * in pdb_unavail */

typedef struct disrupt_tl {
    berth_disrupt *m;
    const berth_dsim_options *o;
    berth_dtimeline *out;
    int64_t now;
    disrupt_tl_node *tn;                 uint32_t ntn, captn;
    disrupt_tl_launch *ln;               uint32_t nln, capln;
    disrupt_tl_cmd *cmd;                 uint32_t ncmd, capcmd;
    /* per pod */
    int32_t *pod_pdb;             /* PDB index, -1 none, -2 several */
    uint8_t *pod_state;           /* DTL_POD_* */
    uint8_t *pod_flags;           /* DTL_PF_* */
    uint32_t *pending;            uint32_t npending, cappending; /* pods DTL_POD_PENDING */
    /* per PDB */
    int64_t *pdb_base;            /* disruptionsAllowed at the start */
    int64_t *pdb_unavail;         /* matching pods pending because of the run */
    int64_t *pdb_allow;           /* left in the current step */
    /* node name -> kube node index, and -> the index of the first NodeClaim
     * naming that node (keyed: the names come from the input) */
    berth_nameidx node_idx, claim_idx;
    uint32_t *bidx;               uint32_t bcap; /* blocked entries by node (timeline.c) */
    int dirty;                    /* capacity changed: retry pending pods */
    double cost;
    uint32_t counter;             /* replacement names */
} disrupt_tl;

/* timeline.c */
uint32_t disrupt_tl_node_index(const disrupt_tl *t, const char *name);
/* A formatted string in the timeline's arena; NULL when out of memory. */
const char *disrupt_tl_str(disrupt_tl *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int disrupt_tl_event(disrupt_tl *t, berth_devent_type type, const char *node,
                     const berth_kpod *pod, const char *reason);
/* A pod leaves its node: evicted or deleted (rescheduled later unless a
 * DaemonSet pod), or gone with the node (gone = 1). */
int disrupt_tl_unbind(disrupt_tl *t, uint32_t pod, int gone);

/* termination.c */
/* One drain round of tainted node n (kube index node) at t->now, over the
 * pods bound to it (pods[0..npods)): eviction groups in order, PDBs,
 * do-not-disrupt, the grace period. *empty = 1 when nothing holds the
 * node any more. */
int disrupt_tl_drain(disrupt_tl *t, disrupt_tl_node *n, const uint32_t *pods, uint32_t npods,
                     int *empty);

#endif
