/* serve/metrics.c - Prometheus text exposition for `berth serve`: request
 * counts by route, method and status, a latency histogram per route, and
 * the engine's counters (accepted mutations, rejections by reason, group
 * commits, live VMs, estate utilisation). */
#include "serve/serve.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const char *const serve_route_names[SERVE_RT_COUNT] = {
    "/v1/estate",          "/v1/clusters",       "/v1/clusters/{name}",
    "/v1/clusters/{name}/pools/{pool}", "/v1/kube/schedule", "/v1/fleet/place",
    "/healthz",            "/readyz",            "/metrics",
    "/",                   "/v1/estate.svg",
    "/v1/extender/filter", "/v1/extender/prioritize", "/v1/extender/bind", "/v1/kube/nodes",
    "/v1/disrupt/plan",    "/v1/autoscale/plan",
    "other"};

static const char *const methods[] = {"GET", "PUT", "POST", "PATCH", "DELETE", "OTHER"};
#define NMETHODS 6
static const int codes[] = {200, 201, 204, 400, 401, 403, 404, 405, 409, 413, 422, 500, 503, 0};
#define NCODES 14 /* last: any other status */
static const double buckets[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                 0.1,    0.25,  0.5,    1,     2.5,  5,     10};
#define NBUCKETS 14

struct serve_metrics {
    pthread_mutex_t mu;
    uint64_t count[SERVE_RT_COUNT][NMETHODS][NCODES];
    int other_code[SERVE_RT_COUNT][NMETHODS]; /* last status outside codes[] */
    uint64_t hist[SERVE_RT_COUNT][NBUCKETS + 1];
    double sum[SERVE_RT_COUNT];
};

serve_metrics *serve_metrics_new(void)
{
    serve_metrics *m = calloc(1, sizeof *m);
    if (m)
        pthread_mutex_init(&m->mu, NULL);
    return m;
}

void serve_metrics_free(serve_metrics *m)
{
    if (!m)
        return;
    pthread_mutex_destroy(&m->mu);
    free(m);
}

void serve_metrics_observe(serve_metrics *m, int route, const char *method, int status,
                           double seconds)
{
    if (route < 0 || route >= SERVE_RT_COUNT)
        route = SERVE_RT_OTHER;
    int mi = NMETHODS - 1;
    for (int i = 0; i < NMETHODS - 1; i++)
        if (!strcmp(method, methods[i]))
            mi = i;
    int ci = NCODES - 1;
    for (int i = 0; i < NCODES - 1; i++)
        if (codes[i] == status)
            ci = i;
    int bi = NBUCKETS;
    for (int i = 0; i < NBUCKETS; i++)
        if (seconds <= buckets[i]) {
            bi = i;
            break;
        }
    pthread_mutex_lock(&m->mu);
    m->count[route][mi][ci]++;
    if (ci == NCODES - 1)
        m->other_code[route][mi] = status;
    m->hist[route][bi]++;
    m->sum[route] += seconds;
    pthread_mutex_unlock(&m->mu);
}

typedef struct sbuf {
    char *p;
    size_t n, cap;
    int oom;
} sbuf;

static void out(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out(sbuf *b, const char *fmt, ...)
{
    if (b->oom)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->oom = 1;
            return;
        }
        if ((size_t)k < b->cap - b->n) {
            b->n += (size_t)k;
            return;
        }
        size_t cap = b->cap * 2 + (size_t)k + 1;
        char *q = realloc(b->p, cap);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
}

char *serve_metrics_render(serve_metrics *m, serve_engine *g)
{
    sbuf b = {0};
    b.cap = 16384;
    b.p = malloc(b.cap);
    if (!b.p)
        return NULL;
    serve_metrics *s = malloc(sizeof *s);
    if (!s) {
        free(b.p);
        return NULL;
    }
    pthread_mutex_lock(&m->mu);
    memcpy(s->count, m->count, sizeof s->count);
    memcpy(s->other_code, m->other_code, sizeof s->other_code);
    memcpy(s->hist, m->hist, sizeof s->hist);
    memcpy(s->sum, m->sum, sizeof s->sum);
    pthread_mutex_unlock(&m->mu);

    out(&b, "# HELP berth_http_requests_total HTTP requests by route, method and status.\n"
            "# TYPE berth_http_requests_total counter\n");
    for (int r = 0; r < SERVE_RT_COUNT; r++)
        for (int mi = 0; mi < NMETHODS; mi++)
            for (int ci = 0; ci < NCODES; ci++)
                if (s->count[r][mi][ci])
                    out(&b,
                        "berth_http_requests_total{route=\"%s\",method=\"%s\",code=\"%d\"} "
                        "%llu\n",
                        serve_route_names[r], methods[mi],
                        ci < NCODES - 1 ? codes[ci] : s->other_code[r][mi],
                        (unsigned long long)s->count[r][mi][ci]);
    out(&b, "# HELP berth_http_request_duration_seconds Time from the request's headers to "
            "its reply.\n# TYPE berth_http_request_duration_seconds histogram\n");
    for (int r = 0; r < SERVE_RT_COUNT; r++) {
        uint64_t cum = 0;
        for (int i = 0; i <= NBUCKETS; i++)
            cum += s->hist[r][i];
        if (!cum)
            continue;
        uint64_t run = 0;
        for (int i = 0; i < NBUCKETS; i++) {
            run += s->hist[r][i];
            out(&b, "berth_http_request_duration_seconds_bucket{route=\"%s\",le=\"%g\"} %llu\n",
                serve_route_names[r], buckets[i], (unsigned long long)run);
        }
        out(&b, "berth_http_request_duration_seconds_bucket{route=\"%s\",le=\"+Inf\"} %llu\n",
            serve_route_names[r], (unsigned long long)cum);
        out(&b, "berth_http_request_duration_seconds_sum{route=\"%s\"} %.6f\n",
            serve_route_names[r], s->sum[r]);
        out(&b, "berth_http_request_duration_seconds_count{route=\"%s\"} %llu\n",
            serve_route_names[r], (unsigned long long)cum);
    }
    free(s);

    serve_engine_stats st;
    serve_engine_stats_get(g, &st);
    static const char *const ops[5] = {"", "estate", "create", "scale", "delete"};
    out(&b, "# HELP berth_placements_total Accepted (committed) mutations by operation.\n"
            "# TYPE berth_placements_total counter\n");
    for (int k = 1; k < 5; k++)
        out(&b, "berth_placements_total{op=\"%s\"} %llu\n", ops[k],
            (unsigned long long)st.accepted[k]);
    out(&b, "# HELP berth_rejections_total Rejected requests by reason.\n"
            "# TYPE berth_rejections_total counter\n");
    for (int k = 0; k < SERVE_REJ_COUNT; k++)
        out(&b, "berth_rejections_total{reason=\"%s\"} %llu\n", serve_reason_name(k),
            (unsigned long long)st.rejected[k]);
    out(&b,
        "# HELP berth_store_commits_total Log transactions committed (one fsync each).\n"
        "# TYPE berth_store_commits_total counter\nberth_store_commits_total %llu\n"
        "# HELP berth_worker_batches_total Batches taken by the placement worker.\n"
        "# TYPE berth_worker_batches_total counter\nberth_worker_batches_total %llu\n"
        "# HELP berth_worker_batched_ops_total Operations taken in those batches.\n"
        "# TYPE berth_worker_batched_ops_total counter\nberth_worker_batched_ops_total %llu\n",
        (unsigned long long)st.commits, (unsigned long long)st.batches,
        (unsigned long long)st.batched_ops);
    out(&b,
        "# HELP berth_replicated_replans_total Changes whose log record the apply check "
        "rejected (the estate changed since the plan), planned again (etcd; at most 3 each).\n"
        "# TYPE berth_replicated_replans_total counter\nberth_replicated_replans_total %llu\n"
        "# HELP berth_replicated_revision The etcd log revision this replica applied.\n"
        "# TYPE berth_replicated_revision gauge\nberth_replicated_revision %lld\n"
        "# HELP berth_replicated_snapshot_revision The revision of the latest snapshot this "
        "replica loaded or wrote.\n"
        "# TYPE berth_replicated_snapshot_revision gauge\nberth_replicated_snapshot_revision %lld\n"
        "# HELP berth_replicated_checkpoint_leader 1 while this replica is the checkpoint leader.\n"
        "# TYPE berth_replicated_checkpoint_leader gauge\nberth_replicated_checkpoint_leader %d\n"
        "# HELP berth_replicated_checkpoints_total Snapshots this replica wrote as leader.\n"
        "# TYPE berth_replicated_checkpoints_total counter\nberth_replicated_checkpoints_total %llu\n"
        "# HELP berth_replicated_log_keys_removed_total Log keys it deleted below its snapshots.\n"
        "# TYPE berth_replicated_log_keys_removed_total counter\n"
        "berth_replicated_log_keys_removed_total %llu\n"
        "# HELP berth_replicated_defragmentations_total etcd defragmentations it ran.\n"
        "# TYPE berth_replicated_defragmentations_total counter\n"
        "berth_replicated_defragmentations_total %llu\n"
        "# HELP berth_replicated_state_rebuilds_total Times the in-memory state was rebuilt from "
        "its own snapshot to drop deleted cluster entries.\n"
        "# TYPE berth_replicated_state_rebuilds_total counter\n"
        "berth_replicated_state_rebuilds_total %llu\n"
        "# HELP berth_estate_cluster_entries Cluster entries held in memory, deleted ones "
        "included.\n"
        "# TYPE berth_estate_cluster_entries gauge\nberth_estate_cluster_entries %u\n",
        (unsigned long long)st.replans, (long long)st.revision, (long long)st.snapshot_revision,
        st.leader, (unsigned long long)st.checkpoints, (unsigned long long)st.log_keys_removed,
        (unsigned long long)st.defrags, (unsigned long long)st.rebuilds, st.cluster_entries);
    out(&b,
        "# HELP berth_estate_loaded 1 when an estate is loaded.\n# TYPE berth_estate_loaded "
        "gauge\nberth_estate_loaded %d\n"
        "# HELP berth_estate_machines Machines in the estate.\n# TYPE berth_estate_machines "
        "gauge\nberth_estate_machines %u\n"
        "# HELP berth_estate_clusters Live clusters.\n# TYPE berth_estate_clusters gauge\n"
        "berth_estate_clusters %u\n"
        "# HELP berth_estate_vms Live VMs.\n# TYPE berth_estate_vms gauge\nberth_estate_vms "
        "%llu\n",
        st.have_estate, st.machines, st.clusters, (unsigned long long)st.vms);
    out(&b,
        "# HELP berth_estate_cpu_host_vcpu Host vCPU of the estate by state.\n"
        "# TYPE berth_estate_cpu_host_vcpu gauge\n"
        "berth_estate_cpu_host_vcpu{state=\"capacity\"} %lld\n"
        "berth_estate_cpu_host_vcpu{state=\"used\"} %lld\n"
        "# HELP berth_estate_memory_bytes Memory of the estate by state.\n"
        "# TYPE berth_estate_memory_bytes gauge\n"
        "berth_estate_memory_bytes{state=\"capacity\"} %lld\n"
        "berth_estate_memory_bytes{state=\"used\"} %lld\n"
        "# HELP berth_estate_utilisation_ratio Used over capacity (host vCPU).\n"
        "# TYPE berth_estate_utilisation_ratio gauge\n"
        "berth_estate_utilisation_ratio %.6f\n",
        (long long)st.cpu, (long long)st.used_cpu, (long long)st.memory,
        (long long)st.used_memory, st.cpu > 0 ? (double)st.used_cpu / (double)st.cpu : 0.0);
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return b.p;
}
