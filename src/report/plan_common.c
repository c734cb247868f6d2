/* report/plan_common.c - helpers shared by the planner reports
 * (plan_common.h). */
#include "report/plan_common.h"

#include <time.h>

void report_fmt_time(int64_t t, char *buf, size_t size)
{
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

json_t *report_time_json(int64_t t)
{
    char buf[40];
    report_fmt_time(t, buf, sizeof buf);
    return json_string(buf);
}

double report_round6(double v)
{
    return (double)(long long)(v * 1e6 + (v >= 0 ? 0.5 : -0.5)) / 1e6;
}

json_t *report_str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}
