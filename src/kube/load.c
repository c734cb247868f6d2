/* kube/load.c - decodes the Kubernetes input kinds of SPEC 2 / 6.1 into a
 * berth_kcluster: v1 Node, Pod, Namespace, Service, ReplicationController,
 * apps/v1 ReplicaSet, StatefulSet, DaemonSet, policy/v1
 * PodDisruptionBudget (kept for disruption planning), v1
 * PersistentVolumeClaim and PersistentVolume (VolumeZone: pods' claims are
 * resolved to their PVs' zone labels when a load ends), List (and
 * <Kind>List) and kubescheduler.config.k8s.io/v1 KubeSchedulerConfiguration.
 *
 * Objects are read as the API server reads them: fields berth does not use
 * are ignored, unless strict, where a field outside the real API's field
 * set is an error. A used field with a wrong type or value is always a
 * located error ("file:line:col: spec.containers[0].resources.requests.cpu:
 * invalid quantity '1.2.3': invalid number"). Pods in phase Succeeded or
 * Failed are skipped (the scheduler's informer never sees them). A
 * container limit without a request defaults the request (API defaulting).
 * docs/kube-input.md lists every field read. */
#include "berth/fleet.h"
#include "berth/grow.h"
#include "berth/kube.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ENOMEM_(d) berth_error_set((d)->err, BERTH_ENOMEM, "out of memory")

/* Caps on input-driven growth. */
#define KUBE_MAX_NODES (1u << 22)
#define KUBE_MAX_PODS (1u << 24)
#define KUBE_MAX_OBJECTS (1u << 22)
#define KUBE_MAX_PROFILES 64u

static const char *const USAGE_CPU_ANN = "berth.io/usage-cpu";
static const char *const USAGE_MEM_ANN = "berth.io/usage-memory";
static const char *const VM_OVERHEAD_ANN = "berth.io/vm-overhead-memory";

static int known(berth_dec *d, const berth_node *m, const char *const *allowed)
{
    return d->strict ? berth_dec_known_fields(d, m, allowed) : 0;
}

static void *alloc(berth_kcluster *k, size_t n, size_t size)
{
    return berth_arena_alloc(&k->arena, (n ? n : 1) * size);
}

#define grow berth_grow

static int grow_fail(berth_dec *d, const berth_node *doc, int rc, const char *what, uint32_t lim)
{
    if (rc == BERTH_ENOMEM)
        return ENOMEM_(d);
    return berth_dec_fail(d, doc, "more than %u %s", lim, what);
}

/* Fails at key `key` of map m (path pushed for the message). */
static int fail_at(berth_dec *d, const berth_node *m, const char *key, const char *fmt,
                   const char *arg)
{
    size_t p = berth_dec_push(d, key);
    const berth_node *n = berth_node_get(m, key);
    int rc = berth_dec_fail(d, n ? n : m, fmt, arg);
    berth_dec_pop(d, p);
    return rc;
}

/* A string that must be one of choices (API spelling); absent: *out kept. */
static int dec_choice(berth_dec *d, const berth_node *m, const char *key, int required,
                      const char *const *choices, int *out)
{
    return berth_dec_enum(d, m, key, required, choices, out);
}

/* ---- metadata ---- */

static const char *const meta_fields[] = {
    "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
    "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels",
    "annotations", "ownerReferences", "finalizers", "managedFields", NULL};

static int dec_string_map(berth_kcluster *k, berth_dec *d, const berth_node *m,
                          berth_labels *out, int validate)
{
    out->n = 0;
    out->items = alloc(k, m->n, sizeof *out->items);
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

static int dec_labels_at(berth_kcluster *k, berth_dec *d, const berth_node *m, const char *key,
                         berth_labels *out, int validate)
{
    berth_node *lm = NULL;
    out->n = 0;
    out->items = NULL;
    int rc = berth_dec_map(d, m, key, 0, &lm);
    if (rc || !lm)
        return rc;
    size_t p = berth_dec_push(d, key);
    rc = dec_string_map(k, d, lm, out, validate);
    berth_dec_pop(d, p);
    return rc;
}

typedef struct kmeta {
    const char *name, *ns;
    berth_labels labels;
    berth_node *annotations;
    const berth_node *node;
} kmeta;

static int dec_metadata(berth_kcluster *k, berth_dec *d, const berth_node *doc, int namespaced,
                        kmeta *out)
{
    memset(out, 0, sizeof *out);
    berth_node *meta = NULL;
    int rc = berth_dec_map(d, doc, "metadata", 1, &meta);
    if (rc)
        return rc;
    out->node = meta;
    size_t prev = berth_dec_push(d, "metadata");
    if (!(rc = known(d, meta, meta_fields)) && !(rc = berth_dec_str(d, meta, "name", 1, &out->name)) &&
        !*out->name)
        rc = fail_at(d, meta, "name", "must not be empty%s", "");
    if (!rc && namespaced) {
        out->ns = "default";
        rc = berth_dec_str(d, meta, "namespace", 0, &out->ns);
        if (!rc && !*out->ns)
            out->ns = "default";
    }
    if (!rc)
        rc = dec_labels_at(k, d, meta, "labels", &out->labels, 1);
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

/* ---- quantities ---- */

/* A quantity in resource r's unit: millicores for cpu, else the value. */
static int64_t res_value(uint32_t r, berth_quantity q)
{
    return r == BERTH_KRES_CPU ? berth_quantity_milli(q) : berth_quantity_value(q);
}

/* A ResourceList (map name -> quantity). Each entry is stored in out[]
 * with its bit in *has; "pods" goes to *pods (when pods is NULL it is an
 * error). skip_zero_ext: a zero-valued extended resource adds no column. */
static int dec_res_list(berth_kcluster *k, berth_dec *d, const berth_node *m, const char *key,
                        int64_t *out, uint32_t *has, int64_t *pods, int skip_zero_ext)
{
    berth_node *rl = NULL;
    int rc = berth_dec_map(d, m, key, 0, &rl);
    if (rc || !rl)
        return rc;
    size_t prev = berth_dec_push(d, key);
    for (size_t i = 0; !rc && i < rl->n; i++) {
        const char *name = rl->entries[i].key->str;
        const berth_node *v = rl->entries[i].value;
        size_t p = berth_dec_push(d, name);
        berth_quantity q;
        if (berth_node_is_null(v))
            rc = berth_dec_fail(d, rl->entries[i].key, "expected a quantity");
        if (!rc)
            rc = berth_dec_node_quantity(d, v, &q);
        if (!rc && berth_quantity_cmp(q, (berth_quantity){0}) < 0)
            rc = berth_dec_fail(d, v, "must not be negative, got '%s'", v->str);
        if (!rc && !*name)
            rc = berth_dec_fail(d, rl->entries[i].key, "empty resource name");
        if (!rc && !strcmp(name, "pods")) {
            if (pods)
                *pods = berth_quantity_value(q);
            else
                rc = berth_dec_fail(d, rl->entries[i].key,
                                    "'pods' is not a container resource");
        } else if (!rc) {
            uint32_t r = berth_kube_resource(k, name, 0);
            if (r == BERTH_KUBE_NONE && skip_zero_ext && berth_quantity_cmp(q, (berth_quantity){0}) == 0) {
                berth_dec_pop(d, p);
                continue;
            }
            if (r == BERTH_KUBE_NONE)
                r = berth_kube_resource(k, name, 1);
            if (r == BERTH_KUBE_NONE)
                rc = berth_dec_fail(d, rl->entries[i].key,
                                    "too many distinct resources (berth keeps at most %d)",
                                    BERTH_KUBE_MAX_RES);
            else {
                out[r] = res_value(r, q);
                if (has)
                    *has |= 1u << r;
            }
        }
        berth_dec_pop(d, p);
    }
    berth_dec_pop(d, prev);
    return rc;
}

/* Observed usage: a {cpu, memory} map under key, and/or the annotations
 * berth.io/usage-cpu and berth.io/usage-memory (the map wins). */
static int dec_usage(berth_kcluster *k, berth_dec *d, const berth_node *status, kmeta *meta,
                     int64_t *usage, int *has_usage)
{
    int rc = 0;
    if (meta->annotations) {
        const char *anns[2] = {USAGE_CPU_ANN, USAGE_MEM_ANN};
        for (uint32_t r = 0; r < 2 && !rc; r++) {
            const berth_node *v = berth_node_get(meta->annotations, anns[r]);
            if (!v)
                continue;
            size_t p = berth_dec_push(d, "metadata.annotations");
            berth_dec_push(d, anns[r]);
            berth_quantity q;
            rc = berth_dec_node_quantity(d, v, &q);
            if (!rc && berth_quantity_cmp(q, (berth_quantity){0}) < 0)
                rc = berth_dec_fail(d, v, "must not be negative, got '%s'", v->str);
            if (!rc) {
                usage[r] = res_value(r, q);
                *has_usage = 1;
            }
            berth_dec_pop(d, p);
        }
    }
    berth_node *um = NULL;
    if (!rc && status)
        rc = berth_dec_map(d, status, "usage", 0, &um);
    if (!rc && um) {
        static const char *const uf[] = {"cpu", "memory", NULL};
        size_t p = berth_dec_push(d, "usage");
        const char *names[2] = {"cpu", "memory"};
        /* unknown keys are always errors here: berth's own extension */
        rc = berth_dec_known_fields(d, um, uf);
        for (uint32_t r = 0; r < 2 && !rc; r++) {
            berth_quantity q;
            if (!berth_node_get(um, names[r]))
                continue;
            rc = berth_dec_quantity(d, um, names[r], 0, &q);
            if (!rc && berth_quantity_cmp(q, (berth_quantity){0}) < 0)
                rc = fail_at(d, um, names[r], "must not be negative%s", "");
            if (!rc) {
                usage[r] = res_value(r, q);
                *has_usage = 1;
            }
        }
        berth_dec_pop(d, p);
    }
    (void)k;
    return rc;
}

/* ---- selectors ---- */

static int dec_str_list(berth_kcluster *k, berth_dec *d, const berth_node *m, const char *key,
                        const char ***out, uint32_t *n)
{
    berth_node *s = NULL;
    *n = 0;
    int rc = berth_dec_seq(d, m, key, 0, &s);
    if (rc || !s)
        return rc;
    *out = alloc(k, s->n, sizeof **out);
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
 * fields: a node selector matchFields entry (metadata.name, In/NotIn). */
static int dec_requirement(berth_kcluster *k, berth_dec *d, const berth_node *e, int label_selector,
                           int fields, berth_requirement *r)
{
    static const char *const ef[] = {"key", "operator", "values", NULL};
    const char *key = NULL, *op = NULL;
    int rc = 0;
    if (e->type != BERTH_NODE_MAP)
        return berth_dec_fail(d, e, "expected a mapping with key, operator, values");
    if ((rc = known(d, e, ef)) || (rc = berth_dec_str(d, e, "key", 1, &key)) ||
        (rc = berth_dec_str(d, e, "operator", 1, &op)))
        return rc;
    int o = berth_sel_op_parse(op);
    if (o < 0 || (label_selector && o > BERTH_SEL_DOESNOTEXIST) ||
        (fields && o != BERTH_SEL_IN && o != BERTH_SEL_NOTIN))
        return fail_at(d, e, "operator",
                       label_selector ? "unknown operator '%s' (In, NotIn, Exists, DoesNotExist)"
                       : fields       ? "operator '%s' not allowed in matchFields (In, NotIn)"
                                      : "unknown operator '%s' (In, NotIn, Exists, DoesNotExist, "
                                        "Gt, Lt)",
                       op);
    if (fields && strcmp(key, "metadata.name"))
        return fail_at(d, e, "key", "matchFields supports the key metadata.name only, got '%s'",
                       key);
    *r = (berth_requirement){key, (berth_sel_op)o, NULL, 0};
    if ((rc = dec_str_list(k, d, e, "values", &r->values, &r->nvalues)))
        return rc;
    if (fields) {
        if (r->nvalues != 1)
            return berth_dec_fail(d, e, "matchFields %s needs exactly one value", op);
        return 0;
    }
    const char *why = NULL;
    if (berth_requirement_validate(r, &why))
        return berth_dec_fail(d, e, "invalid requirement: %s", why);
    return 0;
}

/* Appends `key op value` requirements for the pod label keys listed
 * (matchLabelKeys: In, mismatchLabelKeys: NotIn); keys the pod lacks are
 * skipped. */
static int merge_label_keys(berth_kcluster *k, berth_dec *d, berth_selector *s,
                            const berth_labels *pod_labels, const char **keys, uint32_t nkeys,
                            berth_sel_op op)
{
    if (!nkeys || s->nothing || !pod_labels)
        return 0;
    berth_requirement *nr = alloc(k, s->n + nkeys, sizeof *nr);
    if (!nr)
        return ENOMEM_(d);
    if (s->n)
        memcpy(nr, s->reqs, s->n * sizeof *nr);
    uint32_t n = s->n;
    for (uint32_t i = 0; i < nkeys; i++) {
        const char *v = berth_labels_get(pod_labels, keys[i]);
        if (!v)
            continue;
        const char **vals = alloc(k, 1, sizeof *vals);
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
static int dec_label_selector(berth_kcluster *k, berth_dec *d, const berth_node *m, const char *key,
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
    if ((rc = known(d, s, sf)) || (rc = berth_dec_map(d, s, "matchLabels", 0, &ml)) ||
        (rc = berth_dec_seq(d, s, "matchExpressions", 0, &me)))
        goto out;
    out->reqs = alloc(k, (ml ? ml->n : 0) + (me ? me->n : 0), sizeof *out->reqs);
    if (!out->reqs) {
        rc = ENOMEM_(d);
        goto out;
    }
    if (ml) {
        berth_labels l;
        size_t p = berth_dec_push(d, "matchLabels");
        rc = dec_string_map(k, d, ml, &l, 1);
        berth_dec_pop(d, p);
        for (uint32_t i = 0; !rc && i < l.n; i++) {
            const char **vals = alloc(k, 1, sizeof *vals);
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
        rc = dec_requirement(k, d, me->items[i], 1, 0, &out->reqs[out->n]);
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
static int dec_map_selector(berth_kcluster *k, berth_dec *d, const berth_node *m, const char *key,
                            berth_selector *out, int *present)
{
    berth_labels l;
    memset(out, 0, sizeof *out);
    *present = 0;
    int rc = dec_labels_at(k, d, m, key, &l, 1);
    if (rc || !l.n)
        return rc;
    out->reqs = alloc(k, l.n, sizeof *out->reqs);
    if (!out->reqs)
        return ENOMEM_(d);
    for (uint32_t i = 0; i < l.n; i++) {
        const char **vals = alloc(k, 1, sizeof *vals);
        if (!vals)
            return ENOMEM_(d);
        vals[0] = l.items[i].value;
        out->reqs[out->n++] = (berth_requirement){l.items[i].key, BERTH_SEL_IN, vals, 1};
    }
    *present = 1;
    return 0;
}

/* ---- taints and tolerations ---- */

static int dec_taints(berth_kcluster *k, berth_dec *d, const berth_node *spec, berth_knode *nd)
{
    static const char *const tf[] = {"key", "value", "effect", "timeAdded", NULL};
    return berth_dec_taints(d, &k->arena, spec, "taints", tf, d->strict, &nd->taints,
                            &nd->ntaints);
}

static int dec_tolerations(berth_kcluster *k, berth_dec *d, const berth_node *spec, berth_kpod *pod)
{
    berth_node *ts = NULL;
    int rc = berth_dec_seq(d, spec, "tolerations", 0, &ts);
    if (rc || !ts)
        return rc;
    pod->tols = alloc(k, ts->n, sizeof *pod->tols);
    if (!pod->tols)
        return ENOMEM_(d);
    for (size_t i = 0; !rc && i < ts->n; i++) {
        const berth_node *t = ts->items[i];
        size_t p = berth_dec_push(d, "tolerations");
        berth_dec_push_index(d, i);
        static const char *const tf[] = {"key", "operator", "value", "effect", "tolerationSeconds",
                                         NULL};
        static const char *const ops[] = {"Equal", "Exists", NULL};
        static const char *const effects[] = {"NoSchedule", "PreferNoSchedule", "NoExecute", NULL};
        const char *key = "", *val = "", *eff_s = NULL;
        int op = 0, eff = -1;
        int64_t secs = -1;
        if (t->type != BERTH_NODE_MAP)
            rc = berth_dec_fail(d, t, "expected a mapping with key, operator, value, effect");
        if (!rc && !(rc = known(d, t, tf)) && !(rc = berth_dec_str(d, t, "key", 0, &key)) &&
            !(rc = berth_dec_str(d, t, "value", 0, &val)) &&
            !(rc = berth_dec_str(d, t, "effect", 0, &eff_s)))
            rc = dec_choice(d, t, "operator", 0, ops, &op);
        if (!rc && eff_s && *eff_s)
            rc = dec_choice(d, t, "effect", 0, effects, &eff);
        if (!rc)
            rc = berth_dec_int(d, t, "tolerationSeconds", 0, INT64_MIN, INT64_MAX, &secs);
        if (!rc) {
            berth_toleration *tl = &pod->tols[pod->ntols];
            *tl = (berth_toleration){key, val, (berth_toleration_op)op,
                                     (berth_taint_effect)(eff + 1), secs};
            const char *why = NULL;
            if (berth_toleration_validate(tl, &why))
                rc = berth_dec_fail(d, t, "invalid toleration: %s", why);
            else
                pod->ntols++;
        }
        berth_dec_pop(d, p);
    }
    return rc;
}

/* ---- Node ---- */

static const char *const top_fields[] = {"apiVersion", "kind", "metadata", "spec", "status", NULL};


/* ---- node name index (duplicate checks while loading) ---- */

static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 16777619u;
    return h;
}

static uint32_t node_index_find(const berth_kcluster *k, const char *name)
{
    if (!k->node_index_cap)
        return BERTH_KUBE_NONE;
    uint32_t mask = k->node_index_cap - 1;
    for (uint32_t i = name_hash(name) & mask; k->node_index[i]; i = (i + 1) & mask)
        if (!strcmp(k->nodes[k->node_index[i] - 1].name, name))
            return k->node_index[i] - 1;
    return BERTH_KUBE_NONE;
}

static int node_index_add(berth_kcluster *k, uint32_t id)
{
    if (2 * k->nnodes > k->node_index_cap) {
        uint32_t cap = k->node_index_cap ? k->node_index_cap * 2 : 64;
        while (2 * k->nnodes > cap)
            cap *= 2;
        uint32_t *t = calloc(cap, sizeof *t);
        if (!t)
            return BERTH_ENOMEM;
        free(k->node_index);
        k->node_index = t;
        k->node_index_cap = cap;
        for (uint32_t n = 0; n < k->nnodes; n++) {
            uint32_t i = name_hash(k->nodes[n].name) & (cap - 1);
            while (t[i])
                i = (i + 1) & (cap - 1);
            t[i] = n + 1;
        }
        return 0;
    }
    uint32_t mask = k->node_index_cap - 1, i = name_hash(k->nodes[id].name) & mask;
    while (k->node_index[i])
        i = (i + 1) & mask;
    k->node_index[i] = id + 1;
    return 0;
}

/* status.conditions[type=Ready]: not_ready 1 (False) / 2 (Unknown) and its
 * lastTransitionTime; other conditions are accepted and ignored. */
static int dec_ready(berth_dec *d, const berth_node *status, berth_knode *nd)
{
    berth_node *cs = NULL;
    int rc = berth_dec_seq(d, status, "conditions", 0, &cs);
    for (size_t i = 0; !rc && cs && i < cs->n; i++) {
        const berth_node *c = cs->items[i];
        const berth_node *t = c->type == BERTH_NODE_MAP ? berth_node_get(c, "type") : NULL;
        if (!t || t->type != BERTH_NODE_SCALAR || strcmp(t->str, "Ready"))
            continue;
        size_t p = berth_dec_push(d, "conditions");
        berth_dec_push_index(d, i);
        const char *st = NULL, *since = NULL;
        if (!(rc = berth_dec_str(d, c, "status", 1, &st)) &&
            !(rc = berth_dec_str(d, c, "lastTransitionTime", 0, &since))) {
            nd->not_ready = !strcmp(st, "True") ? 0 : !strcmp(st, "False") ? 1 : 2;
            int64_t ms = 0;
            if (since && berth_fleet_parse_time(since, &ms))
                rc = fail_at(d, c, "lastTransitionTime",
                             "expected an RFC 3339 time such as 2024-05-01T12:00:00Z, got '%s'",
                             since);
            else if (since)
                nd->not_ready_since = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
        }
        berth_dec_pop(d, p);
    }
    return rc;
}

static int load_node(berth_kcluster *k, berth_dec *d, const berth_node *doc)
{
    berth_knode nd;
    memset(&nd, 0, sizeof nd);
    kmeta meta;
    int rc = dec_metadata(k, d, doc, 0, &meta);
    if (rc)
        return rc;
    nd.name = meta.name;
    nd.labels = meta.labels;
    berth_node *spec = NULL, *status = NULL;
    if ((rc = berth_dec_map(d, doc, "spec", 0, &spec)) ||
        (rc = berth_dec_map(d, doc, "status", 0, &status)))
        return rc;
    if (spec) {
        static const char *const sf[] = {"podCIDR", "podCIDRs", "providerID", "unschedulable",
                                         "taints", "configSource", "externalID", NULL};
        size_t p = berth_dec_push(d, "spec");
        if (!(rc = known(d, spec, sf)) && !(rc = berth_dec_bool(d, spec, "unschedulable", 0,
                                                                &nd.unschedulable)))
            rc = dec_taints(k, d, spec, &nd);
        berth_dec_pop(d, p);
        if (rc)
            return rc;
    }
    nd.alloc_pods = -1;
    if (status) {
        static const char *const stf[] = {"capacity", "allocatable", "phase", "conditions",
                                          "addresses", "daemonEndpoints", "nodeInfo", "images",
                                          "volumesInUse", "volumesAttached", "config",
                                          "runtimeHandlers", "features", "usage", NULL};
        size_t p = berth_dec_push(d, "status");
        rc = known(d, status, stf);
        const char *which = berth_node_get(status, "allocatable") ? "allocatable" : "capacity";
        if (!rc)
            rc = dec_res_list(k, d, status, which, nd.alloc, NULL, &nd.alloc_pods, 1);
        if (!rc)
            rc = dec_ready(d, status, &nd);
        berth_node *imgs = NULL;
        if (!rc)
            rc = berth_dec_seq(d, status, "images", 0, &imgs);
        if (!rc && imgs) {
            size_t total = 0;
            for (size_t i = 0; i < imgs->n; i++) {
                berth_node *names = berth_node_get(imgs->items[i], "names");
                total += names && names->type == BERTH_NODE_SEQ ? names->n : 0;
            }
            nd.images = alloc(k, total, sizeof *nd.images);
            if (!nd.images)
                rc = ENOMEM_(d);
            for (size_t i = 0; !rc && i < imgs->n; i++) {
                const berth_node *im = imgs->items[i];
                size_t p2 = berth_dec_push(d, "images");
                berth_dec_push_index(d, i);
                static const char *const imf[] = {"names", "sizeBytes", NULL};
                const char **names = NULL;
                uint32_t nn = 0;
                int64_t size = 0;
                if (im->type != BERTH_NODE_MAP)
                    rc = berth_dec_fail(d, im, "expected a mapping with names, sizeBytes");
                if (!rc && !(rc = known(d, im, imf)) &&
                    !(rc = dec_str_list(k, d, im, "names", &names, &nn)))
                    rc = berth_dec_int(d, im, "sizeBytes", 0, 0, INT64_MAX, &size);
                for (uint32_t j = 0; !rc && j < nn && nd.nimages < total; j++)
                    nd.images[nd.nimages++] = (berth_kimage){names[j], size};
                berth_dec_pop(d, p2);
            }
        }
        berth_dec_pop(d, p);
        if (rc)
            return rc;
    }
    if (nd.alloc_pods < 0)
        nd.alloc_pods = 110; /* kubelet's default maxPods when the input omits pods */
    if ((rc = dec_usage(k, d, status, &meta, nd.usage, &nd.has_usage)))
        return rc;
    /* usage-aware admission (SPEC 2.4): per-VM overhead reserved on the host */
    const berth_node *ov = meta.annotations ? berth_node_get(meta.annotations, VM_OVERHEAD_ANN)
                                            : NULL;
    if (ov) {
        size_t p = berth_dec_push(d, "metadata.annotations");
        berth_dec_push(d, VM_OVERHEAD_ANN);
        berth_quantity q;
        rc = berth_dec_node_quantity(d, ov, &q);
        if (!rc && berth_quantity_cmp(q, (berth_quantity){0}) < 0)
            rc = berth_dec_fail(d, ov, "must not be negative, got '%s'", ov->str);
        if (!rc)
            nd.overhead_reserve = berth_quantity_value(q);
        berth_dec_pop(d, p);
        if (rc)
            return rc;
    }
    if (node_index_find(k, nd.name) != BERTH_KUBE_NONE) {
        size_t p = berth_dec_push(d, "metadata.name");
        rc = berth_dec_fail(d, berth_node_get(meta.node, "name"), "node '%s' appears twice",
                            nd.name);
        berth_dec_pop(d, p);
        return rc;
    }
    if ((rc = grow((void **)&k->nodes, &k->capnodes, k->nnodes + 1, sizeof *k->nodes,
                   KUBE_MAX_NODES)))
        return grow_fail(d, doc, rc, "nodes", KUBE_MAX_NODES);
    k->nodes[k->nnodes++] = nd;
    if (node_index_add(k, k->nnodes - 1))
        return berth_error_set(d->err, BERTH_ENOMEM, "out of memory");
    return 0;
}

/* ---- Pod ---- */

static const char *const container_fields[] = {
    "name", "image", "command", "args", "workingDir", "ports", "envFrom", "env", "resources",
    "resizePolicy", "restartPolicy", "volumeMounts", "volumeDevices", "livenessProbe",
    "readinessProbe", "startupProbe", "lifecycle", "terminationMessagePath",
    "terminationMessagePolicy", "imagePullPolicy", "securityContext", "stdin", "stdinOnce", "tty",
    NULL};

typedef struct portvec {
    berth_kport *v;
    uint32_t n, cap;
} portvec;

static int dec_container(berth_kcluster *k, berth_dec *d, const berth_node *c, int init,
                         berth_kcontainer *out, portvec *ports)
{
    memset(out, 0, sizeof *out);
    if (c->type != BERTH_NODE_MAP)
        return berth_dec_fail(d, c, "expected a container mapping");
    int rc = known(d, c, container_fields);
    if (!rc)
        rc = berth_dec_str(d, c, "name", 0, &out->name);
    if (!rc)
        rc = berth_dec_str(d, c, "image", 0, &out->image);
    berth_node *res = NULL;
    if (!rc)
        rc = berth_dec_map(d, c, "resources", 0, &res);
    if (!rc && res) {
        static const char *const rf[] = {"limits", "requests", "claims", NULL};
        size_t p = berth_dec_push(d, "resources");
        if (!(rc = known(d, res, rf)) &&
            !(rc = dec_res_list(k, d, res, "requests", out->req, &out->has_req, NULL, 0)))
            rc = dec_res_list(k, d, res, "limits", out->lim, &out->has_lim, NULL, 0);
        /* requests above limits are rejected by the API server */
        for (uint32_t r = 0; !rc && r < k->nres; r++) {
            uint32_t bit = 1u << r;
            if ((out->has_req & bit) && (out->has_lim & bit) && out->req[r] > out->lim[r]) {
                size_t p2 = berth_dec_push(d, "requests");
                berth_dec_push(d, k->res_names[r]);
                const berth_node *rq = berth_node_get(res, "requests");
                rc = berth_dec_fail(d, berth_node_get(rq, k->res_names[r]),
                                    "%s request must be less than or equal to its limit",
                                    k->res_names[r]);
                berth_dec_pop(d, p2);
            }
        }
        /* API defaulting: a limit without a request sets the request */
        for (uint32_t r = 0; !rc && r < k->nres; r++) {
            uint32_t bit = 1u << r;
            if ((out->has_lim & bit) && !(out->has_req & bit)) {
                out->req[r] = out->lim[r];
                out->has_req |= bit;
            }
        }
        berth_dec_pop(d, p);
    }
    const char *restart = NULL;
    if (!rc)
        rc = berth_dec_str(d, c, "restartPolicy", 0, &restart);
    if (!rc && restart) {
        if (!init || strcmp(restart, "Always"))
            rc = fail_at(d, c, "restartPolicy",
                         init ? "an init container's restartPolicy must be Always, got '%s'"
                              : "restartPolicy is only allowed on init containers (got '%s')",
                         restart);
        else
            out->sidecar = 1;
    }
    berth_node *ps = NULL;
    if (!rc)
        rc = berth_dec_seq(d, c, "ports", 0, &ps);
    for (size_t i = 0; !rc && ps && i < ps->n; i++) {
        const berth_node *pt = ps->items[i];
        size_t p = berth_dec_push(d, "ports");
        berth_dec_push_index(d, i);
        static const char *const pf[] = {"name", "hostPort", "containerPort", "protocol", "hostIP",
                                         NULL};
        static const char *const protos[] = {"TCP", "UDP", "SCTP", NULL};
        int64_t hp = 0, cp = 0;
        int proto = 0;
        const char *ip = "0.0.0.0";
        if (pt->type != BERTH_NODE_MAP)
            rc = berth_dec_fail(d, pt, "expected a mapping with containerPort, hostPort, protocol");
        if (!rc && !(rc = known(d, pt, pf)) &&
            !(rc = berth_dec_int(d, pt, "hostPort", 0, 0, 65535, &hp)) &&
            !(rc = berth_dec_int(d, pt, "containerPort", 0, 0, 65535, &cp)) &&
            !(rc = dec_choice(d, pt, "protocol", 0, protos, &proto)))
            rc = berth_dec_str(d, pt, "hostIP", 0, &ip);
        if (!rc && !*ip)
            ip = "0.0.0.0";
        if (!rc && hp > 0) {
            if ((rc = grow((void **)&ports->v, &ports->cap, ports->n + 1, sizeof *ports->v,
                           65536)))
                rc = grow_fail(d, pt, rc, "host ports in a pod", 65536);
            else
                ports->v[ports->n++] = (berth_kport){(int32_t)hp, (berth_kproto)proto, ip};
        }
        berth_dec_pop(d, p);
    }
    return rc;
}

static int dec_containers(berth_kcluster *k, berth_dec *d, const berth_node *spec, const char *key,
                          int init, berth_kcontainer **out, uint32_t *n, portvec *ports)
{
    berth_node *cs = NULL;
    *n = 0;
    int rc = berth_dec_seq(d, spec, key, 0, &cs);
    if (rc || !cs)
        return rc;
    *out = alloc(k, cs->n, sizeof **out);
    if (!*out)
        return ENOMEM_(d);
    for (size_t i = 0; !rc && i < cs->n; i++) {
        size_t p = berth_dec_push(d, key);
        berth_dec_push_index(d, i);
        rc = dec_container(k, d, cs->items[i], init, &(*out)[i], ports);
        berth_dec_pop(d, p);
    }
    if (!rc)
        *n = (uint32_t)cs->n;
    return rc;
}

/* NodeSelectorTerm */
static int dec_nsterm(berth_kcluster *k, berth_dec *d, const berth_node *t, berth_kterm *out)
{
    memset(out, 0, sizeof *out);
    if (t->type != BERTH_NODE_MAP)
        return berth_dec_fail(d, t, "expected a node selector term (matchExpressions, "
                                    "matchFields)");
    static const char *const tf[] = {"matchExpressions", "matchFields", NULL};
    berth_node *me = NULL, *mf = NULL;
    int rc;
    if ((rc = known(d, t, tf)) || (rc = berth_dec_seq(d, t, "matchExpressions", 0, &me)) ||
        (rc = berth_dec_seq(d, t, "matchFields", 0, &mf)))
        return rc;
    for (int which = 0; which < 2 && !rc; which++) {
        berth_node *s = which ? mf : me;
        if (!s)
            continue;
        berth_requirement *rs = alloc(k, s->n, sizeof *rs);
        if (!rs)
            return ENOMEM_(d);
        for (size_t i = 0; !rc && i < s->n; i++) {
            size_t p = berth_dec_push(d, which ? "matchFields" : "matchExpressions");
            berth_dec_push_index(d, i);
            rc = dec_requirement(k, d, s->items[i], 0, which, &rs[i]);
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

static int dec_node_affinity(berth_kcluster *k, berth_dec *d, const berth_node *na, berth_kpod *pod)
{
    static const char *const nf[] = {"requiredDuringSchedulingIgnoredDuringExecution",
                                     "preferredDuringSchedulingIgnoredDuringExecution", NULL};
    berth_node *req = NULL, *pref = NULL;
    int rc;
    if ((rc = known(d, na, nf)) ||
        (rc = berth_dec_map(d, na, nf[0], 0, &req)) || (rc = berth_dec_seq(d, na, nf[1], 0, &pref)))
        return rc;
    if (req) {
        size_t p = berth_dec_push(d, nf[0]);
        static const char *const rf[] = {"nodeSelectorTerms", NULL};
        berth_node *terms = NULL;
        pod->has_req_affinity = 1;
        if (!(rc = known(d, req, rf)) &&
            !(rc = berth_dec_seq(d, req, "nodeSelectorTerms", 1, &terms))) {
            pod->req_terms = alloc(k, terms->n, sizeof *pod->req_terms);
            if (!pod->req_terms)
                rc = ENOMEM_(d);
            for (size_t i = 0; !rc && i < terms->n; i++) {
                size_t p2 = berth_dec_push(d, "nodeSelectorTerms");
                berth_dec_push_index(d, i);
                rc = dec_nsterm(k, d, terms->items[i], &pod->req_terms[i]);
                berth_dec_pop(d, p2);
            }
            if (!rc)
                pod->nreq_terms = (uint32_t)terms->n;
        }
        berth_dec_pop(d, p);
        if (rc)
            return rc;
    }
    if (pref) {
        pod->pref_terms = alloc(k, pref->n, sizeof *pod->pref_terms);
        if (!pod->pref_terms)
            return ENOMEM_(d);
        for (size_t i = 0; !rc && i < pref->n; i++) {
            const berth_node *t = pref->items[i];
            size_t p = berth_dec_push(d, nf[1]);
            berth_dec_push_index(d, i);
            static const char *const pf[] = {"weight", "preference", NULL};
            berth_kpref_term *pt = &pod->pref_terms[i];
            int64_t w = 0;
            berth_node *prefn = NULL;
            if (t->type != BERTH_NODE_MAP)
                rc = berth_dec_fail(d, t, "expected a mapping with weight, preference");
            if (!rc && !(rc = known(d, t, pf)) &&
                !(rc = berth_dec_int(d, t, "weight", 1, 1, 100, &w)) &&
                !(rc = berth_dec_map(d, t, "preference", 1, &prefn))) {
                size_t p2 = berth_dec_push(d, "preference");
                rc = dec_nsterm(k, d, prefn, &pt->term);
                berth_dec_pop(d, p2);
            }
            pt->weight = (int32_t)w;
            berth_dec_pop(d, p);
        }
        if (!rc)
            pod->npref_terms = (uint32_t)pref->n;
    }
    return rc;
}

/* PodAffinityTerm; pod labels feed matchLabelKeys / mismatchLabelKeys. */
static int dec_pod_term(berth_kcluster *k, berth_dec *d, const berth_node *t,
                        const berth_labels *pod_labels, berth_kaffinity_term *out)
{
    memset(out, 0, sizeof *out);
    if (t->type != BERTH_NODE_MAP)
        return berth_dec_fail(d, t, "expected a pod affinity term (labelSelector, topologyKey)");
    static const char *const tf[] = {"labelSelector", "namespaces", "topologyKey",
                                     "namespaceSelector", "matchLabelKeys", "mismatchLabelKeys",
                                     NULL};
    int rc;
    const char **mk = NULL, **mmk = NULL;
    uint32_t nmk = 0, nmmk = 0;
    berth_node *nss = NULL;
    if ((rc = known(d, t, tf)) || (rc = dec_label_selector(k, d, t, "labelSelector", &out->selector)) ||
        (rc = dec_str_list(k, d, t, "namespaces", &out->namespaces, &out->nnamespaces)) ||
        (rc = berth_dec_str(d, t, "topologyKey", 1, &out->topology_key)) ||
        (rc = berth_dec_map(d, t, "namespaceSelector", 0, &nss)) ||
        (rc = dec_str_list(k, d, t, "matchLabelKeys", &mk, &nmk)) ||
        (rc = dec_str_list(k, d, t, "mismatchLabelKeys", &mmk, &nmmk)))
        return rc;
    if (!*out->topology_key)
        return fail_at(d, t, "topologyKey", "must not be empty%s", "");
    if (nss) {
        out->has_ns_selector = 1;
        if ((rc = dec_label_selector(k, d, t, "namespaceSelector", &out->ns_selector)))
            return rc;
    }
    if ((rc = merge_label_keys(k, d, &out->selector, pod_labels, mk, nmk, BERTH_SEL_IN)))
        return rc;
    return merge_label_keys(k, d, &out->selector, pod_labels, mmk, nmmk, BERTH_SEL_NOTIN);
}

static int dec_pod_affinity(berth_kcluster *k, berth_dec *d, const berth_node *pa,
                            const berth_labels *labels, berth_kaffinity_term **req, uint32_t *nreq,
                            berth_kaffinity_term **pref, uint32_t *npref)
{
    static const char *const nf[] = {"requiredDuringSchedulingIgnoredDuringExecution",
                                     "preferredDuringSchedulingIgnoredDuringExecution", NULL};
    berth_node *r = NULL, *p = NULL;
    int rc;
    if ((rc = known(d, pa, nf)) || (rc = berth_dec_seq(d, pa, nf[0], 0, &r)) ||
        (rc = berth_dec_seq(d, pa, nf[1], 0, &p)))
        return rc;
    if (r) {
        *req = alloc(k, r->n, sizeof **req);
        if (!*req)
            return ENOMEM_(d);
        for (size_t i = 0; !rc && i < r->n; i++) {
            size_t q = berth_dec_push(d, nf[0]);
            berth_dec_push_index(d, i);
            rc = dec_pod_term(k, d, r->items[i], labels, &(*req)[i]);
            berth_dec_pop(d, q);
        }
        if (rc)
            return rc;
        *nreq = (uint32_t)r->n;
    }
    if (p) {
        *pref = alloc(k, p->n, sizeof **pref);
        if (!*pref)
            return ENOMEM_(d);
        for (size_t i = 0; !rc && i < p->n; i++) {
            const berth_node *w = p->items[i];
            size_t q = berth_dec_push(d, nf[1]);
            berth_dec_push_index(d, i);
            static const char *const wf[] = {"weight", "podAffinityTerm", NULL};
            int64_t wt = 0;
            berth_node *term = NULL;
            if (w->type != BERTH_NODE_MAP)
                rc = berth_dec_fail(d, w, "expected a mapping with weight, podAffinityTerm");
            if (!rc && !(rc = known(d, w, wf)) &&
                !(rc = berth_dec_int(d, w, "weight", 1, 1, 100, &wt)) &&
                !(rc = berth_dec_map(d, w, "podAffinityTerm", 1, &term))) {
                size_t q2 = berth_dec_push(d, "podAffinityTerm");
                rc = dec_pod_term(k, d, term, labels, &(*pref)[i]);
                berth_dec_pop(d, q2);
                (*pref)[i].weight = (int32_t)wt;
            }
            berth_dec_pop(d, q);
        }
        if (rc)
            return rc;
        *npref = (uint32_t)p->n;
    }
    return 0;
}

/* A TopologySpreadConstraint. pod_labels: the pod's (matchLabelKeys);
 * NULL for PodTopologySpreadArgs.defaultConstraints (no selector allowed). */
static int dec_spread(berth_kcluster *k, berth_dec *d, const berth_node *t,
                      const berth_labels *pod_labels, int defaults, berth_kspread *s)
{
    memset(s, 0, sizeof *s);
    s->min_domains = 1;
    s->honor_node_affinity = 1;
    if (t->type != BERTH_NODE_MAP)
        return berth_dec_fail(d, t, "expected a mapping with maxSkew, topologyKey, "
                                    "whenUnsatisfiable");
    static const char *const tf[] = {"maxSkew", "topologyKey", "whenUnsatisfiable",
                                     "labelSelector", "minDomains", "nodeAffinityPolicy",
                                     "nodeTaintsPolicy", "matchLabelKeys", NULL};
    static const char *const wu[] = {"DoNotSchedule", "ScheduleAnyway", NULL};
    static const char *const pol[] = {"Honor", "Ignore", NULL};
    int64_t skew = 0, mind = 1;
    int w = 0, nap = 0, ntp = 1;
    int rc;
    if ((rc = known(d, t, tf)) || (rc = berth_dec_int(d, t, "maxSkew", 1, 1, INT32_MAX, &skew)) ||
        (rc = berth_dec_str(d, t, "topologyKey", 1, &s->topology_key)) ||
        (rc = dec_choice(d, t, "whenUnsatisfiable", 1, wu, &w)) ||
        (rc = berth_dec_int(d, t, "minDomains", 0, 1, INT32_MAX, &mind)) ||
        (rc = dec_choice(d, t, "nodeAffinityPolicy", 0, pol, &nap)) ||
        (rc = dec_choice(d, t, "nodeTaintsPolicy", 0, pol, &ntp)) ||
        (rc = dec_str_list(k, d, t, "matchLabelKeys", &s->match_label_keys,
                           &s->nmatch_label_keys)))
        return rc;
    if (!*s->topology_key)
        return fail_at(d, t, "topologyKey", "must not be empty%s", "");
    if (berth_node_get(t, "minDomains") && w != 0)
        return fail_at(d, t, "minDomains",
                       "minDomains needs whenUnsatisfiable: DoNotSchedule%s", "");
    if (defaults && berth_node_get(t, "labelSelector"))
        return fail_at(d, t, "labelSelector",
                       "default constraints must not define a selector%s", "");
    if (!defaults && (rc = dec_label_selector(k, d, t, "labelSelector", &s->selector)))
        return rc;
    s->max_skew = (int32_t)skew;
    s->min_domains = (int32_t)mind;
    s->do_not_schedule = w == 0;
    s->honor_node_affinity = nap == 0;
    s->honor_node_taints = ntp == 0;
    return merge_label_keys(k, d, &s->selector, pod_labels, s->match_label_keys,
                            s->nmatch_label_keys, BERTH_SEL_IN);
}

static const char *const pod_spec_fields[] = {
    "volumes", "initContainers", "containers", "ephemeralContainers", "restartPolicy",
    "terminationGracePeriodSeconds", "activeDeadlineSeconds", "dnsPolicy", "nodeSelector",
    "serviceAccountName", "serviceAccount", "automountServiceAccountToken", "nodeName",
    "hostNetwork", "hostPID", "hostIPC", "shareProcessNamespace", "securityContext",
    "imagePullSecrets", "hostname", "subdomain", "affinity", "schedulerName", "tolerations",
    "hostAliases", "priorityClassName", "priority", "dnsConfig", "readinessGates",
    "runtimeClassName", "enableServiceLinks", "preemptionPolicy", "overhead",
    "topologySpreadConstraints", "setHostnameAsFQDN", "os", "hostUsers", "schedulingGates",
    "resourceClaims", "resources", NULL};

static const char *const pod_status_fields[] = {
    "phase", "conditions", "message", "reason", "nominatedNodeName", "hostIP", "hostIPs", "podIP",
    "podIPs", "startTime", "initContainerStatuses", "containerStatuses", "qosClass",
    "ephemeralContainerStatuses", "resize", "resourceClaimStatuses", "observedGeneration", NULL};

/* spec.volumes[].persistentVolumeClaim.claimName (VolumeZone), in order;
 * other volume sources are not decoded. */
static int dec_claims(berth_kcluster *k, berth_dec *d, const berth_node *vols, berth_kpod *pod)
{
    static const char *const cf[] = {"claimName", "readOnly", NULL};
    uint32_t n = 0;
    for (size_t i = 0; i < vols->n; i++)
        n += vols->items[i]->type == BERTH_NODE_MAP &&
             berth_node_get(vols->items[i], "persistentVolumeClaim") != NULL;
    if (!n)
        return 0;
    pod->claims = alloc(k, n, sizeof *pod->claims);
    if (!pod->claims)
        return ENOMEM_(d);
    int rc = 0;
    for (size_t i = 0; !rc && i < vols->n; i++) {
        const berth_node *v = vols->items[i];
        if (v->type != BERTH_NODE_MAP || !berth_node_get(v, "persistentVolumeClaim"))
            continue;
        size_t p = berth_dec_push(d, "volumes");
        berth_dec_push_index(d, i);
        berth_node *pvc = NULL;
        const char *name = NULL;
        if (!(rc = berth_dec_map(d, v, "persistentVolumeClaim", 1, &pvc)) && pvc) {
            size_t p2 = berth_dec_push(d, "persistentVolumeClaim");
            if (!(rc = known(d, pvc, cf)) && !(rc = berth_dec_str(d, pvc, "claimName", 1, &name)) &&
                !*name)
                rc = fail_at(d, pvc, "claimName", "must not be empty%s", "");
            berth_dec_pop(d, p2);
        } else if (!rc)
            rc = berth_dec_fail(d, v, "persistentVolumeClaim: expected a mapping with claimName");
        berth_dec_pop(d, p);
        if (!rc)
            pod->claims[pod->nclaims++] = name;
    }
    if (!rc)
        k->volumes_stale = 1;
    return rc;
}

static int dec_pod_spec(berth_kcluster *k, berth_dec *d, const berth_node *spec, berth_kpod *pod)
{
    portvec ports = {NULL, 0, 0};
    int rc = known(d, spec, pod_spec_fields);
    if (!rc)
        rc = dec_containers(k, d, spec, "containers", 0, &pod->containers, &pod->ncontainers,
                            &ports);
    if (!rc)
        rc = dec_containers(k, d, spec, "initContainers", 1, &pod->init, &pod->ninit, &ports);
    if (!rc && ports.n) {
        pod->ports = alloc(k, ports.n, sizeof *pod->ports);
        if (!pod->ports)
            rc = ENOMEM_(d);
        else {
            memcpy(pod->ports, ports.v, ports.n * sizeof *pod->ports);
            pod->nports = ports.n;
        }
    }
    free(ports.v);
    berth_node *vols = NULL;
    if (!rc)
        rc = berth_dec_seq(d, spec, "volumes", 0, &vols);
    for (size_t i = 0; !rc && vols && i < vols->n; i++) {
        /* local storage (cluster-autoscaler's drain rule): hostPath, or an
         * emptyDir not backed by memory */
        const berth_node *v = vols->items[i];
        const berth_node *ed = v->type == BERTH_NODE_MAP ? berth_node_get(v, "emptyDir") : NULL;
        const berth_node *med = ed && ed->type == BERTH_NODE_MAP ? berth_node_get(ed, "medium") : NULL;
        if ((v->type == BERTH_NODE_MAP && berth_node_get(v, "hostPath")) ||
            (ed && !(med && med->type == BERTH_NODE_SCALAR && !strcmp(med->str, "Memory"))))
            pod->local_storage = 1;
    }
    if (!rc && vols)
        rc = dec_claims(k, d, vols, pod);
    if (!rc)
        rc = dec_res_list(k, d, spec, "overhead", pod->overhead, NULL, NULL, 0);
    if (!rc)
        rc = berth_dec_int(d, spec, "priority", 0, INT32_MIN, INT32_MAX, &pod->priority);
    if (!rc)
        rc = berth_dec_str(d, spec, "schedulerName", 0, &pod->scheduler_name);
    if (!rc && !*pod->scheduler_name)
        pod->scheduler_name = "default-scheduler";
    if (!rc)
        rc = berth_dec_str(d, spec, "nodeName", 0, &pod->node_name);
    if (!rc && pod->node_name && !*pod->node_name)
        pod->node_name = NULL;
    if (!rc)
        rc = dec_labels_at(k, d, spec, "nodeSelector", &pod->node_selector, 0);
    if (!rc)
        rc = dec_tolerations(k, d, spec, pod);
    berth_node *aff = NULL, *tsc = NULL;
    if (!rc)
        rc = berth_dec_map(d, spec, "affinity", 0, &aff);
    if (!rc && aff) {
        static const char *const af[] = {"nodeAffinity", "podAffinity", "podAntiAffinity", NULL};
        berth_node *na = NULL, *pa = NULL, *paa = NULL;
        size_t p = berth_dec_push(d, "affinity");
        if (!(rc = known(d, aff, af)) && !(rc = berth_dec_map(d, aff, "nodeAffinity", 0, &na)) &&
            !(rc = berth_dec_map(d, aff, "podAffinity", 0, &pa)))
            rc = berth_dec_map(d, aff, "podAntiAffinity", 0, &paa);
        if (!rc && na) {
            size_t p2 = berth_dec_push(d, "nodeAffinity");
            rc = dec_node_affinity(k, d, na, pod);
            berth_dec_pop(d, p2);
        }
        if (!rc && pa) {
            size_t p2 = berth_dec_push(d, "podAffinity");
            rc = dec_pod_affinity(k, d, pa, &pod->labels, &pod->aff_req, &pod->naff_req,
                                  &pod->aff_pref, &pod->naff_pref);
            berth_dec_pop(d, p2);
        }
        if (!rc && paa) {
            size_t p2 = berth_dec_push(d, "podAntiAffinity");
            rc = dec_pod_affinity(k, d, paa, &pod->labels, &pod->anti_req, &pod->nanti_req,
                                  &pod->anti_pref, &pod->nanti_pref);
            berth_dec_pop(d, p2);
        }
        berth_dec_pop(d, p);
    }
    if (!rc)
        rc = berth_dec_seq(d, spec, "topologySpreadConstraints", 0, &tsc);
    if (!rc && tsc) {
        pod->spread = alloc(k, tsc->n, sizeof *pod->spread);
        if (!pod->spread)
            rc = ENOMEM_(d);
        for (size_t i = 0; !rc && i < tsc->n; i++) {
            size_t p = berth_dec_push(d, "topologySpreadConstraints");
            berth_dec_push_index(d, i);
            rc = dec_spread(k, d, tsc->items[i], &pod->labels, 0, &pod->spread[i]);
            berth_dec_pop(d, p);
        }
        if (!rc)
            pod->nspread = (uint32_t)tsc->n;
    }
    return rc;
}

static int dec_time_at(berth_dec *d, const berth_node *m, const char *key, int64_t *secs,
                       int *present)
{
    const char *s = NULL;
    *present = 0;
    int rc = berth_dec_str(d, m, key, 0, &s);
    if (rc || !s)
        return rc;
    int64_t ms;
    if (berth_fleet_parse_time(s, &ms))
        return fail_at(d, m, key,
                       "expected an RFC 3339 time such as 2024-05-01T12:00:00Z, got '%s'", s);
    *secs = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
    *present = 1;
    return 0;
}

static int load_pod(berth_kcluster *k, berth_dec *d, const berth_node *doc)
{
    berth_kpod pod;
    memset(&pod, 0, sizeof pod);
    kmeta meta;
    int rc = dec_metadata(k, d, doc, 1, &meta);
    if (rc)
        return rc;
    pod.ns = meta.ns;
    pod.name = meta.name;
    pod.labels = meta.labels;
    pod.scheduler_name = "default-scheduler";
    size_t p = berth_dec_push(d, "metadata");
    int64_t ignored_time = 0;
    berth_node *owners = NULL;
    if (!(rc = dec_time_at(d, meta.node, "creationTimestamp", &pod.created, &pod.has_created)) &&
        !(rc = dec_time_at(d, meta.node, "deletionTimestamp", &ignored_time, &pod.terminating)))
        rc = berth_dec_seq(d, meta.node, "ownerReferences", 0, &owners);
    for (size_t i = 0; !rc && owners && i < owners->n; i++) {
        const berth_node *o = owners->items[i];
        size_t p2 = berth_dec_push(d, "ownerReferences");
        berth_dec_push_index(d, i);
        static const char *const of[] = {"apiVersion", "kind", "name", "uid", "controller",
                                         "blockOwnerDeletion", NULL};
        const char *kind = NULL, *name = NULL;
        int ctl = 0;
        if (o->type != BERTH_NODE_MAP)
            rc = berth_dec_fail(d, o, "expected an owner reference mapping");
        if (!rc && !(rc = known(d, o, of)) && !(rc = berth_dec_str(d, o, "kind", 1, &kind)) &&
            !(rc = berth_dec_str(d, o, "name", 1, &name)))
            rc = berth_dec_bool(d, o, "controller", 0, &ctl);
        if (!rc && ctl && !pod.owner_kind) {
            pod.owner_kind = kind;
            pod.owner_name = name;
        }
        berth_dec_pop(d, p2);
    }
    berth_dec_pop(d, p);
    if (rc)
        return rc;
    berth_node *spec = NULL, *status = NULL;
    if ((rc = berth_dec_map(d, doc, "spec", 1, &spec)) ||
        (rc = berth_dec_map(d, doc, "status", 0, &status)))
        return rc;
    p = berth_dec_push(d, "spec");
    rc = dec_pod_spec(k, d, spec, &pod);
    berth_dec_pop(d, p);
    if (rc)
        return rc;
    const char *phase = NULL;
    if (status) {
        p = berth_dec_push(d, "status");
        if (!(rc = known(d, status, pod_status_fields)))
            rc = berth_dec_str(d, status, "phase", 0, &phase);
        berth_dec_pop(d, p);
        if (rc)
            return rc;
    }
    if ((rc = dec_usage(k, d, NULL, &meta, pod.usage, &pod.has_usage)))
        return rc;
    /* finished pods hold no resources: the scheduler never sees them */
    if (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed")))
        return 0;
    if ((rc = grow((void **)&k->pods, &k->cappods, k->npods + 1, sizeof *k->pods, KUBE_MAX_PODS)))
        return grow_fail(d, doc, rc, "pods", KUBE_MAX_PODS);
    pod.order = k->npods;
    k->pods[k->npods++] = pod;
    return 0;
}

/* ---- Namespace, Service, workloads, PodDisruptionBudget ---- */

static int load_namespace(berth_kcluster *k, berth_dec *d, const berth_node *doc)
{
    kmeta meta;
    int rc = dec_metadata(k, d, doc, 0, &meta);
    if (rc)
        return rc;
    berth_node *spec = NULL, *status = NULL;
    static const char *const sf[] = {"finalizers", NULL};
    static const char *const stf[] = {"phase", "conditions", NULL};
    if ((rc = berth_dec_map(d, doc, "spec", 0, &spec)) ||
        (rc = berth_dec_map(d, doc, "status", 0, &status)))
        return rc;
    size_t p = berth_dec_push(d, "spec");
    rc = known(d, spec, sf);
    berth_dec_pop(d, p);
    if (!rc) {
        p = berth_dec_push(d, "status");
        rc = known(d, status, stf);
        berth_dec_pop(d, p);
    }
    if (rc)
        return rc;
    for (uint32_t i = 0; i < k->nnamespaces; i++)
        if (!strcmp(k->namespaces[i].name, meta.name)) {
            k->namespaces[i].labels = meta.labels; /* the later object wins */
            return 0;
        }
    if ((rc = grow((void **)&k->namespaces, &k->capnamespaces, k->nnamespaces + 1,
                   sizeof *k->namespaces, KUBE_MAX_OBJECTS)))
        return grow_fail(d, doc, rc, "namespaces", KUBE_MAX_OBJECTS);
    k->namespaces[k->nnamespaces++] = (berth_knamespace){meta.name, meta.labels};
    return 0;
}

static int add_workload(berth_kcluster *k, berth_dec *d, const berth_node *doc, const char *kind,
                        const kmeta *meta, berth_selector sel)
{
    int rc = grow((void **)&k->workloads, &k->capworkloads, k->nworkloads + 1,
                  sizeof *k->workloads, KUBE_MAX_OBJECTS);
    if (rc)
        return grow_fail(d, doc, rc, "workload objects", KUBE_MAX_OBJECTS);
    k->workloads[k->nworkloads++] = (berth_kworkload){kind, meta->ns, meta->name, sel};
    return 0;
}

static int load_service(berth_kcluster *k, berth_dec *d, const berth_node *doc)
{
    kmeta meta;
    int rc = dec_metadata(k, d, doc, 1, &meta);
    if (rc)
        return rc;
    static const char *const sf[] = {
        "ports", "selector", "clusterIP", "clusterIPs", "type", "externalIPs", "sessionAffinity",
        "loadBalancerIP", "loadBalancerSourceRanges", "externalName", "externalTrafficPolicy",
        "healthCheckNodePort", "publishNotReadyAddresses", "sessionAffinityConfig", "ipFamilies",
        "ipFamilyPolicy", "allocateLoadBalancerNodePorts", "loadBalancerClass",
        "internalTrafficPolicy", "trafficDistribution", NULL};
    berth_node *spec = NULL;
    berth_selector sel;
    int present = 0;
    if ((rc = berth_dec_map(d, doc, "spec", 0, &spec)) || !spec)
        return rc;
    size_t p = berth_dec_push(d, "spec");
    if (!(rc = known(d, spec, sf)))
        rc = dec_map_selector(k, d, spec, "selector", &sel, &present);
    berth_dec_pop(d, p);
    if (rc || !present) /* a Service without a selector selects no pods */
        return rc;
    return add_workload(k, d, doc, "Service", &meta, sel);
}

static int load_workload(berth_kcluster *k, berth_dec *d, const berth_node *doc, const char *kind)
{
    kmeta meta;
    int rc = dec_metadata(k, d, doc, 1, &meta);
    if (rc)
        return rc;
    static const char *const rs_f[] = {"replicas", "minReadySeconds", "selector", "template", NULL};
    static const char *const ss_f[] = {
        "replicas", "selector", "template", "volumeClaimTemplates", "serviceName",
        "podManagementPolicy", "updateStrategy", "revisionHistoryLimit", "minReadySeconds",
        "persistentVolumeClaimRetentionPolicy", "ordinals", NULL};
    static const char *const ds_f[] = {"selector", "template", "updateStrategy", "minReadySeconds",
                                       "revisionHistoryLimit", NULL};
    int rc_kind = !strcmp(kind, "ReplicationController");
    const char *const *sf = !strcmp(kind, "StatefulSet") ? ss_f
                            : !strcmp(kind, "DaemonSet") ? ds_f
                                                         : rs_f;
    berth_node *spec = NULL;
    berth_selector sel;
    int present = 1;
    if ((rc = berth_dec_map(d, doc, "spec", 1, &spec)))
        return rc;
    size_t p = berth_dec_push(d, "spec");
    if (!(rc = known(d, spec, sf))) {
        if (rc_kind)
            rc = dec_map_selector(k, d, spec, "selector", &sel, &present);
        else if (!berth_node_get(spec, "selector"))
            rc = berth_dec_fail(d, spec, "selector: required field is missing");
        else
            rc = dec_label_selector(k, d, spec, "selector", &sel);
    }
    berth_dec_pop(d, p);
    if (rc || !present)
        return rc;
    return add_workload(k, d, doc, kind, &meta, sel);
}

/* An IntOrString that is an integer >= 0 or "N%". */
static int dec_int_or_pct(berth_dec *d, const berth_node *m, const char *key, int *has,
                          int64_t *val, int *pct)
{
    const berth_node *n = berth_node_get(m, key);
    if (!n)
        return 0;
    size_t p = berth_dec_push(d, key);
    int rc = 0;
    const char *s = n->type == BERTH_NODE_SCALAR ? n->str : "";
    size_t len = strlen(s);
    char *end = NULL;
    long long v = -1;
    if (len && s[len - 1] == '%') {
        v = strtoll(s, &end, 10);
        if (end != s + len - 1 || len < 2 || v < 0 || v > 100 || s[0] == '+' || s[0] == '-')
            v = -1;
        *pct = 1;
    } else if (len && !n->quoted) {
        v = strtoll(s, &end, 10);
        if (*end || s[0] == '+' || s[0] == '-')
            v = -1;
        *pct = 0;
    }
    if (v < 0)
        rc = berth_dec_fail(d, n, "expected a non-negative integer or a percentage such as \"50%%\", got '%s'",
                            s);
    else {
        *val = v;
        *has = 1;
    }
    berth_dec_pop(d, p);
    return rc;
}

static int load_pdb(berth_kcluster *k, berth_dec *d, const berth_node *doc)
{
    kmeta meta;
    int rc = dec_metadata(k, d, doc, 1, &meta);
    if (rc)
        return rc;
    static const char *const sf[] = {"minAvailable", "maxUnavailable", "selector",
                                     "unhealthyPodEvictionPolicy", NULL};
    static const char *const stf[] = {"observedGeneration", "disruptedPods", "disruptionsAllowed",
                                      "currentHealthy", "desiredHealthy", "expectedPods",
                                      "conditions", NULL};
    static const char *const policies[] = {"IfHealthyBudget", "AlwaysAllow", NULL};
    berth_kpdb pdb;
    memset(&pdb, 0, sizeof pdb);
    pdb.ns = meta.ns;
    pdb.name = meta.name;
    pdb.selector.nothing = 1;
    berth_node *spec = NULL, *status = NULL;
    if ((rc = berth_dec_map(d, doc, "spec", 0, &spec)) ||
        (rc = berth_dec_map(d, doc, "status", 0, &status)))
        return rc;
    if (spec) {
        size_t p = berth_dec_push(d, "spec");
        int pol = 0;
        if (!(rc = known(d, spec, sf)) &&
            !(rc = dec_int_or_pct(d, spec, "minAvailable", &pdb.has_min_available,
                                  &pdb.min_available, &pdb.min_pct)) &&
            !(rc = dec_int_or_pct(d, spec, "maxUnavailable", &pdb.has_max_unavailable,
                                  &pdb.max_unavailable, &pdb.max_pct)) &&
            !(rc = dec_label_selector(k, d, spec, "selector", &pdb.selector)))
            rc = dec_choice(d, spec, "unhealthyPodEvictionPolicy", 0, policies, &pol);
        if (!rc && pdb.has_min_available && pdb.has_max_unavailable)
            rc = berth_dec_fail(d, spec, "minAvailable and maxUnavailable cannot both be set");
        pdb.always_allow = pol == 1;
        berth_dec_pop(d, p);
        if (rc)
            return rc;
    }
    if (status) {
        size_t p = berth_dec_push(d, "status");
        if (!(rc = known(d, status, stf)) && berth_node_get(status, "disruptionsAllowed")) {
            rc = berth_dec_int(d, status, "disruptionsAllowed", 1, 0, INT32_MAX,
                               &pdb.disruptions_allowed);
            pdb.has_disruptions_allowed = !rc;
        }
        berth_dec_pop(d, p);
        if (rc)
            return rc;
    }
    if ((rc = grow((void **)&k->pdbs, &k->cappdbs, k->npdbs + 1, sizeof *k->pdbs,
                   KUBE_MAX_OBJECTS)))
        return grow_fail(d, doc, rc, "PodDisruptionBudgets", KUBE_MAX_OBJECTS);
    k->pdbs[k->npdbs++] = pdb;
    return 0;
}

/* ---- PersistentVolumeClaim, PersistentVolume (VolumeZone) ---- */

/* v1 PersistentVolumeClaim: spec.volumeName and spec.storageClassName;
 * status is not read. */
static int load_pvc(berth_kcluster *k, berth_dec *d, const berth_node *doc)
{
    kmeta meta;
    int rc = dec_metadata(k, d, doc, 1, &meta);
    if (rc)
        return rc;
    static const char *const sf[] = {"accessModes", "selector", "resources", "volumeName",
                                     "storageClassName", "volumeMode", "dataSource",
                                     "dataSourceRef", "volumeAttributesClassName", NULL};
    berth_kpvc c = {meta.ns, meta.name, NULL, NULL};
    berth_node *spec = NULL;
    if ((rc = berth_dec_map(d, doc, "spec", 0, &spec)))
        return rc;
    if (spec) {
        size_t p = berth_dec_push(d, "spec");
        if (!(rc = known(d, spec, sf)) &&
            !(rc = berth_dec_str(d, spec, "volumeName", 0, &c.volume_name)))
            rc = berth_dec_str(d, spec, "storageClassName", 0, &c.storage_class);
        berth_dec_pop(d, p);
        if (rc)
            return rc;
    }
    if (c.volume_name && !*c.volume_name)
        c.volume_name = NULL;
    if ((rc = grow((void **)&k->pvcs, &k->cappvcs, k->npvcs + 1, sizeof *k->pvcs,
                   KUBE_MAX_OBJECTS)))
        return grow_fail(d, doc, rc, "PersistentVolumeClaims", KUBE_MAX_OBJECTS);
    k->pvcs[k->npvcs++] = c;
    k->volumes_stale = 1;
    return 0;
}

/* v1 PersistentVolume: its name and labels (the zone keys); the spec is
 * only checked for field names (--strict); spec.nodeAffinity is
 * VolumeBinding's, which berth does not model. */
static int load_pv(berth_kcluster *k, berth_dec *d, const berth_node *doc)
{
    kmeta meta;
    int rc = dec_metadata(k, d, doc, 0, &meta);
    if (rc)
        return rc;
    static const char *const sf[] = {
        "capacity", "accessModes", "claimRef", "persistentVolumeReclaimPolicy",
        "storageClassName", "mountOptions", "volumeMode", "nodeAffinity",
        "volumeAttributesClassName", "awsElasticBlockStore", "azureDisk", "azureFile", "cephfs",
        "cinder", "csi", "fc", "flexVolume", "flocker", "gcePersistentDisk", "glusterfs",
        "hostPath", "iscsi", "local", "nfs", "photonPersistentDisk", "portworxVolume", "quobyte",
        "rbd", "scaleIO", "storageos", "vsphereVolume", NULL};
    berth_node *spec = NULL;
    if ((rc = berth_dec_map(d, doc, "spec", 0, &spec)))
        return rc;
    if (spec) {
        size_t p = berth_dec_push(d, "spec");
        rc = known(d, spec, sf);
        berth_dec_pop(d, p);
        if (rc)
            return rc;
    }
    if ((rc = grow((void **)&k->pvs, &k->cappvs, k->npvs + 1, sizeof *k->pvs, KUBE_MAX_OBJECTS)))
        return grow_fail(d, doc, rc, "PersistentVolumes", KUBE_MAX_OBJECTS);
    k->pvs[k->npvs++] = (berth_kpv){meta.name, meta.labels};
    k->volumes_stale = 1;
    return 0;
}

/* The zone label keys VolumeZone reads, in upstream's order. */
static const char *const zone_keys[4] = {
    "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region",
    "topology.kubernetes.io/zone", "topology.kubernetes.io/region"};

static int cmp_cstr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* One PV's constraints (upstream getPVTopologies): for each zone key it
 * carries, the value split at "__" (LabelZonesToSet: elements trimmed; an
 * empty element makes the key unusable and it is skipped). Sorted,
 * distinct values. Returns the count written to out[0..4), -1 on ENOMEM. */
static int pv_zones(berth_kcluster *k, const berth_kpv *pv, berth_kvolume_zone *out)
{
    int n = 0;
    for (int z = 0; z < 4; z++) {
        const char *v = berth_labels_get(&pv->labels, zone_keys[z]);
        if (!v)
            continue;
        uint32_t parts = 1;
        for (const char *q = strstr(v, "__"); q; q = strstr(q + 2, "__"))
            parts++;
        const char **vals = alloc(k, parts, sizeof *vals);
        if (!vals)
            return -1;
        uint32_t nv = 0;
        int bad = 0;
        for (const char *q = v;;) {
            const char *end = strstr(q, "__");
            size_t len = end ? (size_t)(end - q) : strlen(q);
            const char *a = q, *b = q + len;
            while (a < b && (*a == ' ' || *a == '\t' || *a == '\n' || *a == '\r' || *a == '\v' || *a == '\f'))
                a++;
            while (b > a && (b[-1] == ' ' || b[-1] == '\t' || b[-1] == '\n' || b[-1] == '\r' ||
                             b[-1] == '\v' || b[-1] == '\f'))
                b--;
            if (a == b) {
                bad = 1;
                break;
            }
            char *x = berth_arena_alloc(&k->arena, (size_t)(b - a) + 1);
            if (!x)
                return -1;
            memcpy(x, a, (size_t)(b - a));
            x[b - a] = 0;
            vals[nv++] = x;
            if (!end)
                break;
            q = end + 2;
        }
        if (bad)
            continue;
        qsort(vals, nv, sizeof *vals, cmp_cstr);
        uint32_t w = 0;
        for (uint32_t i = 0; i < nv; i++)
            if (!w || strcmp(vals[w - 1], vals[i]))
                vals[w++] = vals[i];
        out[n++] = (berth_kvolume_zone){pv->name, zone_keys[z], vals, w};
    }
    return n;
}

static uint32_t vol_hash(const char *ns, const char *name)
{
    uint32_t h = 2166136261u;
    for (const char *s = ns ? ns : ""; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    h = (h ^ 0xffu) * 16777619u;
    for (const char *s = name; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static int same_obj(const char *ns1, const char *n1, const char *ns2, const char *n2)
{
    return !strcmp(n1, n2) && !strcmp(ns1 ? ns1 : "", ns2 ? ns2 : "");
}

/* Resolves every pod's claims: pod -> PVC (its namespace) -> PV, keeping
 * the PVs' zone constraints or the first error (upstream's PreFilter:
 * persistentvolumeclaim "x" not found, persistentvolume "y" not found);
 * an unbound claim (no volumeName) is skipped. Hash tables over PVCs and
 * PVs (a later object of the same name wins) and each PV's constraints
 * computed once: O(pods with claims + PVCs + PVs). 0 or BERTH_ENOMEM. */
static int resolve_volumes(berth_kcluster *k)
{
    uint32_t cc = 16, vc = 16;
    while (cc < 2 * k->npvcs)
        cc *= 2;
    while (vc < 2 * k->npvs)
        vc *= 2;
    uint32_t *ct = calloc(cc, sizeof *ct), *vt = calloc(vc, sizeof *vt);
    int *pvn = calloc(k->npvs + 1, sizeof *pvn); /* per PV: constraints + 1, 0 not yet */
    berth_kvolume_zone(*pvz)[4] = malloc((k->npvs + 1) * sizeof *pvz);
    berth_kvolume_zone *buf = NULL;
    uint32_t capbuf = 0;
    int rc = ct && vt && pvn && pvz ? 0 : BERTH_ENOMEM;
    for (uint32_t i = 0; !rc && i < k->npvcs; i++) {
        const berth_kpvc *c = &k->pvcs[i];
        uint32_t j = vol_hash(c->ns, c->name) & (cc - 1);
        while (ct[j] && !same_obj(k->pvcs[ct[j] - 1].ns, k->pvcs[ct[j] - 1].name, c->ns, c->name))
            j = (j + 1) & (cc - 1);
        ct[j] = i + 1;
    }
    for (uint32_t i = 0; !rc && i < k->npvs; i++) {
        uint32_t j = vol_hash(NULL, k->pvs[i].name) & (vc - 1);
        while (vt[j] && strcmp(k->pvs[vt[j] - 1].name, k->pvs[i].name))
            j = (j + 1) & (vc - 1);
        vt[j] = i + 1;
    }
    for (uint32_t p = 0; !rc && p < k->npods; p++) {
        berth_kpod *pod = &k->pods[p];
        pod->vol_zones = NULL;
        pod->nvol_zones = 0;
        pod->vol_error = NULL;
        if (!pod->nclaims)
            continue;
        if (capbuf < 4 * pod->nclaims) {
            free(buf);
            capbuf = 4 * pod->nclaims;
            buf = malloc(capbuf * sizeof *buf);
            if (!buf) {
                rc = BERTH_ENOMEM;
                break;
            }
        }
        uint32_t nz = 0;
        char msg[600];
        msg[0] = 0;
        for (uint32_t c = 0; c < pod->nclaims && !msg[0]; c++) {
            uint32_t j = vol_hash(pod->ns, pod->claims[c]) & (cc - 1);
            while (ct[j] && !same_obj(k->pvcs[ct[j] - 1].ns, k->pvcs[ct[j] - 1].name, pod->ns,
                                      pod->claims[c]))
                j = (j + 1) & (cc - 1);
            if (!ct[j]) {
                snprintf(msg, sizeof msg, "persistentvolumeclaim \"%s\" not found", pod->claims[c]);
                break;
            }
            const berth_kpvc *pvc = &k->pvcs[ct[j] - 1];
            if (!pvc->volume_name) /* unbound: VolumeBinding's business */
                continue;
            j = vol_hash(NULL, pvc->volume_name) & (vc - 1);
            while (vt[j] && strcmp(k->pvs[vt[j] - 1].name, pvc->volume_name))
                j = (j + 1) & (vc - 1);
            if (!vt[j]) {
                snprintf(msg, sizeof msg, "persistentvolume \"%s\" not found", pvc->volume_name);
                break;
            }
            uint32_t v = vt[j] - 1;
            if (!pvn[v]) {
                int n = pv_zones(k, &k->pvs[v], pvz[v]);
                if (n < 0) {
                    rc = BERTH_ENOMEM;
                    break;
                }
                pvn[v] = n + 1;
            }
            for (int z = 0; z < pvn[v] - 1; z++)
                buf[nz++] = pvz[v][z];
        }
        if (rc)
            break;
        if (msg[0]) {
            if (!(pod->vol_error = berth_arena_strdup(&k->arena, msg)))
                rc = BERTH_ENOMEM;
        } else if (nz) {
            berth_kvolume_zone *z = alloc(k, nz, sizeof *z);
            if (!z)
                rc = BERTH_ENOMEM;
            else {
                memcpy(z, buf, nz * sizeof *z);
                pod->vol_zones = z;
                pod->nvol_zones = nz;
            }
        }
    }
    free(ct);
    free(vt);
    free(pvn);
    free(pvz);
    free(buf);
    return rc;
}

/* ---- KubeSchedulerConfiguration ---- */

#define BIT(p) (1u << (unsigned)(p))

static const uint32_t filter_capable =
    BIT(BERTH_KP_NODE_UNSCHEDULABLE) | BIT(BERTH_KP_NODE_NAME) | BIT(BERTH_KP_TAINT_TOLERATION) |
    BIT(BERTH_KP_NODE_AFFINITY) | BIT(BERTH_KP_NODE_PORTS) | BIT(BERTH_KP_NODE_RESOURCES_FIT) |
    BIT(BERTH_KP_VOLUME_ZONE) | BIT(BERTH_KP_POD_TOPOLOGY_SPREAD) |
    BIT(BERTH_KP_INTER_POD_AFFINITY);
static const uint32_t score_capable =
    BIT(BERTH_KP_TAINT_TOLERATION) | BIT(BERTH_KP_NODE_AFFINITY) |
    BIT(BERTH_KP_NODE_RESOURCES_FIT) | BIT(BERTH_KP_POD_TOPOLOGY_SPREAD) |
    BIT(BERTH_KP_INTER_POD_AFFINITY) | BIT(BERTH_KP_BALANCED_ALLOCATION) |
    BIT(BERTH_KP_IMAGE_LOCALITY) | BIT(BERTH_KP_USAGE_HEADROOM);

/* Upstream in-tree plugins berth does not model: accepted and ignored. */
static const char *const other_plugins[] = {
    "PrioritySort", "DefaultBinder", "DefaultPreemption", "VolumeBinding", "VolumeRestrictions",
    "NodeVolumeLimits", "EBSLimits", "GCEPDLimits", "AzureDiskLimits", "CinderLimits",
    "SchedulingGates", "DynamicResources", NULL};

/* berth_kplugin index, BERTH_KP_COUNT for a known plugin berth does not
 * model, -1 when unknown. */
static int plugin_by_name(const char *name)
{
    for (int i = 0; i < BERTH_KP_COUNT; i++)
        if (!strcmp(berth_kplugin_name((berth_kplugin)i), name))
            return i;
    for (const char *const *o = other_plugins; *o; o++)
        if (!strcmp(*o, name))
            return BERTH_KP_COUNT;
    return -1;
}

static int fail_plugin(berth_dec *d, const berth_node *m, const char *name)
{
    return fail_at(d, m, "name",
                   "unknown plugin '%s' (berth knows NodeUnschedulable, NodeName, "
                   "TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit, VolumeZone, "
                   "PodTopologySpread, InterPodAffinity, NodeResourcesBalancedAllocation, "
                   "ImageLocality, UsageHeadroom and upstream's other in-tree plugins)",
                   name);
}

enum { EP_FILTER = 1, EP_SCORE = 2, EP_MULTI = 3, EP_OTHER = 0 };

static int dec_plugin_set(berth_dec *d, const berth_node *set, int ep, berth_kprofile *prof,
                          const berth_kprofile *def)
{
    static const char *const sf[] = {"enabled", "disabled", NULL};
    berth_node *en = NULL, *dis = NULL;
    int rc;
    if (set->type != BERTH_NODE_MAP)
        return berth_dec_fail(d, set, "expected a mapping with enabled, disabled");
    if ((rc = known(d, set, sf)) || (rc = berth_dec_seq(d, set, "enabled", 0, &en)) ||
        (rc = berth_dec_seq(d, set, "disabled", 0, &dis)))
        return rc;
    uint32_t fmask = ep == EP_FILTER || ep == EP_MULTI ? filter_capable : 0;
    uint32_t smask = ep == EP_SCORE || ep == EP_MULTI ? score_capable : 0;
    for (size_t i = 0; !rc && dis && i < dis->n; i++) {
        const berth_node *pl = dis->items[i];
        size_t p = berth_dec_push(d, "disabled");
        berth_dec_push_index(d, i);
        static const char *const pf[] = {"name", "weight", NULL};
        const char *name = NULL;
        if (pl->type != BERTH_NODE_MAP)
            rc = berth_dec_fail(d, pl, "expected a mapping with name");
        if (!rc && !(rc = known(d, pl, pf)))
            rc = berth_dec_str(d, pl, "name", 1, &name);
        if (!rc) {
            if (!strcmp(name, "*")) {
                prof->filters &= ~fmask;
                prof->scores &= ~smask;
            } else {
                int pi = plugin_by_name(name);
                if (pi < 0)
                    rc = fail_plugin(d, pl, name);
                else if (pi < BERTH_KP_COUNT) {
                    prof->filters &= ~(fmask & BIT(pi));
                    prof->scores &= ~(smask & BIT(pi));
                }
            }
        }
        berth_dec_pop(d, p);
    }
    for (size_t i = 0; !rc && en && i < en->n; i++) {
        const berth_node *pl = en->items[i];
        size_t p = berth_dec_push(d, "enabled");
        berth_dec_push_index(d, i);
        static const char *const pf[] = {"name", "weight", NULL};
        const char *name = NULL;
        int64_t w = 0;
        if (pl->type != BERTH_NODE_MAP)
            rc = berth_dec_fail(d, pl, "expected a mapping with name, weight");
        if (!rc && !(rc = known(d, pl, pf)) && !(rc = berth_dec_str(d, pl, "name", 1, &name)))
            rc = berth_dec_int(d, pl, "weight", 0, 1, 1000000, &w);
        int pi = -1;
        if (!rc && (pi = plugin_by_name(name)) < 0)
            rc = fail_plugin(d, pl, name);
        if (!rc && pi < BERTH_KP_COUNT && ep != EP_OTHER) {
            uint32_t bit = BIT(pi);
            if (ep == EP_FILTER && !(filter_capable & bit))
                rc = fail_at(d, pl, "name", "plugin %s has no filter extension point", name);
            else if (ep == EP_SCORE && !(score_capable & bit))
                rc = fail_at(d, pl, "name", "plugin %s has no score extension point", name);
            else if (ep == EP_MULTI && !((filter_capable | score_capable) & bit))
                rc = fail_at(d, pl, "name", "plugin %s has no filter or score extension point",
                             name);
            if (!rc) {
                prof->filters |= fmask & bit;
                if (smask & bit) {
                    prof->scores |= bit;
                    if (w > 0)
                        prof->weight[pi] = w;
                    else if (prof->weight[pi] <= 0)
                        prof->weight[pi] = def->weight[pi] > 0 ? def->weight[pi] : 1;
                }
            }
        }
        berth_dec_pop(d, p);
    }
    return rc;
}

/* A [{name, weight}] resource list (weight 1..100, default 1). */
static int dec_res_weights(berth_kcluster *k, berth_dec *d, const berth_node *m, const char *key,
                           berth_kres_weight *out, uint32_t *n)
{
    berth_node *s = NULL;
    int rc = berth_dec_seq(d, m, key, 0, &s);
    if (rc || !s)
        return rc;
    *n = 0;
    for (size_t i = 0; !rc && i < s->n; i++) {
        const berth_node *e = s->items[i];
        size_t p = berth_dec_push(d, key);
        berth_dec_push_index(d, i);
        static const char *const rf[] = {"name", "weight", NULL};
        const char *name = NULL;
        int64_t w = 1;
        if (e->type != BERTH_NODE_MAP)
            rc = berth_dec_fail(d, e, "expected a mapping with name, weight");
        if (!rc && !(rc = known(d, e, rf)) && !(rc = berth_dec_str(d, e, "name", 1, &name)))
            rc = berth_dec_int(d, e, "weight", 0, 1, 100, &w);
        if (!rc && strcmp(name, "pods")) {
            uint32_t r = berth_kube_resource(k, name, 1);
            if (r == BERTH_KUBE_NONE)
                rc = fail_at(d, e, "name", "too many distinct resources (at most 16): '%s'", name);
            for (uint32_t j = 0; !rc && j < *n; j++)
                if (out[j].res == r)
                    rc = fail_at(d, e, "name", "resource '%s' listed twice", name);
            if (!rc && *n >= BERTH_KUBE_MAX_RES)
                rc = berth_dec_fail(d, e, "more than %d resources", BERTH_KUBE_MAX_RES);
            if (!rc)
                out[(*n)++] = (berth_kres_weight){r, w};
        }
        berth_dec_pop(d, p);
    }
    return rc;
}

static int dec_fit_args(berth_kcluster *k, berth_dec *d, const berth_node *a, berth_kprofile *prof)
{
    static const char *const af[] = {"apiVersion", "kind", "ignoredResources",
                                     "ignoredResourceGroups", "scoringStrategy", NULL};
    const char **ign = NULL;
    uint32_t nign = 0;
    berth_node *ss = NULL, *groups = NULL;
    int rc;
    if ((rc = known(d, a, af)) || (rc = dec_str_list(k, d, a, "ignoredResources", &ign, &nign)) ||
        (rc = berth_dec_seq(d, a, "ignoredResourceGroups", 0, &groups)) ||
        (rc = berth_dec_map(d, a, "scoringStrategy", 0, &ss)))
        return rc;
    if (groups && groups->n)
        return fail_at(d, a, "ignoredResourceGroups",
                       "not supported by berth; list the resources in ignoredResources%s", "");
    for (uint32_t i = 0; i < nign; i++) {
        uint32_t r = berth_kube_resource(k, ign[i], 1);
        if (r == BERTH_KUBE_NONE)
            continue; /* "pods" or a full table: nothing to ignore */
        prof->ignored_res |= 1u << r;
    }
    if (!ss)
        return 0;
    size_t p = berth_dec_push(d, "scoringStrategy");
    static const char *const sf[] = {"type", "resources", "requestedToCapacityRatio", NULL};
    static const char *const types[] = {"LeastAllocated", "MostAllocated",
                                        "RequestedToCapacityRatio", NULL};
    int type = 0;
    berth_node *rtcr = NULL, *shape = NULL;
    if (!(rc = known(d, ss, sf)) && !(rc = dec_choice(d, ss, "type", 0, types, &type)) &&
        !(rc = dec_res_weights(k, d, ss, "resources", prof->fit_res, &prof->nfit_res)))
        rc = berth_dec_map(d, ss, "requestedToCapacityRatio", 0, &rtcr);
    if (!rc) {
        prof->fit_strategy = (berth_kfit_strategy)type;
        if (berth_node_get(ss, "resources") && !prof->nfit_res)
            rc = fail_at(d, ss, "resources", "must list at least one resource%s", "");
    }
    if (!rc && type == BERTH_FIT_REQUESTED_TO_CAPACITY_RATIO && !rtcr)
        rc = fail_at(d, ss, "requestedToCapacityRatio",
                     "required with type RequestedToCapacityRatio%s", "");
    if (!rc && rtcr) {
        size_t p2 = berth_dec_push(d, "requestedToCapacityRatio");
        static const char *const rf[] = {"shape", NULL};
        if (!(rc = known(d, rtcr, rf)) && !(rc = berth_dec_seq(d, rtcr, "shape", 1, &shape)) &&
            (shape->n == 0 || shape->n > 16))
            rc = fail_at(d, rtcr, "shape", "expected 1 to 16 points%s", "");
        prof->nshape = 0;
        for (size_t i = 0; !rc && i < shape->n; i++) {
            const berth_node *pt = shape->items[i];
            size_t p3 = berth_dec_push(d, "shape");
            berth_dec_push_index(d, i);
            static const char *const pf[] = {"utilization", "score", NULL};
            int64_t u = 0, s = 0;
            if (pt->type != BERTH_NODE_MAP)
                rc = berth_dec_fail(d, pt, "expected a mapping with utilization, score");
            if (!rc && !(rc = known(d, pt, pf)) &&
                !(rc = berth_dec_int(d, pt, "utilization", 0, 0, 100, &u)))
                rc = berth_dec_int(d, pt, "score", 0, 0, 10, &s);
            if (!rc && i > 0 && u <= prof->shape_util[i - 1])
                rc = fail_at(d, pt, "utilization",
                             "utilization values must be strictly increasing%s", "");
            if (!rc) {
                prof->shape_util[i] = (int32_t)u;
                prof->shape_score[i] = (int32_t)s;
                prof->nshape++;
            }
            berth_dec_pop(d, p3);
        }
        berth_dec_pop(d, p2);
    }
    berth_dec_pop(d, p);
    return rc;
}

static int dec_plugin_config(berth_kcluster *k, berth_dec *d, const berth_node *pc,
                             berth_kprofile *prof)
{
    int rc = 0;
    for (size_t i = 0; !rc && i < pc->n; i++) {
        const berth_node *e = pc->items[i];
        size_t p = berth_dec_push(d, "pluginConfig");
        berth_dec_push_index(d, i);
        static const char *const ef[] = {"name", "args", NULL};
        const char *name = NULL;
        berth_node *args = NULL;
        int pi = -1;
        if (e->type != BERTH_NODE_MAP)
            rc = berth_dec_fail(d, e, "expected a mapping with name, args");
        if (!rc && !(rc = known(d, e, ef)) && !(rc = berth_dec_str(d, e, "name", 1, &name)) &&
            (pi = plugin_by_name(name)) < 0)
            rc = fail_plugin(d, e, name);
        if (!rc)
            rc = berth_dec_map(d, e, "args", 0, &args);
        if (!rc && args) {
            size_t p2 = berth_dec_push(d, "args");
            if (pi == BERTH_KP_NODE_RESOURCES_FIT) {
                rc = dec_fit_args(k, d, args, prof);
            } else if (pi == BERTH_KP_BALANCED_ALLOCATION) {
                static const char *const af[] = {"apiVersion", "kind", "resources", NULL};
                if (!(rc = known(d, args, af)))
                    rc = dec_res_weights(k, d, args, "resources", prof->balanced_res,
                                         &prof->nbalanced_res);
                if (!rc && berth_node_get(args, "resources") && !prof->nbalanced_res)
                    rc = fail_at(d, args, "resources", "must list at least one resource%s", "");
            } else if (pi == BERTH_KP_INTER_POD_AFFINITY) {
                static const char *const af[] = {"apiVersion", "kind", "hardPodAffinityWeight",
                                                 "ignorePreferredTermsOfExistingPods", NULL};
                int ign = 0;
                if (!(rc = known(d, args, af)) &&
                    !(rc = berth_dec_int(d, args, "hardPodAffinityWeight", 0, 0, 100,
                                         &prof->hard_pod_affinity_weight)))
                    rc = berth_dec_bool(d, args, "ignorePreferredTermsOfExistingPods", 0, &ign);
                if (!rc && ign)
                    rc = fail_at(d, args, "ignorePreferredTermsOfExistingPods",
                                 "not supported by berth%s", "");
            } else if (pi == BERTH_KP_POD_TOPOLOGY_SPREAD) {
                static const char *const af[] = {"apiVersion", "kind", "defaultConstraints",
                                                 "defaultingType", NULL};
                static const char *const dt[] = {"System", "List", NULL};
                int type = 0;
                berth_node *dc = NULL;
                if (!(rc = known(d, args, af)) &&
                    !(rc = dec_choice(d, args, "defaultingType", 0, dt, &type)))
                    rc = berth_dec_seq(d, args, "defaultConstraints", 0, &dc);
                if (!rc && type == 0 && dc && dc->n)
                    rc = fail_at(d, args, "defaultConstraints",
                                 "must be empty with defaultingType System%s", "");
                if (!rc && type == 1) {
                    prof->spread_system_defaults = 0;
                    prof->ndefault_spread = 0;
                    prof->default_spread = alloc(k, dc ? dc->n : 0, sizeof *prof->default_spread);
                    if (!prof->default_spread)
                        rc = ENOMEM_(d);
                    for (size_t j = 0; !rc && dc && j < dc->n; j++) {
                        size_t p3 = berth_dec_push(d, "defaultConstraints");
                        berth_dec_push_index(d, j);
                        rc = dec_spread(k, d, dc->items[j], NULL, 1, &prof->default_spread[j]);
                        berth_dec_pop(d, p3);
                        if (!rc)
                            prof->ndefault_spread++;
                    }
                }
            } else if (pi == BERTH_KP_NODE_AFFINITY) {
                static const char *const af[] = {"apiVersion", "kind", "addedAffinity", NULL};
                if (!(rc = known(d, args, af)) && berth_node_get(args, "addedAffinity"))
                    rc = fail_at(d, args, "addedAffinity", "not supported by berth%s", "");
            }
            /* other plugins' args are accepted and not used */
            berth_dec_pop(d, p2);
        }
        berth_dec_pop(d, p);
    }
    return rc;
}

static int dec_profile(berth_kcluster *k, berth_dec *d, const berth_node *pn, int32_t top_pct,
                       berth_kprofile *prof)
{
    berth_kprofile def;
    berth_kube_default_profile(k, &def);
    *prof = def;
    prof->percentage_of_nodes_to_score = top_pct;
    if (pn->type != BERTH_NODE_MAP)
        return berth_dec_fail(d, pn, "expected a profile mapping");
    static const char *const pf[] = {"schedulerName", "percentageOfNodesToScore", "plugins",
                                     "pluginConfig", NULL};
    int64_t pct = top_pct;
    berth_node *plugins = NULL, *pc = NULL;
    int rc;
    if ((rc = known(d, pn, pf)) || (rc = berth_dec_str(d, pn, "schedulerName", 0, &prof->name)) ||
        (rc = berth_dec_int(d, pn, "percentageOfNodesToScore", 0, 0, 100, &pct)) ||
        (rc = berth_dec_map(d, pn, "plugins", 0, &plugins)) ||
        (rc = berth_dec_seq(d, pn, "pluginConfig", 0, &pc)))
        return rc;
    if (!*prof->name)
        prof->name = "default-scheduler";
    prof->percentage_of_nodes_to_score = (int32_t)pct;
    if (plugins) {
        size_t p = berth_dec_push(d, "plugins");
        static const struct { const char *name; int ep; } eps[] = {
            {"multiPoint", EP_MULTI}, {"preEnqueue", EP_OTHER}, {"queueSort", EP_OTHER},
            {"preFilter", EP_OTHER},  {"filter", EP_FILTER},    {"postFilter", EP_OTHER},
            {"preScore", EP_OTHER},   {"score", EP_SCORE},      {"reserve", EP_OTHER},
            {"permit", EP_OTHER},     {"preBind", EP_OTHER},    {"bind", EP_OTHER},
            {"postBind", EP_OTHER},
        };
        const char *names[sizeof eps / sizeof *eps + 1];
        for (size_t i = 0; i < sizeof eps / sizeof *eps; i++)
            names[i] = eps[i].name;
        names[sizeof eps / sizeof *eps] = NULL;
        rc = known(d, plugins, names);
        /* multiPoint first, then the specific extension points override it */
        for (size_t i = 0; !rc && i < sizeof eps / sizeof *eps; i++) {
            const berth_node *set = berth_node_get(plugins, eps[i].name);
            if (!set)
                continue;
            size_t p2 = berth_dec_push(d, eps[i].name);
            rc = dec_plugin_set(d, set, eps[i].ep, prof, &def);
            berth_dec_pop(d, p2);
        }
        berth_dec_pop(d, p);
    }
    if (!rc && pc)
        rc = dec_plugin_config(k, d, pc, prof);
    return rc;
}

static int load_ksc(berth_kcluster *k, berth_dec *d, const berth_node *doc)
{
    static const char *const tf[] = {
        "apiVersion", "kind", "parallelism", "leaderElection", "clientConnection",
        "healthzBindAddress", "metricsBindAddress", "debuggingConfiguration",
        "percentageOfNodesToScore", "podInitialBackoffSeconds", "podMaxBackoffSeconds",
        "profiles", "extenders", "delayCacheUntilActive", NULL};
    int64_t pct = 0;
    berth_node *profs = NULL;
    int rc;
    if ((rc = known(d, doc, tf)) ||
        (rc = berth_dec_int(d, doc, "percentageOfNodesToScore", 0, 0, 100, &pct)) ||
        (rc = berth_dec_seq(d, doc, "profiles", 0, &profs)))
        return rc;
    k->percentage_of_nodes_to_score = (int32_t)pct;
    size_t n = profs ? profs->n : 0;
    if (n > KUBE_MAX_PROFILES)
        return berth_dec_fail(d, profs, "more than %u profiles", KUBE_MAX_PROFILES);
    for (size_t i = 0; i < (n ? n : 1); i++) {
        berth_kprofile prof;
        if (n) {
            size_t p = berth_dec_push(d, "profiles");
            berth_dec_push_index(d, i);
            rc = dec_profile(k, d, profs->items[i], (int32_t)pct, &prof);
            if (!rc && berth_kube_find_profile(k, prof.name))
                rc = fail_at(d, profs->items[i], "schedulerName",
                             "profile '%s' is defined twice", prof.name);
            berth_dec_pop(d, p);
            if (rc)
                return rc;
        } else {
            berth_kube_default_profile(k, &prof);
            prof.percentage_of_nodes_to_score = (int32_t)pct;
            if (berth_kube_find_profile(k, prof.name))
                return berth_dec_fail(d, doc, "profile '%s' is defined twice", prof.name);
        }
        if ((rc = grow((void **)&k->profiles, &k->capprofiles, k->nprofiles + 1,
                       sizeof *k->profiles, KUBE_MAX_PROFILES)))
            return grow_fail(d, doc, rc, "profiles", KUBE_MAX_PROFILES);
        k->profiles[k->nprofiles++] = prof;
    }
    return 0;
}

/* ---- dispatch ---- */

typedef enum kkind {
    K_NODE, K_POD, K_NAMESPACE, K_SERVICE, K_RC, K_RS, K_SS, K_DS, K_PDB, K_PVC, K_PV, K_KSC,
    K_COUNT
} kkind;

static const struct {
    const char *kind;
    const char *api[3];
} kinds[K_COUNT] = {
    [K_NODE] = {"Node", {"v1"}},
    [K_POD] = {"Pod", {"v1"}},
    [K_NAMESPACE] = {"Namespace", {"v1"}},
    [K_SERVICE] = {"Service", {"v1"}},
    [K_RC] = {"ReplicationController", {"v1"}},
    [K_RS] = {"ReplicaSet", {"apps/v1"}},
    [K_SS] = {"StatefulSet", {"apps/v1"}},
    [K_DS] = {"DaemonSet", {"apps/v1"}},
    [K_PDB] = {"PodDisruptionBudget", {"policy/v1", "policy/v1beta1"}},
    [K_PVC] = {"PersistentVolumeClaim", {"v1"}},
    [K_PV] = {"PersistentVolume", {"v1"}},
    [K_KSC] = {"KubeSchedulerConfiguration", {"kubescheduler.config.k8s.io/v1"}},
};

static int check_api(berth_dec *d, const berth_node *doc, kkind kk)
{
    const char *api = NULL;
    int rc = berth_dec_str(d, doc, "apiVersion", 1, &api);
    if (rc)
        return rc;
    for (int i = 0; i < 3 && kinds[kk].api[i]; i++)
        if (!strcmp(api, kinds[kk].api[i]))
            return 0;
    char want[128];
    snprintf(want, sizeof want, "%s%s%s", kinds[kk].api[0], kinds[kk].api[1] ? " or " : "",
             kinds[kk].api[1] ? kinds[kk].api[1] : "");
    size_t p = berth_dec_push(d, "apiVersion");
    rc = berth_dec_fail(d, berth_node_get(doc, "apiVersion"), "kind %s needs apiVersion %s, got '%s'",
                        kinds[kk].kind, want, api);
    berth_dec_pop(d, p);
    return rc;
}

static int is_list_kind(const char *kind)
{
    if (!strcmp(kind, "List"))
        return 1;
    size_t n = strlen(kind);
    if (n <= 4 || strcmp(kind + n - 4, "List"))
        return 0;
    for (int i = 0; i < K_COUNT; i++)
        if (strlen(kinds[i].kind) == n - 4 && !strncmp(kinds[i].kind, kind, n - 4))
            return 1;
    return 0;
}

static int load_doc(berth_kcluster *k, berth_dec *d, const berth_node *doc, int depth);

static int load_item(void *ctx, berth_dec *d, const berth_node *item, int depth)
{
    return load_doc(ctx, d, item, depth);
}

static int load_doc(berth_kcluster *k, berth_dec *d, const berth_node *doc, int depth)
{
    const char *kind = NULL;
    int rc = berth_dec_kind(d, doc, &kind);
    if (rc)
        return rc;
    if (is_list_kind(kind)) {
        static const char *const lf[] = {"apiVersion", "kind", "metadata", "items", NULL};
        if ((rc = known(d, doc, lf)))
            return rc;
        return berth_dec_list(d, doc, depth, load_item, k);
    }
    int kk = -1;
    for (int i = 0; i < K_COUNT; i++)
        if (!strcmp(kinds[i].kind, kind))
            kk = i;
    if (kk < 0) {
        size_t p = berth_dec_push(d, "kind");
        rc = berth_dec_fail(d, berth_node_get(doc, "kind"),
                            "unknown kind '%s' (kube input has Node, Pod, Namespace, Service, "
                            "ReplicaSet, StatefulSet, ReplicationController, DaemonSet, "
                            "PodDisruptionBudget, PersistentVolumeClaim, PersistentVolume, "
                            "KubeSchedulerConfiguration, List)",
                            kind);
        berth_dec_pop(d, p);
        return rc;
    }
    if ((rc = check_api(d, doc, (kkind)kk)))
        return rc;
    if (kk != K_KSC && (rc = known(d, doc, top_fields)))
        return rc;
    switch ((kkind)kk) {
    case K_NODE: return load_node(k, d, doc);
    case K_POD: return load_pod(k, d, doc);
    case K_NAMESPACE: return load_namespace(k, d, doc);
    case K_SERVICE: return load_service(k, d, doc);
    case K_RC:
    case K_RS:
    case K_SS:
    case K_DS: return load_workload(k, d, doc, kinds[kk].kind);
    case K_PDB: return load_pdb(k, d, doc);
    case K_PVC: return load_pvc(k, d, doc);
    case K_PV: return load_pv(k, d, doc);
    case K_KSC: return load_ksc(k, d, doc);
    case K_COUNT: break;
    }
    return 0;
}

int berth_kube_load(berth_kcluster *k, const berth_source *src, int strict, berth_error *e)
{
    berth_dec d;
    berth_dec_init(&d, &k->arena, src->path, e);
    d.strict = strict;
    uint32_t first_pod = k->npods;
    for (size_t i = 0; i < src->ndocs; i++) {
        d.plen = 0;
        d.path[0] = 0;
        int rc = load_doc(k, &d, src->docs[i], 0);
        if (rc)
            return rc;
    }
    /* requests need the final resource table: computed once the file is in */
    for (uint32_t p = first_pod; p < k->npods; p++)
        berth_kube_pod_requests(k, &k->pods[p]);
    /* volume zones need every file's PVCs and PVs: resolved again whenever
     * a file brings PVCs, PVs or pods with claims */
    if (k->volumes_stale) {
        if (resolve_volumes(k))
            return berth_error_set(e, BERTH_ENOMEM, "out of memory");
        k->volumes_stale = 0;
    }
    return 0;
}
