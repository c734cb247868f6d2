/* tests/unit/test_autoscale_packing.c - scale-up's packing against the
 * optimum (docs/autoscale.md, "Packing quality"): a property test over
 * tiny random instances (one group, one zone, 2-4 instance types without
 * node overhead, half of the instances with an instanceTypes list, 2-8
 * pending pods; three fixed seeds of 300 instances each, so it is
 * deterministic) whose cheapest set of new nodes a brute force finds
 * (every partition of the pods into nodes, each part on its cheapest
 * allowed type); the plan must stay within the bound of it (3 %
 * on average, 8 % at worst). The same instances with a headroom of 1-6
 * units against a brute force that packs pods and units together (two
 * more seeds; the same bound). The lower bound must never exceed the
 * optimum nor the plan. And the case: eight 2-vCPU nodes where
 * one 16-vCPU node is cheaper; a reservation the packing leaves unused;
 * headroom that fits only one split of the pods (tiers #9). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "berth/random.h"

#include "autoscale_fixture.h"

#define NINST 300
#define MAXP 8
/* issue 18's bound (docs/autoscale.md, "Packing quality"): 3 % above the
 * optimum on average, 8 % at worst (before the improvement step: 0.11 % and
 * 18.5 % on seed 18's instances) */
#define AVG_GAP 0.03
#define WORST_GAP 0.08
/* with headroom (SPEC 5): the bound too. Measured on seeds 18 / 7:
 * worst 0.00 % / 0.00 %, average 0.00 % / 0.00 % with the joint exact
 * repack (hr_joint in src/autoscale/scaleup.c); 24.7 % / 33.3 % worst with
 * the repack that keeps the pods' node types, 41.1 % / 59.2 % with
 * headroom topped up after the packing */
#define HR_WORST_GAP WORST_GAP

typedef struct inst {
    uint32_t ntypes, npods;
    uint32_t allowed;             /* bit t: type t allowed (instanceTypes when not all) */
    int64_t tcpu[4], tmem[4]; /* millicores, MiB */
    double price[4];
    int64_t pcpu[MAXP], pmem[MAXP];
    int64_t hcpu, hmem, hunits;   /* headroom unit (millicores, MiB) and count; 0: none */
} inst;

/* cheapest type hosting the pods of mask (-1 when none) */
static double part_cost(const inst *x, uint32_t mask)
{
    int64_t c = 0, m = 0;
    for (uint32_t i = 0; i < x->npods; i++)
        if (mask >> i & 1) {
            c += x->pcpu[i];
            m += x->pmem[i];
        }
    double best = -1;
    for (uint32_t t = 0; t < x->ntypes; t++)
        if ((x->allowed >> t & 1) && c <= x->tcpu[t] && m <= x->tmem[t] &&
            (best < 0 || x->price[t] < best))
            best = x->price[t];
    return best;
}

/* min over partitions of the pods of `left` (a DP over subsets: the part
 * holding the lowest pod, then the rest) */
static double opt_cost(const inst *x, uint32_t left, double *memo)
{
    if (!left)
        return 0;
    if (memo[left] >= 0)
        return memo[left];
    uint32_t low = left & -left, rest = left & ~low;
    double best = -1;
    for (uint32_t sub = rest;; sub = (sub - 1) & rest) {
        double c = part_cost(x, low | sub);
        if (c >= 0) {
            double r = opt_cost(x, left & ~(low | sub), memo);
            if (r >= 0 && (best < 0 || c + r < best))
                best = c + r;
        }
        if (!sub)
            break;
    }
    memo[left] = best;
    return best;
}

/* headroom units a node of type t holds with the pods of mask (-1: they
 * do not fit) */
static int64_t part_units(const inst *x, uint32_t t, uint32_t mask)
{
    int64_t c = 0, m = 0;
    for (uint32_t i = 0; i < x->npods; i++)
        if (mask >> i & 1) {
            c += x->pcpu[i];
            m += x->pmem[i];
        }
    if (c > x->tcpu[t] || m > x->tmem[t])
        return -1;
    int64_t uc = (x->tcpu[t] - c) / x->hcpu, um = (x->tmem[t] - m) / x->hmem;
    return uc < um ? uc : um;
}

/* with headroom: min over partitions of the pods of `left`, each part on
 * any allowed type that hosts it, plus nodes opened for headroom alone,
 * holding at least `need` units (memo per (left, need); SPEC 5: units held
 * = sum over the nodes of min over the unit's dimensions of free / per
 * unit) */
static double opt_cost_hr(const inst *x, uint32_t left, int64_t need, double *memo)
{
    double *mm = &memo[left * 8 + (uint32_t)need];
    if (*mm > -1.5)
        return *mm;
    double best = -1;
    if (!left) {
        if (!need)
            best = 0;
        for (uint32_t t = 0; t < x->ntypes && need; t++) {
            int64_t u = (x->allowed >> t & 1) ? part_units(x, t, 0) : 0;
            if (u <= 0)
                continue;
            double r = opt_cost_hr(x, 0, need > u ? need - u : 0, memo);
            if (r >= 0 && (best < 0 || x->price[t] + r < best))
                best = x->price[t] + r;
        }
    } else {
        uint32_t low = left & -left, rest = left & ~low;
        for (uint32_t sub = rest;; sub = (sub - 1) & rest) {
            for (uint32_t t = 0; t < x->ntypes; t++) {
                int64_t u = (x->allowed >> t & 1) ? part_units(x, t, low | sub) : -1;
                if (u < 0)
                    continue;
                double r = opt_cost_hr(x, left & ~(low | sub), need > u ? need - u : 0, memo);
                if (r >= 0 && (best < 0 || x->price[t] + r < best))
                    best = x->price[t] + r;
            }
            if (!sub)
                break;
        }
    }
    *mm = best;
    return best;
}

static void write_inst(buf *b, const inst *x)
{
    b->n = 0;
    add(b, "apiVersion: berth.io/v1\nkind: VirtualNodeGroup\nmetadata: {name: g}\n"
           "spec:\n  zones: [z1]\n");
    if (x->hunits)
        add(b, "  headroom: [{cpuPerUnit: %lldm, memoryPerUnit: %lldMi, numOfUnits: %lld}]\n",
            (long long)x->hcpu, (long long)x->hmem, (long long)x->hunits);
    if (x->allowed != (1u << x->ntypes) - 1) {
        add(b, "  instanceTypes: [");
        for (uint32_t t = 0, first = 1; t < x->ntypes; t++)
            if (x->allowed >> t & 1) {
                add(b, "%sT%u", first ? "" : ", ", t);
                first = 0;
            }
        add(b, "]\n");
    }
    for (uint32_t t = 0; t < x->ntypes; t++)
        add(b, "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: T%u}\n"
               "spec:\n  capacity: {cpu: %lldm, memory: %lldMi, pods: 110}\n"
               "  offerings: [{zone: z1, capacityType: spot, price: %.4f}]\n",
            t, (long long)x->tcpu[t], (long long)x->tmem[t], x->price[t]);
    for (uint32_t i = 0; i < x->npods; i++)
        add(b, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p%u, namespace: d}\n"
               "spec:\n  containers: [{name: c, resources: {requests: {cpu: %lldm, "
               "memory: %lldMi}}}]\n",
            i, (long long)x->pcpu[i], (long long)x->pmem[i]);
}

static void against_brute_force(uint64_t seed, int headroom)
{
    static buf b;
    berth_rng r;
    berth_rng_seed(&r, seed);
    double sum = 0, worst = 0;
    uint32_t counted = 0;
    for (uint32_t n = 0; n < NINST; n++) {
        inst x;
        memset(&x, 0, sizeof x);
        x.ntypes = 2 + (uint32_t)berth_rng_below(&r, 3);
        static const int64_t sizes[] = {2, 4, 8, 16};
        for (uint32_t t = 0; t < x.ntypes; t++) {
            int64_t cpus = sizes[berth_rng_below(&r, 4)];
            int64_t gib = 1 + (int64_t)berth_rng_below(&r, 8); /* per cpu */
            x.tcpu[t] = cpus * 1000;
            x.tmem[t] = cpus * gib * 1024;
            /* roughly linear with a size and memory component, +-15 % */
            x.price[t] = (0.03 * (double)cpus + 0.004 * (double)(cpus * gib)) *
                         (0.85 + 0.3 * (double)berth_rng_below(&r, 1000) / 1000.0);
            x.price[t] = round(x.price[t] * 1e4) / 1e4; /* as written */
        }
        x.allowed = (1u << x.ntypes) - 1;
        if (berth_rng_below(&r, 2)) { /* an instanceTypes list: a non-empty subset */
            x.allowed = (uint32_t)berth_rng_below(&r, (1u << x.ntypes) - 1) + 1;
        }
        x.npods = 2 + (uint32_t)berth_rng_below(&r, MAXP - 1);
        for (uint32_t i = 0; i < x.npods; i++) {
            x.pcpu[i] = 250 * (1 + (int64_t)berth_rng_below(&r, 16));
            x.pmem[i] = 256 * (1 + (int64_t)berth_rng_below(&r, 32));
        }
        double memo[1u << MAXP];
        assert_true(x.npods <= MAXP);
        for (uint32_t i = 0; i < (1u << MAXP); i++)
            memo[i] = -1;
        double opt = opt_cost(&x, (1u << x.npods) - 1, memo);
        if (headroom) { /* 1-6 units of 250m-1 cpu and 256Mi-2Gi */
            x.hcpu = 250 * (1 + (int64_t)berth_rng_below(&r, 4));
            x.hmem = 256 * (1 + (int64_t)berth_rng_below(&r, 8));
            x.hunits = 1 + (int64_t)berth_rng_below(&r, 6);
            double hmemo[(1u << MAXP) * 8];
            for (uint32_t i = 0; i < (1u << MAXP) * 8; i++)
                hmemo[i] = -2;
            double o = opt_cost_hr(&x, (1u << x.npods) - 1, x.hunits, hmemo);
            opt = opt < 0 ? opt : o; /* a pod no type hosts: unschedulable either way */
        }
        write_inst(&b, &x);
        run rr;
        plan_opt(&rr, &b, (berth_aplan_options){0});
        assert_int_equal(rr.rc, 0);
        if (opt < 0) { /* some pod fits no type: the plan says so */
            assert_true(rr.p.nunsched > 0);
            done(&rr);
            continue;
        }
        assert_int_equal(rr.p.nunsched, 0);
        double cost = 0;
        for (uint32_t u = 0; u < rr.p.nup; u++)
            cost += rr.p.up[u].count * rr.p.up[u].price;
        assert_true(fabs(cost - rr.p.up_cost) < 1e-9);
        /* the plan is a set of new nodes: never below the optimum */
        assert_true(cost >= opt - 1e-9);
        /* the lower bound: never above the optimum, so never above the plan */
        assert_true(rr.p.has_up_bound);
        assert_true(rr.p.up_bound <= opt + 1e-9);
        assert_true(rr.p.up_bound <= rr.p.up_pods_cost + 1e-9);
        double gap = cost / opt - 1;
        sum += gap;
        worst = gap > worst ? gap : worst;
        counted++;
        if (gap > WORST_GAP)
            print_message("seed %llu instance %u: plan %.4f, optimum %.4f (+%.1f %%)\n",
                          (unsigned long long)seed, n, cost, opt, 100 * gap);
        if (gap > WORST_GAP && getenv("PACKING_DUMP")) { /* PACKING_DUMP=DIR: the input */
            char path[512];
            snprintf(path, sizeof path, "%s/packing-%llu-%u.yaml", getenv("PACKING_DUMP"),
                     (unsigned long long)seed, n);
            FILE *fp = fopen(path, "w");
            if (fp) {
                fwrite(b.s, 1, b.n, fp);
                fclose(fp);
            }
        }
        done(&rr);
    }
    print_message("seed %llu%s: %u instances: average gap %.2f %%, worst %.2f %%\n",
                  (unsigned long long)seed, headroom ? " (headroom)" : "", counted,
                  100 * sum / counted, 100 * worst);
    assert_true(counted > NINST / 2);
    assert_true(sum / counted <= AVG_GAP);
    assert_true(worst <= (headroom ? HR_WORST_GAP : WORST_GAP));
}

static void test_random_against_brute_force(void **state)
{
    (void)state;
    against_brute_force(18, 0);
}

static void test_random_against_brute_force_seed_7(void **state)
{
    (void)state;
    against_brute_force(7, 0);
}

static void test_random_against_brute_force_seed_2026(void **state)
{
    (void)state;
    against_brute_force(2026, 0);
}

/* Headroom (SPEC 5) packed with the pods: the same instances with a
 * headroom of 1-6 units; the optimum may put a part on a larger type for
 * the units it holds, or open nodes for units alone (opt_cost_hr). Before
 * the joint repack (headroom_repack in src/autoscale/scaleup.c) headroom
 * was topped up after the packing: a node bought for units that another
 * split of the pods leaves free. */
static void test_headroom_against_brute_force(void **state)
{
    (void)state;
    against_brute_force(18, 1);
}

static void test_headroom_against_brute_force_seed_7(void **state)
{
    (void)state;
    against_brute_force(7, 1);
}

/* Reservations are not traded for price: random instances as above (no
 * instanceTypes list) plus a reserved instance of a type that hosts every
 * pod (count 1-3, already paid; spot and on-demand offerings of it too). Reservations
 * come first in the purchase order, and neither consolidation nor the
 * improvement step may drop a reserved node: the plan keeps every reserved
 * node it can fill (all of them, or only reserved nodes); and the lower
 * bound stays at most the cost of the nodes with pods. */
static void test_reservations_kept(void **state)
{
    (void)state;
    static buf b;
    berth_rng r;
    berth_rng_seed(&r, 5);
    uint32_t moved = 0;
    for (uint32_t n = 0; n < 200; n++) {
        inst x;
        memset(&x, 0, sizeof x);
        x.ntypes = 2 + (uint32_t)berth_rng_below(&r, 3);
        x.allowed = (1u << x.ntypes) - 1;
        for (uint32_t t = 0; t < x.ntypes; t++) {
            int64_t cpus = 2 << berth_rng_below(&r, 3);
            x.tcpu[t] = cpus * 1000;
            x.tmem[t] = cpus * (1 + (int64_t)berth_rng_below(&r, 8)) * 1024;
            x.price[t] = round((0.03 * (double)cpus + 0.004 * (double)x.tmem[t] / 1024) *
                               (0.85 + 0.3 * (double)berth_rng_below(&r, 1000) / 1000.0) * 1e4) / 1e4;
        }
        x.npods = 2 + (uint32_t)berth_rng_below(&r, MAXP - 1);
        for (uint32_t i = 0; i < x.npods; i++) {
            x.pcpu[i] = 250 * (1 + (int64_t)berth_rng_below(&r, 8));
            x.pmem[i] = 256 * (1 + (int64_t)berth_rng_below(&r, 16));
        }
        uint32_t count = 1 + (uint32_t)berth_rng_below(&r, 3);
        write_inst(&b, &x);
        add(&b, "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: R}\n"
                "spec:\n  capacity: {cpu: \"4\", memory: 8Gi, pods: 110}\n"
                "  offerings: [{zone: z1, capacityType: spot, price: 0.2}, "
                "{zone: z1, capacityType: on-demand, price: 0.5}]\n"
                "---\napiVersion: berth.io/v1\nkind: Reservation\nmetadata: {name: ri}\n"
                "spec: {instanceType: R, zone: z1, count: %u}\n", count);
        run rr;
        plan_opt(&rr, &b, (berth_aplan_options){0});
        assert_int_equal(rr.rc, 0);
        assert_int_equal(rr.p.nunsched, 0);
        uint32_t reserved = 0, total = 0;
        for (uint32_t u = 0; u < rr.p.nup; u++) {
            total += rr.p.up[u].count;
            if (rr.p.up[u].capacity_type == BERTH_CT_RESERVED) {
                reserved += rr.p.up[u].count;
                assert_int_equal(rr.p.up[u].headroom_nodes, 0);
                assert_true(rr.p.up[u].npods >= rr.p.up[u].count); /* none left empty */
            }
        }
        assert_true(reserved <= count);
        assert_true(reserved == count || reserved == total);
        moved += total > reserved;
        assert_true(rr.p.has_up_bound);
        assert_true(rr.p.up_bound <= rr.p.up_pods_cost + 1e-9);
        done(&rr);
    }
    assert_true(moved > 20); /* spot nodes beside the reservation in many instances */
}

/* The case: a 1.9-cpu pod and seven 1.1-cpu pods. One 2-vCPU node
 * holds one pod; one 16-vCPU node holds all and costs 5 % less than eight
 * small ones. The per-node option key alone buys eight small nodes. */
static void test_eight_small_or_one_large(void **state)
{
    (void)state;
    static buf b;
    b.n = 0;
    add(&b, "apiVersion: berth.io/v1\nkind: VirtualNodeGroup\nmetadata: {name: general}\n"
            "spec: {zones: [z1]}\n"
            "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: D2}\n"
            "spec:\n  capacity: {cpu: \"2\", memory: 8Gi, pods: 30}\n"
            "  offerings: [{zone: z1, capacityType: spot, price: 0.1}]\n"
            "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: D16}\n"
            "spec:\n  capacity: {cpu: \"16\", memory: 64Gi, pods: 30}\n"
            "  offerings: [{zone: z1, capacityType: spot, price: 0.76}]\n"
            "---\napiVersion: v1\nkind: Pod\nmetadata: {name: big, namespace: default}\n"
            "spec:\n  containers: [{name: c, resources: {requests: {cpu: 1900m, memory: 1Gi}}}]\n");
    for (int i = 1; i <= 7; i++)
        add(&b, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: w-%d, namespace: default}\n"
                "spec:\n  containers: [{name: c, resources: {requests: {cpu: 1100m, "
                "memory: 1Gi}}}]\n", i);
    for (int ref = 0; ref < 2; ref++) {
        run r;
        berth_aplan_options o = {0};
        o.reference = ref;
        plan_opt(&r, &b, o);
        assert_int_equal(r.rc, 0);
        assert_int_equal(r.p.nup, 1);
        assert_string_equal(r.m.types[r.p.up[0].type].name, "D16");
        assert_int_equal(r.p.up[0].count, 1);
        assert_int_equal(r.p.up[0].npods, 8);
        assert_true(fabs(r.p.up_cost - 0.76) < 1e-9);
        /* cpu: 9.6 of 16 at 0.76 -> 0.456 */
        assert_true(fabs(r.p.up_bound - 0.456) < 1e-6);
        double gap;
        assert_true(berth_aplan_above_bound(&r.p, &gap));
        assert_true(fabs(gap - (0.76 / 0.456 - 1)) < 1e-6);
        done(&r);
    }
}

/* A reservation the packing leaves unused: the 5-cpu pod fits none of the
 * reserved 2-cpu nodes, so the first node is bought on spot, and B (8 cpu,
 * the cheapest per cpu) takes every pod; C (6 cpu) with the 5-cpu pod and
 * one small one, and the reserved node (already paid) with the other two,
 * cost less. The improvement step weighs the reserved node not open yet
 * as an option of price 0 (imp_vres in src/autoscale/scaleup.c). */
static void test_reservation_left_unused(void **state)
{
    (void)state;
    static buf b;
    b.n = 0;
    add(&b, "apiVersion: berth.io/v1\nkind: VirtualNodeGroup\nmetadata: {name: general}\n"
            "spec: {zones: [z1]}\n"
            "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: B}\n"
            "spec:\n  capacity: {cpu: \"8\", memory: 32Gi, pods: 30}\n"
            "  offerings: [{zone: z1, capacityType: spot, price: 0.3}]\n"
            "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: C}\n"
            "spec:\n  capacity: {cpu: \"6\", memory: 24Gi, pods: 30}\n"
            "  offerings: [{zone: z1, capacityType: spot, price: 0.27}]\n"
            "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: S}\n"
            "spec:\n  capacity: {cpu: \"2\", memory: 8Gi, pods: 30}\n"
            "  offerings: [{zone: z1, capacityType: spot, price: 0.1}, "
            "{zone: z1, capacityType: on-demand, price: 0.25}]\n"
            "---\napiVersion: berth.io/v1\nkind: Reservation\nmetadata: {name: ri}\n"
            "spec: {instanceType: S, zone: z1, count: 1}\n"
            "---\napiVersion: v1\nkind: Pod\nmetadata: {name: big, namespace: default}\n"
            "spec:\n  containers: [{name: c, resources: {requests: {cpu: 5, memory: 4Gi}}}]\n");
    for (int i = 1; i <= 3; i++)
        add(&b, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: w-%d, namespace: default}\n"
                "spec:\n  containers: [{name: c, resources: {requests: {cpu: 1, "
                "memory: 1Gi}}}]\n", i);
    for (int ref = 0; ref < 2; ref++) {
        run r;
        berth_aplan_options o = {0};
        o.reference = ref;
        plan_opt(&r, &b, o);
        assert_int_equal(r.rc, 0);
        assert_int_equal(r.p.nunsched, 0);
        assert_int_equal(r.p.nup, 2);
        uint32_t pods = 0;
        for (uint32_t u = 0; u < r.p.nup; u++) {
            const char *t = r.m.types[r.p.up[u].type].name;
            assert_int_equal(r.p.up[u].count, 1);
            if (r.p.up[u].capacity_type == BERTH_CT_RESERVED) {
                assert_string_equal(t, "S");
                assert_int_equal(r.p.up[u].npods, 2);
            } else {
                assert_string_equal(t, "C");
                assert_int_equal(r.p.up[u].npods, 2);
            }
            pods += r.p.up[u].npods;
        }
        assert_int_equal(pods, 4);
        assert_true(fabs(r.p.up_cost - 0.27) < 1e-9);
        done(&r);
    }
}

/* Headroom that fits only one split of the pods (tiers #9 of
 * bench/quality/autoscale_scaleup.py, its four types): a reserved
 * E48s_v5 and two spot nodes hold the 45 pods with 1.7 cpu to spare, and
 * the 3 units of 250m need 750m of it on one node's room; the packings of
 * the repack (greedy orders, 32 shuffles) leave it spread, so an F2s_v2
 * was bought for the units alone. The count-vector search (hr_exact in
 * src/autoscale/scaleup.c) finds the split: no node for headroom alone. */
static void test_headroom_exact_split(void **state)
{
    (void)state;
    static buf b;
    static const struct { const char *name; int cpu, mem, kr_cpu, kr_mem; double spot, od; } ty[] = {
        {"Standard_D8s_v5", 8, 32768, 180, 2250, 0.1317, 0.384},
        {"Standard_E48s_v5", 48, 393216, 580, 2250, -1, 3.024},
        {"Standard_F2s_v2", 2, 4096, 100, 1024, 0.0274, 0.085},
        {"Standard_F4s_v2", 4, 8192, 140, 2048, 0.0608, 0.17},
    };
    static const int dep[][3] = { /* cpu (m), memory (Mi), replicas */
        {250, 2048, 2}, {100, 614, 6}, {500, 2048, 2}, {500, 4096, 8}, {1000, 6144, 8},
        {4000, 16384, 1}, {100, 204, 3}, {2000, 4096, 3}, {4000, 8192, 8}, {250, 768, 4},
    };
    b.n = 0;
    add(&b, "apiVersion: berth.io/v1\nkind: VirtualNodeGroup\nmetadata: {name: general}\n"
            "spec:\n  zones: [z1]\n"
            "  headroom: [{cpuPerUnit: 250m, memoryPerUnit: 512Mi, numOfUnits: 3}]\n"
            "---\napiVersion: berth.io/v1\nkind: Reservation\nmetadata: {name: ri}\n"
            "spec: {instanceType: Standard_E48s_v5, zone: z1, count: 1}\n");
    for (size_t t = 0; t < sizeof ty / sizeof *ty; t++) {
        add(&b, "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: %s}\n"
                "spec:\n  provider: azure\n  capacity: {cpu: \"%d\", memory: %dMi, pods: 110}\n"
                "  kubeReserved: {cpu: %dm, memory: %dMi}\n"
                "  evictionThreshold: {memory: 100Mi}\n  offerings: [",
            ty[t].name, ty[t].cpu, ty[t].mem, ty[t].kr_cpu, ty[t].kr_mem);
        if (ty[t].spot > 0)
            add(&b, "{zone: z1, capacityType: spot, price: %.4f}", ty[t].spot);
        else
            add(&b, "{zone: z1, capacityType: spot, price: %.4f, available: false}", ty[t].od * 0.3);
        add(&b, ", {zone: z1, capacityType: on-demand, price: %.4f}]\n", ty[t].od);
    }
    for (size_t d = 0; d < sizeof dep / sizeof *dep; d++)
        for (int r = 0; r < dep[d][2]; r++)
            add(&b, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: app%zu-%d, namespace: default}\n"
                    "spec:\n  containers: [{name: c, resources: {requests: {cpu: %dm, "
                    "memory: %dMi}}}]\n", d, r, dep[d][0], dep[d][1]);
    for (int ref = 0; ref < 2; ref++) {
        run r;
        berth_aplan_options o = {0};
        o.reference = ref;
        plan_opt(&r, &b, o);
        assert_int_equal(r.rc, 0);
        assert_int_equal(r.p.nunsched, 0);
        uint32_t pods = 0, reserved = 0;
        for (uint32_t u = 0; u < r.p.nup; u++) {
            assert_int_equal(r.p.up[u].headroom_nodes, 0);
            pods += r.p.up[u].npods;
            reserved += r.p.up[u].capacity_type == BERTH_CT_RESERVED ? r.p.up[u].count : 0;
        }
        assert_int_equal(pods, 45);
        assert_int_equal(reserved, 1);
        /* the optimum (CBC): the reserved node, a D8s_v5 and an F4s_v2 */
        assert_true(fabs(r.p.up_cost - (0.1317 + 0.0608)) < 1e-9);
        done(&r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eight_small_or_one_large),
        cmocka_unit_test(test_random_against_brute_force),
        cmocka_unit_test(test_random_against_brute_force_seed_7),
        cmocka_unit_test(test_random_against_brute_force_seed_2026),
        cmocka_unit_test(test_headroom_against_brute_force),
        cmocka_unit_test(test_headroom_against_brute_force_seed_7),
        cmocka_unit_test(test_reservations_kept),
        cmocka_unit_test(test_reservation_left_unused),
        cmocka_unit_test(test_headroom_exact_split),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
