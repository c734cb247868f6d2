/* berth/labels.h - labels and label selectors with Kubernetes semantics
 * (k8s.io/apimachinery/pkg/labels, v1.NodeSelectorRequirement).
 *
 * Strings are borrowed: the caller (usually an arena) keeps keys, values and
 * the arrays alive. A NULL string counts as "". Matching never allocates;
 * a lookup is a binary search over labels sorted by key.
 *
 * Threads: nothing here writes shared state; every function may be
 * called concurrently on distinct or read-only data. */
#ifndef BERTH_LABELS_H
#define BERTH_LABELS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct berth_label {
    const char *key, *value;
} berth_label;

/* A label set; items sorted by key (strcmp) once berth_labels_sort ran. */
typedef struct berth_labels {
    berth_label *items;
    uint32_t n;
} berth_labels;

/* Sorts items by key (stable; O(n log n): insertion sort up to 16 items,
 * else a sort of (key, position) pairs in a temporary array). Returns 0, or BERTH_EINVAL when two items share a key (the set
 * is sorted all the same; berth_labels_get then returns one of them). */
int berth_labels_sort(berth_labels *l);
/* Value of key in a sorted set, or NULL when absent. O(log n). */
const char *berth_labels_get(const berth_labels *l, const char *key);

typedef enum berth_sel_op {
    BERTH_SEL_IN,
    BERTH_SEL_NOTIN,
    BERTH_SEL_EXISTS,
    BERTH_SEL_DOESNOTEXIST,
    BERTH_SEL_GT,
    BERTH_SEL_LT,
} berth_sel_op;

/* "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt" (case-sensitive, as
 * the API) -> the operator; -1 when unknown or NULL. */
int berth_sel_op_parse(const char *s);
/* The API spelling of op ("In", ...); "?" when out of range. */
const char *berth_sel_op_name(berth_sel_op op);

typedef struct berth_requirement {
    const char *key;
    berth_sel_op op;
    const char **values;
    uint32_t nvalues;
} berth_requirement;

/* A selector: the AND of its requirements. matchLabels entries become In
 * with one value. n == 0 matches everything (an empty LabelSelector);
 * nothing = 1 matches nothing (a nil selector where upstream selects
 * nothing, e.g. an empty NodeSelectorTerm). */
typedef struct berth_selector {
    berth_requirement *reqs;
    uint32_t n;
    int nothing;
} berth_selector;

/* Whether the labels satisfy r (labels sorted):
 *   In            key present and its value is one of values
 *   NotIn         key absent, or its value is none of values
 *   Exists        key present;  DoesNotExist  key absent
 *   Gt / Lt       key present, label value and the single requirement
 *                 value both base-10 int64 (optional sign, as Go's
 *                 strconv.ParseInt), label > / < value; false otherwise
 *                 (absent, not an integer, nvalues != 1). */
bool berth_requirement_matches(const berth_requirement *r,
                               const berth_labels *labels);
/* AND over the requirements; see berth_selector for the empty cases. */
bool berth_selector_matches(const berth_selector *s,
                            const berth_labels *labels);

/* Validates r as labels.NewRequirement does: the key is a valid label key;
 * In/NotIn need >= 1 value, Exists/DoesNotExist none, Gt/Lt exactly one
 * that parses as an int64; every value is a valid label value (so "-1" is
 * rejected for Gt/Lt, as upstream). Returns 0 or BERTH_EINVAL with a
 * static reason in *why (why may be NULL). Upstream treats a node selector
 * term holding an invalid requirement as matching nothing. */
int berth_requirement_validate(const berth_requirement *r, const char **why);

/* Label key (validation.IsQualifiedName): an optional prefix, a DNS-1123
 * subdomain (lowercase alphanumerics, '-' and '.', <= 253 chars, each
 * dot-separated part starting and ending alphanumeric), then "/", then a
 * name of 1..63 chars of [A-Za-z0-9._-] starting and ending alphanumeric.
 * False with a static reason in *why (may be NULL) when invalid. */
bool berth_label_key_valid(const char *key, const char **why);
/* Label value: empty, or <= 63 chars of [A-Za-z0-9._-] starting and
 * ending alphanumeric. */
bool berth_label_value_valid(const char *value, const char **why);

#endif
