/* test_grow.c - the shared table growth (core/grow.c): berth_grow's
 * doubling and limits, berth_grow_bytes' doubling (kept bytes, first
 * capacity), and berth_slots_rebuild's slot tables (every entry found by
 * probing from its hash, nothing else in the table), and the huge-page
 * advice on large tables (contents kept, new elements zeroed), and
 * berth_grow_append's growth that leaves the new capacity untouched
 * (contents kept; the unused part of a large table not resident). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "berth/error.h"
#include "berth/grow.h"

typedef struct entry {
    uint64_t pad;
    uint32_t hash;
    uint32_t value;
} entry;

static void test_grow(void **st)
{
    (void)st;
    uint32_t *v = NULL, cap = 0;
    assert_int_equal(berth_grow((void **)&v, &cap, 5, sizeof *v, 0), 0);
    assert_int_equal(cap, 8);
    v[7] = 1;
    assert_int_equal(berth_grow((void **)&v, &cap, 9, sizeof *v, 0), 0);
    assert_int_equal(cap, 16);
    assert_int_equal(v[7], 1);
    assert_int_equal(v[15], 0); /* new elements zeroed */
    assert_int_equal(berth_grow((void **)&v, &cap, 100, sizeof *v, 64), BERTH_ELIMIT);
    assert_int_equal(cap, 16);
    free(v);
}

static void test_grow_bytes(void **st)
{
    (void)st;
    char *b = NULL;
    size_t cap = 0;
    assert_int_equal(berth_grow_bytes((void **)&b, &cap, 10, 256), 0);
    assert_int_equal(cap, 256);
    memcpy(b, "abc", 4);
    assert_int_equal(berth_grow_bytes((void **)&b, &cap, 200, 256), 0); /* room already */
    assert_int_equal(cap, 256);
    assert_int_equal(berth_grow_bytes((void **)&b, &cap, 1000, 256), 0);
    assert_int_equal(cap, 1024);
    assert_string_equal(b, "abc"); /* kept */
    assert_int_equal(berth_grow_bytes((void **)&b, &cap, SIZE_MAX, 256), BERTH_ENOMEM);
    assert_int_equal(cap, 1024);
    assert_string_equal(b, "abc");
    free(b);
    char *c = NULL;
    cap = 0;
    assert_int_equal(berth_grow_bytes((void **)&c, &cap, 1, 0), 0); /* first 0: 64 */
    assert_int_equal(cap, 64);
    free(c);
}

/* Tables past BERTH_HUGE_MIN are advised for 2 MB pages as they grow: the
 * advice must keep what is there (an advice that dropped pages, such as
 * MADV_DONTNEED, would zero them) and the new part must still read zero. */
static void test_grow_large(void **st)
{
    (void)st;
    uint64_t *t = NULL;
    uint32_t cap = 0, n = 0;
    const uint32_t want = (uint32_t)(3 * BERTH_HUGE_MIN / sizeof *t) + 12345;
    while (n < want) {
        uint32_t need = n + 1 + n / 3;
        if (need > want)
            need = want;
        assert_int_equal(berth_grow((void **)&t, &cap, need, sizeof *t, 0), 0);
        for (uint32_t i = n; i < cap; i += 4099)
            assert_true(t[i] == 0);
        for (uint32_t i = 0; i < n; i += 997)
            assert_true(t[i] == (uint64_t)i * 2654435761u + 1);
        for (; n < need; n++)
            t[n] = (uint64_t)n * 2654435761u + 1;
    }
    assert_true(cap >= want);
    /* unaligned ranges, inside and across the table, below and above the
     * size the advice starts at */
    berth_advise_huge((char *)t + 3, (size_t)want * sizeof *t - 3);
    berth_advise_huge(t, BERTH_HUGE_MIN - 1);
    berth_advise_huge((char *)t + 4097, BERTH_HUGE_MIN + 5);
    for (uint32_t i = 0; i < want; i++)
        if (t[i] != (uint64_t)i * 2654435761u + 1)
            fail_msg("element %u changed by the advice", i);
    free(t);
}

/* Resident pages of [a, a + len) (mincore over the whole pages inside). */
static size_t resident(const void *a, size_t len)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t s = ((uintptr_t)a + pg - 1) & ~(uintptr_t)(pg - 1);
    uintptr_t e = ((uintptr_t)a + len) & ~(uintptr_t)(pg - 1);
    if (e <= s)
        return 0;
    size_t n = (e - s) / pg, r = 0;
    unsigned char *v = malloc(n);
    assert_non_null(v);
    assert_int_equal(mincore((void *)s, e - s, v), 0);
    for (size_t i = 0; i < n; i++)
        r += v[i] & 1;
    free(v);
    return r;
}

/* berth_grow_append: doubling and limits as berth_grow, the records kept,
 * and the capacity past them never touched: a table that doubled to 4x
 * BERTH_HUGE_MIN with a little over 2x written leaves most of the rest
 * non-resident (berth_grow zeroes it: all of it resident). */
static void test_grow_append(void **st)
{
    (void)st;
    uint32_t *v = NULL, cap = 0;
    assert_int_equal(berth_grow_append((void **)&v, &cap, 5, sizeof *v, 0), 0);
    assert_int_equal(cap, 8);
    v[7] = 7;
    assert_int_equal(berth_grow_append((void **)&v, &cap, 9, sizeof *v, 0), 0);
    assert_int_equal(cap, 16);
    assert_int_equal(v[7], 7);
    assert_int_equal(berth_grow_append((void **)&v, &cap, 100, sizeof *v, 64), BERTH_ELIMIT);
    assert_int_equal(cap, 16);
    free(v);

    uint64_t *t = NULL;
    uint32_t n = 0;
    cap = 0;
    const uint32_t want = (uint32_t)(2 * BERTH_HUGE_MIN / sizeof *t) + 1;
    for (; n < want; n++) {
        assert_int_equal(berth_grow_append((void **)&t, &cap, n + 1, sizeof *t, 0), 0);
        t[n] = (uint64_t)n * 2654435761u + 1;
    }
    assert_true(cap >= 2 * want - 2);
    for (uint32_t i = 0; i < want; i++)
        if (t[i] != (uint64_t)i * 2654435761u + 1)
            fail_msg("element %u not kept", i);
    /* past the records and the 2 MB page they end in: none resident */
    size_t skip = (size_t)want * sizeof *t + 4u * 1024u * 1024u;
    size_t tail = (size_t)cap * sizeof *t - skip;
    assert_int_equal(resident((char *)t + skip, tail), 0);
    free(t);

    /* the zeroing growth, for contrast: the same tail resident */
    t = NULL;
    cap = 0;
    assert_int_equal(berth_grow((void **)&t, &cap, want, sizeof *t, 0), 0);
    skip = (size_t)want * sizeof *t + 4u * 1024u * 1024u;
    tail = (size_t)cap * sizeof *t - skip;
    assert_true(resident((char *)t + skip, tail) > 0);
    free(t);
}

static void test_slots_rebuild(void **st)
{
    (void)st;
    enum { N = 700 };
    entry *e = calloc(N, sizeof *e);
    assert_non_null(e);
    for (uint32_t k = 0; k < N; k++)
        e[k] = (entry){0, (k * 2654435761u) ^ (k % 7 ? 0 : 0xff00u), k};
    e[1].hash = e[0].hash; /* a collision */
    uint32_t *t = calloc(4, sizeof *t), cap = 4;
    assert_non_null(t);
    assert_int_equal(
        berth_slots_rebuild(&t, &cap, 1024, e, sizeof *e, offsetof(entry, hash), 4, N), 0);
    assert_int_equal(cap, 1024);
    uint32_t used = 0;
    for (uint32_t i = 0; i < cap; i++)
        used += t[i] != 0;
    assert_int_equal(used, N);
    for (uint32_t k = 0; k < N; k++) {
        uint32_t i = e[k].hash & (cap - 1), hops = 0;
        while (t[i] && t[i] != k + 1) {
            i = (i + 1) & (cap - 1);
            assert_true(++hops < cap);
        }
        assert_int_equal(t[i], k + 1);
    }
    free(t);
    free(e);
}

/* 64-bit hashes (the kube tables' own): probed from the hash's low bits,
 * which differ from its high ones here */
typedef struct entry64 {
    uint32_t pad;
    uint64_t hash;
} entry64;

static void test_slots_rebuild64(void **st)
{
    (void)st;
    enum { N = 300 };
    entry64 e[N];
    for (uint32_t k = 0; k < N; k++)
        e[k] = (entry64){k, ((uint64_t)(k * 40503u) << 32) | (k * 2654435761u)};
    uint32_t *t = NULL, cap = 0;
    assert_int_equal(
        berth_slots_rebuild(&t, &cap, 512, e, sizeof *e, offsetof(entry64, hash), 8, N), 0);
    assert_int_equal(cap, 512);
    for (uint32_t k = 0; k < N; k++) {
        uint32_t i = (uint32_t)e[k].hash & (cap - 1), hops = 0;
        while (t[i] && t[i] != k + 1) {
            i = (i + 1) & (cap - 1);
            assert_true(++hops < cap);
        }
        assert_int_equal(t[i], k + 1);
    }
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grow),
        cmocka_unit_test(test_grow_bytes),
        cmocka_unit_test(test_grow_large),
        cmocka_unit_test(test_grow_append),
        cmocka_unit_test(test_slots_rebuild),
        cmocka_unit_test(test_slots_rebuild64),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
