/* test_hash.c - the keyed hash of the input-keyed tables (berth/hash.h,
 * core/hash.c) and two of those tables under a flood of inputs built to
 * collide under the unkeyed hash berth used before.
 *
 * The hash: SipHash-2-4's published test vector (key 00..0f, message
 * 00..0e), one key gives one value for the same bytes, two fresh keys
 * give different values, and every length and byte counts; keys of
 * several strings (berth_hash_keyed_then) keep each string and its place.
 *
 * The flood: old_unkeyed_hash below is the multiply / xor-shift hash of
 * berth/hash.h before it was keyed. Flipping bit 63 of one 8-byte word
 * survives its odd multiplication unchanged, its `h ^= h >> 32` copies it
 * to bit 31, and flipping bits 63 and 31 of the next word cancels both:
 * each 16-byte block has two forms with the same state, so FLOOD_BLOCKS
 * blocks give 2^FLOOD_BLOCKS strings of one hash (checked here). Fed as
 * taint keys to the hard-taint sets (kube/taintsets.c, one set per key)
 * and as nodeSelector keys to the label columns (kube/labelcols.c, one
 * column per key), they must leave no run of used slots longer than
 * FLOOD_RUN (a handful is typical; with the unkeyed hash the run is every
 * entry), and every lookup must still find its own entry. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "berth/hash.h"
#include "berth/kube.h"
#include "berth/labels.h"
#include "berth/pipeline.h"
#include "kube/labelcols.h"
#include "kube/taintsets.h"

#define FLOOD_BLOCKS 12u                    /* 16 bytes each */
#define FLOOD (1u << FLOOD_BLOCKS)          /* 4,096 strings */
#define FLOOD_LEN (16u * FLOOD_BLOCKS)      /* 192 bytes, no NUL inside */
#define FLOOD_RUN 200u

/* berth_hash_bytes as it was (berth/hash.h before the key) */
static uint64_t old_unkeyed_hash(const char *s, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n, w;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    w = 0;
    memcpy(&w, s + i, n - i);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 29;
    return h;
}

/* FLOOD strings of FLOOD_LEN bytes (+ NUL), FLOOD_LEN + 1 apart: string i
 * takes block b's second form where bit b of i is set. The flipped bits
 * are bit 7 of bytes 7 (bit 63 of the first word, little-endian), 11 and
 * 15 (bits 31 and 63 of the second): letters become bytes >= 0x80. */
static char *flood_strings(void)
{
    char *out = malloc((size_t)FLOOD * (FLOOD_LEN + 1));
    assert_non_null(out);
    for (uint32_t i = 0; i < FLOOD; i++) {
        char *s = out + (size_t)i * (FLOOD_LEN + 1);
        for (uint32_t j = 0; j < FLOOD_LEN; j++)
            s[j] = (char)('a' + (j * 7 + j / 16) % 26);
        s[FLOOD_LEN] = 0;
        for (uint32_t b = 0; b < FLOOD_BLOCKS; b++)
            if (i >> b & 1) {
                unsigned char *blk = (unsigned char *)s + 16 * b;
                blk[7] ^= 0x80;
                blk[8 + 3] ^= 0x80;
                blk[8 + 7] ^= 0x80;
            }
    }
    return out;
}

static const char *flood_at(const char *f, uint32_t i)
{
    return f + (size_t)i * (FLOOD_LEN + 1);
}

/* the flood does collide, fully, under the old hash */
static void check_old_collides(const char *f)
{
    uint64_t h0 = old_unkeyed_hash(flood_at(f, 0), FLOOD_LEN);
    for (uint32_t i = 1; i < FLOOD; i++) {
        assert_int_equal(strlen(flood_at(f, i)), FLOOD_LEN);
        assert_true(old_unkeyed_hash(flood_at(f, i), FLOOD_LEN) == h0);
    }
    assert_true(strcmp(flood_at(f, 0), flood_at(f, FLOOD - 1)) != 0);
}

static void test_siphash_vector(void **state)
{
    (void)state;
    berth_hashkey k;
    unsigned char msg[15];
    for (unsigned i = 0; i < sizeof k.b; i++)
        k.b[i] = (unsigned char)i;
    for (unsigned i = 0; i < sizeof msg; i++)
        msg[i] = (unsigned char)i;
    /* SipHash-2-4 (Aumasson, Bernstein 2012, appendix A) */
    assert_true(berth_hash_keyed(&k, msg, sizeof msg) == 0xa129ca6149be45e5ull);
    assert_true(berth_hash_keyed(&k, msg, 0) == 0x726fdb47dd0e0e31ull);
}

static void test_keys(void **state)
{
    (void)state;
    berth_hashkey a, b;
    berth_hashkey_new(&a);
    berth_hashkey_new(&b);
    assert_memory_not_equal(a.b, b.b, sizeof a.b);
    const char *words[] = {"", "a", "b", "ab", "ba", "kubernetes.io/hostname",
                           "topology.kubernetes.io/zone", "app\x1fweb"};
    const uint32_t nw = sizeof words / sizeof *words;
    uint32_t differ = 0;
    for (uint32_t i = 0; i < nw; i++) {
        size_t n = strlen(words[i]);
        uint64_t ha = berth_hash_keyed(&a, words[i], n);
        /* one key: one value, from any copy of the bytes */
        char copy[64];
        memcpy(copy, words[i], n);
        assert_true(berth_hash_keyed(&a, copy, n) == ha);
        berth_hashkey a2 = a;
        assert_true(berth_hash_keyed(&a2, words[i], n) == ha);
        differ += berth_hash_keyed(&b, words[i], n) != ha;
        /* every word hashes apart under one key, and so does a prefix */
        for (uint32_t j = 0; j < i; j++)
            assert_true(berth_hash_keyed(&a, words[j], strlen(words[j])) != ha);
        if (n)
            assert_true(berth_hash_keyed(&a, words[i], n - 1) != ha);
    }
    /* two keys: other values (all 8 equal by chance: 2^-512) */
    assert_true(differ > 0);
    /* the flood's strings are no family under the key: no two of the
     * first 256 share their low 32 bits by more than chance would */
    char *f = flood_strings();
    check_old_collides(f);
    uint32_t same = 0;
    for (uint32_t i = 0; i < 256; i++)
        for (uint32_t j = 0; j < i; j++)
            same += (uint32_t)berth_hash_keyed(&a, flood_at(f, i), FLOOD_LEN) ==
                    (uint32_t)berth_hash_keyed(&a, flood_at(f, j), FLOOD_LEN);
    assert_true(same <= 1);
    free(f);
}

/* Keys of several strings (berth_hash_keyed_then: the workload
 * expansion's (kind, namespace, name), the volume tables' (namespace,
 * name), image names by their tag): stable under one key, every string and
 * its place count, NULL is "", and another key gives other values. */
static void test_keyed_then(void **state)
{
    (void)state;
    berth_hashkey k1, k2;
    berth_hashkey_new(&k1);
    berth_hashkey_new(&k2);
    uint64_t ab = berth_hash_keyed_then(berth_hash_keyed_then(0, &k1, "a"), &k1, "b");
    assert_true(ab == berth_hash_keyed_then(berth_hash_keyed_then(0, &k1, "a"), &k1, "b"));
    assert_true(ab != berth_hash_keyed_then(berth_hash_keyed_then(0, &k1, "b"), &k1, "a"));
    assert_true(ab != berth_hash_keyed_then(berth_hash_keyed_then(0, &k1, "a"), &k1, "c"));
    assert_true(ab != berth_hash_keyed_then(berth_hash_keyed_then(0, &k1, "ab"), &k1, ""));
    assert_true(ab != berth_hash_keyed_then(berth_hash_keyed_then(0, &k2, "a"), &k2, "b"));
    assert_true(berth_hash_keyed_then(0, &k1, NULL) == berth_hash_keyed_then(0, &k1, ""));
}

static void test_taintsets_flood(void **state)
{
    (void)state;
    char *f = flood_strings();
    check_old_collides(f);
    kube_taintsets *ts = NULL;
    /* one set per key: the same value and effect, the keys collide */
    for (uint32_t i = 0; i < FLOOD; i++) {
        berth_taint t = {flood_at(f, i), "v", BERTH_EFFECT_NOSCHEDULE};
        uint32_t id = 0;
        assert_int_equal(kube_taintsets_id(&ts, &t, 1, &id), 0);
        assert_int_equal(id, i + 1);
    }
    assert_int_equal(kube_taintsets_count(ts), FLOOD);
    uint32_t run = kube_taintsets_longest_run(ts);
    if (run > FLOOD_RUN)
        fail_msg("taint sets: a run of %u used slots for %u sets", run, FLOOD);
    /* exact: each list finds its own set again, the set holds its key, and
     * a list differing in the value or effect is another set */
    for (uint32_t i = 0; i < FLOOD; i++) {
        berth_taint t = {flood_at(f, i), "v", BERTH_EFFECT_NOSCHEDULE};
        uint32_t id = 0;
        assert_int_equal(kube_taintsets_id(&ts, &t, 1, &id), 0);
        assert_int_equal(id, i + 1);
        const berth_taint *got = kube_taintsets_first_untolerated(ts, id, NULL, 0);
        assert_non_null(got);
        assert_string_equal(got->key, flood_at(f, i));
    }
    berth_taint other = {flood_at(f, 5), "w", BERTH_EFFECT_NOSCHEDULE};
    uint32_t id = 0;
    assert_int_equal(kube_taintsets_id(&ts, &other, 1, &id), 0);
    assert_int_equal(id, FLOOD + 1);
    kube_taintsets_free(ts);
    free(f);
}

#define LC_NODES 64u

static void test_labelcols_flood(void **state)
{
    (void)state;
    char *f = flood_strings();
    check_old_collides(f);
    /* node j carries the label (key FLOOD / LC_NODES * j) = "yes" */
    static berth_knode nodes[LC_NODES];
    static berth_label labels[LC_NODES];
    const uint32_t step = FLOOD / LC_NODES;
    for (uint32_t j = 0; j < LC_NODES; j++) {
        memset(&nodes[j], 0, sizeof nodes[j]);
        nodes[j].name = "n";
        labels[j] = (berth_label){flood_at(f, step * j), "yes"};
        nodes[j].labels = (berth_labels){&labels[j], 1};
    }
    berth_hashkey key;
    berth_hashkey_new(&key);
    kube_labelcols *c;
    assert_int_equal(kube_labelcols_open(&c, nodes, LC_NODES, &key), 0);
    uint32_t list[LC_NODES];
    uint8_t v[LC_NODES];
    for (uint32_t j = 0; j < LC_NODES; j++)
        list[j] = j;
    /* one pod selecting on every key: a column each, no node matches all */
    berth_label *sel = malloc(FLOOD * sizeof *sel);
    assert_non_null(sel);
    for (uint32_t i = 0; i < FLOOD; i++)
        sel[i] = (berth_label){flood_at(f, i), "yes"};
    berth_kpod p;
    memset(&p, 0, sizeof p);
    p.node_selector = (berth_labels){sel, FLOOD};
    memset(v, BERTH_FIT, sizeof v);
    assert_int_equal(kube_labelcols_affinity(c, &p, list, LC_NODES, v), 0);
    for (uint32_t j = 0; j < LC_NODES; j++)
        assert_int_equal(v[j], BERTH_UNRESOLVABLE);
    assert_int_equal(kube_labelcols_ncols(c), FLOOD);
    uint32_t run = kube_labelcols_longest_run(c);
    if (run > FLOOD_RUN)
        fail_msg("label columns: a run of %u used slots for %u keys", run, FLOOD);
    /* exact: a pod selecting one key finds that key's column (no column
     * added): only the node carrying it matches */
    for (uint32_t i = 0; i < FLOOD; i++) {
        berth_label one = {flood_at(f, i), "yes"};
        p.node_selector = (berth_labels){&one, 1};
        memset(v, BERTH_FIT, sizeof v);
        assert_int_equal(kube_labelcols_affinity(c, &p, list, LC_NODES, v), 0);
        for (uint32_t j = 0; j < LC_NODES; j++)
            if ((v[j] == BERTH_FIT) != (i == step * j))
                fail_msg("key %u: node %u got %u", i, j, v[j]);
    }
    assert_int_equal(kube_labelcols_ncols(c), FLOOD);
    kube_labelcols_close(c);
    free(sel);
    free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_siphash_vector),
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_keyed_then),
        cmocka_unit_test(test_taintsets_flood),
        cmocka_unit_test(test_labelcols_flood),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
