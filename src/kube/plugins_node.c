/* kube/plugins_node.c - the node-level kube-scheduler plugins (SPEC 2.5):
 * NodeUnschedulable, NodeName, TaintToleration (filter and score),
 * NodeAffinity (filter and score), NodePorts, VolumeZone and ImageLocality.
 *
 * Every plugin is a batch over candidate node indices (state: kube_sched *,
 * req: kube_req *). Filters only write the verdict of a rejected candidate.
 * Work that cannot matter is skipped before touching nodes: a pod without
 * tolerations against hard-tainted nodes needs only the has_hard_taint
 * column, and a pod with tolerations is tested once per hard-taint set
 * (kube/taintsets.h), not per node; a pod without nodeSelector/required
 * affinity passes NodeAffinity
 * (unless its profile has addedAffinity), a pod without host ports passes
 * NodePorts, no preferred terms (the pod's or the profile's) scores 0.
 * NodeAffinity also owns its PreScore error (a preferred term that does
 * not parse) and the profile's addedAffinity (NodeAffinityArgs).
 * Strings are formatted only in reason().
 *
 * ImageLocality needs, per image name, the number of nodes that have it;
 * that table (and a per-node scratch column) is built once per kube_sched,
 * lazily (malloc'd, freed by kube_plugins_free): see kube_plugins_prepare.
 * Nodes that are off (a what-if session's excluded nodes and inactive
 * spare slots) are not part of the image spread.
 * The same cache memoises, per distinct pod spec, the per-node columns of
 * NodeAffinity (required, preferred) and TaintToleration (filter, score),
 * so pods stamped from one template skip label and taint string matching
 * (NodeAffinity's columns also keyed by the profile when its addedAffinity
 * takes part).
 * The reference mode (s->reference) uses none of it and recomputes from
 * the nodes. */
#include "kube/state.h"
#include "berth/hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KUBE_UNSCHEDULABLE_TAINT "node.kubernetes.io/unschedulable"
#define KUBE_IMG_MIN_THRESHOLD (23LL * 1024 * 1024)
#define KUBE_IMG_MAX_CONTAINER_THRESHOLD (1000LL * 1024 * 1024)

/* Per-node results that depend only on static node data and one part of
 * the pod spec (required node affinity, preferred terms, tolerations) are
 * memoised per distinct spec: pods stamped from one template then cost a
 * column lookup per node instead of label and taint string matching. A
 * column covers every node and is filled on a miss only when the batch is
 * at least a quarter of the nodes (else the batch is computed directly). */
#define KUBE_MEMO_WAYS 8
enum { KUBE_MEMO_AFF_FILTER, KUBE_MEMO_AFF_SCORE, KUBE_MEMO_TAINT_FILTER, KUBE_MEMO_TAINT_SCORE,
       KUBE_MEMO_KINDS };

struct kube_memo {
    uint32_t pod[KUBE_MEMO_WAYS];           /* index + 1 of the pod whose spec keys the way */
    const berth_kprofile *prof[KUBE_MEMO_WAYS]; /* the profile whose addedAffinity the
                                             * column includes (memo_prof), or NULL */
    int64_t *col[KUBE_MEMO_WAYS];           /* per node */
    uint32_t next;                          /* round-robin victim */
};

/* The per-kube_sched cache behind ImageLocality, NodeUnschedulable and
 * the memoised columns. */
struct kube_plugin_cache {
    uint32_t nnodes;              /* built for this many nodes */
    int any_unschedulable;
    uint32_t nimages;             /* distinct image names over all nodes */
    uint32_t hcap;                /* power of two */
    uint32_t *htab;               /* image id + 1, 0 = empty */
    uint64_t *hash;               /* per image id */
    berth_hashkey hkey;           /* the names' hash key, drawn with the cache */
    const char **name;            /* per image id */
    int64_t *scaled;              /* per image id: (int64)(size * nodes / total) */
    uint32_t *first;              /* per image id + 1: CSR offsets into nodes */
    uint32_t *nodes;              /* nodes having the image, ascending (off ones too) */
    uint32_t *count;              /* per image id: nodes not off having it */
    int64_t *size;                /* per image id: the size on the first such node */
    int64_t *sum;                 /* per node scratch, all 0 between calls */
    int images_stale;             /* the image part is rebuilt before next use */
    struct kube_memo memo[KUBE_MEMO_KINDS];
};

/* ---- helpers ---- */

static const char *str_or_empty(const char *s) { return s ? s : ""; }

/* Image name as the pod gives it; upstream normalizedImageName appends
 * ":latest" when the name has no tag (the last ':' not after the last '/'). */
static int image_needs_latest(const char *img)
{
    const char *colon = strrchr(img, ':'), *slash = strrchr(img, '/');
    return !colon || (slash && colon < slash);
}

/* An image name's hash under the cache's key (the names are the input's),
 * equal for a pod-side untagged image taken as ":latest" (latest) and the
 * node-side "<image>:latest": the part before the tag, then the tag. */
static uint64_t image_hash(const berth_hashkey *key, const char *img, int latest)
{
    const char *colon = strrchr(img, ':'), *slash = strrchr(img, '/');
    int tagged = colon && !(slash && colon < slash);
    uint64_t h = berth_hash_keyed(key, img, tagged ? (size_t)(colon - img) : strlen(img));
    return berth_hash_keyed_then(h, key, tagged ? colon + 1 : latest ? "latest" : "");
}

/* Whether the node-side name equals the pod-side image (normalised). */
static int image_name_equal(const char *node_name, const char *img, int latest)
{
    if (!latest)
        return strcmp(node_name, img) == 0;
    size_t n = strlen(img);
    return strncmp(node_name, img, n) == 0 && strcmp(node_name + n, ":latest") == 0;
}

static uint32_t cache_find(const struct kube_plugin_cache *pc, const char *img, int latest,
                           uint64_t h)
{
    uint32_t mask = pc->hcap - 1;
    for (uint32_t i = (uint32_t)h & mask;; i = (i + 1) & mask) {
        uint32_t v = pc->htab[i];
        if (!v)
            return BERTH_KUBE_NONE;
        if (pc->hash[v - 1] == h && image_name_equal(pc->name[v - 1], img, latest))
            return v - 1;
    }
}

static void *cache_alloc(size_t n, size_t size)
{
    return calloc(n ? n : 1, size ? size : 1);
}

static void images_free(struct kube_plugin_cache *pc)
{
    free(pc->htab);
    free(pc->hash);
    free(pc->name);
    free(pc->scaled);
    free(pc->first);
    free(pc->nodes);
    free(pc->count);
    free(pc->size);
    pc->htab = NULL;
    pc->hash = NULL;
    pc->name = NULL;
    pc->scaled = NULL;
    pc->first = NULL;
    pc->nodes = NULL;
    pc->count = NULL;
    pc->size = NULL;
    pc->nimages = 0;
}

/* The size node n reports for image name nm (first entry), 0 when none. */
static int64_t node_image_size(const berth_knode *nd, const char *nm)
{
    for (uint32_t j = 0; j < nd->nimages; j++)
        if (strcmp(str_or_empty(nd->images[j].name), nm) == 0)
            return nd->images[j].size;
    return 0;
}

/* Image id's size: as the scheduler cache keeps it, the first node (not
 * off) reporting the name. */
static void image_size_of(const kube_sched *s, struct kube_plugin_cache *pc, uint32_t id)
{
    for (uint32_t x = pc->first[id]; x < pc->first[id + 1]; x++) {
        uint32_t n = pc->nodes[x];
        if (!s->off || !s->off[n]) {
            pc->size[id] = node_image_size(&s->k->nodes[n], pc->name[id]);
            return;
        }
    }
    pc->size[id] = 0;
}

/* scaled = size x (nodes having the image / nodes), both counting only
 * nodes that are not off */
static void images_rescale(const kube_sched *s, struct kube_plugin_cache *pc)
{
    uint32_t total = s->off ? s->ncand : s->k->nnodes;
    for (uint32_t id = 0; id < pc->nimages; id++) {
        double spread = total ? (double)pc->count[id] / (double)total : 0;
        pc->scaled[id] = (int64_t)((double)pc->size[id] * spread);
    }
}

void kube_plugins_free(kube_sched *s)
{
    struct kube_plugin_cache *pc = s->pcache;
    if (!pc)
        return;
    images_free(pc);
    free(pc->sum);
    for (int k = 0; k < KUBE_MEMO_KINDS; k++)
        for (int w = 0; w < KUBE_MEMO_WAYS; w++)
            free(pc->memo[k].col[w]);
    free(pc);
    s->pcache = NULL;
}

/* The image part of the cache: names and the nodes having them over every
 * node; counts, sizes and scaled scores over the nodes that are not off (a
 * what-if session's exclusions update those in place, a spare slot's new
 * data rebuilds the part). 0 or BERTH_ENOMEM. */
static int images_build(kube_sched *s, struct kube_plugin_cache *pc)
{
    const berth_kcluster *k = s->k;
    size_t nnames = 0;
    for (uint32_t n = 0; n < k->nnodes; n++)
        nnames += k->nodes[n].nimages;
    uint32_t *count = NULL, *last = NULL;
    if (nnames > UINT32_MAX / 4)
        goto oom;
    uint32_t hcap = 16;
    while (hcap < 2 * nnames)
        hcap *= 2;
    pc->hcap = hcap;
    pc->htab = cache_alloc(hcap, sizeof *pc->htab);
    pc->hash = cache_alloc(nnames, sizeof *pc->hash);
    pc->name = cache_alloc(nnames, sizeof *pc->name);
    pc->scaled = cache_alloc(nnames, sizeof *pc->scaled);
    pc->first = cache_alloc(nnames + 1, sizeof *pc->first);
    pc->nodes = cache_alloc(nnames, sizeof *pc->nodes);
    pc->count = cache_alloc(nnames, sizeof *pc->count);
    pc->size = cache_alloc(nnames, sizeof *pc->size);
    count = cache_alloc(nnames, sizeof *count);
    last = cache_alloc(nnames, sizeof *last);
    if (!pc->htab || !pc->hash || !pc->name || !pc->scaled || !pc->first || !pc->nodes ||
        !pc->count || !pc->size || !count || !last)
        goto oom;
    /* Pass 1: distinct names and the number of nodes per name. */
    uint32_t mask = hcap - 1;
    for (uint32_t n = 0; n < k->nnodes; n++) {
        const berth_knode *nd = &k->nodes[n];
        for (uint32_t j = 0; j < nd->nimages; j++) {
            const char *nm = str_or_empty(nd->images[j].name);
            uint64_t h = image_hash(&pc->hkey, nm, 0);
            uint32_t i = (uint32_t)h & mask, id;
            for (;; i = (i + 1) & mask) {
                uint32_t v = pc->htab[i];
                if (!v) {
                    id = pc->nimages++;
                    pc->htab[i] = id + 1;
                    pc->hash[id] = h;
                    pc->name[id] = nm;
                    last[id] = BERTH_KUBE_NONE;
                    break;
                }
                if (pc->hash[v - 1] == h && strcmp(pc->name[v - 1], nm) == 0) {
                    id = v - 1;
                    break;
                }
            }
            if (last[id] != n) {
                last[id] = n;
                count[id]++;
                pc->count[id] += !s->off || !s->off[n];
            }
        }
    }
    /* Pass 2: CSR of nodes per name. */
    for (uint32_t id = 0; id < pc->nimages; id++) {
        pc->first[id + 1] = pc->first[id] + count[id];
        last[id] = BERTH_KUBE_NONE;
        count[id] = 0;
    }
    for (uint32_t n = 0; n < k->nnodes; n++) {
        const berth_knode *nd = &k->nodes[n];
        for (uint32_t j = 0; j < nd->nimages; j++) {
            const char *nm = str_or_empty(nd->images[j].name);
            uint32_t id = cache_find(pc, nm, 0, image_hash(&pc->hkey, nm, 0));
            if (last[id] != n) {
                last[id] = n;
                pc->nodes[pc->first[id] + count[id]++] = n;
            }
        }
    }
    for (uint32_t id = 0; id < pc->nimages; id++)
        image_size_of(s, pc, id);
    images_rescale(s, pc);
    free(count);
    free(last);
    pc->images_stale = 0;
    return 0;
oom:
    free(count);
    free(last);
    images_free(pc);
    return BERTH_ENOMEM;
}

/* Builds s's plugin cache once (and again if the node count changed; its
 * image part again after kube_plugins_node_changed). Returns 0 or
 * BERTH_ENOMEM; on failure the plugins fall back to the reference
 * computation. */
int kube_plugins_prepare(kube_sched *s)
{
    const berth_kcluster *k = s->k;
    struct kube_plugin_cache *pc = s->pcache;
    if (pc && pc->nnodes == k->nnodes) {
        if (pc->images_stale && images_build(s, pc))
            return BERTH_ENOMEM;
        return 0;
    }
    kube_plugins_free(s);
    pc = cache_alloc(1, sizeof *pc);
    if (!pc)
        return BERTH_ENOMEM;
    pc->nnodes = k->nnodes;
    berth_hashkey_new(&pc->hkey);
    s->pcache = pc;
    for (uint32_t n = 0; n < k->nnodes; n++)
        pc->any_unschedulable |= k->nodes[n].unschedulable != 0;
    pc->sum = cache_alloc(k->nnodes, sizeof *pc->sum);
    if (!pc->sum || images_build(s, pc)) {
        kube_plugins_free(s);
        return BERTH_ENOMEM;
    }
    return 0;
}

static const struct kube_plugin_cache *cache_of(kube_sched *s)
{
    if (s->reference)
        return NULL;
    if (kube_plugins_prepare(s) != 0)
        return NULL;
    return s->pcache;
}

/* ---- memoised per-spec columns ---- */

static int same_str(const char *a, const char *b) { return strcmp(str_or_empty(a), str_or_empty(b)) == 0; }

static int same_reqs(const berth_requirement *a, const berth_requirement *b, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (a[i].op != b[i].op || a[i].nvalues != b[i].nvalues || !same_str(a[i].key, b[i].key))
            return 0;
        for (uint32_t j = 0; j < a[i].nvalues; j++)
            if (!same_str(a[i].values[j], b[i].values[j]))
                return 0;
    }
    return 1;
}

static int same_term(const berth_kterm *a, const berth_kterm *b)
{
    return a->nexprs == b->nexprs && a->nfields == b->nfields &&
           same_reqs(a->exprs, b->exprs, a->nexprs) && same_reqs(a->fields, b->fields, a->nfields);
}

static int same_required(const berth_kpod *a, const berth_kpod *b)
{
    if (a->node_selector.n != b->node_selector.n || a->has_req_affinity != b->has_req_affinity ||
        a->nreq_terms != b->nreq_terms)
        return 0;
    for (uint32_t i = 0; i < a->node_selector.n; i++)
        if (!same_str(a->node_selector.items[i].key, b->node_selector.items[i].key) ||
            !same_str(a->node_selector.items[i].value, b->node_selector.items[i].value))
            return 0;
    for (uint32_t i = 0; i < a->nreq_terms; i++)
        if (!same_term(&a->req_terms[i], &b->req_terms[i]))
            return 0;
    return 1;
}

static int same_preferred(const berth_kpod *a, const berth_kpod *b)
{
    if (a->npref_terms != b->npref_terms)
        return 0;
    for (uint32_t i = 0; i < a->npref_terms; i++)
        if (a->pref_terms[i].weight != b->pref_terms[i].weight ||
            !same_term(&a->pref_terms[i].term, &b->pref_terms[i].term))
            return 0;
    return 1;
}

static int same_tolerations(const berth_kpod *a, const berth_kpod *b)
{
    if (a->ntols != b->ntols)
        return 0;
    for (uint32_t i = 0; i < a->ntols; i++) {
        const berth_toleration *x = &a->tols[i], *y = &b->tols[i];
        if (x->op != y->op || x->effect != y->effect || !same_str(x->key, y->key) ||
            !same_str(x->value, y->value))
            return 0;
    }
    return 1;
}

/* The part of the current profile a memoised column of `kind` depends on:
 * the profile itself when its addedAffinity applies to that kind (the
 * NodeAffinity filter: added required terms; its score: added preferred
 * terms), else NULL (columns are then shared by every profile). */
static const berth_kprofile *memo_prof(const kube_sched *s, int kind)
{
    const berth_kprofile *p = s->prof;
    if (!p)
        return NULL;
    if (kind == KUBE_MEMO_AFF_FILTER)
        return p->has_added_req ? p : NULL;
    if (kind == KUBE_MEMO_AFF_SCORE)
        return p->nadded_pref ? p : NULL;
    return NULL;
}

static int memo_same(int kind, const berth_kpod *a, const berth_kpod *b)
{
    switch (kind) {
    case KUBE_MEMO_AFF_FILTER: return same_required(a, b);
    case KUBE_MEMO_AFF_SCORE: return same_preferred(a, b);
    default: return same_tolerations(a, b);
    }
}

/* The memoised column for the spec of the request's pod, or NULL
 * (reference mode, no memory, or a small batch on a miss). *fresh = 1:
 * the caller must fill col[0..nnodes) before use. Pod specs, node labels,
 * taints and images must not change while s lives (set s->pcache = NULL
 * after changing them). */
static int64_t *memo_get(kube_sched *s, int kind, const kube_req *r, uint32_t n, int *fresh)
{
    *fresh = 0;
    if (s->reference || r->pod >= s->k->npods || r->p != &s->k->pods[r->pod] ||
        kube_plugins_prepare(s) != 0)
        return NULL;
    struct kube_memo *m = &s->pcache->memo[kind];
    const berth_kprofile *prof = memo_prof(s, kind);
    for (uint32_t w = 0; w < KUBE_MEMO_WAYS; w++)
        if (m->pod[w] && m->prof[w] == prof &&
            (m->pod[w] - 1 == r->pod || memo_same(kind, r->p, &s->k->pods[m->pod[w] - 1])))
            return m->col[w];
    uint32_t nn = s->k->nnodes;
    if ((uint64_t)n * 4 < nn)
        return NULL;
    uint32_t w = m->next;
    if (!m->col[w]) {
        m->col[w] = cache_alloc(nn, sizeof(int64_t));
        if (!m->col[w])
            return NULL;
    }
    m->next = (w + 1) % KUBE_MEMO_WAYS;
    m->pod[w] = r->pod + 1;
    m->prof[w] = prof;
    *fresh = 1;
    return m->col[w];
}

static int64_t memo_value(int kind, const kube_sched *s, const berth_kprofile *prof,
                          const berth_kpod *p, uint32_t c);

int kube_plugins_node_changed(kube_sched *s, uint32_t n, int data, int had_images)
{
    struct kube_plugin_cache *pc = s->pcache;
    if (!pc)
        return 0; /* built on first use from the current nodes */
    int all = 0;
    int new_images = data && (had_images || s->k->nodes[n].nimages);
    if (!new_images && pc->nimages && !pc->images_stale) {
        /* n joined or left the candidates (or an image-less spare slot was
         * filled or emptied): its images' counts and every image's spread
         * over the candidates change */
        const berth_knode *nd = &s->k->nodes[n];
        int on = !s->off || !s->off[n];
        for (uint32_t j = 0; j < nd->nimages && !data; j++) {
            const char *nm = str_or_empty(nd->images[j].name);
            uint32_t id = cache_find(pc, nm, 0, image_hash(&pc->hkey, nm, 0)), dup = 0;
            for (uint32_t i = 0; i < j && !dup; i++)
                dup = strcmp(str_or_empty(nd->images[i].name), nm) == 0;
            if (id == BERTH_KUBE_NONE || dup)
                continue;
            pc->count[id] = on ? pc->count[id] + 1 : pc->count[id] - 1;
            image_size_of(s, pc, id);
        }
        images_rescale(s, pc);
        all = 1;
    } else if (pc->images_stale || new_images) {
        /* a node's image list changed: rebuild the image part lazily */
        images_free(pc);
        pc->images_stale = 1;
        all = 1;
    }
    if (!data)
        return all;
    pc->any_unschedulable |= s->k->nodes[n].unschedulable != 0;
    for (int kind = 0; kind < KUBE_MEMO_KINDS; kind++)
        for (int w = 0; w < KUBE_MEMO_WAYS; w++)
            if (pc->memo[kind].pod[w] && pc->memo[kind].col[w])
                pc->memo[kind].col[w][n] =
                    memo_value(kind, s, pc->memo[kind].prof[w],
                               &s->k->pods[pc->memo[kind].pod[w] - 1], n);
    return all;
}

static const berth_kcontainer *container_at(const berth_kpod *p, uint32_t j);

int kube_plugins_pod_images(kube_sched *s, const berth_kpod *p)
{
    const struct kube_plugin_cache *pc = s->pcache;
    if (!pc || pc->images_stale)
        return 1;
    uint32_t nc = p->ninit + p->ncontainers;
    for (uint32_t j = 0; j < nc && pc->nimages; j++) {
        const char *img = str_or_empty(container_at(p, j)->image);
        int latest = image_needs_latest(img);
        if (cache_find(pc, img, latest, image_hash(&pc->hkey, img, latest)) != BERTH_KUBE_NONE)
            return 1;
    }
    return 0;
}

/* ---- NodeUnschedulable ---- */

static int tolerates_unschedulable(const berth_kpod *p)
{
    static const berth_taint t = {KUBE_UNSCHEDULABLE_TAINT, NULL, BERTH_EFFECT_NOSCHEDULE};
    return berth_tolerations_tolerate(p->tols, p->ntols, &t);
}

static void f_unschedulable(void *state, const void *req, const uint32_t *cand, uint32_t n,
                            uint8_t *v)
{
    kube_sched *s = state;
    const kube_req *r = req;
    const struct kube_plugin_cache *pc = cache_of(s);
    if (pc && !pc->any_unschedulable)
        return;
    if (tolerates_unschedulable(r->p))
        return;
    const berth_knode *nodes = s->k->nodes;
    for (uint32_t i = 0; i < n; i++)
        if (nodes[cand[i]].unschedulable)
            v[i] = BERTH_UNRESOLVABLE;
}

static void r_unschedulable(void *state, const void *req, uint32_t c, char *buf, size_t size)
{
    snprintf(buf, size, "node(s) were unschedulable");
}

/* ---- NodeName ---- */

static void f_node_name(void *state, const void *req, const uint32_t *cand, uint32_t n,
                        uint8_t *v)
{
    kube_sched *s = state;
    const kube_req *r = req;
    const char *name = kube_pod_node_name(s, r->p);
    if (!name || !name[0])
        return;
    uint32_t want = kube_node_by_name(s, name);
    for (uint32_t i = 0; i < n; i++)
        if (cand[i] != want)
            v[i] = BERTH_UNRESOLVABLE;
}

static void r_node_name(void *state, const void *req, uint32_t c, char *buf, size_t size)
{
    snprintf(buf, size, "node(s) didn't match the requested node name");
}

/* ---- TaintToleration ---- */

/* The first hard taint of node c that p does not tolerate, NULL when none:
 * read from the node's hard-taint set (a node without one, out of memory
 * when it came, from its own taints). */
static const berth_taint *untolerated(const kube_sched *s, const berth_kpod *p, uint32_t c)
{
    if (s->taint_set[c])
        return kube_taintsets_first_untolerated(s->tsets, s->taint_set[c], p->tols, p->ntols);
    const berth_knode *nd = &s->k->nodes[c];
    return s->has_hard_taint[c] ? berth_taints_first_untolerated(nd->taints, nd->ntaints, p->tols,
                                                                 p->ntols, BERTH_EFFECT_MASK_HARD)
                                : NULL;
}

/* TaintToleration's verdict for p on every node (1: an untolerated hard
 * taint), one test per hard-taint set: the nodes' own taints are not read
 * (scattered over the estate, they cost a miss or more a node). */
static void taint_column(const kube_sched *s, const berth_kpod *p, int64_t *col)
{
    uint32_t N = s->k->nnodes, nsets = kube_taintsets_count(s->tsets);
    int8_t *v = malloc((size_t)nsets + 1); /* per set: -1 not tested yet (NULL: per node) */
    if (v)
        memset(v, -1, (size_t)nsets + 1);
    for (uint32_t c = 0; c < N; c++) {
        uint32_t id = s->taint_set[c];
        if (!v || !id) { /* out of memory, or a node without a set */
            col[c] = untolerated(s, p, c) != NULL;
            continue;
        }
        if (v[id] < 0)
            v[id] = untolerated(s, p, c) != NULL;
        col[c] = v[id];
    }
    free(v);
}

static void f_taints(void *state, const void *req, const uint32_t *cand, uint32_t n, uint8_t *v)
{
    kube_sched *s = state;
    const berth_kpod *p = ((const kube_req *)req)->p;
    const uint8_t *hard = s->has_hard_taint;
    if (!p->ntols) {
        /* Nothing tolerated: any hard taint rejects. */
        for (uint32_t i = 0; i < n; i++)
            if (hard[cand[i]])
                v[i] = BERTH_UNRESOLVABLE;
        return;
    }
    int fresh;
    int64_t *col = memo_get(s, KUBE_MEMO_TAINT_FILTER, req, n, &fresh);
    if (col) {
        if (fresh)
            taint_column(s, p, col);
        for (uint32_t i = 0; i < n; i++)
            if (col[cand[i]])
                v[i] = BERTH_UNRESOLVABLE;
        return;
    }
    for (uint32_t i = 0; i < n; i++)
        if (hard[cand[i]] && untolerated(s, p, cand[i]))
            v[i] = BERTH_UNRESOLVABLE;
}

static void r_taints(void *state, const void *req, uint32_t c, char *buf, size_t size)
{
    kube_sched *s = state;
    const berth_kpod *p = ((const kube_req *)req)->p;
    const berth_taint *t = untolerated(s, p, c);
    if (t)
        snprintf(buf, size, "node(s) had untolerated taint {%s: %s}", str_or_empty(t->key),
                 str_or_empty(t->value));
    else
        snprintf(buf, size, "node(s) had untolerated taint");
}

uint32_t kube_taint_reason_code(const kube_sched *s, const kube_req *r, uint32_t c)
{
    (void)r;
    return s->taint_set[c] ? s->taint_set[c] : KUBE_NO_REASON_CODE; /* 0: no set, the text decides */
}

static int64_t node_prefer_count(const berth_knode *nd, const berth_kpod *p)
{
    const unsigned taint_mask = BERTH_EFFECT_BIT(BERTH_EFFECT_PREFERNOSCHEDULE);
    const unsigned tol_mask =
        BERTH_EFFECT_BIT(BERTH_EFFECT_ALL) | BERTH_EFFECT_BIT(BERTH_EFFECT_PREFERNOSCHEDULE);
    return (int64_t)berth_taints_count_untolerated(nd->taints, nd->ntaints, p->tols, p->ntols,
                                                   taint_mask, tol_mask);
}

static void s_taints(void *state, const void *req, const uint32_t *cand, uint32_t n, int64_t *out)
{
    kube_sched *s = state;
    const berth_kpod *p = ((const kube_req *)req)->p;
    const uint8_t *prefer = s->has_prefer_taint;
    const berth_knode *nodes = s->k->nodes;
    int fresh;
    int64_t *col = memo_get(s, KUBE_MEMO_TAINT_SCORE, req, n, &fresh);
    if (col) {
        if (fresh)
            for (uint32_t c = 0; c < s->k->nnodes; c++)
                col[c] = prefer[c] ? node_prefer_count(&nodes[c], p) : 0;
        for (uint32_t i = 0; i < n; i++)
            out[i] = col[cand[i]];
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t c = cand[i];
        out[i] = prefer[c] ? node_prefer_count(&nodes[c], p) : 0;
    }
}

/* DefaultNormalizeScore(MaxNodeScore, reverse). */
void kube_default_normalize(int64_t *scores, uint32_t n, int reverse)
{
    int64_t max = 0;
    for (uint32_t i = 0; i < n; i++)
        if (scores[i] > max)
            max = scores[i];
    if (max == 0) {
        if (reverse)
            for (uint32_t i = 0; i < n; i++)
                scores[i] = 100;
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        int64_t sc = 100 * scores[i] / max;
        scores[i] = reverse ? 100 - sc : sc;
    }
}

static void n_reverse(void *state, const void *req, int64_t *scores, uint32_t n)
{
    kube_default_normalize(scores, n, 1);
}

static void n_forward(void *state, const void *req, int64_t *scores, uint32_t n)
{
    kube_default_normalize(scores, n, 0);
}

/* ---- NodeAffinity ---- */

/* A matchFields requirement (upstream field selector): only
 * metadata.name has a value (others read as ""); In/NotIn with exactly one
 * value. Returns 1 match, 0 no match, -1 invalid (the term then matches
 * nothing, as upstream skips a term that fails to parse). */
static int field_matches(const berth_requirement *r, const char *node_name)
{
    if (r->nvalues != 1 || (r->op != BERTH_SEL_IN && r->op != BERTH_SEL_NOTIN))
        return -1;
    const char *have = r->key && strcmp(r->key, "metadata.name") == 0 ? node_name : "";
    int eq = strcmp(str_or_empty(have), str_or_empty(r->values[0])) == 0;
    return r->op == BERTH_SEL_IN ? eq : !eq;
}

/* A NodeSelectorTerm: AND of its expressions and fields; empty = nothing,
 * and so is a term holding a requirement that does not parse (upstream
 * nodeSelectorTerm.match returns its parse errors and no match). */
static int term_matches(const berth_kterm *t, const berth_knode *nd)
{
    if ((!t->nexprs && !t->nfields) || t->invalid)
        return 0;
    for (uint32_t i = 0; i < t->nexprs; i++)
        if (!berth_requirement_matches(&t->exprs[i], &nd->labels))
            return 0;
    for (uint32_t i = 0; i < t->nfields; i++)
        if (field_matches(&t->fields[i], nd->name) != 1)
            return 0;
    return 1;
}

static int node_selector_matches(const berth_kpod *p, const berth_knode *nd)
{
    for (uint32_t i = 0; i < p->node_selector.n; i++) {
        const berth_label *l = &p->node_selector.items[i];
        const char *have = berth_labels_get(&nd->labels, str_or_empty(l->key));
        if (!have || strcmp(have, str_or_empty(l->value)) != 0)
            return 0;
    }
    return 1;
}

static int required_affinity_matches(const berth_kpod *p, const berth_knode *nd)
{
    if (!node_selector_matches(p, nd))
        return 0;
    if (!p->has_req_affinity)
        return 1;
    for (uint32_t t = 0; t < p->nreq_terms; t++)
        if (term_matches(&p->req_terms[t], nd))
            return 1;
    return 0;
}

/* The profile's addedAffinity required NodeSelector (upstream
 * addedNodeSelector: terms ORed, none matches nothing); 1 without one. */
static int added_affinity_matches(const berth_kprofile *prof, const berth_knode *nd)
{
    if (!prof || !prof->has_added_req)
        return 1;
    for (uint32_t t = 0; t < prof->nadded_req; t++)
        if (term_matches(&prof->added_req[t], nd))
            return 1;
    return 0;
}

int berth_kube_node_affinity_matches(const berth_kpod *p, const berth_knode *nd)
{
    return required_affinity_matches(p, nd);
}

/* NodeAffinity's Filter: the profile's added affinity, then the pod's
 * nodeSelector and required affinity. */
static int affinity_fits(const berth_kprofile *prof, const berth_kpod *p, const berth_knode *nd)
{
    return added_affinity_matches(prof, nd) && required_affinity_matches(p, nd);
}

static void f_affinity(void *state, const void *req, const uint32_t *cand, uint32_t n,
                       uint8_t *v)
{
    kube_sched *s = state;
    const berth_kpod *p = ((const kube_req *)req)->p;
    const berth_kprofile *prof = s->prof;
    if (!p->node_selector.n && !p->has_req_affinity && !(prof && prof->has_added_req))
        return; /* upstream PreFilter: Skip */
    const berth_knode *nodes = s->k->nodes;
    int fresh;
    int64_t *col = memo_get(s, KUBE_MEMO_AFF_FILTER, req, n, &fresh);
    if (col) {
        if (fresh)
            for (uint32_t c = 0; c < s->k->nnodes; c++)
                col[c] = !affinity_fits(prof, p, &nodes[c]);
        for (uint32_t i = 0; i < n; i++)
            if (col[cand[i]])
                v[i] = BERTH_UNRESOLVABLE;
        return;
    }
    for (uint32_t i = 0; i < n; i++)
        if (!affinity_fits(prof, p, &nodes[cand[i]]))
            v[i] = BERTH_UNRESOLVABLE;
}

static void r_affinity(void *state, const void *req, uint32_t c, char *buf, size_t size)
{
    const kube_sched *s = state;
    (void)req;
    if (!added_affinity_matches(s->prof, &s->k->nodes[c]))
        snprintf(buf, size, "node(s) didn't match scheduler-enforced node affinity");
    else
        snprintf(buf, size, "node(s) didn't match Pod's node affinity/selector");
}

/* r_affinity's text as a code: which of its two texts */
uint32_t kube_affinity_reason_code(const kube_sched *s, const kube_req *r, uint32_t c)
{
    (void)r;
    return (uint32_t)added_affinity_matches(s->prof, &s->k->nodes[c]);
}

static int64_t pref_terms_sum(const berth_kpref_term *terms, uint32_t n, const berth_knode *nd)
{
    int64_t sum = 0;
    for (uint32_t t = 0; t < n; t++)
        if (terms[t].weight != 0 && term_matches(&terms[t].term, nd))
            sum += terms[t].weight;
    return sum;
}

/* NodeAffinity's Score: the profile's added preferred terms plus the pod's */
static int64_t preferred_sum(const berth_kprofile *prof, const berth_kpod *p, const berth_knode *nd)
{
    int64_t sum = pref_terms_sum(p->pref_terms, p->npref_terms, nd);
    if (prof && prof->nadded_pref)
        sum += pref_terms_sum(prof->added_pref, prof->nadded_pref, nd);
    return sum;
}

static void s_affinity(void *state, const void *req, const uint32_t *cand, uint32_t n,
                       int64_t *out)
{
    kube_sched *s = state;
    const berth_kpod *p = ((const kube_req *)req)->p;
    const berth_kprofile *prof = s->prof;
    if (!p->npref_terms && !(prof && prof->nadded_pref)) {
        memset(out, 0, (size_t)n * sizeof *out);
        return;
    }
    const berth_knode *nodes = s->k->nodes;
    int fresh;
    int64_t *col = memo_get(s, KUBE_MEMO_AFF_SCORE, req, n, &fresh);
    if (col) {
        if (fresh)
            for (uint32_t c = 0; c < s->k->nnodes; c++)
                col[c] = preferred_sum(prof, p, &nodes[c]);
        for (uint32_t i = 0; i < n; i++)
            out[i] = col[cand[i]];
        return;
    }
    for (uint32_t i = 0; i < n; i++)
        out[i] = preferred_sum(prof, p, &nodes[cand[i]]);
}

/* ---- NodeAffinity's PreScore error ---- */

typedef struct sbuf {
    char *s;
    size_t n, cap;
    int oom;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 256;
        while (nc < b->n + n + 1)
            nc *= 2;
        char *q = realloc(b->s, nc);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->s = q;
        b->cap = nc;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = 0;
}

static void sb_str(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

static void sb_fmt(sbuf *b, const char *fmt, uint32_t x)
{
    char tmp[32];
    int w = snprintf(tmp, sizeof tmp, fmt, x);
    if (w > 0)
        sb_put(b, tmp, (size_t)w < sizeof tmp ? (size_t)w : sizeof tmp - 1);
}

/* Go's %q of a string (valid UTF-8 assumed: bytes >= 0x80 are copied). */
static void sb_quote(sbuf *b, const char *s)
{
    static const char esc[] = "\a\b\f\n\r\t\v";
    static const char let[] = "abfnrtv";
    sb_str(b, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        const char *e = c ? strchr(esc, c) : NULL;
        char tmp[8];
        if (c == '"' || c == '\\') {
            tmp[0] = '\\';
            tmp[1] = (char)c;
            sb_put(b, tmp, 2);
        } else if (e) {
            tmp[0] = '\\';
            tmp[1] = let[e - esc];
            sb_put(b, tmp, 2);
        } else if (c < 0x20 || c == 0x7f) {
            snprintf(tmp, sizeof tmp, "\\x%02x", c);
            sb_put(b, tmp, 4);
        } else {
            sb_put(b, (const char *)&c, 1);
        }
    }
    sb_str(b, "\"");
}

/* strconv.ParseInt(s, 10, 64) succeeds: an optional sign, decimal digits,
 * within int64 */
static int go_int64(const char *s)
{
    int neg = *s == '-';
    if (*s == '+' || *s == '-')
        s++;
    if (!*s)
        return 0;
    uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return 0;
        uint64_t dgt = (uint64_t)(*s - '0');
        if (v > (lim - dgt) / 10)
            return 0;
        v = v * 10 + dgt;
    }
    return 1;
}

static int is_alnum_c(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* One invalid requirement's messages, as labels.NewRequirement words them
 * (the key, operator and number of values passed API validation). path:
 * "[i].matchExpressions[j]". Returns the number of messages written. */
static uint32_t requirement_errors(sbuf *b, uint32_t nmsg, const char *path,
                                   const berth_requirement *r)
{
    uint32_t start = nmsg;
    for (uint32_t v = 0; v < r->nvalues && (r->op == BERTH_SEL_GT || r->op == BERTH_SEL_LT); v++) {
        const char *val = str_or_empty(r->values[v]);
        if (go_int64(val))
            continue;
        sb_str(b, nmsg++ ? ", " : "");
        sb_str(b, path);
        sb_fmt(b, ".values[%u]: Invalid value: ", v);
        sb_quote(b, val);
        sb_str(b, ": for 'Gt', 'Lt' operators, the value must be an integer");
    }
    for (uint32_t v = 0; v < r->nvalues; v++) {
        const char *val = str_or_empty(r->values[v]);
        size_t n = strlen(val);
        int too_long = n > 63, bad = 0;
        if (n && (!is_alnum_c(val[0]) || !is_alnum_c(val[n - 1])))
            bad = 1;
        for (size_t i = 1; i + 1 < n && !bad; i++)
            bad = !is_alnum_c(val[i]) && val[i] != '-' && val[i] != '_' && val[i] != '.';
        if (!too_long && !bad)
            continue;
        sb_str(b, nmsg++ ? ", " : "");
        sb_str(b, path);
        sb_fmt(b, ".values[%u]", v);
        sb_str(b, "[");
        sb_str(b, str_or_empty(r->key));
        sb_str(b, "]: Invalid value: ");
        sb_quote(b, val);
        sb_str(b, ": ");
        if (too_long)
            sb_str(b, "must be no more than 63 characters");
        if (too_long && bad)
            sb_str(b, "; ");
        if (bad)
            sb_str(b, "a valid label must be an empty string or consist of alphanumeric "
                      "characters, '-', '_' or '.', and must start and end with an alphanumeric "
                      "character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
                      "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')");
    }
    return nmsg - start;
}

int kube_affinity_prescore_failed(const kube_sched *s, const berth_kpod *p)
{
    if (!s->prof || !(s->prof->scores & (1u << BERTH_KP_NODE_AFFINITY)))
        return 0;
    for (uint32_t t = 0; t < p->npref_terms; t++)
        if (p->pref_terms[t].weight != 0 && p->pref_terms[t].term.invalid)
            return 1;
    return 0;
}

char *kube_affinity_prescore_error(const kube_sched *s, const berth_kpod *p)
{
    if (!kube_affinity_prescore_failed(s, p))
        return NULL;
    sbuf b = {0};
    sbuf list = {0};
    uint32_t nmsg = 0;
    for (uint32_t t = 0; t < p->npref_terms; t++) {
        const berth_kpref_term *pt = &p->pref_terms[t];
        if (pt->weight == 0 || !pt->term.invalid)
            continue;
        for (uint32_t j = 0; j < pt->term.nexprs; j++) {
            const berth_requirement *r = &pt->term.exprs[j];
            if (!berth_requirement_validate(r, NULL))
                continue;
            char path[64];
            snprintf(path, sizeof path, "[%u].matchExpressions[%u]", t, j);
            nmsg += requirement_errors(&list, nmsg, path, r);
        }
    }
    /* upstream: errors.Flatten(errors.NewAggregate(...)).Error(): one
     * message as it is, several in brackets (every message names its own
     * path, so none repeats) */
    sb_str(&b, "running PreScore plugin \"NodeAffinity\": ");
    if (nmsg > 1)
        sb_str(&b, "[");
    sb_str(&b, list.s ? list.s : "");
    if (nmsg > 1)
        sb_str(&b, "]");
    free(list.s);
    if (b.oom || list.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

/* ---- NodePorts ---- */

static int ip_is_any(const char *ip) { return !ip || !ip[0] || strcmp(ip, "0.0.0.0") == 0; }

static int ports_conflict(const berth_kport *want, const berth_kport *used)
{
    if (want->port <= 0 || want->port != used->port || want->proto != used->proto)
        return 0;
    if (ip_is_any(want->ip) || ip_is_any(used->ip))
        return 1;
    return strcmp(want->ip, used->ip) == 0;
}

static int node_ports_conflict(const kube_sched *s, const berth_kpod *p, uint32_t c)
{
    const berth_kpod *pods = s->k->pods;
    const uint32_t *on = s->plist[c].pods;
    for (uint32_t j = 0; j < s->plist[c].n; j++) {
        const berth_kpod *q = &pods[on[j]];
        for (uint32_t a = 0; a < q->nports; a++)
            for (uint32_t b = 0; b < p->nports; b++)
                if (ports_conflict(&p->ports[b], &q->ports[a]))
                    return 1;
    }
    return 0;
}

static void f_ports(void *state, const void *req, const uint32_t *cand, uint32_t n, uint8_t *v)
{
    kube_sched *s = state;
    const berth_kpod *p = ((const kube_req *)req)->p;
    if (!p->nports)
        return;
    for (uint32_t i = 0; i < n; i++)
        if (node_ports_conflict(s, p, cand[i]))
            v[i] = BERTH_UNFIT;
}

static void r_ports(void *state, const void *req, uint32_t c, char *buf, size_t size)
{
    snprintf(buf, size, "node(s) didn't have free ports for the requested pod ports");
}

/* ---- VolumeZone ---- */

/* Upstream volumezone: the zone constraints of the pod's bound PVs (the
 * loader resolves pod -> PVC -> PV) against the node's labels; a claim or
 * volume missing from the input rejects every node with upstream's
 * PreFilter message. Every rejection is unresolvable. A pod without
 * claims touches no node. */
#define BETA_ZONE "failure-domain.beta.kubernetes.io/zone"
#define BETA_REGION "failure-domain.beta.kubernetes.io/region"
#define GA_ZONE "topology.kubernetes.io/zone"
#define GA_REGION "topology.kubernetes.io/region"

static int volume_value_in(const berth_kvolume_zone *z, const char *v)
{
    for (uint32_t i = 0; i < z->nvalues; i++)
        if (!strcmp(z->values[i], v))
            return 1;
    return 0;
}

int berth_kube_volume_zone_fits(const berth_kpod *p, const berth_labels *l, int any_region,
                                char *why, size_t size)
{
    if (p->vol_error) {
        if (why)
            snprintf(why, size, "%s", p->vol_error);
        return 0;
    }
    if (!p->nvol_zones)
        return 1;
    /* a node without any zone label is fine (single-zone clusters) */
    if (!berth_labels_get(l, BETA_ZONE) && !berth_labels_get(l, BETA_REGION) &&
        !berth_labels_get(l, GA_ZONE) && !berth_labels_get(l, GA_REGION))
        return 1;
    for (uint32_t i = 0; i < p->nvol_zones; i++) {
        const berth_kvolume_zone *z = &p->vol_zones[i];
        const char *v = berth_labels_get(l, z->key);
        int region = !strcmp(z->key, BETA_REGION) || !strcmp(z->key, GA_REGION);
        if (!v && !strcmp(z->key, BETA_ZONE)) /* translateToGALabel */
            v = berth_labels_get(l, GA_ZONE);
        else if (!v && !strcmp(z->key, BETA_REGION))
            v = berth_labels_get(l, GA_REGION);
        if (!v && region && any_region)
            continue;
        if (v && volume_value_in(z, v))
            continue;
        if (why) {
            size_t off = (size_t)snprintf(why, size, "PersistentVolume %s is in %s ", z->pv, z->key);
            for (uint32_t j = 0; j < z->nvalues && off < size; j++)
                off += (size_t)snprintf(why + off, size - off, "%s%s", j ? " or " : "", z->values[j]);
        }
        return 0;
    }
    return 1;
}

static void f_volume_zone(void *state, const void *req, const uint32_t *cand, uint32_t n,
                          uint8_t *v)
{
    const kube_sched *s = state;
    const berth_kpod *p = ((const kube_req *)req)->p;
    if (!p->vol_error && !p->nvol_zones)
        return;
    for (uint32_t i = 0; i < n; i++) {
        const berth_knode *nd = &s->k->nodes[cand[i]];
        if (!berth_kube_volume_zone_fits(p, &nd->labels, nd->any_region, NULL, 0))
            v[i] = BERTH_UNRESOLVABLE;
    }
}

static void r_volume_zone(void *state, const void *req, uint32_t c, char *buf, size_t size)
{
    const berth_kpod *p = ((const kube_req *)req)->p;
    snprintf(buf, size, "%s", p->vol_error ? p->vol_error : "node(s) had no available volume zone");
}

/* ---- ImageLocality ---- */

static int64_t image_priority(int64_t sum, uint32_t ncontainers)
{
    int64_t max = KUBE_IMG_MAX_CONTAINER_THRESHOLD * (int64_t)ncontainers;
    if (sum < KUBE_IMG_MIN_THRESHOLD)
        sum = KUBE_IMG_MIN_THRESHOLD;
    else if (sum > max)
        sum = max;
    return 100 * (sum - KUBE_IMG_MIN_THRESHOLD) / (max - KUBE_IMG_MIN_THRESHOLD);
}

static const berth_kcontainer *container_at(const berth_kpod *p, uint32_t j)
{
    return j < p->ninit ? &p->init[j] : &p->containers[j - p->ninit];
}

/* Reference: scan nodes and names directly. */
static void s_image_reference(const kube_sched *s, const berth_kpod *p, const uint32_t *cand,
                              uint32_t n, int64_t *out)
{
    const berth_kcluster *k = s->k;
    uint32_t nc = p->ninit + p->ncontainers;
    memset(out, 0, (size_t)n * sizeof *out);
    for (uint32_t j = 0; j < nc; j++) {
        const char *img = str_or_empty(container_at(p, j)->image);
        int latest = image_needs_latest(img);
        int64_t size = 0;
        uint32_t have = 0;
        for (uint32_t m = 0; m < k->nnodes; m++) {
            if (s->off && s->off[m])
                continue;
            const berth_knode *nd = &k->nodes[m];
            for (uint32_t x = 0; x < nd->nimages; x++)
                if (image_name_equal(str_or_empty(nd->images[x].name), img, latest)) {
                    if (!have)
                        size = nd->images[x].size;
                    have++;
                    break;
                }
        }
        if (!have)
            continue;
        double total = s->off ? (double)s->ncand : (double)k->nnodes;
        int64_t scaled = (int64_t)((double)size * ((double)have / total));
        for (uint32_t i = 0; i < n; i++) {
            const berth_knode *nd = &k->nodes[cand[i]];
            for (uint32_t x = 0; x < nd->nimages; x++)
                if (image_name_equal(str_or_empty(nd->images[x].name), img, latest)) {
                    out[i] += scaled;
                    break;
                }
        }
    }
    for (uint32_t i = 0; i < n; i++)
        out[i] = image_priority(out[i], nc);
}

static void s_image(void *state, const void *req, const uint32_t *cand, uint32_t n, int64_t *out)
{
    kube_sched *s = state;
    const berth_kpod *p = ((const kube_req *)req)->p;
    const struct kube_plugin_cache *pc = cache_of(s);
    if (!pc) {
        s_image_reference(s, p, cand, n, out);
        return;
    }
    uint32_t nc = p->ninit + p->ncontainers;
    uint32_t ids[16], nids = 0;
    int overflow = 0;
    if (pc->nimages) {
        for (uint32_t j = 0; j < nc; j++) {
            const char *img = str_or_empty(container_at(p, j)->image);
            int latest = image_needs_latest(img);
            uint32_t id = cache_find(pc, img, latest, image_hash(&pc->hkey, img, latest));
            if (id == BERTH_KUBE_NONE || !pc->scaled[id])
                continue;
            if (nids == 16) {
                overflow = 1;
                break;
            }
            ids[nids++] = id;
        }
    }
    if (overflow) {
        s_image_reference(s, p, cand, n, out);
        return;
    }
    if (!nids) {
        /* No image of the pod on any node: every sum clamps to the minimum. */
        memset(out, 0, (size_t)n * sizeof *out);
        return;
    }
    int64_t *sum = pc->sum;
    for (uint32_t j = 0; j < nids; j++)
        for (uint32_t x = pc->first[ids[j]]; x < pc->first[ids[j] + 1]; x++)
            sum[pc->nodes[x]] += pc->scaled[ids[j]];
    for (uint32_t i = 0; i < n; i++)
        out[i] = image_priority(sum[cand[i]], nc);
    for (uint32_t j = 0; j < nids; j++)
        for (uint32_t x = pc->first[ids[j]]; x < pc->first[ids[j] + 1]; x++)
            sum[pc->nodes[x]] = 0;
}

/* One entry of a memoised column (the same formulas the plugins use to
 * fill one). */
static int64_t memo_value(int kind, const kube_sched *s, const berth_kprofile *prof,
                          const berth_kpod *p, uint32_t c)
{
    const berth_knode *nd = &s->k->nodes[c];
    switch (kind) {
    case KUBE_MEMO_AFF_FILTER: return !affinity_fits(prof, p, nd);
    case KUBE_MEMO_AFF_SCORE: return preferred_sum(prof, p, nd);
    case KUBE_MEMO_TAINT_FILTER: return untolerated(s, p, c) != NULL;
    default: return s->has_prefer_taint[c] ? node_prefer_count(nd, p) : 0;
    }
}

/* Before a batch of n candidates is filtered or scored in parallel chunks
 * (berth_profile.prepare, kube/sched.c): the plugin cache and every
 * memoised column the pod's first call would fill, filled here on the
 * calling thread with the values the plugins would write, so that the
 * chunks only read them. */
int kube_plugins_par_prepare(kube_sched *s, const kube_req *r, uint32_t n)
{
    if (s->reference)
        return 0;
    if (kube_plugins_prepare(s))
        return BERTH_ENOMEM;
    const berth_kpod *p = r->p;
    const berth_kprofile *prof = s->prof;
    int want[KUBE_MEMO_KINDS];
    want[KUBE_MEMO_AFF_FILTER] = p->node_selector.n || p->has_req_affinity ||
                                 (prof && prof->has_added_req);
    want[KUBE_MEMO_AFF_SCORE] = p->npref_terms || (prof && prof->nadded_pref);
    want[KUBE_MEMO_TAINT_FILTER] = p->ntols != 0;
    want[KUBE_MEMO_TAINT_SCORE] = 1;
    for (int kind = 0; kind < KUBE_MEMO_KINDS; kind++) {
        int fresh;
        int64_t *col = want[kind] ? memo_get(s, kind, r, n, &fresh) : NULL;
        if (col && fresh && kind == KUBE_MEMO_TAINT_FILTER)
            taint_column(s, p, col);
        else if (col && fresh)
            for (uint32_t c = 0; c < s->k->nnodes; c++)
                col[c] = memo_value(kind, s, prof, p, c);
    }
    return 0;
}

/* ---- plugin objects (tabled in kube/plugins.c) ---- */

const berth_filter_plugin kube_unschedulable_filter = {BERTH_PLUGIN_VERSION, "NodeUnschedulable",
                                                       f_unschedulable, r_unschedulable};
const berth_filter_plugin kube_node_name_filter = {BERTH_PLUGIN_VERSION, "NodeName", f_node_name,
                                                   r_node_name};
const berth_filter_plugin kube_taint_filter = {BERTH_PLUGIN_VERSION, "TaintToleration", f_taints,
                                               r_taints};
const berth_score_plugin kube_taint_score = {BERTH_PLUGIN_VERSION, "TaintToleration", s_taints,
                                             n_reverse, 1};
const berth_filter_plugin kube_affinity_filter = {BERTH_PLUGIN_VERSION, "NodeAffinity",
                                                  f_affinity, r_affinity};
const berth_score_plugin kube_affinity_score = {BERTH_PLUGIN_VERSION, "NodeAffinity", s_affinity,
                                                n_forward, 1};
const berth_filter_plugin kube_ports_filter = {BERTH_PLUGIN_VERSION, "NodePorts", f_ports,
                                               r_ports};
const berth_filter_plugin kube_volume_zone_filter = {BERTH_PLUGIN_VERSION, "VolumeZone",
                                                     f_volume_zone, r_volume_zone};
const berth_score_plugin kube_image_score = {BERTH_PLUGIN_VERSION, "ImageLocality", s_image, NULL};
