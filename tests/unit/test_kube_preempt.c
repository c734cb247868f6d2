/* test_kube_preempt.c - DefaultPreemption in berth_kube_schedule
 * (kube/preempt.c, docs/kube.md "Preemption") on hand-checked clusters:
 * victim selection (the most important pods reprieved first, only lower
 * priorities), PodDisruptionBudgets (a violating victim reprieved when the
 * pod fits without removing it, another node chosen when one violates
 * nothing, a violation taken when nothing else helps, the per-node
 * decrement), each of pickOneNodeForPreemption's criteria breaking a tie
 * (PDB violations, highest victim priority, the priority sum with
 * upstream's MaxInt32+1 offset, victim count, latest start, then the
 * lowest name), preemptionPolicy Never, nodes whose failure removing pods
 * cannot resolve never being candidates (nor counted: a node too small
 * for the pod even when empty), and the victims leaving the
 * spread counters for the pods after. Every case runs on the fast path
 * and with --reference (plain recomputation) and both must agree; random
 * clusters (a quarter with the usage-aware profile, whose memory admission
 * counts the node's pods) compare the two as well. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "berth/kube.h"
#include "berth/random.h"

#define YAML_BUF_SIZE (1 << 20)
#include "yaml_buf.h"

/* ---- building clusters as kubectl writes them ---- */

static void node(buf *b, const char *name, const char *cpu, const char *extra_labels,
                 const char *taint)
{
    add(b,
        "- apiVersion: v1\n  kind: Node\n  metadata:\n    name: %s\n"
        "    uid: 00000000-0000-4000-8000-%012zu\n    resourceVersion: \"1\"\n"
        "    creationTimestamp: \"2024-05-01T10:00:00Z\"\n"
        "    labels:\n      kubernetes.io/hostname: %s\n%s"
        "  spec:\n%s"
        "  status:\n    allocatable: {cpu: \"%s\", memory: 16Gi, pods: \"110\"}\n"
        "    capacity: {cpu: \"%s\", memory: 16Gi, pods: \"110\"}\n"
        "    conditions:\n    - {type: Ready, status: \"True\", reason: KubeletReady}\n",
        name, b->n, name, extra_labels ? extra_labels : "",
        taint ? taint : "    podCIDR: 10.244.0.0/24\n", cpu, cpu);
}

/* A pod: bound when node is set (Running, with startTime when start is
 * set), else Pending. extra: more spec lines (4 spaces). */
static void pod(buf *b, const char *name, int64_t prio, const char *cpu, const char *node_name,
                const char *app, const char *start, const char *extra)
{
    add(b,
        "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: %s\n    namespace: default\n"
        "    uid: 10000000-0000-4000-8000-%012zu\n"
        "    creationTimestamp: \"2024-05-01T09:00:00Z\"\n"
        "    labels: {app: %s}\n"
        "    ownerReferences:\n    - {apiVersion: apps/v1, kind: ReplicaSet, name: %s-rs,"
        " uid: 20000000-0000-4000-8000-000000000001, controller: true}\n"
        "    managedFields:\n    - {manager: kube-controller-manager, operation: Update,"
        " apiVersion: v1}\n"
        "  spec:\n    priority: %lld\n%s%s%s"
        "    containers:\n    - name: app\n      image: registry.k8s.io/pause:3.9\n"
        "      resources:\n        requests: {cpu: \"%s\", memory: 64Mi}\n%s",
        name, b->n, app, app, (long long)prio, node_name ? "    nodeName: " : "",
        node_name ? node_name : "", node_name ? "\n" : "", cpu, extra ? extra : "");
    if (node_name) {
        add(b, "  status:\n    phase: Running\n    qosClass: Burstable\n");
        if (start)
            add(b, "    startTime: \"%s\"\n", start);
    } else {
        add(b, "  status:\n    phase: Pending\n    conditions:\n"
               "    - {type: PodScheduled, status: \"False\", reason: Unschedulable}\n");
    }
}

static void pdb(buf *b, const char *name, const char *app, int allowed)
{
    add(b,
        "- apiVersion: policy/v1\n  kind: PodDisruptionBudget\n  metadata:\n    name: %s\n"
        "    namespace: default\n    uid: 30000000-0000-4000-8000-%012zu\n"
        "  spec:\n    minAvailable: 1\n    selector:\n      matchLabels: {app: %s}\n"
        "  status:\n    disruptionsAllowed: %d\n    currentHealthy: 1\n    desiredHealthy: 1\n"
        "    expectedPods: 1\n    observedGeneration: 1\n",
        name, b->n, app, allowed);
}

static void begin(buf *b)
{
    b->n = 0;
    add(b, "apiVersion: v1\nkind: List\nmetadata: {resourceVersion: \"\"}\nitems:\n");
}

/* ---- running ---- */

typedef struct outcome {
    char text[8192];
    size_t n;
} outcome;

/* one line per decision: "pod -> node" or "pod -> node preempting a,b"
 * or "pod -> -" */
static void collect(void *ctx, const berth_kcluster *k, const berth_kdecision *d)
{
    outcome *o = ctx;
    int w = snprintf(o->text + o->n, sizeof o->text - o->n, "%s -> %s", k->pods[d->pod].name,
                     d->node == BERTH_KUBE_NONE ? "-" : k->nodes[d->node].name);
    o->n += (size_t)w;
    if (d->nvictims) {
        assert_int_equal(d->nominated, d->node);
        for (uint32_t i = 0; i < d->nvictims; i++) {
            w = snprintf(o->text + o->n, sizeof o->text - o->n, "%s%s", i ? "," : " preempting ",
                         k->pods[d->victims[i]].name);
            o->n += (size_t)w;
        }
    }
    o->text[o->n++] = '\n';
    o->text[o->n] = 0;
    assert_true(o->n < sizeof o->text - 256);
}

static void load(berth_kcluster *k, const buf *b)
{
    berth_error e;
    berth_error_clear(&e);
    berth_kube_init(k);
    berth_source src;
    int rc = berth_doc_load_buffer(&k->arena, "t.yaml", b->s, b->n, &src, &e);
    if (!rc)
        rc = berth_kube_load(k, &src, 1, &e);
    if (rc)
        fail_msg("load: %s\n%s", e.msg, b->s);
}

/* random worlds: some run with the usage-aware profile (its memory admission
 * reads the node's pods too) */
static int usage_aware;

static int run(const buf *b, int preempt, int reference, int detail, outcome *o,
               berth_kcluster *keep)
{
    berth_kcluster k;
    load(&k, b);
    memset(o, 0, sizeof *o);
    berth_kprofile ua;
    berth_kube_usage_aware_profile(&k, &ua);
    berth_kube_options opt = {.tiebreak = BERTH_TIE_FIRST, .preempt = preempt,
                              .profile = usage_aware ? &ua : NULL,
                              .reference = reference, .detail = detail,
                              .on_decision = collect, .ctx = o};
    berth_error e;
    berth_error_clear(&e);
    int rc = berth_kube_schedule(&k, &opt, &e);
    assert_true(rc == 0 || rc == BERTH_ENOFIT);
    if (keep)
        *keep = k;
    else
        berth_kube_free(&k);
    return rc;
}

/* The outcome with preemption; fast path, --reference and detail agree. */
static const char *sched(const buf *b)
{
    static outcome o;
    outcome r, dt;
    int rc = run(b, 1, 0, 0, &o, NULL);
    assert_int_equal(run(b, 1, 1, 0, &r, NULL), rc);
    assert_int_equal(run(b, 1, 0, 1, &dt, NULL), rc);
    if (strcmp(o.text, r.text))
        fail_msg("fast path:\n%s--reference:\n%s", o.text, r.text);
    if (strcmp(o.text, dt.text))
        fail_msg("fast path:\n%s detail:\n%s", o.text, dt.text);
    return o.text;
}

static void expect(const buf *b, const char *want)
{
    const char *got = sched(b);
    if (strcmp(got, want))
        fail_msg("got:\n%sexpected:\n%s", got, want);
}

/* ---- victims on one node ---- */

static void test_victims_reprieve_by_importance(void **st)
{
    (void)st;
    static buf b;
    begin(&b);
    node(&b, "node-a", "4", NULL, NULL);
    pod(&b, "p10", 10, "1", "node-a", "x", NULL, NULL);
    pod(&b, "p20", 20, "1", "node-a", "x", NULL, NULL);
    pod(&b, "p30", 30, "2", "node-a", "x", NULL, NULL);
    pod(&b, "crit", 100, "2", NULL, "c", NULL, NULL);
    /* all three leave (4 free); p30 comes back (2 free: fits), p20 and p10
     * do not: the victims, most important first */
    expect(&b, "crit -> node-a preempting p20,p10\n");
    /* without preemption: unschedulable, and exit 1 */
    outcome o;
    assert_int_equal(run(&b, 0, 0, 0, &o, NULL), BERTH_ENOFIT);
    assert_string_equal(o.text, "crit -> -\n");
}

static void test_victims_lower_priority_only(void **st)
{
    (void)st;
    static buf b;
    begin(&b);
    node(&b, "node-a", "4", NULL, NULL);
    pod(&b, "same", 100, "2", "node-a", "x", NULL, NULL);
    pod(&b, "low", 99, "1", "node-a", "x", NULL, NULL);
    pod(&b, "crit", 100, "2", NULL, "c", NULL, NULL);
    /* 1 cpu free; without the lower-priority pod 2: it fits. The
     * equal-priority pod is never a victim */
    expect(&b, "crit -> node-a preempting low\n");
    begin(&b);
    node(&b, "node-a", "4", NULL, NULL);
    pod(&b, "same", 100, "3", "node-a", "x", NULL, NULL);
    pod(&b, "low", 99, "1", "node-a", "x", NULL, NULL);
    pod(&b, "crit", 100, "2", NULL, "c", NULL, NULL);
    /* even without the low pod only 1 is free: no candidate */
    expect(&b, "crit -> -\n");
}

/* ---- PodDisruptionBudgets ---- */

static void test_pdb_other_node_preferred(void **st)
{
    (void)st;
    static buf b;
    for (int allowed = 0; allowed <= 1; allowed++) {
        begin(&b);
        node(&b, "node-a", "4", NULL, NULL);
        node(&b, "node-b", "4", NULL, NULL);
        pod(&b, "web-1", 10, "3", "node-a", "web", NULL, NULL);
        pod(&b, "batch-1", 10, "3", "node-b", "batch", NULL, NULL);
        pdb(&b, "web", "web", allowed);
        pod(&b, "crit", 100, "2", NULL, "c", NULL, NULL);
        /* equal otherwise, node-a would win by name; its victim would use
         * up a budget with no disruption left */
        expect(&b, allowed ? "crit -> node-a preempting web-1\n"
                           : "crit -> node-b preempting batch-1\n");
    }
}

static void test_pdb_violating_reprieved_first(void **st)
{
    (void)st;
    static buf b;
    for (int with_pdb = 0; with_pdb <= 1; with_pdb++) {
        begin(&b);
        node(&b, "node-a", "4", NULL, NULL);
        /* batch-1 is the more important (started earlier) */
        pod(&b, "web-1", 10, "2", "node-a", "web", "2024-05-01T12:00:00Z", NULL);
        pod(&b, "batch-1", 10, "2", "node-a", "batch", "2024-05-01T11:00:00Z", NULL);
        if (with_pdb)
            pdb(&b, "web", "web", 0);
        pod(&b, "crit", 100, "2", NULL, "c", NULL, NULL);
        /* by importance batch-1 is reprieved first and web-1 goes; with
         * web's budget used up web-1 is tried first and batch-1 goes */
        expect(&b, with_pdb ? "crit -> node-a preempting batch-1\n"
                            : "crit -> node-a preempting web-1\n");
    }
}

static void test_pdb_violation_unavoidable(void **st)
{
    (void)st;
    static buf b;
    begin(&b);
    node(&b, "node-a", "4", NULL, NULL);
    pod(&b, "web-1", 10, "4", "node-a", "web", NULL, NULL);
    pdb(&b, "web", "web", 0);
    pod(&b, "crit", 100, "2", NULL, "c", NULL, NULL);
    expect(&b, "crit -> node-a preempting web-1\n");
}

static void test_pdb_decrement_per_node(void **st)
{
    (void)st;
    static buf b;
    /* node-a: two web pods, both must go; the budget allows one: one
     * violation. node-b: one web pod and one batch pod, both must go: the
     * web pod uses the one disruption, no violation (the budget is counted
     * again for each node) */
    begin(&b);
    node(&b, "node-a", "4", NULL, NULL);
    node(&b, "node-b", "4", NULL, NULL);
    pod(&b, "web-1", 10, "2", "node-a", "web", NULL, NULL);
    pod(&b, "web-2", 10, "2", "node-a", "web", NULL, NULL);
    pod(&b, "web-3", 20, "2", "node-b", "web", NULL, NULL);
    pod(&b, "batch-1", 20, "2", "node-b", "batch", NULL, NULL);
    pdb(&b, "web", "web", 1);
    pod(&b, "crit", 100, "4", NULL, "c", NULL, NULL);
    /* node-a has lower victim priorities but one violation: node-b */
    expect(&b, "crit -> node-b preempting web-3,batch-1\n");
    /* the budget is used up by that deletion for the rest of the run */
    begin(&b);
    node(&b, "node-a", "4", NULL, NULL);
    node(&b, "node-b", "4", NULL, NULL);
    node(&b, "node-c", "4", NULL, NULL);
    pod(&b, "web-1", 10, "4", "node-a", "web", NULL, NULL);
    pod(&b, "web-2", 10, "4", "node-b", "web", NULL, NULL);
    pod(&b, "batch-1", 20, "4", "node-c", "batch", NULL, NULL);
    pdb(&b, "web", "web", 1);
    pod(&b, "crit-1", 100, "4", NULL, "c", NULL, NULL);
    pod(&b, "crit-2", 100, "4", NULL, "c", NULL, NULL);
    expect(&b, "crit-1 -> node-a preempting web-1\ncrit-2 -> node-c preempting batch-1\n");
}

/* ---- pickOneNodeForPreemption ---- */

static void test_pick_highest_priority(void **st)
{
    (void)st;
    static buf b;
    begin(&b);
    node(&b, "node-a", "4", NULL, NULL);
    node(&b, "node-b", "4", NULL, NULL);
    pod(&b, "a-1", 50, "4", "node-a", "x", NULL, NULL);
    pod(&b, "b-1", 40, "2", "node-b", "x", NULL, NULL);
    pod(&b, "b-2", 40, "2", "node-b", "x", NULL, NULL);
    pod(&b, "crit", 100, "4", NULL, "c", NULL, NULL);
    /* node-b has more victims and a larger sum, but its highest is lower */
    expect(&b, "crit -> node-b preempting b-1,b-2\n");
}

static void test_pick_priority_sum_offset(void **st)
{
    (void)st;
    static buf b;
    begin(&b);
    node(&b, "node-a", "4", NULL, NULL);
    node(&b, "node-b", "4", NULL, NULL);
    pod(&b, "a-1", -5, "2", "node-a", "x", NULL, NULL);
    pod(&b, "a-2", -5, "2", "node-a", "x", NULL, NULL);
    pod(&b, "b-1", -5, "4", "node-b", "x", NULL, NULL);
    pod(&b, "crit", 100, "4", NULL, "c", NULL, NULL);
    /* plain sums: a -10 < b -5; with MaxInt32+1 added per victim, b's sum
     * is the smaller */
    expect(&b, "crit -> node-b preempting b-1\n");
    begin(&b);
    node(&b, "node-a", "4", NULL, NULL);
    node(&b, "node-b", "4", NULL, NULL);
    pod(&b, "a-1", 30, "2", "node-a", "x", NULL, NULL);
    pod(&b, "a-2", 30, "2", "node-a", "x", NULL, NULL);
    pod(&b, "b-1", 30, "2", "node-b", "x", NULL, NULL);
    pod(&b, "b-2", 20, "2", "node-b", "x", NULL, NULL);
    pod(&b, "crit", 100, "4", NULL, "c", NULL, NULL);
    /* same highest (30), same count: the smaller sum */
    expect(&b, "crit -> node-b preempting b-1,b-2\n");
}

static void test_pick_fewest_victims(void **st)
{
    (void)st;
    static buf b;
    begin(&b);
    node(&b, "node-a", "4", NULL, NULL);
    node(&b, "node-b", "4", NULL, NULL);
    /* sums with the offset: a (0 + 2^31) + (-2^31 + 2^31) = 2^31 = b's */
    pod(&b, "a-1", 0, "2", "node-a", "x", NULL, NULL);
    pod(&b, "a-2", INT32_MIN, "2", "node-a", "x", NULL, NULL);
    pod(&b, "b-1", 0, "4", "node-b", "x", NULL, NULL);
    pod(&b, "crit", 100, "4", NULL, "c", NULL, NULL);
    expect(&b, "crit -> node-b preempting b-1\n");
}

static void test_pick_latest_start(void **st)
{
    (void)st;
    static buf b;
    begin(&b);
    node(&b, "node-a", "4", NULL, NULL);
    node(&b, "node-b", "4", NULL, NULL);
    pod(&b, "a-1", 10, "4", "node-a", "x", "2024-05-01T10:00:00Z", NULL);
    pod(&b, "b-1", 10, "4", "node-b", "x", "2024-05-01T11:00:00Z", NULL);
    pod(&b, "crit", 100, "4", NULL, "c", NULL, NULL);
    expect(&b, "crit -> node-b preempting b-1\n");
    /* the start of the highest-priority victims counts: node-b's earliest
     * such start is earlier than node-a's */
    begin(&b);
    node(&b, "node-a", "4", NULL, NULL);
    node(&b, "node-b", "4", NULL, NULL);
    pod(&b, "a-1", 10, "2", "node-a", "x", "2024-05-01T10:30:00Z", NULL);
    pod(&b, "a-2", 10, "2", "node-a", "x", "2024-05-01T12:00:00Z", NULL);
    pod(&b, "b-1", 10, "2", "node-b", "x", "2024-05-01T13:00:00Z", NULL);
    pod(&b, "b-2", 10, "2", "node-b", "x", "2024-05-01T10:00:00Z", NULL);
    pod(&b, "crit", 100, "4", NULL, "c", NULL, NULL);
    expect(&b, "crit -> node-a preempting a-1,a-2\n");
}

static void test_pick_lowest_name(void **st)
{
    (void)st;
    static buf b;
    begin(&b);
    node(&b, "node-b", "4", NULL, NULL);
    node(&b, "node-a", "4", NULL, NULL);
    pod(&b, "b-1", 10, "4", "node-b", "x", "2024-05-01T10:00:00Z", NULL);
    pod(&b, "a-1", 10, "4", "node-a", "x", "2024-05-01T10:00:00Z", NULL);
    pod(&b, "crit", 100, "4", NULL, "c", NULL, NULL);
    expect(&b, "crit -> node-a preempting a-1\n");
}

/* ---- eligibility and candidates ---- */

static void test_preemption_policy_never(void **st)
{
    (void)st;
    static buf b;
    begin(&b);
    node(&b, "node-a", "4", NULL, NULL);
    pod(&b, "low", 0, "4", "node-a", "x", NULL, NULL);
    pod(&b, "polite", 100, "2", NULL, "c", NULL, "    preemptionPolicy: Never\n");
    pod(&b, "pushy", 50, "2", NULL, "c", NULL, "    preemptionPolicy: PreemptLowerPriority\n");
    /* polite waits; pushy (lower priority, later in the queue) preempts */
    expect(&b, "polite -> -\npushy -> node-a preempting low\n");
    /* a bad value is a located error */
    begin(&b);
    pod(&b, "bad", 0, "1", NULL, "c", NULL, "    preemptionPolicy: Sometimes\n");
    berth_kcluster k;
    berth_kube_init(&k);
    berth_error e;
    berth_error_clear(&e);
    berth_source src;
    assert_int_equal(berth_doc_load_buffer(&k.arena, "t.yaml", b.s, b.n, &src, &e), 0);
    assert_int_equal(berth_kube_load(&k, &src, 0, &e), BERTH_EINVAL);
    assert_non_null(strstr(e.msg, "t.yaml:"));
    assert_non_null(strstr(e.msg, "spec.preemptionPolicy"));
    assert_non_null(strstr(e.msg, "Sometimes"));
    berth_kube_free(&k);
}

static void test_unresolvable_never_candidates(void **st)
{
    (void)st;
    static buf b;
    for (int helpable = 0; helpable <= 1; helpable++) {
        begin(&b);
        /* tainted: removing pods cannot help */
        node(&b, "node-a", "4", NULL,
             "    taints:\n    - {key: dedicated, value: gpu, effect: NoSchedule}\n");
        /* the pod's node selector (zone) does not match */
        node(&b, "node-b", "4", "      zone: west\n", NULL);
        /* unschedulable */
        node(&b, "node-c", "4", "      zone: east\n", "    unschedulable: true\n");
        /* matches everything; full of pods of equal priority (or, when
         * helpable, one lower) */
        node(&b, "node-d", "4", "      zone: east\n", NULL);
        pod(&b, "a-1", 0, "4", "node-a", "x", NULL,
            "    tolerations:\n    - {key: dedicated, operator: Exists}\n");
        pod(&b, "b-1", 0, "4", "node-b", "x", NULL, NULL);
        pod(&b, "c-1", 0, "4", "node-c", "x", NULL, NULL);
        pod(&b, "d-1", helpable ? 99 : 100, "4", "node-d", "x", NULL, NULL);
        pod(&b, "crit", 100, "1", NULL, "c", NULL, "    nodeSelector: {zone: east}\n");
        expect(&b, helpable ? "crit -> node-d preempting d-1\n" : "crit -> -\n");
    }
}

static void test_beyond_allocatable_not_potential(void **st)
{
    (void)st;
    static buf b;
    begin(&b);
    /* 1,000 nodes too small for the pod even when empty (upstream's
     * NodeResourcesFit then says UnschedulableAndUnresolvable): not
     * potential nodes, and not counted. 1,100 others each hold one victim;
     * the best (lowest victim priority) is b-0150. Upstream's search wants
     * max(10%, 100) of the potential nodes: 110 of 1,100, so it stops at
     * b-0109 and b-0000 wins the tie. Were the small nodes counted (210 of
     * 2,100) it would reach b-0150. */
    for (int i = 0; i < 1000; i++)
        add(&b, "- {apiVersion: v1, kind: Node, metadata: {name: a-%04d}, status: {allocatable:"
                " {cpu: \"1\", memory: 16Gi, pods: \"110\"}}}\n", i);
    for (int i = 0; i < 1100; i++)
        add(&b, "- {apiVersion: v1, kind: Node, metadata: {name: b-%04d}, status: {allocatable:"
                " {cpu: \"4\", memory: 16Gi, pods: \"110\"}}}\n"
                "- {apiVersion: v1, kind: Pod, metadata: {name: low-%04d, namespace: default},"
                " spec: {nodeName: b-%04d, priority: %d, containers: [{name: c, resources:"
                " {requests: {cpu: \"4\"}}}]}, status: {phase: Running}}\n",
            i, i, i, i == 150 ? 5 : 10);
    pod(&b, "crit", 100, "2", NULL, "c", NULL, NULL);
    expect(&b, "crit -> b-0000 preempting low-0000\n");
}

/* ---- the queue after a preemption ---- */

static void test_victims_leave_spread_counts(void **st)
{
    (void)st;
    static buf b;
    for (int preempt = 0; preempt <= 1; preempt++) {
        begin(&b);
        node(&b, "node-a", "3", "      topology.kubernetes.io/zone: a\n", NULL);
        node(&b, "node-b", "4", "      topology.kubernetes.io/zone: b\n", NULL);
        pod(&b, "web-a", 0, "2500m", "node-a", "web", NULL, NULL);
        pod(&b, "web-b", 5, "3", "node-b", "web", NULL, NULL);
        /* fits nowhere; node-a's victim has the lower priority */
        pod(&b, "crit", 100, "2", NULL, "c", NULL, NULL);
        /* spread over zones, and a strong preference for node-b: with web-a
         * still counted both zones hold one web pod and node-b wins; once
         * it is gone, zone b would be 2 against 0 */
        pod(&b, "web-new", 0, "500m", NULL, "web", NULL,
            "    topologySpreadConstraints:\n"
            "    - maxSkew: 1\n      topologyKey: topology.kubernetes.io/zone\n"
            "      whenUnsatisfiable: DoNotSchedule\n"
            "      labelSelector: {matchLabels: {app: web}}\n"
            "    affinity:\n      nodeAffinity:\n"
            "        preferredDuringSchedulingIgnoredDuringExecution:\n"
            "        - weight: 100\n          preference:\n            matchExpressions:\n"
            "            - {key: kubernetes.io/hostname, operator: In, values: [node-b]}\n");
        if (preempt) {
            expect(&b, "crit -> node-a preempting web-a\nweb-new -> node-a\n");
            berth_kcluster k;
            outcome o;
            run(&b, 1, 0, 0, &o, &k);
            for (uint32_t i = 0; i < k.npods; i++)
                assert_int_equal(k.pods[i].terminating, !strcmp(k.pods[i].name, "web-a"));
            berth_kube_free(&k);
        } else {
            outcome o;
            run(&b, 0, 0, 0, &o, NULL);
            assert_string_equal(o.text, "crit -> -\nweb-new -> node-b\n");
        }
    }
}

/* ---- random clusters: the fast path and the reference agree ---- */

static void test_random_fast_equals_reference(void **st)
{
    (void)st;
    static buf b;
    berth_rng g;
    berth_rng_seed(&g, 20240501);
    uint32_t preempted = 0;
    for (int world = 0; world < 60; world++) {
        begin(&b);
        uint32_t nn = 2 + (uint32_t)berth_rng_below(&g, 12);
        char nm[32], lb[128];
        usage_aware = world % 4 == 3;
        for (uint32_t n = 0; n < nn; n++) {
            snprintf(nm, sizeof nm, "n-%02u", n);
            snprintf(lb, sizeof lb,
                     "      topology.kubernetes.io/zone: z%u\n%s", n % 3,
                     n % 2 ? "    annotations:\n      berth.io/vm-overhead-memory: 3Gi\n" : "");
            node(&b, nm, berth_rng_below(&g, 2) ? "4" : "8", lb,
                 berth_rng_below(&g, 6) ? NULL
                                        : "    taints:\n    - {key: t, value: v, effect: NoSchedule}\n");
        }
        static const char *apps[] = {"web", "batch", "db"};
        static const char *cpus[] = {"500m", "1", "1500m", "2", "3"};
        uint32_t np = nn * 3 + (uint32_t)berth_rng_below(&g, nn * 2);
        for (uint32_t i = 0; i < np; i++) {
            int bound = berth_rng_below(&g, 3) != 0;
            char pn[32], nd[32], ts[32];
            snprintf(pn, sizeof pn, "p-%03u", i);
            snprintf(nd, sizeof nd, "n-%02u", (unsigned)berth_rng_below(&g, nn));
            snprintf(ts, sizeof ts, "2024-05-01T1%u:%02u:00Z", (unsigned)berth_rng_below(&g, 3),
                     (unsigned)berth_rng_below(&g, 4));
            const char *extra = NULL;
            uint64_t r = berth_rng_below(&g, 10);
            if (r == 0)
                extra = "    topologySpreadConstraints:\n"
                        "    - maxSkew: 1\n      topologyKey: topology.kubernetes.io/zone\n"
                        "      whenUnsatisfiable: DoNotSchedule\n"
                        "      labelSelector: {matchLabels: {app: web}}\n";
            else if (r == 1)
                extra = "    affinity:\n      podAntiAffinity:\n"
                        "        requiredDuringSchedulingIgnoredDuringExecution:\n"
                        "        - topologyKey: kubernetes.io/hostname\n"
                        "          labelSelector: {matchLabels: {app: db}}\n";
            else if (r == 2)
                extra = "    preemptionPolicy: Never\n";
            pod(&b, pn, (int64_t)berth_rng_below(&g, 5) * 10, cpus[berth_rng_below(&g, 5)],
                bound ? nd : NULL, apps[berth_rng_below(&g, 3)], bound ? ts : NULL, extra);
        }
        if (berth_rng_below(&g, 2))
            pdb(&b, "web", "web", (int)berth_rng_below(&g, 2));
        if (berth_rng_below(&g, 2))
            pdb(&b, "db", "db", 0);
        const char *got = sched(&b); /* asserts fast path == reference == detail */
        preempted += strstr(got, "preempting") != NULL;
    }
    usage_aware = 0;
    /* the worlds do preempt */
    assert_true(preempted >= 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_victims_reprieve_by_importance),
        cmocka_unit_test(test_victims_lower_priority_only),
        cmocka_unit_test(test_pdb_other_node_preferred),
        cmocka_unit_test(test_pdb_violating_reprieved_first),
        cmocka_unit_test(test_pdb_violation_unavoidable),
        cmocka_unit_test(test_pdb_decrement_per_node),
        cmocka_unit_test(test_pick_highest_priority),
        cmocka_unit_test(test_pick_priority_sum_offset),
        cmocka_unit_test(test_pick_fewest_victims),
        cmocka_unit_test(test_pick_latest_start),
        cmocka_unit_test(test_pick_lowest_name),
        cmocka_unit_test(test_preemption_policy_never),
        cmocka_unit_test(test_unresolvable_never_candidates),
        cmocka_unit_test(test_beyond_allocatable_not_potential),
        cmocka_unit_test(test_victims_leave_spread_counts),
        cmocka_unit_test(test_random_fast_equals_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
