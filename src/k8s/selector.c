/* k8s/selector.c - selectors of the Kubernetes API: metav1.LabelSelector,
 * plain map selectors (Service, ReplicationController), requirements and
 * NodeSelectorTerms, string lists. The one decoder of each for every domain. */
#include "k8s/k8s.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- selectors ---- */

int k8s_dec_str_list(berth_kcluster *k, berth_dec *d, const berth_node *m, const char *key,
                        const char ***out, uint32_t *n)
{
    berth_node *s = NULL;
    *n = 0;
    int rc = berth_dec_seq(d, m, key, 0, &s);
    if (rc || !s)
        return rc;
    *out = k8s_dalloc(d, s->n, sizeof **out);
    if (!*out)
        return ENOMEM_(d);
    for (size_t i = 0; i < s->n && !rc; i++) {
        size_t p = berth_dec_push(d, key);
        berth_dec_push_index(d, i);
        rc = berth_dec_node_str(d, s->items[i], &(*out)[i]);
        berth_dec_pop(d, p);
    }
    if (!rc)
        *n = (uint32_t)s->n;
    return rc;
}

/* One requirement {key, operator, values}. label_selector: the
 * metav1.LabelSelector operators only (In, NotIn, Exists, DoesNotExist);
 * fields: a node selector matchFields entry (metadata.name, In/NotIn).
 * invalid (matchExpressions of a pod's node affinity only, else NULL): the
 * API server's ValidateNodeSelectorRequirement checks just the key and the
 * number of values, so a value labels.NewRequirement rejects (not a label
 * value, a Gt/Lt value that is not an integer) loads and sets *invalid. */
static int dec_requirement(berth_kcluster *k, berth_dec *d, const berth_node *e, int label_selector,
                           int fields, int *invalid, berth_requirement *r)
{
    static const char *const ef[] = {"key", "operator", "values", NULL};
    const char *key = NULL, *op = NULL;
    int rc = 0;
    if (e->type != BERTH_NODE_MAP)
        return berth_dec_fail(d, e, "expected a mapping with key, operator, values");
    if ((rc = k8s_known(d, e, ef)) || (rc = berth_dec_str(d, e, "key", 1, &key)) ||
        (rc = berth_dec_str(d, e, "operator", 1, &op)))
        return rc;
    int o = berth_sel_op_parse(op);
    if (o < 0 || (label_selector && o > BERTH_SEL_DOESNOTEXIST) ||
        (fields && o != BERTH_SEL_IN && o != BERTH_SEL_NOTIN))
        return k8s_fail_at(d, e, "operator",
                       label_selector ? "unknown operator '%s' (In, NotIn, Exists, DoesNotExist)"
                       : fields       ? "operator '%s' not allowed in matchFields (In, NotIn)"
                                      : "unknown operator '%s' (In, NotIn, Exists, DoesNotExist, "
                                        "Gt, Lt)",
                       op);
    if (fields && strcmp(key, "metadata.name"))
        return k8s_fail_at(d, e, "key", "matchFields supports the key metadata.name only, got '%s'",
                       key);
    *r = (berth_requirement){key, (berth_sel_op)o, NULL, 0};
    if ((rc = k8s_dec_str_list(k, d, e, "values", &r->values, &r->nvalues)))
        return rc;
    if (fields) {
        if (r->nvalues != 1)
            return berth_dec_fail(d, e, "matchFields %s needs exactly one value", op);
        return 0;
    }
    const char *why = NULL;
    if (invalid) {
        int nv = (int)r->nvalues;
        if (!berth_label_key_valid(key, &why))
            return berth_dec_fail(d, e, "invalid requirement: %s", why);
        if ((r->op == BERTH_SEL_IN || r->op == BERTH_SEL_NOTIN) && nv == 0)
            why = "In and NotIn need at least one value";
        else if ((r->op == BERTH_SEL_EXISTS || r->op == BERTH_SEL_DOESNOTEXIST) && nv != 0)
            why = "Exists and DoesNotExist take no values";
        else if ((r->op == BERTH_SEL_GT || r->op == BERTH_SEL_LT) && nv != 1)
            why = "Gt and Lt need exactly one value";
        if (why)
            return berth_dec_fail(d, e, "invalid requirement: %s", why);
        if (berth_requirement_validate(r, NULL))
            *invalid = 1;
        return 0;
    }
    if (berth_requirement_validate(r, &why))
        return berth_dec_fail(d, e, "invalid requirement: %s", why);
    return 0;
}

int k8s_dec_requirement(berth_kcluster *k, berth_dec *d, const berth_node *e, int label_selector,
                        int fields, berth_requirement *r)
{
    return dec_requirement(k, d, e, label_selector, fields, NULL, r);
}

/* Appends `key op value` requirements for the pod label keys listed
 * (matchLabelKeys: In, mismatchLabelKeys: NotIn); keys the pod lacks are
 * skipped. */
int k8s_merge_label_keys(berth_kcluster *k, berth_dec *d, berth_selector *s,
                            const berth_labels *pod_labels, const char **keys, uint32_t nkeys,
                            berth_sel_op op)
{
    if (!nkeys || s->nothing || !pod_labels)
        return 0;
    berth_requirement *nr = k8s_dalloc(d, s->n + nkeys, sizeof *nr);
    if (!nr)
        return ENOMEM_(d);
    if (s->n)
        memcpy(nr, s->reqs, s->n * sizeof *nr);
    uint32_t n = s->n;
    for (uint32_t i = 0; i < nkeys; i++) {
        const char *v = berth_labels_get(pod_labels, keys[i]);
        if (!v)
            continue;
        const char **vals = k8s_dalloc(d, 1, sizeof *vals);
        if (!vals)
            return ENOMEM_(d);
        vals[0] = v;
        nr[n++] = (berth_requirement){keys[i], op, vals, 1};
    }
    s->reqs = nr;
    s->n = n;
    return 0;
}

/* A metav1.LabelSelector at key (absent: matches nothing). */
int k8s_dec_label_selector(berth_kcluster *k, berth_dec *d, const berth_node *m, const char *key,
                              berth_selector *out)
{
    berth_node *s = NULL;
    memset(out, 0, sizeof *out);
    out->nothing = 1;
    int rc = berth_dec_map(d, m, key, 0, &s);
    if (rc || !s)
        return rc;
    out->nothing = 0;
    size_t prev = berth_dec_push(d, key);
    static const char *const sf[] = {"matchLabels", "matchExpressions", NULL};
    berth_node *ml = NULL, *me = NULL;
    if ((rc = k8s_known(d, s, sf)) || (rc = berth_dec_map(d, s, "matchLabels", 0, &ml)) ||
        (rc = berth_dec_seq(d, s, "matchExpressions", 0, &me)))
        goto out;
    out->reqs = k8s_dalloc(d, (ml ? ml->n : 0) + (me ? me->n : 0), sizeof *out->reqs);
    if (!out->reqs) {
        rc = ENOMEM_(d);
        goto out;
    }
    if (ml) {
        berth_labels l;
        size_t p = berth_dec_push(d, "matchLabels");
        rc = k8s_dec_string_map(k, d, ml, &l, 1);
        berth_dec_pop(d, p);
        for (uint32_t i = 0; !rc && i < l.n; i++) {
            const char **vals = k8s_dalloc(d, 1, sizeof *vals);
            if (!vals) {
                rc = ENOMEM_(d);
                break;
            }
            vals[0] = l.items[i].value;
            out->reqs[out->n++] = (berth_requirement){l.items[i].key, BERTH_SEL_IN, vals, 1};
        }
    }
    for (size_t i = 0; !rc && me && i < me->n; i++) {
        size_t p = berth_dec_push(d, "matchExpressions");
        berth_dec_push_index(d, i);
        rc = k8s_dec_requirement(k, d, me->items[i], 1, 0, &out->reqs[out->n]);
        berth_dec_pop(d, p);
        if (!rc)
            out->n++;
    }
out:
    berth_dec_pop(d, prev);
    return rc;
}

/* A plain map selector (Service, ReplicationController): key=value ANDed.
 * *present: a non-empty map was given. */
int k8s_dec_map_selector(berth_kcluster *k, berth_dec *d, const berth_node *m, const char *key,
                            berth_selector *out, int *present)
{
    berth_labels l;
    memset(out, 0, sizeof *out);
    *present = 0;
    int rc = k8s_dec_labels_at(k, d, m, key, &l, 1);
    if (rc || !l.n)
        return rc;
    out->reqs = k8s_dalloc(d, l.n, sizeof *out->reqs);
    if (!out->reqs)
        return ENOMEM_(d);
    for (uint32_t i = 0; i < l.n; i++) {
        const char **vals = k8s_dalloc(d, 1, sizeof *vals);
        if (!vals)
            return ENOMEM_(d);
        vals[0] = l.items[i].value;
        out->reqs[out->n++] = (berth_requirement){l.items[i].key, BERTH_SEL_IN, vals, 1};
    }
    *present = 1;
    return 0;
}


/* NodeSelectorTerm; lazy: a pod's (see dec_requirement), else every
 * requirement must parse (a KubeSchedulerConfiguration's addedAffinity) */
static int dec_nsterm(berth_kcluster *k, berth_dec *d, const berth_node *t, int lazy,
                      berth_kterm *out)
{
    memset(out, 0, sizeof *out);
    if (t->type != BERTH_NODE_MAP)
        return berth_dec_fail(d, t, "expected a node selector term (matchExpressions, "
                                    "matchFields)");
    static const char *const tf[] = {"matchExpressions", "matchFields", NULL};
    berth_node *me = NULL, *mf = NULL;
    int rc;
    if ((rc = k8s_known(d, t, tf)) || (rc = berth_dec_seq(d, t, "matchExpressions", 0, &me)) ||
        (rc = berth_dec_seq(d, t, "matchFields", 0, &mf)))
        return rc;
    for (int which = 0; which < 2 && !rc; which++) {
        berth_node *s = which ? mf : me;
        if (!s)
            continue;
        berth_requirement *rs = k8s_dalloc(d, s->n, sizeof *rs);
        if (!rs)
            return ENOMEM_(d);
        for (size_t i = 0; !rc && i < s->n; i++) {
            size_t p = berth_dec_push(d, which ? "matchFields" : "matchExpressions");
            berth_dec_push_index(d, i);
            rc = dec_requirement(k, d, s->items[i], 0, which, lazy && !which ? &out->invalid : NULL,
                                 &rs[i]);
            berth_dec_pop(d, p);
        }
        if (which) {
            out->fields = rs;
            out->nfields = (uint32_t)s->n;
        } else {
            out->exprs = rs;
            out->nexprs = (uint32_t)s->n;
        }
    }
    return rc;
}

int k8s_dec_nsterm(berth_kcluster *k, berth_dec *d, const berth_node *t, berth_kterm *out)
{
    return dec_nsterm(k, d, t, 0, out);
}

int k8s_dec_pod_nsterm(berth_kcluster *k, berth_dec *d, const berth_node *t, berth_kterm *out)
{
    return dec_nsterm(k, d, t, 1, out);
}
