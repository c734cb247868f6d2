/* fleet/load.c - decodes the Fleet kinds (SPEC 3, 6.1): MemberCluster
 * (cluster.kubernetes-fleet.io), ClusterResourcePlacement and the
 * namespaced ResourcePlacement, their bindings (ClusterResourceBinding,
 * ResourceBinding) and scheduling policy snapshots
 * (ClusterSchedulingPolicySnapshot, SchedulingPolicySnapshot: which one is
 * the latest), all placement.kubernetes-fleet.io, and List (any <Kind>List;
 * the table at the end, walked by berth_dec_walk); other kinds are counted
 * in f->skipped (errors when strict). They
 * are read as the API server reads them: fields berth does not use are
 * ignored unless strict; a used field with a wrong type or value is always
 * a located error. Property selector operators and values are kept as
 * written and checked when the placement runs (SPEC 3.1: a policy error). */
#include "fleet/state.h"
#include "k8s/k8s.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ENOMEM_(d) berth_error_set((d)->err, BERTH_ENOMEM, "out of memory")

static const char *where(berth_fleet *f, const berth_dec *d, const berth_node *n, int with_path)
{
    char buf[800];
    if (with_path && d->plen)
        snprintf(buf, sizeof buf, "%s:%d:%d: %s", d->file, n ? n->line : 0, n ? n->col : 0,
                 d->path);
    else
        snprintf(buf, sizeof buf, "%s:%d:%d", d->file, n ? n->line : 0, n ? n->col : 0);
    return berth_arena_strdup(&f->arena, buf);
}

static int known(berth_dec *d, const berth_node *m, const char *const *allowed)
{
    return d->strict ? berth_dec_known_fields(d, m, allowed) : 0;
}

static void *alloc(berth_fleet *f, size_t n, size_t size)
{
    return berth_arena_alloc(&f->arena, (n ? n : 1) * size);
}

static const char *const meta_fields[] = {
    "name", "namespace", "labels", "annotations", "creationTimestamp", "uid", "resourceVersion",
    "generation", "deletionTimestamp", "deletionGracePeriodSeconds", "finalizers",
    "managedFields", "ownerReferences", "generateName", "selfLink", NULL};

static int dec_labels_map(berth_fleet *f, berth_dec *d, const berth_node *m, berth_labels *out)
{
    (void)f;
    return k8s_dec_string_map(NULL, d, m, out, 1);
}

static int dec_metadata(berth_fleet *f, berth_dec *d, const berth_node *doc, const char **name,
                        berth_labels *labels, int *deleting)
{
    berth_node *meta = NULL;
    int rc = berth_dec_map(d, doc, "metadata", 1, &meta);
    if (rc)
        return rc;
    size_t prev = berth_dec_push(d, "metadata");
    rc = known(d, meta, meta_fields);
    if (!rc)
        rc = berth_dec_str(d, meta, "name", 1, name);
    if (!rc && !**name)
        rc = berth_dec_fail(d, berth_node_get(meta, "name"), "must not be empty");
    berth_node *lm = NULL;
    if (!rc)
        rc = berth_dec_map(d, meta, "labels", 0, &lm);
    if (!rc && labels) {
        labels->n = 0;
        labels->items = NULL;
        if (lm) {
            size_t p2 = berth_dec_push(d, "labels");
            rc = dec_labels_map(f, d, lm, labels);
            berth_dec_pop(d, p2);
        }
    }
    if (!rc && deleting) {
        const char *ts = NULL;
        rc = berth_dec_str(d, meta, "deletionTimestamp", 0, &ts);
        *deleting = ts != NULL;
    }
    berth_dec_pop(d, prev);
    return rc;
}

static int dec_time(berth_dec *d, const berth_node *m, const char *key, int64_t *out)
{
    const char *s = NULL;
    int rc = berth_dec_str(d, m, key, 0, &s);
    if (rc || !s)
        return rc;
    if (berth_time_parse(s, out)) {
        size_t p = berth_dec_push(d, key);
        rc = berth_dec_fail(d, berth_node_get(m, key),
                            "expected an RFC 3339 time such as 2024-05-01T12:00:00Z, got '%s'", s);
        berth_dec_pop(d, p);
    }
    return rc;
}

/* metadata.namespace of a namespaced object ("default" when absent, as the
 * API server defaults it) and the key "namespace/name" berth names it by. */
static int dec_namespace(berth_fleet *f, berth_dec *d, const berth_node *doc, const char *name,
                         const char **ns, const char **key)
{
    const berth_node *meta = berth_node_get(doc, "metadata");
    size_t prev = berth_dec_push(d, "metadata");
    int rc = berth_dec_str(d, meta, "namespace", 0, ns);
    berth_dec_pop(d, prev);
    if (rc)
        return rc;
    if (!*ns || !**ns)
        *ns = "default";
    size_t n = strlen(*ns) + strlen(name) + 2;
    char *k = berth_arena_alloc(&f->arena, n);
    if (!k)
        return ENOMEM_(d);
    snprintf(k, n, "%s/%s", *ns, name);
    *key = k;
    return 0;
}

/* The placement a binding or policy snapshot belongs to: label
 * kubernetes-fleet.io/parent-CRP (KubeFleet's PlacementTrackingLabel, used
 * for both placement kinds), in the object's namespace when namespaced. */
static int dec_parent(berth_fleet *f, berth_dec *d, const berth_node *doc,
                      const berth_labels *labels, const char *ns, const char **key)
{
    const char *parent = berth_labels_get(labels, "kubernetes-fleet.io/parent-CRP");
    if (!parent) {
        size_t p = berth_dec_push(d, "metadata.labels");
        int rc = berth_dec_fail(d, berth_node_get(doc, "metadata"),
                                "label kubernetes-fleet.io/parent-CRP (the placement) is missing");
        berth_dec_pop(d, p);
        return rc;
    }
    if (!ns) {
        *key = parent;
        return 0;
    }
    size_t n = strlen(ns) + strlen(parent) + 2;
    char *k = berth_arena_alloc(&f->arena, n);
    if (!k)
        return ENOMEM_(d);
    snprintf(k, n, "%s/%s", ns, parent);
    *key = k;
    return 0;
}

/* A metav1.LabelSelector, through the shared object layer (k8s/selector.c);
 * absent: out unchanged (a cluster selector term without labelSelector
 * selects every cluster). */
static int dec_selector(berth_fleet *f, berth_dec *d, const berth_node *m, const char *key,
                        berth_selector *out)
{
    (void)f;
    if (!berth_node_get(m, key))
        return 0;
    return k8s_dec_label_selector(NULL, d, m, key, out);
}

/* ---- MemberCluster ---- */

static int add_prop(berth_fleet *f, berth_dec *d, berth_member_cluster *m, uint32_t cap,
                    const char *name, const berth_node *v)
{
    berth_quantity q;
    int rc = berth_dec_node_quantity(d, v, &q);
    if (rc)
        return rc;
    if (m->nprops >= cap)
        return berth_error_set(d->err, BERTH_EINTERNAL, "property table overflow");
    m->props[m->nprops++] = (berth_fleet_prop){name, q};
    return 0;
}

static int load_member(berth_fleet *f, berth_dec *d, const berth_node *doc)
{
    berth_member_cluster m;
    memset(&m, 0, sizeof m);
    m.healthy = -1;
    m.heartbeat_ms = m.healthy_since_ms = BERTH_FLEET_TIME_UNSET;
    m.where = where(f, d, doc, 0);
    int rc = dec_metadata(f, d, doc, &m.name, &m.labels, &m.leaving);
    if (rc)
        return rc;
    berth_node *spec = NULL, *status = NULL;
    if ((rc = berth_dec_map(d, doc, "spec", 0, &spec)) ||
        (rc = berth_dec_map(d, doc, "status", 0, &status)))
        return rc;
    if (spec) {
        size_t prev = berth_dec_push(d, "spec");
        static const char *const sf[] = {"identity", "heartbeatPeriodSeconds", "taints", NULL};
        berth_node *taints = NULL;
        if (!(rc = known(d, spec, sf)))
            rc = berth_dec_seq(d, spec, "taints", 0, &taints);
        if (!rc && taints) {
            m.taints = alloc(f, taints->n, sizeof *m.taints);
            if (!m.taints)
                rc = ENOMEM_(d);
            for (size_t i = 0; !rc && i < taints->n; i++) {
                size_t p = berth_dec_push(d, "taints");
                berth_dec_push_index(d, i);
                const berth_node *t = taints->items[i];
                static const char *const tf[] = {"key", "value", "effect", "timeAdded", NULL};
                const char *k = NULL, *v = "", *eff = NULL;
                if (t->type != BERTH_NODE_MAP)
                    rc = berth_dec_fail(d, t, "expected a mapping with key, value, effect");
                if (!rc)
                    rc = known(d, t, tf);
                if (!rc)
                    rc = berth_dec_str(d, t, "key", 1, &k);
                if (!rc)
                    rc = berth_dec_str(d, t, "value", 0, &v);
                if (!rc)
                    rc = berth_dec_str(d, t, "effect", 1, &eff);
                if (!rc && strcmp(eff, "NoSchedule") != 0) {
                    rc = berth_dec_fail_field(d, t, "effect",
                                              "member cluster taints support effect NoSchedule "
                                              "only, got '%s'", eff);
                }
                if (!rc) {
                    m.taints[m.ntaints] = (berth_taint){k, v, BERTH_EFFECT_NOSCHEDULE};
                    const char *why = NULL;
                    if (berth_taint_validate(&m.taints[m.ntaints], &why))
                        rc = berth_dec_fail(d, t, "invalid taint: %s", why);
                    m.ntaints++;
                }
                berth_dec_pop(d, p);
            }
        }
        berth_dec_pop(d, prev);
        if (rc)
            return rc;
    }
    if (status) {
        size_t prev = berth_dec_push(d, "status");
        static const char *const stf[] = {"conditions", "agentStatus", "properties",
                                          "resourceUsage", NULL};
        berth_node *agents = NULL, *props = NULL, *usage = NULL, *conds = NULL;
        if (!(rc = known(d, status, stf)) &&
            !(rc = berth_dec_seq(d, status, "conditions", 0, &conds)) &&
            !(rc = berth_dec_seq(d, status, "agentStatus", 0, &agents)) &&
            !(rc = berth_dec_map(d, status, "properties", 0, &props)))
            rc = berth_dec_map(d, status, "resourceUsage", 0, &usage);
        static const char *const uf[] = {"capacity", "allocatable", "available",
                                         "observationTime", NULL};
        static const char *const ukeys[] = {"capacity", "allocatable", "available"};
        static const char *const unames[] = {"total", "allocatable", "available"};
        uint32_t cap = props ? (uint32_t)props->n : 0;
        berth_node *ub[3] = {NULL, NULL, NULL};
        if (!rc && usage) {
            size_t p = berth_dec_push(d, "resourceUsage");
            rc = known(d, usage, uf);
            for (int k = 0; !rc && k < 3; k++) {
                rc = berth_dec_map(d, usage, ukeys[k], 0, &ub[k]);
                if (ub[k])
                    cap += (uint32_t)ub[k]->n;
            }
            berth_dec_pop(d, p);
        }
        if (!rc) {
            m.props = alloc(f, cap, sizeof *m.props);
            if (!m.props)
                rc = ENOMEM_(d);
        }
        for (int k = 0; !rc && k < 3; k++) {
            for (size_t i = 0; ub[k] && !rc && i < ub[k]->n; i++) {
                char name[300];
                const char *res = ub[k]->entries[i].key->str;
                snprintf(name, sizeof name, "resources.kubernetes-fleet.io/%s-%s", unames[k], res);
                const char *nm = berth_arena_strdup(&f->arena, name);
                if (!nm) {
                    rc = ENOMEM_(d);
                    break;
                }
                size_t p = berth_dec_push(d, "resourceUsage");
                berth_dec_push(d, ukeys[k]);
                berth_dec_push(d, res);
                rc = add_prop(f, d, &m, cap, nm, ub[k]->entries[i].value);
                berth_dec_pop(d, p);
            }
        }
        for (size_t i = 0; props && !rc && i < props->n; i++) {
            const berth_node *pv = props->entries[i].value;
            size_t p = berth_dec_push(d, "properties");
            berth_dec_push(d, props->entries[i].key->str);
            static const char *const pf[] = {"value", "observationTime", NULL};
            if (pv->type != BERTH_NODE_MAP)
                rc = berth_dec_fail(d, pv, "expected a mapping with value, observationTime");
            if (!rc)
                rc = known(d, pv, pf);
            berth_node *vn = berth_node_get(pv, "value");
            if (!rc && !vn)
                rc = berth_dec_fail(d, pv, "value: required field is missing");
            if (!rc) {
                size_t p2 = berth_dec_push(d, "value");
                rc = add_prop(f, d, &m, cap, props->entries[i].key->str, vn);
                berth_dec_pop(d, p2);
            }
            berth_dec_pop(d, p);
        }
        for (size_t i = 0; agents && !rc && i < agents->n; i++) {
            const berth_node *a = agents->items[i];
            size_t p = berth_dec_push(d, "agentStatus");
            berth_dec_push_index(d, i);
            static const char *const af[] = {"type", "conditions", "lastReceivedHeartbeat", NULL};
            const char *type = NULL;
            berth_node *ac = NULL;
            if (a->type != BERTH_NODE_MAP)
                rc = berth_dec_fail(d, a, "expected a mapping with type, conditions, "
                                          "lastReceivedHeartbeat");
            if (!rc)
                rc = known(d, a, af);
            if (!rc)
                rc = berth_dec_str(d, a, "type", 1, &type);
            if (!rc && !strcmp(type, "MemberAgent")) {
                m.has_agent = 1;
                rc = dec_time(d, a, "lastReceivedHeartbeat", &m.heartbeat_ms);
                if (!rc)
                    rc = berth_dec_seq(d, a, "conditions", 0, &ac);
                for (size_t j = 0; ac && !rc && j < ac->n; j++) {
                    const berth_node *c = ac->items[j];
                    size_t p2 = berth_dec_push(d, "conditions");
                    berth_dec_push_index(d, j);
                    static const char *const cf[] = {"type", "status", "lastTransitionTime",
                                                     "reason", "message", "observedGeneration",
                                                     NULL};
                    const char *ct = NULL, *cs = NULL;
                    if (c->type != BERTH_NODE_MAP)
                        rc = berth_dec_fail(d, c, "expected a condition mapping");
                    if (!rc)
                        rc = known(d, c, cf);
                    if (!rc)
                        rc = berth_dec_str(d, c, "type", 1, &ct);
                    if (!rc)
                        rc = berth_dec_str(d, c, "status", 1, &cs);
                    if (!rc && strcmp(cs, "True") && strcmp(cs, "False") && strcmp(cs, "Unknown")) {
                        rc = berth_dec_fail_field(d, c, "status",
                                                  "expected True, False or Unknown, got '%s'", cs);
                    }
                    if (!rc && !strcmp(ct, "Joined")) {
                        m.joined = !strcmp(cs, "True");
                    } else if (!rc && !strcmp(ct, "Healthy")) {
                        m.healthy = !strcmp(cs, "True");
                        m.healthy_since_ms = BERTH_FLEET_TIME_UNSET;
                        rc = dec_time(d, c, "lastTransitionTime", &m.healthy_since_ms);
                    }
                    berth_dec_pop(d, p2);
                }
            }
            berth_dec_pop(d, p);
        }
        berth_dec_pop(d, prev);
        if (rc)
            return rc;
    }
    if (f->nclusters >= BERTH_FLEET_MAX_CLUSTERS)
        return berth_dec_fail(d, doc, "more than %u member clusters", BERTH_FLEET_MAX_CLUSTERS);
    if ((rc = fleet_grow((void **)&f->clusters, &f->capclusters, f->nclusters + 1,
                         sizeof *f->clusters)))
        return berth_dec_grow_fail(d, doc, rc, "clusters");
    f->clusters[f->nclusters++] = m;
    return 0;
}

/* ---- ClusterResourcePlacement ---- */

static int dec_prop_exprs(berth_fleet *f, berth_dec *d, const berth_node *term,
                          berth_fleet_prop_expr **out, uint32_t *nout)
{
    berth_node *ps = NULL, *me = NULL;
    int rc = berth_dec_map(d, term, "propertySelector", 0, &ps);
    if (rc || !ps)
        return rc;
    size_t prev = berth_dec_push(d, "propertySelector");
    static const char *const pf[] = {"matchExpressions", NULL};
    if (!(rc = known(d, ps, pf)))
        rc = berth_dec_seq(d, ps, "matchExpressions", 0, &me);
    if (!rc && me) {
        *out = alloc(f, me->n, sizeof **out);
        if (!*out)
            rc = ENOMEM_(d);
        for (size_t i = 0; !rc && i < me->n; i++) {
            const berth_node *e = me->items[i];
            size_t p = berth_dec_push(d, "matchExpressions");
            berth_dec_push_index(d, i);
            static const char *const ef[] = {"name", "operator", "values", NULL};
            berth_fleet_prop_expr *x = &(*out)[i];
            berth_node *vals = NULL;
            if (e->type != BERTH_NODE_MAP)
                rc = berth_dec_fail(d, e, "expected a mapping with name, operator, values");
            if (!rc)
                rc = known(d, e, ef);
            if (!rc)
                rc = berth_dec_str(d, e, "name", 1, &x->name);
            if (!rc)
                rc = berth_dec_str(d, e, "operator", 1, &x->op);
            if (!rc)
                rc = berth_dec_seq(d, e, "values", 0, &vals);
            if (!rc) {
                x->where = where(f, d, e, 1);
                x->nvalues = vals ? (uint32_t)vals->n : 0;
                x->values = alloc(f, x->nvalues, sizeof *x->values);
                if (!x->values || !x->where)
                    rc = ENOMEM_(d);
                for (uint32_t j = 0; !rc && j < x->nvalues; j++) {
                    size_t p2 = berth_dec_push(d, "values");
                    berth_dec_push_index(d, j);
                    rc = berth_dec_node_str(d, vals->items[j], &x->values[j]);
                    berth_dec_pop(d, p2);
                }
            }
            berth_dec_pop(d, p);
            if (!rc)
                (*nout)++;
        }
    }
    berth_dec_pop(d, prev);
    return rc;
}

static int dec_required(berth_fleet *f, berth_dec *d, const berth_node *ca,
                        berth_fleet_placement *pl)
{
    berth_node *r = NULL, *terms = NULL;
    const char *key = "requiredDuringSchedulingIgnoredDuringExecution";
    int rc = berth_dec_map(d, ca, key, 0, &r);
    if (rc || !r)
        return rc;
    size_t prev = berth_dec_push(d, key);
    static const char *const rf[] = {"clusterSelectorTerms", NULL};
    if (!(rc = known(d, r, rf)))
        rc = berth_dec_seq(d, r, "clusterSelectorTerms", 1, &terms);
    if (!rc && terms->n > BERTH_FLEET_MAX_TERMS)
        rc = berth_dec_fail(d, terms, "more than %u terms", BERTH_FLEET_MAX_TERMS);
    if (!rc) {
        pl->has_required = 1;
        pl->req = alloc(f, terms->n, sizeof *pl->req);
        if (!pl->req)
            rc = ENOMEM_(d);
    }
    for (size_t i = 0; !rc && i < terms->n; i++) {
        const berth_node *t = terms->items[i];
        size_t p = berth_dec_push(d, "clusterSelectorTerms");
        berth_dec_push_index(d, i);
        static const char *const tf[] = {"labelSelector", "propertySelector", NULL};
        berth_fleet_term *term = &pl->req[i];
        if (t->type != BERTH_NODE_MAP)
            rc = berth_dec_fail(d, t, "expected a mapping with labelSelector, propertySelector");
        if (!rc)
            rc = known(d, t, tf);
        if (!rc)
            rc = dec_selector(f, d, t, "labelSelector", &term->labels);
        if (!rc)
            rc = dec_prop_exprs(f, d, t, &term->exprs, &term->nexprs);
        berth_dec_pop(d, p);
        if (!rc)
            pl->nreq++;
    }
    berth_dec_pop(d, prev);
    return rc;
}

static int dec_preferred(berth_fleet *f, berth_dec *d, const berth_node *ca,
                         berth_fleet_placement *pl)
{
    berth_node *list = NULL;
    const char *key = "preferredDuringSchedulingIgnoredDuringExecution";
    int rc = berth_dec_seq(d, ca, key, 0, &list);
    if (rc || !list)
        return rc;
    size_t prev = berth_dec_push(d, key);
    if (list->n > BERTH_FLEET_MAX_TERMS)
        rc = berth_dec_fail(d, list, "more than %u terms", BERTH_FLEET_MAX_TERMS);
    if (!rc) {
        pl->pref = alloc(f, list->n, sizeof *pl->pref);
        if (!pl->pref)
            rc = ENOMEM_(d);
    }
    for (size_t i = 0; !rc && i < list->n; i++) {
        const berth_node *t = list->items[i];
        size_t p = berth_dec_push_index(d, i);
        static const char *const tf[] = {"weight", "preference", NULL};
        static const char *const pf[] = {"labelSelector", "propertySelector", "propertySorter",
                                         "metricSorter", NULL};
        static const char *const sf[] = {"name", "sortOrder", NULL};
        berth_fleet_pref *pr = &pl->pref[i];
        berth_node *pref = NULL, *sorter = NULL;
        pr->where = where(f, d, t, 1);
        if (t->type != BERTH_NODE_MAP)
            rc = berth_dec_fail(d, t, "expected a mapping with weight, preference");
        if (!rc)
            rc = known(d, t, tf);
        if (!rc)
            rc = berth_dec_int(d, t, "weight", 1, -100, 100, &pr->weight);
        if (!rc)
            rc = berth_dec_map(d, t, "preference", 1, &pref);
        if (!rc) {
            size_t p2 = berth_dec_push(d, "preference");
            rc = known(d, pref, pf);
            if (!rc)
                rc = dec_selector(f, d, pref, "labelSelector", &pr->labels);
            const char *skey = berth_node_get(pref, "propertySorter") ? "propertySorter"
                                                                       : "metricSorter";
            if (!rc)
                rc = berth_dec_map(d, pref, skey, 0, &sorter);
            if (!rc && sorter) {
                size_t p3 = berth_dec_push(d, skey);
                rc = known(d, sorter, sf);
                if (!rc)
                    rc = berth_dec_str(d, sorter, "name", 1, &pr->sorter);
                if (!rc)
                    rc = berth_dec_str(d, sorter, "sortOrder", 1, &pr->order);
                if (!rc)
                    pr->where = where(f, d, sorter, 1);
                berth_dec_pop(d, p3);
            }
            berth_dec_pop(d, p2);
        }
        berth_dec_pop(d, p);
        if (!rc)
            pl->npref++;
    }
    berth_dec_pop(d, prev);
    return rc;
}

static int dec_policy(berth_fleet *f, berth_dec *d, const berth_node *pol, berth_fleet_placement *pl)
{
    static const char *const pf[] = {"placementType", "clusterNames", "numberOfClusters",
                                     "affinity", "topologySpreadConstraints", "tolerations", NULL};
    int rc = known(d, pol, pf);
    const char *type = NULL;
    if (!rc)
        rc = berth_dec_str(d, pol, "placementType", 0, &type);
    if (rc)
        return rc;
    if (!type || !strcmp(type, "PickAll"))
        pl->type = BERTH_FLEET_PICK_ALL;
    else if (!strcmp(type, "PickN"))
        pl->type = BERTH_FLEET_PICK_N;
    else if (!strcmp(type, "PickFixed"))
        pl->type = BERTH_FLEET_PICK_FIXED;
    else {
        rc = berth_dec_fail_field(d, pol, "placementType",
                                  "expected PickAll, PickN or PickFixed, got '%s'", type);
        return rc;
    }
    if ((rc = berth_dec_int(d, pol, "numberOfClusters", pl->type == BERTH_FLEET_PICK_N, 0,
                            INT32_MAX, &pl->n)))
        return rc;
    berth_node *names = NULL, *aff = NULL, *tsc = NULL, *tols = NULL;
    if ((rc = berth_dec_seq(d, pol, "clusterNames", 0, &names)) ||
        (rc = berth_dec_map(d, pol, "affinity", 0, &aff)) ||
        (rc = berth_dec_seq(d, pol, "topologySpreadConstraints", 0, &tsc)) ||
        (rc = berth_dec_seq(d, pol, "tolerations", 0, &tols)))
        return rc;
    if (names) {
        pl->fixed = alloc(f, names->n, sizeof *pl->fixed);
        if (!pl->fixed)
            return ENOMEM_(d);
        for (size_t i = 0; i < names->n; i++) {
            size_t p = berth_dec_push(d, "clusterNames");
            berth_dec_push_index(d, i);
            rc = berth_dec_node_str(d, names->items[i], &pl->fixed[i]);
            berth_dec_pop(d, p);
            if (rc)
                return rc;
        }
        pl->nfixed = (uint32_t)names->n;
    }
    if (aff) {
        size_t p = berth_dec_push(d, "affinity");
        static const char *const af[] = {"clusterAffinity", NULL};
        static const char *const cf[] = {"requiredDuringSchedulingIgnoredDuringExecution",
                                         "preferredDuringSchedulingIgnoredDuringExecution", NULL};
        berth_node *ca = NULL;
        if (!(rc = known(d, aff, af)))
            rc = berth_dec_map(d, aff, "clusterAffinity", 0, &ca);
        if (!rc && ca) {
            size_t p2 = berth_dec_push(d, "clusterAffinity");
            if (!(rc = known(d, ca, cf)) && !(rc = dec_required(f, d, ca, pl)))
                rc = dec_preferred(f, d, ca, pl);
            berth_dec_pop(d, p2);
        }
        berth_dec_pop(d, p);
        if (rc)
            return rc;
    }
    if (tsc) {
        if (tsc->n > BERTH_FLEET_MAX_TERMS)
            return berth_dec_fail(d, tsc, "more than %u topology spread constraints",
                                  BERTH_FLEET_MAX_TERMS);
        pl->spread = alloc(f, tsc->n, sizeof *pl->spread);
        if (!pl->spread)
            return ENOMEM_(d);
        for (size_t i = 0; i < tsc->n; i++) {
            const berth_node *t = tsc->items[i];
            size_t p = berth_dec_push(d, "topologySpreadConstraints");
            berth_dec_push_index(d, i);
            static const char *const tf[] = {"maxSkew", "topologyKey", "whenUnsatisfiable", NULL};
            berth_fleet_spread *s = &pl->spread[i];
            s->max_skew = 1;
            const char *wu = NULL;
            if (t->type != BERTH_NODE_MAP)
                rc = berth_dec_fail(d, t, "expected a mapping with maxSkew, topologyKey, "
                                          "whenUnsatisfiable");
            if (!rc)
                rc = known(d, t, tf);
            if (!rc)
                rc = berth_dec_int(d, t, "maxSkew", 0, 1, INT32_MAX, &s->max_skew);
            if (!rc)
                rc = berth_dec_str(d, t, "topologyKey", 1, &s->key);
            if (!rc)
                rc = berth_dec_str(d, t, "whenUnsatisfiable", 0, &wu);
            if (!rc && wu) {
                if (!strcmp(wu, "ScheduleAnyway"))
                    s->schedule_anyway = 1;
                else if (strcmp(wu, "DoNotSchedule")) {
                    rc = berth_dec_fail_field(d, t, "whenUnsatisfiable",
                                              "expected DoNotSchedule or ScheduleAnyway, got '%s'",
                                              wu);
                }
            }
            berth_dec_pop(d, p);
            if (rc)
                return rc;
            pl->nspread++;
        }
    }
    if (tols) {
        pl->tols = alloc(f, tols->n, sizeof *pl->tols);
        if (!pl->tols)
            return ENOMEM_(d);
        for (size_t i = 0; i < tols->n; i++) {
            const berth_node *t = tols->items[i];
            size_t p = berth_dec_push(d, "tolerations");
            berth_dec_push_index(d, i);
            static const char *const tf[] = {"key", "operator", "value", "effect", NULL};
            const char *k = "", *op = NULL, *v = "", *eff = NULL;
            if (t->type != BERTH_NODE_MAP)
                rc = berth_dec_fail(d, t, "expected a mapping with key, operator, value, effect");
            if (!rc)
                rc = known(d, t, tf);
            if (!rc)
                rc = berth_dec_str(d, t, "key", 0, &k);
            if (!rc)
                rc = berth_dec_str(d, t, "operator", 0, &op);
            if (!rc)
                rc = berth_dec_str(d, t, "value", 0, &v);
            if (!rc)
                rc = berth_dec_str(d, t, "effect", 0, &eff);
            int o = 0, e = 0;
            if (!rc && (o = berth_toleration_op_parse(op)) < 0) {
                rc = berth_dec_fail_field(d, t, "operator",
                                          "expected Equal or Exists, got '%s'", op);
            }
            if (!rc && ((e = berth_taint_effect_parse(eff)) < 0 ||
                        (e != BERTH_EFFECT_ALL && e != BERTH_EFFECT_NOSCHEDULE))) {
                rc = berth_dec_fail_field(d, t, "effect",
                                          "expected NoSchedule or empty, got '%s'", eff);
            }
            if (!rc) {
                berth_toleration *tl = &pl->tols[pl->ntols];
                *tl = (berth_toleration){k, v, (berth_toleration_op)o, (berth_taint_effect)e, -1};
                const char *why = NULL;
                if (berth_toleration_validate(tl, &why))
                    rc = berth_dec_fail(d, t, "invalid toleration: %s", why);
                pl->ntols++;
            }
            berth_dec_pop(d, p);
            if (rc)
                return rc;
        }
    }
    return 0;
}

static int load_placement(berth_fleet *f, berth_dec *d, const berth_node *doc, int namespaced)
{
    berth_fleet_placement pl;
    memset(&pl, 0, sizeof pl);
    pl.where = where(f, d, doc, 0);
    int rc = dec_metadata(f, d, doc, &pl.name, NULL, NULL);
    if (!rc && namespaced)
        rc = dec_namespace(f, d, doc, pl.name, &pl.ns, &pl.name);
    if (rc)
        return rc;
    pl.snapshot_annotation = berth_node_annotation(doc, "berth.io/policy-snapshot");
    berth_node *spec = NULL, *pol = NULL;
    if ((rc = berth_dec_map(d, doc, "spec", 1, &spec)))
        return rc;
    size_t prev = berth_dec_push(d, "spec");
    static const char *const sf[] = {"resourceSelectors", "policy", "strategy",
                                     "revisionHistoryLimit", NULL};
    if (!(rc = known(d, spec, sf)))
        rc = berth_dec_map(d, spec, "policy", 0, &pol);
    if (!rc && pol) {
        size_t p = berth_dec_push(d, "policy");
        rc = dec_policy(f, d, pol, &pl);
        berth_dec_pop(d, p);
    }
    berth_dec_pop(d, prev);
    if (rc)
        return rc;
    if ((rc = fleet_grow((void **)&f->placements, &f->capplacements, f->nplacements + 1,
                         sizeof *f->placements)))
        return berth_dec_grow_fail(d, doc, rc, "placements");
    f->placements[f->nplacements++] = pl;
    return 0;
}

/* ---- ClusterResourceBinding ---- */

static int load_binding(berth_fleet *f, berth_dec *d, const berth_node *doc, int namespaced)
{
    berth_fleet_binding b;
    memset(&b, 0, sizeof b);
    b.where = where(f, d, doc, 0);
    berth_labels labels;
    const char *ns = NULL, *key = NULL;
    int rc = dec_metadata(f, d, doc, &b.name, &labels, NULL);
    if (!rc && namespaced)
        rc = dec_namespace(f, d, doc, b.name, &ns, &key);
    if (!rc)
        rc = dec_parent(f, d, doc, &labels, ns, &b.placement_name);
    if (rc)
        return rc;
    berth_node *spec = NULL;
    if ((rc = berth_dec_map(d, doc, "spec", 1, &spec)))
        return rc;
    size_t prev = berth_dec_push(d, "spec");
    static const char *const sf[] = {"targetCluster", "state", "clusterDecision",
                                     "resourceSnapshotName", "schedulingPolicySnapshotName",
                                     "resourceOverrideSnapshots",
                                     "clusterResourceOverrideSnapshots", "applyStrategy", NULL};
    const char *state = NULL;
    berth_node *cd = NULL;
    if (!(rc = known(d, spec, sf)) && !(rc = berth_dec_str(d, spec, "targetCluster", 1,
                                                           &b.cluster_name)) &&
        !(rc = berth_dec_str(d, spec, "state", 1, &state)) &&
        !(rc = berth_dec_str(d, spec, "schedulingPolicySnapshotName", 0, &b.snapshot)))
        rc = berth_dec_map(d, spec, "clusterDecision", 0, &cd);
    if (!rc) {
        if (!strcmp(state, "Scheduled"))
            b.state = BERTH_BINDING_SCHEDULED;
        else if (!strcmp(state, "Bound"))
            b.state = BERTH_BINDING_BOUND;
        else if (!strcmp(state, "Unscheduled"))
            b.state = BERTH_BINDING_UNSCHEDULED;
        else {
            rc = berth_dec_fail_field(d, spec, "state",
                                      "expected Scheduled, Bound or Unscheduled, got '%s'", state);
        }
    }
    if (!rc && cd) {
        size_t p = berth_dec_push(d, "clusterDecision");
        static const char *const cf[] = {"clusterName", "selected", "clusterScore", "reason", NULL};
        static const char *const csf[] = {"affinityScore", "priorityScore",
                                          "topologySpreadScore", NULL};
        berth_node *cs = NULL;
        if (!(rc = known(d, cd, cf)))
            rc = berth_dec_map(d, cd, "clusterScore", 0, &cs);
        if (!rc && cs) {
            size_t p2 = berth_dec_push(d, "clusterScore");
            b.has_score = 1;
            if (!(rc = known(d, cs, csf)) &&
                !(rc = berth_dec_int(d, cs, "affinityScore", 0, INT32_MIN, INT32_MAX,
                                     &b.affinity_score)) &&
                !(rc = berth_dec_int(d, cs, "priorityScore", 0, INT32_MIN, INT32_MAX,
                                     &b.spread_score)))
                rc = berth_dec_int(d, cs, "topologySpreadScore", 0, INT32_MIN, INT32_MAX,
                                   &b.spread_score);
            berth_dec_pop(d, p2);
        }
        berth_dec_pop(d, p);
    }
    berth_dec_pop(d, prev);
    if (rc)
        return rc;
    if ((rc = fleet_grow((void **)&f->bindings, &f->capbindings, f->nbindings + 1,
                         sizeof *f->bindings)))
        return berth_dec_grow_fail(d, doc, rc, "bindings");
    f->bindings[f->nbindings++] = b;
    return 0;
}

/* ---- ClusterSchedulingPolicySnapshot / SchedulingPolicySnapshot ---- */

/* Only the name, the placement and the label is-latest-snapshot are read
 * (the scheduler works on the latest snapshot: KubeFleet's
 * pkg/utils/controller/policy_snapshot_resolver.go); the snapshot's policy
 * is the placement's own. */
static int load_snapshot(berth_fleet *f, berth_dec *d, const berth_node *doc, int namespaced)
{
    berth_fleet_psnap ps;
    memset(&ps, 0, sizeof ps);
    ps.where = where(f, d, doc, 0);
    berth_labels labels;
    const char *ns = NULL, *key = NULL;
    int rc = dec_metadata(f, d, doc, &ps.name, &labels, NULL);
    if (!rc && namespaced)
        rc = dec_namespace(f, d, doc, ps.name, &ns, &key);
    if (!rc)
        rc = dec_parent(f, d, doc, &labels, ns, &ps.placement_name);
    if (rc)
        return rc;
    /* strconv.ParseBool's spellings, as the resolver parses the label */
    static const char *const yes[] = {"1", "t", "T", "TRUE", "true", "True", NULL};
    static const char *const no[] = {"0", "f", "F", "FALSE", "false", "False", NULL};
    const char *latest = berth_labels_get(&labels, "kubernetes-fleet.io/is-latest-snapshot");
    int known_value = !latest;
    for (int i = 0; latest && yes[i]; i++)
        if (!strcmp(latest, yes[i]))
            ps.latest = known_value = 1;
    for (int i = 0; latest && no[i]; i++)
        known_value |= !strcmp(latest, no[i]);
    if (!known_value) {
        size_t p = berth_dec_push(d, "metadata.labels");
        berth_dec_push(d, "kubernetes-fleet.io/is-latest-snapshot");
        const berth_node *lm = berth_node_get(berth_node_get(doc, "metadata"), "labels");
        rc = berth_dec_fail(d, berth_node_get(lm, "kubernetes-fleet.io/is-latest-snapshot"),
                            "expected \"true\" or \"false\", got '%s'", latest);
        berth_dec_pop(d, p);
        return rc;
    }
    berth_node *spec = NULL;
    if ((rc = berth_dec_map(d, doc, "spec", 0, &spec)))
        return rc;
    if (spec) {
        static const char *const sf[] = {"policy", "policyHash", NULL};
        size_t prev = berth_dec_push(d, "spec");
        rc = known(d, spec, sf);
        berth_dec_pop(d, prev);
        if (rc)
            return rc;
    }
    if ((rc = fleet_grow((void **)&f->snapshots, &f->capsnapshots, f->nsnapshots + 1,
                         sizeof *f->snapshots)))
        return berth_dec_grow_fail(d, doc, rc, "snapshots");
    f->snapshots[f->nsnapshots++] = ps;
    return 0;
}

/* The placement.kubernetes-fleet.io kinds berth reads (the tags of the
 * dispatch table below). Even codes are cluster-scoped, odd ones their
 * namespaced twins. */
enum { PK_PLACEMENT, PK_RPLACEMENT, PK_BINDING, PK_RBINDING, PK_SNAPSHOT, PK_RSNAPSHOT };

static int load_placement_kind(berth_fleet *f, berth_dec *d, const berth_node *doc, int pk)
{
    int namespaced = pk & 1;
    if (pk <= PK_RPLACEMENT)
        return load_placement(f, d, doc, namespaced);
    if (pk <= PK_RBINDING)
        return load_binding(f, d, doc, namespaced);
    return load_snapshot(f, d, doc, namespaced);
}

/* ---- dispatch: the fleet kinds for berth_dec_walk (io/walk.c) ---- */

static int ld_member(void *f, berth_dec *d, const berth_node *doc, const berth_kind_handler *h)
{
    return load_member(f, d, doc);
}

static int ld_placement(void *f, berth_dec *d, const berth_node *doc, const berth_kind_handler *h)
{
    return load_placement_kind(f, d, doc, h->tag);
}

static const char *const cluster_api[] = {"cluster.kubernetes-fleet.io/v1beta1",
                                           "cluster.kubernetes-fleet.io/v1", NULL};
static const char *const placement_api[] = {"placement.kubernetes-fleet.io/v1beta1",
                                            "placement.kubernetes-fleet.io/v1", NULL};
#define CLUSTER_WANT "cluster.kubernetes-fleet.io/v1beta1 (or /v1)"
#define PLACEMENT_WANT "placement.kubernetes-fleet.io/v1beta1 (or /v1)"
static const char *const top[] = {"apiVersion", "kind", "metadata", "spec", "status", NULL};

static const berth_kind_handler kinds[] = {
    {"MemberCluster", cluster_api, CLUSTER_WANT, top, 0, ld_member, NULL, 0},
    {"ClusterResourcePlacement", placement_api, PLACEMENT_WANT, top, 0, ld_placement, NULL,
     PK_PLACEMENT},
    {"ResourcePlacement", placement_api, PLACEMENT_WANT, top, 0, ld_placement, NULL,
     PK_RPLACEMENT},
    {"ClusterResourceBinding", placement_api, PLACEMENT_WANT, top, 0, ld_placement, NULL,
     PK_BINDING},
    {"ResourceBinding", placement_api, PLACEMENT_WANT, top, 0, ld_placement, NULL, PK_RBINDING},
    {"ClusterSchedulingPolicySnapshot", placement_api, PLACEMENT_WANT, top, 0, ld_placement,
     NULL, PK_SNAPSHOT},
    {"SchedulingPolicySnapshot", placement_api, PLACEMENT_WANT, top, 0, ld_placement, NULL,
     PK_RSNAPSHOT},
};

static const berth_walker walker = {
    "fleet", kinds, sizeof kinds / sizeof *kinds, 0, NULL, NULL, NULL,
};

int berth_fleet_load(berth_fleet *f, const berth_source *src, int strict, berth_error *e)
{
    if (f->finalized)
        return berth_error_set(e, BERTH_EINVAL, "fleet already finalized");
    berth_dec d;
    berth_dec_init(&d, &f->arena, src->path, e);
    d.strict = strict;
    d.skips = &f->skipped;
    return berth_dec_walk_source(&d, src, &walker, f);
}
