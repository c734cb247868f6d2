/* io/fields.c - field decoders for berth's own kinds (InstanceType,
 * VirtualNodeGroup, Reservation, Headroom, AutoscaleEvent): metadata with a
 * required name, taints, string lists and plain non-negative numbers, each
 * reporting file:line:column and field path. */
#include "berth/doc.h"

#include <stdlib.h>
#include <string.h>

static int oom(berth_dec *d)
{
    return berth_error_set(d->err, BERTH_ENOMEM, "out of memory");
}

static void *alloc(berth_arena *a, size_t n, size_t size)
{
    return berth_arena_alloc(a, (n ? n : 1) * size);
}


static const char *const meta_fields[] = {
    "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
    "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels",
    "annotations", "ownerReferences", "finalizers", "managedFields", NULL};

int berth_dec_meta_named(berth_dec *d, berth_arena *a, const berth_node *doc, int force_strict,
                      const char **name, berth_labels *labels, berth_labels *ann)
{
    berth_node *meta = NULL;
    int rc = berth_dec_map(d, doc, "metadata", 1, &meta);
    if (rc)
        return rc;
    size_t p = berth_dec_push(d, "metadata");
    if ((d->strict || force_strict) && (rc = berth_dec_known_fields(d, meta, meta_fields)))
        goto out;
    if ((rc = berth_dec_str(d, meta, "name", 1, name)))
        goto out;
    if (!**name) {
        rc = berth_dec_fail(d, meta, "name: must not be empty");
        goto out;
    }
    berth_labels scratch;
    if ((rc = berth_dec_labels(d, meta, "labels", labels ? labels : &scratch, 1)))
        goto out;
    rc = berth_dec_labels(d, meta, "annotations", ann ? ann : &scratch, 0);
out:
    berth_dec_pop(d, p);
    return rc;
}

int berth_dec_taints_strict(berth_dec *d, berth_arena *a, const berth_node *parent, const char *key,
                        berth_taint **out, uint32_t *n)
{
    static const char *const tf[] = {"key", "value", "effect", NULL};
    return berth_dec_taints(d, a, parent, key, tf, 1, out, n);
}

int berth_dec_strlist(berth_dec *d, berth_arena *a, const berth_node *parent, const char *key,
                         const char ***out, uint32_t *n)
{
    berth_node *s = NULL;
    *out = NULL;
    *n = 0;
    int rc = berth_dec_seq(d, parent, key, 0, &s);
    if (rc || !s)
        return rc;
    *out = alloc(a, s->n, sizeof **out);
    if (!*out)
        return oom(d);
    size_t p = berth_dec_push(d, key);
    for (size_t i = 0; !rc && i < s->n; i++) {
        size_t p2 = berth_dec_push_index(d, i);
        const char *v = NULL;
        rc = berth_dec_node_str(d, s->items[i], &v);
        if (!rc && !*v)
            rc = berth_dec_fail(d, s->items[i], "must not be empty");
        for (uint32_t j = 0; !rc && j < *n; j++)
            if (!strcmp((*out)[j], v))
                rc = berth_dec_fail(d, s->items[i], "'%s' appears twice", v);
        berth_dec_pop(d, p2);
        if (!rc)
            (*out)[(*n)++] = v;
    }
    berth_dec_pop(d, p);
    return rc;
}

int berth_dec_number(berth_dec *d, const berth_node *mp, const char *key, double *out)
{
    const berth_node *n = berth_node_get(mp, key);
    if (!n)
        return 0;
    char *end = NULL;
    double v = n->type == BERTH_NODE_SCALAR && !n->quoted && *n->str ? strtod(n->str, &end) : -1;
    if (!end || *end || v < 0 || v != v || v > 1e15) {
        size_t p = berth_dec_push(d, key);
        int rc = berth_dec_fail(d, n, "expected a non-negative number, got '%s'", n->str);
        berth_dec_pop(d, p);
        return rc;
    }
    *out = v;
    return 0;
}
