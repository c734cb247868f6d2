/* tests/unit/test_nameidx.c - the shared name index (core/nameidx.c) and
 * the loaders that find duplicate names through it (issue 18): adding,
 * finding, replacing and growing over 100,000 names; 50,000 NodeClaims in
 * one kubectl-shaped NodeClaimList loaded, a duplicate after them and one
 * in a later file reported at its own line; duplicate InstanceTypes,
 * Namespaces (the later labels win), VirtualNodeGroups and Reservations;
 * 20,000 names built to share their slot under an unkeyed hash (FNV-1a,
 * the index's hash before it was keyed) spread as any names do. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define YAML_BUF_SIZE (8u << 20)
#include "berth/autoscale.h"
#include "berth/nameidx.h"
#include "disrupt_fixture.h"
#include "../hostile_names.h"

#define NAMES 100000u
#define CLAIMS 50000u
#define FLOOD 20000u
#define FLOOD_BITS 16u /* low bits the flood's names share under FNV-1a */

static void test_flood(void **state)
{
    (void)state;
    char *names = hostile_names(FLOOD, FLOOD_BITS);
    assert_non_null(names);
    const uint32_t mask = (1u << FLOOD_BITS) - 1;
    berth_nameidx x, y;
    berth_nameidx_init(&x);
    berth_nameidx_init(&y);
    for (uint32_t i = 0; i < FLOOD; i++) {
        const char *nm = names + (size_t)i * 16;
        /* hostile under the unkeyed hash: one slot for all, mod 2^16 */
        assert_int_equal(hostile_fnv1a(nm) & mask, hostile_fnv1a(names) & mask);
        assert_int_equal(berth_nameidx_add(&x, nm, i, NULL), 0);
    }
    assert_int_equal(x.n, FLOOD);
    assert_true(x.cap <= 65536u); /* their slot is the same at every size */
    for (uint32_t i = 0; i < FLOOD; i++)
        assert_int_equal(berth_nameidx_find(&x, names + (size_t)i * 16), i);
    /* half full at most: a random hash leaves runs of a few dozen slots;
     * the unkeyed one put all 20,000 in one run (each add probing every
     * earlier name) */
    uint32_t run = berth_nameidx_longest_run(&x);
    print_message("flood: %u names, %u slots, longest run %u\n", x.n, x.cap, run);
    assert_true(run < 200);
    /* the two-step lookup and add (io/yaml.c intern_key) agree with the
     * one-step ones */
    uint32_t h = berth_nameidx_hash_in(&x, names);
    assert_int_equal(berth_nameidx_find_hash(&x, names, h), 0);
    assert_int_equal(h, berth_nameidx_hash_in(&x, names));
    uint32_t had = 99;
    assert_int_equal(berth_nameidx_add_hash(&x, names, h, 7, &had), 1);
    assert_int_equal(had, 0);
    h = berth_nameidx_hash_in(&x, "not-there");
    assert_int_equal(berth_nameidx_find_hash(&x, "not-there", h), BERTH_NAMEIDX_NONE);
    assert_int_equal(berth_nameidx_add_hash(&x, "not-there", h, FLOOD, NULL), 0);
    assert_int_equal(berth_nameidx_find(&x, "not-there"), FLOOD);
    /* each index its own key */
    assert_int_equal(berth_nameidx_add(&y, "a", 0, NULL), 0);
    assert_memory_not_equal(x.key, y.key, BERTH_NAMEIDX_KEY);
    berth_nameidx_free(&x);
    berth_nameidx_free(&y);
    free(names);
}

static void test_index(void **state)
{
    berth_nameidx x;
    berth_nameidx_init(&x);
    assert_int_equal(berth_nameidx_find(&x, "a"), BERTH_NAMEIDX_NONE);
    assert_int_equal(berth_nameidx_find(&x, NULL), BERTH_NAMEIDX_NONE);
    char (*names)[16] = malloc(NAMES * sizeof *names);
    assert_non_null(names);
    for (uint32_t i = 0; i < NAMES; i++) {
        snprintf(names[i], sizeof names[i], "node-%06u", i);
        assert_int_equal(berth_nameidx_add(&x, names[i], i, NULL), 0);
    }
    assert_int_equal(x.n, NAMES);
    assert_true(x.cap >= 2 * NAMES && (x.cap & (x.cap - 1)) == 0);
    for (uint32_t i = 0; i < NAMES; i += 7) {
        char probe[16]; /* another pointer, the same text */
        snprintf(probe, sizeof probe, "node-%06u", i);
        assert_int_equal(berth_nameidx_find(&x, probe), i);
    }
    assert_int_equal(berth_nameidx_find(&x, "node-1000000"), BERTH_NAMEIDX_NONE);
    assert_int_equal(berth_nameidx_find(&x, "node-00001"), BERTH_NAMEIDX_NONE);
    assert_int_equal(berth_nameidx_find(&x, ""), BERTH_NAMEIDX_NONE);
    uint32_t had = 0;
    assert_int_equal(berth_nameidx_add(&x, "node-000042", 7, &had), 1);
    assert_int_equal(had, 42);
    assert_int_equal(berth_nameidx_find(&x, "node-000042"), 42); /* add keeps the first */
    assert_int_equal(berth_nameidx_put(&x, "node-000042", 7), 0);
    assert_int_equal(berth_nameidx_find(&x, "node-000042"), 7);  /* put replaces */
    assert_int_equal(x.n, NAMES);
    assert_int_equal(berth_nameidx_add(&x, NULL, 1, NULL), BERTH_EINVAL);
    assert_int_equal(berth_nameidx_add(&x, "", 5, NULL), 0); /* the empty name is a name */
    assert_int_equal(berth_nameidx_find(&x, ""), 5);
    berth_nameidx_free(&x);
    assert_int_equal(x.cap, 0);
    assert_int_equal(berth_nameidx_find(&x, "node-000001"), BERTH_NAMEIDX_NONE);
    free(names);
}

static buf b;

/* 50,000 NodeClaims as `kubectl get nodeclaims -o yaml` writes them (items
 * without kind, managedFields, status), 3 lines each after the header. */
static void claims(buf *o, uint32_t n)
{
    add(o, "apiVersion: v1\nkind: List\nmetadata: {resourceVersion: \"7\"}\nitems:\n"
           "- apiVersion: karpenter.sh/v1\n  kind: NodePool\n  metadata: {name: p}\n"
           "  spec: {template: {spec: {}}}\n"
           "---\napiVersion: karpenter.sh/v1\nkind: NodeClaimList\nmetadata: {resourceVersion: \"8\"}\n"
           "items:\n");
    for (uint32_t i = 0; i < n; i++)
        add(o, "- metadata: {name: c%06u, labels: {karpenter.sh/nodepool: p}, managedFields: []}\n"
               "  spec: {}\n  status: {nodeName: n%06u}\n", i, i);
}

static void test_load_50k_claims(void **state)
{
    b.n = 0;
    claims(&b, CLAIMS);
    berth_disrupt m;
    berth_error e;
    assert_int_equal(load_model(&m, &b, &e), 0);
    assert_int_equal(m.nclaims, CLAIMS);
    assert_int_equal(m.npools, 1);
    assert_string_equal(m.claims[CLAIMS - 1].name, "c049999");
    assert_string_equal(m.claims[CLAIMS - 1].node_name, "n049999");
    assert_string_equal(m.claims[12345].nodepool, "p");
    assert_int_equal(m.claim_names.cap, 0); /* finalize dropped the loading index */
    berth_disrupt_free(&m);

    /* a duplicate after all of them: located at its own line */
    add(&b, "- metadata: {name: c012345}\n");
    assert_int_equal(load_model(&m, &b, &e), BERTH_EINVAL);
    char want[64];
    snprintf(want, sizeof want, "t.yaml:%u:", 13 + 3 * CLAIMS + 1); /* 13 header lines */
    if (!strstr(e.msg, want))
        print_error("message: %s (want %s)\n", e.msg, want);
    assert_non_null(strstr(e.msg, want));
    assert_non_null(strstr(e.msg, "NodeClaim 'c012345' appears twice"));
    berth_disrupt_free(&m);

    /* across two files of one run: the index lives until finalize */
    b.n = 0;
    claims(&b, 1000);
    berth_disrupt_init(&m);
    berth_error_clear(&e);
    berth_source s1, s2;
    assert_int_equal(berth_doc_load_buffer(&m.kube.arena, "a.yaml", b.s, b.n, &s1, &e), 0);
    assert_int_equal(berth_disrupt_load(&m, &s1, 1, &e), 0);
    static const char second[] = "apiVersion: karpenter.sh/v1\nkind: NodeClaim\n"
                                 "metadata: {name: c000999}\n";
    assert_int_equal(berth_doc_load_buffer(&m.kube.arena, "b.yaml", second, strlen(second), &s2,
                                           &e), 0);
    assert_int_equal(berth_disrupt_load(&m, &s2, 1, &e), BERTH_EINVAL);
    assert_non_null(strstr(e.msg, "b.yaml:3:"));
    assert_non_null(strstr(e.msg, "NodeClaim 'c000999' appears twice"));
    berth_disrupt_free(&m);
}

static void test_disrupt_duplicates(void **state)
{
    static const char *const docs[][2] = {
        {"apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: p}\n"
         "spec: {template: {spec: {}}}\n", "NodePool 'p' appears twice"},
        {"apiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: Standard_D2s_v5}\n"
         "spec:\n  capacity: {cpu: \"2\", memory: 8Gi, pods: 30}\n"
         "  offerings: [{zone: z1, capacityType: on-demand, price: 0.1}]\n",
         "InstanceType 'Standard_D2s_v5' appears twice"},
    };
    for (size_t i = 0; i < sizeof docs / sizeof *docs; i++) {
        b.n = 0;
        add(&b, "%s---\n%s", docs[i][0], docs[i][0]);
        berth_disrupt m;
        berth_error e;
        assert_int_equal(load_model(&m, &b, &e), BERTH_EINVAL);
        assert_non_null(strstr(e.msg, docs[i][1]));
        berth_disrupt_free(&m);
    }
    /* Namespaces: the later object's labels win, one namespace */
    b.n = 0;
    add(&b, "apiVersion: v1\nkind: Namespace\nmetadata: {name: a, labels: {v: \"1\"}}\n---\n"
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: b}\n---\n"
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: a, labels: {v: \"2\"}}\n");
    berth_disrupt m;
    berth_error e;
    assert_int_equal(load_model(&m, &b, &e), 0);
    assert_int_equal(m.kube.nnamespaces, 2);
    assert_string_equal(m.kube.namespaces[0].name, "a");
    assert_string_equal(berth_labels_get(&m.kube.namespaces[0].labels, "v"), "2");
    berth_disrupt_free(&m);
}

static int load_autoscale(berth_autoscale *m, const buf *o, berth_error *e)
{
    berth_autoscale_init(m);
    berth_error_clear(e);
    berth_source src;
    int rc = berth_doc_load_buffer(&m->kube.arena, "t.yaml", o->s, o->n, &src, e);
    if (!rc)
        rc = berth_autoscale_load(m, &src, 1, e);
    if (!rc)
        rc = berth_autoscale_finalize(m, e);
    return rc;
}

static void test_autoscale_duplicates(void **state)
{
    static const char type[] =
        "apiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: Standard_D2s_v5}\n"
        "spec:\n  capacity: {cpu: \"2\", memory: 8Gi, pods: 30}\n"
        "  offerings: [{zone: z1, capacityType: on-demand, price: 0.1}]\n";
    static const char vng[] = "apiVersion: berth.io/v1\nkind: VirtualNodeGroup\n"
                              "metadata: {name: g}\nspec: {instanceTypes: [Standard_D2s_v5]}\n";
    static const char res[] = "apiVersion: berth.io/v1\nkind: Reservation\nmetadata: {name: r}\n"
                              "spec: {instanceType: Standard_D2s_v5, zone: z1, count: 1}\n";
    berth_autoscale m;
    berth_error e;
    b.n = 0;
    add(&b, "%s---\n%s---\n%s", type, vng, res);
    assert_int_equal(load_autoscale(&m, &b, &e), 0); /* references resolve */
    assert_int_equal(m.nvngs, 1);
    assert_int_equal(m.vng_names.cap, 0);
    berth_autoscale_free(&m);
    static const char *const twice[][2] = {
        {vng, "VirtualNodeGroup 'g' appears twice"},
        {res, "Reservation 'r' appears twice"},
        {type, "InstanceType 'Standard_D2s_v5' appears twice"},
    };
    for (size_t i = 0; i < sizeof twice / sizeof *twice; i++) {
        b.n = 0;
        add(&b, "%s---\n%s---\n%s---\n%s", type, vng, res, twice[i][0]);
        assert_int_equal(load_autoscale(&m, &b, &e), BERTH_EINVAL);
        assert_non_null(strstr(e.msg, twice[i][1]));
        berth_autoscale_free(&m);
    }
    /* a group naming a type that is not there */
    b.n = 0;
    add(&b, "%s---\napiVersion: berth.io/v1\nkind: VirtualNodeGroup\nmetadata: {name: h}\n"
            "spec: {instanceTypes: [Standard_E2s_v5]}\n", type);
    assert_int_equal(load_autoscale(&m, &b, &e), BERTH_EINVAL);
    assert_non_null(strstr(e.msg, "no InstanceType named 'Standard_E2s_v5'"));
    berth_autoscale_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_index),
        cmocka_unit_test(test_flood),
        cmocka_unit_test(test_load_50k_claims),
        cmocka_unit_test(test_disrupt_duplicates),
        cmocka_unit_test(test_autoscale_duplicates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
