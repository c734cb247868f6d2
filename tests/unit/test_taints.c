/* tests/unit/test_taints.c - taint effects, toleration operators, every
 * operator/effect/key combination of ToleratesTaint, the untolerated-taint
 * helpers used by TaintToleration, and validation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "berth/error.h"
#include "berth/taints.h"

#define T(k, v, e) ((berth_taint){(k), (v), BERTH_EFFECT_##e})
#define TOL(k, v, op, e) \
    ((berth_toleration){(k), (v), BERTH_TOL_##op, BERTH_EFFECT_##e, -1})

static bool tolerates(berth_toleration tol, berth_taint taint)
{
    return berth_toleration_tolerates(&tol, &taint);
}

static void test_effect_parse(void **state)
{
    (void)state;
    assert_int_equal(berth_taint_effect_parse(""), BERTH_EFFECT_ALL);
    assert_int_equal(berth_taint_effect_parse(NULL), BERTH_EFFECT_ALL);
    assert_int_equal(berth_taint_effect_parse("NoSchedule"), BERTH_EFFECT_NOSCHEDULE);
    assert_int_equal(berth_taint_effect_parse("PreferNoSchedule"),
                     BERTH_EFFECT_PREFERNOSCHEDULE);
    assert_int_equal(berth_taint_effect_parse("NoExecute"), BERTH_EFFECT_NOEXECUTE);
    assert_int_equal(berth_taint_effect_parse("noschedule"), -1);
    assert_int_equal(berth_taint_effect_parse("NoSchedule "), -1);
    assert_int_equal(berth_taint_effect_parse("All"), -1);
    for (int e = BERTH_EFFECT_ALL; e <= BERTH_EFFECT_NOEXECUTE; e++)
        assert_int_equal(berth_taint_effect_parse(
                             berth_taint_effect_name((berth_taint_effect)e)), e);
    assert_string_equal(berth_taint_effect_name((berth_taint_effect)9), "?");

    assert_int_equal(berth_toleration_op_parse(""), BERTH_TOL_EQUAL);
    assert_int_equal(berth_toleration_op_parse(NULL), BERTH_TOL_EQUAL);
    assert_int_equal(berth_toleration_op_parse("Equal"), BERTH_TOL_EQUAL);
    assert_int_equal(berth_toleration_op_parse("Exists"), BERTH_TOL_EXISTS);
    assert_int_equal(berth_toleration_op_parse("exists"), -1);
    assert_int_equal(berth_toleration_op_parse("In"), -1);
    assert_string_equal(berth_toleration_op_name(BERTH_TOL_EQUAL), "Equal");
    assert_string_equal(berth_toleration_op_name(BERTH_TOL_EXISTS), "Exists");
}

static void test_equal(void **state)
{
    (void)state;
    berth_taint t = T("dedicated", "gpu", NOSCHEDULE);
    assert_true(tolerates(TOL("dedicated", "gpu", EQUAL, NOSCHEDULE), t));
    assert_true(tolerates(TOL("dedicated", "gpu", EQUAL, ALL), t));
    assert_false(tolerates(TOL("dedicated", "cpu", EQUAL, NOSCHEDULE), t));
    assert_false(tolerates(TOL("dedicated", "", EQUAL, NOSCHEDULE), t));
    assert_false(tolerates(TOL("dedicated", "GPU", EQUAL, NOSCHEDULE), t));
    assert_false(tolerates(TOL("other", "gpu", EQUAL, NOSCHEDULE), t));
    assert_false(tolerates(TOL("dedicated", "gpu", EQUAL, NOEXECUTE), t));
    assert_false(tolerates(TOL("dedicated", "gpu", EQUAL, PREFERNOSCHEDULE), t));
    /* empty taint value with Equal and empty value (NULL counts as "") */
    berth_taint e = T("maint", "", NOEXECUTE);
    assert_true(tolerates(TOL("maint", "", EQUAL, NOEXECUTE), e));
    assert_true(tolerates(TOL("maint", NULL, EQUAL, ALL), e));
    berth_taint n = {"maint", NULL, BERTH_EFFECT_NOEXECUTE};
    assert_true(tolerates(TOL("maint", "", EQUAL, ALL), n));
    assert_false(tolerates(TOL("maint", "x", EQUAL, ALL), n));
}

static void test_exists(void **state)
{
    (void)state;
    berth_taint t = T("dedicated", "gpu", NOSCHEDULE);
    assert_true(tolerates(TOL("dedicated", "", EXISTS, NOSCHEDULE), t));
    assert_true(tolerates(TOL("dedicated", NULL, EXISTS, ALL), t));
    assert_false(tolerates(TOL("dedicated", "", EXISTS, NOEXECUTE), t));
    assert_false(tolerates(TOL("other", "", EXISTS, ALL), t));
    /* Exists ignores the toleration's value (validation forbids one) */
    assert_true(tolerates(TOL("dedicated", "anything", EXISTS, ALL), t));
}

static void test_empty_key(void **state)
{
    (void)state;
    berth_taint ts[] = {
        T("dedicated", "gpu", NOSCHEDULE), T("a", "", PREFERNOSCHEDULE),
        T("node.kubernetes.io/unreachable", "", NOEXECUTE),
    };
    for (size_t i = 0; i < 3; i++) {
        /* empty key + Exists + no effect: tolerates everything */
        assert_true(tolerates(TOL("", "", EXISTS, ALL), ts[i]));
        assert_true(tolerates(TOL(NULL, NULL, EXISTS, ALL), ts[i]));
        /* ... but only its effect when one is given */
        assert_int_equal(tolerates(TOL("", "", EXISTS, NOSCHEDULE), ts[i]),
                         ts[i].effect == BERTH_EFFECT_NOSCHEDULE);
        assert_int_equal(tolerates(TOL("", "", EXISTS, NOEXECUTE), ts[i]),
                         ts[i].effect == BERTH_EFFECT_NOEXECUTE);
    }
    /* Upstream ToleratesTaint: an empty key with Equal skips the key test
     * and compares values (API validation rejects such a toleration). */
    assert_false(tolerates(TOL("", "", EQUAL, ALL), ts[0]));
    assert_true(tolerates(TOL("", "gpu", EQUAL, ALL), ts[0]));
    assert_true(tolerates(TOL("", "", EQUAL, ALL), ts[1]));
    assert_true(tolerates(TOL("", "", EQUAL, ALL), T("", "", NOSCHEDULE)));
    assert_false(tolerates(TOL("", "gpu", EQUAL, NOEXECUTE), ts[0]));
}

/* Every combination of toleration (key, op, effect) against one taint,
 * checked against the rule written out independently. */
static void test_all_combinations(void **state)
{
    (void)state;
    static const char *const keys[] = {"", "k", "other"};
    static const char *const values[] = {"", "v", "w"};
    static const char *const tkeys[] = {"k", ""};
    for (size_t tk = 0; tk < 2; tk++)
    for (size_t tv = 0; tv < 3; tv++)
    for (int te = BERTH_EFFECT_NOSCHEDULE; te <= BERTH_EFFECT_NOEXECUTE; te++) {
        berth_taint taint = {tkeys[tk], values[tv], (berth_taint_effect)te};
        for (size_t k = 0; k < 3; k++)
        for (size_t v = 0; v < 3; v++)
        for (int op = BERTH_TOL_EQUAL; op <= BERTH_TOL_EXISTS; op++)
        for (int e = BERTH_EFFECT_ALL; e <= BERTH_EFFECT_NOEXECUTE; e++) {
            berth_toleration tol = {keys[k], values[v], (berth_toleration_op)op,
                                    (berth_taint_effect)e, -1};
            bool effect_ok = e == BERTH_EFFECT_ALL || e == te;
            bool key_ok = keys[k][0] == '\0' || strcmp(keys[k], tkeys[tk]) == 0;
            bool op_ok = op == BERTH_TOL_EXISTS || strcmp(values[v], values[tv]) == 0;
            assert_int_equal(berth_toleration_tolerates(&tol, &taint),
                             effect_ok && key_ok && op_ok);
        }
    }
    /* an unknown operator tolerates nothing */
    berth_toleration bad = {"k", "v", (berth_toleration_op)7, BERTH_EFFECT_ALL, -1};
    berth_taint t = T("k", "v", NOSCHEDULE);
    assert_false(berth_toleration_tolerates(&bad, &t));
}

static void test_tolerations_any(void **state)
{
    (void)state;
    berth_toleration tols[] = {
        TOL("a", "1", EQUAL, NOSCHEDULE),
        TOL("b", "", EXISTS, ALL),
    };
    berth_taint t1 = T("a", "1", NOSCHEDULE), t2 = T("b", "x", NOEXECUTE);
    berth_taint t3 = T("a", "2", NOSCHEDULE);
    assert_true(berth_tolerations_tolerate(tols, 2, &t1));
    assert_true(berth_tolerations_tolerate(tols, 2, &t2));
    assert_false(berth_tolerations_tolerate(tols, 2, &t3));
    assert_false(berth_tolerations_tolerate(tols, 0, &t1));
    assert_false(berth_tolerations_tolerate(NULL, 0, &t1));
}

static void test_first_untolerated(void **state)
{
    (void)state;
    berth_taint taints[] = {
        T("soft", "", PREFERNOSCHEDULE),
        T("gpu", "true", NOSCHEDULE),
        T("maint", "", NOEXECUTE),
    };
    berth_toleration tols[] = {TOL("gpu", "true", EQUAL, NOSCHEDULE)};
    const berth_taint *u;

    u = berth_taints_first_untolerated(taints, 3, NULL, 0, BERTH_EFFECT_MASK_HARD);
    assert_ptr_equal(u, &taints[1]);
    u = berth_taints_first_untolerated(taints, 3, tols, 1, BERTH_EFFECT_MASK_HARD);
    assert_ptr_equal(u, &taints[2]);
    u = berth_taints_first_untolerated(taints, 3, NULL, 0, BERTH_EFFECT_MASK_ANY);
    assert_ptr_equal(u, &taints[0]);
    u = berth_taints_first_untolerated(taints, 3, tols, 1,
                                       BERTH_EFFECT_BIT(BERTH_EFFECT_NOSCHEDULE));
    assert_null(u);
    berth_toleration all[] = {TOL("", "", EXISTS, ALL)};
    assert_null(berth_taints_first_untolerated(taints, 3, all, 1, BERTH_EFFECT_MASK_ANY));
    assert_null(berth_taints_first_untolerated(NULL, 0, NULL, 0, BERTH_EFFECT_MASK_ANY));
    assert_null(berth_taints_first_untolerated(taints, 3, NULL, 0, 0));
}

static void test_count_untolerated(void **state)
{
    (void)state;
    berth_taint taints[] = {
        T("a", "", PREFERNOSCHEDULE),
        T("b", "", PREFERNOSCHEDULE),
        T("c", "", NOSCHEDULE),
        T("d", "", PREFERNOSCHEDULE),
    };
    const unsigned taint_mask = BERTH_EFFECT_BIT(BERTH_EFFECT_PREFERNOSCHEDULE);
    const unsigned tol_mask = BERTH_EFFECT_BIT(BERTH_EFFECT_ALL) |
                              BERTH_EFFECT_BIT(BERTH_EFFECT_PREFERNOSCHEDULE);
    assert_int_equal(berth_taints_count_untolerated(taints, 4, NULL, 0,
                                                    taint_mask, tol_mask), 3);
    berth_toleration tols[] = {
        TOL("a", "", EXISTS, PREFERNOSCHEDULE),
        TOL("b", "", EXISTS, ALL),
        /* NoSchedule tolerations are not considered by the score */
        TOL("d", "", EXISTS, NOSCHEDULE),
    };
    assert_int_equal(berth_taints_count_untolerated(taints, 4, tols, 3,
                                                    taint_mask, tol_mask), 1);
    assert_int_equal(berth_taints_count_untolerated(taints, 4, tols, 3,
                                                    taint_mask, BERTH_EFFECT_MASK_ANY), 1);
    assert_int_equal(berth_taints_count_untolerated(taints, 4, tols, 3,
                                                    BERTH_EFFECT_MASK_ANY, tol_mask), 2);
    berth_toleration all[] = {TOL("", "", EXISTS, ALL)};
    assert_int_equal(berth_taints_count_untolerated(taints, 4, all, 1,
                                                    taint_mask, tol_mask), 0);
}

static void test_validate(void **state)
{
    (void)state;
    const char *why = "unset";
    berth_toleration ok[] = {
        TOL("", "", EXISTS, ALL),
        TOL("dedicated", "gpu", EQUAL, NOSCHEDULE),
        TOL("dedicated", "", EQUAL, ALL),
        TOL("example.com/k", "", EXISTS, PREFERNOSCHEDULE),
        {"node.kubernetes.io/unreachable", "", BERTH_TOL_EXISTS,
         BERTH_EFFECT_NOEXECUTE, 300},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        assert_int_equal(berth_toleration_validate(&ok[i], &why), 0);
        assert_null(why);
    }
    berth_toleration bad[] = {
        TOL("", "", EQUAL, ALL),                 /* empty key needs Exists */
        TOL("", "x", EXISTS, ALL),               /* Exists needs no value */
        TOL("k", "x", EXISTS, NOSCHEDULE),
        TOL("bad key", "", EXISTS, ALL),
        TOL("k", "bad value", EQUAL, ALL),
        {"k", "", BERTH_TOL_EXISTS, BERTH_EFFECT_NOSCHEDULE, 60},
        {"k", "", (berth_toleration_op)5, BERTH_EFFECT_ALL, -1},
        {"k", "", BERTH_TOL_EXISTS, (berth_taint_effect)8, -1},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why = NULL;
        assert_int_equal(berth_toleration_validate(&bad[i], &why), BERTH_EINVAL);
        assert_non_null(why);
    }
    assert_int_equal(berth_toleration_validate(&bad[0], NULL), BERTH_EINVAL);

    berth_taint tok = T("dedicated", "gpu", NOSCHEDULE);
    assert_int_equal(berth_taint_validate(&tok, &why), 0);
    berth_taint tbad[] = {
        T("", "x", NOSCHEDULE), T("a b", "", NOSCHEDULE),
        T("k", "-x", NOSCHEDULE), T("k", "", ALL),
        {"k", "", (berth_taint_effect)6},
    };
    for (size_t i = 0; i < sizeof tbad / sizeof tbad[0]; i++) {
        why = NULL;
        assert_int_equal(berth_taint_validate(&tbad[i], &why), BERTH_EINVAL);
        assert_non_null(why);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_effect_parse),
        cmocka_unit_test(test_equal),
        cmocka_unit_test(test_exists),
        cmocka_unit_test(test_empty_key),
        cmocka_unit_test(test_all_combinations),
        cmocka_unit_test(test_tolerations_any),
        cmocka_unit_test(test_first_untolerated),
        cmocka_unit_test(test_count_untolerated),
        cmocka_unit_test(test_validate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
