/* tests/unit/test_nexus_site.c - the Site loader's rack and machine order
 * (src/nexus/load.c): racks in natural order (digit runs compare as
 * numbers; names equal in that order, "r1" and "r01", keep the order they
 * were first seen), each rack's machines contiguous in definition order.
 * The loader sorts racks and groups machines by a counting sort; the
 * order must be the one the insertion sort and per-rack scan it replaced
 * gave, kept here as the reference (ref_order) and compared over random
 * sites whose rack names mix letters, numbers and leading zeros. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "berth/doc.h"
#include "berth/nexus.h"
#include "berth/random.h"

#define HEAD                                                                                 \
    "apiVersion: berth.io/v1\nkind: Site\nmetadata: {name: lab}\n"                           \
    "spec:\n  machine: {numaCells: 2, cell: {cpu: 48, memory: 224Gi}}\n  machines:\n"

/* the reference's comparison (the loader's natural_less) */
static int ref_less(const char *a, const char *b)
{
    while (*a && *b) {
        if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
            char *ea, *eb;
            unsigned long long x = strtoull(a, &ea, 10), y = strtoull(b, &eb, 10);
            if (x != y)
                return x < y;
            a = ea;
            b = eb;
            continue;
        }
        if (*a != *b)
            return (unsigned char)*a < (unsigned char)*b;
        a++;
        b++;
    }
    return !*a && *b;
}

typedef struct msite {
    char (*mname)[32], (*rname)[32];
    uint32_t n;
} msite;

/* The order before the counting sort: distinct racks in first-seen order,
 * insertion-sorted, then each rack's machines by a scan in definition
 * order. out[i]: definition index of the i-th machine; racks[r]: name. */
static void ref_order(const msite *s, uint32_t *out, const char **racks, uint32_t *nr)
{
    *nr = 0;
    for (uint32_t i = 0; i < s->n; i++) {
        uint32_t j = 0;
        while (j < *nr && strcmp(racks[j], s->rname[i]))
            j++;
        if (j == *nr)
            racks[(*nr)++] = s->rname[i];
    }
    for (uint32_t i = 1; i < *nr; i++)
        for (uint32_t j = i; j > 0 && ref_less(racks[j], racks[j - 1]); j--) {
            const char *t = racks[j];
            racks[j] = racks[j - 1];
            racks[j - 1] = t;
        }
    uint32_t m = 0;
    for (uint32_t r = 0; r < *nr; r++)
        for (uint32_t i = 0; i < s->n; i++)
            if (!strcmp(s->rname[i], racks[r]))
                out[m++] = i;
}

static char *site_yaml(const msite *s)
{
    size_t cap = strlen(HEAD) + (size_t)s->n * 96 + 1, n = 0;
    char *y = malloc(cap);
    assert_non_null(y);
    n += (size_t)snprintf(y, cap, "%s", HEAD);
    for (uint32_t i = 0; i < s->n; i++)
        n += (size_t)snprintf(y + n, cap - n, "  - {name: %s, rack: \"%s\"}\n", s->mname[i],
                              s->rname[i]);
    return y;
}

static void check(const msite *s)
{
    char *y = site_yaml(s);
    berth_nexus nx;
    berth_nexus_init(&nx);
    berth_source src;
    berth_error e;
    berth_error_clear(&e);
    int rc = berth_doc_load_buffer(&nx.arena, "site.yaml", y, strlen(y), &src, &e);
    if (!rc)
        rc = berth_nexus_load(&nx, &src, 1, &e);
    if (rc)
        fail_msg("load: %s", e.msg);
    uint32_t *want = malloc(s->n * sizeof *want), nr = 0;
    const char **racks = malloc(s->n * sizeof *racks);
    assert_non_null(want);
    assert_non_null(racks);
    ref_order(s, want, racks, &nr);
    assert_int_equal(nx.nracks, nr);
    assert_int_equal(nx.nmachines, s->n);
    for (uint32_t r = 0; r < nr; r++) {
        if (strcmp(nx.racks[r].name, racks[r]))
            fail_msg("rack %u is '%s', expected '%s'", r, nx.racks[r].name, racks[r]);
        for (uint32_t k = 0; k < nx.racks[r].nmachines; k++)
            assert_int_equal(nx.machines[nx.racks[r].first_machine + k].rack, r);
    }
    for (uint32_t i = 0; i < s->n; i++) {
        if (strcmp(nx.machines[i].name, s->mname[want[i]]))
            fail_msg("machine %u is '%s', expected '%s'", i, nx.machines[i].name,
                     s->mname[want[i]]);
        assert_int_equal(berth_nexus_find_machine(&nx, s->mname[want[i]]), i);
    }
    free(want);
    free(racks);
    berth_nexus_free(&nx);
    free(y);
}

static void test_natural_order_and_ties(void **state)
{
    (void)state;
    static const char *const racks[] = {"r10", "r2", "r01", "b", "r1", "a9", "r2", "a10", "r10",
                                        "r01", "a09"};
    enum { N = sizeof racks / sizeof racks[0] };
    char mname[N][32], rname[N][32];
    for (uint32_t i = 0; i < N; i++) {
        snprintf(mname[i], sizeof mname[i], "m%u", i);
        snprintf(rname[i], sizeof rname[i], "%s", racks[i]);
    }
    msite s = {mname, rname, N};
    check(&s);
    /* spelled out: a9 and a09 are equal (a9 first seen), r01 before r1 */
    char *y = site_yaml(&s);
    berth_nexus nx;
    berth_nexus_init(&nx);
    berth_source src;
    berth_error e;
    berth_error_clear(&e);
    assert_int_equal(berth_doc_load_buffer(&nx.arena, "s.yaml", y, strlen(y), &src, &e), 0);
    assert_int_equal(berth_nexus_load(&nx, &src, 1, &e), 0);
    static const char *const order[] = {"a9", "a09", "a10", "b", "r01", "r1", "r2", "r10"};
    assert_int_equal(nx.nracks, 8);
    for (uint32_t r = 0; r < 8; r++)
        assert_string_equal(nx.racks[r].name, order[r]);
    /* r10's machines in definition order: m0 then m8 */
    assert_string_equal(nx.machines[nx.racks[7].first_machine].name, "m0");
    assert_string_equal(nx.machines[nx.racks[7].first_machine + 1].name, "m8");
    berth_nexus_free(&nx);
    free(y);
}

static void test_random_sites_match_reference(void **state)
{
    (void)state;
    berth_rng r;
    berth_rng_seed(&r, 11);
    static const char *const pre[] = {"", "r", "rack", "a-", "zone"};
    for (int round = 0; round < 20; round++) {
        uint32_t n = 1 + berth_rng_below(&r, 600), nr = 1 + berth_rng_below(&r, 150);
        char(*mname)[32] = malloc(n * sizeof *mname), (*rname)[32] = malloc(n * sizeof *rname);
        assert_non_null(mname);
        assert_non_null(rname);
        for (uint32_t i = 0; i < n; i++) {
            uint32_t k = berth_rng_below(&r, nr);
            snprintf(mname[i], sizeof mname[i], "bmm-%u-%u", round, i);
            /* the rack's name from k: a prefix, maybe leading zeros, a
             * number, maybe a suffix (so names of one k agree) */
            snprintf(rname[i], sizeof rname[i], "%s%s%u%s", pre[k % 5], k % 7 == 0 ? "00" : "",
                     k / 3, k % 2 ? "" : "b");
        }
        msite s = {mname, rname, n};
        check(&s);
        free(mname);
        free(rname);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_natural_order_and_ties),
        cmocka_unit_test(test_random_sites_match_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
