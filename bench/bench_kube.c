/* bench/bench_kube.c - kube-scheduler throughput: 10,000 and 100,000
 * pending pods onto 5,000 nodes with the default profile. "basic": pods with
 * requests, tolerations and required node affinity; "affinity": the same
 * plus a topology spread constraint (zone, DoNotSchedule) and a required
 * pod anti-affinity on hostname within each app. Prints BENCH lines
 * (median of several runs for the 10k size; basic and affinity interleaved,
 * with the worst per-pair ratio; the plain reference path and the one- and
 * two-thread figures of the same run). Then the what-if figure: on
 * 5,000 nodes holding 100,000 bound basic pods, "remove one node and
 * re-place its ~20 pods" answered by a what-if session (then rolled back)
 * and by berth_kube_schedule_view (medians). Last, hostile input: maps of
 * a million keys (BENCH kube.hostile_map_load_seconds.1m_keys), and a List
 * with 300,000 keys before its 300,000 items, streamed
 * (kube.hostile_list_load_seconds.300k), and 200,000 label keys built to
 * share one slot of an unkeyed hash (kube.hostile_flood_load_seconds.200k_keys). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "berth/kube.h"
#include "berth/random.h"
#include "../tests/hostile_names.h"

#define GiB (1024LL * 1024 * 1024)
#define MiB (1024LL * 1024)

/* BENCH_KUBE_CPUTIME=1: process CPU time instead of wall-clock time (for
 * comparing builds on a shared, oversubscribed machine; the BENCH figures
 * are wall-clock) */
static double now_s(void)
{
    struct timespec ts;
    const char *cpu = getenv("BENCH_KUBE_CPUTIME");
    clock_gettime(cpu && *cpu == '1' ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static berth_label *labels(berth_arena *a, uint32_t n)
{
    return berth_arena_alloc(a, n * sizeof(berth_label));
}

static const char *fmt(berth_arena *a, const char *f, unsigned v)
{
    char buf[64];
    snprintf(buf, sizeof buf, f, v);
    return berth_arena_strdup(a, buf);
}

static void build(berth_kcluster *k, uint32_t nnodes, uint32_t npods, int affinity, uint64_t seed)
{
    berth_arena *a = &k->arena;
    berth_rng rng;
    berth_rng_seed(&rng, seed);
    k->nres = 3;
    k->res_names[0] = "cpu";
    k->res_names[1] = "memory";
    k->res_names[2] = "ephemeral-storage";
    k->nodes = calloc(nnodes, sizeof *k->nodes);
    k->nnodes = k->capnodes = nnodes;
    for (uint32_t n = 0; n < nnodes; n++) {
        berth_knode *nd = &k->nodes[n];
        nd->name = fmt(a, "node-%05u", n);
        berth_label *l = labels(a, 4);
        l[0] = (berth_label){"kubernetes.io/hostname", nd->name};
        l[1] = (berth_label){"node.kubernetes.io/instance-type", n % 3 ? "D8s_v5" : "D16s_v5"};
        l[2] = (berth_label){"pool", n % 10 == 0 ? "gpu" : "general"};
        l[3] = (berth_label){"topology.kubernetes.io/zone", fmt(a, "zone-%u", n % 3)};
        nd->labels = (berth_labels){l, 4};
        berth_labels_sort(&nd->labels);
        int big = n % 3 == 0;
        nd->alloc[0] = big ? 15800 : 7800;
        nd->alloc[1] = big ? 60 * GiB : 28 * GiB;
        nd->alloc[2] = 100 * GiB;
        nd->alloc_pods = 110;
        if (n % 10 == 0) {
            nd->taints = berth_arena_alloc(a, sizeof *nd->taints);
            nd->taints[0] = (berth_taint){"gpu", "true", BERTH_EFFECT_NOSCHEDULE};
            nd->ntaints = 1;
        }
    }
    k->pods = calloc(npods, sizeof *k->pods);
    k->npods = k->cappods = npods;
    for (uint32_t i = 0; i < npods; i++) {
        berth_kpod *p = &k->pods[i];
        uint32_t app = (uint32_t)berth_rng_below(&rng, 500);
        p->ns = "default";
        p->name = fmt(a, "pod-%06u", i);
        p->order = i;
        berth_label *l = labels(a, 1);
        l[0] = (berth_label){"app", fmt(a, "app-%u", app)};
        p->labels = (berth_labels){l, 1};
        p->containers = berth_arena_alloc(a, sizeof *p->containers);
        p->ncontainers = 1;
        p->containers[0].name = "main";
        p->containers[0].req[0] = 100 + 50 * (int64_t)berth_rng_below(&rng, 8);
        p->containers[0].req[1] = (128 + 64 * (int64_t)berth_rng_below(&rng, 8)) * MiB;
        p->containers[0].has_req = 3;
        /* tolerate the gpu taint on a tenth of the pods */
        p->tols = berth_arena_alloc(a, 2 * sizeof *p->tols);
        p->tols[0] = (berth_toleration){"node.kubernetes.io/not-ready", NULL, BERTH_TOL_EXISTS,
                                        BERTH_EFFECT_NOEXECUTE, 300};
        p->ntols = 1;
        if (i % 10 == 0)
            p->tols[p->ntols++] = (berth_toleration){"gpu", "true", BERTH_TOL_EQUAL,
                                                     BERTH_EFFECT_NOSCHEDULE, -1};
        /* required node affinity: instance type In [D8s_v5, D16s_v5] */
        p->req_terms = berth_arena_alloc(a, sizeof *p->req_terms);
        p->nreq_terms = 1;
        p->has_req_affinity = 1;
        berth_requirement *rq = berth_arena_alloc(a, sizeof *rq);
        const char **vals = berth_arena_alloc(a, 2 * sizeof *vals);
        vals[0] = "D8s_v5";
        vals[1] = "D16s_v5";
        *rq = (berth_requirement){"node.kubernetes.io/instance-type", BERTH_SEL_IN, vals, 2};
        p->req_terms[0] = (berth_kterm){rq, 1, NULL, 0};
        if (affinity) {
            berth_requirement *sel = berth_arena_alloc(a, sizeof *sel);
            const char **v = berth_arena_alloc(a, sizeof *v);
            v[0] = l[0].value;
            *sel = (berth_requirement){"app", BERTH_SEL_IN, v, 1};
            p->spread = berth_arena_alloc(a, sizeof *p->spread);
            p->nspread = 1;
            p->spread[0] = (berth_kspread){.max_skew = 1,
                                           .topology_key = "topology.kubernetes.io/zone",
                                           .do_not_schedule = 1,
                                           .selector = {sel, 1, 0},
                                           .min_domains = 1,
                                           .honor_node_affinity = 1};
            p->anti_req = berth_arena_alloc(a, sizeof *p->anti_req);
            p->nanti_req = 1;
            p->anti_req[0] = (berth_kaffinity_term){.selector = {sel, 1, 0},
                                                    .topology_key = "kubernetes.io/hostname"};
        }
        berth_kube_pod_requests(k, p);
    }
}

static double run_opts(uint32_t npods, int affinity, uint64_t seed, uint32_t *placed,
                       uint32_t threads, int reference)
{
    berth_kcluster k;
    berth_kube_init(&k);
    build(&k, 5000, npods, affinity, seed);
    berth_kube_options opt = {.tiebreak = BERTH_TIE_FIRST, .threads = threads,
                              .reference = reference};
    berth_error e;
    double t0 = now_s();
    int rc = berth_kube_schedule(&k, &opt, &e);
    double dt = now_s() - t0;
    if (rc && rc != BERTH_ENOFIT) {
        fprintf(stderr, "bench_kube: %s\n", e.msg);
        exit(1);
    }
    *placed = 0;
    for (uint32_t i = 0; i < k.npods; i++)
        *placed += k.pods[i].assumed;
    free(k.nodes);
    free(k.pods);
    k.nodes = NULL;
    k.pods = NULL;
    k.nnodes = k.npods = 0;
    berth_kube_free(&k);
    return npods / dt;
}

static double run_threads(uint32_t npods, int affinity, uint64_t seed, uint32_t *placed,
                          uint32_t threads)
{
    return run_opts(npods, affinity, seed, placed, threads, 0);
}

static double run(uint32_t npods, int affinity, uint64_t seed, uint32_t *placed)
{
    return run_threads(npods, affinity, seed, placed, 1);
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* What-if "remove node n, re-place its pods": session (us, rolled back
 * after each) and view (ms), medians. */
static void whatif(void)
{
    berth_kcluster k;
    berth_kube_init(&k);
    build(&k, 5000, 100000, 0, 5);
    berth_kube_options opt = {.tiebreak = BERTH_TIE_FIRST};
    berth_error e;
    int rc = berth_kube_schedule(&k, &opt, &e);
    if (rc && rc != BERTH_ENOFIT) {
        fprintf(stderr, "bench_kube: %s\n", e.msg);
        exit(1);
    }
    /* node names are node-%05u, so the (sorted) index is the number */
    uint32_t N = k.nnodes, P = k.npods;
    uint32_t *pod_node = malloc(P * sizeof *pod_node);
    uint32_t *first = calloc(N + 1, sizeof *first), *on = malloc(P * sizeof *on);
    uint32_t *fill = calloc(N, sizeof *fill);
    uint32_t *placed = malloc(P * sizeof *placed);
    const char **names = malloc(P * sizeof *names);
    uint8_t *excluded = calloc(N, 1);
    if (!pod_node || !first || !on || !fill || !placed || !names || !excluded)
        exit(1);
    for (uint32_t p = 0; p < P; p++) {
        pod_node[p] = k.pods[p].node_name ? (uint32_t)atoi(k.pods[p].node_name + 5)
                                          : BERTH_KUBE_NONE;
        if (pod_node[p] != BERTH_KUBE_NONE)
            first[pod_node[p] + 1]++;
    }
    for (uint32_t n = 0; n < N; n++)
        first[n + 1] += first[n];
    for (uint32_t p = 0; p < P; p++)
        if (pod_node[p] != BERTH_KUBE_NONE)
            on[first[pod_node[p]] + fill[pod_node[p]]++] = p;
    berth_ksession *s;
    double t0 = now_s();
    if (berth_ksession_open(&s, &k, pod_node, 0, NULL, &e)) {
        fprintf(stderr, "bench_kube: %s\n", e.msg);
        exit(1);
    }
    double open_ms = (now_s() - t0) * 1e3;
    berth_rng rng;
    berth_rng_seed(&rng, 11);
    enum { NQ = 2000, NV = 5 };
    static double us[NQ];
    uint64_t moved = 0, unplaced = 0;
    for (int q = 0; q < NQ; q++) {
        uint32_t n = (uint32_t)berth_rng_below(&rng, N);
        const uint32_t *pods = on + first[n];
        uint32_t np = first[n + 1] - first[n];
        t0 = now_s();
        uint64_t m = berth_ksession_mark(s);
        for (uint32_t i = 0; i < np; i++)
            berth_ksession_evict(s, pods[i]);
        berth_ksession_exclude(s, n, 1);
        rc = berth_ksession_place(s, pods, np, placed, NULL, NULL, &e);
        if (rc && rc != BERTH_ENOFIT) {
            fprintf(stderr, "bench_kube: %s\n", e.msg);
            exit(1);
        }
        for (uint32_t i = 0; i < np; i++)
            unplaced += placed[i] == BERTH_KUBE_NONE;
        berth_ksession_rollback(s, m);
        us[q] = (now_s() - t0) * 1e6;
        moved += np;
    }
    qsort(us, NQ, sizeof us[0], cmp_d);
    double vms[NV];
    for (int q = 0; q < NV; q++) {
        uint32_t n = (uint32_t)berth_rng_below(&rng, N);
        berth_kview v = {0};
        excluded[n] = 1;
        v.excluded = excluded;
        v.pod_node = pod_node;
        v.pending = on + first[n];
        v.npending = first[n + 1] - first[n];
        t0 = now_s();
        if (berth_kube_schedule_view(&k, &v, names, NULL, NULL, &e)) {
            fprintf(stderr, "bench_kube: %s\n", e.msg);
            exit(1);
        }
        vms[q] = (now_s() - t0) * 1e3;
        excluded[n] = 0;
    }
    qsort(vms, NV, sizeof vms[0], cmp_d);
    fprintf(stderr,
            "kube what-if on 5k nodes / 100k pods: session open %.0f ms, %d questions "
            "(%.1f pods each, %llu unplaced): median %.1f us (p90 %.1f us); view median %.1f ms\n",
            open_ms, NQ, (double)moved / NQ, (unsigned long long)unplaced, us[NQ / 2],
            us[NQ * 9 / 10], vms[NV / 2]);
    printf("BENCH kube.session_whatif_us.5k %.1f us\n", us[NQ / 2]);
    printf("BENCH kube.view_whatif_ms.5k %.1f ms\n", vms[NV / 2]);
    printf("BENCH kube.session_speedup.5k %.0f x\n", vms[NV / 2] * 1e3 / us[NQ / 2]);
    berth_ksession_close(s);
    free(pod_node);
    free(first);
    free(on);
    free(fill);
    free(placed);
    free(names);
    free(excluded);
    free(k.nodes);
    free(k.pods);
    k.nodes = NULL;
    k.pods = NULL;
    k.nnodes = k.npods = 0;
    berth_kube_free(&k);
}

/* ---- workloads: kubectl-shaped YAML, expanded and scheduled ---- */

/* The basic cluster's 5,000 nodes as YAML, 2,000 Deployments of 50
 * replicas (the basic pods' requests, node affinity and tolerations; 100,000
 * pods) and 20 DaemonSets (10 tolerate everything, 10 select pool=general:
 * 95,000 pods, each pinned to its node). */
static unsigned env_u(const char *name, unsigned dflt)
{
    const char *v = getenv(name);
    return v && *v ? (unsigned)strtoul(v, NULL, 10) : dflt;
}

/* BENCH_KUBE_WL_NODES / _DEPLOYMENTS / _RUNS scale it down for profiling
 * (callgrind); the BENCH figure is the full size */
static char *workload_yaml(size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f)
        exit(1);
    unsigned nnodes = env_u("BENCH_KUBE_WL_NODES", 5000), ndep = env_u("BENCH_KUBE_WL_DEPLOYMENTS", 2000);
    for (unsigned n = 0; n < nnodes; n++) {
        int big = n % 3 == 0;
        fprintf(f, "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: node-%05u\n  labels:\n"
                   "    kubernetes.io/hostname: node-%05u\n"
                   "    node.kubernetes.io/instance-type: %s\n    pool: %s\n"
                   "    topology.kubernetes.io/zone: zone-%u\n",
                n, n, big ? "D16s_v5" : "D8s_v5", n % 10 == 0 ? "gpu" : "general", n % 3);
        if (n % 10 == 0)
            fprintf(f, "spec:\n  taints: [{key: gpu, value: \"true\", effect: NoSchedule}]\n");
        fprintf(f, "status:\n  allocatable: {cpu: %s, memory: %s, ephemeral-storage: 100Gi, "
                   "pods: \"110\"}\n",
                big ? "15800m" : "7800m", big ? "60Gi" : "28Gi");
    }
    for (unsigned d = 0; d < ndep; d++) {
        fprintf(f, "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app-%u, "
                   "namespace: default}\nspec:\n  replicas: 50\n  selector: {matchLabels: "
                   "{app: app-%u}}\n  template:\n    metadata: {labels: {app: app-%u}}\n"
                   "    spec:\n      containers:\n      - name: main\n        image: app:1\n"
                   "        resources: {requests: {cpu: %um, memory: %uMi}}\n"
                   "      affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                   "{nodeSelectorTerms: [{matchExpressions: [{key: node.kubernetes.io/instance-type, "
                   "operator: In, values: [D8s_v5, D16s_v5]}]}]}}}\n"
                   "      tolerations:\n      - {key: node.kubernetes.io/not-ready, operator: "
                   "Exists, effect: NoExecute, tolerationSeconds: 300}\n",
                d, d, d, 100 + 50 * (d % 8), 128 + 64 * (d % 8));
        if (d % 10 == 0)
            fprintf(f, "      - {key: gpu, operator: Equal, value: \"true\", effect: NoSchedule}\n");
    }
    for (unsigned d = 0; d < 20; d++) {
        fprintf(f, "---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent-%u, "
                   "namespace: kube-system}\nspec:\n  selector: {matchLabels: {ds: agent-%u}}\n"
                   "  template:\n    metadata: {labels: {ds: agent-%u}}\n    spec:\n"
                   "      containers:\n      - name: agent\n        image: agent:1\n"
                   "        resources: {requests: {cpu: 20m, memory: 32Mi}}\n",
                d, d, d);
        if (d < 10)
            fprintf(f, "      tolerations: [{operator: Exists}]\n");
        else
            fprintf(f, "      nodeSelector: {pool: general}\n");
    }
    if (fclose(f))
        exit(1);
    return buf;
}

/* one run: parse + load (returned in *load_s), then expand + schedule
 * timed; pods/s over every pod the workloads created */
static double workload_run(const char *yaml, size_t len, double *load_s, uint32_t *pods,
                           uint32_t *placed)
{
    berth_kcluster k;
    berth_kube_init(&k);
    berth_error e;
    berth_source src;
    double t0 = now_s();
    if (berth_doc_load_buffer(&k.arena, "bench.yaml", yaml, len, &src, &e) ||
        berth_kube_load(&k, &src, 0, &e)) {
        fprintf(stderr, "bench_kube: %s\n", e.msg);
        exit(1);
    }
    double t1 = now_s();
    uint32_t before = k.npods;
    berth_kube_options opt = {.tiebreak = BERTH_TIE_FIRST};
    int rc = berth_kube_expand(&k, &e);
    if (!rc)
        rc = berth_kube_schedule(&k, &opt, &e);
    double t2 = now_s();
    if (rc && rc != BERTH_ENOFIT) {
        fprintf(stderr, "bench_kube: %s\n", e.msg);
        exit(1);
    }
    *pods = k.npods - before;
    *placed = 0;
    for (uint32_t i = 0; i < k.npods; i++)
        *placed += k.pods[i].assumed;
    *load_s = t1 - t0;
    berth_kube_free(&k);
    return *pods / (t2 - t1);
}

static double workloads(void)
{
    size_t len = 0;
    char *yaml = workload_yaml(&len);
    double r[3], load[3];
    uint32_t pods = 0, placed = 0, runs = env_u("BENCH_KUBE_WL_RUNS", 3);
    runs = runs < 1 ? 1 : runs > 3 ? 3 : runs;
    for (uint32_t i = 0; i < runs; i++)
        r[i] = workload_run(yaml, len, &load[i], &pods, &placed);
    free(yaml);
    qsort(r, runs, sizeof r[0], cmp_d);
    qsort(load, runs, sizeof load[0], cmp_d);
    fprintf(stderr, "kube workloads: 5k nodes, 2,000 Deployments x 50 + 20 DaemonSets = %u pods "
                    "(%u placed): median %.0f pods/s expanded and scheduled; parse + load %.2f s\n",
            pods, placed, r[runs / 2], load[runs / 2]);
    printf("BENCH kube.workload_pods_per_sec.5k %.0f pods/s\n", r[runs / 2]);
    printf("BENCH kube.workload_load_seconds.5k %.2f s\n", load[runs / 2]);
    return r[runs / 2];
}

/* Hostile input: one Node whose labels map has 1,000,000 keys (reversed
 * order: the worst case of an insertion sort) and a ConfigMap whose data
 * map has as many, parsed and loaded; median of 3. The duplicate-key check
 * and the label sort are O(n log n) (io/yaml.c first_duplicate,
 * core/labels.c sort_large): quadratic, the same input would take hours. */
/* Median of 3 parses and loads of the JSON in s, whose one Node must come
 * out with `labels` labels (else the bench stops, naming `what`). */
static double load_median(const char *s, size_t len, uint32_t labels, const char *what)
{
    double t[3];
    for (int r = 0; r < 3; r++) {
        berth_kcluster k;
        berth_kube_init(&k);
        berth_error e;
        berth_error_clear(&e);
        berth_source src;
        double t0 = now_s();
        if (berth_doc_load_buffer(&k.arena, "hostile.json", s, len, &src, &e) ||
            berth_kube_load(&k, &src, 0, &e) || k.nnodes != 1 || k.nodes[0].labels.n != labels) {
            fprintf(stderr, "bench_kube: %s: %s\n", what, e.msg);
            exit(1);
        }
        t[r] = now_s() - t0;
        berth_kube_free(&k);
    }
    qsort(t, 3, sizeof t[0], cmp_d);
    return t[1];
}

/* Keys a client computed to share one slot of an unkeyed hash table
 * (tests/hostile_names.h: FNV-1a, the key index's hash until it was keyed):
 * a Node with 200,000 such labels, parsed (the builder interns every
 * mapping key through berth/nameidx.h) and loaded; median of 3. Under the
 * unkeyed hash each key probed all the earlier ones (the same Node took
 * 116 s through `berth kube schedule`, 0.7 s keyed). */
static void hostile_flood(void)
{
    enum { KEYS = 200000 };
    char *names = hostile_names(KEYS, 19); /* the key index's table: 2^19 slots */
    size_t cap = (size_t)KEYS * 24 + 1024, len = 0;
    char *s = malloc(cap);
    if (!names || !s)
        exit(1);
    len += (size_t)snprintf(s + len, cap - len, "{\"apiVersion\":\"v1\",\"kind\":\"Node\","
                            "\"metadata\":{\"name\":\"n\",\"labels\":{");
    for (uint32_t i = 0; i < KEYS; i++)
        len += (size_t)snprintf(s + len, cap - len, "%s\"%s\":\"v\"", i ? "," : "",
                                names + (size_t)i * 16);
    len += (size_t)snprintf(s + len, cap - len, "}},\"status\":{\"allocatable\":{\"cpu\":\"1\"}}}\n");
    free(names);
    double t = load_median(s, len, KEYS, "hostile flood");
    free(s);
    fprintf(stderr, "kube hostile flood: a Node with 200k labels sharing one FNV-1a slot "
                    "(%.1f MB): median %.2f s parse + load\n", (double)len / 1e6, t);
    printf("BENCH kube.hostile_flood_load_seconds.200k_keys %.2f s\n", t);
}

static void hostile_maps(void)
{
    enum { KEYS = 1000000 };
    size_t cap = (size_t)KEYS * 2 * 24 + 1024, len = 0;
    char *s = malloc(cap);
    if (!s)
        exit(1);
    len += (size_t)snprintf(s + len, cap - len, "{\"apiVersion\":\"v1\",\"kind\":\"Node\","
                            "\"metadata\":{\"name\":\"n\",\"labels\":{");
    for (uint32_t i = 0; i < KEYS; i++)
        len += (size_t)snprintf(s + len, cap - len, "%s\"k%07u\":\"v\"", i ? "," : "", KEYS - i);
    len += (size_t)snprintf(s + len, cap - len, "}},\"status\":{\"allocatable\":{\"cpu\":\"1\"}}}\n"
                            "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":"
                            "{\"name\":\"c\"},\"data\":{");
    for (uint32_t i = 0; i < KEYS; i++)
        len += (size_t)snprintf(s + len, cap - len, "%s\"d%07u\":\"v\"", i ? "," : "", KEYS - i);
    len += (size_t)snprintf(s + len, cap - len, "}}\n");
    double tm = load_median(s, len, KEYS, "hostile maps");
    free(s);
    fprintf(stderr, "kube hostile maps: a Node with 1M labels and a ConfigMap with 1M keys "
                    "(%.0f MB): median %.2f s parse + load\n", (double)len / 1e6, tm);
    printf("BENCH kube.hostile_map_load_seconds.1m_keys %.2f s\n", tm);
    double t[3];

    /* a List with 300,000 keys before its 300,000 items, read streamed
     * (berth_kube_load_file): its kind is looked up once, not per item */
    enum { PAIRS = 300000 };
    char path[64];
    snprintf(path, sizeof path, "/tmp/berth-bench-hostile-%d.json", (int)getpid());
    FILE *f = fopen(path, "w");
    if (!f)
        exit(1);
    fputc('{', f);
    for (uint32_t i = 0; i < PAIRS; i++)
        fprintf(f, "\"k%u\":1,", i);
    fputs("\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[", f);
    for (uint32_t i = 0; i < PAIRS; i++)
        fprintf(f, "%s{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
                   "\"metadata\":{\"name\":\"c%u\"}}",
                i ? "," : "", i);
    fputs("]}\n", f);
    fclose(f);
    for (int r = 0; r < 3; r++) {
        berth_kcluster k;
        berth_kube_init(&k);
        berth_error e;
        double t0 = now_s();
        if (berth_kube_load_file(&k, path, 0, &e) || berth_skips_total(&k.skipped) != PAIRS) {
            fprintf(stderr, "bench_kube: hostile list: %s\n", e.msg);
            exit(1);
        }
        t[r] = now_s() - t0;
        berth_kube_free(&k);
    }
    remove(path);
    qsort(t, 3, sizeof t[0], cmp_d);
    fprintf(stderr, "kube hostile list: 300k keys before 300k items, streamed: median %.2f s\n",
            t[1]);
    printf("BENCH kube.hostile_list_load_seconds.300k %.2f s\n", t[1]);
}

int main(void)
{
    const char *names[2] = {"basic", "affinity"};
    double figure[2], r[2][3];
    /* "basic", "affinity", "pods" (both), "workloads", "whatif" or "hostile" */
    const char *only = getenv("BENCH_KUBE_ONLY");
    int pods = only && !strcmp(only, "pods");
    int want[2] = {!only || pods || !strcmp(only, "basic"),
                   !only || pods || !strcmp(only, "affinity")};
    figure[0] = figure[1] = 0; /* printed only when measured */
    /* basic and affinity interleaved (seed i of one beside seed i of the
     * other), so that a loaded machine slows both alike: the per-pair
     * ratio is the "every run" figure */
    uint32_t placed[2] = {0, 0};
    for (int i = 0; i < 3; i++)
        for (int aff = 0; aff < 2; aff++)
            if (want[aff])
                r[aff][i] = run(10000, aff, 7 + (uint64_t)i, &placed[aff]);
    double worst = 0;
    for (int i = 0; i < 3 && want[0] && want[1]; i++) {
        fprintf(stderr, "kube pair %d (seed %d): basic %.0f, affinity %.0f pods/s: %.2fx\n", i,
                7 + i, r[0][i], r[1][i], r[0][i] / r[1][i]);
        worst = r[0][i] / r[1][i] > worst ? r[0][i] / r[1][i] : worst;
    }
    for (int aff = 0; aff < 2; aff++) {
        if (!want[aff])
            continue;
        double m[3] = {r[aff][0], r[aff][1], r[aff][2]};
        qsort(m, 3, sizeof m[0], cmp_d);
        fprintf(stderr, "kube %s: 10k pods on 5k nodes: median %.0f pods/s (%u placed)\n",
                names[aff], m[1], placed[aff]);
        printf("BENCH kube.pods_per_sec.%s.10k_pods.5k %.0f pods/s\n", names[aff], m[1]);
        double big = run(100000, aff, 99, &placed[aff]);
        fprintf(stderr, "kube %s: 100k pods on 5k nodes: %.0f pods/s (%u placed)\n", names[aff],
                big, placed[aff]);
        printf("BENCH kube.pods_per_sec.%s.100k_pods.5k %.0f pods/s\n", names[aff], big);
        figure[aff] = big < m[1] ? big : m[1];
    }
    if (want[0]) {
        /* the same run's plain reference path (no pod-class cache, no
         * incremental spread/affinity state: the full pipeline per pod) on
         * 2,000 of the basic pods, and the one-thread figure beside threads2 */
        uint32_t rp = 0;
        double ref = run_opts(2000, 0, 7, &rp, 1, 1);
        fprintf(stderr, "kube basic reference path: 2k pods on 5k nodes: %.0f pods/s (%u placed)\n",
                ref, rp);
        printf("BENCH kube.reference_pods_per_sec.basic.5k %.0f pods/s\n", ref);
        printf("BENCH kube.fast_vs_reference.basic.5k %.1f x\n", figure[0] / ref);
        double m[3] = {r[0][0], r[0][1], r[0][2]};
        qsort(m, 3, sizeof m[0], cmp_d);
        printf("BENCH kube.pods_per_sec.basic.5k.threads1 %.0f pods/s\n", m[1]);
    }
    if (want[1]) {
        double m[3] = {r[1][0], r[1][1], r[1][2]};
        qsort(m, 3, sizeof m[0], cmp_d);
        printf("BENCH kube.pods_per_sec.affinity.5k.threads1 %.0f pods/s\n", m[1]);
    }
    /* the same 10k-pod runs with the per-node loops on 2 threads (docs/kube.md
     * "Threads"): medians of 3, beside the one-thread figure of this run */
    for (int aff = 0; aff < 2; aff++) {
        if (!want[aff])
            continue;
        double t2[3];
        uint32_t pl = 0;
        for (int i = 0; i < 3; i++)
            t2[i] = run_threads(10000, aff, 7 + (uint64_t)i, &pl, 2);
        qsort(t2, 3, sizeof t2[0], cmp_d);
        fprintf(stderr, "kube %s: 10k pods on 5k nodes, 2 threads: median %.0f pods/s (%u placed)\n",
                names[aff], t2[1], pl);
        printf("BENCH kube.pods_per_sec.%s.5k.threads2 %.0f pods/s\n", names[aff], t2[1]);
    }
    /* a figure only where it was measured (BENCH_KUBE_ONLY runs a part) */
    if (want[0])
        printf("BENCH kube.pods_per_sec.basic.5k %.0f pods/s\n", figure[0]);
    if (want[1])
        printf("BENCH kube.pods_per_sec.affinity.5k %.0f pods/s\n", figure[1]);
    if (want[0] && want[1]) {
        printf("BENCH kube.affinity_slowdown.5k %.2f x\n", figure[0] / figure[1]);
        printf("BENCH kube.affinity_slowdown_worst_pair.5k %.2f x\n", worst);
    }
    if (!only || !strcmp(only, "workloads")) {
        double w = workloads();
        if (!only)
            printf("BENCH kube.workload_vs_basic.5k %.2f x\n", w / figure[0]);
    }
    if (!only || !strcmp(only, "whatif"))
        whatif();
    if (!only || !strcmp(only, "hostile"))
        hostile_maps();
    if (!only || !strcmp(only, "hostile"))
        hostile_flood();
    return 0;
}
