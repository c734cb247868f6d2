/* serve/bindings.c - the pods the kube-scheduler extender has bound
 * (POST /v1/extender/bind), so that later filter and prioritize calls count
 * the capacity they use. Two tables in memory: the pods recently seen by a
 * filter or prioritize call (a ring of their v1 Pod JSON: a bind names a
 * pod, the requests come from the pod seen earlier), and the bound pods
 * keyed by namespace/name (a pod name is unique in its namespace, so a new
 * binding of the same name replaces the old one). Each bound pod is a
 * complete v1 Pod document with spec.nodeName set, parsed once into an
 * append-only arena, so the trees handed out stay valid until close.
 * Durable: every bind is committed (its own transaction, synchronous=FULL)
 * to the table kube_bindings of the store's SQLite file, through a second
 * connection, before it is acknowledged; open reloads the table. */
#include "serve/serve.h"

#include <jansson.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "berth/arena.h"
#include "berth/doc.h"
#include "berth/grow.h"
#include "berth/nameidx.h"
#include "berth/report.h"

#define SEEN_MAX 4096u
#define SEEN_BUCKETS 8192u /* a power of two: the seen pods' key index */

typedef struct seen_pod {
    char *key;   /* "namespace/name" */
    char *uid;
    char *json;  /* the v1 Pod object as received */
    uint32_t hash, next; /* of key; the next pod of its bucket + 1 (0: none) */
} seen_pod;

typedef struct bound_pod {
    const char *key, *node;  /* in the arena */
    const berth_node *doc;   /* the Pod with spec.nodeName, in the arena */
} bound_pod;

struct serve_bindings {
    pthread_mutex_t mu;
    sqlite3 *db;
    sqlite3_stmt *put;
    berth_arena arena;
    seen_pod seen[SEEN_MAX];
    uint32_t seen_head[SEEN_BUCKETS]; /* per bucket: its first seen pod + 1 (0: none) */
    unsigned char key[BERTH_NAMEIDX_KEY]; /* the buckets' hash key (clients name the pods) */
    unsigned seen_next;
    bound_pod *bound;
    size_t nbound;
    uint32_t cap;
    uint64_t generation; /* bumped by every recorded binding */
};

static int sql_fail(sqlite3 *db, berth_error *e, const char *what)
{
    return berth_error_set(e, BERTH_EIO, "store (kube_bindings): %s: %s", what,
                           db ? sqlite3_errmsg(db) : "cannot open");
}

/* Adds or replaces key's binding with the Pod text (under mu). */
static int keep_bound(serve_bindings *b, const char *key, const char *node, const char *text,
                      size_t len, berth_error *e)
{
    berth_source src;
    int rc = berth_doc_load_buffer(&b->arena, "binding", text, len, &src, e);
    if (rc)
        return rc;
    if (src.ndocs != 1)
        return berth_error_set(e, BERTH_EINVAL, "binding %s: expected one Pod document", key);
    const char *k = berth_arena_strdup(&b->arena, key);
    const char *n = berth_arena_strdup(&b->arena, node);
    if (!k || !n)
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    for (size_t i = 0; i < b->nbound; i++)
        if (!strcmp(b->bound[i].key, key)) {
            b->bound[i] = (bound_pod){k, n, src.docs[0]};
            return 0;
        }
    if (berth_grow((void **)&b->bound, &b->cap, (uint32_t)b->nbound + 1, sizeof *b->bound, 0))
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    b->bound[b->nbound++] = (bound_pod){k, n, src.docs[0]};
    return 0;
}

int serve_bindings_open(const char *path, serve_bindings **out, berth_error *e)
{
    *out = NULL;
    serve_bindings *b = calloc(1, sizeof *b);
    if (!b)
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    pthread_mutex_init(&b->mu, NULL);
    berth_arena_init(&b->arena, 0);
    berth_nameidx_key_new(b->key);
    int rc = 0;
    if (sqlite3_open_v2(path, &b->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                                          SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
        rc = sql_fail(b->db, e, "open");
    if (!rc) {
        sqlite3_busy_timeout(b->db, 10000);
        char *err = NULL;
        if (sqlite3_exec(b->db,
                         "PRAGMA synchronous=FULL;"
                         "CREATE TABLE IF NOT EXISTS kube_bindings ("
                         " key TEXT PRIMARY KEY, node TEXT NOT NULL, uid TEXT, pod BLOB NOT NULL)",
                         NULL, NULL, &err) != SQLITE_OK) {
            rc = berth_error_set(e, BERTH_EIO, "store (kube_bindings): %s", err ? err : "error");
            sqlite3_free(err);
        }
    }
    if (!rc && sqlite3_prepare_v2(b->db,
                                  "INSERT OR REPLACE INTO kube_bindings(key, node, uid, pod) "
                                  "VALUES (?, ?, ?, ?)",
                                  -1, &b->put, NULL) != SQLITE_OK)
        rc = sql_fail(b->db, e, "prepare");
    if (!rc) {
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(b->db, "SELECT key, node, pod FROM kube_bindings ORDER BY rowid",
                               -1, &st, NULL) != SQLITE_OK)
            rc = sql_fail(b->db, e, "prepare");
        int step;
        while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
            const char *key = (const char *)sqlite3_column_text(st, 0);
            const char *node = (const char *)sqlite3_column_text(st, 1);
            const char *pod = sqlite3_column_blob(st, 2);
            int len = sqlite3_column_bytes(st, 2);
            if (!key || !node || !pod)
                rc = berth_error_set(e, BERTH_EIO, "store (kube_bindings): a row lacks a field");
            else
                rc = keep_bound(b, key, node, pod, (size_t)len, e);
        }
        if (!rc && step != SQLITE_DONE)
            rc = sql_fail(b->db, e, "read");
        sqlite3_finalize(st);
    }
    if (rc) {
        serve_bindings_close(b);
        return rc;
    }
    *out = b;
    return 0;
}

void serve_bindings_close(serve_bindings *b)
{
    if (!b)
        return;
    sqlite3_finalize(b->put);
    sqlite3_close(b->db);
    for (unsigned i = 0; i < SEEN_MAX; i++) {
        free(b->seen[i].key);
        free(b->seen[i].uid);
        free(b->seen[i].json);
    }
    free(b->bound);
    berth_arena_free(&b->arena);
    pthread_mutex_destroy(&b->mu);
    free(b);
}

/* The seen pod of key (hash h), NULL when none (under mu). Work: one
 * bucket of the index, not the ring. */
static seen_pod *seen_find(serve_bindings *b, const char *key, uint32_t h)
{
    for (uint32_t v = b->seen_head[h & (SEEN_BUCKETS - 1)]; v; v = b->seen[v - 1].next)
        if (b->seen[v - 1].hash == h && !strcmp(b->seen[v - 1].key, key))
            return &b->seen[v - 1];
    return NULL;
}

/* Takes the seen pod at slot i out of its bucket (under mu). */
static void seen_unlink(serve_bindings *b, uint32_t i)
{
    uint32_t *link = &b->seen_head[b->seen[i].hash & (SEEN_BUCKETS - 1)];
    while (*link && *link != i + 1)
        link = &b->seen[*link - 1].next;
    if (*link)
        *link = b->seen[i].next;
    b->seen[i].next = 0;
}

void serve_bindings_seen(serve_bindings *b, const char *key, const char *uid, const char *pod_json)
{
    char *k = strdup(key), *u = strdup(uid ? uid : ""), *j = strdup(pod_json);
    if (!k || !u || !j) {
        free(k);
        free(u);
        free(j);
        return; /* a later bind of this pod reports that it was not seen */
    }
    uint32_t h = berth_nameidx_hash(b->key, key);
    pthread_mutex_lock(&b->mu);
    seen_pod *s = seen_find(b, key, h);
    if (!s) {
        s = &b->seen[b->seen_next];
        if (s->key)
            seen_unlink(b, b->seen_next); /* the oldest pod seen leaves the ring */
        uint32_t bk = h & (SEEN_BUCKETS - 1);
        s->next = b->seen_head[bk];
        b->seen_head[bk] = b->seen_next + 1;
        b->seen_next = (b->seen_next + 1) % SEEN_MAX;
    }
    free(s->key);
    free(s->uid);
    free(s->json);
    s->key = k;
    s->uid = u;
    s->json = j;
    s->hash = h;
    pthread_mutex_unlock(&b->mu);
}

int serve_bindings_bind(serve_bindings *b, const char *ns, const char *name, const char *uid,
                        const char *node, berth_error *e)
{
    char key[600];
    snprintf(key, sizeof key, "%.255s/%.255s", ns, name);
    pthread_mutex_lock(&b->mu);
    char *text = NULL;
    int rc = 0;
    const seen_pod *s = seen_find(b, key, berth_nameidx_hash(b->key, key));
    if (s && uid && *uid && *s->uid && strcmp(uid, s->uid))
        rc = berth_error_set(e, BERTH_ENOENT,
                             "pod %s with uid %s was not seen by a filter call (the last one "
                             "seen has uid %s)",
                             key, uid, s->uid);
    else if (s && !(text = strdup(s->json)))
        rc = berth_error_set(e, BERTH_ENOMEM, "out of memory");
    pthread_mutex_unlock(&b->mu);
    if (!rc && !text)
        rc = berth_error_set(e, BERTH_ENOENT,
                             "pod %s was not seen by a filter or prioritize call: berth needs "
                             "its requests before it can record a binding",
                             key);
    if (rc)
        return rc;
    /* the bound pod: kind and apiVersion set, spec.nodeName = node */
    json_t *pod = json_loads(text, 0, NULL);
    free(text);
    json_t *spec = pod ? json_object_get(pod, "spec") : NULL;
    if (pod && !json_is_object(spec)) {
        spec = json_object();
        json_object_set_new(pod, "spec", spec);
    }
    char *bound = NULL;
    if (json_is_object(spec) && !json_object_set_new(spec, "nodeName", json_string(node)) &&
        !json_object_set_new(pod, "kind", json_string("Pod")) &&
        !json_object_set_new(pod, "apiVersion", json_string("v1")))
        bound = berth_report_json_text(pod, JSON_COMPACT);
    json_decref(pod);
    if (!bound)
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    size_t len = strlen(bound);
    pthread_mutex_lock(&b->mu);
    sqlite3_reset(b->put);
    sqlite3_bind_text(b->put, 1, key, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(b->put, 2, node, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(b->put, 3, uid ? uid : "", -1, SQLITE_TRANSIENT);
    sqlite3_bind_blob(b->put, 4, bound, (int)len, SQLITE_TRANSIENT);
    if (sqlite3_step(b->put) != SQLITE_DONE)
        rc = sql_fail(b->db, e, "insert");
    sqlite3_reset(b->put);
    if (!rc)
        rc = keep_bound(b, key, node, bound, len, e);
    if (!rc)
        b->generation++;
    pthread_mutex_unlock(&b->mu);
    free(bound);
    return rc;
}

int serve_bindings_snapshot(serve_bindings *b, serve_bound **out, size_t *n, uint64_t *generation)
{
    pthread_mutex_lock(&b->mu);
    if (generation)
        *generation = b->generation;
    *n = b->nbound;
    *out = malloc((b->nbound ? b->nbound : 1) * sizeof **out);
    for (size_t i = 0; *out && i < b->nbound; i++)
        (*out)[i] = (serve_bound){b->bound[i].key, b->bound[i].node, b->bound[i].doc};
    pthread_mutex_unlock(&b->mu);
    return *out ? 0 : BERTH_ENOMEM;
}

uint64_t serve_bindings_generation(serve_bindings *b)
{
    pthread_mutex_lock(&b->mu);
    uint64_t g = b->generation;
    pthread_mutex_unlock(&b->mu);
    return g;
}
