/* bench/bench_crosslayer.c - `simulate --workloads` at scale (issue 17):
 * the seed site scaled to 100 racks x 16 machines, 50 NKS clusters (3
 * control-plane and 40 worker VMs each) and 100,000 pods (per cluster 20
 * Deployments of 100 replicas with a PDB each, and a DaemonSet), then a
 * full rack-by-rack runtime upgrade: every batch drains the nodes of the
 * VMs it takes down and reschedules their pods. Prints
 * BENCH crosslayer.upgrade_seconds (the timeline with the kube view:
 * placement of the VMs, each cluster's session and first scheduling, the
 * upgrade's drains; median of 3 runs, wall clock, and its CPU time as
 * crosslayer.upgrade_cpu_seconds) and crosslayer.load_seconds (reading
 * and expanding the Kubernetes objects). Target: upgrade under 10 s on 2
 * cores. Then once BENCH crosslayer.upgrade_seconds.karpenter: the same
 * estate with pods of 230m (the clusters ~95 % full, so batches leave pods
 * pending) and `--autoscaler karpenter` (one NodePool, two instance
 * types): every phase with pending pods asks the disruption planner's
 * new-capacity path (one run, wall clock, and its CPU time as
 * crosslayer.upgrade_cpu_seconds.karpenter; target under 20 s). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "berth/crosslayer.h"

#define RACKS 100
#define PER_RACK 16
#define CLUSTERS 50
#define WORKERS 40
#define DEPLOYMENTS 20
#define REPLICAS 100

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static char *site_text(size_t *len)
{
    char *s = NULL;
    FILE *f = open_memstream(&s, len);
    if (!f)
        return NULL;
    fprintf(f, "apiVersion: berth.io/v1\nkind: Site\nmetadata: {name: big}\nspec:\n  racks: %d\n"
               "  machinesPerRack: %d\n  machine:\n    numaCells: 2\n    cell: {cpu: 48, memory: 224Gi}\n",
            RACKS, PER_RACK);
    for (int c = 0; c < CLUSTERS; c++)
        fprintf(f, "---\napiVersion: networkcloud.azure.com/v1\nkind: KubernetesCluster\n"
                   "metadata: {name: c%02d}\nspec:\n  controlPlaneNodeConfiguration: {count: 3, "
                   "vmSkuName: NC_G12_56_v1}\n  initialAgentPoolConfigurations:\n  - {name: w, "
                   "count: %d, vmSkuName: NC_G12_56_v1}\n",
                c, WORKERS);
    fprintf(f, "---\napiVersion: berth.io/v1\nkind: Operation\nmetadata: {name: upgrade}\n"
               "spec: {action: runtime-upgrade, updateStrategy: {maxUnavailable: 8}}\n");
    fclose(f);
    return s;
}

static const char KARPENTER[] =
    "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: burst}\nspec:\n  template:\n"
    "    spec:\n      expireAfter: Never\n      requirements: [{key: karpenter.sh/capacity-type, "
    "operator: In, values: [on-demand]}]\n"
    "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: Standard_D4s_v3}\n"
    "spec: {capacity: {cpu: \"4\", memory: 16Gi, pods: 110}, offerings: [{zone: z1, "
    "capacityType: on-demand, price: 0.192}]}\n"
    "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: Standard_D16s_v3}\n"
    "spec: {capacity: {cpu: \"16\", memory: 64Gi, pods: 110}, offerings: [{zone: z1, "
    "capacityType: on-demand, price: 0.768}]}\n";

static char *kube_text(int c, int milli, size_t *len)
{
    char *s = NULL;
    FILE *f = open_memstream(&s, len);
    if (!f)
        return NULL;
    fprintf(f, "apiVersion: v1\nkind: NodeList\nitems:\n");
    for (int i = 1; i <= 3; i++)
        fprintf(f, "- metadata: {name: c%02d-control-plane-%d}\n  spec: {taints: [{key: "
                   "node-role.kubernetes.io/control-plane, effect: NoSchedule}]}\n",
                c, i);
    for (int i = 1; i <= WORKERS; i++)
        fprintf(f, "- metadata: {name: c%02d-w-%d}\n", c, i);
    for (int d = 0; d < DEPLOYMENTS; d++)
        fprintf(f, "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app%d, "
                   "namespace: ns, uid: u%d}\nspec:\n  replicas: %d\n  selector: {matchLabels: "
                   "{app: a%d}}\n  template:\n    metadata: {labels: {app: a%d}}\n    spec:\n"
                   "      containers: [{name: m, resources: {requests: {cpu: %dm, memory: 256Mi}}}]\n"
                   "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: p%d, "
                   "namespace: ns}\nspec: {maxUnavailable: 10%%, selector: {matchLabels: {app: a%d}}}\n",
                d, d, REPLICAS, d, d, milli, d, d);
    fprintf(f, "---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent, namespace: "
               "kube-system, uid: uds}\nspec:\n  selector: {matchLabels: {app: agent}}\n  template:\n"
               "    metadata: {labels: {app: agent}}\n    spec:\n      tolerations: [{operator: Exists}]\n"
               "      containers: [{name: m, resources: {requests: {cpu: 50m}}}]\n");
    fclose(f);
    return s;
}

static int run(int karpenter, double *upgrade, double *cpu, double *loadt, uint64_t *moved,
               uint64_t *pods, uint64_t *launched)
{
    berth_nexus nx;
    berth_nexus_init(&nx);
    berth_error e;
    berth_error_clear(&e);
    size_t len;
    char *text = site_text(&len);
    berth_source src;
    if (!text || berth_doc_load_buffer(&nx.arena, "site", text, len, &src, &e) ||
        berth_nexus_load(&nx, &src, 0, &e) || berth_nexus_validate(&nx, &e)) {
        fprintf(stderr, "site: %s\n", e.msg);
        return 1;
    }
    free(text);
    double t0 = now_s();
    berth_xl x;
    berth_xl_init(&x);
    if (karpenter) {
        berth_source as;
        x.autoscaler = BERTH_XL_AUTOSCALER_KARPENTER;
        if (berth_doc_load_buffer(&nx.arena, "karpenter", KARPENTER, sizeof KARPENTER - 1, &as,
                                  &e) ||
            berth_xl_add_autoscaler_source(&x, NULL, &as)) {
            fprintf(stderr, "karpenter: %s\n", e.msg);
            return 1;
        }
    }
    for (int c = 0; c < CLUSTERS; c++) {
        char name[16];
        snprintf(name, sizeof name, "c%02d", c);
        berth_kcluster *k;
        uint32_t idx;
        text = kube_text(c, karpenter ? 230 : 100, &len);
        if (!text || berth_xl_cluster_for(&x, name, &k, &idx) ||
            berth_doc_load_buffer(&k->arena, name, text, len, &src, &e) ||
            berth_kube_load(k, &src, 0, &e) ||
            (karpenter && berth_xl_add_source(&x, idx, &src))) {
            fprintf(stderr, "kube %s: %s\n", name, e.msg);
            return 1;
        }
        free(text);
    }
    if (berth_xl_prepare(&x, &nx, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    double t1 = now_s(), c1 = cpu_s();
    berth_nexus_options opt = {.use_index = 1, .on_step = berth_xl_on_step, .step_ctx = &x};
    int rc = berth_nexus_run(&nx, &opt, &e);
    double t2 = now_s(), c2 = cpu_s();
    if (rc) {
        fprintf(stderr, "run: %d %s\n", rc, e.msg);
        return 1;
    }
    *loadt = t1 - t0;
    *upgrade = t2 - t1;
    *cpu = c2 - c1;
    *moved = *pods = *launched = 0;
    for (uint32_t i = 0; i < x.nphases; i++) {
        *moved += x.phases[i].moved;
        *launched += x.phases[i].launch_nodes;
    }
    for (uint32_t c = 0; c < x.nclusters; c++)
        *pods += berth_xl_kube(&x, c)->npods;
    berth_xl_free(&x);
    berth_nexus_free(&nx);
    return 0;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(void)
{
    double up[3], ld[3], cpu[3];
    uint64_t moved = 0, pods = 0, launched = 0;
    for (int i = 0; i < 3; i++)
        if (run(0, &up[i], &cpu[i], &ld[i], &moved, &pods, &launched))
            return 1;
    qsort(up, 3, sizeof *up, cmp_d);
    qsort(ld, 3, sizeof *ld, cmp_d);
    qsort(cpu, 3, sizeof *cpu, cmp_d);
    fprintf(stderr, "crosslayer: %d racks x %d machines, %d clusters, %llu pods, %llu moved\n",
            RACKS, PER_RACK, CLUSTERS, (unsigned long long)pods, (unsigned long long)moved);
    printf("BENCH crosslayer.upgrade_seconds %.3f s\n", up[1]);
    printf("BENCH crosslayer.upgrade_cpu_seconds %.3f s\n", cpu[1]);
    printf("BENCH crosslayer.load_seconds %.3f s\n", ld[1]);
    fflush(stdout);
    double ku, kc, kl;
    if (run(1, &ku, &kc, &kl, &moved, &pods, &launched))
        return 1;
    fprintf(stderr, "crosslayer karpenter: %llu pods moved, %llu nodes launched over the phases\n",
            (unsigned long long)moved, (unsigned long long)launched);
    printf("BENCH crosslayer.upgrade_seconds.karpenter %.3f s\n", ku);
    printf("BENCH crosslayer.upgrade_cpu_seconds.karpenter %.3f s\n", kc);
    return 0;
}
