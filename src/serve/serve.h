/* serve/serve.h - internals of `berth serve`: the store interface
 * (serve_log) with its SQLite (store.c) and etcd (etcd.c) implementations, the engine that owns the estate and its placement worker with
 * group commit (engine.c), bearer tokens (auth.c), Prometheus metrics
 * (metrics.c) and JSON error bodies. The HTTP layer is http.c. */
#ifndef BERTH_SERVE_INTERNAL_H
#define BERTH_SERVE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "berth/error.h"

/* ---- store: append-only log of accepted mutations ---- */

typedef enum serve_rec_kind {
    SERVE_REC_ESTATE = 1, /* body: Site + VmSku text; supersedes every older record */
    SERVE_REC_CREATE = 2, /* body: the KubernetesCluster text */
    SERVE_REC_SCALE = 3,  /* cluster, pool, count */
    SERVE_REC_DELETE = 4, /* cluster */
} serve_rec_kind;

/* Record formats: 1 = the request only (re-planned through the current
 * engine on replay: logs written before format 2); 2 = the request and the
 * decision it made (JSON text: the placements, the cluster version it was
 * planned against), applied on replay without planning. */
#define SERVE_REC_FORMAT 2

typedef struct serve_record {
    int64_t seq;          /* set by append / replay (etcd: the revision of its batch) */
    int kind;
    int format;           /* 1 or 2 (0 on append = 1) */
    const char *cluster;  /* NULL when unused */
    const char *pool;
    int64_t count;
    const char *body;
    size_t body_len;
    const char *decision; /* format 2: JSON text (engine.c), else NULL */
    const char *req_id;   /* etcd: "<replica>-<batch>-<index>", else NULL */
} serve_record;

/* ---- the store interface: one log, two implementations ---- */

typedef struct serve_log serve_log;
typedef int (*serve_record_fn)(void *ctx, const serve_record *r, berth_error *e);

/* What a follower calls (shared logs): record per record in log order,
 * batch after each batch with its revision (batch_id NULL: everything up
 * to rev is applied), alive when the watch is up (1) or down (0), load
 * with a snapshot (state NULL: none, the empty estate) covering rev before
 * the records after it. */
typedef struct serve_follow_fns {
    serve_record_fn record;
    void (*batch)(void *ctx, int64_t rev, const char *batch_id);
    void (*alive)(void *ctx, int ok);
    void (*load)(void *ctx, const char *state, size_t len, int64_t rev);
    void *ctx;
} serve_follow_fns;

typedef struct serve_log_vt {
    const char *name;
    /* 0: this process is the only writer, a batch is applied as planned
     * (SQLite). 1: other replicas append too: the engine applies what it
     * reads back from the log, in log order (etcd). */
    int shared;
    /* Appends one batch durably, in order, as one unit; *rev: the position
     * of the batch (SQLite: the last record's sequence; etcd: the revision).
     * batch_id names the batch: a retried append of the same id is never
     * applied twice. */
    int (*append)(serve_log *l, serve_record *recs, size_t n, const char *batch_id,
                  int64_t *rev, berth_error *e);
    /* Calls fn on every record after revision from, in log order, up to the
     * end known now (SQLite: from its latest estate). */
    int (*read)(serve_log *l, int64_t from, serve_record_fn fn, void *ctx, berth_error *e);
    /* shared logs (NULL for SQLite). revision: the revision of the newest
     * record (a linearizable read); heartbeat: the same read answered
     * within timeout_ms (0: etcd has quorum and answers). follow: blocks
     * until *stop: loads the latest snapshot and the records after it
     * (f->load, then f->record / f->batch), then follows the log. */
    int (*revision)(serve_log *l, int64_t *rev, berth_error *e);
    int (*heartbeat)(serve_log *l, long timeout_ms, berth_error *e);
    void (*follow)(serve_log *l, const struct serve_follow_fns *f, const int *stop);
    /* The checkpoint leader (called from one thread only). lead: keeps
     * this replica's candidacy (lease and election key); 1 when it leads.
     * checkpoint: as leader, stores state (the engine's snapshot text,
     * covering revision rev), removes the log records at or below rev
     * (*removed: how many log keys), compacts the store's history;
     * BERTH_ENOENT when it does not lead. defragment: the store's files. */
    int (*lead)(serve_log *l, const char *id, berth_error *e);
    int (*checkpoint)(serve_log *l, const char *state, size_t len, int64_t rev, size_t *removed,
                      berth_error *e);
    int (*defragment)(serve_log *l, berth_error *e);
    uint64_t (*commits)(serve_log *l);
    void (*close)(serve_log *l);
} serve_log_vt;

struct serve_log {
    const serve_log_vt *vt;
};

/* The SQLite log at path (created), --db. */
int serve_log_open_sqlite(const char *path, serve_log **out, berth_error *e);
/* The etcd log of estate name on the comma-separated endpoints, --etcd. */
int serve_log_open_etcd(const char *endpoints, const char *estate, serve_log **out,
                        berth_error *e);
/* TLS to etcd: PEM files (each NULL: curl's default), --etcd-cacert,
 * --etcd-cert, --etcd-key. */
typedef struct serve_etcd_tls {
    const char *cacert; /* CA bundle that signed the members' certificates */
    const char *cert;   /* client certificate (with key) */
    const char *key;    /* its private key */
} serve_etcd_tls;
/* As serve_log_open_etcd, with TLS options (NULL: none); a file that cannot
 * be read is BERTH_EINVAL naming the option. */
int serve_log_open_etcd_tls(const char *endpoints, const char *estate,
                            const serve_etcd_tls *tls, serve_log **out, berth_error *e);

typedef struct serve_store serve_store;

/* Opens (creating) the database: WAL journal, synchronous=FULL. */
int serve_store_open(const char *path, serve_store **out, berth_error *e);
void serve_store_close(serve_store *s);
int serve_store_begin(serve_store *s, berth_error *e);
/* Appends r inside the open transaction and sets r->seq. An ESTATE record
 * also deletes every older record (compaction: they are superseded). */
int serve_store_append(serve_store *s, serve_record *r, berth_error *e);
/* Commits (one fsync of the WAL). */
int serve_store_commit(serve_store *s, berth_error *e);
void serve_store_rollback(serve_store *s);
/* Calls fn on every record from the latest ESTATE on, in sequence order. */
int serve_store_replay(serve_store *s,
                       int (*fn)(void *ctx, const serve_record *r, berth_error *e), void *ctx,
                       berth_error *e);
/* Transactions committed since open. */
uint64_t serve_store_commits(const serve_store *s);

/* ---- replies ---- */

typedef enum serve_reason {
    SERVE_REJ_BAD_INPUT,
    SERVE_REJ_INVALID,
    SERVE_REJ_CONFLICT,
    SERVE_REJ_NOT_FOUND,
    SERVE_REJ_NO_ESTATE,
    SERVE_REJ_DOES_NOT_FIT,
    SERVE_REJ_STORAGE,
    SERVE_REJ_INTERNAL,
    SERVE_REJ_COUNT
} serve_reason;

const char *serve_reason_name(serve_reason r);

typedef struct serve_reply {
    int status;     /* HTTP status */
    char *body;     /* malloc'd JSON text */
    int64_t revision; /* etcd: the log revision applied (X-Berth-Revision), else 0 */
    int stopped;    /* a planner was stopped by --max-request-seconds (counted) */
} serve_reply;

/* {"error": {"code": code, "message": msg}} into r. */
void serve_reply_error(serve_reply *r, int status, const char *code, const char *msg);
/* The error reply of a request whose body failed to load or plan with rc:
 * 500 internal for BERTH_ENOMEM, else 400 bad_input, msg the message. */
void serve_reply_failed(serve_reply *r, int rc, const char *msg);
/* Compact JSON of j (stolen) into r; 500 when it cannot be rendered. */
struct json_t;
void serve_reply_json(serve_reply *r, int status, struct json_t *j);

/* ---- request checks (validate.c) ---- */

#define SERVE_NAME_MAX 63
#define SERVE_BAD_ESCAPE '\x01' /* what serve_unescape makes of %00 and %2F */
struct MHD_Connection;
/* 1 when s[0..n) is a valid cluster or pool name: 1-63 letters, digits,
 * '-', '_' or '.', starting and ending with a letter or digit. */
int serve_name_valid(const char *s, size_t n);
/* 0, or -1 with a 400 in r: "WHERE: WHAT name '...' is not valid: ...". */
int serve_name_check(const char *where, const char *what, const char *s, size_t n,
                     serve_reply *r);
/* libmicrohttpd's MHD_OPTION_UNESCAPE_CALLBACK: %XX decoding, with an
 * encoded NUL or '/' turned into SERVE_BAD_ESCAPE. */
size_t serve_unescape(void *cls, struct MHD_Connection *c, char *s);
/* 0, or -1 with a 400 in r when the (unescaped) path holds SERVE_BAD_ESCAPE
 * or another control byte. */
int serve_path_check(const char *url, serve_reply *r);
/* 0, or -1 with a 413 in r when Content-Length announces more than max. */
int serve_length_check(const char *content_length, size_t max, serve_reply *r);

/* ---- engine: the estate, the worker, group commit ---- */

typedef struct serve_engine serve_engine;

typedef struct serve_engine_stats {
    uint64_t accepted[5];                 /* by serve_rec_kind */
    uint64_t rejected[SERVE_REJ_COUNT];
    uint64_t commits, batches, batched_ops;
    uint64_t replans;                     /* etcd: records rejected by the apply check, re-planned */
    int64_t revision;                     /* etcd: the log revision applied */
    int64_t snapshot_revision;            /* etcd: revision of the latest snapshot loaded/written */
    uint64_t checkpoints;                 /* etcd: snapshots this replica wrote as leader */
    uint64_t log_keys_removed;            /* etcd: log keys it deleted below its snapshots */
    uint64_t defrags;                     /* etcd: defragmentations it ran */
    int leader;                           /* etcd: this replica is the checkpoint leader */
    uint64_t rebuilds;                    /* etcd: state rebuilt to drop deleted entries */
    uint32_t cluster_entries;             /* cluster slots held, deleted ones included */
    uint64_t vms;                         /* live VMs */
    int64_t cpu, used_cpu, memory, used_memory;
    uint32_t machines, clusters;
    int have_estate;
} serve_engine_stats;

/* Opens the store at db, replays it and starts the worker. */
int serve_engine_open(const char *db, unsigned max_batch, serve_engine **out, berth_error *e);

typedef struct serve_engine_config {
    const char *db;          /* SQLite log (when etcd is NULL) */
    const char *etcd;        /* "http://host:port[,...]": the etcd log instead */
    const char *estate;      /* the estate's name in etcd */
    unsigned max_batch;      /* mutations per group commit, default 1024 */
    /* tests only: the planner's tie rule (default BERTH_TIE_FIRST); a log
     * replayed under another rule must give the same estate */
    int tiebreak;
    /* etcd checkpoints: a snapshot every checkpoint_every log batches
     * (default 1000) or after checkpoint_seconds (default 600) when the
     * log grew; etcd defragmented every defrag_seconds (default 3600) */
    unsigned checkpoint_every;
    double checkpoint_seconds;
    double defrag_seconds;
    serve_etcd_tls etcd_tls; /* TLS to etcd (all NULL: none) */
} serve_engine_config;
int serve_engine_open_config(const serve_engine_config *c, serve_engine **out, berth_error *e);
void serve_engine_close(serve_engine *g);

/* Mutations: block until committed (or rejected); fill r (overwritten, not
 * freed: the caller frees r->body after each call). */
void serve_engine_put_estate(serve_engine *g, const char *body, size_t len, serve_reply *r);
void serve_engine_create(serve_engine *g, const char *body, size_t len, serve_reply *r);
void serve_engine_scale(serve_engine *g, const char *cluster, const char *pool, int64_t count,
                        serve_reply *r);
void serve_engine_delete(serve_engine *g, const char *cluster, serve_reply *r);
/* Reads (committed state only). */
void serve_engine_get_estate(serve_engine *g, serve_reply *r);
void serve_engine_get_cluster(serve_engine *g, const char *name, serve_reply *r);
void serve_engine_list_clusters(serve_engine *g, serve_reply *r);
void serve_engine_stats_get(serve_engine *g, serve_engine_stats *st);
/* 1 while the engine can take requests (0 after a fatal storage error). */
int serve_engine_ready(serve_engine *g);
/* Calls fn with the committed state (NULL before an estate is loaded)
 * under the shared state lock; fn must only read. */
struct berth_nexus;
void serve_engine_read(serve_engine *g, void (*fn)(const struct berth_nexus *nx, void *ctx),
                       void *ctx);

/* ---- the web page (web.c) ---- */

/* GET /: the self-contained HTML page (text/html). */
void serve_web_page(serve_reply *r);
/* GET /v1/estate.svg: the layout picture of the committed state
 * (image/svg+xml); 404 no_estate before an estate is loaded. */
void serve_web_svg(serve_engine *g, serve_reply *r);

/* Stateless engines (run on the caller's thread: http.c runs them on the
 * bounded planner pool). */

/* The work one stateless request may ask for (docs/api.md "Limits"):
 * objects in the body (a List's items count one each) and the product of
 * the two sides a planner crosses (nodes x pods; member clusters x
 * placements), and the wall time from the start of the request's work
 * (berth/cancel.h, checked inside the planners). 0 = no limit. Over a
 * limit: 413 (objects) or 422 over_budget (pairs, time: r->stopped set),
 * with the option that raises it. */
typedef struct serve_budget {
    uint64_t max_objects;
    uint64_t max_pairs;
    double max_seconds;
} serve_budget;

/* POST /v1/kube/schedule?profile=NAME&preempt=true|false (default true). */
void serve_kube_schedule(const char *body, size_t len, const char *profile, const char *preempt,
                         const char *detail, const serve_budget *b, serve_reply *r);
/* POST /v1/fleet/place?now=T&detail=all|default (default: each placement's
 * "clusters" bounded as berth_report_fleet_json_detail says). */
void serve_fleet_place(const char *body, size_t len, const char *now, const char *detail,
                       const serve_budget *b, serve_reply *r);
/* POST /v1/disrupt/plan?at=T and /v1/autoscale/plan?at=T (stateless). */
void serve_disrupt_plan(const char *body, size_t len, const char *at, const serve_budget *b,
                        serve_reply *r);
void serve_autoscale_plan(const char *body, size_t len, const char *at, const serve_budget *b,
                          serve_reply *r);

/* ---- bounded worker pools (pool.c) ---- */

/* A job: embedded in the caller's object; fn gets the job back. */
typedef struct serve_job {
    void (*fn)(struct serve_job *j);
    struct serve_job *next;
} serve_job;

typedef struct serve_pool serve_pool;
/* threads workers; at most max_queue jobs waiting beyond the running ones. */
serve_pool *serve_pool_new(unsigned threads, unsigned max_queue);
/* 0 queued; -1 when every thread is busy and the queue is full (or the
 * pool is stopping): the job is not run. */
int serve_pool_submit(serve_pool *p, serve_job *j);
void serve_pool_load(serve_pool *p, unsigned *running, unsigned *queued);
/* Refuses new jobs, runs the queued ones and joins the threads (once). */
void serve_pool_stop(serve_pool *p);
/* serve_pool_stop, then frees p. */
void serve_pool_free(serve_pool *p);

/* ---- auth ---- */

typedef struct serve_tokens {
    char **tok;
    size_t n;
} serve_tokens;

int serve_tokens_load(serve_tokens *t, const char *path, berth_error *e);
void serve_tokens_free(serve_tokens *t);
/* Constant-time (in the token's content) membership test. */
int serve_tokens_match(const serve_tokens *t, const char *candidate);

/* ---- metrics ---- */

typedef struct serve_metrics serve_metrics;
serve_metrics *serve_metrics_new(void);
void serve_metrics_free(serve_metrics *m);
/* route: one of serve_route_names; method: HTTP method text. */
void serve_metrics_observe(serve_metrics *m, int route, const char *method, int status,
                           double seconds);
/* Prometheus text exposition into a malloc'd string. */
char *serve_metrics_render(serve_metrics *m, serve_engine *g);

/* ---- kube-scheduler extender (extender.c, bindings.c) ---- */

struct berth_node;
/* A bound pod: "namespace/name", its node and its v1 Pod document (with
 * spec.nodeName); valid until serve_bindings_close. */
typedef struct serve_bound {
    const char *key, *node;
    const struct berth_node *doc;
} serve_bound;

typedef struct serve_bindings serve_bindings;
/* Opens the kube_bindings table of the store at path and loads it. */
int serve_bindings_open(const char *path, serve_bindings **out, berth_error *e);
void serve_bindings_close(serve_bindings *b);
/* Remembers the pod of a filter or prioritize call (key "ns/name"). */
void serve_bindings_seen(serve_bindings *b, const char *key, const char *uid, const char *pod_json);
/* Records (durably) the pod seen last under ns/name as bound to node.
 * BERTH_ENOENT when it was not seen, BERTH_EIO when the commit failed. */
int serve_bindings_bind(serve_bindings *b, const char *ns, const char *name, const char *uid,
                        const char *node, berth_error *e);
/* Every bound pod, into a malloc'd array (the caller frees it), and the
 * generation it belongs to (generation may be NULL). */
int serve_bindings_snapshot(serve_bindings *b, serve_bound **out, size_t *n, uint64_t *generation);
/* A number that changes whenever a binding is recorded: a result computed
 * at one generation holds while it is unchanged. */
uint64_t serve_bindings_generation(serve_bindings *b);

/* ---- TLS (tls.c) ---- */

typedef struct serve_tls {
    char *cert, *key; /* PEM text, NULL without TLS */
} serve_tls;
/* Reads both files (both NULL: no TLS). BERTH_EINVAL when one is missing,
 * unreadable or not PEM, or libmicrohttpd lacks TLS. */
int serve_tls_load(const char *cert, const char *key, serve_tls *t, berth_error *e);
void serve_tls_free(serve_tls *t);

typedef struct serve_extender serve_extender;
int serve_extender_open(const char *db, serve_extender **out, berth_error *e);
void serve_extender_close(serve_extender *x);
/* POST /v1/extender/{filter,prioritize,bind}; profile: ?profile= or NULL. */
void serve_extender_filter(serve_extender *x, const char *body, size_t len, const char *profile,
                           serve_reply *r);
void serve_extender_prioritize(serve_extender *x, const char *body, size_t len,
                               const char *profile, serve_reply *r);
void serve_extender_bind(serve_extender *x, const char *body, size_t len, serve_reply *r);
/* PUT /v1/kube/nodes: the nodes nodeCacheCapable calls name. */
void serve_extender_put_nodes(serve_extender *x, const char *body, size_t len, serve_reply *r);
/* How many filter and prioritize calls the nodeCacheCapable fast path
 * answered, and how many of them from a kept scheduling cycle. */
void serve_extender_fast_stats(serve_extender *x, uint64_t *calls, uint64_t *hits);
/* How many warm scheduler states the fast path built, and how many new
 * pods' cycles it answered from one (docs/api.md, "warm state"). */
void serve_extender_warm_stats(serve_extender *x, uint64_t *builds, uint64_t *probes);
/* Pods answered from their class's result kept by a warm state (no cycle). */
void serve_extender_class_stats(serve_extender *x, uint64_t *classed);
/* on = 0: every new pod's cycle is built cold (the reference the
 * benchmark compares the warm states with); 1 (the default): warm. */
void serve_extender_set_warm(serve_extender *x, int on);

enum serve_route {
    SERVE_RT_ESTATE,
    SERVE_RT_CLUSTERS,
    SERVE_RT_CLUSTER,
    SERVE_RT_POOL,
    SERVE_RT_KUBE,
    SERVE_RT_FLEET,
    SERVE_RT_HEALTHZ,
    SERVE_RT_READYZ,
    SERVE_RT_METRICS,
    SERVE_RT_WEB,        /* GET /: the live page (web.c) */
    SERVE_RT_ESTATE_SVG, /* GET /v1/estate.svg */
    SERVE_RT_EXT_FILTER,     /* kube-scheduler extender (extender.c) */
    SERVE_RT_EXT_PRIORITIZE,
    SERVE_RT_EXT_BIND,
    SERVE_RT_KUBE_NODES,     /* PUT /v1/kube/nodes: the extender's node cache */
    SERVE_RT_DISRUPT,        /* POST /v1/disrupt/plan (stateless) */
    SERVE_RT_AUTOSCALE,      /* POST /v1/autoscale/plan (stateless) */
    SERVE_RT_OTHER,
    SERVE_RT_COUNT
};
extern const char *const serve_route_names[SERVE_RT_COUNT];

#endif
