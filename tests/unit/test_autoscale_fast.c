/* tests/unit/test_autoscale_fast.c - the autoscaler's fast path against
 * the plain algorithm (berth_aplan_options.reference): 600 small
 * random estates (instance types with offerings in up to three zones, some
 * unavailable; groups with labels, taints, type and zone subsets,
 * maxNodes, spotPercentage, headroom; reservations; existing nodes with
 * bound pods; pending pods with selectors, zone affinity, tolerations and
 * GPU requests; DaemonSets taking room on new nodes, some with pods pending)
 * must give the same plan, compared as the SPEC 6.3 JSON; some with spot
 * interruption notices, a roll or nodes not Ready (every replacement reason);
 * every fifth in cluster-autoscaler mode, half the nodes annotated unneeded
 * for an hour. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "autoscale_fixture.h"
#include "berth/autoscale.h"
#include "berth/plan_report.h"
#include "berth/random.h"

static unsigned below(berth_rng *r, unsigned n)
{
    return (unsigned)berth_rng_below(r, n);
}

/* Writes a random estate into b; *nnodes gets its existing nodes
 * (node-0 ..) and *ngroups its groups (g0 ..). */
static void estate(buf *b, berth_rng *r, unsigned *nnodes_out, unsigned *ngroups_out,
                   int no_pending)
{
    static const char *const zones[] = {"z1", "z2", "z3"};
    static const char *const cts[] = {"on-demand", "spot", "reserved"};
    unsigned ntypes = 2 + below(r, 6), ngroups = 1 + below(r, 4);
    for (unsigned t = 0; t < ntypes; t++) {
        unsigned cpu = 1u << (1 + below(r, 4)), gpu = below(r, 5) == 0 ? 1 + below(r, 2) : 0;
        add(b, "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: f%u.t%u}\n"
               "spec:\n  capacity: {cpu: \"%u\", memory: %uGi, pods: %u%s", t % 3, t, cpu,
            cpu * (2 + 2 * below(r, 3)), 4 + below(r, 30), gpu ? ", nvidia.com/gpu: " : "");
        if (gpu)
            add(b, "%u", gpu);
        add(b, "}\n  offerings:\n");
        for (unsigned z = 0; z < 3; z++)
            for (unsigned c = 0; c < 3; c++)
                if (below(r, 3))
                    add(b, "  - {zone: %s, capacityType: %s, price: %.3f, available: %s, "
                           "interruptionRate: %.2f}\n", zones[z], cts[c],
                        0.01 * cpu * (c == 1 ? 0.3 + 0.1 * below(r, 4) : 1.0) + 0.001 * below(r, 5),
                        below(r, 6) ? "true" : "false", 0.05 * below(r, 4));
    }
    for (unsigned g = 0; g < ngroups; g++) {
        add(b, "---\napiVersion: berth.io/v1\nkind: VirtualNodeGroup\nmetadata: {name: g%u}\n"
               "spec:\n  minNodes: 0\n", g);
        if (g)
            add(b, "  labels: {team: t%u}\n", g);
        if (g && below(r, 3) == 0)
            add(b, "  taints: [{key: dedicated, value: t%u, effect: NoSchedule}]\n", g);
        if (below(r, 2)) {
            add(b, "  instanceTypes: [f0.t0");
            for (unsigned t = 1; t < ntypes; t++)
                if (below(r, 2))
                    add(b, ", f%u.t%u", t % 3, t);
            add(b, "]\n");
        }
        if (below(r, 3) == 0)
            add(b, "  zones: [z1%s]\n", below(r, 2) ? ", z2" : "");
        if (below(r, 4) == 0)
            add(b, "  maxNodes: %u\n", 1 + below(r, 4));
        if (below(r, 3) == 0)
            add(b, "  spotPercentage: %u\n", 25 * below(r, 5));
        if (below(r, 4) == 0)
            add(b, "  fallbackToOd: false\n");
        if (below(r, 5) == 0)
            add(b, "  headroom: [{cpuPerUnit: 500m, memoryPerUnit: 512Mi, numOfUnits: %u}]\n",
                1 + below(r, 6));
    }
    if (below(r, 3) == 0)
        add(b, "---\napiVersion: berth.io/v1\nkind: Reservation\nmetadata: {name: ri}\n"
               "spec: {instanceFamily: f%u, count: %u}\n", below(r, 3), 1 + below(r, 3));
    unsigned nnodes = below(r, 10), npods = 0;
    *nnodes_out = nnodes;
    *ngroups_out = ngroups;
    if (below(r, 3) == 0)
        add(b, "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: pdb, "
               "namespace: default}\nspec: {maxUnavailable: %u, selector: {matchLabels: {app: "
               "a0}}}\n", below(r, 2));
    for (unsigned n = 0; n < nnodes; n++) {
        unsigned g = below(r, ngroups), t = below(r, ntypes);
        add(b, "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: node-%u\n%s  labels: {"
               "berth.io/virtual-node-group: g%u, node.kubernetes.io/instance-type: f%u.t%u, "
               "topology.kubernetes.io/zone: z%u, karpenter.sh/capacity-type: %s, "
               "kubernetes.io/hostname: node-%u%s",
            n, below(r, 2) ? "  annotations: {berth.io/unneeded-since: \"2024-05-01T11:00:00Z\"}\n"
                           : "",
            g, t % 3, t, 1 + below(r, 3), below(r, 2) ? "spot" : "on-demand", n,
            g ? ", team: t" : "");
        if (g)
            add(b, "%u", g);
        add(b, "}\nstatus: {allocatable: {cpu: \"%u\", memory: 8Gi, pods: \"20\"}",
            2 + below(r, 4));
        if (below(r, 8) == 0) /* not Ready for an hour: auto-heal */
            add(b, ", conditions: [{type: Ready, status: \"False\", lastTransitionTime: "
                   "\"2024-05-01T11:00:00Z\"}]");
        add(b, "}\n");
        for (unsigned k = below(r, 4); k > 0; k--) {
            /* some with a priority or a creation time (the queue order) */
            unsigned q = below(r, 6);
            add(b, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: b%u, namespace: default, "
                   "labels: {app: a%u}", npods++, below(r, 3));
            if (q == 0)
                add(b, ", creationTimestamp: \"2024-04-0%uT00:00:00Z\"", 1 + below(r, 3));
            /* most replicated (cluster-autoscaler drains only those) */
            if (below(r, 5))
                add(b, ", ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: rs, "
                       "uid: u2, controller: true}]");
            add(b, "}\nspec:\n  nodeName: node-%u\n  tolerations: [{operator: Exists}]\n", n);
            /* some with pod anti-affinity or a spread constraint: the fit
             * index leaves them (and the pods their terms count) to the
             * what-if session, between pods it answers itself */
            if (q == 2 && n % 2)
                add(b, "  affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                       "[{labelSelector: {matchLabels: {app: a%u}}, topologyKey: "
                       "kubernetes.io/hostname}]}}\n", n % 3);
            else if (q == 2)
                add(b, "  topologySpreadConstraints: [{maxSkew: 1, topologyKey: "
                       "topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, "
                       "labelSelector: {matchLabels: {app: a%u}}}]\n", n % 3);
            if (q == 1)
                add(b, "  priority: %u\n", below(r, 3) * 100);
            add(b, "  containers: [{name: c, resources: {requests: {cpu: %um, memory: %uMi}}}]\n",
                100 * (1 + below(r, 10)), 128 * (1 + below(r, 8)));
        }
        if (below(r, 3) == 0)
            add(b, "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: ds%u\n  namespace: default\n"
                   "  ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: agent, uid: u1, "
                   "controller: true}]\nspec:\n  nodeName: node-%u\n  tolerations: [{operator: "
                   "Exists}]\n  containers: [{name: c, resources: {requests: {cpu: 50m}}}]\n",
                npods++, n);
    }
    int shapes = below(r, 2);
    for (unsigned p = below(r, 60); p > 0 && !no_pending; p--) {
        unsigned g = below(r, ngroups + 1);
        add(b, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p%u, namespace: default}\n"
               "spec:\n", npods++);
        if (g && g < ngroups)
            add(b, "  nodeSelector: {team: t%u}\n", g);
        if (below(r, 3) == 0)
            add(b, "  tolerations: [{key: dedicated, operator: Exists}]\n");
        unsigned aff = below(r, 8);
        if (aff < 2)
            add(b, "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                   "{nodeSelectorTerms: [{matchExpressions: [{key: topology.kubernetes.io/zone, "
                   "operator: In, values: [z%u]}]}]}}}\n", 1 + below(r, 3));
        else if (aff == 2)
            add(b, "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                   "{nodeSelectorTerms: [{matchExpressions: [{key: karpenter.sh/capacity-type, "
                   "operator: In, values: [on-demand]}]}]}}}\n");
        unsigned gpu = below(r, 10) == 0;
        /* few shapes (runs of equal pods, equal FFD weights) or any */
        unsigned cpu = shapes ? 250u << below(r, 3) : 250 * (1 + below(r, 12));
        unsigned mem = shapes ? 256u << below(r, 3) : 256 * (1 + below(r, 16));
        add(b, "  containers: [{name: c, resources: {requests: {cpu: %um, memory: %uMi%s}%s}}]\n",
            cpu, mem, gpu ? ", nvidia.com/gpu: 1" : "", gpu ? ", limits: {nvidia.com/gpu: 1}" : "");
    }
    /* a DaemonSet (the owner of the ds pods above) taking room on new nodes,
     * maybe only on spot nodes or one team's, maybe tolerating the taints;
     * its pods for existing nodes without one are pending */
    if (below(r, 3) == 0) {
        unsigned sel = below(r, 4);
        add(b, "---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent, namespace: "
               "default, uid: u1}\nspec:\n  selector: {matchLabels: {app: agent}}\n  template:\n"
               "    metadata: {labels: {app: agent}}\n    spec:\n");
        if (sel == 1)
            add(b, "      nodeSelector: {karpenter.sh/capacity-type: spot}\n");
        else if (sel == 2)
            add(b, "      nodeSelector: {team: t1}\n");
        if (below(r, 2))
            add(b, "      tolerations: [{operator: Exists}]\n");
        add(b, "      containers: [{name: c, resources: {requests: {cpu: %um, memory: %uMi}}}]\n",
            100 * (1 + below(r, 8)), 128 * (1 + below(r, 4)));
    }
}

static char *plan_json(buf *b, berth_aplan_options o, int reference, int *rc)
{
    o.reference = reference;
    return plan_json_opt(b, o, rc, NULL);
}

static void test_fast_equals_reference(void **st)
{
    (void)st;
    static buf b;
    unsigned nonempty = 0, downs = 0, blocked = 0, reasons[5] = {0}, ca_downs = 0, ca_blocked = 0,
             ca_unneeded = 0;
    static const char *const rnames[5] = {"\"SpotInterruption\"", "\"AutoHeal\"", "\"Roll\"",
                                          "\"RevertToReserved\"", "\"RevertToSpot\""};
    for (uint64_t seed = 1; seed <= 600; seed++) {
        berth_rng r;
        berth_rng_seed(&r, seed);
        b.n = 0;
        unsigned nnodes, ngroups;
        /* every fifth in cluster-autoscaler mode, every tenth without
         * pending pods (its scale-down waits while a pass scales up) */
        int ca = seed % 5 == 3;
        estate(&b, &r, &nnodes, &ngroups, ca && seed % 10 == 3);
        /* replacements on demand: spot interruption notices for one or two
         * nodes, a roll of a group's first half */
        berth_aplan_options o = {0};
        char names[2][16], group[8];
        const char *list[2];
        if (nnodes && seed % 3 == 1) {
            for (unsigned i = 0; i < 2; i++) {
                snprintf(names[i], sizeof names[i], "node-%u", below(&r, nnodes));
                list[i] = names[i];
            }
            o.interrupt = list;
            o.ninterrupt = 1 + below(&r, 2);
        }
        if (seed % 4 == 2) {
            snprintf(group, sizeof group, "g%u", below(&r, ngroups));
            o.roll = group;
            o.roll_percent = 50;
        }
        /* cluster-autoscaler mode: its scale-down asks the same session;
         * half the nodes are unneeded for an hour */
        if (ca) {
            o.policy = BERTH_POLICY_CLUSTER_AUTOSCALER;
            o.interrupt = NULL;
            o.ninterrupt = 0;
            o.roll = NULL;
        }
        int rc1 = 0, rc2 = 0;
        char *ref = plan_json(&b, o, 1, &rc1), *fast = plan_json(&b, o, 0, &rc2);
        assert_int_equal(rc1, 0);
        assert_int_equal(rc2, 0);
        if (strcmp(ref, fast))
            fail_msg("seed %llu: plans differ\nreference: %s\nfast:      %s\n",
                     (unsigned long long)seed, ref, fast);
        nonempty += strstr(ref, "\"instanceType\"") != NULL;
        downs += strstr(ref, "\"moves\"") != NULL;
        blocked += strstr(ref, "fits no other node") != NULL;
        if (o.policy == BERTH_POLICY_CLUSTER_AUTOSCALER) {
            ca_downs += strstr(ref, "\"moves\"") != NULL;
            ca_blocked += strstr(ref, "fits no other node") != NULL;
            ca_unneeded += strstr(ref, "cluster-autoscaler removes it after") != NULL;
        }
        for (int i = 0; i < 5; i++)
            reasons[i] += strstr(ref, rnames[i]) != NULL;
        free(ref);
        free(fast);
    }
    /* the estates do scale up, scale down, and keep nodes whose pods fit nowhere */
    if (nonempty < 100 || downs < 30 || blocked < 30)
        fail_msg("coverage: %u scale-ups, %u scale-downs, %u blocked", nonempty, downs, blocked);
    /* cluster-autoscaler mode removes nodes, keeps some whose pods fit
     * nowhere else and some not unneeded long enough (both after the
     * what-if question: rolled back) */
    if (ca_downs < 20 || ca_blocked < 4 || ca_unneeded < 20)
        fail_msg("coverage: cluster-autoscaler mode: %u scale-downs, %u unfit, %u not unneeded",
                 ca_downs, ca_blocked, ca_unneeded);
    /* and replace nodes for every reason */
    for (int i = 0; i < 5; i++)
        if (reasons[i] < 10)
            fail_msg("coverage: %u plans replace for %s", reasons[i], rnames[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fast_equals_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
