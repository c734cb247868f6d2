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
 * node structs from (their strings live in its arena) until it ends. */
#include "serve/serve.h"

#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "berth/doc.h"
#include "berth/kube.h"

#define EXT_MAX_SCORE 10 /* MaxExtenderPriority */

typedef struct node_cache {
    berth_kcluster k;  /* nodes sorted by name */
    int refs;
} node_cache;

struct serve_extender {
    serve_bindings *bind;
    pthread_mutex_t mu; /* the cache pointer and reference counts */
    node_cache *cache;
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

/* Makes k (moved in) the cache. */
static void cache_set(serve_extender *x, berth_kcluster *k)
{
    node_cache *c = malloc(sizeof *c);
    if (!c) {
        berth_kube_free(k);
        return;
    }
    c->k = *k;
    memset(k, 0, sizeof *k);
    c->refs = 1;
    if (c->k.nnodes > 1)
        qsort(c->k.nodes, c->k.nnodes, sizeof *c->k.nodes, cmp_knode);
    pthread_mutex_lock(&x->mu);
    node_cache *old = x->cache;
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
    int rc = serve_bindings_open(db, &x->bind, e);
    if (rc) {
        serve_extender_close(x);
        return rc;
    }
    *out = x;
    return 0;
}

void serve_extender_close(serve_extender *x)
{
    if (!x)
        return;
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
    char **reason;          /* per k node, nreason of them */
    uint32_t nreason;
    int64_t *total, max_total;
    char key[600];
    const char *uid;
} ext_call;

static void call_free(ext_call *q)
{
    if (q->reason)
        for (uint32_t i = 0; i < q->nreason; i++)
            free(q->reason[i]);
    free(q->reason);
    free(q->verdict);
    free(q->total);
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

static void on_decision(void *ctx, const berth_kcluster *k, const berth_kdecision *d)
{
    ext_call *q = ctx;
    if (d->pod != q->pod_ix || q->decided)
        return;
    q->decided = 1;
    uint32_t n = k->nnodes ? k->nnodes : 1;
    q->verdict = calloc(n, 1);
    q->reason = calloc(n, sizeof *q->reason);
    q->total = calloc(n, sizeof *q->total);
    if (!q->verdict || !q->reason || !q->total)
        return;
    q->nreason = k->nnodes;
    for (uint32_t i = 0; d->feasible && i < d->nfeasible; i++) {
        q->verdict[d->feasible[i]] = V_FEASIBLE;
        q->total[d->feasible[i]] = d->totals ? d->totals[i] : 0;
        if (d->totals && d->totals[i] > q->max_total)
            q->max_total = d->totals[i];
    }
    for (uint32_t node = 0; d->fail_mask && node < k->nnodes; node++) {
        uint32_t mask = d->fail_mask[node];
        if (!mask || q->verdict[node] == V_FEASIBLE)
            continue;
        char text[2048] = "";
        size_t len = 0;
        int unres = 0;
        for (uint32_t f = 0; f < d->nfilter_plugins && f < 32; f++) {
            if (!(mask & (1u << f)))
                continue;
            char buf[512];
            berth_kube_decision_reason(d, node, d->filter_plugins[f], buf, sizeof buf);
            if (!buf[0])
                snprintf(buf, sizeof buf, "%s", berth_kplugin_name(d->filter_plugins[f]));
            unres |= unresolvable(d->filter_plugins[f]);
            int w = snprintf(text + len, sizeof text - len, "%s%s", len ? ", " : "", buf);
            if (w > 0)
                len = len + (size_t)w < sizeof text ? len + (size_t)w : sizeof text - 1;
        }
        q->verdict[node] = unres ? V_UNRESOLVABLE : V_UNFIT;
        q->reason[node] = strdup(text);
    }
}

static int bad(serve_reply *r, const char *msg)
{
    serve_reply_error(r, 400, "bad_input", msg);
    return -1;
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
    char *podtext = q->full ? NULL : json_dumps(q->pod, JSON_COMPACT);
    if (!q->full && !podtext) {
        serve_reply_error(r, 500, "internal", "out of memory");
        return -1;
    }
    int rc = q->full ? berth_doc_load_buffer(&q->k.arena, "body", body ? body : "", len, &src, &e)
                     : berth_doc_load_buffer(&q->k.arena, "pod", podtext, strlen(podtext), &src,
                                             &e);
    free(podtext);
    if (rc) {
        serve_reply_error(r, rc == BERTH_ENOMEM ? 500 : 400,
                          rc == BERTH_ENOMEM ? "internal" : "bad_input", e.msg);
        return -1;
    }
    berth_node *broot = src.ndocs ? src.docs[0] : NULL;
    berth_node *bpod = q->full ? bget(broot, "pod") : broot;
    berth_node *bitems = q->full ? bget(bget(broot, "nodes"), "items") : NULL;
    if (!bpod || (q->full && n && (!bitems || bitems->type != BERTH_NODE_SEQ || bitems->n != n)))
        return bad(r, "body: not an ExtenderArgs object");
    size_t nbound = 0;
    if (serve_bindings_snapshot(x->bind, &q->bound, &nbound)) {
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
    berth_source all = {.path = "body", .ndocs = nd, .docs = docs};
    uint32_t pods_before = q->k.npods;
    rc = berth_kube_load(&q->k, &all, 0, &e);
    if (rc) {
        serve_reply_error(r, rc == BERTH_ENOMEM ? 500 : 400,
                          rc == BERTH_ENOMEM ? "internal" : "bad_input", e.msg);
        return -1;
    }
    if (q->k.npods != pods_before + nd - (q->full ? n : 0)) {
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
    const char *pname = profile ? profile : "default-scheduler";
    if (!strcmp(pname, "default-scheduler"))
        berth_kube_default_profile(&q->k, &prof);
    else if (!strcmp(pname, "usage-aware"))
        berth_kube_usage_aware_profile(&q->k, &prof);
    else {
        snprintf(msg, sizeof msg,
                 "profile: no profile named '%.200s' (default-scheduler or usage-aware)", pname);
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
    /* remember the pod for a later bind */
    char *text = json_dumps(q->pod, JSON_COMPACT);
    if (text)
        serve_bindings_seen(x->bind, q->key, q->uid, text);
    free(text);
    return 0;
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
        serve_reply_error(r, rc == BERTH_ENOMEM ? 500 : 400,
                          rc == BERTH_ENOMEM ? "internal" : "bad_input", e.msg);
        berth_kube_free(&k);
        return;
    }
    uint32_t n = k.nnodes;
    cache_set(x, &k);
    serve_reply_json(r, 200, json_pack("{s:i}", "nodes", (json_int_t)n));
}
