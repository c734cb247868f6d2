/* tests/unit/test_pipeline.c - the shared placement loop (src/pipeline/)
 * on a toy domain of its own: combine modes (weighted sum with
 * normalisation, lexicographic), tie-breaks first/last/random, max_feasible
 * (the percentageOfNodesToScore stop, across chunk boundaries), narrow (an
 * index that must agree with the full scan, -1 for a full scan), reject
 * counting per filter (short-cut and all_filters), explain capture,
 * caller-given batches and reserve. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "berth/error.h"
#include "berth/pipeline.h"

enum { MAXC = 1200 };

/* the toy domain: candidates with a capacity, a zone and two scores */
typedef struct toy {
    uint32_t n;
    int64_t cap[MAXC];
    int zone[MAXC];
    int64_t a[MAXC], b[MAXC];
    uint32_t filtered[2];       /* candidates seen by each filter */
    int normalized;
    uint32_t reserved;
    int narrow_mode;            /* 0: -1 (full scan); 1: the zone's candidates */
} toy;

typedef struct toy_req {
    int64_t need;
    int zone;                   /* -1: any */
} toy_req;

static void f_cap(void *st, const void *rq, const uint32_t *cand, uint32_t n, uint8_t *v)
{
    toy *t = st;
    const toy_req *r = rq;
    t->filtered[0] += n;
    for (uint32_t i = 0; i < n; i++)
        if (t->cap[cand[i]] < r->need)
            v[i] = BERTH_UNFIT;
}

static void f_zone(void *st, const void *rq, const uint32_t *cand, uint32_t n, uint8_t *v)
{
    toy *t = st;
    const toy_req *r = rq;
    t->filtered[1] += n;
    for (uint32_t i = 0; i < n; i++)
        if (r->zone >= 0 && t->zone[cand[i]] != r->zone)
            v[i] = BERTH_UNRESOLVABLE;
}

static void s_a(void *st, const void *rq, const uint32_t *cand, uint32_t n, int64_t *out)
{
    toy *t = st;
    for (uint32_t i = 0; i < n; i++)
        out[i] = t->a[cand[i]];
}

static void s_b(void *st, const void *rq, const uint32_t *cand, uint32_t n, int64_t *out)
{
    toy *t = st;
    for (uint32_t i = 0; i < n; i++)
        out[i] = t->b[cand[i]];
}

/* maps scores to 0..100 of the maximum (as kube's NormalizeScore) */
static void norm_a(void *st, const void *rq, int64_t *s, uint32_t n)
{
    toy *t = st;
    t->normalized++;
    int64_t mx = 0;
    for (uint32_t i = 0; i < n; i++)
        mx = s[i] > mx ? s[i] : mx;
    for (uint32_t i = 0; i < n; i++)
        s[i] = mx ? s[i] * 100 / mx : 0;
}

static int narrow_zone(void *st, const void *rq, uint32_t *cand, uint32_t cap)
{
    toy *t = st;
    const toy_req *r = rq;
    if (!t->narrow_mode || r->zone < 0)
        return -1;
    uint32_t k = 0;
    for (uint32_t i = 0; i < t->n && k < cap; i++)
        if (t->zone[i] == r->zone)
            cand[k++] = i;
    return (int)k;
}

static int reserve_it(void *st, const void *rq, uint32_t c)
{
    toy *t = st;
    t->reserved = c;
    t->cap[c] -= ((const toy_req *)rq)->need;
    return 0;
}

static const berth_filter_plugin P_CAP = {BERTH_PLUGIN_VERSION, "Cap", f_cap, NULL};
static const berth_filter_plugin P_ZONE = {BERTH_PLUGIN_VERSION, "Zone", f_zone, NULL};
static const berth_score_plugin P_A = {BERTH_PLUGIN_VERSION, "A", s_a, norm_a};
static const berth_score_plugin P_B = {BERTH_PLUGIN_VERSION, "B", s_b, NULL};
static const berth_filter_plugin *const FILTERS[] = {&P_CAP, &P_ZONE};
static const berth_score_plugin *const SCORES[] = {&P_A, &P_B};

static berth_profile profile(berth_combine combine, berth_tiebreak tie, const int64_t *w)
{
    berth_profile p = {.version = BERTH_PLUGIN_VERSION, .name = "toy", .filters = FILTERS,
                       .nfilters = 2, .scores = SCORES, .weights = w, .nscores = 2,
                       .combine = combine, .tiebreak = tie, .narrow = narrow_zone,
                       .reserve = reserve_it};
    return p;
}

static toy *toy_new(uint32_t n)
{
    toy *t = calloc(1, sizeof *t);
    assert_non_null(t);
    t->n = n;
    for (uint32_t i = 0; i < n; i++) {
        t->cap[i] = 10;
        t->zone[i] = (int)(i % 3);
    }
    return t;
}

/* Weighted sum: raw a is normalised to 0..100 first, then 2*a + 1*b. */
static void test_sum_weights_and_normalize(void **state)
{
    toy *t = toy_new(4);
    /* a (raw): 10 20 40 40 -> normalised 25 50 100 100; b: 90 70 0 5 */
    int64_t a[] = {10, 20, 40, 40}, b[] = {90, 70, 0, 5};
    memcpy(t->a, a, sizeof a);
    memcpy(t->b, b, sizeof b);
    static const int64_t w[] = {2, 1};
    berth_profile p = profile(BERTH_COMBINE_SUM, BERTH_TIE_FIRST, w);
    berth_cycle c;
    assert_int_equal(berth_cycle_init(&c, 4, 2, 1), 0);
    toy_req r = {.need = 1, .zone = -1};
    berth_pick out;
    assert_int_equal(berth_pipeline_pick(&p, t, &r, &c, 4, 0, &out), 0);
    /* totals: 140, 170, 200, 205 */
    assert_int_equal(out.chosen, 3);
    assert_int_equal(out.nfeasible, 4);
    assert_int_equal(t->normalized, 1);
    assert_true(c.total[3] == 205 && c.total[0] == 140);
    /* without weights: 115, 120, 100, 105 */
    p.weights = NULL;
    assert_int_equal(berth_pipeline_pick(&p, t, &r, &c, 4, 0, &out), 0);
    assert_int_equal(out.chosen, 1);
    berth_cycle_free(&c);
    free(t);
}

/* Lexicographic: score a decides, b breaks a's ties; no normalisation. */
static void test_lexicographic(void **state)
{
    toy *t = toy_new(5);
    int64_t a[] = {3, 7, 7, 1, 7}, b[] = {9, 1, 4, 9, 4};
    memcpy(t->a, a, sizeof a);
    memcpy(t->b, b, sizeof b);
    berth_profile p = profile(BERTH_COMBINE_LEXICOGRAPHIC, BERTH_TIE_FIRST, NULL);
    berth_cycle c;
    assert_int_equal(berth_cycle_init(&c, 5, 2, 1), 0);
    toy_req r = {.need = 1, .zone = -1};
    berth_pick out;
    assert_int_equal(berth_pipeline_pick(&p, t, &r, &c, 5, 0, &out), 0);
    assert_int_equal(out.chosen, 2); /* (7,4) ties with 4; first wins */
    assert_int_equal(t->normalized, 0);
    p.tiebreak = BERTH_TIE_LAST;
    assert_int_equal(berth_pipeline_pick(&p, t, &r, &c, 5, 0, &out), 0);
    assert_int_equal(out.chosen, 4);
    berth_cycle_free(&c);
    free(t);
}

/* Ties: first and last by candidate id whatever the batch order; random
 * picks only among the tied, each of them for some seed, reproducibly. */
static void test_tiebreaks(void **state)
{
    toy *t = toy_new(8);
    for (uint32_t i = 0; i < 8; i++)
        t->a[i] = (i == 1 || i == 4 || i == 6) ? 5 : 1;
    berth_profile p = profile(BERTH_COMBINE_SUM, BERTH_TIE_FIRST, NULL);
    berth_cycle c;
    assert_int_equal(berth_cycle_init(&c, 8, 2, 7), 0);
    toy_req r = {.need = 1, .zone = -1};
    berth_pick out;
    const uint32_t rev[] = {7, 6, 5, 4, 3, 2, 1, 0};
    assert_int_equal(berth_pipeline_pick_batch(&p, t, &r, &c, rev, 8, &out), 0);
    assert_int_equal(out.chosen, 1);
    p.tiebreak = BERTH_TIE_LAST;
    assert_int_equal(berth_pipeline_pick_batch(&p, t, &r, &c, rev, 8, &out), 0);
    assert_int_equal(out.chosen, 6);
    p.tiebreak = BERTH_TIE_RANDOM;
    int seen[8] = {0};
    for (uint64_t seed = 1; seed <= 60; seed++) {
        berth_cycle c2;
        assert_int_equal(berth_cycle_init(&c2, 8, 2, seed), 0);
        berth_pick o1, o2;
        assert_int_equal(berth_pipeline_pick(&p, t, &r, &c2, 8, 0, &o1), 0);
        berth_cycle_free(&c2);
        assert_int_equal(berth_cycle_init(&c2, 8, 2, seed), 0);
        assert_int_equal(berth_pipeline_pick(&p, t, &r, &c2, 8, 0, &o2), 0);
        berth_cycle_free(&c2);
        assert_int_equal(o1.chosen, o2.chosen); /* same seed, same pick */
        assert_true(o1.chosen == 1 || o1.chosen == 4 || o1.chosen == 6);
        seen[o1.chosen]++;
    }
    assert_true(seen[1] && seen[4] && seen[6]);
    berth_cycle_free(&c);
    free(t);
}

/* max_feasible: filtering stops at exactly K feasible candidates; examined
 * is the prefix up to the Kth, also when it lies past a 256-candidate chunk. */
static void test_max_feasible(void **state)
{
    toy *t = toy_new(MAXC);
    /* only every 10th candidate has room */
    for (uint32_t i = 0; i < MAXC; i++)
        t->cap[i] = i % 10 == 0 ? 10 : 0;
    berth_profile p = profile(BERTH_COMBINE_SUM, BERTH_TIE_LAST, NULL);
    berth_cycle c;
    assert_int_equal(berth_cycle_init(&c, MAXC, 2, 1), 0);
    toy_req r = {.need = 5, .zone = -1};
    berth_pick out;
    uint32_t ks[] = {1, 3, 26, 30, 119};
    for (size_t j = 0; j < sizeof ks / sizeof *ks; j++) {
        c.max_feasible = ks[j];
        assert_int_equal(berth_pipeline_pick(&p, t, &r, &c, MAXC, 0, &out), 0);
        assert_int_equal(out.nfeasible, ks[j]);
        assert_int_equal(out.examined, (ks[j] - 1) * 10 + 1);
        /* all scores equal, last wins: the last of the kept */
        assert_int_equal(out.chosen, (ks[j] - 1) * 10);
        for (uint32_t i = 0; i < out.nfeasible; i++)
            assert_int_equal(c.feasible[i], i * 10);
    }
    /* more than there are: the whole batch */
    c.max_feasible = 500;
    assert_int_equal(berth_pipeline_pick(&p, t, &r, &c, MAXC, 0, &out), 0);
    assert_int_equal(out.nfeasible, MAXC / 10);
    assert_int_equal(out.examined, MAXC);
    berth_cycle_free(&c);
    free(t);
}

/* narrow: the index's batch gives the full scan's answer; -1 asks for the
 * full scan. */
static void test_narrow(void **state)
{
    toy *t = toy_new(30);
    for (uint32_t i = 0; i < 30; i++)
        t->a[i] = (int64_t)((i * 7) % 11);
    berth_profile p = profile(BERTH_COMBINE_SUM, BERTH_TIE_FIRST, NULL);
    berth_cycle c;
    assert_int_equal(berth_cycle_init(&c, 30, 2, 1), 0);
    berth_pick full, idx;
    for (int z = 0; z < 3; z++) {
        toy_req r = {.need = 1, .zone = z};
        t->narrow_mode = 0;
        assert_int_equal(berth_pipeline_pick(&p, t, &r, &c, 30, 1, &full), 0);
        assert_int_equal(full.used_index, 0);
        assert_int_equal(full.examined, 30);
        t->narrow_mode = 1;
        assert_int_equal(berth_pipeline_pick(&p, t, &r, &c, 30, 1, &idx), 0);
        assert_int_equal(idx.used_index, 1);
        assert_int_equal(idx.examined, 10);
        assert_int_equal(idx.chosen, full.chosen);
        assert_int_equal(idx.nfeasible, full.nfeasible);
        /* use_index 0 ignores the index */
        assert_int_equal(berth_pipeline_pick(&p, t, &r, &c, 30, 0, &idx), 0);
        assert_int_equal(idx.used_index, 0);
    }
    /* more candidates than the cycle holds is a limit, not an overrun */
    t->narrow_mode = 0;
    toy_req r = {.need = 1, .zone = -1};
    assert_int_equal(berth_pipeline_pick(&p, t, &r, &c, 31, 0, &idx), BERTH_ELIMIT);
    berth_cycle_free(&c);
    free(t);
}

/* Reject counting: with the short-cut a candidate is counted by the first
 * filter that rejects it and never seen by the later ones; all_filters
 * shows every filter every candidate and sets a bit per rejecting filter. */
static void test_reject_counting(void **state)
{
    toy *t = toy_new(9); /* zones 0 1 2 0 1 2 0 1 2 */
    t->cap[0] = t->cap[1] = t->cap[2] = 0; /* no room on 0..2 */
    berth_profile p = profile(BERTH_COMBINE_SUM, BERTH_TIE_FIRST, NULL);
    berth_cycle c;
    assert_int_equal(berth_cycle_init(&c, 9, 2, 1), 0);
    c.explain = 1;
    toy_req r = {.need = 5, .zone = 1};
    berth_pick out;
    assert_int_equal(berth_pipeline_pick(&p, t, &r, &c, 9, 0, &out), 0);
    assert_int_equal(c.reject_count[0], 3);   /* 0, 1, 2 by Cap */
    assert_int_equal(c.reject_count[1], 4);   /* 3, 5, 6, 8 by Zone */
    assert_int_equal(c.unresolvable, 4);
    assert_int_equal(t->filtered[1], 6);      /* Zone never saw 0..2 */
    assert_int_equal(out.nfeasible, 2);       /* 4 and 7 */
    assert_int_equal(out.chosen, 4);
    assert_int_equal(c.first_reject[1], 1);
    assert_int_equal(c.first_reject[3], 2);
    assert_int_equal(c.first_reject[4], 0);
    /* all_filters: 1 is rejected by both, 0 and 2 by Cap and Zone, the
     * others as before; counts stay per candidate's first rejection */
    c.all_filters = 1;
    t->filtered[1] = 0;
    assert_int_equal(berth_pipeline_pick(&p, t, &r, &c, 9, 0, &out), 0);
    assert_int_equal(t->filtered[1], 9);
    assert_int_equal(c.reject_mask[0], 3u);
    assert_int_equal(c.reject_mask[1], 1u);
    assert_int_equal(c.reject_mask[3], 2u);
    assert_int_equal(c.reject_mask[4], 0u);
    assert_int_equal(c.reject_count[0], 3);
    assert_int_equal(c.reject_count[1], 4);
    assert_int_equal(c.unresolvable, 4);
    assert_int_equal(out.chosen, 4);
    /* counts are reset by the next pick */
    toy_req any = {.need = 1, .zone = -1};
    assert_int_equal(berth_pipeline_pick(&p, t, &any, &c, 9, 0, &out), 0);
    assert_int_equal(c.reject_count[0] + c.reject_count[1] + c.unresolvable, 3);
    berth_cycle_free(&c);
    free(t);
}

/* place: reserve runs on the pick; no feasible candidate is ENOFIT and
 * reserves nothing. */
static void test_place(void **state)
{
    toy *t = toy_new(3);
    t->a[2] = 9;
    berth_profile p = profile(BERTH_COMBINE_SUM, BERTH_TIE_FIRST, NULL);
    berth_cycle c;
    assert_int_equal(berth_cycle_init(&c, 3, 2, 1), 0);
    toy_req r = {.need = 6, .zone = -1};
    berth_pick out;
    t->reserved = 99;
    assert_int_equal(berth_pipeline_place(&p, t, &r, &c, 3, 0, &out), 0);
    assert_int_equal(t->reserved, 2);
    assert_int_equal(t->cap[2], 4);
    /* 2 is now too small; 0 and 1 tie: first */
    assert_int_equal(berth_pipeline_place(&p, t, &r, &c, 3, 0, &out), 0);
    assert_int_equal(t->reserved, 0);
    assert_int_equal(berth_pipeline_place(&p, t, &r, &c, 3, 0, &out), 0);
    assert_int_equal(t->reserved, 1);
    t->reserved = 99;
    assert_int_equal(berth_pipeline_place(&p, t, &r, &c, 3, 0, &out), BERTH_ENOFIT);
    assert_int_equal(out.chosen, BERTH_NO_CANDIDATE);
    assert_int_equal(t->reserved, 99);
    berth_cycle_free(&c);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sum_weights_and_normalize),
        cmocka_unit_test(test_lexicographic),
        cmocka_unit_test(test_tiebreaks),
        cmocka_unit_test(test_max_feasible),
        cmocka_unit_test(test_narrow),
        cmocka_unit_test(test_reject_counting),
        cmocka_unit_test(test_place),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
