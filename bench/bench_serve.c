/* bench/bench_serve.c - load generator for `berth serve`: an in-process
 * server on 127.0.0.1 with persistence on (SQLite in a temporary
 * directory), a 100,000-machine estate (1000 racks x 100 machines), and N
 * client threads on plain keep-alive HTTP/1.1 sockets creating small
 * clusters for a bounded time, for N = 1, 16, 64 and 256 (the estate is
 * loaded again before each run; clients connect from 127.0.2.x, 32 per
 * address, under the per-IP limit). Prints placements per second and
 * p50/p99 latency of acknowledged (201) creations per N. Then N = 64 again
 * with 2,000 slow connections open (40 loopback addresses, one header byte
 * a second each, reopened when the server's deadline cuts them):
 * serve.p99_ms.64_with_slow_clients. Then pod scheduling through the
 * kube-scheduler extender at 5,000 nodes: the nodes loaded once with PUT
 * /v1/kube/nodes, EXT_CLIENTS clients each sending filter + prioritize
 * (nodeCacheCapable: nodenames) for one pod per cycle, as kube-scheduler
 * does (the pods are replicas: one spec, their own names); prints extender
 * requests per second and p50/p99 per request (also as
 * serve.extender_requests_per_sec.5k / serve.extender_p99_ms.5k), then the
 * same with a spec of its own per pod (serve.extender_requests_per_sec.5k.distinct,
 * serve.extender_p99_ms.5k.distinct: every pod a new class). Then the
 * same in process, without HTTP, warm against cold in one run, and warm
 * with a spec of its own per pod (serve.extender_pod_us.5k, .5k.cold,
 * .5k.distinct, serve.extender_warm_speedup.5k).
 * `bench_serve extender` runs the extender part only. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "berth/serve.h"
#include "serve/serve.h"

#include "serve_client.h"

#define MAX_CLIENTS 256
#define SECONDS 3.0
#define SLOW_CONNS 2000
#define SLOW_ADDRS 40
#define EXT_NODES 5000
#define EXT_CLIENTS 2 /* kube-scheduler calls its extenders from one scheduling loop */
#define EXT_SECONDS 5.0

static unsigned port;
static volatile int stop_flag, slow_stop;

typedef struct client {
    int id, run;
    double *lat;
    size_t nlat, cap;
    uint64_t errors;
} client;

/* A connection to the server from 127.0.0.1 (src 0) or from loopback
 * address src (127.0.x.y). */
static int connect_from(uint32_t src)
{
    return connect_loopback(port, src);
}

static int connect_lo(void)
{
    return connect_from(0);
}

/* Placement clients: 32 per source address 127.0.2.x. */
static int connect_client(int id)
{
    return connect_from(0x7f000200u + 1u + (uint32_t)(id / 32));
}

/* Keeps SLOW_CONNS connections sending one header byte a second until
 * slow_stop; reopens those the server closes. */
static void *slow_main(void *arg)
{
    int *opened = arg;
    struct pollfd *pf = calloc(SLOW_CONNS, sizeof *pf);
    static const char head[] = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
    if (!pf)
        return NULL;
    double next = 0;
    while (!slow_stop) {
        for (int i = 0; i < SLOW_CONNS; i++)
            if (pf[i].fd <= 0) {
                int fd = connect_from(0x7f000300u + 1u + (uint32_t)(i % SLOW_ADDRS));
                if (fd >= 0 && send(fd, head, sizeof head - 1, MSG_NOSIGNAL) > 0) {
                    pf[i].fd = fd;
                    pf[i].events = POLLIN;
                    __atomic_add_fetch(opened, 1, __ATOMIC_RELAXED);
                } else if (fd >= 0) {
                    close(fd);
                }
            }
        poll(pf, SLOW_CONNS, 100);
        for (int i = 0; i < SLOW_CONNS; i++)
            if (pf[i].fd > 0 && (pf[i].revents & (POLLIN | POLLHUP | POLLERR))) {
                close(pf[i].fd);
                pf[i].fd = 0;
            }
        if (now_s() >= next) {
            for (int i = 0; i < SLOW_CONNS; i++)
                if (pf[i].fd > 0)
                    (void)!send(pf[i].fd, "a", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
            next = now_s() + 1.0;
        }
    }
    for (int i = 0; i < SLOW_CONNS; i++)
        if (pf[i].fd > 0)
            close(pf[i].fd);
    free(pf);
    return NULL;
}

static void *client_main(void *arg)
{
    client *c = arg;
    int fd = connect_client(c->id);
    char *buf = malloc(1 << 20);
    char body[512];
    for (int i = 0; fd >= 0 && buf && !stop_flag; i++) {
        int n = cluster_body(body, sizeof body, 'c', c->run, c->id, i);
        double t0 = now_s();
        int st = http(fd, "POST", "/v1/clusters", body, (size_t)n, buf, 1 << 20);
        double dt = now_s() - t0;
        if (st != 201) {
            c->errors++;
            if (st < 0) {
                close(fd);
                fd = connect_client(c->id);
            }
            continue;
        }
        if (c->nlat == c->cap) {
            c->cap = c->cap ? c->cap * 2 : 4096;
            c->lat = realloc(c->lat, c->cap * sizeof *c->lat);
        }
        c->lat[c->nlat++] = dt;
    }
    if (fd >= 0)
        close(fd);
    free(buf);
    return NULL;
}

static const char *ext_body; /* ExtenderArgs with every node name; "%d" marks the pod */
static char *ext_dist;       /* the same with the cpu request as a third %d (millicores) */
static char *ext_nodes;      /* the NodeList */
static size_t ext_nodes_len;
static int ext_distinct;     /* the clients send pods of a spec of their own (ext_dist) */

static void *ext_client_main(void *arg)
{
    client *c = arg;
    int fd = connect_lo();
    char *buf = malloc(1 << 20);
    size_t cap = strlen(ext_body) + 64;
    char *body = malloc(cap);
    for (int i = 0; fd >= 0 && buf && body && !stop_flag; i++) {
        /* distinct: 100m..10099m, no two pods of one run alike before
         * 10,000 pods (a class's result is kept for 8 classes) */
        int n = ext_distinct ? snprintf(body, cap, ext_dist, c->id, i,
                                        100 + (EXT_CLIENTS * i + c->id) % 10000)
                             : snprintf(body, cap, ext_body, c->id, i);
        for (int verb = 0; verb < 2; verb++) {
            double t0 = now_s();
            int st = http(fd, "POST", verb ? "/v1/extender/prioritize" : "/v1/extender/filter",
                          body, (size_t)n, buf, 1 << 20);
            double dt = now_s() - t0;
            if (st != 200) {
                c->errors++;
                if (st < 0) {
                    close(fd);
                    fd = connect_lo();
                }
                continue;
            }
            if (c->nlat == c->cap) {
                c->cap = c->cap ? c->cap * 2 : 4096;
                c->lat = realloc(c->lat, c->cap * sizeof *c->lat);
            }
            c->lat[c->nlat++] = dt;
        }
    }
    if (fd >= 0)
        close(fd);
    free(buf);
    free(body);
    return NULL;
}

/* Builds the 5,000-node NodeList and the ExtenderArgs template; loads the
 * nodes. 0 on success. */
static int ext_setup(void)
{
    size_t cap = (size_t)EXT_NODES * 256 + 1024, len = 0;
    char *nodes = malloc(cap), *args = malloc(cap);
    if (!nodes || !args) {
        free(nodes);
        free(args);
        return -1;
    }
    len += (size_t)snprintf(nodes + len, cap - len, "{\"apiVersion\": \"v1\", \"kind\": "
                                                    "\"NodeList\", \"items\": [");
    size_t alen = (size_t)snprintf(
        args, cap,
        "{\"pod\": {\"metadata\": {\"name\": \"p%%d-%%d\", \"namespace\": \"bench\"}, "
        "\"spec\": {\"containers\": [{\"name\": \"c\", \"resources\": {\"requests\": "
        "{\"cpu\": \"500m\", \"memory\": \"1Gi\"}}}]}}, \"nodenames\": [");
    for (int i = 0; i < EXT_NODES; i++) {
        /* 50 zones, sizes varying so that scores differ */
        len += (size_t)snprintf(
            nodes + len, cap - len,
            "%s{\"metadata\": {\"name\": \"node-%05d\", \"labels\": {\"topology.kubernetes.io/"
            "zone\": \"z%d\"}}, \"status\": {\"allocatable\": {\"cpu\": \"%d\", \"memory\": "
            "\"%dGi\", \"pods\": \"110\"}}}",
            i ? ", " : "", i, i % 50, 16 + 16 * (i % 4), 64 + 64 * (i % 3));
        alen += (size_t)snprintf(args + alen, cap - alen, "%s\"node-%05d\"", i ? ", " : "", i);
    }
    len += (size_t)snprintf(nodes + len, cap - len, "]}");
    snprintf(args + alen, cap - alen, "]}");
    int fd = connect_lo();
    char *buf = malloc(1 << 20);
    double t0 = now_s();
    int st = fd >= 0 && buf ? http(fd, "PUT", "/v1/kube/nodes", nodes, len, buf, 1 << 20) : -1;
    printf("BENCH serve.kube_nodes_load_ms %.1f ms\n", (now_s() - t0) * 1000);
    if (fd >= 0)
        close(fd);
    free(buf);
    ext_nodes = nodes;
    ext_nodes_len = len;
    if (st != 200) {
        fprintf(stderr, "bench_serve: PUT /v1/kube/nodes: %d\n", st);
        free(args);
        return -1;
    }
    ext_body = args;
    const char *at = strstr(ext_body, "\"500m\"");
    size_t dcap = strlen(ext_body) + 16;
    if (!at || !(ext_dist = malloc(dcap)))
        return -1;
    snprintf(ext_dist, dcap, "%.*s\"%%dm\"%s", (int)(at - ext_body), ext_body, at + 6);
    return 0;
}


static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* EXT_CLIENTS clients for EXT_SECONDS, filter + prioritize per pod
 * (distinct: a spec of its own per pod); prints requests per second and
 * p50/p99 per request under names ending in suffix ("" or ".distinct"). */
static void ext_http(int distinct, const char *suffix)
{
    client ec[EXT_CLIENTS] = {{0}};
    pthread_t eth[EXT_CLIENTS];
    stop_flag = 0;
    ext_distinct = distinct;
    double t0 = now_s();
    for (int i = 0; i < EXT_CLIENTS; i++) {
        ec[i].id = i;
        pthread_create(&eth[i], NULL, ext_client_main, &ec[i]);
    }
    while (now_s() - t0 < EXT_SECONDS)
        usleep(50000);
    stop_flag = 1;
    for (int i = 0; i < EXT_CLIENTS; i++)
        pthread_join(eth[i], NULL);
    double el = now_s() - t0;
    size_t n = 0, k = 0;
    uint64_t errors = 0;
    for (int i = 0; i < EXT_CLIENTS; i++) {
        n += ec[i].nlat;
        errors += ec[i].errors;
    }
    double *all = malloc((n ? n : 1) * sizeof *all);
    for (int i = 0; all && i < EXT_CLIENTS; i++) {
        memcpy(all + k, ec[i].lat, ec[i].nlat * sizeof *all);
        k += ec[i].nlat;
    }
    for (int i = 0; i < EXT_CLIENTS; i++)
        free(ec[i].lat);
    if (!all)
        n = 0;
    qsort(all, n, sizeof *all, cmp_d);
    double p50 = n ? all[n / 2] : 0, p99 = n ? all[(size_t)((double)n * 0.99)] : 0;
    if (!*suffix) {
        printf("BENCH serve.extender_requests_per_sec %.0f requests/s\n", (double)n / el);
        printf("BENCH serve.extender_p50_ms %.2f ms\n", p50 * 1000);
        printf("BENCH serve.extender_p99_ms %.2f ms\n", p99 * 1000);
        printf("BENCH serve.extender_errors %llu requests\n", (unsigned long long)errors);
    } else {
        printf("BENCH serve.extender_p50_ms.5k%s %.2f ms\n", suffix, p50 * 1000);
        printf("BENCH serve.extender_errors.5k%s %llu requests\n", suffix,
               (unsigned long long)errors);
    }
    /* the figures under the names issue 15 gives them (5,000 nodes) */
    printf("BENCH serve.extender_requests_per_sec.5k%s %.0f requests/s\n", suffix,
           (double)n / el);
    printf("BENCH serve.extender_p99_ms.5k%s %.2f ms\n", suffix, p99 * 1000);
    free(all);
}

static const char *site = "{\"apiVersion\": \"berth.io/v1\", \"kind\": \"Site\", \"metadata\": "
                          "{\"name\": \"bench\"}, \"spec\": {\"racks\": 1000, \"machinesPerRack\": "
                          "100, \"machine\": {\"numaCells\": 2, \"cell\": {\"cpu\": 48, "
                          "\"memory\": \"224Gi\"}}}}";

/* One run: the estate loaded again, nc clients creating clusters for
 * SECONDS; prints the BENCH lines with suffix label; returns the p99 in
 * ms (-1 on failure). */
static double placements(int nc, int run, const char *label)
{
    int fd = connect_lo();
    char *buf = malloc(1 << 20);
    double t0 = now_s();
    int st = fd >= 0 && buf ? http(fd, "PUT", "/v1/estate", site, strlen(site), buf, 1 << 20) : -1;
    if (run == 0)
        printf("BENCH serve.estate_load_ms %.1f ms\n", (now_s() - t0) * 1000);
    if (fd >= 0)
        close(fd);
    free(buf);
    if (st != 200) {
        fprintf(stderr, "bench_serve: PUT /v1/estate: %d\n", st);
        return -1;
    }
    static client cl[MAX_CLIENTS];
    static pthread_t th[MAX_CLIENTS];
    memset(cl, 0, sizeof cl);
    stop_flag = 0;
    t0 = now_s();
    for (int i = 0; i < nc; i++) {
        cl[i].id = i;
        cl[i].run = run;
        pthread_create(&th[i], NULL, client_main, &cl[i]);
    }
    while (now_s() - t0 < SECONDS)
        usleep(50000);
    stop_flag = 1;
    for (int i = 0; i < nc; i++)
        pthread_join(th[i], NULL);
    double el = now_s() - t0;
    size_t n = 0;
    uint64_t errors = 0;
    for (int i = 0; i < nc; i++) {
        n += cl[i].nlat;
        errors += cl[i].errors;
    }
    double *all = malloc((n ? n : 1) * sizeof *all);
    size_t k = 0;
    for (int i = 0; i < nc; i++) {
        memcpy(all + k, cl[i].lat, cl[i].nlat * sizeof *all);
        k += cl[i].nlat;
        free(cl[i].lat);
    }
    qsort(all, n, sizeof *all, cmp_d);
    double p50 = n ? all[n / 2] : 0, p99 = n ? all[(size_t)((double)n * 0.99)] : 0;
    printf("BENCH serve.placements_per_sec.%s %.0f placements/s\n", label, (double)n / el);
    printf("BENCH serve.p50_ms.%s %.2f ms\n", label, p50 * 1000);
    printf("BENCH serve.p99_ms.%s %.2f ms\n", label, p99 * 1000);
    if (errors)
        printf("BENCH serve.errors.%s %llu requests\n", label, (unsigned long long)errors);
    free(all);
    return p99 * 1000;
}

/* The extender in process (no HTTP), the same 5,000 nodes and pods:
 * filter + prioritize per pod with warm scheduler states, the reference
 * (every cycle cold, as before the warm states), and warm states with a
 * pod spec of its own per pod (its cpu request: no two pods of one class,
 * so none is answered from a class's result), interleaved in rounds of 10
 * pods so that all see the same machine load. Prints the microseconds per
 * pod of each and the warm/cold ratio. 0 on success. */
static int ext_in_process(const char *dir)
{
    char db[300];
    snprintf(db, sizeof db, "%s/ext-inproc.db", dir);
    serve_extender *x;
    berth_error e;
    berth_error_clear(&e);
    if (serve_extender_open(db, &x, &e)) {
        fprintf(stderr, "bench_serve: %s\n", e.msg);
        return -1;
    }
    serve_reply r = {0};
    serve_extender_put_nodes(x, ext_nodes, ext_nodes_len, &r);
    free(r.body);
    size_t cap = strlen(ext_body) + 64;
    char *body = malloc(cap);
    const char *dist = ext_dist;
    double t[3] = {0, 0, 0};
    uint64_t pods[3] = {0, 0, 0}, errors = 0;
    int id = 0;
    double t0 = now_s();
    while (body && r.status == 200 && now_s() - t0 < 4.0) {
        for (int mode = 0; mode < 3; mode++) {
            serve_extender_set_warm(x, mode != 1);
            double t1 = now_s();
            for (int i = 0; i < 10; i++, id++) {
                int n = mode == 2 ? snprintf(body, cap, dist, 99, id, 100 + id)
                                  : snprintf(body, cap, ext_body, 99, id);
                serve_reply a = {0}, b = {0};
                serve_extender_filter(x, body, (size_t)n, NULL, &a);
                serve_extender_prioritize(x, body, (size_t)n, NULL, &b);
                errors += (a.status != 200) + (b.status != 200);
                free(a.body);
                free(b.body);
            }
            t[mode] += now_s() - t1;
            pods[mode] += 10;
        }
    }
    free(body);
    serve_extender_close(x);
    if (!pods[0] || !pods[1] || !pods[2] || errors) {
        fprintf(stderr, "bench_serve: in-process extender failed (%llu errors)\n",
                (unsigned long long)errors);
        return -1;
    }
    double warm = t[0] / (double)pods[0] * 1e6, cold = t[1] / (double)pods[1] * 1e6;
    printf("BENCH serve.extender_pod_us.5k %.0f us\n", warm);
    printf("BENCH serve.extender_pod_us.5k.cold %.0f us\n", cold);
    printf("BENCH serve.extender_pod_us.5k.distinct %.0f us\n", t[2] / (double)pods[2] * 1e6);
    printf("BENCH serve.extender_warm_speedup.5k %.2f x\n", cold / warm);
    return 0;
}

int main(int argc, char **argv)
{
    /* `bench_serve extender`: the extender part only */
    int only_ext = argc > 1 && !strcmp(argv[1], "extender");
    char dir[] = "/tmp/berth-bench-serve-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    char db[256];
    snprintf(db, sizeof db, "%s/db", dir);
    berth_serve_options o;
    berth_serve_default_options(&o);
    o.db = db;
    o.listen = "127.0.0.1:0";
    o.quiet = 1;
    berth_server *s;
    berth_error e;
    berth_error_clear(&e);
    if (berth_serve_start(&o, &s, &e)) {
        fprintf(stderr, "bench_serve: %s\n", e.msg);
        return 1;
    }
    port = berth_serve_port(s);
    struct rlimit rl;
    if (!getrlimit(RLIMIT_NOFILE, &rl)) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    static const int sweep[] = {1, 16, 64, 256};
    double p99_64 = 0;
    for (int r = 0; r < 5 && !only_ext; r++) {
        int nc = r < 4 ? sweep[r] : 64;
        char label[64];
        snprintf(label, sizeof label, r < 4 ? "%d" : "%d_with_slow_clients", nc);
        pthread_t slow_th;
        int slow_opened = 0;
        if (r == 4) {
            slow_stop = 0;
            pthread_create(&slow_th, NULL, slow_main, &slow_opened);
            while (__atomic_load_n(&slow_opened, __ATOMIC_RELAXED) < SLOW_CONNS)
                usleep(20000);
        }
        double p99 = placements(nc, r, label);
        if (r == 2)
            p99_64 = p99;
        if (r == 4) {
            slow_stop = 1;
            pthread_join(slow_th, NULL);
            printf("BENCH serve.slow_connections_opened %d connections\n", slow_opened);
            printf("BENCH serve.p99_ratio.64_with_slow_clients %.2f x\n",
                   p99_64 > 0 ? p99 / p99_64 : 0);
        }
        if (p99 < 0) {
            berth_serve_stop(s);
            return 1;
        }
    }
    /* pod scheduling through the extender at 5,000 nodes */
    if (ext_setup()) {
        berth_serve_stop(s);
        return 1;
    }
    ext_http(0, "");
    ext_http(1, ".distinct");
    berth_serve_stop(s);
    int inproc = ext_in_process(dir);
    free((char *)ext_body);
    free(ext_dist);
    free(ext_nodes);
    if (inproc)
        return 1;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_serve: cannot remove %s\n", dir);
    return 0;
}
