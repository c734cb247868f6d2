/* tests/unit/test_disrupt_budget.c - disruption budgets (SPEC 4.1): percent
 * rounding, counts not capped, schedule windows at their boundaries
 * (inside, at the start, at the end of the duration), the seed's
 * three-budget example, reasons, parse errors failing closed, cron
 * matching (macros, ranges, steps, names, day-of-month OR day-of-week) and
 * duration parsing. */
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
    assert_int_equal(berth_fleet_parse_time(s, &ms), 0);
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
        cmocka_unit_test(test_durations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
