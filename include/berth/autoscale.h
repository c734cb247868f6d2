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
 * kube arena; a berth_aplan owns its arrays.
 *
 * Threads: the library keeps no mutable global state. Distinct
 * berth_autoscale objects may be used from different threads at once; one
 * object from one thread at a time (planning writes scratch into it). */
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
/* comma-separated names of a pod's local volumes that do not block a drain */
#define BERTH_SAFE_TO_EVICT_LOCAL_VOLUMES "cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes"
#define BERTH_VNG_UNLIMITED INT64_MAX
/* cluster-autoscaler compatibility (SPEC 5.1): when a node became unneeded
 * (RFC 3339 node annotation), and the upstream priority expander ConfigMap */
#define BERTH_UNNEEDED_SINCE "berth.io/unneeded-since"
#define BERTH_PRIORITY_EXPANDER_CONFIGMAP "cluster-autoscaler-priority-expander"
#define BERTH_AUTOHEAL_GRACE_DEFAULT 300     /* seconds not Ready before auto-heal */
#define BERTH_CA_UNNEEDED_TIME_DEFAULT 600   /* --scale-down-unneeded-time */
#define BERTH_CA_SYSTEM_POD_TIMEOUT_DEFAULT 3600 /* --blocking-system-pod-distruption-timeout */
#define BERTH_ROLL_BATCH_DEFAULT 20          /* percent of a group's nodes per batch */

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

/* The planner's view of each kube pod, built from the kube model at load
 * (autoscale/load.c: mirror, DaemonSet owner, its scale-down label and
 * safe-to-evict annotations): the planners read these small records, not
 * the pods' label lists and owner texts. */
typedef struct berth_apod {
    int mirror;                   /* kubernetes.io/config.mirror */
    int daemon;                   /* owned by a DaemonSet (ownerReferences kind) */
    int restrict_scale_down;      /* label BERTH_RESTRICT_SCALE_DOWN is "true" */
    int safe_to_evict;            /* annotation: -1 unset, 0 "false", 1 "true" */
    const char *safe_local_volumes; /* safe-to-evict-local-volumes as written, or NULL */
} berth_apod;

/* The planner's view of each kube node, built from the kube model at load
 * (its berth.io/unneeded-since annotation). */
typedef struct berth_anode {
    int has_unneeded_since;       /* annotation berth.io/unneeded-since present */
    int64_t unneeded_since;       /* seconds since the epoch */
} berth_anode;

/* One entry of the priority expander: node groups whose name matches regex
 * (POSIX extended, unanchored as upstream) get priority. */
typedef struct berth_expander_priority {
    int64_t priority;
    const char *regex;
} berth_expander_priority;

typedef struct berth_autoscale {
    berth_kcluster kube;
    berth_vng *vngs;              uint32_t nvngs, capvngs;
    berth_reservation *res;       uint32_t nres, capres;
    berth_instance_type *types;   uint32_t ntypes, captypes;
    berth_apod *pod_info;         uint32_t npod_info, cappod_info; /* by kube pod */
    /* Headroom objects waiting for their group (resolved by finalize) */
    struct berth_headroom_ref *pending_headroom;
    uint32_t npending_headroom, cappending_headroom;
    berth_anode *node_info;       uint32_t nnode_info, capnode_info; /* by kube node */
    /* the cluster-autoscaler-priority-expander ConfigMap's priorities */
    berth_expander_priority *prio; uint32_t nprio, capprio;
    int has_prio;
    /* while loading: VirtualNodeGroup, Reservation and InstanceType names ->
     * index (duplicates and references found in O(1)); freed by
     * berth_autoscale_finalize */
    berth_nameidx vng_names, res_names, type_names;
} berth_autoscale;

void berth_autoscale_init(berth_autoscale *m);
void berth_autoscale_free(berth_autoscale *m);
/* Decodes every document of src: VirtualNodeGroup, Reservation, Headroom,
 * InstanceType (berth.io/v1, strict), List, and everything berth_kube_load
 * reads. Parse src into m->kube.arena. */
int berth_autoscale_load(berth_autoscale *m, const berth_source *src, int strict, berth_error *e);
/* berth_autoscale_load of the file at path ("-": stdin), streamed: each
 * document and List item decoded as it is parsed, then its tree released
 * (berth_kdocs_walk_file). */
int berth_autoscale_load_file(berth_autoscale *m, const char *path, int strict, berth_error *e);
/* Resolves references (Headroom -> group, group instance types,
 * reservations' types) and adds the warnings of berth_autoscale_warnings;
 * call once after the last load. */
int berth_autoscale_finalize(berth_autoscale *m, berth_error *e);
/* Adds to m->kube.skipped one warning per kind of input the autoscaler
 * ignores (autoscale/warnings.c, docs/autoscale.md "Warnings"): headroom
 * units larger than every allowed instance type, Nodes labelled with a
 * missing group or in no group, Pods bound to a missing Node. 0 or
 * BERTH_ENOMEM. */
int berth_autoscale_warnings(berth_autoscale *m);

/* ---- the plan ---- */

typedef enum berth_apolicy {
    BERTH_POLICY_OCEAN,           /* Spot Ocean (default) */
    BERTH_POLICY_CLUSTER_AUTOSCALER
} berth_apolicy;

/* cluster-autoscaler's expanders (SPEC 5.1); random is upstream's default. */
typedef enum berth_expander {
    BERTH_EXPANDER_RANDOM,
    BERTH_EXPANDER_LEAST_WASTE,
    BERTH_EXPANDER_MOST_PODS,
    BERTH_EXPANDER_LEAST_NODES,
    BERTH_EXPANDER_PRICE,
    BERTH_EXPANDER_PRIORITY
} berth_expander;

/* Zero-initialised options plan with every default. */
typedef struct berth_aplan_options {
    int64_t now;                  /* seconds since the epoch */
    int reference;                /* 1: the plain algorithm (no caches, no incremental
                                   * what-if session): the reference the tests compare
                                   * the fast path against; same decisions */
    /* replacements (Ocean policy) */
    const char *const *interrupt; /* nodes with a spot interruption notice */
    uint32_t ninterrupt;
    const char *roll;             /* virtual node group to roll; NULL: none */
    int64_t roll_percent;         /* batch, percent of its nodes; 0: BERTH_ROLL_BATCH_DEFAULT */
    int64_t autoheal_grace;       /* seconds not Ready before auto-heal (when set) */
    int has_autoheal_grace;       /* 0: BERTH_AUTOHEAL_GRACE_DEFAULT */
    /* cluster-autoscaler compatibility */
    berth_apolicy policy;
    berth_expander expander;
    uint64_t seed;                /* random expander and ties */
    int64_t unneeded_time;        /* seconds (when set) */
    int has_unneeded_time;        /* 0: BERTH_CA_UNNEEDED_TIME_DEFAULT */
    int custom_controller_pods_ok; /* --skip-nodes-with-custom-controller-pods=false: a pod
                                   * owned by any controller is replicated (default: only
                                   * ReplicationController, ReplicaSet, Job, StatefulSet) */
    int64_t system_pod_timeout;   /* --blocking-system-pod-distruption-timeout, seconds */
    int has_system_pod_timeout;   /* 0: BERTH_CA_SYSTEM_POD_TIMEOUT_DEFAULT */
    const berth_cancel *cancel;   /* NULL: no limit; else checked between the pass's parts
                                   * and every 8 pods of its what-if scheduling
                                   * (berth/cancel.h): BERTH_ETIMEDOUT, no plan */
    uint32_t threads;             /* threads in all for the what-if sessions' per-node
                                   * loops (CLI --threads; 0 or 1: the calling thread);
                                   * the plan is the same for every count
                                   * (docs/autoscale.md "Threads") */
} berth_aplan_options;

/* Expander by name ("least-waste", ...); -1 when unknown. */
int berth_expander_parse(const char *name);
const char *berth_expander_name(berth_expander x);

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
    uint32_t headroom_nodes;      /* of count: nodes opened for headroom only (no pods) */
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
    uint32_t *evicted;            /* cluster-autoscaler: expendable pods deleted, not moved */
    uint32_t nevicted;
} berth_ascaledown;

/* Replacement reasons (SPEC 5 "Replacement"). */
typedef enum berth_areason {
    BERTH_REPLACE_SPOT_INTERRUPTION,
    BERTH_REPLACE_AUTOHEAL,
    BERTH_REPLACE_ROLL,
    BERTH_REPLACE_REVERT_TO_RESERVED,
    BERTH_REPLACE_REVERT_TO_SPOT
} berth_areason;
/* "SpotInterruption", "AutoHeal", "Roll", "RevertToReserved", "RevertToSpot". */
const char *berth_replace_reason_name(berth_areason r);

/* Where a pod of a replaced node goes. */
typedef struct berth_arepmove {
    uint32_t pod;                 /* kube pod index */
    const char *node;             /* an existing node's or the new node's name */
    int waits;                    /* 1: pending until the new node registers */
} berth_arepmove;

/* One node replaced by a new one, launched first; the old one drains once
 * the new one registered, or at once on a spot interruption. */
typedef struct berth_areplace {
    uint32_t node;                /* kube node replaced */
    berth_areason reason;
    uint32_t vng;
    uint32_t type;                /* the new node's instance type (index into m->types) */
    berth_capacity_type capacity_type;
    const char *zone;
    double price;                 /* per hour, as scale-up reports it */
    const char *reservation;      /* NULL: none */
    const char *new_node;         /* the new node's name */
    int drain_immediately;        /* spot interruption */
    berth_arepmove *moves;
    uint32_t nmoves;
} berth_areplace;

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
    berth_areplace *rep;          uint32_t nrep, caprep; /* replacements, by node name */
    /* scale-up's cost and its lower bound (autoscale/bound.c, docs/autoscale.md
     * "Scale-up lower bound"): up_cost = sum of count x price of up[];
     * up_bound <= the cost of any set of new nodes for the pods of up[] in
     * their groups, so also <= up_cost */
    double up_cost;               /* $/h */
    double up_pods_cost;          /* $/h of the new nodes that hold pods (not headroom-only) */
    double up_bound;              /* $/h, <= up_pods_cost */
    int has_up_bound;
    /* scale-down's what-if questions (an answer dropped after an earlier
     * acceptance and asked again counts twice), and of them those asked on
     * worker sessions (threads: docs/autoscale.md "Threads"); diagnostics */
    uint32_t down_questions, down_worker_questions;
} berth_aplan;

/* One autoscaler pass at opt->now. m is not modified. */
int berth_autoscale_plan(const berth_autoscale *m, const berth_aplan_options *opt,
                         berth_aplan *out, berth_error *e);
void berth_aplan_free(berth_aplan *p);
/* How far the cost of scale-up's nodes that hold pods is above the lower
 * bound, as a fraction (up_pods_cost / up_bound - 1, at least 0): 1 with
 * *gap set, 0 when the bound is 0 and the cost is not (no finite
 * fraction). */
int berth_aplan_above_bound(const berth_aplan *p, double *gap);

/* ---- helpers shared with tests ---- */

/* berth's spot market score of offering o (lower is better):
 * price x (1 + interruptionRate) x (1 + 0.1 x (nodes in its zone - nodes
 * in the emptiest allowed zone)). */
double berth_market_score(const berth_offering *o, int64_t zone_nodes, int64_t min_zone_nodes);
/* The group of kube node `node`, -1 when none. */
int berth_autoscale_node_vng(const berth_autoscale *m, uint32_t node);

/* ---- the simulated timeline: berth autoscale simulate (autoscale/events.c,
 * autoscale/timeline.c; docs/autoscale.md "Simulate") ----
 *
 * Events are berth.io/v1 AutoscaleEvent documents (strict). Pods that
 * arrive later are loaded into m->kube up front and stay invisible to the
 * planner until their event; the simulation then mutates m (nodes added,
 * cordoned and removed, pods bound and unbound, prices changed). */

typedef enum berth_aevent_type {
    BERTH_AEV_POD_ARRIVE,
    BERTH_AEV_POD_LEAVE,
    BERTH_AEV_SPOT_INTERRUPTION,
    BERTH_AEV_PRICE_CHANGE
} berth_aevent_type;
const char *berth_aevent_type_name(berth_aevent_type t);

typedef struct berth_aevent {
    int64_t at;                   /* seconds since the epoch */
    berth_aevent_type type;
    const char *what;             /* one line for reports: the pods, the node, the offering */
    uint32_t first_pod, npods;    /* PodArrive: kube pods first_pod .. first_pod + npods - 1 */
    const char *pod_ns, *pod_name;/* PodLeave */
    const char *node;             /* SpotInterruption */
    uint32_t itype;               /* PriceChange: instance type index, zone, capacity type */
    const char *zone;
    berth_capacity_type ct;
    double price;
    int available;                /* PriceChange: 1 / 0 sets the offering's availability,
                                   * -1 (field absent) leaves it */
} berth_aevent;

typedef struct berth_atimeline {
    berth_aevent *ev;             uint32_t nev, capev;    /* sorted by time (stable) after finish */
    int64_t *grace;               uint32_t ngrace, capgrace; /* per kube pod: terminationGracePeriodSeconds */
    uint8_t *later;               uint32_t nlater, caplater; /* per kube pod: arrives by an event */
} berth_atimeline;

void berth_atimeline_init(berth_atimeline *t);
void berth_atimeline_free(berth_atimeline *t);
/* Reads spec.terminationGracePeriodSeconds (default 30) of the Pod documents
 * of src (also inside Lists); call for every estate source after
 * berth_autoscale_load of it, in the same order. */
int berth_atimeline_scan_pods(berth_atimeline *t, const berth_autoscale *m, const berth_source *src,
                              berth_error *e);
/* Decodes the AutoscaleEvent documents of src (List accepted; strict: an
 * unknown field is an error, file:line:col and field path); PodArrive pods
 * are loaded into m (after berth_autoscale_finalize). */
int berth_atimeline_load_events(berth_atimeline *t, berth_autoscale *m, const berth_source *src,
                                berth_error *e);
/* Sorts the events by time (input order among equal times). */
void berth_atimeline_finish(berth_atimeline *t);

typedef struct berth_asim_options {
    int64_t from, to;             /* the first and the last step (seconds) */
    int64_t step;                 /* > 0; Ocean evaluates every 60 s */
    int64_t launch_delay;         /* a new node registers this long after its launch (120) */
    int64_t drain_timeout;        /* >= 300: a draining node is terminated after at most this */
    int reference;                /* berth_aplan_options.reference for every pass */
    const berth_cancel *cancel;   /* NULL: no limit; else checked per step and in each
                                   * pass: BERTH_ETIMEDOUT, no result (the model is then
                                   * mid-step: discard it) */
    uint32_t threads;             /* berth_aplan_options.threads for every pass */
} berth_asim_options;

typedef struct berth_asim_step {
    int64_t at;
    uint32_t nodes;               /* registered, launching and draining nodes */
    double cost_per_hour;         /* what those nodes cost per hour at this step */
    uint32_t pending;             /* pods without a node after the step */
    uint32_t launched, terminated;
    uint32_t ev0, nev;            /* events applied: result.events[ev0 .. ev0 + nev) */
    uint32_t rep0, nrep;          /* replacements started: result.reps[rep0 .. rep0 + nrep) */
} berth_asim_step;

/* A replacement the timeline started: the new node launched; the old one
 * drains once the new one has registered. */
typedef struct berth_asim_replace {
    int64_t at;
    berth_areason reason;
    const char *node;             /* the node replaced */
    const char *new_node;         /* the node launched for it */
    const char *type_name;        /* the new node's instance type */
    berth_capacity_type capacity_type;
    const char *zone;
} berth_asim_replace;

typedef struct berth_asim_result {
    berth_asim_step *steps;       uint32_t nsteps, capsteps;
    uint32_t *events;             uint32_t nevents, capevents; /* indices into the timeline's ev */
    const char **notes;           /* per applied event: what happened, or NULL */
    berth_asim_replace *reps;     uint32_t nreps, capreps; /* replacements started */
    double total_cost;            /* integral of costPerHour over [from, to], dollars */
    double pending_seconds;       /* sum over pods of the time they waited for a node */
    double max_pending_seconds;
    uint32_t nodes_min, nodes_max, launched, terminated;
    berth_arena arena;
} berth_asim_result;

/* Runs the timeline on m (mutated): every step applies the events due,
 * registers launched nodes (a replacement's old node then drains),
 * terminates drained ones, runs one autoscaler pass and applies it
 * (scale-up, scale-down and replacements). 0, or BERTH_EINVAL for bad options, or an error. */
int berth_autoscale_simulate(berth_autoscale *m, const berth_atimeline *t,
                             const berth_asim_options *o, berth_asim_result *out, berth_error *e);
void berth_asim_result_free(berth_asim_result *r);

#endif
