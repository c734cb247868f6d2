/* k8s/meta.c - the shared Kubernetes object layer: ObjectMeta (name,
 * namespace, labels, annotations, creation and deletion times,
 * ownerReferences), annotations (berth_kube_annotation), status
 * conditions, string maps, the strict-field check and located failures
 * every loader of Kubernetes kinds uses (kube, disrupt, autoscale). */
#include "k8s/k8s.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int k8s_known(berth_dec *d, const berth_node *m, const char *const *allowed)
{
    return d->strict ? berth_dec_known_fields(d, m, allowed) : 0;
}

void *k8s_alloc(berth_kcluster *k, size_t n, size_t size)
{
    return berth_arena_alloc(&k->arena, (n ? n : 1) * size);
}

void *k8s_dalloc(berth_dec *d, size_t n, size_t size)
{
    return berth_arena_alloc(d->arena, (n ? n : 1) * size);
}

int k8s_grow_fail(berth_dec *d, const berth_node *doc, int rc, const char *what, uint32_t lim)
{
    if (rc == BERTH_ENOMEM)
        return ENOMEM_(d);
    return berth_dec_fail(d, doc, "more than %u %s", lim, what);
}

/* Fails at key `key` of map m (path pushed for the message). */
int k8s_fail_at(berth_dec *d, const berth_node *m, const char *key, const char *fmt,
                   const char *arg)
{
    return berth_dec_fail_field(d, m, key, fmt, arg);
}

/* A string that must be one of choices (API spelling); absent: *out kept. */
int k8s_dec_choice(berth_dec *d, const berth_node *m, const char *key, int required,
                      const char *const *choices, int *out)
{
    return berth_dec_enum(d, m, key, required, choices, out);
}

/* ---- metadata ---- */
const char *const k8s_meta_fields[] = {
    "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
    "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels",
    "annotations", "ownerReferences", "finalizers", "managedFields", NULL};

int k8s_dec_string_map(berth_kcluster *k, berth_dec *d, const berth_node *m,
                          berth_labels *out, int validate)
{
    out->n = 0;
    out->items = k8s_dalloc(d, m->n, sizeof *out->items);
    if (!out->items)
        return ENOMEM_(d);
    for (size_t i = 0; i < m->n; i++) {
        const berth_node *kn = m->entries[i].key, *v = m->entries[i].value;
        size_t p = berth_dec_push(d, kn->str);
        const char *val = "", *why = NULL;
        int rc = 0;
        if (!berth_node_is_null(v))
            rc = berth_dec_node_str(d, v, &val);
        if (!rc && validate && !berth_label_key_valid(kn->str, &why))
            rc = berth_dec_fail(d, kn, "invalid label key '%s': %s", kn->str, why);
        if (!rc && validate && !berth_label_value_valid(val, &why))
            rc = berth_dec_fail(d, v, "invalid label value '%s': %s", val, why);
        berth_dec_pop(d, p);
        if (rc)
            return rc;
        out->items[out->n++] = (berth_label){kn->str, val};
    }
    if (berth_labels_sort(out))
        return berth_dec_fail(d, m, "a key appears twice");
    return 0;
}

int k8s_dec_labels_at(berth_kcluster *k, berth_dec *d, const berth_node *m, const char *key,
                         berth_labels *out, int validate)
{
    berth_node *lm = NULL;
    out->n = 0;
    out->items = NULL;
    int rc = berth_dec_map(d, m, key, 0, &lm);
    if (rc || !lm)
        return rc;
    size_t p = berth_dec_push(d, key);
    rc = k8s_dec_string_map(k, d, lm, out, validate);
    berth_dec_pop(d, p);
    return rc;
}


int k8s_dec_metadata(berth_kcluster *k, berth_dec *d, const berth_node *doc, int namespaced,
                        k8s_meta *out)
{
    memset(out, 0, sizeof *out);
    berth_node *meta = NULL;
    int rc = berth_dec_map(d, doc, "metadata", 1, &meta);
    if (rc)
        return rc;
    out->node = meta;
    size_t prev = berth_dec_push(d, "metadata");
    if (!(rc = k8s_known(d, meta, k8s_meta_fields)) && !(rc = berth_dec_str(d, meta, "name", 1, &out->name)) &&
        !*out->name)
        rc = k8s_fail_at(d, meta, "name", "must not be empty%s", "");
    if (!rc && namespaced) {
        out->ns = "default";
        rc = berth_dec_str(d, meta, "namespace", 0, &out->ns);
        if (!rc && !*out->ns)
            out->ns = "default";
    }
    if (!rc)
        rc = k8s_dec_labels_at(k, d, meta, "labels", &out->labels, 1);
    if (!rc)
        rc = berth_dec_map(d, meta, "annotations", 0, &out->annotations);
    if (!rc && out->annotations) {
        /* annotation values are strings */
        size_t p = berth_dec_push(d, "annotations");
        for (size_t i = 0; !rc && i < out->annotations->n; i++) {
            const berth_node *v = out->annotations->entries[i].value;
            if (berth_node_is_null(v))
                continue;
            size_t p2 = berth_dec_push(d, out->annotations->entries[i].key->str);
            const char *s;
            rc = berth_dec_node_str(d, v, &s);
            berth_dec_pop(d, p2);
        }
        berth_dec_pop(d, p);
    }
    berth_dec_pop(d, prev);
    return rc;
}

int k8s_dec_time_at(berth_dec *d, const berth_node *m, const char *key, int64_t *secs,
                       int *present)
{
    const char *s = NULL;
    *present = 0;
    int rc = berth_dec_str(d, m, key, 0, &s);
    if (rc || !s)
        return rc;
    int64_t ms;
    if (berth_time_parse(s, &ms))
        return k8s_fail_at(d, m, key,
                       "expected an RFC 3339 time such as 2024-05-01T12:00:00Z, got '%s'", s);
    *secs = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
    *present = 1;
    return 0;
}

/* metadata.ownerReferences (meta is the metadata map, path pushed): each
 * entry validated; the first with controller: true gives kind, name and
 * uid (NULL when empty). No controller reference: all three NULL. */
int k8s_dec_controller_ref(berth_dec *d, const berth_node *meta, const char **kind,
                           const char **name, const char **uid)
{
    *kind = *name = *uid = NULL;
    berth_node *owners = NULL;
    int rc = berth_dec_seq(d, meta, "ownerReferences", 0, &owners);
    for (size_t i = 0; !rc && owners && i < owners->n; i++) {
        const berth_node *o = owners->items[i];
        size_t p = berth_dec_push(d, "ownerReferences");
        berth_dec_push_index(d, i);
        static const char *const of[] = {"apiVersion", "kind", "name", "uid", "controller",
                                         "blockOwnerDeletion", NULL};
        const char *k = NULL, *n = NULL, *u = NULL;
        int ctl = 0;
        if (o->type != BERTH_NODE_MAP)
            rc = berth_dec_fail(d, o, "expected an owner reference mapping");
        if (!rc && !(rc = k8s_known(d, o, of)) && !(rc = berth_dec_str(d, o, "kind", 1, &k)) &&
            !(rc = berth_dec_str(d, o, "name", 1, &n)) && !(rc = berth_dec_str(d, o, "uid", 0, &u)))
            rc = berth_dec_bool(d, o, "controller", 0, &ctl);
        if (!rc && ctl && !*kind) {
            *kind = k;
            *name = n;
            *uid = u && *u ? u : NULL;
        }
        berth_dec_pop(d, p);
    }
    return rc;
}

int k8s_condition_true(const berth_node *status, const char *type, int dflt)
{
    const berth_node *cs = berth_node_get(status, "conditions");
    if (!cs || cs->type != BERTH_NODE_SEQ)
        return dflt;
    for (size_t i = 0; i < cs->n; i++) {
        const berth_node *t = berth_node_get(cs->items[i], "type");
        const berth_node *s = berth_node_get(cs->items[i], "status");
        if (t && s && !strcmp(t->str, type))
            return !strcmp(s->str, "True");
    }
    return dflt;
}

const char *berth_kube_annotation(const berth_node *annotations, const char *key)
{
    const berth_node *v = berth_node_get(annotations, key);
    return v && v->type == BERTH_NODE_SCALAR ? v->str : NULL;
}
