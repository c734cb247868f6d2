/* bench/two_types.h - the estate the autoscale simulate and replacement
 * benches share, written as YAML into an sbuf (sbuf.h): one virtual node
 * group "general" of m5.large and m5.xlarge (on-demand and spot offerings
 * in two zones), a PodDisruptionBudget on app=web, and nnodes nodes named
 * n-00000.., each with a DaemonSet pod and 0-6 workload pods (app api or
 * web, 100-400m cpu, 512Mi). The simulate bench's nodes are all spot and
 * its pods carry the grace periods the API server writes; the replacement
 * bench's group wants 100 % spot while about half of its nodes are
 * on-demand. Header-only, one copy per bench program. */
#ifndef BERTH_BENCH_TWO_TYPES_H
#define BERTH_BENCH_TWO_TYPES_H

#include <stdint.h>

#include "berth/random.h"
#include "sbuf.h"

enum { TWO_TYPES_SIMULATE, TWO_TYPES_REPLACE };

static void two_types_estate(sbuf *b, uint32_t nnodes, uint64_t seed, int shape)
{
    static const char *const types[2][4] = {{"m5.large", "2", "8Gi", "29"},
                                            {"m5.xlarge", "4", "16Gi", "58"}};
    static const char *const zones[2] = {"us-east-1a", "us-east-1b"};
    static const int graces[4] = {10, 30, 60, 600};
    int sim = shape == TWO_TYPES_SIMULATE;
    berth_rng r;
    berth_rng_seed(&r, seed);
    put(b, "apiVersion: berth.io/v1\nkind: VirtualNodeGroup\nmetadata: {name: general}\n"
           "spec: {instanceTypes: [m5.large, m5.xlarge]%s}\n", sim ? "" : ", spotPercentage: 100");
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
        const char *ct = sim || !berth_rng_below(&r, 2) ? "spot" : "on-demand";
        put(b, "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: n-%05u\n  labels: "
               "{berth.io/virtual-node-group: general, node.kubernetes.io/instance-type: %s, "
               "topology.kubernetes.io/zone: %s, karpenter.sh/capacity-type: %s, "
               "kubernetes.io/hostname: n-%05u}\nstatus: {allocatable: {cpu: \"%s\", memory: %s, "
               "pods: \"%s\"}}\n",
            i, types[t][0], zones[i % 2], ct, i, types[t][1], types[t][2], types[t][3]);
        put(b, "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: agent-%05u\n  namespace: "
               "kube-system\n  ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: "
               "agent, uid: 6a1e0000-0000-4000-8000-000000000001, controller: true}]\nspec:\n"
               "  nodeName: n-%05u\n%s  containers: [{name: c, resources: {requests: {cpu: 50m, "
               "memory: 64Mi}}}]\n",
            i, i, sim ? "  terminationGracePeriodSeconds: 5\n" : "");
        uint32_t np = (uint32_t)berth_rng_below(&r, 7);
        for (uint32_t j = 0; j < np; j++) {
            /* (the draws one by one: their order is the bench's) */
            const char *app = berth_rng_below(&r, 3) ? "api" : "web";
            int grace = sim ? graces[berth_rng_below(&r, 4)] : 0;
            int cpu = 100 << berth_rng_below(&r, 3);
            put(b, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p-%05u-%u, namespace: "
                   "default, labels: {app: %s}}\nspec:\n  nodeName: n-%05u\n",
                i, j, app, i);
            if (sim)
                put(b, "  terminationGracePeriodSeconds: %d\n", grace);
            put(b, "  containers: [{name: c, resources: {requests: {cpu: %dm, memory: "
                   "512Mi}}}]\n", cpu);
        }
    }
}

#endif
