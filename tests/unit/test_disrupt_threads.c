/* tests/unit/test_disrupt_threads.c - speculative candidate evaluation
 * (docs/disrupt.md "Threads", issue 15 item 6): on random estates of
 * 1,030-1,130 nodes (above BERTH_PAR_MIN, so the plan's questions run on
 * worker contexts) laid out as kubectl lists them, a plan with 2 and 4
 * threads equals the plan with 1 thread: method, actions (reason, nodes,
 * replacements with their excluded offerings and reasons), blocked nodes
 * and their texts, outcome. The estates are built so that both parallel
 * searches have work: multi-node consolidation's binary search over a
 * prefix that mixes lightly used nodes (their pods fit elsewhere) with
 * full ones (their pods fit nowhere: a nodeSelector only the full nodes
 * carry) or whose prefixes are replaced by one new node, and single-node
 * consolidation walking past many failing candidates (full nodes whose pod
 * fits nowhere) before the first that works; some pods carry an
 * anti-affinity term so that the session schedules (no counting
 * certificate). Also the probe tree of the parallel binary search against
 * the sequential search on random non-monotone answers. */
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
#include "disrupt/state.h"

#define NOW 1714564800 /* 2024-05-01T12:00:00Z */

#define YAML_BUF_SIZE (8 << 20)
#include "disrupt_fixture.h"

/* A random estate of nn nodes (kubectl lists: items without kind,
 * managedFields, status blocks). budget: the Underutilized budget. One
 * node in `full` is a full D2 or D4 whose one pod (85-95 % of the node)
 * selects role=full, a label only the full nodes carry (it fits nowhere
 * else, nor on a new node: consolidating it fails), ranked high (price per
 * pod 0.1-0.2); one in `light` (0: none) is a D8 with 1-3 small pods,
 * ranked highest (deletable); the others are D8s with 8-12 small pods,
 * ranked last (deletable); one in `swing` is a D4 whose 2 pods (600-1,300m)
 * select role=swing, which only these nodes and new nodes (the template's
 * label) carry, and which has room for no third pod: a prefix of them is
 * replaced by one new node when one type hosts their sum and is strictly
 * cheaper, so the binary search's answers step with the instance prices
 * (D16 costs as much as four D4s: not monotone in the prefix length). A
 * quarter of the small pods carry a required anti-affinity term (selecting
 * nothing): not plain, so their questions are scheduled by the session
 * rather than certified. 0 for full, light or swing: none. */
static void estate(buf *b, berth_rng *r, uint32_t nn, const char *budget, uint32_t full,
                   uint32_t light, uint32_t swing)
{
    static const int cpus[4] = {2, 4, 8, 16};
    static const char *zones[2] = {"z1", "z2"};
    b->n = 0;
    add(b, "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n"
           "  template:\n    metadata:\n      labels: {role: swing}\n    spec:\n"
           "      nodeClassRef: {group: karpenter.azure.com, kind: AKSNodeClass, name: default}\n"
           "      requirements:\n"
           "      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}\n"
           "  disruption:\n    consolidationPolicy: WhenEmptyOrUnderutilized\n"
           "    consolidateAfter: 0s\n    budgets: [{nodes: \"%s\"}]\n",
        budget);
    for (int t = 0; t < 4; t++)
        add(b, "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: D%d}\nspec:\n"
               "  capacity: {cpu: \"%d\", memory: %dGi, pods: 110}\n  offerings:\n"
               "  - {zone: z1, capacityType: on-demand, price: %g}\n"
               "  - {zone: z2, capacityType: on-demand, price: %g}\n",
            cpus[t], cpus[t], 4 * cpus[t], 0.05 * cpus[t], 0.052 * cpus[t]);
    /* per node: size index, zone, kind (0 other, 1 full, 2 light) */
    uint8_t *sz = malloc(nn), *zn = malloc(nn), *kind = malloc(nn);
    assert_non_null(sz);
    assert_non_null(zn);
    assert_non_null(kind);
    for (uint32_t i = 0; i < nn; i++) {
        kind[i] = full && berth_rng_below(r, full) == 0     ? 1
                  : light && berth_rng_below(r, light) == 0 ? 2
                  : swing && berth_rng_below(r, swing) == 0 ? 3
                                                            : 0;
        sz[i] = kind[i] == 1 ? (uint8_t)berth_rng_below(r, 2) : kind[i] == 3 ? 1 : 2;
        zn[i] = (uint8_t)berth_rng_below(r, 2);
    }
    add(b, "---\napiVersion: karpenter.sh/v1\nkind: NodeClaimList\nmetadata: {resourceVersion: \"91\"}\n"
           "items:\n");
    for (uint32_t i = 0; i < nn; i++)
        add(b, "- apiVersion: karpenter.sh/v1\n  kind: NodeClaim\n  metadata:\n"
               "    name: c-%05u\n    creationTimestamp: \"2024-04-20T00:00:00Z\"\n"
               "    labels: {karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: D%d, "
               "topology.kubernetes.io/zone: %s, karpenter.sh/capacity-type: on-demand}\n"
               "    managedFields: [{manager: karpenter, operation: Update, apiVersion: karpenter.sh/v1}]\n"
               "  status:\n    nodeName: n-%05u\n    conditions:\n"
               "    - {type: Initialized, status: \"True\", lastTransitionTime: \"2024-04-20T00:05:00Z\"}\n",
            i, cpus[sz[i]], zones[zn[i]], i);
    add(b, "---\napiVersion: v1\nkind: NodeList\nmetadata: {resourceVersion: \"92\"}\nitems:\n");
    for (uint32_t i = 0; i < nn; i++) {
        int cpu = cpus[sz[i]];
        add(b, "- metadata:\n    name: n-%05u\n"
               "    labels: {karpenter.sh/nodepool: default, karpenter.sh/initialized: \"true\", "
               "node.kubernetes.io/instance-type: D%d, topology.kubernetes.io/zone: %s, "
               "karpenter.sh/capacity-type: on-demand, kubernetes.io/hostname: n-%05u, role: %s}\n"
               "    managedFields: [{manager: kubelet, operation: Update, apiVersion: v1}]\n"
               "  spec: {providerID: \"azure:///vm/%05u\"}\n"
               "  status:\n    capacity: {cpu: \"%d\", memory: %dGi, pods: \"%d\"}\n"
               "    allocatable: {cpu: \"%d\", memory: %dGi, pods: \"%d\"}\n"
               "    conditions: [{type: Ready, status: \"True\"}]\n",
            i, cpu, zones[zn[i]], i, kind[i] == 1 ? "full" : kind[i] == 3 ? "swing" : "web", i,
            cpu, 4 * cpu, kind[i] == 3 ? 2 : 110, cpu, 4 * cpu, kind[i] == 3 ? 2 : 110);
    }
    add(b, "---\napiVersion: v1\nkind: PodList\nmetadata: {resourceVersion: \"93\"}\nitems:\n");
    for (uint32_t i = 0; i < nn; i++) {
        int cpu = cpus[sz[i]] * 1000;
        uint32_t np = kind[i] == 1   ? 1
                      : kind[i] == 2 ? 1 + (uint32_t)berth_rng_below(r, 3)
                      : kind[i] == 3 ? 2
                                     : 8 + (uint32_t)berth_rng_below(r, 5);
        for (uint32_t j = 0; j < np; j++) {
            int req = kind[i] == 1   ? cpu * (85 + (int)berth_rng_below(r, 11)) / 100
                      : kind[i] == 3 ? 600 + 100 * (int)berth_rng_below(r, 8)
                                     : 200 + 50 * (int)berth_rng_below(r, 5);
            uint32_t app = (uint32_t)berth_rng_below(r, 40);
            int anti = kind[i] != 1 && berth_rng_below(r, 4) == 0;
            add(b, "- metadata:\n    name: p-%05u-%u\n    namespace: ns%u\n"
                   "    labels: {app: a%u}\n    creationTimestamp: \"2024-04-21T00:00:00Z\"\n"
                   "    ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: a%u-5d8f, "
                   "uid: u%u, controller: true}]\n"
                   "    managedFields: [{manager: kube-controller-manager, operation: Update, "
                   "apiVersion: v1}]\n"
                   "  spec:\n    nodeName: n-%05u\n%s%s"
                   "    containers: [{name: app, image: app:1, resources: {requests: {cpu: %dm, "
                   "memory: 256Mi}}}]\n"
                   "  status: {phase: Running, conditions: [{type: Ready, status: \"True\"}]}\n",
                i, j, app % 5, app, app, app, i,
                kind[i] == 1   ? "    nodeSelector: {role: full}\n"
                : kind[i] == 3 ? "    nodeSelector: {role: swing}\n"
                               : "",
                anti ? "    affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                       "[{topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: "
                       "{app: zz}}}]}}\n"
                     : "",
                req);
        }
    }
    free(sz);
    free(zn);
    free(kind);
}

static void put(char **s, size_t *n, size_t *cap, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int w = vsnprintf(*s + *n, *cap - *n, fmt, ap);
        va_end(ap);
        assert_true(w >= 0);
        if (*n + (size_t)w < *cap) {
            *n += (size_t)w;
            return;
        }
        *cap = (*cap + (size_t)w) * 2;
        *s = realloc(*s, *cap);
        assert_non_null(*s);
    }
}

/* Everything the plan says, as text (the caller frees it). */
static char *describe(const berth_disrupt *m, const berth_dplan *p)
{
    size_t n = 0, cap = 4096;
    char *s = malloc(cap);
    assert_non_null(s);
    s[0] = 0;
    put(&s, &n, &cap, "method %s, nodes %lld -> %lld, cost %.6f -> %.6f\n",
        p->method ? p->method : "-", (long long)p->nodes_before, (long long)p->nodes_after,
        p->cost_before, p->cost_after);
    for (uint32_t i = 0; i < p->nactions; i++) {
        const berth_daction *a = &p->actions[i];
        put(&s, &n, &cap, "action %s %s savings %.6f:", a->replace ? "replace" : "delete",
            berth_dreason_name(a->reason), a->savings);
        for (uint32_t j = 0; j < a->nnodes; j++)
            put(&s, &n, &cap, " %s", m->kube.nodes[a->nodes[j]].name);
        for (uint32_t j = 0; j < a->nreplacements; j++) {
            const berth_dreplacement *x = &a->replacements[j];
            put(&s, &n, &cap, "\n  -> %s/%s/%s %.6f", x->instance_type, x->zone, x->nodepool,
                x->price);
            for (uint32_t k = 0; k < x->nexcluded; k++)
                put(&s, &n, &cap, "\n     not %s/%s/%s %.6f: %s", x->excluded[k].instance_type,
                    x->excluded[k].zone, x->excluded[k].nodepool, x->excluded[k].price,
                    x->excluded[k].reason);
        }
        put(&s, &n, &cap, "\n");
    }
    for (uint32_t i = 0; i < p->nblocked; i++)
        put(&s, &n, &cap, "blocked %s: %s\n", m->kube.nodes[p->blocked[i].node].name,
            p->blocked[i].reason);
    return s;
}

static char *plan_text(const berth_disrupt *m, uint32_t threads, int optimize, berth_dplan *keep)
{
    berth_dplan_options o = {.now = NOW, .threads = threads, .optimize = optimize};
    berth_dplan p;
    berth_error e;
    if (berth_disrupt_plan(m, &o, &p, &e))
        fail_msg("plan (%u threads): %s", threads, e.msg);
    char *s = describe(m, &p);
    if (keep)
        *keep = p;
    else
        berth_dplan_free(&p);
    return s;
}

/* Consolidation failures listed before the action (each a question the
 * single-node walk answered before its first success). */
static uint32_t walked(const berth_dplan *p)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->nblocked; i++)
        n += strstr(p->blocked[i].reason, "fit neither") != NULL ||
             strstr(p->blocked[i].reason, "cheaper") != NULL;
    return n;
}

static void test_threads_plan_as_one_thread(void **st)
{
    (void)st;
    static buf b;
    /* a wide budget with light nodes among the full ones (the binary
     * search finds a prefix), a budget of one node (the single-node walk
     * alone, past every full node), a wide budget without light nodes (the
     * binary search fails, then the walk), one node with a few light ones */
    static const struct {
        const char *budget;
        uint32_t full, light, swing;
    } cases[] = {{"100%", 10, 30, 0}, {"1", 20, 0, 0}, {"100%", 15, 0, 0}, {"100%", 0, 0, 6}};
    uint32_t singles = 0, multis = 0, long_walks = 0;
    for (uint32_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        berth_rng r;
        berth_rng_seed(&r, 1000 + c);
        uint32_t nn = 1030 + (uint32_t)berth_rng_below(&r, 100);
        estate(&b, &r, nn, cases[c].budget, cases[c].full, cases[c].light, cases[c].swing);
        berth_disrupt m;
        berth_error e;
        if (load_model(&m, &b, &e))
            fail_msg("load: %s", e.msg);
        assert_true(m.kube.nnodes >= 1024);
        berth_dplan p1;
        char *one = plan_text(&m, 1, 0, &p1);
        for (uint32_t t = 2; t <= 4; t += 2) {
            char *many = plan_text(&m, t, 0, NULL);
            if (strcmp(one, many))
                fail_msg("estate %u: %u threads planned differently\n--- 1 thread:\n%.3000s\n"
                         "--- %u threads:\n%.3000s",
                         c, t, one, t, many);
            free(many);
        }
        if (getenv("TEST_DISRUPT_THREADS_SHOW"))
            fprintf(stderr, "estate %u: %u nodes, %s, %u walked, %u blocked\n%.2000s\n", c, nn,
                    p1.method ? p1.method : "-", walked(&p1), p1.nblocked, one);
        singles += p1.method && !strcmp(p1.method, "SingleNodeConsolidation");
        multis += p1.method && !strcmp(p1.method, "MultiNodeConsolidation");
        long_walks += walked(&p1) >= 8;
        berth_dplan_free(&p1);
        free(one);
        berth_disrupt_free(&m);
    }
    /* the estates exercise both searches, and a walk past several batches */
    assert_true(singles >= 1);
    assert_true(multis >= 1);
    assert_true(long_walks >= 1);
}

/* The sequential search of plan.c's step 3 over answers works[len]
 * (prefix lengths 2..n): the probes it asks, in order, into seq; their
 * count. *best: the longest working prefix it settles on (0 none). */
static uint32_t seq_search(const uint8_t *works, uint32_t n, uint32_t *seq, uint32_t *best)
{
    uint32_t lo = 1, hi = n - 1, ns = 0;
    *best = 0;
    while (lo <= hi) {
        uint32_t mid = (lo + hi) / 2;
        seq[ns++] = mid;
        if (works[mid + 1]) {
            *best = mid + 1;
            lo = mid + 1;
        } else {
            if (!mid)
                break;
            hi = mid - 1;
        }
    }
    return ns;
}

/* The parallel rounds (disrupt_probes_plan / _walk, as plan.c's
 * multi_parallel drives them) ask the sequential search's probes in the
 * same order and settle on the same prefix for every depth, on random
 * answers that are not monotone in the prefix length (the replacement's
 * price steps make real ones non-monotone), and never ask more than
 * 2^depth - 1 questions per round. */
static void test_parallel_binary_search_walks_the_sequential_path(void **st)
{
    (void)st;
    berth_rng r;
    berth_rng_seed(&r, 77);
    uint8_t works[102];
    uint32_t seq[64], par[64], taken[DISRUPT_PROBE_DEPTH_MAX];
    int ok[DISRUPT_PROBE_MAX];
    for (uint32_t it = 0; it < 4000; it++) {
        uint32_t n = 2 + (uint32_t)berth_rng_below(&r, 99);
        uint32_t pct = (uint32_t)berth_rng_below(&r, 101);
        for (uint32_t i = 0; i <= n; i++)
            works[i] = berth_rng_below(&r, 100) < pct;
        uint32_t best_seq, ns = seq_search(works, n, seq, &best_seq);
        for (uint32_t threads = 1; threads <= 40; threads += 1 + threads / 3) {
            uint32_t depth = disrupt_probe_depth(threads);
            assert_true(depth >= 1 && (1u << depth) - 1 <= threads);
            uint32_t lo = 1, hi = n - 1, np = 0, best = 0;
            int stop = 0;
            while (!stop && lo <= hi) {
                disrupt_probes t;
                disrupt_probes_plan(&t, depth, lo, hi);
                assert_true(t.nq >= 1 && t.nq <= (1u << depth) - 1);
                for (uint32_t q = 0; q < t.nq; q++)
                    ok[q] = works[t.mid[q] + 1];
                uint32_t nt = disrupt_probes_walk(&t, ok, taken);
                assert_true(nt >= 1 && nt <= depth);
                for (uint32_t j = 0; j < nt; j++) {
                    uint32_t mid = t.mid[taken[j]];
                    assert_true(np < 64);
                    par[np++] = mid;
                    if (ok[taken[j]]) {
                        best = mid + 1;
                        lo = mid + 1;
                    } else if (!mid) {
                        stop = 1;
                        break;
                    } else {
                        hi = mid - 1;
                    }
                }
            }
            assert_int_equal(np, ns);
            assert_memory_equal(par, seq, ns * sizeof *seq);
            assert_int_equal(best, best_seq);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parallel_binary_search_walks_the_sequential_path),
        cmocka_unit_test(test_threads_plan_as_one_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
