/* tests/unit/test_disrupt_timeline.c - `disrupt simulate` (SPEC 4.1
 * "Termination", docs/disrupt.md "Simulate") on small clusters written as
 * YAML: a replacement launched (and Ready) before its candidate is
 * tainted; the eviction-group order of a drain; a PDB allowing one
 * disruption slowing a drain to one pod per step; a PDB at 0 and a
 * do-not-disrupt pod holding a drain until terminationGracePeriod; a
 * budget window gating actions over time; consolidation converging;
 * pods that fit nowhere staying pending; a consolidation waiting while
 * pods of a draining node would find no room; AKSNodeClass drift (a changed
 * imageFamily drifts, widened requirements do not) and its load errors;
 * bad options. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "berth/disrupt.h"
#include "berth/fleet.h"

#include "disrupt_fixture.h"

/* NodePool "np": tspec lines go into spec.template.spec; dis is the
 * disruption body (default: consolidateAfter 0s, budget 100%). */
static void pool(buf *b, const char *tspec, const char *dis)
{
    add(b, "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: np}\nspec:\n"
           "  template:\n    spec:\n"
           "      nodeClassRef: {group: karpenter.azure.com, kind: AKSNodeClass, name: default}\n"
           "%s  disruption:\n%s",
        tspec ? tspec : "", dis ? dis : "    consolidateAfter: 0s\n    budgets: [{nodes: \"100%\"}]\n");
    add(b, "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: D2}\nspec:\n"
           "  capacity: {cpu: \"2\", memory: 8Gi, pods: 30}\n"
           "  offerings: [{zone: z1, capacityType: on-demand, price: 0.1}]\n"
           "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: D4}\nspec:\n"
           "  capacity: {cpu: \"4\", memory: 16Gi, pods: 30}\n"
           "  offerings: [{zone: z1, capacityType: on-demand, price: 0.2}]\n");
}

/* A managed D2/D4 node: NodeClaim (created at `created`, extra claim
 * metadata lines, spec body, extra status lines) and its Node. */
static void managed(buf *b, const char *name, const char *type, const char *created,
                    const char *claim_meta, const char *claim_spec, const char *claim_status)
{
    add(b, "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: %s\n"
           "  labels: {karpenter.sh/nodepool: np}\n  creationTimestamp: \"%s\"\n%s"
           "spec: {%s}\nstatus:\n  nodeName: %s\n%s  conditions:\n"
           "  - {type: Initialized, status: \"True\", lastTransitionTime: \"%s\"}\n",
        name, created, claim_meta ? claim_meta : "", claim_spec ? claim_spec : "", name,
        claim_status ? claim_status : "", created);
    add(b, "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n"
           "  labels: {karpenter.sh/nodepool: np, node.kubernetes.io/instance-type: %s, "
           "karpenter.sh/capacity-type: on-demand, topology.kubernetes.io/zone: z1, "
           "kubernetes.io/hostname: %s, karpenter.sh/initialized: \"true\"}\nstatus:\n  allocatable: {cpu: \"%s\", memory: 16Gi, pods: \"30\"}\n",
        name, type, name, !strcmp(type, "D2") ? "2" : "4");
}

/* A node Karpenter does not manage. */
static void plain(buf *b, const char *name, const char *cpu)
{
    add(b, "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n  labels: {kubernetes.io/hostname: %s}\n"
           "status:\n  allocatable: {cpu: \"%s\", memory: 64Gi, pods: \"110\"}\n",
        name, name, cpu);
}

static void pod(buf *b, const char *name, const char *node, const char *cpu, const char *meta,
                const char *spec)
{
    add(b, "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: default\n%s"
           "spec:\n  nodeName: %s\n%s  containers:\n  - name: c\n"
           "    resources: {requests: {cpu: \"%s\", memory: 1Gi}}\n"
           "status:\n  phase: Running\n  startTime: \"2024-05-01T00:00:00Z\"\n"
           "  conditions: [{type: Ready, status: \"True\"}]\n",
        name, meta ? meta : "", node, spec ? spec : "", cpu);
}

static void pdb(buf *b, const char *app, int allowed)
{
    add(b, "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: %s, namespace: default}\n"
           "spec:\n  maxUnavailable: 1\n  selector: {matchLabels: {app: %s}}\n"
           "status: {disruptionsAllowed: %d}\n",
        app, app, allowed);
}

static int64_t ts(const char *s)
{
    int64_t ms;
    assert_int_equal(berth_time_parse(s, &ms), 0);
    return ms / 1000;
}

typedef struct fixture {
    berth_disrupt m;
    berth_dtimeline t;
} fixture;

static int load(fixture *f, const buf *b, berth_error *e)
{
    memset(&f->t, 0, sizeof f->t);
    return load_model(&f->m, b, e);
}

static void run(fixture *f, const buf *b, const char *from, const char *to, int64_t step,
                int64_t delay)
{
    berth_error e;
    if (load(f, b, &e))
        fail_msg("load: %s\n%s", e.msg, b->s);
    berth_dsim_options o = {ts(from), ts(to), step, delay, 0};
    if (berth_disrupt_simulate(&f->m, &o, &f->t, &e))
        fail_msg("simulate: %s", e.msg);
}

static void done(fixture *f)
{
    berth_dtimeline_free(&f->t);
    berth_disrupt_free(&f->m);
}

/* Index of the first event of type on node (and pod when not NULL) at or
 * after index `from`, -1 when none. */
static int find(const fixture *f, int from, berth_devent_type type, const char *node,
                const char *podname)
{
    for (uint32_t i = (uint32_t)from; i < f->t.nevents; i++) {
        const berth_devent *d = &f->t.events[i];
        if (d->type == type && (!node || (d->node && !strcmp(d->node, node))) &&
            (!podname || (d->pod && !strcmp(d->pod, podname))))
            return (int)i;
    }
    return -1;
}

/* The time of the step holding event i. */
static int64_t when(const fixture *f, int i)
{
    assert_true(i >= 0);
    for (uint32_t s = 0; s < f->t.nsteps; s++)
        if ((uint32_t)i >= f->t.steps[s].event0 &&
            (uint32_t)i < f->t.steps[s].event0 + f->t.steps[s].nevents)
            return f->t.steps[s].at;
    fail_msg("event %d in no step", i);
    return -1;
}

static int has_node(const fixture *f, const char *name)
{
    for (uint32_t n = 0; n < f->m.kube.nnodes; n++)
        if (!strcmp(f->m.kube.nodes[n].name, name))
            return 1;
    return 0;
}

static const char *node_of_pod(const fixture *f, const char *podname)
{
    for (uint32_t p = 0; p < f->m.kube.npods; p++)
        if (!strcmp(f->m.kube.pods[p].name, podname))
            return f->m.kube.pods[p].node_name;
    return NULL;
}

#define T0 "2024-05-01T12:00:00Z"
#define OLD "2024-03-01T00:00:00Z"   /* older than expireAfter 720h at T0 */
#define RECENT "2024-04-30T00:00:00Z"

/* ---- tests ---- */

static void test_replacement_before_taint(void **st)
{
    (void)st;
    static buf b;
    /* drifted: its NodePool template hash is stale */
    b.n = 0;
    pool(&b, NULL, NULL);
    managed(&b, "old", "D4", RECENT,
            "  annotations: {karpenter.sh/nodepool-hash: \"1\", karpenter.sh/nodepool-hash-version: berth-v1}\n",
            NULL, NULL);
    pod(&b, "big", "old", "3", NULL, NULL);
    fixture f;
    run(&f, &b, T0, "2024-05-01T12:05:00Z", 60, 60);
    int launch = find(&f, 0, BERTH_DEV_LAUNCH, NULL, NULL);
    int taint = find(&f, 0, BERTH_DEV_TAINT, "old", NULL);
    int evict = find(&f, 0, BERTH_DEV_EVICT, "old", "big");
    int del = find(&f, 0, BERTH_DEV_DELETE, "old", NULL);
    assert_true(launch >= 0 && taint > launch && evict > taint && del > evict);
    assert_int_equal(when(&f, launch), ts(T0));
    assert_int_equal(when(&f, taint), ts(T0) + 60); /* after the 60 s launch delay */
    assert_string_equal(f.t.events[launch].node, "np-sim-1");
    assert_non_null(strstr(f.t.events[launch].reason, "replaces old"));
    assert_int_equal(f.t.steps[0].disruptions[BERTH_DR_DRIFTED], 1);
    assert_int_equal(f.t.steps[0].nodes, 1); /* the replacement is not a Node yet */
    assert_false(has_node(&f, "old"));
    assert_true(has_node(&f, "np-sim-1"));
    assert_string_equal(node_of_pod(&f, "big"), "np-sim-1");
    /* the replacement: labels from the template and the offering, a claim
     * with the current hash and no drift */
    const berth_knode *rn = &f.m.kube.nodes[0];
    assert_string_equal(rn->name, "np-sim-1");
    assert_string_equal(berth_labels_get(&rn->labels, "node.kubernetes.io/instance-type"), "D4");
    assert_string_equal(berth_labels_get(&rn->labels, "topology.kubernetes.io/zone"), "z1");
    assert_string_equal(berth_labels_get(&rn->labels, "karpenter.sh/initialized"), "true");
    assert_int_equal(f.m.nclaims, 1);
    assert_string_equal(f.m.claims[0].hash, f.m.pools[0].hash);
    assert_int_equal(f.m.claims[0].created, ts(T0));
    assert_int_equal(f.m.claims[0].initialized_at, ts(T0) + 60);
    assert_false(berth_nodeclaim_drifted(&f.m, &f.m.claims[0], NULL, 0));
    assert_int_equal(f.t.nodes_end, 1);
    assert_int_equal(f.t.pending_end, 0);
    /* a replacement launched for a drift carries the current hash: no
     * second drift in the rest of the window */
    assert_int_equal(f.t.disruptions[BERTH_DR_DRIFTED], 1);
    done(&f);

    /* launch delay 0: Ready, tainted and drained in the same step */
    run(&f, &b, T0, T0, 60, 0);
    taint = find(&f, 0, BERTH_DEV_TAINT, "old", NULL);
    assert_true(taint > find(&f, 0, BERTH_DEV_LAUNCH, NULL, NULL));
    assert_int_equal(when(&f, taint), ts(T0));
    assert_false(has_node(&f, "old"));
    done(&f);
}

static void test_eviction_groups(void **st)
{
    (void)st;
    static buf b;
    b.n = 0;
    pool(&b, NULL, NULL);
    managed(&b, "exp", "D4", OLD, NULL, NULL, NULL);
    plain(&b, "spare", "16");
    const char *ds = "  ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: ds, uid: u, controller: true}]\n";
    /* written in reverse group order: the drain must reorder them */
    pod(&b, "crit-ds", "exp", "100m", ds, "  priority: 2000001000\n");
    pod(&b, "crit", "exp", "100m", NULL, "  priority: 2000000000\n");
    pod(&b, "ds", "exp", "100m", ds, NULL);
    pod(&b, "web", "exp", "100m", NULL, NULL);
    fixture f;
    run(&f, &b, T0, "2024-05-01T12:10:00Z", 60, 60);
    const char *order[4] = {"web", "ds", "crit", "crit-ds"};
    for (int i = 0; i < 4; i++) {
        int ev = find(&f, 0, BERTH_DEV_EVICT, "exp", order[i]);
        assert_true(ev >= 0);
        assert_int_equal(when(&f, ev), ts(T0) + 60 * i); /* one group per step */
        assert_non_null(strstr(f.t.events[ev].reason, "Expired: eviction group"));
    }
    int del = find(&f, 0, BERTH_DEV_DELETE, "exp", NULL);
    assert_int_equal(when(&f, del), ts(T0) + 180);
    assert_int_equal(f.t.disruptions[BERTH_DR_EXPIRED], 1);
    /* non-DaemonSet pods are re-scheduled, DaemonSet pods are not */
    assert_string_equal(node_of_pod(&f, "web"), "spare");
    assert_string_equal(node_of_pod(&f, "crit"), "spare");
    assert_null(node_of_pod(&f, "ds"));
    assert_int_equal(f.t.pending_end, 0);
    done(&f);
}

static void test_pdb_one_per_step(void **st)
{
    (void)st;
    static buf b;
    b.n = 0;
    pool(&b, NULL, NULL);
    managed(&b, "exp", "D4", OLD, NULL, NULL, NULL);
    plain(&b, "spare", "16");
    for (int i = 0; i < 3; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "web-%d", i);
        pod(&b, nm, "exp", "500m", "  labels: {app: web}\n", NULL);
    }
    pdb(&b, "web", 1);
    fixture f;
    run(&f, &b, T0, "2024-05-01T12:10:00Z", 60, 60);
    for (int i = 0; i < 3; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "web-%d", i);
        int ev = find(&f, 0, BERTH_DEV_EVICT, "exp", nm);
        assert_int_equal(when(&f, ev), ts(T0) + 60 * i);
        assert_string_equal(node_of_pod(&f, nm), "spare");
    }
    /* held in the first two steps, by the PDB */
    assert_true(f.t.steps[0].nblocked >= 1);
    int held = 0;
    for (uint32_t j = 0; j < f.t.steps[0].nblocked; j++)
        held |= !strcmp(f.t.blocked[f.t.steps[0].blocked0 + j].node, "exp") &&
                strstr(f.t.blocked[f.t.steps[0].blocked0 + j].reason, "PodDisruptionBudget default/web") != NULL;
    assert_true(held);
    assert_int_equal(when(&f, find(&f, 0, BERTH_DEV_DELETE, "exp", NULL)), ts(T0) + 120);
    done(&f);

    /* a larger step does not speed the drain up: still one pod per step */
    run(&f, &b, T0, "2024-05-01T13:00:00Z", 600, 60);
    assert_int_equal(when(&f, find(&f, 0, BERTH_DEV_EVICT, "exp", "web-2")), ts(T0) + 1200);
    done(&f);
}

static void test_pdb_zero_until_grace(void **st)
{
    (void)st;
    static buf b;
    b.n = 0;
    pool(&b, NULL, NULL);
    managed(&b, "exp", "D4", OLD, NULL, "terminationGracePeriod: 5m", NULL);
    plain(&b, "spare", "16");
    pod(&b, "db-0", "exp", "1", "  labels: {app: db}\n", NULL);
    pdb(&b, "db", 0);
    fixture f;
    run(&f, &b, T0, "2024-05-01T12:10:00Z", 60, 60);
    int ev = find(&f, 0, BERTH_DEV_EVICT, "exp", "db-0");
    assert_int_equal(when(&f, ev), ts(T0) + 300);
    assert_non_null(strstr(f.t.events[ev].reason, "terminationGracePeriod"));
    assert_int_equal(when(&f, find(&f, 0, BERTH_DEV_DELETE, "exp", NULL)), ts(T0) + 300);
    int blocked = find(&f, 0, BERTH_DEV_BLOCKED, "exp", NULL);
    assert_int_equal(when(&f, blocked), ts(T0));
    assert_non_null(strstr(f.t.events[blocked].reason, "PodDisruptionBudget default/db allows no more"));
    assert_string_equal(node_of_pod(&f, "db-0"), "spare");
    done(&f);

    /* without a terminationGracePeriod the drain never ends */
    b.n = 0;
    pool(&b, NULL, NULL);
    managed(&b, "exp", "D4", OLD, NULL, NULL, NULL);
    plain(&b, "spare", "16");
    pod(&b, "db-0", "exp", "1", "  labels: {app: db}\n", NULL);
    pdb(&b, "db", 0);
    run(&f, &b, T0, "2024-05-01T14:00:00Z", 600, 60);
    assert_int_equal(find(&f, 0, BERTH_DEV_EVICT, NULL, NULL), -1);
    assert_true(has_node(&f, "exp"));
    const berth_dstep *last = &f.t.steps[f.t.nsteps - 1];
    assert_int_equal(last->nblocked, 1);
    assert_non_null(strstr(f.t.blocked[last->blocked0].reason, "no terminationGracePeriod"));
    done(&f);
}

static void test_dnd_holds_expiring_node(void **st)
{
    (void)st;
    static buf b;
    b.n = 0;
    pool(&b, NULL, NULL);
    managed(&b, "exp", "D4", OLD, NULL, "terminationGracePeriod: 3m", NULL);
    plain(&b, "spare", "16");
    pod(&b, "batch", "exp", "1", "  annotations: {karpenter.sh/do-not-disrupt: \"true\"}\n", NULL);
    pod(&b, "web", "exp", "1", NULL, NULL);
    fixture f;
    run(&f, &b, T0, "2024-05-01T12:10:00Z", 60, 60);
    /* expiration ignores do-not-disrupt: tainted at once */
    assert_int_equal(when(&f, find(&f, 0, BERTH_DEV_TAINT, "exp", NULL)), ts(T0));
    assert_int_equal(when(&f, find(&f, 0, BERTH_DEV_EVICT, "exp", "web")), ts(T0));
    int ev = find(&f, 0, BERTH_DEV_EVICT, "exp", "batch");
    assert_int_equal(when(&f, ev), ts(T0) + 180);
    assert_non_null(strstr(f.t.events[ev].reason, "terminationGracePeriod"));
    int bl = find(&f, 0, BERTH_DEV_BLOCKED, "exp", NULL);
    assert_non_null(strstr(f.t.events[bl].reason, "do-not-disrupt"));
    assert_int_equal(when(&f, find(&f, 0, BERTH_DEV_DELETE, "exp", NULL)), ts(T0) + 180);
    done(&f);

    /* a duration do-not-disrupt ends by itself (pods started at 00:00,
     * 12h10m: active until 12:10; the grace period is longer) */
    b.n = 0;
    pool(&b, NULL, NULL);
    managed(&b, "exp", "D4", OLD, NULL, "terminationGracePeriod: 1h", NULL);
    plain(&b, "spare", "16");
    pod(&b, "batch", "exp", "1", "  annotations: {karpenter.sh/do-not-disrupt: 12h10m}\n", NULL);
    run(&f, &b, T0, "2024-05-01T12:20:00Z", 60, 60);
    ev = find(&f, 0, BERTH_DEV_EVICT, "exp", "batch");
    assert_int_equal(when(&f, ev), ts("2024-05-01T12:10:00Z"));
    assert_non_null(strstr(f.t.events[ev].reason, "eviction group 1"));
    done(&f);
}

static void test_budget_window(void **st)
{
    (void)st;
    static buf b;
    b.n = 0;
    pool(&b, NULL,
         "    consolidateAfter: 0s\n    budgets:\n    - nodes: \"100%\"\n"
         "    - {nodes: \"0\", schedule: \"@daily\", duration: 10m}\n");
    managed(&b, "idle", "D4", RECENT, NULL, NULL, NULL);
    managed(&b, "busy", "D4", RECENT, NULL, NULL, NULL);
    pod(&b, "web", "busy", "3", NULL, NULL);
    fixture f;
    run(&f, &b, "2024-05-01T23:58:00Z", "2024-05-02T00:20:00Z", 60, 60);
    int taint = find(&f, 0, BERTH_DEV_TAINT, "idle", NULL);
    assert_int_equal(when(&f, taint), ts("2024-05-01T23:58:00Z")); /* before the window */
    assert_string_equal(f.t.events[taint].reason, "Empty");
    done(&f);

    run(&f, &b, "2024-05-02T00:00:00Z", "2024-05-02T00:20:00Z", 60, 60);
    taint = find(&f, 0, BERTH_DEV_TAINT, "idle", NULL);
    assert_int_equal(when(&f, taint), ts("2024-05-02T00:10:00Z")); /* right after it */
    /* inside the window the node is blocked by the budget */
    int bl = find(&f, 0, BERTH_DEV_BLOCKED, "idle", NULL);
    assert_int_equal(when(&f, bl), ts("2024-05-02T00:00:00Z"));
    assert_non_null(strstr(f.t.events[bl].reason, "disruption budget"));
    for (uint32_t s = 0; s < f.t.nsteps; s++)
        if (f.t.steps[s].at < ts("2024-05-02T00:10:00Z"))
            assert_int_equal(f.t.steps[s].disruptions[BERTH_DR_EMPTY], 0);
    assert_int_equal(f.t.disruptions[BERTH_DR_EMPTY], 1);
    assert_int_equal(f.t.nodes_end, 1);
    done(&f);
}

static void test_consolidation_converges(void **st)
{
    (void)st;
    static buf b;
    b.n = 0;
    pool(&b, NULL, NULL);
    for (int i = 0; i < 6; i++) {
        char nm[16], pn[16];
        snprintf(nm, sizeof nm, "n%d", i);
        snprintf(pn, sizeof pn, "p%d", i);
        managed(&b, nm, "D4", RECENT, NULL, NULL, NULL);
        pod(&b, pn, nm, "600m", NULL, NULL);
    }
    fixture f;
    run(&f, &b, T0, "2024-05-01T13:00:00Z", 60, 60);
    assert_int_equal(f.t.nodes_start, 6);
    /* 6 x 600m = 3.6 cpu: one D4 in the end */
    assert_int_equal(f.t.nodes_end, 1);
    assert_true(f.t.cost_end < f.t.cost_start);
    assert_int_equal(f.t.pending_end, 0);
    uint32_t prev = 6;
    int64_t last_change = 0;
    for (uint32_t s = 0; s < f.t.nsteps; s++) {
        /* never below the end state, never more than one launch over */
        assert_true(f.t.steps[s].nodes <= prev + 1);
        if (f.t.steps[s].nodes != prev)
            last_change = f.t.steps[s].at;
        prev = f.t.steps[s].nodes;
    }
    /* it stops: the last half hour changes nothing */
    assert_true(last_change < ts("2024-05-01T12:30:00Z"));
    uint32_t acts = f.t.disruptions[BERTH_DR_UNDERUTILIZED] + f.t.disruptions[BERTH_DR_EMPTY];
    assert_true(acts >= 5);
    done(&f);
}

static void test_unschedulable_stays_pending(void **st)
{
    (void)st;
    static buf b;
    b.n = 0;
    pool(&b, NULL, NULL);
    managed(&b, "exp", "D4", OLD, NULL, NULL, NULL);
    plain(&b, "small", "1");
    pod(&b, "big", "exp", "3", NULL, NULL);
    fixture f;
    run(&f, &b, T0, "2024-05-01T12:03:00Z", 60, 60);
    int ev = find(&f, 0, BERTH_DEV_UNSCHEDULABLE, NULL, "big");
    assert_int_equal(when(&f, ev), ts(T0));
    assert_non_null(strstr(f.t.events[ev].reason, "Insufficient cpu"));
    assert_int_equal(find(&f, ev + 1, BERTH_DEV_UNSCHEDULABLE, NULL, "big"), -1); /* once */
    assert_int_equal(f.t.pending_end, 1);
    assert_int_equal(f.t.steps[f.t.nsteps - 1].pending, 1);
    done(&f);
}

static void test_room_for_draining_pods(void **st)
{
    (void)st;
    static buf b;
    b.n = 0;
    pool(&b, NULL, NULL);
    /* db holds "exp" for 5 minutes (PDB at 0); b's pod would fit on c,
     * but then db would find no room when the grace period ends */
    managed(&b, "exp", "D4", OLD, NULL, "terminationGracePeriod: 5m", NULL);
    managed(&b, "b", "D4", RECENT, NULL, NULL, NULL);
    managed(&b, "c", "D4", RECENT, NULL, NULL, NULL);
    pod(&b, "db", "exp", "2", "  labels: {app: db}\n", NULL);
    pdb(&b, "db", 0);
    pod(&b, "pb", "b", "1500m", NULL, NULL);
    pod(&b, "pc", "c", "1500m", NULL, NULL);
    fixture f;
    run(&f, &b, T0, "2024-05-01T12:10:00Z", 60, 60);
    /* nothing is consolidated while db waits; afterwards c is replaced by a
     * cheaper D2 and everything still has a node */
    for (uint32_t s = 0; s < f.t.nsteps; s++)
        if (f.t.steps[s].at < ts(T0) + 300)
            assert_int_equal(f.t.steps[s].disruptions[BERTH_DR_UNDERUTILIZED], 0);
    assert_int_equal(f.t.pending_end, 0);
    int bl = find(&f, 0, BERTH_DEV_BLOCKED, NULL, NULL);
    int found = 0;
    for (; bl >= 0; bl = find(&f, bl + 1, BERTH_DEV_BLOCKED, NULL, NULL))
        found |= strstr(f.t.events[bl].reason, "would find no room") != NULL &&
                 when(&f, bl) == ts(T0);
    assert_true(found);
    assert_non_null(node_of_pod(&f, "db"));
    done(&f);
}

/* ---- AKSNodeClass drift ---- */

static void nodeclass(buf *b, const char *api, const char *spec)
{
    add(b, "---\napiVersion: %s\nkind: AKSNodeClass\nmetadata: {name: default}\nspec: {%s}\n", api,
        spec);
}

static const char *hash_of(const char *family)
{
    static char h[24];
    berth_aksnodeclass c;
    memset(&c, 0, sizeof c);
    c.image_family = family;
    c.vnet_subnet_id = "";
    c.os_disk_size_gb = 128;
    berth_aksnodeclass_hash(&c, h);
    return h;
}

static void test_nodeclass_drift(void **st)
{
    (void)st;
    static buf b;
    char meta_old[200], meta_new[200];
    snprintf(meta_old, sizeof meta_old, "  annotations: {karpenter.azure.com/aksnodeclass-hash: \"%s\"}\n",
             hash_of("Ubuntu2204"));
    snprintf(meta_new, sizeof meta_new, "  annotations: {karpenter.azure.com/aksnodeclass-hash: \"%s\"}\n",
             hash_of("AzureLinux"));
    b.n = 0;
    nodeclass(&b, "karpenter.azure.com/v1beta1", "imageFamily: AzureLinux");
    /* requirements widened from [D2] to [D2, D4]: a D2 claim still fits */
    pool(&b, "      requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [D2, D4]}]\n",
         NULL);
    managed(&b, "widened", "D2", RECENT, meta_new, NULL, NULL);
    managed(&b, "old-image", "D2", RECENT, meta_old, NULL, NULL);
    managed(&b, "no-annotation", "D2", RECENT, NULL, NULL, NULL);
    pod(&b, "a", "widened", "1", NULL, NULL); /* not empty: Emptiness does not act first */
    pod(&b, "b", "old-image", "1", NULL, NULL);
    pod(&b, "c", "no-annotation", "1", NULL, NULL);
    berth_error e;
    fixture f;
    if (load(&f, &b, &e))
        fail_msg("load: %s", e.msg);
    char why[200];
    for (uint32_t c = 0; c < f.m.nclaims; c++) {
        const berth_nodeclaim *cl = &f.m.claims[c];
        int d = berth_nodeclaim_drifted(&f.m, cl, why, sizeof why);
        if (!strcmp(cl->name, "old-image")) {
            assert_true(d);
            assert_non_null(strstr(why, "AKSNodeClass default"));
            assert_non_null(strstr(why, "AzureLinux"));
        } else {
            assert_false(d);
        }
    }
    /* the explicit default equals the unset field */
    assert_string_equal(f.m.classes[0].hash, hash_of("AzureLinux"));
    berth_dplan p;
    berth_dplan_options o = {0};
    o.now = ts(T0);
    assert_int_equal(berth_disrupt_plan(&f.m, &o, &p, &e), 0);
    int drift = 0;
    for (uint32_t i = 0; i < p.nactions; i++)
        if (p.actions[i].reason == BERTH_DR_DRIFTED) {
            assert_int_equal(p.actions[i].nnodes, 1);
            assert_string_equal(f.m.kube.nodes[p.actions[i].nodes[0]].name, "old-image");
            drift = 1;
        }
    assert_true(drift);
    berth_dplan_free(&p);
    done(&f);

    /* osDiskSizeGB and vnetSubnetID are hashed too; v1alpha2 is read */
    b.n = 0;
    nodeclass(&b, "karpenter.azure.com/v1alpha2", "imageFamily: AzureLinux, osDiskSizeGB: 256");
    pool(&b, NULL, NULL);
    managed(&b, "disk", "D2", RECENT, meta_new, NULL, NULL);
    if (load(&f, &b, &e))
        fail_msg("load: %s", e.msg);
    assert_true(berth_nodeclaim_drifted(&f.m, &f.m.claims[0], why, sizeof why));
    assert_non_null(strstr(why, "osDiskSizeGB 256"));
    done(&f);

    /* an upstream hash version compares with the class's own annotation */
    b.n = 0;
    add(&b, "---\napiVersion: karpenter.azure.com/v1beta1\nkind: AKSNodeClass\nmetadata:\n"
            "  name: default\n  annotations: {karpenter.azure.com/aksnodeclass-hash: \"111\", "
            "karpenter.azure.com/aksnodeclass-hash-version: v3}\nspec: {imageFamily: Ubuntu2204}\n");
    pool(&b, NULL, NULL);
    managed(&b, "same", "D2", RECENT,
            "  annotations: {karpenter.azure.com/aksnodeclass-hash: \"111\", "
            "karpenter.azure.com/aksnodeclass-hash-version: v3}\n", NULL, NULL);
    managed(&b, "other", "D2", RECENT,
            "  annotations: {karpenter.azure.com/aksnodeclass-hash: \"222\", "
            "karpenter.azure.com/aksnodeclass-hash-version: v3}\n", NULL, NULL);
    if (load(&f, &b, &e))
        fail_msg("load: %s", e.msg);
    for (uint32_t c = 0; c < f.m.nclaims; c++)
        assert_int_equal(berth_nodeclaim_drifted(&f.m, &f.m.claims[c], NULL, 0),
                         !strcmp(f.m.claims[c].name, "other"));
    done(&f);
}

static void expect_load_error(const buf *b, const char *frag)
{
    fixture f;
    berth_error e;
    int rc = load(&f, b, &e);
    if (!rc || !strstr(e.msg, frag))
        fail_msg("expected an error with '%s', got rc %d '%s'", frag, rc, rc ? e.msg : "");
    done(&f);
}

static void test_nodeclass_load_errors(void **st)
{
    (void)st;
    static buf b;
    b.n = 0;
    nodeclass(&b, "karpenter.azure.com/v1", "imageFamily: AzureLinux");
    expect_load_error(&b, "needs apiVersion karpenter.azure.com/v1beta1");
    b.n = 0;
    nodeclass(&b, "karpenter.azure.com/v1beta1", "imageFamily: Windows");
    expect_load_error(&b, "t.yaml:5:");
    expect_load_error(&b, "spec.imageFamily");
    b.n = 0;
    nodeclass(&b, "karpenter.azure.com/v1beta1", "osDiskSizeGB: 10");
    expect_load_error(&b, "spec.osDiskSizeGB");
    b.n = 0;
    nodeclass(&b, "karpenter.azure.com/v1beta1", "imageFamlly: AzureLinux");
    expect_load_error(&b, "imageFamlly"); /* strict (the fixture loads strictly) */
    /* fields berth does not use are accepted */
    b.n = 0;
    nodeclass(&b, "karpenter.azure.com/v1beta1", "imageFamily: Ubuntu2404, tags: {team: a}, maxPods: 50");
    fixture f;
    berth_error e;
    assert_int_equal(load(&f, &b, &e), 0);
    assert_string_equal(f.m.classes[0].image_family, "Ubuntu2404");
    done(&f);
    b.n = 0;
    nodeclass(&b, "karpenter.azure.com/v1beta1", "imageFamily: AzureLinux");
    nodeclass(&b, "karpenter.azure.com/v1beta1", "imageFamily: AzureLinux");
    expect_load_error(&b, "appears twice");
}

static void test_bad_options(void **st)
{
    (void)st;
    static buf b;
    b.n = 0;
    pool(&b, NULL, NULL);
    fixture f;
    berth_error e;
    if (load(&f, &b, &e))
        fail_msg("load: %s", e.msg);
    berth_dsim_options o = {ts(T0), ts(T0) - 60, 60, 60, 0};
    assert_int_equal(berth_disrupt_simulate(&f.m, &o, &f.t, &e), BERTH_EINVAL);
    o.to = ts(T0) + 3600;
    o.step = 0;
    assert_int_equal(berth_disrupt_simulate(&f.m, &o, &f.t, &e), BERTH_EINVAL);
    o.step = 1;
    o.to = o.from + BERTH_DSIM_MAX_STEPS; /* one step too many */
    assert_int_equal(berth_disrupt_simulate(&f.m, &o, &f.t, &e), BERTH_EINVAL);
    assert_non_null(strstr(e.msg, "at most"));
    o.to = o.from + BERTH_DSIM_MAX_STEPS - 1;
    assert_int_equal(berth_disrupt_simulate(&f.m, &o, &f.t, &e), 0);
    assert_int_equal(f.t.nsteps_run, BERTH_DSIM_MAX_STEPS);
    assert_int_equal(f.t.nsteps, 1 + 1); /* nothing happens: the first and the last */
    done(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replacement_before_taint),
        cmocka_unit_test(test_eviction_groups),
        cmocka_unit_test(test_pdb_one_per_step),
        cmocka_unit_test(test_pdb_zero_until_grace),
        cmocka_unit_test(test_dnd_holds_expiring_node),
        cmocka_unit_test(test_budget_window),
        cmocka_unit_test(test_consolidation_converges),
        cmocka_unit_test(test_unschedulable_stays_pending),
        cmocka_unit_test(test_room_for_draining_pods),
        cmocka_unit_test(test_nodeclass_drift),
        cmocka_unit_test(test_nodeclass_load_errors),
        cmocka_unit_test(test_bad_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
