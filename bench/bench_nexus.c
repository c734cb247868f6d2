/* bench/bench_nexus.c - nexus placement throughput: 1,000,000 VMs of a SKU
 * mix across 10,000 clusters on 100,000 machines (1,000 racks x 100), and the
 * mean time per placement at 1k, 10k and 100k machines with the estate
 * filled to the same ratio. Prints BENCH lines (median of several runs where
 * the run is short). `bench_nexus 1k|10k|100k` runs that size once and
 * prints its line only (for valgrind --tool=callgrind instruction counts).
 * nexus.ns_ratio.100k_over_1k: the 100k median over the 1k one of the same
 * run (1.00 = flat). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "berth/nexus.h"
#include "berth/random.h"

#define GiB (1024LL * 1024 * 1024)

/* Process CPU time, not wall clock: the bench is single-threaded, so on a
 * quiet machine the two agree, and on the shared development machines the
 * CPU time leaves out the time the process waits for a core (run to run
 * spread a few % instead of 2x). */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct result {
    double seconds;
    uint64_t placed, failed_clusters;
} result;

/* Places `clusters` clusters of ~100 VMs each on racks x 100 machines. */
static int run(uint32_t racks, uint32_t clusters, int use_index, uint64_t seed, result *res)
{
    berth_nexus nx;
    berth_nexus_init(&nx);
    berth_error e;
    if (berth_nexus_make_site(&nx, racks, 100, 2, 48, 224 * GiB, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    berth_nexus_options opt = {.use_index = use_index, .tiebreak = BERTH_TIE_FIRST};
    if (berth_nexus_prepare(&nx, &opt, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    berth_rng rng;
    berth_rng_seed(&rng, seed);
    berth_cluster_spec *specs = calloc(clusters, sizeof *specs);
    berth_pool_spec *pools = calloc((size_t)clusters * 4, sizeof *pools);
    char (*names)[16] = calloc(clusters, sizeof *names);
    if (!specs || !pools || !names)
        return 1;
    for (uint32_t c = 0; c < clusters; c++) {
        snprintf(names[c], sizeof names[c], "c%05u", c);
        berth_pool_spec *p = &pools[(size_t)c * 4];
        int xl = berth_rng_below(&rng, 10) == 0;
        uint32_t n1 = 45 + (uint32_t)berth_rng_below(&rng, 11); /* 45..55 */
        uint32_t n3 = xl ? 6 : 12;
        uint32_t n2 = 97 - n1 - n3;
        p[0] = (berth_pool_spec){"control-plane", BERTH_ROLE_CONTROL_PLANE, "NC_G12_56_v1", 3, NULL, 0, NULL};
        p[1] = (berth_pool_spec){"pool-1", BERTH_ROLE_WORKER, "NC_G6_28_v1", n1, NULL, 0, NULL};
        p[2] = (berth_pool_spec){"pool-2", BERTH_ROLE_WORKER, "NC_G2_8_v1", n2, NULL, 0, NULL};
        p[3] = (berth_pool_spec){"pool-3", BERTH_ROLE_WORKER,
                                 xl ? "NC_P46_224_v1" : "NC_P22_112_v1", n3, NULL, 0, NULL};
        specs[c] = (berth_cluster_spec){names[c], p, 4, NULL};
    }
    res->placed = res->failed_clusters = 0;
    double t0 = now_s();
    for (uint32_t c = 0; c < clusters; c++) {
        int rc = berth_nexus_create_cluster(&nx, &specs[c], &opt, NULL, &e);
        if (rc == BERTH_ENOFIT)
            res->failed_clusters++;
        else if (rc) {
            fprintf(stderr, "%s\n", e.msg);
            return 1;
        }
    }
    res->seconds = now_s() - t0;
    for (uint32_t p = 0; p < nx.npools; p++)
        res->placed += nx.pools[p].nvms;
    berth_nexus_free(&nx);
    free(specs);
    free(pools);
    free(names);
    return 0;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    const struct {
        uint32_t racks, clusters, reps;
        const char *name;
    } sizes[] = {{10, 100, 5, "1k"}, {100, 1000, 5, "10k"}, {1000, 10000, 3, "100k"}};
    double ns_1k = 0, ns_100k = 0, pps_100k = 0;
    const char *only = argc > 1 ? argv[1] : NULL;
    for (size_t s = 0; s < 3; s++) {
        double per[8];
        result r = {0};
        if (only && strcmp(only, sizes[s].name) != 0)
            continue;
        uint32_t reps = only ? 1 : sizes[s].reps;
        for (uint32_t k = 0; k < reps; k++) {
            if (run(sizes[s].racks, sizes[s].clusters, 1, 42, &r))
                return 1;
            per[k] = r.seconds * 1e9 / (double)(r.placed ? r.placed : 1);
        }
        qsort(per, reps, sizeof per[0], cmp_d);
        double med = per[reps / 2];
        fprintf(stderr, "nexus %s machines: %llu VMs placed, %llu clusters failed, median %.0f ns/VM over %u runs\n",
                sizes[s].name, (unsigned long long)r.placed, (unsigned long long)r.failed_clusters,
                med, reps);
        printf("BENCH nexus.ns_per_placement.%s %.0f ns\n", sizes[s].name, med);
        if (s == 0)
            ns_1k = med;
        if (s == 2) {
            ns_100k = med;
            pps_100k = 1e9 / med;
        }
    }
    if (only)
        return 0;
    /* the plain reference scan at 1k machines, for the index's speed-up */
    result r;
    if (run(10, 100, 0, 42, &r))
        return 1;
    printf("BENCH nexus.reference_ns_per_placement.1k %.0f ns\n", r.seconds * 1e9 / (double)r.placed);
    printf("BENCH nexus.placements_per_sec.100k %.0f placements/s\n", pps_100k);
    /* flatness, from the same run (the machine is shared: ratios hold up
     * better than absolute figures) */
    printf("BENCH nexus.ns_ratio.100k_over_1k %.2f ratio\n", ns_1k > 0 ? ns_100k / ns_1k : 0);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("BENCH nexus.peak_rss_mb.100k %.1f MB\n", ru.ru_maxrss / 1024.0);
    return 0;
}
