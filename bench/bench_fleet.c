/* bench/bench_fleet.c - Fleet placement throughput: 10,000
 * ClusterResourcePlacements (PickN 3, two property sorters, a label
 * selector, one topology spread constraint) over 5,000 member clusters.
 * Input is generated as YAML and loaded (not timed); the timed loop is
 * berth_fleet_place per placement, three runs over fresh contexts. Prints
 * the median: BENCH fleet.placements_per_sec.5k <value> placements/s.
 * In the same run, the plain reference path (--reference: every cluster
 * matched and scored per placement and cycle) over the first NREF
 * placements, interleaved with the fast runs so both see the same machine
 * load, whose selections must equal the fast path's:
 * BENCH fleet.reference_placements_per_sec.5k (median too).
 * `bench_fleet N` makes N runs (1..3; 1 for callgrind instruction counts;
 * 0: the fast runs only). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "berth/fleet.h"
#include "berth/random.h"

#define NCLUSTERS 5000
#define NPLACEMENTS 10000
#define RUNS 3
#define NREF 500

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct buf { char *p; size_t n, cap; } buf;

static void put(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#include <stdarg.h>
static void put(buf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int w = vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
        if (w >= 0 && (size_t)w < b->cap - b->n) {
            b->n += (size_t)w;
            return;
        }
        b->cap = b->cap * 2 + 4096;
        b->p = realloc(b->p, b->cap);
        if (!b->p)
            exit(1);
    }
}

int main(int argc, char **argv)
{
    int runs = RUNS, with_ref = 1;
    if (argc > 1 && atoi(argv[1]) >= 1 && atoi(argv[1]) <= RUNS)
        runs = atoi(argv[1]);
    if (argc > 1 && !strcmp(argv[1], "0")) {
        runs = 1;
        with_ref = 0;
    }
    berth_rng rng;
    berth_rng_seed(&rng, 42);
    buf b = {NULL, 0, 0};
    static const char *const regions[] = {"east", "west", "north", "south", "central"};
    for (int i = 0; i < NCLUSTERS; i++) {
        put(&b,
            "---\napiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\n"
            "metadata: {name: member-%05d, labels: {env: %s, region: %s}}\n"
            "status:\n  agentStatus:\n  - type: MemberAgent\n"
            "    lastReceivedHeartbeat: \"2024-05-01T11:59:00Z\"\n"
            "    conditions:\n    - {type: Joined, status: \"True\"}\n"
            "    - {type: Healthy, status: \"True\", lastTransitionTime: \"2024-04-01T00:00:00Z\"}\n"
            "  properties:\n    kubernetes.azure.com/per-cpu-core-cost: {value: \"%u.%03u\"}\n"
            "  resourceUsage:\n    available: {cpu: \"%u\", memory: %uGi}\n",
            i, berth_rng_below(&rng, 4) ? "prod" : "test", regions[berth_rng_below(&rng, 5)],
            (unsigned)berth_rng_below(&rng, 2), (unsigned)berth_rng_below(&rng, 1000),
            (unsigned)(4 + berth_rng_below(&rng, 400)), (unsigned)(16 + berth_rng_below(&rng, 2000)));
    }
    for (int i = 0; i < NPLACEMENTS; i++)
        put(&b,
            "---\napiVersion: placement.kubernetes-fleet.io/v1beta1\n"
            "kind: ClusterResourcePlacement\nmetadata: {name: crp-%05d}\nspec:\n  policy:\n"
            "    placementType: PickN\n    numberOfClusters: 3\n    affinity:\n"
            "      clusterAffinity:\n        requiredDuringSchedulingIgnoredDuringExecution:\n"
            "          clusterSelectorTerms:\n          - labelSelector: {matchLabels: {env: %s}}\n"
            "        preferredDuringSchedulingIgnoredDuringExecution:\n"
            "        - weight: %d\n          preference: {propertySorter: {name: "
            "resources.kubernetes-fleet.io/available-cpu, sortOrder: Descending}}\n"
            "        - weight: %d\n          preference: {propertySorter: {name: "
            "kubernetes.azure.com/per-cpu-core-cost, sortOrder: Ascending}}\n"
            "    topologySpreadConstraints:\n    - {maxSkew: 1, topologyKey: region}\n",
            i, i % 5 ? "prod" : "test", 10 + i % 90, 5 + i % 50);

    berth_fleet f;
    berth_fleet_init(&f);
    berth_error e;
    berth_error_clear(&e);
    berth_source src;
    berth_fleet_options opt = {0};
    berth_time_parse("2024-05-01T12:00:00Z", &opt.now_ms);
    if (berth_doc_load_buffer(&f.arena, "bench", b.p, b.n, &src, &e) ||
        berth_fleet_load(&f, &src, 0, &e) || berth_fleet_finalize(&f, &e)) {
        fprintf(stderr, "bench_fleet: %s\n", e.msg);
        return 1;
    }
    free(b.p);
    /* three runs, each with a fresh context (its cached columns are built
     * inside the timed loop); the median is reported */
    double rate[RUNS], ref_rate[RUNS];
    static uint32_t fast_sel[NREF][3];
    for (int run = 0; run < runs; run++) {
        berth_fleet_ctx *ctx = NULL;
        if (berth_fleet_ctx_new(&f, &opt, &ctx, &e)) {
            fprintf(stderr, "bench_fleet: %s\n", e.msg);
            return 1;
        }
        double t0 = now_s();
        uint64_t selected = 0;
        for (uint32_t p = 0; p < f.nplacements; p++) {
            berth_fleet_outcome o;
            if (berth_fleet_place(ctx, p, &o)) {
                fprintf(stderr, "bench_fleet: placement failed\n");
                return 1;
            }
            selected += o.nselected;
            if (p < NREF && o.nselected == 3)
                memcpy(fast_sel[p], o.selected, sizeof fast_sel[p]);
        }
        double dt = now_s() - t0;
        if (selected != 3ull * NPLACEMENTS) {
            fprintf(stderr, "bench_fleet: expected %u selections, got %llu\n", 3 * NPLACEMENTS,
                    (unsigned long long)selected);
            return 1;
        }
        rate[run] = NPLACEMENTS / dt;
        berth_fleet_ctx_free(ctx);
        if (!with_ref)
            continue;
        /* the reference path on the first NREF placements */
        berth_fleet_options ropt = opt;
        ropt.reference = 1;
        if (berth_fleet_ctx_new(&f, &ropt, &ctx, &e)) {
            fprintf(stderr, "bench_fleet: %s\n", e.msg);
            return 1;
        }
        t0 = now_s();
        for (uint32_t p = 0; p < NREF; p++) {
            berth_fleet_outcome o;
            if (berth_fleet_place(ctx, p, &o)) {
                fprintf(stderr, "bench_fleet: reference placement failed\n");
                return 1;
            }
            if (o.nselected != 3 || memcmp(o.selected, fast_sel[p], sizeof fast_sel[p])) {
                fprintf(stderr, "bench_fleet: placement %u: the fast path and the reference "
                                "select differently\n", p);
                return 1;
            }
        }
        ref_rate[run] = NREF / (now_s() - t0);
        berth_fleet_ctx_free(ctx);
    }
    for (int i = 1; i < runs; i++)
        for (int j = i; j > 0 && rate[j - 1] > rate[j]; j--) {
            double t = rate[j];
            rate[j] = rate[j - 1];
            rate[j - 1] = t;
        }
    printf("BENCH fleet.placements_per_sec.5k %.0f placements/s\n", rate[runs / 2]);
    if (with_ref) {
        for (int i = 1; i < runs; i++)
            for (int j = i; j > 0 && ref_rate[j - 1] > ref_rate[j]; j--) {
                double t = ref_rate[j];
                ref_rate[j] = ref_rate[j - 1];
                ref_rate[j - 1] = t;
            }
        printf("BENCH fleet.reference_placements_per_sec.5k %.0f placements/s\n",
               ref_rate[runs / 2]);
    }
    berth_fleet_free(&f);
    return 0;
}
