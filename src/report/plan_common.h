/* report/plan_common.h - helpers the planner reports share (`disrupt` and
 * `autoscale`, plan and timeline): times as RFC 3339 UTC text, reals
 * rounded for JSON, optional strings. Internal to src/report/. */
#ifndef BERTH_REPORT_PLAN_COMMON_H
#define BERTH_REPORT_PLAN_COMMON_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* t (seconds since the epoch) as "2024-05-01T12:00:00Z" into buf (at most
 * size bytes; 40 hold any time). */
void report_fmt_time(int64_t t, char *buf, size_t size);
/* report_fmt_time as a JSON string (a new reference). */
json_t *report_time_json(int64_t t);
/* v rounded to 6 decimals, halves away from zero (prices, costs, ratios). */
double report_round6(double v);
/* s as a JSON string, or JSON null when s is NULL (a new reference). */
json_t *report_str_or_null(const char *s);

#endif
