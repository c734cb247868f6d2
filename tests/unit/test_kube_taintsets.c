/* test_kube_taintsets.c - hard-taint sets (kube/taintsets.c), which the
 * scheduler's TaintToleration filter and reason texts read instead of each
 * node's taints.
 *
 * Fixed cases: PreferNoSchedule taints do not count, order does, a NULL
 * value is the empty one, a set outlives the strings it was made from.
 * Random: nodes with 0-3 taints drawn from a few keys, values and effects;
 * two nodes share an id exactly when their hard taint lists are equal, and
 * for random tolerations the set's first untolerated taint is the node's
 * own (same key, value and effect), so verdicts and texts per set are the
 * nodes' own. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "berth/error.h"
#include "berth/random.h"
#include "berth/taints.h"
#include "kube/taintsets.h"

#define NODES 400
#define MAXT 3

static uint32_t id_of(kube_taintsets **ts, const berth_taint *t, uint32_t n)
{
    uint32_t id = 99;
    assert_int_equal(kube_taintsets_id(ts, t, n, &id), 0);
    return id;
}

static void test_fixed(void **state)
{
    (void)state;
    kube_taintsets *ts = NULL;
    const berth_taint none[] = {{"spot", "true", BERTH_EFFECT_PREFERNOSCHEDULE}};
    assert_int_equal(id_of(&ts, none, 0), 0);
    assert_int_equal(id_of(&ts, none, 1), 0); /* PreferNoSchedule only: no set */
    assert_null(ts);
    char *key = strdup("dedicated"), *val = strdup("gpu");
    assert_non_null(key);
    assert_non_null(val);
    const berth_taint a[] = {{key, val, BERTH_EFFECT_NOSCHEDULE},
                             {"maint", NULL, BERTH_EFFECT_NOEXECUTE}};
    const berth_taint a_prefer[] = {{"spot", "true", BERTH_EFFECT_PREFERNOSCHEDULE},
                                    {"dedicated", "gpu", BERTH_EFFECT_NOSCHEDULE},
                                    {"maint", "", BERTH_EFFECT_NOEXECUTE}};
    const berth_taint a_swapped[] = {{"maint", NULL, BERTH_EFFECT_NOEXECUTE},
                                     {"dedicated", "gpu", BERTH_EFFECT_NOSCHEDULE}};
    const berth_taint a_effect[] = {{"dedicated", "gpu", BERTH_EFFECT_NOEXECUTE},
                                    {"maint", NULL, BERTH_EFFECT_NOEXECUTE}};
    uint32_t ia = id_of(&ts, a, 2);
    assert_int_equal(ia, 1);
    assert_int_equal(id_of(&ts, a_prefer, 3), ia); /* the prefer taint aside, "" = NULL */
    assert_int_equal(id_of(&ts, a, 1), 2);         /* a prefix is another list */
    assert_int_equal(id_of(&ts, a_swapped, 2), 3); /* order counts: first untolerated */
    assert_int_equal(id_of(&ts, a_effect, 2), 4);
    assert_int_equal(kube_taintsets_count(ts), 4);
    /* the set keeps its own copy */
    free(key);
    free(val);
    const berth_toleration maint = {"maint", NULL, BERTH_TOL_EXISTS, BERTH_EFFECT_ALL, -1};
    const berth_taint *t = kube_taintsets_first_untolerated(ts, ia, &maint, 1);
    assert_non_null(t);
    assert_string_equal(t->key, "dedicated");
    assert_string_equal(t->value, "gpu");
    assert_int_equal(t->effect, BERTH_EFFECT_NOSCHEDULE);
    t = kube_taintsets_first_untolerated(ts, 3, NULL, 0);
    assert_string_equal(t->key, "maint");
    assert_string_equal(t->value, "");
    const berth_toleration all = {NULL, NULL, BERTH_TOL_EXISTS, BERTH_EFFECT_ALL, -1};
    assert_null(kube_taintsets_first_untolerated(ts, ia, &all, 1));
    assert_null(kube_taintsets_first_untolerated(ts, 0, NULL, 0));
    assert_null(kube_taintsets_first_untolerated(ts, 5, NULL, 0)); /* no such id */
    kube_taintsets_free(ts);
}

/* NULL and "" keys too: both read as "" (and an empty-key Exists
 * toleration tolerates every taint) */
static const char *KEYS[] = {"dedicated", "maint", NULL, "", "gpu", "zone-drain"};
#define NKEYS (sizeof KEYS / sizeof *KEYS)
static const char *VALS[] = {NULL, "", "a", "b"};
static const berth_taint_effect EFFECTS[] = {BERTH_EFFECT_NOSCHEDULE, BERTH_EFFECT_NOEXECUTE,
                                             BERTH_EFFECT_PREFERNOSCHEDULE};

static int hard(berth_taint_effect e)
{
    return e == BERTH_EFFECT_NOSCHEDULE || e == BERTH_EFFECT_NOEXECUTE;
}

static const char *s_(const char *s)
{
    return s ? s : "";
}

/* whether a and b list the same hard taints in the same order */
static int same_hard(const berth_taint *a, uint32_t na, const berth_taint *b, uint32_t nb)
{
    uint32_t i = 0, j = 0;
    for (;;) {
        while (i < na && !hard(a[i].effect))
            i++;
        while (j < nb && !hard(b[j].effect))
            j++;
        if (i == na || j == nb)
            return i == na && j == nb;
        if (a[i].effect != b[j].effect || strcmp(s_(a[i].key), s_(b[j].key)) ||
            strcmp(s_(a[i].value), s_(b[j].value)))
            return 0;
        i++;
        j++;
    }
}

static void test_random(void **state)
{
    (void)state;
    berth_rng r;
    berth_rng_seed(&r, 11);
    static berth_taint t[NODES][MAXT];
    static uint32_t nt[NODES], id[NODES];
    kube_taintsets *ts = NULL;
    for (uint32_t n = 0; n < NODES; n++) {
        nt[n] = berth_rng_below(&r, MAXT + 1);
        for (uint32_t i = 0; i < nt[n]; i++)
            t[n][i] = (berth_taint){KEYS[berth_rng_below(&r, NKEYS)],
                                    VALS[berth_rng_below(&r, 4)], EFFECTS[berth_rng_below(&r, 3)]};
        id[n] = id_of(&ts, t[n], nt[n]);
    }
    uint32_t shared = 0;
    for (uint32_t a = 0; a < NODES; a++)
        for (uint32_t b = a + 1; b < NODES; b++) {
            int same = same_hard(t[a], nt[a], t[b], nt[b]);
            assert_int_equal(id[a] == id[b], same);
            shared += same && id[a];
        }
    assert_true(shared > 0); /* equal lists met: the ids were compared, not all distinct */
    for (uint32_t k = 0; k < 200; k++) {
        berth_toleration tol[2];
        uint32_t ntol = berth_rng_below(&r, 3);
        for (uint32_t i = 0; i < ntol; i++) {
            int exists = berth_rng_below(&r, 3) == 0;
            tol[i] = (berth_toleration){KEYS[berth_rng_below(&r, NKEYS)],
                                        exists ? NULL : VALS[berth_rng_below(&r, 4)],
                                        exists ? BERTH_TOL_EXISTS : BERTH_TOL_EQUAL,
                                        berth_rng_below(&r, 2) ? BERTH_EFFECT_ALL
                                                               : EFFECTS[berth_rng_below(&r, 3)],
                                        -1};
        }
        for (uint32_t n = 0; n < NODES; n++) {
            const berth_taint *own = berth_taints_first_untolerated(t[n], nt[n], tol, ntol,
                                                                    BERTH_EFFECT_MASK_HARD);
            const berth_taint *set = kube_taintsets_first_untolerated(ts, id[n], tol, ntol);
            assert_int_equal(own != NULL, set != NULL);
            if (own) {
                assert_string_equal(s_(own->key), set->key);
                assert_string_equal(s_(own->value), set->value);
                assert_int_equal(own->effect, set->effect);
            }
        }
    }
    kube_taintsets_free(ts);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixed),
        cmocka_unit_test(test_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
