/* bench/bench_disrupt_simulate.c - `disrupt simulate` over an hour in
 * one-minute steps (61 steps) on 1,000 Karpenter nodes (D8, 5 % of them
 * expired, a 10 % budget) with 10,000 bound pods (300m each, so most nodes
 * are consolidation candidates) under 50 PodDisruptionBudgets allowing one
 * disruption each, written as YAML in memory and loaded as the CLI does
 * (loading is not timed). Prints the time per run and per step, the nodes
 * left and the events written. BENCH_DSIM_NODES scales the estate (pods =
 * 10 x nodes). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "berth/disrupt.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct text {
    char *s;
    size_t n, cap;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int w = vsnprintf(t->s + t->n, t->cap - t->n, fmt, ap);
        va_end(ap);
        if (w >= 0 && (size_t)w < t->cap - t->n) {
            t->n += (size_t)w;
            return;
        }
        t->cap = t->cap * 2 + 4096;
        if (!(t->s = realloc(t->s, t->cap))) {
            fprintf(stderr, "out of memory\n");
            exit(3);
        }
    }
}

static void estate(text *t, int nodes)
{
    put(t, "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: general}\nspec:\n"
           "  template:\n    spec:\n      expireAfter: 720h\n      terminationGracePeriod: 10m\n"
           "      requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}]\n"
           "  disruption: {consolidateAfter: 0s, budgets: [{nodes: \"10%%\"}]}\n");
    put(t, "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: D4}\nspec:\n"
           "  capacity: {cpu: \"4\", memory: 16Gi, pods: 110}\n"
           "  offerings: [{zone: z1, capacityType: on-demand, price: 0.192}]\n"
           "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: D8}\nspec:\n"
           "  capacity: {cpu: \"8\", memory: 32Gi, pods: 110}\n"
           "  offerings: [{zone: z1, capacityType: on-demand, price: 0.384}]\n");
    for (int i = 0; i < nodes; i++)
        put(t, "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {name: n%d, labels: "
               "{karpenter.sh/nodepool: general}, creationTimestamp: \"%s\"}\n"
               "spec: {terminationGracePeriod: 10m}\n"
               "status: {nodeName: n%d, conditions: [{type: Initialized, status: \"True\"}]}\n"
               "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: n%d\n  labels: "
               "{karpenter.sh/nodepool: general, node.kubernetes.io/instance-type: D8, "
               "karpenter.sh/capacity-type: on-demand, topology.kubernetes.io/zone: z1, "
               "kubernetes.io/hostname: n%d, karpenter.sh/initialized: \"true\"}\nstatus: {allocatable: {cpu: \"8\", memory: 32Gi, pods: \"110\"}}\n",
            i, i % 20 ? "2024-04-20T00:00:00Z" : "2024-03-01T00:00:00Z", i, i, i);
    for (int j = 0; j < 10 * nodes; j++)
        put(t, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p%d, namespace: default, labels: {app: a%d}}\n"
               "spec:\n  nodeName: n%d\n  containers: [{name: c, resources: {requests: {cpu: 300m, memory: 512Mi}}}]\n"
               "status: {phase: Running, conditions: [{type: Ready, status: \"True\"}]}\n",
            j, j % 50, j % nodes);
    for (int a = 0; a < 50; a++)
        put(t, "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: a%d, namespace: default}\n"
               "spec: {maxUnavailable: 1, selector: {matchLabels: {app: a%d}}}\n", a, a);
}

int main(void)
{
    const char *en = getenv("BENCH_DSIM_NODES");
    int nodes = en ? atoi(en) : 1000;
    if (nodes < 1)
        nodes = 1000;
    text t = {0};
    estate(&t, nodes);
    berth_disrupt m;
    berth_disrupt_init(&m);
    berth_error e;
    berth_error_clear(&e);
    berth_source src;
    if (berth_doc_load_buffer(&m.kube.arena, "bench.yaml", t.s, t.n, &src, &e) ||
        berth_disrupt_load(&m, &src, 0, &e) || berth_disrupt_finalize(&m, &e)) {
        fprintf(stderr, "load: %s\n", e.msg);
        return 3;
    }
    free(t.s);
    berth_dsim_options o = {1714564800, 1714564800 + 3600, 60, BERTH_DSIM_LAUNCH_DELAY, 0};
    berth_dtimeline tl;
    double t0 = now_s();
    if (berth_disrupt_simulate(&m, &o, &tl, &e)) {
        fprintf(stderr, "simulate: %s\n", e.msg);
        return 3;
    }
    double dt = now_s() - t0;
    printf("BENCH disrupt.simulate_seconds.%dn_61steps %.3f s\n", nodes, dt);
    printf("BENCH disrupt.simulate_ms_per_step.%dn %.2f ms\n", nodes, dt * 1000 / tl.nsteps_run);
    printf("BENCH disrupt.simulate_nodes_end.%dn %u nodes\n", nodes, tl.nodes_end);
    printf("BENCH disrupt.simulate_events.%dn %u events\n", nodes, tl.nevents);
    berth_dtimeline_free(&tl);
    berth_disrupt_free(&m);
    return 0;
}
