/* autoscale/state.h - internal: the autoscaler's working state for one pass (per-node requests, group
 * membership, the new nodes) used by scale-up and scale-down. */
#ifndef BERTH_AUTOSCALE_STATE_H
#define BERTH_AUTOSCALE_STATE_H

#include "berth/autoscale.h"
#include "berth/nameidx.h"

/* ---- the pass (plan.c, scaleup.c, scaledown.c) ---- */

/* A node of the pass: an existing kube node or a new one. */
typedef struct capacity_node {
    const berth_knode *k;         /* existing: &m->kube.nodes[i]; new: NULL (hyp) */
    berth_knode *hyp;             /* new nodes only (in the pass's arena: the node
                                   * array stays small, ~2 lines a node) */
    int vng;                      /* -1 unmanaged */
    int is_new;
    int removed;                  /* scale-down took it */
    int ct;                       /* capacity type, -1 unknown */
    int type;                     /* instance type index, -1 unknown */
    const char *zone;
    int64_t req[3];               /* cpu, memory, gpu requested by its pods */
    int64_t npods;
    int64_t alloc[3];
    int64_t alloc_pods;
    int64_t headroom_units;       /* new for headroom: units it was opened for */
} capacity_node;

typedef struct capacity_pass {
    const berth_autoscale *m;
    uint32_t gpu;                 /* kube resource index of nvidia.com/gpu or NONE */
    capacity_node *n;             /* existing nodes first (kube order), then new ones */
    uint32_t nn, capn, nexisting;
    berth_nameidx node_idx;       /* existing nodes by name (keyed; the first of equal names) */
    uint32_t *pod_node;           /* per kube pod: capacity node index or NONE */
    uint8_t *pod_flags;           /* per kube pod: CAPACITY_POD_* from the pass's walk, so
                                   * the scale-down's checks read a byte, not two records */
    uint32_t *pending;            /* the pending pods (no spec.nodeName, not terminating),
                                   * in pod order: found by the pass's one walk over the pods */
    uint32_t npending, cappending;
    double *res_left;             /* per reservation: units (count) or $/h (commitment) left */
    int *node_res;                /* per node: reservation it consumes, -1 none */
    double *node_res_cost;        /* per node: what it took from that reservation */
    int64_t *vng_nodes;           /* per group: nodes (existing, not removed, + new) */
    berth_aplan *plan;
    berth_arena *arena;
    berth_label *lab;             /* scratch labels for template checks */
    uint32_t caplab;
    uint64_t new_serial;          /* names of new nodes */
    int reference;                /* berth_aplan_options.reference */
    const berth_cancel *cancel;   /* berth_aplan_options.cancel (NULL: none) */
    uint32_t threads;             /* berth_aplan_options.threads (0, 1: calling thread) */
    struct capacity_daemons *ds;  /* daemons.c: DaemonSet room per template (lazy) */
    struct capacity_counts *cnt;  /* the replacements' live counts (fast path), else NULL */
} capacity_pass;

/* Nodes not removed per zone and per group (spot ones, non-reserved ones),
 * kept live while the fast path's replacement pass (replace.c) changes
 * nodes one at a time: capacity_zone_nodes and the spot share read them
 * in O(zones) and O(1) instead of scanning every node. Outside that pass
 * (and in reference mode) s->cnt is NULL and the nodes are scanned. */
typedef struct capacity_counts {
    berth_nameidx zones;          /* the zones of nodes and offerings -> their index */
    int64_t *zone_nodes;          /* per zone index */
    uint32_t capzones;
    int64_t *spot, *nonres;       /* per group: spot nodes, nodes not reserved */
} capacity_counts;

/* Counts the pass's nodes not removed into c (s->cnt is not set). 0 or
 * BERTH_ENOMEM. */
int capacity_counts_build(const capacity_pass *s, capacity_counts *c);
void capacity_counts_free(capacity_counts *c);
/* Node n joins (d = 1) or leaves (d = -1) the counts s->cnt (none: nothing). */
void capacity_counts_add(capacity_pass *s, uint32_t n, int d);
/* Group g's spot nodes and nodes not reserved (not removed). */
void capacity_group_counts(const capacity_pass *s, uint32_t g, int64_t *spot, int64_t *nonres);

#define CAPACITY_POD_MOVABLE 1    /* capacity_movable */
#define CAPACITY_POD_RESTRICT 2   /* berth_apod.restrict_scale_down */
#define CAPACITY_POD_NOT_SAFE 4   /* berth_apod.safe_to_evict == 0 */
#define CAPACITY_POD_UNSCHED 8    /* listed in plan->unsched (capacity_add_unsched) */

int capacity_pass_init(capacity_pass *s, const berth_autoscale *m, berth_aplan *plan);
void capacity_pass_free(capacity_pass *s);
/* Adds pod to node n's request columns. */
void capacity_place(capacity_pass *s, uint32_t pod, uint32_t n);
void capacity_unplace(capacity_pass *s, uint32_t pod);
/* Schedules pending pods (kube indices) on the view: every existing node
 * not removed, every new node, each pod with pod_node set bound there;
 * bind (per pending, optional) pins; placed[i] gets a capacity node index
 * or BERTH_KUBE_NONE; why[i] (optional) the scheduler's summary (arena). */
int capacity_schedule(capacity_pass *s, const uint32_t *pending, uint32_t npending,
                      uint32_t new_limit, uint32_t *placed, const char **why);
/* new_limit: only new nodes with index < nexisting + new_limit are in the
 * view (pods bound to the others are left out). */
/* Headroom units group v holds now: per headroom spec, the sum over the
 * group's nodes of how many units fit in their free capacity; returns the
 * minimum over specs of (held - wanted) (>= 0: satisfied). */
int64_t capacity_headroom_gap(const capacity_pass *s, uint32_t v, uint32_t spec, int64_t *held);
/* Whether a node of group g with type t, zone and capacity type ct could
 * host pod statically: nodeSelector, required node affinity, taints,
 * resources of an empty node. why (may be NULL) gets a short reason. */
int capacity_template_hosts(capacity_pass *s, uint32_t g, uint32_t t, const char *zone, int ct,
                            uint32_t pod, char *why, size_t size);
/* The part of capacity_template_hosts that does not depend on the pod's
 * requests: the group's taints against its tolerations, its nodeSelector
 * and required node affinity against the template's labels, and its
 * PersistentVolume zones (berth_kube_volume_zone_fits with any_region: a
 * region constraint counts only when the group's labels set a region). */
int capacity_template_match(capacity_pass *s, uint32_t g, uint32_t t, const char *zone, int ct,
                            uint32_t pod, char *why, size_t size);
/* The labels of a node of group g, type t, zone, capacity type ct named
 * name: the fixed ones, the group's, then the instance type's (berth/
 * instance.h), sorted, in buf (room for capacity_template_label_cap). */
uint32_t capacity_template_label_cap(const berth_autoscale *m, uint32_t g, uint32_t t);
berth_labels capacity_template_labels(const berth_autoscale *m, uint32_t g, uint32_t t,
                                      const char *zone, int ct, const char *name, berth_label *buf);
/* Whether group g allows instance type t / zone. */
int capacity_vng_allows_type(const berth_vng *v, const berth_instance_type *t);
int capacity_vng_allows_zone(const berth_vng *v, const char *zone);
/* Appends a new node of group g (type t, zone, ct) named after the group;
 * returns its capacity node index, or BERTH_KUBE_NONE when out of memory. */
uint32_t capacity_new_node(capacity_pass *s, uint32_t g, uint32_t t, const char *zone, int ct);
/* Nodes (existing not removed, plus new not removed) in zone. */
int64_t capacity_zone_nodes(const capacity_pass *s, const char *zone);

/* ---- daemons.c: DaemonSets on new nodes, pending DaemonSet pods ---- */

/* What a new node of group g, type t, zone and capacity type ct offers
 * other pods: the type's allocatable cpu, memory, GPUs and pods minus the
 * DaemonSet pods that would run there (cached per template). */
void capacity_template_free(capacity_pass *s, uint32_t g, uint32_t t, const char *zone, int ct,
                            int64_t out[4]);
/* Whether pod's requests fit capacity_template_free of the template (1
 * at once when no DaemonSet may run on new nodes). */
int capacity_daemon_room(capacity_pass *s, uint32_t g, uint32_t t, const char *zone, int ct,
                         uint32_t pod);
/* Whether some DaemonSet may take room on new nodes (the fast path's
 * per-type caches then do not stand for every offering of a type). */
int capacity_daemons_any(capacity_pass *s);
/* New node i: its DaemonSet pods' requests and slots come off hyp->alloc
 * and alloc. */
void capacity_daemon_reserve(capacity_pass *s, uint32_t i);
/* A pending pod that fits no existing node: when it is a DaemonSet pod,
 * records it as unschedulable (no node is bought for it; *rc the result)
 * and returns 1; else 0. */
int capacity_daemon_unplaced(capacity_pass *s, uint32_t pod, int *rc);
void capacity_daemons_free(capacity_pass *s);

int capacity_scale_up(capacity_pass *s, berth_error *e);
int capacity_scale_down(capacity_pass *s, berth_error *e);

/* ---- exported by scaleup.c / scaledown.c for replace.c and ca.c ---- */

/* Opens one new node of group g hosting every pod of pods[0..npods)
 * together (resources of an empty node and the template of each pod),
 * chosen by scale-up's option key within capacity type `tier` (BERTH_CT_*)
 * or, with tier -1, by the whole purchase order (reservations, spot per
 * spotPercentage, on-demand fallback); takes its reservation. pods is
 * reordered (first-fit decreasing). No pods: the option of least cost per
 * millicore. 0 with *node set, BERTH_ENOFIT with why, or BERTH_ENOMEM. */
int capacity_open_hosting(capacity_pass *s, uint32_t g, uint32_t *pods, uint32_t npods, int tier,
                          uint32_t *node, char *why, size_t size);
/* Records pod as unschedulable with why (once per pod). */
int capacity_add_unsched(capacity_pass *s, uint32_t pod, const char *why);
/* Appends the scale-up entries (plan->up) for the new nodes not removed. */
int capacity_report_new_nodes(capacity_pass *s);
/* Records the removal of existing node n (scale-down and
 * cluster-autoscaler mode) in plan->down: its utilisation, pods[i] moving
 * to placed[i], and gone[0..ngone), the pods deleted rather than moved
 * (gone NULL: no evicted list); spends pdb_need[b] from pdb_left[b] for
 * every PDB b. 0 or BERTH_ENOMEM. */
int capacity_add_scaledown(capacity_pass *s, uint32_t n, double util, const uint32_t *pods,
                           const uint32_t *placed, uint32_t npods, const uint32_t *gone,
                           uint32_t ngone, int64_t *pdb_left, const int64_t *pdb_need);
/* A PDB's allowed disruptions (berth_kpdb_count_allowed, every matching
 * pod taken as healthy). */
int64_t capacity_pdb_allowed(const berth_kcluster *k, const berth_kpdb *b);
/* Not a DaemonSet, mirror or terminating pod. */
int capacity_pod_movable(const capacity_pass *s, uint32_t pod);
int capacity_movable(const berth_autoscale *m, uint32_t pod);
/* cpu and memory requested by the movable pods on node n. O(pods). */
void capacity_node_requests(const capacity_pass *s, uint32_t n, int64_t *cpu, int64_t *mem);
/* max(cpu, memory) requested by movable pods over allocatable. */
double capacity_utilisation(const capacity_pass *s, uint32_t n);

/* ---- events.c: pods by namespace and name (events.c, timeline.c) ---- */

/* A pod's key, "<length of ns>:<ns><name>": one text per (namespace,
 * name) pair, the same for no two pairs whatever bytes they hold. Its
 * length with room for the longest length prefix (the NUL not counted). */
size_t capacity_pod_key_len(const char *ns, const char *name);
/* Writes the key at out (room for capacity_pod_key_len + 1 bytes); returns
 * its end (the NUL). */
char *capacity_pod_key(char *out, const char *ns, const char *name);

/* ---- replace.c, ca.c ---- */

/* Records node as kept with reason. */
int capacity_add_blocked(capacity_pass *s, uint32_t node, const char *reason);
/* Replacements (SPEC 5, Ocean policy), after scale-up and scale-down. */
int capacity_replace(capacity_pass *s, const berth_aplan_options *opt, berth_error *e);
/* cluster-autoscaler mode (SPEC 5.1): scale-up by node group estimate and
 * expander, scale-down by utilisation, unneeded time and drainability. */
int capacity_ca_scale_up(capacity_pass *s, const berth_aplan_options *opt, berth_error *e);
int capacity_ca_scale_down(capacity_pass *s, const berth_aplan_options *opt, berth_error *e);
/* Decodes the cluster-autoscaler-priority-expander ConfigMap into
 * m->prio (load.c hands it over; ca.c owns the format). */
int capacity_load_priority_configmap(berth_autoscale *m, berth_dec *d, const berth_node *doc);
/* ---- bound.c ---- */

/* The optimum of min sum c[t] x[t] subject to sum a0[t] x[t] >= d0,
 * sum a1[t] x[t] >= d1, x >= 0 (exact: the best vertex, O(nt^2)); pi gets
 * an optimal dual (prices per unit of each row). 0 when nothing is
 * demanded or no type covers it. */
double capacity_lp_cover2(const double *c, const double *a0, const double *a1, uint32_t nt,
                          double d0, double d1, double pi[2]);
/* Sets plan->up_cost and plan->up_bound (the lower bound). */
int capacity_scaleup_bound(const berth_autoscale *m, berth_aplan *p);
/* Frees what berth_aplan_free must for replacements and evictions. */
void capacity_free_plan_extras(berth_aplan *p);

#endif
