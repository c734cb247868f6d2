/* core/instance_overhead.c - node overhead of an InstanceType: what a node of
 * the type keeps for itself (VM memory, kube-reserved, system-reserved,
 * the kubelet's eviction threshold) and the allocatable left for pods,
 * with each provider's formula (docs/disrupt.md "Node overhead"):
 *
 * - AWS (aws/karpenter-provider-aws pkg/providers/instancetype/types.go:
 *   memory() with VMMemoryOverheadPercent 0.075, pods() / ENILimitedPods,
 *   kubeReservedResources, evictionThreshold);
 * - Azure / AKS (the AKS "node resource reservations" rules for 1.29+,
 *   Azure/karpenter-provider-azure pkg/providers/instancetype
 *   KubeReservedResources for the CPU brackets);
 * - none: only what the InstanceType states.
 *
 * The arithmetic follows upstream's (float64 where upstream uses it, so
 * the roundings agree). */
#include "berth/instance.h"

#include <ctype.h>
#include <math.h>
#include <string.h>
#include <strings.h>

#define MIB (1024LL * 1024)

const char *berth_provider_name(berth_provider p)
{
    switch (p) {
    case BERTH_PROVIDER_AWS: return "aws";
    case BERTH_PROVIDER_AZURE: return "azure";
    case BERTH_PROVIDER_NONE: break;
    }
    return "none";
}

/* AWS names: <family>.<size>, the family as upstream's instanceTypeScheme
 * reads it (letters, an optional "-<n>tb", digits, then anything), the
 * size one of EC2's: nano, micro, small, medium, large, [N]xlarge,
 * metal[-Nxl]. */
static int aws_name(const char *s)
{
    const char *p = s;
    if (!islower((unsigned char)*p))
        return 0;
    while (islower((unsigned char)*p))
        p++;
    if (*p == '-') { /* u-6tb1 */
        p++;
        if (!isdigit((unsigned char)*p))
            return 0;
        while (isdigit((unsigned char)*p))
            p++;
        if (strncmp(p, "tb", 2))
            return 0;
        p += 2;
    }
    if (!isdigit((unsigned char)*p))
        return 0;
    while (islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '-')
        p++;
    if (*p != '.')
        return 0;
    const char *z = p + 1;
    static const char *const fixed[] = {"nano", "micro", "small", "medium", "large", "metal", NULL};
    for (int i = 0; fixed[i]; i++)
        if (!strcmp(z, fixed[i]))
            return 1;
    if (!strncmp(z, "metal-", 6)) {
        z += 6;
        if (!isdigit((unsigned char)*z))
            return 0;
        while (isdigit((unsigned char)*z))
            z++;
        return !strcmp(z, "xl");
    }
    while (isdigit((unsigned char)*z))
        z++;
    return !strcmp(z, "xlarge");
}

berth_provider berth_instance_provider_of_name(const char *name)
{
    if (!name)
        return BERTH_PROVIDER_NONE;
    if (!strncasecmp(name, "Standard_", 9) && name[9])
        return BERTH_PROVIDER_AZURE;
    return aws_name(name) ? BERTH_PROVIDER_AWS : BERTH_PROVIDER_NONE;
}

/* kubeReservedResources' CPU: 6 % of the first core, 1 % of the second,
 * 0.5 % of the next two, 0.25 % of the rest, each range truncated to a
 * millicore as upstream's int64(r * percentage). */
static int64_t aws_cpu_reserved(int64_t milli)
{
    static const struct { int64_t start, end; double pct; } r[4] = {
        {0, 1000, 0.06}, {1000, 2000, 0.01}, {2000, 4000, 0.005}, {4000, 1LL << 31, 0.0025}};
    int64_t sum = 0;
    for (int i = 0; i < 4; i++)
        if (milli >= r[i].start) {
            int64_t span = milli < r[i].end ? milli - r[i].start : r[i].end - r[i].start;
            sum += (int64_t)((double)span * r[i].pct);
        }
    return sum;
}

/* The AKS CPU reservation (60m for 1 core, 100m for 2, 140m for 4, 180m
 * for 8, ...): 6 % of the first core, 4 % of the second, 2 % of the next
 * two, 1 % of the rest; upstream's TaxBrackets.Calculate over vCPUs, then
 * int64(1000 * tax). */
static int64_t azure_cpu_reserved(int64_t milli)
{
    static const struct { double upper, rate; } b[4] = {
        {1, .06}, {2, .04}, {4, .02}, {HUGE_VAL, .01}};
    double cores = (double)milli / 1000.0, tax = 0, lower = 0;
    for (int i = 0; i < 4; i++) {
        if (lower > cores)
            continue;
        double upper = b[i].upper > cores ? cores : b[i].upper;
        tax += (upper - lower) * b[i].rate;
        lower = b[i].upper;
    }
    return (int64_t)(1000 * tax);
}

void berth_instance_type_allocatable(berth_instance_type *t)
{
    int64_t eni_pods = -1;
    if (t->enis > 0 && t->ipv4_per_eni > 0)
        eni_pods = t->enis * (t->ipv4_per_eni - 1) + 2;
    int64_t pods = t->max_pods >= 0 ? t->max_pods : t->capacity_pods;
    int64_t kr_cpu = 0, kr_mem = 0, evict = 0, vm = 0;
    switch (t->provider) {
    case BERTH_PROVIDER_AWS: {
        if (t->max_pods < 0 && eni_pods >= 0)
            pods = eni_pods;
        /* memory(): the hypervisor keeps 7.5 %, rounded up to a MiB */
        vm = (int64_t)ceil((double)t->capacity_memory * 0.075 / 1024 / 1024) * MIB;
        /* kubeReservedResources: 11 MiB per pod (the ENI-limited count when
         * known, as the AL2 / AL2023 families do) + 255 MiB */
        kr_mem = (11 * (eni_pods >= 0 ? eni_pods : pods) + 255) * MIB;
        kr_cpu = aws_cpu_reserved(t->capacity_cpu);
        evict = 100 * MIB; /* evictionThreshold: memory.available 100Mi */
        break;
    }
    case BERTH_PROVIDER_AZURE: {
        /* AKS 1.29+: the lesser of 20 MiB per max pod + 50 MiB and 25 % of
         * the memory; memory.available < 100Mi */
        int64_t by_pods = (20 * pods + 50) * MIB, quarter = t->capacity_memory / 4;
        kr_mem = by_pods < quarter ? by_pods : quarter;
        kr_cpu = azure_cpu_reserved(t->capacity_cpu);
        evict = 100 * MIB;
        break;
    }
    case BERTH_PROVIDER_NONE:
        break;
    }
    if (t->kube_reserved[0] >= 0)
        kr_cpu = t->kube_reserved[0];
    if (t->kube_reserved[1] >= 0)
        kr_mem = t->kube_reserved[1];
    if (t->eviction_memory >= 0)
        evict = t->eviction_memory;
    t->kube_reserved[0] = kr_cpu;
    t->kube_reserved[1] = kr_mem;
    t->eviction_memory = evict;
    t->vm_overhead_memory = vm;
    int64_t cpu = t->capacity_cpu - kr_cpu - t->system_reserved[0];
    int64_t mem = t->capacity_memory - vm - kr_mem - t->system_reserved[1] - evict;
    t->cpu = cpu > 0 ? cpu : 0;
    t->memory = mem > 0 ? mem : 0;
    t->pods = pods > 0 ? pods : 0;
}
