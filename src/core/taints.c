/* core/taints.c - taint effects, toleration matching (SPEC 2.5
 * TaintToleration) and taint/toleration validation. */
#include "berth/taints.h"
#include "berth/error.h"
#include "berth/labels.h"

#include <string.h>

static const char *str(const char *s) { return s ? s : ""; }

static const char *const effect_names[] = {
    [BERTH_EFFECT_ALL] = "",
    [BERTH_EFFECT_NOSCHEDULE] = "NoSchedule",
    [BERTH_EFFECT_PREFERNOSCHEDULE] = "PreferNoSchedule",
    [BERTH_EFFECT_NOEXECUTE] = "NoExecute",
};
#define N_EFFECTS ((int)(sizeof effect_names / sizeof effect_names[0]))

int berth_taint_effect_parse(const char *s)
{
    s = str(s);
    for (int i = 0; i < N_EFFECTS; i++)
        if (strcmp(s, effect_names[i]) == 0)
            return i;
    return -1;
}

const char *berth_taint_effect_name(berth_taint_effect e)
{
    return (int)e >= 0 && (int)e < N_EFFECTS ? effect_names[e] : "?";
}

int berth_toleration_op_parse(const char *s)
{
    s = str(s);
    if (!*s || strcmp(s, "Equal") == 0)
        return BERTH_TOL_EQUAL;
    if (strcmp(s, "Exists") == 0)
        return BERTH_TOL_EXISTS;
    return -1;
}

const char *berth_toleration_op_name(berth_toleration_op op)
{
    switch (op) {
    case BERTH_TOL_EQUAL: return "Equal";
    case BERTH_TOL_EXISTS: return "Exists";
    }
    return "?";
}

bool berth_toleration_tolerates(const berth_toleration *tol,
                                const berth_taint *taint)
{
    if (tol->effect != BERTH_EFFECT_ALL && tol->effect != taint->effect)
        return false;
    const char *key = str(tol->key);
    if (*key && strcmp(key, str(taint->key)) != 0)
        return false;
    switch (tol->op) {
    case BERTH_TOL_EQUAL: return strcmp(str(tol->value), str(taint->value)) == 0;
    case BERTH_TOL_EXISTS: return true;
    }
    return false;   /* unknown operator, as upstream */
}

bool berth_tolerations_tolerate(const berth_toleration *tols, uint32_t n,
                                const berth_taint *taint)
{
    for (uint32_t i = 0; i < n; i++)
        if (berth_toleration_tolerates(&tols[i], taint))
            return true;
    return false;
}

static bool in_mask(berth_taint_effect e, unsigned mask)
{
    return (unsigned)e < 32 && (mask & BERTH_EFFECT_BIT(e)) != 0;
}

const berth_taint *berth_taints_first_untolerated(
    const berth_taint *taints, uint32_t ntaints,
    const berth_toleration *tols, uint32_t ntols, unsigned effect_mask)
{
    for (uint32_t i = 0; i < ntaints; i++)
        if (in_mask(taints[i].effect, effect_mask) &&
            !berth_tolerations_tolerate(tols, ntols, &taints[i]))
            return &taints[i];
    return NULL;
}

uint32_t berth_taints_count_untolerated(
    const berth_taint *taints, uint32_t ntaints,
    const berth_toleration *tols, uint32_t ntols,
    unsigned taint_mask, unsigned tol_mask)
{
    uint32_t count = 0;
    for (uint32_t i = 0; i < ntaints; i++) {
        if (!in_mask(taints[i].effect, taint_mask))
            continue;
        bool tolerated = false;
        for (uint32_t j = 0; j < ntols && !tolerated; j++)
            tolerated = in_mask(tols[j].effect, tol_mask) &&
                        berth_toleration_tolerates(&tols[j], &taints[i]);
        count += !tolerated;
    }
    return count;
}

static int einval(const char **why, const char *reason)
{
    if (why)
        *why = reason;
    return BERTH_EINVAL;
}

int berth_toleration_validate(const berth_toleration *tol, const char **why)
{
    const char *reason;
    if (why)
        *why = NULL;
    const char *key = str(tol->key), *value = str(tol->value);
    if (*key && !berth_label_key_valid(key, &reason))
        return einval(why, reason);
    if (!*key && tol->op != BERTH_TOL_EXISTS)
        return einval(why, "operator must be Exists when key is empty");
    if (tol->toleration_seconds != -1 && tol->effect != BERTH_EFFECT_NOEXECUTE)
        return einval(why, "effect must be NoExecute when tolerationSeconds "
                           "is set");
    switch (tol->op) {
    case BERTH_TOL_EQUAL:
        if (!berth_label_value_valid(value, &reason))
            return einval(why, reason);
        break;
    case BERTH_TOL_EXISTS:
        if (*value)
            return einval(why, "value must be empty when operator is Exists");
        break;
    default:
        return einval(why, "unknown operator");
    }
    if ((int)tol->effect < 0 || (int)tol->effect >= N_EFFECTS)
        return einval(why, "unknown effect");
    return 0;
}

int berth_taint_validate(const berth_taint *taint, const char **why)
{
    const char *reason;
    if (why)
        *why = NULL;
    if (!*str(taint->key))
        return einval(why, "taint key is required");
    if (!berth_label_key_valid(taint->key, &reason))
        return einval(why, reason);
    if (!berth_label_value_valid(taint->value, &reason))
        return einval(why, reason);
    if ((int)taint->effect <= BERTH_EFFECT_ALL || (int)taint->effect >= N_EFFECTS)
        return einval(why, "taint effect must be NoSchedule, PreferNoSchedule "
                           "or NoExecute");
    return 0;
}
