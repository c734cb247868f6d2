/* berth/taints.h - node taints and pod tolerations (v1.Taint,
 * v1.Toleration) and the toleration test of SPEC 2.5.
 *
 * Strings are borrowed; a NULL string counts as "". Nothing allocates.
 *
 * Threads: pure functions; safe to call concurrently. */
#ifndef BERTH_TAINTS_H
#define BERTH_TAINTS_H

#include <stdbool.h>
#include <stdint.h>

/* A taint always has an effect; on a toleration BERTH_EFFECT_ALL (the
 * empty string) means every effect. */
typedef enum berth_taint_effect {
    BERTH_EFFECT_ALL = 0,
    BERTH_EFFECT_NOSCHEDULE,
    BERTH_EFFECT_PREFERNOSCHEDULE,
    BERTH_EFFECT_NOEXECUTE,
} berth_taint_effect;

/* Effect masks for the filtering helpers below. */
#define BERTH_EFFECT_BIT(e) (1u << (unsigned)(e))
#define BERTH_EFFECT_MASK_HARD \
    (BERTH_EFFECT_BIT(BERTH_EFFECT_NOSCHEDULE) | \
     BERTH_EFFECT_BIT(BERTH_EFFECT_NOEXECUTE))
#define BERTH_EFFECT_MASK_ANY 0xfu

/* "" (or NULL) -> BERTH_EFFECT_ALL, "NoSchedule", "PreferNoSchedule",
 * "NoExecute" (case-sensitive); -1 otherwise. */
int berth_taint_effect_parse(const char *s);
/* API spelling ("" for ALL); "?" when out of range. */
const char *berth_taint_effect_name(berth_taint_effect e);

typedef struct berth_taint {
    const char *key, *value;
    berth_taint_effect effect;
} berth_taint;

typedef enum berth_toleration_op {
    BERTH_TOL_EQUAL = 0,   /* also the empty operator */
    BERTH_TOL_EXISTS,
} berth_toleration_op;

/* "" (or NULL) and "Equal" -> BERTH_TOL_EQUAL, "Exists" -> BERTH_TOL_EXISTS;
 * -1 otherwise. */
int berth_toleration_op_parse(const char *s);
const char *berth_toleration_op_name(berth_toleration_op op);

typedef struct berth_toleration {
    const char *key, *value;
    berth_toleration_op op;
    berth_taint_effect effect;
    int64_t toleration_seconds;   /* -1 = unset */
} berth_toleration;

/* v1.Toleration.ToleratesTaint: (tol effect empty or equal to the taint's)
 * and (tol key empty or equal) and (Exists, or Equal with equal values).
 * So an empty key with Exists tolerates every taint (of its effect), and -
 * as upstream's code, though API validation forbids it - an empty key with
 * Equal tolerates any key whose value equals tol->value. Use
 * berth_toleration_validate to reject the latter at load time. */
bool berth_toleration_tolerates(const berth_toleration *tol,
                                const berth_taint *taint);
/* True when any of the n tolerations tolerates taint. */
bool berth_tolerations_tolerate(const berth_toleration *tols, uint32_t n,
                                const berth_taint *taint);

/* The first taint, in order, whose effect bit is in effect_mask and that
 * none of the tolerations tolerates (v1helper.FindMatchingUntoleratedTaint);
 * NULL when there is none. TaintToleration's filter passes
 * BERTH_EFFECT_MASK_HARD. */
const berth_taint *berth_taints_first_untolerated(
    const berth_taint *taints, uint32_t ntaints,
    const berth_toleration *tols, uint32_t ntols, unsigned effect_mask);
/* Number of taints with effect bit in taint_mask tolerated by none of the
 * tolerations whose effect bit is in tol_mask. TaintToleration's score:
 * taint_mask = BIT(PREFERNOSCHEDULE), tol_mask = BIT(ALL) |
 * BIT(PREFERNOSCHEDULE). */
uint32_t berth_taints_count_untolerated(
    const berth_taint *taints, uint32_t ntaints,
    const berth_toleration *tols, uint32_t ntols,
    unsigned taint_mask, unsigned tol_mask);

/* API validation (ValidateTolerations): a non-empty key is a valid label
 * key; an empty key needs Exists; Equal needs a valid label value, Exists
 * an empty value; toleration_seconds only with NoExecute. 0 or
 * BERTH_EINVAL with a static reason in *why (may be NULL). */
int berth_toleration_validate(const berth_toleration *tol, const char **why);
/* ValidateTaint: key required and a valid label key, value a valid label
 * value, effect not ALL. */
int berth_taint_validate(const berth_taint *taint, const char **why);

#endif
