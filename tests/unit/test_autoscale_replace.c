/* tests/unit/test_autoscale_replace.c - autoscaler replacements (SPEC 5,
 * Ocean policy): revert to spot (and not without a spot offering or spot
 * share), revert to reserved capacity, auto-heal at the grace boundary
 * (default and --autoheal-grace, Ready False and Unknown), a spot
 * interruption with headroom (the pod moves at once to the spare node) and
 * without (it waits for the new node), a cluster roll in batches, the new
 * node hosting every pod of the old one, and bad options. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "autoscale_fixture.h"

/* m.small: 2 cpu 4Gi; m.large: 8 cpu 32Gi; spot offerings when spot. */
static void types(buf *b, int spot)
{
    const char *av = spot ? "true" : "false";
    add(b, "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: m.small}\nspec:\n"
           "  capacity: {cpu: \"2\", memory: 4Gi, pods: 20}\n  offerings:\n"
           "  - {zone: z1, capacityType: on-demand, price: 0.10}\n"
           "  - {zone: z1, capacityType: spot, price: 0.03, interruptionRate: 0.1, "
           "available: %s}\n"
           "  - {zone: z2, capacityType: on-demand, price: 0.10}\n"
           "  - {zone: z2, capacityType: spot, price: 0.03, interruptionRate: 0.1, "
           "available: %s}\n",
        av, av);
    add(b, "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: m.large}\nspec:\n"
           "  capacity: {cpu: \"8\", memory: 32Gi, pods: 50}\n  offerings:\n"
           "  - {zone: z1, capacityType: on-demand, price: 0.40}\n"
           "  - {zone: z1, capacityType: spot, price: 0.10, interruptionRate: 0.05, "
           "available: %s}\n",
        av);
}

static void vng(buf *b, const char *name, const char *spec)
{
    add(b, "---\napiVersion: berth.io/v1\nkind: VirtualNodeGroup\nmetadata: {name: %s}\nspec:\n%s",
        name, spec);
}

/* A node of group g; status_extra goes under status (e.g. conditions). */
static void node(buf *b, const char *name, const char *g, const char *ct, const char *type,
                 const char *zone, const char *cpu, const char *status_extra)
{
    add(b, "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n  labels:\n"
           "    berth.io/virtual-node-group: %s\n    node.kubernetes.io/instance-type: %s\n"
           "    topology.kubernetes.io/zone: %s\n    karpenter.sh/capacity-type: %s\n"
           "    kubernetes.io/hostname: %s\n"
           "status:\n  allocatable: {cpu: \"%s\", memory: 16Gi, pods: \"30\"}\n%s",
        name, g, type, zone, ct, name, cpu, status_extra ? status_extra : "");
}

static void pod(buf *b, const char *name, const char *nodename, const char *cpu)
{
    add(b, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: default}\nspec:\n"
           "  nodeName: %s\n  containers: [{name: c, resources: {requests: {cpu: \"%s\", "
           "memory: 1Gi}}}]\n", name, nodename, cpu);
}

static void test_revert_to_spot(void **st)
{
    (void)st;
    static buf b;
    for (int variant = 0; variant < 3; variant++) {
        b.n = 0;
        types(&b, variant != 1); /* 1: no spot offering available */
        vng(&b, "general", variant == 2 ? "  instanceTypes: [m.small]\n  spotPercentage: 0\n"
                                        : "  instanceTypes: [m.small]\n");
        node(&b, "od-1", "general", "on-demand", "m.small", "z1", "2", NULL);
        pod(&b, "a", "od-1", "1");
        run r;
        plan_opt(&r, &b, (berth_aplan_options){0});
        assert_int_equal(r.rc, 0);
        const berth_areplace *x = rep_of(&r, "od-1");
        if (variant) {
            assert_null(x); /* no spot to revert to / the group wants none */
            done(&r);
            continue;
        }
        assert_non_null(x);
        assert_int_equal(x->reason, BERTH_REPLACE_REVERT_TO_SPOT);
        assert_string_equal(berth_replace_reason_name(x->reason), "RevertToSpot");
        assert_int_equal(x->capacity_type, BERTH_CT_SPOT);
        assert_string_equal(r.m.types[x->type].name, "m.small");
        assert_false(x->drain_immediately);
        assert_null(x->reservation);
        const berth_arepmove *mv = rep_move(&r, x, "a");
        assert_non_null(mv);
        assert_string_equal(mv->node, x->new_node); /* launched first, then drained */
        assert_false(mv->waits);
        done(&r);
    }
}

static void test_revert_to_reserved(void **st)
{
    (void)st;
    static buf b;
    b.n = 0;
    types(&b, 1);
    vng(&b, "general", "  instanceTypes: [m.small, m.large]\n  minNodes: 2\n");
    add(&b, "---\napiVersion: berth.io/v1\nkind: Reservation\nmetadata: {name: ri}\n"
            "spec: {instanceType: m.large, count: 1}\n");
    node(&b, "od-1", "general", "on-demand", "m.small", "z1", "2", NULL);
    node(&b, "spot-1", "general", "spot", "m.small", "z1", "2", NULL);
    pod(&b, "a", "od-1", "1500m");
    pod(&b, "s", "spot-1", "1500m");
    run r;
    plan_opt(&r, &b, (berth_aplan_options){0});
    assert_int_equal(r.rc, 0);
    const berth_areplace *x = rep_of(&r, "od-1");
    assert_non_null(x);
    assert_int_equal(x->reason, BERTH_REPLACE_REVERT_TO_RESERVED);
    assert_int_equal(x->capacity_type, BERTH_CT_RESERVED);
    assert_string_equal(x->reservation, "ri");
    assert_string_equal(r.m.types[x->type].name, "m.large");
    assert_true(x->price == 0); /* already paid */
    assert_null(rep_of(&r, "spot-1")); /* the one unit is taken; spot stays spot */
    done(&r);
}

static void autoheal_case(run *r, const char *status, const char *since, berth_aplan_options o)
{
    static buf b;
    char extra[256];
    snprintf(extra, sizeof extra,
             "  conditions:\n  - {type: MemoryPressure, status: \"False\"}\n"
             "  - {type: Ready, status: \"%s\", lastTransitionTime: \"%s\"}\n", status, since);
    b.n = 0;
    types(&b, 1);
    vng(&b, "general", "  instanceTypes: [m.small]\n");
    node(&b, "sick", "general", "spot", "m.small", "z1", "2", extra);
    pod(&b, "a", "sick", "1");
    plan_opt(r, &b, o);
    assert_int_equal(r->rc, 0);
}

static void test_autoheal(void **st)
{
    (void)st;
    run r;
    /* default grace 5m: strictly longer */
    autoheal_case(&r, "False", "2024-05-01T11:54:59Z", (berth_aplan_options){0});
    assert_non_null(rep_of(&r, "sick"));
    assert_int_equal(rep_of(&r, "sick")->reason, BERTH_REPLACE_AUTOHEAL);
    assert_string_equal(rep_move(&r, rep_of(&r, "sick"), "a")->node, rep_of(&r, "sick")->new_node);
    done(&r);
    autoheal_case(&r, "False", "2024-05-01T11:55:00Z", (berth_aplan_options){0});
    assert_null(rep_of(&r, "sick"));
    done(&r);
    autoheal_case(&r, "Unknown", "2024-05-01T11:43:20Z", (berth_aplan_options){0});
    assert_non_null(rep_of(&r, "sick"));
    done(&r);
    autoheal_case(&r, "True", "2024-05-01T10:00:00Z", (berth_aplan_options){0});
    assert_null(rep_of(&r, "sick"));
    done(&r);
    /* --autoheal-grace 60s */
    berth_aplan_options o = {0};
    o.autoheal_grace = 60;
    o.has_autoheal_grace = 1;
    autoheal_case(&r, "False", "2024-05-01T11:58:20Z", o);
    assert_non_null(rep_of(&r, "sick"));
    done(&r);
    o.autoheal_grace = 100;
    autoheal_case(&r, "False", "2024-05-01T11:58:20Z", o);
    assert_null(rep_of(&r, "sick"));
    done(&r);
}

/* spot-a is interrupted; "room" has two free cpus or none. */
static void interruption_case(run *r, int headroom)
{
    static buf b;
    b.n = 0;
    types(&b, 1);
    vng(&b, "general", "  instanceTypes: [m.small]\n  minNodes: 2\n");
    node(&b, "spot-a", "general", "spot", "m.small", "z1", "2", NULL);
    node(&b, "room", "general", "spot", "m.small", "z2", "2", NULL);
    pod(&b, "a", "spot-a", "1");
    if (!headroom)
        pod(&b, "full", "room", "2");
    static const char *const names[] = {"spot-a"};
    berth_aplan_options o = {0};
    o.interrupt = names;
    o.ninterrupt = 1;
    plan_opt(r, &b, o);
    assert_int_equal(r->rc, 0);
}

static void test_spot_interruption_with_headroom(void **st)
{
    (void)st;
    run r;
    interruption_case(&r, 1);
    const berth_areplace *x = rep_of(&r, "spot-a");
    assert_non_null(x);
    assert_int_equal(x->reason, BERTH_REPLACE_SPOT_INTERRUPTION);
    assert_true(x->drain_immediately);
    const berth_arepmove *mv = rep_move(&r, x, "a");
    assert_non_null(mv);
    assert_string_equal(mv->node, "room"); /* at once, onto the spare capacity */
    assert_false(mv->waits);
    assert_int_equal(r.p.nunsched, 0);
    done(&r);
}

static void test_spot_interruption_without_headroom(void **st)
{
    (void)st;
    run r;
    interruption_case(&r, 0);
    const berth_areplace *x = rep_of(&r, "spot-a");
    assert_non_null(x);
    assert_true(x->drain_immediately);
    assert_int_equal(x->capacity_type, BERTH_CT_SPOT);
    const berth_arepmove *mv = rep_move(&r, x, "a");
    assert_non_null(mv);
    assert_string_equal(mv->node, x->new_node); /* pending until the new node registers */
    assert_true(mv->waits);
    done(&r);
}

static void test_roll(void **st)
{
    (void)st;
    static buf b;
    b.n = 0;
    types(&b, 1);
    vng(&b, "batch", "  instanceTypes: [m.small]\n  minNodes: 5\n");
    for (int i = 1; i <= 5; i++) {
        char n[16], p[16];
        snprintf(n, sizeof n, "n%d", i);
        snprintf(p, sizeof p, "p%d", i);
        node(&b, n, "batch", "spot", "m.small", i % 2 ? "z1" : "z2", "2", NULL);
        pod(&b, p, n, "1");
    }
    berth_aplan_options o = {0};
    o.roll = "batch";
    o.roll_percent = 40; /* 2 of 5 */
    run r;
    plan_opt(&r, &b, o);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.p.nrep, 2);
    assert_int_equal(rep_of(&r, "n1")->reason, BERTH_REPLACE_ROLL);
    assert_int_equal(rep_of(&r, "n2")->reason, BERTH_REPLACE_ROLL);
    assert_null(rep_of(&r, "n3"));
    done(&r);
    o.roll_percent = 0; /* default 20 %: 1 of 5 */
    plan_opt(&r, &b, o);
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.p.nrep, 1);
    assert_non_null(rep_of(&r, "n1"));
    done(&r);
}

static void test_replacement_hosts_every_pod(void **st)
{
    (void)st;
    static buf b;
    b.n = 0;
    types(&b, 1);
    vng(&b, "general", "  instanceTypes: [m.small, m.large]\n");
    node(&b, "od-big", "general", "on-demand", "m.large", "z1", "8", NULL);
    pod(&b, "p1", "od-big", "1500m");
    pod(&b, "p2", "od-big", "1500m");
    run r;
    plan_opt(&r, &b, (berth_aplan_options){0});
    assert_int_equal(r.rc, 0);
    const berth_areplace *x = rep_of(&r, "od-big");
    assert_non_null(x);
    assert_int_equal(x->reason, BERTH_REPLACE_REVERT_TO_SPOT);
    /* m.small spot is cheaper per pod but cannot host both 1.5-cpu pods */
    assert_string_equal(r.m.types[x->type].name, "m.large");
    assert_string_equal(rep_move(&r, x, "p1")->node, x->new_node);
    assert_string_equal(rep_move(&r, x, "p2")->node, x->new_node);
    done(&r);
}

static void test_bad_options(void **st)
{
    (void)st;
    static buf b;
    b.n = 0;
    types(&b, 1);
    vng(&b, "general", "  instanceTypes: [m.small]\n");
    node(&b, "n1", "general", "spot", "m.small", "z1", "2", NULL);
    static const char *const names[] = {"nope"};
    berth_aplan_options o = {0};
    o.interrupt = names;
    o.ninterrupt = 1;
    run r;
    plan_opt(&r, &b, o);
    assert_int_equal(r.rc, BERTH_EINVAL);
    assert_non_null(strstr(r.e.msg, "--interrupt: no node named 'nope'"));
    done(&r);
    o = (berth_aplan_options){0};
    o.roll = "nope";
    plan_opt(&r, &b, o);
    assert_int_equal(r.rc, BERTH_EINVAL);
    assert_non_null(strstr(r.e.msg, "--roll: no VirtualNodeGroup named 'nope'"));
    done(&r);
    /* a malformed lastTransitionTime is a located load error */
    b.n = 0;
    types(&b, 1);
    node(&b, "n1", "general", "spot", "m.small", "z1", "2",
         "  conditions: [{type: Ready, status: \"False\", lastTransitionTime: yesterday}]\n");
    plan_opt(&r, &b, (berth_aplan_options){0});
    assert_int_equal(r.rc, BERTH_EINVAL);
    assert_non_null(strstr(r.e.msg, "status.conditions[0].lastTransitionTime"));
    done(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_revert_to_spot),
        cmocka_unit_test(test_revert_to_reserved),
        cmocka_unit_test(test_autoheal),
        cmocka_unit_test(test_spot_interruption_with_headroom),
        cmocka_unit_test(test_spot_interruption_without_headroom),
        cmocka_unit_test(test_roll),
        cmocka_unit_test(test_replacement_hosts_every_pod),
        cmocka_unit_test(test_bad_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
