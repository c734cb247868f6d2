/* kube/pct.h - internal: floor(a * 100 / b), the integer division of the
 * NodeResourcesFit allocation scores (kube-scheduler's
 * noderesources/least_allocated.go leastRequestedScore and
 * most_allocated.go mostRequestedScore: `(capacity - requested) *
 * MaxNodeScore / capacity`, int64), without a 64-bit idiv. Pure functions,
 * any thread. */
#ifndef BERTH_KUBE_PCT_H
#define BERTH_KUBE_PCT_H

#include <stdint.h>

/* Largest b taking the double estimate: a * 100 and (q + 1) * b cannot
 * overflow for 0 <= a <= b <= this. */
#define KUBE_PCT_DOUBLE_MAX (INT64_MAX / 128)

/* floor(a * 100 / b) for 0 <= a <= b, 0 < b <= KUBE_PCT_DOUBLE_MAX. The
 * double quotient (num and b each rounded to 53 bits, one rounded
 * division, truncation) is within one of the true quotient (which is at
 * most 100, the relative error about 2^-51), so one correction each way
 * makes it exact: afterwards q * b <= num < (q + 1) * b. The steps are
 * branches (rarely taken, so predicted), not a data dependency. */
static inline int64_t kube_pct_floor_est(int64_t a, int64_t b)
{
    int64_t num = a * 100;
    int64_t q = (int64_t)((double)num / (double)b);
    if (q * b > num)
        q--;
    else if ((q + 1) * b <= num)
        q++;
    return q;
}

/* floor(a * 100 / b) for 0 <= a <= b, b > 0, exactly, for every int64. */
static inline int64_t kube_pct_floor(int64_t a, int64_t b)
{
    if (b > KUBE_PCT_DOUBLE_MAX)
        return (int64_t)((__int128)a * 100 / b);
    return kube_pct_floor_est(a, b);
}

#endif
