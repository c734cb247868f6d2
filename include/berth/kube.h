/* berth/kube.h - pod placement with kube-scheduler's semantics (SPEC 2).
 *
 * The model: v1 Nodes and Pods as `kubectl get -o yaml` writes them, the
 * workload objects whose selectors feed the default topology spread
 * (Service, ReplicaSet, StatefulSet, ReplicationController), the
 * PersistentVolumeClaims and PersistentVolumes behind VolumeZone, and
 * scheduler profiles from a KubeSchedulerConfiguration. berth_kube_schedule places
 * every pending pod (no spec.nodeName) in queue order through the shared
 * pipeline (berth/pipeline.h) with the kube plugins (SPEC 2.5), assuming
 * each decision before the next pod.
 *
 * Resources are columns indexed by a cluster-wide resource index:
 * BERTH_KRES_CPU (millicores), BERTH_KRES_MEMORY (bytes),
 * BERTH_KRES_EPHEMERAL (bytes), then extended resources (nvidia.com/gpu,
 * hugepages-*, ...) in order of first appearance. Pod count is separate.
 *
 * Ownership: a berth_kcluster owns everything it holds; strings live in its
 * arena. Node and pod indices are stable for its life.
 *
 * Threads: the library keeps no mutable global state (comparators take
 * their context through qsort_r). Distinct objects (clusters, sessions)
 * may be used from different threads at once; one object from one thread at
 * a time. Functions that take a const berth_kcluster * only read it, so
 * several of them (berth_kube_schedule_view, berth_ksession_open and
 * distinct sessions over one cluster, berth_kube_queue_sort) may run
 * concurrently on one cluster; functions taking a non-const cluster
 * (loading, berth_kube_schedule, berth_kube_fit) need it to themselves. */
#ifndef BERTH_KUBE_H
#define BERTH_KUBE_H

#include <stdint.h>
#include <stdio.h>

#include "berth/arena.h"
#include "berth/cancel.h"
#include "berth/doc.h"
#include "berth/error.h"
#include "berth/labels.h"
#include "berth/nameidx.h"
#include "berth/pipeline.h"
#include "berth/taints.h"

#define BERTH_KUBE_MAX_RES 16
#define BERTH_KRES_CPU 0
#define BERTH_KRES_MEMORY 1
#define BERTH_KRES_EPHEMERAL 2
#define BERTH_KRES_FIRST_EXT 3
#define BERTH_KUBE_NONE UINT32_MAX

/* Scoring-only defaults for a container without a cpu / memory request. */
#define BERTH_KUBE_DEFAULT_MILLI_CPU 100
#define BERTH_KUBE_DEFAULT_MEMORY (200LL * 1024 * 1024)

typedef enum berth_qos { BERTH_QOS_BESTEFFORT, BERTH_QOS_BURSTABLE, BERTH_QOS_GUARANTEED } berth_qos;

typedef enum berth_kproto { BERTH_PROTO_TCP, BERTH_PROTO_UDP, BERTH_PROTO_SCTP } berth_kproto;

typedef struct berth_kport {
    int32_t port;            /* hostPort (container ports without hostPort are not kept) */
    berth_kproto proto;
    const char *ip;          /* hostIP, "0.0.0.0" when unset */
} berth_kport;

typedef struct berth_kcontainer {
    const char *name, *image;
    int64_t req[BERTH_KUBE_MAX_RES], lim[BERTH_KUBE_MAX_RES];
    uint32_t has_req, has_lim;    /* bit i: the key for resource i was present */
    int sidecar;                  /* init container with restartPolicy: Always */
} berth_kcontainer;

/* A NodeSelectorTerm: AND of matchExpressions (on labels) and matchFields
 * (key metadata.name). An empty term matches nothing. invalid: a
 * requirement the API server accepts but labels.NewRequirement rejects (a
 * value that is not a valid label value, a Gt/Lt value that is not an
 * integer); such a term matches nothing (upstream nodeaffinity's
 * LazyErrorNodeSelector), and a pod's preferred one makes NodeAffinity's
 * PreScore fail (berth_kube_schedule reports the pod unscheduled). */
typedef struct berth_kterm {
    berth_requirement *exprs;
    uint32_t nexprs;
    berth_requirement *fields;
    uint32_t nfields;
    int invalid;
} berth_kterm;

typedef struct berth_kpref_term {
    int32_t weight;
    berth_kterm term;
} berth_kpref_term;

/* A pod (anti-)affinity term. */
typedef struct berth_kaffinity_term {
    berth_selector selector;      /* labelSelector; a missing selector matches nothing */
    const char **namespaces;      /* empty and no namespaceSelector: the pod's namespace */
    uint32_t nnamespaces;
    berth_selector ns_selector;   /* namespaceSelector (matches namespace labels) */
    int has_ns_selector;
    const char *topology_key;
    int32_t weight;               /* preferred terms only */
} berth_kaffinity_term;

typedef struct berth_kspread {
    int32_t max_skew;
    const char *topology_key;
    int do_not_schedule;          /* whenUnsatisfiable DoNotSchedule (else ScheduleAnyway) */
    berth_selector selector;
    int32_t min_domains;          /* default 1 */
    int honor_node_affinity;      /* nodeAffinityPolicy Honor (default) */
    int honor_node_taints;        /* nodeTaintsPolicy Honor (default Ignore) */
    const char **match_label_keys;
    uint32_t nmatch_label_keys;
} berth_kspread;

/* Where a field was read, for errors found once every file is in
 * (berth_kube_expand): "file:line:col: path: message". */
typedef struct berth_kloc {
    const char *file, *path;
    int line, col;
} berth_kloc;

typedef struct berth_kpod {
    /* The fields a placement reads for every pod come first, so that
     * scheduling and the planners read about six cache lines of the
     * record, not its fifteen (at 500 k pods the table is 500 MB, read
     * at random: docs/ARCHITECTURE.md "Performance"). */
    const char *ns, *name;
    berth_labels labels;
    int64_t priority;             /* spec.priority, 0 when missing; else resolved from
                                   * the class by berth_kube_expand */
    int64_t created;              /* creationTimestamp, seconds since the epoch */
    const char *scheduler_name;   /* spec.schedulerName, default "default-scheduler" */
    const char *node_name;        /* spec.nodeName: bound when set and the node exists */
    berth_kcontainer *containers, *init;
    uint32_t ncontainers, ninit;
    uint32_t order;               /* input order */
    int has_created;
    uint8_t assumed;              /* node_name was set by berth_kube_schedule */
    uint8_t has_image;            /* a container or init container names an image
                                   * (computed by berth_kube_pod_requests) */
    int terminating;              /* metadata.deletionTimestamp set */
    berth_labels node_selector;
    berth_kterm *req_terms;       /* required node affinity terms (ORed) */
    uint32_t nreq_terms;
    int has_req_affinity;         /* required node affinity present (even with 0 terms) */
    berth_kpref_term *pref_terms;
    uint32_t npref_terms;
    uint32_t ntols;
    berth_toleration *tols;
    berth_kspread *spread;
    uint32_t nspread;
    uint32_t nports;
    berth_kaffinity_term *aff_req, *aff_pref, *anti_req, *anti_pref;
    uint32_t naff_req, naff_pref, nanti_req, nanti_pref;
    berth_kport *ports;
    const struct berth_kvolume_zone *vol_zones;
    uint32_t nvol_zones;
    berth_qos qos;
    const char *vol_error;        /* "persistentvolumeclaim \"x\" not found", or NULL */
    /* computed by berth_kube_pod_requests() at load */
    int64_t demand[2];            /* cpu, memory: the sum over its containers of the larger
                                   * of request and limit (the usage-aware profile's
                                   * configured size, SPEC 2.4) */
    int64_t req_nz[2];            /* cpu, memory with the scoring defaults (any other
                                   * resource scores its req) */
    int64_t req[BERTH_KUBE_MAX_RES];    /* effective request (filter, balanced); with
                                         * demand and req_nz, the first four share the
                                         * record's fifth cache line */
    /* read when a pod is explained, preempts or is planned for */
    int has_priority;             /* spec.priority was given (kept as the API server stored it) */
    const char *priority_class;   /* spec.priorityClassName (NULL: none); berth_kube_expand sets
                                   * the globalDefault class's name for pods without one */
    berth_kloc priority_class_at; /* where spec.priorityClassName was read */
    int preemption_policy;             /* 0 PreemptLowerPriority (default), 1 Never (spec.preemptionPolicy) */
    int64_t started;              /* status.startTime, seconds since the epoch */
    int has_started;
    int64_t overhead[BERTH_KUBE_MAX_RES];
    const char *owner_kind, *owner_name;
    const char *owner_uid;        /* the controller ownerReference's uid, NULL when none */
    /* "<Kind>/<namespace>/<name>" of the workload the pod belongs to (a pod
     * of a Deployment's ReplicaSet: the Deployment), NULL for a bare pod;
     * set by berth_kube_expand (SPEC 6.3 "workload") */
    const char *workload;
    int generated;                /* created by berth_kube_expand from a workload's template */
    int local_storage;            /* a hostPath or emptyDir (medium not Memory) volume */
    const char **local_volumes;   /* the names of those volumes, in spec order */
    uint32_t nlocal_volumes;
    /* PersistentVolumeClaims (spec.volumes[].persistentVolumeClaim.claimName,
     * in order) and, resolved through the cluster's PVCs and PVs when
     * loading ends (VolumeZone, SPEC 2.5): the zone constraints of the bound
     * PVs (vol_zones, nvol_zones above), or the error that rejects every
     * node (vol_error above: a claim or volume not in the input). */
    const char **claims;
    uint32_t nclaims;
    int64_t usage[BERTH_KUBE_MAX_RES];  /* observed usage (usage-aware profile) */
    int has_usage;
    /* ObjectMeta and status beyond scheduling, decoded once by the kube
     * loader (kube/load_pod.c) for the planners (disrupt, autoscale); zero
     * for pods berth_kube_expand generates */
    const berth_node *annotations; /* metadata.annotations (string values; a copy in the
                                    * model's arena), NULL when none: read with
                                    * berth_kube_annotation */
    int line, col;                /* where the pod's document starts in its file */
    int ready;                    /* status.conditions[type=Ready] is True (the first such) */
    int mirror;                   /* annotation kubernetes.io/config.mirror: a static pod's mirror */
    const char *nominated;        /* status.nominatedNodeName, NULL when absent */
} berth_kpod;

/* One entry of a ResourceList as written (a Node's status.capacity). */
typedef struct berth_kquantity {
    const char *name;             /* non-empty */
    berth_quantity q;             /* not negative */
} berth_kquantity;

typedef struct berth_kimage {
    const char *name;             /* every name of the image on the node */
    int64_t size;
} berth_kimage;

typedef struct berth_knode {
    const char *name;
    berth_labels labels;
    berth_taint *taints;
    uint32_t ntaints;
    int unschedulable;
    int64_t alloc[BERTH_KUBE_MAX_RES];
    int64_t alloc_pods;
    berth_kimage *images;
    uint32_t nimages;
    int64_t usage[BERTH_KUBE_MAX_RES]; /* observed active usage (status.usage or annotation) */
    int has_usage;
    int64_t overhead_reserve;          /* usage-aware: VM overhead bytes per pod admitted */
    int not_ready;                     /* status.conditions Ready: 0 True or absent, 1 False,
                                        * 2 Unknown (autoscale auto-heal) */
    int64_t not_ready_since;           /* that condition's lastTransitionTime (seconds since
                                        * the epoch); 0 when absent */
    int any_region;                    /* berth: a hypothetical node in the cluster's region
                                        * (autoscaler): without a region label it passes
                                        * VolumeZone's region constraints */
    /* beyond scheduling, decoded once by the kube loader (kube/load_node.c)
     * for the planners (disrupt, autoscale) */
    const berth_node *annotations;     /* metadata.annotations (string values; a copy in the
                                        * model's arena), NULL when none */
    int deleting;                      /* metadata.deletionTimestamp set */
    berth_kquantity *capacity;         /* status.capacity as written, in input order */
    uint32_t ncapacity;
} berth_knode;

/* An object's annotation key: its string value, NULL when absent or null
 * (annotations: a berth_kpod's or berth_knode's). O(annotations). */
const char *berth_kube_annotation(const berth_node *annotations, const char *key);

/* One zone constraint of a pod's bound PersistentVolume (VolumeZone): the
 * PV's label key (topology.kubernetes.io/zone or /region, or the legacy
 * failure-domain.beta.kubernetes.io/ ones) and its allowed values (the
 * label value split at "__", sorted, distinct). */
typedef struct berth_kvolume_zone {
    const char *pv;               /* the PersistentVolume's name */
    const char *key;
    const char **values;
    uint32_t nvalues;
} berth_kvolume_zone;

/* v1 PersistentVolumeClaim and PersistentVolume (what VolumeZone reads). */
typedef struct berth_kpvc {
    const char *ns, *name;
    const char *volume_name;      /* spec.volumeName, NULL when unbound */
    const char *storage_class;    /* spec.storageClassName, NULL when absent */
} berth_kpvc;

typedef struct berth_kpv {
    const char *name;
    berth_labels labels;
} berth_kpv;

/* A workload object whose selector feeds the system default spread. */
typedef struct berth_kworkload {
    const char *kind, *ns, *name;
    berth_selector selector;
} berth_kworkload;

/* scheduling.k8s.io/v1 PriorityClass (and the two built-in system classes). */
typedef struct berth_kpriority_class {
    const char *name;
    int64_t value;
    int global_default;
    const char *preemption_policy; /* "PreemptLowerPriority" (default) or "Never" */
} berth_kpriority_class;

/* A workload controller whose pods berth_kube_expand creates. */
typedef enum berth_kctl_type {
    BERTH_KCTL_DEPLOYMENT,
    BERTH_KCTL_REPLICASET,
    BERTH_KCTL_RC,                /* v1 ReplicationController */
    BERTH_KCTL_STATEFULSET,
    BERTH_KCTL_DAEMONSET,
    BERTH_KCTL_JOB,
} berth_kctl_type;

typedef struct berth_kcontroller {
    berth_kctl_type type;
    const char *kind, *ns, *name, *uid;
    berth_selector selector;      /* spec.selector (a Job without one: its job-name label) */
    int64_t replicas;             /* spec.replicas (default 1); Job: spec.parallelism */
    berth_kloc replicas_at;       /* where replicas (or the object) was read: cap errors */
    berth_kpod tmpl;              /* spec.template as a pod: labels (with the controller's
                                   * hash label), spec, requests; name/ns unset */
    int host_network;             /* spec.template.spec.hostNetwork (DaemonSet tolerations) */
    const char *owner_kind, *owner_name, *owner_uid; /* controller ownerReference */
    int64_t revision;             /* deployment.kubernetes.io/revision (ReplicaSet), 0 absent */
    const char *hash;             /* pod-template-hash / controller-revision-hash value */
    const char **claim_templates; /* StatefulSet volumeClaimTemplates[].metadata.name */
    uint32_t nclaim_templates;
    int64_t ordinal_start;        /* StatefulSet spec.ordinals.start */
    int64_t completions;          /* Job spec.completions; -1 unset */
    int64_t succeeded;            /* Job status.succeeded */
    int finished;                 /* Job: condition Complete or Failed True */
    int suspended;                /* Job spec.suspend */
    int indexed;                  /* Job completionMode Indexed */
    int terminating;              /* metadata.deletionTimestamp: creates nothing */
} berth_kcontroller;

typedef struct berth_knamespace {
    const char *name;
    berth_labels labels;
} berth_knamespace;

/* Score and filter plugins of a profile, in SPEC 2.5 order. */
typedef enum berth_kplugin {
    BERTH_KP_NODE_UNSCHEDULABLE,
    BERTH_KP_NODE_NAME,
    BERTH_KP_TAINT_TOLERATION,
    BERTH_KP_NODE_AFFINITY,
    BERTH_KP_NODE_PORTS,
    BERTH_KP_NODE_RESOURCES_FIT,
    BERTH_KP_VOLUME_ZONE,
    BERTH_KP_POD_TOPOLOGY_SPREAD,
    BERTH_KP_INTER_POD_AFFINITY,
    BERTH_KP_BALANCED_ALLOCATION,
    BERTH_KP_IMAGE_LOCALITY,
    BERTH_KP_USAGE_HEADROOM,      /* berth: usage-aware profile (SPEC 2.4) */
    BERTH_KP_COUNT
} berth_kplugin;

typedef enum berth_kfit_strategy {
    BERTH_FIT_LEAST_ALLOCATED,
    BERTH_FIT_MOST_ALLOCATED,
    BERTH_FIT_REQUESTED_TO_CAPACITY_RATIO,
} berth_kfit_strategy;

typedef struct berth_kres_weight {
    uint32_t res;                 /* resource index */
    int64_t weight;               /* 1..100 */
} berth_kres_weight;

typedef struct berth_kprofile {
    const char *name;             /* schedulerName */
    uint32_t filters;             /* bit per berth_kplugin: filter enabled */
    uint32_t scores;              /* bit per berth_kplugin: score enabled */
    int64_t weight[BERTH_KP_COUNT];
    berth_kfit_strategy fit_strategy;
    berth_kres_weight fit_res[BERTH_KUBE_MAX_RES];
    uint32_t nfit_res;
    int32_t shape_util[16], shape_score[16]; /* RequestedToCapacityRatio points as
                                * written: utilization 0..100, score 0..10 */
    uint32_t nshape;
    uint32_t ignored_res;         /* NodeResourcesFit ignoredResources (bits) */
    berth_kres_weight balanced_res[BERTH_KUBE_MAX_RES];
    uint32_t nbalanced_res;
    int64_t hard_pod_affinity_weight; /* default 1 */
    int spread_system_defaults;   /* defaultingType System (default) */
    berth_kspread *default_spread;/* defaultingType List */
    uint32_t ndefault_spread;
    int32_t percentage_of_nodes_to_score; /* 0 = score every feasible node */
    int usage_aware;              /* SPEC 2.4 admission and placement */
    /* NodeAffinityArgs addedAffinity (upstream nodeaffinity.New): with
     * has_added_req, every node must also match one of added_req (ORed;
     * none listed: no node matches), else NodeAffinity rejects it with
     * "node(s) didn't match scheduler-enforced node affinity"; added_pref
     * weights add to every pod's preferred terms in NodeAffinity's score */
    int has_added_req;
    berth_kterm *added_req;
    uint32_t nadded_req;
    berth_kpref_term *added_pref;
    uint32_t nadded_pref;
} berth_kprofile;

/* A policy/v1 PodDisruptionBudget (read for disruption planning, SPEC 4.1).
 * min_available / max_unavailable: an integer, or a percent when *_pct. */
typedef struct berth_kpdb {
    const char *ns, *name;
    berth_selector selector;      /* nil selector: nothing; {}: every pod of ns */
    int has_min_available, min_pct;
    int64_t min_available;
    int has_max_unavailable, max_pct;
    int64_t max_unavailable;
    int has_disruptions_allowed;  /* status.disruptionsAllowed present */
    int64_t disruptions_allowed;
    int always_allow;             /* unhealthyPodEvictionPolicy: AlwaysAllow */
} berth_kpdb;

typedef struct berth_kcluster {
    berth_arena arena;
    berth_skips skipped;      /* kinds the loader skipped, over every file (SPEC 6.1) */
    const char *res_names[BERTH_KUBE_MAX_RES];
    uint32_t nres;
    berth_knode *nodes;       uint32_t nnodes, capnodes;
    berth_kpod *pods;         uint32_t npods, cappods;
    berth_kworkload *workloads; uint32_t nworkloads, capworkloads;
    berth_knamespace *namespaces; uint32_t nnamespaces, capnamespaces;
    berth_kprofile *profiles; uint32_t nprofiles, capprofiles;
    int32_t percentage_of_nodes_to_score; /* top-level KubeSchedulerConfiguration value */
    berth_kpdb *pdbs;         uint32_t npdbs, cappdbs;  /* PodDisruptionBudgets */
    berth_kpvc *pvcs;         uint32_t npvcs, cappvcs;  /* PersistentVolumeClaims */
    berth_kpv *pvs;           uint32_t npvs, cappvs;    /* PersistentVolumes */
    berth_kcontroller *controllers; uint32_t ncontrollers, capcontrollers; /* workloads to expand */
    berth_kpriority_class *pclasses; uint32_t npclasses, cappclasses;    /* PriorityClasses */
    int expanded;             /* berth_kube_expand ran */
    int volumes_stale;        /* loader: pods' volume zones need resolving again */
    /* loader: node and namespace names -> index (berth_nameidx), for
     * duplicate checks in O(1); node_names is valid while loading
     * (scheduling re-sorts nodes and drops it) */
    berth_nameidx node_names, ns_names;
} berth_kcluster;

void berth_kube_init(berth_kcluster *k);
void berth_kube_free(berth_kcluster *k);
/* Whether nodes[0..n) are in strictly ascending name order (one pass over
 * the names): the order the scheduler and the what-if sessions keep, which a
 * loaded model or kubectl's listing usually has already. */
int berth_kube_names_ascending(const berth_knode *nodes, uint32_t n);

/* Whether PDB b selects pod p: same namespace and b's selector matches p's
 * labels (kube/pdb.c). */
int berth_kpdb_matches(const berth_kpdb *b, const berth_kpod *p);
/* PDB b's allowed disruptions given `expected` (its matching pods not
 * terminating) and `healthy` (those of them the caller counts as healthy):
 * status.disruptionsAllowed as given when present, else healthy - desired
 * and at least 0, where desired is minAvailable, or expected -
 * maxUnavailable (percentages of expected rounded up), or 0. O(1). */
int64_t berth_kpdb_allowed(const berth_kpdb *b, int64_t expected, int64_t healthy);
/* PDB b's desired healthy pods given `expected` matching pods (upstream
 * disruption controller's getExpectedScale/desiredHealthy): minAvailable,
 * or expected - maxUnavailable (percentages of expected rounded up), or 0;
 * status.disruptionsAllowed is not consulted. O(1). */
int64_t berth_kpdb_desired(const berth_kpdb *b, int64_t expected);
/* berth_kpdb_allowed with the counts taken from k's pods: a matching pod
 * not terminating is expected, and healthy when healthy(ctx, pod index)
 * is non-zero (every one when healthy is NULL). Work: O(pods) when
 * status.disruptionsAllowed is absent, else O(1). */
int64_t berth_kpdb_count_allowed(const berth_kcluster *k, const berth_kpdb *b,
                                 int (*healthy)(const void *ctx, uint32_t pod), const void *ctx);

/* Index of a resource by API name ("cpu", "memory", "ephemeral-storage",
 * "nvidia.com/gpu"), adding it when add is set; BERTH_KUBE_NONE when absent
 * or when the table is full. "pods" is not a column. */
uint32_t berth_kube_resource(berth_kcluster *k, const char *name, int add);

/* Decodes every document of src (Node, Pod, List, Namespace, Service,
 * Deployment, ReplicaSet, StatefulSet, ReplicationController, DaemonSet,
 * Job (kept in controllers; berth_kube_expand makes their pods),
 * PriorityClass, PodDisruptionBudget (kept in pdbs), PersistentVolumeClaim,
 * PersistentVolume, KubeSchedulerConfiguration). Any `<X>List` is a list
 * (typed lists' items take kind X). Other kinds are counted in k->skipped.
 * strict: unknown fields and other kinds are errors. BERTH_EINVAL with a
 * located message.
 * When the file added PVCs, PVs or pods with claims, every pod's claims
 * are resolved again (pod -> PVC of its namespace -> PV): O(pods with
 * claims + PVCs + PVs), so the objects may come in any file order. */
int berth_kube_load(berth_kcluster *k, const berth_source *src, int strict, berth_error *e);
/* berth_kube_load of the file at path ("-": stdin), streamed: each document
 * and List item decoded as it is parsed, then its tree released
 * (berth_dec_walk_file); a file without documents is an error ("PATH: no
 * input documents (an empty file or stream)"). */
int berth_kube_load_file(berth_kcluster *k, const char *path, int strict, berth_error *e);

/* Once every input file is in: creates the pods the workload controllers
 * (Deployment, ReplicaSet, ReplicationController, StatefulSet, DaemonSet,
 * Job) would create, as their upstream controllers do (existing owned pods
 * count; docs/kube-input.md "Workloads"), sets every pod's workload, and
 * resolves priorityClassName through the PriorityClasses (and the two
 * system classes) for pods without spec.priority. Generated pods are
 * appended to k->pods (pending, in controller input order) with requests
 * computed; StatefulSet claims missing from the input are added as unbound
 * PersistentVolumeClaims. Every command reading Kubernetes objects calls it
 * once after loading; a second call does nothing. Errors (BERTH_EINVAL,
 * located): an unknown priority class, more generated pods than
 * BERTH_KUBE_MAX_GENERATED. Work: O(pods + controllers + DaemonSets x nodes). */
#define BERTH_KUBE_MAX_GENERATED (1u << 20)
int berth_kube_expand(berth_kcluster *k, berth_error *e);
/* After berth_kube_expand: n more pods of controller c (not a DaemonSet),
 * named and built as its controller would scale it up (a StatefulSet's next
 * ordinals, generated names otherwise), appended pending to k->pods; the
 * controller's replicas grow by n. For `kube fit`. Work: O(pods + n). */
int berth_kube_expand_more(berth_kcluster *k, uint32_t c, uint32_t n, berth_error *e);
/* The PriorityClass named name: one of k->pclasses, else the built-in
 * system-cluster-critical / system-node-critical; NULL when unknown. */
const berth_kpriority_class *berth_kube_priority_class(const berth_kcluster *k, const char *name);

/* Documents a planner's loader does not read itself go to the kube loader
 * (the fallback of its berth_dec_walk), each decoded as it is met. */
typedef struct berth_kdocs {
    berth_kcluster *k;
    uint32_t first_pod;           /* k->npods when the walk began */
    uint32_t n;                   /* documents forwarded */
} berth_kdocs;
/* Decodes doc into ctx's model (a walk fallback: ctx is the berth_kdocs),
 * with the field path of a document of its own. 0 or an error. */
int berth_kdocs_forward(void *ctx, berth_dec *d, const berth_node *doc, const char *kind);
/* The load of a planner whose input adds its own kinds to the Kubernetes
 * ones (disruption, autoscaling): d set up for src (strict, skipped kinds
 * counted in k), every document walked through w with ctx (w's fallback
 * hands the Kubernetes kinds to the kube loader: berth_kdocs_forward on
 * kd), then the end of a kube load (requests, shared names, volume zones);
 * d's field path is left empty. *any: documents were forwarded (k's nodes
 * or pods may have grown). 0 or the first error. */
int berth_kdocs_walk(berth_kcluster *k, berth_dec *d, const berth_source *src, int strict,
                     const berth_walker *w, void *ctx, berth_kdocs *kd, int *any,
                     berth_error *e);
/* berth_kdocs_walk of the file at path ("-": stdin, named <stdin>), each
 * document and List item walked as it is parsed and then released
 * (berth_dec_walk_file); a file without documents is an error ("PATH: no
 * input documents (an empty file or stream)"). */
int berth_kdocs_walk_file(berth_kcluster *k, berth_dec *d, const char *path, int strict,
                          const berth_walker *w, void *ctx, berth_kdocs *kd, int *any,
                          berth_error *e);
/* berth_kdocs_walk_file of buf[0, len), named name in messages. */
int berth_kdocs_walk_buffer(berth_kcluster *k, berth_dec *d, const char *name, const char *buf,
                            size_t len, int strict, const berth_walker *w, void *ctx,
                            berth_kdocs *kd, int *any, berth_error *e);
/* A planner's table parallel to a kube model's nodes or pods (*rows: *n
 * rows of size bytes, capacity *cap; berth_grow), row i filled by
 * fill(ctx, d, i, row). */
typedef int (*berth_krow_fill)(void *ctx, berth_dec *d, uint32_t i, void *row);
typedef struct berth_krows {
    void **rows;
    uint32_t *n, *cap;
    size_t size;
    berth_krow_fill fill;
} berth_krows;
/* Extends nodes to k's nodes, then pods to k's pods, filling the new rows
 * in order; stops at the first error. 0, BERTH_ENOMEM (in d->err) or
 * fill's error. */
int berth_krows_sync(berth_dec *d, const berth_kcluster *k, const berth_krows *nodes,
                     const berth_krows *pods, void *ctx);

/* Fills the default profile ("default-scheduler", SPEC 2.5 defaults). */
void berth_kube_default_profile(berth_kcluster *k, berth_kprofile *p);
/* The usage-aware profile (SPEC 2.4): "usage-aware". */
void berth_kube_usage_aware_profile(berth_kcluster *k, berth_kprofile *p);
/* Profile by scheduler name; NULL when none. */
const berth_kprofile *berth_kube_find_profile(const berth_kcluster *k, const char *name);

/* Computes pod->req, pod->req_nz and pod->qos (SPEC 2.1, 2.5). */
void berth_kube_pod_requests(const berth_kcluster *k, berth_kpod *pod);
const char *berth_qos_name(berth_qos q);

/* vSphere Pod size (SPEC 2.3). */
typedef struct berth_vsphere_size {
    int64_t vcpu;             /* whole vCPUs, rounded up */
    int64_t memory;           /* bytes */
    int64_t reservation_cpu;  /* millicores: sum of requests */
    int64_t reservation_memory;
} berth_vsphere_size;
typedef struct berth_vsphere_opts {
    int64_t default_cpu_milli;    /* 500 */
    int64_t default_memory;       /* 512 MB = 512 * 1000 * 1000? see docs: 512 MiB */
    int64_t margin_cpu_milli;     /* lifecycle margin, default 0 */
    int64_t margin_memory;        /* default 0 */
} berth_vsphere_opts;
void berth_vsphere_default_opts(berth_vsphere_opts *o);
void berth_kube_vsphere_size(const berth_kpod *pod, const berth_vsphere_opts *o,
                             berth_vsphere_size *out);

/* ---- scheduling ---- */

/* One kube-scheduler reason and the number of nodes it rejected (the
 * counts of "0/5 nodes are available: 3 Insufficient cpu, ..."). */
typedef struct berth_kreason {
    const char *text;
    uint32_t count;
} berth_kreason;

/* One pod's decision, handed to the caller's callback. Arrays are valid
 * during the callback only. With detail = 0 only pod/node/nfeasible are set
 * (and reasons, with berth_kube_options.reasons). */
typedef struct berth_kdecision {
    uint32_t pod;
    uint32_t node;                    /* BERTH_KUBE_NONE when unschedulable */
    uint32_t nfeasible;
    int64_t total;                    /* weighted total of the chosen node */
    const uint32_t *feasible;         /* node indices (detail, or NULL) */
    const int64_t *plugin_scores;     /* [plugin slot][i] normalised, per feasible node */
    const int64_t *totals;            /* per feasible node; plugin_scores and totals are
                                       * NULL when the pod was not scored (NodeAffinity's
                                       * PreScore failed: node NONE, summary says why) */
    const berth_kplugin *score_plugins;  /* plugin of each score slot */
    const int64_t *score_weights;     /* weight of each score slot (profile, >= 1) */
    uint32_t nscore_plugins;
    uint32_t cap;                     /* stride of plugin_scores */
    /* reasons: per node id, bit i set when filter slot i rejected it
     * (detail only); filter slot i is plugin filter_plugins[i] */
    const uint32_t *fail_mask;
    const berth_kplugin *filter_plugins;
    uint32_t nfilter_plugins;
    const uint32_t *examined;         /* node ids filtered, in examination order */
    uint32_t nexamined;
    const char *summary;              /* "0/5 nodes are available: ..." when unschedulable */
    int terminating;                  /* not scheduled: the pending pod is being deleted
                                       * (metadata.deletionTimestamp), as kube-scheduler
                                       * skips it; node is BERTH_KUBE_NONE */
    void *sched;                      /* for berth_kube_decision_reason */
    const void *req;
    /* preemption (berth_kube_options.preempt): when nvictims > 0 the pod
     * fitted nowhere and DefaultPreemption nominated node `nominated` (then
     * node == nominated) by deleting victims[0..nvictims) (pod indices, all
     * on that node, most important first). nvictims == 0: no preemption
     * (nominated is then not meaningful) */
    uint32_t nominated;
    const uint32_t *victims;
    uint32_t nvictims;
    /* with berth_kube_options.reasons: the rejecting reasons over the
     * examined nodes (each node's first failing filter plugin, every reason
     * it gave; nodes outside NodeAffinity's PreFilter as "node(s) didn't
     * satisfy plugin(s) [NodeAffinity]"), for placed pods too, at most 64
     * distinct texts, in first-seen order; nreasons = 0 otherwise. */
    const berth_kreason *reasons;
    uint32_t nreasons;
} berth_kdecision;

typedef struct berth_kube_options {
    const berth_kprofile *profile;    /* NULL: per pod by schedulerName, else default */
    berth_tiebreak tiebreak;          /* FIRST (lowest node name) or RANDOM (seeded) */
    uint64_t seed;
    int detail;                       /* fill feasible, scores and fail masks */
    int reference;                    /* plain per-pod recomputation, no incremental state */
    void (*on_decision)(void *ctx, const berth_kcluster *k, const berth_kdecision *d);
    void *ctx;
    int preempt;                      /* DefaultPreemption for a pod that fits nowhere
                                       * (kube/preempt.c; the CLI's default, off for
                                       * views and what-if sessions) */
    int reasons;                      /* fill berth_kdecision.reasons for every pod, and
                                       * feasible/plugin_scores/totals (the full pipeline:
                                       * no pod-class fast path), without detail's
                                       * per-node fail masks */
    const berth_cancel *cancel;       /* NULL: no limit; else checked every 8 pods
                                       * (berth/cancel.h): BERTH_ETIMEDOUT once expired */
    uint32_t threads;                 /* threads in all for the per-node loops (filters,
                                       * per-node scores, the fast path's scans) of one
                                       * pod, created once per run; 0 or 1: the calling
                                       * thread only. Decisions do not depend on it
                                       * (docs/kube.md "Threads"). */
    uint32_t tail;                    /* the last `tail` nodes of k come after all the
                                       * others in tie-break order (each part by name):
                                       * hypothetical nodes that lose exact ties to the
                                       * real ones, as a what-if session's spare nodes
                                       * do; 0: every node by name */
} berth_kube_options;

/* Schedules every pending pod in queue order. Sorts k->nodes by name first
 * (the lowest index is the lowest name, for tie-break first; with
 * opt->tail, the head and the tail each); each placed
 * pod gets node_name set and assumed = 1. With opt->preempt, a pod that
 * fits nowhere may preempt (docs/kube.md "Preemption"): it is placed on its
 * nominated node (node_name, assumed) and its victims are deleted (removed
 * from every column and counter, terminating = 1, node_name kept). Returns
 * 0 when every pod was placed, BERTH_ENOFIT when some were not, or an
 * error. BERTH_ETIMEDOUT when opt->cancel expired: k then holds the
 * decisions made so far and on_decision has seen them; discard both. */
int berth_kube_schedule(berth_kcluster *k, const berth_kube_options *opt, berth_error *e);

/* Writes filter plugin f's reason for the decision's pod on node into buf
 * (kube's wording: "Insufficient cpu", "node(s) had untolerated taint
 * {k: v}", ...; several reasons of one plugin are joined by "; "). Valid
 * inside an on_decision callback only. */
void berth_kube_decision_reason(const berth_kdecision *d, uint32_t node, berth_kplugin f,
                                char *buf, size_t size);
const char *berth_kplugin_name(berth_kplugin p);

/* Sorts pod indices of k into kube queue order (priority, creation, input
 * order: the order berth_kube_schedule and berth_ksession_place use). */
void berth_kube_queue_sort(const berth_kcluster *k, uint32_t *pods, uint32_t n);

/* NodeAffinity's filter: whether node n satisfies pod p's nodeSelector and
 * required node affinity (used by planners to pre-filter hypothetical
 * nodes without a scheduling run). The pod's own constraints only: a
 * profile's addedAffinity (berth_kprofile.has_added_req) is not applied;
 * callers with KubeSchedulerConfiguration profiles confirm through the
 * scheduler, whose NodeAffinity filter applies it. */
int berth_kube_node_affinity_matches(const berth_kpod *p, const berth_knode *n);

/* VolumeZone's filter (SPEC 2.5, upstream volumezone): 0 when p has a
 * volume error; 1 when the node's labels carry none of the four zone and
 * region keys; else 1 when every constraint of p->vol_zones finds the
 * node's value for its key (a legacy beta key falls back to the GA key)
 * among its values. any_region: a constraint on a region key the node
 * lacks passes (berth_knode.any_region). When it returns 0 and why is not
 * NULL, why gets a short reason naming the volume and its zones. */
int berth_kube_volume_zone_fits(const berth_kpod *p, const berth_labels *node_labels,
                                int any_region, char *why, size_t size);

/* ---- kube fit (kube/fit.c) ---- */

/* How many more replicas of one workload fit now (kubernetes-sigs/
 * cluster-capacity's question). */
typedef struct berth_kfit {
    const char *workload;         /* "Kind/namespace/name" (a bare pod: "Pod/...") */
    uint32_t existing;            /* its pods in the input (not terminating) */
    uint32_t existing_placed;     /* of those, bound or scheduled in this run */
    uint32_t fits;                /* more replicas placed */
    uint32_t *per_node;           /* per node of k (name order): new replicas there */
    const char *reason;           /* why the next replica does not fit; NULL when at_max */
    uint32_t max;                 /* the limit asked for (0: none) */
    int at_max;                   /* stopped by max (or berth's limit), not by a failure */
} berth_kfit;
/* k holds the cluster's files and then the workload file (controllers from
 * first_ctl, pods from first_pod on came from it) and is not expanded yet.
 * The subject is the workload file's first Deployment, ReplicaSet,
 * ReplicationController, StatefulSet or Job (it replaces an object of the
 * same kind, namespace and name in the cluster; its running pods count as
 * existing), else its first Pod (a template). Expands k, schedules the
 * cluster's pending pods (no preemption), then adds replicas as the
 * controller names them, in batches of 1, 2, 4, ..., until one does not
 * fit or max (0: BERTH_KUBE_MAX_GENERATED) are placed. Arrays and strings
 * of out live in k's arena. Work: O(log fits) scheduling runs over the
 * cluster plus the replicas' own cycles. 0 or an error (BERTH_ETIMEDOUT
 * when cancel, which may be NULL, expired; out is then not filled). */
int berth_kube_fit(berth_kcluster *k, uint32_t first_ctl, uint32_t first_pod, uint32_t max,
                   const berth_kprofile *profile, const berth_cancel *cancel, berth_kfit *out,
                   berth_error *e);

/* ---- what-if scheduling on a view (disruption and autoscaling) ---- */

/* A view of a cluster: its nodes minus the excluded ones plus hypothetical
 * nodes; the pods bound (per pod_node) to included nodes stay bound there;
 * `pending` pods are queued, unless bind[i] pins pending[i] to a node
 * name. The cluster itself is not modified. */
typedef struct berth_kview {
    const uint8_t *excluded;          /* per node of k (1: not in the view), or NULL */
    const uint32_t *pod_node;         /* per pod of k: node index or BERTH_KUBE_NONE */
    const berth_knode *extra;         /* hypothetical nodes (names unique) */
    uint32_t nextra;
    const uint32_t *pending;          /* pod indices of k to schedule */
    uint32_t npending;
    const char *const *bind;          /* per pending: pin to this node, or NULL; may be NULL */
    const berth_kprofile *profile;    /* NULL: per pod by schedulerName */
    const berth_cancel *cancel;       /* NULL: no limit (berth_kube_options.cancel) */
    int extra_last;                   /* 1: the extra nodes lose exact ties to k's nodes
                                       * (berth_kube_options.tail), as a what-if
                                       * session's spare nodes do; 0: all by name */
} berth_kview;

/* Schedules the view's pending pods in queue order (tie-break first) with
 * berth_kube_schedule on a shallow copy. placed[i] gets the node name
 * chosen for pending[i] (a name of k's nodes or of v->extra) or NULL; when
 * why is not NULL and a is, why[i] gets the scheduler's summary for an
 * unplaced pod (a copy in a) or NULL. Work: one berth_kube_schedule over
 * (included + extra) nodes and (bound + pending) pods. 0 or an error
 * (BERTH_ETIMEDOUT when v->cancel expired). */
int berth_kube_schedule_view(const berth_kcluster *k, const berth_kview *v, const char **placed,
                             const char **why, berth_arena *a, berth_error *e);

/* ---- what-if session (incremental what-if scheduling; kube/session.c) ---- */

/* A what-if session keeps one kube scheduler state over a cluster and
 * answers many questions on it: evict pods, exclude nodes, activate spare
 * (hypothetical) nodes, place pods, then roll back. A question costs the
 * kube scheduler's per-pod work for the pods it moves, not a rebuild of the
 * cluster (berth_kube_schedule_view does that per question). Decisions
 * equal berth_kube_schedule_view's on the same state (excluded nodes and
 * their pods gone, evicted pods pending, spare nodes as hypothetical
 * nodes), except possibly which of several equally scored nodes wins when a
 * spare node ties with a real node (a spare has a higher index than every
 * real node; a view with extra_last and spares activated in name order
 * decide alike). Usage accounting (usage-aware profile): pods bound at open
 * or by berth_ksession_bind are taken as already in their node's observed
 * usage, as a view's bound pods; placed pods add their demand, as
 * berth_kube_schedule's decisions do. Node indices (k's, then k->nnodes +
 * spare slot) and pod indices are k's. Errors: BERTH_EINVAL for a bad
 * index or state (evict of an unbound pod, bind or place of a bound one),
 * BERTH_ENOMEM. One session from one thread at a time; distinct sessions,
 * also over one cluster, may run concurrently (see the top of this file). */
typedef struct berth_ksession berth_ksession;
/* Opens a session over k: k's nodes (node indices exactly as in k: 0..k->nnodes-1) plus `nspare` spare slots
 * (indices k->nnodes .. k->nnodes+nspare-1, holding nothing and receiving nothing until berth_ksession_spare),
 * pods bound per pod_node (per pod of k: node index or BERTH_KUBE_NONE; NULL = by spec.nodeName), terminating
 * pods not counted. profile NULL: per pod by schedulerName as berth_kube_schedule does. k is not modified and
 * must outlive the session; the session reads k's pod table in place (not copied) until it is closed, and
 * k's node table too when its nodes are in name order already and nspare is 0, so its pods (and nodes) must
 * not move or change meanwhile, except spec.nodeName and the deletion mark, which the session reads at open
 * only. Work: one kube_sched_init. */
int berth_ksession_open(berth_ksession **out, const berth_kcluster *k, const uint32_t *pod_node,
                        uint32_t nspare, const berth_kprofile *profile, berth_error *e);
void berth_ksession_close(berth_ksession *s);
/* excluded = 1: node receives no new pod (its bound pods stay counted); 0: receives again. */
void berth_ksession_exclude(berth_ksession *s, uint32_t node, int excluded);
/* Removes pod from the node it is on, from every column and counter (spread, affinity, resources). */
int berth_ksession_evict(berth_ksession *s, uint32_t pod);
/* Binds pod to node without scheduling (assume). */
int berth_ksession_bind(berth_ksession *s, uint32_t pod, uint32_t node);
/* Activates spare slot i as a copy of n (name unique, labels, taints, allocatable, allocatable pods);
 * *node gets its node index (k->nnodes + i). A spare slot can be reconfigured only after a rollback
 * past its activation. The copy is shallow: n's strings and arrays must live until that rollback
 * (or the session's close). Work: O(pod classes + topology keys). */
int berth_ksession_spare(berth_ksession *s, uint32_t i, const berth_knode *n, uint32_t *node);
/* Schedules pods (pod indices of k, not bound in the session) in kube queue order (priority, creation,
 * input order - the same order berth_kube_schedule uses) with tie-break first, assuming each decision
 * before the next pod. placed[i] gets the node index for pods[i] or BERTH_KUBE_NONE. When why and a are
 * not NULL, why[i] gets kube-scheduler's summary for an unplaced pod (copied in a). Returns 0 when all
 * were placed, BERTH_ENOFIT when some were not, or an error. */
int berth_ksession_place(berth_ksession *s, const uint32_t *pods, uint32_t n, uint32_t *placed,
                         const char **why, berth_arena *a, berth_error *e);
/* The node pod is on in the session, BERTH_KUBE_NONE when none. */
uint32_t berth_ksession_node_of(const berth_ksession *s, uint32_t pod);
/* The pods on node in the session (each once, in no set order): *n of
 * them, read in place, valid until the session next changes (an evict of
 * one of them included). NULL and *n 0 for a bad node. */
const uint32_t *berth_ksession_pods_on(const berth_ksession *s, uint32_t node, uint32_t *n);
/* Whether pod is on a node in the session (berth_ksession_node_of !=
 * BERTH_KUBE_NONE, without looking up which node in the caller's order). */
int berth_ksession_placed(const berth_ksession *s, uint32_t pod);
/* A hint: pods[0..n) are about to move (their lines are fetched). */
void berth_ksession_prefetch(const berth_ksession *s, const uint32_t *pods, uint32_t n);
/* Makes berth_ksession_place check c (NULL: no limit; berth/cancel.h): it
 * returns BERTH_ETIMEDOUT once c expired, with the pods placed before in
 * the undo log (roll back, or close the session). c must outlive its use. */
void berth_ksession_set_cancel(berth_ksession *s, const berth_cancel *c);
/* Runs the per-node loops of the session's placements (the full pipeline's
 * filters and per-node scores, the fast path's chunk scans; docs/kube.md
 * "Threads") on `threads` threads in all, as berth_kube_options.threads
 * does: decisions are the same for every count. Nothing changes below
 * BERTH_PAR_MIN nodes (with the spare slots) or for threads <= 1; a
 * session keeps the first pool it gets. The workers live until
 * berth_ksession_close; the session is still driven by one thread at a
 * time. 0, BERTH_ENOMEM or BERTH_EINTERNAL (no thread could be started;
 * the session stays usable on the calling thread). */
int berth_ksession_set_threads(berth_ksession *s, uint32_t threads);
/* Undo log: every exclude, evict, bind, spare and placement after a mark is undone by rollback to it. */
uint64_t berth_ksession_mark(const berth_ksession *s);
int berth_ksession_rollback(berth_ksession *s, uint64_t mark);
/* Keeps every change so far for good: the undo log is emptied (a long
 * walk that never returns past its accepted steps keeps it at one step's
 * size), and a rollback to a mark taken before fails with BERTH_EINVAL. */
void berth_ksession_commit(berth_ksession *s);

#endif
