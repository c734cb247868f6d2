/* bench/bench_autoscale.c - the autoscaler pass (SPEC 5) at the issue's
 * size: a deterministic estate written as YAML in memory and loaded through
 * berth_autoscale_load: 400 InstanceTypes (40 families x 10 sizes, spot and
 * on-demand offerings in 3 zones, 4 GPU families), 20 VirtualNodeGroups
 * (labels, some taints, type subsets, two GPU groups), a few hundred busy
 * existing nodes and 50,000 pending pods (mixed requests, nodeSelectors
 * matching groups, tolerations, a few GPU pods). Times one
 * berth_autoscale_plan: BENCH autoscale.pods_per_sec.50k. Scale-down: 5,000
 * existing nodes with bound pods at mixed utilisation, no pending pod:
 * BENCH autoscale.scaledown_plan_seconds.5k, the same estate at 10,000 and
 * 50,000 nodes (.10k, .50k) and their ratio in this run (.50k_over_10k:
 * 5 when the plan is linear; issue 18 asks at most 6): the 10k and 50k
 * estates are loaded together and planned in turn, 9 plans each (time_pair),
 * the figures their medians. The summary carries
 * a hash of the blocked nodes' reasons (texts kept byte-identical across
 * optimisations). Other figures: medians of 3 runs.
 * Arguments (optional): pending pods, scale-down nodes, runs (to measure
 * smaller sizes; the BENCH names keep the sizes only at them),
 * spread-estate nodes, and a thread count to plan the spread estate with
 * alone (for callgrind: `bench_autoscale 0 0 1 10000 2`).
 * Spread estate (docs/autoscale.md "Threads"): scale-down where the what-if
 * session answers the moved pods, with 1 thread and 2 (the speculative
 * waves) in the same run: BENCH
 * autoscale.scaledown_spread_plan_seconds.10k.threads1 and .threads2_wall
 * (wall clock, medians of 3). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "berth/autoscale.h"
#include "berth/random.h"
#include "sbuf.h"

#define NFAM 40
#define NSIZE 10
#define NZONE 3
#define NVNG 20
#define SPREAD_NODES 10000
#define SPREAD_SHARE 12
#define PAIR_RUNS 9 /* plans of each of the 10k and 50k scale-down estates, in turn */

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int gpu_family(int f)
{
    return f >= NFAM - 4;
}

/* Type (family f, size s): cpu 2..64, memory 2/4/8 GiB per cpu by family. */
static int type_cpu(int f, int s)
{
    static const int cpus[NSIZE] = {2, 4, 8, 12, 16, 24, 32, 48, 64, 96};
    return cpus[s];
}

static int type_gib_per_cpu(int f)
{
    return 2 << (f % 3);
}

static void catalog(sbuf *b, berth_rng *r)
{
    for (int f = 0; f < NFAM; f++)
        for (int s = 0; s < NSIZE; s++) {
            int cpu = type_cpu(f, s), gpus = gpu_family(f) ? 1 << (s % 4) : 0;
            double od = cpu * 0.012 * type_gib_per_cpu(f) / 2.0 + gpus * 0.9;
            put(b, "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: f%02d.s%d}\n"
                   "spec:\n  capacity: {cpu: \"%d\", memory: %dGi, pods: %d%s",
                f, s, cpu, cpu * type_gib_per_cpu(f), cpu >= 16 ? 234 : 58,
                gpus ? ", nvidia.com/gpu: " : "");
            if (gpus)
                put(b, "%d", gpus);
            put(b, "}\n  offerings:\n");
            for (int z = 0; z < NZONE; z++) {
                double sp = od * (0.25 + 0.2 * (double)berth_rng_below(r, 1000) / 1000.0);
                int avail = berth_rng_below(r, 10) != 0;
                put(b, "  - {zone: zone-%d, capacityType: on-demand, price: %.4f}\n"
                       "  - {zone: zone-%d, capacityType: spot, price: %.4f, interruptionRate: "
                       "%.3f, available: %s}\n",
                    z, od * (1 + 0.01 * z), z, sp, 0.02 + 0.18 * (double)berth_rng_below(r, 100) / 100,
                    avail ? "true" : "false");
            }
        }
}

/* Group g: g0 the default group (no labels); g1..g17 team groups with a
 * label, every fourth tainted; g18, g19 GPU groups. Each allows the types
 * of a few families. */
static int vng_tainted(int g)
{
    return g >= NVNG - 2 || (g > 0 && g % 4 == 3);
}

static void groups(sbuf *b)
{
    for (int g = 0; g < NVNG; g++) {
        put(b, "---\napiVersion: berth.io/v1\nkind: VirtualNodeGroup\nmetadata: {name: vng-%02d}\n"
               "spec:\n", g);
        if (g > 0)
            put(b, "  labels: {team: t%02d}\n", g);
        if (g >= NVNG - 2)
            put(b, "  taints: [{key: nvidia.com/gpu, value: \"true\", effect: NoSchedule}]\n");
        else if (vng_tainted(g))
            put(b, "  taints: [{key: dedicated, value: t%02d, effect: NoSchedule}]\n", g);
        put(b, "  instanceTypes: [");
        int first = 1;
        if (g >= NVNG - 2) {
            for (int f = NFAM - 4 + (g - (NVNG - 2)) * 2; f < NFAM - 2 + (g - (NVNG - 2)) * 2; f++)
                for (int s = 0; s < NSIZE; s++) {
                    put(b, "%sf%02d.s%d", first ? "" : ", ", f, s);
                    first = 0;
                }
        } else {
            /* four families per group (of the 36 non-GPU ones), g0 eight */
            int nf = g == 0 ? 8 : 4;
            for (int i = 0; i < nf; i++) {
                int f = (g * 5 + i * 3) % (NFAM - 4);
                for (int s = 0; s < NSIZE; s++) {
                    put(b, "%sf%02d.s%d", first ? "" : ", ", f, s);
                    first = 0;
                }
            }
        }
        put(b, "]\n");
    }
}

static void node_doc(sbuf *b, const char *name, int g, int f, int s, int z, int spot)
{
    put(b, "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n  labels: {berth.io/virtual-"
           "node-group: vng-%02d, node.kubernetes.io/instance-type: f%02d.s%d, topology.kubernetes."
           "io/zone: zone-%d, karpenter.sh/capacity-type: %s, kubernetes.io/hostname: %s",
        name, g, f, s, z, spot ? "spot" : "on-demand", name);
    if (g > 0)
        put(b, ", team: t%02d", g);
    put(b, "}\n");
    if (g >= NVNG - 2)
        put(b, "spec: {taints: [{key: nvidia.com/gpu, value: \"true\", effect: NoSchedule}]}\n");
    else if (vng_tainted(g))
        put(b, "spec: {taints: [{key: dedicated, value: t%02d, effect: NoSchedule}]}\n", g);
    put(b, "status: {allocatable: {cpu: \"%d\", memory: %dGi, pods: \"%d\"", type_cpu(f, s),
        type_cpu(f, s) * type_gib_per_cpu(f), type_cpu(f, s) >= 16 ? 234 : 58);
    if (gpu_family(f))
        put(b, ", nvidia.com/gpu: \"%d\"", 1 << (s % 4));
    put(b, "}}\n");
}

/* A pod of group g (g0: no selector), cpu millicores and memory MiB. */
static void pod_doc(sbuf *b, const char *name, const char *node, int g, int cpu, int mem, int gpu)
{
    put(b, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: ns-%d, labels: {app: "
           "a%d}}\nspec:\n", name, g, (int)(strlen(name) % 7));
    if (node)
        put(b, "  nodeName: %s\n", node);
    if (g > 0)
        put(b, "  nodeSelector: {team: t%02d}\n", g);
    if (g >= NVNG - 2)
        put(b, "  tolerations: [{key: nvidia.com/gpu, operator: Exists}]\n");
    else if (vng_tainted(g))
        put(b, "  tolerations: [{key: dedicated, operator: Equal, value: t%02d}]\n", g);
    put(b, "  containers: [{name: c, resources: {requests: {cpu: %dm, memory: %dMi", cpu, mem);
    if (gpu)
        put(b, ", nvidia.com/gpu: %d}, limits: {nvidia.com/gpu: %d", gpu, gpu);
    put(b, "}}}]\n");
}

static void random_pod(sbuf *b, berth_rng *r, const char *name, const char *node, int g)
{
    static const int cpus[] = {100, 250, 500, 1000, 2000, 4000};
    static const int mems[] = {128, 256, 512, 1024, 2048, 4096, 8192};
    int cpu = cpus[berth_rng_below(r, 6)], mem = mems[berth_rng_below(r, 7)];
    int gpu = g >= NVNG - 2 && berth_rng_below(r, 2) ? 1 : 0;
    pod_doc(b, name, node, g, cpu, mem, gpu);
}

/* The pod's group: 60 % the default group, GPU groups 1 %, the rest spread. */
static int random_group(berth_rng *r)
{
    uint64_t x = berth_rng_below(r, 100);
    if (x < 60)
        return 0;
    if (x < 61)
        return NVNG - 2 + (int)berth_rng_below(r, 2);
    return 1 + (int)berth_rng_below(r, NVNG - 3);
}

/* DaemonSets, as `kubectl get ds -A -o yaml` lists them: two on every
 * node (tolerating everything), one on the team-labelled groups' nodes
 * (required node affinity: team Exists), one on the first GPU group's
 * nodes (nodeSelector and toleration), one on nodes without the dedicated
 * taint (nodeSelector on the capacity type). Every new node of the plan
 * has their requests taken off first (capacity_template_free). */
#define NDS 5
static const struct {
    const char *name, *sel, *affinity_key;
    int cpu, mem, all_tol, gpu_tol;
} daemonsets[NDS] = {
    {"kube-proxy", NULL, NULL, 100, 128, 1, 0},
    {"log-agent", NULL, NULL, 50, 96, 1, 0},
    {"team-metrics", NULL, "team", 50, 64, 0, 0},
    {"gpu-device-plugin", "team: t18", NULL, 50, 64, 0, 1},
    {"spot-handler", "karpenter.sh/capacity-type: spot", NULL, 20, 32, 0, 0},
};

static void daemonset_docs(sbuf *b)
{
    put(b, "---\napiVersion: apps/v1\nkind: DaemonSetList\nmetadata: {resourceVersion: \"1\"}\n"
           "items:\n");
    for (int i = 0; i < NDS; i++) {
        put(b, "- metadata:\n    name: %s\n    namespace: kube-system\n"
               "    uid: 0d5e0000-0000-4000-8000-%012d\n    generation: 1\n"
               "    annotations: {deprecated.daemonset.template.generation: \"1\"}\n"
               "  spec:\n    selector: {matchLabels: {k8s-app: %s}}\n"
               "    template:\n      metadata: {labels: {k8s-app: %s}}\n      spec:\n",
            daemonsets[i].name, i, daemonsets[i].name, daemonsets[i].name);
        if (daemonsets[i].sel)
            put(b, "        nodeSelector: {%s}\n", daemonsets[i].sel);
        if (daemonsets[i].affinity_key)
            put(b, "        affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                   "{nodeSelectorTerms: [{matchExpressions: [{key: %s, operator: Exists}]}]}}}\n",
                daemonsets[i].affinity_key);
        if (daemonsets[i].all_tol)
            put(b, "        tolerations: [{operator: Exists}]\n");
        else if (daemonsets[i].gpu_tol)
            put(b, "        tolerations: [{key: nvidia.com/gpu, operator: Exists}]\n");
        put(b, "        containers: [{name: main, image: registry.example.com/%s:1.0, resources: "
               "{requests: {cpu: %dm, memory: %dMi}}}]\n"
               "  status: {currentNumberScheduled: 300, desiredNumberScheduled: 300, "
               "numberMisscheduled: 0, numberReady: 300}\n",
            daemonsets[i].name, daemonsets[i].cpu, daemonsets[i].mem);
    }
}

/* The pod of DaemonSet i on node number idx (bound, owned) of group g, when the
 * DaemonSet runs there (every bench node is spot). */
static void daemon_pod(sbuf *b, int i, const char *node, int idx, int g)
{
    if ((daemonsets[i].affinity_key && !g) || (daemonsets[i].gpu_tol && g != NVNG - 2) ||
        (!daemonsets[i].all_tol && !daemonsets[i].gpu_tol && vng_tainted(g)))
        return;
    put(b, "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: %s-%s\n  namespace: kube-system\n"
           "  uid: 9d5e0000-%04d-4000-8000-%012d\n"
           "  labels: {k8s-app: %s}\n  ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, "
           "name: %s, uid: 0d5e0000-0000-4000-8000-%012d, controller: true, blockOwnerDeletion: "
           "true}]\nspec:\n  nodeName: %s\n  tolerations: [{operator: Exists}]\n"
           "  containers: [{name: main, resources: {requests: {cpu: %dm, memory: %dMi}}}]\n"
           "status: {phase: Running}\n",
        daemonsets[i].name, node, i, idx,
        daemonsets[i].name, daemonsets[i].name, i, node, daemonsets[i].cpu, daemonsets[i].mem);
}

/* Scale-up estate: 300 existing nodes nearly full, npending pending pods. */
static void scaleup_estate(sbuf *b, uint32_t npending)
{
    berth_rng r;
    berth_rng_seed(&r, 4);
    catalog(b, &r);
    groups(b);
    char name[64], pn[64];
    for (int i = 0; i < 300; i++) {
        int g = i % NVNG;
        int f = g >= NVNG - 2 ? NFAM - 4 + (g - (NVNG - 2)) * 2 : (g * 5) % (NFAM - 4);
        int s = 2 + i % 3;
        snprintf(name, sizeof name, "node-%04d", i);
        node_doc(b, name, g, f, s, i % NZONE, 1);
        /* one pod taking most of the node */
        snprintf(pn, sizeof pn, "busy-%04d", i);
        pod_doc(b, pn, name, g, type_cpu(f, s) * 1000 - 600,
                type_cpu(f, s) * type_gib_per_cpu(f) * 1024 - 1000, 0);
        for (int d = 0; d < NDS; d++)
            daemon_pod(b, d, name, i, g);
    }
    daemonset_docs(b);
    for (uint32_t i = 0; i < npending; i++) {
        snprintf(pn, sizeof pn, "p-%06u", i);
        random_pod(b, &r, pn, NULL, random_group(&r));
    }
}

/* Scale-down estate: nnodes nodes, each with pods at a utilisation drawn
 * from 5 % to 95 %. */
static void scaledown_estate(sbuf *b, uint32_t nnodes)
{
    berth_rng r;
    berth_rng_seed(&r, 5);
    catalog(b, &r);
    groups(b);
    char name[64], pn[64];
    uint32_t np = 0;
    for (uint32_t i = 0; i < nnodes; i++) {
        int g = berth_rng_below(&r, 10) < 6 ? 0 : 1 + (int)berth_rng_below(&r, NVNG - 3);
        int f = (g * 5) % (NFAM - 4), s = 2 + (int)berth_rng_below(&r, 3);
        snprintf(name, sizeof name, "node-%05u", i);
        node_doc(b, name, g, f, s, (int)(i % NZONE), 1);
        int64_t cap = type_cpu(f, s) * 1000;
        int64_t want = cap * (5 + (int64_t)berth_rng_below(&r, 91)) / 100, used = 0;
        while (used < want) {
            int cpu = 250 << berth_rng_below(&r, 3);
            if (used + cpu > cap)
                break;
            snprintf(pn, sizeof pn, "q-%07u", np++);
            pod_doc(b, pn, name, g, cpu, cpu, 0);
            used += cpu;
        }
    }
}

/* Spread estate (docs/autoscale.md "Threads"): nnodes nodes as above, each
 * pod a replica of one of 200 deployments spread over hostnames
 * (topologySpreadConstraints maxSkew 1, half of them DoNotSchedule, half
 * ScheduleAnyway) or, one in four, with preferred hostname anti-affinity to
 * its replicas: the fit index leaves every moved pod to the what-if
 * session. Utilisation 5 % to 95 % (the fuller nodes' pods fit nowhere:
 * blocked candidates among the accepted ones; and `pin` candidates in
 * five have a last pod pinned to their hostname, kept after the session
 * placed the others: 2 for the spread figures, 4 for the walk ones, where
 * most questions are answered "no" and the waves widen). One node in SPREAD_SHARE is
 * in the group (a scale-down candidate), the others in a group of another
 * autoscaler (they receive moved pods): each question places its pods
 * over all 10,000 nodes, and the plan's cost stays within the bench's
 * budget. */
static void scaledown_spread_estate(sbuf *b, uint32_t nnodes, int pin)
{
    berth_rng r;
    berth_rng_seed(&r, 6);
    catalog(b, &r);
    groups(b);
    char name[64];
    uint32_t np = 0;
    for (uint32_t i = 0; i < nnodes; i++) {
        int f = 0, s = 2 + (int)berth_rng_below(&r, 3);
        snprintf(name, sizeof name, "node-%05u", i);
        put(b, "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n  labels: {berth.io/"
               "virtual-node-group: %s, node.kubernetes.io/instance-type: f%02d.s%d, "
               "topology.kubernetes.io/zone: zone-%d, karpenter.sh/capacity-type: spot, "
               "kubernetes.io/hostname: %s}\nstatus: {allocatable: {cpu: \"%d\", memory: %dGi, "
               "pods: \"58\"}}\n",
            name, i % SPREAD_SHARE ? "self-managed" : "vng-00", f, s, (int)(i % NZONE), name,
            type_cpu(f, s), type_cpu(f, s) * type_gib_per_cpu(f));
        int64_t cap = type_cpu(f, s) * 1000;
        int64_t want = cap * (5 + (int64_t)berth_rng_below(&r, 91)) / 100, used = 0;
        while (used < want) {
            int cpu = 250 << berth_rng_below(&r, 3), app = (int)berth_rng_below(&r, 200);
            if (used + cpu > cap)
                break;
            put(b, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: s-%07u, namespace: ns-0, "
                   "labels: {app: d%03d}}\nspec:\n  nodeName: %s\n", np++, app, name);
            if (app % 4 == 3)
                put(b, "  affinity: {podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: "
                       "[{weight: 50, podAffinityTerm: {topologyKey: kubernetes.io/hostname, "
                       "labelSelector: {matchLabels: {app: d%03d}}}}]}}\n", app);
            else
                put(b, "  topologySpreadConstraints: [{maxSkew: 1, topologyKey: "
                       "kubernetes.io/hostname, whenUnsatisfiable: %s, labelSelector: "
                       "{matchLabels: {app: d%03d}}}]\n",
                    app % 2 ? "ScheduleAnyway" : "DoNotSchedule", app);
            put(b, "  containers: [{name: c, resources: {requests: {cpu: %dm, memory: %dMi}}}]\n",
                cpu, cpu);
            used += cpu;
        }
        if (!(i % SPREAD_SHARE) && berth_rng_below(&r, 5) < (uint64_t)pin)
            /* a pod bound to its node's local volume (its hostname):
             * after the others, so the node is kept once they are placed */
            put(b, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: s-%07u, namespace: ns-0, "
                   "labels: {app: local}}\nspec:\n  nodeName: %s\n  nodeSelector: "
                   "{kubernetes.io/hostname: %s}\n  containers: [{name: c, resources: "
                   "{requests: {cpu: 100m, memory: 128Mi}}}]\n",
                np++, name, name);
    }
}

static int load(berth_autoscale *m, const sbuf *b)
{
    berth_autoscale_init(m);
    berth_error e;
    berth_error_clear(&e);
    berth_source src;
    int rc = berth_doc_load_buffer(&m->kube.arena, "bench.yaml", b->s, b->n, &src, &e);
    if (!rc)
        rc = berth_autoscale_load(m, &src, 0, &e);
    if (!rc)
        rc = berth_autoscale_finalize(m, &e);
    if (rc)
        fprintf(stderr, "bench_autoscale: %s\n", e.msg);
    return rc;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One plan of m: its wall seconds (*cpu: CPU seconds); summary describes
 * it. */
static double plan_once(const berth_autoscale *m, uint32_t threads, char *summary, size_t size,
                        double *cpu)
{
    berth_aplan p;
    berth_error e;
    berth_error_clear(&e);
    berth_aplan_options o = {0};
    o.now = 1714564800;
    o.threads = threads;
    double t0 = now_s(), c0 = cpu_s();
    int rc = berth_autoscale_plan(m, &o, &p, &e);
    double t = now_s() - t0;
    *cpu = cpu_s() - c0;
    if (rc) {
        fprintf(stderr, "bench_autoscale: %s\n", e.msg);
        exit(3);
    }
    uint32_t nodes = 0;
    for (uint32_t u = 0; u < p.nup; u++)
        nodes += p.up[u].count;
    /* FNV-1a over the blocked nodes' reasons: a change that must keep
     * the texts byte-identical keeps this hash */
    uint64_t h = 1469598103934665603u;
    for (uint32_t j = 0; j < p.nblocked; j++)
        for (const char *q = p.blocked[j].reason; *q; q++)
            h = (h ^ (unsigned char)*q) * 1099511628211u;
    snprintf(summary, size, "%u new nodes in %u groups, %u on existing, %u unschedulable, "
                            "%u scaled down, %u blocked, reasons %016llx",
             nodes, p.nup, p.non_existing, p.nunsched, p.ndown, p.nblocked,
             (unsigned long long)h);
    berth_aplan_free(&p);
    return t;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return v[n / 2];
}

/* Median wall seconds of `runs` plans (*cpu: their median CPU seconds);
 * *summary describes the last plan. */
static double time_plan(const berth_autoscale *m, int runs, uint32_t threads, char *summary,
                        size_t size, double *cpu)
{
    double t[16], c[16];
    for (int i = 0; i < runs; i++)
        t[i] = plan_once(m, threads, summary, size, &c[i]);
    *cpu = median(c, runs);
    return median(t, runs);
}

/* The 10k and 50k scale-down estates planned in turn (10k, 50k, 10k, ...),
 * `runs` times each: a slow spell of the shared machine falls on both
 * sizes rather than on one, so the ratio of their medians is steadier than
 * that of two medians taken minutes apart. */
static void time_pair(const berth_autoscale *m10, const berth_autoscale *m50, int runs,
                      double *t10, double *t50, double *c10, double *c50, char *s10, char *s50,
                      size_t size)
{
    double a[16], b[16], ca[16], cb[16];
    for (int i = 0; i < runs; i++) {
        a[i] = plan_once(m10, 0, s10, size, &ca[i]);
        b[i] = plan_once(m50, 0, s50, size, &cb[i]);
    }
    *t10 = median(a, runs);
    *t50 = median(b, runs);
    *c10 = median(ca, runs);
    *c50 = median(cb, runs);
}

int main(int argc, char **argv)
{
    uint32_t npending = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 50000;
    uint32_t nnodes = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 5000;
    int runs = argc > 3 ? atoi(argv[3]) : 3;
    if (runs < 1 || runs > 15)
        runs = 3;
    char summary[256];
    sbuf b = {0};
    berth_autoscale m;

    if (npending) {
        scaleup_estate(&b, npending);
        if (load(&m, &b))
            return 3;
        double cpu, t = time_plan(&m, runs, 0, summary, sizeof summary, &cpu);
        fprintf(stderr, "# scale-up: %u pending pods, %u nodes, %u types, %u groups: %.3f s "
                        "(cpu %.3f s; %s)\n",
                npending, m.kube.nnodes, m.ntypes, m.nvngs, t, cpu, summary);
        if (npending == 50000)
            printf("BENCH autoscale.pods_per_sec.50k %.0f pods/s\n", npending / t);
        else
            printf("BENCH autoscale.pods_per_sec.%u %.0f pods/s\n", npending, npending / t);
        berth_autoscale_free(&m);
    }
    /* scale-down: the given size; or (no size given) 5k, then 10k and 50k
     * loaded together and planned in turn (time_pair, PAIR_RUNS each), with
     * the 50k / 10k ratio (issue 18: at most 6 when linear) */
    if (nnodes) {
        b.n = 0;
        scaledown_estate(&b, nnodes);
        if (load(&m, &b))
            return 3;
        double cpu, t = time_plan(&m, runs, 0, summary, sizeof summary, &cpu);
        fprintf(stderr, "# scale-down: %u nodes, %u pods: %.3f s (cpu %.3f s; %s)\n",
                m.kube.nnodes, m.kube.npods, t, cpu, summary);
        if (nnodes == 5000 || nnodes == 10000 || nnodes == 50000)
            printf("BENCH autoscale.scaledown_plan_seconds.%uk %.3f s\n", nnodes / 1000, t);
        else
            printf("BENCH autoscale.scaledown_plan_seconds.%u %.3f s\n", nnodes, t);
        berth_autoscale_free(&m);
    }
    if (argc <= 2 && nnodes == 5000) {
        sbuf b10 = {0}, b50 = {0};
        berth_autoscale m10, m50;
        scaledown_estate(&b10, 10000);
        scaledown_estate(&b50, 50000);
        if (load(&m10, &b10) || load(&m50, &b50))
            return 3;
        char s50[256];
        double t10, t50, c10, c50;
        time_pair(&m10, &m50, PAIR_RUNS, &t10, &t50, &c10, &c50, summary, s50, sizeof summary);
        fprintf(stderr, "# scale-down: %u nodes, %u pods: %.3f s (cpu %.3f s; %s)\n",
                m10.kube.nnodes, m10.kube.npods, t10, c10, summary);
        fprintf(stderr, "# scale-down: %u nodes, %u pods: %.3f s (cpu %.3f s; %s)\n",
                m50.kube.nnodes, m50.kube.npods, t50, c50, s50);
        printf("BENCH autoscale.scaledown_plan_seconds.10k %.3f s\n", t10);
        printf("BENCH autoscale.scaledown_plan_seconds.50k %.3f s\n", t50);
        printf("BENCH autoscale.scaledown_plan_seconds.50k_over_10k %.2f x\n", t50 / t10);
        berth_autoscale_free(&m10);
        berth_autoscale_free(&m50);
        free(b10.s);
        free(b50.s);
    }
    /* scale-down with the session answering: 1 thread, then 2 (the waves,
     * docs/autoscale.md "Threads"), same run; argument 4 for another size */
    uint32_t nspread = argc > 4 ? (uint32_t)strtoul(argv[4], NULL, 10) : SPREAD_NODES;
    for (int walk = 0; walk < 2 && nspread; walk++) {
        const char *what = walk ? "walk" : "spread";
        b.n = 0;
        scaledown_spread_estate(&b, nspread, walk ? 4 : 2);
        if (load(&m, &b))
            return 3;
        char summary2[256];
        if (argc > 5) { /* one thread count alone (callgrind), the spread estate */
            double cpu, t = time_plan(&m, runs, (uint32_t)atoi(argv[5]), summary,
                                      sizeof summary, &cpu);
            fprintf(stderr, "# scale-down, spread: %u nodes, %s threads: %.3f s (cpu %.3f s; %s)\n",
                    m.kube.nnodes, argv[5], t, cpu, summary);
            berth_autoscale_free(&m);
            free(b.s);
            return 0;
        }
        double cpu1, cpu2, t1 = time_plan(&m, runs, 1, summary, sizeof summary, &cpu1);
        double t2 = time_plan(&m, runs, 2, summary2, sizeof summary2, &cpu2);
        fprintf(stderr, "# scale-down, %s: %u nodes, %u pods: 1 thread %.3f s (cpu %.3f s; "
                        "%s), 2 threads %.3f s wall (cpu %.3f s; %s)\n",
                what, m.kube.nnodes, m.kube.npods, t1, cpu1, summary, t2, cpu2, summary2);
        if (strcmp(summary, summary2)) {
            fprintf(stderr, "bench_autoscale: 2 threads planned otherwise\n");
            return 3;
        }
        char sz[32];
        if (nspread % 1000 == 0)
            snprintf(sz, sizeof sz, "%uk", nspread / 1000);
        else
            snprintf(sz, sizeof sz, "%u", nspread);
        printf("BENCH autoscale.scaledown_%s_plan_seconds.%s.threads1 %.3f s\n", what, sz, t1);
        printf("BENCH autoscale.scaledown_%s_plan_seconds.%s.threads2_wall %.3f s\n", what, sz,
               t2);
        berth_autoscale_free(&m);
    }
    free(b.s);
    return 0;
}
