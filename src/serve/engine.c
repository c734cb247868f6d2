/* serve/engine.c - the estate behind `berth serve`: one berth_nexus, one
 * worker thread that plans mutations in arrival order through the
 * library's incremental API, and group commit (every mutation taken from
 * the queue together is planned, appended to the log as one batch, then
 * all are acknowledged). Log records carry decisions (format 2: the
 * placements made, the cluster version planned against); a replay applies
 * them without planning, so a changed ranking rule never moves an
 * acknowledged VM. Format-1 records (requests only, older logs) replay
 * through the planner as before.
 *
 * Two kinds of log (serve_log): SQLite, written by this process only: a
 * planned batch is the applied batch, readers see it once committed (the
 * worker holds the state lock from the first plan to the commit). etcd,
 * shared by replicas: the worker plans, undoes its plan, appends the batch,
 * and waits for the follower thread, which applies every replica's
 * records in log (revision) order with a deterministic check (name still
 * free, cluster version unchanged, every VM still fits its NUMA cell); a
 * record the check rejects is re-planned (at most 3 times) or answered
 * 409. Reads, and the worker before it plans a batch, first catch up with
 * the log revision current when they arrive (linearizable). Two more
 * threads with etcd: a heartbeat (3 s without an answer: 503 and not
 * ready) and the checkpoint thread (the leader's snapshots, the rebuild
 * that drops deleted cluster entries). docs/ARCHITECTURE.md "Replicas on
 * etcd". */
#include "serve/serve.h"

#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "berth/grow.h"
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
    char *decision;             /* format 2 decision (JSON text, malloc'd) */
    /* etcd */
    int plans;                  /* times planned */
    int applied;                /* the follower applied (or rejected) its record */
    int conflict;               /* rejected by the apply check: re-plan */
    int replan;                 /* worker only: queued for another plan */
    struct serve_op *next;
} serve_op;

#define SERVE_MAX_PLANS 4       /* the first plan and at most 3 re-plans */

struct serve_engine {
    serve_log *store;
    int shared;                 /* etcd: apply what the log gives back */
    berth_nexus_options opt;    /* the planner's options */
    berth_nexus *nx;            /* NULL until an estate is loaded */
    /* decisions: a deterministic function of the log */
    int64_t changes;            /* accepted changes (an estate resets it to its base) */
    int64_t *cver;              /* per cluster id: `changes` when it last changed */
    uint32_t capcver;
    pthread_rwlock_t state;
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    serve_op *head, *tail;
    int stop, fatal;
    unsigned max_batch;
    pthread_t worker;
    int started;
    serve_engine_stats st;      /* counters (under state lock) */
    /* etcd (under mu): the follower's progress and the batch in flight */
    pthread_t follower;
    int following;
    pthread_cond_t applied_cv;
    int64_t applied_rev;
    int alive;                  /* the follower's watch is up */
    char replica[40];           /* this process's id in request ids */
    uint64_t nbatch;
    char inflight[80];          /* "<replica>-<batch>-": request id prefix in flight */
    serve_op **inflight_ops;
    size_t ninflight;
    double last_ok;             /* monotonic time of the last heartbeat etcd answered */
    /* etcd: what a snapshot needs besides the estate (state lock) */
    char *ebody;                /* the estate's text (its latest ESTATE record) */
    size_t elen;
    char **cbody;               /* per cluster id: its create request's text */
    size_t *clen;
    uint32_t capcbody;
    int mid_batch;              /* a batch is partly applied: no snapshot now */
    uint64_t since_snapshot;    /* log batches applied since the latest snapshot */
    double snapshot_at;         /* monotonic time of the latest snapshot (loaded or written) */
    /* the checkpoint and heartbeat threads */
    pthread_t checkpointer, heartbeater;
    int checkpointing, heartbeating;
    unsigned checkpoint_every;  /* log batches between snapshots */
    double checkpoint_seconds;  /* at most this long between snapshots when the log grew */
    double defrag_seconds;      /* between defragmentations */
};

/* ---- replies ---- */

static const char *const reason_names[SERVE_REJ_COUNT] = {
    "bad_input", "invalid", "conflict", "not_found", "no_estate", "does_not_fit", "storage",
    "internal"};

const char *serve_reason_name(serve_reason r)
{
    return (unsigned)r < SERVE_REJ_COUNT ? reason_names[r] : "internal";
}

/* JSON text is written through berth_report_json_text (berth/report.h),
 * never json_dumps: jansson 2.14's do_dump ignores the result of writing an
 * object's key, so an allocation failure there left a 200 reply with the
 * key missing, or a log record a replay refuses (torture findings). */

void serve_reply_error(serve_reply *r, int status, const char *code, const char *msg)
{
    free(r->body);
    r->body = NULL;
    r->status = status;
    json_t *j = json_pack("{s:{s:s,s:s}}", "error", "code", code, "message", msg ? msg : "");
    if (!j) /* message not UTF-8 */
        j = json_pack("{s:{s:s,s:s}}", "error", "code", code, "message", "(unprintable message)");
    r->body = j ? berth_report_json_text(j, JSON_COMPACT | BERTH_JSON_REAL) : NULL;
    json_decref(j);
    if (!r->body) {
        r->status = 500;
        r->body = strdup("{\"error\":{\"code\":\"internal\",\"message\":\"out of memory\"}}");
    }
}

void serve_reply_failed(serve_reply *r, int rc, const char *msg)
{
    serve_reply_error(r, rc == BERTH_ENOMEM ? 500 : 400,
                      rc == BERTH_ENOMEM ? "internal" : "bad_input", msg);
}

void serve_reply_json(serve_reply *r, int status, json_t *j)
{
    free(r->body);
    r->body = j ? berth_report_json_text(j, JSON_COMPACT | BERTH_JSON_REAL) : NULL;
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

/* The reply of a change the planner refused with rc: 422 does_not_fit
 * (BERTH_ENOFIT) or invalid (BERTH_EINVAL), else 500 internal. */
static void reject_failed(serve_engine *g, serve_op *op, int rc, const char *msg)
{
    if (rc == BERTH_ENOFIT)
        reject(g, &op->reply, SERVE_REJ_DOES_NOT_FIT, 422, msg);
    else if (rc == BERTH_EINVAL)
        reject(g, &op->reply, SERVE_REJ_INVALID, 422, msg);
    else
        reject(g, &op->reply, SERVE_REJ_INTERNAL, 500, msg);
}

/* ---- parsing (on the caller's thread) ---- */

/* A model on the heap for one request's body (free_nexus); NULL with a
 * 500 in r when out of memory. */
static berth_nexus *new_nexus(serve_reply *r)
{
    berth_nexus *nx = calloc(1, sizeof *nx);
    if (!nx) {
        serve_reply_error(r, 500, "internal", "out of memory");
        return NULL;
    }
    berth_nexus_init(nx);
    return nx;
}

static void free_nexus(berth_nexus *nx)
{
    if (nx) {
        berth_nexus_free(nx);
        free(nx);
    }
}

static int parse_estate(const berth_nexus_options *opt, const char *body, size_t len,
                        berth_nexus **out, serve_reply *r)
{
    berth_error e;
    berth_error_clear(&e);
    berth_nexus *nx = new_nexus(r);
    if (!nx)
        return -1;
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
        rc = berth_nexus_prepare(nx, opt, &e);
    if (rc) {
        serve_reply_failed(r, rc, e.msg);
        free_nexus(nx);
        return -1;
    }
    *out = nx;
    return 0;
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
    berth_nexus *nx = new_nexus(r);
    if (!nx)
        return -1;
    uint32_t builtin = nx->nskus;
    berth_source src;
    int rc = berth_doc_load_buffer(&nx->arena, "body", body, len, &src, &e);
    if (!rc)
        rc = berth_nexus_load(nx, &src, 0, &e);
    if (!rc && (nx->nspecs != 1 || nx->nsteps != 1 || nx->have_site || nx->nskus != builtin))
        rc = berth_error_set(&e, BERTH_EINVAL,
                             "body: expected exactly one KubernetesCluster document");
    if (rc) {
        serve_reply_failed(r, rc, e.msg);
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

/* ---- cluster versions (state lock held exclusively) ---- */

static int64_t cver_get(const serve_engine *g, uint32_t cid)
{
    return cid < g->capcver ? g->cver[cid] : 0;
}

/* One accepted change of cluster cid (BERTH_NEXUS_NONE: the estate). */
static int count_change(serve_engine *g, uint32_t cid)
{
    g->changes++;
    if (cid == BERTH_NEXUS_NONE)
        return 0;
    if (berth_grow((void **)&g->cver, &g->capcver, cid + 1, sizeof *g->cver, 0))
        return BERTH_ENOMEM;
    g->cver[cid] = g->changes;
    return 0;
}

/* ---- decisions (format 2 records) ---- */

/* [pool index in the cluster, ordinal, machine index, machine name, cells] */
static int push_vm(json_t *arr, const berth_nexus *nx, uint32_t pidx, uint32_t vm)
{
    const berth_vm *v = &nx->vms[vm];
    return json_array_append_new(arr, json_pack("[I,I,I,s,I]", (json_int_t)pidx,
                                                 (json_int_t)v->ordinal, (json_int_t)v->machine,
                                                 nx->machines[v->machine].name,
                                                 (json_int_t)v->cells_mask));
}

/* A record's decision as compact JSON, NULL on any failure (json_dumps
 * could write a decision with a key missing, which the log kept
 * and a replay then refused as not JSON: torture finding) */
static char *dump(json_t *j)
{
    char *t = j ? berth_report_json_text(j, JSON_COMPACT) : NULL;
    json_decref(j);
    return t;
}

/* The decision of an accepted create: every VM of the cluster in order. */
static char *decide_create(const berth_nexus *nx, uint32_t cid)
{
    json_t *vms = json_array();
    const berth_cluster *c = &nx->clusters[cid];
    int bad = !vms;
    for (uint32_t i = 0; !bad && i < c->npools; i++) {
        const berth_pool *p = &nx->pools[c->pools[i]];
        for (uint32_t k = 0; !bad && k < p->nvms; k++)
            bad = push_vm(vms, nx, i, p->vms[k]) != 0;
    }
    if (bad) {
        json_decref(vms);
        return NULL;
    }
    return dump(json_pack("{s:o}", "vms", vms));
}

/* A scale: the cluster version planned against and the VMs added after
 * the pool's first `from` VMs. */
static char *decide_scale(const berth_nexus *nx, int64_t version, uint32_t pid, uint32_t from)
{
    json_t *vms = json_array();
    const berth_pool *p = &nx->pools[pid];
    int bad = !vms;
    for (uint32_t k = from; !bad && k < p->nvms; k++)
        bad = push_vm(vms, nx, 0, p->vms[k]) != 0;
    if (bad) {
        json_decref(vms);
        return NULL;
    }
    return dump(json_pack("{s:I,s:o}", "version", (json_int_t)version, "vms", vms));
}

/* ---- plan (worker thread, state lock held exclusively) ---- */

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

/* A copy of spec whose names live in nx's arena (the live model keeps
 * them); counts zeroed when empty is set. NULL when out of memory. */
static berth_pool_spec *copy_spec(berth_nexus *nx, const berth_cluster_spec *in,
                                  berth_cluster_spec *cs, int empty)
{
    berth_pool_spec *pools = calloc(in->npools ? in->npools : 1, sizeof *pools);
    *cs = *in;
    cs->pools = pools;
    cs->name = berth_arena_strdup(&nx->arena, in->name);
    int oom = !pools || !cs->name;
    for (uint32_t i = 0; !oom && i < in->npools; i++) {
        pools[i] = in->pools[i];
        pools[i].name = berth_arena_strdup(&nx->arena, in->pools[i].name);
        if (empty)
            pools[i].count = 0;
        oom = !pools[i].name;
    }
    if (oom) {
        free(pools);
        return NULL;
    }
    return pools;
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
    berth_cluster_spec cs;
    berth_pool_spec *pools = copy_spec(nx, in, &cs, 0);
    if (!pools) {
        reject(g, &op->reply, SERVE_REJ_INTERNAL, 500, "out of memory");
        return;
    }
    berth_error e;
    berth_error_clear(&e);
    uint32_t cid = BERTH_NEXUS_NONE;
    int rc = berth_nexus_create_cluster(nx, &cs, &g->opt, &cid, &e);
    free(pools);
    if (rc == 0) {
        op->accepted = 1;
        if (!g->shared && count_change(g, cid))
            reject(g, &op->reply, SERVE_REJ_INTERNAL, 500, "out of memory");
        else
            serve_reply_json(&op->reply, 201, berth_report_nexus_cluster_json(nx, cid));
        free(op->decision);
        op->decision = decide_create(nx, cid);
        if (!op->decision)
            reject(g, &op->reply, SERVE_REJ_INTERNAL, 500, "out of memory");
        return;
    }
    /* all-or-nothing: a failed cluster keeps no VM; deleting it frees the name */
    if (cid != BERTH_NEXUS_NONE)
        berth_nexus_delete_cluster(nx, cid, NULL);
    reject_failed(g, op, rc, e.msg);
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

/* Puts pool pid back to `count` VMs (removing the newest) and its VM name
 * counter to `ordinal`: the pool as it was before a failed or undone scale
 * (a replay never sees the attempt, so the next VM gets the same name live
 * and after a restart). 0, or BERTH_ENOMEM. */
static int restore_pool(berth_nexus *nx, uint32_t pid, int32_t count, uint32_t ordinal)
{
    int rc = berth_nexus_scale_pool(nx, pid, count, NULL, NULL) ? BERTH_ENOMEM : 0;
    nx->pools[pid].next_ordinal = ordinal;
    return rc;
}

static void apply_scale(serve_engine *g, serve_op *op)
{
    uint32_t cid;
    uint32_t pid = find_pool(g, op, &cid);
    if (pid == BERTH_NEXUS_NONE)
        return;
    berth_nexus *nx = g->nx;
    int32_t old = nx->pools[pid].count;
    uint32_t old_ordinal = nx->pools[pid].next_ordinal, old_nvms = nx->pools[pid].nvms;
    int64_t version = cver_get(g, cid);
    if (g->shared && op->count >= 0 && op->count <= (int64_t)old_nvms) {
        /* a scale down plans nothing: it is applied from the log */
        op->accepted = 1;
        free(op->decision);
        op->decision = decide_scale(nx, version, pid, old_nvms);
        if (!op->decision)
            reject(g, &op->reply, SERVE_REJ_INTERNAL, 500, "out of memory");
        return;
    }
    berth_error e;
    berth_error_clear(&e);
    int rc = berth_nexus_scale_pool(nx, pid, op->count, &g->opt, &e);
    if (rc == 0) {
        op->accepted = 1;
        free(op->decision);
        op->decision = decide_scale(nx, version, pid, old_nvms);
        if (!op->decision || (!g->shared && count_change(g, cid)))
            reject(g, &op->reply, SERVE_REJ_INTERNAL, 500, "out of memory");
        else
            serve_reply_json(&op->reply, 200, berth_report_nexus_cluster_json(nx, cid));
        return;
    }
    /* the pool kept its VMs; put its desired count back */
    if (restore_pool(nx, pid, old, old_ordinal))
        rc = BERTH_ENOMEM; /* not restored: a 500, and the worker rebuilds from the log */
    if (rc == BERTH_ENOMEM && !e.msg[0])
        berth_error_set(&e, rc, "out of memory");
    reject_failed(g, op, rc, e.msg);
}

static void apply_delete(serve_engine *g, serve_op *op)
{
    uint32_t cid;
    if (find_pool(g, op, &cid) == BERTH_NEXUS_NONE)
        return;
    free(op->decision);
    op->decision = dump(json_pack("{s:I}", "version", (json_int_t)cver_get(g, cid)));
    if (!op->decision) {
        reject(g, &op->reply, SERVE_REJ_INTERNAL, 500, "out of memory");
        return;
    }
    if (g->shared) { /* applied from the log */
        op->accepted = 1;
        return;
    }
    berth_error e;
    berth_error_clear(&e);
    int rc = berth_nexus_delete_cluster(g->nx, cid, &e);
    if (!rc)
        rc = count_change(g, cid);
    if (rc) {
        reject(g, &op->reply, SERVE_REJ_INTERNAL, 500, e.msg[0] ? e.msg : "out of memory");
        return;
    }
    op->accepted = 1;
    op->reply.status = 204;
}

/* Plans op on the live estate (and, for SQLite, applies it for good). */
static void apply(serve_engine *g, serve_op *op)
{
    switch (op->kind) {
    case SERVE_REC_ESTATE:
        free(op->decision);
        op->decision = dump(json_pack("{s:I}", "base", (json_int_t)g->changes));
        if (!op->decision) {
            reject(g, &op->reply, SERVE_REJ_INTERNAL, 500, "out of memory");
            return;
        }
        if (g->shared) {
            op->accepted = 1;
            return;
        }
        apply_estate(g, op);
        count_change(g, BERTH_NEXUS_NONE);
        break;
    case SERVE_REC_CREATE: apply_create(g, op); break;
    case SERVE_REC_SCALE: apply_scale(g, op); break;
    case SERVE_REC_DELETE: apply_delete(g, op); break;
    default: reject(g, &op->reply, SERVE_REJ_INTERNAL, 500, "unknown operation");
    }
    if (!g->shared && op->accepted && (unsigned)op->kind < 5)
        g->st.accepted[op->kind]++;
}

/* etcd: takes back a plan (the log decides): a created cluster is deleted
 * (it stays as a Deleted entry, invisible in every reply), a pool scaled
 * up loses its new VMs. Deletes and scale-downs changed nothing. */
static int unplan(serve_engine *g, serve_op *op)
{
    berth_nexus *nx = g->nx;
    if (!op->accepted || !nx)
        return 0;
    if (op->kind == SERVE_REC_CREATE) {
        uint32_t cid = berth_nexus_find_cluster(nx, op->parsed->specs[0].name);
        return cid == BERTH_NEXUS_NONE ? 0 : berth_nexus_delete_cluster(nx, cid, NULL);
    }
    if (op->kind == SERVE_REC_SCALE) {
        uint32_t cid = berth_nexus_find_cluster(nx, op->cluster);
        uint32_t pid = cid == BERTH_NEXUS_NONE ? cid : berth_nexus_find_pool(nx, cid, op->pool);
        json_t *d = json_loads(op->decision, 0, NULL);
        json_t *vms = json_object_get(d, "vms");
        size_t n = json_array_size(vms);
        int rc = 0;
        if (pid != BERTH_NEXUS_NONE && n) {
            berth_pool *p = &nx->pools[pid];
            uint32_t first = (uint32_t)json_integer_value(json_array_get(json_array_get(vms, 0), 1));
            rc = restore_pool(nx, pid, (int32_t)(p->nvms - n), first);
        }
        json_decref(d);
        return rc;
    }
    return 0;
}

/* etcd: the text a cluster was created from, kept for snapshots (body
 * NULL: forgotten). 0 or BERTH_ENOMEM. */
static int keep_body(serve_engine *g, uint32_t cid, const char *body, size_t len)
{
    if (!g->shared)
        return 0;
    /* one capacity for both tables: it moves once both have grown */
    uint32_t capb = g->capcbody, capl = g->capcbody;
    if (berth_grow((void **)&g->cbody, &capb, cid + 1, sizeof *g->cbody, 0) ||
        berth_grow((void **)&g->clen, &capl, cid + 1, sizeof *g->clen, 0))
        return BERTH_ENOMEM;
    g->capcbody = capb;
    free(g->cbody[cid]);
    g->cbody[cid] = NULL;
    g->clen[cid] = 0;
    if (!body)
        return 0;
    if (!(g->cbody[cid] = malloc(len + 1)))
        return BERTH_ENOMEM;
    memcpy(g->cbody[cid], body, len);
    g->cbody[cid][len] = 0;
    g->clen[cid] = len;
    return 0;
}

static void forget_bodies(serve_engine *g)
{
    for (uint32_t i = 0; i < g->capcbody; i++) {
        free(g->cbody[i]);
        g->cbody[i] = NULL;
    }
}

static int keep_estate(serve_engine *g, const char *body, size_t len)
{
    if (!g->shared)
        return 0;
    free(g->ebody);
    g->ebody = malloc(len + 1);
    if (!g->ebody)
        return BERTH_ENOMEM;
    memcpy(g->ebody, body, len);
    g->ebody[len] = 0;
    g->elen = len;
    forget_bodies(g);
    return 0;
}

/* ---- apply a recorded decision (replay, and the etcd follower) ---- */

/* What the apply check decided about one record. */
typedef struct rec_outcome {
    serve_reply reply;
    int accepted;
    int conflict; /* the estate changed since the plan: re-plan */
} rec_outcome;

static void conflict(serve_engine *g, rec_outcome *o, const char *msg)
{
    o->conflict = 1;
    reject(g, &o->reply, SERVE_REJ_CONFLICT, 409, msg);
}

/* Places the recorded VMs of vms whose pool index is pidx (all when
 * pidx < 0) into the pools of cluster cid. 0, or the first failure. */
static int place_recorded(serve_engine *g, uint32_t cid, json_t *vms, int64_t pidx_only,
                          uint32_t pid_only, berth_error *e)
{
    berth_nexus *nx = g->nx;
    const berth_cluster *c = &nx->clusters[cid];
    size_t i;
    json_t *v;
    json_array_foreach(vms, i, v) {
        json_int_t pi = json_integer_value(json_array_get(v, 0));
        json_int_t ord = json_integer_value(json_array_get(v, 1));
        json_int_t m = json_integer_value(json_array_get(v, 2));
        const char *mname = json_string_value(json_array_get(v, 3));
        json_int_t mask = json_integer_value(json_array_get(v, 4));
        uint32_t pid = pidx_only >= 0 ? pid_only
                       : pi >= 0 && pi < (json_int_t)c->npools ? c->pools[pi] : BERTH_NEXUS_NONE;
        if (json_array_size(v) != 5 || pid == BERTH_NEXUS_NONE || m < 0 ||
            m >= (json_int_t)nx->nmachines || !mname || strcmp(mname, nx->machines[m].name) ||
            ord < 1 || ord > UINT32_MAX || mask <= 0 || mask > UINT32_MAX)
            return berth_error_set(e, BERTH_EINVAL, "placement %zu names no VM of this estate", i);
        int rc = berth_nexus_place_at(nx, pid, (uint32_t)m, (uint32_t)mask, (uint32_t)ord, e);
        if (rc)
            return rc;
    }
    return 0;
}

static void rec_create(serve_engine *g, const serve_record *r, json_t *d, rec_outcome *o)
{
    berth_nexus *parsed = NULL;
    if (parse_cluster(r->body, r->body_len, &parsed, &o->reply))
        return;
    berth_nexus *nx = g->nx;
    const berth_cluster_spec *in = &parsed->specs[0];
    char msg[800];
    if (!nx) {
        reject(g, &o->reply, SERVE_REJ_NO_ESTATE, 409, "no estate loaded: PUT /v1/estate first");
    } else if (berth_nexus_find_cluster(nx, in->name) != BERTH_NEXUS_NONE) {
        snprintf(msg, sizeof msg, "cluster '%.500s' already exists", in->name);
        reject(g, &o->reply, SERVE_REJ_CONFLICT, 409, msg); /* a re-plan would say the same */
    } else {
        berth_cluster_spec cs;
        berth_pool_spec *pools = copy_spec(nx, in, &cs, 1);
        berth_error e;
        berth_error_clear(&e);
        uint32_t cid = BERTH_NEXUS_NONE;
        int rc = pools ? berth_nexus_create_cluster(nx, &cs, &g->opt, &cid, &e) : BERTH_ENOMEM;
        free(pools);
        if (!rc)
            rc = place_recorded(g, cid, json_object_get(d, "vms"), -1, 0, &e);
        for (uint32_t i = 0; !rc && i < in->npools; i++) {
            berth_pool *p = &nx->pools[nx->clusters[cid].pools[i]];
            p->count = (int32_t)in->pools[i].count;
            if (p->nvms != (uint32_t)p->count)
                rc = berth_error_set(&e, BERTH_EINVAL, "pool %s: %u VMs recorded, %d wanted",
                                     p->name, p->nvms, p->count);
        }
        if (!rc)
            rc = count_change(g, cid);
        if (!rc)
            rc = keep_body(g, cid, r->body, r->body_len);
        if (!rc) {
            o->accepted = 1;
            serve_reply_json(&o->reply, 201, berth_report_nexus_cluster_json(nx, cid));
        } else {
            if (cid != BERTH_NEXUS_NONE)
                berth_nexus_delete_cluster(nx, cid, NULL);
            snprintf(msg, sizeof msg, "the estate changed while cluster '%.200s' was placed: %.500s",
                     in->name, e.msg);
            if (rc == BERTH_ENOMEM)
                reject(g, &o->reply, SERVE_REJ_INTERNAL, 500, "out of memory");
            else
                conflict(g, o, msg);
        }
    }
    free_nexus(parsed);
}

static void rec_scale(serve_engine *g, const serve_record *r, json_t *d, rec_outcome *o)
{
    serve_op op = {.cluster = r->cluster, .pool = r->pool};
    uint32_t cid;
    uint32_t pid = find_pool(g, &op, &cid);
    o->reply = op.reply;
    if (pid == BERTH_NEXUS_NONE) {
        o->conflict = 1; /* gone since the plan: the re-plan answers */
        return;
    }
    berth_nexus *nx = g->nx;
    if (cver_get(g, cid) != json_integer_value(json_object_get(d, "version"))) {
        conflict(g, o, "the cluster changed since this scale was planned");
        return;
    }
    berth_pool *p = &nx->pools[pid];
    int32_t old = p->count;
    uint32_t old_ordinal = p->next_ordinal;
    berth_error e;
    berth_error_clear(&e);
    int rc;
    if (r->count <= (int64_t)p->nvms) {
        rc = berth_nexus_scale_pool(nx, pid, r->count, &g->opt, &e);
    } else {
        p->count = (int32_t)r->count;
        rc = place_recorded(g, cid, json_object_get(d, "vms"), 0, pid, &e);
        p = &nx->pools[pid];
        if (!rc && p->nvms != (uint32_t)p->count)
            rc = berth_error_set(&e, BERTH_EINVAL, "pool %s: %u VMs recorded, %d wanted",
                                 p->name, p->nvms, p->count);
        if (rc && restore_pool(nx, pid, old, old_ordinal)) /* drops the VMs it added */
            rc = BERTH_ENOMEM;
    }
    if (!rc)
        rc = count_change(g, cid);
    if (!rc) {
        o->accepted = 1;
        serve_reply_json(&o->reply, 200, berth_report_nexus_cluster_json(nx, cid));
    } else if (rc == BERTH_ENOMEM) {
        reject(g, &o->reply, SERVE_REJ_INTERNAL, 500, "out of memory");
    } else {
        char msg[700];
        snprintf(msg, sizeof msg, "the estate changed while the pool was scaled: %.500s", e.msg);
        conflict(g, o, msg);
    }
}

static void rec_delete(serve_engine *g, const serve_record *r, json_t *d, rec_outcome *o)
{
    serve_op op = {.cluster = r->cluster};
    uint32_t cid;
    if (find_pool(g, &op, &cid) == BERTH_NEXUS_NONE) {
        o->reply = op.reply;
        o->conflict = 1;
        return;
    }
    if (cver_get(g, cid) != json_integer_value(json_object_get(d, "version"))) {
        conflict(g, o, "the cluster changed since this delete was planned");
        return;
    }
    if (berth_nexus_delete_cluster(g->nx, cid, NULL) || count_change(g, cid) ||
        keep_body(g, cid, NULL, 0)) {
        reject(g, &o->reply, SERVE_REJ_INTERNAL, 500, "out of memory");
        return;
    }
    o->accepted = 1;
    o->reply.status = 204;
}

static void rec_estate(serve_engine *g, const serve_record *r, json_t *d, rec_outcome *o)
{
    serve_op op = {0};
    if (parse_estate(&g->opt, r->body, r->body_len, &op.parsed, &o->reply))
        return;
    if (keep_estate(g, r->body, r->body_len)) {
        free_nexus(op.parsed);
        reject(g, &o->reply, SERVE_REJ_INTERNAL, 500, "out of memory");
        return;
    }
    apply_estate(g, &op);
    free_nexus(op.parsed);
    /* SQLite records carry the count the estate replaced (older records
     * are compacted away); etcd replicas all hold it already */
    json_t *base = json_object_get(d, "base");
    if (base)
        g->changes = json_integer_value(base);
    count_change(g, BERTH_NEXUS_NONE);
    o->accepted = 1;
    serve_reply_json(&o->reply, 200, estate_summary(g->nx, r->seq));
}

/* Applies one format-2 record with the deterministic check. */
static void apply_record(serve_engine *g, const serve_record *r, rec_outcome *o)
{
    json_error_t je;
    json_t *d = r->decision ? json_loads(r->decision, 0, &je) : NULL;
    if (!json_is_object(d)) {
        reject(g, &o->reply, SERVE_REJ_INTERNAL, 500, "the record's decision is not JSON");
    } else {
        switch (r->kind) {
        case SERVE_REC_ESTATE: rec_estate(g, r, d, o); break;
        case SERVE_REC_CREATE: rec_create(g, r, d, o); break;
        case SERVE_REC_SCALE: rec_scale(g, r, d, o); break;
        case SERVE_REC_DELETE: rec_delete(g, r, d, o); break;
        default: reject(g, &o->reply, SERVE_REJ_INTERNAL, 500, "unknown record kind");
        }
    }
    json_decref(d);
    if (o->accepted && (unsigned)r->kind < 5)
        g->st.accepted[r->kind]++;
}

/* ---- replay ---- */

static int replay_one(void *ctx, const serve_record *r, berth_error *e)
{
    serve_engine *g = ctx;
    rec_outcome o = {0};
    if (r->format >= 2) {
        apply_record(g, r, &o);
    } else {
        /* format 1: the request, planned again by today's engine */
        serve_op op = {.kind = r->kind, .body = r->body, .len = r->body_len,
                       .cluster = r->cluster, .pool = r->pool, .count = r->count};
        int parsed = 0;
        if (r->kind == SERVE_REC_ESTATE)
            parsed = parse_estate(&g->opt, r->body, r->body_len, &op.parsed, &op.reply);
        else if (r->kind == SERVE_REC_CREATE)
            parsed = parse_cluster(r->body, r->body_len, &op.parsed, &op.reply);
        if (parsed == 0)
            apply(g, &op);
        if (op.accepted && r->kind == SERVE_REC_ESTATE)
            g->changes = 1; /* no base recorded: the log starts here */
        o.accepted = op.accepted;
        o.reply = op.reply;
        free_nexus(op.parsed);
        free(op.decision);
    }
    int rc = 0;
    if (!o.accepted || o.reply.status >= 500)
        rc = berth_error_set(e, BERTH_EINTERNAL,
                             "store: record %lld (kind %d) no longer applies: %s",
                             (long long)r->seq, r->kind, o.reply.body ? o.reply.body : "");
    free(o.reply.body);
    return rc;
}

static void reset_state(serve_engine *g)
{
    free_nexus(g->nx);
    g->nx = NULL;
    g->changes = 0;
    if (g->cver)
        memset(g->cver, 0, g->capcver * sizeof *g->cver);
}

/* Rebuilds the state from the log (startup, or after a failed commit). */
static int reload(serve_engine *g, berth_error *e)
{
    reset_state(g);
    /* replay is deterministic; the estate counters then count live work */
    serve_engine_stats keep = g->st;
    int rc = g->store->vt->read(g->store, 0, replay_one, g, e);
    g->st = keep;
    return rc;
}

/* ---- the worker ---- */

/* Takes up to max_batch queued operations (mu held). */
static serve_op *take_batch(serve_engine *g, unsigned *n_out)
{
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
    *n_out = n;
    return batch;
}

static serve_record record_of(const serve_op *op)
{
    return (serve_record){.kind = op->kind, .format = SERVE_REC_FORMAT, .cluster = op->cluster,
                          .pool = op->pool, .count = op->count, .body = op->body,
                          .body_len = op->len, .decision = op->decision};
}

/* SQLite: plan = apply; one transaction per batch. */
static void run_batch_local(serve_engine *g, serve_op *batch, unsigned n)
{
    pthread_rwlock_wrlock(&g->state);
    berth_error e;
    berth_error_clear(&e);
    int fatal = __atomic_load_n(&g->fatal, __ATOMIC_SEQ_CST);
    int rc = fatal ? BERTH_EIO : 0;
    int broken = 0;
    serve_record *recs = calloc(n, sizeof *recs);
    serve_op **of = calloc(n, sizeof *of);
    size_t nrec = 0;
    if (!rc && (!recs || !of))
        rc = berth_error_set(&e, BERTH_ENOMEM, "out of memory");
    for (serve_op *op = batch; op; op = op->next) {
        if (rc) {
            if (!op->reply.status || op->accepted)
                reject(g, &op->reply, fatal ? SERVE_REJ_STORAGE : SERVE_REJ_INTERNAL,
                       fatal ? 503 : 500, fatal ? "storage unavailable" : e.msg);
            op->accepted = 0;
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
        of[nrec] = op;
        recs[nrec++] = record_of(op);
    }
    /* an estate's reply is rendered before the commit (its seq filled in
     * after, without allocating): nothing can fail once the batch is durable */
    for (size_t i = 0; !rc && i < nrec; i++)
        if (of[i]->kind == SERVE_REC_ESTATE) {
            json_t *sum = estate_summary(g->nx, 0);
            char *t = sum ? berth_report_json_text(sum, JSON_COMPACT) : NULL;
            json_decref(sum);
            size_t tl = t ? strlen(t) : 0;
            char *body = t && tl > 3 && !strcmp(t + tl - 3, ":0}") ? malloc(tl + 24) : NULL;
            if (body)
                memcpy(body, t, tl + 1);
            free(t);
            free(of[i]->reply.body);
            of[i]->reply.body = body;
            if (!body)
                rc = berth_error_set(&e, BERTH_ENOMEM, "out of memory");
        }
    int64_t rev = 0;
    if (!rc && nrec)
        rc = g->store->vt->append(g->store, recs, nrec, NULL, &rev, &e);
    for (size_t i = 0; !rc && i < nrec; i++)
        if (of[i]->kind == SERVE_REC_ESTATE) {
            char *b = of[i]->reply.body;
            size_t bl = strlen(b);
            snprintf(b + bl - 2, 24, "%lld}", (long long)recs[i].seq);
            of[i]->reply.status = 200;
        }
    if (rc && !fatal) {
        /* nothing of this batch is durable (or a change failed half-way):
         * undo it by rebuilding from the log */
        berth_error e2;
        if (reload(g, &e2)) {
            __atomic_store_n(&g->fatal, 1, __ATOMIC_SEQ_CST);
            fprintf(stderr, "berth serve: cannot restore the state: %s\n", e2.msg);
        }
        for (serve_op *op = batch; op; op = op->next)
            if (op->accepted) {
                op->accepted = 0;
                g->st.accepted[op->kind]--;
                if (broken || rc == BERTH_ENOMEM)
                    reject(g, &op->reply, SERVE_REJ_INTERNAL, 500, e.msg);
                else
                    reject(g, &op->reply, SERVE_REJ_STORAGE, 503, e.msg);
            }
    } else if (nrec) {
        g->st.commits++;
    }
    free(recs);
    free(of);
    g->st.batches++;
    g->st.batched_ops += n;
    pthread_rwlock_unlock(&g->state);

    pthread_mutex_lock(&g->mu);
    for (serve_op *op = batch; op; op = op->next)
        op->done = 1;
    pthread_cond_broadcast(&g->done);
    pthread_mutex_unlock(&g->mu);
}

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Waits (mu held) until the follower applied revision rev, at most
 * seconds; 0 when it did. */
static int wait_applied(serve_engine *g, int64_t rev, double seconds)
{
    double end = mono_now() + seconds;
    while (g->applied_rev < rev && !g->stop) {
        double left = end - mono_now();
        if (left <= 0)
            return -1;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        double t = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 + (left < 0.2 ? left : 0.2);
        ts.tv_sec = (time_t)t;
        ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
        pthread_cond_timedwait(&g->applied_cv, &g->mu, &ts);
    }
    return g->applied_rev >= rev ? 0 : -1;
}

/* etcd: plan, undo, append, wait for the follower's verdict. Operations
 * whose record the check rejected are re-planned (returned in *again). */
static int sync_read(serve_engine *g, serve_reply *r);

static void run_batch_shared(serve_engine *g, serve_op *batch, unsigned n, serve_op **again)
{
    /* plan on a state at least as new as the log when the batch was
     * taken: a change another replica acknowledged is seen (a create right
     * after the estate's PUT elsewhere, a scale of a cluster just created) */
    serve_reply sr = {0};
    if (sync_read(g, &sr)) {
        pthread_mutex_lock(&g->mu);
        for (serve_op *op = batch; op; op = op->next) {
            serve_reply_error(&op->reply, 503, "storage",
                              "this replica cannot catch up with the log before planning");
            op->accepted = 0;
            op->done = 1;
        }
        pthread_cond_broadcast(&g->done);
        pthread_mutex_unlock(&g->mu);
        free(sr.body);
        return;
    }
    free(sr.body);
    serve_op **ops = calloc(n, sizeof *ops);
    serve_record *recs = calloc(n, sizeof *recs);
    char (*ids)[128] = calloc(n, sizeof *ids);
    size_t nrec = 0;
    int ok = ops && recs && ids;
    pthread_rwlock_wrlock(&g->state);
    serve_op **planned = ops;
    size_t nplanned = 0;
    for (serve_op *op = batch; op; op = op->next) {
        if (!ok) {
            reject(g, &op->reply, SERVE_REJ_INTERNAL, 500, "out of memory");
            continue;
        }
        op->plans++;
        op->accepted = op->applied = op->conflict = 0;
        free(op->reply.body);
        op->reply = (serve_reply){0};
        apply(g, op);
        if (op->accepted)
            planned[nplanned++] = op;
    }
    /* the plan is taken back: the log decides */
    int broken = 0;
    for (size_t i = nplanned; i-- > 0;)
        broken |= unplan(g, planned[i]) != 0;
    berth_error e;
    berth_error_clear(&e);
    if (broken) {
        if (reload(g, &e))
            __atomic_store_n(&g->fatal, 1, __ATOMIC_SEQ_CST);
    }
    g->st.batches++;
    g->st.batched_ops += n;
    pthread_rwlock_unlock(&g->state);

    pthread_mutex_lock(&g->mu);
    uint64_t bno = ++g->nbatch;
    snprintf(g->inflight, sizeof g->inflight, "%s-%llu-", g->replica, (unsigned long long)bno);
    for (size_t i = 0; i < nplanned; i++) { /* ops[] = planned[] */
        recs[nrec] = record_of(planned[i]);
        snprintf(ids[nrec], sizeof ids[nrec], "%s%zu", g->inflight, nrec);
        recs[nrec].req_id = ids[nrec];
        nrec++;
    }
    g->inflight_ops = ops;
    g->ninflight = nrec;
    pthread_mutex_unlock(&g->mu);

    int64_t rev = 0;
    int rc = 0;
    if (nrec) {
        char batch_id[96];
        snprintf(batch_id, sizeof batch_id, "%s-%llu", g->replica, (unsigned long long)bno);
        rc = g->store->vt->append(g->store, recs, nrec, batch_id, &rev, &e);
    }
    pthread_mutex_lock(&g->mu);
    if (!rc && nrec && wait_applied(g, rev, 10.0))
        rc = berth_error_set(&e, BERTH_EIO, "the log did not come back within 10 s");
    g->inflight[0] = 0;
    g->inflight_ops = NULL;
    g->ninflight = 0;
    for (size_t i = 0; i < nrec; i++) {
        serve_op *op = ops[i];
        if (rc || !op->applied) {
            op->accepted = 0;
            serve_reply_error(&op->reply, 503, "storage",
                              rc ? e.msg : "the log did not return this change");
        } else if (op->conflict && op->plans < SERVE_MAX_PLANS && !g->stop) {
            op->replan = 1; /* planned again below */
        }
    }
    serve_op *last_again = NULL;
    for (serve_op *op = batch, *next; op; op = next) {
        next = op->next;
        if (op->replan) {
            op->replan = 0;
            op->next = NULL;
            if (last_again)
                last_again->next = op;
            else
                *again = op;
            last_again = op;
        } else {
            op->done = 1;
        }
    }
    pthread_cond_broadcast(&g->done);
    pthread_mutex_unlock(&g->mu);
    if (*again) {
        pthread_rwlock_wrlock(&g->state);
        for (serve_op *op = *again; op; op = op->next)
            g->st.replans++;
        pthread_rwlock_unlock(&g->state);
    }
    free(ops);
    free(recs);
    free(ids);
}

static void *worker_main(void *arg)
{
    serve_engine *g = arg;
    pthread_mutex_lock(&g->mu);
    for (;;) {
        while (!g->head && !g->stop)
            pthread_cond_wait(&g->wake, &g->mu);
        if (!g->head && g->stop)
            break;
        unsigned n;
        serve_op *batch = take_batch(g, &n);
        pthread_mutex_unlock(&g->mu);
        if (!g->shared) {
            run_batch_local(g, batch, n);
        } else {
            serve_op *again = NULL;
            run_batch_shared(g, batch, n, &again);
            if (again) { /* ahead of the queue: re-planned next */
                pthread_mutex_lock(&g->mu);
                serve_op *last = again;
                while (last->next)
                    last = last->next;
                last->next = g->head;
                g->head = again;
                if (!g->tail)
                    g->tail = last;
                pthread_mutex_unlock(&g->mu);
            }
        }
        pthread_mutex_lock(&g->mu);
    }
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

/* ---- the etcd follower ---- */

static int follow_record(void *ctx, const serve_record *r, berth_error *e)
{
    (void)e;
    serve_engine *g = ctx;
    rec_outcome o = {0};
    pthread_rwlock_wrlock(&g->state);
    g->mid_batch = 1;
    if (r->format >= 2)
        apply_record(g, r, &o);
    else
        reject(g, &o.reply, SERVE_REJ_INTERNAL, 500, "a format-1 record in a shared log");
    pthread_rwlock_unlock(&g->state);
    o.reply.revision = r->seq;
    /* is it one of this replica's changes in flight? */
    pthread_mutex_lock(&g->mu);
    size_t plen = strlen(g->inflight);
    serve_op *op = NULL;
    if (plen && r->req_id && !strncmp(r->req_id, g->inflight, plen)) {
        char *end;
        unsigned long long i = strtoull(r->req_id + plen, &end, 10);
        if (!*end && i < g->ninflight)
            op = g->inflight_ops[i];
    }
    if (op && !op->applied) {
        free(op->reply.body);
        op->reply = o.reply;
        op->applied = 1;
        op->accepted = o.accepted;
        op->conflict = o.conflict;
        o.reply.body = NULL;
    }
    pthread_mutex_unlock(&g->mu);
    free(o.reply.body);
    return 0;
}

static void follow_batch(void *ctx, int64_t rev, const char *batch_id)
{
    serve_engine *g = ctx;
    pthread_rwlock_wrlock(&g->state);
    if (rev > g->st.revision)
        g->st.revision = rev;
    g->mid_batch = 0;
    if (batch_id)
        g->since_snapshot++;
    pthread_rwlock_unlock(&g->state);
    pthread_mutex_lock(&g->mu);
    if (rev > g->applied_rev)
        g->applied_rev = rev;
    pthread_cond_broadcast(&g->applied_cv);
    pthread_mutex_unlock(&g->mu);
}

static void follow_alive(void *ctx, int ok)
{
    serve_engine *g = ctx;
    pthread_mutex_lock(&g->mu);
    g->alive = ok;
    pthread_mutex_unlock(&g->mu);
}

/* ---- snapshots (etcd) ---- */

static void set_cver(serve_engine *g, uint32_t cid, int64_t v)
{
    int64_t keep = g->changes;
    g->changes = v - 1;
    count_change(g, cid); /* grows cver; sets cver[cid] = v */
    g->changes = keep;
}

/* The state as a snapshot (state lock held): the estate's text, the change
 * count, every live cluster (name, version, creation text) in id order,
 * its pools' counts and name counters, every live VM in VM id order (so
 * a replica built from it lists everything in the same order). NULL when
 * out of memory or a cluster's text is missing. */
static char *snapshot_text(serve_engine *g)
{
    berth_nexus *nx = g->nx;
    json_t *root = json_pack("{s:i,s:I}", "format", 1, "changes", (json_int_t)g->changes);
    json_t *cls = json_array(), *pools = json_array(), *vms = json_array();
    uint32_t *ci = nx ? calloc(nx->nclusters + 1, sizeof *ci) : NULL;
    uint32_t *vc = nx ? calloc(nx->nvms + 1, sizeof *vc) : NULL;
    uint32_t *vp = nx ? calloc(nx->nvms + 1, sizeof *vp) : NULL;
    int bad = !root || !cls || !pools || !vms || (nx && (!ci || !vc || !vp));
    if (!bad)
        bad = json_object_set_new(root, "estate", nx && g->ebody
                                                      ? json_stringn(g->ebody, g->elen)
                                                      : json_null());
    uint32_t nlive = 0;
    for (uint32_t c = 0; !bad && nx && c < nx->nclusters; c++) {
        const berth_cluster *cl = &nx->clusters[c];
        if (cl->status == BERTH_CLUSTER_DELETED)
            continue;
        if (c >= g->capcbody || !g->cbody[c]) {
            bad = 1;
            break;
        }
        ci[c] = ++nlive;
        bad = json_array_append_new(cls, json_pack("[s,I,s%]", cl->name,
                                                   (json_int_t)cver_get(g, c), g->cbody[c],
                                                   g->clen[c]));
        for (uint32_t i = 0; !bad && i < cl->npools; i++) {
            const berth_pool *p = &nx->pools[cl->pools[i]];
            bad = json_array_append_new(pools, json_pack("[I,I,I,I]", (json_int_t)nlive - 1,
                                                         (json_int_t)i, (json_int_t)p->count,
                                                         (json_int_t)p->next_ordinal));
            for (uint32_t k = 0; k < p->nvms; k++) {
                vc[p->vms[k]] = nlive;
                vp[p->vms[k]] = i;
            }
        }
    }
    for (uint32_t v = 0; !bad && nx && v < nx->nvms; v++) {
        if (!vc[v])
            continue;
        const berth_vm *vm = &nx->vms[v];
        bad = json_array_append_new(
            vms, json_pack("[I,I,I,I,s,I]", (json_int_t)vc[v] - 1, (json_int_t)vp[v],
                           (json_int_t)vm->ordinal, (json_int_t)vm->machine,
                           nx->machines[vm->machine].name, (json_int_t)vm->cells_mask));
    }
    free(ci);
    free(vc);
    free(vp);
    char *t = NULL;
    if (!bad && !json_object_set_new(root, "clusters", cls) &&
        !json_object_set_new(root, "pools", pools) && !json_object_set_new(root, "vms", vms)) {
        cls = pools = vms = NULL;
        t = berth_report_json_text(root, JSON_COMPACT);
    }
    json_decref(cls);
    json_decref(pools);
    json_decref(vms);
    json_decref(root);
    return t;
}

/* Rebuilds the state from a snapshot (state lock held exclusively;
 * text NULL: the empty state). 0, or an error in e. */
static int snapshot_load(serve_engine *g, const char *text, size_t len, berth_error *e)
{
    reset_state(g);
    forget_bodies(g);
    free(g->ebody);
    g->ebody = NULL;
    if (!text)
        return 0;
    json_error_t je;
    json_t *root = json_loadb(text, len, 0, &je);
    json_t *est = json_object_get(root, "estate");
    if (!json_is_object(root) || json_integer_value(json_object_get(root, "format")) != 1) {
        json_decref(root);
        return berth_error_set(e, BERTH_EINVAL, "the snapshot is not a format-1 snapshot");
    }
    int rc = 0;
    if (json_is_string(est)) {
        serve_reply r = {0};
        if (parse_estate(&g->opt, json_string_value(est), json_string_length(est), &g->nx, &r))
            rc = berth_error_set(e, BERTH_EINVAL, "the snapshot's estate: %s", r.body);
        free(r.body);
        if (!rc)
            rc = keep_estate(g, json_string_value(est), json_string_length(est));
    }
    berth_nexus *nx = g->nx;
    json_t *cls = json_object_get(root, "clusters");
    size_t ncl = json_array_size(cls);
    uint32_t *cid = calloc(ncl + 1, sizeof *cid);
    if (!rc && !cid)
        rc = berth_error_set(e, BERTH_ENOMEM, "out of memory");
    if (!rc && ncl && !nx)
        rc = berth_error_set(e, BERTH_EINVAL, "the snapshot has clusters but no estate");
    for (size_t i = 0; !rc && i < ncl; i++) {
        json_t *c = json_array_get(cls, i);
        json_t *body = json_array_get(c, 2);
        serve_reply r = {0};
        berth_nexus *parsed = NULL;
        if (!json_is_string(body) ||
            parse_cluster(json_string_value(body), json_string_length(body), &parsed, &r)) {
            rc = berth_error_set(e, BERTH_EINVAL, "snapshot cluster %zu: %s", i,
                                 r.body ? r.body : "no text");
            free(r.body);
            break;
        }
        berth_cluster_spec cs;
        berth_pool_spec *ps = copy_spec(nx, &parsed->specs[0], &cs, 1);
        cid[i] = BERTH_NEXUS_NONE;
        rc = ps ? berth_nexus_create_cluster(nx, &cs, &g->opt, &cid[i], e) : BERTH_ENOMEM;
        free(ps);
        free_nexus(parsed);
        if (!rc) {
            set_cver(g, cid[i], json_integer_value(json_array_get(c, 1)));
            rc = keep_body(g, cid[i], json_string_value(body), json_string_length(body));
        }
    }
    json_t *pools = json_object_get(root, "pools"), *vms = json_object_get(root, "vms"), *x;
    size_t i;
    json_array_foreach(vms, i, x) {
        if (rc)
            break;
        json_int_t c = json_integer_value(json_array_get(x, 0));
        json_int_t pi = json_integer_value(json_array_get(x, 1));
        json_int_t ord = json_integer_value(json_array_get(x, 2));
        json_int_t m = json_integer_value(json_array_get(x, 3));
        const char *mname = json_string_value(json_array_get(x, 4));
        json_int_t mask = json_integer_value(json_array_get(x, 5));
        if (c < 0 || (size_t)c >= ncl || pi < 0 ||
            pi >= (json_int_t)nx->clusters[cid[c]].npools || m < 0 ||
            m >= (json_int_t)nx->nmachines || !mname || strcmp(mname, nx->machines[m].name) ||
            ord < 1 || ord > UINT32_MAX || mask <= 0 || mask > UINT32_MAX) {
            rc = berth_error_set(e, BERTH_EINVAL, "snapshot VM %zu names no VM of the estate", i);
            break;
        }
        rc = berth_nexus_place_at(nx, nx->clusters[cid[c]].pools[pi], (uint32_t)m,
                                  (uint32_t)mask, (uint32_t)ord, e);
    }
    json_array_foreach(pools, i, x) {
        if (rc)
            break;
        json_int_t c = json_integer_value(json_array_get(x, 0));
        json_int_t pi = json_integer_value(json_array_get(x, 1));
        if (c < 0 || (size_t)c >= ncl || pi < 0 ||
            pi >= (json_int_t)nx->clusters[cid[c]].npools) {
            rc = berth_error_set(e, BERTH_EINVAL, "snapshot pool %zu names no pool", i);
            break;
        }
        berth_pool *p = &nx->pools[nx->clusters[cid[c]].pools[pi]];
        p->count = (int32_t)json_integer_value(json_array_get(x, 2));
        p->next_ordinal = (uint32_t)json_integer_value(json_array_get(x, 3));
    }
    free(cid);
    if (!rc)
        g->changes = json_integer_value(json_object_get(root, "changes"));
    json_decref(root);
    return rc;
}

static void follow_load(void *ctx, const char *state, size_t len, int64_t rev)
{
    serve_engine *g = ctx;
    berth_error e;
    berth_error_clear(&e);
    pthread_rwlock_wrlock(&g->state);
    serve_engine_stats keep = g->st;
    int rc = snapshot_load(g, state, len, &e);
    g->st = keep;
    g->st.revision = rev;
    g->mid_batch = 0;
    g->since_snapshot = 0;
    g->snapshot_at = mono_now();
    if (state)
        g->st.snapshot_revision = rev;
    pthread_rwlock_unlock(&g->state);
    if (rc) {
        fprintf(stderr, "berth serve: etcd: the snapshot at revision %lld cannot be loaded: %s\n",
                (long long)rev, e.msg);
        __atomic_store_n(&g->fatal, 1, __ATOMIC_SEQ_CST);
    }
    pthread_mutex_lock(&g->mu);
    if (rev > g->applied_rev)
        g->applied_rev = rev;
    pthread_cond_broadcast(&g->applied_cv);
    pthread_mutex_unlock(&g->mu);
}

static void *follower_main(void *arg)
{
    serve_engine *g = arg;
    serve_follow_fns f = {.record = follow_record, .batch = follow_batch, .alive = follow_alive,
                          .load = follow_load, .ctx = g};
    g->store->vt->follow(g->store, &f, &g->stop);
    return NULL;
}

/* ---- the checkpoint thread (etcd): leader, snapshots, rebuilds ---- */

/* As leader: a snapshot when the log grew by checkpoint_every batches, or
 * when it grew at all and checkpoint_seconds passed. */
static void maybe_checkpoint(serve_engine *g)
{
    pthread_rwlock_rdlock(&g->state);
    uint64_t batches = g->since_snapshot;
    int due = !g->mid_batch && !__atomic_load_n(&g->fatal, __ATOMIC_SEQ_CST) &&
              (batches >= g->checkpoint_every ||
               (batches > 0 && mono_now() - g->snapshot_at >= g->checkpoint_seconds));
    int64_t rev = g->st.revision;
    char *text = due ? snapshot_text(g) : NULL;
    pthread_rwlock_unlock(&g->state);
    if (!text) {
        if (due)
            fprintf(stderr, "berth serve: checkpoint: cannot write the snapshot\n");
        return;
    }
    berth_error e;
    berth_error_clear(&e);
    size_t removed = 0;
    int rc = g->store->vt->checkpoint(g->store, text, strlen(text), rev, &removed, &e);
    free(text);
    pthread_rwlock_wrlock(&g->state);
    if (!rc) {
        g->since_snapshot -= batches < g->since_snapshot ? batches : g->since_snapshot;
        g->snapshot_at = mono_now();
        g->st.checkpoints++;
        g->st.snapshot_revision = rev;
    }
    g->st.log_keys_removed += removed;
    pthread_rwlock_unlock(&g->state);
    if (rc && rc != BERTH_ENOENT)
        fprintf(stderr, "berth serve: checkpoint at revision %lld: %s\n", (long long)rev, e.msg);
}

/* The worker's plans leave a Deleted cluster entry (with its pools and
 * VM slots) per planned create, hidden from every reply; real deletes
 * leave one too. Once they outnumber the live clusters (and at least 64),
 * the state is rebuilt from its own snapshot: the same live objects in the
 * same order (as a replica joining from a snapshot), none of the dead ones.
 * Under the state lock, between batches, so no plan is outstanding. */
static void maybe_compact(serve_engine *g)
{
    pthread_rwlock_wrlock(&g->state);
    berth_nexus *nx = g->nx;
    uint32_t live = 0;
    for (uint32_t c = 0; nx && c < nx->nclusters; c++)
        live += nx->clusters[c].status != BERTH_CLUSTER_DELETED;
    uint32_t dead = nx ? nx->nclusters - live : 0;
    char *text = !g->mid_batch && dead >= 64 && dead >= live ? snapshot_text(g) : NULL;
    if (text) {
        serve_engine_stats keep = g->st;
        int64_t changes = g->changes;
        berth_error e;
        berth_error_clear(&e);
        if (snapshot_load(g, text, strlen(text), &e)) {
            fprintf(stderr, "berth serve: cannot rebuild the state: %s\n", e.msg);
            __atomic_store_n(&g->fatal, 1, __ATOMIC_SEQ_CST);
        }
        g->st = keep;
        g->st.rebuilds++;
        if (g->changes != changes)
            __atomic_store_n(&g->fatal, 1, __ATOMIC_SEQ_CST);
        free(text);
    }
    pthread_rwlock_unlock(&g->state);
}

static void *checkpoint_main(void *arg)
{
    serve_engine *g = arg;
    double next_lead = 0, next_defrag = mono_now() + g->defrag_seconds;
    int leader = 0;
    while (!__atomic_load_n(&g->stop, __ATOMIC_SEQ_CST)) {
        double t = mono_now();
        berth_error e;
        berth_error_clear(&e);
        if (t >= next_lead) {
            leader = g->store->vt->lead(g->store, g->replica, &e) == 1;
            next_lead = t + 5.0; /* a third of the lease's 15 s */
            pthread_rwlock_wrlock(&g->state);
            g->st.leader = leader;
            pthread_rwlock_unlock(&g->state);
        }
        if (leader)
            maybe_checkpoint(g);
        maybe_compact(g);
        if (!leader) {
            next_defrag = t + g->defrag_seconds; /* counted from when it leads */
        } else if (t >= next_defrag) {
            if (g->store->vt->defragment(g->store, &e))
                fprintf(stderr, "berth serve: defragment: %s\n", e.msg);
            else {
                pthread_rwlock_wrlock(&g->state);
                g->st.defrags++;
                pthread_rwlock_unlock(&g->state);
            }
            next_defrag = mono_now() + g->defrag_seconds;
        }
        for (int k = 0; k < 20 && !__atomic_load_n(&g->stop, __ATOMIC_SEQ_CST); k++)
            usleep(50000);
    }
    return NULL;
}

/* The heartbeat, on its own thread (a checkpoint, a rebuild or a
 * defragmentation may take longer than the 3 s it guards): a linearizable
 * read of etcd every second, answered within 1 s. */
static void *heartbeat_main(void *arg)
{
    serve_engine *g = arg;
    while (!__atomic_load_n(&g->stop, __ATOMIC_SEQ_CST)) {
        double t = mono_now();
        berth_error e;
        berth_error_clear(&e);
        if (!g->store->vt->heartbeat(g->store, 1000L, &e)) {
            pthread_mutex_lock(&g->mu);
            g->last_ok = mono_now();
            pthread_mutex_unlock(&g->mu);
        }
        while (!__atomic_load_n(&g->stop, __ATOMIC_SEQ_CST) && mono_now() - t < 1.0)
            usleep(50000);
    }
    return NULL;
}

/* etcd: 1 when the last heartbeat etcd answered is older than 3 s (quorum
 * lost, or etcd unreachable from here). */
static int etcd_lost(serve_engine *g)
{
    if (!g->shared)
        return 0;
    pthread_mutex_lock(&g->mu);
    double age = mono_now() - g->last_ok;
    pthread_mutex_unlock(&g->mu);
    return age > 3.0;
}

/* etcd: catches up with the log's current revision (a linearizable read);
 * 0 and the applied revision in *rev, or -1 with a 503 in r. */
static int sync_read(serve_engine *g, serve_reply *r)
{
    if (!g->shared)
        return 0;
    if (etcd_lost(g)) {
        serve_reply_error(r, 503, "storage", "this replica has not reached etcd for 3 s");
        return -1;
    }
    berth_error e;
    berth_error_clear(&e);
    int64_t rev = 0;
    if (g->store->vt->revision(g->store, &rev, &e)) {
        serve_reply_error(r, 503, "storage", e.msg);
        return -1;
    }
    pthread_mutex_lock(&g->mu);
    int late = wait_applied(g, rev, 5.0);
    r->revision = g->applied_rev;
    pthread_mutex_unlock(&g->mu);
    if (late) {
        serve_reply_error(r, 503, "storage", "this replica cannot catch up with the log");
        return -1;
    }
    return 0;
}

/* ---- public engine API ---- */

static void submit(serve_engine *g, serve_op *op)
{
    if (etcd_lost(g)) {
        serve_reply_error(&op->reply, 503, "storage", "this replica has not reached etcd for 3 s");
        return;
    }
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
    free(op->decision);
    op->decision = NULL;
}

/* ---- public engine API ---- */

int serve_engine_open(const char *db, unsigned max_batch, serve_engine **out, berth_error *e)
{
    serve_engine_config c = {.db = db, .max_batch = max_batch};
    return serve_engine_open_config(&c, out, e);
}

int serve_engine_open_config(const serve_engine_config *c, serve_engine **out, berth_error *e)
{
    *out = NULL;
    serve_engine *g = calloc(1, sizeof *g);
    if (!g)
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    g->max_batch = c->max_batch ? c->max_batch : 1024;
    g->opt.use_index = 1;
    g->opt.tiebreak = c->tiebreak ? (berth_tiebreak)c->tiebreak : BERTH_TIE_FIRST;
    pthread_rwlock_init(&g->state, NULL);
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->wake, NULL);
    pthread_cond_init(&g->done, NULL);
    pthread_cond_init(&g->applied_cv, NULL);
    int rc;
    if (c->etcd) {
        rc = serve_log_open_etcd_tls(c->etcd, c->estate, &c->etcd_tls, &g->store, e);
        g->shared = 1;
        /* request ids: unique per process start */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        snprintf(g->replica, sizeof g->replica, "%lx%lx%x", (unsigned long)ts.tv_sec,
                 (unsigned long)ts.tv_nsec, (unsigned)getpid());
    } else {
        rc = serve_log_open_sqlite(c->db, &g->store, e);
        if (!rc)
            rc = reload(g, e);
    }
    g->checkpoint_every = c->checkpoint_every ? c->checkpoint_every : 1000;
    g->checkpoint_seconds = c->checkpoint_seconds > 0 ? c->checkpoint_seconds : 600.0;
    g->defrag_seconds = c->defrag_seconds > 0 ? c->defrag_seconds : 3600.0;
    g->last_ok = mono_now();
    g->snapshot_at = g->last_ok;
    if (!rc && g->shared) {
        if (pthread_create(&g->follower, NULL, follower_main, g) != 0)
            rc = berth_error_set(e, BERTH_EINTERNAL, "cannot start the follower thread");
        else
            g->following = 1;
    }
    if (!rc && g->shared) {
        if (pthread_create(&g->checkpointer, NULL, checkpoint_main, g) != 0)
            rc = berth_error_set(e, BERTH_EINTERNAL, "cannot start the checkpoint thread");
        else
            g->checkpointing = 1;
    }
    if (!rc && g->shared) {
        if (pthread_create(&g->heartbeater, NULL, heartbeat_main, g) != 0)
            rc = berth_error_set(e, BERTH_EINTERNAL, "cannot start the heartbeat thread");
        else
            g->heartbeating = 1;
    }
    if (!rc && pthread_create(&g->worker, NULL, worker_main, g) != 0)
        rc = berth_error_set(e, BERTH_EINTERNAL, "cannot start the worker thread");
    else if (!rc)
        g->started = 1;
    if (rc) {
        serve_engine_close(g);
        return rc;
    }
    if (g->shared) { /* catch up with the log before taking requests */
        serve_reply r = {0};
        sync_read(g, &r);
        free(r.body);
    }
    pthread_rwlock_wrlock(&g->state);
    memset(g->st.rejected, 0, sizeof g->st.rejected);
    memset(g->st.accepted, 0, sizeof g->st.accepted);
    pthread_rwlock_unlock(&g->state);
    *out = g;
    return 0;
}

void serve_engine_close(serve_engine *g)
{
    if (!g)
        return;
    pthread_mutex_lock(&g->mu);
    __atomic_store_n(&g->stop, 1, __ATOMIC_SEQ_CST);
    pthread_cond_signal(&g->wake);
    pthread_cond_broadcast(&g->applied_cv);
    pthread_mutex_unlock(&g->mu);
    if (g->started)
        pthread_join(g->worker, NULL);
    if (g->following)
        pthread_join(g->follower, NULL);
    if (g->checkpointing)
        pthread_join(g->checkpointer, NULL);
    if (g->heartbeating)
        pthread_join(g->heartbeater, NULL);
    if (g->store)
        g->store->vt->close(g->store);
    free_nexus(g->nx);
    free(g->cver);
    forget_bodies(g);
    free(g->cbody);
    free(g->clen);
    free(g->ebody);
    pthread_rwlock_destroy(&g->state);
    pthread_mutex_destroy(&g->mu);
    pthread_cond_destroy(&g->wake);
    pthread_cond_destroy(&g->done);
    pthread_cond_destroy(&g->applied_cv);
    free(g);
}

void serve_engine_put_estate(serve_engine *g, const char *body, size_t len, serve_reply *r)
{
    *r = (serve_reply){0};
    serve_op op = {.kind = SERVE_REC_ESTATE, .body = body, .len = len};
    if (parse_estate(&g->opt, body, len, &op.parsed, r)) {
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
    if (sync_read(g, r))
        return;
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
    if (sync_read(g, r))
        return;
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
    if (sync_read(g, r))
        return;
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
    st->commits = g->store->vt->commits(g->store);
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
        st->cluster_entries = nx->nclusters;
        for (uint32_t p = 0; p < nx->npools; p++)
            if (nx->clusters[nx->pools[p].cluster].status != BERTH_CLUSTER_DELETED)
                st->vms += nx->pools[p].nvms;
    }
    pthread_rwlock_unlock(&g->state);
}

int serve_engine_ready(serve_engine *g)
{
    pthread_mutex_lock(&g->mu);
    int ok = !g->stop && !__atomic_load_n(&g->fatal, __ATOMIC_SEQ_CST) &&
             (!g->shared || (g->alive && mono_now() - g->last_ok <= 3.0));
    pthread_mutex_unlock(&g->mu);
    return ok;
}

void serve_engine_read(serve_engine *g, void (*fn)(const berth_nexus *nx, void *ctx), void *ctx)
{
    pthread_rwlock_rdlock(&g->state);
    fn(g->nx, ctx);
    pthread_rwlock_unlock(&g->state);
}
