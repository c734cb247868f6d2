/* bench/bench_autoscale_simulate.c - `autoscale simulate` (SPEC 5) at two
 * sizes: an estate of 2,000 and of 10,000 nodes written as YAML in memory
 * (one group of two instance types in two zones, spot nodes, a DaemonSet
 * pod and 0-6 workload pods on each node, every pod with the
 * terminationGracePeriodSeconds the API server writes, one
 * PodDisruptionBudget), and a timeline of 20 minutes at one-minute steps:
 * pods arriving, a spot interruption, pods leaving. Nearly empty nodes are
 * scaled down and drained, so thousands of nodes are removed during the
 * run (the summary on stderr: at 10k, 4,178 terminated; the arrivals fit
 * on existing nodes, and the interrupted node is often gone already).
 * Times the load (berth_autoscale_load, berth_atimeline_scan_pods,
 * the events) and berth_autoscale_simulate together, medians of 3 runs:
 * BENCH autoscale.simulate_seconds.2k, .10k and their ratio .10k_over_2k
 * (5 when the simulation is linear: per step one autoscaler pass and the
 * timeline's own work over nodes and pods; it was quadratic, the grace
 * periods found by a scan of the earlier pods and the nodes by a scan of
 * the nodes, 10.1 s at 8,000 nodes). Argument (optional): one node count
 * to time alone. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "berth/autoscale.h"
#include "berth/random.h"
#include "sbuf.h"

#define RUNS 3
#define MINUTES 20

static void estate(sbuf *b, uint32_t nnodes)
{
    static const char *const types[2][4] = {{"m5.large", "2", "8Gi", "29"},
                                            {"m5.xlarge", "4", "16Gi", "58"}};
    static const char *const zones[2] = {"us-east-1a", "us-east-1b"};
    static const int graces[4] = {10, 30, 60, 600};
    berth_rng r;
    berth_rng_seed(&r, 11);
    put(b, "apiVersion: berth.io/v1\nkind: VirtualNodeGroup\nmetadata: {name: general}\n"
           "spec: {instanceTypes: [m5.large, m5.xlarge]}\n");
    for (int t = 0; t < 2; t++) {
        double od = t ? 0.192 : 0.096;
        put(b, "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: %s}\n"
               "spec:\n  capacity: {cpu: \"%s\", memory: %s, pods: %s}\n  offerings:\n",
            types[t][0], types[t][1], types[t][2], types[t][3]);
        for (int z = 0; z < 2; z++)
            put(b, "  - {zone: %s, capacityType: on-demand, price: %.3f}\n"
                   "  - {zone: %s, capacityType: spot, price: %.3f, interruptionRate: 0.05}\n",
                zones[z], od, zones[z], od * (0.35 + 0.02 * z));
    }
    put(b, "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web, "
           "namespace: default}\nspec:\n  maxUnavailable: 3\n  selector: {matchLabels: {app: "
           "web}}\n");
    for (uint32_t i = 0; i < nnodes; i++) {
        int t = (int)berth_rng_below(&r, 2);
        put(b, "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: n-%05u\n  labels: "
               "{berth.io/virtual-node-group: general, node.kubernetes.io/instance-type: %s, "
               "topology.kubernetes.io/zone: %s, karpenter.sh/capacity-type: %s, "
               "kubernetes.io/hostname: n-%05u}\nstatus: {allocatable: {cpu: \"%s\", memory: %s, "
               "pods: \"%s\"}}\n",
            i, types[t][0], zones[i % 2], "spot", i, types[t][1],
            types[t][2], types[t][3]);
        put(b, "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: agent-%05u\n  namespace: "
               "kube-system\n  ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: "
               "agent, uid: 6a1e0000-0000-4000-8000-000000000001, controller: true}]\nspec:\n"
               "  nodeName: n-%05u\n  terminationGracePeriodSeconds: 5\n  containers: [{name: c, "
               "resources: {requests: {cpu: 50m, memory: 64Mi}}}]\n",
            i, i);
        uint32_t np = (uint32_t)berth_rng_below(&r, 7);
        for (uint32_t j = 0; j < np; j++)
            put(b, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p-%05u-%u, namespace: "
                   "default, labels: {app: %s}}\nspec:\n  nodeName: n-%05u\n"
                   "  terminationGracePeriodSeconds: %d\n  containers: [{name: c, resources: "
                   "{requests: {cpu: %dm, memory: 512Mi}}}]\n",
                i, j, berth_rng_below(&r, 3) ? "api" : "web", i,
                graces[berth_rng_below(&r, 4)], 100 << berth_rng_below(&r, 3));
    }
}

static void events(sbuf *b, uint32_t nnodes)
{
    put(b, "apiVersion: v1\nkind: List\nitems:\n");
    for (int k = 0; k < 3; k++)
        put(b, "- apiVersion: berth.io/v1\n  kind: AutoscaleEvent\n  metadata: {name: jobs-%d}\n"
               "  spec:\n    at: 2024-05-01T12:%02d:00Z\n    type: PodArrive\n    count: %u\n"
               "    template:\n      apiVersion: v1\n      kind: Pod\n      metadata: {name: "
               "job%d, namespace: jobs}\n      spec:\n        terminationGracePeriodSeconds: 30\n"
               "        containers: [{name: c, resources: {requests: {cpu: 1500m, memory: "
               "2Gi}}}]\n",
            k, 2 + 5 * k, nnodes / 100, k);
    put(b, "- apiVersion: berth.io/v1\n  kind: AutoscaleEvent\n  spec: {at: 2024-05-01T12:04:00Z, "
           "type: SpotInterruption, node: n-%05u}\n", nnodes / 2);
    for (uint32_t i = 0; i < 20; i++)
        put(b, "- apiVersion: berth.io/v1\n  kind: AutoscaleEvent\n  spec: {at: "
               "2024-05-01T12:%02u:00Z, type: PodLeave, pod: jobs/job0-%u}\n", 8 + i / 4, i + 1);
}

/* One load and simulation: its seconds; *summary the result's counts. */
static double run_once(const sbuf *es, const sbuf *ev, char *summary, size_t size)
{
    double t0 = now_s();
    berth_autoscale m;
    berth_atimeline t;
    berth_autoscale_init(&m);
    berth_atimeline_init(&t);
    berth_error e;
    berth_error_clear(&e);
    berth_source src, evs;
    int rc = berth_doc_load_buffer(&m.kube.arena, "estate.yaml", es->s, es->n, &src, &e);
    if (!rc)
        rc = berth_autoscale_load(&m, &src, 0, &e);
    if (!rc)
        rc = berth_atimeline_scan_pods(&t, &m, &src, &e);
    if (!rc)
        rc = berth_autoscale_finalize(&m, &e);
    if (!rc)
        rc = berth_doc_load_buffer(&m.kube.arena, "events.yaml", ev->s, ev->n, &evs, &e);
    if (!rc)
        rc = berth_atimeline_load_events(&t, &m, &evs, &e);
    berth_asim_result r;
    memset(&r, 0, sizeof r);
    if (!rc) {
        berth_atimeline_finish(&t);
        berth_asim_options o = {0};
        o.from = 1714564800; /* 2024-05-01T12:00:00Z */
        o.to = o.from + MINUTES * 60;
        o.step = 60;
        o.launch_delay = 120;
        o.drain_timeout = 300;
        rc = berth_autoscale_simulate(&m, &t, &o, &r, &e);
    }
    double dt = now_s() - t0;
    if (rc) {
        fprintf(stderr, "bench_autoscale_simulate: %s\n", e.msg);
        exit(3);
    }
    snprintf(summary, size, "%u nodes, %u pods, %u steps, launched %u, terminated %u, "
                            "replaced %u, pending %.0f s",
             m.kube.nnodes, m.kube.npods, r.nsteps, r.launched, r.terminated, r.nreps,
             r.pending_seconds);
    berth_asim_result_free(&r);
    berth_atimeline_free(&t);
    berth_autoscale_free(&m);
    return dt;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double timed(uint32_t nnodes, char *summary, size_t size)
{
    sbuf es = {0}, ev = {0};
    estate(&es, nnodes);
    events(&ev, nnodes);
    double t[RUNS];
    for (int i = 0; i < RUNS; i++)
        t[i] = run_once(&es, &ev, summary, size);
    qsort(t, RUNS, sizeof *t, cmp_d);
    fprintf(stderr, "# autoscale simulate, %u nodes, %d minutes: %.3f s (%s)\n", nnodes,
            MINUTES, t[RUNS / 2], summary);
    free(es.s);
    free(ev.s);
    return t[RUNS / 2];
}

int main(int argc, char **argv)
{
    char summary[256];
    if (argc > 1) {
        uint32_t n = (uint32_t)strtoul(argv[1], NULL, 10);
        printf("BENCH autoscale.simulate_seconds.%u %.3f s\n", n,
               timed(n, summary, sizeof summary));
        return 0;
    }
    double t2 = timed(2000, summary, sizeof summary);
    double t10 = timed(10000, summary, sizeof summary);
    printf("BENCH autoscale.simulate_seconds.2k %.3f s\n", t2);
    printf("BENCH autoscale.simulate_seconds.10k %.3f s\n", t10);
    printf("BENCH autoscale.simulate_seconds.10k_over_2k %.2f x\n", t2 > 0 ? t10 / t2 : 0);
    return 0;
}
