/* disrupt/budget.c - disruption budgets (SPEC 4.1): the `nodes` value
 * (percent with upstream rounding, or a count), cron schedules (5 fields or
 * @macros, robfig/cron semantics, UTC) with their active window
 * now - duration < hit <= now, the minimum over active budgets for a
 * reason, and Go / budget duration parsing. */
#include "berth/disrupt.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *berth_dreason_name(berth_dreason r)
{
    switch (r) {
    case BERTH_DR_EMPTY: return "Empty";
    case BERTH_DR_DRIFTED: return "Drifted";
    case BERTH_DR_UNDERUTILIZED: return "Underutilized";
    case BERTH_DR_EXPIRED: return "Expired";
    }
    return "?";
}

/* ---- durations ---- */

int64_t berth_budget_duration_parse(const char *s)
{
    /* ^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$ */
    if (!s || !*s)
        return -1;
    int64_t total = 0;
    int nparts = 0;
    char last = 0;
    const char *p = s;
    while (*p) {
        if (!strcmp(p, "0s") && nparts)
            break;
        if (!isdigit((unsigned char)*p))
            return -1;
        int64_t v = 0;
        while (isdigit((unsigned char)*p)) {
            if (v > INT64_MAX / 100)
                return -1;
            v = v * 10 + (*p++ - '0');
        }
        if (*p != 'h' && *p != 'm')
            return -1;
        if (nparts == 1 && !(last == 'h' && *p == 'm'))
            return -1;
        if (nparts == 2)
            return -1;
        int64_t mul = *p == 'h' ? 3600 : 60;
        if (v > (INT64_MAX / 4) / mul)
            return -1;
        total += v * mul;
        last = *p++;
        nparts++;
    }
    return nparts ? total : -1;
}

/* time.ParseDuration: [-+]?([0-9]*(\.[0-9]*)?[a-z]+)+ or "0", nanoseconds,
 * the same digits, units, overflow rules and fraction arithmetic (a float64
 * product, truncated) as Go's src/time/format.go. */
static int go_leading_int(const char **p, uint64_t *x)
{
    *x = 0;
    for (; **p >= '0' && **p <= '9'; (*p)++) {
        if (*x > (1ull << 63) / 10)
            return -1;
        *x = *x * 10 + (uint64_t)(**p - '0');
        if (*x > (1ull << 63))
            return -1;
    }
    return 0;
}

int berth_go_duration_parse(const char *s, int64_t *ns)
{
    *ns = 0;
    if (!s)
        return -1;
    uint64_t d = 0;
    int neg = 0;
    if (*s == '-' || *s == '+') {
        neg = *s == '-';
        s++;
    }
    if (!strcmp(s, "0"))
        return 0;
    if (!*s)
        return -1;
    static const struct {
        const char *name;
        uint64_t ns;
    } units[] = {{"ns", 1},
                 {"us", 1000},
                 {"\xc2\xb5s", 1000}, /* U+00B5 micro sign */
                 {"\xce\xbcs", 1000}, /* U+03BC Greek mu */
                 {"ms", 1000000},
                 {"s", 1000000000ull},
                 {"m", 60000000000ull},
                 {"h", 3600000000000ull}};
    while (*s) {
        uint64_t v = 0, f = 0;
        double scale = 1;
        if (!(*s == '.' || (*s >= '0' && *s <= '9')))
            return -1;
        const char *start = s;
        if (go_leading_int(&s, &v))
            return -1;
        int pre = s != start, post = 0;
        if (*s == '.') {
            s++;
            const char *fs = s;
            int overflow = 0;
            for (; *s >= '0' && *s <= '9'; s++) {
                if (overflow)
                    continue;
                if (f > ((1ull << 63) - 1) / 10) {
                    overflow = 1;
                    continue;
                }
                uint64_t y = f * 10 + (uint64_t)(*s - '0');
                if (y > (1ull << 63)) {
                    overflow = 1;
                    continue;
                }
                f = y;
                scale *= 10;
            }
            post = s != fs;
        }
        if (!pre && !post)
            return -1;
        size_t ul = 0;
        while (s[ul] && s[ul] != '.' && !(s[ul] >= '0' && s[ul] <= '9'))
            ul++;
        if (!ul)
            return -1; /* missing unit */
        uint64_t unit = 0;
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
            if (strlen(units[i].name) == ul && !strncmp(s, units[i].name, ul))
                unit = units[i].ns;
        if (!unit)
            return -1; /* unknown unit */
        s += ul;
        if (v > (1ull << 63) / unit)
            return -1;
        v *= unit;
        if (f > 0) {
            v += (uint64_t)((double)f * ((double)unit / scale));
            if (v > (1ull << 63))
                return -1;
        }
        d += v;
        if (d > (1ull << 63))
            return -1;
    }
    if (neg) {
        *ns = d == (1ull << 63) ? INT64_MIN : -(int64_t)d;
        return 0;
    }
    if (d > (uint64_t)INT64_MAX)
        return -1;
    *ns = (int64_t)d;
    return 0;
}

int64_t berth_duration_parse(const char *s)
{
    if (!s || !*s)
        return -1;
    if (!strcmp(s, "Never"))
        return BERTH_DURATION_NEVER;
    int64_t ns;
    if (berth_go_duration_parse(s, &ns) || ns < 0)
        return -1;
    return ns / 1000000000;
}

int berth_dpod_dnd_active(const berth_dpod *x, int64_t now)
{
    if (x->dnd == 1)
        return 1;
    if (x->dnd != 2)
        return 0;
    int64_t d = x->dnd_ns ? x->dnd_ns : x->dnd_seconds * 1000000000;
    if (d <= 0)
        return 0; /* upstream: a non-positive duration is invalid, as if absent */
    if (!x->has_start_time)
        return 1; /* no status.startTime: fail safe, still protected */
    return (__int128)(now - x->started) * 1000000000 < (__int128)d;
}

/* ---- nodes ---- */

int berth_budget_nodes_valid(const char *s)
{
    if (!s || !*s)
        return 0;
    size_t n = strlen(s);
    for (size_t i = 0; i + 1 < n; i++)
        if (!isdigit((unsigned char)s[i]))
            return 0;
    if (s[n - 1] == '%') {
        if (n == 4)
            return !strcmp(s, "100%");
        return n == 2 || n == 3;
    }
    return isdigit((unsigned char)s[n - 1]) != 0;
}

/* ---- cron ---- */

static const char *const month_names[] = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                          "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
static const char *const dow_names[] = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};

/* A number or (for month / dow) a three-letter name. */
static int cron_value(const char *s, size_t n, int field, long *out)
{
    if (n == 3 && (field == 3 || field == 4)) {
        const char *const *names = field == 3 ? month_names : dow_names;
        int count = field == 3 ? 12 : 7;
        for (int i = 0; i < count; i++)
            if (!strncasecmp(s, names[i], 3)) {
                *out = field == 3 ? i + 1 : i;
                return 0;
            }
    }
    if (!n || n > 4)
        return -1;
    long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

/* One field: comma-separated ranges; bits of allowed values. */
static int cron_field(const char *s, size_t len, int field, uint64_t *bits, int *star)
{
    static const long lo[] = {0, 0, 1, 1, 0}, hi[] = {59, 23, 31, 12, 6};
    *bits = 0;
    *star = 0;
    size_t i = 0;
    while (i <= len) {
        size_t j = i;
        while (j < len && s[j] != ',')
            j++;
        const char *r = s + i;
        size_t rn = j - i;
        if (!rn)
            return -1;
        const char *slash = memchr(r, '/', rn);
        size_t base_n = slash ? (size_t)(slash - r) : rn;
        long a, b, step = 1;
        int is_star = 0;
        if ((base_n == 1 && (r[0] == '*' || r[0] == '?'))) {
            a = lo[field];
            b = hi[field];
            is_star = 1;
        } else {
            const char *dash = memchr(r, '-', base_n);
            if (dash) {
                if (cron_value(r, (size_t)(dash - r), field, &a) ||
                    cron_value(dash + 1, base_n - (size_t)(dash - r) - 1, field, &b))
                    return -1;
            } else {
                if (cron_value(r, base_n, field, &a))
                    return -1;
                b = slash ? hi[field] : a;
            }
        }
        if (slash) {
            if (cron_value(slash + 1, rn - base_n - 1, -1, &step) || step <= 0)
                return -1;
            if (step > 1)
                is_star = 0; /* robfig: "*" with a step > 1 is not a star */
        }
        if (is_star)
            *star = 1;
        if (a < lo[field] || b > hi[field] || a > b)
            return -1;
        for (long v = a; v <= b; v += step)
            *bits |= 1ull << v;
        i = j + 1;
    }
    return 0;
}

int berth_cron_parse(const char *s, berth_cron *out, const char **why)
{
    memset(out, 0, sizeof *out);
    const char *w = NULL;
    if (!s || !*s)
        w = "empty schedule";
    static const struct {
        const char *name, *expr;
    } macros[] = {{"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
                  {"@weekly", "0 0 * * 0"}, {"@daily", "0 0 * * *"},    {"@midnight", "0 0 * * *"},
                  {"@hourly", "0 * * * *"}};
    if (!w && s[0] == '@') {
        const char *expr = NULL;
        for (size_t i = 0; i < sizeof macros / sizeof macros[0]; i++)
            if (!strcmp(s, macros[i].name))
                expr = macros[i].expr;
        if (!expr)
            w = "unknown descriptor (expected @yearly, @annually, @monthly, @weekly, @daily, "
                "@midnight or @hourly)";
        else
            s = expr;
    }
    const char *f[5];
    size_t fl[5];
    int nf = 0;
    for (const char *p = s; !w && *p;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        const char *q = p;
        while (*q && *q != ' ' && *q != '\t')
            q++;
        if (nf == 5) {
            w = "expected exactly 5 fields";
            break;
        }
        f[nf] = p;
        fl[nf++] = (size_t)(q - p);
        p = q;
    }
    if (!w && nf != 5)
        w = "expected exactly 5 fields";
    uint64_t bits[5];
    int star[5];
    for (int i = 0; !w && i < 5; i++)
        if (cron_field(f[i], fl[i], i, &bits[i], &star[i]))
            w = i == 0 ? "invalid minute field" : i == 1 ? "invalid hour field"
                : i == 2 ? "invalid day-of-month field" : i == 3 ? "invalid month field"
                : "invalid day-of-week field";
    if (why)
        *why = w;
    if (w)
        return BERTH_EINVAL;
    out->minute = bits[0];
    out->hour = (uint32_t)bits[1];
    out->dom = (uint32_t)bits[2];
    out->month = (uint32_t)bits[3];
    out->dow = (uint8_t)bits[4];
    out->dom_star = star[2];
    out->dow_star = star[4];
    return 0;
}

static int day_matches(const berth_cron *c, const struct tm *t)
{
    int dom = (c->dom >> t->tm_mday) & 1, dow = (c->dow >> t->tm_wday) & 1;
    if (c->dom_star || c->dow_star)
        return dom && dow;
    return dom || dow;
}

/* robfig/cron SpecSchedule.Next with seconds fixed at 0: advance the
 * largest non-matching field, resetting the smaller ones. */
int64_t berth_cron_next(const berth_cron *c, int64_t t)
{
    if (!c->minute || !c->hour || !c->dom || !c->month || !c->dow)
        return BERTH_CRON_ZERO_TIME;
    time_t tt = (time_t)(t + 1);
    struct tm tm;
    gmtime_r(&tt, &tm);
    int year_limit = tm.tm_year + 5;
    int added = 0;
wrap:
    if (tm.tm_year > year_limit)
        return BERTH_CRON_ZERO_TIME; /* robfig: time.Time{} when nothing within five years */
    while (!((c->month >> (tm.tm_mon + 1)) & 1)) {
        if (!added) {
            added = 1;
            tm.tm_mday = 1;
            tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
        }
        tm.tm_mon++;
        tt = timegm(&tm);
        gmtime_r(&tt, &tm);
        if (tm.tm_mon == 0)
            goto wrap;
    }
    while (!day_matches(c, &tm)) {
        if (!added) {
            added = 1;
            tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
        }
        tm.tm_mday++;
        tt = timegm(&tm);
        gmtime_r(&tt, &tm);
        if (tm.tm_mday == 1)
            goto wrap;
    }
    while (!((c->hour >> tm.tm_hour) & 1)) {
        if (!added) {
            added = 1;
            tm.tm_min = tm.tm_sec = 0;
        }
        tm.tm_hour++;
        tt = timegm(&tm);
        gmtime_r(&tt, &tm);
        if (tm.tm_hour == 0)
            goto wrap;
    }
    while (!((c->minute >> tm.tm_min) & 1)) {
        if (!added) {
            added = 1;
            tm.tm_sec = 0;
        }
        tm.tm_min++;
        tt = timegm(&tm);
        gmtime_r(&tt, &tm);
        if (tm.tm_min == 0)
            goto wrap;
    }
    while (tm.tm_sec != 0) {
        added = 1;
        tm.tm_sec++;
        tt = timegm(&tm);
        gmtime_r(&tt, &tm);
        if (tm.tm_sec == 0)
            goto wrap;
    }
    return (int64_t)timegm(&tm);
}

/* ---- budgets ---- */

int64_t berth_budget_limit(const berth_dbudget *b, int64_t nodes, int64_t now)
{
    if (b->schedule) {
        berth_cron c;
        if (b->duration < 0 || berth_cron_parse(b->schedule, &c, NULL))
            return -1;
        /* Budget.IsActive: !schedule.Next(now - duration).After(now), so
         * active when some hit h has now - duration < h <= now; a schedule
         * with no hit in robfig's five-year horizon returns the zero time,
         * which is not after now: such a budget is always active */
        int64_t h = berth_cron_next(&c, now - b->duration);
        if (h > now)
            return BERTH_BUDGET_UNLIMITED;
    }
    if (!berth_budget_nodes_valid(b->nodes))
        return -1;
    size_t n = strlen(b->nodes);
    char *end;
    long long v = strtoll(b->nodes, &end, 10);
    if (b->nodes[n - 1] == '%') {
        if (nodes < 0)
            nodes = 0;
        /* ceil(p * nodes / 100), upstream GetScaledValueFromIntOrPercent(roundUp) */
        return (int64_t)((v * nodes + 99) / 100);
    }
    if (*end || v > INT32_MAX)
        return -1;
    return v;
}

int64_t berth_budgets_allowed(const berth_dbudget *b, uint32_t n, berth_dreason reason,
                              int64_t nodes, int64_t now)
{
    int64_t best = BERTH_BUDGET_UNLIMITED;
    for (uint32_t i = 0; i < n; i++) {
        int64_t v = berth_budget_limit(&b[i], nodes, now);
        if (v < 0)
            return 0; /* fail closed for every reason */
        if (b[i].reasons && !((b[i].reasons >> reason) & 1))
            continue;
        if (v < best)
            best = v;
    }
    return best;
}
