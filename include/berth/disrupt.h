/* berth/disrupt.h - disruption planning with Karpenter / AKS Node Auto
 * Provisioning semantics (SPEC 4, 4.1).
 *
 * The model: karpenter.sh/v1 NodePools and NodeClaims, berth.io/v1
 * InstanceTypes, and the Kubernetes objects (Node, Pod,
 * PodDisruptionBudget, workloads) in an embedded berth_kcluster. A plan at
 * a moment ("now") is one disruption pass: expirations, then the first of
 * Emptiness, Drift, multi-node and single-node consolidation that acts.
 * Re-placing pods is simulated with the kube scheduling pipeline (one
 * what-if session per plan, berth_ksession; the reference path runs
 * berth_kube_schedule on a view of the remaining nodes plus at most one
 * hypothetical node per question). A plan also reports what its actions
 * leave, a lower bound on what any plan can leave, and with `optimize` a
 * consolidation beyond Karpenter's greedy one (docs/disrupt.md).
 *
 * Times are seconds since the Unix epoch (UTC); durations are seconds,
 * BERTH_DURATION_NEVER for "Never". Ownership: a berth_disrupt owns all it
 * holds; strings live in its arena; a berth_dplan owns its arrays.
 *
 * Threads: the library keeps no mutable global state. Distinct
 * berth_disrupt objects may be used from different threads at once; one
 * object from one thread at a time (planning writes scratch into it). */
#ifndef BERTH_DISRUPT_H
#define BERTH_DISRUPT_H

#include <stdint.h>

#include "berth/doc.h"
#include "berth/error.h"
#include "berth/instance.h"
#include "berth/kube.h"
#include "berth/labels.h"
#include "berth/nameidx.h"
#include "berth/taints.h"

#define BERTH_DURATION_NEVER INT64_MAX
#define BERTH_BUDGET_UNLIMITED INT32_MAX
#define BERTH_DISRUPT_MAX_BUDGETS 50
/* The version berth writes next to its own template hash. */
#define BERTH_DISRUPT_HASH_VERSION "berth-v1"

/* Budget reasons (bit i = reason i) and action reasons. */
typedef enum berth_dreason {
    BERTH_DR_EMPTY,
    BERTH_DR_DRIFTED,
    BERTH_DR_UNDERUTILIZED,
    BERTH_DR_EXPIRED,        /* actions only: no budget */
} berth_dreason;
#define BERTH_DR_BUDGET_COUNT 3
const char *berth_dreason_name(berth_dreason r);

/* berth_capacity_type, berth_offering, berth_instance_type: berth/instance.h */

typedef enum berth_consolidation_policy {
    BERTH_CP_WHEN_EMPTY_OR_UNDERUTILIZED,
    BERTH_CP_WHEN_EMPTY,
    BERTH_CP_BALANCED,
} berth_consolidation_policy;

/* ---- budgets (disrupt/budget.c) ---- */

typedef struct berth_dbudget {
    const char *nodes;       /* "20%" or "5" as written */
    uint32_t reasons;        /* bit per berth_dreason; 0 = every reason */
    const char *schedule;    /* 5-field cron or @macro; NULL = always active */
    int64_t duration;        /* seconds (with a schedule) */
} berth_dbudget;

/* A parsed 5-field cron schedule (robfig/cron ParseStandard, UTC). */
typedef struct berth_cron {
    uint64_t minute;         /* bit per allowed value */
    uint32_t hour, dom, month;
    uint8_t dow;
    int dom_star, dow_star;  /* field began with '*' or '?' */
} berth_cron;

/* Parses a schedule: 5 fields (numbers, names JAN..DEC / SUN..SAT, '*',
 * '?', ranges a-b, steps /n, lists) or @yearly, @annually, @monthly,
 * @weekly, @daily, @midnight, @hourly. 0 or BERTH_EINVAL (reason in *why). */
int berth_cron_parse(const char *s, berth_cron *out, const char **why);
/* Go's zero time.Time (0001-01-01T00:00:00Z) in seconds since the epoch:
 * what robfig/cron's Next returns when nothing matches within five years. */
#define BERTH_CRON_ZERO_TIME (-62135596800LL)
/* The first hit strictly after t (second resolution; hits are at second
 * 0 of a minute; any t, also before 1970), found by jumping field by
 * field; BERTH_CRON_ZERO_TIME when none within five years (robfig). */
int64_t berth_cron_next(const berth_cron *c, int64_t t);
/* A budget duration: h and m only ("10m", "1h30m", optional trailing
 * "0s"). Seconds, or -1 when invalid. */
int64_t berth_budget_duration_parse(const char *s);
/* A Go duration ("30s", "720h", "1h30m", "1.5h") or "Never"
 * (BERTH_DURATION_NEVER). Seconds (fractions dropped), or -1 when invalid
 * or negative. */
int64_t berth_duration_parse(const char *s);
/* Go's time.ParseDuration exactly: an optional sign, then one or more
 * decimal numbers each with an optional fraction and a unit (ns, us, µs,
 * μs, ms, s, m, h), or "0"; the same overflow limits and fraction
 * arithmetic. 0 with *ns (may be negative: "-1s"), or -1 when invalid. */
int berth_go_duration_parse(const char *s, int64_t *ns);
/* Whether `nodes` matches ^((100|[0-9]{1,2})%|[0-9]+)$. */
int berth_budget_nodes_valid(const char *nodes);
/* One budget's limit at now for a pool of `nodes` nodes:
 * BERTH_BUDGET_UNLIMITED when inactive, ceil(p * nodes / 100) for a
 * percent, the integer itself otherwise (not capped); -1 on a parse error
 * (the caller fails closed). */
int64_t berth_budget_limit(const berth_dbudget *b, int64_t nodes, int64_t now);
/* The minimum over the budgets that are active and whose reasons are
 * unset or contain `reason`; 0 for every reason if any budget fails to
 * parse; BERTH_BUDGET_UNLIMITED when none applies. */
int64_t berth_budgets_allowed(const berth_dbudget *b, uint32_t n, berth_dreason reason,
                              int64_t nodes, int64_t now);

/* ---- the model ---- */

/* A resource amount (NodePool spec.limits, Node status.capacity): cpu in
 * millicores, everything else in whole units rounded up (memory bytes,
 * pods, nodes, GPUs). */
typedef struct berth_dquantity {
    const char *resource;
    int64_t value;
} berth_dquantity;

typedef struct berth_nodepool {
    const char *name;
    berth_labels labels;          /* spec.template.metadata.labels */
    berth_labels annotations;     /* spec.template.metadata.annotations */
    berth_taint *taints, *startup_taints;
    uint32_t ntaints, nstartup_taints;
    berth_requirement *reqs;      /* spec.template.spec.requirements */
    uint32_t nreqs;
    uint32_t *min_values;         /* per requirement: minValues, 0 when unset */
    berth_dquantity *limits;      /* spec.limits (any resource; "nodes" counts nodes) */
    uint32_t nlimits;
    int64_t weight;               /* spec.weight, 0 when unset (1..100) */
    const char *class_group, *class_kind, *class_name; /* nodeClassRef */
    int64_t expire_after;         /* default 720h */
    int64_t termination_grace;    /* -1 unset */
    berth_consolidation_policy policy;
    int64_t consolidate_after;    /* default 0 */
    berth_dbudget *budgets;       /* default [{nodes: "10%"}] */
    uint32_t nbudgets;
    const char *hash_annotation;  /* metadata.annotations karpenter.sh/nodepool-hash */
    const char *hash_version;     /* ... -version */
    char hash[24];                /* berth's template hash (decimal) */
} berth_nodepool;

typedef struct berth_nodeclaim {
    const char *name;
    const char *nodepool;         /* label karpenter.sh/nodepool */
    const char *node_name;        /* status.nodeName, else the claim's name */
    berth_labels labels;
    const char *hash, *hash_version; /* annotations */
    int64_t created;              /* creationTimestamp */
    int has_created;
    int deleting;                 /* deletionTimestamp set */
    int initialized;              /* condition Initialized True */
    int64_t initialized_at;       /* its lastTransitionTime (0 unknown) */
    int drifted;                  /* condition Drifted True */
    int64_t drifted_at;
    int64_t last_pod_event;       /* status.lastPodEventTime (0 unknown) */
    int has_termination_grace;    /* spec.terminationGracePeriod set */
    /* timeline and AKSNodeClass drift (see the "timeline" section) */
    int64_t termination_grace;    /* spec.terminationGracePeriod seconds (when set) */
    const char *class_hash;       /* annotation karpenter.azure.com/aksnodeclass-hash */
    const char *class_hash_version; /* ... -version */
    int instance_terminating;     /* condition InstanceTerminating True: the instance is
                                   * being deleted (not counted for budgets, not a candidate) */
} berth_nodeclaim;

/* The planner's view of each kube node / pod, built from the kube model at
 * load and finalize (disrupt/load.c; the timeline changes it as it runs). */
typedef struct berth_dnode {
    int ready;                    /* condition Ready True (default true) */
    int deleting;                 /* deletionTimestamp */
    int do_not_disrupt;           /* annotation karpenter.sh/do-not-disrupt "true" */
    int initialized_label;        /* label karpenter.sh/initialized=true: initialised
                                   * (StateNode.Initialized) */
    berth_dquantity *capacity;    /* status.capacity (NodePool limits count it) */
    uint32_t ncapacity;
    int marked;                   /* marked for deletion by a disruption under way (the
                                   * timeline's candidates awaiting their replacements):
                                   * StateNode.MarkedForDeletion, disrupting for budgets */
} berth_dnode;

typedef struct berth_dpod {
    int64_t deletion_cost;        /* controller.kubernetes.io/pod-deletion-cost */
    int dnd;                      /* do-not-disrupt: 0 none (or a value that is neither
                                   * "true" nor a positive Go duration), 1 "true",
                                   * 2 duration */
    int64_t dnd_seconds;          /* the duration form, whole seconds */
    int64_t started;              /* status.startTime, else creation (0 unknown) */
    int ready;                    /* condition Ready True */
    int mirror;                   /* kubernetes.io/config.mirror */
    int terminal;                 /* phase Succeeded / Failed */
    const char *nominated;        /* status.nominatedNodeName */
    int64_t dnd_ns;               /* the duration form in nanoseconds (0: dnd_seconds) */
    int has_start_time;           /* status.startTime given */
} berth_dpod;

/* Whether a pod's do-not-disrupt is active at now (upstream
 * pod.IsDoNotDisruptActive): "true"; or a positive duration d and the pod
 * has no status.startTime (fail safe) or now - startTime < d (nanosecond
 * comparison). Terminating pods are the caller's business. */
int berth_dpod_dnd_active(const berth_dpod *x, int64_t now);

typedef struct berth_disrupt {
    berth_kcluster kube;          /* nodes, pods, PDBs, workloads */
    berth_nodepool *pools;        uint32_t npools, cappools;
    berth_nodeclaim *claims;      uint32_t nclaims, capclaims;
    berth_instance_type *types;   uint32_t ntypes, captypes;
    berth_dnode *node_info;       uint32_t nnode_info, capnode_info;  /* by kube node */
    berth_dpod *pod_info;         uint32_t npod_info, cappod_info;    /* by kube pod */
    struct berth_aksnodeclass *classes; uint32_t nclasses, capclasses; /* "timeline" section */
    /* while loading: NodePool, NodeClaim, AKSNodeClass and InstanceType
     * names -> index (duplicates found in O(1)); freed by
     * berth_disrupt_finalize */
    berth_nameidx pool_names, claim_names, class_names, type_names;
} berth_disrupt;

void berth_disrupt_init(berth_disrupt *m);
void berth_disrupt_free(berth_disrupt *m);
/* Decodes every document of src: NodePool, NodeClaim (karpenter.sh/v1),
 * InstanceType (berth.io/v1, strict), List, and everything
 * berth_kube_load reads. Parse src into m->kube.arena. */
int berth_disrupt_load(berth_disrupt *m, const berth_source *src, int strict, berth_error *e);
/* berth_disrupt_load of the file at path ("-": stdin), streamed: each
 * document and List item is decoded as it is parsed and its tree released
 * (berth_kdocs_walk_file), so the peak stays near the model's size. */
int berth_disrupt_load_file(berth_disrupt *m, const char *path, int strict, berth_error *e);
/* berth_disrupt_load_file of buf[0, len), named name in messages. */
int berth_disrupt_load_buffer(berth_disrupt *m, const char *name, const char *buf, size_t len,
                              int strict, berth_error *e);
/* Checks references, computes template hashes and adds the warnings of
 * berth_disrupt_warnings; call once after the last berth_disrupt_load. */
int berth_disrupt_finalize(berth_disrupt *m, berth_error *e);
/* Adds to m->kube.skipped one warning per kind of input the planner
 * ignores (disrupt/warnings.c, docs/disrupt.md "Warnings"): NodeClaims
 * whose Node or NodePool is not in the input, Nodes labelled with a
 * missing NodePool, managed Nodes without a price, Pods bound to a missing
 * Node, a missing AKSNodeClass. 0 or BERTH_ENOMEM. */
int berth_disrupt_warnings(berth_disrupt *m);
/* berth's stable template hash of a NodePool (SPEC 4.1 drift fields). */
void berth_nodepool_hash(const berth_nodepool *p, char out[24]);

/* ---- the plan ---- */

typedef struct berth_dplan_options {
    int64_t now;                  /* seconds since the epoch */
    int spot_to_spot;             /* feature gate SpotToSpotConsolidation */
    int reference;                /* the slow reference path: one scheduling run per
                                   * replacement option (tests, CLI --reference) */
    int optimize;                 /* also run the optimiser (CLI --optimize) and show its
                                   * consolidation when strictly better than Karpenter's */
    const berth_cancel *cancel;   /* NULL: no limit; else checked per candidate set and
                                   * every 8 pods moved (berth/cancel.h): BERTH_ETIMEDOUT,
                                   * no plan */
    uint32_t threads;             /* threads in all for the what-if session's per-node
                                   * loops and, on 1,024 nodes or more, for consolidation
                                   * questions answered speculatively on worker sessions
                                   * (CLI --threads; 0 or 1: the calling thread); the
                                   * plan is the same for every count
                                   * (docs/disrupt.md "Threads") */
} berth_dplan_options;

/* A cheaper offering a replacement did not use, and why (JSON
 * `replacement.excluded`). */
typedef struct berth_dexcluded {
    const char *instance_type, *zone, *nodepool;
    berth_capacity_type capacity_type;
    double price;
    char reason[200];
} berth_dexcluded;
#define BERTH_DEXCLUDED_MAX 5

typedef struct berth_dreplacement {
    const char *instance_type, *zone, *nodepool;
    berth_capacity_type capacity_type;
    double price;
    /* the NodePool's requirements it satisfies (the pool's own array and
     * minValues, model-owned; JSON `replacement.requirements`) and the
     * cheapest offerings below its price that were excluded, one per
     * instance type, cheapest first (consolidation replacements) */
    const berth_requirement *requirements;
    const uint32_t *min_values;
    uint32_t nrequirements;
    berth_dexcluded excluded[BERTH_DEXCLUDED_MAX];
    uint32_t nexcluded;
} berth_dreplacement;

typedef struct berth_daction {
    int replace;                  /* 0 delete, 1 replace */
    berth_dreason reason;
    uint32_t *nodes;              /* kube node indices, in decision order */
    uint32_t nnodes;
    berth_dreplacement *replacements; /* replace: one (drift: one or more) */
    uint32_t nreplacements;
    double savings;               /* per hour: nodes' price - replacements' */
} berth_daction;

typedef struct berth_dblocked {
    uint32_t node;                /* kube node index */
    char reason[200];
} berth_dblocked;

typedef struct berth_dpool_allow {
    uint32_t pool;
    int64_t nodes;                /* nodes counted for budgets */
    int64_t disrupting;
    int64_t allowed[BERTH_DR_BUDGET_COUNT]; /* max(budget - disrupting, 0) */
} berth_dpool_allow;

typedef struct berth_dplan {
    int64_t at;
    berth_dpool_allow *pools;     uint32_t npools;
    berth_daction *actions;       uint32_t nactions, capactions;
    berth_dblocked *blocked;      uint32_t nblocked, capblocked;
    const char *method;           /* the method that acted, or NULL */
    /* the outcome of the actions and a lower bound (disrupt/bound.c) */
    int64_t nodes_before, nodes_after;   /* nodes; after: minus acted-on, plus replacements */
    double cost_before, cost_after;      /* per hour, node prices */
    int64_t bound_nodes;                 /* lower bound on nodes_after of any plan */
    double bound_cost;                   /* lower bound on cost_after of any plan */
    const char *bound_method;            /* static text */
    int64_t bound_nodes_budgets;         /* the same, also counting the budgets */
    double bound_cost_budgets;
    /* --optimize: optimized = 1 when the actions are the optimiser's (strictly
     * better than Karpenter's pass); karpenter_* describe Karpenter's pass */
    int optimized;
    int64_t karpenter_nodes_after;
    double karpenter_savings;
    /* --optimize ran (opt->optimize and the pass was no drift replacement):
     * what the optimiser's own plan leaves, shown or not */
    int optimize_ran;
    int64_t optimizer_nodes_after;
    double optimizer_cost_after;
} berth_dplan;

/* One disruption pass at opt->now (SPEC 4.1). m is not modified. */
int berth_disrupt_plan(const berth_disrupt *m, const berth_dplan_options *opt, berth_dplan *out,
                       berth_error *e);
void berth_dplan_free(berth_dplan *p);

/* A lower bound on the nodes and the cost per hour any disruption plan
 * at opt->now leaves (disrupt/bound.c; the proof is there): from the pods'
 * requests alone, and also counting that budgets cap the removals. */
typedef struct berth_dbound {
    int64_t nodes;
    double cost;
    const char *method;           /* static text */
    int64_t nodes_budgets;        /* >= nodes */
    double cost_budgets;          /* >= cost */
} berth_dbound;
int berth_disrupt_bound(const berth_disrupt *m, const berth_dplan_options *opt, berth_dbound *out,
                        berth_error *e);

/* ---- helpers shared with tests ---- */

/* EvictionCost (SPEC 4.1) of kube pod `pod`. */
double berth_eviction_cost(const berth_disrupt *m, uint32_t pod);
/* The price of kube node `node`: the offering of its instance type
 * matching its zone and capacity type; 0 when none. */
double berth_node_price(const berth_disrupt *m, uint32_t node);
/* Whether NodeClaim c has drifted from its NodePool; why (may be NULL)
 * gets a short reason. */
int berth_nodeclaim_drifted(const berth_disrupt *m, const berth_nodeclaim *c, char *why,
                            size_t size);

/* ---- timeline: AKSNodeClass drift, model changes over time and
 * `berth disrupt simulate` (disrupt/drift.c, apply.c, termination.c,
 * timeline.c; docs/disrupt.md "Simulate") ---- */

/* An AKSNodeClass (karpenter.azure.com/v1beta1 or v1alpha2): the fields
 * that drift the NodeClaims of NodePools naming it. Defaults as the API
 * server applies them: imageFamily Ubuntu2204, osDiskSizeGB 128. */
typedef struct berth_aksnodeclass {
    const char *name;
    const char *image_family;     /* spec.imageFamily */
    const char *vnet_subnet_id;   /* spec.vnetSubnetID, "" when unset */
    int64_t os_disk_size_gb;      /* spec.osDiskSizeGB */
    const char *hash_annotation;  /* metadata.annotations karpenter.azure.com/aksnodeclass-hash */
    const char *hash_version;     /* ... -version */
    char hash[24];                /* berth's hash of the three fields (decimal) */
} berth_aksnodeclass;

/* berth's AKSNodeClass hash: FNV-1a 64 over "berth-v1", imageFamily,
 * vnetSubnetID and osDiskSizeGB (each length-prefixed), in decimal. */
void berth_aksnodeclass_hash(const berth_aksnodeclass *c, char out[24]);
/* The AKSNodeClass a NodePool's nodeClassRef names (kind AKSNodeClass or
 * unset, group karpenter.azure.com or unset), NULL when none is loaded. */
const berth_aksnodeclass *berth_nodepool_class(const berth_disrupt *m, const berth_nodepool *p);

/* ---- model changes (disrupt/apply.c); node indices after `node` shift
 * down by one on removal, pod indices never change ---- */

/* A PDB's disruptionsAllowed: status.disruptionsAllowed, else computed
 * from the matching pods' readiness (minAvailable / maxUnavailable,
 * percentages rounded up), at least 0. Work: O(pods). */
int64_t berth_pdb_disruptions_allowed(const berth_disrupt *m, uint32_t pdb);
/* Index of the NodeClaim whose node is node_name, -1 when none (linear). */
int berth_disrupt_claim_of(const berth_disrupt *m, const char *node_name);
/* The Node NodePool `pool` launches on InstanceType `type`'s offering
 * `offering`, named `name` (not copied), into *out: labels are
 * karpenter.sh/nodepool, kubernetes.io/hostname (and
 * karpenter.sh/initialized=true when `initialized`), the offering's
 * (berth_offering_labels: zone, capacity type...), the instance type's
 * (its name, spec.labels and the derived ones, berth/instance.h), the
 * NodePool's template labels and its single-value In requirements on keys
 * not set yet; label storage from a; taints the template's (startup taints
 * are gone once initialised); allocatable the instance type's allocatable
 * (capacity minus node overhead, berth/instance.h) minus the requests and
 * pod slots of the DaemonSet pods the DaemonSet controller would run on
 * that node (k8s/daemons.c).
 * 0; 1 when the offering cannot satisfy the pool (a template label the
 * type sets otherwise, or a requirement on a key the node or the type
 * defines that its labels break: Karpenter's Requirements.Intersects);
 * BERTH_ENOMEM. The one implementation: the timeline and the planner's
 * hypothetical nodes (disrupt_option_node). */
int berth_disrupt_template_node(const berth_disrupt *m, uint32_t pool, uint32_t type,
                                uint32_t offering, const char *name, int initialized,
                                berth_arena *a, berth_knode *out);
/* The same, with why (may be NULL) naming the first requirement or label
 * the offering breaks when it returns 1. */
int berth_disrupt_template_node_why(const berth_disrupt *m, uint32_t pool, uint32_t type,
                                    uint32_t offering, const char *name, int initialized,
                                    berth_arena *a, berth_knode *out, char *why, size_t size);
/* "key In [a, b]", "key Gt 6", "key Exists" into buf. */
void berth_requirement_format(const berth_requirement *r, char *buf, size_t size);
/* Adds a Ready, initialised Node and its NodeClaim launched at `created`
 * and initialised at `now` from NodePool `pool`, InstanceType `type` and
 * its offering `offering` (the Node of berth_disrupt_template_node with
 * karpenter.sh/initialized=true); the NodeClaim carries the Node's labels,
 * the current NodePool and AKSNodeClass hashes and the template's
 * terminationGracePeriod.
 * name must be unique (copied into m's arena). *node gets
 * the new kube node index. 0 or BERTH_ENOMEM. */
int berth_disrupt_add_node(berth_disrupt *m, uint32_t pool, uint32_t type, uint32_t offering,
                           const char *name, int64_t created, int64_t now, uint32_t *node);
/* Removes kube node `node`, its berth_dnode and its NodeClaim. Pods bound
 * to it are not touched (the caller unbinds them first). */
void berth_disrupt_remove_node(berth_disrupt *m, uint32_t node);
/* Adds taint {key, "", effect} to kube node `node` unless present. 0 or
 * BERTH_ENOMEM. */
int berth_disrupt_taint(berth_disrupt *m, uint32_t node, const char *key, berth_taint_effect effect);

/* ---- `disrupt simulate`: the plan applied over a window ---- */

#define BERTH_DSIM_MAX_STEPS 100000
#define BERTH_DSIM_LAUNCH_DELAY 60    /* default seconds from launch to Ready */
/* Pods at or above this priority (system-cluster-critical 2000000000,
 * system-node-critical 2000001000) are critical for the drain groups. */
#define BERTH_DSIM_CRITICAL_PRIORITY 2000000000

typedef struct berth_dsim_options {
    int64_t from, to;             /* seconds since the epoch; from <= to */
    int64_t step;                 /* seconds, > 0; at most BERTH_DSIM_MAX_STEPS steps */
    int64_t launch_delay;         /* seconds from launch to Ready and initialised, >= 0 */
    int spot_to_spot;             /* feature gate SpotToSpotConsolidation */
    const berth_cancel *cancel;   /* NULL: no limit; else checked per step and inside each
                                   * step's plan: BERTH_ETIMEDOUT, no timeline (the model
                                   * is then mid-step: discard it) */
} berth_dsim_options;

typedef enum berth_devent_type {
    BERTH_DEV_LAUNCH,             /* a replacement NodeClaim launched (node: the new one) */
    BERTH_DEV_TAINT,              /* karpenter.sh/disrupted:NoSchedule added, drain starts */
    BERTH_DEV_EVICT,              /* a pod evicted (or deleted after the grace period) */
    BERTH_DEV_DELETE,             /* a drained node and its NodeClaim removed */
    BERTH_DEV_BLOCKED,            /* a node became blocked or its reason changed */
    BERTH_DEV_UNSCHEDULABLE,      /* a pod fits nowhere and stays pending */
} berth_devent_type;
const char *berth_devent_name(berth_devent_type t);

/* Strings of events and blocked entries live in the model's or the
 * timeline's arena (valid while both live). */
typedef struct berth_devent {
    berth_devent_type type;
    const char *node;             /* or NULL */
    const char *pod_ns, *pod;     /* or NULL */
    const char *reason;           /* or NULL */
} berth_devent;

typedef struct berth_dsim_blocked {
    const char *node, *reason;
} berth_dsim_blocked;

/* One recorded step: the state after the step's work. */
typedef struct berth_dstep {
    int64_t at;
    uint32_t nodes;               /* Nodes in the cluster (launching ones not yet) */
    double cost;                  /* per hour: their prices */
    uint32_t disruptions[BERTH_DR_EXPIRED + 1]; /* nodes whose disruption started, by reason */
    uint32_t pending;             /* pods without a node */
    uint32_t event0, nevents;     /* events[event0 .. event0 + nevents) */
    uint32_t blocked0, nblocked;  /* blocked[...]: nodes blocked after the step */
} berth_dstep;

typedef struct berth_dtimeline {
    int64_t from, to, step, launch_delay;
    uint32_t nsteps_run;          /* steps simulated */
    berth_dstep *steps;           uint32_t nsteps, capsteps; /* recorded: the first, the
                                   * last and every step with an event */
    berth_devent *events;         uint32_t nevents, capevents;
    berth_dsim_blocked *blocked;  uint32_t nblocked, capblocked;
    uint32_t nodes_start, nodes_end;
    double cost_start, cost_end;
    uint32_t disruptions[BERTH_DR_EXPIRED + 1];
    uint32_t pending_end;
    berth_arena arena;
} berth_dtimeline;

/* Runs the disruption loop from o->from to o->to every o->step (SPEC 4.1
 * "Termination", docs/disrupt.md "Simulate"): per step, replacements that
 * are Ready join the cluster and their candidates are tainted; tainted
 * nodes drain (eviction groups, PDBs, do-not-disrupt, grace period) and
 * are removed when empty; evicted pods are re-scheduled with the kube
 * pipeline; then berth_disrupt_plan runs at the step's time and its
 * actions start. m is advanced to the state at the last step. Returns 0
 * (out filled; the caller frees it with berth_dtimeline_free), BERTH_EINVAL
 * for bad options, or an error. Deterministic. */
int berth_disrupt_simulate(berth_disrupt *m, const berth_dsim_options *o, berth_dtimeline *out,
                           berth_error *e);
void berth_dtimeline_free(berth_dtimeline *t);

#endif
