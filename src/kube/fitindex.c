/* kube/fitindex.c - the per-pod-class fit index over a what-if session
 * (kube/fitindex.h): where the kube scheduler would put a plain pod, or
 * its FitError text when it fits nowhere, without a scan over the nodes.
 *
 * Pods of one class (same requests, tolerations, node selector and
 * affinity, images, volume constraints) meet the same filters and scores.
 * Per class and node: the first static filter that rejects it (with its
 * reason group), and `part`, the weighted NodeResourcesFit and
 * BalancedAllocation (and ImageLocality) score where the node is a
 * candidate that passes every filter, else none; a max tree over
 * blocks of 32 nodes gives the kube fast path's pick (argmax, first node
 * on ties) in O(log N), and an empty tree answers "fits nowhere" at once.
 * A block holds its 32 nodes' parts (int16) in one cache line; a node
 * that does not fit has no score, so its part holds its reason group
 * instead (a negative number), and the tree has a leaf per block, not per
 * node, so a class costs ~2.1 bytes per relevant node and bringing any
 * node up to date reads and writes one line per class
 * (docs/autoscale.md "Performance"). Each node's
 * reason group (first rejecting plugin slot and reason code, as
 * count_reasons in kube/sched.c groups them) is counted per class, so the
 * FitError text is built from the counts (O(groups)) and kept until one
 * count changes. Nodes that change (a pod leaves or joins, a node is
 * excluded) go to a change log; a class brings those nodes up to date when
 * next used (each log entry costs O(log N) once per class in use).
 *
 * Answered here: the default profile made of the fast path's plugins, no
 * percentageOfNodesToScore sampling, pods of the default scheduler without
 * ports, volume errors, nodeName pins or images, whose spread/affinity
 * context is inert, and whose TaintToleration / NodeAffinity raw scores
 * are equal on every statically feasible node (then those scores add a
 * constant). Anything else: KUBE_FIT_ASK, the session answers. The
 * decisions and texts are those of the kube scheduler (the tests compare
 * them). Classes are found by a keyed hash of their key (kube_fitidx.hkey,
 * one key per index, also the label columns'). */
#include "kube/fitindex.h"
#include "berth/grow.h"
#include "core/invariant.h"
#include "berth/hash.h"
#include "kube/fastpath.h"
#include "kube/labelcols.h"
#include "kube/state.h"
#include "kube/podkey.h"
#include "kube/terms.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIT_MAX_CLASSES 1024
#define FIT_MAX_BYTES (768u * 1024u * 1024u)
#define FIT_MAX_REASONS 64  /* KUBE_MAX_REASONS of kube/sched.c */
#define FIT_REASON_TEXT 160 /* its reason_count.text */
#define FIT_NONE UINT32_MAX
#define FIT_BLOCK 32u       /* nodes per block: a leaf of a class's max tree */
#define FIT_PNONE INT16_MIN /* a part: not feasible now, in no group */
#define FIT_GNONE UINT16_MAX /* a static entry's per-node group: none */
#define FIT_GMAX 32767u     /* a class's groups: a part below 0 holds one (part_nofit) */
#define FIT_SCHUNK 16u      /* static entries per node-major row of static groups */
#define FIT_RELBITS 32u     /* static entries whose relevance a log entry carries */

/* 64 nodes of a static entry: which are relevant (bits), which of those a
 * static filter after NodeResourcesFit rejects (late: they count in their
 * static group while candidates that fit), and how many relevant nodes
 * come before them (base), so a node's position among the relevant ones
 * is base + the bits below it: 32 bytes per 64 nodes, where a per-node
 * position and filter slot took 320 (at 50 k nodes the 18 entries of the
 * bench estate take 450 kB, and a refresh reads a node's relevance,
 * position and lateness from one line) */
typedef struct fit_rank {
    uint64_t bits, late;
    uint32_t base;
    uint32_t pad[3];
} fit_rank;

/* A relevant node as a pick names it: its index here and the caller's. */
typedef struct fit_pick {
    uint32_t node, caller;
} fit_pick;

/* FIT_BLOCK relevant nodes of a class: their parts in one cache line, so
 * bringing a node up to date reads one line per class (its reason group,
 * kept apart, is read only when the node did not fit or does not now: a
 * node that fits has none) */
typedef struct fit_block {
    int16_t part[FIT_BLOCK];
} fit_block;

/* A reason group of a class: nodes whose first rejecting filter slot and
 * reason code (or, for plugins without codes, text) are the same share
 * one text. */
typedef struct fit_group {
    uint32_t slot, code;
    char *text;           /* the plugin's reason text (';'-separated reasons) */
    uint32_t count;       /* candidate nodes in the group now */
    char *toks;           /* its reasons, trimmed, each NUL-ended (split when
                           * first needed; NULL: not yet) */
    uint32_t ntoks;
    int too_long;         /* a reason longer than kube's table keeps */
} fit_group;

typedef struct fit_class {
    char *key;
    size_t keylen;
    uint64_t hash;        /* of the key (a class: of its static entry's hash and
                           * its requests, class_hash) */
    int ok;               /* the index answers for this class */
    int is_static;        /* a static entry (below), not a class */
    uint32_t st;          /* a class: its static entry (shared by the
                           * classes that differ only in requests) */
    uint64_t pos;         /* change log consumed */
    /* per relevant node of the static entry (by its position in rpick),
     * part in blocks of FIT_BLOCK (64 bytes, aligned): at least 0, the
     * node is feasible now with that part (at most 100 x the part's
     * weights, which build() keeps within int16); below 0, it is not, and
     * the part names the group it is counted in (part_nofit: FIT_PNONE
     * none; the other nodes count in their static group while
     * candidates), so a refresh reads and writes one line per node and
     * class; the last block padded with FIT_PNONE; a max tree over the
     * blocks' maxima (FIT_PNONE where a block has no feasible node), leaves
     * at [P, 2P) (P: a power of two, at least the blocks) */
    fit_block *blk;
    int16_t *tree;
    uint32_t P;
    /* static entry: its index among the static entries (its static
     * groups: kube_fitidx.sg), and per node the slot + 1 of the first
     * static filter that rejects it (0: passes), while the entry is made
     * (freed then: the rank's late bits keep what a refresh reads) */
    uint32_t sidx;
    uint8_t *sslot;
    /* static entry: nodes whose part or reason depends on the dynamic state
     * (no static filter before NodeResourcesFit rejects them): a bitmap and
     * a list;
     * the others only count (or not) in their static group as they are
     * candidates (or not), updated when that changes (kube_fitidx_touch) */
    fit_rank *rel;        /* per 64 nodes (rel_of, rpos_of) */
    fit_pick *rpick;      /* per relevant node, in node order: the node and its
                           * index in the session's caller's order
                           * (kube_session_caller_node, read once here rather
                           * than per placement), side by side: a pick reads
                           * one line of them */
    uint32_t nrel;
    fit_group *groups;
    uint32_t ngroups, capgroups;
    uint32_t ncand;       /* candidates when the counts were last made */
    char *text;           /* FitError text of the counts (NULL: stale) */
    /* static entry: its groups' counts are those of the nodes that are not
     * relevant (shared by its classes), sver counts their changes; a
     * class: the sver its text was made at */
    uint64_t sver, tver;
} fit_class;

struct kube_fitidx {
    berth_ksession *ks;
    kube_loop *L;
    kube_sched *s;
    berth_profile prof;
    const berth_filter_plugin *filters[BERTH_KP_COUNT];
    const berth_score_plugin *scores[BERTH_KP_COUNT];
    int64_t weights[BERTH_KP_COUNT];
    berth_kplugin filter_of[BERTH_KP_COUNT], score_of[BERTH_KP_COUNT];
    int nrf_slot;         /* NodeResourcesFit filter slot, -1 none */
    uint32_t N;
    fit_class *classes;
    uint32_t nclasses, capclasses;
    uint32_t *table, tcap; /* open addressing: class + 1 */
    /* the key of the class table, passed down to the label columns (the
     * class keys and label values are the input's): drawn once by
     * kube_fitidx_open (berth/hash.h) */
    berth_hashkey hkey;
    /* the static entries (class ids, in creation order), and per
     * FIT_SCHUNK of them a node-major table of their static groups: node
     * n's group for entry e (the group of its first static rejection,
     * FIT_GNONE: none) at sg[e / FIT_SCHUNK][n * FIT_SCHUNK + e % FIT_SCHUNK],
     * so a node's exclusion updates every entry's counts from one line
     * per 16 entries (off_changed) */
    uint32_t *statics, nstatics, capstatics;
    uint16_t **sg;
    size_t bytes;
    /* The change log: the touched nodes (session indices), positions
     * counted from the index's start. Only a window is kept: log[0] is
     * position base. A class reads entries only while fewer than N behind
     * (else catch_up refreshes every relevant node), and a retouch starts
     * at the last position handed out (held), so the entries before both
     * are dropped when the log is full (log_node): the log stays a few
     * times N entries, in cache, however long the plan (it grew by one
     * entry per change: 24 MB and a page fault per 4 KB at 50k nodes). */
    uint32_t *log;
    uint32_t *logm;       /* per entry: its node's relmask when logged */
    uint64_t nlog, base, caplog, held;
    /* per node: bit e set when the node is relevant to static entry e (the
     * first FIT_RELBITS entries; the others test their rank), so a class's
     * catch_up reads each log entry's relevance from the log itself, in
     * order, rather than its entry's rank at each logged node (4 bytes a
     * node: a touch reads it at random) */
    uint32_t *relmask;
    uint64_t *mark;       /* per node a bit, set only while catch_up lists it */
    uint8_t *was_off;     /* per node: off when last touched */
    /* scratch, sized to nodes */
    uint32_t *list, *list2, *list3;
    uint8_t *verdict;
    int64_t *col, *col2;
    char *keybuf;
    size_t keycap;
    /* per-key node label columns: the static NodeAffinity filter of a new
     * static entry reads them (kube/labelcols.h), not each node's labels
     * (NULL: not opened yet) */
    kube_labelcols *lcols;
    /* per pod: its class + 1, FIT_NONE when its static entry is not one
     * the index answers for, 0 not looked up yet (a pod's inputs do not
     * change in a session: its key is built once) */
    uint32_t *pod_cls;
    uint32_t last_st;     /* the static entry found last (FIT_NONE: none) */
};

/* ---- the profile ---- */

static int allowed(berth_kplugin p, int score)
{
    static const berth_kplugin filters[] = {
        BERTH_KP_NODE_UNSCHEDULABLE, BERTH_KP_NODE_NAME,    BERTH_KP_TAINT_TOLERATION,
        BERTH_KP_NODE_AFFINITY,      BERTH_KP_NODE_PORTS,   BERTH_KP_NODE_RESOURCES_FIT,
        BERTH_KP_VOLUME_ZONE,        BERTH_KP_POD_TOPOLOGY_SPREAD, BERTH_KP_INTER_POD_AFFINITY};
    static const berth_kplugin scores[] = {
        BERTH_KP_TAINT_TOLERATION,    BERTH_KP_NODE_AFFINITY,        BERTH_KP_NODE_RESOURCES_FIT,
        BERTH_KP_POD_TOPOLOGY_SPREAD, BERTH_KP_INTER_POD_AFFINITY,   BERTH_KP_BALANCED_ALLOCATION,
        BERTH_KP_IMAGE_LOCALITY};
    const berth_kplugin *l = score ? scores : filters;
    size_t n = score ? sizeof scores / sizeof *scores : sizeof filters / sizeof *filters;
    for (size_t i = 0; i < n; i++)
        if (l[i] == p)
            return 1;
    return 0;
}

static int is_static(berth_kplugin p)
{
    return p == BERTH_KP_NODE_UNSCHEDULABLE || p == BERTH_KP_NODE_NAME ||
           p == BERTH_KP_TAINT_TOLERATION || p == BERTH_KP_NODE_AFFINITY ||
           p == BERTH_KP_VOLUME_ZONE;
}

/* The session's profile as kube/sched.c builds it (build_profile): 0 when
 * it is not one the index answers for. */
static int build(kube_fitidx *x)
{
    const berth_kcluster *k = x->s->k;
    const berth_kprofile *kp = &x->L->defprof;
    if (k->nprofiles || x->L->opt->profile || x->L->opt->reference || x->L->opt->detail ||
        x->L->opt->reasons || x->L->opt->preempt || x->L->opt->tiebreak != BERTH_TIE_FIRST)
        return 0;
    int32_t pct = kp->percentage_of_nodes_to_score ? kp->percentage_of_nodes_to_score
                                                   : k->percentage_of_nodes_to_score;
    if (pct > 0 && pct < 100)
        return 0;
    uint32_t nf = 0, ns = 0;
    int64_t wsum = 0;
    x->nrf_slot = -1;
    for (int i = 0; i < BERTH_KP_COUNT; i++) {
        berth_kplugin pl = (berth_kplugin)i;
        const berth_filter_plugin *f = kube_filter_plugin(pl);
        const berth_score_plugin *sc = kube_score_plugin(pl);
        if (f && (kp->filters & (1u << i))) {
            if (!allowed(pl, 0))
                return 0;
            if (pl == BERTH_KP_NODE_RESOURCES_FIT)
                x->nrf_slot = (int)nf;
            x->filter_of[nf] = pl;
            x->filters[nf++] = f;
        }
        if (sc && (kp->scores & (1u << i))) {
            if (!allowed(pl, 1))
                return 0;
            x->score_of[ns] = pl;
            x->weights[ns] = kp->weight[i] > 0 ? kp->weight[i] : 1;
            wsum += x->weights[ns];
            x->scores[ns++] = sc;
            /* the part's plugins must not normalise (kube/fastpath.c's columns) */
            if ((pl == BERTH_KP_NODE_RESOURCES_FIT || pl == BERTH_KP_BALANCED_ALLOCATION ||
                 pl == BERTH_KP_IMAGE_LOCALITY) && sc->normalize)
                return 0;
        }
    }
    if (wsum > INT32_MAX / 200)
        return 0;
    /* a part (NodeResourcesFit, BalancedAllocation, ImageLocality: each
     * 0..100) is an int16 in the class's blocks */
    int64_t psum = 0;
    for (uint32_t j = 0; j < ns; j++)
        if (x->score_of[j] == BERTH_KP_NODE_RESOURCES_FIT ||
            x->score_of[j] == BERTH_KP_BALANCED_ALLOCATION ||
            x->score_of[j] == BERTH_KP_IMAGE_LOCALITY)
            psum += x->weights[j];
    if (psum * 100 > INT16_MAX)
        return 0;
    x->prof.filters = x->filters;
    x->prof.nfilters = nf;
    x->prof.scores = x->scores;
    x->prof.weights = x->weights;
    x->prof.nscores = ns;
    return 1;
}

/* ---- open / close ---- */

static void class_free(fit_class *c)
{
    free(c->key);
    free(c->blk);
    free(c->tree);
    free(c->sslot);
    free(c->rel);
    free(c->rpick);
    for (uint32_t g = 0; g < c->ngroups; g++) {
        free(c->groups[g].text);
        free(c->groups[g].toks);
    }
    free(c->groups);
    free(c->text);
}

void kube_fitidx_close(kube_fitidx *x)
{
    if (!x)
        return;
    for (uint32_t i = 0; i < x->nclasses; i++)
        class_free(&x->classes[i]);
    free(x->classes);
    free(x->table);
    for (uint32_t i = 0; i < (x->nstatics + FIT_SCHUNK - 1) / FIT_SCHUNK; i++)
        free(x->sg[i]);
    free(x->sg);
    free(x->statics);
    free(x->log);
    free(x->logm);
    free(x->relmask);
    free(x->mark);
    free(x->list);
    free(x->list2);
    free(x->list3);
    free(x->was_off);
    free(x->verdict);
    free(x->col);
    free(x->col2);
    free(x->keybuf);
    free(x->pod_cls);
    kube_labelcols_close(x->lcols);
    free(x);
}

int kube_fitidx_open(kube_fitidx **out, berth_ksession *ks)
{
    *out = NULL;
    kube_fitidx *x = calloc(1, sizeof *x);
    if (!x)
        return BERTH_ENOMEM;
    x->ks = ks;
    x->L = kube_session_loop(ks);
    x->s = &x->L->s;
    if (!build(x)) {
        free(x);
        return 0;
    }
    berth_hashkey_new(&x->hkey);
    x->N = x->s->k->nnodes;
    uint32_t N = x->N ? x->N : 1;
    x->mark = calloc(N / 64 + 1, sizeof *x->mark);
    x->list = malloc(N * sizeof *x->list);
    x->list2 = malloc(N * sizeof *x->list2);
    x->list3 = malloc(N * sizeof *x->list3);
    x->was_off = calloc(N, 1);
    x->relmask = calloc(N, sizeof *x->relmask);
    x->verdict = malloc(N);
    x->col = malloc(N * sizeof *x->col);
    x->col2 = malloc(N * sizeof *x->col2);
    x->tcap = 256;
    x->last_st = FIT_NONE;
    x->table = calloc(x->tcap, sizeof *x->table);
    x->pod_cls = calloc(x->s->k->npods ? x->s->k->npods : 1, sizeof *x->pod_cls);
    if (!x->mark || !x->list || !x->list2 || !x->list3 || !x->was_off || !x->relmask ||
        !x->verdict || !x->col || !x->col2 || !x->table || !x->pod_cls) {
        kube_fitidx_close(x);
        return BERTH_ENOMEM;
    }
    for (uint32_t n = 0; n < x->N; n++)
        x->was_off[n] = x->s->off && x->s->off[n];
    *out = x;
    return 0;
}

/* ---- the change log ---- */

/* The log's entry at position i (base <= i < nlog). */
static uint32_t log_at(const kube_fitidx *x, uint64_t i)
{
    return x->log[i - x->base];
}

static int log_node(kube_fitidx *x, uint32_t n)
{
    if (x->nlog - x->base == x->caplog) {
        /* full: drop what no class and no retouch reads, when that frees
         * at least half; else twice the room */
        uint64_t from = x->nlog > x->N ? x->nlog - x->N : 0;
        from = from < x->held ? from : x->held;
        if (from > x->base && (from - x->base) * 2 >= x->caplog) {
            size_t drop = (size_t)(from - x->base), keep = (size_t)(x->nlog - from);
            memmove(x->log, x->log + drop, keep * sizeof *x->log);
            memmove(x->logm, x->logm + drop, keep * sizeof *x->logm);
            x->base = from;
        }
    }
    if (x->nlog - x->base == x->caplog) {
        uint64_t nc = x->caplog ? x->caplog * 2 : 64;
        uint32_t *qm = realloc(x->logm, nc * sizeof *qm);
        if (!qm)
            return BERTH_ENOMEM;
        x->logm = qm;
        uint32_t *q = realloc(x->log, nc * sizeof *q);
        if (!q)
            return BERTH_ENOMEM;
        x->log = q;
        x->caplog = nc;
    }
    x->logm[x->nlog - x->base] = x->relmask[n];
    x->log[x->nlog - x->base] = n;
    x->nlog++;
    return 0;
}

static int rel_of(const fit_class *c, uint32_t n)
{
    return (int)((c->rel[n / 64].bits >> (n % 64)) & 1);
}

/* Whether a static filter after NodeResourcesFit rejects relevant node n. */
static int late_of(const fit_class *c, uint32_t n)
{
    return (int)((c->rel[n / 64].late >> (n % 64)) & 1);
}

/* A relevant node's position in rpick (its rank among the relevant nodes). */
static uint32_t rpos_of(const fit_class *c, uint32_t n)
{
    const fit_rank *k = &c->rel[n / 64];
    uint64_t below = k->bits & ((1ull << (n % 64)) - 1);
    return k->base + (uint32_t)__builtin_popcountll(below);
}

/* Node n's static group in static entry st (FIT_GNONE: none). */
static uint16_t *sg_at(const kube_fitidx *x, const fit_class *st, uint32_t n)
{
    return &x->sg[st->sidx / FIT_SCHUNK][(size_t)n * FIT_SCHUNK + st->sidx % FIT_SCHUNK];
}

/* Node n became (or stopped being) a candidate: every static entry where
 * only its static group counts it, now (O(static entries); its classes
 * share those counts); the others when used. */
static void off_changed(kube_fitidx *x, uint32_t n, int off)
{
    uint32_t m = x->relmask[n];
    for (uint32_t e = 0; e < x->nstatics; e++) {
        fit_class *st = &x->classes[x->statics[e]];
        if (!st->ok || (e < FIT_RELBITS ? (int)((m >> e) & 1) : rel_of(st, n)))
            continue;
        /* counted in its static group exactly while a candidate */
        uint16_t g = x->sg[e / FIT_SCHUNK][(size_t)n * FIT_SCHUNK + e % FIT_SCHUNK];
        if (off)
            st->groups[g].count--;
        else
            st->groups[g].count++;
        st->sver++;
    }
}

static int touch(kube_fitidx *x, uint32_t n)
{
    uint8_t off = x->s->off && x->s->off[n];
    if (off != x->was_off[n]) {
        x->was_off[n] = off;
        off_changed(x, n, off);
    }
    return log_node(x, n);
}

int kube_fitidx_touch(kube_fitidx *x, uint32_t node)
{
    uint32_t n = kube_session_node(x->ks, node);
    return n < x->N ? touch(x, n) : 0;
}

void kube_fitidx_prefetch(const kube_fitidx *x, const uint32_t *pods, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (pods[i] < x->s->k->npods)
            __builtin_prefetch(&x->pod_cls[pods[i]], 1);
}

uint64_t kube_fitidx_pos(kube_fitidx *x)
{
    x->held = x->nlog;
    return x->nlog;
}

int kube_fitidx_retouch(kube_fitidx *x, uint64_t pos)
{
    if (NEVER(pos < x->held || pos > x->nlog))
        return BERTH_EINVAL; /* not the last position handed out */
    /* (touch appends, and may drop entries before held: read by position) */
    for (uint64_t i = pos, end = x->nlog; i < end; i++)
        if (touch(x, log_at(x, i)))
            return BERTH_ENOMEM;
    return 0;
}

/* ---- the class key: everything the filters and scores read of a pod ---- */

/* The keys of pod p, built once: what the static filters and
 * TaintToleration / NodeAffinity scores read (node constraints), then the
 * requests. x->keybuf holds the static key (the constraints and 'S',
 * *slen bytes); class_key turns it into the class key (the constraints,
 * the requests and 'C'). The last byte tells the two kinds apart, and the
 * requests have a fixed size (the cluster's resources: kube_podkey_requests),
 * so equal keys mean equal pods' inputs. */
static int static_key(kube_fitidx *x, const berth_kpod *p, kube_podkey *b, size_t *slen)
{
    *b = kube_podkey_start(&x->keybuf, &x->keycap);
    kube_podkey_node_constraints(b, p, kube_pod_node_name(x->s, p));
    kube_podkey_put(b, "S", 1);
    *slen = b->len;
    return b->oom ? BERTH_ENOMEM : 0;
}

static int class_key(const kube_fitidx *x, const berth_kpod *p, kube_podkey *b, size_t *len)
{
    b->len--; /* the 'S' */
    kube_podkey_requests(b, p, x->s->k->nres);
    kube_podkey_put(b, "C", 1);
    *len = b->len;
    return b->oom ? BERTH_ENOMEM : 0;
}

/* Whether the index answers for pod p at all (before its class). */
static int pod_ok(const kube_fitidx *x, const berth_kpod *p)
{
    if (p->nports || p->vol_error || p->nvol_zones || kube_pod_node_name(x->s, p))
        return 0;
    if (p->scheduler_name && strcmp(p->scheduler_name, "default-scheduler"))
        return 0;
    if (p->has_image)
        return 0; /* berth_kube_pod_requests: read here without the container list */
    for (uint32_t i = 0; i < p->nreq_terms; i++)
        if (p->req_terms[i].nfields)
            return 0; /* NodeAffinity's PreFilter may pin the pod (pinned_nodes) */
    (void)x;
    return 1;
}

static int inert(const kube_req *r)
{
    const kube_terms_req *q = r->terms;
    return !q || (!q->npf && !q->nps && !q->naff && !q->nanti && !q->nisc);
}

/* ---- per class upkeep ---- */

/* The largest of a block's FIT_BLOCK parts (a loop the compiler turns into
 * vector maxima). */
static int16_t block_max(const int16_t *b)
{
    int16_t m = b[0];
    for (uint32_t k = 1; k < FIT_BLOCK; k++)
        m = b[k] > m ? b[k] : m;
    return m;
}

static int16_t *part_at(fit_class *c, uint32_t pos)
{
    return &c->blk[pos / FIT_BLOCK].part[pos % FIT_BLOCK];
}

/* The part of a node that is not feasible, counted in group g (below
 * FIT_GMAX; FIT_NONE: in none), and the group of a part. */
static int16_t part_nofit(uint32_t g)
{
    return g == FIT_NONE ? FIT_PNONE : (int16_t)(-1 - (int32_t)g);
}

static uint32_t part_group(int16_t v)
{
    return v >= 0 || v == FIT_PNONE ? FIT_NONE : (uint32_t)(-1 - (int32_t)v);
}

/* part[pos] = v, and the tree up to date: its block's leaf, then the
 * ancestors while their maximum changes. */
static void tree_set(fit_class *c, uint32_t pos, int16_t v)
{
    *part_at(c, pos) = v;
    uint32_t i = c->P + pos / FIT_BLOCK;
    int16_t m = block_max(c->blk[pos / FIT_BLOCK].part);
    if (m < 0)
        m = FIT_PNONE; /* no feasible node: which groups, the tree does not care */
    if (c->tree[i] == m)
        return;
    c->tree[i] = m;
    for (i /= 2; i; i /= 2) {
        int16_t l = c->tree[2 * i], r = c->tree[2 * i + 1];
        m = l > r ? l : r;
        if (c->tree[i] == m)
            break;
        c->tree[i] = m;
    }
}

/* Node at pos gets part v; a group it leaves or joins (a part below 0)
 * counts it. */
static void part_set(fit_class *c, uint32_t pos, int16_t v)
{
    int16_t old = *part_at(c, pos);
    if (old == v)
        return;
    uint32_t go = part_group(old), gn = part_group(v);
    if (go != gn) {
        if (go != FIT_NONE)
            c->groups[go].count--;
        if (gn != FIT_NONE)
            c->groups[gn].count++;
        free(c->text);
        c->text = NULL;
    }
    if (old >= 0 || v >= 0)
        tree_set(c, pos, v);
    else
        *part_at(c, pos) = v; /* infeasible before and after: the tree stays */
}

/* The first position holding the maximum (rpick is in node order: the
 * fast path's argmax, ties first). */
static uint32_t tree_argmax(const fit_class *c)
{
    uint32_t i = 1;
    while (i < c->P)
        i = c->tree[2 * i] == c->tree[i] ? 2 * i : 2 * i + 1;
    const int16_t *b = c->blk[i - c->P].part;
    uint32_t k = 0;
    while (b[k] != c->tree[1])
        k++;
    return (i - c->P) * FIT_BLOCK + k;
}

/* Reason group (slot, text): a slot's codes that give the same text (the
 * TaintToleration sets whose first untolerated taint is the same) share
 * one, so a class holds a group per distinct text at most. */
static uint32_t group_of(fit_class *c, uint32_t slot, uint32_t code, const char *text, int *oom)
{
    for (uint32_t g = 0; g < c->ngroups; g++)
        if (c->groups[g].slot == slot && !strcmp(c->groups[g].text, text))
            return g;
    if (berth_grow((void **)&c->groups, &c->capgroups, c->ngroups + 1, sizeof *c->groups, 0)) {
        *oom = 1;
        return FIT_NONE;
    }
    char *t = strdup(text);
    if (!t) {
        *oom = 1;
        return FIT_NONE;
    }
    c->groups[c->ngroups] = (fit_group){slot, code, t, 0, NULL, 0, 0};
    return c->ngroups++;
}

/* The group of a node's reason for filter slot f (the plugin's code, else
 * its text). */
static uint32_t reason_group(kube_fitidx *x, fit_class *c, const kube_req *r, uint32_t f,
                             uint32_t n, int *oom)
{
    char buf[512];
    uint32_t code = kube_reason_code(x->s, r, x->filter_of[f], n);
    if (code != KUBE_NO_REASON_CODE) {
        for (uint32_t g = 0; g < c->ngroups; g++)
            if (c->groups[g].slot == f && c->groups[g].code == code)
                return g;
    }
    x->filters[f]->reason(x->s, (void *)r, n, buf, sizeof buf);
    return group_of(c, f, code, buf, oom);
}

/* Recomputes nodes[0..m) (relevant ones) of class c: the fit filter and the part's scores
 * (on the candidates that pass the static filters, then on those that
 * fit), the tree, and each node's reason group. 0 or BERTH_ENOMEM. */
static int refresh(kube_fitidx *x, fit_class *c, kube_req *r, const uint32_t *nodes, uint32_t m)
{
    kube_sched *s = x->s;
    const berth_profile *prof = &x->prof;
    const fit_class *st = &x->classes[c->st];
    const uint8_t *off = s->off;
    uint32_t *q = x->list2, nq = 0, *fit = x->list3, nfit = 0;
    for (uint32_t i = 0; i < m; i++) {
        uint32_t n = nodes[i];
        /* the node's part line, written below once the filter and scores
         * have run: its misses overlap theirs rather than following them
         * one by one (~5 % of a 10k or 50k scale-down plan) */
        __builtin_prefetch(part_at(c, rpos_of(st, n)), 1);
        /* NodeResourcesFit runs where no static filter before it rejects
         * (every listed node) and the node is a candidate */
        if (!(off && off[n]))
            q[nq++] = n;
    }
    memset(x->verdict, BERTH_FIT, nq);
    if (x->nrf_slot >= 0 && nq)
        prof->filters[x->nrf_slot]->filter(s, r, q, nq, x->verdict);
    for (uint32_t i = 0; i < nq; i++) {
        fit[nfit] = q[i];
        nfit += x->verdict[i] == BERTH_FIT && !late_of(st, q[i]);
    }
    memset(x->col2, 0, nfit * sizeof *x->col2);
    for (uint32_t j = 0; j < prof->nscores && nfit; j++) {
        berth_kplugin pl = x->score_of[j];
        if (pl != BERTH_KP_NODE_RESOURCES_FIT && pl != BERTH_KP_BALANCED_ALLOCATION &&
            pl != BERTH_KP_IMAGE_LOCALITY)
            continue;
        prof->scores[j]->score(s, r, fit, nfit, x->col);
        for (uint32_t i = 0; i < nfit; i++)
            x->col2[i] += x->weights[j] * x->col[i];
    }
    /* the nodes that fit get their part; every other listed node none
     * (fit is a subsequence of q, q of nodes, which lists a node once:
     * walked in step, no per-node mark) */
    for (uint32_t i = 0; i < nfit; i++) {
        uint32_t at = rpos_of(st, fit[i]);
        if (NEVER(x->col2[i] < 0 || x->col2[i] > INT16_MAX))
            return BERTH_EINTERNAL; /* scores are 0..100 and build() bounds the weights */
        part_set(c, at, (int16_t)x->col2[i]); /* it fits: no reason */
    }
    int oom = 0;
    for (uint32_t i = 0, qi = 0, fi = 0; i < m; i++) {
        uint32_t n = nodes[i];
        if (NEVER(!rel_of(st, n)))
            return BERTH_EINTERNAL; /* refresh lists relevant nodes only */
        int fits = fi < nfit && fit[fi] == n;
        fi += fits;
        int failed_fit = 0; /* a candidate passing the static filters that does not fit */
        if (qi < nq && q[qi] == n)
            failed_fit = x->verdict[qi++] != BERTH_FIT;
        if (fits)
            continue; /* its part and (no) group are set above */
        uint32_t at = rpos_of(st, n);
        int cand = !(off && off[n]);
        /* the first rejecting filter: NodeResourcesFit's when it ran and
         * failed, else the static one */
        uint32_t g = FIT_NONE;
        if (cand) {
            if (failed_fit)
                g = reason_group(x, c, r, (uint32_t)x->nrf_slot, n, &oom);
            else if (late_of(st, n))
                g = *sg_at(x, st, n);
        }
        if (g != FIT_NONE && g >= FIT_GMAX) {
            c->ok = 0; /* more groups than a part holds: the session answers */
            break;
        }
        part_set(c, at, part_nofit(g));
    }
    return oom ? BERTH_ENOMEM : 0;
}

/* A new static entry for r's pod: its static filters over every node
 * (first rejecting one, with its reason group), the relevant nodes, and
 * whether TaintToleration / NodeAffinity score alike on every node that
 * passes them. Shared by the classes that differ only in requests. */
static int static_init(kube_fitidx *x, fit_class *st, kube_req *r)
{
    kube_sched *s = x->s;
    const berth_profile *prof = &x->prof;
    uint32_t N = x->N;
    st->is_static = 1;
    /* its place among the static entries, a new row of groups every
     * FIT_SCHUNK (all FIT_GNONE) */
    uint32_t e = x->nstatics;
    if (berth_grow((void **)&x->statics, &x->capstatics, e + 1, sizeof *x->statics, 0))
        return BERTH_ENOMEM;
    if (e % FIT_SCHUNK == 0) {
        uint16_t **g = realloc(x->sg, (e / FIT_SCHUNK + 1) * sizeof *g);
        if (!g)
            return BERTH_ENOMEM;
        x->sg = g;
        if (!(g[e / FIT_SCHUNK] = malloc(((size_t)N + 1) * FIT_SCHUNK * sizeof **g)))
            return BERTH_ENOMEM;
        memset(g[e / FIT_SCHUNK], 0xff, ((size_t)N + 1) * FIT_SCHUNK * sizeof **g);
        x->bytes += (size_t)N * FIT_SCHUNK * sizeof **g;
    }
    x->statics[x->nstatics++] = (uint32_t)(st - x->classes); /* close frees its row */
    st->sidx = e;
    st->sslot = calloc(N ? N : 1, 1);
    st->rel = calloc(N / 64 + 1, sizeof *st->rel);
    if (!st->sslot || !st->rel)
        return BERTH_ENOMEM;
    x->bytes += (size_t)N + (N / 64 + 1) * sizeof *st->rel;
    for (uint32_t n = 0; n < N; n++)
        x->list[n] = n;
    /* static filters: each node's first rejecting one, in profile order;
     * a filter runs on the nodes no earlier one rejected (each node's
     * verdict is its own, so the first rejecting filter is the same), which
     * keeps the later filters off the nodes an early one (a taint, a
     * selector) already ruled out */
    int oom = 0, many = 0;
    uint32_t nlive = N;
    for (uint32_t f = 0; f < prof->nfilters && nlive; f++) {
        if (!is_static(x->filter_of[f]))
            continue;
        memset(x->verdict, BERTH_FIT, nlive);
        int done = 0;
        if (x->filter_of[f] == BERTH_KP_NODE_AFFINITY && !(s->prof && s->prof->has_added_req)) {
            /* the same verdicts from the label columns (one label lookup
             * per node and key for the whole session, not per entry) */
            int lrc = x->lcols ? 0 : kube_labelcols_open(&x->lcols, s->k->nodes, N, &x->hkey);
            if (!lrc)
                lrc = kube_labelcols_affinity(x->lcols, r->p, x->list, nlive, x->verdict);
            if (lrc == BERTH_ENOMEM)
                return lrc;
            done = lrc == 0;
        }
        if (!done)
            prof->filters[f]->filter(s, r, x->list, nlive, x->verdict);
        uint32_t keep = 0;
        for (uint32_t i = 0; i < nlive; i++) {
            uint32_t n = x->list[i];
            if (x->verdict[i] != BERTH_FIT) {
                st->sslot[n] = (uint8_t)(f + 1);
                uint32_t g = reason_group(x, st, r, f, n, &oom);
                if (g >= FIT_GMAX)
                    many = 1; /* more groups than a row holds: the session answers */
                else
                    *sg_at(x, st, n) = (uint16_t)g;
            } else {
                x->list[keep++] = n;
            }
        }
        nlive = keep;
    }
    if (oom)
        return BERTH_ENOMEM;
    if (many)
        return 0; /* st->ok stays 0: its classes are the session's */
    for (uint32_t n = 0; n < N; n++) {
        if (n % 64 == 0)
            st->rel[n / 64].base = st->nrel;
        if (!st->sslot[n] || (x->nrf_slot >= 0 && st->sslot[n] - 1u > (uint32_t)x->nrf_slot)) {
            st->rel[n / 64].bits |= 1ull << (n % 64);
            if (st->sslot[n])
                st->rel[n / 64].late |= 1ull << (n % 64);
            x->list2[st->nrel++] = n; /* (scratch: rpick is sized below) */
            if (e < FIT_RELBITS)
                x->relmask[n] |= 1u << e;
        }
    }
    if (!(st->rpick = malloc((st->nrel ? st->nrel : 1) * sizeof *st->rpick)))
        return BERTH_ENOMEM;
    x->bytes += (size_t)st->nrel * sizeof *st->rpick;
    for (uint32_t i = 0; i < st->nrel; i++)
        st->rpick[i] = (fit_pick){x->list2[i], kube_session_caller_node(x->ks, x->list2[i])};
    /* TaintToleration / NodeAffinity scores: a constant when their raw
     * scores are equal on every statically feasible node */
    uint32_t m = 0;
    for (uint32_t n = 0; n < N; n++)
        if (!st->sslot[n])
            x->list[m++] = n;
    st->ok = 1;
    for (uint32_t j = 0; j < prof->nscores && m && st->ok; j++) {
        if (x->score_of[j] != BERTH_KP_TAINT_TOLERATION && x->score_of[j] != BERTH_KP_NODE_AFFINITY)
            continue;
        prof->scores[j]->score(s, r, x->list, m, x->col);
        for (uint32_t i = 1; i < m; i++)
            if (x->col[i] != x->col[0])
                st->ok = 0;
    }
    /* the nodes that only count in their static group, while candidates
     * (kept up to date by off_changed) */
    const uint8_t *off = s->off;
    for (uint32_t g = 0; g < st->ngroups; g++)
        st->groups[g].count = 0;
    for (uint32_t n = 0; n < N; n++)
        if (!rel_of(st, n) && !(off && off[n]))
            st->groups[*sg_at(x, st, n)].count++;
    /* from here on the rank's late bits say what a refresh asks of it */
    free(st->sslot);
    st->sslot = NULL;
    x->bytes -= (size_t)N;
    return 0;
}

/* Static entry st's relevant nodes, in node order, in x->list (scratch,
 * for a refresh of them all). */
static const uint32_t *rel_nodes(kube_fitidx *x, const fit_class *st)
{
    for (uint32_t i = 0; i < st->nrel; i++)
        x->list[i] = st->rpick[i].node;
    return x->list;
}

/* A new class for r's pod over its static entry: the static groups (same
 * ids), every node counted or refreshed. */
static int class_init(kube_fitidx *x, fit_class *c, kube_req *r)
{
    kube_sched *s = x->s;
    const fit_class *st = &x->classes[c->st];
    /* its groups' ids must fit a block's with room for NodeResourcesFit's
     * (refresh checks each): else the session answers */
    if (st->ngroups >= FIT_GMAX)
        return 0; /* c->ok stays 0 */
    uint32_t R = st->nrel, nb = R ? (R + FIT_BLOCK - 1) / FIT_BLOCK : 1, P; /* blocks of parts */
    for (P = 1; P < nb; P *= 2)
        ;
    c->P = P;
    c->blk = aligned_alloc(sizeof *c->blk, (size_t)nb * sizeof *c->blk);
    c->tree = malloc(2 * (size_t)P * sizeof *c->tree);
    c->groups = malloc((st->ngroups ? st->ngroups : 1) * sizeof *c->groups);
    if (!c->blk || !c->tree || !c->groups)
        return BERTH_ENOMEM;
    c->capgroups = st->ngroups ? st->ngroups : 1;
    for (uint32_t g = 0; g < st->ngroups; g++) {
        c->groups[g] = st->groups[g];
        c->groups[g].count = 0;
        c->groups[g].toks = NULL;
        if (!(c->groups[g].text = strdup(st->groups[g].text)))
            return BERTH_ENOMEM;
        c->ngroups++;
    }
    x->bytes += (size_t)nb * sizeof *c->blk + 4 * (size_t)P;
    for (uint32_t b = 0; b < nb; b++)
        for (uint32_t k = 0; k < FIT_BLOCK; k++)
            c->blk[b].part[k] = FIT_PNONE;
    for (uint32_t i = 0; i < 2 * P; i++)
        c->tree[i] = FIT_PNONE;
    c->ok = 1;
    c->pos = x->nlog;
    c->ncand = s->ncand;
    return refresh(x, c, r, rel_nodes(x, st), st->nrel);
}

/* The hash of class key x->keybuf (len bytes) whose static entry st was
 * made from its first skip bytes: the key's own bytes after them, keyed
 * with st's hash, so the constraints a static key and its class keys share
 * are hashed once (two keys are equal when their static keys and requests
 * are). */
static uint64_t class_hash(const kube_fitidx *x, const fit_class *st, size_t skip, size_t len)
{
    unsigned char buf[sizeof st->hash + 2 * BERTH_KUBE_MAX_RES * sizeof(int64_t) + 2];
    size_t n = len - skip;
    if (n > sizeof buf - sizeof st->hash) /* never: the requests and 'C' */
        return berth_hash_keyed(&x->hkey, x->keybuf, len);
    memcpy(buf, &st->hash, sizeof st->hash);
    memcpy(buf + sizeof st->hash, x->keybuf + skip, n);
    return berth_hash_keyed(&x->hkey, buf, sizeof st->hash + n);
}

/* The entry of the key in x->keybuf (len bytes, hash h): *id, *created
 * when new. 1: the table is full (the session answers), 0, or
 * BERTH_ENOMEM. */
static int lookup(kube_fitidx *x, size_t len, uint64_t h, uint32_t *id, int *created)
{
    *created = 0;
    for (uint32_t i = (uint32_t)h & (x->tcap - 1);; i = (i + 1) & (x->tcap - 1)) {
        uint32_t e = x->table[i];
        if (!e)
            break;
        fit_class *c = &x->classes[e - 1];
        if (c->hash == h && c->keylen == len && !memcmp(c->key, x->keybuf, len)) {
            *id = e - 1;
            return 0;
        }
    }
    if (x->nclasses >= FIT_MAX_CLASSES || x->bytes > FIT_MAX_BYTES)
        return 1;
    if ((x->nclasses + 1) * 2 > x->tcap) {
        int rc = berth_slots_rebuild(&x->table, &x->tcap, x->tcap * 2, x->classes,
                                     sizeof *x->classes, offsetof(fit_class, hash),
                                     sizeof x->classes->hash, x->nclasses);
        if (rc)
            return rc;
    }
    if (berth_grow((void **)&x->classes, &x->capclasses, x->nclasses + 1, sizeof *x->classes, 0))
        return BERTH_ENOMEM;
    fit_class *c = &x->classes[x->nclasses];
    memset(c, 0, sizeof *c);
    c->key = malloc(len ? len : 1);
    if (!c->key)
        return BERTH_ENOMEM;
    memcpy(c->key, x->keybuf, len);
    c->keylen = len;
    c->hash = h;
    *id = x->nclasses++;
    uint32_t i = (uint32_t)h & (x->tcap - 1);
    while (x->table[i])
        i = (i + 1) & (x->tcap - 1);
    x->table[i] = *id + 1;
    *created = 1;
    return 0;
}

/* r's class (its static entry first), NULL when the index does not answer
 * for it (or *rc an error). */
static fit_class *find_class(kube_fitidx *x, kube_req *r, int *rc)
{
    size_t len, slen;
    uint32_t sid, cid;
    int created;
    kube_podkey b;
    uint32_t memo = x->pod_cls[r->pod];
    *rc = 0;
    if (memo)
        return memo == FIT_NONE ? NULL : &x->classes[memo - 1];
    if ((*rc = static_key(x, r->p, &b, &slen)))
        goto fail;
    /* pods in a row often share their constraints: a compare with the
     * last static entry's key before a hash */
    const fit_class *last = x->last_st != FIT_NONE ? &x->classes[x->last_st] : NULL;
    if (last && last->keylen == slen && !memcmp(last->key, x->keybuf, slen)) {
        sid = x->last_st;
    } else {
        if ((*rc = lookup(x, slen, berth_hash_keyed(&x->hkey, x->keybuf, slen), &sid, &created)))
            goto fail;
        if (created && (*rc = static_init(x, &x->classes[sid], r)))
            goto fail;
        x->last_st = sid;
    }
    if (!x->classes[sid].ok) {
        x->pod_cls[r->pod] = FIT_NONE;
        return NULL;
    }
    if ((*rc = class_key(x, r->p, &b, &len)) ||
        (*rc = lookup(x, len, class_hash(x, &x->classes[sid], slen - 1, len), &cid, &created)))
        goto fail;
    if (created) {
        x->classes[cid].st = sid;
        if ((*rc = class_init(x, &x->classes[cid], r)))
            goto fail;
    }
    x->pod_cls[r->pod] = cid + 1;
    return &x->classes[cid];
fail:
    if (*rc == 1)
        *rc = 0; /* full: the session answers */
    return NULL;
}

/* Brings class c up to date with the change log. */
static int catch_up(kube_fitidx *x, fit_class *c, kube_req *r)
{
    const fit_class *st = &x->classes[c->st];
    uint64_t pending = x->nlog - c->pos;
    uint32_t m = 0;
    const uint32_t *list = x->list;
    if (pending >= x->N) {
        /* more entries than nodes: every relevant node (no more work than
         * reading the entries); fewer: only the relevant nodes among them,
         * so a class pays for the changes of its own nodes, not its size */
        list = rel_nodes(x, st);
        m = st->nrel;
    } else if (pending) {
        /* the relevant nodes among the changed ones, each once (two bit
         * tests per entry: relevance from the entry itself for the first
         * FIT_RELBITS static entries (relmask), then the mark bitmap, which stays
         * in cache; the marks are cleared again from the list) */
        uint64_t *mark = x->mark;
        uint32_t sbit = st->sidx < FIT_RELBITS ? 1u << st->sidx : 0;
        for (uint64_t i = c->pos; i < x->nlog; i++) {
            uint32_t n = log_at(x, i);
            uint64_t bit = 1ull << (n % 64);
            if (!(sbit ? x->logm[i - x->base] & sbit : (uint32_t)rel_of(st, n)) || (mark[n / 64] & bit))
                continue;
            mark[n / 64] |= bit;
            x->list[m++] = n;
        }
        for (uint32_t i = 0; i < m; i++)
            mark[x->list[i] / 64] &= ~(1ull << (x->list[i] % 64));
    }
    c->pos = x->nlog;
    if (x->s->ncand != c->ncand) {
        c->ncand = x->s->ncand;
        free(c->text);
        c->text = NULL;
    }
    return m ? refresh(x, c, r, list, m) : 0;
}

/* ---- the FitError text from the counts (kube/sched.c count_reasons,
 * add_reasons, fit_error) ---- */

static int cmp_item(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Splits group g's text as add_reasons does (';', leading blanks off). */
static int split(fit_group *g)
{
    size_t len = strlen(g->text);
    char *buf = malloc(len + 1), *o;
    if (!buf)
        return BERTH_ENOMEM;
    memcpy(buf, g->text, len + 1);
    char *save = NULL, *out = malloc(len + 1);
    if (!out) {
        free(buf);
        return BERTH_ENOMEM;
    }
    o = out;
    g->ntoks = 0;
    for (char *tok = strtok_r(buf, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
        while (*tok == ' ')
            tok++;
        size_t n = strlen(tok);
        g->too_long |= n >= FIT_REASON_TEXT;
        memcpy(o, tok, n + 1);
        o += n + 1;
        g->ntoks++;
    }
    free(buf);
    g->toks = out;
    return 0;
}

static char *put_u32(char *o, uint32_t v)
{
    char d[12];
    int n = 0;
    do
        d[n++] = (char)('0' + v % 10);
    while (v /= 10);
    while (n)
        *o++ = d[--n];
    return o;
}

/* 1: c->text built; 0: more reasons than kube counts, or a reason longer
 * than its table keeps (the session answers); BERTH_ENOMEM. */
static int fit_text(const kube_fitidx *x, fit_class *c)
{
    const char *tok[FIT_MAX_REASONS];
    uint32_t count[FIT_MAX_REASONS], nrc = 0;
    const fit_class *st = &x->classes[c->st];
    for (uint32_t g = 0; g < c->ngroups; g++) {
        fit_group *gr = &c->groups[g];
        /* its relevant nodes, and the others (the static entry's count) */
        uint32_t cnt = gr->count + (g < st->ngroups ? st->groups[g].count : 0);
        if (!cnt)
            continue;
        if (!gr->toks && split(gr))
            return BERTH_ENOMEM;
        if (gr->too_long)
            return 0;
        const char *t = gr->toks;
        for (uint32_t i = 0; i < gr->ntoks; i++, t += strlen(t) + 1) {
            uint32_t j = 0;
            while (j < nrc && strcmp(tok[j], t) != 0)
                j++;
            if (j == nrc) {
                if (nrc == FIT_MAX_REASONS)
                    return 0;
                tok[nrc] = t;
                count[nrc++] = 0;
            }
            count[j] += cnt;
        }
    }
    /* "count reason" items sorted as strings, joined (fit_error) */
    char items[FIT_MAX_REASONS][200];
    char *order[FIT_MAX_REASONS];
    for (uint32_t j = 0; j < nrc; j++) {
        char *o = put_u32(items[j], count[j]);
        *o++ = ' ';
        size_t n = strlen(tok[j]); /* < FIT_REASON_TEXT */
        memcpy(o, tok[j], n + 1);
        order[j] = items[j];
    }
    qsort(order, nrc, sizeof *order, cmp_item);
    size_t cap = 64 + (size_t)nrc * 200;
    char *out = malloc(cap);
    if (!out)
        return BERTH_ENOMEM;
    char *o = out;
    memcpy(o, "0/", 2);
    o = put_u32(o + 2, x->s->ncand);
    memcpy(o, " nodes are available", 20);
    o += 20;
    for (uint32_t j = 0; j < nrc; j++) {
        *o++ = j ? ',' : ':';
        *o++ = ' ';
        size_t n = strlen(order[j]);
        memcpy(o, order[j], n);
        o += n;
    }
    memcpy(o, ".", 2);
    free(c->text);
    c->text = out;
    c->tver = st->sver;
    return 1;
}

/* ---- the question ---- */

int kube_fitidx_place(kube_fitidx *x, uint32_t pod, int *answer, uint32_t *node,
                      const char **why, berth_arena *a)
{
    kube_sched *s = x->s;
    *answer = KUBE_FIT_ASK;
    *node = BERTH_KUBE_NONE;
    if (why)
        *why = NULL;
    if (pod >= s->k->npods || !pod_ok(x, &s->k->pods[pod]) || !s->fast)
        return 0;
    s->prof = &x->L->defprof;
    kube_req r;
    int rc = kube_req_init(s, &r, pod);
    if (rc)
        return rc;
    fit_class *c = NULL;
    if (!inert(&r) || !(c = find_class(x, &r, &rc)) || !c->ok)
        goto out;
    if ((rc = catch_up(x, c, &r)))
        goto out;
    if (!c->ok)
        goto out; /* refresh met more reason groups than a part holds */
    if (c->tree[1] < 0) {
        /* fits nowhere: the text from the counts (kept while they hold) */
        if (c->text && c->tver != x->classes[c->st].sver) {
            free(c->text);
            c->text = NULL;
        }
        if (!c->text && (rc = fit_text(x, c)) != 1)
            goto out; /* 0: the session explains it */
        rc = 0;
        if (why && !a)
            *why = c->text; /* the index's own: until its next place or touch */
        else if (why && !(*why = berth_arena_strdup(a, c->text))) {
            rc = BERTH_ENOMEM;
            goto out;
        }
        *answer = KUBE_FIT_NONE;
        goto out;
    }
    const fit_class *st = &x->classes[c->st];
    const fit_pick *pick = &st->rpick[tree_argmax(c)];
    uint32_t n = pick->node;
    /* the node's lines the assume and the log entry below write, fetched
     * together (at 50,000 nodes each is a miss of its own) */
    kube_node_prefetch(s, n);
    __builtin_prefetch(&x->relmask[n]);
    /* NodeAffinity's PreScore runs when more than one node is feasible and
     * may fail the pod: the session says so */
    if (kube_affinity_prescore_failed(s, r.p))
        goto out;
    if ((rc = kube_session_assume(x->ks, pod, n)) || (rc = log_node(x, n)))
        goto out;
    *node = pick->caller;
    *answer = KUBE_FIT_PLACED;
out:
    kube_req_free(s, &r);
    return rc;
}
