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

void report_set(int *bad, json_t *o, const char *k, json_t *v)
{
    if (json_object_set_new(o, k, v))
        *bad = 1;
}

void report_append(int *bad, json_t *a, json_t *v)
{
    if (json_array_append_new(a, v))
        *bad = 1;
}

json_t *report_done(json_t *o, int bad)
{
    if (bad || !o) {
        json_decref(o);
        return NULL;
    }
    return o;
}
