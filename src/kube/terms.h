/* kube/terms.h - internal: topology keys (per-node value ids), counted term
 * signatures with incremental per-node counters, and the per-pod context
 * of PodTopologySpread and InterPodAffinity (SPEC 2.5). Owned by
 * kube/terms.c; only the plugins there look inside.
 *
 * A MATCH signature counts, per node, the pods matching a conjunction of
 * clauses (selector + namespace set); a CARRIER signature counts, per node,
 * the pods carrying one (anti-)affinity term of one role (required terms
 * count 1, preferred terms add their weight). Signatures are interned by a
 * canonical text and updated by kube_terms_assume; a new MATCH signature is
 * initialised once from the pods already on nodes. Per pod, counts are
 * aggregated per topology value into domain arrays (int64, indexed by value
 * id) held in the request's pool. What a pod's spread constraints and
 * terms resolve to (signature ids, topology key ids, the matching carrier
 * signatures) is kept per pod class (kube_pclass) and replayed for the
 * class's next pods.
 *
 * Thread rules: one scheduler's terms belong to its thread. Everything is
 * written by kube_terms_prepare / _assume / _unassume / _node_changed /
 * _par_prepare on that thread; the plugins' filters and scores, which may
 * run in chunks on pool threads, only read. */
#ifndef BERTH_KUBE_TERMS_H
#define BERTH_KUBE_TERMS_H

#include <stddef.h>
#include <stdint.h>

#include "berth/hash.h"
#include "kube/state.h"

#define KUBE_NOVAL UINT32_MAX
/* a signature listing more nodes than this has dense counts
 * (kube_terms.sparse_max) */
#define KUBE_SPARSE_MAX 64
/* pod classes kept (kube_pclass) before all are dropped and made again */
#define KUBE_PCLASS_MAX 4096

/* string -> uint32 map with owned key copies: open addressing over
 * cache-line slots (hash, length, value and a key shorter than inl kept in
 * the slot itself; longer keys owned by key); hashed under kube_terms.hkey,
 * so slots are only probed, never walked into a result */
typedef struct kube_sslot {
    uint64_t hash;
    char *key;          /* NULL: empty slot; inl or an owned copy */
    uint32_t val, len;
    char inl[40];
} kube_sslot;

typedef struct kube_smap {
    kube_sslot *slots;  /* cap slots, 64-byte aligned */
    uint32_t cap, n;
} kube_smap;

typedef struct kube_tkey {
    char *name;
    uint32_t *val;      /* per node: value id, KUBE_NOVAL when the label is absent */
    uint32_t nvals;     /* domain array size (includes empty_id) */
    uint32_t empty_id;  /* id of the value "" (a node lacking the key reads "" upstream) */
    uint32_t nreal;     /* distinct values some node has (ids 0..nreal-1) */
    int hostname;       /* kubernetes.io/hostname */
    kube_smap vmap;     /* value -> id (kept for nodes whose labels change) */
} kube_tkey;

typedef struct kube_clause {
    berth_selector sel;  /* requirements owned (shallow copies) */
    uint8_t *ns_ok;      /* per namespace id: the pod's namespace is in the term's set */
} kube_clause;

enum { KUBE_SIG_MATCH = 0, KUBE_SIG_CARRIER = 1 };
enum { KUBE_ROLE_ANTI_REQ = 0, KUBE_ROLE_AFF_REQ, KUBE_ROLE_AFF_PREF, KUBE_ROLE_ANTI_PREF,
       KUBE_NROLES };

typedef struct kube_sig {
    int kind, role;
    int anchor1;         /* indexed by the one In requirement of its one clause:
                          * a pod reached through that bucket matches its
                          * selector (index_visit's anchored) */
    uint32_t ns1;        /* anchor1: the one namespace of its set, else KUBE_NOVAL */
    int spread;          /* PodTopologySpread counting: skip terminating pods; an
                          * empty selector counts nothing (countPodsMatchSelector) */
    uint32_t key;        /* carriers: topology key id */
    kube_clause *cl;
    uint32_t ncl;
    const char **extra_vals; /* values of matchLabelKeys requirements */
    /* Counts are sparse while at most KUBE_SPARSE_MAX nodes are listed (nz
     * with nzc: a signature of ~20 pods costs a few hundred bytes, not 4
     * bytes a node), then dense (cnt). A request reads a sparse signature
     * through a window: a dense array lent from kube_terms.wfree while some
     * request holds it (wref), kept equal to the counts by every change,
     * all zero again when given back. cnt[-1] and win[-1] hold the
     * signature id (sig_of). */
    int32_t *cnt;        /* per node once dense, else NULL */
    int32_t *nzc;        /* sparse: the count of nz[j] */
    int32_t *win;        /* sparse or promoted while lent: the window, else NULL */
    uint32_t wref;
    int hadzero;         /* sparse: a count went back to 0 (innz once dense) */
    uint32_t *nz;        /* nodes whose count is non-zero, in order of first count
                          * (after an unassume it may also list nodes back at 0) */
    uint32_t nnz, capnz;
    uint8_t *innz;       /* dense: per node, listed in nz; NULL until a count drops to 0 */
    /* per-domain totals of cnt over the values of topology key dkey (dval:
     * its per-node value ids), kept on every count change once a spread
     * constraint on that key has asked for them; dropped when node data
     * change (PodTopologySpread's PreFilter counts, incremental) */
    int64_t *dtot;
    const uint32_t *dval;
    uint32_t dkey, dn;
} kube_sig;

/* anchor index: signatures by one In requirement (key, value), else general */
typedef struct kube_index {
    kube_smap map;       /* "key\x1fvalue" -> bucket */
    uint32_t **bucket;
    uint32_t *bn, *bcap;
    uint32_t nbuckets, capbuckets;
    uint32_t *general;
    uint32_t ngeneral, capgeneral;
    uint32_t total;
} kube_index;

/* one spread constraint of the pod being placed */
typedef struct kube_pts_c {
    uint32_t key;
    int32_t max_skew, min_domains;
    int honor_aff, honor_taint, self;
    const int32_t *cnt;  /* per node */
    uint32_t sig;        /* cnt's signature (KUBE_NOVAL in reference mode) */
    size_t off;          /* domain array in the pool */
    int64_t min;
    uint32_t ndom;
    double w;
} kube_pts_c;

/* per topology key accumulation (InterPodAffinity) */
typedef struct kube_slot {
    uint32_t key;
    size_t off;
} kube_slot;

typedef struct kube_term_ref {
    uint32_t key;
    int64_t mult;        /* weight x sign */
    const int32_t *cnt;
    uint32_t sig;        /* cnt's signature (KUBE_NOVAL in reference mode) */
} kube_term_ref;

struct kube_terms_req {
    int busy;
    uint32_t pod;
    /* PodTopologySpread */
    kube_pts_c *pf, *ps;          /* DoNotSchedule (filter), ScheduleAnyway (score) */
    uint32_t npf, nps, cappf, capps;
    int require_all;
    int pts_filter_ready;
    int score_oom;                /* a score or filter ran out of memory (kube_terms_failed) */
    berth_requirement *defreqs;   /* merged workload selector (system defaults) */
    uint32_t ndefreqs, capdefreqs;
    const uint8_t *aff_ok;        /* node affinity match per node (entry nnodes: all
                                   * match), NULL = every node */
    uint8_t *tol_ok;              /* hard taints tolerated per node (Honor), NULL = all */
    int need_tol;
    /* InterPodAffinity */
    kube_term_ref *aff;           /* required affinity terms: cnt = pods matching all */
    uint32_t naff, capaff;
    int aff_self;                 /* the pod matches all its own required terms */
    int aff_any;                  /* some pod matching all terms sits on a node with a key */
    kube_term_ref *anti;          /* own required anti-affinity */
    uint32_t nanti, capanti;
    kube_term_ref *isc;           /* score terms (own preferred, matching carriers) */
    uint32_t nisc, capisc;
    uint32_t *carr;               /* matching carrier signatures */
    uint32_t ncarr, capcarr;
    int ipa_filter_ready;
    kube_slot *aslot, *xslot, *eslot, *sslot; /* affinity, anti, existing anti, score */
    uint32_t naslot, nxslot, neslot, nsslot, capslots;
    int has_exist;
    /* pool of domain arrays */
    int64_t *pool;
    size_t pool_used, pool_cap;
    /* InterPodAffinity per-key domain sums: kept all-zero between pods, so a
     * slot costs what it touches; ztouch lists the entries to clear */
    int64_t *zpool;
    size_t zused, zcap;
    size_t *ztouch;
    size_t ntouch, captouch;
    /* sparse signatures whose window this request holds (one entry a hold) */
    uint32_t *held;
    uint32_t nheld, capheld;
    /* reference mode: count arrays owned for this pod */
    int32_t **owned;
    uint32_t nowned, capowned;
};

/* A pod class: pods with equal class keys (kube/terms.c pclass_key: the
 * namespace, labels, spread constraints, affinity terms and node
 * constraints, everything kube_terms_prepare reads of a pod) resolve to
 * the same signatures. Kept: the pod's own spread constraints
 * (kube_terms.cpts, count arrays not set: npf filter ones, then nps score
 * ones; the default spreading, read from the profile and the workloads,
 * is resolved again for each pod), the own term
 * references (kube_terms.crefs: naff required affinity, nanti own
 * anti-affinity, nisc own preferred), the carrier signatures matching the
 * class (carr, valid while the carrier index holds carr_gen signatures)
 * and the node-affinity column (aff_known). */
typedef struct kube_pclass {
    uint64_t hash;
    uint32_t koff, klen;          /* key bytes in kube_terms.ckey */
    uint32_t pts, npf, nps;
    uint32_t refs, naff, nanti, nisc;
    int require_all, aff_self, aff_known;
    const uint8_t *aff_ok;
    uint32_t *carr, ncarr, capcarr, carr_gen;
    /* kube_terms_assume / _unassume of the class's pods: the MATCH
     * signatures counting them (valid while the MATCH index holds
     * match_gen signatures and for pods terminating as match_term), the
     * carrier signatures of their own terms with each one's count (own,
     * ownd: nown, made on first use) and the posting lists of their labels
     * (post, npost) */
    uint32_t *match, nmatch, capmatch, match_gen;
    int match_term, own_ready;
    uint32_t *own, nown, *post, npost;
    int32_t *ownd;
} kube_pclass;

typedef struct kube_naff_cache {
    kube_smap map;
    uint8_t **vec;
    uint32_t n;
} kube_naff_cache;

struct kube_terms {
    uint32_t nnodes, npods;
    /* the key of every string map and of the pod-class table here (the
     * strings are the input's labels, namespaces and selectors): drawn once
     * by kube_terms_init (berth/hash.h) */
    berth_hashkey hkey;
    /* signature count arrays are carved from mmap'd slabs (terms.c
     * cnt_alloc: small ones populated in one call, 2 MB ones on huge
     * pages), so a new signature costs no page faults of its own; the
     * slabs are unmapped with the terms */
    void **cslab;
    size_t *cslab_len;
    uint32_t ncslab, capcslab;
    int32_t *cfree;               /* next unused int32 of the last slab */
    size_t cleft;                 /* int32s left there */
    uint32_t sparse_max;          /* KUBE_SPARSE_MAX; tests set 0 (dense from the
                                   * start) before the first signature */
    int32_t **wfree;              /* windows not lent (all zero), from the slabs */
    uint32_t nwfree, capwfree, nwin;
    kube_smap key_map;
    kube_tkey *keys;
    uint32_t nkeys, capkeys;
    uint32_t host_key1;           /* kubernetes.io/hostname's key id + 1, 0 until interned */
    uint32_t zone_key1;           /* topology.kubernetes.io/zone's, the same */
    kube_smap ns_map;
    berth_labels *ns_labels;      /* per namespace id (owned items) */
    uint32_t nns, capns;
    uint32_t *pod_ns;             /* per pod: namespace id */
    kube_smap sig_map;
    /* add_spread: the signature text found last (sig_lastlen: its length + 1,
     * 0 none) and its id */
    char *sig_last;
    uint32_t capsig_last, sig_lastlen, sig_lastid;
    kube_sig *sigs;
    uint32_t nsigs, capsigs;
    kube_index idx[2];            /* MATCH, CARRIER signatures */
    kube_naff_cache naff;
    uint8_t *tmp_aff;             /* per node, when the cache is full */
    char *text;                   /* canonical text buffer */
    size_t tlen, tcap;
    uint8_t *ns_scratch;          /* one term's namespace set, before a lookup */
    uint32_t capns_scratch;
    berth_requirement *sreq;      /* one spread clause's requirements, before a lookup */
    const char **sval;
    uint32_t capsreq, capsval;
    kube_terms_req req0;
    /* posting lists: "key\x1fvalue" -> the pods counted on nodes carrying
     * that label, in count order (a pod counted out stays listed: on[]
     * says where each pod is now, stamp[] drops repeats), so a new MATCH
     * signature starts from the pods with its anchor label instead of
     * every pod on every node. Kept from the first such signature on
     * (posting: built then from the pods counted on nodes), so an estate
     * without one pays nothing per placement (docs/autoscale.md
     * "Performance") */
    kube_smap post_map;
    uint32_t **post, *postn, *postcap;
    uint32_t npost, cappost;
    int posting;
    uint32_t *on;                 /* per pod: node + 1 while counted, else 0 */
    /* the workloads (those behind the system default spread: Service,
     * ReplicaSet, StatefulSet, ReplicationController) by their selector's anchor
     * "key\x1fvalue" (first In requirement), the others in wl_general;
     * built on first use: a pod looks up only the workloads that can
     * select it */
    int wl_ready;
    kube_smap wl_map;
    uint32_t **wl_bucket, *wl_bn, *wl_bcap;
    uint32_t wl_nb, wl_capb;
    uint32_t *wl_general, wl_ngeneral, wl_capgeneral;
    uint32_t *wl_cand, wl_capcand;  /* scratch: one pod's candidates */
    uint32_t *stamp, serial;      /* per pod: last walk that visited it */
    /* label_hashes: the hashes of one pod's labels (its index + 1 and
     * label array, 0 / NULL: none yet) */
    uint64_t *lh;
    uint32_t caplh, lh_pod;
    const berth_label *lh_items;
    /* pod classes (kube_pclass) by key hash: slot = class + 1, 0 empty;
     * all dropped when full (KUBE_PCLASS_MAX); when node labels change
     * only their node-affinity columns (aff_known) are */
    kube_pclass *pcl;
    uint32_t npcl, cappcl;
    uint32_t *pslot, cappslot;
    uint32_t pclass_last;         /* the class of the last prepare + 1, 0 none */
    char *ckey;                   /* the classes' keys, back to back */
    uint32_t nckey, capckey;
    kube_pts_c *cpts;
    uint32_t ncpts, capcpts;
    kube_term_ref *crefs;
    uint32_t ncrefs, capcrefs;
    uint32_t *pod_class;          /* per pod: its class + 1 (last prepare), 0 none */
    char *kbuf;                   /* one pod's key (kube_podkey) */
    size_t kcap;
    uint64_t pclass_hits, pclass_made; /* prepares replayed / classes made (tests) */
    int pending_view;             /* kube_sched.pending_view: no pod terminating */
};

/* The fast path's pick for a pod whose only dynamic score is
 * PodTopologySpread with two ScheduleAnyway constraints, one on the
 * hostname and one on another key (not requireAll), and no spread or
 * affinity filter: the candidates are the nodes where part is not
 * INT32_MIN, the total part + weight x normalised score; ties broken by
 * tiebreak (rng). ties is scratch of N entries. Returns 1 (out set; total
 * without the class constant), 2 no candidate, 0 not this shape or a
 * candidate lacks the hostname label (the caller's generic path), or
 * BERTH_ENOMEM. Decisions are pts_score's plus the pipeline's argmax. */
typedef struct kube_pts_pick {
    uint32_t node, nfeasible;
    int64_t total;
} kube_pts_pick;
int kube_pts_pick_hz(kube_sched *s, const kube_req *r, const int32_t *part, uint32_t N,
                     int64_t weight, int tiebreak, berth_rng *rng, uint32_t *ties,
                     kube_pts_pick *out);

/* For the fast path's per-domain index (kube/fastpath.c), incremental mode
 * only: the nodes where a term reference's count array (kube_term_ref.cnt,
 * of signature .sig) may be non-zero (*nz, the count returned; *exact when
 * none went back to 0, so every one listed counts > 0); and
 * PodTopologySpread's per-domain totals for r's DoNotSchedule constraints
 * (kube_pts_c.off in the pool, .min), built once per pod (0 or
 * BERTH_ENOMEM). */
uint32_t kube_terms_nz(const kube_sched *s, const kube_term_ref *tr, const uint32_t **nz,
                       int *exact);
int kube_terms_pts_prepare(kube_sched *s, const kube_req *r);

#endif
