/* serve/etcd.c - the etcd implementation of the store interface
 * (serve_log, serve.h): `berth serve --etcd URL[,URL...] --estate NAME`.
 * libcurl + jansson against etcd 3.4's v3 JSON gateway (/v3/kv/txn,
 * /v3/kv/range, /v3/watch; keys and values base64). The log of an estate
 * is the keys under /berth/v1/<estate>/log/: one key per group-commit
 * batch, named by its batch id and written by a transaction guarded on the
 * key's create revision, so a retried batch lands once; its value is
 * {"batch": ID, "changes": [{"id", "kind", "format", "cluster", "pool",
 * "count", "body", "decision"}...]}. Log order is the etcd revision of
 * each key. Every append also rewrites /berth/v1/<estate>/head (the newest
 * record's revision, for linearizable reads). The checkpoint leader holds
 * /berth/v1/<estate>/checkpoint-leader (with a lease) and writes the
 * snapshot in parts under /berth/v1/<estate>/snapshot/<rev>/<part>, then
 * the pointer /berth/v1/<estate>/snapshot ("<rev> <parts>"). Followers
 * load the snapshot and the log after it, then watch the log prefix.
 * Threads: append and revision may be called from any thread (one curl
 * handle per call); follow runs on the engine's follower thread. */
#include "serve/serve.h"
#include "berth/grow.h"
#include "berth/report.h"

#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SNAP_PART (768u * 1024u) /* bytes of state per snapshot part */

typedef struct etcd_log {
    serve_log log;
    char **urls;
    size_t nurls;
    char *prefix;            /* "/berth/v1/<estate>/log/" */
    char *prefix_b64, *end_b64;
    char *head_b64;          /* "/berth/v1/<estate>/head": rewritten by every append */
    char *snap_key;          /* "/berth/v1/<estate>/snapshot": the pointer "<rev> <parts>" */
    char *snap_b64;          /* its base64; the parts: snap_key/<rev>/<part> */
    char *elect_b64;         /* "/berth/v1/<estate>/checkpoint-leader" */
    pthread_mutex_t mu;
    size_t cur;              /* endpoint that answered last (under mu) */
    uint64_t commits;        /* batches appended (under mu) */
    /* the checkpoint leader (the engine's checkpoint thread only) */
    int64_t lease;           /* granted lease (0: none) */
    double lease_ok;         /* monotonic time its last keepalive succeeded */
    int64_t elect_rev;       /* create revision of our election key (0: not leading) */
    /* TLS to etcd (NULL: curl's defaults): --etcd-cacert, --etcd-cert, --etcd-key */
    char *cacert, *cert, *key;
} etcd_log;

/* The TLS options of every request to etcd. */
static void tls_setopt(const etcd_log *l, CURL *c)
{
    if (l->cacert)
        curl_easy_setopt(c, CURLOPT_CAINFO, l->cacert);
    if (l->cert)
        curl_easy_setopt(c, CURLOPT_SSLCERT, l->cert);
    if (l->key)
        curl_easy_setopt(c, CURLOPT_SSLKEY, l->key);
}

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- base64 ---- */

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static char *b64_encode(const char *s, size_t n)
{
    char *o = malloc(4 * ((n + 2) / 3) + 1), *p = o;
    if (!o)
        return NULL;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)(unsigned char)s[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)(unsigned char)s[i + 1] << 8;
        if (i + 2 < n)
            v |= (unsigned char)s[i + 2];
        *p++ = b64[v >> 18 & 63];
        *p++ = b64[v >> 12 & 63];
        *p++ = i + 1 < n ? b64[v >> 6 & 63] : '=';
        *p++ = i + 2 < n ? b64[v & 63] : '=';
    }
    *p = 0;
    return o;
}

static int b64_val(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Decodes s into a malloc'd NUL-terminated buffer; NULL when not base64. */
static char *b64_decode(const char *s, size_t *len)
{
    size_t n = strlen(s);
    char *o = malloc(n / 4 * 3 + 4);
    if (!o || n % 4) {
        free(o);
        return NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i += 4) {
        int v[4];
        for (int j = 0; j < 4; j++)
            v[j] = s[i + j] == '=' ? 0 : b64_val(s[i + j]);
        if (v[0] < 0 || v[1] < 0 || v[2] < 0 || v[3] < 0) {
            free(o);
            return NULL;
        }
        uint32_t x = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 |
                     (uint32_t)v[3];
        o[k++] = (char)(x >> 16);
        if (s[i + 2] != '=')
            o[k++] = (char)(x >> 8 & 255);
        if (s[i + 3] != '=')
            o[k++] = (char)(x & 255);
    }
    o[k] = 0;
    *len = k;
    return o;
}

/* int64 fields come as JSON strings from the gateway */
static int64_t jint(json_t *j)
{
    if (json_is_integer(j))
        return json_integer_value(j);
    const char *s = json_string_value(j);
    return s ? strtoll(s, NULL, 10) : 0;
}

/* ---- HTTP ---- */

typedef struct buf {
    char *p;
    size_t n, cap;
} buf;

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *ud)
{
    buf *b = ud;
    size_t n = size * nmemb;
    if (berth_grow_bytes((void **)&b->p, &b->cap, b->n + n + 1, 4096))
        return 0;
    memcpy(b->p + b->n, ptr, n);
    b->n += n;
    b->p[b->n] = 0;
    return n;
}

/* POSTs body to path on one endpoint after another (starting with the one
 * that answered last); the JSON reply into *out. */
static int post_t(etcd_log *l, const char *path, const char *body, long timeout_ms, json_t **out,
                  berth_error *e)
{
    *out = NULL;
    pthread_mutex_lock(&l->mu);
    size_t first = l->cur;
    pthread_mutex_unlock(&l->mu);
    char err[CURL_ERROR_SIZE] = "";
    long code = 0;
    for (size_t k = 0; k < l->nurls; k++) {
        size_t i = (first + k) % l->nurls;
        CURL *c = curl_easy_init();
        if (!c)
            return berth_error_set(e, BERTH_ENOMEM, "out of memory");
        char url[1024];
        snprintf(url, sizeof url, "%s%s", l->urls[i], path);
        buf b = {0};
        struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
        curl_easy_setopt(c, CURLOPT_URL, url);
        tls_setopt(l, c);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c, CURLOPT_TCP_NODELAY, 1L);
        curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 1000L);
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
        curl_easy_setopt(c, CURLOPT_ERRORBUFFER, err);
        CURLcode rc = curl_easy_perform(c);
        code = 0;
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
        curl_slist_free_all(h);
        curl_easy_cleanup(c);
        if (rc == CURLE_OK && code == 200 && b.p) {
            *out = json_loads(b.p, 0, NULL);
            free(b.p);
            if (!*out)
                return berth_error_set(e, BERTH_EIO, "etcd %s: the reply is not JSON", url);
            pthread_mutex_lock(&l->mu);
            l->cur = i;
            pthread_mutex_unlock(&l->mu);
            return 0;
        }
        if (rc == CURLE_OK)
            snprintf(err, sizeof err, "HTTP %ld: %.200s", code, b.p ? b.p : "");
        free(b.p);
    }
    return berth_error_set(e, BERTH_EIO, "etcd unavailable (%zu endpoint%s): %s", l->nurls,
                           l->nurls == 1 ? "" : "s", err[0] ? err : "no answer");
}

static int post(etcd_log *l, const char *path, const char *body, json_t **out, berth_error *e)
{
    return post_t(l, path, body, 5000L, out, e);
}

/* ---- the serve_log face ---- */

static etcd_log *of_log(serve_log *s)
{
    return (etcd_log *)s;
}

static json_t *change_json(const serve_record *r)
{
    json_t *j = json_pack("{s:s,s:i,s:i,s:I}", "id", r->req_id ? r->req_id : "", "kind", r->kind,
                          "format", r->format ? r->format : 1, "count", (json_int_t)r->count);
    if (!j)
        return NULL;
    int bad = 0;
    if (r->cluster)
        bad |= json_object_set_new(j, "cluster", json_string(r->cluster));
    if (r->pool)
        bad |= json_object_set_new(j, "pool", json_string(r->pool));
    if (r->body)
        bad |= json_object_set_new(j, "body", json_stringn(r->body, r->body_len));
    if (r->decision)
        bad |= json_object_set_new(j, "decision", json_string(r->decision));
    if (bad) {
        json_decref(j);
        return NULL;
    }
    return j;
}

static int etcd_append(serve_log *s, serve_record *recs, size_t n, const char *batch_id,
                       int64_t *rev, berth_error *e)
{
    etcd_log *l = of_log(s);
    json_t *changes = json_array();
    for (size_t i = 0; changes && i < n; i++) {
        json_t *c = change_json(&recs[i]);
        if (!c || json_array_append_new(changes, c)) {
            json_decref(changes);
            return berth_error_set(e, BERTH_EINVAL, "a change is not UTF-8 text or out of memory");
        }
    }
    json_t *batch = changes ? json_pack("{s:s,s:o}", "batch", batch_id, "changes", changes)
                            : NULL;
    /* never json_dumps: it can drop a key when out of memory (berth/report.h) */
    char *value = batch ? berth_report_json_text(batch, JSON_COMPACT) : NULL;
    json_decref(batch);
    size_t klen = strlen(l->prefix) + strlen(batch_id);
    char *key = malloc(klen + 1);
    if (key)
        snprintf(key, klen + 1, "%s%s", l->prefix, batch_id);
    char *k64 = key ? b64_encode(key, klen) : NULL;
    char *v64 = value ? b64_encode(value, strlen(value)) : NULL;
    free(key);
    free(value);
    char *body = NULL;
    if (k64 && v64) {
        /* the head key shares the batch's revision: a read finds the
         * newest record with one single-key range */
        json_t *txn = json_pack(
            "{s:[{s:s,s:s,s:s,s:i}],s:[{s:{s:s,s:s}},{s:{s:s,s:s}}],s:[{s:{s:s}}]}", "compare",
            "target", "CREATE", "result", "EQUAL", "key", k64, "createRevision", 0, "success",
            "requestPut", "key", k64, "value", v64, "requestPut", "key", l->head_b64, "value",
            k64, "failure", "requestRange", "key", k64);
        body = txn ? berth_report_json_text(txn, JSON_COMPACT) : NULL;
        json_decref(txn);
    }
    free(k64);
    free(v64);
    if (!body)
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    /* a retry after an unknown outcome sends the same key: the guard makes
     * the second attempt read back the first one's revision */
    int rc = BERTH_EIO;
    for (int attempt = 0; attempt < 3 && rc; attempt++) {
        json_t *out;
        rc = post(l, "/v3/kv/txn", body, &out, e);
        if (rc) {
            usleep(200000);
            continue;
        }
        if (json_is_true(json_object_get(out, "succeeded"))) {
            *rev = jint(json_object_get(json_object_get(out, "header"), "revision"));
        } else {
            json_t *kv = json_array_get(
                json_object_get(json_object_get(json_array_get(json_object_get(out, "responses"), 0),
                                                "response_range"),
                                "kvs"),
                0);
            *rev = jint(json_object_get(kv, "mod_revision"));
        }
        json_decref(out);
        if (*rev <= 0)
            rc = berth_error_set(e, BERTH_EIO, "etcd: the transaction gave no revision");
    }
    free(body);
    if (!rc) {
        pthread_mutex_lock(&l->mu);
        l->commits++;
        pthread_mutex_unlock(&l->mu);
    }
    return rc;
}

/* The revision of the newest record (0: none): what a linearizable read
 * must have applied. A range read of etcd is linearizable by default. The
 * head key is written in the same transaction as every batch, so its
 * mod_revision is the newest batch's revision: one single-key read, however
 * long the log (a log written before the head key existed: the newest key
 * by mod revision, once). */
static int revision_t(etcd_log *l, long timeout_ms, int64_t *rev, berth_error *e)
{
    char body[1024];
    snprintf(body, sizeof body, "{\"key\":\"%s\",\"keys_only\":true}", l->head_b64);
    json_t *out;
    int rc = post_t(l, "/v3/kv/range", body, timeout_ms, &out, e);
    if (rc)
        return rc;
    json_t *kv = json_array_get(json_object_get(out, "kvs"), 0);
    *rev = jint(json_object_get(kv, "mod_revision"));
    json_decref(out);
    if (kv)
        return 0;
    snprintf(body, sizeof body,
             "{\"key\":\"%s\",\"range_end\":\"%s\",\"limit\":1,\"sort_order\":\"DESCEND\","
             "\"sort_target\":\"MOD\",\"keys_only\":true}",
             l->prefix_b64, l->end_b64);
    rc = post_t(l, "/v3/kv/range", body, timeout_ms, &out, e);
    if (rc)
        return rc;
    *rev = jint(json_object_get(json_array_get(json_object_get(out, "kvs"), 0), "mod_revision"));
    json_decref(out);
    return 0;
}

static int etcd_revision(serve_log *s, int64_t *rev, berth_error *e)
{
    return revision_t(of_log(s), 5000L, rev, e);
}

/* A heartbeat: the same linearizable read, answered within timeout_ms. */
static int etcd_heartbeat(serve_log *s, long timeout_ms, berth_error *e)
{
    int64_t rev;
    return revision_t(of_log(s), timeout_ms, &rev, e);
}

/* The records of one log key (a batch) to the record callback, in order,
 * then the batch callback with its revision. */
static int deliver(json_t *kv, const serve_follow_fns *f)
{
    int64_t rev = jint(json_object_get(kv, "mod_revision"));
    const char *v = json_string_value(json_object_get(kv, "value"));
    size_t n = 0;
    char *text = v ? b64_decode(v, &n) : NULL;
    json_t *b = text ? json_loadb(text, n, 0, NULL) : NULL;
    free(text);
    json_t *changes = json_object_get(b, "changes");
    size_t i;
    json_t *c;
    json_array_foreach(changes, i, c) {
        const char *body = json_string_value(json_object_get(c, "body"));
        serve_record r = {
            .seq = rev,
            .kind = (int)json_integer_value(json_object_get(c, "kind")),
            .format = (int)json_integer_value(json_object_get(c, "format")),
            .cluster = json_string_value(json_object_get(c, "cluster")),
            .pool = json_string_value(json_object_get(c, "pool")),
            .count = json_integer_value(json_object_get(c, "count")),
            .body = body ? body : "",
            .body_len = body ? json_string_length(json_object_get(c, "body")) : 0,
            .decision = json_string_value(json_object_get(c, "decision")),
            .req_id = json_string_value(json_object_get(c, "id")),
        };
        berth_error e;
        f->record(f->ctx, &r, &e);
    }
    if (rev > 0)
        f->batch(f->ctx, rev, json_string_value(json_object_get(b, "batch")));
    json_decref(b);
    return 0;
}

static int cmp_mod(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    int64_t x = jint(json_object_get(*(json_t *const *)a, "mod_revision"));
    int64_t y = jint(json_object_get(*(json_t *const *)b, "mod_revision"));
    return x < y ? -1 : x > y;
}

/* The base64 key of a snapshot part, or (part < 0) of the prefix of a
 * snapshot's parts, or (rev < 0) of the prefix of every part; end: its
 * range end instead. Malloc'd. */
static char *part_key(const etcd_log *l, long long rev, long part, int end)
{
    char k[512];
    int n;
    if (rev < 0)
        n = snprintf(k, sizeof k, "%s/", l->snap_key);
    else if (part < 0)
        n = snprintf(k, sizeof k, "%s/%020lld/", l->snap_key, rev);
    else
        n = snprintf(k, sizeof k, "%s/%020lld/%06ld", l->snap_key, rev, part);
    if (end && n > 0 && k[n - 1] == '/')
        k[n - 1] = '0'; /* '/' + 1 */
    return b64_encode(k, (size_t)n);
}

/* The parts of the snapshot at rev, in order, into one malloc'd text. */
static int read_parts(etcd_log *l, long long rev, size_t nparts, char **out, size_t *len,
                      berth_error *e)
{
    char *k = part_key(l, rev, -1, 0), *end = part_key(l, rev, -1, 1);
    char body[1024];
    snprintf(body, sizeof body, "{\"key\":\"%s\",\"range_end\":\"%s\"}", k ? k : "",
             end ? end : "");
    free(k);
    free(end);
    json_t *r;
    int rc = post_t(l, "/v3/kv/range", body, 30000L, &r, e);
    if (rc)
        return rc;
    json_t *kvs = json_object_get(r, "kvs");
    if (json_array_size(kvs) != nparts) {
        json_decref(r);
        return berth_error_set(e, BERTH_EIO, "etcd: snapshot %lld has %zu of %zu parts (a newer "
                               "one replaced it?)", rev, json_array_size(kvs), nparts);
    }
    size_t cap = 1, n = 0;
    for (size_t i = 0; i < nparts; i++) {
        const char *v = json_string_value(json_object_get(json_array_get(kvs, i), "value"));
        cap += v ? strlen(v) : 0;
    }
    char *text = malloc(cap);
    for (size_t i = 0; text && i < nparts; i++) { /* by key: in part order */
        const char *v = json_string_value(json_object_get(json_array_get(kvs, i), "value"));
        size_t pn = 0;
        char *p = v ? b64_decode(v, &pn) : NULL;
        if (!p) {
            free(text);
            text = NULL;
            break;
        }
        memcpy(text + n, p, pn);
        n += pn;
        free(p);
    }
    json_decref(r);
    if (!text)
        return berth_error_set(e, BERTH_EIO, "etcd: snapshot %lld is not readable", rev);
    text[n] = 0;
    *out = text;
    *len = n;
    return 0;
}

/* A new or restarted replica (or one whose watch fell behind a compaction):
 * the latest snapshot and the log keys after it, read in one transaction
 * (one revision: *at), to the load callback, then every record after the
 * snapshot in revision order. Log keys are written once, so they are all
 * there whatever etcd compacted; keys the checkpoint leader has not
 * deleted yet (at or below the snapshot's revision) are skipped. */
static int load_state(etcd_log *l, const serve_follow_fns *f, int64_t *at, berth_error *e)
{
    char body[2048];
    snprintf(body, sizeof body,
             "{\"success\":[{\"requestRange\":{\"key\":\"%s\"}},{\"requestRange\":{\"key\":\"%s\","
             "\"range_end\":\"%s\"}}]}",
             l->snap_b64, l->prefix_b64, l->end_b64);
    json_t *out;
    int rc = post_t(l, "/v3/kv/txn", body, 30000L, &out, e);
    if (rc)
        return rc;
    *at = jint(json_object_get(json_object_get(out, "header"), "revision"));
    json_t *rs = json_object_get(out, "responses");
    json_t *skv = json_array_get(
        json_object_get(json_object_get(json_array_get(rs, 0), "response_range"), "kvs"), 0);
    json_t *kvs =
        json_object_get(json_object_get(json_array_get(rs, 1), "response_range"), "kvs");
    const char *sv = json_string_value(json_object_get(skv, "value"));
    size_t n = 0;
    char *ptr = sv ? b64_decode(sv, &n) : NULL;
    /* the pointer: "<revision> <parts>\n"; the parts: the engine's state */
    long long srev = 0, nparts = 0;
    if (ptr && sscanf(ptr, "%lld %lld", &srev, &nparts) != 2)
        srev = nparts = 0;
    free(ptr);
    char *snap = NULL;
    size_t slen = 0;
    if (srev > 0 && nparts > 0) {
        rc = read_parts(l, srev, (size_t)nparts, &snap, &slen, e);
        if (rc) {
            json_decref(out);
            return rc;
        }
    }
    f->load(f->ctx, snap, slen, snap ? srev : 0);
    free(snap);
    size_t nk = json_array_size(kvs);
    json_t **order = malloc((nk ? nk : 1) * sizeof *order);
    if (!order) {
        json_decref(out);
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < nk; i++)
        order[i] = json_array_get(kvs, i);
    qsort_r(order, nk, sizeof *order, cmp_mod, NULL);
    for (size_t i = 0; i < nk; i++)
        if (jint(json_object_get(order[i], "mod_revision")) > srev)
            deliver(order[i], f);
    free(order);
    json_decref(out);
    if (*at > 0)
        f->batch(f->ctx, *at, NULL);
    return 0;
}

typedef struct watch_ctx {
    buf b;
    const serve_follow_fns *f;
    const int *stop;
    int64_t last;            /* revision of the last batch delivered */
    int canceled;
    int compacted;           /* the watch start was compacted away: load again */
} watch_ctx;

/* The watch stream: one JSON message per line. */
static size_t on_watch(char *ptr, size_t size, size_t nmemb, void *ud)
{
    watch_ctx *w = ud;
    size_t n = size * nmemb;
    if (!on_data(ptr, size, nmemb, &w->b))
        return 0;
    char *start = w->b.p, *nl;
    while ((nl = memchr(start, '\n', (size_t)(w->b.p + w->b.n - start)))) {
        json_t *m = json_loadb(start, (size_t)(nl - start), 0, NULL);
        json_t *res = json_object_get(m, "result");
        if (res) {
            w->f->alive(w->f->ctx, 1);
            if (jint(json_object_get(res, "compact_revision")) > 0)
                w->compacted = 1;
            if (json_is_true(json_object_get(res, "canceled")) || w->compacted)
                w->canceled = 1;
            size_t i;
            json_t *ev;
            json_array_foreach(json_object_get(res, "events"), i, ev) {
                json_t *kv = json_object_get(ev, "kv");
                const char *type = json_string_value(json_object_get(ev, "type"));
                int64_t rev = jint(json_object_get(kv, "mod_revision"));
                if (type && strcmp(type, "PUT"))
                    continue; /* the checkpoint leader's DELETE: not a record */
                if (rev > w->last) {
                    deliver(kv, w->f);
                    w->last = rev;
                }
            }
        }
        json_decref(m);
        start = nl + 1;
    }
    size_t rest = (size_t)(w->b.p + w->b.n - start);
    memmove(w->b.p, start, rest);
    w->b.n = rest;
    return w->canceled ? 0 : n;
}

static int on_progress(void *ud, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
    (void)a, (void)b, (void)c, (void)d;
    const watch_ctx *w = ud;
    return __atomic_load_n(w->stop, __ATOMIC_SEQ_CST) ? 1 : 0;
}

static void etcd_follow(serve_log *s, const serve_follow_fns *f, const int *stop)
{
    etcd_log *l = of_log(s);
    watch_ctx w = {.f = f, .stop = stop, .compacted = 1};
    size_t i = 0;
    while (!__atomic_load_n(stop, __ATOMIC_SEQ_CST)) {
        if (w.compacted) { /* first, and after a compaction passed the watch */
            berth_error e;
            berth_error_clear(&e);
            int64_t at;
            if (load_state(l, f, &at, &e)) {
                fprintf(stderr, "berth serve: etcd: cannot load the estate: %s\n", e.msg);
                f->alive(f->ctx, 0);
                for (int k = 0; k < 5 && !__atomic_load_n(stop, __ATOMIC_SEQ_CST); k++)
                    usleep(50000);
                continue;
            }
            w.last = at;
            w.compacted = 0;
        }
        char body[1024], url[1024];
        snprintf(body, sizeof body,
                 "{\"create_request\":{\"key\":\"%s\",\"range_end\":\"%s\",\"start_revision\":"
                 "%lld}}",
                 l->prefix_b64, l->end_b64, (long long)w.last + 1);
        snprintf(url, sizeof url, "%s/v3/watch", l->urls[i % l->nurls]);
        CURL *c = curl_easy_init();
        if (!c)
            break;
        struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
        curl_easy_setopt(c, CURLOPT_URL, url);
        tls_setopt(l, c);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_watch);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &w);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c, CURLOPT_TCP_NODELAY, 1L);
        curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 1000L);
        curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
        curl_easy_setopt(c, CURLOPT_XFERINFODATA, &w);
        curl_easy_perform(c);
        curl_slist_free_all(h);
        curl_easy_cleanup(c);
        w.b.n = 0;
        f->alive(f->ctx, 0);
        if (w.canceled && w.compacted)
            fprintf(stderr, "berth serve: etcd: the log was compacted past revision %lld: "
                            "loading the snapshot\n", (long long)w.last);
        w.canceled = 0;
        i++; /* the next endpoint */
        for (int k = 0; k < 5 && !__atomic_load_n(stop, __ATOMIC_SEQ_CST); k++)
            usleep(50000);
    }
    free(w.b.p);
}

/* ---- the checkpoint leader ---- */

/* The "ID" of a lease as the gateway writes it (a string). */
static int lease_grant(etcd_log *l, berth_error *e)
{
    json_t *out;
    int rc = post_t(l, "/v3/lease/grant", "{\"TTL\":15}", 2000L, &out, e);
    if (rc)
        return rc;
    l->lease = jint(json_object_get(out, "ID"));
    json_decref(out);
    l->lease_ok = mono();
    return l->lease > 0 ? 0 : berth_error_set(e, BERTH_EIO, "etcd: no lease granted");
}

/* 1: still granted; 0: gone (expired or revoked); error: unreachable. */
static int lease_keepalive(etcd_log *l, int *alive, berth_error *e)
{
    char body[128];
    snprintf(body, sizeof body, "{\"ID\":\"%lld\"}", (long long)l->lease);
    json_t *out;
    int rc = post_t(l, "/v3/lease/keepalive", body, 2000L, &out, e);
    if (rc)
        return rc;
    *alive = jint(json_object_get(json_object_get(out, "result"), "TTL")) > 0;
    json_decref(out);
    if (*alive)
        l->lease_ok = mono();
    return 0;
}

/* Keeps this replica a candidate: a lease of 15 s kept alive, and the
 * election key created with it when nobody holds it. 1: this replica
 * leads (its election key exists at elect_rev), 0: another one does. */
static int etcd_lead(serve_log *s, const char *id, berth_error *e)
{
    etcd_log *l = of_log(s);
    int rc = 0;
    if (l->lease) {
        int alive = 0;
        rc = lease_keepalive(l, &alive, e);
        if ((!rc && !alive) || (rc && mono() - l->lease_ok > 15.0)) {
            l->lease = 0; /* expired: so is the election key made with it */
            l->elect_rev = 0;
        }
        if (rc)
            return l->elect_rev && mono() - l->lease_ok < 10.0 ? 1 : 0;
    }
    if (!l->lease && (rc = lease_grant(l, e)))
        return 0;
    if (l->elect_rev)
        return 1;
    char *v64 = b64_encode(id, strlen(id));
    if (!v64)
        return 0;
    char body[2048];
    snprintf(body, sizeof body,
             "{\"compare\":[{\"target\":\"CREATE\",\"result\":\"EQUAL\",\"key\":\"%s\","
             "\"createRevision\":0}],\"success\":[{\"requestPut\":{\"key\":\"%s\",\"value\":\"%s\","
             "\"lease\":\"%lld\"}}],\"failure\":[{\"requestRange\":{\"key\":\"%s\"}}]}",
             l->elect_b64, l->elect_b64, v64, (long long)l->lease, l->elect_b64);
    free(v64);
    json_t *out;
    if (post_t(l, "/v3/kv/txn", body, 2000L, &out, e))
        return 0;
    if (json_is_true(json_object_get(out, "succeeded"))) {
        l->elect_rev = jint(json_object_get(json_object_get(out, "header"), "revision"));
    } else { /* ours from an attempt whose answer was lost? */
        json_t *kv = json_array_get(
            json_object_get(
                json_object_get(json_array_get(json_object_get(out, "responses"), 0),
                                "response_range"),
                "kvs"),
            0);
        if (jint(json_object_get(kv, "lease")) == l->lease)
            l->elect_rev = jint(json_object_get(kv, "create_revision"));
    }
    json_decref(out);
    return l->elect_rev > 0;
}

/* A transaction guarded by this replica's election key: the success ops
 * (JSON array text). 0 done; BERTH_ENOENT when it does not lead any more. */
static int guarded(etcd_log *l, const char *ops, berth_error *e)
{
    size_t n = strlen(ops) + 512;
    char *body = malloc(n);
    if (!body)
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    snprintf(body, n,
             "{\"compare\":[{\"target\":\"CREATE\",\"result\":\"EQUAL\",\"key\":\"%s\","
             "\"createRevision\":\"%lld\"}],\"success\":%s}",
             l->elect_b64, (long long)l->elect_rev, ops);
    json_t *out;
    int rc = post_t(l, "/v3/kv/txn", body, 30000L, &out, e);
    free(body);
    if (rc)
        return rc;
    int ok = json_is_true(json_object_get(out, "succeeded"));
    json_decref(out);
    if (!ok) {
        l->elect_rev = 0;
        return berth_error_set(e, BERTH_ENOENT, "etcd: no longer the checkpoint leader");
    }
    return 0;
}

/* Deletes the keys of kvs (range results) in guarded transactions of at
 * most 100 deletes (etcd's default --max-txn-ops is 128); *removed counts
 * them. */
static int delete_keys(etcd_log *l, json_t *kvs, size_t *removed, berth_error *e)
{
    int rc = 0;
    size_t nk = json_array_size(kvs);
    for (size_t i = 0; !rc && i < nk; i += 100) {
        size_t cap = 64, used = 1;
        char *del = malloc(cap);
        if (!del) {
            rc = berth_error_set(e, BERTH_ENOMEM, "out of memory");
            break;
        }
        strcpy(del, "[");
        for (size_t k = i; k < nk && k < i + 100; k++) {
            const char *key = json_string_value(json_object_get(json_array_get(kvs, k), "key"));
            size_t need = used + (key ? strlen(key) : 0) + 64;
            if (berth_grow_bytes((void **)&del, &cap, need, 64)) {
                rc = BERTH_ENOMEM;
                break;
            }
            used += (size_t)snprintf(del + used, cap - used,
                                     "%s{\"requestDeleteRange\":{\"key\":\"%s\"}}",
                                     k > i ? "," : "", key ? key : "");
        }
        if (!rc) {
            strcpy(del + used, "]");
            rc = guarded(l, del, e);
            if (!rc)
                *removed += nk - i < 100 ? nk - i : 100;
        } else {
            rc = berth_error_set(e, BERTH_ENOMEM, "out of memory");
        }
        free(del);
    }
    return rc;
}

/* As leader: the snapshot covering revision rev, then the log keys at or
 * below rev deleted (transactions of at most 100 deletes, under etcd's
 * default --max-txn-ops 128), then etcd compacted at rev. */
static int etcd_checkpoint(serve_log *s, const char *state, size_t len, int64_t rev,
                           size_t *removed, berth_error *e)
{
    etcd_log *l = of_log(s);
    *removed = 0;
    if (!l->elect_rev)
        return berth_error_set(e, BERTH_ENOENT, "not the checkpoint leader");
    /* the state in parts under etcd's request limit (--max-request-bytes,
     * default 1.5 MiB: 768 KiB is 1 MiB in base64), then the pointer */
    size_t nparts = len ? (len + SNAP_PART - 1) / SNAP_PART : 1;
    int rc = 0;
    for (size_t i = 0; !rc && i < nparts; i++) {
        size_t off = i * SNAP_PART, pl = len - off < SNAP_PART ? len - off : SNAP_PART;
        char *k = part_key(l, (long long)rev, (long)i, 0);
        char *v = b64_encode(state + off, pl);
        size_t on = k && v ? strlen(k) + strlen(v) + 128 : 0;
        char *ops = on ? malloc(on) : NULL;
        if (ops) {
            snprintf(ops, on, "[{\"requestPut\":{\"key\":\"%s\",\"value\":\"%s\"}}]", k, v);
            rc = guarded(l, ops, e);
        } else {
            rc = berth_error_set(e, BERTH_ENOMEM, "out of memory");
        }
        free(ops);
        free(k);
        free(v);
    }
    if (!rc) {
        char ptr[64], ops[512];
        snprintf(ptr, sizeof ptr, "%lld %zu\n", (long long)rev, nparts);
        char *v = b64_encode(ptr, strlen(ptr));
        snprintf(ops, sizeof ops, "[{\"requestPut\":{\"key\":\"%s\",\"value\":\"%s\"}}]",
                 l->snap_b64, v ? v : "");
        rc = v ? guarded(l, ops, e) : berth_error_set(e, BERTH_ENOMEM, "out of memory");
        free(v);
    }
    if (rc)
        return rc;
    /* older snapshots' parts */
    char *pk = part_key(l, -1, -1, 0), *pe = part_key(l, -1, -1, 1);
    char *cur = part_key(l, (long long)rev, -1, 0);
    char q[1024];
    snprintf(q, sizeof q, "{\"key\":\"%s\",\"range_end\":\"%s\",\"keys_only\":true}",
             pk ? pk : "", pe ? pe : "");
    free(pk);
    free(pe);
    json_t *old;
    if (cur && !post_t(l, "/v3/kv/range", q, 30000L, &old, e)) {
        json_t *stale = json_array();
        size_t i;
        json_t *kv;
        char *cur_text = NULL;
        size_t cur_len = 0;
        cur_text = b64_decode(cur, &cur_len);
        json_array_foreach(json_object_get(old, "kvs"), i, kv) {
            const char *k64 = json_string_value(json_object_get(kv, "key"));
            size_t kl = 0;
            char *k = k64 ? b64_decode(k64, &kl) : NULL;
            if (k && cur_text && (kl < cur_len || memcmp(k, cur_text, cur_len)))
                json_array_append(stale, kv);
            free(k);
        }
        free(cur_text);
        size_t gone = 0;
        delete_keys(l, stale, &gone, e);
        json_decref(stale);
        json_decref(old);
    }
    free(cur);
    berth_error_clear(e);
    char body[1024];
    snprintf(body, sizeof body,
             "{\"key\":\"%s\",\"range_end\":\"%s\",\"keys_only\":true,\"max_mod_revision\":"
             "\"%lld\"}",
             l->prefix_b64, l->end_b64, (long long)rev);
    json_t *out;
    if ((rc = post_t(l, "/v3/kv/range", body, 30000L, &out, e)))
        return rc;
    rc = delete_keys(l, json_object_get(out, "kvs"), removed, e);
    json_decref(out);
    if (rc)
        return rc;
    /* etcd's history below the snapshot: not needed by anybody (a replica
     * whose watch it passes loads the snapshot) */
    snprintf(body, sizeof body, "{\"revision\":\"%lld\"}", (long long)rev);
    if (post_t(l, "/v3/kv/compaction", body, 30000L, &out, e) == 0)
        json_decref(out);
    else
        berth_error_clear(e); /* compacted further already, by another estate's leader */
    return 0;
}

/* Defragments every member in turn (each blocks its own reads and writes
 * while it rewrites its file). */
static int etcd_defragment(serve_log *s, berth_error *e)
{
    etcd_log *l = of_log(s);
    int rc = 0;
    for (size_t i = 0; i < l->nurls; i++) {
        char url[1024];
        snprintf(url, sizeof url, "%s/v3/maintenance/defragment", l->urls[i]);
        CURL *c = curl_easy_init();
        if (!c)
            return berth_error_set(e, BERTH_ENOMEM, "out of memory");
        buf b = {0};
        curl_easy_setopt(c, CURLOPT_URL, url);
        tls_setopt(l, c);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, "{}");
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 60000L);
        long code = 0;
        CURLcode cr = curl_easy_perform(c);
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
        curl_easy_cleanup(c);
        free(b.p);
        if (cr != CURLE_OK || code != 200)
            rc = berth_error_set(e, BERTH_EIO, "etcd %s: defragment failed (HTTP %ld)",
                                 l->urls[i], code);
    }
    return rc;
}

static uint64_t etcd_commits(serve_log *s)
{
    etcd_log *l = of_log(s);
    pthread_mutex_lock(&l->mu);
    uint64_t n = l->commits;
    pthread_mutex_unlock(&l->mu);
    return n;
}

static int etcd_read(serve_log *s, int64_t from, serve_record_fn fn, void *ctx, berth_error *e)
{
    (void)s, (void)from, (void)fn, (void)ctx;
    return berth_error_set(e, BERTH_EINTERNAL, "etcd: the log is read by follow");
}

static void etcd_close(serve_log *s)
{
    etcd_log *l = of_log(s);
    if (!l)
        return;
    if (l->elect_rev) { /* step down at once rather than after the lease's TTL */
        char body[128];
        snprintf(body, sizeof body, "{\"ID\":\"%lld\"}", (long long)l->lease);
        json_t *out;
        berth_error e;
        if (!post_t(l, "/v3/lease/revoke", body, 1000L, &out, &e))
            json_decref(out);
    }
    for (size_t i = 0; i < l->nurls; i++)
        free(l->urls[i]);
    free(l->urls);
    free(l->cacert);
    free(l->cert);
    free(l->key);
    free(l->prefix);
    free(l->prefix_b64);
    free(l->end_b64);
    free(l->head_b64);
    free(l->snap_b64);
    free(l->snap_key);
    free(l->elect_b64);
    pthread_mutex_destroy(&l->mu);
    free(l);
}

static const serve_log_vt etcd_vt = {
    .name = "etcd",
    .shared = 1,
    .append = etcd_append,
    .read = etcd_read,
    .revision = etcd_revision,
    .heartbeat = etcd_heartbeat,
    .follow = etcd_follow,
    .lead = etcd_lead,
    .checkpoint = etcd_checkpoint,
    .defragment = etcd_defragment,
    .commits = etcd_commits,
    .close = etcd_close,
};

/* 0 when path names a readable file; else BERTH_EINVAL naming option. */
static int readable(const char *option, const char *path, berth_error *e)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return berth_error_set(e, BERTH_EINVAL, "%s: cannot read '%s': %s", option, path,
                               strerror(errno));
    fclose(f);
    return 0;
}

int serve_log_open_etcd(const char *endpoints, const char *estate, serve_log **out,
                        berth_error *e)
{
    return serve_log_open_etcd_tls(endpoints, estate, NULL, out, e);
}

int serve_log_open_etcd_tls(const char *endpoints, const char *estate,
                            const serve_etcd_tls *tls, serve_log **out, berth_error *e)
{
    *out = NULL;
    if (tls) {
        if (tls->cacert && readable("--etcd-cacert", tls->cacert, e))
            return BERTH_EINVAL;
        if (tls->cert && readable("--etcd-cert", tls->cert, e))
            return BERTH_EINVAL;
        if (tls->key && readable("--etcd-key", tls->key, e))
            return BERTH_EINVAL;
        if (!tls->cert != !tls->key)
            return berth_error_set(e, BERTH_EINVAL,
                                   "--etcd-cert and --etcd-key: both options or neither");
    }
    if (!estate || !serve_name_valid(estate, strlen(estate)))
        return berth_error_set(e, BERTH_EINVAL,
                               "--estate: a name of 1-63 letters, digits, '-', '_' or '.' is "
                               "needed with --etcd");
    curl_global_init(CURL_GLOBAL_DEFAULT);
    etcd_log *l = calloc(1, sizeof *l);
    if (!l)
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    l->log.vt = &etcd_vt;
    pthread_mutex_init(&l->mu, NULL);
    int rc = 0;
    if (tls && ((tls->cacert && !(l->cacert = strdup(tls->cacert))) ||
                (tls->cert && !(l->cert = strdup(tls->cert))) ||
                (tls->key && !(l->key = strdup(tls->key)))))
        rc = berth_error_set(e, BERTH_ENOMEM, "out of memory");
    for (const char *p = endpoints; !rc && *p;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        while (n && p[n - 1] == '/')
            n--;
        if (n == 0 || (strncmp(p, "http://", 7) && strncmp(p, "https://", 8)) || n > 900) {
            rc = berth_error_set(e, BERTH_EINVAL,
                                 "--etcd: expected http(s)://HOST:PORT[,http(s)://HOST:PORT...], "
                                 "got "
                                 "'%s'", endpoints);
            break;
        }
        char **u = realloc(l->urls, (l->nurls + 1) * sizeof *u);
        if (!u || !(u[l->nurls] = strndup(p, n))) {
            if (u)
                l->urls = u;
            rc = berth_error_set(e, BERTH_ENOMEM, "out of memory");
            break;
        }
        l->urls = u;
        l->nurls++;
        p = comma ? comma + 1 : p + strlen(p);
    }
    if (!rc && !l->nurls)
        rc = berth_error_set(e, BERTH_EINVAL, "--etcd: no endpoint given");
    if (!rc) {
        size_t n = strlen(estate) + 32;
        l->prefix = malloc(n);
        char *end = malloc(n);
        if (l->prefix && end) {
            snprintf(l->prefix, n, "/berth/v1/%s/log/", estate);
            snprintf(end, n, "/berth/v1/%s/log0", estate); /* '/' + 1 */
            l->prefix_b64 = b64_encode(l->prefix, strlen(l->prefix));
            l->end_b64 = b64_encode(end, strlen(end));
            snprintf(end, n, "/berth/v1/%s/head", estate);
            l->head_b64 = b64_encode(end, strlen(end));
            snprintf(end, n, "/berth/v1/%s/snapshot", estate);
            l->snap_b64 = b64_encode(end, strlen(end));
            l->snap_key = strdup(end);
            snprintf(end, n, "/berth/v1/%s/checkpoint-leader", estate);
            l->elect_b64 = b64_encode(end, strlen(end));
        }
        free(end);
        if (!l->prefix_b64 || !l->end_b64 || !l->head_b64 || !l->snap_b64 || !l->elect_b64 ||
            !l->snap_key)
            rc = berth_error_set(e, BERTH_ENOMEM, "out of memory");
    }
    if (!rc) { /* reachable now, or say so */
        int64_t rev;
        rc = etcd_revision(&l->log, &rev, e);
    }
    if (rc) {
        etcd_close(&l->log);
        return rc;
    }
    *out = &l->log;
    return 0;
}
