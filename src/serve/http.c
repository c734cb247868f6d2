/* serve/http.c - the HTTP layer of `berth serve` (libmicrohttpd, one
 * thread per connection): routing, bearer-token auth, request limits, JSON
 * error bodies and metrics; every endpoint calls the engine (engine.c) or
 * a stateless library run (stateless.c). docs/api.md is the reference. */
#include "berth/serve.h"
#include "serve/serve.h"
#include "berth/doc.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
};

typedef struct req {
    double t0;
    char *body;
    size_t len, cap;
    int too_big;
    serve_reply early;   /* decided before the body arrived (auth, route, size) */
    int route;
    int is_write;
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
    o->max_connections = 512;
    o->timeout_seconds = 30;
    o->max_batch = 1024;
}

/* ---- routing ---- */

typedef struct route_match {
    int route;
    char cluster[256], pool[256];
    const char *cluster_s, *pool_s; /* the raw segments, checked by check_names */
    size_t cluster_n, pool_n;
} route_match;

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
    const char *body = rep->body ? rep->body : "";
    size_t len = strlen(body);
    int status = rep->status ? rep->status : 500;
    /* JSON bodies end with a newline for people using curl */
    int json = !ctype;
    char *copy = malloc(len + 2);
    if (!copy)
        return MHD_NO;
    memcpy(copy, body, len);
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
    enum MHD_Result ok = MHD_queue_response(c, (unsigned)status, resp);
    MHD_destroy_response(resp);
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
    if (ro && r->is_write && r->route != SERVE_RT_OTHER) {
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

static void dispatch(berth_server *s, struct MHD_Connection *c, const char *method, route_match *m,
                     req *r, serve_reply *rep, const char **ctype)
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
        if (!t) {
            set_error(rep, 500, "internal", "out of memory");
            return;
        }
        rep->status = 200;
        rep->body = t;
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
        serve_kube_schedule(body, r->len,
                            MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "profile"),
                            MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "preempt"),
                            MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "detail"), rep);
        return;
    case SERVE_RT_FLEET:
        serve_fleet_place(body, r->len, MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "now"),
                          rep);
        return;
    case SERVE_RT_DISRUPT:
        serve_disrupt_plan(body, r->len,
                           MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "at"), rep);
        return;
    case SERVE_RT_AUTOSCALE:
        serve_autoscale_plan(body, r->len,
                             MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "at"), rep);
        return;
    case SERVE_RT_EXT_FILTER:
    case SERVE_RT_EXT_PRIORITIZE: {
        const char *prof = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "profile");
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

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls)
{
    berth_server *s = cls;
    req *r = *con_cls;
    route_match m;
    match_route(url, &m);
    if (!r) {
        r = calloc(1, sizeof *r);
        if (!r)
            return MHD_NO;
        *con_cls = r;
        r->t0 = now_s();
        r->route = m.route;
        r->is_write = strcmp(method, "GET") && strcmp(method, "HEAD");
        early_checks(s, c, url, method, &m, r);
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
                if (r->len + *upload_size + 1 > r->cap) {
                    size_t cap = r->cap ? r->cap : 4096;
                    while (cap < r->len + *upload_size + 1)
                        cap *= 2;
                    char *nb = realloc(r->body, cap);
                    if (!nb)
                        return MHD_NO;
                    r->body = nb;
                    r->cap = cap;
                }
                memcpy(r->body + r->len, upload, *upload_size);
                r->len += *upload_size;
                r->body[r->len] = 0;
            }
        }
        *upload_size = 0;
        return MHD_YES;
    }
    serve_reply rep = {0};
    const char *ctype = NULL;
    if (r->too_big) {
        char msg[128];
        snprintf(msg, sizeof msg, "the body exceeds the limit of %zu bytes", s->opt.max_body);
        set_error(&rep, 413, "payload_too_large", msg);
    } else {
        dispatch(s, c, method, &m, r, &rep, &ctype);
    }
    enum MHD_Result ok = send_reply(s, c, r, method, &rep, ctype);
    free(rep.body);
    return ok;
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    req *r = *con_cls;
    if (r) {
        free(r->body);
        free(r->early.body);
        free(r);
        *con_cls = NULL;
    }
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
    if (!rc)
        rc = serve_engine_open(o->db, o->max_batch, &s->engine, e);
    if (!rc)
        rc = serve_extender_open(o->db, &s->ext, e);
    if (!rc) {
        unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                         (v6 ? MHD_USE_IPv6 : 0) | (s->tls.cert ? MHD_USE_TLS : 0);
        struct MHD_OptionItem tls_ops[] = {
            {s->tls.cert ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, s->tls.cert},
            {MHD_OPTION_HTTPS_MEM_KEY, 0, s->tls.key},
            {MHD_OPTION_END, 0, NULL}};
        s->d = MHD_start_daemon(
            flags, (uint16_t)s->port, NULL, NULL, handler, s, MHD_OPTION_SOCK_ADDR, &ss,
            MHD_OPTION_CONNECTION_LIMIT, o->max_connections, MHD_OPTION_CONNECTION_TIMEOUT,
            o->timeout_seconds, MHD_OPTION_CONNECTION_MEMORY_LIMIT, o->max_header,
            MHD_OPTION_NOTIFY_COMPLETED, completed, s, MHD_OPTION_UNESCAPE_CALLBACK, serve_unescape,
            NULL, MHD_OPTION_ARRAY, tls_ops, MHD_OPTION_END);
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
    if (s->d)
        MHD_stop_daemon(s->d);
    serve_extender_close(s->ext);
    serve_engine_close(s->engine);
    serve_tls_free(&s->tls);
    serve_metrics_free(s->metrics);
    serve_tokens_free(&s->rw);
    serve_tokens_free(&s->ro);
    free(s);
}
