/* bench/bench_kube_preempt.c - DefaultPreemption throughput
 * (kube/preempt.c): 5,000 nodes (4 cpu, 16 GiB) each full of eight bound
 * low-priority pods (500m, priorities 0..90, a PodDisruptionBudget over a
 * tenth of them), then a stream of 2,000 priority-1000 pods of 1 cpu: none
 * fits anywhere, so every one preempts (upstream's candidate search over
 * 500 of the 5,000 nodes, victims chosen per node, the best node by
 * pickOneNodeForPreemption), and the queue goes on without the victims.
 * Prints BENCH kube.preemptions_per_sec.5k (preemptions / seconds of the
 * whole berth_kube_schedule run, median of three). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "berth/kube.h"
#include "berth/random.h"

#define GiB (1024LL * 1024 * 1024)
#define MiB (1024LL * 1024)
#define NODES 5000
#define LOW_PER_NODE 8
#define PREEMPTORS 2000

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static const char *fmt(berth_arena *a, const char *f, unsigned v)
{
    char buf[64];
    snprintf(buf, sizeof buf, f, v);
    return berth_arena_strdup(a, buf);
}

static void build(berth_kcluster *k, uint64_t seed)
{
    berth_arena *a = &k->arena;
    berth_rng rng;
    berth_rng_seed(&rng, seed);
    k->nres = 3;
    k->res_names[0] = "cpu";
    k->res_names[1] = "memory";
    k->res_names[2] = "ephemeral-storage";
    k->nodes = calloc(NODES, sizeof *k->nodes);
    k->nnodes = k->capnodes = NODES;
    for (uint32_t n = 0; n < NODES; n++) {
        berth_knode *nd = &k->nodes[n];
        nd->name = fmt(a, "node-%05u", n);
        berth_label *l = berth_arena_alloc(a, 2 * sizeof *l);
        l[0] = (berth_label){"kubernetes.io/hostname", nd->name};
        l[1] = (berth_label){"topology.kubernetes.io/zone", fmt(a, "zone-%u", n % 3)};
        nd->labels = (berth_labels){l, 2};
        berth_labels_sort(&nd->labels);
        nd->alloc[0] = 4000;
        nd->alloc[1] = 16 * GiB;
        nd->alloc[2] = 100 * GiB;
        nd->alloc_pods = 110;
    }
    uint32_t npods = NODES * LOW_PER_NODE + PREEMPTORS;
    k->pods = calloc(npods, sizeof *k->pods);
    k->npods = k->cappods = npods;
    for (uint32_t i = 0; i < npods; i++) {
        berth_kpod *p = &k->pods[i];
        int low = i < NODES * LOW_PER_NODE;
        uint32_t app = (uint32_t)berth_rng_below(&rng, 100);
        p->ns = "default";
        p->name = fmt(a, low ? "low-%06u" : "critical-%06u", i);
        p->order = i;
        p->scheduler_name = "default-scheduler";
        berth_label *l = berth_arena_alloc(a, sizeof *l);
        l[0] = (berth_label){"app", low ? fmt(a, "app-%u", app) : "critical"};
        p->labels = (berth_labels){l, 1};
        p->containers = berth_arena_alloc(a, sizeof *p->containers);
        memset(p->containers, 0, sizeof *p->containers);
        p->ncontainers = 1;
        p->containers[0].name = "main";
        p->containers[0].req[0] = low ? 500 : 1000;
        p->containers[0].req[1] = (low ? 256 : 512) * MiB;
        p->containers[0].has_req = 3;
        if (low) {
            p->priority = 10 * (int64_t)berth_rng_below(&rng, 10);
            p->node_name = k->nodes[i / LOW_PER_NODE].name;
            p->started = 1714550400 + (int64_t)berth_rng_below(&rng, 86400);
            p->has_started = 1;
        } else {
            p->priority = 1000;
        }
        berth_kube_pod_requests(k, p);
    }
    /* a budget with no disruption left over app-0 .. app-9 */
    k->pdbs = calloc(10, sizeof *k->pdbs);
    k->npdbs = k->cappdbs = 10;
    for (uint32_t b = 0; b < 10; b++) {
        berth_requirement *r = berth_arena_alloc(a, sizeof *r);
        const char **v = berth_arena_alloc(a, sizeof *v);
        v[0] = fmt(a, "app-%u", b);
        *r = (berth_requirement){"app", BERTH_SEL_IN, v, 1};
        k->pdbs[b] = (berth_kpdb){.ns = "default", .name = fmt(a, "pdb-%u", b),
                                  .selector = {r, 1, 0}, .has_disruptions_allowed = 1,
                                  .disruptions_allowed = 0};
    }
}

typedef struct counts {
    uint32_t preempted, victims, unplaced;
} counts;

static void on_decision(void *ctx, const berth_kcluster *k, const berth_kdecision *d)
{
    counts *c = ctx;
    (void)k;
    c->preempted += d->nvictims > 0;
    c->victims += d->nvictims;
    c->unplaced += d->node == BERTH_KUBE_NONE;
}

static double run(uint64_t seed, counts *c)
{
    berth_kcluster k;
    berth_kube_init(&k);
    build(&k, seed);
    memset(c, 0, sizeof *c);
    berth_kube_options opt = {.tiebreak = BERTH_TIE_FIRST, .preempt = 1,
                              .on_decision = on_decision, .ctx = c};
    berth_error e;
    double t0 = now_s();
    int rc = berth_kube_schedule(&k, &opt, &e);
    double dt = now_s() - t0;
    if (rc && rc != BERTH_ENOFIT) {
        fprintf(stderr, "bench_kube_preempt: %s\n", e.msg);
        exit(1);
    }
    free(k.nodes);
    free(k.pods);
    free(k.pdbs);
    k.nodes = NULL;
    k.pods = NULL;
    k.pdbs = NULL;
    k.nnodes = k.npods = k.npdbs = 0;
    berth_kube_free(&k);
    return c->preempted / dt;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(void)
{
    double r[3];
    counts c;
    for (int i = 0; i < 3; i++)
        r[i] = run(17 + (uint64_t)i, &c);
    qsort(r, 3, sizeof r[0], cmp_d);
    if (c.preempted != PREEMPTORS) {
        fprintf(stderr, "bench_kube_preempt: only %u of %u pods preempted\n", c.preempted,
                PREEMPTORS);
        return 1;
    }
    fprintf(stderr,
            "kube preemption: %u priority-1000 pods onto 5k full nodes (%u low pods): "
            "median %.0f preemptions/s (%u victims, %u unplaced)\n",
            PREEMPTORS, NODES * LOW_PER_NODE, r[1], c.victims, c.unplaced);
    printf("BENCH kube.preemptions_per_sec.5k %.0f preemptions/s\n", r[1]);
    return 0;
}
