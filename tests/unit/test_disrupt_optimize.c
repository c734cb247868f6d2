/* tests/unit/test_disrupt_optimize.c - `--optimize`, the lower bound and
 * the fast planner (issue item 5, 7): an estate where Karpenter's greedy
 * pass is provably not optimal and the optimiser is strictly better (and
 * meets the bound, which is tight there); budgets and do-not-disrupt hold
 * for the optimiser; on a few hundred random small estates the session
 * planner with the option filter decides exactly as the reference path
 * (one scheduling run per question and option), and the lower bound is
 * at most every plan's nodes and cost after. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "berth/disrupt.h"
#include "berth/random.h"

#define NOW 1714564800 /* 2024-05-01T12:00:00Z */

#define YAML_BUF_SIZE (1 << 20)
#include "disrupt_fixture.h"

static void pool_policy(buf *b, const char *name, const char *reqs, const char *budget,
                        const char *taint, const char *policy)
{
    add(b, "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: %s}\nspec:\n"
           "  template:\n    spec:\n"
           "      nodeClassRef: {group: karpenter.azure.com, kind: AKSNodeClass, name: default}\n"
           "%s%s"
           "  disruption:\n    consolidationPolicy: %s\n    consolidateAfter: 0s\n"
           "    budgets: [{nodes: \"%s\"}]\n",
        name, reqs ? reqs : "", taint ? taint : "", policy, budget);
}

static void pool(buf *b, const char *name, const char *reqs, const char *budget, const char *taint)
{
    pool_policy(b, name, reqs, budget, taint, "WhenEmptyOrUnderutilized");
}

/* D2 / D4 / D8: 2 / 4 / 8 cpu, on-demand 0.1 per 2 cpu, spot a fifth, in
 * zones z1 and z2 (z2 a little dearer) */
static void types(buf *b)
{
    for (int i = 0; i < 3; i++) {
        int cpu = 2 << i;
        add(b, "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: D%d}\nspec:\n"
               "  capacity: {cpu: \"%d\", memory: %dGi, pods: 30}\n  offerings:\n"
               "  - {zone: z1, capacityType: on-demand, price: %g}\n"
               "  - {zone: z1, capacityType: spot, price: %g}\n"
               "  - {zone: z2, capacityType: on-demand, price: %g}\n"
               "  - {zone: z2, capacityType: spot, price: %g}\n",
            cpu, cpu, 4 * cpu, 0.05 * cpu, 0.01 * cpu, 0.055 * cpu, 0.012 * cpu);
    }
}

static void node_claim(buf *b, const char *name, const char *pool_name, int cpu, const char *ct,
                       const char *zone, const char *ann, const char *taint, const char *cond)
{
    add(b, "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: %s\n"
           "  labels: {karpenter.sh/nodepool: %s, node.kubernetes.io/instance-type: D%d, "
           "karpenter.sh/capacity-type: %s, topology.kubernetes.io/zone: %s}\n"
           "  creationTimestamp: \"2024-04-30T00:00:00Z\"\n"
           "status:\n  nodeName: %s\n  conditions:\n"
           "  - {type: Initialized, status: \"True\", lastTransitionTime: \"2024-04-30T00:05:00Z\"}\n%s",
        name, pool_name, cpu, ct, zone, name, cond ? cond : "");
    add(b, "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n  annotations: {%s}\n"
           "  labels: {karpenter.sh/nodepool: %s, node.kubernetes.io/instance-type: D%d, "
           "karpenter.sh/capacity-type: %s, topology.kubernetes.io/zone: %s, "
           "kubernetes.io/hostname: %s, karpenter.sh/initialized: \"true\"}\n%s"
           "status:\n  allocatable: {cpu: \"%d\", memory: %dGi, pods: \"30\"}\n",
        name, ann ? ann : "", pool_name, cpu, ct, zone, name, taint ? taint : "", cpu, 4 * cpu);
}

static void node(buf *b, const char *name, const char *pool_name, int cpu, const char *ct,
                 const char *zone, const char *ann, const char *taint)
{
    node_claim(b, name, pool_name, cpu, ct, zone, ann, taint, NULL);
}

static void pod(buf *b, const char *name, const char *node_name, const char *cpu, const char *meta,
                const char *spec)
{
    add(b, "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: default\n%s"
           "spec:\n  nodeName: %s\n%s  containers:\n  - name: c\n"
           "    resources: {requests: {cpu: \"%s\", memory: 1Gi}}\n"
           "status:\n  phase: Running\n  startTime: \"2024-05-01T11:00:00Z\"\n"
           "  conditions: [{type: Ready, status: \"True\"}]\n",
        name, meta ? meta : "", node_name, spec ? spec : "", cpu);
}

typedef struct fixture {
    berth_disrupt m;
    berth_dplan p;
} fixture;

static void plan(fixture *f, const buf *b, int optimize, int reference, int spot)
{
    berth_error e;
    memset(&f->p, 0, sizeof f->p);
    if (load_model(&f->m, b, &e))
        fail_msg("load: %s\n%s", e.msg, b->s);
    berth_dplan_options o = {NOW, spot, reference, optimize};
    if (berth_disrupt_plan(&f->m, &o, &f->p, &e))
        fail_msg("plan: %s", e.msg);
}

static void done(fixture *f)
{
    berth_dplan_free(&f->p);
    berth_disrupt_free(&f->m);
}

/* "reason:action:n1,n2->type/ct/zone" for every action, joined by " | " */
static const char *actions(const fixture *f, char *out, size_t size)
{
    size_t n = 0;
    out[0] = 0;
    for (uint32_t i = 0; i < f->p.nactions && n < size; i++) {
        const berth_daction *a = &f->p.actions[i];
        n += (size_t)snprintf(out + n, size - n, "%s%s:%s:", i ? " | " : "",
                              berth_dreason_name(a->reason), a->replace ? "replace" : "delete");
        for (uint32_t j = 0; j < a->nnodes && n < size; j++)
            n += (size_t)snprintf(out + n, size - n, "%s%s", j ? "," : "",
                                  f->m.kube.nodes[a->nodes[j]].name);
        for (uint32_t j = 0; j < a->nreplacements && n < size; j++)
            n += (size_t)snprintf(out + n, size - n, "->%s/%s/%s", a->replacements[j].instance_type,
                                  berth_capacity_type_name(a->replacements[j].capacity_type),
                                  a->replacements[j].zone);
    }
    return out;
}

static int in_actions(const fixture *f, const char *node_name)
{
    for (uint32_t i = 0; i < f->p.nactions; i++)
        for (uint32_t j = 0; j < f->p.actions[i].nnodes; j++)
            if (!strcmp(f->m.kube.nodes[f->p.actions[i].nodes[j]].name, node_name))
                return 1;
    return 0;
}

#define D4_ONLY                                                                                   \
    "      requirements:\n"                                                                       \
    "      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}\n"             \
    "      - {key: node.kubernetes.io/instance-type, operator: In, values: [D4]}\n"

/* Five D4 nodes; b's 3.9-cpu pod fits nowhere else and no cheaper node
 * exists (the pool launches D4 only). Karpenter orders a, b (one pod
 * each), c, d, e: the multi-node prefixes {a,b,c} and {a,b} fail on b, so
 * its pass is one single-node delete of a (5 -> 4 nodes). Deleting a and
 * then c leaves b, d, e (3 nodes) - optimal: 10.9 cpu need 3 D4s, which
 * is also the lower bound. */
static void greedy_estate(buf *b, const char *budget, const char *c_ann)
{
    b->n = 0;
    pool(b, "p", D4_ONLY, budget, NULL);
    types(b);
    node(b, "a", "p", 4, "on-demand", "z1", NULL, NULL);
    node(b, "b", "p", 4, "on-demand", "z1", NULL, NULL);
    node(b, "c", "p", 4, "on-demand", "z1", c_ann, NULL);
    node(b, "d", "p", 4, "on-demand", "z1", NULL, NULL);
    node(b, "e", "p", 4, "on-demand", "z1", NULL, NULL);
    pod(b, "a1", "a", "1", NULL, NULL);
    pod(b, "b1", "b", "3900m", NULL, NULL);
    pod(b, "c1", "c", "1", NULL, NULL);
    pod(b, "c2", "c", "1", NULL, NULL);
    pod(b, "d1", "d", "1", NULL, NULL);
    pod(b, "d2", "d", "1", NULL, NULL);
    pod(b, "e1", "e", "1", NULL, NULL);
    pod(b, "e2", "e", "1", NULL, NULL);
}

static void test_optimizer_beats_greedy(void **st)
{
    (void)st;
    static buf b;
    char got[1024];
    greedy_estate(&b, "100%", NULL);
    fixture f;
    plan(&f, &b, 0, 0, 0);
    assert_string_equal(actions(&f, got, sizeof got), "Underutilized:delete:a");
    assert_string_equal(f.p.method, "SingleNodeConsolidation");
    assert_int_equal(f.p.nodes_after, 4);
    assert_int_equal(f.p.bound_nodes, 3);
    assert_false(f.p.optimized);
    done(&f);
    plan(&f, &b, 1, 0, 0);
    assert_true(f.p.optimized);
    assert_string_equal(f.p.method, "Optimizer");
    assert_int_equal(f.p.nodes_after, 3);
    assert_int_equal(f.p.karpenter_nodes_after, 4);
    assert_true(f.p.karpenter_savings > 0.199 && f.p.karpenter_savings < 0.201);
    assert_true(f.p.cost_after > 0.599 && f.p.cost_after < 0.601);
    /* the bound is tight here, and the same through the public call */
    assert_int_equal(f.p.bound_nodes, f.p.nodes_after);
    berth_dplan_options o = {NOW, 0, 0, 0};
    berth_dbound bd;
    berth_error e;
    assert_int_equal(berth_disrupt_bound(&f.m, &o, &bd, &e), 0);
    assert_int_equal(bd.nodes, 3);
    assert_true(bd.cost > 0.5 && bd.cost <= f.p.cost_after + 1e-9);
    done(&f);
    /* the reference path plans the same, also with the optimiser */
    plan(&f, &b, 1, 1, 0);
    assert_true(f.p.optimized);
    assert_int_equal(f.p.nodes_after, 3);
    assert_true(in_actions(&f, "a"));
    assert_false(in_actions(&f, "b"));
    done(&f);
}

static void test_optimizer_respects_budgets_and_dnd(void **st)
{
    (void)st;
    static buf b;
    char got[1024];
    fixture f;
    /* one node allowed: the optimiser cannot beat Karpenter's one delete,
     * and the bound within budgets says so (no empty or drifted node, one
     * Underutilized removal: 5 - 1 = 4, while the pods alone need 3) */
    greedy_estate(&b, "1", NULL);
    plan(&f, &b, 1, 0, 0);
    assert_false(f.p.optimized);
    assert_string_equal(actions(&f, got, sizeof got), "Underutilized:delete:a");
    assert_int_equal(f.p.nodes_after, 4);
    assert_int_equal(f.p.bound_nodes, 3);
    assert_int_equal(f.p.bound_nodes_budgets, 4);
    done(&f);
    /* two allowed: two deletions at most */
    greedy_estate(&b, "2", NULL);
    plan(&f, &b, 1, 0, 0);
    assert_true(f.p.optimized);
    uint32_t taken = 0;
    for (uint32_t i = 0; i < f.p.nactions; i++)
        taken += f.p.actions[i].nnodes;
    assert_int_equal(taken, 2);
    done(&f);
    /* c opts out: the optimiser takes d instead, never c */
    greedy_estate(&b, "100%", "karpenter.sh/do-not-disrupt: \"true\"");
    plan(&f, &b, 1, 0, 0);
    assert_false(in_actions(&f, "c"));
    assert_true(f.p.optimized);
    assert_int_equal(f.p.nodes_after, 3);
    done(&f);
    /* a pod-level do-not-disrupt on d and e as well: only a can go */
    greedy_estate(&b, "100%", "karpenter.sh/do-not-disrupt: \"true\"");
    char *pos = strstr(b.s, "name: d1\n");
    assert_non_null(pos);
    static buf b2;
    b2.n = 0;
    add(&b2, "%.*s", (int)(pos - b.s), b.s);
    add(&b2, "name: d1\n  annotations: {karpenter.sh/do-not-disrupt: \"true\"}\n%s",
        pos + strlen("name: d1\n"));
    plan(&f, &b2, 1, 0, 0);
    assert_false(in_actions(&f, "c"));
    assert_false(in_actions(&f, "d"));
    done(&f);
}

/* ---- a command of many nodes (issue 18: fill and prefix commands) ----
 * Eight D2 nodes (0.1/h each) hold one 1.5-cpu pod each: no pod fits on
 * another D2 and a D4 (0.2/h) hosts only two, so the only saving move is
 * five nodes (0.5/h) replaced by one D8 (0.4/h, 7.5 of its 8 cpu used);
 * a0 holds a 1.9-cpu pod (with four 1.5-cpu pods it still fits a D8). The
 * optimum leaves 0.8/h on five nodes: one D8 for five of the nine and
 * four D2s (a second D8 would take four nodes: not cheaper). The first
 * `dnd` of the D2s carry do-not-disrupt. */
#define OD_ONLY                                                                                   \
    "      requirements:\n"                                                                       \
    "      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}\n"

static void many_estate(buf *b, const char *budget, int dnd)
{
    b->n = 0;
    pool(b, "p", OD_ONLY, budget, NULL);
    types(b);
    node(b, "a0", "p", 2, "on-demand", "z1", NULL, NULL);
    pod(b, "a0-1", "a0", "1900m", NULL, NULL);
    for (int i = 1; i <= 8; i++) {
        char nm[16], pn[24];
        snprintf(nm, sizeof nm, "n%d", i);
        snprintf(pn, sizeof pn, "n%d-1", i);
        node(b, nm, "p", 2, "on-demand", "z1", i <= dnd ? "karpenter.sh/do-not-disrupt: \"true\"" : NULL,
             NULL);
        pod(b, pn, nm, "1500m", NULL, NULL);
    }
}

static void test_optimizer_many_node_command(void **st)
{
    (void)st;
    static buf b;
    char got[1024];
    fixture f;
    many_estate(&b, "100%", 0);
    plan(&f, &b, 0, 0, 0);
    double plain = f.p.cost_after;
    done(&f);
    plan(&f, &b, 1, 0, 0);
    /* one replacement of five nodes by a D8: 9 nodes 0.9/h -> 5 nodes 0.8/h */
    uint32_t big = 0;
    for (uint32_t i = 0; i < f.p.nactions; i++) {
        const berth_daction *a = &f.p.actions[i];
        if (a->nnodes >= 5) {
            big++;
            assert_int_equal(a->nreplacements, 1);
            assert_string_equal(a->replacements[0].instance_type, "D8");
            assert_int_equal(a->replacements[0].capacity_type, BERTH_CT_ON_DEMAND);
        }
    }
    if (big != 1)
        fail_msg("want one command of five nodes onto a D8: %s", actions(&f, got, sizeof got));
    assert_int_equal(f.p.nodes_after, 5);
    assert_true(f.p.cost_after > 0.799 && f.p.cost_after < 0.801);
    assert_true(f.p.cost_after <= plain + 1e-9);
    assert_true(f.p.cost_after >= f.p.bound_cost - 1e-9);
    done(&f);
    /* the budget allows four nodes: no five-node command, and four D2s
     * (0.4/h) onto one D8 (0.4/h) is not cheaper: nothing goes */
    many_estate(&b, "4", 0);
    plan(&f, &b, 1, 0, 0);
    for (uint32_t i = 0; i < f.p.nactions; i++)
        assert_true(f.p.actions[i].nnodes <= 4);
    assert_int_equal(f.p.nodes_after, 9);
    done(&f);
    /* four of the eight carry do-not-disrupt: never taken; the five others
     * (a0 with four 1.5-cpu pods: 7.9 cpu) still go onto one D8 */
    many_estate(&b, "100%", 4);
    plan(&f, &b, 1, 0, 0);
    for (int i = 1; i <= 4; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "n%d", i);
        assert_false(in_actions(&f, nm));
    }
    if (f.p.nactions != 1 || f.p.actions[0].nnodes != 5 || !in_actions(&f, "a0") ||
        !in_actions(&f, "n5") || !in_actions(&f, "n8") || f.p.actions[0].nreplacements != 1 ||
        strcmp(f.p.actions[0].replacements[0].instance_type, "D8"))
        fail_msg("want a0, n5-n8 onto one D8: %s", actions(&f, got, sizeof got));
    assert_int_equal(f.p.nodes_after, 5);
    done(&f);
}

/* ---- random estates ---- */

static void random_estate(buf *b, berth_rng *r, int *spot)
{
    static const char *cts[2] = {"on-demand", "spot"}, *zones[2] = {"z1", "z2"};
    static const char *cpus[6] = {"250m", "500m", "1", "1500m", "2", "3"};
    b->n = 0;
    const char *budget[4] = {"100%", "50%", "1", "0"};
    pool(b, "od", "      requirements:\n      - {key: karpenter.sh/capacity-type, operator: In, "
                  "values: [on-demand]}\n",
         budget[berth_rng_below(r, 3)], NULL);
    pool_policy(b, "any", NULL, budget[berth_rng_below(r, 4)],
                berth_rng_below(r, 2) ? "      taints: [{key: dedicated, value: any, effect: NoSchedule}]\n"
                                      : NULL,
                berth_rng_below(r, 4) ? "WhenEmptyOrUnderutilized" : "Balanced");
    if (berth_rng_below(r, 3) == 0)
        add(b, "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web, "
               "namespace: default}\nspec: {maxUnavailable: %d, selector: {matchLabels: {app: web}}}\n",
            (int)berth_rng_below(r, 2));
    types(b);
    uint32_t nn = 2 + (uint32_t)berth_rng_below(r, 6);
    char name[16], pname[32];
    int tainted = strstr(b->s, "dedicated") != NULL;
    for (uint32_t i = 0; i < nn; i++) {
        int any = (int)berth_rng_below(r, 2);
        int cpu = 2 << berth_rng_below(r, 3);
        const char *ct = any ? cts[berth_rng_below(r, 2)] : "on-demand";
        snprintf(name, sizeof name, "n%u", i);
        node_claim(b, name, any ? "any" : "od", cpu, ct, zones[berth_rng_below(r, 2)],
                   berth_rng_below(r, 12) == 0 ? "karpenter.sh/do-not-disrupt: \"true\"" : NULL,
                   any && tainted ? "spec:\n  taints: [{key: dedicated, value: any, effect: NoSchedule}]\n"
                                  : NULL,
                   berth_rng_below(r, 8) == 0 ? "  - {type: Drifted, status: \"True\", "
                                                "lastTransitionTime: \"2024-05-01T10:00:00Z\"}\n"
                                              : NULL);
        uint32_t np = (uint32_t)berth_rng_below(r, 5);
        for (uint32_t j = 0; j < np; j++) {
            snprintf(pname, sizeof pname, "p%u-%u", i, j);
            uint64_t kind = berth_rng_below(r, 10);
            const char *spec = "  tolerations: [{key: dedicated, operator: Exists}]\n";
            const char *meta = NULL;
            if (kind == 0)
                meta = "  ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: ds, uid: u, "
                       "controller: true}]\n";
            else if (kind == 1)
                spec = "  tolerations: [{key: dedicated, operator: Exists}]\n"
                       "  nodeSelector: {topology.kubernetes.io/zone: z1}\n";
            else if (kind == 2) {
                meta = "  labels: {app: web}\n";
                spec = "  tolerations: [{key: dedicated, operator: Exists}]\n"
                       "  affinity:\n    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
                       "      - labelSelector: {matchLabels: {app: web}}\n"
                       "        topologyKey: kubernetes.io/hostname\n";
            } else if (kind == 3) {
                spec = "  priority: 1000\n";
            } else if (kind == 5) {
                meta = "  labels: {app: spread}\n";
                spec = "  tolerations: [{key: dedicated, operator: Exists}]\n"
                       "  topologySpreadConstraints:\n  - {maxSkew: 1, topologyKey: "
                       "topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, "
                       "labelSelector: {matchLabels: {app: spread}}}\n";
            }
            else if (kind == 4)
                meta = "  annotations: {controller.kubernetes.io/pod-deletion-cost: \"-100000000\"}\n";
            pod(b, pname, name, cpus[berth_rng_below(r, 6)], meta, spec);
        }
    }
    *spot = (int)berth_rng_below(r, 2);
}

static void test_random_fast_equals_reference_and_bound(void **st)
{
    (void)st;
    static buf b;
    static char fast[4096], ref[4096];
    berth_rng r;
    berth_rng_seed(&r, 2024);
    uint32_t acted = 0, replaced = 0, optimized = 0;
    const char *env = getenv("DISRUPT_RANDOM_ITERS"); /* longer local runs */
    int iters = env ? atoi(env) : 300;
    for (int iter = 0; iter < iters; iter++) {
        int spot;
        random_estate(&b, &r, &spot);
        fixture f, g, h;
        plan(&f, &b, 0, 0, spot);
        plan(&g, &b, 0, 1, spot);
        actions(&f, fast, sizeof fast);
        actions(&g, ref, sizeof ref);
        if (strcmp(fast, ref) || f.p.nblocked != g.p.nblocked)
            fail_msg("estate %d: fast '%s' (%u blocked), reference '%s' (%u blocked)\n%s", iter,
                     fast, f.p.nblocked, ref, g.p.nblocked, b.s);
        for (uint32_t i = 0; i < f.p.nblocked; i++)
            if (f.p.blocked[i].node != g.p.blocked[i].node ||
                strcmp(f.p.blocked[i].reason, g.p.blocked[i].reason))
                fail_msg("estate %d: blocked %s '%s' vs '%s'", iter,
                         f.m.kube.nodes[f.p.blocked[i].node].name, f.p.blocked[i].reason,
                         g.p.blocked[i].reason);
        plan(&h, &b, 1, 0, spot);
        const berth_dplan *ps[3] = {&f.p, &g.p, &h.p};
        for (int k = 0; k < 3; k++)
            if (ps[k]->bound_nodes > ps[k]->nodes_after ||
                ps[k]->bound_cost > ps[k]->cost_after + 1e-9 ||
                ps[k]->bound_nodes_budgets > ps[k]->nodes_after ||
                ps[k]->bound_cost_budgets > ps[k]->cost_after + 1e-9 ||
                ps[k]->bound_nodes_budgets < ps[k]->bound_nodes)
                fail_msg("estate %d plan %d: bound %lld nodes %.4f/h above %lld nodes %.4f/h\n%s",
                         iter, k, (long long)ps[k]->bound_nodes, ps[k]->bound_cost,
                         (long long)ps[k]->nodes_after, ps[k]->cost_after, b.s);
        /* the optimiser's plan stays within every pool's allowance per
         * reason and never takes a node that do-not-disrupt or a PDB blocks */
        int64_t used[8][BERTH_DR_BUDGET_COUNT];
        memset(used, 0, sizeof used);
        for (uint32_t i = 0; i < h.p.nactions; i++) {
            const berth_daction *a = &h.p.actions[i];
            if (a->reason == BERTH_DR_EXPIRED)
                continue;
            for (uint32_t j = 0; j < a->nnodes; j++) {
                const char *pn = berth_labels_get(&h.m.kube.nodes[a->nodes[j]].labels,
                                                  "karpenter.sh/nodepool");
                for (uint32_t q = 0; q < h.p.npools && q < 8; q++)
                    if (!strcmp(h.m.pools[h.p.pools[q].pool].name, pn))
                        used[q][a->reason]++;
                for (uint32_t k = 0; k < h.p.nblocked; k++)
                    if (h.p.blocked[k].node == a->nodes[j] &&
                        (strstr(h.p.blocked[k].reason, "do-not-disrupt") ||
                         strstr(h.p.blocked[k].reason, "PodDisruptionBudget")))
                        fail_msg("estate %d: optimiser took %s, blocked: %s", iter,
                                 h.m.kube.nodes[a->nodes[j]].name, h.p.blocked[k].reason);
            }
        }
        for (uint32_t q = 0; q < h.p.npools && q < 8; q++)
            for (int rr = 0; rr < BERTH_DR_BUDGET_COUNT; rr++)
                if (used[q][rr] > h.p.pools[q].allowed[rr])
                    fail_msg("estate %d: pool %u reason %d: %lld nodes, %lld allowed", iter, q, rr,
                             (long long)used[q][rr], (long long)h.p.pools[q].allowed[rr]);
        /* the optimiser never shows a worse result than Karpenter's */
        assert_true(h.p.cost_after <= f.p.cost_after + 1e-9);
        assert_true(h.p.karpenter_nodes_after == f.p.nodes_after);
        acted += f.p.nactions > 0;
        for (uint32_t i = 0; i < f.p.nactions; i++)
            replaced += f.p.actions[i].replace;
        optimized += h.p.optimized;
        done(&f);
        done(&g);
        done(&h);
    }
    /* the estates exercise the interesting paths */
    assert_true(acted > 100);
    assert_true(replaced > 10);
    assert_true(optimized > 5);
}

/* ---- exact check on tiny estates (issue 18): every subset of the
 * deletable nodes within the budget is tried, the moved pods packed onto
 * the kept nodes by backtracking; the pool launches nothing (its cpu
 * limit is used up), so deleting is the only move and that subset search
 * is the optimum. --optimize is never below it nor above the plain pass,
 * the bound within budgets never above it ---- */

#define EX_NODES 9
#define EX_PODS 4

typedef struct ex_estate {
    uint32_t nn;
    int cpu[EX_NODES];              /* allocatable, millicores */
    double price[EX_NODES];
    int deletable[EX_NODES];
    int npods[EX_NODES];
    int pod[EX_NODES][EX_PODS];     /* requests, millicores */
    int allowed;
} ex_estate;

/* Places pods[i..n) onto free (cpu) and slots (pod count); 1 when all fit. */
static int ex_pack(const int *pods, uint32_t i, uint32_t n, int *free, int *slots, uint32_t nk)
{
    if (i == n)
        return 1;
    for (uint32_t k = 0; k < nk; k++) {
        int dup = 0; /* a node with the same room as an earlier one: same subtree */
        for (uint32_t j = 0; j < k && !dup; j++)
            dup = free[j] == free[k] && slots[j] == slots[k];
        if (dup || free[k] < pods[i] || !slots[k])
            continue;
        free[k] -= pods[i];
        slots[k]--;
        int ok = ex_pack(pods, i + 1, n, free, slots, nk);
        free[k] += pods[i];
        slots[k]++;
        if (ok)
            return 1;
    }
    return 0;
}

static int cmp_int_desc(const void *a, const void *b)
{
    return *(const int *)b - *(const int *)a;
}

/* The least cost per hour any set of deletions within the budget leaves. */
static double ex_optimum(const ex_estate *x)
{
    double total = 0, best = 0;
    for (uint32_t i = 0; i < x->nn; i++)
        total += x->price[i];
    for (uint32_t mask = 1; mask < (1u << x->nn); mask++) {
        int cnt = 0, ok = 1;
        double saved = 0;
        for (uint32_t i = 0; i < x->nn; i++)
            if (mask >> i & 1) {
                ok &= x->deletable[i];
                cnt++;
                saved += x->price[i];
            }
        if (!ok || cnt > x->allowed || saved <= best)
            continue;
        int pods[EX_NODES * EX_PODS], free[EX_NODES], slots[EX_NODES];
        uint32_t np = 0, nk = 0;
        for (uint32_t i = 0; i < x->nn; i++) {
            if (mask >> i & 1) {
                for (int j = 0; j < x->npods[i]; j++)
                    pods[np++] = x->pod[i][j];
                continue;
            }
            int used = 0;
            for (int j = 0; j < x->npods[i]; j++)
                used += x->pod[i][j];
            free[nk] = x->cpu[i] - used;
            slots[nk++] = 30 - x->npods[i];
        }
        qsort(pods, np, sizeof *pods, cmp_int_desc);
        if (ex_pack(pods, 0, np, free, slots, nk))
            best = saved;
    }
    return total - best;
}

static void ex_random(buf *b, berth_rng *r, ex_estate *x)
{
    static const int cpus[5] = {250, 500, 1000, 1500, 2000};
    static const char *budgets[4] = {"100%", "100%", "30%", "2"};
    uint32_t bi = (uint32_t)berth_rng_below(r, 4);
    b->n = 0;
    memset(x, 0, sizeof *x);
    /* launches nothing: its cpu limit is used up */
    add(b, "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: p}\nspec:\n"
           "  template:\n    spec:\n"
           "      nodeClassRef: {group: karpenter.azure.com, kind: AKSNodeClass, name: default}\n"
           "  limits: {cpu: \"1\"}\n"
           "  disruption:\n    consolidationPolicy: WhenEmptyOrUnderutilized\n"
           "    consolidateAfter: 0s\n    budgets: [{nodes: \"%s\"}]\n",
        budgets[bi]);
    types(b);
    add(b, "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web, "
           "namespace: default}\nspec: {maxUnavailable: 0, selector: {matchLabels: {app: web}}}\n");
    x->nn = 4 + (uint32_t)berth_rng_below(r, EX_NODES - 3);
    char name[16], pname[32];
    for (uint32_t i = 0; i < x->nn; i++) {
        int size = 2 << berth_rng_below(r, 3);
        x->cpu[i] = size * 1000;
        x->price[i] = 0.05 * size;
        x->deletable[i] = 1;
        snprintf(name, sizeof name, "n%u", i);
        node(b, name, "p", size, "on-demand", "z1", NULL, NULL);
        int np = 1 + (int)berth_rng_below(r, EX_PODS), used = 0;
        for (int j = 0; j < np; j++) {
            int c = cpus[berth_rng_below(r, 5)];
            if (used + c > x->cpu[i])
                continue;
            used += c;
            x->pod[i][x->npods[i]++] = c;
            snprintf(pname, sizeof pname, "p%u-%d", i, j);
            char cpu[16];
            snprintf(cpu, sizeof cpu, "%dm", c);
            uint64_t kind = berth_rng_below(r, 30);
            const char *meta = NULL;
            if (kind == 0)
                meta = "  annotations: {karpenter.sh/do-not-disrupt: \"true\"}\n";
            else if (kind == 1)
                meta = "  labels: {app: web}\n";
            if (meta)
                x->deletable[i] = 0;
            pod(b, pname, name, cpu, meta, NULL);
        }
    }
    x->allowed = bi < 2 ? (int)x->nn : bi == 2 ? (int)((x->nn * 30 + 99) / 100) : 2;
}

static void test_exact_tiny_estates(void **st)
{
    (void)st;
    static buf b;
    berth_rng r;
    berth_rng_seed(&r, 18);
    const char *env = getenv("DISRUPT_EXACT_ITERS"); /* longer local runs */
    int iters = env ? atoi(env) : 150;
    double sum = 0, worst = 0, sum_plain = 0;
    int hit = 0, n = 0;
    for (int iter = 0; iter < iters; iter++) {
        ex_estate x;
        ex_random(&b, &r, &x);
        double opt = ex_optimum(&x);
        fixture f, h;
        plan(&f, &b, 0, 0, 0);
        plan(&h, &b, 1, 0, 0);
        /* the optimum is a plan, so neither the bound nor any plan is below it */
        if (h.p.cost_after < opt - 1e-9 || f.p.cost_after < opt - 1e-9 ||
            h.p.bound_cost_budgets > opt + 1e-9)
            fail_msg("estate %d: optimum %.4f, plain %.4f, optimized %.4f, bound %.4f\n%s", iter,
                     opt, f.p.cost_after, h.p.cost_after, h.p.bound_cost_budgets, b.s);
        assert_true(h.p.cost_after <= f.p.cost_after + 1e-9);
        double gap = (h.p.cost_after - opt) / opt;
        /* DISRUPT_EXACT_DUMP=N: every gap, and estate N's input */
        const char *dump = getenv("DISRUPT_EXACT_DUMP");
        if (gap > 1e-9 && dump)
            fprintf(stderr, "estate %d gap %.2f %% (plain %.2f %%)\n%s", iter, 100 * gap,
                    100 * (f.p.cost_after - opt) / opt, atoi(dump) == iter ? b.s : "");
        sum += gap;
        sum_plain += (f.p.cost_after - opt) / opt;
        worst = gap > worst ? gap : worst;
        hit += gap < 1e-9;
        n++;
        done(&f);
        done(&h);
    }
    print_message("exact: %d estates, --optimize %.2f %% above the optimum on average (worst "
                  "%.2f %%, optimal in %d), plain pass %.2f %%\n",
                  n, 100 * sum / n, 100 * worst, hit, 100 * sum_plain / n);
    /* the claim (docs/disrupt.md "Quality"): within 3 % of the optimum on
     * average. Per estate the kube scheduler's placement (queue order,
     * least-allocated scoring) is not an optimal packing, so a deletion
     * set that fits only when packed tightly is out of reach (one node
     * of four is a large fraction): at least 90 % of the estates optimal */
    assert_true(sum / n <= 0.03);
    assert_true(hit * 10 >= n * 9);
}

/* Mid-size estates of one family whose pods have another shape (issue 18
 * item 1, the hard case of bench/quality/disrupt_gap.py): E-like nodes (8
 * GiB per cpu) running pods of about 4 GiB per cpu, D-like (4 GiB per cpu,
 * cheaper per cpu) and F-like (2 GiB per cpu) types to launch, 40-70
 * nodes filled to 25-85 %, 2 % of the pods do-not-disrupt, budgets 100 %. */
static void shape_estate(buf *b, berth_rng *r)
{
    static const struct { char fam; int gib; double price; } fam[] = {
        {'D', 4, 0.048}, {'E', 8, 0.063}, {'F', 2, 0.0423}};
    b->n = 0;
    pool(b, "p", "      requirements:\n"
                 "      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}\n",
         "100%", NULL);
    for (int f = 0; f < 3; f++)
        for (int i = 0; i < 4; i++) {
            int cpu = 2 << i;
            add(b, "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: %c%d}\n"
                   "spec:\n  capacity: {cpu: \"%d\", memory: %dGi, pods: 110}\n  offerings:\n"
                   "  - {zone: z1, capacityType: on-demand, price: %g}\n",
                fam[f].fam, cpu, cpu, cpu * fam[f].gib, cpu * fam[f].price);
        }
    /* deployments: cpu-heavy, memory-heavy or balanced pods (m, MiB) */
    int ndep = 5 + (int)berth_rng_below(r, 6), dcpu[10], dmem[10];
    static const int cc[] = {500, 750, 1000, 1500, 2000}, cm[] = {256, 512, 1024};
    static const int mc[] = {100, 250, 500}, mm[] = {2048, 3072, 4096, 6144};
    static const int bc[] = {250, 500, 1000}, bm[] = {1024, 2048, 4096};
    for (int d = 0; d < ndep; d++) {
        int kind = (int)berth_rng_below(r, 3);
        dcpu[d] = kind == 0 ? cc[berth_rng_below(r, 5)] : kind == 1 ? mc[berth_rng_below(r, 3)]
                                                                   : bc[berth_rng_below(r, 3)];
        dmem[d] = kind == 0 ? cm[berth_rng_below(r, 3)] : kind == 1 ? mm[berth_rng_below(r, 4)]
                                                                   : bm[berth_rng_below(r, 3)];
    }
    int nn = 40 + (int)berth_rng_below(r, 31), np = 0;
    for (int i = 0; i < nn; i++) {
        int sz = (int)berth_rng_below(r, 9), cpu = sz < 3 ? 2 : sz < 6 ? 4 : sz < 8 ? 8 : 16;
        char name[16];
        snprintf(name, sizeof name, "n%02d", i);
        add(b, "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: %s\n"
               "  labels: {karpenter.sh/nodepool: p, node.kubernetes.io/instance-type: E%d, "
               "karpenter.sh/capacity-type: on-demand, topology.kubernetes.io/zone: z1}\n"
               "  creationTimestamp: \"2024-04-30T00:00:00Z\"\n"
               "status:\n  nodeName: %s\n  conditions:\n  - {type: Initialized, status: \"True\", "
               "lastTransitionTime: \"2024-04-30T00:05:00Z\"}\n"
               "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n"
               "  labels: {karpenter.sh/nodepool: p, node.kubernetes.io/instance-type: E%d, "
               "karpenter.sh/capacity-type: on-demand, topology.kubernetes.io/zone: z1, "
               "kubernetes.io/hostname: %s, karpenter.sh/initialized: \"true\"}\n"
               "status:\n  allocatable: {cpu: \"%d\", memory: %dGi, pods: \"110\"}\n",
            name, cpu, name, name, cpu, name, cpu, cpu * 8);
        double target = 0.25 + 0.6 * (double)berth_rng_below(r, 1000) / 1000;
        int uc = 0, um = 0, placed = 0;
        for (int t = 0; t < 40; t++) {
            int d = (int)berth_rng_below(r, (uint64_t)ndep);
            if ((uc + dcpu[d] > cpu * 1000 * target || um + dmem[d] > cpu * 8192 * target) &&
                (placed || uc + dcpu[d] > cpu * 1000 || um + dmem[d] > cpu * 8192))
                continue;
            uc += dcpu[d];
            um += dmem[d];
            placed++;
            int dnd = berth_rng_below(r, 50) == 0;
            add(b, "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: app%d-%d\n"
                   "  namespace: default\n  labels: {app: app%d}\n%s"
                   "spec:\n  nodeName: %s\n  containers:\n  - name: c\n"
                   "    resources: {requests: {cpu: %dm, memory: %dMi}}\n"
                   "status:\n  phase: Running\n  startTime: \"2024-05-01T11:00:00Z\"\n"
                   "  conditions: [{type: Ready, status: \"True\"}]\n",
                d, np++, d, dnd ? "  annotations: {karpenter.sh/do-not-disrupt: \"true\"}\n" : "",
                name, dcpu[d], dmem[d]);
        }
    }
}

static void test_optimizer_mid_shape_estates(void **st)
{
    (void)st;
    static buf b;
    berth_rng r;
    berth_rng_seed(&r, 1818);
    const char *env = getenv("DISRUPT_SHAPE_ITERS"); /* longer local runs */
    int iters = env ? atoi(env) : 6;
    double sum = 0;
    for (int iter = 0; iter < iters; iter++) {
        shape_estate(&b, &r);
        fixture f, h;
        plan(&f, &b, 0, 0, 0);
        plan(&h, &b, 1, 0, 0);
        assert_true(h.p.cost_after <= f.p.cost_after + 1e-9);
        assert_true(h.p.bound_cost <= h.p.cost_after + 1e-9);
        double gap = (h.p.cost_after - h.p.bound_cost) / h.p.bound_cost;
        if (getenv("DISRUPT_SHAPE_DUMP"))
            fprintf(stderr, "shape estate %d: %u nodes, plain %.4f, optimized %.4f, bound %.4f "
                            "(+%.2f %%)\n",
                    iter, f.m.kube.nnodes, f.p.cost_after, h.p.cost_after, h.p.bound_cost,
                    100 * gap);
        sum += gap;
        done(&f);
        done(&h);
    }
    print_message("shape: %d estates, --optimize %.2f %% above the lower bound on average\n",
                  iters, 100 * sum / iters);
    /* regression guard (docs/disrupt.md "Quality"): the bound is loose
     * here (it covers cpu and memory separately), so the figure is
     * relative: 27.63 % with the small-estate search (TRIAL_SMALL_WORK,
     * 96 trials), 28.02 % before it (24 trials, estates 3 and 11 of 12
     * keep more) */
    if (!env)
        assert_true(sum / iters <= 0.278);
}

/* ---- the swap move of the local search (issue 18 item 1) ----
 * Twenty-one D2/D4/D8 nodes (0.1/h per 2 cpu) of one on-demand pool, pods
 * of 0.3-1.9 cpu (found by a random search over estates of this shape and
 * shrunk): the local search's single moves (a kept node first, a deleted
 * one last) leave 2.0/h; moving a kept node first and a deleted one last
 * in the same trial (swap) reaches 1.9/h. The plain pass leaves more. */
static void swap_estate(buf *b)
{
    static const struct {
        int cpu;
        const char *pods[5];
    } nodes[] = {
        {2, {"500m"}},
        {8, {"300m", "1900m", "700m", "1000m"}},
        {2, {"1000m"}},
        {2, {"1500m"}},
        {4, {"700m", "500m"}},
        {2, {"1000m"}},
        {2, {"1000m"}},
        {8, {"500m", "1900m", "700m"}},
        {2, {"300m", "300m"}},
        {8, {"700m", "1000m", "300m", "300m"}},
        {4, {"1500m"}},
        {4, {"500m", "700m", "1000m"}},
        {8, {"1500m", "1900m", "1500m", "300m"}},
        {2, {"1000m"}},
        {4, {"1900m", "700m"}},
        {4, {"1900m"}},
        {4, {"1000m"}},
        {4, {"1000m"}},
        {2, {"1900m"}},
        {8, {"500m", "1900m", "700m"}},
        {2, {"300m"}},
    };
    b->n = 0;
    pool(b, "p", OD_ONLY, "100%", NULL);
    types(b);
    for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
        char nm[16], pn[24];
        snprintf(nm, sizeof nm, "n%zu", i);
        node(b, nm, "p", nodes[i].cpu, "on-demand", "z1", NULL, NULL);
        for (int j = 0; j < 5 && nodes[i].pods[j]; j++) {
            snprintf(pn, sizeof pn, "n%zu-%d", i, j);
            pod(b, pn, nm, nodes[i].pods[j], NULL, NULL);
        }
    }
}

static void test_optimizer_swap_move(void **st)
{
    (void)st;
    static buf b;
    fixture f;
    swap_estate(&b);
    plan(&f, &b, 0, 0, 0);
    double plain = f.p.cost_after;
    done(&f);
    plan(&f, &b, 1, 0, 0);
    assert_true(f.p.optimized);
    /* 2.0/h without the swap move */
    assert_true(f.p.cost_after < 1.95);
    assert_true(f.p.cost_after > 1.85);
    assert_true(f.p.cost_after < plain - 1e-9);
    assert_true(f.p.bound_cost <= f.p.cost_after + 1e-9);
    done(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_optimizer_beats_greedy),
        cmocka_unit_test(test_optimizer_respects_budgets_and_dnd),
        cmocka_unit_test(test_optimizer_many_node_command),
        cmocka_unit_test(test_random_fast_equals_reference_and_bound),
        cmocka_unit_test(test_exact_tiny_estates),
        cmocka_unit_test(test_optimizer_mid_shape_estates),
        cmocka_unit_test(test_optimizer_swap_move),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
