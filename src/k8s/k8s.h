/* k8s/k8s.h - the shared Kubernetes object layer (internal).
 *
 * Every loader that reads Kubernetes kinds (kube, disrupt, autoscale) decodes
 * ObjectMeta, owner references, label selectors, node selector terms,
 * tolerations, resource lists, status conditions and pod specs / pod
 * templates through these
 * functions, so each API shape is decoded in one place with one set of
 * located errors ("file:line:col: spec.template.spec.containers[0]...").
 *
 * Conventions: each decoder reads key `key` of map m (absent: the output is
 * left empty unless said otherwise), allocates in the cluster's arena, and
 * returns 0 or the error set through d (BERTH_EINVAL located, BERTH_ENOMEM).
 * With d->strict, fields outside the real API's field set are errors.
 * Thread safety: no shared state; a berth_dec and its cluster belong to one
 * thread at a time. */
#ifndef BERTH_K8S_H
#define BERTH_K8S_H

#include "berth/time.h"
#include "berth/grow.h"
#include "berth/kube.h"

#define ENOMEM_(d) berth_error_set((d)->err, BERTH_ENOMEM, "out of memory")

/* Caps on input-driven growth. */
#define KUBE_MAX_NODES (1u << 22)
#define KUBE_MAX_PODS (1u << 24)
#define KUBE_MAX_OBJECTS (1u << 22)
#define KUBE_MAX_PROFILES 64u

#define USAGE_CPU_ANN "berth.io/usage-cpu"
#define USAGE_MEM_ANN "berth.io/usage-memory"
#define VM_OVERHEAD_ANN "berth.io/vm-overhead-memory"

#define grow berth_grow

/* ObjectMeta as the loaders need it. */
typedef struct k8s_meta {
    const char *name, *ns;        /* ns: "default" when namespaced and absent */
    berth_labels labels;
    berth_node *annotations;
    const berth_node *node;       /* the metadata map itself */
} k8s_meta;

/* ---- meta.c ---- */
extern const char *const k8s_meta_fields[];
/* strict only: every key of m must be in allowed */
int k8s_known(berth_dec *d, const berth_node *m, const char *const *allowed);
void *k8s_alloc(berth_kcluster *k, size_t n, size_t size);
/* in the decoder's arena (every loader decodes into its model's arena) */
void *k8s_dalloc(berth_dec *d, size_t n, size_t size);
int k8s_grow_fail(berth_dec *d, const berth_node *doc, int rc, const char *what, uint32_t lim);
/* fails at key `key` of m (path pushed for the message); fmt takes one %s
 * (berth_dec_fail_field with one argument) */
int k8s_fail_at(berth_dec *d, const berth_node *m, const char *key, const char *fmt,
                const char *arg);
int k8s_dec_choice(berth_dec *d, const berth_node *m, const char *key, int required,
                   const char *const *choices, int *out);
/* string maps and labels_at allocate in d->arena (k may be NULL) */
int k8s_dec_string_map(berth_kcluster *k, berth_dec *d, const berth_node *m, berth_labels *out,
                       int validate);
int k8s_dec_labels_at(berth_kcluster *k, berth_dec *d, const berth_node *m, const char *key,
                      berth_labels *out, int validate);
int k8s_dec_metadata(berth_kcluster *k, berth_dec *d, const berth_node *doc, int namespaced,
                     k8s_meta *out);
/* metadata.ownerReferences (meta: the metadata map): the controller
 * reference's kind, name and uid (NULL when none / empty) */
int k8s_dec_controller_ref(berth_dec *d, const berth_node *meta, const char **kind,
                           const char **name, const char **uid);
/* an RFC 3339 time at key, in seconds since the epoch; *present set */
int k8s_dec_time_at(berth_dec *d, const berth_node *m, const char *key, int64_t *secs,
                    int *present);
/* Whether status.conditions (status: the status map) has a condition of
 * type `type` whose status is "True" (the first of that type); dflt when
 * there is none. Reads leniently: never an error. */
int k8s_condition_true(const berth_node *status, const char *type, int dflt);

/* ---- resources.c ---- */
int64_t k8s_res_value(uint32_t r, berth_quantity q);
int k8s_dec_res_list(berth_kcluster *k, berth_dec *d, const berth_node *m, const char *key,
                     int64_t *out, uint32_t *has, int64_t *pods, int skip_zero_ext);
/* A ResourceList at key as written (Node status.capacity, NodePool
 * spec.limits): non-empty names, quantities not negative, in input order;
 * absent: none. Allocates in d->arena (k may be NULL). */
int k8s_dec_quantities(berth_kcluster *k, berth_dec *d, const berth_node *m, const char *key,
                       berth_kquantity **out, uint32_t *n);
int k8s_dec_usage(berth_kcluster *k, berth_dec *d, const berth_node *status, k8s_meta *meta,
                  int64_t *usage, int *has_usage);

/* ---- selector.c ----
 * These allocate in d->arena and do not use k (NULL is fine): domains
 * without a kube cluster (fleet) decode their selectors here too. */
int k8s_dec_str_list(berth_kcluster *k, berth_dec *d, const berth_node *m, const char *key,
                     const char ***out, uint32_t *n);
int k8s_dec_requirement(berth_kcluster *k, berth_dec *d, const berth_node *e, int label_selector,
                        int fields, berth_requirement *r);
int k8s_merge_label_keys(berth_kcluster *k, berth_dec *d, berth_selector *s,
                         const berth_labels *pod_labels, const char **keys, uint32_t nkeys,
                         berth_sel_op op);
/* metav1.LabelSelector at key (absent: out->nothing, matches nothing) */
int k8s_dec_label_selector(berth_kcluster *k, berth_dec *d, const berth_node *m, const char *key,
                           berth_selector *out);
/* a plain map selector; *present: a non-empty map was given */
int k8s_dec_map_selector(berth_kcluster *k, berth_dec *d, const berth_node *m, const char *key,
                         berth_selector *out, int *present);
/* a NodeSelectorTerm whose every requirement must parse (labels.NewRequirement) */
int k8s_dec_nsterm(berth_kcluster *k, berth_dec *d, const berth_node *t, berth_kterm *out);
/* a pod's NodeSelectorTerm: the API server's checks (key, operator, number
 * of values); a value labels.NewRequirement rejects sets out->invalid */
int k8s_dec_pod_nsterm(berth_kcluster *k, berth_dec *d, const berth_node *t, berth_kterm *out);

/* ---- podspec.c ---- */
extern const char *const k8s_pod_status_fields[];
int k8s_dec_tolerations(berth_kcluster *k, berth_dec *d, const berth_node *spec, berth_kpod *pod);
int k8s_dec_node_affinity(berth_kcluster *k, berth_dec *d, const berth_node *na, berth_kpod *pod);
/* NodeAffinityArgs.addedAffinity (a v1.NodeAffinity) into prof: every
 * requirement must parse (upstream nodeaffinity.New fails otherwise);
 * preferred weights 0..2^31-1 (0: the term is skipped) */
int k8s_dec_added_affinity(berth_kcluster *k, berth_dec *d, const berth_node *na,
                           berth_kprofile *prof);
int k8s_dec_spread(berth_kcluster *k, berth_dec *d, const berth_node *t,
                   const berth_labels *pod_labels, int defaults, berth_kspread *s);
/* a PodSpec into pod (pod->labels must be set first: matchLabelKeys) */
int k8s_dec_pod_spec(berth_kcluster *k, berth_dec *d, const berth_node *spec, berth_kpod *pod);

/* ---- workloads.c ---- */
/* A pod template's hash as the controllers' label values look
 * (pod-template-hash: FNV-32a of the template, its decimal digits mapped
 * to "bcdfghjklmnpqrstvwxz2456789" as upstream's rand.SafeEncodeString);
 * the input is the template's document tree (map keys in any order). */
const char *k8s_template_hash(berth_kcluster *k, const berth_node *tmpl);
/* Whether the DaemonSet controller runs a pod of template tmpl on node nd
 * (pkg/controller/daemon NodeShouldRunDaemonPod: the template's nodeName,
 * nodeSelector and required node affinity, and no untolerated NoSchedule
 * or NoExecute taint; berth_kube_expand gave DaemonSet templates the
 * automatic daemon tolerations). */
int k8s_daemon_should_run(const berth_kpod *tmpl, const berth_knode *nd);
/* The node a DaemonSet pod is for: spec.nodeName, else the single
 * matchFields metadata.name In [node] of its required node affinity
 * (upstream GetTargetNodeName); NULL when neither. */
const char *k8s_daemon_target(const berth_kpod *p);

/* ---- daemons.c: DaemonSet pods on hypothetical nodes ---- */
/* The DaemonSet pods node nd would run, from k's DaemonSets (not being
 * deleted) for which k8s_daemon_should_run holds: their requests summed
 * per resource into req[0..k->nres) (when req is not NULL) and their
 * number into *npods. After berth_kube_expand. O(DaemonSets). */
void k8s_daemon_requests(const berth_kcluster *k, const berth_knode *nd, int64_t *req,
                         int64_t *npods);
/* Takes those DaemonSet pods' requests and pod slots out of nd->alloc and
 * nd->alloc_pods (each at least 0): the room the node has for other pods
 * (docs/disrupt.md "DaemonSets on new nodes"). Returns how many DaemonSet
 * pods it accounted. */
int64_t k8s_daemon_reserve(const berth_kcluster *k, berth_knode *nd);
/* Whether pod p is owned by a DaemonSet (Karpenter's IsOwnedByDaemonSet,
 * cluster-autoscaler's pod_util.IsDaemonSetPod by owner reference). */
int k8s_pod_is_daemon(const berth_kpod *p);

#endif
