/* serve/engine.c - the estate behind `berth serve`: one berth_nexus, one
 * worker thread that applies mutations in arrival order through the
 * library's incremental API, and group commit (every mutation taken from
 * the queue together is applied, appended to the log in one transaction,
 * committed with one fsync, then all are acknowledged). Readers take the
 * state lock shared and only ever see committed state: the worker holds it
 * exclusively from the first apply of a batch to its commit. Restart
 * replays the log through the same apply functions. */
#include "serve/serve.h"

#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "berth/doc.h"
#include "berth/nexus.h"
#include "berth/report.h"

typedef struct serve_op {
    int kind;                   /* serve_rec_kind */
    const char *body;           /* request text (create, estate) */
    size_t len;
    berth_nexus *parsed;        /* create: the parsed cluster; estate: the new estate */
    const char *cluster, *pool;
    int64_t count;
    serve_reply reply;
    int accepted;               /* appended to the log */
    int done;
    struct serve_op *next;
} serve_op;

struct serve_engine {
    serve_store *store;
    berth_nexus *nx;            /* NULL until an estate is loaded */
    pthread_rwlock_t state;
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    serve_op *head, *tail;
    int stop, fatal;
    unsigned max_batch;
    pthread_t worker;
    int started;
    serve_engine_stats st;      /* counters (under state lock) */
};

static const berth_nexus_options nexus_opt = {.use_index = 1, .tiebreak = BERTH_TIE_FIRST};

/* ---- replies ---- */

static const char *const reason_names[SERVE_REJ_COUNT] = {
    "bad_input", "invalid", "conflict", "not_found", "no_estate", "does_not_fit", "storage",
    "internal"};

const char *serve_reason_name(serve_reason r)
{
    return (unsigned)r < SERVE_REJ_COUNT ? reason_names[r] : "internal";
}

/* json_dumps through a callback that remembers a failed append: jansson
 * 2.14's do_dump ignores the result of writing an object's key, so an
 * allocation failure there left a 200 reply with the key missing (torture
 * finding). NULL on any failure. */
typedef struct dump_buf {
    char *s;
    size_t n, cap;
    int failed;
} dump_buf;

static int dump_append(const char *buf, size_t size, void *data)
{
    dump_buf *d = data;
    if (d->failed)
        return -1;
    if (d->n + size + 1 > d->cap) {
        size_t nc = d->cap ? d->cap : 256;
        while (nc < d->n + size + 1)
            nc *= 2;
        char *q = realloc(d->s, nc);
        if (!q) {
            d->failed = 1;
            return -1;
        }
        d->s = q;
        d->cap = nc;
    }
    memcpy(d->s + d->n, buf, size);
    d->n += size;
    d->s[d->n] = 0;
    return 0;
}

static char *dumps_checked(const json_t *j, size_t flags)
{
    dump_buf d = {NULL, 0, 0, 0};
    if (json_dump_callback(j, dump_append, &d, flags) || d.failed || !d.s) {
        free(d.s);
        return NULL;
    }
    return d.s;
}

void serve_reply_error(serve_reply *r, int status, const char *code, const char *msg)
{
    free(r->body);
    r->body = NULL;
    r->status = status;
    json_t *j = json_pack("{s:{s:s,s:s}}", "error", "code", code, "message", msg ? msg : "");
    if (!j) /* message not UTF-8 */
        j = json_pack("{s:{s:s,s:s}}", "error", "code", code, "message", "(unprintable message)");
    r->body = j ? dumps_checked(j, JSON_COMPACT | BERTH_JSON_REAL) : NULL;
    json_decref(j);
    if (!r->body) {
        r->status = 500;
        r->body = strdup("{\"error\":{\"code\":\"internal\",\"message\":\"out of memory\"}}");
    }
}

void serve_reply_json(serve_reply *r, int status, json_t *j)
{
    free(r->body);
    r->body = j ? dumps_checked(j, JSON_COMPACT | BERTH_JSON_REAL) : NULL;
    json_decref(j);
    r->status = status;
    if (!r->body)
        serve_reply_error(r, 500, "internal", "out of memory rendering the reply");
}

static void reject(serve_engine *g, serve_reply *r, serve_reason why, int status, const char *msg)
{
    g->st.rejected[why]++;
    serve_reply_error(r, status, serve_reason_name(why), msg);
}

/* ---- parsing (on the caller's thread) ---- */

static int parse_estate(const char *body, size_t len, berth_nexus **out, serve_reply *r)
{
    berth_error e;
    berth_error_clear(&e);
    berth_nexus *nx = calloc(1, sizeof *nx);
    if (!nx) {
        serve_reply_error(r, 500, "internal", "out of memory");
        return -1;
    }
    berth_nexus_init(nx);
    berth_source src;
    int rc = berth_doc_load_buffer(&nx->arena, "body", body, len, &src, &e);
    if (!rc)
        rc = berth_nexus_load(nx, &src, 0, &e);
    if (!rc && (nx->nspecs || nx->nsteps))
        rc = berth_error_set(&e, BERTH_EINVAL,
                             "body: the estate holds Site and VmSku documents only; create "
                             "clusters with POST /v1/clusters");
    if (!rc)
        rc = berth_nexus_validate(nx, &e);
    if (!rc)
        rc = berth_nexus_prepare(nx, &nexus_opt, &e);
    if (rc) {
        serve_reply_error(r, rc == BERTH_ENOMEM ? 500 : 400,
                          rc == BERTH_ENOMEM ? "internal" : "bad_input", e.msg);
        berth_nexus_free(nx);
        free(nx);
        return -1;
    }
    *out = nx;
    return 0;
}

static void free_nexus(berth_nexus *nx)
{
    if (nx) {
        berth_nexus_free(nx);
        free(nx);
    }
}

/* A KubernetesCluster document into a scratch model (builtin SKUs only;
 * SKU and zone names are checked against the live estate on apply). */
/* The cluster's and its pools' names must be usable in a path
 * (validate.c): 0, or -1 with a located 400 in r. */
static int spec_names(const berth_cluster_spec *c, serve_reply *r)
{
    char where[300];
    snprintf(where, sizeof where, "%s: metadata.name", c->where ? c->where : "body");
    if (serve_name_check(where, "cluster", c->name, strlen(c->name), r))
        return -1;
    for (uint32_t i = 0; i < c->npools; i++) {
        const berth_pool_spec *p = &c->pools[i];
        snprintf(where, sizeof where, "%s: name", p->where ? p->where : "body");
        if (serve_name_check(where, "pool", p->name, strlen(p->name), r))
            return -1;
    }
    return 0;
}

static int parse_cluster(const char *body, size_t len, berth_nexus **out, serve_reply *r)
{
    berth_error e;
    berth_error_clear(&e);
    berth_nexus *nx = calloc(1, sizeof *nx);
    if (!nx) {
        serve_reply_error(r, 500, "internal", "out of memory");
        return -1;
    }
    berth_nexus_init(nx);
    uint32_t builtin = nx->nskus;
    berth_source src;
    int rc = berth_doc_load_buffer(&nx->arena, "body", body, len, &src, &e);
    if (!rc)
        rc = berth_nexus_load(nx, &src, 0, &e);
    if (!rc && (nx->nspecs != 1 || nx->nsteps != 1 || nx->have_site || nx->nskus != builtin))
        rc = berth_error_set(&e, BERTH_EINVAL,
                             "body: expected exactly one KubernetesCluster document");
    if (rc) {
        serve_reply_error(r, rc == BERTH_ENOMEM ? 500 : 400,
                          rc == BERTH_ENOMEM ? "internal" : "bad_input", e.msg);
        free_nexus(nx);
        return -1;
    }
    if (spec_names(&nx->specs[0], r)) {
        free_nexus(nx);
        return -1;
    }
    *out = nx;
    return 0;
}

/* ---- apply (worker thread, state lock held exclusively) ---- */

static json_t *estate_summary(const berth_nexus *nx, int64_t seq)
{
    return json_pack("{s:s,s:i,s:i,s:i,s:i,s:I}", "site", nx->site_name ? nx->site_name : "",
                     "racks", (json_int_t)nx->nracks, "machines", (json_int_t)nx->nmachines,
                     "numaCells", (json_int_t)nx->ncells, "skus", (json_int_t)nx->nskus, "seq",
                     (json_int_t)seq);
}

static void apply_estate(serve_engine *g, serve_op *op)
{
    berth_nexus *old = g->nx;
    g->nx = op->parsed;
    op->parsed = old; /* freed by the submitter (or restored on rollback) */
    op->accepted = 1;
    op->reply.status = 200;
}

static void apply_create(serve_engine *g, serve_op *op)
{
    berth_nexus *nx = g->nx;
    const berth_cluster_spec *in = &op->parsed->specs[0];
    if (!nx) {
        reject(g, &op->reply, SERVE_REJ_NO_ESTATE, 409, "no estate loaded: PUT /v1/estate first");
        return;
    }
    if (berth_nexus_find_cluster(nx, in->name) != BERTH_NEXUS_NONE) {
        char msg[600];
        snprintf(msg, sizeof msg, "cluster '%.500s' already exists", in->name);
        reject(g, &op->reply, SERVE_REJ_CONFLICT, 409, msg);
        return;
    }
    /* the live model keeps the cluster and pool names: copy them into its arena */
    berth_pool_spec *pools = calloc(in->npools, sizeof *pools);
    berth_cluster_spec cs = *in;
    cs.pools = pools;
    cs.name = berth_arena_strdup(&nx->arena, in->name);
    int oom = !pools || !cs.name;
    for (uint32_t i = 0; !oom && i < in->npools; i++) {
        pools[i] = in->pools[i];
        pools[i].name = berth_arena_strdup(&nx->arena, in->pools[i].name);
        oom = !pools[i].name;
    }
    if (oom) {
        free(pools);
        reject(g, &op->reply, SERVE_REJ_INTERNAL, 500, "out of memory");
        return;
    }
    berth_error e;
    berth_error_clear(&e);
    uint32_t cid = BERTH_NEXUS_NONE;
    int rc = berth_nexus_create_cluster(nx, &cs, &nexus_opt, &cid, &e);
    free(pools);
    if (rc == 0) {
        op->accepted = 1;
        serve_reply_json(&op->reply, 201, berth_report_nexus_cluster_json(nx, cid));
        return;
    }
    /* all-or-nothing: a failed cluster keeps no VM; deleting it frees the name */
    if (cid != BERTH_NEXUS_NONE)
        berth_nexus_delete_cluster(nx, cid, NULL);
    if (rc == BERTH_ENOFIT)
        reject(g, &op->reply, SERVE_REJ_DOES_NOT_FIT, 422, e.msg);
    else if (rc == BERTH_EINVAL)
        reject(g, &op->reply, SERVE_REJ_INVALID, 422, e.msg);
    else
        reject(g, &op->reply, SERVE_REJ_INTERNAL, 500, e.msg);
}

static uint32_t find_pool(serve_engine *g, serve_op *op, uint32_t *cid_out)
{
    char msg[1200];
    if (!g->nx) {
        reject(g, &op->reply, SERVE_REJ_NO_ESTATE, 409, "no estate loaded: PUT /v1/estate first");
        return BERTH_NEXUS_NONE;
    }
    uint32_t cid = berth_nexus_find_cluster(g->nx, op->cluster);
    if (cid == BERTH_NEXUS_NONE) {
        snprintf(msg, sizeof msg, "no cluster named '%.500s'", op->cluster);
        reject(g, &op->reply, SERVE_REJ_NOT_FOUND, 404, msg);
        return BERTH_NEXUS_NONE;
    }
    *cid_out = cid;
    if (!op->pool)
        return cid;
    uint32_t pid = berth_nexus_find_pool(g->nx, cid, op->pool);
    if (pid == BERTH_NEXUS_NONE) {
        snprintf(msg, sizeof msg, "cluster '%.500s' has no pool named '%.500s'", op->cluster,
                 op->pool);
        reject(g, &op->reply, SERVE_REJ_NOT_FOUND, 404, msg);
    }
    return pid;
}

static void apply_scale(serve_engine *g, serve_op *op)
{
    uint32_t cid;
    uint32_t pid = find_pool(g, op, &cid);
    if (pid == BERTH_NEXUS_NONE)
        return;
    berth_nexus *nx = g->nx;
    int32_t old = nx->pools[pid].count;
    uint32_t old_ordinal = nx->pools[pid].next_ordinal;
    berth_error e;
    berth_error_clear(&e);
    int rc = berth_nexus_scale_pool(nx, pid, op->count, &nexus_opt, &e);
    if (rc == 0) {
        op->accepted = 1;
        serve_reply_json(&op->reply, 200, berth_report_nexus_cluster_json(nx, cid));
        return;
    }
    /* the pool kept its VMs; put its desired count back, and the VM name
     * counter the failed attempt advanced (a replay never sees the attempt,
     * so the next VM must get the same name live and after a restart) */
    if (berth_nexus_scale_pool(nx, pid, old, &nexus_opt, NULL))
        rc = BERTH_ENOMEM; /* not restored: a 500, and the worker rebuilds from the log */
    nx->pools[pid].next_ordinal = old_ordinal;
    if (rc == BERTH_ENOMEM && !e.msg[0])
        berth_error_set(&e, rc, "out of memory");
    if (rc == BERTH_ENOFIT)
        reject(g, &op->reply, SERVE_REJ_DOES_NOT_FIT, 422, e.msg);
    else if (rc == BERTH_EINVAL)
        reject(g, &op->reply, SERVE_REJ_INVALID, 422, e.msg);
    else
        reject(g, &op->reply, SERVE_REJ_INTERNAL, 500, e.msg);
}

static void apply_delete(serve_engine *g, serve_op *op)
{
    uint32_t cid;
    if (find_pool(g, op, &cid) == BERTH_NEXUS_NONE)
        return;
    berth_error e;
    berth_error_clear(&e);
    int rc = berth_nexus_delete_cluster(g->nx, cid, &e);
    if (rc) {
        reject(g, &op->reply, SERVE_REJ_INTERNAL, 500, e.msg);
        return;
    }
    op->accepted = 1;
    op->reply.status = 204;
}

static void apply(serve_engine *g, serve_op *op)
{
    switch (op->kind) {
    case SERVE_REC_ESTATE: apply_estate(g, op); break;
    case SERVE_REC_CREATE: apply_create(g, op); break;
    case SERVE_REC_SCALE: apply_scale(g, op); break;
    case SERVE_REC_DELETE: apply_delete(g, op); break;
    default: reject(g, &op->reply, SERVE_REJ_INTERNAL, 500, "unknown operation");
    }
    if (op->accepted && (unsigned)op->kind < 5)
        g->st.accepted[op->kind]++;
}

/* ---- replay ---- */

static int replay_one(void *ctx, const serve_record *r, berth_error *e)
{
    serve_engine *g = ctx;
    serve_op op = {.kind = r->kind, .body = r->body, .len = r->body_len, .cluster = r->cluster,
                   .pool = r->pool, .count = r->count};
    int parsed = 0;
    if (r->kind == SERVE_REC_ESTATE)
        parsed = parse_estate(r->body, r->body_len, &op.parsed, &op.reply);
    else if (r->kind == SERVE_REC_CREATE)
        parsed = parse_cluster(r->body, r->body_len, &op.parsed, &op.reply);
    if (parsed == 0)
        apply(g, &op);
    int rc = 0;
    if (!op.accepted || op.reply.status >= 500)
        rc = berth_error_set(e, BERTH_EINTERNAL,
                             "store: record %lld (kind %d) no longer applies: %s",
                             (long long)r->seq, r->kind, op.reply.body ? op.reply.body : "");
    free_nexus(op.parsed);
    free(op.reply.body);
    return rc;
}

/* Rebuilds the state from the log (startup, or after a failed commit). */
static int reload(serve_engine *g, berth_error *e)
{
    free_nexus(g->nx);
    g->nx = NULL;
    return serve_store_replay(g->store, replay_one, g, e);
}

/* ---- the worker ---- */

static void *worker_main(void *arg)
{
    serve_engine *g = arg;
    pthread_mutex_lock(&g->mu);
    for (;;) {
        while (!g->head && !g->stop)
            pthread_cond_wait(&g->wake, &g->mu);
        if (!g->head && g->stop)
            break;
        /* take up to max_batch queued operations */
        serve_op *batch = g->head, *last = g->head;
        unsigned n = 1;
        while (last->next && n < g->max_batch) {
            last = last->next;
            n++;
        }
        g->head = last->next;
        if (!g->head)
            g->tail = NULL;
        last->next = NULL;
        pthread_mutex_unlock(&g->mu);

        pthread_rwlock_wrlock(&g->state);
        berth_error e;
        berth_error_clear(&e);
        int fatal = __atomic_load_n(&g->fatal, __ATOMIC_SEQ_CST);
        int rc = fatal ? BERTH_EIO : serve_store_begin(g->store, &e);
        int naccepted = 0, broken = 0;
        for (serve_op *op = batch; op; op = op->next) {
            if (rc) {
                reject(g, &op->reply, SERVE_REJ_STORAGE, 503, "storage unavailable");
                continue;
            }
            apply(g, op);
            if (op->reply.status >= 500) {
                /* an internal failure (out of memory) may have left the change
                 * half-applied, or its reply unrendered: the batch is undone */
                broken = 1;
                rc = berth_error_set(&e, BERTH_ENOMEM, "out of memory");
                continue;
            }
            if (!op->accepted)
                continue;
            naccepted++;
            serve_record rec = {.kind = op->kind, .cluster = op->cluster, .pool = op->pool,
                                .count = op->count, .body = op->body, .body_len = op->len};
            rc = serve_store_append(g->store, &rec, &e);
            if (!rc && op->kind == SERVE_REC_ESTATE) {
                json_t *sum = estate_summary(g->nx, rec.seq);
                serve_reply_json(&op->reply, 200, sum);
                if (op->reply.status >= 500)
                    rc = berth_error_set(&e, BERTH_ENOMEM, "out of memory");
            }
        }
        if (!rc && !fatal)
            rc = naccepted ? serve_store_commit(g->store, &e) : (serve_store_rollback(g->store), 0);
        if (rc && !fatal) {
            /* nothing of this batch is durable (or a change failed half-way):
             * undo it by rebuilding from the log */
            serve_store_rollback(g->store);
            berth_error e2;
            if (reload(g, &e2)) {
                __atomic_store_n(&g->fatal, 1, __ATOMIC_SEQ_CST);
                fprintf(stderr, "berth serve: cannot restore the state: %s\n", e2.msg);
            }
            for (serve_op *op = batch; op; op = op->next)
                if (op->accepted) {
                    op->accepted = 0;
                    if (broken || rc == BERTH_ENOMEM)
                        reject(g, &op->reply, SERVE_REJ_INTERNAL, 500, e.msg);
                    else
                        reject(g, &op->reply, SERVE_REJ_STORAGE, 503, e.msg);
                }
        } else if (naccepted) {
            g->st.commits++;
        }
        g->st.batches++;
        g->st.batched_ops += n;
        pthread_rwlock_unlock(&g->state);

        pthread_mutex_lock(&g->mu);
        for (serve_op *op = batch, *next; op; op = next) {
            next = op->next;
            op->done = 1;
        }
        pthread_cond_broadcast(&g->done);
    }
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

static void submit(serve_engine *g, serve_op *op)
{
    pthread_mutex_lock(&g->mu);
    if (g->stop) {
        pthread_mutex_unlock(&g->mu);
        serve_reply_error(&op->reply, 503, "unavailable", "the server is stopping");
        return;
    }
    op->next = NULL;
    if (g->tail)
        g->tail->next = op;
    else
        g->head = op;
    g->tail = op;
    pthread_cond_signal(&g->wake);
    while (!op->done)
        pthread_cond_wait(&g->done, &g->mu);
    pthread_mutex_unlock(&g->mu);
}

/* ---- public engine API ---- */

int serve_engine_open(const char *db, unsigned max_batch, serve_engine **out, berth_error *e)
{
    *out = NULL;
    serve_engine *g = calloc(1, sizeof *g);
    if (!g)
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    g->max_batch = max_batch ? max_batch : 1024;
    pthread_rwlock_init(&g->state, NULL);
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->wake, NULL);
    pthread_cond_init(&g->done, NULL);
    int rc = serve_store_open(db, &g->store, e);
    if (!rc)
        rc = reload(g, e);
    if (!rc && pthread_create(&g->worker, NULL, worker_main, g) != 0)
        rc = berth_error_set(e, BERTH_EINTERNAL, "cannot start the worker thread");
    if (rc) {
        serve_engine_close(g);
        return rc;
    }
    g->started = 1;
    memset(g->st.rejected, 0, sizeof g->st.rejected);
    memset(g->st.accepted, 0, sizeof g->st.accepted);
    *out = g;
    return 0;
}

void serve_engine_close(serve_engine *g)
{
    if (!g)
        return;
    if (g->started) {
        pthread_mutex_lock(&g->mu);
        g->stop = 1;
        pthread_cond_signal(&g->wake);
        pthread_mutex_unlock(&g->mu);
        pthread_join(g->worker, NULL);
    }
    serve_store_close(g->store);
    free_nexus(g->nx);
    pthread_rwlock_destroy(&g->state);
    pthread_mutex_destroy(&g->mu);
    pthread_cond_destroy(&g->wake);
    pthread_cond_destroy(&g->done);
    free(g);
}

void serve_engine_put_estate(serve_engine *g, const char *body, size_t len, serve_reply *r)
{
    *r = (serve_reply){0};
    serve_op op = {.kind = SERVE_REC_ESTATE, .body = body, .len = len};
    if (parse_estate(body, len, &op.parsed, r)) {
        pthread_rwlock_wrlock(&g->state);
        g->st.rejected[SERVE_REJ_BAD_INPUT]++;
        pthread_rwlock_unlock(&g->state);
        return;
    }
    submit(g, &op);
    free_nexus(op.parsed); /* the replaced estate, or the rejected new one */
    *r = op.reply;
}

void serve_engine_create(serve_engine *g, const char *body, size_t len, serve_reply *r)
{
    *r = (serve_reply){0};
    serve_op op = {.kind = SERVE_REC_CREATE, .body = body, .len = len};
    if (parse_cluster(body, len, &op.parsed, r)) {
        pthread_rwlock_wrlock(&g->state);
        g->st.rejected[SERVE_REJ_BAD_INPUT]++;
        pthread_rwlock_unlock(&g->state);
        return;
    }
    op.cluster = op.parsed->specs[0].name;
    submit(g, &op);
    free_nexus(op.parsed);
    *r = op.reply;
}

void serve_engine_scale(serve_engine *g, const char *cluster, const char *pool, int64_t count,
                        serve_reply *r)
{
    *r = (serve_reply){0};
    serve_op op = {.kind = SERVE_REC_SCALE, .cluster = cluster, .pool = pool, .count = count};
    submit(g, &op);
    *r = op.reply;
}

void serve_engine_delete(serve_engine *g, const char *cluster, serve_reply *r)
{
    *r = (serve_reply){0};
    serve_op op = {.kind = SERVE_REC_DELETE, .cluster = cluster};
    submit(g, &op);
    *r = op.reply;
}

/* The simulate JSON without deleted clusters (a failed create is deleted
 * at once, so the document after a restart is the same). */
void serve_engine_get_estate(serve_engine *g, serve_reply *r)
{
    *r = (serve_reply){0};
    pthread_rwlock_rdlock(&g->state);
    if (!g->nx) {
        pthread_rwlock_unlock(&g->state);
        serve_reply_error(r, 404, "no_estate", "no estate loaded: PUT /v1/estate first");
        return;
    }
    json_t *j = berth_report_nexus_json(g->nx);
    pthread_rwlock_unlock(&g->state);
    json_t *cl = j ? json_object_get(j, "clusters") : NULL;
    for (size_t i = json_array_size(cl); i-- > 0;) {
        const char *s = json_string_value(json_object_get(json_array_get(cl, i), "status"));
        if (s && !strcmp(s, "Deleted"))
            json_array_remove(cl, i);
    }
    serve_reply_json(r, 200, j);
}

void serve_engine_get_cluster(serve_engine *g, const char *name, serve_reply *r)
{
    *r = (serve_reply){0};
    pthread_rwlock_rdlock(&g->state);
    uint32_t cid = g->nx ? berth_nexus_find_cluster(g->nx, name) : BERTH_NEXUS_NONE;
    json_t *j = cid != BERTH_NEXUS_NONE ? berth_report_nexus_cluster_json(g->nx, cid) : NULL;
    pthread_rwlock_unlock(&g->state);
    if (cid == BERTH_NEXUS_NONE) {
        char msg[600];
        snprintf(msg, sizeof msg, "no cluster named '%.500s'", name);
        serve_reply_error(r, 404, "not_found", msg);
        return;
    }
    serve_reply_json(r, 200, j);
}

void serve_engine_list_clusters(serve_engine *g, serve_reply *r)
{
    *r = (serve_reply){0};
    json_t *arr = json_array();
    pthread_rwlock_rdlock(&g->state);
    for (uint32_t c = 0; arr && g->nx && c < g->nx->nclusters; c++) {
        const berth_cluster *cl = &g->nx->clusters[c];
        if (cl->status != BERTH_CLUSTER_DELETED)
            json_array_append_new(arr, json_string(cl->name));
    }
    int have = g->nx != NULL;
    pthread_rwlock_unlock(&g->state);
    if (!have) {
        json_decref(arr);
        serve_reply_error(r, 404, "no_estate", "no estate loaded: PUT /v1/estate first");
        return;
    }
    serve_reply_json(r, 200, json_pack("{s:o}", "clusters", arr));
}

void serve_engine_stats_get(serve_engine *g, serve_engine_stats *st)
{
    pthread_rwlock_rdlock(&g->state);
    *st = g->st;
    st->commits = serve_store_commits(g->store);
    berth_nexus *nx = g->nx;
    st->have_estate = nx != NULL;
    if (nx) {
        st->machines = nx->nmachines;
        for (uint32_t c = 0; c < nx->ncells; c++) {
            st->cpu += nx->cells[c].cpu;
            st->used_cpu += nx->cells[c].used_cpu;
            st->memory += nx->cells[c].memory;
            st->used_memory += nx->cells[c].used_memory;
        }
        for (uint32_t c = 0; c < nx->nclusters; c++)
            if (nx->clusters[c].status != BERTH_CLUSTER_DELETED)
                st->clusters++;
        for (uint32_t p = 0; p < nx->npools; p++)
            if (nx->clusters[nx->pools[p].cluster].status != BERTH_CLUSTER_DELETED)
                st->vms += nx->pools[p].nvms;
    }
    pthread_rwlock_unlock(&g->state);
}

int serve_engine_ready(serve_engine *g)
{
    pthread_mutex_lock(&g->mu);
    int ok = !g->stop && !__atomic_load_n(&g->fatal, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&g->mu);
    return ok;
}

void serve_engine_read(serve_engine *g, void (*fn)(const berth_nexus *nx, void *ctx), void *ctx)
{
    pthread_rwlock_rdlock(&g->state);
    fn(g->nx, ctx);
    pthread_rwlock_unlock(&g->state);
}
