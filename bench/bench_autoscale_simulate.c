/* bench/bench_autoscale_simulate.c - `autoscale simulate` (SPEC 5) at two
 * sizes: an estate of 2,000 and of 10,000 nodes written as YAML in memory
 * (two_types.h: one group of two instance types in two zones, spot nodes, a DaemonSet
 * pod and 0-6 workload pods on each node, every pod with the
 * terminationGracePeriodSeconds the API server writes, one
 * PodDisruptionBudget), and a timeline of 20 minutes at one-minute steps:
 * pods arriving, a spot interruption, pods leaving. Nearly empty nodes are
 * scaled down and drained, so thousands of nodes are removed during the
 * run (the summary on stderr: at 10k, 4,078 terminated; the arrivals fit
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
#include "two_types.h"

#define RUNS 3
#define MINUTES 20

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
    two_types_estate(&es, nnodes, 11, TWO_TYPES_SIMULATE);
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
