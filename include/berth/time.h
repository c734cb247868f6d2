/* berth/time.h - RFC 3339 times (core/time.c). Pure functions: safe from
 * any thread. */
#ifndef BERTH_TIME_H
#define BERTH_TIME_H

#include <stdint.h>

/* RFC 3339 time ("2024-05-01T12:00:00Z", fractions and offsets allowed)
 * -> unix milliseconds. 0 or BERTH_EINVAL. Years 0000..9999, proleptic
 * Gregorian (times before 1970 are negative). */
int berth_time_parse(const char *s, int64_t *ms);

#endif
