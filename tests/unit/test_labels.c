/* tests/unit/test_labels.c - label sets, selector operators (including
 * absent keys, empty and nothing selectors, Gt/Lt on non-integers),
 * requirement validation and label key/value rules. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "berth/error.h"
#include "berth/labels.h"

/* A node's labels, deliberately unsorted. */
static berth_label node_items[] = {
    {"topology.kubernetes.io/zone", "zone-a"},
    {"kubernetes.io/hostname", "node-1"},
    {"cores", "64"},
    {"gen", "-3"},
    {"big", "9223372036854775807"},
    {"huge", "9223372036854775808"},
    {"ver", "1.5"},
    {"empty", ""},
    {"disk", "ssd"},
};
static berth_labels node;

static int setup(void **state)
{
    (void)state;
    node.items = node_items;
    node.n = sizeof node_items / sizeof node_items[0];
    return berth_labels_sort(&node) == 0 ? 0 : -1;
}

static bool match1(const char *key, berth_sel_op op, const char **values,
                   uint32_t n)
{
    berth_requirement r = {key, op, values, n};
    return berth_requirement_matches(&r, &node);
}

static void test_sort_and_get(void **state)
{
    (void)state;
    for (uint32_t i = 1; i < node.n; i++)
        assert_true(strcmp(node.items[i - 1].key, node.items[i].key) < 0);
    assert_string_equal(berth_labels_get(&node, "disk"), "ssd");
    assert_string_equal(berth_labels_get(&node, "topology.kubernetes.io/zone"), "zone-a");
    assert_string_equal(berth_labels_get(&node, "empty"), "");
    assert_null(berth_labels_get(&node, "nope"));
    assert_null(berth_labels_get(&node, "Disk"));
    assert_null(berth_labels_get(&node, ""));
    berth_labels none = {NULL, 0};
    assert_null(berth_labels_get(&none, "disk"));
    assert_int_equal(berth_labels_sort(&none), 0);

    berth_label dup_items[] = {{"b", "1"}, {"a", "2"}, {"b", "3"}};
    berth_labels dup = {dup_items, 3};
    assert_int_equal(berth_labels_sort(&dup), BERTH_EINVAL);
    assert_string_equal(dup.items[0].key, "a");
    /* stable: the first "b" stays first */
    assert_string_equal(dup.items[1].value, "1");
}

static void test_in_notin(void **state)
{
    (void)state;
    const char *ssd[] = {"ssd"}, *hdd_ssd[] = {"hdd", "ssd"}, *hdd[] = {"hdd"};
    const char *emptyv[] = {""};
    assert_true(match1("disk", BERTH_SEL_IN, ssd, 1));
    assert_true(match1("disk", BERTH_SEL_IN, hdd_ssd, 2));
    assert_false(match1("disk", BERTH_SEL_IN, hdd, 1));
    assert_false(match1("absent", BERTH_SEL_IN, ssd, 1));
    assert_false(match1("absent", BERTH_SEL_IN, emptyv, 1));
    assert_true(match1("empty", BERTH_SEL_IN, emptyv, 1));
    assert_false(match1("disk", BERTH_SEL_IN, NULL, 0));

    assert_false(match1("disk", BERTH_SEL_NOTIN, ssd, 1));
    assert_false(match1("disk", BERTH_SEL_NOTIN, hdd_ssd, 2));
    assert_true(match1("disk", BERTH_SEL_NOTIN, hdd, 1));
    assert_true(match1("absent", BERTH_SEL_NOTIN, ssd, 1));   /* absent key */
    assert_false(match1("empty", BERTH_SEL_NOTIN, emptyv, 1));
    assert_true(match1("disk", BERTH_SEL_NOTIN, NULL, 0));
}

static void test_exists(void **state)
{
    (void)state;
    assert_true(match1("disk", BERTH_SEL_EXISTS, NULL, 0));
    assert_true(match1("empty", BERTH_SEL_EXISTS, NULL, 0));
    assert_false(match1("absent", BERTH_SEL_EXISTS, NULL, 0));
    assert_false(match1("disk", BERTH_SEL_DOESNOTEXIST, NULL, 0));
    assert_false(match1("empty", BERTH_SEL_DOESNOTEXIST, NULL, 0));
    assert_true(match1("absent", BERTH_SEL_DOESNOTEXIST, NULL, 0));
}

static void test_gt_lt(void **state)
{
    (void)state;
    const char *v32[] = {"32"}, *v64[] = {"64"}, *v100[] = {"100"};
    const char *vneg[] = {"-5"}, *vplus[] = {"+63"}, *vbad[] = {"abc"};
    const char *vfloat[] = {"1.5"}, *v0[] = {"0"}, *two[] = {"1", "2"};
    const char *vmin[] = {"-9223372036854775808"}, *vover[] = {"9223372036854775808"};
    const char *vspace[] = {" 1"}, *vempty[] = {""}, *vsign[] = {"-"};

    assert_true(match1("cores", BERTH_SEL_GT, v32, 1));
    assert_false(match1("cores", BERTH_SEL_GT, v64, 1));     /* strict */
    assert_false(match1("cores", BERTH_SEL_LT, v64, 1));     /* strict */
    assert_true(match1("cores", BERTH_SEL_LT, v100, 1));
    assert_true(match1("cores", BERTH_SEL_GT, vplus, 1));
    assert_true(match1("gen", BERTH_SEL_GT, vneg, 1));       /* -3 > -5 */
    assert_true(match1("gen", BERTH_SEL_LT, v0, 1));
    assert_true(match1("big", BERTH_SEL_GT, v100, 1));
    assert_true(match1("gen", BERTH_SEL_GT, vmin, 1));
    /* absent or non-integer label: false for both */
    assert_false(match1("absent", BERTH_SEL_GT, v0, 1));
    assert_false(match1("absent", BERTH_SEL_LT, v0, 1));
    assert_false(match1("disk", BERTH_SEL_GT, v0, 1));
    assert_false(match1("disk", BERTH_SEL_LT, v0, 1));
    assert_false(match1("ver", BERTH_SEL_GT, v0, 1));
    assert_false(match1("ver", BERTH_SEL_LT, v100, 1));
    assert_false(match1("empty", BERTH_SEL_LT, v100, 1));
    assert_false(match1("huge", BERTH_SEL_GT, v0, 1));       /* overflows int64 */
    /* bad requirement values: false */
    assert_false(match1("cores", BERTH_SEL_GT, vbad, 1));
    assert_false(match1("cores", BERTH_SEL_LT, vfloat, 1));
    assert_false(match1("cores", BERTH_SEL_GT, vover, 1));
    assert_false(match1("cores", BERTH_SEL_GT, vspace, 1));
    assert_false(match1("cores", BERTH_SEL_GT, vempty, 1));
    assert_false(match1("cores", BERTH_SEL_GT, vsign, 1));
    assert_false(match1("cores", BERTH_SEL_GT, two, 2));
    assert_false(match1("cores", BERTH_SEL_GT, NULL, 0));
}

static void test_selectors(void **state)
{
    (void)state;
    const char *zone[] = {"zone-a", "zone-b"}, *ssd[] = {"ssd"}, *v32[] = {"32"};
    berth_requirement reqs[] = {
        {"topology.kubernetes.io/zone", BERTH_SEL_IN, zone, 2},
        {"disk", BERTH_SEL_IN, ssd, 1},           /* a matchLabels entry */
        {"gpu", BERTH_SEL_DOESNOTEXIST, NULL, 0},
        {"cores", BERTH_SEL_GT, v32, 1},
    };
    berth_selector all = {reqs, 4, 0};
    assert_true(berth_selector_matches(&all, &node));

    berth_selector empty = {NULL, 0, 0};
    assert_true(berth_selector_matches(&empty, &node));
    berth_labels none = {NULL, 0};
    assert_true(berth_selector_matches(&empty, &none));

    berth_selector nothing = {NULL, 0, 1};
    assert_false(berth_selector_matches(&nothing, &node));
    assert_false(berth_selector_matches(&nothing, &none));
    berth_selector nothing2 = {reqs, 4, 1};
    assert_false(berth_selector_matches(&nothing2, &node));

    const char *hdd[] = {"hdd"};
    berth_requirement reqs2[] = {
        {"disk", BERTH_SEL_EXISTS, NULL, 0},
        {"disk", BERTH_SEL_IN, hdd, 1},
    };
    berth_selector one_fails = {reqs2, 2, 0};
    assert_false(berth_selector_matches(&one_fails, &node));
    one_fails.n = 1;
    assert_true(berth_selector_matches(&one_fails, &node));
    /* NotIn / DoesNotExist match an empty label set */
    berth_requirement reqs3[] = {
        {"disk", BERTH_SEL_NOTIN, hdd, 1},
        {"disk", BERTH_SEL_DOESNOTEXIST, NULL, 0},
    };
    berth_selector neg = {reqs3, 2, 0};
    assert_true(berth_selector_matches(&neg, &none));
    assert_false(berth_selector_matches(&neg, &node));
}

static void test_op_parse(void **state)
{
    (void)state;
    assert_int_equal(berth_sel_op_parse("In"), BERTH_SEL_IN);
    assert_int_equal(berth_sel_op_parse("NotIn"), BERTH_SEL_NOTIN);
    assert_int_equal(berth_sel_op_parse("Exists"), BERTH_SEL_EXISTS);
    assert_int_equal(berth_sel_op_parse("DoesNotExist"), BERTH_SEL_DOESNOTEXIST);
    assert_int_equal(berth_sel_op_parse("Gt"), BERTH_SEL_GT);
    assert_int_equal(berth_sel_op_parse("Lt"), BERTH_SEL_LT);
    assert_int_equal(berth_sel_op_parse("in"), -1);
    assert_int_equal(berth_sel_op_parse("Equals"), -1);
    assert_int_equal(berth_sel_op_parse(""), -1);
    assert_int_equal(berth_sel_op_parse(NULL), -1);
    for (int op = BERTH_SEL_IN; op <= BERTH_SEL_LT; op++)
        assert_int_equal(berth_sel_op_parse(berth_sel_op_name((berth_sel_op)op)), op);
    assert_string_equal(berth_sel_op_name((berth_sel_op)99), "?");
}

static void expect_invalid(berth_requirement r, const char *why_part)
{
    const char *why = NULL;
    assert_int_equal(berth_requirement_validate(&r, &why), BERTH_EINVAL);
    assert_non_null(why);
    if (!strstr(why, why_part))
        print_error("why \"%s\" lacks \"%s\"\n", why, why_part);
    assert_non_null(strstr(why, why_part));
}

static void test_validate(void **state)
{
    (void)state;
    const char *a[] = {"a"}, *ab[] = {"a", "b"}, *n5[] = {"5"}, *neg[] = {"-1"};
    const char *x[] = {"x"}, *bad[] = {"a b"};
    const char *why = "unset";
    berth_requirement ok[] = {
        {"disk", BERTH_SEL_IN, a, 1},
        {"disk", BERTH_SEL_NOTIN, ab, 2},
        {"example.com/disk", BERTH_SEL_EXISTS, NULL, 0},
        {"disk", BERTH_SEL_DOESNOTEXIST, NULL, 0},
        {"cores", BERTH_SEL_GT, n5, 1},
        {"cores", BERTH_SEL_LT, n5, 1},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        assert_int_equal(berth_requirement_validate(&ok[i], &why), 0);
        assert_null(why);
    }
    assert_int_equal(berth_requirement_validate(&ok[0], NULL), 0);

    expect_invalid((berth_requirement){"disk", BERTH_SEL_IN, NULL, 0}, "at least one");
    expect_invalid((berth_requirement){"disk", BERTH_SEL_NOTIN, NULL, 0}, "at least one");
    expect_invalid((berth_requirement){"disk", BERTH_SEL_EXISTS, a, 1}, "no values");
    expect_invalid((berth_requirement){"disk", BERTH_SEL_DOESNOTEXIST, a, 1}, "no values");
    expect_invalid((berth_requirement){"cores", BERTH_SEL_GT, NULL, 0}, "exactly one");
    expect_invalid((berth_requirement){"cores", BERTH_SEL_LT, ab, 2}, "exactly one");
    expect_invalid((berth_requirement){"cores", BERTH_SEL_GT, x, 1}, "integer");
    expect_invalid((berth_requirement){"cores", BERTH_SEL_GT, neg, 1}, "label value");
    expect_invalid((berth_requirement){"disk", BERTH_SEL_IN, bad, 1}, "label value");
    expect_invalid((berth_requirement){"bad key", BERTH_SEL_EXISTS, NULL, 0}, "label key");
    expect_invalid((berth_requirement){"", BERTH_SEL_EXISTS, NULL, 0}, "empty");
    expect_invalid((berth_requirement){"disk", (berth_sel_op)42, NULL, 0}, "operator");
    assert_int_equal(berth_requirement_validate(
                         &(berth_requirement){"disk", BERTH_SEL_IN, NULL, 0}, NULL),
                     BERTH_EINVAL);
}

static void test_label_keys(void **state)
{
    (void)state;
    static const char *const good[] = {
        "a", "A", "0", "disk", "MyName", "my.name", "123-abc", "a_b", "a-b.c_D",
        "kubernetes.io/hostname", "topology.kubernetes.io/zone",
        "example.com/MyName", "a/b", "nvidia.com/gpu.product",
        "node-role.kubernetes.io/control-plane",
        /* 63-char name */
        "abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghij123",
    };
    static const char *const bad[] = {
        "", "/", "a/", "/a", "a/b/c", "-a", "a-", ".a", "a.", "_a", "a_",
        "a b", "a:b", "Example.com/a", "exa_mple.com/a", "-example.com/a",
        "example-.com/a", "example..com/a", ".example.com/a", "example.com./a",
        "é",
        /* 64-char name */
        "abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghij1234",
    };
    const char *why;
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        why = "unset";
        if (!berth_label_key_valid(good[i], &why))
            print_error("key \"%s\" rejected: %s\n", good[i], why);
        assert_true(berth_label_key_valid(good[i], &why));
        assert_null(why);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why = NULL;
        if (berth_label_key_valid(bad[i], &why))
            print_error("key \"%s\" accepted\n", bad[i]);
        assert_false(berth_label_key_valid(bad[i], &why));
        assert_non_null(why);
        assert_false(berth_label_key_valid(bad[i], NULL));
    }
    assert_false(berth_label_key_valid(NULL, NULL));

    /* prefix up to 253 characters */
    char prefix[300];
    memset(prefix, 'a', sizeof prefix);
    for (int i = 50; i < 253; i += 51)
        prefix[i] = '.';
    strcpy(prefix + 253, "/x");
    assert_true(berth_label_key_valid(prefix, NULL));
    memset(prefix, 'a', 254);
    strcpy(prefix + 254, "/x");
    assert_false(berth_label_key_valid(prefix, &why));
    assert_non_null(strstr(why, "prefix"));
}

static void test_label_values(void **state)
{
    (void)state;
    static const char *const good[] = {
        "", "a", "Z9", "ssd", "1.5", "v1.2.3-rc_1", "9223372036854775808",
        "abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghij123",
    };
    static const char *const bad[] = {
        "-1", "+1", "a ", " a", "a/b", "-", ".", "a.", "_a", "a\n",
        "abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghij1234",
    };
    const char *why;
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        why = "unset";
        assert_true(berth_label_value_valid(good[i], &why));
        assert_null(why);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why = NULL;
        if (berth_label_value_valid(bad[i], &why))
            print_error("value \"%s\" accepted\n", bad[i]);
        assert_false(berth_label_value_valid(bad[i], &why));
        assert_non_null(why);
    }
    assert_true(berth_label_value_valid(NULL, NULL));
}

/* Sets above the insertion sort's 16 items (core/labels.c sort_large):
 * sorted, stable among equal keys, duplicates reported, same order as the
 * small-set sort gives. */
static void test_sort_large(void **state)
{
    (void)state;
    enum { N = 1000 };
    static berth_label items[N];
    static char keys[N][16], vals[N][16];
    for (uint32_t i = 0; i < N; i++) {
        snprintf(keys[i], sizeof keys[i], "k%04u", (N - 1 - i) % 997); /* 3 keys twice */
        snprintf(vals[i], sizeof vals[i], "%u", i);
        items[i] = (berth_label){keys[i], vals[i]};
    }
    berth_labels l = {items, N};
    assert_int_equal(berth_labels_sort(&l), BERTH_EINVAL);
    for (uint32_t i = 1; i < N; i++) {
        int c = strcmp(items[i - 1].key, items[i].key);
        assert_true(c <= 0);
        if (c == 0) /* stable: the earlier item (smaller value) first */
            assert_true(atoi(items[i - 1].value) < atoi(items[i].value));
    }
    assert_string_equal(berth_labels_get(&l, "k0500"), "499");
    /* no duplicate: 0 */
    for (uint32_t i = 0; i < N; i++) {
        snprintf(keys[i], sizeof keys[i], "k%04u", (i * 7) % N);
        items[i] = (berth_label){keys[i], vals[i]};
    }
    assert_int_equal(berth_labels_sort(&l), 0);
    for (uint32_t i = 1; i < N; i++)
        assert_true(strcmp(items[i - 1].key, items[i].key) < 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sort_and_get),
        cmocka_unit_test(test_sort_large),
        cmocka_unit_test(test_in_notin),
        cmocka_unit_test(test_exists),
        cmocka_unit_test(test_gt_lt),
        cmocka_unit_test(test_selectors),
        cmocka_unit_test(test_op_parse),
        cmocka_unit_test(test_validate),
        cmocka_unit_test(test_label_keys),
        cmocka_unit_test(test_label_values),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
