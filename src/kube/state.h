/* kube/state.h - internal: the kube scheduling state shared by the kube
 * plugins and the scheduler loop. Per-node values (node-major: what a
 * placement reads and writes of one node is in one or two cache lines),
 * per-node host ports and pods, topology value ids per (topology key,
 * node), and the incremental term counters behind PodTopologySpread and
 * InterPodAffinity.
 *
 * Plugin convention: every kube plugin is a berth_filter_plugin /
 * berth_score_plugin whose `state` is a kube_sched * and `req` a
 * kube_req *. Candidates are node indices. */
#ifndef BERTH_KUBE_STATE_H
#define BERTH_KUBE_STATE_H

#include "berth/kube.h"
#include "kube/taintsets.h"

/* Topology keys and counted term signatures (PodTopologySpread,
 * InterPodAffinity) live in kube/terms.h, owned by kube/terms.c. */
typedef struct kube_terms kube_terms;
typedef struct kube_fast kube_fast;
typedef struct kube_terms_req kube_terms_req;

/* A node's pods (bound and assumed), as pod indices. */
typedef struct kube_podlist {
    uint32_t *pods;
    uint32_t n, cap;
} kube_podlist;

/* The per-node values, node-major: node n's at col[n * cstride], in this
 * order (nres = k->nres), the stride a whole number of 64-byte lines:
 * what kube_assume writes first (the pod count, the non-zero cpu and
 * memory requests, the usage, each resource's requests: one line when
 * nres <= 3), then what the filters read besides (allocatable pods and
 * resources), then flags. KS_* below read and write them. */
enum {
    KS_NPODS = 0,   /* pods on the node */
    KS_NZ = 1,      /* 2: cpu, memory requested with the scoring defaults */
    KS_USAGE = 3,   /* 2: observed active usage, cpu millicores and memory bytes:
                     * the node's status.usage (else its requested), plus each
                     * assumed pod's configured size (max of request and limit
                     * per container), SPEC 2.4 */
    KS_REQ = 5      /* nres: sum of bound/assumed pods' requests; then
                     * allocatable pods (ka - 1), allocatable per resource
                     * (ka + r), the flags (ka + nres) */
};
#define KS_FLAG_USAGE 1 /* the node's status.usage was given (has_usage) */

typedef struct kube_sched {
    berth_kcluster *k;
    const berth_kprofile *prof;
    /* per-node values (the enum above) */
    int64_t *col;
    uint32_t cstride, ka, kflags; /* stride; where allocatable and the flags start */
    uint8_t *has_hard_taint;                /* node has NoSchedule/NoExecute taints */
    uint8_t *has_prefer_taint;              /* node has PreferNoSchedule taints */
    uint32_t *taint_set;                    /* per node: its hard-taint set, 0 none
                                             * (kube/taintsets.h) */
    kube_taintsets *tsets;
    kube_podlist *plist;                    /* per node */
    uint32_t *pslab;                        /* the lists' room when sized at once
                                             * (kube_sched_size_lists), NULL: none */
    size_t npslab;
    /* topology keys and term counters (kube/terms.c) */
    kube_terms *terms;
    /* percentageOfNodesToScore round-robin start */
    uint32_t next_start;
    int reference;            /* recompute everything per pod (the plain reference) */
    berth_arena *arena;
    /* node lookup by name (keyed: kube_node_by_name) */
    berth_nameidx node_idx;
    /* plugin cache (kube/plugins_node.c): ImageLocality's per-image node
     * counts and a per-node scratch column, and whether any node is
     * unschedulable. Built lazily (or by kube_plugins_prepare), freed by
     * kube_plugins_free (kube_sched_free calls it). Must start NULL. */
    struct kube_plugin_cache *pcache;
    /* pod-class cache of the fast path (kube/fastpath.c), NULL when off */
    kube_fast *fast;
    /* per node, NULL when every node is a candidate: 1 = not a candidate
     * (excluded by a what-if session, or an inactive spare slot); such a
     * node creates no PodTopologySpread domain. ncand: nodes not off. */
    uint8_t *off;
    uint32_t ncand;
    /* worker threads of the per-node loops (berth_kube_options.threads),
     * owned by the loop that created them; NULL: one thread */
    struct berth_pool *pool;
    /* k->pods is a what-if session's pending view of its caller's pod
     * table (kube/session.c): read only, every pod seen as pending
     * (kube_pod_node_name NULL) and not terminating, nothing bound at
     * init, decisions not written into it (the session records them) */
    int pending_view;
} kube_sched;

/* Node n's values (kube_sched.col). */
static inline int64_t *kube_ncol(const kube_sched *s, uint32_t n)
{
    return s->col + (size_t)n * s->cstride;
}
/* Fetches the lines an assume of a pod on node n writes (its values' first
 * line, its pod list's header), so that their misses overlap each other's
 * and the caller's rather than follow one by one. */
static inline void kube_node_prefetch(const kube_sched *s, uint32_t n)
{
    __builtin_prefetch(kube_ncol(s, n), 1);
    __builtin_prefetch(&s->plist[n], 1);
}
#define KS_NPODS_OF(s, n) (kube_ncol(s, n)[KS_NPODS])
#define KS_REQ_OF(s, r, n) (kube_ncol(s, n)[KS_REQ + (r)])
#define KS_NZ_OF(s, r, n) (kube_ncol(s, n)[KS_NZ + (r)])
#define KS_USAGE_OF(s, r, n) (kube_ncol(s, n)[KS_USAGE + (r)])
#define KS_APODS_OF(s, n) (kube_ncol(s, n)[(s)->ka - 1])
#define KS_ALLOC_OF(s, r, n) (kube_ncol(s, n)[(s)->ka + (r)])
#define KS_FLAGS_OF(s, n) (kube_ncol(s, n)[(s)->kflags])

/* A pod's spec.nodeName as the scheduler reads it: under a pending view,
 * unset whatever the caller's table holds (terms.c reads the deletion mark
 * the same way, through kube_terms.pending_view). */
static inline const char *kube_pod_node_name(const kube_sched *s, const berth_kpod *p)
{
    return s->pending_view ? NULL : p->node_name;
}

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
/* The same with the last nspare entries of k->nodes being spare slots:
 * off, without name, columns or pods until kube_node_activate; and
 * pending_view: k->pods is a session's pending view (kube_sched above),
 * nothing is assumed; the tail real nodes before the spares are sorted by
 * name after the others (berth_kube_options.tail). */
int kube_sched_init_spare(kube_sched *s, berth_kcluster *k, const berth_kprofile *prof,
                          int reference, uint32_t nspare, int pending_view, uint32_t tail);
void kube_sched_free(kube_sched *s);
/* Prepares r for pending pod `pod` (spread/affinity context included). */
int kube_req_init(kube_sched *s, kube_req *r, uint32_t pod);
void kube_req_free(kube_sched *s, kube_req *r);

/* Gives every node's (empty) pod list room for count[n] pods and a few
 * more, from one allocation: binding a known set of pods then writes each
 * list in place instead of growing it by copies; a list that outgrows
 * its room moves to an allocation of its own. Every list must be empty.
 * 0 or BERTH_ENOMEM. */
int kube_sched_size_lists(kube_sched *s, const uint32_t *count);

/* Adds a pod on a node in every column and counter (bound pods at start,
 * then each decision); calls kube_terms_assume. */
int kube_assume(kube_sched *s, uint32_t pod, uint32_t node);
/* kube_assume for a bound pod: on a node with observed usage the pod is
 * already in it (counted once). */
int kube_assume_bound(kube_sched *s, uint32_t pod, uint32_t node);
/* Removes a pod from node in every column and counter (the inverse of
 * kube_assume, or of kube_assume_bound when bound); calls
 * kube_terms_unassume. The caller logs node for the fast path. */
int kube_unassume(kube_sched *s, uint32_t pod, uint32_t node, int bound);
/* kube_unassume / kube_assume(_bound) (bound: the pod was bound rather than
 * placed) and the fast path's change log for node: how a what-if session
 * and preemption move pods. */
int kube_evict(kube_sched *s, uint32_t pod, uint32_t node, int bound);
int kube_place(kube_sched *s, uint32_t pod, uint32_t node, int bound);
/* What-if node changes (kube/session.c): excluded = 1 makes n no candidate
 * (its pods stay counted); activate fills spare slot n (off, empty) with a
 * copy of nd; deactivate empties it again (no pods may be on it). Each
 * keeps the columns, name index, topology values, plugin cache and
 * fast-path classes consistent. */
int kube_node_exclude(kube_sched *s, uint32_t n, int excluded);
int kube_node_activate(kube_sched *s, uint32_t n, const berth_knode *nd);
int kube_node_deactivate(kube_sched *s, uint32_t n, const berth_knode *placeholder);

/* The scheduling loop of berth_kube_schedule, one pod at a time (also
 * driven by kube/session.c). */
typedef struct kube_loop {
    kube_sched s;
    berth_cycle c;
    struct kube_prof_built *built;   /* per profile of k, then the forced/default one */
    berth_kprofile defprof;
    uint32_t *batch;
    const berth_kube_options *opt;
    int no_summary;                  /* nobody reads d.summary: skip kube's FitError text */
    struct kube_preempt *pre;        /* preemption scratch (kube/preempt.c), lazily */
    struct kube_reason_count *rc;    /* reason counting scratch (KUBE_MAX_REASONS) */
    berth_kreason *reasons;          /* the decision's view of rc */
    uint32_t cancel_tick;            /* pods since the last look at opt->cancel */
    struct berth_pool *pool;         /* opt->threads > 1 (also in s.pool, c.pool) */
} kube_loop;
/* pending_view: as kube_sched_init_spare's (then kube_loop_pod writes
 * nothing into k->pods either). */
int kube_loop_init(kube_loop *L, berth_kcluster *k, const berth_kube_options *opt,
                   uint32_t nspare, int pending_view, berth_error *e);
/* Gives the loop a pool of `threads` threads for its per-node loops
 * (berth_kube_options.threads), once: nothing when it has one, threads <= 1
 * or the cluster has fewer than BERTH_PAR_MIN nodes. 0, BERTH_ENOMEM or
 * BERTH_EINTERNAL (the loop is unchanged). */
int kube_loop_set_threads(kube_loop *L, uint32_t threads);
void kube_loop_free(kube_loop *L);
/* Schedules pod (pending) and assumes the decision: *placed gets the node
 * or BERTH_KUBE_NONE; the decision goes to opt->on_decision; the pod's
 * node_name and assumed are set, except under a pending view. 0 or an
 * error. */
int kube_loop_pod(kube_loop *L, uint32_t pod, uint32_t *placed, berth_error *e);
/* ---- kube/preempt.c: DefaultPreemption (berth_kube_options.preempt) ---- */
typedef struct kube_preempt kube_preempt;
typedef struct kube_preempt_result {
    uint32_t node;                   /* nominated node, BERTH_KUBE_NONE when none */
    const uint32_t *victims;         /* most important first; valid until the next find */
    uint32_t nvictims;
} kube_preempt_result;
/* For rq's pod, which passed no node's filters in prof (filter_of: the
 * plugin of each filter slot): the nominated node and its victims, or
 * none. The scheduler state is left as it was (rq prepared again when the
 * search moved pods). 0 or BERTH_ENOMEM. */
int kube_preempt_find(kube_loop *L, const berth_profile *prof, const berth_kplugin *filter_of,
                      kube_req *rq, kube_preempt_result *out);
/* Deletes r's victims (kube_evict, terminating = 1, PDB budgets used up)
 * and assumes pod on r->node. */
int kube_preempt_commit(kube_loop *L, uint32_t pod, const kube_preempt_result *r);
void kube_preempt_free(kube_loop *L);

/* Sorts pod indices in kube queue order (priority, creation, input order). */
void kube_queue_sort(const berth_kcluster *k, uint32_t *queue, uint32_t n);

/* Node index by name, BERTH_KUBE_NONE when absent. */
uint32_t kube_node_by_name(const kube_sched *s, const char *name);
/* A pod's configured size for usage accounting (berth_kpod.demand, made
 * by berth_kube_pod_requests: per container the larger of request and
 * limit, summed; cpu millicores [0], memory bytes [1]). */
void kube_pod_demand(const berth_kpod *p, int64_t out[2]);

/* ---- kube/terms.c: topology keys, spread and inter-pod affinity ---- */
int kube_terms_init(kube_sched *s);                 /* after the columns exist */
void kube_terms_free(kube_sched *s);
/* Counts pod (now on node) into every term counter. */
int kube_terms_assume(kube_sched *s, uint32_t pod, uint32_t node);
/* A hint: fetches pod's per-pod lines of the term counters. */
void kube_terms_prefetch(const kube_sched *s, uint32_t pod);
/* Counts pod (on node) out of every term counter. */
int kube_terms_unassume(kube_sched *s, uint32_t pod, uint32_t node);
/* Node n's labels changed (spare slot activated or emptied): its topology
 * value per key, and the node-affinity cache. */
int kube_terms_node_changed(kube_sched *s, uint32_t n);
/* Builds r->terms for r->pod (own constraints or system defaults,
 * affinity terms, existing pods' terms that match it). */
int kube_terms_prepare(kube_sched *s, kube_req *r);
void kube_terms_release(kube_sched *s, kube_req *r);
/* Builds what PodTopologySpread's and InterPodAffinity's filters build on
 * their first call for r, so that parallel chunks only read (0 or
 * BERTH_ENOMEM; then the batch runs in one thread). */
int kube_terms_par_prepare(kube_sched *s, const kube_req *r);
/* Whether a PodTopologySpread or InterPodAffinity score or filter for r
 * ran out of memory (a plugin cannot return an error: its scores were
 * zeros and its verdicts "unfit", not the plugin's): the decision must
 * fail with BERTH_ENOMEM. */
int kube_terms_failed(const kube_req *r);
extern const berth_filter_plugin kube_pts_filter, kube_ipa_filter;
extern const berth_score_plugin kube_pts_score, kube_ipa_score;

/* The plugin tables (kube/plugins_*.c). NULL when a plugin has no filter
 * or no score. */
const berth_filter_plugin *kube_filter_plugin(berth_kplugin p);
const berth_score_plugin *kube_score_plugin(berth_kplugin p);
/* A code for the reason filter plugin f gives for r on node c: two nodes
 * with the same code get the same reason text from f (for the same pod and
 * state), so the reasons are formatted once per code (count_reasons).
 * KUBE_NO_REASON_CODE when f has no codes (then each node is formatted). */
#define KUBE_NO_REASON_CODE UINT32_MAX
uint32_t kube_reason_code(const kube_sched *s, const kube_req *r, berth_kplugin f, uint32_t c);
uint32_t kube_fit_reason_code(const kube_sched *s, const kube_req *r, uint32_t c);
uint32_t kube_affinity_reason_code(const kube_sched *s, const kube_req *r, uint32_t c);
/* TaintToleration: the node's hard-taint set (the same taints, the same
 * first untolerated one: kube/taintsets.h) */
uint32_t kube_taint_reason_code(const kube_sched *s, const kube_req *r, uint32_t c);
/* Builds s->pcache now (the plugins otherwise build it on first use);
 * 0 or BERTH_ENOMEM. (kube/plugins_node.c) */
int kube_plugins_prepare(kube_sched *s);
void kube_plugins_free(kube_sched *s);
/* The cache and the memoised columns r's filters and scores would fill on
 * a batch of n, filled now (berth_profile.prepare; kube/plugins_node.c). */
int kube_plugins_par_prepare(kube_sched *s, const kube_req *r, uint32_t n);
/* Node n became (non-)candidate (data = 0) or its data changed (data = 1;
 * had_images: its previous data listed images): updates the plugin cache;
 * returns 1 when ImageLocality's scores changed on every node (the image
 * spread counts only candidates), else 0. */
int kube_plugins_node_changed(kube_sched *s, uint32_t n, int data, int had_images);
/* Whether ImageLocality's change (kube_plugins_node_changed returned 1)
 * can move p's scores: some image of p is on some node (1 when unknown). */
int kube_plugins_pod_images(kube_sched *s, const berth_kpod *p);
/* NodeAffinity's PreScore (upstream getPodPreferredNodeAffinity): whether
 * it fails for p under s->prof (NodeAffinity scores, and a preferred term
 * of p with weight != 0 does not parse: berth_kterm.invalid); upstream
 * runs PreScore only when more than one node is feasible, and the pod then
 * fails its cycle with an error. kube_affinity_prescore_error: that
 * error's text ("running PreScore plugin \"NodeAffinity\": ..."),
 * malloc'd; NULL when it does not fail or out of memory. */
int kube_affinity_prescore_failed(const kube_sched *s, const berth_kpod *p);
char *kube_affinity_prescore_error(const kube_sched *s, const berth_kpod *p);
/* DefaultNormalizeScore(MaxNodeScore = 100, reverse) in place. */
void kube_default_normalize(int64_t *scores, uint32_t n, int reverse);

#endif
