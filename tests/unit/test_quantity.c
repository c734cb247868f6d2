/* tests/unit/test_quantity.c - berth_quantity: parsing (accepted values,
 * exact nano amounts, rejections and reasons), rounding, compare, format;
 * and the berth_resources vector built from quantities. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "berth/error.h"
#include "berth/quantity.h"
#include "berth/resources.h"

#define NANO ((__int128)1000000000)

static __int128 parse_ok(const char *s)
{
    berth_quantity q = {.nano = 12345};
    const char *why = "unset";
    int rc = berth_quantity_parse(s, &q, &why);
    if (rc != 0)
        print_error("parse(\"%s\") failed: %s\n", s, why ? why : "(null)");
    assert_int_equal(rc, 0);
    assert_null(why);
    return q.nano;
}

static void expect_nano(const char *s, __int128 nano)
{
    __int128 got = parse_ok(s);
    if (got != nano)
        print_error("parse(\"%s\"): got %lld nano, want %lld\n", s,
                    (long long)got, (long long)nano);
    assert_true(got == nano);
}

static void expect_reject(const char *s, const char *why_want)
{
    berth_quantity q = {.nano = 777};
    const char *why = NULL;
    int rc = berth_quantity_parse(s, &q, &why);
    if (rc != BERTH_EINVAL)
        print_error("parse(\"%s\") accepted\n", s);
    assert_int_equal(rc, BERTH_EINVAL);
    assert_true(q.nano == 0);
    assert_non_null(why);
    if (why_want && strcmp(why, why_want) != 0)
        print_error("parse(\"%s\"): why \"%s\", want \"%s\"\n", s, why, why_want);
    if (why_want)
        assert_string_equal(why, why_want);
}

static void test_plain_numbers(void **state)
{
    (void)state;
    expect_nano("0", 0);
    expect_nano("2", 2 * NANO);
    expect_nano("1.5", 1500000000);
    expect_nano("+1", NANO);
    expect_nano("-2", -2 * NANO);
    expect_nano(".5", 500000000);
    expect_nano("1.", NANO);
    expect_nano("0.1", 100000000);
    expect_nano("007", 7 * NANO);
    expect_nano("-0", 0);
    expect_nano("0.000", 0);
    expect_nano("123456789", 123456789 * NANO);
    expect_nano("9223372036854775807", (__int128)INT64_MAX * NANO);
    expect_nano("-9223372036854775807", -(__int128)INT64_MAX * NANO);
    /* leading zeros do not count towards range */
    expect_nano("0000000000000000000000000000000000000000001", NANO);
}

static void test_decimal_suffixes(void **state)
{
    (void)state;
    expect_nano("500m", 500000000);
    expect_nano("100m", 100000000);
    expect_nano("1n", 1);
    expect_nano("1u", 1000);
    expect_nano("1k", 1000 * NANO);
    expect_nano("1M", 1000000 * NANO);
    expect_nano("1G", 1000000000 * NANO);
    expect_nano("2T", 2000000000000 * NANO);
    expect_nano("1P", 1000000000000000 * NANO);
    expect_nano("1E", 1000000000000000000 * NANO);
    expect_nano("1.5G", 1500000000 * NANO);
    expect_nano("0.5m", 500000);
    expect_nano("1.G", 1000000000 * NANO);
    expect_nano("-100m", -100000000);
}

static void test_binary_suffixes(void **state)
{
    (void)state;
    expect_nano("1Ki", 1024 * NANO);
    expect_nano("128Mi", 134217728 * NANO);
    expect_nano("224Gi", 240518168576 * NANO);
    expect_nano("0.5Gi", 536870912 * NANO);
    expect_nano("1.5Gi", 1610612736 * NANO);
    expect_nano("1Ti", ((__int128)1 << 40) * NANO);
    expect_nano("1Pi", ((__int128)1 << 50) * NANO);
    expect_nano("7Ei", ((__int128)7 << 60) * NANO);
    /* 0.1Ki = 102.4 exactly; 0.001Ki = 1.024 */
    expect_nano("0.1Ki", 102400000000);
    expect_nano("0.001Ki", 1024000000);
    /* 1e-10 Ki = 102.4e-9 -> 102.4n -> rounds up to 103n */
    expect_nano("0.0000000001Ki", 103);
    expect_nano("-0.0000000001Ki", -103);
}

static void test_exponents(void **state)
{
    (void)state;
    expect_nano("1e3", 1000 * NANO);
    expect_nano("1E3", 1000 * NANO);
    expect_nano("1e+3", 1000 * NANO);
    expect_nano("1e-3", 1000000);
    expect_nano("1.5e2", 150 * NANO);
    expect_nano("1e0", NANO);
    expect_nano("1e03", 1000 * NANO);
    expect_nano("25e-1", 2500000000);
    expect_nano("1e-9", 1);
    expect_nano("1e-10", 1);          /* rounds up */
    expect_nano("1e-999999999999", 1);
    expect_nano("0e999999999999", 0);
    expect_nano("-1e-10", -1);        /* away from zero */
    expect_nano("1e18", 1000000000000000000 * NANO);
}

static void test_rounding_to_nano(void **state)
{
    (void)state;
    expect_nano("0.0000000001", 1);
    expect_nano("0.0000000010", 1);
    expect_nano("0.0000000011", 2);
    expect_nano("1.0000000000000000000000000001", NANO + 1);
    expect_nano("1.5n", 2);
    expect_nano("-1.5n", -2);
    expect_nano("0.1n", 1);
    expect_nano("1.000000000000000000000000000000000000000000000000", NANO);
    expect_nano("0.0001u", 1);
}

static void test_rejects(void **state)
{
    (void)state;
    expect_reject("", "empty");
    expect_reject(NULL, "empty");
    expect_reject(" 1", "invalid number");
    expect_reject("1 ", "invalid number");
    expect_reject("1.5.5", "invalid number");
    expect_reject("1Kb", "unknown suffix");
    expect_reject("1gi", "unknown suffix");
    expect_reject("1ki", "unknown suffix");
    expect_reject("1K", "unknown suffix");
    expect_reject("1i", "unknown suffix");
    expect_reject("0.1mi", "unknown suffix");
    expect_reject("1em", "unknown suffix");
    expect_reject("abc", "invalid number");
    expect_reject("1e", "invalid exponent");
    expect_reject("1e-", "invalid exponent");
    expect_reject("1e+", "invalid exponent");
    expect_reject("1e3.5", "invalid exponent");
    expect_reject("1e3m", "invalid exponent");
    expect_reject("1e+-3", "invalid exponent");
    expect_reject("e3", "invalid number");
    expect_reject("m", "invalid number");
    expect_reject("Ki", "invalid number");
    expect_reject(".", "invalid number");
    expect_reject("+", "invalid number");
    expect_reject("-", "invalid number");
    expect_reject("--1", "invalid number");
    expect_reject("+-1", "invalid number");
    expect_reject("1Ki1", "invalid number");
    expect_reject("1Mi-", "invalid number");
    expect_reject("0x10", "invalid number");
    expect_reject("1,5", "invalid number");
    expect_reject("1+1.0M", "invalid number");
    expect_reject("1_000", "invalid number");
    expect_reject("1\n", "invalid number");
    expect_reject("1..", "invalid number");
    expect_reject("..5", "invalid number");
}

static void test_out_of_range(void **state)
{
    (void)state;
    expect_reject("9223372036854775808", "value out of range");
    expect_reject("-9223372036854775808", "value out of range");
    expect_reject("8Ei", "value out of range");
    expect_reject("10E", "value out of range");
    expect_reject("1e19", "value out of range");
    expect_reject("1e999999999999", "value out of range");
    expect_reject("99999999999999999999999999999999999999999999999", "value out of range");
    expect_reject("9223372036854775807.0000000001", "value out of range");
    expect_nano("9223372036854775807.000000000", (__int128)INT64_MAX * NANO);
    expect_nano("8191Pi", ((__int128)8191 << 50) * NANO);
}

static void test_null_args(void **state)
{
    (void)state;
    berth_quantity q;
    assert_int_equal(berth_quantity_parse("1", NULL, NULL), BERTH_EINVAL);
    assert_int_equal(berth_quantity_parse("x", &q, NULL), BERTH_EINVAL);
    assert_int_equal(berth_quantity_parse("1", &q, NULL), 0);
}

static berth_quantity q_of(const char *s)
{
    berth_quantity q;
    assert_int_equal(berth_quantity_parse(s, &q, NULL), 0);
    return q;
}

static void test_value_and_milli(void **state)
{
    (void)state;
    assert_int_equal(berth_quantity_milli(q_of("1.5")), 1500);
    assert_int_equal(berth_quantity_milli(q_of("500m")), 500);
    assert_int_equal(berth_quantity_milli(q_of("1n")), 1);
    assert_int_equal(berth_quantity_milli(q_of("-1n")), -1);
    assert_int_equal(berth_quantity_milli(q_of("0")), 0);
    assert_int_equal(berth_quantity_milli(q_of("2")), 2000);
    assert_int_equal(berth_quantity_milli(q_of("1.0001")), 1001);
    assert_int_equal(berth_quantity_value(q_of("224Gi")), 240518168576);
    assert_int_equal(berth_quantity_value(q_of("0.5Gi")), 536870912);
    assert_int_equal(berth_quantity_value(q_of("1e3")), 1000);
    assert_int_equal(berth_quantity_value(q_of("100m")), 1);
    assert_int_equal(berth_quantity_value(q_of("1.2")), 2);
    assert_int_equal(berth_quantity_value(q_of("-1.2")), -2);
    assert_int_equal(berth_quantity_value(q_of("1G")), 1000000000);
    assert_int_equal(berth_quantity_value(q_of("9223372036854775807")), INT64_MAX);
    assert_int_equal(berth_quantity_value(q_of("-9223372036854775807")), -INT64_MAX);
    /* milli saturates */
    assert_int_equal(berth_quantity_milli(q_of("9223372036854775807")), INT64_MAX);
    assert_int_equal(berth_quantity_milli(q_of("-9223372036854775807")), INT64_MIN);
    assert_int_equal(berth_quantity_milli(q_of("9223372036854775.807")), INT64_MAX);
    assert_int_equal(berth_quantity_milli(q_of("9223372036854775.8071")), INT64_MAX);
    assert_true(berth_quantity_double(q_of("1.5")) == 1.5);
    assert_true(berth_quantity_double(q_of("-250m")) == -0.25);
}

static void test_cmp(void **state)
{
    (void)state;
    assert_int_equal(berth_quantity_cmp(q_of("1"), q_of("1000m")), 0);
    assert_int_equal(berth_quantity_cmp(q_of("1Ki"), q_of("1k")), 1);
    assert_int_equal(berth_quantity_cmp(q_of("1k"), q_of("1Ki")), -1);
    assert_int_equal(berth_quantity_cmp(q_of("1e3"), q_of("1k")), 0);
    assert_int_equal(berth_quantity_cmp(q_of("-1"), q_of("0")), -1);
    assert_int_equal(berth_quantity_cmp(q_of("0.5Gi"), q_of("512Mi")), 0);
    assert_int_equal(berth_quantity_cmp(q_of("1n"), q_of("0")), 1);
}

static void expect_format(const char *in, const char *want)
{
    char buf[64];
    berth_quantity q = q_of(in);
    berth_quantity_format(q, buf, (int)sizeof buf);
    if (strcmp(buf, want) != 0)
        print_error("format(%s) = \"%s\", want \"%s\"\n", in, buf, want);
    assert_string_equal(buf, want);
    /* round trip */
    assert_int_equal(berth_quantity_cmp(q_of(buf), q), 0);
}

static void test_format(void **state)
{
    (void)state;
    expect_format("0", "0");
    expect_format("-0", "0");
    expect_format("500m", "500m");
    expect_format("0.5", "500m");
    expect_format("1.5", "1.5");
    expect_format("1500m", "1.5");
    expect_format("2", "2");
    expect_format("1000", "1000");
    expect_format("1k", "1000");
    expect_format("1500", "1500");
    expect_format("224Gi", "224Gi");
    expect_format("0.5Gi", "512Mi");
    expect_format("1.5Gi", "1536Mi");
    expect_format("1024", "1Ki");
    expect_format("1536Ki", "1536Ki");
    expect_format("1G", "1G");
    expect_format("1e6", "1M");
    expect_format("1500M", "1500M");
    expect_format("1E", "1E");
    expect_format("7Ei", "7Ei");
    expect_format("1n", "1n");
    expect_format("1500n", "1500n");
    expect_format("5u", "5u");
    expect_format("1.000000001", "1.000000001");
    expect_format("2.25", "2.25");
    expect_format("-250m", "-250m");
    expect_format("-1.5", "-1.5");
    expect_format("-2Gi", "-2Gi");
    expect_format("-9223372036854775807", "-9223372036854775807");
    expect_format("9223372036854775806.5", "9223372036854775806.5");
    expect_format("1T", "1T");
    expect_format("1000Mi", "1000Mi");
    expect_format("2048", "2Ki");
    expect_format("1048576000000", "1000000Mi"); /* tie: binary */
}

static void test_format_truncates(void **state)
{
    (void)state;
    char buf[4] = "xxx";
    berth_quantity_format(q_of("224Gi"), buf, 4);
    assert_string_equal(buf, "224");
    berth_quantity_format(q_of("224Gi"), buf, 1);
    assert_string_equal(buf, "");
    buf[0] = 'z';
    berth_quantity_format(q_of("224Gi"), buf, 0);
    assert_int_equal(buf[0], 'z');
    berth_quantity_format(q_of("1"), NULL, 10);
}

static void test_resources_set_get(void **state)
{
    (void)state;
    berth_resources r;
    berth_resources_zero(&r);
    assert_int_equal(berth_resources_set_quantity(&r, "cpu", q_of("1.5")), 0);
    assert_int_equal(berth_resources_set_quantity(&r, "memory", q_of("224Gi")), 0);
    assert_int_equal(berth_resources_set_quantity(&r, "ephemeral-storage", q_of("1G")), 0);
    assert_int_equal(berth_resources_set_quantity(&r, "pods", q_of("110")), 0);
    assert_int_equal(berth_resources_set_quantity(&r, "nvidia.com/gpu", q_of("2")), 0);
    assert_int_equal(r.cpu_milli, 1500);
    assert_int_equal(r.memory, 240518168576);
    assert_int_equal(r.ephemeral, 1000000000);
    assert_int_equal(r.pods, 110);
    assert_int_equal(r.n_ext, 1);
    assert_int_equal(berth_resources_get(&r, "cpu"), 1500);
    assert_int_equal(berth_resources_get(&r, "memory"), 240518168576);
    assert_int_equal(berth_resources_get(&r, "ephemeral-storage"), 1000000000);
    assert_int_equal(berth_resources_get(&r, "pods"), 110);
    assert_int_equal(berth_resources_get(&r, "nvidia.com/gpu"), 2);
    assert_int_equal(berth_resources_get(&r, "example.com/fpga"), 0);
    assert_int_equal(berth_resources_get(&r, NULL), 0);
    /* cpu rounds up to millis, others to units */
    assert_int_equal(berth_resources_set_quantity(&r, "cpu", q_of("1n")), 0);
    assert_int_equal(r.cpu_milli, 1);
    assert_int_equal(berth_resources_set_quantity(&r, "memory", q_of("100m")), 0);
    assert_int_equal(r.memory, 1);
    /* overwrite an extended resource in place */
    assert_int_equal(berth_resources_set(&r, "nvidia.com/gpu", 4), 0);
    assert_int_equal(r.n_ext, 1);
    assert_int_equal(berth_resources_get(&r, "nvidia.com/gpu"), 4);
    /* errors */
    assert_int_equal(berth_resources_set(&r, "", 1), BERTH_EINVAL);
    assert_int_equal(berth_resources_set(&r, NULL, 1), BERTH_EINVAL);
    assert_int_equal(berth_resources_set_quantity(&r, "cpu", q_of("1e16")), BERTH_ELIMIT);
    assert_int_equal(berth_resources_set_quantity(&r, "cpu", q_of("9223372036854775.807")), 0);
    assert_int_equal(r.cpu_milli, INT64_MAX);
    assert_int_equal(berth_resources_set_quantity(&r, "cpu", q_of("9223372036854775.8071")),
                     BERTH_ELIMIT);
    assert_int_equal(berth_resources_set_quantity(&r, "cpu", q_of("-9223372036854775.808")), 0);
    assert_int_equal(r.cpu_milli, INT64_MIN);
    assert_int_equal(berth_resources_set_quantity(&r, "memory", q_of("9223372036854775807")), 0);
    assert_int_equal(r.memory, INT64_MAX);
}

static void test_resources_ext_limit(void **state)
{
    (void)state;
    static const char *const names[] = {"e/0", "e/1", "e/2", "e/3", "e/4",
                                        "e/5", "e/6", "e/7", "e/8"};
    berth_resources r = {0};
    for (int i = 0; i < BERTH_MAX_EXT_RESOURCES; i++)
        assert_int_equal(berth_resources_set(&r, names[i], i + 1), 0);
    assert_int_equal(berth_resources_set(&r, names[8], 1), BERTH_ELIMIT);
    assert_int_equal(berth_resources_set(&r, names[3], 40), 0);   /* existing */
    assert_int_equal(berth_resources_count(&r), 4 + BERTH_MAX_EXT_RESOURCES);

    int64_t v = -1;
    assert_string_equal(berth_resources_at(&r, 0, &v), "cpu");
    assert_string_equal(berth_resources_at(&r, 1, &v), "memory");
    assert_string_equal(berth_resources_at(&r, 2, &v), "ephemeral-storage");
    assert_string_equal(berth_resources_at(&r, 3, &v), "pods");
    assert_string_equal(berth_resources_at(&r, 7, &v), "e/3");
    assert_int_equal(v, 40);
    assert_null(berth_resources_at(&r, 12, &v));
    assert_string_equal(berth_resources_at(&r, 4, NULL), "e/0");

    /* add needing a ninth slot fails and leaves dst unchanged */
    berth_resources s = {0}, before = r;
    s.cpu_milli = 5;
    assert_int_equal(berth_resources_set(&s, names[8], 1), 0);
    assert_int_equal(berth_resources_add(&r, &s), BERTH_ELIMIT);
    assert_memory_equal(&r, &before, sizeof r);
    /* a zero-valued extended resource does not need a slot */
    s.ext[0].value = 0;
    assert_int_equal(berth_resources_add(&r, &s), 0);
    assert_int_equal(r.cpu_milli, 5);
    assert_int_equal(r.n_ext, BERTH_MAX_EXT_RESOURCES);
}

static void test_resources_arith(void **state)
{
    (void)state;
    berth_resources a = {0}, b = {0};
    a.cpu_milli = 1000; a.memory = 1024; a.pods = 1;
    berth_resources_set(&a, "nvidia.com/gpu", 1);
    b.cpu_milli = 500; b.memory = 4096; b.ephemeral = 7;
    berth_resources_set(&b, "example.com/fpga", 2);
    berth_resources_set(&b, "nvidia.com/gpu", 3);

    berth_resources sum = a;
    assert_int_equal(berth_resources_add(&sum, &b), 0);
    assert_int_equal(sum.cpu_milli, 1500);
    assert_int_equal(sum.memory, 5120);
    assert_int_equal(sum.ephemeral, 7);
    assert_int_equal(sum.pods, 1);
    assert_int_equal(berth_resources_get(&sum, "nvidia.com/gpu"), 4);
    assert_int_equal(berth_resources_get(&sum, "example.com/fpga"), 2);
    assert_int_equal(sum.n_ext, 2);

    assert_int_equal(berth_resources_sub(&sum, &b), 0);
    assert_int_equal(sum.cpu_milli, a.cpu_milli);
    assert_int_equal(sum.memory, a.memory);
    assert_int_equal(sum.ephemeral, 0);
    assert_int_equal(berth_resources_get(&sum, "nvidia.com/gpu"), 1);
    assert_int_equal(berth_resources_get(&sum, "example.com/fpga"), 0);

    berth_resources neg = {0};
    assert_int_equal(berth_resources_sub(&neg, &a), 0);
    assert_int_equal(neg.cpu_milli, -1000);
    assert_int_equal(berth_resources_get(&neg, "nvidia.com/gpu"), -1);

    berth_resources m = a;
    assert_int_equal(berth_resources_max(&m, &b), 0);
    assert_int_equal(m.cpu_milli, 1000);
    assert_int_equal(m.memory, 4096);
    assert_int_equal(m.ephemeral, 7);
    assert_int_equal(m.pods, 1);
    assert_int_equal(berth_resources_get(&m, "nvidia.com/gpu"), 3);
    assert_int_equal(berth_resources_get(&m, "example.com/fpga"), 2);

    /* overflow: ELIMIT, dst unchanged */
    berth_resources big = {0}, one = {0}, keep;
    big.memory = INT64_MAX;
    one.memory = 1;
    keep = big;
    assert_int_equal(berth_resources_add(&big, &one), BERTH_ELIMIT);
    assert_memory_equal(&big, &keep, sizeof big);
    big.memory = INT64_MIN;
    assert_int_equal(berth_resources_sub(&big, &one), BERTH_ELIMIT);
    berth_resources g1 = {0}, g2 = {0};
    berth_resources_set(&g1, "g", INT64_MAX);
    berth_resources_set(&g2, "g", 1);
    assert_int_equal(berth_resources_add(&g1, &g2), BERTH_ELIMIT);
}

static void test_resources_fits(void **state)
{
    (void)state;
    berth_resources req = {0}, free_ = {0};
    assert_true(berth_resources_fits(&req, &free_));
    req.cpu_milli = 500; req.memory = 1024;
    free_.cpu_milli = 500; free_.memory = 1024; free_.pods = 3;
    assert_true(berth_resources_fits(&req, &free_));
    req.memory = 1025;
    assert_false(berth_resources_fits(&req, &free_));
    req.memory = 1024;
    req.pods = 4;
    assert_false(berth_resources_fits(&req, &free_));
    req.pods = 1;
    req.ephemeral = 1;
    assert_false(berth_resources_fits(&req, &free_));
    req.ephemeral = 0;
    /* extended: missing on the node = 0 */
    berth_resources_set(&req, "nvidia.com/gpu", 1);
    assert_false(berth_resources_fits(&req, &free_));
    berth_resources_set(&free_, "nvidia.com/gpu", 1);
    assert_true(berth_resources_fits(&req, &free_));
    berth_resources_set(&req, "nvidia.com/gpu", 0);
    berth_resources_set(&free_, "nvidia.com/gpu", 0);
    assert_true(berth_resources_fits(&req, &free_));
    /* extended on the node only: fine; negative free: request 0 > -1 */
    berth_resources_set(&free_, "example.com/fpga", 4);
    assert_true(berth_resources_fits(&req, &free_));
    berth_resources_set(&free_, "example.com/fpga", -1);
    assert_false(berth_resources_fits(&req, &free_));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_numbers),
        cmocka_unit_test(test_decimal_suffixes),
        cmocka_unit_test(test_binary_suffixes),
        cmocka_unit_test(test_exponents),
        cmocka_unit_test(test_rounding_to_nano),
        cmocka_unit_test(test_rejects),
        cmocka_unit_test(test_out_of_range),
        cmocka_unit_test(test_null_args),
        cmocka_unit_test(test_value_and_milli),
        cmocka_unit_test(test_cmp),
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_format_truncates),
        cmocka_unit_test(test_resources_set_get),
        cmocka_unit_test(test_resources_ext_limit),
        cmocka_unit_test(test_resources_arith),
        cmocka_unit_test(test_resources_fits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
