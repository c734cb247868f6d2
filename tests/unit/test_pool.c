/* tests/unit/test_pool.c - the worker pool (src/pipeline/pool.c): every
 * chunk runs exactly once per run whatever the thread count, many runs in
 * a row on one pool (a late worker claims nothing of a later run), a NULL
 * pool runs chunks in order in the caller, and the pipeline with a pool
 * picks what it picks without one (filters and per-node scores in chunks,
 * reject counts, explain capture, random tie-break stream). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "berth/pipeline.h"
#include "berth/pool.h"
#include "berth/random.h"

typedef struct count_job {
    _Atomic uint32_t *hits;
    uint32_t *order;
    _Atomic uint32_t next;
} count_job;

static void count_chunk(void *ctx, uint32_t k)
{
    count_job *j = ctx;
    atomic_fetch_add(&j->hits[k], 1);
    if (j->order)
        j->order[atomic_fetch_add(&j->next, 1)] = k;
}

static void test_every_chunk_once(void **state)
{
    (void)state;
    enum { MAXCH = 300 };
    _Atomic uint32_t hits[MAXCH];
    for (uint32_t threads = 1; threads <= 4; threads++) {
        berth_pool *p = NULL;
        assert_int_equal(berth_pool_create(&p, threads), 0);
        assert_int_equal(berth_pool_threads(p), threads);
        berth_rng rng;
        berth_rng_seed(&rng, threads);
        for (int run = 0; run < 2000; run++) {
            uint32_t n = (uint32_t)berth_rng_below(&rng, MAXCH);
            for (uint32_t k = 0; k < MAXCH; k++)
                atomic_store(&hits[k], 0);
            count_job j = {hits, NULL, 0};
            berth_pool_run(p, n, count_chunk, &j);
            for (uint32_t k = 0; k < MAXCH; k++)
                assert_int_equal(atomic_load(&hits[k]), k < n ? 1 : 0);
        }
        berth_pool_destroy(p);
    }
}

static void test_null_pool_in_order(void **state)
{
    (void)state;
    _Atomic uint32_t hits[16];
    uint32_t order[16];
    for (uint32_t k = 0; k < 16; k++)
        atomic_store(&hits[k], 0);
    count_job j = {hits, order, 0};
    berth_pool_run(NULL, 16, count_chunk, &j);
    for (uint32_t k = 0; k < 16; k++)
        assert_int_equal(order[k], k);
    berth_pool *p = (berth_pool *)1;
    assert_int_equal(berth_pool_create(&p, 1), 0);
    assert_null(p);
    assert_true(berth_threads_online() >= 1);
}

/* ---- the pipeline with and without a pool ---- */

enum { NC = 5000 };
typedef struct dom {
    int64_t cap[NC], a[NC];
    uint8_t zone[NC];
    int64_t need;
    int prepared;
} dom;

static void f_cap(void *st, const void *req, const uint32_t *cand, uint32_t n, uint8_t *v)
{
    const dom *d = st;
    for (uint32_t i = 0; i < n; i++)
        if (d->cap[cand[i]] < d->need)
            v[i] = BERTH_UNFIT;
}

static void f_zone(void *st, const void *req, const uint32_t *cand, uint32_t n, uint8_t *v)
{
    const dom *d = st;
    for (uint32_t i = 0; i < n; i++)
        if (d->zone[cand[i]] == 3)
            v[i] = BERTH_UNRESOLVABLE;
}

static void s_a(void *st, const void *req, const uint32_t *cand, uint32_t n, int64_t *out)
{
    const dom *d = st;
    for (uint32_t i = 0; i < n; i++)
        out[i] = d->a[cand[i]];
}

static void s_free(void *st, const void *req, const uint32_t *cand, uint32_t n, int64_t *out)
{
    const dom *d = st;
    for (uint32_t i = 0; i < n; i++)
        out[i] = (d->cap[cand[i]] - d->need) / 8;
}

static int prep(void *st, const void *req, const uint32_t *cand, uint32_t n)
{
    ((dom *)st)->prepared++;
    return 0;
}

static const berth_filter_plugin F1 = {BERTH_PLUGIN_VERSION, "cap", f_cap, NULL};
static const berth_filter_plugin F2 = {BERTH_PLUGIN_VERSION, "zone", f_zone, NULL};
static const berth_score_plugin S1 = {BERTH_PLUGIN_VERSION, "a", s_a, NULL, 1};
static const berth_score_plugin S2 = {BERTH_PLUGIN_VERSION, "free", s_free, NULL, 1};

static void test_pipeline_same_with_pool(void **state)
{
    (void)state;
    static dom d;
    const berth_filter_plugin *fs[] = {&F1, &F2};
    const berth_score_plugin *ss[] = {&S1, &S2};
    int64_t w[] = {2, 1};
    berth_rng rng;
    berth_rng_seed(&rng, 42);
    berth_pool *pool = NULL;
    assert_int_equal(berth_pool_create(&pool, 3), 0);
    for (int round = 0; round < 40; round++) {
        uint32_t n = 900 + (uint32_t)berth_rng_below(&rng, NC - 900);
        for (uint32_t i = 0; i < n; i++) {
            d.cap[i] = (int64_t)berth_rng_below(&rng, 100);
            d.a[i] = (int64_t)berth_rng_below(&rng, 4); /* many ties */
            d.zone[i] = (uint8_t)berth_rng_below(&rng, 4);
        }
        d.need = (int64_t)berth_rng_below(&rng, 60);
        berth_profile p = {BERTH_PLUGIN_VERSION, "toy", fs, 2, ss, w, 2, BERTH_COMBINE_SUM,
                           round % 3 == 0 ? BERTH_TIE_RANDOM : round % 3 == 1 ? BERTH_TIE_FIRST
                                                                              : BERTH_TIE_LAST};
        p.prepare = prep;
        berth_cycle c1, c2;
        assert_int_equal(berth_cycle_init(&c1, NC, 2, 7), 0);
        assert_int_equal(berth_cycle_init(&c2, NC, 2, 7), 0);
        c1.explain = c2.explain = 1;
        c1.all_filters = c2.all_filters = round % 2;
        assert_int_equal(berth_cycle_set_pool(&c2, pool), 0);
        for (int pick = 0; pick < 5; pick++) {
            berth_pick a, b;
            d.prepared = 0;
            assert_int_equal(berth_pipeline_pick(&p, &d, NULL, &c1, n, 0, &a), 0);
            assert_int_equal(d.prepared, 0);
            assert_int_equal(berth_pipeline_pick(&p, &d, NULL, &c2, n, 0, &b), 0);
            assert_true(n < BERTH_PAR_MIN || d.prepared > 0);
            assert_int_equal(a.chosen, b.chosen);
            assert_int_equal(a.nfeasible, b.nfeasible);
            assert_int_equal(a.examined, b.examined);
            assert_memory_equal(c1.reject_count, c2.reject_count, sizeof c1.reject_count);
            assert_int_equal(c1.unresolvable, c2.unresolvable);
            assert_memory_equal(c1.feasible, c2.feasible, a.nfeasible * sizeof *c1.feasible);
            assert_memory_equal(c1.total, c2.total, a.nfeasible * sizeof *c1.total);
            assert_memory_equal(c1.first_reject, c2.first_reject, n);
            if (c1.all_filters)
                assert_memory_equal(c1.reject_mask, c2.reject_mask, n * sizeof *c1.reject_mask);
            d.need = (d.need + 7) % 60;
        }
        berth_cycle_free(&c1);
        berth_cycle_free(&c2);
    }
    berth_pool_destroy(pool);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_chunk_once),
        cmocka_unit_test(test_null_pool_in_order),
        cmocka_unit_test(test_pipeline_same_with_pool),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
