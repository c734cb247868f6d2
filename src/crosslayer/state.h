/* crosslayer/state.h - the per-cluster kube view of `simulate --workloads`
 * (internal): the mapping of nodes to VMs (map.c), the eviction state
 * (drain.c) and the session the timeline moves pods in (whatif.c). */
#ifndef BERTH_CROSSLAYER_STATE_H
#define BERTH_CROSSLAYER_STATE_H

#include "berth/crosslayer.h"
#include "berth/autoscale.h"
#include "berth/disrupt.h"

struct berth_xl_cluster {
    const char *name;             /* the NKS cluster */
    berth_kcluster k;
    int opened, gone;
    berth_ksession *s;
    /* mapping (map.c) */
    const char **vm_name;         /* per node: the VM it names */
    berth_nameidx vm_nodes;       /* VM name -> node */
    uint32_t *node_vm;            /* per node: its VM (nx->vms index), BERTH_XL_NONE */
    uint32_t vms_checked;         /* VMs of nx already checked for a Node */
    /* per node */
    uint8_t *down, *next, *draining;
    /* per pod */
    uint32_t *pod_node;           /* session's node, BERTH_KUBE_NONE: pending */
    uint8_t *healthy;             /* counted healthy by its PDBs */
    uint8_t *ready;               /* Ready in the input, or placed by the simulation */
    berth_dpod *dnd;              /* karpenter.sh/do-not-disrupt, as disrupt reads it */
    uint32_t *wl;                 /* workload id or BERTH_KUBE_NONE (bare pods, DaemonSets) */
    uint32_t *pp_start, *pp;      /* CSR: the PDBs matching each pod */
    /* per PDB */
    int64_t *pdb_expected, *pdb_healthy;
    /* per workload */
    const char **wl_name;
    uint32_t nwl, *wl_desired, *wl_running;
    /* scratch, sized to the pods */
    uint32_t *cand, *ev, *placed;
    const char **why;
    uint32_t *pending;            /* pods without a node, in no order */
    uint32_t npending;
    int64_t now;                  /* the input's moment: latest creation or start */
    uint32_t start_placed, start_pending;
    /* the --workloads sources, and the autoscaler's model (buy.c) */
    berth_source *srcs;
    uint32_t nsrcs, capsrcs;
    struct berth_autoscale *am;   /* ocean, cluster-autoscaler */
    berth_disrupt *dm;            /* karpenter */
    uint32_t *m_node;             /* per node: the model's node */
    uint32_t phantom;             /* karpenter: the model node holding the pending pods */
    /* advice.c: rack-order trials save and restore the state */
    struct xl_saved *saved;
};

struct berth_xl_asrc {
    const char *cluster;          /* NULL: every cluster */
    berth_source src;
};

/* map.c */
/* The VM name node n names (annotation berth.io/vm, label
 * kubernetes.azure.com/nexus-vm, its name). */
const char *xl_node_vm(const berth_knode *n);
/* Opens c against the estate: maps nodes to live VMs of its cluster
 * (warnings into x), fills allocatable from VM SKUs, opens the session
 * and places the pods pending in the input. 0 or an error. */
int xl_open(berth_xl *x, berth_xl_cluster *c, const berth_nexus *nx, uint32_t cid, berth_error *e);
/* Warns about VMs of cluster cid that no Node names (new since the last call). */
int xl_check_vms(berth_xl *x, berth_xl_cluster *c, const berth_nexus *nx, uint32_t cid);

/* drain.c */
/* Sets pod's health, keeping its PDBs' healthy counts. */
void xl_set_healthy(berth_xl_cluster *c, uint32_t pod, int h);
/* Whether the eviction API would evict pod now; why gets the refusal. */
int xl_may_evict(const berth_xl_cluster *c, uint32_t pod, int64_t now, char *why, size_t size);
int xl_is_daemon(const berth_kpod *p);
/* PDBs per pod, do-not-disrupt, workload ids (once, before xl_open). */
int xl_drain_init(berth_xl_cluster *c, berth_error *e);

/* buy.c */
int xl_buy_prepare(berth_xl *x, berth_xl_cluster *c, berth_error *e);
/* The autoscaler's launches for the pods pending after phase ph. */
int xl_buy_phase(berth_xl *x, berth_xl_cluster *c, berth_xl_phase *ph, int64_t now,
                 berth_error *e);
void xl_buy_free(berth_xl_cluster *c);

/* advice.c */
/* ph->extra_nodes: spare nodes like the cluster's first VM-backed node
 * added one at a time until the pending pods all place (rolled back). */
int xl_extra_nodes(berth_xl *x, berth_xl_cluster *c, const berth_nexus *nx, berth_xl_phase *ph,
                   berth_error *e);
/* The rack-order search of runtime-upgrade step `step` (before its
 * phases run): state saved, racks tried greedily, state restored. */
int xl_rack_order(berth_xl *x, const berth_nexus *nx, uint32_t step, berth_error *e);
void xl_saved_free(berth_xl_cluster *c);
/* After the step's phases ran: the given order's figures; the given order
 * kept unless the greedy one is strictly better. */
void xl_rack_order_finish(berth_xl *x, const berth_nexus *nx, uint32_t step);

/* whatif.c */
int xl_run_phase(berth_xl *x, berth_xl_cluster *c, const berth_nexus *nx, uint32_t step,
                 uint32_t batch, const berth_upgrade_batch *bt, uint32_t ci, berth_error *e);

/* whatif.c: record helpers */
int xl_push_pod(berth_xl *x, const berth_xl_cluster *c, uint32_t pod, const char *from,
                const char *to, const char *reason, int forced);

#endif
