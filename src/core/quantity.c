/* core/quantity.c - Kubernetes resource.Quantity: exact parsing into nano
 * units, rounding to milli/whole units, comparison and canonical text.
 *
 * The parser mirrors k8s.io/apimachinery resource.ParseQuantity: a sign,
 * a decimal number, then an optional suffix (decimal SI, binary SI or a
 * decimal exponent). The number may have any length; the result is computed
 * digit by digit so no bignum or allocation is needed. */
#include "berth/quantity.h"
#include "berth/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

typedef unsigned __int128 u128;

#define NANO_PER_UNIT 1000000000
#define NANO_PER_MILLI 1000000
/* Largest magnitude accepted: resource.Quantity's maxAllowed, INT64_MAX
 * whole units, expressed in nano units. */
#define QTY_CAP ((u128)INT64_MAX * NANO_PER_UNIT)
/* Decimal exponents are clamped to this magnitude while parsing; any
 * non-zero value with a larger exponent is out of range or rounds to 1n. */
#define EXP_CLAMP 1000000000LL

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Suffix -> (power of ten, power of two). Returns false when s is not a
 * known suffix; sets *why. */
static bool parse_suffix(const char *s, long long *exp10, int *exp2,
                         const char **why)
{
    static const struct { const char *name; int e10, e2; } table[] = {
        {"", 0, 0},   {"n", -9, 0}, {"u", -6, 0}, {"m", -3, 0},
        {"k", 3, 0},  {"M", 6, 0},  {"G", 9, 0},  {"T", 12, 0},
        {"P", 15, 0}, {"E", 18, 0},
        {"Ki", 0, 10}, {"Mi", 0, 20}, {"Gi", 0, 30},
        {"Ti", 0, 40}, {"Pi", 0, 50}, {"Ei", 0, 60},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (strcmp(s, table[i].name) == 0) {
            *exp10 = table[i].e10;
            *exp2 = table[i].e2;
            return true;
        }
    }
    if (s[0] == 'e' || s[0] == 'E') {
        const char *p = s + 1;
        bool neg = false;
        if (*p == '+' || *p == '-')
            neg = *p++ == '-';
        if (is_digit(*p)) {
            long long e = 0;
            for (; is_digit(*p); p++) {
                if (e < EXP_CLAMP)
                    e = e * 10 + (*p - '0');
            }
            if (*p == '\0') {
                if (e > EXP_CLAMP)
                    e = EXP_CLAMP;
                *exp10 = neg ? -e : e;
                *exp2 = 0;
                return true;
            }
        }
        if (!is_alpha(s[1])) {
            *why = "invalid exponent";
            return false;
        }
    }
    for (const char *p = s; *p; p++) {
        if (!is_alpha(*p)) {
            *why = "invalid number";
            return false;
        }
    }
    *why = "unknown suffix";
    return false;
}

/* The digit sequence of the number: integer digits then fraction digits,
 * addressed as one array. */
typedef struct digits {
    const char *ip, *fp;
    size_t ni, nf;
} digits;

static int digit_at(const digits *d, size_t i)
{
    return i < d->ni ? d->ip[i] - '0' : d->fp[i - d->ni] - '0';
}

/* Accumulates digits [from, to) into *v; false when the value would
 * exceed QTY_CAP. */
static bool accumulate(const digits *d, size_t from, size_t to, u128 *v)
{
    u128 x = 0;
    for (size_t i = from; i < to; i++) {
        x = x * 10 + (u128)digit_at(d, i);
        if (x > QTY_CAP)
            return false;
    }
    *v = x;
    return true;
}

static bool shift_left(u128 *v, int exp2)
{
    if (*v > (QTY_CAP >> exp2))
        return false;
    *v <<= exp2;
    return true;
}

static int einval(const char **why, const char *reason)
{
    *why = reason;
    return BERTH_EINVAL;
}

int berth_quantity_parse(const char *s, berth_quantity *out, const char **why)
{
    const char *dummy;
    if (!why)
        why = &dummy;
    *why = NULL;
    if (!out)
        return einval(why, "no output");
    out->nano = 0;
    if (!s || !*s)
        return einval(why, "empty");

    const char *p = s;
    bool neg = false;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    digits d = {p, NULL, 0, 0};
    while (is_digit(*p))
        p++;
    d.ni = (size_t)(p - d.ip);
    if (*p == '.') {
        d.fp = ++p;
        while (is_digit(*p))
            p++;
        d.nf = (size_t)(p - d.fp);
    }
    /* resource.ParseQuantity lets "", "." and "+" stand for zero before a
     * suffix ("m", "e3"); the grammar requires a digit, and so do we. */
    if (d.ni + d.nf == 0)
        return einval(why, "invalid number");

    long long exp10;
    int exp2;
    if (!parse_suffix(p, &exp10, &exp2, why))
        return BERTH_EINVAL;

    /* Significant digits [first, last]; the value is
     * D * 10^(trailing zeros - nf + exp10) * 2^exp2. */
    size_t n = d.ni + d.nf, first = 0, last = n;
    while (first < n && digit_at(&d, first) == 0)
        first++;
    if (first == n)
        return 0;   /* zero, whatever the suffix */
    while (digit_at(&d, last - 1) == 0)
        last--;
    long long e = exp10 + (long long)(n - last) - (long long)d.nf + 9;
    size_t len = last - first;

    u128 v;
    if (e >= 0) {
        if (!accumulate(&d, first, last, &v))
            goto range;
        for (long long i = 0; i < e; i++) {
            v *= 10;
            if (v > QTY_CAP)
                goto range;
        }
        if (!shift_left(&v, exp2))
            goto range;
    } else {
        /* D / 10^k = Q + R / 10^k with R the last k digits (zero-padded on
         * the left when there are fewer than k). nano = Q * 2^exp2 +
         * ceil(R * 2^exp2 / 10^k), the fraction multiplied out digit by
         * digit from the right; the carry stays below 2^exp2. */
        unsigned long long k = (unsigned long long)-e;
        size_t qlen = k < len ? len - (size_t)k : 0;
        if (!accumulate(&d, first, first + qlen, &v) || !shift_left(&v, exp2))
            goto range;
        u128 carry = 0, mul = (u128)1 << exp2;
        bool rest = false;
        for (size_t i = last; i > first + qlen; i--) {
            u128 t = (u128)digit_at(&d, i - 1) * mul + carry;
            rest |= t % 10 != 0;
            carry = t / 10;
        }
        unsigned long long pad = k - (len - qlen);
        for (unsigned long long i = 0; i < pad && carry != 0; i++) {
            rest |= carry % 10 != 0;
            carry /= 10;
        }
        v += carry + (rest ? 1 : 0);
        if (v > QTY_CAP)
            goto range;
    }
    out->nano = neg ? -(__int128)v : (__int128)v;
    return 0;
range:
    *why = "value out of range";
    return BERTH_EINVAL;
}

/* nano / div rounded away from zero, saturated to int64. */
static int64_t scaled(__int128 nano, int64_t div)
{
    __int128 q = nano / div;
    if (nano % div != 0)
        q += nano < 0 ? -1 : 1;
    if (q > INT64_MAX)
        return INT64_MAX;
    if (q < INT64_MIN)
        return INT64_MIN;
    return (int64_t)q;
}

int64_t berth_quantity_value(berth_quantity q)
{
    return scaled(q.nano, NANO_PER_UNIT);
}

int64_t berth_quantity_milli(berth_quantity q)
{
    return scaled(q.nano, NANO_PER_MILLI);
}

double berth_quantity_double(berth_quantity q)
{
    return (double)q.nano / 1e9;
}

int berth_quantity_cmp(berth_quantity a, berth_quantity b)
{
    return (a.nano > b.nano) - (a.nano < b.nano);
}

/* Writes v in decimal into tmp (at least 40 bytes); returns the start. */
static char *u128_str(u128 v, char *tmp, size_t size)
{
    char *p = tmp + size;
    *--p = '\0';
    do {
        *--p = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v);
    return p;
}

void berth_quantity_format(berth_quantity q, char *buf, int size)
{
    if (!buf || size <= 0)
        return;
    bool neg = q.nano < 0;
    u128 mag = neg ? (u128)0 - (u128)q.nano : (u128)q.nano;
    const char *sign = neg ? "-" : "";
    char tmp[48], frac[16];

    if (mag == 0) {
        snprintf(buf, (size_t)size, "0");
    } else if (mag % NANO_PER_UNIT == 0) {
        /* Binary and decimal forms; the one with fewer digits wins, binary
         * on a tie. */
        static const char *const bin[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
        static const char *const dec[] = {"", "k", "M", "G", "T", "P", "E"};
        u128 b = mag / NANO_PER_UNIT, d = b;
        int kb = 0, kd = 0;
        while (kb < 6 && b % 1024 == 0) {
            b /= 1024;
            kb++;
        }
        while (kd < 6 && d % 1000 == 0) {
            d /= 1000;
            kd++;
        }
        if (kd < 2) {   /* keep "1000", "2000": no "k" */
            d = mag / NANO_PER_UNIT;
            kd = 0;
        }
        char tmp2[48];
        const char *bs = u128_str(b, tmp, sizeof tmp);
        const char *ds = u128_str(d, tmp2, sizeof tmp2);
        if (kb > 0 && strlen(bs) <= strlen(ds))
            snprintf(buf, (size_t)size, "%s%s%s", sign, bs, bin[kb]);
        else
            snprintf(buf, (size_t)size, "%s%s%s", sign, ds, dec[kd]);
    } else if (mag >= NANO_PER_UNIT) {
        unsigned f = (unsigned)(mag % NANO_PER_UNIT);
        snprintf(frac, sizeof frac, "%09u", f);
        size_t fl = strlen(frac);
        while (fl > 0 && frac[fl - 1] == '0')
            frac[--fl] = '\0';
        snprintf(buf, (size_t)size, "%s%s.%s", sign,
                 u128_str(mag / NANO_PER_UNIT, tmp, sizeof tmp), frac);
    } else {
        unsigned f = (unsigned)mag;
        if (f % NANO_PER_MILLI == 0)
            snprintf(buf, (size_t)size, "%s%um", sign, f / NANO_PER_MILLI);
        else if (f % 1000 == 0)
            snprintf(buf, (size_t)size, "%s%uu", sign, f / 1000);
        else
            snprintf(buf, (size_t)size, "%s%un", sign, f);
    }
}
