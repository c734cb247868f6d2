/* tests/unit/test_kube_input.c - real kubectl output as input (SPEC 6.1):
 * typed lists (items without kind / apiVersion take the list's), JSON
 * streams with `kubectl cluster-info dump` log sections and the lines and
 * columns of every document, kinds a loader does not read (skipped and
 * counted once per kind over every file, errors with strict) in the kube,
 * fleet, disrupt and autoscale loaders, and the `warnings` they report. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "berth/autoscale.h"
#include "berth/disrupt.h"
#include "berth/fleet.h"
#include "berth/kube.h"
#include "berth/report.h"

static int kload(berth_kcluster *k, const char *name, const char *text, int strict, berth_error *e)
{
    berth_error_clear(e);
    berth_source src;
    int rc = berth_doc_load_buffer(&k->arena, name, text, strlen(text), &src, e);
    return rc ? rc : berth_kube_load(k, &src, strict, e);
}

static void expect_msg(int rc, const berth_error *e, const char *frag1, const char *frag2)
{
    if (rc != BERTH_EINVAL)
        fail_msg("expected EINVAL, got %d (%s)", rc, e->msg);
    if (frag1 && !strstr(e->msg, frag1))
        fail_msg("message '%s' lacks '%s'", e->msg, frag1);
    if (frag2 && !strstr(e->msg, frag2))
        fail_msg("message '%s' lacks '%s'", e->msg, frag2);
}

#define NODE_STATUS "status: {allocatable: {cpu: \"4\", memory: 8Gi, pods: \"110\"}}"

/* NodeList, PodList and PodDisruptionBudgetList as the API server returns
 * them: items with neither kind nor apiVersion; a mixed item keeps its own. */
static void test_typed_lists(void **st)
{
    (void)st;
    static const char y[] =
        "kind: NodeList\n"
        "apiVersion: v1\n"
        "metadata: {resourceVersion: \"4711\"}\n"
        "items:\n"
        "- metadata: {name: n1, uid: 5b1c0f0e-0000-4000-8000-000000000001}\n"
        "  " NODE_STATUS "\n"
        "- apiVersion: v1\n"
        "  kind: Node\n"
        "  metadata: {name: n2}\n"
        "  " NODE_STATUS "\n"
        "- apiVersion: v1\n"
        "  kind: Pod\n"
        "  metadata: {name: mixed}\n"
        "  spec: {containers: []}\n"
        "---\n"
        "kind: PodList\n"
        "apiVersion: v1\n"
        "metadata: {resourceVersion: \"4712\"}\n"
        "items:\n"
        "- metadata:\n"
        "    name: web-1\n"
        "    namespace: shop\n"
        "    ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web, uid: "
        "e5f6a7b8-0000-4000-8000-000000000001, controller: true, blockOwnerDeletion: true}]\n"
        "    managedFields: [{manager: kube-controller-manager, operation: Update, apiVersion: v1}]\n"
        "  spec:\n"
        "    containers: [{name: app, image: nginx, resources: {requests: {cpu: 250m}}}]\n"
        "  status: {phase: Pending, qosClass: Burstable}\n"
        "---\n"
        "kind: PodDisruptionBudgetList\n"
        "apiVersion: policy/v1\n"
        "items:\n"
        "- metadata: {name: web, namespace: shop}\n"
        "  spec: {minAvailable: 1, selector: {matchLabels: {app: web}}}\n"
        "  status: {disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1, expectedPods: 1}\n";
    for (int strict = 0; strict < 2; strict++) {
        berth_kcluster k;
        berth_kube_init(&k);
        berth_error e;
        int rc = kload(&k, "t.yaml", y, strict, &e);
        if (rc)
            fail_msg("strict %d: %s", strict, e.msg);
        assert_int_equal(k.nnodes, 2);
        assert_string_equal(k.nodes[0].name, "n1");
        assert_int_equal(k.nodes[0].alloc[BERTH_KRES_CPU], 4000);
        assert_int_equal(k.npods, 2);
        assert_string_equal(k.pods[0].name, "mixed");
        assert_string_equal(k.pods[1].name, "web-1");
        assert_string_equal(k.pods[1].ns, "shop");
        assert_int_equal(k.pods[1].req[BERTH_KRES_CPU], 250);
        assert_int_equal(k.npdbs, 1);
        assert_int_equal(k.skipped.n, 0);
        berth_kube_free(&k);
    }
    /* the item's own apiVersion wins: a typed list of v1 with a wrong one */
    berth_kcluster k;
    berth_kube_init(&k);
    berth_error e;
    int rc = kload(&k, "t.yaml",
                   "kind: NodeList\napiVersion: v1\nitems:\n- apiVersion: v2\n  metadata: {name: a}\n",
                   0, &e);
    expect_msg(rc, &e, "t.yaml:4:15: items[0].apiVersion", "needs apiVersion v1, got 'v2'");
    berth_kube_free(&k);
    /* a bad field of a kind-less item is located at the field */
    berth_kube_init(&k);
    rc = kload(&k, "t.yaml",
               "kind: NodeList\napiVersion: v1\nitems:\n- metadata: {name: a}\n"
               "  status: {allocatable: {cpu: 1.2.3}}\n",
               0, &e);
    expect_msg(rc, &e, "t.yaml:5:31: items[0].status.allocatable.cpu", "invalid quantity");
    berth_kube_free(&k);
}

/* `kind: List` items keep their own kind: one without stays an error. */
static void test_plain_list_needs_kinds(void **st)
{
    (void)st;
    berth_kcluster k;
    berth_kube_init(&k);
    berth_error e;
    int rc = kload(&k, "t.yaml",
                   "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n"
                   "  metadata: {name: a}\n- apiVersion: v1\n  metadata: {name: b}\n",
                   0, &e);
    expect_msg(rc, &e, "t.yaml:7:3: items[1].kind", "required field is missing");
    berth_kube_free(&k);
}

/* kubectl cluster-info dump: typed lists back to back as JSON, container
 * log sections (any text, braces and quotes included; the END marker may
 * follow the last log line without a newline) in between. */
static const char dump[] =
    "{\n"                                                         /* 1 */
    "    \"kind\": \"NodeList\",\n"                               /* 2 */
    "    \"apiVersion\": \"v1\",\n"                               /* 3 */
    "    \"metadata\": {\"resourceVersion\": \"1\"},\n"           /* 4 */
    "    \"items\": [\n"                                          /* 5 */
    "        {\"metadata\": {\"name\": \"n1\"},\n"                /* 6 */
    "         \"status\": {\"allocatable\": {\"cpu\": \"4\", \"memory\": \"8Gi\"}}}\n" /* 7 */
    "    ]\n"                                                     /* 8 */
    "}\n"                                                         /* 9 */
    "{\n"                                                         /* 10 */
    "    \"kind\": \"EventList\",\n"                              /* 11 */
    "    \"apiVersion\": \"v1\",\n"                               /* 12 */
    "    \"items\": [{\"metadata\": {\"name\": \"e1\"}, \"message\": \"a \\\"}\\\" b\"}]\n" /* 13 */
    "}\n"                                                         /* 14 */
    "{\n"                                                         /* 15 */
    "    \"kind\": \"PodList\",\n"                                /* 16 */
    "    \"apiVersion\": \"v1\",\n"                               /* 17 */
    "    \"items\": [\n"                                          /* 18 */
    "        {\"metadata\": {\"name\": \"p1\", \"namespace\": \"ns\"},\n" /* 19 */
    "         \"spec\": {\"containers\": [{\"name\": \"c\", \"resources\": "
    "{\"requests\": {\"cpu\": \"CPU\"}}}]}}\n"                    /* 20 */
    "    ]\n"                                                     /* 21 */
    "}\n"                                                         /* 22 */
    "==== START logs for container c of pod ns/p1 ====\n"        /* 23 */
    "{\"level\": \"info\", \"msg\": \"}}} [[ \\\" unbalanced\n"   /* 24 */
    "==== END logs for container other of pod ns/p2 ====\n"      /* 25 */
    "last line without newline==== END logs for container c of pod ns/p1 ====\n" /* 26 */
    "==== START logs for container d of pod ns/p1 ====\n"        /* 27 */
    "==== END logs for container d of pod ns/p1 ====\n"          /* 28 */
    "{\"kind\": \"ServiceList\", \"apiVersion\": \"v1\", \"items\": []}\n"; /* 29 */

static const char *dump_with(char *out, size_t size, const char *cpu)
{
    const char *at = strstr(dump, "\"CPU\"");
    assert_non_null(at);
    int w = snprintf(out, size, "%.*s\"%s\"%s", (int)(at - dump), dump, cpu, at + 5);
    assert_true(w > 0 && (size_t)w < size);
    return out;
}

static void test_json_stream(void **st)
{
    (void)st;
    char text[4096];
    berth_arena a;
    berth_arena_init(&a, 0);
    berth_error e;
    berth_error_clear(&e);
    berth_source src;
    dump_with(text, sizeof text, "500m");
    if (berth_doc_load_buffer(&a, "dump.json", text, strlen(text), &src, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(src.ndocs, 4);
    assert_int_equal(src.docs[1]->line, 10);
    assert_int_equal(src.docs[2]->line, 15);
    assert_int_equal(src.docs[3]->line, 29);
    assert_int_equal(src.docs[3]->col, 1);
    const berth_node *kind = berth_node_get(src.docs[2], "kind");
    assert_string_equal(kind->str, "PodList");
    assert_int_equal(kind->line, 16);
    assert_int_equal(kind->col, 13);
    const berth_node *msg = berth_node_get(
        berth_node_get(src.docs[1], "items")->items[0], "message");
    assert_string_equal(msg->str, "a \"}\" b");
    berth_arena_free(&a);

    berth_kcluster k;
    berth_kube_init(&k);
    int rc = kload(&k, "dump.json", text, 0, &e);
    if (rc)
        fail_msg("%s", e.msg);
    assert_int_equal(k.nnodes, 1);
    assert_int_equal(k.npods, 1);
    assert_int_equal(k.pods[0].req[BERTH_KRES_CPU], 500);
    assert_int_equal(k.skipped.n, 1);
    assert_string_equal(k.skipped.items[0].kind, "Event");
    assert_int_equal(k.skipped.items[0].count, 1);
    berth_kube_free(&k);

    /* a bad field in the third document: its own line and column */
    berth_kube_init(&k);
    rc = kload(&k, "dump.json", dump_with(text, sizeof text, "1.2.3"), 0, &e);
    expect_msg(rc, &e, "dump.json:20:82: items[0].spec.containers[0].resources.requests.cpu",
               "invalid quantity '1.2.3'");
    berth_kube_free(&k);
    /* with strict, the Event is the error, at its item */
    berth_kube_init(&k);
    rc = kload(&k, "dump.json", dump_with(text, sizeof text, "500m"), 1, &e);
    expect_msg(rc, &e, "dump.json:13:15: items[0].kind: unknown kind 'Event'", "Node, Pod");
    berth_kube_free(&k);
}

static int parse(const char *text, berth_source *src, berth_arena *a, berth_error *e)
{
    berth_error_clear(e);
    return berth_doc_load_buffer(a, "s.json", text, strlen(text), src, e);
}

/* Syntax errors keep their lines; text that is no JSON stream goes to the
 * YAML parser as before; a log section needs its END line. */
static void test_json_stream_edges(void **st)
{
    (void)st;
    berth_arena a;
    berth_arena_init(&a, 0);
    berth_error e;
    berth_source src;
    /* a syntax error in the second value */
    int rc = parse("{\"a\": 1}\n\n  {\"b\": [1, 2}\n", &src, &a, &e);
    expect_msg(rc, &e, "s.json:3:", NULL);
    if (strstr(e.msg, "s.json:1:"))
        fail_msg("%s", e.msg);
    /* an unterminated last value */
    rc = parse("{\"a\": 1}\n{\"b\": [1, 2]\n", &src, &a, &e);
    expect_msg(rc, &e, "s.json:3:", NULL);
    /* a log section without END */
    rc = parse("{\"a\": 1}\n==== START logs for container c of pod n/p ====\nx\n", &src, &a, &e);
    expect_msg(rc, &e, "s.json:2:1: container log section without", NULL);
    /* YAML flow mappings separated by --- : still YAML */
    rc = parse("{a: 1}\n---\n{b: 2}\n", &src, &a, &e);
    if (rc)
        fail_msg("%s", e.msg);
    assert_int_equal(src.ndocs, 2);
    assert_int_equal(src.docs[1]->line, 3);
    /* comment lines and a value that starts mid-line */
    rc = parse("# dump\n{\"a\": 1}  {\"b\": {\"c\": \"}\"}}\n", &src, &a, &e);
    if (rc)
        fail_msg("%s", e.msg);
    assert_int_equal(src.ndocs, 2);
    assert_int_equal(src.docs[1]->line, 2);
    assert_int_equal(src.docs[1]->col, 11);
    const berth_node *b = berth_node_get(src.docs[1], "b");
    assert_int_equal(b->col, 17);
    assert_string_equal(berth_node_get(b, "c")->str, "}");
    /* CRLF line ends */
    rc = parse("{\"a\": 1}\r\n==== START logs for container c of pod n/p ====\r\nx\r\n"
               "==== END logs for container c of pod n/p ====\r\n{\"b\": 2}\r\n",
               &src, &a, &e);
    if (rc)
        fail_msg("%s", e.msg);
    assert_int_equal(src.ndocs, 2);
    assert_int_equal(src.docs[1]->line, 5);
    berth_arena_free(&a);
}

/* Kinds kube input does not read: counted per kind over every file, in
 * order of first appearance, CronJob with its own note; strict makes the
 * first one a located error; a known kind with a bad field still fails. */
static void test_skip_counts(void **st)
{
    (void)st;
    static const char f1[] =
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {x: \"1\"}\n---\n"
        "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ntype: Opaque\n---\n"
        "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: nightly}\n"
        "spec: {schedule: \"0 0 * * *\"}\n---\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n";
    static const char f2[] =
        "kind: ConfigMapList\napiVersion: v1\nitems:\n- metadata: {name: c}\n---\n"
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\n---\n"
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n" NODE_STATUS "\n";
    berth_kcluster k;
    berth_kube_init(&k);
    berth_error e;
    if (kload(&k, "f1.yaml", f1, 0, &e) || kload(&k, "f2.yaml", f2, 0, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(k.nnodes, 1);
    assert_int_equal(k.skipped.n, 4);
    assert_int_equal(berth_skips_total(&k.skipped), 6);
    static const char *const want[] = {
        "skipped 3 ConfigMap", "skipped 1 Secret",
        "skipped 1 CronJob (not expanded: berth places what runs now)", "skipped 1 NodePool"};
    char line[200];
    for (uint32_t i = 0; i < 4; i++) {
        berth_skip_text(&k.skipped.items[i], line, sizeof line);
        assert_string_equal(line, want[i]);
    }
    json_t *j = berth_report_warnings_json(&k.skipped);
    assert_non_null(j);
    assert_int_equal(json_array_size(j), 4);
    for (size_t i = 0; i < 4; i++)
        assert_string_equal(json_string_value(json_array_get(j, i)), want[i]);
    json_decref(j);
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    assert_non_null(mem);
    assert_int_equal(berth_report_warnings_text(mem, &k.skipped), 0);
    fclose(mem);
    assert_string_equal(text, "berth: skipped 3 ConfigMap\nberth: skipped 1 Secret\n"
                              "berth: skipped 1 CronJob (not expanded: berth places what runs "
                              "now)\nberth: skipped 1 NodePool\n");
    free(text);
    berth_kube_free(&k);

    /* strict: the first skipped kind is the error, located at its kind */
    berth_kube_init(&k);
    int rc = kload(&k, "f1.yaml", f1, 1, &e);
    expect_msg(rc, &e, "f1.yaml:2:7: kind: unknown kind 'ConfigMap'", "kube input has Node");
    berth_kube_free(&k);
    berth_kube_init(&k);
    rc = kload(&k, "f2.yaml", f2, 1, &e);
    expect_msg(rc, &e, "f2.yaml:4:3: items[0].kind: unknown kind 'ConfigMap'", NULL);
    berth_kube_free(&k);
    berth_kube_init(&k);
    rc = kload(&k, "c.yaml", "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: n}\n", 1, &e);
    expect_msg(rc, &e, "unknown kind 'CronJob' (not expanded: berth places what runs now;", NULL);
    berth_kube_free(&k);
    /* a known kind with a bad field is an error in both modes */
    for (int strict = 0; strict < 2; strict++) {
        berth_kube_init(&k);
        rc = kload(&k, "b.yaml",
                   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n"
                   "apiVersion: v1\nkind: Node\nmetadata: {name: n}\n"
                   "spec: {taints: [{key: k, effect: Sometimes}]}\n",
                   strict, &e);
        expect_msg(rc, &e, strict ? "b.yaml:2:7: kind: unknown kind 'ConfigMap'"
                                  : "b.yaml:8:34: spec.taints[0].effect",
                   NULL);
        berth_kube_free(&k);
    }
}

/* Fleet: a typed MemberClusterList, a ClusterResourcePlacementList, and a
 * ConfigMap skipped (an error with strict). */
static void test_fleet(void **st)
{
    (void)st;
    static const char y[] =
        "kind: MemberClusterList\napiVersion: cluster.kubernetes-fleet.io/v1beta1\nitems:\n"
        "- metadata: {name: east, labels: {region: east}}\n"
        "- metadata: {name: west, labels: {region: west}}\n---\n"
        "kind: ClusterResourcePlacementList\napiVersion: placement.kubernetes-fleet.io/v1beta1\n"
        "items:\n- metadata: {name: app}\n"
        "  spec: {resourceSelectors: [{group: \"\", version: v1, kind: Namespace, name: app}],\n"
        "         policy: {placementType: PickAll}}\n---\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app-config, namespace: app}\n";
    for (int strict = 0; strict < 2; strict++) {
        berth_fleet f;
        berth_fleet_init(&f);
        berth_error e;
        berth_error_clear(&e);
        berth_source src;
        int rc = berth_doc_load_buffer(&f.arena, "fl.yaml", y, strlen(y), &src, &e);
        if (!rc)
            rc = berth_fleet_load(&f, &src, strict, &e);
        if (strict) {
            expect_msg(rc, &e, "fl.yaml:15:7: kind: unknown kind 'ConfigMap'", "MemberCluster");
        } else {
            if (rc)
                fail_msg("%s", e.msg);
            assert_int_equal(f.nclusters, 2);
            assert_int_equal(f.nplacements, 1);
            assert_int_equal(f.skipped.n, 1);
            assert_string_equal(f.skipped.items[0].kind, "ConfigMap");
        }
        berth_fleet_free(&f);
    }
}

/* Disrupt: NodePoolList, NodeClaimList, NodeList and PodList without item
 * kinds; the planner's per-node and per-pod tables line up with the kube
 * model's; an Event is skipped into the same table. */
static void test_disrupt(void **st)
{
    (void)st;
    static const char y[] =
        "kind: NodePoolList\napiVersion: karpenter.sh/v1\nitems:\n"
        "- metadata: {name: default}\n"
        "  spec:\n    template: {spec: {nodeClassRef: {group: karpenter.azure.com, kind: "
        "AKSNodeClass, name: default}, requirements: []}}\n"
        "    disruption: {consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 30s}\n"
        "---\n"
        "kind: NodeClaimList\napiVersion: karpenter.sh/v1\nitems:\n"
        "- metadata: {name: n1, labels: {karpenter.sh/nodepool: default}}\n"
        "  status: {nodeName: n1}\n"
        "---\n"
        "kind: NodeList\napiVersion: v1\nitems:\n"
        "- metadata: {name: n1, labels: {karpenter.sh/nodepool: default}}\n"
        "  " NODE_STATUS "\n"
        "---\n"
        "kind: PodList\napiVersion: v1\nitems:\n"
        "- metadata: {name: p1, namespace: default}\n"
        "  spec: {nodeName: n1, containers: [{name: c, resources: {requests: {cpu: 100m}}}]}\n"
        "  status: {phase: Running}\n"
        "---\n"
        "kind: EventList\napiVersion: v1\nitems:\n- metadata: {name: e1}\n- metadata: {name: e2}\n";
    berth_disrupt m;
    berth_disrupt_init(&m);
    berth_error e;
    berth_error_clear(&e);
    berth_source src;
    int rc = berth_doc_load_buffer(&m.kube.arena, "d.yaml", y, strlen(y), &src, &e);
    if (!rc)
        rc = berth_disrupt_load(&m, &src, 0, &e);
    if (rc)
        fail_msg("%s", e.msg);
    assert_int_equal(m.npools, 1);
    assert_int_equal(m.kube.nnodes, 1);
    assert_int_equal(m.nnode_info, 1);
    assert_int_equal(m.kube.npods, 1);
    assert_int_equal(m.npod_info, 1);
    assert_int_equal(m.kube.skipped.n, 1);
    assert_string_equal(m.kube.skipped.items[0].kind, "Event");
    assert_int_equal(m.kube.skipped.items[0].count, 2);
    berth_disrupt_free(&m);
}

/* Autoscale: a ConfigMap other than the priority expander's is skipped
 * (an error with strict); typed lists load as everywhere. */
static void test_autoscale(void **st)
{
    (void)st;
    static const char y[] =
        "kind: ConfigMapList\napiVersion: v1\nitems:\n"
        "- metadata: {name: coredns-custom, namespace: kube-system}\n  data: {x: y}\n---\n"
        "kind: NodeList\napiVersion: v1\nitems:\n- metadata: {name: n1}\n  " NODE_STATUS "\n";
    for (int strict = 0; strict < 2; strict++) {
        berth_autoscale m;
        berth_autoscale_init(&m);
        berth_error e;
        berth_error_clear(&e);
        berth_source src;
        int rc = berth_doc_load_buffer(&m.kube.arena, "a.yaml", y, strlen(y), &src, &e);
        if (!rc)
            rc = berth_autoscale_load(&m, &src, strict, &e);
        if (strict) {
            expect_msg(rc, &e, "a.yaml:4:3: items[0].kind: unknown kind 'ConfigMap'", NULL);
        } else {
            if (rc)
                fail_msg("%s", e.msg);
            assert_int_equal(m.kube.nnodes, 1);
            assert_int_equal(m.kube.skipped.n, 1);
            assert_string_equal(m.kube.skipped.items[0].kind, "ConfigMap");
        }
        berth_autoscale_free(&m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_typed_lists),      cmocka_unit_test(test_plain_list_needs_kinds),
        cmocka_unit_test(test_json_stream),      cmocka_unit_test(test_json_stream_edges),
        cmocka_unit_test(test_skip_counts),      cmocka_unit_test(test_fleet),
        cmocka_unit_test(test_disrupt),          cmocka_unit_test(test_autoscale),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
