/* report/plan_common.h - helpers the planner reports share (`disrupt` and
 * `autoscale`, plan and timeline): times as RFC 3339 UTC text, reals
 * rounded for JSON, optional strings, and the checked JSON builders every
 * JSON report uses. Internal to src/report/. */
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

/* json_object_set_new / json_array_append_new that set *bad to 1 when the
 * value or the container is NULL (a failed allocation) or jansson fails;
 * v is consumed either way. A builder calls them all, then report_done. */
void report_set(int *bad, json_t *o, const char *k, json_t *v);
void report_append(int *bad, json_t *a, json_t *v);
/* o, or NULL (o released) when bad: the document is complete or absent. */
json_t *report_done(json_t *o, int bad);

#endif
