/* kube/state.h - internal: the kube scheduling state shared by the kube
 * plugins and the scheduler loop. Per-node columns (resource-major, so a
 * plugin's scan over nodes is a scan over one array), per-node host ports
 * and pods, topology value ids per (topology key, node), and the
 * incremental term counters behind PodTopologySpread and InterPodAffinity.
 *
 * Plugin convention: every kube plugin is a berth_filter_plugin /
 * berth_score_plugin whose `state` is a kube_sched * and `req` a
 * kube_req *. Candidates are node indices. */
#ifndef BERTH_KUBE_STATE_H
#define BERTH_KUBE_STATE_H

#include "berth/kube.h"

/* Topology keys and counted term signatures (PodTopologySpread,
 * InterPodAffinity) live in kube/terms.h, owned by kube/terms.c. */
typedef struct kube_terms kube_terms;
typedef struct kube_fast kube_fast;
typedef struct kube_terms_req kube_terms_req;

typedef struct kube_sched {
    berth_kcluster *k;
    const berth_kprofile *prof;
    /* per-node columns */
    int64_t *alloc[BERTH_KUBE_MAX_RES];     /* allocatable, per resource */
    int64_t *requested[BERTH_KUBE_MAX_RES]; /* sum of bound/assumed pods' req */
    int64_t *requested_nz[2];               /* cpu, memory with scoring defaults */
    int64_t *npods, *alloc_pods;
    uint8_t *has_hard_taint;                /* node has NoSchedule/NoExecute taints */
    uint8_t *has_prefer_taint;              /* node has PreferNoSchedule taints */
    /* per-node pods (bound and assumed), as pod indices */
    uint32_t **node_pods;
    uint32_t *node_npods, *node_cappods;
    /* topology keys and term counters (kube/terms.c) */
    kube_terms *terms;
    /* percentageOfNodesToScore round-robin start */
    uint32_t next_start;
    int reference;            /* recompute everything per pod (the plain reference) */
    berth_arena *arena;
    /* observed active usage per node (cpu millicores, memory bytes): from
     * the node's status.usage (else its requested), plus each assumed pod's
     * configured size (max of request and limit per container), SPEC 2.4 */
    int64_t *usage[2];
    /* node lookup by name (open addressing, value = node + 1) */
    uint32_t *name_index;
    uint32_t name_cap;
    /* plugin cache (kube/plugins_node.c): ImageLocality's per-image node
     * counts and a per-node scratch column, and whether any node is
     * unschedulable. Built lazily (or by kube_plugins_prepare) in s->arena,
     * else the cluster's arena; needs no free. Must start NULL. */
    struct kube_plugin_cache *pcache;
    /* pod-class cache of the fast path (kube/fastpath.c), NULL when off */
    kube_fast *fast;
} kube_sched;

/* Per-pod request handed to the plugins. */
typedef struct kube_req {
    uint32_t pod;
    const berth_kpod *p;
    /* spread and affinity context of this pod (kube/terms.c) */
    kube_terms_req *terms;
    /* scratch per pod, sized to the node count */
    int64_t *scratch;
} kube_req;

/* Builds the columns for k's nodes, then assumes every bound pod
 * (spec.nodeName naming an existing node, not terminating). reference: the
 * plain per-pod recomputation mode. (kube/sched.c) */
int kube_sched_init(kube_sched *s, berth_kcluster *k, const berth_kprofile *prof, int reference);
void kube_sched_free(kube_sched *s);
/* Prepares r for pending pod `pod` (spread/affinity context included). */
int kube_req_init(kube_sched *s, kube_req *r, uint32_t pod);
void kube_req_free(kube_sched *s, kube_req *r);

/* Adds a pod on a node in every column and counter (bound pods at start,
 * then each decision); calls kube_terms_assume. */
int kube_assume(kube_sched *s, uint32_t pod, uint32_t node);
/* Node index by name, BERTH_KUBE_NONE when absent. */
uint32_t kube_node_by_name(const kube_sched *s, const char *name);
/* A pod's configured size for usage accounting: per container the larger
 * of request and limit, summed (cpu millicores [0], memory bytes [1]). */
void kube_pod_demand(const berth_kpod *p, int64_t out[2]);

/* ---- kube/terms.c: topology keys, spread and inter-pod affinity ---- */
int kube_terms_init(kube_sched *s);                 /* after the columns exist */
void kube_terms_free(kube_sched *s);
/* Counts pod (now on node) into every term counter. */
int kube_terms_assume(kube_sched *s, uint32_t pod, uint32_t node);
/* Builds r->terms for r->pod (own constraints or system defaults,
 * affinity terms, existing pods' terms that match it). */
int kube_terms_prepare(kube_sched *s, kube_req *r);
void kube_terms_release(kube_sched *s, kube_req *r);
extern const berth_filter_plugin kube_pts_filter, kube_ipa_filter;
extern const berth_score_plugin kube_pts_score, kube_ipa_score;

/* The plugin tables (kube/plugins_*.c). NULL when a plugin has no filter
 * or no score. */
const berth_filter_plugin *kube_filter_plugin(berth_kplugin p);
const berth_score_plugin *kube_score_plugin(berth_kplugin p);
/* Builds s->pcache now (the plugins otherwise build it on first use);
 * 0 or BERTH_ENOMEM. (kube/plugins_node.c) */
int kube_plugins_prepare(kube_sched *s);
/* DefaultNormalizeScore(MaxNodeScore = 100, reverse) in place. */
void kube_default_normalize(int64_t *scores, uint32_t n, int reverse);

#endif
