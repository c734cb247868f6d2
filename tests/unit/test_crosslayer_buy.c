/* tests/unit/test_crosslayer_buy.c - `simulate --workloads --autoscaler`
 * (crosslayer/buy.c) against the planners asked directly: on the seed's
 * workload set (examples/nexus/workloads: site.yaml, core.yaml), the state
 * after every phase that leaves pods pending is rebuilt here, independently
 * of buy.c, in a model loaded from the same files (pods bound where the
 * phase left them, pending pods unbound, nodes that are down cordoned) and
 * - ocean / cluster-autoscaler: berth_autoscale_plan's scale-up must be
 *   the phase's launches (type, count, price);
 * - karpenter: the pending pods are bound to a drifted NodeClaim's node and
 *   `disrupt plan`'s drift replacement (berth_disrupt_plan) must launch
 *   the same instance types and counts as the phase.
 * Also: every phase with pending pods gets an answer, and the window cost
 * is the sum of count x price x minutes / 60. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "berth/autoscale.h"
#include "berth/crosslayer.h"
#include "berth/disrupt.h"

#define D "examples/nexus/workloads/"
#define NOW 1795000000 /* 2026-11-18: after every time in the files */

typedef struct ctx {
    int kind;
    const char *cfg;
    uint32_t checked;
} ctx;

static void load_file(berth_arena *a, const char *path, berth_source *src)
{
    berth_error e;
    berth_error_clear(&e);
    if (berth_doc_load_file(a, path, src, &e))
        fail_msg("%s", e.msg);
}

static uint32_t node_named(const berth_kcluster *k, const char *name)
{
    for (uint32_t n = 0; n < k->nnodes; n++)
        if (!strcmp(k->nodes[n].name, name))
            return n;
    return BERTH_KUBE_NONE;
}

/* The model's kube cluster set to the phase's state. */
static void set_state(berth_kcluster *mk, const berth_kcluster *k, const uint8_t *down,
                      const uint32_t *pod_node, const char *pending_node)
{
    assert_int_equal(mk->npods, k->npods);
    for (uint32_t n = 0; n < k->nnodes; n++) {
        uint32_t mn = node_named(mk, k->nodes[n].name);
        assert_true(mn != BERTH_KUBE_NONE);
        mk->nodes[mn].unschedulable = down[n] != 0;
        memcpy(mk->nodes[mn].alloc, k->nodes[n].alloc, sizeof mk->nodes[mn].alloc);
    }
    for (uint32_t p = 0; p < k->npods; p++) {
        assert_string_equal(mk->pods[p].name, k->pods[p].name);
        if (k->pods[p].terminating)
            continue;
        mk->pods[p].node_name =
            pod_node[p] == BERTH_KUBE_NONE ? pending_node : k->nodes[pod_node[p]].name;
    }
}

/* count of launches of instance type t in the phase */
static uint32_t launched(const berth_xl *x, const berth_xl_phase *ph, const char *t, double price)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < ph->nlaunches; i++) {
        const berth_xl_launch *l = &x->launches[ph->launch0 + i];
        if (!strcmp(l->instance_type, t) && l->price == price)
            n += l->count;
    }
    return n;
}

static void check_ocean(ctx *c, const berth_xl *x, const berth_xl_phase *ph,
                        const berth_kcluster *k, const uint8_t *down, const uint32_t *pod_node)
{
    berth_autoscale m;
    berth_autoscale_init(&m);
    berth_source a, b;
    load_file(&m.kube.arena, D "core.yaml", &a);
    load_file(&m.kube.arena, c->cfg, &b);
    berth_error e;
    berth_error_clear(&e);
    assert_int_equal(berth_autoscale_load(&m, &a, 0, &e), 0);
    assert_int_equal(berth_autoscale_load(&m, &b, 0, &e), 0);
    assert_int_equal(berth_autoscale_finalize(&m, &e), 0);
    set_state(&m.kube, k, down, pod_node, NULL);
    berth_aplan_options o = {0};
    o.now = NOW;
    if (c->kind == BERTH_XL_AUTOSCALER_CLUSTER_AUTOSCALER) {
        o.policy = BERTH_POLICY_CLUSTER_AUTOSCALER;
        o.expander = BERTH_EXPANDER_LEAST_WASTE;
    }
    berth_aplan p;
    memset(&p, 0, sizeof p);
    assert_int_equal(berth_autoscale_plan(&m, &o, &p, &e), 0);
    uint32_t total = 0, pods = 0;
    for (uint32_t i = 0; i < p.nup; i++) {
        const char *t = m.types[p.up[i].type].name;
        uint32_t want = 0;
        for (uint32_t j = 0; j < p.nup; j++)
            if (!strcmp(m.types[p.up[j].type].name, t) && p.up[j].price == p.up[i].price)
                want += p.up[j].count;
        assert_int_equal(launched(x, ph, t, p.up[i].price), want);
        total += p.up[i].count;
        pods += p.up[i].npods;
    }
    assert_int_equal(total, ph->launch_nodes);
    assert_int_equal(pods, ph->launch_placed);
    assert_true(p.nup > 0); /* the fixture's pending pods all fit a d32 or d64 */
    berth_aplan_free(&p);
    berth_autoscale_free(&m);
}

static void check_karpenter(ctx *c, const berth_xl *x, const berth_xl_phase *ph,
                            const berth_kcluster *k, const uint8_t *down, const uint32_t *pod_node)
{
    berth_disrupt m;
    berth_disrupt_init(&m);
    berth_source a, b;
    load_file(&m.kube.arena, D "core.yaml", &a);
    load_file(&m.kube.arena, c->cfg, &b);
    berth_error e;
    berth_error_clear(&e);
    assert_int_equal(berth_disrupt_load(&m, &a, 0, &e), 0);
    assert_int_equal(berth_disrupt_load(&m, &b, 0, &e), 0);
    assert_int_equal(berth_disrupt_finalize(&m, &e), 0);
    m.kube.npdbs = 0; /* the pods are pending already: no budget blocks the drift */
    uint32_t host;
    assert_int_equal(berth_disrupt_add_node(&m, 0, 0, 0, "pending-host", NOW - 3600, NOW - 3600,
                                            &host), 0);
    m.claims[m.nclaims - 1].drifted = 1;
    m.claims[m.nclaims - 1].drifted_at = NOW - 60;
    set_state(&m.kube, k, down, pod_node, "pending-host");
    berth_dplan_options o = {0};
    o.now = NOW;
    berth_dplan p;
    memset(&p, 0, sizeof p);
    assert_int_equal(berth_disrupt_plan(&m, &o, &p, &e), 0);
    assert_int_equal(p.nactions, 1);
    const berth_daction *act = &p.actions[0];
    assert_int_equal(act->reason, BERTH_DR_DRIFTED);
    assert_int_equal(act->nnodes, 1);
    assert_int_equal(act->nodes[0], host);
    assert_int_equal(act->nreplacements, ph->launch_nodes);
    for (uint32_t i = 0; i < act->nreplacements; i++) {
        const berth_dreplacement *r = &act->replacements[i];
        uint32_t want = 0;
        for (uint32_t j = 0; j < act->nreplacements; j++)
            want += !strcmp(act->replacements[j].instance_type, r->instance_type) &&
                    act->replacements[j].price == r->price;
        assert_int_equal(launched(x, ph, r->instance_type, r->price), want);
    }
    berth_dplan_free(&p);
    berth_disrupt_free(&m);
}

static void on_phase(void *vc, const berth_xl *x, uint32_t cluster, const uint8_t *down,
                     const uint32_t *pod_node)
{
    ctx *c = vc;
    const berth_xl_phase *ph = &x->phases[x->nphases - 1];
    const berth_kcluster *k = berth_xl_kube(x, cluster);
    if (!ph->pending)
        return;
    double per_hour = 0;
    for (uint32_t i = 0; i < ph->nlaunches; i++)
        per_hour += x->launches[ph->launch0 + i].count * x->launches[ph->launch0 + i].price;
    assert_true(per_hour - ph->launch_per_hour < 1e-9 && ph->launch_per_hour - per_hour < 1e-9);
    double w = per_hour * (double)ph->minutes / 60.0;
    assert_true(w - ph->window_cost < 1e-9 && ph->window_cost - w < 1e-9);
    assert_int_equal(ph->launch_placed + ph->launch_left, ph->pending);
    if (c->kind == BERTH_XL_AUTOSCALER_KARPENTER)
        check_karpenter(c, x, ph, k, down, pod_node);
    else
        check_ocean(c, x, ph, k, down, pod_node);
    c->checked++;
}

static void run(int kind, const char *cfg)
{
    berth_nexus nx;
    berth_nexus_init(&nx);
    berth_error e;
    berth_error_clear(&e);
    berth_source site, core, as;
    load_file(&nx.arena, D "site.yaml", &site);
    load_file(&nx.arena, D "core.yaml", &core);
    load_file(&nx.arena, cfg, &as);
    assert_int_equal(berth_nexus_load(&nx, &site, 0, &e), 0);
    assert_int_equal(berth_nexus_validate(&nx, &e), 0);
    berth_xl x;
    berth_xl_init(&x);
    x.autoscaler = (berth_xl_autoscaler)kind;
    berth_kcluster *k;
    uint32_t idx;
    assert_int_equal(berth_xl_cluster_for(&x, "core", &k, &idx), 0);
    assert_int_equal(berth_kube_load(k, &core, 0, &e), 0);
    assert_int_equal(berth_xl_add_source(&x, idx, &core), 0);
    assert_int_equal(berth_xl_add_autoscaler_source(&x, NULL, &as), 0);
    if (berth_xl_prepare(&x, &nx, &e))
        fail_msg("%s", e.msg);
    ctx c = {kind, cfg, 0};
    x.on_phase = on_phase;
    x.phase_ctx = &c;
    berth_nexus_options o = {0};
    o.use_index = 1;
    o.on_step = berth_xl_on_step;
    o.step_ctx = &x;
    int rc = berth_nexus_run(&nx, &o, &e);
    assert_true(rc == 0 || rc == BERTH_ENOFIT);
    assert_true(c.checked >= 3); /* every batch of the upgrade leaves pods pending */
    double cost = 0;
    for (uint32_t i = 0; i < x.nphases; i++)
        cost += x.phases[i].window_cost;
    assert_true(cost > 0);
    berth_xl_free(&x);
    berth_nexus_free(&nx);
}

static void test_karpenter(void **state)
{
    (void)state;
    run(BERTH_XL_AUTOSCALER_KARPENTER, D "karpenter.yaml");
}

static void test_ocean(void **state)
{
    (void)state;
    run(BERTH_XL_AUTOSCALER_OCEAN, D "ocean.yaml");
}

static void test_cluster_autoscaler(void **state)
{
    (void)state;
    run(BERTH_XL_AUTOSCALER_CLUSTER_AUTOSCALER, D "ocean.yaml");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_karpenter),
        cmocka_unit_test(test_ocean),
        cmocka_unit_test(test_cluster_autoscaler),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
