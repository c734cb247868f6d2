/* bench/bench_autoscale_replace.c - `autoscale plan`'s replacements (SPEC 5
 * "Replacement") at two sizes: an estate of 2,000 and of 10,000 nodes
 * written as YAML in memory (one group of two instance types in two zones
 * with spotPercentage 100, half the nodes on-demand, a DaemonSet pod and
 * 0-6 workload pods on each node, one PodDisruptionBudget). Each on-demand
 * node the scale-down keeps is a RevertToSpot candidate: a new spot node
 * must host its pods together and the kube scheduler must place them with
 * the old node gone, about one candidate in three nodes. The plan asked
 * that through a view of the whole cluster per candidate (quadratic: 7.3 s
 * at 4,000 nodes); it now asks one what-if session for the pass.
 * Times berth_autoscale_plan on both estates loaded together and planned
 * in turn, medians of 5 each: BENCH autoscale.replace_plan_seconds.2k,
 * .10k and their ratio .10k_over_2k (5 when the plan is linear). The
 * summary on stderr carries the counts and a hash of the replacements
 * (kept across optimisations that must not change them). Argument
 * (optional): one node count to time alone. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "berth/autoscale.h"
#include "berth/random.h"
#include "sbuf.h"

#define RUNS 5

static void estate(sbuf *b, uint32_t nnodes)
{
    static const char *const types[2][4] = {{"m5.large", "2", "8Gi", "29"},
                                            {"m5.xlarge", "4", "16Gi", "58"}};
    static const char *const zones[2] = {"us-east-1a", "us-east-1b"};
    berth_rng r;
    berth_rng_seed(&r, 17);
    put(b, "apiVersion: berth.io/v1\nkind: VirtualNodeGroup\nmetadata: {name: general}\n"
           "spec: {instanceTypes: [m5.large, m5.xlarge], spotPercentage: 100}\n");
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
            i, types[t][0], zones[i % 2], berth_rng_below(&r, 2) ? "on-demand" : "spot", i,
            types[t][1], types[t][2], types[t][3]);
        put(b, "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: agent-%05u\n  namespace: "
               "kube-system\n  ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: "
               "agent, uid: 6a1e0000-0000-4000-8000-000000000001, controller: true}]\nspec:\n"
               "  nodeName: n-%05u\n  containers: [{name: c, resources: {requests: {cpu: 50m, "
               "memory: 64Mi}}}]\n",
            i, i);
        uint32_t np = (uint32_t)berth_rng_below(&r, 7);
        for (uint32_t j = 0; j < np; j++)
            put(b, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p-%05u-%u, namespace: "
                   "default, labels: {app: %s}}\nspec:\n  nodeName: n-%05u\n"
                   "  containers: [{name: c, resources: {requests: {cpu: %dm, memory: 512Mi}}}]\n",
                i, j, berth_rng_below(&r, 3) ? "api" : "web", i, 100 << berth_rng_below(&r, 3));
    }
}

static int load(berth_autoscale *m, const sbuf *b)
{
    berth_autoscale_init(m);
    berth_error e;
    berth_error_clear(&e);
    berth_source src;
    int rc = berth_doc_load_buffer(&m->kube.arena, "replace.yaml", b->s, b->n, &src, &e);
    if (!rc)
        rc = berth_autoscale_load(m, &src, 0, &e);
    if (!rc)
        rc = berth_autoscale_finalize(m, &e);
    if (rc)
        fprintf(stderr, "bench_autoscale_replace: %s\n", e.msg);
    return rc;
}

/* One plan: its seconds; *summary its counts and a hash of the
 * replacements (old node, new node's type, zone and capacity type, the
 * moves). */
static double plan_once(const berth_autoscale *m, char *summary, size_t size)
{
    berth_aplan p;
    berth_error e;
    berth_error_clear(&e);
    berth_aplan_options o = {0};
    o.now = 1714564800; /* 2024-05-01T12:00:00Z */
    double t0 = now_s();
    int rc = berth_autoscale_plan(m, &o, &p, &e);
    double dt = now_s() - t0;
    if (rc) {
        fprintf(stderr, "bench_autoscale_replace: %s\n", e.msg);
        exit(3);
    }
    uint64_t h = 1469598103934665603u;
#define MIX(v) (h = (h ^ (uint64_t)(v)) * 1099511628211u)
    uint32_t moves = 0;
    for (uint32_t i = 0; i < p.nrep; i++) {
        const berth_areplace *x = &p.rep[i];
        MIX(x->node);
        MIX(x->type);
        MIX(x->capacity_type);
        for (const char *q = x->zone; q && *q; q++)
            MIX((unsigned char)*q);
        for (uint32_t j = 0; j < x->nmoves; j++) {
            MIX(x->moves[j].pod);
            for (const char *q = x->moves[j].node; *q; q++)
                MIX((unsigned char)*q);
        }
        moves += x->nmoves;
    }
#undef MIX
    snprintf(summary, size, "%u nodes, %u pods: %u scaled down, %u replaced (%u pods moved), "
                            "%u blocked, hash %016llx",
             m->kube.nnodes, m->kube.npods, p.ndown, p.nrep, moves, p.nblocked,
             (unsigned long long)h);
    berth_aplan_free(&p);
    return dt;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    uint32_t sizes[2] = {2000, 10000}, nsizes = 2;
    if (argc > 1) {
        sizes[0] = (uint32_t)strtoul(argv[1], NULL, 10);
        nsizes = 1;
    }
    berth_autoscale m[2];
    for (uint32_t i = 0; i < nsizes; i++) {
        sbuf b = {0};
        estate(&b, sizes[i]);
        if (load(&m[i], &b))
            return 3;
        free(b.s);
    }
    /* the sizes in turn: a slow spell of the machine falls on both */
    double t[2][RUNS];
    char summary[2][256];
    for (int r = 0; r < RUNS; r++)
        for (uint32_t i = 0; i < nsizes; i++)
            t[i][r] = plan_once(&m[i], summary[i], sizeof summary[i]);
    double med[2];
    for (uint32_t i = 0; i < nsizes; i++) {
        qsort(t[i], RUNS, sizeof *t[i], cmp_d);
        med[i] = t[i][RUNS / 2];
        fprintf(stderr, "# autoscale plan, replacements: %.3f s (%s)\n", med[i], summary[i]);
        berth_autoscale_free(&m[i]);
    }
    if (nsizes == 1) {
        printf("BENCH autoscale.replace_plan_seconds.%u %.3f s\n", sizes[0], med[0]);
        return 0;
    }
    printf("BENCH autoscale.replace_plan_seconds.2k %.3f s\n", med[0]);
    printf("BENCH autoscale.replace_plan_seconds.10k %.3f s\n", med[1]);
    printf("BENCH autoscale.replace_plan_seconds.10k_over_2k %.2f x\n",
           med[0] > 0 ? med[1] / med[0] : 0);
    return 0;
}
