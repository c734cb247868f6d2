/* core/time.c - RFC 3339 times ("2024-05-01T12:00:00Z", fractions and
 * offsets allowed) as unix milliseconds, for every domain (Fleet
 * eligibility, kube conditions, disruption and autoscaling clocks). */
#include "berth/time.h"

#include "berth/error.h"

static int digits(const char **p, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if ((*p)[i] < '0' || (*p)[i] > '9')
            return -1;
        v = v * 10 + ((*p)[i] - '0');
    }
    *p += n;
    *out = v;
    return 0;
}

int berth_time_parse(const char *s, int64_t *ms)
{
    if (!s)
        return BERTH_EINVAL;
    const char *p = s;
    int Y, M, D, h, m, sec, frac = 0;
    if (digits(&p, 4, &Y) || *p++ != '-' || digits(&p, 2, &M) || *p++ != '-' ||
        digits(&p, 2, &D) || (*p != 'T' && *p != 't' && *p != ' '))
        return BERTH_EINVAL;
    p++;
    if (digits(&p, 2, &h) || *p++ != ':' || digits(&p, 2, &m) || *p++ != ':' ||
        digits(&p, 2, &sec))
        return BERTH_EINVAL;
    if (*p == '.') {
        p++;
        int nd = 0;
        while (*p >= '0' && *p <= '9') {
            if (nd < 3)
                frac = frac * 10 + (*p - '0');
            nd++;
            p++;
        }
        if (nd == 0)
            return BERTH_EINVAL;
        for (int i = nd; i < 3; i++)
            frac *= 10;
    }
    int off = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int sign = *p == '-' ? -1 : 1, oh, om;
        p++;
        if (digits(&p, 2, &oh) || *p++ != ':' || digits(&p, 2, &om) || oh > 23 || om > 59)
            return BERTH_EINVAL;
        off = sign * (oh * 60 + om);
    } else {
        return BERTH_EINVAL;
    }
    if (*p || M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || m > 59 || sec > 60)
        return BERTH_EINVAL;
    /* days from civil (proleptic Gregorian) */
    int y = Y - (M <= 2);
    int era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (unsigned)((153 * (M + (M > 2 ? -3 : 9)) + 2) / 5 + D - 1);
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    int64_t days = (int64_t)era * 146097 + (int64_t)doe - 719468;
    int64_t t = days * 86400 + h * 3600 + m * 60 + sec - (int64_t)off * 60;
    *ms = t * 1000 + frac;
    return 0;
}
