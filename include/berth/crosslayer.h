/* berth/crosslayer.h - one what-if across the layers (`berth simulate
 * --workloads`): the Operator Nexus timeline (berth/nexus.h) and, for each
 * NKS cluster given its Kubernetes objects, the kube view that follows it.
 *
 * The mapping between layers: an NKS cluster's VMs are its Kubernetes
 * nodes. A Node names its VM by the annotation berth.io/vm, else the label
 * kubernetes.azure.com/nexus-vm, else its own name ("<cluster>-<pool>-<n>",
 * berth_nexus_vm_name). A Node without status.allocatable / capacity gets
 * its VM SKU's vCPU and memory. A Node without a VM, or a VM without a
 * Node, is a warning (a Node without a VM is never taken down).
 *
 * Per timeline step (each batch of a runtime upgrade is a phase of its
 * own) the nodes whose VMs stop (re-imaged machine, scaled-down pool,
 * deleted cluster, machine not ready) are cordoned and drained as the
 * eviction API does (PDBs through berth_kpdb_desired, a pod under two PDBs
 * refused, DaemonSet and mirror pods left, karpenter.sh/do-not-disrupt
 * honoured); evicted pods are rescheduled on the remaining nodes by one
 * what-if session per cluster (berth_ksession_*, the full kube-scheduler).
 * A pod the drain cannot evict holds it for the drain limit (10 minutes,
 * SPEC 1.5), then goes down with its node and is recreated (forced). Nodes
 * that come back receive pods again and pending pods are retried.
 *
 * With x->autoscaler (`--autoscaler`, crosslayer/buy.c) each phase that
 * leaves pods pending also records what Karpenter (the disruption
 * planner's new-capacity path), Ocean or the cluster-autoscaler
 * (berth_autoscale_plan) would launch for them, on the planner's own model
 * of the cluster set to the phase's state; with x->advise (bare metal,
 * crosslayer/advice.c) the nodes and machines that would place every
 * pending pod and, per runtime upgrade, a rack order (docs/nexus.md).
 *
 * Ownership: a berth_xl owns its clusters (their berth_kcluster and the
 * planners' models), the recorded phases and every string (its arena). Threads: one berth_xl from
 * one thread at a time; distinct ones may run concurrently. */
#ifndef BERTH_CROSSLAYER_H
#define BERTH_CROSSLAYER_H

#include <stdint.h>
#include <stdio.h>

#include "berth/doc.h"
#include "berth/kube.h"
#include "berth/nexus.h"

#define BERTH_XL_NONE UINT32_MAX
#define BERTH_XL_DRAIN_LIMIT_MINUTES 10  /* SPEC 1.5: a node's drain, then the re-image */

typedef struct berth_xl_cluster berth_xl_cluster; /* one NKS cluster's kube view */

/* One pod that moved or is pending, one drain hold, one short workload,
 * one PDB below its minimum. Strings live in the berth_xl. */
typedef struct berth_xl_pod {
    const char *ns, *name;
    const char *from, *to;        /* node names; to NULL: pending */
    const char *reason;           /* pending: kube-scheduler's "0/N nodes are available: ..." */
    int forced;                   /* deleted with its node after the drain limit */
} berth_xl_pod;

typedef struct berth_xl_hold {
    const char *ns, *name, *node;
    const char *reason;           /* "PodDisruptionBudget ns/x allows no more disruptions" ... */
    int64_t held_minutes;         /* how long it held the drain (the limit) */
} berth_xl_hold;

typedef struct berth_xl_short {
    const char *workload;         /* "Kind/namespace/name" */
    uint32_t running, desired;
} berth_xl_short;

typedef struct berth_xl_pdb {
    const char *ns, *name;
    int64_t healthy, desired;
} berth_xl_pdb;

/* One phase: a step, or one batch of a runtime upgrade, for one cluster
 * the step touched. */
typedef struct berth_xl_phase {
    uint32_t step;                /* index in nx->steps */
    uint32_t batch;               /* index in that step's batches, BERTH_XL_NONE */
    uint32_t cluster;             /* index in berth_xl.clusters */
    uint32_t nodes, nodes_down;   /* the cluster's nodes; down during the phase */
    uint32_t moved, forced, pending, recovered, ds_left, lost;
    int deleted;                  /* the NKS cluster was deleted: every pod lost */
    uint32_t pod0, npods;         /* pods[]: moved and newly pending pods */
    uint32_t hold0, nholds;       /* holds[] */
    uint32_t short0, nshorts;     /* shorts[]: workloads below desired after the phase */
    uint32_t pdb0, npdbs;         /* pdbs[]: PDBs below their minimum after the phase */
    /* --autoscaler (buy.c): what it launches for the pods pending after
     * the phase, and for how long (runtime-upgrade batches: the drain
     * limit when VMs go down plus the re-image; 0 otherwise) */
    uint32_t launch0, nlaunches;  /* launches[] */
    uint32_t launch_nodes;        /* nodes of those launches */
    uint32_t launch_placed;       /* pending pods they take */
    uint32_t launch_left;         /* pending pods they do not take */
    double launch_per_hour;       /* sum of count x price */
    int64_t minutes;              /* the phase's length on the timeline */
    double window_cost;           /* launch_per_hour x minutes / 60 */
    /* bare-metal advice (advice.c, --advise-upgrade): nodes of the
     * cluster's VM SKU that would let every pending pod place (scheduler
     * with spare nodes), BERTH_XL_NONE: more than BERTH_XL_SPARE_MAX */
    uint32_t extra_nodes;
    uint32_t extra_machines;      /* machines of the site's kind holding them (0: none) */
    const char *extra_pool;       /* the worker pool whose node they copy */
} berth_xl_phase;

/* One kind of node the autoscaler launches in a phase. Strings live in
 * the berth_xl. */
typedef struct berth_xl_launch {
    const char *group;            /* NodePool / VirtualNodeGroup */
    const char *instance_type, *zone, *capacity_type;
    uint32_t count;
    uint32_t pods;                /* pods the scheduler put there (Karpenter: of the group) */
    double price;                 /* per node per hour */
} berth_xl_launch;

typedef enum berth_xl_autoscaler {
    BERTH_XL_AUTOSCALER_NONE,
    BERTH_XL_AUTOSCALER_KARPENTER,
    BERTH_XL_AUTOSCALER_OCEAN,
    BERTH_XL_AUTOSCALER_CLUSTER_AUTOSCALER
} berth_xl_autoscaler;
/* "karpenter", "ocean", "cluster-autoscaler" -> the kind; -1 when unknown. */
int berth_xl_autoscaler_parse(const char *s);
const char *berth_xl_autoscaler_name(berth_xl_autoscaler a);

#define BERTH_XL_SPARE_MAX 32     /* spare nodes the machines-to-add advice tries */
#define BERTH_XL_ORDER_MAX_RACKS 64 /* racks the rack-order search reorders */

/* The rack order advice of one runtime-upgrade step (advice.c). */
typedef struct berth_xl_order {
    uint32_t step;
    uint32_t *racks;              /* advised order (rack indices of nx); nracks entries */
    uint32_t nracks;
    uint32_t given_breaches, advised_breaches; /* batches x clusters with a PDB below minimum */
    uint64_t given_pending, advised_pending;   /* sum over batches of pods pending */
    int searched;                 /* 0: more racks than BERTH_XL_ORDER_MAX_RACKS, given kept */
} berth_xl_order;

typedef struct berth_xl berth_xl;
struct berth_xl {
    berth_arena arena;
    berth_xl_cluster **clusters;  uint32_t nclusters, capclusters;
    berth_skips warnings;         /* mapping warnings, then the kube loaders' skips */
    berth_xl_phase *phases;       uint32_t nphases, capphases;
    berth_xl_pod *pods;           uint32_t npods, cappods;
    berth_xl_hold *holds;         uint32_t nholds, capholds;
    berth_xl_short *shorts;       uint32_t nshorts, capshorts;
    berth_xl_pdb *pdbs;           uint32_t npdbs, cappdbs;
    berth_xl_launch *launches;    uint32_t nlaunches, caplaunches;
    /* options, set before berth_xl_prepare */
    berth_xl_autoscaler autoscaler;
    int advise;                   /* bare-metal advice: extra nodes, rack order */
    int strict;
    /* results of the advice */
    berth_xl_order *orders;       uint32_t norders, caporders;
    int trial;                    /* internal: inside a rack-order trial (nothing reported) */
    struct berth_xl_asrc *asrcs;  uint32_t nasrcs, capasrcs; /* autoscaler inputs */
    /* test hook: called after every phase with the cluster's down flags
     * (per kube node of berth_xl_kube(x, cluster)) and the node of every
     * pod (BERTH_KUBE_NONE: pending), both valid during the call */
    void (*on_phase)(void *ctx, const berth_xl *x, uint32_t cluster, const uint8_t *down,
                     const uint32_t *pod_node);
    void *phase_ctx;
};

void berth_xl_init(berth_xl *x);
void berth_xl_free(berth_xl *x);

/* The cluster view named `cluster` (an NKS cluster name), added empty when
 * absent; *k gets its kube model to load files into (berth_kube_load).
 * 0 or BERTH_ENOMEM. */
int berth_xl_cluster_for(berth_xl *x, const char *cluster, berth_kcluster **k, uint32_t *index);
const char *berth_xl_cluster_name(const berth_xl *x, uint32_t cluster);
const berth_kcluster *berth_xl_kube(const berth_xl *x, uint32_t cluster);

/* The NKS cluster (a KubernetesCluster of nx, by spec) whose VMs the Nodes
 * of k name (annotation, label, node name as above): *cluster gets its
 * name. 0; 1 when no Node names a VM of any cluster; 2 when they name VMs
 * of several clusters (*cluster, *other get two of them). Before the run:
 * O(nodes x clusters). */
int berth_xl_guess_cluster(const berth_nexus *nx, const berth_kcluster *k, const char **cluster,
                           const char **other);

/* The autoscaler's own input for cluster `cluster` (NULL: every
 * cluster): NodePools and InstanceTypes (karpenter), VirtualNodeGroups and
 * InstanceTypes (ocean, cluster-autoscaler). src must live as long as x;
 * the cluster's --workloads sources are added by berth_xl_add_source (the
 * autoscaler's model is loaded from both, in that order). 0 or
 * BERTH_ENOMEM. */
int berth_xl_add_autoscaler_source(berth_xl *x, const char *cluster, const berth_source *src);
/* A --workloads source of cluster index `cluster` (berth_xl_cluster_for),
 * kept for the autoscaler's model. 0 or BERTH_ENOMEM. */
int berth_xl_add_source(berth_xl *x, uint32_t cluster, const berth_source *src);

/* Once every file is in: berth_kube_expand on every cluster, every
 * cluster name must be a KubernetesCluster of nx; with x->autoscaler, the
 * autoscaler's model of every cluster (berth_disrupt_load /
 * berth_autoscale_load of its sources, finalized). 0 or BERTH_EINVAL. */
int berth_xl_prepare(berth_xl *x, const berth_nexus *nx, berth_error *e);

/* berth_nexus_options.on_step (ctx: the berth_xl): records the phases of
 * step `step`. 0 or an error. */
int berth_xl_on_step(void *ctx, const berth_nexus *nx, uint32_t step, berth_error *e);

/* After a run: the phases of runtime-upgrade steps that left a
 * PodDisruptionBudget below its minimum (0: the upgrade keeps every PDB;
 * `simulate --advise-upgrade` searches the maxUnavailable that gives 0). */
uint32_t berth_xl_upgrade_pdb_breaches(const berth_nexus *nx, const berth_xl *x);

/* The bare-metal advice of `simulate --advise-upgrade` (no node can be
 * bought on an NKS cluster): the runtime upgrade's maxUnavailable as given
 * (the largest over its steps, capped at the largest rack), the phases that
 * broke a PDB with it, and the largest maxUnavailable (given or fewer) whose
 * run breaks none, 0 when even 1 does. */
typedef struct berth_xl_advice {
    int64_t given;
    uint32_t breaches;
    int64_t safe;
} berth_xl_advice;

/* ---- report (report/crosslayer_report.c) ---- */

/* Adds the kube view to root (berth_report_nexus_json's object, SPEC 6.3
 * `simulate`, docs/output.md): steps[i].workloads[] (and
 * steps[i].batches[b].workloads[] for a runtime upgrade's batches), one
 * entry per cluster the step touched, top-level "workloads" (per cluster:
 * nodes, pods, placed and pending at the start) and "warnings". detail: 0
 * at most 3 example pods per list, 1 every one. 0 or BERTH_ENOMEM. */
struct json_t;
int berth_report_crosslayer_json(struct json_t *root, const berth_nexus *nx, const berth_xl *x,
                                 int detail);
/* root["upgradeAdvice"] = {"maxUnavailable", "pdbBreaches", "safeMaxUnavailable" (null when
 * none)}; the table's advice line. 0 or BERTH_ENOMEM. */
int berth_report_crosslayer_advice_json(struct json_t *root, const berth_nexus *nx,
                                        const berth_xl *x, const berth_xl_advice *a);
void berth_report_crosslayer_advice_text(FILE *out, const berth_nexus *nx, const berth_xl *x,
                                         const berth_xl_advice *a);
/* The HTML page's upgrade timeline (report/crosslayer_svg.c): per runtime
 * upgrade step an SVG with one lane per rack (its batches over minutes)
 * and, under them, the pod-impact lane (per batch: pods moved, pending,
 * drains PDB-blocked, summed over the clusters). 0 or BERTH_EIO. */
int berth_report_crosslayer_html(FILE *out, const berth_nexus *nx, const berth_xl *x);
/* The per-step table of the kube view (after berth_report_nexus_table). */
int berth_report_crosslayer_table(FILE *out, const berth_nexus *nx, const berth_xl *x, int detail);

#endif
