/* tests/unit/test_kube_pct.c - kube/pct.h, the division-free
 * floor(a * 100 / b) of NodeResourcesFit's allocation scores, against the
 * plain (128-bit) integer division: edge values (0, a = b, b = 1, the
 * double estimate's bound and just past it, INT64_MAX), quotients just
 * below and at every integer 0..100 for large b (where the rounded double
 * quotient is off by one and the correction steps decide), and random
 * values of every magnitude. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "kube/pct.h"

static int64_t plain(int64_t a, int64_t b)
{
    return (int64_t)((__int128)a * 100 / b);
}

/* Checks both entry points on (a, b); counts the cases checked. */
static void check(int64_t a, int64_t b, unsigned *count)
{
    if (a < 0 || a > b || b <= 0)
        return;
    int64_t want = plain(a, b);
    if (b <= KUBE_PCT_DOUBLE_MAX) {
        int64_t got = kube_pct_floor_est(a, b);
        if (got != want)
            fail_msg("kube_pct_floor_est(%lld, %lld) = %lld, want %lld", (long long)a,
                     (long long)b, (long long)got, (long long)want);
    }
    int64_t got = kube_pct_floor(a, b);
    if (got != want)
        fail_msg("kube_pct_floor(%lld, %lld) = %lld, want %lld", (long long)a, (long long)b,
                 (long long)got, (long long)want);
    (*count)++;
}

static uint64_t next(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void test_edges(void **state)
{
    (void)state;
    unsigned n = 0;
    const int64_t bs[] = {1, 2, 3, 7, 100, 101, 1000, 16000, 64LL << 30, (1LL << 46) - 1,
                          1LL << 46, (1LL << 53) + 1, KUBE_PCT_DOUBLE_MAX - 1,
                          KUBE_PCT_DOUBLE_MAX, KUBE_PCT_DOUBLE_MAX + 1, INT64_MAX / 100,
                          INT64_MAX - 1, INT64_MAX};
    for (size_t i = 0; i < sizeof bs / sizeof *bs; i++) {
        int64_t b = bs[i];
        check(0, b, &n);        /* nothing allocated */
        check(b, b, &n);        /* allocatable = requested */
        check(b - 1, b, &n);
        check(1, b, &n);
        check(b / 2, b, &n);
        check(b / 2 + 1, b, &n);
    }
    assert_int_equal(kube_pct_floor(0, 1), 0);
    assert_int_equal(kube_pct_floor(1, 1), 100);
    assert_int_equal(kube_pct_floor(1, 3), 33);
    assert_int_equal(kube_pct_floor(2, 3), 66);
    assert_int_equal(kube_pct_floor(INT64_MAX, INT64_MAX), 100);
    assert_int_equal(kube_pct_floor(INT64_MAX - 1, INT64_MAX), 99);
    assert_true(n > 90);
}

/* For large b the numerator a * 100 loses its low bits in the double, so
 * a quotient just below an integer k rounds up to k (the step down
 * corrects it) and one at k can come out just below (the step up). */
static void test_near_integers(void **state)
{
    (void)state;
    unsigned n = 0;
    uint64_t seed = 42;
    for (int round = 0; round < 400; round++) {
        /* b between 2^40 and the double bound, plus a few fixed ones */
        int64_t b;
        if (round < 4) {
            const int64_t fixed[] = {1LL << 55, (1LL << 55) - 1, (1LL << 55) + 8,
                                     KUBE_PCT_DOUBLE_MAX};
            b = fixed[round];
        } else {
            int bits = 40 + (int)(next(&seed) % 17); /* 40..56 */
            b = (int64_t)(next(&seed) >> (64 - bits)) | (1LL << (bits - 1));
            if (b > KUBE_PCT_DOUBLE_MAX)
                b = KUBE_PCT_DOUBLE_MAX - (int64_t)(next(&seed) % 1000);
        }
        for (int64_t k = 0; k <= 100; k++) {
            __int128 kb = (__int128)k * b;
            /* largest a with a * 100 < k * b, smallest with a * 100 >= k * b */
            int64_t below = (int64_t)((kb - 1) / 100), at = (int64_t)((kb + 99) / 100);
            for (int64_t d = -2; d <= 2; d++) {
                check(below + d, b, &n);
                check(at + d, b, &n);
            }
        }
    }
    assert_true(n > 400 * 101 * 8);
}

static void test_random(void **state)
{
    (void)state;
    unsigned n = 0;
    uint64_t seed = 7;
    for (int i = 0; i < 200000; i++) {
        int bits = 1 + (int)(next(&seed) % 63); /* b of every magnitude */
        int64_t b = (int64_t)(next(&seed) >> (64 - bits));
        if (b <= 0)
            b = 1;
        int64_t a = (int64_t)(next(&seed) % ((uint64_t)b + 1));
        check(a, b, &n);
    }
    assert_int_equal(n, 200000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_near_integers),
        cmocka_unit_test(test_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
