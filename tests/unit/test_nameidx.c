/* tests/unit/test_nameidx.c - the shared name index (core/nameidx.c) and
 * the loaders that find duplicate names through it (issue 18): adding,
 * finding, replacing and growing over 100,000 names; 50,000 NodeClaims in
 * one kubectl-shaped NodeClaimList loaded, a duplicate after them and one
 * in a later file reported at its own line; duplicate InstanceTypes,
 * Namespaces (the later labels win), VirtualNodeGroups and Reservations;
 * 20,000 names built to share their slot under an unkeyed hash (FNV-1a,
 * the index's hash before it was keyed) spread as any names do, in the
 * index and in a kube session over 20,000 Nodes so named; removal keeps
 * every lookup exact. */
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
#include "kube/state.h"
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
    /* a name inside a larger text (the extender's nodenames): its bytes
     * only, not a prefix or an extension of them */
    const char *text = "[\"node-000042\",\"node-0000421\",\"node-00004\"]";
    assert_int_equal(berth_nameidx_find_n(&x, text + 2, 11), 7);
    assert_int_equal(berth_nameidx_find_n(&x, text + 16, 12), BERTH_NAMEIDX_NONE);
    assert_int_equal(berth_nameidx_find_n(&x, text + 16, 11), 7);
    assert_int_equal(berth_nameidx_find_n(&x, text + 2, 10), BERTH_NAMEIDX_NONE);
    assert_int_equal(berth_nameidx_find_n(&x, text + 31, 10), BERTH_NAMEIDX_NONE);
    assert_int_equal(berth_nameidx_find_n(&x, text, 0), 5);
    assert_int_equal(berth_nameidx_find_n(&x, NULL, 0), BERTH_NAMEIDX_NONE);
    for (uint32_t i = 1; i < NAMES; i += 997) {
        char wrapped[24]; /* no terminator after the name */
        int n = snprintf(wrapped, sizeof wrapped, "node-%06uxyz", i);
        assert_int_equal(n, 14);
        assert_int_equal(berth_nameidx_find_n(&x, wrapped, 11), i);
    }
    berth_nameidx_free(&x);
    assert_int_equal(x.cap, 0);
    assert_int_equal(berth_nameidx_find(&x, "node-000001"), BERTH_NAMEIDX_NONE);
    free(names);
}

/* Removal (the kube session's node index: nodes activated and retired)
 * closes up each run: every name left is found, every removed one is not,
 * at every step, in a table kept small so runs are long. */
static void test_remove(void **state)
{
    (void)state;
    enum { M = 3000 };
    static char names[M][16];
    static uint8_t in[M];
    berth_nameidx x;
    berth_nameidx_init(&x);
    assert_int_equal(berth_nameidx_remove(&x, "a", BERTH_NAMEIDX_NONE), BERTH_NAMEIDX_NONE);
    assert_int_equal(berth_nameidx_reserve(&x, M), 0);
    uint32_t cap = x.cap;
    assert_true(cap >= 2 * M);
    for (uint32_t i = 0; i < M; i++) {
        snprintf(names[i], sizeof names[i], "n%u", i);
        assert_int_equal(berth_nameidx_add(&x, names[i], i, NULL), 0);
        in[i] = 1;
    }
    assert_int_equal(x.cap, cap); /* reserved: no growth */
    uint64_t r = 88172645463325252ull;
    uint32_t live = M;
    for (int step = 0; step < 20000; step++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        uint32_t i = (uint32_t)(r % M);
        if (in[i]) {
            /* the wrong id leaves it */
            assert_int_equal(berth_nameidx_remove(&x, names[i], i + 1), BERTH_NAMEIDX_NONE);
            assert_int_equal(berth_nameidx_remove(&x, names[i], i), i);
            in[i] = 0, live--;
        } else {
            assert_int_equal(berth_nameidx_add(&x, names[i], i, NULL), 0);
            in[i] = 1, live++;
        }
        assert_int_equal(x.n, live);
        if (step % 1000 == 0)
            for (uint32_t j = 0; j < M; j++)
                assert_int_equal(berth_nameidx_find(&x, names[j]), in[j] ? j : BERTH_NAMEIDX_NONE);
    }
    for (uint32_t j = 0; j < M; j++)
        assert_int_equal(berth_nameidx_find(&x, names[j]), in[j] ? j : BERTH_NAMEIDX_NONE);
    assert_int_equal(berth_nameidx_remove(&x, NULL, 0), BERTH_NAMEIDX_NONE);
    /* cleared: empty, its slots and key kept, filled again */
    unsigned char key[BERTH_NAMEIDX_KEY];
    memcpy(key, x.key, sizeof key);
    berth_nameidx_clear(&x);
    assert_int_equal(x.n, 0);
    assert_int_equal(x.cap, cap);
    assert_memory_equal(x.key, key, sizeof key);
    for (uint32_t j = 0; j < M; j++)
        assert_int_equal(berth_nameidx_find(&x, names[j]), BERTH_NAMEIDX_NONE);
    for (uint32_t j = 0; j < M; j++)
        assert_int_equal(berth_nameidx_add(&x, names[j], M - j, NULL), 0);
    for (uint32_t j = 0; j < M; j++)
        assert_int_equal(berth_nameidx_find(&x, names[j]), M - j);
    berth_nameidx_free(&x);
}

static buf b;

/* 20,000 Nodes named to share one slot under FNV-1a (the kube session's
 * own node index hashed with it until it used the keyed index): a session
 * over them finds every node, through runs as short as any names give. */
static void test_kube_session_hostile_nodes(void **state)
{
    (void)state;
    char *names = hostile_names(FLOOD, FLOOD_BITS);
    assert_non_null(names);
    b.n = 0;
    add(&b, "apiVersion: v1\nkind: NodeList\nmetadata: {resourceVersion: \"9\"}\nitems:\n");
    for (uint32_t i = 0; i < FLOOD; i++)
        add(&b, "- metadata: {name: %s, managedFields: []}\n"
                "  status: {allocatable: {cpu: \"4\", memory: 8Gi, pods: \"110\"}}\n",
            names + (size_t)i * 16);
    add(&b, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: d}\n"
            "spec: {nodeName: %s, containers: [{name: c, resources: {requests: {cpu: 100m}}}]}\n",
        names + (size_t)(FLOOD / 2) * 16);
    berth_kcluster k;
    berth_kube_init(&k);
    berth_error e;
    berth_error_clear(&e);
    berth_source src;
    assert_int_equal(berth_doc_load_buffer(&k.arena, "n.yaml", b.s, b.n, &src, &e), 0);
    assert_int_equal(berth_kube_load(&k, &src, 1, &e), 0);
    assert_int_equal(k.nnodes, FLOOD);
    kube_sched s;
    assert_int_equal(kube_sched_init(&s, &k, NULL, 0), 0);
    uint32_t run = berth_nameidx_longest_run(&s.node_idx);
    print_message("session: %u nodes, %u slots, longest run %u\n", s.node_idx.n, s.node_idx.cap,
                  run);
    assert_true(run < 200);
    for (uint32_t i = 0; i < FLOOD; i++) {
        const char *nm = names + (size_t)i * 16;
        uint32_t n = kube_node_by_name(&s, nm);
        assert_true(n < k.nnodes);
        assert_string_equal(k.nodes[n].name, nm);
    }
    /* the bound pod was found on its node */
    uint32_t n = kube_node_by_name(&s, names + (size_t)(FLOOD / 2) * 16);
    assert_int_equal(s.plist[n].n, 1);
    assert_int_equal(kube_node_by_name(&s, "absent"), BERTH_KUBE_NONE);
    kube_sched_free(&s);
    berth_kube_free(&k);
    free(names);
}

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
        cmocka_unit_test(test_remove),
        cmocka_unit_test(test_kube_session_hostile_nodes),
        cmocka_unit_test(test_load_50k_claims),
        cmocka_unit_test(test_disrupt_duplicates),
        cmocka_unit_test(test_autoscale_duplicates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
