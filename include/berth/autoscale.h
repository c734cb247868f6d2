/* berth/autoscale.h - container-driven autoscaling with Spot Ocean's
 * semantics (SPEC 5, 5.1).
 *
 * The model: berth.io/v1 VirtualNodeGroups (labels, taints, allowed
 * instance types and zones, min/max nodes, purchase strategy, headroom),
 * Reservations (reserved instances by count, savings plans by hourly
 * commitment), Headroom objects, InstanceTypes (berth/instance.h), and the
 * Kubernetes objects (Node, Pod, PodDisruptionBudget, workloads) in an
 * embedded berth_kcluster. A plan at a moment is one autoscaler pass:
 * scale-up for pending pods that fit no existing node (and for headroom),
 * then scale-down from the least utilised node. Every placement question
 * goes through the kube scheduler on a view of the cluster
 * (berth_kube_schedule_view). The algorithms, the market score and the
 * work bounds are in docs/autoscale.md.
 *
 * Ownership: a berth_autoscale owns all it holds; strings live in its
 * kube arena; a berth_aplan owns its arrays. */
#ifndef BERTH_AUTOSCALE_H
#define BERTH_AUTOSCALE_H

#include <stdint.h>

#include "berth/doc.h"
#include "berth/error.h"
#include "berth/instance.h"
#include "berth/kube.h"
#include "berth/labels.h"
#include "berth/taints.h"

/* The node label naming a node's virtual node group (set on new nodes;
 * a node without it belongs to the first group, by name, whose labels and
 * taints it carries). */
#define BERTH_VNG_LABEL "berth.io/virtual-node-group"
#define BERTH_RESTRICT_SCALE_DOWN "spotinst.io/restrict-scale-down"
#define BERTH_SAFE_TO_EVICT "cluster-autoscaler.kubernetes.io/safe-to-evict"
#define BERTH_VNG_UNLIMITED INT64_MAX

/* Headroom: numOfUnits units of (cpu, memory, gpu) kept free. */
typedef struct berth_headroom {
    int64_t cpu;                  /* millicores per unit */
    int64_t memory;               /* bytes per unit */
    int64_t gpu;                  /* GPUs per unit */
    int64_t units;                /* numOfUnits */
} berth_headroom;

typedef struct berth_vng {
    const char *name;
    berth_labels labels;          /* spec.labels: put on every node */
    berth_taint *taints;          /* spec.taints */
    uint32_t ntaints;
    const char **types;           /* spec.instanceTypes; none: every type */
    uint32_t ntypes;
    const char **zones;           /* spec.zones; none: every zone */
    uint32_t nzones;
    int64_t min_nodes;            /* default 0 */
    int64_t max_nodes;            /* default BERTH_VNG_UNLIMITED */
    int64_t spot_percentage;      /* 0..100, default 100 */
    int fallback_to_od;           /* default true */
    int utilize_reserved;         /* utilizeReservedInstances, default true */
    int utilize_commitments;      /* utilizeCommitments, default false */
    berth_headroom *headroom;     /* spec.headroom[] plus Headroom objects */
    uint32_t nheadroom, capheadroom;
} berth_vng;

typedef struct berth_reservation {
    const char *name;
    const char *instance_type;    /* exactly one of instance_type and family */
    const char *family;
    const char *zone;             /* NULL: regional */
    int64_t count;                /* reserved instances (0 with a commitment) */
    double hourly_commitment;     /* savings plan: dollars per hour (0 with count) */
} berth_reservation;

/* What the planner reads beyond the kube model, per kube pod. */
typedef struct berth_apod {
    int mirror;                   /* kubernetes.io/config.mirror */
    int safe_to_evict;            /* annotation: -1 unset, 0 "false", 1 "true" */
} berth_apod;

typedef struct berth_autoscale {
    berth_kcluster kube;
    berth_vng *vngs;              uint32_t nvngs, capvngs;
    berth_reservation *res;       uint32_t nres, capres;
    berth_instance_type *types;   uint32_t ntypes, captypes;
    berth_apod *pod_info;         uint32_t npod_info, cappod_info; /* by kube pod */
    /* Headroom objects waiting for their group (resolved by finalize) */
    struct berth_headroom_ref *pending_headroom;
    uint32_t npending_headroom, cappending_headroom;
} berth_autoscale;

void berth_autoscale_init(berth_autoscale *m);
void berth_autoscale_free(berth_autoscale *m);
/* Decodes every document of src: VirtualNodeGroup, Reservation, Headroom,
 * InstanceType (berth.io/v1, strict), List, and everything berth_kube_load
 * reads. Parse src into m->kube.arena. */
int berth_autoscale_load(berth_autoscale *m, const berth_source *src, int strict, berth_error *e);
/* Resolves references (Headroom -> group, group instance types,
 * reservations' types); call once after the last load. */
int berth_autoscale_finalize(berth_autoscale *m, berth_error *e);

/* ---- the plan ---- */

typedef struct berth_aplan_options {
    int64_t now;                  /* seconds since the epoch */
} berth_aplan_options;

/* One group of identical new nodes. */
typedef struct berth_ascaleup {
    uint32_t vng;
    uint32_t type;                /* index into m->types */
    berth_capacity_type capacity_type;
    const char *zone;
    uint32_t count;
    double price;                 /* per node per hour (reserved: the reservation's marginal price) */
    uint32_t *pods;               /* kube pod indices the scheduler put on these nodes */
    uint32_t npods;
    const char **nodes;           /* the new nodes' names */
    int64_t headroom_units;       /* units of headroom these nodes hold */
    const char *reservation;      /* capacity type reserved: the Reservation used */
} berth_ascaleup;

typedef struct berth_amove {
    uint32_t pod;
    uint32_t node;                /* kube node index */
} berth_amove;

typedef struct berth_ascaledown {
    uint32_t node;
    uint32_t vng;
    berth_amove *moves;
    uint32_t nmoves;
    double utilisation;           /* max(cpu, memory) requested / allocatable */
} berth_ascaledown;

typedef struct berth_aunsched {
    uint32_t pod;                 /* kube pod index */
    char reason[256];
} berth_aunsched;

typedef struct berth_ablocked {
    uint32_t node;
    char reason[256];
} berth_ablocked;

typedef struct berth_aplan {
    int64_t at;
    berth_ascaleup *up;           uint32_t nup, capup;
    berth_ascaledown *down;       uint32_t ndown, capdown;
    berth_aunsched *unsched;      uint32_t nunsched, capunsched;
    berth_ablocked *blocked;      uint32_t nblocked, capblocked; /* nodes kept, and why */
    uint32_t *on_existing;        /* pending pods the scheduler put on existing nodes */
    uint32_t *on_existing_node;
    uint32_t non_existing;
    berth_arena arena;            /* names of new nodes */
} berth_aplan;

/* One autoscaler pass at opt->now. m is not modified. */
int berth_autoscale_plan(const berth_autoscale *m, const berth_aplan_options *opt,
                         berth_aplan *out, berth_error *e);
void berth_aplan_free(berth_aplan *p);

/* ---- helpers shared with tests ---- */

/* berth's spot market score of offering o (lower is better):
 * price x (1 + interruptionRate) x (1 + 0.1 x (nodes in its zone - nodes
 * in the emptiest allowed zone)). */
double berth_market_score(const berth_offering *o, int64_t zone_nodes, int64_t min_zone_nodes);
/* The group of kube node `node`, -1 when none. */
int berth_autoscale_node_vng(const berth_autoscale *m, uint32_t node);

#endif
