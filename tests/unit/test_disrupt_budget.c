/* tests/unit/test_disrupt_budget.c - disruption budgets (SPEC 4.1): percent
 * rounding, counts not capped, schedule windows at their boundaries
 * (inside, at the start, at the end of the duration), the seed's
 * three-budget example, reasons, parse errors failing closed, cron
 * matching (macros, ranges, steps, names, day-of-month OR day-of-week),
 * hits before 1970, a schedule without a hit in robfig's five-year horizon
 * (always active, as upstream's zero time), duration parsing and Go's
 * time.ParseDuration with the do-not-disrupt rule built on it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "berth/disrupt.h"
#include "berth/fleet.h"

static int64_t T(const char *s)
{
    int64_t ms;
    assert_int_equal(berth_time_parse(s, &ms), 0);
    return ms / 1000;
}

static void test_percent_rounding(void **st)
{
    (void)st;
    berth_dbudget b = {"20%", 0, NULL, 0};
    assert_int_equal(berth_budget_limit(&b, 19, 0), 4);
    b.nodes = "5%";
    assert_int_equal(berth_budget_limit(&b, 10, 0), 1);
    b.nodes = "50%";
    assert_int_equal(berth_budget_limit(&b, 3, 0), 2);
    b.nodes = "100";
    assert_int_equal(berth_budget_limit(&b, 10, 0), 100);
    b.nodes = "0%";
    assert_int_equal(berth_budget_limit(&b, 10, 0), 0);
    b.nodes = "100%";
    assert_int_equal(berth_budget_limit(&b, 7, 0), 7);
    b.nodes = "10%";
    assert_int_equal(berth_budget_limit(&b, 0, 0), 0);
}

static void test_schedule_boundaries(void **st)
{
    (void)st;
    berth_dbudget b = {"0", 0, "@daily", 600};
    /* at the start: the hit itself is inside */
    assert_int_equal(berth_budget_limit(&b, 10, T("2024-05-01T00:00:00Z")), 0);
    /* inside */
    assert_int_equal(berth_budget_limit(&b, 10, T("2024-05-01T00:05:00Z")), 0);
    assert_int_equal(berth_budget_limit(&b, 10, T("2024-05-01T00:09:59Z")), 0);
    /* at the end of the duration: no longer active */
    assert_int_equal(berth_budget_limit(&b, 10, T("2024-05-01T00:10:00Z")), BERTH_BUDGET_UNLIMITED);
    /* just before the start */
    assert_int_equal(berth_budget_limit(&b, 10, T("2024-04-30T23:59:59Z")), BERTH_BUDGET_UNLIMITED);
    /* a cron window spanning midnight: 23:30 for 1h */
    berth_dbudget c = {"1", 0, "30 23 * * *", 3600};
    assert_int_equal(berth_budget_limit(&c, 10, T("2024-05-02T00:15:00Z")), 1);
    assert_int_equal(berth_budget_limit(&c, 10, T("2024-05-02T00:30:00Z")), BERTH_BUDGET_UNLIMITED);
    assert_int_equal(berth_budget_limit(&c, 10, T("2024-05-01T23:30:00Z")), 1);
    assert_int_equal(berth_budget_limit(&c, 10, T("2024-05-01T23:29:59Z")), BERTH_BUDGET_UNLIMITED);
}

static void test_seed_three_budgets(void **st)
{
    (void)st;
    berth_dbudget b[3] = {{"20%", 0, NULL, 0}, {"5", 0, NULL, 0}, {"0", 0, "@daily", 600}};
    int64_t noon = T("2024-05-01T12:00:00Z"), early = T("2024-05-01T00:03:00Z");
    assert_int_equal(berth_budgets_allowed(b, 3, BERTH_DR_UNDERUTILIZED, 10, noon), 2);
    assert_int_equal(berth_budgets_allowed(b, 3, BERTH_DR_EMPTY, 19, noon), 4);
    assert_int_equal(berth_budgets_allowed(b, 3, BERTH_DR_DRIFTED, 100, noon), 5);
    assert_int_equal(berth_budgets_allowed(b, 3, BERTH_DR_DRIFTED, 100, early), 0);
    assert_int_equal(berth_budgets_allowed(b, 3, BERTH_DR_EMPTY, 100, T("2024-05-01T00:10:00Z")), 5);
}

static void test_reasons(void **st)
{
    (void)st;
    berth_dbudget b[2] = {{"10", 1u << BERTH_DR_DRIFTED, NULL, 0},
                          {"0", 1u << BERTH_DR_UNDERUTILIZED, NULL, 0}};
    assert_int_equal(berth_budgets_allowed(b, 2, BERTH_DR_DRIFTED, 50, 0), 10);
    assert_int_equal(berth_budgets_allowed(b, 2, BERTH_DR_UNDERUTILIZED, 50, 0), 0);
    assert_int_equal(berth_budgets_allowed(b, 2, BERTH_DR_EMPTY, 50, 0), BERTH_BUDGET_UNLIMITED);
    assert_int_equal(berth_budgets_allowed(b, 0, BERTH_DR_EMPTY, 50, 0), BERTH_BUDGET_UNLIMITED);
}

static void test_parse_errors_fail_closed(void **st)
{
    (void)st;
    berth_dbudget b[2] = {{"50%", 0, NULL, 0}, {"abc", 1u << BERTH_DR_DRIFTED, NULL, 0}};
    for (int r = 0; r < BERTH_DR_BUDGET_COUNT; r++)
        assert_int_equal(berth_budgets_allowed(b, 2, (berth_dreason)r, 10, 0), 0);
    berth_dbudget c = {"5", 0, "61 * * * *", 600};
    assert_int_equal(berth_budget_limit(&c, 10, 0), -1);
    berth_dbudget d = {"101%", 0, NULL, 0};
    assert_int_equal(berth_budget_limit(&d, 10, 0), -1);
    assert_false(berth_budget_nodes_valid("1.5"));
    assert_false(berth_budget_nodes_valid("-1"));
    assert_false(berth_budget_nodes_valid("%"));
    assert_true(berth_budget_nodes_valid("0"));
    assert_true(berth_budget_nodes_valid("99%"));
    assert_true(berth_budget_nodes_valid("1000"));
}

static void test_cron(void **st)
{
    (void)st;
    berth_cron c;
    const char *why;
    assert_int_equal(berth_cron_parse("@yearly", &c, &why), 0);
    assert_int_equal(berth_cron_next(&c, T("2024-05-01T12:00:00Z")), T("2025-01-01T00:00:00Z"));
    assert_int_equal(berth_cron_parse("@hourly", &c, &why), 0);
    assert_int_equal(berth_cron_next(&c, T("2024-05-01T12:00:00Z")), T("2024-05-01T13:00:00Z"));
    assert_int_equal(berth_cron_parse("*/15 9-17 * * MON-FRI", &c, &why), 0);
    /* 2024-05-04 is a Saturday */
    assert_int_equal(berth_cron_next(&c, T("2024-05-03T17:50:00Z")), T("2024-05-06T09:00:00Z"));
    assert_int_equal(berth_cron_next(&c, T("2024-05-06T09:00:00Z")), T("2024-05-06T09:15:00Z"));
    /* day of month OR day of week when both are restricted */
    assert_int_equal(berth_cron_parse("0 0 13 * FRI", &c, &why), 0);
    assert_int_equal(berth_cron_next(&c, T("2024-05-01T00:00:00Z")), T("2024-05-03T00:00:00Z"));
    assert_int_equal(berth_cron_next(&c, T("2024-05-10T00:00:00Z")), T("2024-05-13T00:00:00Z"));
    /* Feb 29 only in leap years: a jump of years */
    assert_int_equal(berth_cron_parse("0 0 29 2 *", &c, &why), 0);
    assert_int_equal(berth_cron_next(&c, T("2024-03-01T00:00:00Z")), T("2028-02-29T00:00:00Z"));
    assert_int_equal(berth_cron_parse("0 0 1 JAN,jul *", &c, &why), 0);
    assert_int_equal(berth_cron_next(&c, T("2024-02-01T00:00:00Z")), T("2024-07-01T00:00:00Z"));
    assert_int_equal(berth_cron_parse("* * * *", &c, &why), BERTH_EINVAL);
    assert_int_equal(berth_cron_parse("0 24 * * *", &c, &why), BERTH_EINVAL);
    assert_int_equal(berth_cron_parse("@fortnightly", &c, &why), BERTH_EINVAL);
    assert_int_equal(berth_cron_parse("0 0 * * 7", &c, &why), BERTH_EINVAL);
}

static void test_cron_before_1970(void **st)
{
    (void)st;
    berth_cron c;
    const char *why;
    assert_int_equal(berth_cron_parse("@daily", &c, &why), 0);
    assert_int_equal(berth_cron_next(&c, T("1969-12-31T12:00:00Z")), 0);
    assert_int_equal(berth_cron_next(&c, T("1950-06-15T10:00:00Z")), T("1950-06-16T00:00:00Z"));
    assert_int_equal(berth_cron_parse("@hourly", &c, &why), 0);
    assert_int_equal(berth_cron_next(&c, T("1900-01-01T10:00:00Z")), T("1900-01-01T11:00:00Z"));
    assert_int_equal(berth_cron_parse("0 0 29 2 *", &c, &why), 0);
    assert_int_equal(berth_cron_next(&c, T("1961-03-01T00:00:00Z")), T("1964-02-29T00:00:00Z"));
    /* the window works the same way before the epoch */
    berth_dbudget b = {"0", 0, "@daily", 600};
    assert_int_equal(berth_budget_limit(&b, 10, T("1965-03-01T00:05:00Z")), 0);
    assert_int_equal(berth_budget_limit(&b, 10, T("1965-03-01T00:10:00Z")), BERTH_BUDGET_UNLIMITED);
    assert_int_equal(berth_budget_limit(&b, 10, T("1969-12-31T23:59:59Z")), BERTH_BUDGET_UNLIMITED);
    assert_int_equal(berth_budget_limit(&b, 10, T("1970-01-01T00:00:00Z")), 0);
}

static void test_cron_no_hit(void **st)
{
    (void)st;
    berth_cron c;
    const char *why;
    /* February 30th never comes: robfig's Next gives up after five years
     * and returns the zero time, which Budget.IsActive reads as "the last
     * hit is not after now": the budget is always active */
    assert_int_equal(berth_cron_parse("0 0 30 2 *", &c, &why), 0);
    assert_true(berth_cron_next(&c, T("2024-05-01T12:00:00Z")) == BERTH_CRON_ZERO_TIME);
    assert_true(berth_cron_next(&c, T("1955-05-01T12:00:00Z")) == BERTH_CRON_ZERO_TIME);
    berth_dbudget b = {"0", 0, "0 0 30 2 *", 600};
    assert_int_equal(berth_budget_limit(&b, 10, T("2024-05-01T12:00:00Z")), 0);
    assert_int_equal(berth_budget_limit(&b, 10, T("1955-05-01T12:00:00Z")), 0);
    berth_dbudget two[2] = {{"3", 0, NULL, 0}, {"1", 0, "0 0 31 4 *", 60}}; /* April 31st */
    assert_int_equal(berth_budgets_allowed(two, 2, BERTH_DR_EMPTY, 10, T("2024-05-01T12:00:00Z")), 1);
    /* the horizon is the start year + 5: from March 2096 the next Feb 29th
     * is in 2104 (2100 is no leap year), past 2101: none */
    assert_int_equal(berth_cron_parse("0 0 29 2 *", &c, &why), 0);
    assert_true(berth_cron_next(&c, T("2096-03-01T00:00:00Z")) == BERTH_CRON_ZERO_TIME);
    assert_int_equal(berth_cron_next(&c, T("2095-03-01T00:00:00Z")), T("2096-02-29T00:00:00Z"));
}

static int64_t go_ns(const char *s)
{
    int64_t ns = 12345;
    assert_int_equal(berth_go_duration_parse(s, &ns), 0);
    return ns;
}

static void go_bad(const char *s)
{
    int64_t ns;
    if (berth_go_duration_parse(s, &ns) != -1)
        fail_msg("'%s' parsed as %lld, expected an error", s, (long long)ns);
}

static void test_go_parse_duration(void **st)
{
    (void)st;
    /* the cases of Go's src/time/time_test.go parseDurationTests */
    assert_int_equal(go_ns("0"), 0);
    assert_int_equal(go_ns("5s"), 5000000000LL);
    assert_int_equal(go_ns("30s"), 30000000000LL);
    assert_int_equal(go_ns("1478s"), 1478000000000LL);
    assert_int_equal(go_ns("-5s"), -5000000000LL);
    assert_int_equal(go_ns("+5s"), 5000000000LL);
    assert_int_equal(go_ns("-0"), 0);
    assert_int_equal(go_ns("+0"), 0);
    assert_int_equal(go_ns("5.0s"), 5000000000LL);
    assert_int_equal(go_ns("5.6s"), 5600000000LL);
    assert_int_equal(go_ns("5.s"), 5000000000LL);
    assert_int_equal(go_ns(".5s"), 500000000LL);
    assert_int_equal(go_ns("1.0s"), 1000000000LL);
    assert_int_equal(go_ns("1.00s"), 1000000000LL);
    assert_int_equal(go_ns("1.004s"), 1004000000LL);
    assert_int_equal(go_ns("1.0040s"), 1004000000LL);
    assert_int_equal(go_ns("100.00100s"), 100001000000LL);
    assert_int_equal(go_ns("10ns"), 10);
    assert_int_equal(go_ns("11us"), 11000);
    assert_int_equal(go_ns("12\xc2\xb5s"), 12000);  /* U+00B5 */
    assert_int_equal(go_ns("12\xce\xbcs"), 12000);  /* U+03BC */
    assert_int_equal(go_ns("13ms"), 13000000);
    assert_int_equal(go_ns("300ms"), 300000000);
    assert_int_equal(go_ns("14s"), 14000000000LL);
    assert_int_equal(go_ns("15m"), 900000000000LL);
    assert_int_equal(go_ns("16h"), 57600000000000LL);
    assert_int_equal(go_ns("3h30m"), 12600000000000LL);
    assert_int_equal(go_ns("1h30m"), 5400000000000LL);
    assert_int_equal(go_ns("1.5h"), 5400000000000LL);
    assert_int_equal(go_ns("10.5s4m"), 250500000000LL);
    assert_int_equal(go_ns("-2m3.4s"), -123400000000LL);
    assert_int_equal(go_ns("1h2m3s4ms5us6ns"), 3723004005006LL);
    assert_int_equal(go_ns("39h9m14.425s"), 140954425000000LL);
    assert_int_equal(go_ns("52763797000ns"), 52763797000LL);
    assert_int_equal(go_ns("0.3333333333333333333h"), 1200000000000LL);
    assert_int_equal(go_ns("9007199254740993ns"), 9007199254740993LL);
    assert_int_equal(go_ns("9223372036854775807ns"), INT64_MAX);
    assert_int_equal(go_ns("9223372036854775.807us"), INT64_MAX);
    assert_int_equal(go_ns("9223372036s854ms775us807ns"), INT64_MAX);
    assert_true(go_ns("-9223372036854775808ns") == INT64_MIN);
    assert_true(go_ns("-9223372036854775.808us") == INT64_MIN);
    assert_int_equal(go_ns("0.100000000000000000000h"), 360000000000LL);
    assert_int_equal(go_ns("0.830103483285477580700h"), 2988372539827LL);
    assert_int_equal(go_ns("-1s"), -1000000000LL);
    go_bad("");
    go_bad("3");
    go_bad("-");
    go_bad("s");
    go_bad(".");
    go_bad("-.");
    go_bad(".s");
    go_bad("+.s");
    go_bad("1d");
    go_bad("1h 30m");
    go_bad("\x85\x85");
    go_bad("\xff" "ff");
    go_bad("hello \xff" "ff world");
    go_bad("9223372036854775808ns");
    go_bad("9223372036854775.808us");
    go_bad("9223372036854ms775us808ns");
    go_bad("-9223372036854775809ns");
    go_bad("2562048h");
    /* berth_duration_parse: whole seconds, negatives and junk invalid */
    assert_int_equal(berth_duration_parse("300ms"), 0);
    assert_int_equal(berth_duration_parse("-1s"), -1);
    assert_int_equal(berth_duration_parse("+90s"), 90);
}

static void test_do_not_disrupt_rule(void **st)
{
    (void)st;
    int64_t t0 = T("2024-05-01T12:00:00Z");
    berth_dpod x;
    memset(&x, 0, sizeof x);
    assert_false(berth_dpod_dnd_active(&x, t0));
    x.dnd = 1;
    assert_true(berth_dpod_dnd_active(&x, t0));
    /* 300ms from a start at t0: active at t0 (0 s < 300 ms), over one second on */
    x.dnd = 2;
    x.dnd_ns = 300000000;
    x.started = t0;
    x.has_start_time = 1;
    assert_true(berth_dpod_dnd_active(&x, t0));
    assert_false(berth_dpod_dnd_active(&x, t0 + 1));
    /* 1h30m: active until 13:29:59, over at 13:30:00 exactly */
    x.dnd_ns = 5400000000000LL;
    assert_true(berth_dpod_dnd_active(&x, t0 + 5399));
    assert_false(berth_dpod_dnd_active(&x, t0 + 5400));
    /* no status.startTime: fail safe, still active years later */
    x.has_start_time = 0;
    assert_true(berth_dpod_dnd_active(&x, t0 + 10 * 365 * 86400LL));
    /* a non-positive duration is no protection */
    x.has_start_time = 1;
    x.dnd_ns = -1000000000LL;
    assert_false(berth_dpod_dnd_active(&x, t0));
}

static void test_durations(void **st)
{
    (void)st;
    assert_int_equal(berth_budget_duration_parse("10m"), 600);
    assert_int_equal(berth_budget_duration_parse("1h30m"), 5400);
    assert_int_equal(berth_budget_duration_parse("8h0s"), 28800);
    assert_int_equal(berth_budget_duration_parse("30s"), -1);
    assert_int_equal(berth_budget_duration_parse("1m1h"), -1);
    assert_int_equal(berth_budget_duration_parse(""), -1);
    assert_int_equal(berth_duration_parse("720h"), 720 * 3600);
    assert_int_equal(berth_duration_parse("30s"), 30);
    assert_int_equal(berth_duration_parse("1h30m"), 5400);
    assert_true(berth_duration_parse("Never") == BERTH_DURATION_NEVER);
    assert_int_equal(berth_duration_parse("1.5h"), 5400);
    assert_int_equal(berth_duration_parse("abc"), -1);
    assert_int_equal(berth_duration_parse("10"), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_percent_rounding),   cmocka_unit_test(test_schedule_boundaries),
        cmocka_unit_test(test_seed_three_budgets), cmocka_unit_test(test_reasons),
        cmocka_unit_test(test_parse_errors_fail_closed), cmocka_unit_test(test_cron),
        cmocka_unit_test(test_durations), cmocka_unit_test(test_cron_before_1970),
        cmocka_unit_test(test_cron_no_hit), cmocka_unit_test(test_go_parse_duration),
        cmocka_unit_test(test_do_not_disrupt_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
