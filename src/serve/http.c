/* serve/http.c - the HTTP layer of `berth serve` (libmicrohttpd): a few
 * epoll event-loop threads own every connection and never block; request
 * work runs on two bounded pools (pool.c: planners, and everything else
 * that may wait: estate, extender, metrics) while the connection is
 * suspended; a deadline thread closes connections whose request (headers
 * and body) or reply takes longer than --request-timeout. Also routing,
 * bearer-token auth, request limits, JSON error bodies and metrics; every
 * endpoint calls the engine (engine.c) or a stateless library run
 * (stateless.c). docs/api.md is the reference. */
#include "berth/serve.h"
#include "serve/serve.h"
#include "berth/doc.h"
#include "berth/grow.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Where a connection is, for the deadline thread. */
enum conn_phase {
    CONN_READ,  /* receiving a request (headers, body) or idle between requests */
    CONN_WORK,  /* the request is being handled: no deadline (the budget bounds it) */
    CONN_WRITE, /* the reply is queued, being sent */
    CONN_CUT,   /* past its deadline: shut down, MHD closes it */
};

/* One open connection (MHD's socket context). */
typedef struct conn {
    int fd;
    int phase;
    double since; /* start of the phase */
    struct conn *prev, *next;
} conn;

struct berth_server {
    berth_serve_options opt;
    struct MHD_Daemon *d;
    serve_engine *engine;
    serve_metrics *metrics;
    serve_tokens rw, ro;
    int auth;
    unsigned port;
    serve_extender *ext; /* kube-scheduler extender (extender.c) */
    serve_tls tls;
    serve_pool *planners; /* kube, fleet, disrupt, autoscale */
    serve_pool *workers;  /* estate, extender, metrics, svg */
    serve_budget budget;
    /* open connections and the deadline thread */
    pthread_mutex_t conn_mu;
    pthread_cond_t conn_cv;
    conn *conns;
    uint64_t deadline_cuts, refused, stopped;
    int conn_stop, have_deadline_thread;
    pthread_t deadline_thread;
};

typedef struct route_match {
    int route;
    char cluster[256], pool[256];
    const char *cluster_s, *pool_s; /* the raw segments, checked by check_names */
    size_t cluster_n, pool_n;
} route_match;

enum req_state { REQ_READING, REQ_RUNNING, REQ_DONE };

typedef struct req {
    serve_job job;       /* first: the pool hands it back */
    berth_server *s;
    struct MHD_Connection *c;
    double t0;
    char *body;
    size_t len, cap;
    int too_big;
    serve_reply early;   /* decided before the body arrived (auth, route, size) */
    int route;
    int is_write;
    int retry_after;     /* 503 from a full pool: send Retry-After */
    int state;           /* req_state */
    route_match m;
    const char *method;  /* MHD's, valid for the request */
    const char *arg[3];  /* query arguments the endpoint reads (MHD's memory) */
    serve_reply reply;   /* set by the pool job */
    const char *ctype;
} req;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void berth_serve_default_options(berth_serve_options *o)
{
    memset(o, 0, sizeof *o);
    o->db = "berth.db";
    o->listen = "127.0.0.1:8080";
    o->max_body = BERTH_SERVE_MAX_BODY;
    o->max_header = 64 * 1024;
    o->max_connections = 10000;
    o->per_ip_connections = 64;
    o->timeout_seconds = 30;
    o->request_timeout = 10;
    o->threads = 4;
    o->workers = 64;
    o->planner_threads = 0; /* online CPUs, at least 2 */
    o->planner_queue = 0;   /* = planner_threads */
    o->max_objects = 100000;
    o->max_pairs = 250000;
    o->max_request_seconds = 30;
    o->max_batch = 1024;
}

/* ---- connections and their deadlines ---- */

static conn *conn_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

static void conn_phase(berth_server *s, struct MHD_Connection *c, int phase)
{
    conn *k = conn_of(c);
    if (!k)
        return;
    pthread_mutex_lock(&s->conn_mu);
    if (k->phase != CONN_CUT) {
        k->phase = phase;
        k->since = now_s();
    }
    pthread_mutex_unlock(&s->conn_mu);
}

/* MHD_OPTION_NOTIFY_CONNECTION: registers and forgets connections. MHD
 * calls CLOSED before it closes the socket, so under conn_mu a registered
 * fd is always this connection's. */
static void notify_conn(void *cls, struct MHD_Connection *c, void **socket_context,
                        enum MHD_ConnectionNotificationCode toe)
{
    berth_server *s = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        conn *k = calloc(1, sizeof *k);
        if (!k || !ci) {
            free(k);
            return; /* untracked: only the idle timeout applies */
        }
        k->fd = ci->connect_fd;
        k->phase = CONN_READ;
        k->since = now_s();
        pthread_mutex_lock(&s->conn_mu);
        k->next = s->conns;
        if (s->conns)
            s->conns->prev = k;
        s->conns = k;
        pthread_mutex_unlock(&s->conn_mu);
        *socket_context = k;
    } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        conn *k = *socket_context;
        if (!k)
            return;
        pthread_mutex_lock(&s->conn_mu);
        if (k->prev)
            k->prev->next = k->next;
        else
            s->conns = k->next;
        if (k->next)
            k->next->prev = k->prev;
        pthread_mutex_unlock(&s->conn_mu);
        free(k);
        *socket_context = NULL;
    }
}

/* Every 100 ms: shuts down (both directions) the socket of each connection
 * that has spent more than --request-timeout receiving one request or
 * sending one reply; its event loop then sees the end of the stream and
 * closes it. MHD's own timeout only counts idle time, so a client sending
 * one byte a second would otherwise hold its connection for ever. */
static void *deadline_main(void *arg)
{
    berth_server *s = arg;
    double limit = (double)s->opt.request_timeout;
    pthread_mutex_lock(&s->conn_mu);
    while (!s->conn_stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&s->conn_cv, &s->conn_mu, &ts);
        double t = now_s();
        for (conn *k = s->conns; k; k = k->next)
            if ((k->phase == CONN_READ || k->phase == CONN_WRITE) && t - k->since > limit) {
                shutdown(k->fd, SHUT_RDWR);
                k->phase = CONN_CUT;
                s->deadline_cuts++;
            }
    }
    pthread_mutex_unlock(&s->conn_mu);
    return NULL;
}

/* ---- routing ---- */

/* Copies one path segment (truncated to size - 1: check_names rejects
 * names that long); 0 when it is empty or has a '/'. */
static int segment(const char *s, size_t n, char *out, size_t size)
{
    if (n == 0 || memchr(s, '/', n))
        return 0;
    size_t k = n < size ? n : size - 1;
    memcpy(out, s, k);
    out[k] = 0;
    return 1;
}

static void match_route(const char *url, route_match *m)
{
    memset(m, 0, sizeof *m);
    m->route = SERVE_RT_OTHER;
    if (!strcmp(url, "/v1/estate"))
        m->route = SERVE_RT_ESTATE;
    else if (!strcmp(url, "/v1/clusters"))
        m->route = SERVE_RT_CLUSTERS;
    else if (!strcmp(url, "/v1/kube/schedule"))
        m->route = SERVE_RT_KUBE;
    else if (!strcmp(url, "/v1/fleet/place"))
        m->route = SERVE_RT_FLEET;
    else if (!strcmp(url, "/v1/disrupt/plan"))
        m->route = SERVE_RT_DISRUPT;
    else if (!strcmp(url, "/v1/autoscale/plan"))
        m->route = SERVE_RT_AUTOSCALE;
    else if (!strcmp(url, "/healthz"))
        m->route = SERVE_RT_HEALTHZ;
    else if (!strcmp(url, "/readyz"))
        m->route = SERVE_RT_READYZ;
    else if (!strcmp(url, "/metrics"))
        m->route = SERVE_RT_METRICS;
    else if (!strcmp(url, "/"))
        m->route = SERVE_RT_WEB; /* web.c */
    else if (!strcmp(url, "/v1/estate.svg"))
        m->route = SERVE_RT_ESTATE_SVG;
    else if (!strncmp(url, "/v1/extender/", 13) && !strcmp(url + 13, "filter"))
        m->route = SERVE_RT_EXT_FILTER;
    else if (!strncmp(url, "/v1/extender/", 13) && !strcmp(url + 13, "prioritize"))
        m->route = SERVE_RT_EXT_PRIORITIZE;
    else if (!strncmp(url, "/v1/extender/", 13) && !strcmp(url + 13, "bind"))
        m->route = SERVE_RT_EXT_BIND;
    else if (!strcmp(url, "/v1/kube/nodes"))
        m->route = SERVE_RT_KUBE_NODES;
    else if (!strncmp(url, "/v1/clusters/", 13)) {
        const char *name = url + 13;
        const char *slash = strchr(name, '/');
        m->cluster_s = name;
        m->cluster_n = slash ? (size_t)(slash - name) : strlen(name);
        if (!slash) {
            if (segment(name, strlen(name), m->cluster, sizeof m->cluster))
                m->route = SERVE_RT_CLUSTER;
        } else if (!strncmp(slash, "/pools/", 7)) {
            const char *pool = slash + 7;
            m->pool_s = pool;
            m->pool_n = strlen(pool);
            if (segment(name, (size_t)(slash - name), m->cluster, sizeof m->cluster) &&
                segment(pool, strlen(pool), m->pool, sizeof m->pool))
                m->route = SERVE_RT_POOL;
        }
    }
}

/* Allowed methods per route ("" = none: unknown path). */
static const char *allowed(int route)
{
    switch (route) {
    case SERVE_RT_ESTATE: return "GET, PUT";
    case SERVE_RT_CLUSTERS: return "GET, POST";
    case SERVE_RT_CLUSTER: return "GET, DELETE";
    case SERVE_RT_POOL: return "PATCH";
    case SERVE_RT_KUBE:
    case SERVE_RT_FLEET:
    case SERVE_RT_DISRUPT:
    case SERVE_RT_AUTOSCALE:
    case SERVE_RT_EXT_FILTER:
    case SERVE_RT_EXT_PRIORITIZE:
    case SERVE_RT_EXT_BIND: return "POST";
    case SERVE_RT_KUBE_NODES: return "PUT";
    case SERVE_RT_HEALTHZ:
    case SERVE_RT_READYZ:
    case SERVE_RT_METRICS:
    case SERVE_RT_WEB:
    case SERVE_RT_ESTATE_SVG: return "GET";
    default: return "";
    }
}

static int method_allowed(int route, const char *method)
{
    const char *a = allowed(route);
    size_t n = strlen(method);
    for (const char *p = a; (p = strstr(p, method)); p += n)
        if ((p == a || p[-1] == ' ') && (p[n] == ',' || p[n] == 0))
            return 1;
    return 0;
}

/* ---- replies ---- */

static enum MHD_Result send_reply(berth_server *s, struct MHD_Connection *c, req *r,
                                  const char *method, serve_reply *rep, const char *ctype)
{
    int status = rep->status ? rep->status : 500;
    /* JSON bodies end with a newline for people using curl. The body (malloc'd) is handed
     * to libmicrohttpd as it is, grown by the newline in place where the allocator can:
     * a 165 KB extender reply is not copied once more. */
    int json = !ctype;
    size_t len = rep->body ? strlen(rep->body) : 0;
    char *copy = realloc(rep->body, len + 2);
    if (!copy)
        return MHD_NO; /* rep->body is still the caller's to free */
    rep->body = NULL;
    if (json && status != 204)
        copy[len++] = '\n';
    copy[len] = 0;
    if (status == 204)
        len = 0;
    struct MHD_Response *resp = MHD_create_response_from_buffer(len, copy, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(copy);
        return MHD_NO;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                            ctype ? ctype : "application/json");
    if (status == 405)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, allowed(r->route));
    if (status == 401)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"berth\"");
    if (r->retry_after)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "1");
    if (rep->revision > 0) { /* etcd: the log revision applied (never in the body) */
        char rev[32];
        snprintf(rev, sizeof rev, "%lld", (long long)rep->revision);
        MHD_add_response_header(resp, "X-Berth-Revision", rev);
    }
    enum MHD_Result ok = MHD_queue_response(c, (unsigned)status, resp);
    MHD_destroy_response(resp);
    conn_phase(s, c, CONN_WRITE);
    serve_metrics_observe(s->metrics, r->route, method, status, now_s() - r->t0);
    return ok;
}

static void set_error(serve_reply *rep, int status, const char *code, const char *msg)
{
    serve_reply_error(rep, status, code, msg);
}

/* Auth for a request: 0 ok, else the reply is set (401 / 403). */
static int check_auth(berth_server *s, struct MHD_Connection *c, req *r)
{
    /* the page holds no data: its script sends the token (docs/api.md) */
    if (!s->auth || r->route == SERVE_RT_HEALTHZ || r->route == SERVE_RT_READYZ ||
        r->route == SERVE_RT_WEB)
        return 0;
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    const char *tok = NULL;
    if (h && !strncasecmp(h, "Bearer ", 7)) {
        tok = h + 7;
        while (*tok == ' ')
            tok++;
    }
    int rw = tok && serve_tokens_match(&s->rw, tok);
    int ro = tok && !rw && serve_tokens_match(&s->ro, tok);
    if (!rw && !ro) {
        set_error(&r->early, 401, "unauthorized",
                  tok ? "the bearer token is not valid" : "a bearer token is required "
                                                          "(Authorization: Bearer TOKEN)");
        return -1;
    }
    /* the stateless planning endpoints (POST /v1/kube/schedule, fleet place,
     * disrupt plan, autoscale plan) change nothing: read-only tokens may
     * call them */
    int stateless = r->route == SERVE_RT_KUBE || r->route == SERVE_RT_FLEET ||
                    r->route == SERVE_RT_DISRUPT || r->route == SERVE_RT_AUTOSCALE;
    if (ro && r->is_write && r->route != SERVE_RT_OTHER && !stateless) {
        set_error(&r->early, 403, "forbidden", "this token is read-only");
        return -1;
    }
    return 0;
}

/* Nesting depth of JSON text outside strings. */
static int json_depth(const char *p, size_t n)
{
    int depth = 0, max = 0, in_str = 0;
    for (size_t i = 0; i < n; i++) {
        char ch = p[i];
        if (in_str) {
            if (ch == '\\')
                i++;
            else if (ch == '"')
                in_str = 0;
        } else if (ch == '"') {
            in_str = 1;
        } else if (ch == '{' || ch == '[') {
            if (++depth > max)
                max = depth;
        } else if (ch == '}' || ch == ']') {
            depth--;
        }
    }
    return max;
}

/* The server's own series appended to the metrics text t (malloc'd). */
static char *server_metrics(berth_server *s, const char *t)
{
    unsigned pr, pq, wr, wq;
    serve_pool_load(s->planners, &pr, &pq);
    serve_pool_load(s->workers, &wr, &wq);
    pthread_mutex_lock(&s->conn_mu);
    unsigned long long cuts = s->deadline_cuts, refused = s->refused, stopped = s->stopped,
                       open = 0;
    for (conn *k = s->conns; k; k = k->next)
        open++;
    pthread_mutex_unlock(&s->conn_mu);
    size_t n = strlen(t), cap = n + 2048;
    char *x = malloc(cap);
    if (!x)
        return NULL;
    memcpy(x, t, n);
    snprintf(x + n, cap - n,
             "# HELP berth_http_open_connections Open connections.\n"
             "# TYPE berth_http_open_connections gauge\n"
             "berth_http_open_connections %llu\n"
             "# HELP berth_http_deadline_closed_total Connections closed by --request-timeout.\n"
             "# TYPE berth_http_deadline_closed_total counter\n"
             "berth_http_deadline_closed_total %llu\n"
             "# HELP berth_http_busy_total Requests refused with 503 because their pool was "
             "full.\n"
             "# TYPE berth_http_busy_total counter\n"
             "berth_http_busy_total %llu\n"
             "# HELP berth_http_stopped_total Planner requests stopped by "
             "--max-request-seconds (422 over_budget).\n"
             "# TYPE berth_http_stopped_total counter\n"
             "berth_http_stopped_total %llu\n"
             "# HELP berth_pool_requests Requests in a pool.\n"
             "# TYPE berth_pool_requests gauge\n"
             "berth_pool_requests{pool=\"planner\",state=\"running\"} %u\n"
             "berth_pool_requests{pool=\"planner\",state=\"queued\"} %u\n"
             "berth_pool_requests{pool=\"worker\",state=\"running\"} %u\n"
             "berth_pool_requests{pool=\"worker\",state=\"queued\"} %u\n",
             open, cuts, refused, stopped, pr, pq, wr, wq);
    return x;
}

/* Cluster and pool names in the path (validate.c): 0, or -1 with a 400. */
static int check_names(const route_match *m, serve_reply *rep)
{
    if (m->route != SERVE_RT_CLUSTER && m->route != SERVE_RT_POOL)
        return 0;
    if (serve_name_check("path", "cluster", m->cluster_s, m->cluster_n, rep))
        return -1;
    if (m->route == SERVE_RT_POOL && serve_name_check("path", "pool", m->pool_s, m->pool_n, rep))
        return -1;
    return 0;
}

/* Everything decided before the body is read, in order: authentication
 * (also for unknown paths), the path's escapes, the route, the method,
 * the names in the path, and the size Content-Length announces (413 at
 * once: no 100 Continue). Sets r->early when the request ends here. */
static void early_checks(berth_server *s, struct MHD_Connection *c, const char *url,
                         const char *method, const route_match *m, req *r)
{
    if (check_auth(s, c, r) || serve_path_check(url, &r->early))
        return;
    if (m->route == SERVE_RT_OTHER) {
        set_error(&r->early, 404, "not_found", "no such endpoint (see docs/api.md)");
        return;
    }
    if (!method_allowed(m->route, method)) {
        char msg[128];
        snprintf(msg, sizeof msg, "method %.16s not allowed here (allowed: %s)", method,
                 allowed(m->route));
        set_error(&r->early, 405, "method_not_allowed", msg);
        return;
    }
    if (check_names(m, &r->early))
        return;
    serve_length_check(MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                   MHD_HTTP_HEADER_CONTENT_LENGTH),
                       s->opt.max_body, &r->early);
}

static void do_scale(berth_server *s, route_match *m, req *r, serve_reply *rep)
{
    if (json_depth(r->body ? r->body : "", r->len) > BERTH_DOC_MAX_DEPTH) {
        set_error(rep, 400, "bad_input", "body: JSON nested too deeply");
        return;
    }
    json_error_t je;
    json_t *j = json_loadb(r->body ? r->body : "", r->len, JSON_REJECT_DUPLICATES, &je);
    if (!j) {
        char msg[400];
        snprintf(msg, sizeof msg, "body:%d:%d: %s", je.line, je.column, je.text);
        set_error(rep, 400, "bad_input", msg);
        return;
    }
    json_t *cnt = json_object_get(j, "count");
    if (!json_is_object(j) || !json_is_integer(cnt) || json_object_size(j) != 1) {
        set_error(rep, 400, "bad_input", "body: expected {\"count\": N} with an integer N");
        json_decref(j);
        return;
    }
    json_int_t n = json_integer_value(cnt);
    json_decref(j);
    if (n < 0 || n > 100000) {
        set_error(rep, 422, "invalid", "count: must be between 0 and 100000");
        return;
    }
    serve_engine_scale(s->engine, m->cluster, m->pool, (int64_t)n, rep);
}

/* Runs the request; on a pool thread for every route but the probes and
 * the page, so it must not touch the connection (query arguments were
 * copied into r->arg by the handler). */
static void dispatch(berth_server *s, const char *method, route_match *m, req *r,
                     serve_reply *rep, const char **ctype)
{
    const char *body = r->body ? r->body : "";
    int get = !strcmp(method, "GET");
    switch (m->route) {
    case SERVE_RT_HEALTHZ:
        serve_reply_json(rep, 200, json_pack("{s:s}", "status", "ok"));
        return;
    case SERVE_RT_READYZ:
        if (serve_engine_ready(s->engine))
            serve_reply_json(rep, 200, json_pack("{s:s}", "status", "ready"));
        else
            set_error(rep, 503, "unavailable", "the store failed; see the server's log");
        return;
    case SERVE_RT_METRICS: {
        char *t = serve_metrics_render(s->metrics, s->engine);
        char *x = t ? server_metrics(s, t) : NULL;
        free(t);
        if (!x) {
            set_error(rep, 500, "internal", "out of memory");
            return;
        }
        rep->status = 200;
        rep->body = x;
        *ctype = "text/plain; version=0.0.4; charset=utf-8";
        return;
    }
    case SERVE_RT_WEB:
        serve_web_page(rep);
        *ctype = "text/html; charset=utf-8";
        return;
    case SERVE_RT_ESTATE_SVG:
        serve_web_svg(s->engine, rep);
        if (rep->status == 200)
            *ctype = "image/svg+xml";
        return;
    case SERVE_RT_ESTATE:
        if (get)
            serve_engine_get_estate(s->engine, rep);
        else
            serve_engine_put_estate(s->engine, body, r->len, rep);
        return;
    case SERVE_RT_CLUSTERS:
        if (get)
            serve_engine_list_clusters(s->engine, rep);
        else
            serve_engine_create(s->engine, body, r->len, rep);
        return;
    case SERVE_RT_CLUSTER:
        if (get)
            serve_engine_get_cluster(s->engine, m->cluster, rep);
        else
            serve_engine_delete(s->engine, m->cluster, rep);
        return;
    case SERVE_RT_POOL:
        do_scale(s, m, r, rep);
        return;
    case SERVE_RT_KUBE:
        serve_kube_schedule(body, r->len, r->arg[0], r->arg[1], r->arg[2], &s->budget, rep);
        return;
    case SERVE_RT_FLEET:
        serve_fleet_place(body, r->len, r->arg[0], r->arg[1], &s->budget, rep);
        return;
    case SERVE_RT_DISRUPT:
        serve_disrupt_plan(body, r->len, r->arg[0], &s->budget, rep);
        return;
    case SERVE_RT_AUTOSCALE:
        serve_autoscale_plan(body, r->len, r->arg[0], &s->budget, rep);
        return;
    case SERVE_RT_EXT_FILTER:
    case SERVE_RT_EXT_PRIORITIZE: {
        const char *prof = r->arg[0];
        if (m->route == SERVE_RT_EXT_FILTER)
            serve_extender_filter(s->ext, body, r->len, prof, rep);
        else
            serve_extender_prioritize(s->ext, body, r->len, prof, rep);
        return;
    }
    case SERVE_RT_EXT_BIND:
        serve_extender_bind(s->ext, body, r->len, rep);
        return;
    case SERVE_RT_KUBE_NODES:
        serve_extender_put_nodes(s->ext, body, r->len, rep);
        return;
    default:
        set_error(rep, 404, "not_found", "no such endpoint (see docs/api.md)");
    }
}

/* Routes answered on the event loop: cheap and never waiting on a lock a
 * writer may hold for an fsync. */
static int inline_route(int route)
{
    return route == SERVE_RT_HEALTHZ || route == SERVE_RT_READYZ || route == SERVE_RT_WEB;
}

static int planner_route(int route)
{
    return route == SERVE_RT_KUBE || route == SERVE_RT_FLEET || route == SERVE_RT_DISRUPT ||
           route == SERVE_RT_AUTOSCALE;
}

/* A pool job: runs the request, then hands the connection back to its
 * event loop, which calls the handler again to queue the reply. */
static void run_job(serve_job *j)
{
    req *r = (req *)j;
    dispatch(r->s, r->method, &r->m, r, &r->reply, &r->ctype);
    if (r->reply.stopped) {
        pthread_mutex_lock(&r->s->conn_mu);
        r->s->stopped++;
        pthread_mutex_unlock(&r->s->conn_mu);
    }
    __atomic_store_n(&r->state, REQ_DONE, __ATOMIC_RELEASE);
    MHD_resume_connection(r->c);
}

/* Hands a complete request to its pool with the connection suspended; a
 * full pool is a 503 with Retry-After. */
static void submit(berth_server *s, struct MHD_Connection *c, req *r)
{
    const char *key = NULL, *key2 = NULL, *key3 = NULL;
    switch (r->route) {
    case SERVE_RT_KUBE: key = "profile"; key2 = "preempt"; key3 = "detail"; break;
    case SERVE_RT_FLEET: key = "now"; key2 = "detail"; break;
    case SERVE_RT_DISRUPT:
    case SERVE_RT_AUTOSCALE: key = "at"; break;
    case SERVE_RT_EXT_FILTER:
    case SERVE_RT_EXT_PRIORITIZE: key = "profile"; break;
    default: break;
    }
    r->arg[0] = key ? MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, key) : NULL;
    r->arg[1] = key2 ? MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, key2) : NULL;
    r->arg[2] = key3 ? MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, key3) : NULL;
    int planner = planner_route(r->route);
    r->job.fn = run_job;
    r->state = REQ_RUNNING;
    conn_phase(s, c, CONN_WORK);
    MHD_suspend_connection(c);
    if (serve_pool_submit(planner ? s->planners : s->workers, &r->job) == 0)
        return;
    pthread_mutex_lock(&s->conn_mu);
    s->refused++;
    pthread_mutex_unlock(&s->conn_mu);
    set_error(&r->reply, 503, "busy",
              planner ? "every planner thread is busy and the planner queue is full: retry "
                        "after 1 s (raise berth serve --planner-threads or --planner-queue)"
                      : "every worker thread is busy and the queue is full: retry after 1 s "
                        "(raise berth serve --workers)");
    r->retry_after = 1;
    r->state = REQ_DONE;
    MHD_resume_connection(c);
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls)
{
    berth_server *s = cls;
    req *r = *con_cls;
    if (!r) {
        r = calloc(1, sizeof *r);
        if (!r)
            return MHD_NO;
        *con_cls = r;
        r->s = s;
        r->c = c;
        r->method = method;
        r->t0 = now_s();
        match_route(url, &r->m);
        r->route = r->m.route;
        r->is_write = strcmp(method, "GET") && strcmp(method, "HEAD");
        early_checks(s, c, url, method, &r->m, r);
        if (r->early.status)
            return send_reply(s, c, r, method, &r->early, NULL);
        return MHD_YES;
    }
    if (*upload_size) {
        if (!r->too_big) {
            if (r->len + *upload_size > s->opt.max_body) {
                r->too_big = 1;
                free(r->body);
                r->body = NULL;
                r->len = r->cap = 0;
            } else {
                if (berth_grow_bytes((void **)&r->body, &r->cap, r->len + *upload_size + 1,
                                     4096))
                    return MHD_NO;
                memcpy(r->body + r->len, upload, *upload_size);
                r->len += *upload_size;
                r->body[r->len] = 0;
            }
        }
        *upload_size = 0;
        return MHD_YES;
    }
    int state = __atomic_load_n(&r->state, __ATOMIC_ACQUIRE);
    if (state == REQ_RUNNING)
        return MHD_YES; /* not resumed yet */
    if (state == REQ_DONE) {
        enum MHD_Result ok = send_reply(s, c, r, method, &r->reply, r->ctype);
        free(r->reply.body);
        r->reply.body = NULL;
        return ok;
    }
    serve_reply rep = {0};
    const char *ctype = NULL;
    if (r->too_big) {
        char msg[160];
        snprintf(msg, sizeof msg,
                 "the body exceeds the limit of %zu bytes (raise it with berth serve --max-body)",
                 s->opt.max_body);
        set_error(&rep, 413, "payload_too_large", msg);
    } else if (inline_route(r->route)) {
        dispatch(s, method, &r->m, r, &rep, &ctype);
    } else {
        submit(s, c, r);
        return MHD_YES;
    }
    enum MHD_Result ok = send_reply(s, c, r, method, &rep, ctype);
    free(rep.body);
    return ok;
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    berth_server *s = cls;
    req *r = *con_cls;
    if (r) {
        free(r->body);
        free(r->early.body);
        free(r->reply.body);
        free(r);
        *con_cls = NULL;
    }
    conn_phase(s, c, CONN_READ); /* the next request's clock starts now */
}

/* "ADDR:PORT" or "[V6]:PORT" into a socket address (loopback or any). */
static int parse_listen(const char *l, struct sockaddr_storage *ss, int *v6, unsigned *port)
{
    char host[128];
    const char *colon;
    memset(ss, 0, sizeof *ss);
    if (l[0] == '[') {
        const char *end = strchr(l, ']');
        if (!end || end[1] != ':' || (size_t)(end - l - 1) >= sizeof host)
            return -1;
        memcpy(host, l + 1, (size_t)(end - l - 1));
        host[end - l - 1] = 0;
        colon = end + 1;
        *v6 = 1;
    } else {
        colon = strrchr(l, ':');
        if (!colon || (size_t)(colon - l) >= sizeof host)
            return -1;
        memcpy(host, l, (size_t)(colon - l));
        host[colon - l] = 0;
        *v6 = 0;
    }
    char *end;
    unsigned long p = strtoul(colon + 1, &end, 10);
    if (!colon[1] || *end || p > 65535)
        return -1;
    *port = (unsigned)p;
    if (*v6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons((uint16_t)p);
        return inet_pton(AF_INET6, host, &a->sin6_addr) == 1 ? 0 : -1;
    }
    struct sockaddr_in *a = (struct sockaddr_in *)ss;
    a->sin_family = AF_INET;
    a->sin_port = htons((uint16_t)p);
    if (!*host)
        strcpy(host, "0.0.0.0");
    return inet_pton(AF_INET, host, &a->sin_addr) == 1 ? 0 : -1;
}

int berth_serve_start(const berth_serve_options *o, berth_server **out, berth_error *e)
{
    *out = NULL;
    berth_server *s = calloc(1, sizeof *s);
    if (!s)
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    s->opt = *o;
    pthread_mutex_init(&s->conn_mu, NULL);
    pthread_cond_init(&s->conn_cv, NULL);
    s->budget.max_objects = o->max_objects;
    s->budget.max_pairs = o->max_pairs;
    s->budget.max_seconds = o->max_request_seconds;
    struct sockaddr_storage ss;
    int v6 = 0, rc = 0;
    if (parse_listen(o->listen, &ss, &v6, &s->port))
        rc = berth_error_set(e, BERTH_EINVAL,
                             "--listen: expected ADDR:PORT such as 127.0.0.1:8080 or [::1]:8080, "
                             "got '%s'",
                             o->listen);
    if (!rc && o->token_file)
        rc = serve_tokens_load(&s->rw, o->token_file, e);
    if (!rc && o->read_only_token_file)
        rc = serve_tokens_load(&s->ro, o->read_only_token_file, e);
    s->auth = o->token_file || o->read_only_token_file;
    if (!rc && !(s->metrics = serve_metrics_new()))
        rc = berth_error_set(e, BERTH_ENOMEM, "out of memory");
    if (!rc)
        rc = serve_tls_load(o->tls_cert, o->tls_key, &s->tls, e);
    if (!rc && o->etcd && !o->estate)
        rc = berth_error_set(e, BERTH_EINVAL, "--etcd needs --estate NAME");
    if (!rc) {
        serve_engine_config ec = {.db = o->db, .etcd = o->etcd, .estate = o->estate,
                                  .max_batch = o->max_batch,
                                  .checkpoint_every = o->checkpoint_every,
                                  .etcd_tls = {.cacert = o->etcd_cacert,
                                               .cert = o->etcd_cert,
                                               .key = o->etcd_key}};
        rc = serve_engine_open_config(&ec, &s->engine, e);
    }
    if (!rc)
        rc = serve_extender_open(o->db, &s->ext, e);
    if (!rc) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        unsigned pt = o->planner_threads ? o->planner_threads : cpus > 2 ? (unsigned)cpus : 2;
        unsigned pq = o->planner_queue ? o->planner_queue : pt;
        s->planners = serve_pool_new(pt, pq);
        s->workers = serve_pool_new(o->workers ? o->workers : 64, 4096);
        if (!s->planners || !s->workers)
            rc = berth_error_set(e, BERTH_ENOMEM, "cannot start the worker threads");
    }
    if (!rc && o->request_timeout) {
        if (pthread_create(&s->deadline_thread, NULL, deadline_main, s))
            rc = berth_error_set(e, BERTH_ENOMEM, "cannot start the deadline thread");
        else
            s->have_deadline_thread = 1;
    }
    if (!rc) {
        /* room for the connections: the soft file limit up to the hard one */
        struct rlimit rl;
        if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
            rl.rlim_cur = rl.rlim_max;
            setrlimit(RLIMIT_NOFILE, &rl);
        }
        if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY &&
            rl.rlim_cur < (rlim_t)o->max_connections + 64 && !o->quiet)
            fprintf(stderr,
                    "berth serve: warning: the file descriptor limit (%llu) is below "
                    "--max-connections %u + 64; raise it (ulimit -n) to accept that many\n",
                    (unsigned long long)rl.rlim_cur, o->max_connections);
        unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
                         MHD_ALLOW_SUSPEND_RESUME | (v6 ? MHD_USE_IPv6 : 0) |
                         (s->tls.cert ? MHD_USE_TLS : 0);
        struct MHD_OptionItem tls_ops[] = {
            {s->tls.cert ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, s->tls.cert},
            {MHD_OPTION_HTTPS_MEM_KEY, 0, s->tls.key},
            {MHD_OPTION_END, 0, NULL}};
        s->d = MHD_start_daemon(
            flags, (uint16_t)s->port, NULL, NULL, handler, s, MHD_OPTION_SOCK_ADDR, &ss,
            MHD_OPTION_THREAD_POOL_SIZE, o->threads ? o->threads : 4,
            MHD_OPTION_CONNECTION_LIMIT, o->max_connections, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
            o->per_ip_connections, MHD_OPTION_CONNECTION_TIMEOUT, o->timeout_seconds,
            MHD_OPTION_CONNECTION_MEMORY_LIMIT, o->max_header, MHD_OPTION_NOTIFY_COMPLETED,
            completed, s, MHD_OPTION_NOTIFY_CONNECTION, notify_conn, s,
            MHD_OPTION_UNESCAPE_CALLBACK, serve_unescape, NULL, MHD_OPTION_ARRAY, tls_ops,
            MHD_OPTION_END);
        if (!s->d)
            rc = berth_error_set(e, BERTH_EIO, "cannot listen on %s (in use or not permitted%s)",
                                 o->listen, s->tls.cert ? ", or the TLS certificate and key are "
                                                          "not valid or do not match" : "");
    }
    if (rc) {
        berth_serve_stop(s);
        return rc;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    if (di)
        s->port = di->port;
    *out = s;
    return 0;
}

unsigned berth_serve_port(const berth_server *s)
{
    return s->port;
}

void berth_serve_stop(berth_server *s)
{
    if (!s)
        return;
    /* stop accepting, let the pools finish (they resume their connections),
     * then stop the event loops */
    MHD_socket lsock = s->d ? MHD_quiesce_daemon(s->d) : MHD_INVALID_SOCKET;
    if (s->planners)
        serve_pool_stop(s->planners);
    if (s->workers)
        serve_pool_stop(s->workers);
    if (s->d)
        MHD_stop_daemon(s->d);
    if (lsock != MHD_INVALID_SOCKET)
        close(lsock);
    if (s->have_deadline_thread) {
        pthread_mutex_lock(&s->conn_mu);
        s->conn_stop = 1;
        pthread_cond_signal(&s->conn_cv);
        pthread_mutex_unlock(&s->conn_mu);
        pthread_join(s->deadline_thread, NULL);
    }
    serve_pool_free(s->planners);
    serve_pool_free(s->workers);
    pthread_mutex_destroy(&s->conn_mu);
    pthread_cond_destroy(&s->conn_cv);
    serve_extender_close(s->ext);
    serve_engine_close(s->engine);
    serve_tls_free(&s->tls);
    serve_metrics_free(s->metrics);
    serve_tokens_free(&s->rw);
    serve_tokens_free(&s->ro);
    free(s);
}
