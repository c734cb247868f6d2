/* bench/bench_serve_replicated.c - `berth serve --etcd` replicas under
 * load: a 3-member etcd (3.4) and 3 `berth serve` processes (the CLI built
 * beside this benchmark, or $BERTH) on loopback, data under the build
 * folder, a 100,000-machine estate (1000 racks x 100), and 64 client
 * threads on keep-alive HTTP/1.1 connections spread over the replicas
 * creating small clusters (as bench/bench_serve.c does) for SECONDS:
 * serve.replicated.placements_per_sec (acknowledged creations per second)
 * and serve.replicated.p99_ms. Then replica 0 is SIGKILLed under the same
 * load; its clients move to the next replica (what a load balancer does):
 * serve.replicated.failover_ms is the longest time any client went
 * without an acknowledged write across the kill. Prints a line without
 * BENCH and exits 0 when etcd is not installed. Processes are stopped by
 * PID. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "serve_client.h"

#define CLIENTS 64
#define REPLICAS 3
#define MEMBERS 3
#define SECONDS 8.0
#define FAILOVER_SECONDS 5.0

typedef struct bench {
    unsigned rport[REPLICAS];
    pid_t rpid[REPLICAS];
    pid_t epid[MEMBERS];
    int stop;
    double kill_at;          /* monotonic time replica 0 was killed (0: not yet) */
} bench;

typedef struct client {
    bench *b;
    int id, run;
    double *lat, *acked;     /* latency and time of each acknowledged write */
    size_t nlat, cap;
    uint64_t errors, conflicts; /* not 201; of those 409 (lost the race 4 times) */
} client;

static unsigned free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    unsigned p = 0;
    if (fd >= 0 && !bind(fd, (struct sockaddr *)&a, sizeof a) &&
        !getsockname(fd, (struct sockaddr *)&a, &len))
        p = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    return p;
}

/* One request on a fresh connection: the status or -1. */
static int request(unsigned port, const char *method, const char *path, const char *body)
{
    int fd = connect_loopback(port, 0);
    if (fd < 0)
        return -1;
    char buf[8192];
    int st = http(fd, method, path, body, strlen(body), buf, sizeof buf);
    close(fd);
    return st;
}

static void *client_main(void *arg)
{
    client *c = arg;
    bench *b = c->b;
    int r = c->id % REPLICAS;
    int fd = connect_loopback(b->rport[r], 0);
    char *buf = malloc(1 << 16);
    char body[512];
    for (int i = 0; buf && !__atomic_load_n(&b->stop, __ATOMIC_SEQ_CST); i++) {
        if (fd < 0) { /* the next replica, as a load balancer would */
            r = (r + 1) % REPLICAS;
            fd = connect_loopback(b->rport[r], 0);
            if (fd < 0) {
                usleep(10000);
                continue;
            }
        }
        int n = cluster_body(body, sizeof body, 'r', c->run, c->id, i);
        double t0 = now_s();
        int st = http(fd, "POST", "/v1/clusters", body, (size_t)n, buf, 1 << 16);
        double t1 = now_s();
        if (st != 201) {
            c->errors++;
            c->conflicts += st == 409;
            if (st < 0 || st == 503) {
                close(fd);
                fd = -1;
            }
            continue;
        }
        if (c->nlat == c->cap) {
            c->cap = c->cap ? c->cap * 2 : 4096;
            double *l = realloc(c->lat, c->cap * sizeof *l);
            double *a = l ? realloc(c->acked, c->cap * sizeof *a) : NULL;
            if (l)
                c->lat = l;
            if (!l || !a)
                break;
            c->acked = a;
        }
        c->lat[c->nlat] = t1 - t0;
        c->acked[c->nlat++] = t1;
    }
    if (fd >= 0)
        close(fd);
    free(buf);
    return NULL;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static pid_t spawn(char *const argv[], const char *log)
{
    pid_t p = fork();
    if (p == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        execvp(argv[0], argv);
        _exit(127);
    }
    return p;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
    (void)st, (void)flag, (void)f;
    return remove(path);
}

static int have_etcd(void)
{
    const char *path = getenv("PATH");
    char *copy = strdup(path ? path : "/usr/bin:/bin");
    int found = 0;
    for (char *s = copy, *dir; copy && !found && (dir = strtok_r(s, ":", &s));) {
        char f[4096];
        snprintf(f, sizeof f, "%s/etcd", dir);
        found = access(f, X_OK) == 0;
    }
    free(copy);
    return found;
}

static void stop_all(bench *b)
{
    for (int i = 0; i < REPLICAS; i++)
        if (b->rpid[i] > 0) {
            kill(b->rpid[i], SIGKILL);
            waitpid(b->rpid[i], NULL, 0);
            b->rpid[i] = 0;
        }
    for (int i = 0; i < MEMBERS; i++)
        if (b->epid[i] > 0) {
            kill(b->epid[i], SIGTERM);
            waitpid(b->epid[i], NULL, 0);
            b->epid[i] = 0;
        }
}

static const char *site = "{\"apiVersion\": \"berth.io/v1\", \"kind\": \"Site\", \"metadata\": "
                          "{\"name\": \"bench\"}, \"spec\": {\"racks\": 1000, \"machinesPerRack\": "
                          "100, \"machine\": {\"numaCells\": 2, \"cell\": {\"cpu\": 48, "
                          "\"memory\": \"224Gi\"}}}}";

/* One load phase of `seconds` with CLIENTS clients; kill_after >= 0: SIGKILL
 * replica 0 that long after the start. */
static void phase(bench *b, client *cl, int run, double seconds, double kill_after)
{
    pthread_t th[CLIENTS];
    __atomic_store_n(&b->stop, 0, __ATOMIC_SEQ_CST);
    double t0 = now_s();
    for (int i = 0; i < CLIENTS; i++) {
        cl[i] = (client){.b = b, .id = i, .run = run};
        pthread_create(&th[i], NULL, client_main, &cl[i]);
    }
    while (now_s() - t0 < seconds) {
        if (kill_after >= 0 && !b->kill_at && now_s() - t0 >= kill_after) {
            b->kill_at = now_s();
            kill(b->rpid[0], SIGKILL);
            waitpid(b->rpid[0], NULL, 0);
            b->rpid[0] = 0;
        }
        usleep(10000);
    }
    __atomic_store_n(&b->stop, 1, __ATOMIC_SEQ_CST);
    for (int i = 0; i < CLIENTS; i++)
        pthread_join(th[i], NULL);
}

int main(int argc, char **argv)
{
    (void)argc;
    if (!have_etcd()) {
        printf("bench_serve_replicated: skipped: etcd is not installed (apt-get install "
               "etcd-server)\n");
        return 0;
    }
    signal(SIGPIPE, SIG_IGN);
    char self[4096], berth[4096], dir[4096];
    snprintf(self, sizeof self, "%s", argv[0]);
    const char *bdir = dirname(self); /* build/bench-build/bench */
    if (getenv("BERTH"))
        snprintf(berth, sizeof berth, "%s", getenv("BERTH"));
    else
        snprintf(berth, sizeof berth, "%s/../berth", bdir);
    snprintf(dir, sizeof dir, "%s/../etcd-bench.XXXXXX", bdir);
    if (access(berth, X_OK) || !mkdtemp(dir)) {
        fprintf(stderr, "bench_serve_replicated: no %s or no temporary directory\n", berth);
        return 1;
    }
    bench b = {0};
    unsigned cport[MEMBERS], pport[MEMBERS];
    char cluster[1024] = "", endpoints[1024] = "";
    for (int m = 0; m < MEMBERS; m++) {
        cport[m] = free_port();
        pport[m] = free_port();
        size_t cl = strlen(cluster), el = strlen(endpoints);
        snprintf(cluster + cl, sizeof cluster - cl, "%sm%d=http://127.0.0.1:%u", m ? "," : "", m,
                 pport[m]);
        snprintf(endpoints + el, sizeof endpoints - el, "%shttp://127.0.0.1:%u", m ? "," : "",
                 cport[m]);
    }
    for (int m = 0; m < MEMBERS; m++) {
        char name[16], data[4200], curl_[64], purl[64], log[4200];
        snprintf(name, sizeof name, "m%d", m);
        snprintf(data, sizeof data, "%s/etcd%d", dir, m);
        snprintf(curl_, sizeof curl_, "http://127.0.0.1:%u", cport[m]);
        snprintf(purl, sizeof purl, "http://127.0.0.1:%u", pport[m]);
        snprintf(log, sizeof log, "%s/etcd%d.log", dir, m);
        char *av[] = {"etcd", "--name", name, "--data-dir", data, "--listen-client-urls", curl_,
                      "--advertise-client-urls", curl_, "--listen-peer-urls", purl,
                      "--initial-advertise-peer-urls", purl, "--initial-cluster", cluster,
                      "--initial-cluster-state", "new", "--initial-cluster-token", "bench", NULL};
        b.epid[m] = spawn(av, log);
    }
    int ok = 1;
    for (int m = 0; ok && m < MEMBERS; m++) {
        double t0 = now_s();
        while (request(cport[m], "POST", "/v3/maintenance/status", "{}") != 200)
            if (now_s() - t0 > 20) {
                fprintf(stderr, "bench_serve_replicated: etcd member %d did not start\n", m);
                ok = 0;
                break;
            } else {
                usleep(100000);
            }
    }
    for (int r = 0; ok && r < REPLICAS; r++) {
        char listen[64], db[4200], log[4200];
        b.rport[r] = free_port();
        snprintf(listen, sizeof listen, "127.0.0.1:%u", b.rport[r]);
        snprintf(db, sizeof db, "%s/r%d.db", dir, r);
        snprintf(log, sizeof log, "%s/r%d.log", dir, r);
        char *av[] = {berth, "serve", "--listen", listen, "--etcd", endpoints, "--estate",
                      "bench", "--db", db, "-q", NULL};
        b.rpid[r] = spawn(av, log);
    }
    for (int r = 0; ok && r < REPLICAS; r++) {
        double t0 = now_s();
        while (request(b.rport[r], "GET", "/readyz", "") != 200)
            if (now_s() - t0 > 20) {
                fprintf(stderr, "bench_serve_replicated: replica %d not ready\n", r);
                ok = 0;
                break;
            } else {
                usleep(50000);
            }
    }
    double t0 = now_s();
    if (ok && request(b.rport[0], "PUT", "/v1/estate", site) != 200) {
        fprintf(stderr, "bench_serve_replicated: PUT /v1/estate failed\n");
        ok = 0;
    }
    /* every replica applied it */
    for (int r = 0; ok && r < REPLICAS; r++)
        while (request(b.rport[r], "GET", "/v1/clusters", "") != 200)
            usleep(50000);
    if (ok)
        printf("BENCH serve.replicated.estate_load_ms %.1f ms\n", (now_s() - t0) * 1000);
    static client cl[CLIENTS];
    if (ok) {
        phase(&b, cl, 0, SECONDS, -1);
        size_t n = 0;
        uint64_t errors = 0, conflicts = 0;
        for (int i = 0; i < CLIENTS; i++) {
            n += cl[i].nlat;
            errors += cl[i].errors;
            conflicts += cl[i].conflicts;
        }
        double *all = malloc((n ? n : 1) * sizeof *all);
        size_t k = 0;
        for (int i = 0; all && i < CLIENTS; i++) {
            memcpy(all + k, cl[i].lat, cl[i].nlat * sizeof *all);
            k += cl[i].nlat;
        }
        if (all) {
            qsort(all, n, sizeof *all, cmp_d);
            printf("BENCH serve.replicated.placements_per_sec %.0f placements/s\n",
                   (double)n / SECONDS);
            printf("BENCH serve.replicated.p50_ms %.2f ms\n", n ? all[n / 2] * 1000 : 0);
            printf("BENCH serve.replicated.p99_ms %.2f ms\n",
                   n ? all[(size_t)((double)n * 0.99)] * 1000 : 0);
            printf("BENCH serve.replicated.errors %llu requests\n", (unsigned long long)errors);
            printf("BENCH serve.replicated.conflicts_409 %llu requests\n",
                   (unsigned long long)conflicts);
        }
        free(all);
        for (int i = 0; i < CLIENTS; i++) {
            free(cl[i].lat);
            free(cl[i].acked);
        }
        /* the failover: replica 0 SIGKILLed 2 s into the phase */
        phase(&b, cl, 1, FAILOVER_SECONDS, 2.0);
        double gap = 0;
        size_t after = 0;
        for (int i = 0; i < CLIENTS; i++) {
            double prev = -1;
            for (size_t j = 0; j < cl[i].nlat; j++) {
                double t = cl[i].acked[j];
                if (prev >= 0 && prev <= b.kill_at && t >= b.kill_at && t - prev > gap)
                    gap = t - prev;
                if (t > b.kill_at)
                    after++;
                prev = t;
            }
            if (prev >= 0 && prev <= b.kill_at) /* never acknowledged again */
                gap = gap > FAILOVER_SECONDS ? gap : FAILOVER_SECONDS;
            free(cl[i].lat);
            free(cl[i].acked);
        }
        printf("BENCH serve.replicated.failover_ms %.0f ms\n", gap * 1000);
        printf("BENCH serve.replicated.placements_per_sec_after_kill %.0f placements/s\n",
               (double)after / (FAILOVER_SECONDS - 2.0));
    }
    stop_all(&b);
    nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    return ok ? 0 : 1;
}
