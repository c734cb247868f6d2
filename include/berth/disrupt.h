/* berth/disrupt.h - disruption planning with Karpenter / AKS Node Auto
 * Provisioning semantics (SPEC 4, 4.1).
 *
 * The model: karpenter.sh/v1 NodePools and NodeClaims, berth.io/v1
 * InstanceTypes, and the Kubernetes objects (Node, Pod,
 * PodDisruptionBudget, workloads) in an embedded berth_kcluster. A plan at
 * a moment ("now") is one disruption pass: expirations, then the first of
 * Emptiness, Drift, multi-node and single-node consolidation that acts.
 * Re-placing pods is simulated with the kube scheduling pipeline
 * (berth_kube_schedule on a view of the remaining nodes plus at most one
 * hypothetical node).
 *
 * Times are seconds since the Unix epoch (UTC); durations are seconds,
 * BERTH_DURATION_NEVER for "Never". Ownership: a berth_disrupt owns all it
 * holds; strings live in its arena; a berth_dplan owns its arrays. */
#ifndef BERTH_DISRUPT_H
#define BERTH_DISRUPT_H

#include <stdint.h>

#include "berth/doc.h"
#include "berth/error.h"
#include "berth/instance.h"
#include "berth/kube.h"
#include "berth/labels.h"
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
/* The first hit strictly after t (second resolution; hits are at second
 * 0 of a minute), found by jumping field by field; -1 when none within
 * five years. */
int64_t berth_cron_next(const berth_cron *c, int64_t t);
/* A budget duration: h and m only ("10m", "1h30m", optional trailing
 * "0s"). Seconds, or -1 when invalid. */
int64_t berth_budget_duration_parse(const char *s);
/* A Go duration ("30s", "720h", "1h30m", "1.5h") or "Never"
 * (BERTH_DURATION_NEVER). Seconds (fractions dropped), or -1 when invalid. */
int64_t berth_duration_parse(const char *s);
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

typedef struct berth_nodepool {
    const char *name;
    berth_labels labels;          /* spec.template.metadata.labels */
    berth_labels annotations;     /* spec.template.metadata.annotations */
    berth_taint *taints, *startup_taints;
    uint32_t ntaints, nstartup_taints;
    berth_requirement *reqs;      /* spec.template.spec.requirements */
    uint32_t nreqs;
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
    const berth_node *node;       /* the document, for messages */
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
} berth_nodeclaim;

/* What the planner needs beyond the kube model, per kube node / pod. */
typedef struct berth_dnode {
    int ready;                    /* condition Ready True (default true) */
    int deleting;                 /* deletionTimestamp */
    int do_not_disrupt;           /* annotation karpenter.sh/do-not-disrupt "true" */
    int initialized_label;        /* label karpenter.sh/initialized=true */
} berth_dnode;

typedef struct berth_dpod {
    int64_t deletion_cost;        /* controller.kubernetes.io/pod-deletion-cost */
    int dnd;                      /* do-not-disrupt: 0 none, 1 "true", 2 duration */
    int64_t dnd_seconds;          /* the duration form */
    int64_t started;              /* status.startTime, else creation (0 unknown) */
    int ready;                    /* condition Ready True */
    int mirror;                   /* kubernetes.io/config.mirror */
    int terminal;                 /* phase Succeeded / Failed */
    const char *nominated;        /* status.nominatedNodeName */
} berth_dpod;

typedef struct berth_disrupt {
    berth_kcluster kube;          /* nodes, pods, PDBs, workloads */
    berth_nodepool *pools;        uint32_t npools, cappools;
    berth_nodeclaim *claims;      uint32_t nclaims, capclaims;
    berth_instance_type *types;   uint32_t ntypes, captypes;
    berth_dnode *node_info;       uint32_t nnode_info, capnode_info;  /* by kube node */
    berth_dpod *pod_info;         uint32_t npod_info, cappod_info;    /* by kube pod */
} berth_disrupt;

void berth_disrupt_init(berth_disrupt *m);
void berth_disrupt_free(berth_disrupt *m);
/* Decodes every document of src: NodePool, NodeClaim (karpenter.sh/v1),
 * InstanceType (berth.io/v1, strict), List, and everything
 * berth_kube_load reads. Parse src into m->kube.arena. */
int berth_disrupt_load(berth_disrupt *m, const berth_source *src, int strict, berth_error *e);
/* Checks references and computes template hashes; call once after the
 * last berth_disrupt_load. */
int berth_disrupt_finalize(berth_disrupt *m, berth_error *e);
/* berth's stable template hash of a NodePool (SPEC 4.1 drift fields). */
void berth_nodepool_hash(const berth_nodepool *p, char out[24]);

/* ---- the plan ---- */

typedef struct berth_dplan_options {
    int64_t now;                  /* seconds since the epoch */
    int spot_to_spot;             /* feature gate SpotToSpotConsolidation */
} berth_dplan_options;

typedef struct berth_dreplacement {
    const char *instance_type, *zone, *nodepool;
    berth_capacity_type capacity_type;
    double price;
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
} berth_dplan;

/* One disruption pass at opt->now (SPEC 4.1). m is not modified. */
int berth_disrupt_plan(const berth_disrupt *m, const berth_dplan_options *opt, berth_dplan *out,
                       berth_error *e);
void berth_dplan_free(berth_dplan *p);

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

#endif
