/* bench/bench_disrupt_cli.c - `berth disrupt plan` through the CLI binary
 * (load + plan, issue 18): writes a kubectl-shaped input once per size to
 * /tmp (one NodePool, 15 InstanceTypes in 3 zones, a NodeClaimList, a
 * NodeList with Ready conditions and managedFields, a PodList of
 * ReplicaSet pods, 3 per node, sized so nodes are 25-75 % requested; fixed
 * seed), then runs the binary on the 10k and the 50k input in turn, 5
 * rounds, and prints the median CPU seconds of each size (user + system
 * of the child, from wait4: the CLI is
 * single-threaded, so this is its time on one core also on a shared
 * machine; wall seconds go to stderr). Sizes 10k and 50k nodes; the 50k
 * figure must stay within 6x the 10k one (linear load and plan). BERTH
 * names the binary (default build/bench-build/berth, which `make bench`
 * builds); BENCH_DISRUPT_CLI_SIZES="1000 5000" runs other sizes (profiling
 * aid; the file is left in /tmp when BENCH_DISRUPT_CLI_KEEP is set). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "berth/random.h"

static const char *zones[3] = {"eastus-1", "eastus-2", "eastus-3"};
static const struct {
    const char *family;
    int gib_per_cpu;
    double price_per_cpu;
} families[3] = {{"D", 4, 0.048}, {"E", 8, 0.063}, {"F", 2, 0.0425}};
static const int sizes[5] = {2, 4, 8, 16, 32};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void write_input(const char *path, unsigned nodes)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    berth_rng rng;
    berth_rng_seed(&rng, 18);
    fprintf(f, "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\n"
               "spec:\n  template:\n    spec:\n      requirements:\n"
               "      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}\n"
               "  disruption:\n    consolidationPolicy: WhenEmptyOrUnderutilized\n"
               "    consolidateAfter: 30s\n    budgets: [{nodes: \"10%%\"}]\n");
    for (int fa = 0; fa < 3; fa++)
        for (int s = 0; s < 5; s++) {
            fprintf(f, "---\napiVersion: berth.io/v1\nkind: InstanceType\n"
                       "metadata: {name: Standard_%s%ds_v5}\nspec:\n"
                       "  capacity: {cpu: \"%d\", memory: %dGi, pods: 110}\n  offerings:\n",
                    families[fa].family, sizes[s], sizes[s], sizes[s] * families[fa].gib_per_cpu);
            for (int z = 0; z < 3; z++)
                fprintf(f, "  - {zone: %s, capacityType: on-demand, price: %.4f}\n", zones[z],
                        sizes[s] * families[fa].price_per_cpu * (1 + 0.01 * z));
        }
    /* per node: family, size index, zone */
    unsigned char *fam = malloc(nodes), *sz = malloc(nodes), *zn = malloc(nodes);
    if (!fam || !sz || !zn) {
        fprintf(stderr, "bench_disrupt_cli: out of memory\n");
        exit(1);
    }
    for (unsigned i = 0; i < nodes; i++) {
        fam[i] = (unsigned char)berth_rng_below(&rng, 3);
        sz[i] = (unsigned char)(1 + berth_rng_below(&rng, 3)); /* 4, 8 or 16 cpu */
        zn[i] = (unsigned char)berth_rng_below(&rng, 3);
    }
    fprintf(f, "---\napiVersion: karpenter.sh/v1\nkind: NodeClaimList\n"
               "metadata: {resourceVersion: \"91\"}\nitems:\n");
    for (unsigned i = 0; i < nodes; i++)
        fprintf(f, "- apiVersion: karpenter.sh/v1\n  kind: NodeClaim\n  metadata:\n"
                   "    name: default-%06u\n    creationTimestamp: \"2024-04-20T00:00:00Z\"\n"
                   "    labels: {karpenter.sh/nodepool: default, "
                   "node.kubernetes.io/instance-type: Standard_%s%ds_v5, "
                   "topology.kubernetes.io/zone: %s, karpenter.sh/capacity-type: on-demand}\n"
                   "    managedFields: [{manager: karpenter, operation: Update, "
                   "apiVersion: karpenter.sh/v1}]\n"
                   "  status:\n    nodeName: aks-default-%06u\n    conditions:\n"
                   "    - {type: Initialized, status: \"True\", "
                   "lastTransitionTime: \"2024-04-20T00:05:00Z\"}\n",
                i, families[fam[i]].family, sizes[sz[i]], zones[zn[i]], i);
    fprintf(f, "---\napiVersion: v1\nkind: NodeList\nmetadata: {resourceVersion: \"92\"}\n"
               "items:\n");
    for (unsigned i = 0; i < nodes; i++) {
        int cpu = sizes[sz[i]], mem = cpu * families[fam[i]].gib_per_cpu;
        fprintf(f, "- metadata:\n    name: aks-default-%06u\n    labels: {karpenter.sh/nodepool: "
                   "default, karpenter.sh/initialized: \"true\", "
                   "node.kubernetes.io/instance-type: Standard_%s%ds_v5, "
                   "topology.kubernetes.io/zone: %s, karpenter.sh/capacity-type: on-demand, "
                   "kubernetes.io/hostname: aks-default-%06u}\n"
                   "    managedFields: [{manager: kubelet, operation: Update, apiVersion: v1}]\n"
                   "  spec: {providerID: \"azure:///vm/%06u\"}\n"
                   "  status:\n    capacity: {cpu: \"%d\", memory: %dGi, pods: \"110\"}\n"
                   "    allocatable: {cpu: %dm, memory: %dMi, pods: \"110\"}\n"
                   "    conditions: [{type: Ready, status: \"True\"}]\n",
                i, families[fam[i]].family, cpu, zones[zn[i]], i, i, cpu, mem, cpu * 1000 - 140,
                mem * 1024 - 1500);
    }
    fprintf(f, "---\napiVersion: v1\nkind: PodList\nmetadata: {resourceVersion: \"93\"}\n"
               "items:\n");
    for (unsigned i = 0; i < nodes; i++) {
        int cpu = sizes[sz[i]] * 1000;
        int target = cpu / 4 + (int)berth_rng_below(&rng, (uint64_t)cpu / 2); /* 25-75 % */
        for (unsigned j = 0; j < 3; j++) {
            unsigned app = (i * 3 + j) % 200;
            int req = target / 3;
            fprintf(f, "- metadata:\n    name: app%u-%06u-%u\n    namespace: ns%u\n"
                       "    labels: {app: app%u}\n    creationTimestamp: \"2024-04-21T00:00:00Z\"\n"
                       "    ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, "
                       "name: app%u-5d8f, uid: u%u, controller: true}]\n"
                       "  spec:\n    nodeName: aks-default-%06u\n"
                       "    containers: [{name: app, image: app:1, resources: {requests: "
                       "{cpu: %dm, memory: %dMi}}}]\n"
                       "  status: {phase: Running, conditions: [{type: Ready, status: \"True\"}]}\n",
                    app, i, j, app % 20, app, app, app, i, req,
                    req * families[fam[i]].gib_per_cpu / 2);
        }
    }
    free(fam);
    free(sz);
    free(zn);
    if (fclose(f)) {
        perror(path);
        exit(1);
    }
}

/* One run of the binary on path: CPU seconds of the child (user + sys). */
static double run(const char *berth, const char *path, double *wall)
{
    double t0 = now_s();
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(1);
    }
    if (!pid) {
        int dn = open("/dev/null", O_WRONLY);
        if (dn >= 0) {
            dup2(dn, 1);
            close(dn);
        }
        execl(berth, berth, "disrupt", "plan", path, "--at", "2024-05-01T12:00:00Z", "-q",
              (char *)NULL);
        perror(berth);
        _exit(127);
    }
    int st = 0;
    struct rusage ru;
    if (wait4(pid, &st, 0, &ru) != pid || !WIFEXITED(st) || WEXITSTATUS(st) > 1) {
        fprintf(stderr, "bench_disrupt_cli: %s disrupt plan %s failed (status %d)\n", berth, path,
                st);
        exit(1);
    }
    *wall = now_s() - t0;
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec * 1e-6;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void input_path(char *path, size_t len, unsigned nodes)
{
    snprintf(path, len, "/tmp/berth-bench-disrupt-cli-%u-%d.yaml", nodes, (int)getpid());
}

static void done_with(const char *path)
{
    if (!getenv("BENCH_DISRUPT_CLI_KEEP"))
        remove(path);
    else
        fprintf(stderr, "bench_disrupt_cli: kept %s\n", path);
}

/* median CPU seconds of n runs (cpu sorted in place); wall to stderr */
static double report(unsigned nodes, double *cpu, double *wall, int n)
{
    qsort(cpu, (size_t)n, sizeof *cpu, cmp_d);
    qsort(wall, (size_t)n, sizeof *wall, cmp_d);
    fprintf(stderr, "bench_disrupt_cli: %u nodes: median %.3f s CPU, %.3f s wall (%d runs)\n",
            nodes, cpu[n / 2], wall[n / 2], n);
    return cpu[n / 2];
}

/* one size alone, 3 runs (BENCH_DISRUPT_CLI_SIZES) */
static double measure(const char *berth, unsigned nodes)
{
    char path[128];
    input_path(path, sizeof path, nodes);
    write_input(path, nodes);
    double cpu[3], wall[3];
    for (int r = 0; r < 3; r++)
        cpu[r] = run(berth, path, &wall[r]);
    done_with(path);
    return report(nodes, cpu, wall, 3);
}

#define PAIR_ROUNDS 5

/* The 10k and 50k figures: both inputs written first, then PAIR_ROUNDS
 * rounds of one 10k run and one 50k run, so that a slower spell of a
 * shared machine falls on both sizes alike instead of on whichever was
 * measured then; the figures are the medians. */
static void measure_pair(const char *berth, double *t10, double *t50)
{
    char p10[128], p50[128];
    input_path(p10, sizeof p10, 10000);
    input_path(p50, sizeof p50, 50000);
    write_input(p10, 10000);
    write_input(p50, 50000);
    double c10[PAIR_ROUNDS], w10[PAIR_ROUNDS], c50[PAIR_ROUNDS], w50[PAIR_ROUNDS];
    for (int r = 0; r < PAIR_ROUNDS; r++) {
        c10[r] = run(berth, p10, &w10[r]);
        c50[r] = run(berth, p50, &w50[r]);
        fprintf(stderr, "bench_disrupt_cli: round %d: 10k %.3f s, 50k %.3f s CPU (%.2fx)\n", r,
                c10[r], c50[r], c50[r] / c10[r]);
    }
    done_with(p10);
    done_with(p50);
    *t10 = report(10000, c10, w10, PAIR_ROUNDS);
    *t50 = report(50000, c50, w50, PAIR_ROUNDS);
}

int main(void)
{
    const char *berth = getenv("BERTH");
    if (!berth || !*berth)
        berth = "build/bench-build/berth";
    if (access(berth, X_OK)) {
        fprintf(stderr, "bench_disrupt_cli: no binary %s (set BERTH)\n", berth);
        return 1;
    }
    const char *sizes_env = getenv("BENCH_DISRUPT_CLI_SIZES");
    if (sizes_env && *sizes_env) {
        for (const char *s = sizes_env; *s;) {
            char *end;
            unsigned long n = strtoul(s, &end, 10);
            if (end == s)
                break;
            double t = measure(berth, (unsigned)n);
            printf("BENCH disrupt.cli_seconds.%lu %.3f s\n", n, t);
            s = end;
        }
        return 0;
    }
    double t10, t50;
    measure_pair(berth, &t10, &t50);
    printf("BENCH disrupt.cli_seconds.10k %.3f s\n", t10);
    printf("BENCH disrupt.cli_seconds.50k %.3f s\n", t50);
    printf("BENCH disrupt.cli_seconds.50k_over_10k %.2f x\n", t10 > 0 ? t50 / t10 : 0);
    return 0;
}
