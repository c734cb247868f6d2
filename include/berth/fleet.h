/* berth/fleet.h - multi-cluster placement with Kubernetes Fleet's semantics
 * (SPEC 3, 3.1): member clusters, ClusterResourcePlacements and
 * ClusterResourceBindings, and the scheduler that decides, per placement,
 * which member clusters are selected, with which scores, and why not.
 *
 * Life cycle: berth_fleet_init; berth_fleet_load per parsed source;
 * berth_fleet_finalize (sorts clusters by name, resolves bindings); then a
 * berth_fleet_ctx runs placements one at a time (berth_fleet_place), each
 * outcome living in the context's scratch until the next call;
 * berth_fleet_ctx_free; berth_fleet_free. Strings from input live in the
 * fleet's arena. docs/fleet.md describes every input field.
 *
 * Threads: the library keeps no mutable global state. Distinct fleets and
 * contexts may be used from different threads; one context from one thread
 * at a time. A finalized fleet is only read by berth_fleet_place, so
 * several contexts may place over one fleet concurrently. */
#ifndef BERTH_FLEET_H
#define BERTH_FLEET_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "berth/arena.h"
#include "berth/cancel.h"
#include "berth/doc.h"
#include "berth/error.h"
#include "berth/labels.h"
#include "berth/time.h"
#include "berth/pipeline.h"
#include "berth/quantity.h"
#include "berth/taints.h"

#define BERTH_FLEET_MAX_CLUSTERS 1000000u
#define BERTH_FLEET_MAX_TERMS 64u       /* required terms, preferred terms, spread constraints */
#define BERTH_FLEET_NONE UINT32_MAX
/* Eligibility timeouts (upstream defaults): heartbeat and health. */
#define BERTH_FLEET_HEARTBEAT_TIMEOUT_MS (5 * 60 * 1000LL)
#define BERTH_FLEET_HEALTH_TIMEOUT_MS (5 * 60 * 1000LL)
#define BERTH_FLEET_TIME_UNSET INT64_MIN

/* ---- model ---- */

typedef struct berth_fleet_prop {
    const char *name;
    berth_quantity value;
} berth_fleet_prop;

typedef struct berth_member_cluster {
    const char *name;
    const char *where;           /* "file:line:col" of the document */
    berth_labels labels;         /* sorted */
    berth_taint *taints;         /* spec.taints (effect NoSchedule) */
    uint32_t ntaints;
    berth_fleet_prop *props;     /* resourceUsage-derived first, then status.properties */
    uint32_t nprops;
    int leaving;                 /* metadata.deletionTimestamp set */
    int has_agent;               /* status.agentStatus[type=MemberAgent] present */
    int joined;                  /* Joined condition True */
    int healthy;                 /* -1 missing, 0 present but not True, 1 True */
    int64_t heartbeat_ms;        /* lastReceivedHeartbeat, unix ms, or TIME_UNSET */
    int64_t healthy_since_ms;    /* Healthy lastTransitionTime, or TIME_UNSET */
} berth_member_cluster;

typedef enum berth_fleet_type {
    BERTH_FLEET_PICK_ALL,
    BERTH_FLEET_PICK_N,
    BERTH_FLEET_PICK_FIXED,
} berth_fleet_type;

/* A property selector expression, kept as written: operator and values are
 * checked when the placement runs (a bad one makes the placement Invalid). */
typedef struct berth_fleet_prop_expr {
    const char *name, *op;
    const char **values;
    uint32_t nvalues;
    const char *where;           /* "file:line:col: field.path" */
} berth_fleet_prop_expr;

typedef struct berth_fleet_term {   /* required clusterSelectorTerm */
    berth_selector labels;          /* n == 0: every cluster */
    berth_fleet_prop_expr *exprs;
    uint32_t nexprs;
} berth_fleet_term;

typedef struct berth_fleet_pref {   /* preferred term */
    int64_t weight;                 /* [-100, 100] */
    berth_selector labels;          /* n == 0: every cluster */
    const char *sorter;             /* property name, NULL without a sorter */
    const char *order;              /* "Ascending" | "Descending" as written */
    const char *where;
} berth_fleet_pref;

typedef struct berth_fleet_spread {
    int64_t max_skew;               /* default 1 */
    const char *key;
    int schedule_anyway;            /* whenUnsatisfiable ScheduleAnyway */
} berth_fleet_spread;

typedef struct berth_fleet_placement {
    const char *name, *where;       /* name: metadata.name; "namespace/name" for a
                                     * ResourcePlacement (namespace-scoped) */
    const char *ns;                 /* ResourcePlacement: its namespace; NULL for a
                                     * ClusterResourcePlacement */
    /* The current scheduling policy snapshot: the one labelled
     * kubernetes-fleet.io/is-latest-snapshot: "true" among the input's
     * (Cluster)SchedulingPolicySnapshots, else the placement's annotation
     * berth.io/policy-snapshot; NULL when neither is given (then every
     * Scheduled / Bound binding is current). Resolved by finalize. */
    const char *snapshot;
    const char *snapshot_annotation; /* berth.io/policy-snapshot as written, or NULL */
    berth_fleet_type type;
    int64_t n;                      /* numberOfClusters (PickN) */
    const char **fixed;             /* clusterNames (PickFixed) */
    uint32_t nfixed;
    int has_required;
    berth_fleet_term *req;
    uint32_t nreq;
    berth_fleet_pref *pref;
    uint32_t npref;
    berth_fleet_spread *spread;
    uint32_t nspread;
    berth_toleration *tols;
    uint32_t ntols;
} berth_fleet_placement;

typedef enum berth_fleet_bstate {
    BERTH_BINDING_SCHEDULED,
    BERTH_BINDING_BOUND,
    BERTH_BINDING_UNSCHEDULED,
} berth_fleet_bstate;

typedef struct berth_fleet_binding {
    const char *name, *where;
    const char *placement_name, *cluster_name; /* placement_name: the placement's key
                                     * (berth_fleet_placement.name) */
    berth_fleet_bstate state;
    const char *snapshot;           /* spec.schedulingPolicySnapshotName, NULL when absent */
    int has_score;                  /* spec.clusterDecision.clusterScore given */
    int64_t affinity_score, spread_score;
    /* resolved by finalize: placement and cluster (BERTH_FLEET_NONE for an
     * Unscheduled binding whose cluster is gone: such bindings are ignored);
     * obsolete: Scheduled / Bound under a policy snapshot other than the
     * placement's current one (KubeFleet's classifyBindings) */
    uint32_t placement, cluster;
    int obsolete;
} berth_fleet_binding;

/* A ClusterSchedulingPolicySnapshot (or namespaced SchedulingPolicySnapshot):
 * only its name, its placement and whether it is the latest are read. */
typedef struct berth_fleet_psnap {
    const char *name, *where;
    const char *placement_name;     /* the placement's key, as for bindings */
    int latest;                     /* label kubernetes-fleet.io/is-latest-snapshot */
} berth_fleet_psnap;

typedef struct berth_fleet_index berth_fleet_index;

typedef struct berth_fleet {
    berth_arena arena;
    berth_skips skipped;              /* kinds the loader skipped (SPEC 6.1) */
    berth_member_cluster *clusters;   /* name order after finalize */
    uint32_t nclusters, capclusters;
    berth_fleet_placement *placements; /* input order */
    uint32_t nplacements, capplacements;
    berth_fleet_binding *bindings;
    uint32_t nbindings, capbindings;
    berth_fleet_psnap *snapshots;
    uint32_t nsnapshots, capsnapshots;
    int finalized;
    uint32_t *placement_order;        /* placement indices in name order (finalize) */
} berth_fleet;

void berth_fleet_init(berth_fleet *f);
void berth_fleet_free(berth_fleet *f);
/* Decodes every document of src (MemberCluster, ClusterResourcePlacement,
 * ResourcePlacement, ClusterResourceBinding, ResourceBinding,
 * ClusterSchedulingPolicySnapshot, SchedulingPolicySnapshot, List). strict:
 * unknown fields are errors.
 * Errors: BERTH_EINVAL "file:line:col: field.path: what", BERTH_ENOMEM. */
int berth_fleet_load(berth_fleet *f, const berth_source *src, int strict, berth_error *e);
/* Sorts clusters by name (byte order), rejects duplicate names, resolves
 * bindings to their placement and cluster, each placement's current policy
 * snapshot, and which bindings are obsolete. Call once after loading. */
int berth_fleet_finalize(berth_fleet *f, berth_error *e);
/* Index of the cluster / placement named name, or BERTH_FLEET_NONE. */
uint32_t berth_fleet_find_cluster(const berth_fleet *f, const char *name);
uint32_t berth_fleet_find_placement(const berth_fleet *f, const char *name);
/* The property value of cluster c (node-count is found under both of its
 * spellings), or NULL when the cluster lacks it. */
const berth_quantity *berth_fleet_cluster_prop(const berth_fleet *f, uint32_t c, const char *name);

/* Eligibility at now_ms: 1 eligible, 0 not (reason in buf when given). */
int berth_fleet_eligible(const berth_member_cluster *m, int64_t now_ms, char *buf, size_t size);

/* ---- scheduling ---- */

typedef struct berth_fleet_options {
    int64_t now_ms;        /* the clock for heartbeat and condition ages */
    int reference;         /* plain scans and generic matching (for checking) */
    int explain;           /* keep per-term contributions for every cluster */
    const berth_cancel *cancel; /* NULL: no limit; else berth_fleet_place checks it per
                                 * placement and per PickN cycle (berth/cancel.h) */
} berth_fleet_options;

typedef enum berth_fleet_cstatus {
    BERTH_FLEET_SELECTED,
    BERTH_FLEET_NOT_SELECTED,
    BERTH_FLEET_FILTERED,
    BERTH_FLEET_NOT_FOUND,
    BERTH_FLEET_INVALID,
} berth_fleet_cstatus;

typedef enum berth_fleet_pstatus {
    BERTH_FLEET_FULFILLED,     /* got what it asked for */
    BERTH_FLEET_UNFULFILLED,   /* PickN shortfall, PickFixed notFound / invalid */
    BERTH_FLEET_POLICY_ERROR,  /* invalid policy (SPEC 3.1): status Invalid */
} berth_fleet_pstatus;

/* The outcome of one placement; arrays are owned by the context and valid
 * until the next berth_fleet_place on it. Per-cluster arrays have
 * nclusters entries (cluster index = name order). */
typedef struct berth_fleet_outcome {
    uint32_t placement;
    berth_fleet_pstatus status;
    char reason[512];              /* policy error or shortfall text, "" otherwise */
    const uint32_t *selected;      /* cluster indices in pick order */
    uint32_t nselected;
    uint32_t wanted;               /* N for PickN, names for PickFixed, 0 for PickAll */
    const uint8_t *cstatus;        /* berth_fleet_cstatus per cluster */
    const int64_t *affinity;       /* per cluster */
    const int64_t *spread;         /* per cluster */
    const uint8_t *held;           /* 1 Scheduled / Bound binding (current policy
                                    * snapshot), 2 obsolete binding (+1 in ranking) */
    const char *const *notfound;   /* PickFixed names with no member cluster */
    uint32_t nnotfound;
} berth_fleet_outcome;

typedef struct berth_fleet_ctx berth_fleet_ctx;

/* Builds a context for f (finalized): property columns with fleet-wide
 * min/max, label columns, the pipeline cycle. 0, BERTH_ENOMEM. */
int berth_fleet_ctx_new(const berth_fleet *f, const berth_fleet_options *opt,
                        berth_fleet_ctx **out, berth_error *e);
void berth_fleet_ctx_free(berth_fleet_ctx *ctx);
/* Places placement p. Returns 0 (also for Unfulfilled and policy errors,
 * see out->status) or BERTH_ENOMEM / BERTH_EINTERNAL, or BERTH_ETIMEDOUT
 * when opt->cancel expired (out is not to be read then). */
int berth_fleet_place(berth_fleet_ctx *ctx, uint32_t p, berth_fleet_outcome *out);
/* Why cluster c has its status in the last outcome (one line). */
void berth_fleet_reason(const berth_fleet_ctx *ctx, uint32_t c, char *buf, size_t size);
/* Contribution of preferred term t of the last placed placement to cluster
 * c; *ratio gets the sorter's fraction of the weight (NaN without one). */
int64_t berth_fleet_term_score(const berth_fleet_ctx *ctx, uint32_t t, uint32_t c, double *ratio);
/* The profile (filters ClusterAffinity, ClusterEligibility, TaintToleration,
 * TopologySpreadConstraints; lexicographic scores TopologySpread, Affinity,
 * Held; BERTH_TIE_LAST) and the last cycle's per-filter reject counts. */
const berth_profile *berth_fleet_profile(void);
const berth_cycle *berth_fleet_ctx_cycle(const berth_fleet_ctx *ctx);
/* The fleet the context runs over. */
const berth_fleet *berth_fleet_ctx_fleet(const berth_fleet_ctx *ctx);

/* ---- reports (src/report/fleet_report.c) ---- */

const char *berth_fleet_cstatus_name(berth_fleet_cstatus s);  /* "Selected", ... */
const char *berth_fleet_type_name(berth_fleet_type t);        /* "PickAll", ... */
struct json_t;
/* One placement as SPEC 6.3's placements[] entry (plus "placementType",
 * "status", "reason", the summary "clusterCounts" {status: n}, "reasons"
 * {text: clusters not selected for it} and "clustersOmitted"; with
 * explain, per-cluster "terms"). Without detail "clusters" lists every
 * Selected, Invalid and NotFound cluster and at most
 * BERTH_FLEET_UNSELECTED_SHOWN others (NotSelected first, then Filtered),
 * so it grows with the answer, not with the fleet; with detail every
 * cluster. berth_report_fleet_json is detail = 1. NULL on ENOMEM. */
#define BERTH_FLEET_UNSELECTED_SHOWN 20u
struct json_t *berth_report_fleet_json_detail(const berth_fleet_ctx *ctx,
                                              const berth_fleet_outcome *o, int explain,
                                              int detail);
struct json_t *berth_report_fleet_json(const berth_fleet_ctx *ctx, const berth_fleet_outcome *o,
                                       int explain);
/* A table for one placement: heading, then one row per cluster (without
 * detail the clusters berth_report_fleet_json_detail lists, then one line
 * counting the others). berth_report_fleet_table is detail = 1. */
int berth_report_fleet_table_detail(FILE *out, const berth_fleet_ctx *ctx,
                                    const berth_fleet_outcome *o, int explain, int detail);
int berth_report_fleet_table(FILE *out, const berth_fleet_ctx *ctx, const berth_fleet_outcome *o,
                             int explain);

#endif
