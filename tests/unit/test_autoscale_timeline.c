/* tests/unit/test_autoscale_timeline.c - `autoscale simulate` (SPEC 5):
 * arriving pods trigger a launch and wait exactly the launch delay; leaving
 * pods lead to scale-down and the node goes after its drain; the drain
 * timeout (300 s) caps a long grace period; a spot interruption with
 * headroom (pods move at once) and without (pods wait for the replacement);
 * a price change flips the spot choice; replacements are carried out (a
 * price change makes spot available: RevertToSpot launches a spot node,
 * the on-demand node drains once it has registered; AutoHeal likewise;
 * PDBs hold the drain back); bad events are located errors; pods of one
 * name in several namespaces keep their own grace periods, and nodes are
 * found by name after earlier removals closed the tables up; PodLeave takes
 * the first pod of its namespace and name that has arrived and not left. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "berth/autoscale.h"

#define T0 1714564800 /* 2024-05-01T12:00:00Z */

static const char *estate_types =
    "apiVersion: berth.io/v1\nkind: VirtualNodeGroup\nmetadata: {name: general}\n"
    "spec: {instanceTypes: [a.small, b.small]}\n"
    "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: a.small}\nspec:\n"
    "  capacity: {cpu: \"2\", memory: 8Gi, pods: 20}\n  offerings:\n"
    "  - {zone: z1, capacityType: on-demand, price: 0.10}\n"
    "  - {zone: z1, capacityType: spot, price: 0.03}\n"
    "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: b.small}\nspec:\n"
    "  capacity: {cpu: \"2\", memory: 8Gi, pods: 20}\n  offerings:\n"
    "  - {zone: z1, capacityType: on-demand, price: 0.10}\n"
    "  - {zone: z1, capacityType: spot, price: 0.04}\n";

static void node_doc(char *b, size_t size, const char *name, const char *type)
{
    snprintf(b, size,
             "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n  labels: "
             "{berth.io/virtual-node-group: general, node.kubernetes.io/instance-type: %s, "
             "topology.kubernetes.io/zone: z1, karpenter.sh/capacity-type: spot, "
             "kubernetes.io/hostname: %s}\nstatus: {allocatable: {cpu: \"2\", memory: 8Gi, pods: "
             "\"20\"}}\n", name, type, name);
}

static void pod_doc(char *b, size_t size, const char *name, const char *node, const char *cpu,
                    int grace)
{
    snprintf(b, size,
             "---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: default}\nspec:\n"
             "%s%s%s  terminationGracePeriodSeconds: %d\n"
             "  containers: [{name: c, resources: {requests: {cpu: \"%s\", memory: 1Gi}}}]\n",
             name, node ? "  nodeName: " : "", node ? node : "", node ? "\n" : "", grace, cpu);
}

typedef struct run {
    berth_autoscale m;
    berth_atimeline t;
    berth_asim_result r;
    berth_asim_options o;
    berth_error e;
    int rc;
} run;

static void simulate(run *x, const char *estate, const char *events, int64_t to)
{
    memset(x, 0, sizeof *x);
    berth_autoscale_init(&x->m);
    berth_atimeline_init(&x->t);
    berth_source src, ev;
    x->rc = berth_doc_load_buffer(&x->m.kube.arena, "estate.yaml", estate, strlen(estate), &src,
                                  &x->e);
    if (!x->rc)
        x->rc = berth_autoscale_load(&x->m, &src, 0, &x->e);
    if (!x->rc)
        x->rc = berth_atimeline_scan_pods(&x->t, &x->m, &src, &x->e);
    if (!x->rc)
        x->rc = berth_autoscale_finalize(&x->m, &x->e);
    if (!x->rc)
        x->rc = berth_doc_load_buffer(&x->m.kube.arena, "events.yaml", events, strlen(events),
                                      &ev, &x->e);
    if (!x->rc)
        x->rc = berth_atimeline_load_events(&x->t, &x->m, &ev, &x->e);
    if (x->rc)
        return;
    berth_atimeline_finish(&x->t);
    x->o = (berth_asim_options){T0, T0 + to, 60, 120, 300, 0};
    x->rc = berth_autoscale_simulate(&x->m, &x->t, &x->o, &x->r, &x->e);
    if (x->rc)
        fprintf(stderr, "error: %s\n", x->e.msg);
}

static void done(run *x)
{
    berth_asim_result_free(&x->r);
    berth_atimeline_free(&x->t);
    berth_autoscale_free(&x->m);
}

static const berth_asim_step *step_at(const run *x, int64_t dt)
{
    for (uint32_t i = 0; i < x->r.nsteps; i++)
        if (x->r.steps[i].at == T0 + dt)
            return &x->r.steps[i];
    fail_msg("no step at +%lld", (long long)dt);
    return NULL;
}

static const char *arrive =
    "apiVersion: berth.io/v1\nkind: AutoscaleEvent\nspec:\n  at: 2024-05-01T12:00:00Z\n"
    "  type: PodArrive\n  count: 2\n  template:\n    apiVersion: v1\n    kind: Pod\n"
    "    metadata: {name: job, namespace: default}\n"
    "    spec: {containers: [{name: c, resources: {requests: {cpu: 1500m, memory: 1Gi}}}]}\n";

static void test_arrive_waits_launch_delay(void **st)
{
    (void)st;
    run x;
    simulate(&x, estate_types, arrive, 600);
    assert_int_equal(x.rc, 0);
    assert_int_equal(step_at(&x, 0)->launched, 2); /* 1.5 cpu each: one per 2-cpu node */
    assert_int_equal(step_at(&x, 0)->pending, 2);
    assert_int_equal(step_at(&x, 60)->pending, 2);
    assert_int_equal(step_at(&x, 120)->pending, 0);
    assert_true(x.r.max_pending_seconds == 120);
    assert_true(x.r.pending_seconds == 240);
    /* spot a.small (0.03) is the cheaper choice */
    assert_true(step_at(&x, 0)->cost_per_hour > 0.0599 && step_at(&x, 0)->cost_per_hour < 0.0601);
    done(&x);
}

static void test_leave_scales_down_after_drain(void **st)
{
    (void)st;
    char buf[8192] = "", one[1024];
    strcat(buf, estate_types);
    node_doc(one, sizeof one, "n1", "a.small");
    strcat(buf, one);
    node_doc(one, sizeof one, "n2", "a.small");
    strcat(buf, one);
    pod_doc(one, sizeof one, "keep", "n1", "1200m", 30);
    strcat(buf, one);
    pod_doc(one, sizeof one, "short", "n2", "1", 30);
    strcat(buf, one);
    pod_doc(one, sizeof one, "mover", "n2", "500m", 90);
    strcat(buf, one);
    const char *ev = "apiVersion: berth.io/v1\nkind: AutoscaleEvent\n"
                     "spec: {at: 2024-05-01T12:03:00Z, type: PodLeave, pod: default/short}\n";
    run x;
    simulate(&x, buf, ev, 600);
    assert_int_equal(x.rc, 0);
    /* before the leave both nodes are needed (1.5 + 1.2 cpu) */
    assert_int_equal(step_at(&x, 120)->nodes, 2);
    /* at 12:03 n2 drains: mover goes to n1; its 90 s grace holds the node
     * until 12:04:30, so it is gone at the 12:05 step */
    assert_int_equal(step_at(&x, 180)->nodes, 2);
    assert_int_equal(step_at(&x, 240)->nodes, 2);
    assert_int_equal(step_at(&x, 300)->nodes, 1);
    assert_int_equal(step_at(&x, 300)->terminated, 1);
    assert_int_equal(step_at(&x, 300)->pending, 0);
    done(&x);
}

static void test_drain_timeout_caps_grace(void **st)
{
    (void)st;
    char buf[8192] = "", one[1024];
    strcat(buf, estate_types);
    node_doc(one, sizeof one, "n1", "a.small");
    strcat(buf, one);
    node_doc(one, sizeof one, "n2", "a.small");
    strcat(buf, one);
    pod_doc(one, sizeof one, "keep", "n1", "1200m", 30);
    strcat(buf, one);
    pod_doc(one, sizeof one, "short", "n2", "1", 30);
    strcat(buf, one);
    pod_doc(one, sizeof one, "slow", "n2", "500m", 3600);
    strcat(buf, one);
    const char *ev = "apiVersion: berth.io/v1\nkind: AutoscaleEvent\n"
                     "spec: {at: 2024-05-01T12:00:00Z, type: PodLeave, pod: default/short}\n";
    run x;
    simulate(&x, buf, ev, 900);
    assert_int_equal(x.rc, 0);
    assert_int_equal(step_at(&x, 240)->nodes, 2);  /* draining */
    assert_int_equal(step_at(&x, 300)->nodes, 1);  /* 300 s drain timeout, not 3600 s */
    assert_int_equal(step_at(&x, 300)->terminated, 1);
    done(&x);

    /* a drain timeout below 300 s is refused */
    simulate(&x, buf, ev, 900);
    berth_asim_result_free(&x.r);
    x.o.drain_timeout = 120;
    assert_int_equal(berth_autoscale_simulate(&x.m, &x.t, &x.o, &x.r, &x.e), BERTH_EINVAL);
    assert_non_null(strstr(x.e.msg, "at least 300s"));
    done(&x);
}

static void interruption(int headroom)
{
    char buf[8192] = "", one[1024];
    strcat(buf, estate_types);
    node_doc(one, sizeof one, "n1", "a.small");
    strcat(buf, one);
    node_doc(one, sizeof one, "n2", "a.small");
    strcat(buf, one);
    pod_doc(one, sizeof one, "web", "n1", "500m", 30);
    strcat(buf, one);
    /* without headroom n2 is full */
    pod_doc(one, sizeof one, "other", "n2", headroom ? "500m" : "1800m", 30);
    strcat(buf, one);
    const char *ev = "apiVersion: berth.io/v1\nkind: AutoscaleEvent\n"
                     "spec: {at: 2024-05-01T12:01:00Z, type: SpotInterruption, node: n1}\n";
    run x;
    simulate(&x, buf, ev, 600);
    assert_int_equal(x.rc, 0);
    const berth_asim_step *s = step_at(&x, 60);
    assert_int_equal(s->terminated, 1);
    if (headroom) {
        assert_int_equal(s->pending, 0); /* web moved to n2 at once */
        assert_int_equal(s->launched, 0);
        assert_true(x.r.pending_seconds == 0);
    } else {
        assert_int_equal(s->launched, 1); /* the replacement, in the same step */
        assert_int_equal(s->pending, 1);
        assert_int_equal(step_at(&x, 120)->pending, 1);
        assert_int_equal(step_at(&x, 180)->pending, 0);
        assert_true(x.r.max_pending_seconds == 120);
    }
    done(&x);
}

static void test_spot_interruption_headroom(void **st)
{
    (void)st;
    interruption(1);
}

static void test_spot_interruption_no_headroom(void **st)
{
    (void)st;
    interruption(0);
}

/* The grace periods come from an index of the source's pods by namespace
 * and name: three pods named "dup" in three
 * namespaces, and the nodes found by name after removals: three spot
 * interruptions in one step and one a minute later, each of a node whose
 * index the earlier removals moved; the pods of the nodes that stay stay
 * bound (none pending, none launched). */
static void test_names_after_removals(void **st)
{
    (void)st;
    char buf[16384] = "", one[1024];
    strcat(buf, estate_types);
    static const char *const ns[3] = {"a", "b", "c"};
    for (int i = 0; i < 3; i++) {
        snprintf(one, sizeof one,
                 "---\napiVersion: v1\nkind: Pod\nmetadata: {name: dup, namespace: %s}\nspec:\n"
                 "  nodeName: n6\n  terminationGracePeriodSeconds: %d\n"
                 "  containers: [{name: c, resources: {requests: {cpu: 50m, memory: 1Gi}}}]\n",
                 ns[i], 11 * (i + 1));
        strcat(buf, one);
    }
    for (int i = 1; i <= 6; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "n%d", i);
        node_doc(one, sizeof one, nm, "a.small");
        strcat(buf, one);
        char pn[16];
        snprintf(pn, sizeof pn, "p%d", i);
        pod_doc(one, sizeof one, pn, nm, "1800m", 40 + i);
        strcat(buf, one);
    }
    const char *ev =
        "apiVersion: v1\nkind: List\nitems:\n"
        "- {apiVersion: berth.io/v1, kind: AutoscaleEvent, spec: {at: 2024-05-01T12:01:00Z, "
        "type: SpotInterruption, node: n1}}\n"
        "- {apiVersion: berth.io/v1, kind: AutoscaleEvent, spec: {at: 2024-05-01T12:01:00Z, "
        "type: SpotInterruption, node: n3}}\n"
        "- {apiVersion: berth.io/v1, kind: AutoscaleEvent, spec: {at: 2024-05-01T12:01:00Z, "
        "type: SpotInterruption, node: n5}}\n"
        "- {apiVersion: berth.io/v1, kind: AutoscaleEvent, spec: {at: 2024-05-01T12:02:00Z, "
        "type: SpotInterruption, node: n4}}\n"
        "- {apiVersion: berth.io/v1, kind: AutoscaleEvent, spec: {at: 2024-05-01T12:02:00Z, "
        "type: SpotInterruption, node: n9}}\n";
    run x;
    simulate(&x, buf, ev, 60);
    assert_int_equal(x.rc, 0);
    for (uint32_t i = 0; i < x.m.kube.npods; i++) {
        const berth_kpod *p = &x.m.kube.pods[i];
        if (!strcmp(p->name, "dup"))
            assert_int_equal(x.t.grace[i], 11 * (p->ns[0] - 'a' + 1));
        else if (p->name[0] == 'p')
            assert_int_equal(x.t.grace[i], 40 + (p->name[1] - '0'));
    }
    done(&x);
    simulate(&x, buf, ev, 120);
    assert_int_equal(x.rc, 0);
    assert_int_equal(x.r.nevents, 5);
    for (uint32_t i = 0; i < 4; i++)
        assert_null(x.r.notes[i]); /* each found by its name */
    assert_non_null(x.r.notes[4]);
    assert_non_null(strstr(x.r.notes[4], "no node n9"));
    assert_int_equal(step_at(&x, 60)->terminated, 3);
    assert_int_equal(step_at(&x, 120)->terminated, 1);
    /* n2 and n6 remain, by name; the interrupted nodes' pods (1.8 cpu)
     * wait for replacements, the others stay bound */
    assert_int_equal(x.m.kube.nnodes >= 2, 1);
    int n2 = 0, n6 = 0;
    for (uint32_t i = 0; i < x.m.kube.nnodes; i++) {
        n2 += !strcmp(x.m.kube.nodes[i].name, "n2");
        n6 += !strcmp(x.m.kube.nodes[i].name, "n6");
        assert_true(strcmp(x.m.kube.nodes[i].name, "n1") && strcmp(x.m.kube.nodes[i].name, "n3") &&
                    strcmp(x.m.kube.nodes[i].name, "n4") && strcmp(x.m.kube.nodes[i].name, "n5"));
    }
    assert_int_equal(n2, 1);
    assert_int_equal(n6, 1);
    for (uint32_t i = 0; i < x.m.kube.npods; i++) {
        const berth_kpod *p = &x.m.kube.pods[i];
        if (!strcmp(p->name, "p2") || !strcmp(p->name, "dup"))
            assert_true(p->node_name && !strcmp(p->node_name, !strcmp(p->name, "p2") ? "n2" : "n6"));
    }
    assert_int_equal(step_at(&x, 60)->launched, 3); /* a replacement for each of the three */
    done(&x);
}

/* PodLeave finds its pod by namespace and name: the first in pod order
 * that has arrived and not left. Two arrivals of job-1 and job-2 in
 * default (12:01, 12:03) and one in other (12:00): a leave of default/job-1
 * at 12:00 finds none,
 * the next ones take the 12:01 pod, then the 12:03 one (not the one in
 * other, nor the 12:03 one before it arrived), then none is left. */
static void test_leave_by_namespace_and_name(void **st)
{
    (void)st;
    static const char *const arrivals[3][2] = {
        {"01", "default"}, {"03", "default"}, {"00", "other"}};
    char ev[8192] = "apiVersion: v1\nkind: List\nitems:\n", one[1024];
    for (int i = 0; i < 3; i++) {
        snprintf(one, sizeof one,
                 "- apiVersion: berth.io/v1\n  kind: AutoscaleEvent\n  spec:\n    at: "
                 "2024-05-01T12:%s:00Z\n    type: PodArrive\n    count: 2\n    template:\n"
                 "      apiVersion: v1\n      kind: Pod\n      metadata: {name: job, namespace: "
                 "%s}\n      spec: {containers: [{name: c, resources: {requests: {cpu: 100m, "
                 "memory: 128Mi}}}]}\n", arrivals[i][0], arrivals[i][1]);
        strcat(ev, one);
    }
    static const char *const leaves[5] = {"00", "02", "02", "04", "05"};
    for (int i = 0; i < 5; i++) {
        snprintf(one, sizeof one,
                 "- {apiVersion: berth.io/v1, kind: AutoscaleEvent, spec: {at: "
                 "2024-05-01T12:%s:00Z, type: PodLeave, pod: default/job-1}}\n", leaves[i]);
        strcat(ev, one);
    }
    char estate[4096], node[1024];
    node_doc(node, sizeof node, "n1", "a.small");
    snprintf(estate, sizeof estate, "%s%s", estate_types, node);
    run x;
    simulate(&x, estate, ev, 360);
    assert_int_equal(x.rc, 0);
    assert_int_equal(x.r.nevents, 8);
    /* the events in time order: arrive other (12:00), leave (12:00: none
     * in default yet), arrive default (12:01), two leaves (12:02: the
     * 12:01 pod, then none), arrive default (12:03), leaves at 12:04 (the
     * 12:03 pod) and 12:05 (none) */
    int noted = 0;
    for (uint32_t i = 0; i < x.r.nevents; i++) {
        const berth_aevent *e = &x.t.ev[x.r.events[i]];
        if (e->type != BERTH_AEV_POD_LEAVE)
            continue;
        int64_t at = e->at - T0;
        int none = x.r.notes[i] && strstr(x.r.notes[i], "no pod default/job-1");
        noted += none;
        if (at == 0 || at == 300)
            assert_true(none);
        if (at == 240)
            assert_false(none);
    }
    assert_int_equal(noted, 3); /* 12:00, the second at 12:02, 12:05 */
    int left_default = 0, other_running = 0;
    for (uint32_t i = 0; i < x.m.kube.npods; i++) {
        const berth_kpod *p = &x.m.kube.pods[i];
        if (!strcmp(p->name, "job-1") && !strcmp(p->ns, "default"))
            left_default += p->terminating;
        if (!strcmp(p->name, "job-1") && !strcmp(p->ns, "other"))
            other_running += !p->terminating;
    }
    assert_int_equal(left_default, 2);
    assert_int_equal(other_running, 1);
    done(&x);
}

static void test_price_change_flips_spot(void **st)
{
    (void)st;
    const char *ev =
        "apiVersion: v1\nkind: List\nitems:\n"
        "- apiVersion: berth.io/v1\n  kind: AutoscaleEvent\n"
        "  spec: {at: 2024-05-01T12:00:00Z, type: PriceChange, instanceType: a.small, zone: z1, "
        "capacityType: spot, price: 0.09}\n"
        "- apiVersion: berth.io/v1\n  kind: AutoscaleEvent\n  spec:\n    at: 2024-05-01T12:00:00Z\n"
        "    type: PodArrive\n    pods:\n    - apiVersion: v1\n      kind: Pod\n"
        "      metadata: {name: solo, namespace: default}\n"
        "      spec: {containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]}\n";
    run x;
    simulate(&x, estate_types, ev, 300);
    assert_int_equal(x.rc, 0);
    /* a.small spot now costs 0.09: b.small spot (0.04) is launched */
    const berth_asim_step *s = step_at(&x, 0);
    assert_int_equal(s->launched, 1);
    assert_true(s->cost_per_hour > 0.0399 && s->cost_per_hour < 0.0401);
    assert_int_equal(s->nev, 2);
    done(&x);
}

/* Group "general" wants spot (spotPercentage 100) but a.small's spot
 * offering is unavailable: node od-1 runs on-demand with two pods. */
static const char *estate_od =
    "apiVersion: berth.io/v1\nkind: VirtualNodeGroup\nmetadata: {name: general}\n"
    "spec: {instanceTypes: [a.small]}\n"
    "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: a.small}\nspec:\n"
    "  capacity: {cpu: \"2\", memory: 8Gi, pods: 20}\n  offerings:\n"
    "  - {zone: z1, capacityType: on-demand, price: 0.10}\n"
    "  - {zone: z1, capacityType: spot, price: 0.03, available: false}\n"
    "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: od-1\n  labels: "
    "{berth.io/virtual-node-group: general, node.kubernetes.io/instance-type: a.small, "
    "topology.kubernetes.io/zone: z1, karpenter.sh/capacity-type: on-demand, "
    "kubernetes.io/hostname: od-1}\nstatus: {allocatable: {cpu: \"2\", memory: 8Gi, pods: "
    "\"20\"}}\n"
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: w1, namespace: default, labels: {app: w}}\n"
    "spec:\n  nodeName: od-1\n  terminationGracePeriodSeconds: 30\n"
    "  containers: [{name: c, resources: {requests: {cpu: 500m, memory: 1Gi}}}]\n"
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: w2, namespace: default, labels: {app: w}}\n"
    "spec:\n  nodeName: od-1\n  terminationGracePeriodSeconds: 30\n"
    "  containers: [{name: c, resources: {requests: {cpu: 500m, memory: 1Gi}}}]\n";

static const char *spot_back =
    "apiVersion: berth.io/v1\nkind: AutoscaleEvent\n"
    "spec: {at: 2024-05-01T12:03:00Z, type: PriceChange, instanceType: a.small, zone: z1, "
    "capacityType: spot, price: 0.03, available: true}\n";

static void test_revert_to_spot(void **st)
{
    (void)st;
    run x;
    simulate(&x, estate_od, spot_back, 900);
    assert_int_equal(x.rc, 0);
    /* no spot before the price change: nothing happens */
    for (int64_t dt = 0; dt < 180; dt += 60) {
        assert_int_equal(step_at(&x, dt)->nrep, 0);
        assert_int_equal(step_at(&x, dt)->launched, 0);
        assert_int_equal(step_at(&x, dt)->nodes, 1);
    }
    double od = step_at(&x, 0)->cost_per_hour;
    assert_true(od > 0.0999 && od < 0.1001);
    /* 12:03 spot is available: a spot node is launched for od-1 */
    const berth_asim_step *s = step_at(&x, 180);
    assert_int_equal(s->nrep, 1);
    assert_int_equal(s->launched, 1);
    assert_int_equal(s->nodes, 2);
    assert_int_equal(x.r.nreps, 1);
    assert_int_equal(x.r.reps[0].reason, BERTH_REPLACE_REVERT_TO_SPOT);
    assert_string_equal(x.r.reps[0].node, "od-1");
    assert_int_equal(x.r.reps[0].capacity_type, BERTH_CT_SPOT);
    assert_true(s->cost_per_hour > 0.1299 && s->cost_per_hour < 0.1301); /* both run */
    /* not replaced again while the spot node launches */
    assert_int_equal(step_at(&x, 240)->nrep, 0);
    assert_int_equal(step_at(&x, 240)->launched, 0);
    /* 12:05 it registers: od-1 drains (30 s grace), its pods move at once */
    s = step_at(&x, 300);
    assert_int_equal(s->nodes, 2);
    assert_int_equal(s->pending, 0);
    assert_int_equal(s->terminated, 0);
    /* 12:06 od-1 is gone: cheaper, nothing pending */
    s = step_at(&x, 360);
    assert_int_equal(s->terminated, 1);
    assert_int_equal(s->nodes, 1);
    assert_int_equal(s->pending, 0);
    assert_true(s->cost_per_hour > 0.0299 && s->cost_per_hour < 0.0301);
    assert_true(s->cost_per_hour < od);
    /* and it stays so */
    s = step_at(&x, 900);
    assert_int_equal(s->nodes, 1);
    assert_int_equal(s->pending, 0);
    assert_int_equal(x.r.nreps, 1);
    assert_int_equal(x.r.launched, 1);
    assert_int_equal(x.r.terminated, 1);
    assert_true(x.r.pending_seconds == 0);
    done(&x);
}

static void test_replacement_drain_waits_for_pdb(void **st)
{
    (void)st;
    char buf[8192] = "";
    strcat(buf, estate_od);
    /* no disruption allowed until the PDB changes: od-1 keeps running */
    strcat(buf, "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\n"
                "metadata: {name: w, namespace: default}\n"
                "spec: {minAvailable: 2, selector: {matchLabels: {app: w}}}\n");
    run x;
    simulate(&x, buf, spot_back, 900);
    assert_int_equal(x.rc, 0);
    assert_int_equal(step_at(&x, 180)->nrep, 1);
    assert_int_equal(step_at(&x, 180)->launched, 1);
    /* the spot node registered at 12:05, but od-1 is not drained */
    assert_int_equal(step_at(&x, 900)->nodes, 2);
    assert_int_equal(x.r.terminated, 0);
    assert_int_equal(x.r.nreps, 1); /* not replaced again */
    done(&x);
}

static void test_autoheal(void **st)
{
    (void)st;
    const char *estate =
        "apiVersion: berth.io/v1\nkind: VirtualNodeGroup\nmetadata: {name: general}\n"
        "spec: {instanceTypes: [a.small]}\n"
        "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: a.small}\nspec:\n"
        "  capacity: {cpu: \"2\", memory: 8Gi, pods: 20}\n  offerings:\n"
        "  - {zone: z1, capacityType: on-demand, price: 0.10}\n"
        "  - {zone: z1, capacityType: spot, price: 0.03}\n"
        "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: sick\n  labels: "
        "{berth.io/virtual-node-group: general, node.kubernetes.io/instance-type: a.small, "
        "topology.kubernetes.io/zone: z1, karpenter.sh/capacity-type: spot, "
        "kubernetes.io/hostname: sick}\nstatus:\n  allocatable: {cpu: \"2\", memory: 8Gi, pods: "
        "\"20\"}\n  conditions: [{type: Ready, status: \"False\", "
        "lastTransitionTime: \"2024-05-01T11:00:00Z\"}]\n"
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: w1, namespace: default}\n"
        "spec:\n  nodeName: sick\n  terminationGracePeriodSeconds: 30\n"
        "  containers: [{name: c, resources: {requests: {cpu: 500m, memory: 1Gi}}}]\n";
    const char *ev = "apiVersion: berth.io/v1\nkind: AutoscaleEvent\n"
                     "spec: {at: 2024-05-01T12:00:00Z, type: PodLeave, pod: default/nobody}\n";
    run x;
    simulate(&x, estate, ev, 600);
    assert_int_equal(x.rc, 0);
    assert_int_equal(step_at(&x, 0)->nrep, 1);
    assert_int_equal(step_at(&x, 0)->launched, 1);
    assert_int_equal(x.r.reps[0].reason, BERTH_REPLACE_AUTOHEAL);
    assert_string_equal(x.r.reps[0].node, "sick");
    assert_int_equal(step_at(&x, 60)->nrep, 0);
    assert_int_equal(step_at(&x, 120)->nodes, 2);  /* registered: sick drains */
    assert_int_equal(step_at(&x, 180)->nodes, 1);  /* and is gone */
    assert_int_equal(step_at(&x, 180)->terminated, 1);
    assert_int_equal(step_at(&x, 600)->pending, 0);
    assert_int_equal(step_at(&x, 600)->nodes, 1);
    assert_int_equal(x.r.nreps, 1);
    done(&x);
}

static void test_bad_events(void **st)
{
    (void)st;
    static const struct {
        const char *doc, *want;
    } cases[] = {
        {"apiVersion: berth.io/v1\nkind: AutoscaleEvent\nspec: {at: 2024-05-01T12:00:00Z, "
         "type: PodLeave, pod: default/x, typo: 1}\n", "events.yaml:3:"},
        {"apiVersion: berth.io/v1\nkind: AutoscaleEvent\nspec: {at: yesterday, type: PodLeave, "
         "pod: default/x}\n", "RFC 3339"},
        {"apiVersion: berth.io/v1\nkind: AutoscaleEvent\nspec: {at: 2024-05-01T12:00:00Z, "
         "type: Explode}\n", "spec.type"},
        {"apiVersion: berth.io/v1\nkind: AutoscaleEvent\nspec: {at: 2024-05-01T12:00:00Z, "
         "type: PodLeave, pod: nonamespace}\n", "namespace/name"},
        {"apiVersion: berth.io/v1\nkind: AutoscaleEvent\nspec: {at: 2024-05-01T12:00:00Z, "
         "type: PriceChange, instanceType: nope, zone: z1, capacityType: spot, price: 1}\n",
         "no InstanceType named 'nope'"},
        {"apiVersion: berth.io/v1\nkind: AutoscaleEvent\nspec: {at: 2024-05-01T12:00:00Z, "
         "type: SpotInterruption, node: n1, pod: default/x}\n", "not a field of a SpotInterruption"},
        {"apiVersion: berth.io/v1\nkind: Headroom\nmetadata: {name: h}\nspec: {}\n",
         "AutoscaleEvent documents"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run x;
        simulate(&x, estate_types, cases[i].doc, 60);
        if (x.rc != BERTH_EINVAL || !strstr(x.e.msg, cases[i].want))
            fail_msg("case %zu: rc %d msg '%s', want '%s'", i, x.rc, x.e.msg, cases[i].want);
        done(&x);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arrive_waits_launch_delay),
        cmocka_unit_test(test_leave_scales_down_after_drain),
        cmocka_unit_test(test_drain_timeout_caps_grace),
        cmocka_unit_test(test_spot_interruption_headroom),
        cmocka_unit_test(test_spot_interruption_no_headroom),
        cmocka_unit_test(test_price_change_flips_spot),
        cmocka_unit_test(test_revert_to_spot),
        cmocka_unit_test(test_replacement_drain_waits_for_pdb),
        cmocka_unit_test(test_autoheal),
        cmocka_unit_test(test_bad_events),
        cmocka_unit_test(test_names_after_removals),
        cmocka_unit_test(test_leave_by_namespace_and_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
