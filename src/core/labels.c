/* core/labels.c - label sets (sorted, binary-searched), selector
 * requirements and their matching, label key/value validation. */
#include "berth/labels.h"
#include "berth/error.h"

#include <stdlib.h>
#include <string.h>

static const char *str(const char *s) { return s ? s : ""; }

static bool is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9');
}

#define SORT_INSERT 16u /* sets of up to this many labels: insertion sort */

typedef struct ranked {
    berth_label l;
    uint32_t at;
} ranked;

static int ranked_cmp(const void *x, const void *y)
{
    const ranked *a = x, *b = y;
    int c = strcmp(str(a->l.key), str(b->l.key));
    return c ? c : (a->at > b->at) - (a->at < b->at);
}

/* A large set (a hostile input's map of a million labels): sorted by key
 * then position, so the order is the stable one in O(n log n). -1: out of
 * memory (the caller falls back to insertion sort). */
static int sort_large(berth_labels *l)
{
    ranked *r = malloc((size_t)l->n * sizeof *r);
    if (!r)
        return -1;
    for (uint32_t i = 0; i < l->n; i++)
        r[i] = (ranked){l->items[i], i};
    qsort(r, l->n, sizeof *r, ranked_cmp);
    for (uint32_t i = 0; i < l->n; i++)
        l->items[i] = r[i].l;
    free(r);
    return 0;
}

static void insertion_sort(berth_labels *l)
{
    for (uint32_t i = 1; i < l->n; i++) {
        berth_label x = l->items[i];
        uint32_t j = i;
        while (j > 0 && strcmp(str(l->items[j - 1].key), str(x.key)) > 0) {
            l->items[j] = l->items[j - 1];
            j--;
        }
        l->items[j] = x;
    }
}

int berth_labels_sort(berth_labels *l)
{
    int rc = 0;
    if (!l || (!l->items && l->n))
        return BERTH_EINVAL;
    if (l->n <= SORT_INSERT || sort_large(l))
        insertion_sort(l);
    for (uint32_t i = 1; i < l->n; i++)
        if (strcmp(str(l->items[i - 1].key), str(l->items[i].key)) == 0)
            rc = BERTH_EINVAL;
    return rc;
}

const char *berth_labels_get(const berth_labels *l, const char *key)
{
    if (!l || !l->items)
        return NULL;
    key = str(key);
    uint32_t lo = 0, hi = l->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int c = strcmp(str(l->items[mid].key), key);
        if (c == 0)
            return str(l->items[mid].value);
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static const char *const op_names[] = {
    [BERTH_SEL_IN] = "In",       [BERTH_SEL_NOTIN] = "NotIn",
    [BERTH_SEL_EXISTS] = "Exists", [BERTH_SEL_DOESNOTEXIST] = "DoesNotExist",
    [BERTH_SEL_GT] = "Gt",       [BERTH_SEL_LT] = "Lt",
};
#define N_OPS ((int)(sizeof op_names / sizeof op_names[0]))

int berth_sel_op_parse(const char *s)
{
    if (!s)
        return -1;
    for (int i = 0; i < N_OPS; i++)
        if (strcmp(s, op_names[i]) == 0)
            return i;
    return -1;
}

const char *berth_sel_op_name(berth_sel_op op)
{
    return (int)op >= 0 && (int)op < N_OPS ? op_names[op] : "?";
}

/* strconv.ParseInt(s, 10, 64). */
static bool parse_int64(const char *s, int64_t *out)
{
    bool neg = false;
    if (*s == '+' || *s == '-')
        neg = *s++ == '-';
    if (!*s)
        return false;
    /* Accumulate as a negative number so INT64_MIN fits. */
    int64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return false;
        if (v < (INT64_MIN + (*s - '0')) / 10)
            return false;
        v = v * 10 - (*s - '0');
    }
    if (!neg) {
        if (v == INT64_MIN)
            return false;
        v = -v;
    }
    *out = v;
    return true;
}

static bool has_value(const berth_requirement *r, const char *v)
{
    if (!r->values)
        return false;
    for (uint32_t i = 0; i < r->nvalues; i++)
        if (strcmp(str(r->values[i]), v) == 0)
            return true;
    return false;
}

bool berth_requirement_matches(const berth_requirement *r,
                               const berth_labels *labels)
{
    const char *v = berth_labels_get(labels, r->key);
    switch (r->op) {
    case BERTH_SEL_IN:
        return v && has_value(r, v);
    case BERTH_SEL_NOTIN:
        return !v || !has_value(r, v);
    case BERTH_SEL_EXISTS:
        return v != NULL;
    case BERTH_SEL_DOESNOTEXIST:
        return v == NULL;
    case BERTH_SEL_GT:
    case BERTH_SEL_LT: {
        int64_t have, want;
        if (!v || r->nvalues != 1 || !r->values || !parse_int64(v, &have) ||
            !parse_int64(str(r->values[0]), &want))
            return false;
        return r->op == BERTH_SEL_GT ? have > want : have < want;
    }
    }
    return false;
}

bool berth_selector_matches(const berth_selector *s,
                            const berth_labels *labels)
{
    if (s->nothing)
        return false;
    for (uint32_t i = 0; i < s->n; i++)
        if (!berth_requirement_matches(&s->reqs[i], labels))
            return false;
    return true;
}

static bool fail(const char **why, const char *reason)
{
    if (why)
        *why = reason;
    return false;
}

static int einval(const char **why, const char *reason)
{
    fail(why, reason);
    return BERTH_EINVAL;
}

int berth_requirement_validate(const berth_requirement *r, const char **why)
{
    const char *reason;
    if (why)
        *why = NULL;
    if (!berth_label_key_valid(r->key, &reason))
        return einval(why, reason);
    if (r->nvalues && !r->values)
        return einval(why, "missing values");
    switch (r->op) {
    case BERTH_SEL_IN:
    case BERTH_SEL_NOTIN:
        if (r->nvalues == 0)
            return einval(why, "In and NotIn need at least one value");
        break;
    case BERTH_SEL_EXISTS:
    case BERTH_SEL_DOESNOTEXIST:
        if (r->nvalues != 0)
            return einval(why, "Exists and DoesNotExist take no values");
        break;
    case BERTH_SEL_GT:
    case BERTH_SEL_LT: {
        int64_t x;
        if (r->nvalues != 1)
            return einval(why, "Gt and Lt need exactly one value");
        if (!parse_int64(str(r->values[0]), &x))
            return einval(why, "Gt and Lt need an integer value");
        break;
    }
    default:
        return einval(why, "unknown operator");
    }
    for (uint32_t i = 0; i < r->nvalues; i++)
        if (!berth_label_value_valid(r->values[i], &reason))
            return einval(why, reason);
    return 0;
}

/* [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?, 1..63 chars. */
static bool name_part_valid(const char *s, size_t n, const char **why,
                            const char *what_empty, const char *what_long,
                            const char *what_chars)
{
    if (n == 0)
        return fail(why, what_empty);
    if (n > 63)
        return fail(why, what_long);
    if (!is_alnum(s[0]) || !is_alnum(s[n - 1]))
        return fail(why, what_chars);
    for (size_t i = 1; i + 1 < n; i++)
        if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return fail(why, what_chars);
    return true;
}

/* DNS-1123 subdomain: <= 253 chars, dot-separated labels of
 * [a-z0-9]([-a-z0-9]*[a-z0-9])?. */
static bool dns_subdomain_valid(const char *s, size_t n)
{
    if (n == 0 || n > 253)
        return false;
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] != '.') {
            char c = s[i];
            if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
                return false;
            continue;
        }
        if (i == start || s[start] == '-' || s[i - 1] == '-')
            return false;
        start = i + 1;
    }
    return true;
}

bool berth_label_key_valid(const char *key, const char **why)
{
    key = str(key);
    if (why)
        *why = NULL;
    const char *slash = strchr(key, '/');
    const char *name = key;
    if (slash) {
        if (strchr(slash + 1, '/'))
            return fail(why, "label key has more than one '/'");
        size_t plen = (size_t)(slash - key);
        if (plen == 0)
            return fail(why, "label key prefix is empty");
        if (!dns_subdomain_valid(key, plen))
            return fail(why, "label key prefix is not a DNS subdomain");
        name = slash + 1;
    }
    return name_part_valid(name, strlen(name), why,
                           slash ? "label key name part is empty"
                                 : "label key is empty",
                           "label key name part is longer than 63 characters",
                           "label key name part must be alphanumerics, '-', "
                           "'_' or '.', starting and ending alphanumeric");
}

bool berth_label_value_valid(const char *value, const char **why)
{
    value = str(value);
    if (why)
        *why = NULL;
    size_t n = strlen(value);
    if (n == 0)
        return true;
    return name_part_valid(value, n, why, "",
                           "label value is longer than 63 characters",
                           "label value must be alphanumerics, '-', '_' or "
                           "'.', starting and ending alphanumeric");
}
