/* tests/unit/test_autoscale_ca.c - cluster-autoscaler compatibility
 * (SPEC 5.1, --policy cluster-autoscaler): each expander on an estate where
 * they disagree (hand-computed first choice), the random expander's seed,
 * the priority expander's ConfigMap; scale-down at the utilisation
 * threshold (exactly 0.5: candidate; above: not), the unneeded time
 * (exactly 10m: not yet; 10m1s: yes), each drainability blocker, the
 * safe-to-evict "true" override, custom controllers, the kube-system pod
 * timeout, safe-to-evict-local-volumes, expendable pods, the cooldown
 * after a scale-up, and bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "autoscale_fixture.h"

static berth_aplan_options ca(berth_expander x)
{
    berth_aplan_options o = {0};
    o.policy = BERTH_POLICY_CLUSTER_AUTOSCALER;
    o.expander = x;
    return o;
}

static void itype(buf *b, const char *name, const char *cpu, const char *mem, const char *price)
{
    add(b, "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: %s}\nspec:\n"
           "  capacity: {cpu: \"%s\", memory: %s}\n"
           "  offerings: [{zone: z1, capacityType: spot, price: %s}]\n", name, cpu, mem, price);
}

static void vng(buf *b, const char *name, const char *spec)
{
    add(b, "---\napiVersion: berth.io/v1\nkind: VirtualNodeGroup\nmetadata: {name: %s}\nspec: %s\n",
        name, spec);
}

/* Node groups for six pending pods of 1 cpu / 2Gi and one asking disk=ssd:
 *   small/s2 (2c 4Gi, maxNodes 2, 0.10): 2 nodes, 4 pods, waste 0,     0.05/pod
 *   big/b8   (8c 16Gi, 0.30):           1 node,  6 pods, waste 0.5,   0.05/pod
 *   ssd/m2   (2c 32Gi, 0.10):           4 nodes, 7 pods, waste 1.016, 0.057/pod
 *   cheap/c4 (4c 8Gi, 0.06):            2 nodes, 6 pods, waste 0.5,   0.02/pod
 * least-waste: small/s2; most-pods: ssd/m2; least-nodes: big/b8; price:
 * cheap/c4. */
static void expander_estate(buf *b, const char *priorities)
{
    b->n = 0;
    vng(b, "small", "{instanceTypes: [s2], maxNodes: 2}");
    vng(b, "big", "{instanceTypes: [b8]}");
    vng(b, "ssd", "{labels: {disk: ssd}, instanceTypes: [m2]}");
    vng(b, "cheap", "{instanceTypes: [c4]}");
    itype(b, "s2", "2", "4Gi", "0.10");
    itype(b, "b8", "8", "16Gi", "0.30");
    itype(b, "m2", "2", "32Gi", "0.10");
    itype(b, "c4", "4", "8Gi", "0.06");
    for (int i = 1; i <= 7; i++)
        add(b, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p%d, namespace: default}\n"
               "spec:\n%s  containers: [{name: c, resources: {requests: {cpu: \"1\", memory: "
               "2Gi}}}]\n", i, i == 7 ? "  nodeSelector: {disk: ssd}\n" : "");
    if (priorities)
        add(b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: "
               "cluster-autoscaler-priority-expander, namespace: kube-system}\n"
               "data:\n  priorities: |-\n%s", priorities);
}

/* "vng/type" of the first node group the plan expanded */
static void first_group(const run *r, char *out, size_t size)
{
    assert_true(r->p.nup > 0);
    snprintf(out, size, "%s/%s", r->m.vngs[r->p.up[0].vng].name, r->m.types[r->p.up[0].type].name);
}

static void test_expanders(void **st)
{
    (void)st;
    static buf b;
    static const struct {
        berth_expander x;
        const char *want;
        uint32_t nodes;
    } cases[] = {
        {BERTH_EXPANDER_LEAST_WASTE, "small/s2", 2},
        {BERTH_EXPANDER_MOST_PODS, "ssd/m2", 4},
        {BERTH_EXPANDER_LEAST_NODES, "big/b8", 1},
        {BERTH_EXPANDER_PRICE, "cheap/c4", 2},
    };
    expander_estate(&b, NULL);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run r;
        plan_opt(&r, &b, ca(cases[i].x));
        assert_int_equal(r.rc, 0);
        char g[200];
        first_group(&r, g, sizeof g);
        if (strcmp(g, cases[i].want) || r.p.up[0].count != cases[i].nodes)
            fail_msg("%s: expanded %s x%u, expected %s x%u", berth_expander_name(cases[i].x), g,
                     r.p.up[0].count, cases[i].want, cases[i].nodes);
        assert_int_equal(r.p.nunsched, 0); /* later rounds place the rest */
        assert_int_equal(r.p.ndown, 0);
        done(&r);
    }
}

static void test_priority_expander(void **st)
{
    (void)st;
    static buf b;
    /* the highest priority whose regex matches wins; unmatched groups drop */
    expander_estate(&b, "    10:\n      - .*\n    50:\n      - ^big/\n      - ^nothing$\n");
    run r;
    plan_opt(&r, &b, ca(BERTH_EXPANDER_PRIORITY));
    assert_int_equal(r.rc, 0);
    char g[200];
    first_group(&r, g, sizeof g);
    assert_string_equal(g, "big/b8");
    done(&r);
    expander_estate(&b, "    5:\n      - ^cheap/c4$\n");
    plan_opt(&r, &b, ca(BERTH_EXPANDER_PRIORITY));
    first_group(&r, g, sizeof g);
    assert_string_equal(g, "cheap/c4");
    done(&r);
    /* no ConfigMap: a usage error */
    expander_estate(&b, NULL);
    plan_opt(&r, &b, ca(BERTH_EXPANDER_PRIORITY));
    assert_int_equal(r.rc, BERTH_EINVAL);
    assert_non_null(strstr(r.e.msg, "cluster-autoscaler-priority-expander"));
    done(&r);
    /* bad documents */
    static const struct {
        const char *prio, *want;
    } bad[] = {
        {"    10:\n      - \"(\"\n", "invalid regular expression"},
        {"    high:\n      - .*\n", "not an integer"},
        {"    10: big\n", "needs a list"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        expander_estate(&b, bad[i].prio);
        plan_opt(&r, &b, ca(BERTH_EXPANDER_PRIORITY));
        if (r.rc != BERTH_EINVAL || !strstr(r.e.msg, bad[i].want) ||
            !strstr(r.e.msg, "data.priorities"))
            fail_msg("case %zu: rc %d '%s', want '%s'", i, r.rc, r.e.msg, bad[i].want);
        done(&r);
    }
}

static void test_random_expander(void **st)
{
    (void)st;
    static buf b;
    expander_estate(&b, NULL);
    char seen[4][200];
    int nseen = 0;
    for (uint64_t seed = 0; seed < 24; seed++) {
        berth_aplan_options o = ca(BERTH_EXPANDER_RANDOM);
        o.seed = seed;
        run r, r2;
        plan_opt(&r, &b, o);
        plan_opt(&r2, &b, o);
        assert_int_equal(r.rc, 0);
        char g[200], g2[200];
        first_group(&r, g, sizeof g);
        first_group(&r2, g2, sizeof g2);
        assert_string_equal(g, g2); /* same seed, same choice */
        assert_true(!strcmp(g, "small/s2") || !strcmp(g, "big/b8") || !strcmp(g, "ssd/m2") ||
                    !strcmp(g, "cheap/c4"));
        int known = 0;
        for (int i = 0; i < nseen; i++)
            known |= !strcmp(seen[i], g);
        if (!known && nseen < 4)
            snprintf(seen[nseen++], sizeof seen[0], "%s", g);
        done(&r);
        done(&r2);
    }
    assert_true(nseen >= 3);
}

/* Scale-down estate: "cand" (4 cpu) runs pod x (cpu, 1Gi) and what extra
 * adds; "other" (8 cpu, 5 used: 0.625) has room. meta / spec go under x's
 * metadata / spec; owned: x has a ReplicaSet controller. */
static void down_case(buf *b, const char *cpu, const char *since, int owned, const char *ns,
                      const char *meta, const char *spec, const char *extra)
{
    b->n = 0;
    vng(b, "general", "{}");
    add(b, "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: cand\n%s%s%s"
           "status: {allocatable: {cpu: \"4\", memory: 16Gi, pods: \"30\"}}\n",
        since ? "  annotations: {berth.io/unneeded-since: \"" : "", since ? since : "",
        since ? "\"}\n" : "");
    add(b, "---\napiVersion: v1\nkind: Node\nmetadata: {name: other}\n"
           "status: {allocatable: {cpu: \"8\", memory: 16Gi, pods: \"30\"}}\n");
    add(b, "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: heavy\n  namespace: default\n"
           "  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: h, uid: h1, "
           "controller: true}]\nspec:\n  nodeName: other\n"
           "  containers: [{name: c, resources: {requests: {cpu: \"5\", memory: 1Gi}}}]\n");
    add(b, "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n  namespace: %s\n%s%s"
           "spec:\n  nodeName: cand\n%s"
           "  containers: [{name: c, resources: {requests: {cpu: \"%s\", memory: 1Gi}}}]\n",
        ns ? ns : "default",
        owned ? "  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: x, uid: x1, "
                "controller: true}]\n" : "",
        meta ? meta : "", spec ? spec : "", cpu);
    if (extra)
        add(b, "%s", extra);
}

#define LONG_AGO "2024-05-01T11:00:00Z"

static void test_utilisation_threshold(void **st)
{
    (void)st;
    static buf b;
    run r;
    down_case(&b, "2", LONG_AGO, 1, NULL, NULL, NULL, NULL); /* 2/4 = 0.5 exactly */
    plan_opt(&r, &b, ca(0));
    assert_int_equal(r.rc, 0);
    const berth_ascaledown *d = down_of(&r, "cand");
    assert_non_null(d);
    assert_int_equal(d->nmoves, 1);
    assert_string_equal(node_name(&r, d->moves[0].node), "other");
    assert_non_null(strstr(blocked_of(&r, "other"), "above the scale-down threshold"));
    done(&r);
    down_case(&b, "2001m", LONG_AGO, 1, NULL, NULL, NULL, NULL);
    plan_opt(&r, &b, ca(0));
    assert_null(down_of(&r, "cand"));
    assert_non_null(strstr(blocked_of(&r, "cand"), "utilisation 0.500 is above"));
    done(&r);
}

static void test_unneeded_time(void **st)
{
    (void)st;
    static buf b;
    run r;
    down_case(&b, "1", "2024-05-01T11:50:00Z", 1, NULL, NULL, NULL, NULL); /* exactly 10m */
    plan_opt(&r, &b, ca(0));
    assert_int_equal(r.rc, 0);
    assert_null(down_of(&r, "cand"));
    assert_non_null(strstr(blocked_of(&r, "cand"), "unneeded for 10m0s"));
    done(&r);
    down_case(&b, "1", "2024-05-01T11:49:59Z", 1, NULL, NULL, NULL, NULL); /* 10m1s */
    plan_opt(&r, &b, ca(0));
    assert_non_null(down_of(&r, "cand"));
    done(&r);
    down_case(&b, "1", NULL, 1, NULL, NULL, NULL, NULL); /* unneeded from now on */
    plan_opt(&r, &b, ca(0));
    assert_null(down_of(&r, "cand"));
    assert_non_null(strstr(blocked_of(&r, "cand"), "unneeded for 0s"));
    done(&r);
    berth_aplan_options o = ca(0);
    o.unneeded_time = 60;
    o.has_unneeded_time = 1;
    down_case(&b, "1", "2024-05-01T11:58:59Z", 1, NULL, NULL, NULL, NULL);
    plan_opt(&r, &b, o);
    assert_non_null(down_of(&r, "cand"));
    done(&r);
    /* a malformed annotation is a located load error */
    down_case(&b, "1", "soon", 1, NULL, NULL, NULL, NULL);
    plan_opt(&r, &b, ca(0));
    assert_int_equal(r.rc, BERTH_EINVAL);
    assert_non_null(strstr(r.e.msg, "berth.io/unneeded-since"));
    done(&r);
}

static void test_drain_blockers(void **st)
{
    (void)st;
    static buf b;
    static const char pdb_max1[] =
        "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: sys, namespace: "
        "kube-system}\nspec: {maxUnavailable: 1, selector: {matchLabels: {app: x}}}\n";
    static const char pdb_min1[] =
        "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: guard, "
        "namespace: default}\nspec: {minAvailable: 1, selector: {matchLabels: {app: x}}}\n";
    static const struct {
        int owned;
        const char *ns, *meta, *spec, *extra;
        const char *blocked; /* NULL: removed */
    } cases[] = {
        {0, NULL, NULL, NULL, NULL, "is not replicated"},
        {1, "kube-system", NULL, NULL, NULL, "kube-system pod without a PodDisruptionBudget"},
        {1, "kube-system", "  labels: {app: x}\n", NULL, pdb_max1, NULL},
        {1, NULL, "  annotations: {cluster-autoscaler.kubernetes.io/safe-to-evict: \"false\"}\n",
         NULL, NULL, "safe-to-evict: \"false\""},
        {1, NULL, NULL, "  volumes: [{name: v, emptyDir: {}}]\n", NULL, "uses local storage"},
        {1, NULL, NULL, "  volumes: [{name: v, hostPath: {path: /data}}]\n", NULL,
         "uses local storage"},
        {1, NULL, NULL, "  volumes: [{name: v, emptyDir: {medium: Memory}}]\n", NULL, NULL},
        {1, NULL, NULL, "  volumes: [{name: v, configMap: {name: c}}]\n", NULL, NULL},
        {1, NULL, "  labels: {app: x}\n", NULL, pdb_min1,
         "PodDisruptionBudget default/guard allows 0 more"},
        /* safe-to-evict "true" overrides every blocker above */
        {0, "kube-system",
         "  labels: {app: x}\n  annotations: {cluster-autoscaler.kubernetes.io/safe-to-evict: "
         "\"true\"}\n", "  volumes: [{name: v, emptyDir: {}}]\n", pdb_min1, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        down_case(&b, "1", LONG_AGO, cases[i].owned, cases[i].ns, cases[i].meta, cases[i].spec,
                  cases[i].extra);
        run r;
        plan_opt(&r, &b, ca(0));
        assert_int_equal(r.rc, 0);
        const char *why = blocked_of(&r, "cand");
        int gone = down_of(&r, "cand") != NULL;
        if (cases[i].blocked ? gone || !why || !strstr(why, cases[i].blocked) : !gone)
            fail_msg("case %zu: removed %d, kept because '%s', want %s", i, gone,
                     why ? why : "-", cases[i].blocked ? cases[i].blocked : "removed");
        done(&r);
    }
}

/* Upstream's drainability rules in detail (simulator/drainability/rules):
 * replicated with --skip-nodes-with-custom-controller-pods, the kube-system
 * pod timeout measured from creationTimestamp to the plan's moment, and the
 * safe-to-evict-local-volumes annotation. */
static void test_drain_rules_upstream(void **st)
{
    (void)st;
    static buf b;
    static char meta[600];
    static const char *const kinds[] = {"ReplicationController", "ReplicaSet", "Job",
                                        "StatefulSet", "Rollout", "SparkApplication"};
    for (int any = 0; any <= 1; any++)
        for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
            snprintf(meta, sizeof meta,
                     "  uid: 3f6a2b1c-0000-4000-8000-00000000000%zu\n"
                     "  creationTimestamp: \"2024-05-01T08:00:00Z\"\n"
                     "  ownerReferences:\n  - {apiVersion: x/v1, kind: %s, name: o, uid: u%zu, "
                     "controller: true, blockOwnerDeletion: true}\n",
                     i, kinds[i], i);
            down_case(&b, "1", LONG_AGO, 0, NULL, meta, NULL, NULL);
            berth_aplan_options o = ca(0);
            o.custom_controller_pods_ok = any;
            run r;
            plan_opt(&r, &b, o);
            assert_int_equal(r.rc, 0);
            int custom = i >= 4, gone = down_of(&r, "cand") != NULL;
            if (gone != (any || !custom))
                fail_msg("%s (any controller %d): removed %d (%s)", kinds[i], any, gone,
                         blocked_of(&r, "cand") ? blocked_of(&r, "cand") : "-");
            if (!gone)
                assert_non_null(strstr(blocked_of(&r, "cand"), "a custom controller"));
            done(&r);
        }
    /* an owner reference that is not the controller does not replicate */
    down_case(&b, "1", LONG_AGO, 0, NULL,
              "  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: o, uid: u}]\n",
              NULL, NULL);
    run r;
    plan_opt(&r, &b, ca(0));
    assert_non_null(strstr(blocked_of(&r, "cand"), "is not replicated"));
    done(&r);

    /* kube-system without a PDB: blocks while younger than the timeout
     * (default 1h) at the plan's moment (AT = 12:00:00) */
    static const struct {
        const char *created;    /* NULL: no creationTimestamp */
        int64_t timeout;        /* 0: default */
        int gone;
        const char *why;
    } sys[] = {
        {"2024-05-01T11:00:01Z", 0, 0, "created 59m59s ago (blocks until "
                                       "--blocking-system-pod-distruption-timeout 1h0m0s)"},
        {"2024-05-01T11:00:00Z", 0, 1, NULL},   /* exactly 1h */
        {"2024-04-01T00:00:00Z", 0, 1, NULL},
        {NULL, 0, 0, "created 0s ago"},          /* counted as created now */
        {"2024-05-01T11:50:00Z", 600, 1, NULL},  /* 10m, timeout 10m */
        {"2024-05-01T11:50:01Z", 600, 0, "--blocking-system-pod-distruption-timeout 10m0s"},
        {"2024-05-01T13:00:00Z", 0, 0, "created 0s ago"}, /* in the future */
    };
    for (size_t i = 0; i < sizeof sys / sizeof sys[0]; i++) {
        if (sys[i].created)
            snprintf(meta, sizeof meta, "  creationTimestamp: \"%s\"\n", sys[i].created);
        else
            meta[0] = 0;
        down_case(&b, "1", LONG_AGO, 1, "kube-system", meta, NULL, NULL);
        berth_aplan_options o = ca(0);
        if (sys[i].timeout) {
            o.system_pod_timeout = sys[i].timeout;
            o.has_system_pod_timeout = 1;
        }
        plan_opt(&r, &b, o);
        assert_int_equal(r.rc, 0);
        const char *why = blocked_of(&r, "cand");
        int gone = down_of(&r, "cand") != NULL;
        if (gone != sys[i].gone || (sys[i].why && (!why || !strstr(why, sys[i].why))))
            fail_msg("kube-system case %zu: removed %d, kept because '%s'", i, gone,
                     why ? why : "-");
        done(&r);
    }
    /* the timeout does not lift the other rules: an old kube-system pod
     * with local storage still blocks */
    down_case(&b, "1", LONG_AGO, 1, "kube-system", "  creationTimestamp: \"2024-04-01T00:00:00Z\"\n",
              "  volumes: [{name: v, hostPath: {path: /x}}]\n", NULL);
    plan_opt(&r, &b, ca(0));
    assert_non_null(strstr(blocked_of(&r, "cand"), "uses local storage (volume v:"));
    done(&r);
    berth_aplan_options neg = ca(0);
    neg.system_pod_timeout = -1;
    neg.has_system_pod_timeout = 1;
    down_case(&b, "1", LONG_AGO, 1, NULL, NULL, NULL, NULL);
    plan_opt(&r, &b, neg);
    assert_int_equal(r.rc, BERTH_EINVAL);
    done(&r);

    /* safe-to-evict-local-volumes: comma-separated exact names */
    static const char vols[] =
        "  volumes:\n  - {name: cache, emptyDir: {sizeLimit: 1Gi}}\n"
        "  - {name: logs, hostPath: {path: /var/log, type: Directory}}\n"
        "  - {name: shm, emptyDir: {medium: Memory}}\n"
        "  - {name: conf, configMap: {name: c}}\n";
    static const struct {
        const char *ann;        /* NULL: no annotation */
        const char *blocks;     /* the volume named in the reason; NULL: removed */
    } lv[] = {
        {NULL, "cache"},
        {"cache", "logs"},
        {"logs", "cache"},
        {"cache,logs", NULL},
        {"logs,cache,other", NULL},
        {"cache, logs", "logs"},  /* " logs" names no volume */
        {"", "cache"},
        {"cache,,logs", NULL},
    };
    for (size_t i = 0; i < sizeof lv / sizeof lv[0]; i++) {
        if (lv[i].ann)
            snprintf(meta, sizeof meta, "  annotations:\n    "
                     "cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes: \"%s\"\n",
                     lv[i].ann);
        else
            meta[0] = 0;
        down_case(&b, "1", LONG_AGO, 1, NULL, meta, vols, NULL);
        plan_opt(&r, &b, ca(0));
        assert_int_equal(r.rc, 0);
        const char *why = blocked_of(&r, "cand");
        int gone = down_of(&r, "cand") != NULL;
        char want[64] = "";
        if (lv[i].blocks)
            snprintf(want, sizeof want, "(volume %s:", lv[i].blocks);
        if (gone != !lv[i].blocks || (lv[i].blocks && (!why || !strstr(why, want))))
            fail_msg("annotation '%s': removed %d, kept because '%s'",
                     lv[i].ann ? lv[i].ann : "(none)", gone, why ? why : "-");
        done(&r);
    }
    /* a local volume without a name is a located load error */
    down_case(&b, "1", LONG_AGO, 1, NULL, NULL, "  volumes: [{emptyDir: {}}]\n", NULL);
    plan_opt(&r, &b, ca(0));
    assert_int_equal(r.rc, BERTH_EINVAL);
    assert_non_null(strstr(r.e.msg, "spec.volumes[0].name"));
    done(&r);
}

static void test_expendable(void **st)
{
    (void)st;
    static buf b;
    static const char spare[] =
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: spare, namespace: default}\n"
        "spec:\n  nodeName: cand\n  priority: %d\n"
        "  containers: [{name: c, resources: {requests: {cpu: 100m}}}]\n";
    char extra[400];
    snprintf(extra, sizeof extra, spare, -11);
    down_case(&b, "1", LONG_AGO, 1, NULL, NULL, NULL, extra);
    run r;
    plan_opt(&r, &b, ca(0));
    assert_int_equal(r.rc, 0);
    const berth_ascaledown *d = down_of(&r, "cand");
    assert_non_null(d); /* the unreplicated expendable pod does not block */
    assert_int_equal(d->nmoves, 1);
    assert_string_equal(r.m.kube.pods[d->moves[0].pod].name, "x");
    assert_int_equal(d->nevicted, 1);
    assert_string_equal(r.m.kube.pods[d->evicted[0]].name, "spare");
    done(&r);
    snprintf(extra, sizeof extra, spare, -10); /* not expendable: not replicated */
    down_case(&b, "1", LONG_AGO, 1, NULL, NULL, NULL, extra);
    plan_opt(&r, &b, ca(0));
    assert_null(down_of(&r, "cand"));
    assert_non_null(strstr(blocked_of(&r, "cand"), "spare is not replicated"));
    done(&r);
    /* a pending expendable pod triggers no scale-up */
    b.n = 0;
    vng(&b, "general", "{instanceTypes: [b8]}");
    itype(&b, "b8", "8", "16Gi", "0.30");
    add(&b, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: filler, namespace: default}\n"
            "spec:\n  priority: -100\n  containers: [{name: c, resources: {requests: {cpu: "
            "\"1\"}}}]\n");
    plan_opt(&r, &b, ca(0));
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.p.nup, 0);
    assert_non_null(strstr(unsched_of(&r, "filler"), "expendable"));
    done(&r);
}

static void test_cooldown_and_bad_options(void **st)
{
    (void)st;
    static buf b;
    /* a pending pod no node holds: scale-up, so no scale-down this pass */
    down_case(&b, "1", LONG_AGO, 1, NULL, NULL, NULL,
              "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: b8}\nspec:\n"
              "  capacity: {cpu: \"8\", memory: 16Gi}\n"
              "  offerings: [{zone: z1, capacityType: on-demand, price: 0.3}]\n"
              "---\napiVersion: v1\nkind: Pod\nmetadata: {name: big, namespace: default}\nspec:\n"
              "  containers: [{name: c, resources: {requests: {cpu: \"6\"}}}]\n");
    run r;
    plan_opt(&r, &b, ca(0));
    assert_int_equal(r.rc, 0);
    assert_int_equal(r.p.nup, 1);
    assert_int_equal(r.p.up[0].capacity_type, BERTH_CT_ON_DEMAND);
    assert_null(down_of(&r, "cand"));
    assert_non_null(strstr(blocked_of(&r, "cand"), "scale-down waits"));
    done(&r);
    /* replacements are Ocean's */
    static const char *const names[] = {"cand"};
    berth_aplan_options o = ca(0);
    o.interrupt = names;
    o.ninterrupt = 1;
    down_case(&b, "1", LONG_AGO, 1, NULL, NULL, NULL, NULL);
    plan_opt(&r, &b, o);
    assert_int_equal(r.rc, BERTH_EINVAL);
    done(&r);
    assert_int_equal(berth_expander_parse("least-waste"), BERTH_EXPANDER_LEAST_WASTE);
    assert_int_equal(berth_expander_parse("priority"), BERTH_EXPANDER_PRIORITY);
    assert_int_equal(berth_expander_parse("biggest"), -1);
    assert_string_equal(berth_expander_name(BERTH_EXPANDER_MOST_PODS), "most-pods");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expanders),
        cmocka_unit_test(test_priority_expander),
        cmocka_unit_test(test_random_expander),
        cmocka_unit_test(test_utilisation_threshold),
        cmocka_unit_test(test_unneeded_time),
        cmocka_unit_test(test_drain_blockers),
        cmocka_unit_test(test_drain_rules_upstream),
        cmocka_unit_test(test_expendable),
        cmocka_unit_test(test_cooldown_and_bad_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
