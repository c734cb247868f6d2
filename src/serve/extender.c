/* serve/extender.c - the kube-scheduler extender protocol
 * (k8s.io/kube-scheduler/extender/v1) over the kube engine: POST
 * /v1/extender/filter (ExtenderArgs -> ExtenderFilterResult), POST
 * /v1/extender/prioritize (ExtenderArgs -> HostPriorityList, scores 0..10),
 * POST /v1/extender/bind (ExtenderBindingArgs -> ExtenderBindingResult) and
 * PUT /v1/kube/nodes (the node cache nodeCacheCapable calls name).
 *
 * A call builds a throwaway berth_kcluster: the nodes (the request's full
 * v1.Node objects, or for nodeCacheCapable the named nodes copied from the
 * cache), the pods bound through bind on those nodes (bindings.c), and the
 * pod; then one berth_kube_schedule with detail over every node
 * (percentageOfNodesToScore 100) gives each node's filter verdict with
 * kube-scheduler's reasons and the weighted totals of the feasible ones.
 * Upstream objects carry no kind/apiVersion, so the located document tree
 * of the body is wrapped with them (error messages keep body:line:column).
 * The node cache is reference counted: a call holds the cache it copied
 * node structs from (their strings live in its arena) until it ends; its
 * names are found through the shared keyed index (berth/nameidx.h), and a
 * decision's reason texts through a table keyed per extender (berth/hash.h).
 * nodenames calls take the fast path below: kept name sets, kept cycles,
 * warm scheduler states, and per state the results of the last pod classes
 * (a replica is answered from its class's result and kept reply). */
#include "berth/grow.h"
#include "berth/hash.h"
#include "berth/nameidx.h"
#include "serve/serve.h"

#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "berth/doc.h"
#include "berth/kprobe.h"
#include "berth/kube.h"
#include "berth/report.h"
#include "berth/time.h"

#define EXT_MAX_SCORE 10 /* MaxExtenderPriority */

typedef struct node_cache {
    berth_kcluster k;  /* nodes sorted by name */
    berth_nameidx names; /* name -> node (keyed: the names are the client's) */
    int indexed;       /* names holds every node (else out of memory) */
    uint64_t gen;      /* serve_extender.cache_gen when it was set */
    int refs;
} node_cache;

#define EXT_CYCLES 8 /* scheduling cycles kept for the calls that follow */
#define EXT_NAMESETS 4 /* nodenames arrays kept with their decoding */
#define EXT_WARM 4 /* warm scheduler states kept */
typedef struct ext_cycle ext_cycle;
typedef struct ext_names ext_names;
typedef struct ext_warm ext_warm;

struct serve_extender {
    serve_bindings *bind;
    berth_hashkey hkey;  /* the reason-text tables' (text_intern), drawn at open */
    pthread_mutex_t mu; /* the cache pointer, the cycles and reference counts */
    node_cache *cache;
    uint64_t cache_gen;
    ext_cycle *cycles[EXT_CYCLES]; /* ring, the next to replace at cycle_next */
    unsigned cycle_next;
    uint64_t fast_calls, fast_hits; /* calls the fast path answered; of those, from a kept cycle */
    ext_names *names[EXT_NAMESETS]; /* ring, the next to replace at names_next */
    unsigned names_next;
    uint64_t names_ids;            /* ext_names.id of the last array decoded */
    uint64_t cycle_ids;            /* ext_cycle.id of the last cycle made */
    uint64_t seen_last;            /* the cycle whose pod was recorded last (seen_record) */
    ext_warm *warm[EXT_WARM];      /* idle or busy (in use by one call) */
    uint64_t warm_tick;
    uint64_t warm_builds, warm_probes; /* states built; cycles answered from one */
    uint64_t warm_classed;         /* pods answered by their class's result (no cycle) */
    int warm_off;                  /* serve_extender_set_warm(x, 0): every cycle cold */
};

/* ---- the node cache ---- */

static void cache_unref(serve_extender *x, node_cache *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&x->mu);
    int last = --c->refs == 0;
    pthread_mutex_unlock(&x->mu);
    if (last) {
        berth_nameidx_free(&c->names);
        berth_kube_free(&c->k);
        free(c);
    }
}

static node_cache *cache_ref(serve_extender *x)
{
    pthread_mutex_lock(&x->mu);
    node_cache *c = x->cache;
    if (c)
        c->refs++;
    pthread_mutex_unlock(&x->mu);
    return c;
}

static int cmp_knode(const void *a, const void *b)
{
    return strcmp(((const berth_knode *)a)->name, ((const berth_knode *)b)->name);
}

/* The cache node named s[0..n), BERTH_KUBE_NONE when none. */
static uint32_t cache_find(const node_cache *c, const char *s, size_t n)
{
    if (!c || !c->indexed)
        return BERTH_KUBE_NONE;
    uint32_t i = berth_nameidx_find_n(&c->names, s, n);
    return i == BERTH_NAMEIDX_NONE ? BERTH_KUBE_NONE : i;
}

/* Makes k (moved in) the cache: nodes sorted by name, and the name index
 * every later nodenames call looks its names up in, built once here. */
static void cache_set(serve_extender *x, berth_kcluster *k)
{
    node_cache *c = calloc(1, sizeof *c);
    if (!c) {
        berth_kube_free(k);
        return;
    }
    c->k = *k;
    memset(k, 0, sizeof *k);
    c->refs = 1;
    if (c->k.nnodes > 1)
        qsort(c->k.nodes, c->k.nnodes, sizeof *c->k.nodes, cmp_knode);
    /* without it the fast path steps aside (ext_fast); of equal names the
     * first (lowest index) is found */
    int ok = !berth_nameidx_reserve(&c->names, c->k.nnodes);
    for (uint32_t n = 0; n < c->k.nnodes && ok; n++)
        ok = berth_nameidx_add(&c->names, c->k.nodes[n].name, n, NULL) >= 0;
    c->indexed = ok;
    pthread_mutex_lock(&x->mu);
    node_cache *old = x->cache;
    c->gen = ++x->cache_gen;
    x->cache = c;
    pthread_mutex_unlock(&x->mu);
    cache_unref(x, old);
}

static uint32_t find_node(const berth_kcluster *k, const char *name)
{
    berth_knode key = {.name = name};
    const berth_knode *n = k->nnodes ? bsearch(&key, k->nodes, k->nnodes, sizeof *k->nodes,
                                               cmp_knode)
                                     : NULL;
    return n ? (uint32_t)(n - k->nodes) : BERTH_KUBE_NONE;
}

int serve_extender_open(const char *db, serve_extender **out, berth_error *e)
{
    *out = NULL;
    serve_extender *x = calloc(1, sizeof *x);
    if (!x)
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    pthread_mutex_init(&x->mu, NULL);
    berth_hashkey_new(&x->hkey);
    int rc = serve_bindings_open(db, &x->bind, e);
    if (rc) {
        serve_extender_close(x);
        return rc;
    }
    *out = x;
    return 0;
}

static void cycle_free(ext_cycle *c);
static void names_free(ext_names *s);
static void warm_free(serve_extender *x, ext_warm *w);

void serve_extender_close(serve_extender *x)
{
    if (!x)
        return;
    /* no call runs any more: every reference is the rings' and the pool's */
    for (unsigned i = 0; i < EXT_CYCLES; i++)
        cycle_free(x->cycles[i]);
    for (unsigned i = 0; i < EXT_NAMESETS; i++)
        names_free(x->names[i]);
    for (unsigned i = 0; i < EXT_WARM; i++)
        warm_free(x, x->warm[i]);
    cache_unref(x, x->cache);
    serve_bindings_close(x->bind);
    pthread_mutex_destroy(&x->mu);
    free(x);
}

/* ---- helpers ---- */

/* Object member by name, case-insensitively after an exact miss (Go's
 * encoding/json matches field names that way). */
static json_t *jget(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (v || !json_is_object(o))
        return v;
    const char *k;
    json_object_foreach(o, k, v) if (!strcasecmp(k, key)) return v;
    return NULL;
}

static const char *jstr(json_t *o, const char *key)
{
    return json_string_value(jget(o, key));
}

static berth_node *bget(const berth_node *m, const char *key)
{
    berth_node *v = berth_node_get(m, key);
    if (v || !m || m->type != BERTH_NODE_MAP)
        return v;
    for (size_t i = 0; i < m->n; i++)
        if (m->entries[i].key->type == BERTH_NODE_SCALAR && !strcasecmp(m->entries[i].key->str, key))
            return berth_node_is_null(m->entries[i].value) ? NULL : m->entries[i].value;
    return NULL;
}

static berth_node *scalar(berth_arena *a, const berth_node *at, const char *s, int quoted)
{
    berth_node *n = berth_arena_alloc(a, sizeof *n);
    if (n)
        *n = (berth_node){.type = BERTH_NODE_SCALAR, .line = at->line, .col = at->col,
                          .quoted = quoted, .str = s};
    return n;
}

/* m with kind and apiVersion added when missing (upstream objects inside
 * ExtenderArgs carry neither). NULL when out of memory. */
static berth_node *with_kind(berth_arena *a, berth_node *m, const char *kind)
{
    if (m->type != BERTH_NODE_MAP)
        return m;
    int has_kind = berth_node_get(m, "kind") != NULL;
    int has_api = berth_node_get(m, "apiVersion") != NULL;
    if (has_kind && has_api)
        return m;
    berth_node *n = berth_arena_alloc(a, sizeof *n);
    berth_map_entry *en = berth_arena_alloc(a, (m->n + 2) * sizeof *en);
    if (!n || !en)
        return NULL;
    *n = *m;
    memcpy(en, m->entries, m->n * sizeof *en);
    n->entries = en;
    const char *add[2][2] = {{"kind", kind}, {"apiVersion", "v1"}};
    int need[2] = {!has_kind, !has_api};
    for (int i = 0; i < 2; i++) {
        if (!need[i])
            continue;
        /* drop an explicit null of the same key first */
        for (size_t j = 0; j < n->n; j++)
            if (!strcmp(en[j].key->str, add[i][0])) {
                memmove(&en[j], &en[j + 1], (n->n - j - 1) * sizeof *en);
                n->n--;
                break;
            }
        berth_node *k = scalar(a, m, add[i][0], 0), *v = scalar(a, m, add[i][1], 1);
        if (!k || !v)
            return NULL;
        en[n->n++] = (berth_map_entry){k, v};
    }
    return n;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int has_name(const char *const *sorted, size_t n, const char *name)
{
    return n && bsearch(&name, sorted, n, sizeof *sorted, cmp_str) != NULL;
}

/* ---- one extender call ---- */

enum { V_UNKNOWN, V_FEASIBLE, V_UNFIT, V_UNRESOLVABLE };

typedef struct ext_call {
    serve_extender *x;
    json_t *root, *pod, *items, *names;
    const char **cand;      /* candidate node names, request order */
    const char **sorted;    /* the same, sorted */
    size_t ncand;
    berth_kcluster k;
    node_cache *cache;      /* held (nodeCacheCapable) */
    serve_bound *bound;
    int full;               /* nodes given as objects (nodeCacheCapable false) */
    uint32_t pod_ix;        /* index of the pod in k */
    int decided;
    unsigned char *verdict; /* per k node */
    const char **reason;    /* per k node (a failed one: one of texts) */
    char **texts;           /* the distinct reason texts, ntexts of them (owned) */
    uint32_t ntexts;
    int64_t *total, max_total;
    uint32_t nfeasible;     /* nodes V_FEASIBLE */
    char key[600];
    const char *uid;
} ext_call;

static void texts_free(char **texts, uint32_t n)
{
    for (uint32_t i = 0; texts && i < n; i++)
        free(texts[i]);
    free(texts);
}

/* Forgets q's verdicts (freed). */
static void call_drop_verdicts(ext_call *q)
{
    texts_free(q->texts, q->ntexts);
    free(q->reason);
    free(q->verdict);
    free(q->total);
    q->texts = NULL;
    q->ntexts = 0;
    q->reason = NULL;
    q->verdict = NULL;
    q->total = NULL;
    q->decided = 0;
    q->max_total = 0;
    q->nfeasible = 0;
}

static void call_free(ext_call *q)
{
    call_drop_verdicts(q);
    free(q->bound);
    free(q->cand);
    free(q->sorted);
    berth_kube_free(&q->k);
    cache_unref(q->x, q->cache);
    json_decref(q->root);
}

static int unresolvable(berth_kplugin p)
{
    return p == BERTH_KP_NODE_UNSCHEDULABLE || p == BERTH_KP_NODE_NAME ||
           p == BERTH_KP_TAINT_TOLERATION || p == BERTH_KP_NODE_AFFINITY ||
           p == BERTH_KP_VOLUME_ZONE;
}

/* Appends s[0..n) to text[0..*len) as far as it fits in size - 1 bytes. */
static void text_add(char *text, size_t size, size_t *len, const char *s, size_t n)
{
    size_t room = size - 1 - *len;
    n = n < room ? n : room;
    memcpy(text + *len, s, n);
    *len += n;
    text[*len] = 0;
}

#define EXT_TEXT_TABLE 1024 /* slots of a decision's reason-text index (half used at most) */

/* The kept reason text equal to text[0..len) (interned through tab, of
 * EXT_TEXT_TABLE slots, when not NULL), or a new copy added to q->texts;
 * NULL out of memory. */
static const char *text_intern(ext_call *q, uint32_t *tab, const char *text, size_t len,
                               uint32_t *cap)
{
    uint32_t i = 0;
    if (tab)
        for (i = (uint32_t)berth_hash_keyed(&q->x->hkey, text, len) & (EXT_TEXT_TABLE - 1); tab[i];
             i = (i + 1) & (EXT_TEXT_TABLE - 1))
            if (!strcmp(q->texts[tab[i] - 1], text))
                return q->texts[tab[i] - 1];
    if (berth_grow((void **)&q->texts, cap, q->ntexts + 1, sizeof *q->texts, 0))
        return NULL;
    char *t = malloc(len + 1);
    if (!t)
        return NULL;
    memcpy(t, text, len + 1);
    q->texts[q->ntexts++] = t;
    if (tab && q->ntexts < EXT_TEXT_TABLE / 2)
        tab[i] = q->ntexts;
    return t;
}

static void on_decision(void *ctx, const berth_kcluster *k, const berth_kdecision *d)
{
    ext_call *q = ctx;
    if ((q->pod_ix != BERTH_KUBE_NONE && d->pod != q->pod_ix) || q->decided)
        return;
    q->decided = 1;
    uint32_t n = k->nnodes ? k->nnodes : 1;
    const uint32_t *feasible = d->feasible;
    const int64_t *totals = d->totals;
    uint32_t nf = feasible ? d->nfeasible : 0;
    /* reasons only when a node failed */
    int failed = nf < k->nnodes;
    q->verdict = calloc(n, 1);
    q->reason = calloc(failed ? n : 1, sizeof *q->reason);
    q->total = calloc(n, sizeof *q->total);
    if (!q->verdict || !q->reason || !q->total)
        return;
    unsigned char *verdict = q->verdict;
    int64_t *total = q->total, max_total = q->max_total;
    if (totals) {
        for (uint32_t i = 0; i < nf; i++) {
            verdict[feasible[i]] = V_FEASIBLE;
            total[feasible[i]] = totals[i];
            max_total = totals[i] > max_total ? totals[i] : max_total;
        }
    } else {
        for (uint32_t i = 0; i < nf; i++)
            verdict[feasible[i]] = V_FEASIBLE;
    }
    q->max_total = max_total;
    q->nfeasible = nf;
    if (!failed || !d->fail_mask)
        return;
    /* nodes failing for the same reasons share one text (a table of the
     * first EXT_TEXT_TABLE / 2 texts; the ones after it are copied) */
    uint32_t *tab = calloc(EXT_TEXT_TABLE, sizeof *tab), cap = 0;
    for (uint32_t node = 0; node < k->nnodes; node++) {
        uint32_t mask = d->fail_mask[node];
        if (!mask || verdict[node] == V_FEASIBLE)
            continue;
        char text[2048] = "";
        size_t len = 0;
        int unres = 0;
        for (uint32_t f = 0; f < d->nfilter_plugins && f < 32; f++) {
            if (!(mask & (1u << f)))
                continue;
            char buf[512];
            berth_kube_decision_reason(d, node, d->filter_plugins[f], buf, sizeof buf);
            const char *why = buf;
            if (!buf[0] && !(why = berth_kplugin_name(d->filter_plugins[f])))
                why = "(null)";
            size_t wn = strlen(why);
            unres |= unresolvable(d->filter_plugins[f]);
            if (len)
                text_add(text, sizeof text, &len, ", ", 2);
            text_add(text, sizeof text, &len, why, wn < sizeof buf - 1 ? wn : sizeof buf - 1);
        }
        verdict[node] = unres ? V_UNRESOLVABLE : V_UNFIT;
        q->reason[node] = text_intern(q, tab, text, len, &cap);
    }
    free(tab);
}

static int bad(serve_reply *r, const char *msg)
{
    serve_reply_error(r, 400, "bad_input", msg);
    return -1;
}

/* The checks of ExtenderArgs.pod (q->pod); sets q->key and q->uid. 0, or
 * -1 with the error reply set. */
static int pod_check(ext_call *q, serve_reply *r)
{
    if (!json_is_object(q->pod))
        return bad(r, "pod: ExtenderArgs needs the pod to schedule (a v1 Pod object)");
    json_t *meta = jget(q->pod, "metadata");
    const char *name = jstr(meta, "name"), *ns = jstr(meta, "namespace");
    const char *kind = jstr(q->pod, "kind");
    if (!name || !*name)
        return bad(r, "pod.metadata.name: required");
    if (kind && strcmp(kind, "Pod"))
        return bad(r, "pod.kind: expected Pod");
    if (json_string_length(jget(jget(q->pod, "spec"), "nodeName")))
        return bad(r, "pod.spec.nodeName: the pod is already bound");
    snprintf(q->key, sizeof q->key, "%.255s/%.255s", ns && *ns ? ns : "default", name);
    q->uid = jstr(meta, "uid");
    return 0;
}

/* Whether ?profile= names a profile berth has (NULL: default-scheduler). */
static int profile_known(const char *profile)
{
    return !profile || !strcmp(profile, "default-scheduler") || !strcmp(profile, "usage-aware");
}

/* Whether ?profile= names a profile berth has (NULL: default-scheduler);
 * fills prof for k when it does. */
static int profile_of(berth_kcluster *k, const char *profile, berth_kprofile *prof)
{
    const char *pname = profile ? profile : "default-scheduler";
    if (!strcmp(pname, "default-scheduler"))
        berth_kube_default_profile(k, prof);
    else if (!strcmp(pname, "usage-aware"))
        berth_kube_usage_aware_profile(k, prof);
    else
        return 0;
    return 1;
}

/* Loads docs[0..nd) (node_docs nodes, the bound pods, then the pod) into
 * q->k, which may hold nodes already, and runs one scheduling cycle over
 * every node with every filter's verdict (on_decision). 0, or -1 with the
 * error reply set. */
static int schedule(ext_call *q, berth_node **docs, size_t nd, size_t node_docs,
                    const char *profile, serve_reply *r)
{
    char msg[400];
    berth_error e;
    berth_error_clear(&e);
    berth_source all = {.path = "body", .ndocs = nd, .docs = docs};
    uint32_t pods_before = q->k.npods;
    int rc = berth_kube_load(&q->k, &all, 0, &e);
    if (rc) {
        serve_reply_failed(r, rc, e.msg);
        return -1;
    }
    if (q->k.npods != pods_before + nd - node_docs) {
        serve_reply_error(r, 400, "bad_input", "pod: expected one v1 Pod object");
        return -1;
    }
    q->pod_ix = q->k.npods - 1;
    /* the extender sees no PersistentVolumeClaims: kube-scheduler's own
     * VolumeZone has judged the pod's volumes before calling us */
    q->k.pods[q->pod_ix].vol_error = NULL;
    q->k.pods[q->pod_ix].nvol_zones = 0;

    /* one scheduling cycle over every node, with every filter's verdict */
    berth_kprofile prof;
    if (!profile_of(&q->k, profile, &prof)) {
        snprintf(msg, sizeof msg,
                 "profile: no profile named '%.200s' (default-scheduler or usage-aware)", profile);
        return bad(r, msg);
    }
    prof.percentage_of_nodes_to_score = 100;
    berth_kube_options opt = {.profile = &prof, .tiebreak = BERTH_TIE_FIRST, .detail = 1,
                              .on_decision = on_decision, .ctx = q};
    rc = berth_kube_schedule(&q->k, &opt, &e);
    if ((rc && rc != BERTH_ENOFIT) || !q->decided || !q->verdict || !q->reason || !q->total) {
        serve_reply_error(r, 500, "internal", rc && rc != BERTH_ENOFIT ? e.msg : "out of memory");
        return -1;
    }
    return 0;
}

/* Remembers the pod for a later bind (serve_bindings_seen), once per cycle
 * id: kube-scheduler's prioritize after its filter, answered from the same
 * cycle (id != 0), records nothing new when the last record was that
 * cycle's (same key, uid and text); id 0 always records. Under x->mu, so
 * the order of records is the order of seen_last. */
static void seen_record(serve_extender *x, uint64_t id, const char *key, const char *uid,
                        const char *text)
{
    pthread_mutex_lock(&x->mu);
    if (!id || x->seen_last != id) {
        serve_bindings_seen(x->bind, key, uid, text);
        x->seen_last = id;
    }
    pthread_mutex_unlock(&x->mu);
}

/* Parses ExtenderArgs and runs the pod against the nodes. 0, or -1 with
 * the error reply set. */
static int run(serve_extender *x, const char *body, size_t len, const char *profile, ext_call *q,
               serve_reply *r)
{
    char msg[1200];
    memset(q, 0, sizeof *q);
    q->x = x;
    berth_kube_init(&q->k);
    json_error_t je;
    q->root = json_loadb(body ? body : "", len, 0, &je);
    if (!q->root) {
        snprintf(msg, sizeof msg, "body:%d:%d: %s", je.line, je.column, je.text);
        return bad(r, msg);
    }
    if (!json_is_object(q->root))
        return bad(r, "body: expected ExtenderArgs: {\"pod\": {...}, \"nodes\": {\"items\": "
                      "[...]}} or {\"pod\": {...}, \"nodenames\": [...]}");
    q->pod = jget(q->root, "pod");
    if (pod_check(q, r))
        return -1;
    json_t *nodes = jget(q->root, "nodes");
    if (nodes && !json_is_null(nodes)) {
        if (!json_is_object(nodes))
            return bad(r, "nodes: expected a v1 NodeList ({\"items\": [...]})");
        q->full = 1;
        q->items = jget(nodes, "items");
        if (json_is_null(q->items))
            q->items = NULL; /* an empty NodeList */
        if (q->items && !json_is_array(q->items))
            return bad(r, "nodes.items: expected an array of v1 Node objects");
    }
    q->names = jget(q->root, "nodenames");
    if (json_is_null(q->names))
        q->names = NULL;
    if (q->names && !json_is_array(q->names))
        return bad(r, "nodenames: expected an array of node names");
    if (!q->full && !q->names)
        return bad(r, "body: ExtenderArgs needs nodes (nodeCacheCapable: false) or "
                      "nodenames (nodeCacheCapable: true)");
    size_t n = q->full ? json_array_size(q->items) : json_array_size(q->names);
    q->cand = malloc((n ? n : 1) * sizeof *q->cand);
    q->sorted = malloc((n ? n : 1) * sizeof *q->sorted);
    if (!q->cand || !q->sorted) {
        serve_reply_error(r, 500, "internal", "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *it = q->full ? json_array_get(q->items, i) : json_array_get(q->names, i);
        const char *nm = q->full ? jstr(jget(it, "metadata"), "name") : json_string_value(it);
        const char *nk = q->full ? jstr(it, "kind") : NULL;
        if (!nm || !*nm) {
            snprintf(msg, sizeof msg, "%s[%zu]%s: expected a node name", q->full ? "nodes.items" : "nodenames",
                     i, q->full ? ".metadata.name" : "");
            return bad(r, msg);
        }
        if (nk && strcmp(nk, "Node")) {
            snprintf(msg, sizeof msg, "nodes.items[%zu].kind: expected Node", i);
            return bad(r, msg);
        }
        q->cand[i] = q->sorted[i] = nm;
    }
    q->ncand = n;
    qsort(q->sorted, n, sizeof *q->sorted, cmp_str);
    for (size_t i = 1; i < n; i++)
        if (!strcmp(q->sorted[i - 1], q->sorted[i])) {
            snprintf(msg, sizeof msg, "node '%.300s' appears twice", q->sorted[i]);
            return bad(r, msg);
        }

    /* the located tree of the body: the loader reads it with kinds added */
    berth_error e;
    berth_error_clear(&e);
    berth_source src;
    /* nodenames calls: only the pod is decoded (its own text, "pod:line:col") */
    char *podtext = q->full ? NULL : berth_report_json_text(q->pod, JSON_COMPACT);
    if (!q->full && !podtext) {
        serve_reply_error(r, 500, "internal", "out of memory");
        return -1;
    }
    int rc = q->full ? berth_doc_load_buffer(&q->k.arena, "body", body ? body : "", len, &src, &e)
                     : berth_doc_load_buffer(&q->k.arena, "pod", podtext, strlen(podtext), &src,
                                             &e);
    free(podtext);
    if (rc) {
        serve_reply_failed(r, rc, e.msg);
        return -1;
    }
    berth_node *broot = src.ndocs ? src.docs[0] : NULL;
    berth_node *bpod = q->full ? bget(broot, "pod") : broot;
    berth_node *bitems = q->full ? bget(bget(broot, "nodes"), "items") : NULL;
    if (!bpod || (q->full && n && (!bitems || bitems->type != BERTH_NODE_SEQ || bitems->n != n)))
        return bad(r, "body: not an ExtenderArgs object");
    size_t nbound = 0;
    if (serve_bindings_snapshot(x->bind, &q->bound, &nbound, NULL)) {
        serve_reply_error(r, 500, "internal", "out of memory");
        return -1;
    }
    berth_node **docs = berth_arena_alloc(&q->k.arena, (n + nbound + 1) * sizeof *docs);
    if (!docs) {
        serve_reply_error(r, 500, "internal", "out of memory");
        return -1;
    }
    size_t nd = 0;
    for (size_t i = 0; q->full && i < n; i++)
        if (!(docs[nd++] = with_kind(&q->k.arena, bitems->items[i], "Node"))) {
            serve_reply_error(r, 500, "internal", "out of memory");
            return -1;
        }
    if (!q->full) {
        /* nodeCacheCapable: copy the named nodes from the cache */
        q->cache = cache_ref(x);
        berth_knode *copy = malloc((n ? n : 1) * sizeof *copy);
        if (!copy) {
            serve_reply_error(r, 500, "internal", "out of memory");
            return -1;
        }
        uint32_t m = 0;
        for (size_t i = 0; q->cache && i < n; i++) {
            uint32_t id = find_node(&q->cache->k, q->cand[i]);
            if (id != BERTH_KUBE_NONE)
                copy[m++] = q->cache->k.nodes[id];
        }
        q->k.nodes = copy;
        q->k.nnodes = q->k.capnodes = m;
        if (q->cache) {
            memcpy(q->k.res_names, q->cache->k.res_names, sizeof q->k.res_names);
            q->k.nres = q->cache->k.nres;
        }
    }
    /* pods bound through the extender on these nodes (not this pod: a pod
     * being scheduled is not bound, so a binding of its name is stale) */
    for (size_t i = 0; i < nbound; i++)
        if (strcmp(q->bound[i].key, q->key) && has_name(q->sorted, n, q->bound[i].node))
            docs[nd++] = (berth_node *)q->bound[i].doc;
    if (!(docs[nd++] = with_kind(&q->k.arena, bpod, "Pod"))) {
        serve_reply_error(r, 500, "internal", "out of memory");
        return -1;
    }
    if (schedule(q, docs, nd, q->full ? n : 0, profile, r))
        return -1;
    /* remember the pod for a later bind */
    char *text = berth_report_json_text(q->pod, JSON_COMPACT);
    if (text)
        seen_record(x, 0, q->key, q->uid, text);
    free(text);
    return 0;
}

/* ---- nodeCacheCapable calls without a JSON tree (the fast path) ----
 *
 * ExtenderArgs with NodeNames is scanned in place: the pod's text is cut
 * out (only it goes through jansson, for the checks and the bind record),
 * each name is looked up in the cache's name index, and the answer is
 * written straight into the reply. The scheduling cycle a call computes is
 * kept (EXT_CYCLES of them): the next call for the same pod text, the
 * same candidate nodes, the same node cache, the same bindings and the same
 * profile (kube-scheduler's prioritize after its filter) answers from it.
 * Anything the scan does not take as plain (an escape or a non-ASCII byte
 * in a name, a name twice, a key twice, nodes given as objects, any other
 * key with a value other than null, JSON it cannot follow) goes the
 * general way (run), so errors read as they always did. */

/* One scheduling cycle's verdicts over the named nodes (indexed by cycle
 * node): V_* per node, the reasons of the failed ones, the weighted totals
 * of the feasible ones and their maximum. Immutable once made; referenced
 * by every cycle it answers (the pods of one class share it, see
 * ext_warm) and by the warm state that keeps it for its class. */
typedef struct ext_result {
    int refs; /* atomic */
    unsigned char *verdict;
    const char **reason;     /* per node, a failed one's text (one of texts) */
    char **texts;
    uint32_t ntexts;
    int64_t *total, max_total;
    uint32_t m, nfeasible; /* nodes (the set's cache nodes, ascending), feasible ones */
    /* the last reply written from it, per kind (0 filter, 1 prioritize),
     * and the nodenames array (ext_names.id) it was written for (kept from
     * the second time it is written for that array): a replica asked with
     * the same array gets a copy (under serve_extender.mu) */
    char *text[2];
    size_t ntext[2];
    uint64_t text_names[2];
} ext_result;

static void result_unref(ext_result *r)
{
    if (!r || __atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL) > 0)
        return;
    texts_free(r->texts, r->ntexts);
    free(r->reason);
    free(r->verdict);
    free(r->total);
    free(r->text[0]);
    free(r->text[1]);
    free(r);
}

static ext_result *result_ref(ext_result *r)
{
    __atomic_add_fetch(&r->refs, 1, __ATOMIC_ACQ_REL);
    return r;
}

/* The verdicts of q (decided over the m nodes of a name set, its cache
 * nodes ascending: result index i is the set's i-th node, ext_names.rix)
 * moved into a new result (refs 1); NULL out of memory (q keeps them). */
static ext_result *result_take(ext_call *q, uint32_t m)
{
    ext_result *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->refs = 1;
    r->verdict = q->verdict;
    r->reason = q->reason;
    r->texts = q->texts;
    r->ntexts = q->ntexts;
    r->total = q->total;
    r->max_total = q->max_total;
    r->m = m;
    r->nfeasible = q->nfeasible;
    q->verdict = NULL;
    q->reason = NULL;
    q->total = NULL;
    q->texts = NULL;
    q->ntexts = 0;
    return r;
}

struct ext_cycle {
    int refs;
    uint64_t id;              /* unique among the cycles made (seen_record) */
    uint64_t cache_gen, bind_gen;
    char *profile;            /* as given, NULL for the default */
    char *pod;                /* the pod's text as received */
    size_t npod;
    uint32_t *cis;            /* cache nodes of the cycle, ascending (= its node order) */
    uint32_t m;
    uint64_t set_hash;        /* of cis (ext_names) */
    uint32_t ncache;
    ext_result *res;          /* the verdicts (shared by the pods of one class) */
    char key[600];
    char *uid, *seen;         /* for serve_bindings_seen */
};

static void cycle_free(ext_cycle *c)
{
    if (!c)
        return;
    result_unref(c->res);
    free(c->cis);
    free(c->profile);
    free(c->pod);
    free(c->uid);
    free(c->seen);
    free(c);
}

static void cycle_unref(serve_extender *x, ext_cycle *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&x->mu);
    int last = --c->refs == 0;
    pthread_mutex_unlock(&x->mu);
    if (last)
        cycle_free(c);
}

typedef struct span {
    const char *p;
    size_t n;
} span;

static const char *ws(const char *p, const char *e)
{
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* The string opening at p: the position after its closing quote (NULL when
 * unterminated); *plain = 0 when it holds an escape, a control byte or a
 * byte >= 0x80. */
static const char *str_end(const char *p, const char *e, int *plain)
{
    *plain = 1;
    for (p++; p < e; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '"')
            return p + 1;
        if (c == '\\') {
            *plain = 0;
            p++;
        } else if (c < 0x20 || c >= 0x80) {
            *plain = 0;
        }
    }
    return NULL;
}

/* The end of the object or array opening at p (strings skipped), NULL when
 * it does not close. Its text is checked by jansson afterwards. */
static const char *nested_end(const char *p, const char *e)
{
    size_t depth = 0;
    while (p < e) {
        char c = *p;
        if (c == '"') {
            int plain;
            if (!(p = str_end(p, e, &plain)))
                return NULL;
            continue;
        }
        if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            if (!depth)
                return NULL;
            if (--depth == 0)
                return p + 1;
        }
        p++;
    }
    return NULL;
}

static int key_is(const char *k, size_t n, const char *want)
{
    return strlen(want) == n && !strncasecmp(k, want, n);
}

/* ---- name sets: the nodenames arrays seen, decoded once ----
 *
 * kube-scheduler sends the same names call after call (every node that
 * passed its own filters; prioritize: those that passed ours). The last
 * EXT_NAMESETS arrays are kept with their decoding (each name's cache
 * node, the named cache nodes ascending, a hash of that set): a call whose
 * body holds the same bytes at "nodenames" (one memcmp) reuses it, so a
 * call costs no per-name lookup and no allocation for its names. */

typedef struct ext_names {
    int refs;
    uint64_t cache_gen;
    char *text;               /* the array's text, '[' to ']' */
    size_t len, bytes;        /* its length; the names' total length */
    uint32_t n;               /* names, in request order */
    uint32_t *off, *nlen;     /* per name: its first byte in text, its length */
    uint32_t *ci;             /* per name: its cache node or BERTH_KUBE_NONE */
    uint32_t *cis, m;         /* the cache nodes named, ascending */
    unsigned char *mark;      /* per cache node: named */
    uint64_t set_hash;        /* of cis[0..m) */
    uint64_t id;              /* unique among the arrays decoded (ext_result.text_names) */
    /* the replies' fixed text, written once per array (ext_reply_texts):
     * per name its index in a result over the set (its rank in cis,
     * NONE when unknown); the names quoted and comma-separated
     * ("a","b",: name i at qtext + qoff[i], qoff[n] the end); the
     * prioritize list with score 0 everywhere
     * ([{"host":"a","score":0},...]: name i's digit at ptext[dpos[i]]) */
    uint32_t *rix;
    char *qtext, *ptext;
    size_t *qoff, *dpos, nptext;
} ext_names;

static void names_free(ext_names *s)
{
    if (!s)
        return;
    free(s->text);
    free(s->off);
    free(s->nlen);
    free(s->ci);
    free(s->cis);
    free(s->mark);
    free(s->rix);
    free(s->qtext);
    free(s->ptext);
    free(s->qoff);
    free(s->dpos);
    free(s);
}

static void names_unref(serve_extender *x, ext_names *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&x->mu);
    int last = --s->refs == 0;
    pthread_mutex_unlock(&x->mu);
    if (last)
        names_free(s);
}

/* The kept name set whose text is at p (for cache generation gen),
 * referenced; NULL when none. */
static ext_names *names_find(serve_extender *x, uint64_t gen, const char *p, const char *e)
{
    ext_names *cand[EXT_NAMESETS], *hit = NULL;
    unsigned nc = 0;
    pthread_mutex_lock(&x->mu);
    for (unsigned i = 0; i < EXT_NAMESETS; i++) {
        ext_names *s = x->names[i];
        if (s && s->cache_gen == gen && s->len <= (size_t)(e - p) && s->text[1] == p[1]) {
            s->refs++;
            cand[nc++] = s;
        }
    }
    pthread_mutex_unlock(&x->mu);
    /* compared outside the lock: the texts are immutable */
    for (unsigned i = 0; i < nc; i++) {
        if (!hit && !memcmp(cand[i]->text, p, cand[i]->len))
            hit = cand[i];
        else
            names_unref(x, cand[i]);
    }
    return hit;
}

static int cmp_span(const void *a, const void *b)
{
    const span *x = a, *y = b;
    int c = memcmp(x->p, y->p, x->n < y->n ? x->n : y->n);
    return c ? c : (x->n > y->n) - (x->n < y->n);
}

/* The fixed text of s's replies (ext_names.rix, qtext, ptext); cis and
 * ci set. 0, or -1 out of memory. Work: one pass over the names. */
static int names_texts(ext_names *s, uint32_t ncache)
{
    uint32_t *rank = malloc((ncache ? ncache : 1) * sizeof *rank);
    s->rix = malloc((s->n ? s->n : 1) * sizeof *s->rix);
    s->qoff = malloc(((size_t)s->n + 1) * sizeof *s->qoff);
    s->dpos = malloc((s->n ? s->n : 1) * sizeof *s->dpos);
    s->qtext = malloc(s->bytes + 3 * (size_t)s->n + 1);
    static const char host[] = "{\"host\":\"", score[] = "\",\"score\":0},";
    size_t hn = sizeof host - 1, sn = sizeof score - 1;
    s->ptext = malloc(s->bytes + (hn + sn) * (size_t)s->n + 2);
    if (!rank || !s->rix || !s->qoff || !s->dpos || !s->qtext || !s->ptext) {
        free(rank);
        return -1;
    }
    for (uint32_t i = 0; i < s->m; i++)
        rank[s->cis[i]] = i;
    char *q = s->qtext, *t = s->ptext;
    *t++ = '[';
    for (uint32_t i = 0; i < s->n; i++) {
        const char *nm = s->text + s->off[i];
        size_t n = s->nlen[i];
        s->rix[i] = s->ci[i] == BERTH_KUBE_NONE ? BERTH_KUBE_NONE : rank[s->ci[i]];
        s->qoff[i] = (size_t)(q - s->qtext);
        *q++ = '"';
        memcpy(q, nm, n);
        q += n;
        *q++ = '"';
        *q++ = ',';
        memcpy(t, host, hn);
        memcpy(t + hn, nm, n);
        memcpy(t + hn + n, score, sn);
        t += hn + n + sn;
        s->dpos[i] = (size_t)(t - s->ptext) - 3; /* the 0 of "0}," */
    }
    s->qoff[s->n] = (size_t)(q - s->qtext);
    if (s->n)
        t--; /* the last comma */
    *t++ = ']';
    s->nptext = (size_t)(t - s->ptext);
    free(rank);
    return 0;
}

/* Decodes the array opening at p against cache (NULL: every name unknown)
 * and keeps it. 1 with *out (referenced) and *end set; 0 to go the general
 * way (not plain, an empty name, a name twice); -1 out of memory. */
static int names_build(serve_extender *x, node_cache *cache, const char *p, const char *e,
                       ext_names **out, const char **end)
{
    const char *start = p;
    uint32_t cap = 0, ncache = cache ? cache->k.nnodes : 0;
    int plain, rc = -1;
    ext_names *s = calloc(1, sizeof *s);
    span *unknown = NULL;
    if (!s)
        return -1;
    p = ws(p + 1, e);
    if (p < e && *p == ']') {
        p++;
    } else {
        for (;;) {
            const char *se = p < e && *p == '"' ? str_end(p, e, &plain) : NULL;
            if (!se || !plain || se - p == 2 || s->n == UINT32_MAX || se - start > UINT32_MAX) {
                rc = 0;
                goto out;
            }
            if (s->n == cap) {
                cap = cap ? 2 * cap : 1024;
                uint32_t *no = realloc(s->off, cap * sizeof *no);
                if (no)
                    s->off = no;
                uint32_t *nl = no ? realloc(s->nlen, cap * sizeof *nl) : NULL;
                if (!nl)
                    goto out;
                s->nlen = nl;
            }
            s->off[s->n] = (uint32_t)(p + 1 - start);
            s->nlen[s->n++] = (uint32_t)(se - p - 2);
            s->bytes += (size_t)(se - p - 2);
            p = ws(se, e);
            if (p < e && *p == ',') {
                p = ws(p + 1, e);
                continue;
            }
            if (p < e && *p == ']') {
                p++;
                break;
            }
            rc = 0;
            goto out;
        }
    }
    s->len = (size_t)(p - start);
    s->text = malloc(s->len);
    s->ci = malloc((s->n ? s->n : 1) * sizeof *s->ci);
    s->cis = malloc((s->n ? s->n : 1) * sizeof *s->cis);
    s->mark = calloc(ncache ? ncache : 1, 1);
    if (!s->text || !s->ci || !s->cis || !s->mark)
        goto out;
    memcpy(s->text, start, s->len);
    size_t nunknown = 0;
    for (uint32_t i = 0; i < s->n; i++) {
        s->ci[i] = cache_find(cache, s->text + s->off[i], s->nlen[i]);
        if (s->ci[i] == BERTH_KUBE_NONE) {
            nunknown++;
        } else if (s->mark[s->ci[i]]++) {
            rc = 0; /* a name twice: the general way words the error */
            goto out;
        }
    }
    if (nunknown > 1) {
        if (!(unknown = malloc(nunknown * sizeof *unknown)))
            goto out;
        size_t u = 0;
        for (uint32_t i = 0; i < s->n; i++)
            if (s->ci[i] == BERTH_KUBE_NONE)
                unknown[u++] = (span){s->text + s->off[i], s->nlen[i]};
        qsort(unknown, u, sizeof *unknown, cmp_span);
        for (size_t i = 1; i < u; i++)
            if (!cmp_span(&unknown[i - 1], &unknown[i])) {
                rc = 0;
                goto out;
            }
    }
    uint64_t h = 1469598103934665603ull;
    for (uint32_t i = 0; i < ncache; i++)
        if (s->mark[i]) {
            s->cis[s->m++] = i;
            h = (h ^ i) * 1099511628211ull;
        }
    s->set_hash = h;
    if (names_texts(s, ncache))
        goto out;
    s->id = __atomic_add_fetch(&x->names_ids, 1, __ATOMIC_RELAXED);
    s->cache_gen = cache ? cache->gen : 0;
    s->refs = 2; /* the caller's and the ring's */
    pthread_mutex_lock(&x->mu);
    ext_names *old = x->names[x->names_next];
    x->names[x->names_next] = s;
    x->names_next = (x->names_next + 1) % EXT_NAMESETS;
    pthread_mutex_unlock(&x->mu);
    names_unref(x, old);
    *out = s;
    *end = p;
    s = NULL;
    rc = 1;
out:
    free(unknown);
    names_free(s);
    return rc;
}

/* Scans ExtenderArgs {"pod": {...}, "nodenames": [...]} (Go's field names,
 * any case; "nodes" and other keys only as null) against cache. 1 when
 * taken (pod and *names set), 0 to go the general way, -1 out of memory;
 * *names, when set, is referenced whatever the result. */
static int scan_args(serve_extender *x, node_cache *cache, const char *b, size_t len, span *pod,
                     ext_names **names)
{
    const char *p = ws(b, b + len), *e = b + len;
    int seen_pod = 0, seen_nodes = 0, seen_names = 0, plain;
    *names = NULL;
    if (p == e || *p != '{')
        return 0;
    p = ws(p + 1, e);
    for (;;) {
        if (p == e || *p != '"')
            return 0;
        const char *ke = str_end(p, e, &plain);
        if (!ke || !plain)
            return 0;
        const char *k = p + 1;
        size_t kn = (size_t)(ke - 1 - k);
        p = ws(ke, e);
        if (p == e || *p != ':')
            return 0;
        p = ws(p + 1, e);
        if (p == e)
            return 0;
        if (key_is(k, kn, "pod")) {
            const char *ve = *p == '{' ? nested_end(p, e) : NULL;
            if (seen_pod++ || !ve)
                return 0;
            *pod = (span){p, (size_t)(ve - p)};
            p = ve;
        } else if (key_is(k, kn, "nodenames")) {
            if (seen_names++ || *p != '[')
                return 0;
            ext_names *s = names_find(x, cache ? cache->gen : 0, p, e);
            if (s) {
                p += s->len;
            } else {
                int rc = names_build(x, cache, p, e, &s, &p);
                if (rc <= 0)
                    return rc;
            }
            *names = s;
        } else {
            /* "nodes" (nodeCacheCapable: false) or anything else: null only */
            if ((key_is(k, kn, "nodes") && seen_nodes++) || e - p < 4 || memcmp(p, "null", 4))
                return 0;
            p += 4;
        }
        p = ws(p, e);
        if (p < e && *p == ',') {
            p = ws(p + 1, e);
            continue;
        }
        if (p < e && *p == '}')
            break;
        return 0;
    }
    return ws(p + 1, e) == e && seen_pod && seen_names;
}

/* The kept cycle for this question, referenced; NULL when none. The key:
 * the pod's text (its UID with it), the node-name set (hash, then the set),
 * the node cache and bindings generations, the profile. */
static ext_cycle *cycle_find(serve_extender *x, uint64_t cache_gen, uint64_t bind_gen,
                             const char *profile, span pod, const ext_names *names)
{
    ext_cycle *hit = NULL;
    pthread_mutex_lock(&x->mu);
    for (unsigned i = 0; i < EXT_CYCLES && !hit; i++) {
        ext_cycle *c = x->cycles[i];
        if (c && c->cache_gen == cache_gen && c->bind_gen == bind_gen &&
            c->set_hash == names->set_hash && c->m == names->m && c->npod == pod.n &&
            !(c->profile ? !profile || strcmp(c->profile, profile) : profile != NULL) &&
            !memcmp(c->pod, pod.p, pod.n) && !memcmp(c->cis, names->cis, c->m * sizeof *c->cis))
            hit = c;
    }
    if (hit)
        hit->refs++;
    pthread_mutex_unlock(&x->mu);
    return hit;
}

static void cycle_keep(serve_extender *x, ext_cycle *c)
{
    pthread_mutex_lock(&x->mu);
    c->refs++;
    ext_cycle *old = x->cycles[x->cycle_next];
    x->cycles[x->cycle_next] = c;
    x->cycle_next = (x->cycle_next + 1) % EXT_CYCLES;
    pthread_mutex_unlock(&x->mu);
    cycle_unref(x, old);
}

/* ---- the warm scheduler state ----
 *
 * A cold cycle builds a cluster of the named nodes and the pods bound on
 * them, then the kube scheduler's state over it (columns, term counters,
 * plugin caches), for one pod. A warm state (ext_warm) keeps that cluster
 * and state (berth_kprobe, kube/probe.c) for the calls that follow, keyed
 * by what the cold cycle reads: the node cache generation, the bindings
 * generation, the named set, the profile and the pod's namespace (the
 * counters read it when built). A new pod is decoded into the state's own
 * scratch cluster and probed: one scheduling cycle, then its assume is
 * undone. EXT_WARM states are kept; a state in use is its thread's alone
 * (busy), so concurrent calls for one key build a second one. A state
 * answers EXT_WARM_SLOTS pods, then is built again (bounded memory: the
 * probed pods' decoding lives in its scratch arena). */

#define EXT_WARM_SLOTS 256
#define EXT_CLASSES 8 /* pod classes whose results a warm state keeps */

struct ext_warm {
    int busy;
    uint64_t tick;            /* last use, for replacement */
    uint64_t cache_gen, bind_gen, set_hash;
    char *profile, *ns;
    uint32_t *cis, m;
    node_cache *cache;        /* held: the nodes' strings live in its arena */
    berth_kcluster k;         /* the named nodes (shallow copies), the bound pods, the slots */
    berth_kcluster scratch;   /* probed pods decoded here (arena kept) */
    berth_kprofile prof;
    berth_kube_options opt;
    berth_kprobe *probe;
    serve_bound *bound;       /* the bindings snapshot (docs valid until close) */
    size_t nbound;
    const char **keys;        /* keys of the bound pods counted, sorted */
    size_t nkeys;
    uint32_t decodes;         /* pods decoded into scratch (bounds its arena) */
    /* the results of the last EXT_CLASSES pod classes probed here (ring):
     * a pod whose class key (ext_class_key) matches takes its class's
     * result without a cycle */
    char *ckey[EXT_CLASSES];
    ext_result *cres[EXT_CLASSES];
    unsigned cnext;
};

static void warm_free(serve_extender *x, ext_warm *w)
{
    if (!w)
        return;
    berth_kprobe_close(w->probe);
    for (unsigned i = 0; i < EXT_CLASSES; i++) {
        free(w->ckey[i]);
        result_unref(w->cres[i]);
    }
    berth_kube_free(&w->k);
    berth_kube_free(&w->scratch);
    cache_unref(x, w->cache);
    free(w->bound);
    free(w->keys);
    free(w->cis);
    free(w->profile);
    free(w->ns);
    free(w);
}

static int same_profile(const char *a, const char *b)
{
    return a ? b && !strcmp(a, b) : !b;
}

/* An idle warm state for this key, made busy; NULL when none. Stale and
 * used-up idle states are dropped. */
static ext_warm *warm_get(serve_extender *x, uint64_t cache_gen, uint64_t bind_gen,
                          const char *profile, const char *ns, const ext_names *names)
{
    ext_warm *hit = NULL, *drop[EXT_WARM];
    unsigned ndrop = 0;
    pthread_mutex_lock(&x->mu);
    for (unsigned i = 0; i < EXT_WARM; i++) {
        ext_warm *w = x->warm[i];
        if (!w || w->busy)
            continue;
        if (w->cache_gen != cache_gen || w->bind_gen != bind_gen ||
            (w->probe && !berth_kprobe_left(w->probe)) || w->decodes >= EXT_WARM_SLOTS) {
            drop[ndrop++] = w; /* its estate changed, or it is used up */
            x->warm[i] = NULL;
            continue;
        }
        if (!hit && w->set_hash == names->set_hash && w->m == names->m &&
            same_profile(w->profile, profile) && !strcmp(w->ns, ns) &&
            !memcmp(w->cis, names->cis, w->m * sizeof *w->cis)) {
            hit = w;
            w->busy = 1;
            w->tick = ++x->warm_tick;
        }
    }
    pthread_mutex_unlock(&x->mu);
    for (unsigned i = 0; i < ndrop; i++)
        warm_free(x, drop[i]);
    return hit;
}

/* Returns w to the pool (a new one takes a free or the least recently used
 * idle place; none: it is dropped). */
static void warm_put(serve_extender *x, ext_warm *w, int fresh)
{
    ext_warm *drop = NULL;
    pthread_mutex_lock(&x->mu);
    w->busy = 0;
    w->tick = ++x->warm_tick;
    if (fresh) {
        int at = -1;
        for (unsigned i = 0; i < EXT_WARM; i++)
            if (!x->warm[i]) {
                at = (int)i;
                break;
            } else if (!x->warm[i]->busy && (at < 0 || x->warm[i]->tick < x->warm[at]->tick)) {
                at = (int)i;
            }
        if (at < 0) {
            drop = w;
        } else {
            drop = x->warm[at];
            x->warm[at] = w;
        }
    }
    pthread_mutex_unlock(&x->mu);
    warm_free(x, drop);
}

static int cmp_key(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Builds a warm state (busy, not in the pool) for the named nodes of cache
 * and the pods bound on them, for pods of namespace ns other than the
 * bound pod `key` (a pod being scheduled is not bound: a cold cycle leaves
 * a binding of its name out, which a shared state cannot). NULL when it
 * cannot (the cold cycle then answers). */
static ext_warm *warm_build(serve_extender *x, node_cache *cache, const ext_names *names,
                            const char *profile, const char *ns, const char *key)
{
    ext_warm *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->busy = 1;
    berth_kube_init(&w->k);
    berth_kube_init(&w->scratch);
    pthread_mutex_lock(&x->mu);
    cache->refs++;
    pthread_mutex_unlock(&x->mu);
    w->cache = cache;
    w->cache_gen = cache->gen;
    w->set_hash = names->set_hash;
    w->m = names->m;
    w->cis = malloc((names->m ? names->m : 1) * sizeof *w->cis);
    w->profile = profile ? strdup(profile) : NULL;
    w->ns = strdup(ns);
    w->k.nodes = malloc((names->m ? names->m : 1) * sizeof *w->k.nodes);
    if (!w->cis || (profile && !w->profile) || !w->ns || !w->k.nodes ||
        serve_bindings_snapshot(x->bind, &w->bound, &w->nbound, &w->bind_gen))
        goto fail;
    memcpy(w->cis, names->cis, names->m * sizeof *w->cis);
    /* the named nodes in name order (the cache's): kube_schedule's order */
    for (uint32_t i = 0; i < names->m; i++)
        w->k.nodes[i] = cache->k.nodes[names->cis[i]];
    w->k.nnodes = w->k.capnodes = names->m;
    memcpy(w->k.res_names, cache->k.res_names, sizeof w->k.res_names);
    w->k.nres = cache->k.nres;
    berth_node **docs = malloc((w->nbound ? w->nbound : 1) * sizeof *docs);
    w->keys = malloc((w->nbound ? w->nbound : 1) * sizeof *w->keys);
    if (!docs || !w->keys) {
        free(docs);
        goto fail;
    }
    for (size_t i = 0; i < w->nbound; i++) {
        uint32_t ci = cache_find(cache, w->bound[i].node, strlen(w->bound[i].node));
        if (ci == BERTH_KUBE_NONE || !names->mark[ci])
            continue;
        if (!strcmp(w->bound[i].key, key)) {
            free(docs);
            goto fail;
        }
        docs[w->nkeys] = (berth_node *)w->bound[i].doc;
        w->keys[w->nkeys++] = w->bound[i].key;
    }
    qsort(w->keys, w->nkeys, sizeof *w->keys, cmp_key);
    berth_error e;
    berth_error_clear(&e);
    berth_source src = {.path = "body", .ndocs = w->nkeys, .docs = docs};
    int rc = w->nkeys ? berth_kube_load(&w->k, &src, 0, &e) : 0;
    free(docs);
    if (rc || w->k.npods != w->nkeys || !profile_of(&w->k, profile, &w->prof))
        goto fail;
    w->prof.percentage_of_nodes_to_score = 100;
    w->opt = (berth_kube_options){.profile = &w->prof, .tiebreak = BERTH_TIE_FIRST, .detail = 1,
                                  .on_decision = on_decision};
    return w;
fail:
    warm_free(x, w);
    return NULL;
}

/* Decodes the pod's compact text into w's scratch cluster as the cold
 * cycle decodes it; NULL when the cold cycle must answer (an error to
 * word, a resource the nodes do not have, a bound or terminating pod, a
 * bound pod of the same name counted in w). */
static berth_kpod *warm_decode(ext_warm *w, const char *seen, const char *key)
{
    berth_kcluster *s = &w->scratch;
    if (w->decodes++ >= EXT_WARM_SLOTS)
        return NULL; /* its arena has grown enough: the state is built again */
    s->npods = 0;
    memcpy(s->res_names, w->k.res_names, sizeof s->res_names);
    s->nres = w->k.nres;
    berth_error e;
    berth_error_clear(&e);
    berth_source src;
    if (berth_doc_load_buffer(&s->arena, "pod", seen, strlen(seen), &src, &e) || !src.ndocs ||
        !src.docs[0])
        return NULL;
    berth_node *doc = with_kind(&s->arena, src.docs[0], "Pod");
    berth_source one = {.path = "body", .ndocs = 1, .docs = &doc};
    if (!doc || berth_kube_load(s, &one, 0, &e) || s->npods != 1 || s->nres != w->k.nres ||
        s->nnodes || s->nprofiles)
        return NULL;
    berth_kpod *p = &s->pods[0];
    if (p->node_name || p->terminating || strcmp(p->ns ? p->ns : "", w->ns) ||
        (w->nkeys && bsearch(&key, w->keys, w->nkeys, sizeof *w->keys, cmp_key)))
        return NULL;
    /* the extender sees no PersistentVolumeClaims (schedule) */
    p->vol_error = NULL;
    p->nvol_zones = 0;
    return p;
}

/* The pod's class key: its compact text without the fields whose values
 * the scheduling cycle neither reads nor checks, so that two pods of one
 * key decode to the same scheduling input (the pods kube-scheduler sends
 * for one Deployment differ in name, uid, resourceVersion, creation time;
 * pods of one app often differ only in env, command or annotations). Left
 * out (src/k8s/meta.c and podspec.c: known keys whose values are never
 * decoded, or decoded for something no filter, score or reason reads):
 * - metadata: name (checked by pod_check, as the loader checks it; the
 *   one place it matters, a binding of the same name, is checked by the
 *   caller), generateName, selfLink, resourceVersion, generation,
 *   managedFields, a string uid, a creationTimestamp that parses (its
 *   only reader is the queue order; one pod per cycle here), annotations
 *   when every value is a string or null and none is the mirror-pod
 *   annotation (checked and kept for the planners only);
 * - each container (containers, initContainers, ephemeralContainers):
 *   command, args, workingDir, env, envFrom, volumeMounts, volumeDevices,
 *   the probes, lifecycle, terminationMessagePath/Policy, imagePullPolicy,
 *   securityContext, stdin, stdinOnce, tty, resizePolicy;
 * - status: message, reason, and conditions when none is of type Ready.
 * Everything else (labels, ownerReferences, spec, phase, ...) is part of
 * the key, byte for byte; a field of a shape the loader would reject stays
 * in the key, so the pod is decoded (and refused) as the cold cycle would.
 * malloc'd; NULL out of memory. */
static const char *const key_free_meta[] = {"name", "generateName", "selfLink", "resourceVersion",
                                            "generation", "managedFields", NULL};
static const char *const key_free_container[] = {
    "command", "args", "workingDir", "env", "envFrom", "volumeMounts", "volumeDevices",
    "livenessProbe", "readinessProbe", "startupProbe", "lifecycle", "terminationMessagePath",
    "terminationMessagePolicy", "imagePullPolicy", "securityContext", "stdin", "stdinOnce", "tty",
    "resizePolicy", NULL};

static void del_all(json_t *o, const char *const *keys)
{
    for (size_t i = 0; keys[i]; i++)
        json_object_del(o, keys[i]);
}

/* Whether the annotations a leave the key: strings or nulls, no mirror. */
static int annotations_free(json_t *a)
{
    const char *k;
    json_t *v;
    if (!json_is_object(a) || json_object_get(a, "kubernetes.io/config.mirror"))
        return 0;
    json_object_foreach(a, k, v) if (!json_is_string(v) && !json_is_null(v)) return 0;
    return 1;
}

/* spec[field] (an array of containers) as a shallow copy without the
 * key-free container fields, set into spec (a copy); 0, or -1 out of
 * memory. Anything but an array of objects stays as it is. */
static int strip_containers(json_t *spec, const char *field)
{
    json_t *cs = json_object_get(spec, field);
    if (!json_is_array(cs))
        return 0;
    json_t *out = json_array();
    if (!out)
        return -1;
    size_t i;
    json_t *c;
    json_array_foreach(cs, i, c) {
        json_t *c2 = json_is_object(c) ? json_copy(c) : json_incref(c);
        if (!c2 || json_array_append_new(out, c2)) {
            json_decref(out);
            return -1;
        }
        if (json_is_object(c2))
            del_all(c2, key_free_container);
    }
    return json_object_set_new(spec, field, out);
}

static char *ext_class_key(json_t *pod)
{
    json_t *meta = json_object_get(pod, "metadata"), *spec = json_object_get(pod, "spec"),
           *status = json_object_get(pod, "status");
    json_t *p2 = json_copy(pod), *m2 = json_is_object(meta) ? json_copy(meta) : NULL;
    json_t *s2 = json_is_object(spec) ? json_copy(spec) : NULL;
    json_t *t2 = json_is_object(status) ? json_copy(status) : NULL;
    char *key = NULL;
    int ok = p2 && m2 && (s2 || !json_is_object(spec)) && (t2 || !json_is_object(status));
    if (ok) {
        del_all(m2, key_free_meta);
        if (json_is_string(json_object_get(m2, "uid")))
            json_object_del(m2, "uid");
        const char *ts = json_string_value(json_object_get(m2, "creationTimestamp"));
        int64_t ms;
        if (ts && !berth_time_parse(ts, &ms))
            json_object_del(m2, "creationTimestamp");
        if (annotations_free(json_object_get(m2, "annotations")))
            json_object_del(m2, "annotations");
        ok = !json_object_set(p2, "metadata", m2);
    }
    if (ok && s2)
        ok = !strip_containers(s2, "containers") && !strip_containers(s2, "initContainers") &&
             !strip_containers(s2, "ephemeralContainers") && !json_object_set(p2, "spec", s2);
    if (ok && t2) {
        json_object_del(t2, "message");
        json_object_del(t2, "reason");
        json_t *cs = json_object_get(t2, "conditions"), *c;
        size_t i;
        int ready = !json_is_array(cs);
        json_array_foreach(cs, i, c) {
            const char *type = json_string_value(json_object_get(c, "type"));
            ready |= !json_is_object(c) || !type || !strcmp(type, "Ready");
        }
        if (!ready)
            json_object_del(t2, "conditions");
        ok = !json_object_set(p2, "status", t2);
    }
    if (ok)
        key = berth_report_json_text(p2, JSON_COMPACT);
    json_decref(t2);
    json_decref(s2);
    json_decref(m2);
    json_decref(p2);
    return key;
}

/* One cycle of the pod (q: checked; seen: its compact text) from a warm
 * state: 1 with *out the result (referenced) and *bind_gen the bindings
 * generation it holds for; 0 when the cold cycle must answer. A pod of a
 * class the state has answered before takes that class's result (no
 * decode, no cycle: Deployment replicas share one cycle). */
static int warm_cycle(serve_extender *x, node_cache *cache, const ext_names *names,
                      const char *profile, ext_call *q, const char *seen, uint64_t *bind_gen,
                      ext_result **out)
{
    *out = NULL;
    const char *slash = strchr(q->key, '/');
    char ns[300];
    snprintf(ns, sizeof ns, "%.*s", (int)(slash - q->key), q->key);
    pthread_mutex_lock(&x->mu);
    int off = x->warm_off;
    pthread_mutex_unlock(&x->mu);
    if (off)
        return 0;
    uint64_t bgen = serve_bindings_generation(x->bind);
    ext_warm *w = warm_get(x, cache->gen, bgen, profile, ns, names);
    int fresh = !w;
    if (!w && !(w = warm_build(x, cache, names, profile, ns, q->key)))
        return 0;
    char *ckey = ext_class_key(q->pod);
    const char *key = q->key;
    if (ckey && !(w->nkeys && bsearch(&key, w->keys, w->nkeys, sizeof *w->keys, cmp_key)))
        for (unsigned i = 0; i < EXT_CLASSES; i++)
            if (w->ckey[i] && !strcmp(w->ckey[i], ckey)) {
                *out = result_ref(w->cres[i]);
                break;
            }
    int ok = *out != NULL, probed = 0;
    berth_kpod *p = ok ? NULL : warm_decode(w, seen, q->key);
    if (p && !w->probe) {
        berth_error e;
        berth_error_clear(&e);
        if (berth_kprobe_open(&w->probe, &w->k, &w->opt, p, EXT_WARM_SLOTS, &e))
            w->probe = NULL;
    }
    if (p && w->probe && berth_kprobe_left(w->probe)) {
        berth_error e;
        berth_error_clear(&e);
        uint32_t slot;
        q->pod_ix = BERTH_KUBE_NONE; /* the probe's one decision */
        int rc = berth_kprobe_run(w->probe, p, q, &slot, &e);
        ok = !rc && q->decided && q->verdict && q->reason && q->total &&
             (*out = result_take(q, names->m)) != NULL;
        probed = ok;
        if (!ok) /* the cold cycle answers afresh */
            call_drop_verdicts(q);
    }
    if (probed && ckey) { /* kept for the pods of its class */
        unsigned at = w->cnext;
        w->cnext = (w->cnext + 1) % EXT_CLASSES;
        free(w->ckey[at]);
        result_unref(w->cres[at]);
        w->ckey[at] = ckey;
        w->cres[at] = result_ref(*out);
        ckey = NULL;
    }
    free(ckey);
    *bind_gen = w->bind_gen;
    if (w->probe && ok) {
        pthread_mutex_lock(&x->mu);
        x->warm_probes += probed;
        x->warm_classed += !probed;
        x->warm_builds += fresh;
        pthread_mutex_unlock(&x->mu);
    }
    if (!w->probe)
        warm_free(x, w);
    else
        warm_put(x, w, fresh);
    return ok;
}

/* Runs the cycle: the pod (jansson-checked, then decoded by the kube
 * loader) against the named cache nodes and the pods bound on them, from a
 * warm state when one can answer (warm_cycle), else cold. Returns the new
 * cycle (referenced), or NULL with the error reply set (*fallback = 1: go
 * the general way instead). */
static ext_cycle *cycle_run(serve_extender *x, node_cache *cache, span pod,
                            const ext_names *names, const char *profile, serve_reply *r,
                            int *fallback)
{
    const uint32_t *cis = names->cis;
    uint32_t m = names->m;
    ext_call q;
    memset(&q, 0, sizeof q);
    q.x = x;
    berth_kube_init(&q.k);
    ext_cycle *c = calloc(1, sizeof *c);
    if (!c) {
        serve_reply_error(r, 500, "internal", "out of memory");
        goto fail;
    }
    json_error_t je;
    q.pod = q.root = json_loadb(pod.p, pod.n, 0, &je);
    if (!q.root) {
        *fallback = 1; /* the whole body's error names its place in the body */
        goto fail;
    }
    if (pod_check(&q, r))
        goto fail;
    uint64_t bind_gen = 0;
    size_t nbound = 0;
    char *seen = berth_report_json_text(q.pod, JSON_COMPACT);
    c->seen = seen;
    c->uid = strdup(q.uid ? q.uid : "");
    c->pod = malloc(pod.n ? pod.n : 1);
    c->cis = malloc((m ? m : 1) * sizeof *c->cis);
    c->profile = profile ? strdup(profile) : NULL;
    if (!seen || !c->uid || !c->pod || !c->cis || (profile && !c->profile)) {
        serve_reply_error(r, 500, "internal", "out of memory");
        goto fail;
    }
    memcpy(c->pod, pod.p, pod.n);
    c->npod = pod.n;
    c->id = __atomic_add_fetch(&x->cycle_ids, 1, __ATOMIC_RELAXED);
    memcpy(c->cis, cis, m * sizeof *cis);
    c->m = m;
    c->set_hash = names->set_hash;
    c->ncache = cache->k.nnodes;
    c->cache_gen = cache->gen;
    memcpy(c->key, q.key, sizeof c->key);
    if (warm_cycle(x, cache, names, profile, &q, seen, &bind_gen, &c->res))
        goto decided;
    q.k.nodes = malloc((m ? m : 1) * sizeof *q.k.nodes);
    if (!q.k.nodes || serve_bindings_snapshot(x->bind, &q.bound, &nbound, &bind_gen)) {
        serve_reply_error(r, 500, "internal", "out of memory");
        goto fail;
    }
    for (uint32_t i = 0; i < m; i++)
        q.k.nodes[i] = cache->k.nodes[cis[i]];
    q.k.nnodes = q.k.capnodes = m;
    memcpy(q.k.res_names, cache->k.res_names, sizeof q.k.res_names);
    q.k.nres = cache->k.nres;
    berth_error e;
    berth_error_clear(&e);
    berth_source src;
    int rc = berth_doc_load_buffer(&q.k.arena, "pod", seen, strlen(seen), &src, &e);
    if (rc) {
        serve_reply_failed(r, rc, e.msg);
        goto fail;
    }
    berth_node **docs = berth_arena_alloc(&q.k.arena, (nbound + 1) * sizeof *docs);
    if (!src.ndocs || !src.docs[0]) {
        bad(r, "body: not an ExtenderArgs object");
        goto fail;
    }
    if (!docs) {
        serve_reply_error(r, 500, "internal", "out of memory");
        goto fail;
    }
    size_t nd = 0;
    /* pods bound through the extender on these nodes (not this pod) */
    for (size_t i = 0; i < nbound; i++) {
        uint32_t ci = cache_find(cache, q.bound[i].node, strlen(q.bound[i].node));
        if (ci != BERTH_KUBE_NONE && names->mark[ci] && strcmp(q.bound[i].key, q.key))
            docs[nd++] = (berth_node *)q.bound[i].doc;
    }
    if (!(docs[nd++] = with_kind(&q.k.arena, src.docs[0], "Pod"))) {
        serve_reply_error(r, 500, "internal", "out of memory");
        goto fail;
    }
    if (schedule(&q, docs, nd, 0, profile, r))
        goto fail;
decided:
    c->bind_gen = bind_gen;
    /* the verdicts move into the cycle */
    if (!c->res && !(c->res = result_take(&q, m))) {
        serve_reply_error(r, 500, "internal", "out of memory");
        goto fail;
    }
    c->refs = 1;
    call_free(&q);
    return c;
fail:
    call_free(&q);
    cycle_free(c);
    return NULL;
}

/* A growing reply body. */
typedef struct wbuf {
    char *p;
    size_t n, cap;
    int oom;
} wbuf;

/* Grows w for n more bytes and the NUL; 0, or -1 (w->oom) out of memory. */
static int wgrow(wbuf *w, size_t n)
{
    if (w->oom)
        return -1;
    if (berth_grow_bytes((void **)&w->p, &w->cap, w->n + n + 1, 4096)) {
        w->oom = 1;
        return -1;
    }
    return 0;
}

static inline void wput(wbuf *w, const char *s, size_t n)
{
    if (w->n + n + 1 > w->cap && wgrow(w, n))
        return;
    memcpy(w->p + w->n, s, n);
    w->n += n;
    w->p[w->n] = 0;
}

static void wlit(wbuf *w, const char *s)
{
    wput(w, s, strlen(s));
}

/* s as a JSON string, escaped as jansson's dump escapes it. */
static void wstr(wbuf *w, const char *s, size_t n)
{
    wput(w, "\"", 1);
    size_t from = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        wput(w, s + from, i - from);
        char seq[8];
        const char *t = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\b' ? "\\b"
                      : c == '\f' ? "\\f" : c == '\n' ? "\\n" : c == '\r' ? "\\r"
                      : c == '\t' ? "\\t" : NULL;
        if (!t) {
            snprintf(seq, sizeof seq, "\\u%04X", c);
            t = seq;
        }
        wlit(w, t);
        from = i + 1;
    }
    wput(w, s + from, n - from);
    wput(w, "\"", 1);
}
/* Room for n more bytes (and the NUL) without a reallocation. */
static void wreserve(wbuf *w, size_t n)
{
    if (w->n + n + 1 > w->cap)
        wgrow(w, n);
}

/* Name i of s as a JSON string (plain: no escape, control or non-ASCII
 * byte). */
static inline void wname(wbuf *w, const ext_names *s, uint32_t i)
{
    const char *p = s->text + s->off[i];
    size_t n = s->nlen[i];
    if (w->n + n + 3 > w->cap && wgrow(w, n + 2))
        return;
    char *o = w->p + w->n;
    o[0] = '"';
    memcpy(o + 1, p, n);
    o[n + 1] = '"';
    o[n + 2] = 0;
    w->n += n + 2;
}

static const char *const unknown_why =
    "node(s) were unknown to the extender (berth): load them with PUT /v1/kube/nodes";

/* ExtenderFilterResult for the names of s from cycle c: the feasible
 * names are copied from s->qtext in runs (one copy when all are), the
 * failed maps are written only when a name failed or is unknown. */
static void write_filter(wbuf *w, const ext_cycle *c, const ext_names *s)
{
    const uint32_t *rix = s->rix;
    const unsigned char *verdict = c->res->verdict;
    wreserve(w, s->qoff[s->n] + 128);
    wlit(w, "{\"nodes\":null,\"nodenames\":[");
    if (w->oom)
        return;
    size_t start = w->n;
    if (c->res->nfeasible == s->n) { /* every name known and feasible */
        wput(w, s->qtext, s->qoff[s->n]);
    } else {
        uint32_t from = 0; /* the run of feasible names from..i */
        for (uint32_t i = 0; i < s->n; i++)
            if (rix[i] == BERTH_KUBE_NONE || verdict[rix[i]] != V_FEASIBLE) {
                wput(w, s->qtext + s->qoff[from], s->qoff[i] - s->qoff[from]);
                from = i + 1;
            }
        wput(w, s->qtext + s->qoff[from], s->qoff[s->n] - s->qoff[from]);
    }
    if (w->n > start) /* the last comma */
        w->p[--w->n] = 0;
    if (c->res->nfeasible == s->n) {
        wlit(w, "],\"failedNodes\":{},\"failedAndUnresolvableNodes\":{},\"error\":\"\"}");
        return;
    }
    for (int pass = 0; pass < 2; pass++) {
        wlit(w, pass ? "},\"failedAndUnresolvableNodes\":{" : "],\"failedNodes\":{");
        int first = 1;
        for (uint32_t i = 0; i < s->n; i++) {
            int v = rix[i] == BERTH_KUBE_NONE ? V_UNKNOWN : verdict[rix[i]];
            if (v == V_FEASIBLE || (v == V_UNRESOLVABLE) != pass)
                continue;
            const char *r = v == V_UNKNOWN ? NULL : c->res->reason[rix[i]];
            const char *why = v == V_UNKNOWN ? unknown_why
                              : r && r[0] ? r : "node(s) were not evaluated";
            if (!first)
                wput(w, ",", 1);
            first = 0;
            wname(w, s, i);
            wput(w, ":", 1);
            wstr(w, why, strlen(why));
        }
    }
    wlit(w, "},\"error\":\"\"}");
}

/* HostPriorityList for the names of s from cycle c: s->ptext (every
 * score 0) copied in runs between the names scoring 10 (two digits), the
 * other digits patched in place. */
static void write_prioritize(wbuf *w, const ext_cycle *c, const ext_names *s)
{
    const ext_result *res = c->res;
    unsigned char *sc = malloc(s->n ? s->n : 1);
    if (!sc) {
        w->oom = 1;
        return;
    }
    /* berth's weighted total, proportional to the best node's (the node
     * berth would pick gets MaxExtenderPriority): total * 10 / max clamped
     * to 0..10, without a 64-bit division per node: a quotient through a
     * multiplication by 1 / max, made exact by one step either way */
    const int64_t max = res->max_total, top = max * EXT_MAX_SCORE;
    const double inv = max > 0 ? 1.0 / (double)max : 0;
    uint32_t tens = 0;
    for (uint32_t i = 0; i < s->n; i++) {
        uint32_t r = s->rix[i];
        int64_t score = 0;
        if (r != BERTH_KUBE_NONE && res->verdict[r] == V_FEASIBLE && max > 0) {
            int64_t t = res->total[r] * EXT_MAX_SCORE;
            if (t >= top) {
                score = EXT_MAX_SCORE;
            } else if (t > 0) {
                score = (int64_t)((double)t * inv);
                if (score * max > t)
                    score--;
                else if ((score + 1) * max <= t)
                    score++;
            }
        }
        sc[i] = (unsigned char)score;
        tens += score == EXT_MAX_SCORE;
    }
    wreserve(w, s->nptext + tens);
    if (w->oom) {
        free(sc);
        return;
    }
    char *o = w->p + w->n;
    const char *t = s->ptext;
    size_t done = 0, shift = 0; /* ptext[0..done) copied to o[0..done + shift) */
    uint32_t from = 0;          /* names from.. not patched yet */
    for (uint32_t i = 0; i <= s->n; i++) {
        if (i < s->n && sc[i] != EXT_MAX_SCORE)
            continue;
        size_t upto = i < s->n ? s->dpos[i] : s->nptext;
        memcpy(o + done + shift, t + done, upto - done);
        for (uint32_t j = from; j < i; j++)
            o[s->dpos[j] + shift] = (char)('0' + sc[j]);
        if (i < s->n) {
            o[upto + shift] = '1';
            o[upto + shift + 1] = '0';
            shift++;
            done = upto + 1;
            from = i + 1;
        }
    }
    w->n += s->nptext + tens;
    w->p[w->n] = 0;
    free(sc);
}

/* The fast path of filter (prioritize = 0) and prioritize. 1 when it
 * answered (r set), 0 when the call goes the general way. */
static int ext_fast(serve_extender *x, const char *body, size_t len, const char *profile,
                    int prioritize, serve_reply *r)
{
    span pod;
    ext_names *names = NULL;
    if (!body || !profile_known(profile))
        return 0;
    node_cache *cache = cache_ref(x);
    ext_cycle *c = NULL;
    int done = 0;
    int sc = scan_args(x, cache, body, len, &pod, &names);
    if (sc <= 0) {
        if (sc < 0)
            serve_reply_error(r, 500, "internal", "out of memory");
        done = sc < 0;
        goto out;
    }
    if (cache && !cache->indexed)
        goto out; /* the general way reports it */
    c = cycle_find(x, cache ? cache->gen : 0, serve_bindings_generation(x->bind), profile, pod,
                   names);
    int hit = c != NULL;
    if (!c && cache) {
        int fallback = 0;
        c = cycle_run(x, cache, pod, names, profile, r, &fallback);
        if (!c) {
            done = !fallback; /* an error reply, or the general way */
            goto out;
        }
        cycle_keep(x, c);
    } else if (!c) {
        goto out; /* no node cache: every name is unknown, as the general way says */
    }
    wbuf w = {0};
    /* a reply written from this result for this array before (a replica
     * of a pod already answered): copied, else written and kept */
    ext_result *res = c->res;
    pthread_mutex_lock(&x->mu);
    if (res->text[prioritize] && res->text_names[prioritize] == names->id &&
        !wgrow(&w, res->ntext[prioritize])) {
        memcpy(w.p, res->text[prioritize], res->ntext[prioritize] + 1);
        w.n = res->ntext[prioritize];
    }
    pthread_mutex_unlock(&x->mu);
    if (!w.n) {
        if (prioritize)
            write_prioritize(&w, c, names);
        else
            write_filter(&w, c, names);
        /* kept when written a second time for this array (a replica's
         * call): a pod of its own class never pays for the copy */
        pthread_mutex_lock(&x->mu);
        int again = res->text_names[prioritize] == names->id;
        char *stale = again ? NULL : res->text[prioritize]; /* another array's */
        if (!again) {
            res->text[prioritize] = NULL;
            res->text_names[prioritize] = names->id;
        }
        pthread_mutex_unlock(&x->mu);
        free(stale);
        char *keep = again && !w.oom ? malloc(w.n + 1) : NULL;
        if (keep) {
            memcpy(keep, w.p, w.n + 1);
            pthread_mutex_lock(&x->mu);
            char *old = res->text[prioritize];
            res->text[prioritize] = keep;
            res->ntext[prioritize] = w.n;
            res->text_names[prioritize] = names->id;
            pthread_mutex_unlock(&x->mu);
            free(old);
        }
    }
    if (w.oom) {
        free(w.p);
        serve_reply_error(r, 500, "internal", "out of memory");
    } else {
        /* remember the pod for a later bind */
        seen_record(x, c->id, c->key, c->uid, c->seen);
        pthread_mutex_lock(&x->mu);
        x->fast_calls++;
        x->fast_hits += hit;
        pthread_mutex_unlock(&x->mu);
        free(r->body);
        r->body = w.p;
        r->status = 200;
    }
    done = 1;
out:
    cycle_unref(x, c);
    names_unref(x, names);
    cache_unref(x, cache);
    return done;
}

/* The verdict of candidate i: V_* and its k node (BERTH_KUBE_NONE when the
 * node is not known: nodeCacheCapable and not in the cache). */
static int verdict_of(const ext_call *q, size_t i, uint32_t *node)
{
    *node = find_node(&q->k, q->cand[i]);
    return *node == BERTH_KUBE_NONE ? V_UNKNOWN : q->verdict[*node];
}

void serve_extender_filter(serve_extender *x, const char *body, size_t len, const char *profile,
                           serve_reply *r)
{
    *r = (serve_reply){0};
    if (ext_fast(x, body, len, profile, 0, r))
        return;
    ext_call q;
    if (run(x, body, len, profile, &q, r)) {
        call_free(&q);
        return;
    }
    json_t *items = json_array(), *names = json_array(), *failed = json_object(),
           *unres = json_object();
    int oom = !items || !names || !failed || !unres;
    for (size_t i = 0; !oom && i < q.ncand; i++) {
        uint32_t node;
        int v = verdict_of(&q, i, &node);
        if (v == V_FEASIBLE) {
            oom = q.full ? json_array_append(items, json_array_get(q.items, i))
                         : json_array_append_new(names, json_string(q.cand[i]));
            continue;
        }
        const char *why = v == V_UNKNOWN ? "node(s) were unknown to the extender (berth): load "
                                           "them with PUT /v1/kube/nodes"
                          : q.reason[node] && q.reason[node][0] ? q.reason[node]
                                                                : "node(s) were not evaluated";
        oom = json_object_set_new(v == V_UNRESOLVABLE ? unres : failed, q.cand[i],
                                  json_string(why));
    }
    json_t *res = oom ? NULL : json_object();
    if (res) {
        json_object_set_new(res, "nodes", q.full ? json_pack("{s:{},s:O}", "metadata", "items",
                                                             items)
                                                 : json_null());
        json_object_set_new(res, "nodenames", q.full ? json_null() : json_incref(names));
        json_object_set(res, "failedNodes", failed);
        json_object_set(res, "failedAndUnresolvableNodes", unres);
        json_object_set_new(res, "error", json_string(""));
    }
    json_decref(items);
    json_decref(names);
    json_decref(failed);
    json_decref(unres);
    if (res)
        serve_reply_json(r, 200, res);
    else
        serve_reply_error(r, 500, "internal", "out of memory");
    if (q.full && res) {
        /* the nodes of the last filter call serve later nodenames calls */
        cache_set(x, &q.k);
    }
    call_free(&q);
}

void serve_extender_prioritize(serve_extender *x, const char *body, size_t len,
                               const char *profile, serve_reply *r)
{
    *r = (serve_reply){0};
    if (ext_fast(x, body, len, profile, 1, r))
        return;
    ext_call q;
    if (run(x, body, len, profile, &q, r)) {
        call_free(&q);
        return;
    }
    json_t *list = json_array();
    int oom = !list;
    for (size_t i = 0; !oom && i < q.ncand; i++) {
        uint32_t node;
        int64_t score = 0;
        if (verdict_of(&q, i, &node) == V_FEASIBLE && q.max_total > 0) {
            /* berth's weighted total, proportional to the best node's: the
             * node berth would pick gets MaxExtenderPriority */
            score = q.total[node] * EXT_MAX_SCORE / q.max_total;
            score = score < 0 ? 0 : score > EXT_MAX_SCORE ? EXT_MAX_SCORE : score;
        }
        oom = json_array_append_new(list, json_pack("{s:s,s:I}", "host", q.cand[i], "score",
                                                    (json_int_t)score));
    }
    if (oom) {
        json_decref(list);
        serve_reply_error(r, 500, "internal", "out of memory");
    } else {
        serve_reply_json(r, 200, list);
    }
    call_free(&q);
}

void serve_extender_fast_stats(serve_extender *x, uint64_t *calls, uint64_t *hits)
{
    pthread_mutex_lock(&x->mu);
    *calls = x->fast_calls;
    *hits = x->fast_hits;
    pthread_mutex_unlock(&x->mu);
}

void serve_extender_set_warm(serve_extender *x, int on)
{
    pthread_mutex_lock(&x->mu);
    x->warm_off = !on;
    pthread_mutex_unlock(&x->mu);
}

void serve_extender_warm_stats(serve_extender *x, uint64_t *builds, uint64_t *probes)
{
    pthread_mutex_lock(&x->mu);
    *builds = x->warm_builds;
    *probes = x->warm_probes;
    pthread_mutex_unlock(&x->mu);
}

void serve_extender_class_stats(serve_extender *x, uint64_t *classed)
{
    pthread_mutex_lock(&x->mu);
    *classed = x->warm_classed;
    pthread_mutex_unlock(&x->mu);
}

void serve_extender_bind(serve_extender *x, const char *body, size_t len, serve_reply *r)
{
    *r = (serve_reply){0};
    json_error_t je;
    json_t *j = json_loadb(body ? body : "", len, 0, &je);
    char msg[1200];
    if (!j) {
        snprintf(msg, sizeof msg, "body:%d:%d: %s", je.line, je.column, je.text);
        bad(r, msg);
        return;
    }
    const char *name = jstr(j, "podName"), *ns = jstr(j, "podNamespace"),
               *uid = jstr(j, "podUID"), *node = jstr(j, "node");
    if (!json_is_object(j) || !name || !*name || !node || !*node ||
        (jget(j, "podNamespace") && !ns) || (jget(j, "podUID") && !uid)) {
        json_decref(j);
        bad(r, "body: expected ExtenderBindingArgs: {\"podName\": \"...\", \"podNamespace\": "
               "\"...\", \"podUID\": \"...\", \"node\": \"...\"}");
        return;
    }
    berth_error e;
    berth_error_clear(&e);
    int rc = serve_bindings_bind(x->bind, ns && *ns ? ns : "default", name, uid, node, &e);
    json_decref(j);
    if (rc == BERTH_EIO)
        serve_reply_error(r, 503, "storage", e.msg);
    else if (rc == BERTH_ENOMEM)
        serve_reply_error(r, 500, "internal", e.msg);
    else /* ExtenderBindingResult: a binding berth cannot record is the scheduler's error */
        serve_reply_json(r, 200, json_pack("{s:s}", "error", rc ? e.msg : ""));
}

void serve_extender_put_nodes(serve_extender *x, const char *body, size_t len, serve_reply *r)
{
    *r = (serve_reply){0};
    berth_kcluster k;
    berth_kube_init(&k);
    berth_error e;
    berth_error_clear(&e);
    berth_source src;
    int rc = berth_doc_load_buffer(&k.arena, "body", body ? body : "", len, &src, &e);
    /* NodeList items written by Go clients may lack kind and apiVersion */
    for (size_t i = 0; !rc && i < src.ndocs; i++) {
        berth_node *kind = berth_node_get(src.docs[i], "kind");
        berth_node *items = berth_node_get(src.docs[i], "items");
        if (!kind || kind->type != BERTH_NODE_SCALAR || strcmp(kind->str, "NodeList") || !items ||
            items->type != BERTH_NODE_SEQ)
            continue;
        for (size_t j = 0; !rc && j < items->n; j++)
            if (!(items->items[j] = with_kind(&k.arena, items->items[j], "Node")))
                rc = berth_error_set(&e, BERTH_ENOMEM, "out of memory");
    }
    if (!rc)
        rc = berth_kube_load(&k, &src, 0, &e);
    if (!rc && (k.npods || k.nprofiles || k.nworkloads || k.npdbs || k.nnamespaces))
        rc = berth_error_set(&e, BERTH_EINVAL,
                             "body: PUT /v1/kube/nodes takes Node documents only (a NodeList, "
                             "a List of Nodes, or Node documents)");
    if (!rc && !k.nnodes)
        rc = berth_error_set(&e, BERTH_EINVAL, "body: no Node document");
    if (rc) {
        serve_reply_failed(r, rc, e.msg);
        berth_kube_free(&k);
        return;
    }
    uint32_t n = k.nnodes;
    cache_set(x, &k);
    serve_reply_json(r, 200, json_pack("{s:i}", "nodes", (json_int_t)n));
}
