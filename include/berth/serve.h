/* berth/serve.h - the placement service (`berth serve`): a JSON HTTP API
 * (libmicrohttpd) over the nexus, kube and fleet engines, with a durable
 * log of every accepted mutation: SQLite, or etcd shared by several
 * replicas (docs/api.md, docs/ARCHITECTURE.md).
 *
 * Life cycle: fill a berth_serve_options (berth_serve_default_options),
 * berth_serve_start (replays the log, starts the worker and the HTTP
 * daemon), then berth_serve_stop. The server is thread-safe; placement runs
 * in one worker thread that group-commits the mutations that arrive
 * together. Connections are multiplexed on a few epoll threads; request
 * work runs on two bounded pools (estate and planners). berth_serve_start
 * raises the soft RLIMIT_NOFILE of the process to its hard limit.
 *
 * Threads: call berth_serve_start and berth_serve_stop from one thread, one
 * server at a time per options object. Requests are answered concurrently:
 * each stateless request (kube schedule, fleet place, disrupt and autoscale
 * plans, the extender) builds and frees its own model, estate reads take
 * the engine's lock, and estate writes are applied by the one worker
 * thread; `make tsan` checks this under ThreadSanitizer. */
#ifndef BERTH_SERVE_H
#define BERTH_SERVE_H

#include <stddef.h>
#include <stdint.h>

#include "berth/error.h"

#define BERTH_SERVE_MAX_BODY (8u * 1024u * 1024u)

typedef struct berth_serve_options {
    const char *db;                 /* SQLite file, default "berth.db" */
    const char *listen;             /* "ADDR:PORT", default "127.0.0.1:8080"; port 0 = any */
    const char *token_file;         /* read-write bearer tokens, one per line (NULL: no auth) */
    const char *read_only_token_file; /* read-only tokens (403 on writes) */
    size_t max_body;                /* bytes, default BERTH_SERVE_MAX_BODY */
    size_t max_header;              /* per-connection memory for headers, default 64 KiB */
    unsigned max_connections;       /* open connections, default 10000 */
    unsigned per_ip_connections;    /* open connections per client address, default 64 */
    unsigned timeout_seconds;       /* idle per-connection timeout, default 30 */
    unsigned request_timeout;       /* seconds for a whole request (headers and body) to
                                     * arrive, and for its reply to be taken; default 10 */
    unsigned threads;               /* event-loop threads (epoll), default 4 */
    unsigned workers;               /* estate/extender/metrics pool threads, default 64 */
    unsigned planner_threads;       /* planner pool (kube, fleet, disrupt, autoscale);
                                     * default: online CPUs, at least 2 */
    unsigned planner_queue;         /* planner requests waiting beyond the running ones
                                     * before 503; default = planner_threads */
    uint64_t max_objects;           /* objects per stateless request body, default 100000 */
    uint64_t max_pairs;             /* nodes x pods per stateless request, default 250000 */
    double max_request_seconds;     /* wall time of one planner request's work (from the
                                     * time a planner thread takes it), default 30; 0: none */
    unsigned max_batch;             /* mutations per group commit, default 1024 */
    const char *tls_cert;           /* PEM certificate (chain): serve HTTPS (with tls_key) */
    const char *tls_key;            /* PEM private key */
    int quiet;                      /* no log lines on stderr */
    const char *etcd;               /* "http://HOST:PORT[,...]": keep the estate's log in etcd
                                     * (shared by replicas) instead of db; NULL: SQLite */
    const char *estate;             /* the estate's name in etcd (with etcd) */
    unsigned checkpoint_every;      /* etcd: log batches between snapshots, default 1000 */
    const char *etcd_cacert;        /* etcd: PEM CA bundle to verify its members (https://) */
    const char *etcd_cert;          /* etcd: PEM client certificate (with etcd_key) */
    const char *etcd_key;           /* etcd: its PEM private key */
} berth_serve_options;

typedef struct berth_server berth_server;

void berth_serve_default_options(berth_serve_options *o);

/* Opens the store, replays it, starts the worker and the HTTP daemon.
 * BERTH_EINVAL (bad option, unreadable token file, bad listen address),
 * BERTH_EIO (store or socket) with a message. */
int berth_serve_start(const berth_serve_options *o, berth_server **out, berth_error *e);
/* The TCP port actually bound (useful with port 0). */
unsigned berth_serve_port(const berth_server *s);
/* Stops accepting, finishes queued mutations, closes the store, frees s. */
void berth_serve_stop(berth_server *s);

#endif
