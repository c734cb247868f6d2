/* bench/bench_autoscale_replace.c - `autoscale plan`'s replacements (SPEC 5
 * "Replacement") at two sizes: an estate of 2,000 and of 10,000 nodes
 * written as YAML in memory (two_types.h: one group of two instance types
 * in two zones with spotPercentage 100, half the nodes on-demand, a
 * DaemonSet pod and 0-6 workload pods on each node, one
 * PodDisruptionBudget). Each on-demand
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
#include "two_types.h"

#define RUNS 5

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
        two_types_estate(&b, sizes[i], 17, TWO_TYPES_REPLACE);
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
