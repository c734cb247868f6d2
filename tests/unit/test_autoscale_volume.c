/* tests/unit/test_autoscale_volume.c - PersistentVolume zones in the
 * autoscaler (SPEC 5): a pending pod whose bound PV is zonal gets a new
 * node in an allowed zone even when another zone is cheaper; a "__" zone
 * set lets the cheaper zone win; a PV zone no group allows, a missing
 * claim, and a region the group's labels contradict leave the pod
 * unschedulable with a reason naming the volume; a region constraint is
 * ignored when the group sets no region label. Every case runs the plain
 * algorithm and the fast path (whose template classes must keep pods with
 * different volumes apart). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "autoscale_fixture.h"

/* m.small in zones za (spot 0.02, the cheapest) and zb (spot 0.05). */
static void estate(buf *b, const char *vng_labels)
{
    add(b, "apiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: m.small}\nspec:\n"
           "  capacity: {cpu: \"2\", memory: 4Gi, pods: 20}\n  offerings:\n"
           "  - {zone: za, capacityType: spot, price: 0.02}\n"
           "  - {zone: za, capacityType: on-demand, price: 0.10}\n"
           "  - {zone: zb, capacityType: spot, price: 0.05}\n"
           "  - {zone: zb, capacityType: on-demand, price: 0.10}\n");
    add(b, "---\napiVersion: berth.io/v1\nkind: VirtualNodeGroup\nmetadata: {name: general}\n"
           "spec:\n  zones: [za, zb]\n%s",
        vng_labels ? vng_labels : "");
    const char *pvs[][2] = {{"pv-a", "topology.kubernetes.io/zone: za"},
                            {"pv-b", "topology.kubernetes.io/zone: zb"},
                            {"pv-c", "topology.kubernetes.io/zone: zc"},
                            {"pv-ab", "topology.kubernetes.io/zone: za__zb"},
                            {"pv-b-r1", "topology.kubernetes.io/zone: zb, "
                                        "topology.kubernetes.io/region: r1"},
                            {"pv-beta-b", "failure-domain.beta.kubernetes.io/zone: zb"}};
    for (size_t i = 0; i < sizeof pvs / sizeof pvs[0]; i++)
        add(b, "---\napiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: %s\n"
               "  labels: {%s}\n---\napiVersion: v1\nkind: PersistentVolumeClaim\n"
               "metadata: {name: c-%s, namespace: default}\nspec: {volumeName: %s}\n",
            pvs[i][0], pvs[i][1], pvs[i][0], pvs[i][0]);
}

/* A pending pod (500m) with claim (NULL: no volume). */
static void vpod(buf *b, const char *name, const char *claim)
{
    add(b, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: default}\nspec:\n"
           "  containers: [{name: c, resources: {requests: {cpu: 500m, memory: 512Mi}}}]\n",
        name);
    if (claim)
        add(b, "  volumes: [{name: d, persistentVolumeClaim: {claimName: %s}}]\n", claim);
}

/* The zone of the new node that pod went to, or NULL. */
static const char *zone_of(const run *r, const char *pod)
{
    for (uint32_t i = 0; i < r->p.nup; i++)
        for (uint32_t j = 0; j < r->p.up[i].npods; j++)
            if (!strcmp(r->m.kube.pods[r->p.up[i].pods[j]].name, pod))
                return r->p.up[i].zone;
    return NULL;
}

static void plan_both(run *r, buf *b, int ref)
{
    berth_aplan_options o;
    memset(&o, 0, sizeof o);
    o.reference = ref;
    plan_opt(r, b, o);
    if (r->rc)
        fail_msg("plan: %d %s", r->rc, r->e.msg);
}

static void test_zone_honoured(void **st)
{
    (void)st;
    for (int ref = 0; ref < 2; ref++) {
        buf b = {.n = 0};
        estate(&b, NULL);
        vpod(&b, "free", NULL);        /* no volume: the cheaper zone */
        vpod(&b, "db", "c-pv-b");      /* PV in zb although za is cheaper */
        vpod(&b, "db2", "c-pv-a");     /* same template, other volume: za */
        vpod(&b, "db3", "c-pv-b");
        vpod(&b, "either", "c-pv-ab"); /* za or zb: the cheaper za */
        vpod(&b, "legacy", "c-pv-beta-b"); /* the beta key reads the node's GA zone */
        vpod(&b, "region", "c-pv-b-r1");   /* the group sets no region: ignored */
        run r;
        plan_both(&r, &b, ref);
        assert_int_equal(r.p.nunsched, 0);
        assert_string_equal(zone_of(&r, "free"), "za");
        assert_string_equal(zone_of(&r, "db"), "zb");
        assert_string_equal(zone_of(&r, "db2"), "za");
        assert_string_equal(zone_of(&r, "db3"), "zb");
        assert_string_equal(zone_of(&r, "either"), "za");
        assert_string_equal(zone_of(&r, "legacy"), "zb");
        assert_string_equal(zone_of(&r, "region"), "zb");
        done(&r);
    }
}

static void test_unschedulable(void **st)
{
    (void)st;
    for (int ref = 0; ref < 2; ref++) {
        buf b = {.n = 0};
        estate(&b, NULL);
        vpod(&b, "far", "c-pv-c");
        vpod(&b, "lost", "c-missing");
        vpod(&b, "fine", "c-pv-b");
        run r;
        plan_both(&r, &b, ref);
        const char *w = unsched_of(&r, "far");
        assert_non_null(w);
        if (!strstr(w, "PersistentVolume pv-c is in topology.kubernetes.io/zone zc"))
            fail_msg("reason: %s", w);
        w = unsched_of(&r, "lost");
        assert_non_null(w);
        if (!strstr(w, "persistentvolumeclaim \"c-missing\" not found"))
            fail_msg("reason: %s", w);
        assert_string_equal(zone_of(&r, "fine"), "zb");
        done(&r);
    }
}

/* A group that sets a region label: region constraints count. */
static void test_region_label(void **st)
{
    (void)st;
    for (int ref = 0; ref < 2; ref++) {
        for (int same = 0; same < 2; same++) {
            buf b = {.n = 0};
            estate(&b, same ? "  labels: {topology.kubernetes.io/region: r1}\n"
                            : "  labels: {topology.kubernetes.io/region: r2}\n");
            vpod(&b, "region", "c-pv-b-r1");
            run r;
            plan_both(&r, &b, ref);
            if (same) {
                assert_string_equal(zone_of(&r, "region"), "zb");
            } else {
                const char *w = unsched_of(&r, "region");
                assert_non_null(w);
                if (!strstr(w, "PersistentVolume pv-b-r1 is in topology.kubernetes.io/region r1"))
                    fail_msg("reason: %s", w);
            }
            done(&r);
        }
    }
}

/* An existing node in the volume's zone with room takes the pod first; a
 * full one in the wrong zone does not. */
static void test_existing_nodes(void **st)
{
    (void)st;
    for (int ref = 0; ref < 2; ref++) {
        buf b = {.n = 0};
        estate(&b, NULL);
        add(&b, "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: old-a\n  labels:\n"
                "    berth.io/virtual-node-group: general\n"
                "    node.kubernetes.io/instance-type: m.small\n"
                "    topology.kubernetes.io/zone: za\n    karpenter.sh/capacity-type: spot\n"
                "status:\n  allocatable: {cpu: \"2\", memory: 4Gi, pods: \"20\"}\n");
        vpod(&b, "db", "c-pv-b");
        vpod(&b, "dba", "c-pv-a");
        run r;
        plan_both(&r, &b, ref);
        assert_int_equal(r.p.nunsched, 0);
        assert_string_equal(zone_of(&r, "db"), "zb");
        assert_null(zone_of(&r, "dba")); /* on old-a */
        done(&r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zone_honoured),
        cmocka_unit_test(test_unschedulable),
        cmocka_unit_test(test_region_label),
        cmocka_unit_test(test_existing_nodes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
