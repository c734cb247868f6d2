/* tests/unit/test_crosslayer.c - `simulate --workloads` (berth/crosslayer.h):
 * property over random estates and kube clusters: after every phase no
 * pod but a DaemonSet's is on a node that is down, every pod reported
 * moved went to a node that is up, and the phase's pending count is the
 * number of pods without a node; the mapping guesses the cluster from the
 * Nodes' VM names and warns about Nodes without VMs; with the bare-metal
 * advice the recorded phases are the same and the advised rack order is a
 * permutation of the given one, never worse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "berth/crosslayer.h"
#include "berth/random.h"

#define YAML_BUF_SIZE (1 << 18)
#include "yaml_buf.h"

typedef struct check {
    uint32_t phases, with_down, moved, held;
    uint64_t fp;                  /* the run's phases, hashed */
    uint32_t reordered, extra;    /* --advise-upgrade: racks reordered, extra nodes found */
} check;

static uint64_t fnv(uint64_t h, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        h ^= (v >> (8 * i)) & 0xff;
        h *= 1099511628211ull;
    }
    return h;
}

static void on_phase(void *ctx, const berth_xl *x, uint32_t cluster, const uint8_t *down,
                     const uint32_t *pod_node)
{
    check *ck = ctx;
    const berth_kcluster *k = berth_xl_kube(x, cluster);
    const berth_xl_phase *ph = &x->phases[x->nphases - 1];
    ck->phases++;
    ck->with_down += ph->nodes_down > 0;
    ck->moved += ph->moved;
    ck->held += ph->nholds;
    uint32_t pending = 0;
    for (uint32_t p = 0; p < k->npods; p++) {
        uint32_t n = pod_node[p];
        if (n == BERTH_KUBE_NONE) {
            pending += !k->pods[p].terminating;
            continue;
        }
        assert_true(n < k->nnodes);
        if (down[n]) /* only a DaemonSet's pods stay on a node that is down */
            assert_true(k->pods[p].owner_kind && !strcmp(k->pods[p].owner_kind, "DaemonSet"));
    }
    assert_int_equal(pending, ph->pending);
    for (uint32_t i = 0; i < ph->npods; i++) {
        const berth_xl_pod *mp = &x->pods[ph->pod0 + i];
        if (!mp->to)
            continue;
        for (uint32_t n = 0; n < k->nnodes; n++)
            if (!strcmp(k->nodes[n].name, mp->to))
                assert_false(down[n]);
    }
}

static void load(berth_arena *a, const buf *b, const char *name, berth_source *src)
{
    berth_error e;
    berth_error_clear(&e);
    int rc = berth_doc_load_buffer(a, name, b->s, b->n, src, &e);
    if (rc)
        fail_msg("%s", e.msg);
}

static void one_estate(uint64_t seed, check *ck, int advise)
{
    berth_rng r;
    berth_rng_seed(&r, seed);
    uint32_t racks = 2 + (uint32_t)berth_rng_below(&r, 3), per = 2 + (uint32_t)berth_rng_below(&r, 2);
    uint32_t workers = 2 + (uint32_t)berth_rng_below(&r, racks * per - 1);
    static buf b; /* big: not on the stack */
    b.n = 0;
    add(&b, "apiVersion: berth.io/v1\nkind: Site\nmetadata: {name: s}\nspec:\n  racks: %u\n"
            "  machinesPerRack: %u\n  machine:\n    numaCells: 2\n    cell: {cpu: 48, memory: 224Gi}\n"
            "---\napiVersion: networkcloud.azure.com/v1\nkind: KubernetesCluster\nmetadata: {name: c1}\n"
            "spec:\n  controlPlaneNodeConfiguration: {count: 1, vmSkuName: NC_G6_28_v1}\n"
            "  initialAgentPoolConfigurations:\n  - {name: w, count: %u, vmSkuName: NC_G12_56_v1}\n",
        racks, per, workers);
    if (berth_rng_below(&r, 2))
        add(&b, "---\napiVersion: berth.io/v1\nkind: Operation\nmetadata: {name: shrink}\n"
                "spec: {action: scale-pool, cluster: c1, pool: w, count: %u}\n", workers - 1);
    add(&b, "---\napiVersion: berth.io/v1\nkind: Operation\nmetadata: {name: up}\n"
            "spec:\n  action: runtime-upgrade\n  updateStrategy: {maxUnavailable: %u}\n",
        1 + (uint32_t)berth_rng_below(&r, per));
    berth_nexus nx;
    berth_nexus_init(&nx);
    berth_error e;
    berth_error_clear(&e);
    berth_source src;
    load(&nx.arena, &b, "site.yaml", &src);
    assert_int_equal(berth_nexus_load(&nx, &src, 0, &e), 0);
    assert_int_equal(berth_nexus_validate(&nx, &e), 0);

    /* the kube side: kubectl-shaped Nodes for every VM, pods bound at random */
    b.n = 0;
    add(&b, "apiVersion: v1\nkind: NodeList\nitems:\n");
    add(&b, "- metadata: {name: c1-control-plane-1}\n  spec:\n    taints: [{key: node-role.kubernetes.io/"
            "control-plane, effect: NoSchedule}]\n  status: {conditions: [{type: Ready, status: \"True\"}]}\n");
    int labelled[16] = {0};
    for (uint32_t i = 1; i <= workers; i++) {
        labelled[i] = berth_rng_below(&r, 3) == 0;
        if (!labelled[i])
            add(&b, "- metadata: {name: c1-w-%u}\n  status:\n    allocatable: {cpu: \"8\", memory: 32Gi, "
                    "pods: \"30\"}\n    conditions: [{type: Ready, status: \"True\"}]\n", i);
        else /* allocatable from the VM's SKU; named through the label */
            add(&b, "- metadata:\n    name: node-%u\n    labels: {kubernetes.azure.com/nexus-vm: c1-w-%u}\n"
                    "  status: {conditions: [{type: Ready, status: \"True\"}]}\n", i, i);
    }
    uint32_t npods = 5 + (uint32_t)berth_rng_below(&r, 25);
    add(&b, "---\napiVersion: v1\nkind: PodList\nitems:\n");
    static const char *const apps[] = {"a", "b", "c"};
    for (uint32_t i = 0; i < npods; i++) {
        uint32_t w = 1 + (uint32_t)berth_rng_below(&r, workers);
        char node[32];
        snprintf(node, sizeof node, labelled[w] ? "node-%u" : "c1-w-%u", w);
        add(&b, "- metadata:\n    name: p%u\n    namespace: ns\n    labels: {app: %s}\n%s"
                "  spec:\n    nodeName: %s\n    containers: [{name: m, resources: {requests: "
                "{cpu: %um, memory: 1Gi}}}]\n  status:\n    phase: Running\n"
                "    conditions: [{type: Ready, status: \"True\"}]\n",
            i, apps[berth_rng_below(&r, 3)],
            berth_rng_below(&r, 8) ? "" : "    annotations: {karpenter.sh/do-not-disrupt: \"true\"}\n",
            node, 500 + 500 * (uint32_t)berth_rng_below(&r, 6));
    }
    add(&b, "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: a, namespace: ns}\n"
            "spec: {minAvailable: %u, selector: {matchLabels: {app: a}}}\n"
            "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b, namespace: ns}\n"
            "spec: {maxUnavailable: 1, selector: {matchLabels: {app: b}}}\n"
            "---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: ds, namespace: ns, uid: u-ds}\n"
            "spec:\n  selector: {matchLabels: {app: ds}}\n  template:\n    metadata: {labels: {app: ds}}\n"
            "    spec:\n      tolerations: [{operator: Exists}]\n"
            "      containers: [{name: m, resources: {requests: {cpu: 100m}}}]\n",
        1 + (uint32_t)berth_rng_below(&r, 3));
    berth_xl x;
    berth_xl_init(&x);
    x.on_phase = on_phase;
    x.phase_ctx = ck;
    x.advise = advise;
    berth_kcluster *k;
    assert_int_equal(berth_xl_cluster_for(&x, "c1", &k, NULL), 0);
    load(&k->arena, &b, "c1.yaml", &src);
    if (berth_kube_load(k, &src, 0, &e))
        fail_msg("%s", e.msg);
    const char *name, *other;
    assert_int_equal(berth_xl_guess_cluster(&nx, k, &name, &other), 0);
    assert_string_equal(name, "c1");
    if (berth_xl_prepare(&x, &nx, &e))
        fail_msg("%s", e.msg);
    berth_nexus_options opt = {.use_index = 1, .on_step = berth_xl_on_step, .step_ctx = &x};
    int rc = berth_nexus_run(&nx, &opt, &e);
    assert_true(rc == 0 || rc == BERTH_ENOFIT);
    ck->fp = 14695981039346656037ull;
    for (uint32_t i = 0; i < x.nphases; i++) {
        const berth_xl_phase *ph = &x.phases[i];
        const uint64_t v[] = {ph->step, ph->batch, ph->moved, ph->forced, ph->pending,
                              ph->recovered, ph->ds_left, ph->nholds, ph->nshorts, ph->npdbs,
                              ph->npods};
        for (size_t j = 0; j < sizeof v / sizeof *v; j++)
            ck->fp = fnv(ck->fp, v[j]);
        if (advise && ph->extra_pool && ph->extra_nodes != BERTH_XL_NONE) {
            assert_true(ph->pending > 0 && ph->extra_nodes > 0);
            ck->extra++;
        }
    }
    for (uint32_t i = 0; advise && i < x.norders; i++) {
        /* a permutation of the given racks, never worse than the given order */
        const berth_xl_order *o = &x.orders[i];
        const berth_step *st = &nx.steps[o->step];
        uint32_t seen = 0, given = 0, differs = 0;
        for (uint32_t bi = 0; bi < st->nbatches; bi++)
            if (!bi || st->batches[bi].rack != st->batches[bi - 1].rack) {
                differs += given < o->nracks && o->racks[given] != st->batches[bi].rack;
                given++;
            }
        assert_int_equal(o->nracks, given);
        ck->reordered += differs > 0;
        for (uint32_t a = 0; a < o->nracks; a++) {
            assert_false(seen & (1u << o->racks[a]));
            seen |= 1u << o->racks[a];
        }
        assert_true(o->advised_breaches < o->given_breaches ||
                    (o->advised_breaches == o->given_breaches &&
                     o->advised_pending <= o->given_pending));
    }
    berth_xl_free(&x);
    berth_nexus_free(&nx);
}

static void test_no_pod_on_a_down_node(void **state)
{
    (void)state;
    check ck = {0};
    for (uint64_t s = 1; s <= 40; s++)
        one_estate(s, &ck, 0);
    /* the property was exercised: nodes went down, pods moved, drains held */
    assert_true(ck.with_down > 40);
    assert_true(ck.moved > 0);
    assert_true(ck.held > 0);
}

/* --advise-upgrade: the rack-order trials and the extra nodes restore the
 * state, so the recorded phases are those of the run without advice; the
 * advised order is a permutation never worse than the given one. */
static void test_advice_leaves_the_run(void **state)
{
    (void)state;
    check a = {0}, b = {0};
    for (uint64_t s = 1; s <= 40; s++) {
        one_estate(s, &a, 0);
        one_estate(s, &b, 1);
        assert_true(a.fp == b.fp);
    }
    assert_true(b.extra > 0);
    print_message("advice: %u phases with extra nodes, %u rack orders changed\n", b.extra,
                  b.reordered);
}

static void test_guess_and_warnings(void **state)
{
    (void)state;
    static buf b;
    b.n = 0;
    add(&b, "apiVersion: berth.io/v1\nkind: Site\nmetadata: {name: s}\nspec:\n  racks: 2\n"
            "  machinesPerRack: 2\n  machine:\n    numaCells: 2\n    cell: {cpu: 48, memory: 224Gi}\n"
            "---\napiVersion: networkcloud.azure.com/v1\nkind: KubernetesCluster\nmetadata: {name: k1}\n"
            "spec:\n  controlPlaneNodeConfiguration: {count: 1, vmSkuName: NC_G6_28_v1}\n"
            "  initialAgentPoolConfigurations:\n  - {name: p, count: 2, vmSkuName: NC_G12_56_v1}\n"
            "---\napiVersion: networkcloud.azure.com/v1\nkind: KubernetesCluster\nmetadata: {name: k2}\n"
            "spec:\n  controlPlaneNodeConfiguration: {count: 1, vmSkuName: NC_G6_28_v1}\n"
            "  initialAgentPoolConfigurations:\n  - {name: q, count: 1, vmSkuName: NC_G6_28_v1}\n");
    berth_nexus nx;
    berth_nexus_init(&nx);
    berth_error e;
    berth_error_clear(&e);
    berth_source src;
    load(&nx.arena, &b, "site.yaml", &src);
    if (berth_nexus_load(&nx, &src, 0, &e))
        fail_msg("%s", e.msg);
    static const char *const kinds[3] = {
        /* k1's VMs: by name and by annotation; a stray node */
        "apiVersion: v1\nkind: NodeList\nitems:\n- metadata: {name: k1-p-1}\n"
        "- metadata: {name: x, annotations: {berth.io/vm: k1-control-plane-1}}\n- metadata: {name: stray}\n",
        "apiVersion: v1\nkind: NodeList\nitems:\n- metadata: {name: nothing-here}\n",
        "apiVersion: v1\nkind: NodeList\nitems:\n- metadata: {name: k1-p-1}\n"
        "- metadata: {name: k2-control-plane-1}\n",
    };
    static const int want[3] = {0, 1, 2};
    for (int i = 0; i < 3; i++) {
        berth_kcluster k;
        berth_kube_init(&k);
        assert_int_equal(berth_doc_load_buffer(&k.arena, "k.yaml", kinds[i], strlen(kinds[i]), &src, &e), 0);
        assert_int_equal(berth_kube_load(&k, &src, 0, &e), 0);
        const char *name, *other;
        assert_int_equal(berth_xl_guess_cluster(&nx, &k, &name, &other), want[i]);
        if (want[i] == 0)
            assert_string_equal(name, "k1");
        berth_kube_free(&k);
    }
    /* run with the first: warnings name the stray node and k1-p-2 (no Node) */
    berth_xl x;
    berth_xl_init(&x);
    berth_kcluster *k;
    assert_int_equal(berth_xl_cluster_for(&x, "k1", &k, NULL), 0);
    assert_int_equal(berth_doc_load_buffer(&k->arena, "k.yaml", kinds[0], strlen(kinds[0]), &src, &e), 0);
    assert_int_equal(berth_kube_load(k, &src, 0, &e), 0);
    assert_int_equal(berth_xl_prepare(&x, &nx, &e), 0);
    berth_nexus_options opt = {.use_index = 1, .on_step = berth_xl_on_step, .step_ctx = &x};
    assert_int_equal(berth_nexus_run(&nx, &opt, &e), 0);
    int stray = 0, novm = 0;
    for (uint32_t i = 0; i < x.warnings.n; i++) {
        stray |= strstr(x.warnings.items[i].kind, "(stray)") != NULL;
        novm |= strstr(x.warnings.items[i].kind, "VM without a Kubernetes Node (k1-p-2)") != NULL;
    }
    assert_true(stray);
    assert_true(novm);
    /* a Node without allocatable got its VM SKU's (NC_G12_56_v1: 12 vCPU) */
    for (uint32_t n = 0; n < k->nnodes; n++)
        if (!strcmp(k->nodes[n].name, "k1-p-1"))
            assert_int_equal(k->nodes[n].alloc[BERTH_KRES_CPU], 12000);
    berth_xl_free(&x);
    /* a cluster the estate does not have */
    berth_xl_init(&x);
    assert_int_equal(berth_xl_cluster_for(&x, "nope", &k, NULL), 0);
    assert_int_equal(berth_xl_prepare(&x, &nx, &e), BERTH_EINVAL);
    assert_non_null(strstr(e.msg, "no KubernetesCluster named 'nope'"));
    berth_xl_free(&x);
    berth_nexus_free(&nx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_pod_on_a_down_node),
        cmocka_unit_test(test_advice_leaves_the_run),
        cmocka_unit_test(test_guess_and_warnings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
