/* tests/unit/test_kube_volume_zone.c - PersistentVolumeClaims, zonal
 * PersistentVolumes and the VolumeZone filter (SPEC 2.5, upstream
 * volumezone) on hand-checked cases: the loader (fields, located errors,
 * --strict, <Kind>List, claims resolved across files), the node check
 * (zone match and mismatch, "__" value sets, region keys, the legacy beta
 * keys falling back to the GA ones, nodes without zone labels, unusable
 * set values, any_region), and scheduling (missing claim or volume, an
 * unbound claim, the FitError text, pods of one template with different
 * volumes never sharing a pod class: fast path = reference). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "berth/kube.h"

static int load_into(berth_kcluster *k, const char *yaml, int strict, berth_error *e)
{
    berth_error_clear(e);
    berth_source src;
    int rc = berth_doc_load_buffer(&k->arena, "t.yaml", yaml, strlen(yaml), &src, e);
    if (!rc)
        rc = berth_kube_load(k, &src, strict, e);
    return rc;
}

static void load_ok(berth_kcluster *k, const char *yaml)
{
    berth_error e;
    berth_kube_init(k);
    if (load_into(k, yaml, 1, &e))
        fail_msg("load failed: %s", e.msg);
}

static void load_bad(const char *yaml, int strict, const char *frag1, const char *frag2)
{
    berth_kcluster k;
    berth_error e;
    berth_kube_init(&k);
    int rc = load_into(&k, yaml, strict, &e);
    if (rc != BERTH_EINVAL)
        fail_msg("expected EINVAL for:\n%s\ngot %d (%s)", yaml, rc, e.msg);
    if (frag1 && !strstr(e.msg, frag1))
        fail_msg("message '%s' lacks '%s'", e.msg, frag1);
    if (frag2 && !strstr(e.msg, frag2))
        fail_msg("message '%s' lacks '%s'", e.msg, frag2);
    berth_kube_free(&k);
}

static const berth_kpod *pod_named(const berth_kcluster *k, const char *name)
{
    for (uint32_t i = 0; i < k->npods; i++)
        if (!strcmp(k->pods[i].name, name))
            return &k->pods[i];
    fail_msg("no pod %s", name);
    return NULL;
}

#define PV(name, labels) \
    "---\napiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: " name "\n  labels: " labels "\n"
#define PVC(name, spec) \
    "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: " name \
    ", namespace: default}\nspec: " spec "\n"
#define POD(name, claim)                                                                     \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name ", namespace: default}\nspec:\n" \
    "  containers: [{name: c, resources: {requests: {cpu: 100m}}}]\n"                     \
    "  volumes:\n  - {name: v, persistentVolumeClaim: {claimName: " claim "}}\n"
#define NODE(name, labels)                                                              \
    "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: " name "\n  labels: " labels \
    "\nstatus:\n  allocatable: {cpu: \"4\", memory: 8Gi, pods: \"110\"}\n"

/* ---- loader ---- */

static void test_load(void **st)
{
    (void)st;
    berth_kcluster k;
    load_ok(&k, PV("pv-a", "{topology.kubernetes.io/zone: \"b__a__b\", "
                           "topology.kubernetes.io/region: r1, other: x}")
                "spec: {capacity: {storage: 1Gi}, csi: {driver: d, volumeHandle: h}, "
                "nodeAffinity: {required: {nodeSelectorTerms: []}}}\n"
                PVC("c1", "{volumeName: pv-a, storageClassName: fast, accessModes: "
                          "[ReadWriteOnce], resources: {requests: {storage: 1Gi}}}")
                "status: {phase: Bound, capacity: {storage: 1Gi}}\n"
                PVC("c2", "{storageClassName: slow}") POD("p", "c1")
                "  - {name: w, emptyDir: {}}\n"
                "  - {name: x, persistentVolumeClaim: {claimName: c2, readOnly: true}}\n");
    assert_int_equal(k.npvs, 1);
    assert_int_equal(k.npvcs, 2);
    assert_string_equal(k.pvcs[0].volume_name, "pv-a");
    assert_string_equal(k.pvcs[0].storage_class, "fast");
    assert_null(k.pvcs[1].volume_name);
    const berth_kpod *p = pod_named(&k, "p");
    assert_int_equal(p->nclaims, 2);
    assert_string_equal(p->claims[0], "c1");
    assert_string_equal(p->claims[1], "c2");
    assert_true(p->local_storage);
    assert_null(p->vol_error);
    /* upstream key order: (beta zone, beta region,) GA zone, GA region */
    assert_int_equal(p->nvol_zones, 2);
    assert_string_equal(p->vol_zones[0].key, "topology.kubernetes.io/zone");
    assert_string_equal(p->vol_zones[0].pv, "pv-a");
    assert_int_equal(p->vol_zones[0].nvalues, 2); /* sorted, distinct */
    assert_string_equal(p->vol_zones[0].values[0], "a");
    assert_string_equal(p->vol_zones[0].values[1], "b");
    assert_string_equal(p->vol_zones[1].key, "topology.kubernetes.io/region");
    berth_kube_free(&k);

    /* lists of the new kinds */
    load_ok(&k, "apiVersion: v1\nkind: PersistentVolumeList\nitems:\n"
                "- {apiVersion: v1, kind: PersistentVolume, metadata: {name: v1}}\n"
                "---\napiVersion: v1\nkind: List\nitems:\n"
                "- {apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: c}, "
                "spec: {volumeName: \"\"}}\n");
    assert_int_equal(k.npvs, 1);
    assert_int_equal(k.npvcs, 1);
    assert_null(k.pvcs[0].volume_name); /* "" is unbound */
    assert_string_equal(k.pvcs[0].ns, "default");
    berth_kube_free(&k);

    /* errors: located, with the field path */
    load_bad(PVC("c", "{volumeName: [a]}"), 0, "t.yaml:", "spec.volumeName");
    load_bad(PVC("c", "{storageClassName: {a: b}}"), 0, "spec.storageClassName", NULL);
    load_bad(PVC("c", "{volumeNmae: x}"), 1, "spec", "volumeNmae");
    load_bad(PV("v", "{a: b}") "spec: {nodeAfinity: {}}\n", 1, "nodeAfinity", NULL);
    load_bad(PV("v", "{a: b}") "spec: [x]\n", 0, "spec", "mapping");
    load_bad("apiVersion: v2\nkind: PersistentVolume\nmetadata: {name: v}\n", 0, "apiVersion",
             "v1");
    load_bad(POD("p", "\"\""), 0, "spec.volumes[0].persistentVolumeClaim.claimName", "empty");
    load_bad("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: []\n"
             "  volumes: [{name: v, persistentVolumeClaim: {readOnly: true}}]\n",
             0, "spec.volumes[0].persistentVolumeClaim.claimName", "missing");
    load_bad("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: []\n"
             "  volumes: [{name: v, persistentVolumeClaim: {claimName: c, readOnyl: true}}]\n",
             1, "readOnyl", NULL);
    /* without --strict unknown fields are ignored */
    load_ok(&k, "");
    berth_error e;
    assert_int_equal(load_into(&k, PVC("c", "{volumeNmae: x}"), 0, &e), 0);
    berth_kube_free(&k);
}

/* Claims resolve whatever the file order: the pod first, its PVC in a
 * second file, its PV in a third; a later file re-resolves. */
static void test_resolve_across_files(void **st)
{
    (void)st;
    berth_kcluster k;
    berth_error e;
    load_ok(&k, POD("p", "c") POD("q", "c"));
    assert_string_equal(pod_named(&k, "p")->vol_error, "persistentvolumeclaim \"c\" not found");
    assert_int_equal(load_into(&k, PVC("c", "{volumeName: v}"), 1, &e), 0);
    assert_string_equal(pod_named(&k, "p")->vol_error, "persistentvolume \"v\" not found");
    assert_int_equal(load_into(&k, PV("v", "{topology.kubernetes.io/zone: z1}"), 1, &e), 0);
    for (int i = 0; i < 2; i++) {
        const berth_kpod *p = pod_named(&k, i ? "q" : "p");
        assert_null(p->vol_error);
        assert_int_equal(p->nvol_zones, 1);
        assert_string_equal(p->vol_zones[0].values[0], "z1");
    }
    /* another namespace's claim of the same name is not the pod's */
    assert_int_equal(load_into(&k,
                               "apiVersion: v1\nkind: Pod\nmetadata: {name: r, namespace: other}\n"
                               "spec:\n  containers: []\n"
                               "  volumes: [{name: v, persistentVolumeClaim: {claimName: c}}]\n",
                               1, &e),
                     0);
    assert_string_equal(pod_named(&k, "r")->vol_error, "persistentvolumeclaim \"c\" not found");
    assert_null(pod_named(&k, "p")->vol_error);
    /* an unbound claim adds no constraint; the first error wins */
    assert_int_equal(load_into(&k, PVC("u", "{storageClassName: wffc}") POD("s", "u")
                                   "  - {name: w, persistentVolumeClaim: {claimName: c}}\n"
                                   "  - {name: x, persistentVolumeClaim: {claimName: nope}}\n"
                                   "  - {name: y, persistentVolumeClaim: {claimName: nope2}}\n",
                               1, &e),
                     0);
    const berth_kpod *s = pod_named(&k, "s");
    assert_string_equal(s->vol_error, "persistentvolumeclaim \"nope\" not found");
    assert_int_equal(s->nvol_zones, 0);
    berth_kube_free(&k);
}

/* ---- the node check ---- */

static berth_labels lab(berth_label *items, uint32_t n)
{
    berth_labels l = {items, n};
    assert_int_equal(berth_labels_sort(&l), 0);
    return l;
}

static void test_fits(void **st)
{
    (void)st;
    const char *ab[] = {"a", "b"}, *r1[] = {"r1"}, *c[] = {"c"};
    berth_kvolume_zone zab = {"pv", "topology.kubernetes.io/zone", ab, 2};
    berth_kvolume_zone reg = {"pv", "topology.kubernetes.io/region", r1, 1};
    berth_kvolume_zone beta = {"pv", "failure-domain.beta.kubernetes.io/zone", c, 1};
    berth_kvolume_zone betareg = {"pv", "failure-domain.beta.kubernetes.io/region", r1, 1};
    berth_kpod p;
    memset(&p, 0, sizeof p);
    berth_label la[] = {{"topology.kubernetes.io/zone", "a"}, {"topology.kubernetes.io/region", "r1"}};
    berth_label lc[] = {{"topology.kubernetes.io/zone", "c"}, {"topology.kubernetes.io/region", "r2"}};
    berth_label none[] = {{"kubernetes.io/hostname", "n"}};
    berth_label onlyzone[] = {{"topology.kubernetes.io/zone", "b"}};
    berth_label betac[] = {{"failure-domain.beta.kubernetes.io/zone", "c"},
                           {"topology.kubernetes.io/zone", "a"}};
    berth_labels La = lab(la, 2), Lc = lab(lc, 2), Ln = lab(none, 1), Lz = lab(onlyzone, 1),
                 Lb = lab(betac, 2);
    char why[200];
    /* no constraint: every node */
    assert_true(berth_kube_volume_zone_fits(&p, &Lc, 0, NULL, 0));
    /* a set {a, b}: a and b pass, c fails with a reason naming the volume */
    p.vol_zones = &zab;
    p.nvol_zones = 1;
    assert_true(berth_kube_volume_zone_fits(&p, &La, 0, NULL, 0));
    assert_true(berth_kube_volume_zone_fits(&p, &Lz, 0, NULL, 0));
    assert_false(berth_kube_volume_zone_fits(&p, &Lc, 0, why, sizeof why));
    assert_string_equal(why, "PersistentVolume pv is in topology.kubernetes.io/zone a or b");
    /* a node without any zone or region label passes (single-zone clusters) */
    assert_true(berth_kube_volume_zone_fits(&p, &Ln, 0, NULL, 0));
    /* region: the node must have the key once it has any zone label */
    berth_kvolume_zone both[] = {zab, reg};
    p.vol_zones = both;
    p.nvol_zones = 2;
    assert_true(berth_kube_volume_zone_fits(&p, &La, 0, NULL, 0));
    assert_false(berth_kube_volume_zone_fits(&p, &Lz, 0, why, sizeof why));
    assert_string_equal(why, "PersistentVolume pv is in topology.kubernetes.io/region r1");
    /* ... unless the node is in the cluster's region (autoscaler's new nodes) */
    assert_true(berth_kube_volume_zone_fits(&p, &Lz, 1, NULL, 0));
    /* any_region does not excuse a region label that differs */
    berth_label lbr2[] = {{"topology.kubernetes.io/zone", "a"}, {"topology.kubernetes.io/region", "r2"}};
    berth_labels Lbr2 = lab(lbr2, 2);
    assert_false(berth_kube_volume_zone_fits(&p, &Lbr2, 1, NULL, 0));
    /* legacy beta keys: the node's beta label first, else its GA label */
    p.vol_zones = &beta;
    p.nvol_zones = 1;
    assert_true(berth_kube_volume_zone_fits(&p, &Lc, 0, NULL, 0));  /* GA zone c */
    assert_false(berth_kube_volume_zone_fits(&p, &La, 0, NULL, 0)); /* GA zone a */
    assert_true(berth_kube_volume_zone_fits(&p, &Lb, 0, NULL, 0));  /* beta c wins over GA a */
    p.vol_zones = &betareg;
    assert_true(berth_kube_volume_zone_fits(&p, &La, 0, NULL, 0));  /* GA region r1 */
    assert_false(berth_kube_volume_zone_fits(&p, &Lc, 0, NULL, 0)); /* GA region r2 */
    /* a GA constraint does not read the node's beta label */
    berth_kvolume_zone gac = {"pv", "topology.kubernetes.io/zone", c, 1};
    p.vol_zones = &gac;
    assert_false(berth_kube_volume_zone_fits(&p, &Lb, 0, NULL, 0));
    /* a volume error rejects every node, even one without zone labels */
    p.nvol_zones = 0;
    p.vol_error = "persistentvolumeclaim \"x\" not found";
    assert_false(berth_kube_volume_zone_fits(&p, &Ln, 0, why, sizeof why));
    assert_string_equal(why, "persistentvolumeclaim \"x\" not found");
}

/* LabelZonesToSet: "__" separates, elements are trimmed; an empty element
 * makes the key unusable (upstream skips it). */
static void test_zone_sets(void **st)
{
    (void)st;
    berth_kcluster k;
    load_ok(&k, PV("v1", "{topology.kubernetes.io/zone: \"a____b\", topology.kubernetes.io/region: r}")
                PV("v2", "{topology.kubernetes.io/zone: \"\"}")
                PV("v3", "{topology.kubernetes.io/zone: z__z}")
                PVC("c1", "{volumeName: v1}") PVC("c2", "{volumeName: v2}")
                PVC("c3", "{volumeName: v3}") POD("p1", "c1") POD("p2", "c2") POD("p3", "c3"));
    const berth_kpod *p1 = pod_named(&k, "p1"), *p2 = pod_named(&k, "p2"), *p3 = pod_named(&k, "p3");
    assert_int_equal(p1->nvol_zones, 1);
    assert_string_equal(p1->vol_zones[0].key, "topology.kubernetes.io/region");
    assert_int_equal(p2->nvol_zones, 0);
    assert_int_equal(p3->nvol_zones, 1);
    assert_int_equal(p3->vol_zones[0].nvalues, 1);
    berth_kube_free(&k);
}

/* ---- scheduling ---- */

typedef struct got {
    const char *node[16];
    char why[16][256];
} got;

static void on_dec(void *ctx, const berth_kcluster *k, const berth_kdecision *d)
{
    got *g = ctx;
    const berth_kpod *p = &k->pods[d->pod];
    int i = atoi(p->name + 1);
    g->node[i] = d->node == BERTH_KUBE_NONE ? NULL : k->nodes[d->node].name;
    snprintf(g->why[i], sizeof g->why[i], "%s", d->summary ? d->summary : "");
}

static const char *CLUSTER =
    NODE("na", "{topology.kubernetes.io/zone: a, topology.kubernetes.io/region: r}")
    NODE("nb", "{topology.kubernetes.io/zone: b, topology.kubernetes.io/region: r}")
    NODE("nc", "{topology.kubernetes.io/zone: c, topology.kubernetes.io/region: r}")
    PV("va", "{topology.kubernetes.io/zone: a}") PV("vb", "{topology.kubernetes.io/zone: b}")
    PV("vc", "{topology.kubernetes.io/zone: c}")
    PV("vbc", "{topology.kubernetes.io/zone: b__c, failure-domain.beta.kubernetes.io/region: r}")
    PV("vr2", "{topology.kubernetes.io/region: r2}")
    PVC("ca", "{volumeName: va}") PVC("cb", "{volumeName: vb}") PVC("cc", "{volumeName: vc}")
    PVC("cbc", "{volumeName: vbc}") PVC("cr2", "{volumeName: vr2}")
    PVC("unbound", "{storageClassName: wffc}") PVC("orphan", "{volumeName: gone}")
    /* identical pods but for their volumes, interleaved: one class each */
    POD("p0", "cc") POD("p1", "cb") POD("p2", "cc") POD("p3", "ca") POD("p4", "cb")
    POD("p5", "cbc") POD("p6", "unbound") POD("p7", "missing") POD("p8", "orphan")
    POD("p9", "cr2")
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p10, namespace: default}\nspec:\n"
    "  containers: [{name: c, resources: {requests: {cpu: 100m}}}]\n";

static void test_schedule(void **st)
{
    (void)st;
    for (int ref = 0; ref < 2; ref++)
        for (int detail = 0; detail < 2; detail++) {
            berth_kcluster k;
            load_ok(&k, CLUSTER);
            got g;
            memset(&g, 0, sizeof g);
            berth_kube_options o = {.reference = ref, .detail = detail, .on_decision = on_dec,
                                    .ctx = &g};
            berth_error e;
            assert_int_equal(berth_kube_schedule(&k, &o, &e), BERTH_ENOFIT);
            assert_string_equal(g.node[0], "nc");
            assert_string_equal(g.node[1], "nb");
            assert_string_equal(g.node[2], "nc");
            assert_string_equal(g.node[3], "na");
            assert_string_equal(g.node[4], "nb");
            /* {b, c} and the beta region (the nodes' GA region r): nb has 2
             * pods, nc 2; LeastAllocated ties, lowest name */
            assert_string_equal(g.node[5], "nb");
            assert_non_null(g.node[6]); /* unbound claim: anywhere */
            assert_null(g.node[7]);
            assert_string_equal(g.why[7],
                                "0/3 nodes are available: persistentvolumeclaim \"missing\" not found.");
            assert_null(g.node[8]);
            assert_string_equal(g.why[8],
                                "0/3 nodes are available: persistentvolume \"gone\" not found.");
            assert_null(g.node[9]);
            assert_string_equal(g.why[9],
                                "0/3 nodes are available: 3 node(s) had no available volume zone.");
            assert_non_null(g.node[10]);
            berth_kube_free(&k);
        }
}

/* A profile without VolumeZone ignores volumes, missing ones included. */
static void test_disabled(void **st)
{
    (void)st;
    berth_kcluster k;
    load_ok(&k, CLUSTER);
    berth_kprofile prof;
    berth_kube_default_profile(&k, &prof);
    prof.filters &= ~(1u << BERTH_KP_VOLUME_ZONE);
    got g;
    memset(&g, 0, sizeof g);
    berth_kube_options o = {.profile = &prof, .on_decision = on_dec, .ctx = &g};
    berth_error e;
    assert_int_equal(berth_kube_schedule(&k, &o, &e), 0);
    for (int i = 0; i <= 10; i++)
        assert_non_null(g.node[i]);
    berth_kube_free(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load),
        cmocka_unit_test(test_resolve_across_files),
        cmocka_unit_test(test_fits),
        cmocka_unit_test(test_zone_sets),
        cmocka_unit_test(test_schedule),
        cmocka_unit_test(test_disabled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
