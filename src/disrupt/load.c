/* disrupt/load.c - decodes the disruption inputs (SPEC 4.1, 6.1):
 * karpenter.sh/v1 NodePool (template, disruption policy, budgets with the
 * 4.1 validation rules) and NodeClaim (nodeName, labels, hash annotations,
 * conditions), berth.io/v1 InstanceType (strict; the shared decoder of
 * core/instance.c), karpenter.azure.com AKSNodeClass (imageFamily,
 * vnetSubnetID, osDiskSizeGB: the fields that drift), List (the table
 * walked by berth_dec_walk); every other kind goes to berth_kube_load.
 * The planner's per-node and per-pod tables (readiness, do-not-disrupt,
 * deletion cost, mirror pods, nominations, capacity) are then built from
 * the kube model (the object layer decoded the Nodes and Pods once), for
 * the pods berth_kube_expand generates too. Duplicate names are found
 * through berth_nameidx (O(1) per object). */
#include "berth/disrupt.h"
#include "berth/time.h"
#include "k8s/k8s.h"
#include "berth/grow.h"
#include "berth/nameidx.h"

#include <stdlib.h>
#include <string.h>

#define MAX_OBJECTS (1u << 22)
#define DND "karpenter.sh/do-not-disrupt"
#define HASH_ANN "karpenter.sh/nodepool-hash"
#define HASH_VER_ANN "karpenter.sh/nodepool-hash-version"
#define CLASS_HASH_ANN "karpenter.azure.com/aksnodeclass-hash"
#define CLASS_HASH_VER_ANN "karpenter.azure.com/aksnodeclass-hash-version"

void berth_disrupt_init(berth_disrupt *m)
{
    memset(m, 0, sizeof *m);
    berth_kube_init(&m->kube);
}

void berth_disrupt_free(berth_disrupt *m)
{
    free(m->pools);
    free(m->claims);
    free(m->types);
    free(m->node_info);
    free(m->pod_info);
    free(m->classes);
    berth_nameidx_free(&m->pool_names);
    berth_nameidx_free(&m->claim_names);
    berth_nameidx_free(&m->class_names);
    berth_nameidx_free(&m->type_names);
    berth_kube_free(&m->kube);
    memset(m, 0, sizeof *m);
}

/* ---- small decoders ---- */

typedef struct ctx {
    berth_disrupt *m;
    berth_dec *d;
    berth_kdocs kd;              /* kinds for the kube loader */
} ctx;

static void *alloc(berth_disrupt *m, size_t n, size_t size)
{
    return berth_arena_alloc(&m->kube.arena, (n ? n : 1) * size);
}

static int oom(berth_dec *d)
{
    return berth_error_set(d->err, BERTH_ENOMEM, "out of memory");
}

static int known(berth_dec *d, const berth_node *m, const char *const *allowed)
{
    return d->strict && m ? berth_dec_known_fields(d, m, allowed) : 0;
}


static int dec_taints(berth_disrupt *m, berth_dec *d, const berth_node *spec, const char *key,
                      berth_taint **out, uint32_t *n)
{
    static const char *const tf[] = {"key", "value", "effect", "timeAdded", NULL};
    return berth_dec_taints(d, &m->kube.arena, spec, key, tf, d->strict, out, n);
}

static int dec_requirements(berth_disrupt *m, berth_dec *d, const berth_node *spec,
                            berth_requirement **out, uint32_t *n, uint32_t **min_values)
{
    berth_node *rs = NULL;
    *out = NULL;
    *n = 0;
    *min_values = NULL;
    int rc = berth_dec_seq(d, spec, "requirements", 0, &rs);
    if (rc || !rs)
        return rc;
    *out = alloc(m, rs->n, sizeof **out);
    *min_values = alloc(m, rs->n, sizeof **min_values);
    if (!*out || !*min_values)
        return oom(d);
    size_t p = berth_dec_push(d, "requirements");
    static const char *const rf[] = {"key", "operator", "values", "minValues", NULL};
    static const char *const ops[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", NULL};
    for (size_t i = 0; !rc && i < rs->n; i++) {
        const berth_node *r = rs->items[i];
        size_t p2 = berth_dec_push_index(d, i);
        berth_requirement q = {0};
        int op = 0;
        berth_node *vals = NULL;
        int64_t minv = 0;
        const char *why = NULL;
        if (r->type != BERTH_NODE_MAP)
            rc = berth_dec_fail(d, r, "expected a requirement mapping with key, operator, values");
        if (!rc && !(rc = known(d, r, rf)) && !(rc = berth_dec_str(d, r, "key", 1, &q.key)) &&
            !(rc = berth_dec_enum(d, r, "operator", 1, ops, &op)) &&
            !(rc = berth_dec_seq(d, r, "values", 0, &vals)))
            rc = berth_dec_int(d, r, "minValues", 0, 1, 50, &minv);
        if (!rc && vals) {
            q.values = alloc(m, vals->n, sizeof *q.values);
            if (!q.values)
                rc = oom(d);
            size_t p3 = berth_dec_push(d, "values");
            for (size_t j = 0; !rc && j < vals->n; j++) {
                size_t p4 = berth_dec_push_index(d, j);
                rc = berth_dec_node_str(d, vals->items[j], &q.values[q.nvalues]);
                if (!rc)
                    q.nvalues++;
                berth_dec_pop(d, p4);
            }
            berth_dec_pop(d, p3);
        }
        q.op = (berth_sel_op)op;
        if (!rc && berth_requirement_validate(&q, &why))
            rc = berth_dec_fail(d, r, "invalid requirement: %s", why);
        berth_dec_pop(d, p2);
        if (!rc) {
            (*min_values)[*n] = (uint32_t)minv;
            (*out)[(*n)++] = q;
        }
    }
    berth_dec_pop(d, p);
    return rc;
}

/* A Go duration (or Never when allow_never) at key; absent: *out kept. */
static int dec_duration(berth_dec *d, const berth_node *mp, const char *key, int allow_never,
                        int64_t *out)
{
    const char *s = NULL;
    int rc = berth_dec_str(d, mp, key, 0, &s);
    if (rc || !s)
        return rc;
    int64_t v = berth_duration_parse(s);
    if (v < 0 || (!allow_never && v == BERTH_DURATION_NEVER)) {
        size_t p = berth_dec_push(d, key);
        rc = berth_dec_fail(d, berth_node_get(mp, key),
                            "expected a duration such as 30s, 720h%s, got '%s'",
                            allow_never ? " or Never" : "", s);
        berth_dec_pop(d, p);
        return rc;
    }
    *out = v;
    return 0;
}

static int dec_time(berth_dec *d, const berth_node *mp, const char *key, int64_t *out, int *has)
{
    const char *s = NULL;
    if (has)
        *has = 0;
    int rc = berth_dec_str(d, mp, key, 0, &s);
    if (rc || !s)
        return rc;
    int64_t ms;
    if (berth_time_parse(s, &ms)) {
        size_t p = berth_dec_push(d, key);
        rc = berth_dec_fail(d, berth_node_get(mp, key),
                            "expected an RFC 3339 time such as 2024-05-01T12:00:00Z, got '%s'", s);
        berth_dec_pop(d, p);
        return rc;
    }
    *out = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
    if (has)
        *has = 1;
    return 0;
}

static const char *const meta_fields[] = {
    "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
    "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels",
    "annotations", "ownerReferences", "finalizers", "managedFields", NULL};

static int dec_meta(berth_disrupt *m, berth_dec *d, const berth_node *doc, berth_node **meta,
                    const char **name, berth_labels *labels, berth_labels *ann)
{
    int rc = berth_dec_map(d, doc, "metadata", 1, meta);
    if (rc)
        return rc;
    size_t p = berth_dec_push(d, "metadata");
    if (!(rc = known(d, *meta, meta_fields)) && !(rc = berth_dec_str(d, *meta, "name", 1, name)) &&
        !**name)
        rc = berth_dec_fail(d, *meta, "name: must not be empty");
    if (!rc)
        rc = berth_dec_labels(d, *meta, "labels", labels, 1);
    if (!rc)
        rc = berth_dec_labels(d, *meta, "annotations", ann, 0);
    berth_dec_pop(d, p);
    return rc;
}

/* ---- NodePool ---- */

static int dec_budgets(berth_disrupt *m, berth_dec *d, const berth_node *dis, berth_nodepool *np)
{
    berth_node *bs = NULL;
    int rc = berth_dec_seq(d, dis, "budgets", 0, &bs);
    if (rc)
        return rc;
    if (!bs) { /* default: [{nodes: "10%"}] */
        np->budgets = alloc(m, 1, sizeof *np->budgets);
        if (!np->budgets)
            return oom(d);
        np->budgets[0] = (berth_dbudget){"10%", 0, NULL, 0};
        np->nbudgets = 1;
        return 0;
    }
    size_t p = berth_dec_push(d, "budgets");
    if (bs->n > BERTH_DISRUPT_MAX_BUDGETS)
        rc = berth_dec_fail(d, bs, "at most %d budgets, got %u", BERTH_DISRUPT_MAX_BUDGETS, bs->n);
    np->budgets = alloc(m, bs->n, sizeof *np->budgets);
    if (!rc && !np->budgets)
        rc = oom(d);
    static const char *const bf[] = {"nodes", "reasons", "schedule", "duration", NULL};
    for (size_t i = 0; !rc && i < bs->n; i++) {
        const berth_node *b = bs->items[i];
        size_t p2 = berth_dec_push_index(d, i);
        berth_dbudget bd = {"10%", 0, NULL, 0};
        const char *dur = NULL;
        berth_node *reasons = NULL;
        if (b->type != BERTH_NODE_MAP)
            rc = berth_dec_fail(d, b, "expected a budget mapping with nodes, reasons, schedule, duration");
        if (!rc && !(rc = known(d, b, bf)) && !(rc = berth_dec_str(d, b, "nodes", 0, &bd.nodes)) &&
            !(rc = berth_dec_str(d, b, "schedule", 0, &bd.schedule)) &&
            !(rc = berth_dec_str(d, b, "duration", 0, &dur)))
            rc = berth_dec_seq(d, b, "reasons", 0, &reasons);
        if (!rc && !berth_budget_nodes_valid(bd.nodes)) {
            rc = berth_dec_fail_field(d, b, "nodes",
                                      "expected a count such as \"5\" or a percentage such as "
                                      "\"20%%\" (^((100|[0-9]{1,2})%%|[0-9]+)$), got '%s'",
                                      bd.nodes);
        }
        if (!rc && (!bd.schedule) != (!dur))
            rc = berth_dec_fail(d, b, "schedule and duration must be set together");
        berth_cron cr;
        const char *why = NULL;
        if (!rc && bd.schedule && berth_cron_parse(bd.schedule, &cr, &why)) {
            rc = berth_dec_fail_field(d, b, "schedule", "invalid schedule '%s': %s",
                                      bd.schedule, why);
        }
        if (!rc && dur && (bd.duration = berth_budget_duration_parse(dur)) < 0) {
            rc = berth_dec_fail_field(d, b, "duration",
                                      "expected a duration in hours and minutes such as 10m or "
                                      "1h30m, got '%s'", dur);
        }
        static const char *const rn[] = {"Empty", "Drifted", "Underutilized", NULL};
        for (size_t j = 0; !rc && reasons && j < reasons->n; j++) {
            size_t p3 = berth_dec_push(d, "reasons");
            berth_dec_push_index(d, j);
            const char *r = NULL;
            int found = -1;
            rc = berth_dec_node_str(d, reasons->items[j], &r);
            for (int k = 0; !rc && rn[k]; k++)
                if (!strcmp(rn[k], r))
                    found = k;
            if (!rc && found < 0)
                rc = berth_dec_fail(d, reasons->items[j],
                                    "expected Underutilized, Empty or Drifted, got '%s'", r);
            if (!rc)
                bd.reasons |= 1u << found;
            berth_dec_pop(d, p3);
        }
        berth_dec_pop(d, p2);
        if (!rc)
            np->budgets[np->nbudgets++] = bd;
    }
    berth_dec_pop(d, p);
    return rc;
}

/* A ResourceList entry in the limits' units: cpu in millicores, the rest
 * in whole units rounded up. */
static berth_dquantity quantity_of(const berth_kquantity *q)
{
    return (berth_dquantity){q->name, !strcmp(q->name, "cpu") ? berth_quantity_milli(q->q)
                                                              : berth_quantity_value(q->q)};
}

/* NodePool spec.limits (k8s_dec_quantities) in those units; absent: none. */
static int dec_quantities(berth_disrupt *m, berth_dec *d, const berth_node *parent,
                          const char *key, berth_dquantity **out, uint32_t *n)
{
    berth_kquantity *qs = NULL;
    uint32_t nq = 0;
    *out = NULL;
    *n = 0;
    int rc = k8s_dec_quantities(&m->kube, d, parent, key, &qs, &nq);
    if (rc || !qs)
        return rc;
    if (!(*out = alloc(m, nq, sizeof **out)))
        return oom(d);
    for (uint32_t i = 0; i < nq; i++)
        (*out)[i] = quantity_of(&qs[i]);
    *n = nq;
    return 0;
}

static int load_nodepool(berth_disrupt *m, berth_dec *d, const berth_node *doc)
{
    berth_nodepool np;
    memset(&np, 0, sizeof np);
    np.expire_after = 720 * 3600;
    np.termination_grace = -1;
    berth_node *meta = NULL, *spec = NULL, *tmpl = NULL, *tmeta = NULL, *tspec = NULL, *dis = NULL,
               *ref = NULL;
    berth_labels labels, ann;
    int rc = dec_meta(m, d, doc, &meta, &np.name, &labels, &ann);
    if (rc)
        return rc;
    np.hash_annotation = berth_labels_get(&ann, HASH_ANN);
    np.hash_version = berth_labels_get(&ann, HASH_VER_ANN);
    if ((rc = berth_dec_map(d, doc, "spec", 1, &spec)))
        return rc;
    size_t p = berth_dec_push(d, "spec");
    static const char *const sf[] = {"template", "disruption", "limits", "weight", "replicas", NULL};
    if (!(rc = known(d, spec, sf)) && !(rc = berth_dec_map(d, spec, "template", 1, &tmpl)) &&
        !(rc = berth_dec_map(d, spec, "disruption", 0, &dis)) &&
        !(rc = berth_dec_int(d, spec, "weight", 0, 1, 100, &np.weight)))
        rc = dec_quantities(m, d, spec, "limits", &np.limits, &np.nlimits);
    if (!rc) {
        size_t p2 = berth_dec_push(d, "template");
        static const char *const tf[] = {"metadata", "spec", NULL};
        static const char *const tmf[] = {"labels", "annotations", NULL};
        static const char *const tsf[] = {"nodeClassRef", "taints", "startupTaints",
                                          "requirements", "expireAfter",
                                          "terminationGracePeriod", "kubelet", NULL};
        if (!(rc = known(d, tmpl, tf)) && !(rc = berth_dec_map(d, tmpl, "metadata", 0, &tmeta)) &&
            !(rc = berth_dec_map(d, tmpl, "spec", 1, &tspec)) && tmeta) {
            size_t p3 = berth_dec_push(d, "metadata");
            if (!(rc = known(d, tmeta, tmf)) &&
                !(rc = berth_dec_labels(d, tmeta, "labels", &np.labels, 1)))
                rc = berth_dec_labels(d, tmeta, "annotations", &np.annotations, 0);
            berth_dec_pop(d, p3);
        }
        if (!rc) {
            size_t p3 = berth_dec_push(d, "spec");
            if (!(rc = known(d, tspec, tsf)) && !(rc = berth_dec_map(d, tspec, "nodeClassRef", 0, &ref)) &&
                !(rc = dec_taints(m, d, tspec, "taints", &np.taints, &np.ntaints)) &&
                !(rc = dec_taints(m, d, tspec, "startupTaints", &np.startup_taints,
                                  &np.nstartup_taints)) &&
                !(rc = dec_requirements(m, d, tspec, &np.reqs, &np.nreqs, &np.min_values)) &&
                !(rc = dec_duration(d, tspec, "expireAfter", 1, &np.expire_after)))
                rc = dec_duration(d, tspec, "terminationGracePeriod", 0, &np.termination_grace);
            if (!rc && ref) {
                size_t p4 = berth_dec_push(d, "nodeClassRef");
                static const char *const rf[] = {"group", "kind", "name", NULL};
                if (!(rc = known(d, ref, rf)) && !(rc = berth_dec_str(d, ref, "group", 0, &np.class_group)) &&
                    !(rc = berth_dec_str(d, ref, "kind", 0, &np.class_kind)))
                    rc = berth_dec_str(d, ref, "name", 0, &np.class_name);
                berth_dec_pop(d, p4);
            }
            berth_dec_pop(d, p3);
        }
        berth_dec_pop(d, p2);
    }
    if (!rc && dis) {
        size_t p2 = berth_dec_push(d, "disruption");
        static const char *const df[] = {"consolidationPolicy", "consolidateAfter", "budgets", NULL};
        static const char *const pol[] = {"WhenEmptyOrUnderutilized", "WhenEmpty", "Balanced", NULL};
        int pv = 0;
        if (!(rc = known(d, dis, df)) && !(rc = berth_dec_enum(d, dis, "consolidationPolicy", 0, pol, &pv)) &&
            !(rc = dec_duration(d, dis, "consolidateAfter", 1, &np.consolidate_after)))
            rc = dec_budgets(m, d, dis, &np);
        np.policy = (berth_consolidation_policy)pv;
        berth_dec_pop(d, p2);
    } else if (!rc) {
        rc = dec_budgets(m, d, spec, &np); /* no disruption block: the default budget */
    }
    berth_dec_pop(d, p);
    if (rc)
        return rc;
    if ((rc = berth_nameidx_add(&m->pool_names, np.name, m->npools, NULL)))
        return rc < 0 ? oom(d) : berth_dec_fail(d, meta, "NodePool '%s' appears twice", np.name);
    if ((rc = berth_grow((void **)&m->pools, &m->cappools, m->npools + 1, sizeof *m->pools,
                         MAX_OBJECTS)))
        return berth_dec_grow_fail(d, doc, rc, "NodePools");
    m->pools[m->npools++] = np;
    return 0;
}

/* ---- NodeClaim ---- */

static int dec_conditions(berth_dec *d, const berth_node *status, berth_nodeclaim *c)
{
    berth_node *cs = NULL;
    int rc = berth_dec_seq(d, status, "conditions", 0, &cs);
    if (rc || !cs)
        return rc;
    size_t p = berth_dec_push(d, "conditions");
    for (size_t i = 0; !rc && i < cs->n; i++) {
        const berth_node *cn = cs->items[i];
        size_t p2 = berth_dec_push_index(d, i);
        const char *type = NULL, *st = NULL;
        int64_t at = 0;
        if (cn->type != BERTH_NODE_MAP)
            rc = berth_dec_fail(d, cn, "expected a condition mapping with type and status");
        if (!rc && !(rc = berth_dec_str(d, cn, "type", 1, &type)) &&
            !(rc = berth_dec_str(d, cn, "status", 1, &st)))
            rc = dec_time(d, cn, "lastTransitionTime", &at, NULL);
        if (!rc && !strcmp(st, "True")) {
            if (!strcmp(type, "Initialized")) {
                c->initialized = 1;
                c->initialized_at = at;
            } else if (!strcmp(type, "Drifted")) {
                c->drifted = 1;
                c->drifted_at = at;
            } else if (!strcmp(type, "InstanceTerminating")) {
                c->instance_terminating = 1;
            }
        }
        berth_dec_pop(d, p2);
    }
    berth_dec_pop(d, p);
    return rc;
}

static int load_nodeclaim(berth_disrupt *m, berth_dec *d, const berth_node *doc)
{
    berth_nodeclaim c;
    memset(&c, 0, sizeof c);
    berth_node *meta = NULL, *spec = NULL, *status = NULL;
    berth_labels ann;
    int rc = dec_meta(m, d, doc, &meta, &c.name, &c.labels, &ann);
    if (rc)
        return rc;
    c.nodepool = berth_labels_get(&c.labels, "karpenter.sh/nodepool");
    c.hash = berth_labels_get(&ann, HASH_ANN);
    c.hash_version = berth_labels_get(&ann, HASH_VER_ANN);
    c.class_hash = berth_labels_get(&ann, CLASS_HASH_ANN);
    c.class_hash_version = berth_labels_get(&ann, CLASS_HASH_VER_ANN);
    size_t p = berth_dec_push(d, "metadata");
    int64_t ignored;
    if (!(rc = dec_time(d, meta, "creationTimestamp", &c.created, &c.has_created)))
        rc = dec_time(d, meta, "deletionTimestamp", &ignored, &c.deleting);
    berth_dec_pop(d, p);
    if (!rc && !(rc = berth_dec_map(d, doc, "spec", 0, &spec)))
        rc = berth_dec_map(d, doc, "status", 0, &status);
    if (!rc && spec) {
        p = berth_dec_push(d, "spec");
        int64_t tgp = 0;
        rc = dec_duration(d, spec, "terminationGracePeriod", 0, &tgp);
        c.has_termination_grace = berth_node_get(spec, "terminationGracePeriod") != NULL;
        c.termination_grace = tgp;
        berth_dec_pop(d, p);
    }
    if (!rc && status) {
        p = berth_dec_push(d, "status");
        if (!(rc = berth_dec_str(d, status, "nodeName", 0, &c.node_name)) &&
            !(rc = dec_time(d, status, "lastPodEventTime", &c.last_pod_event, NULL)))
            rc = dec_conditions(d, status, &c);
        berth_dec_pop(d, p);
    }
    if (rc)
        return rc;
    if (!c.node_name || !*c.node_name)
        c.node_name = c.name;
    if ((rc = berth_nameidx_add(&m->claim_names, c.name, m->nclaims, NULL)))
        return rc < 0 ? oom(d) : berth_dec_fail(d, meta, "NodeClaim '%s' appears twice", c.name);
    if ((rc = berth_grow_append((void **)&m->claims, &m->capclaims, m->nclaims + 1,
                                sizeof *m->claims, MAX_OBJECTS)))
        return berth_dec_grow_fail(d, doc, rc, "NodeClaims");
    m->claims[m->nclaims++] = c;
    return 0;
}

/* InstanceType (berth.io/v1, strict): the shared decoder in core/instance.c */

/* ---- AKSNodeClass ---- */

static int load_aksnodeclass(berth_disrupt *m, berth_dec *d, const berth_node *doc)
{
    berth_aksnodeclass k;
    memset(&k, 0, sizeof k);
    k.image_family = "Ubuntu2204";
    k.vnet_subnet_id = "";
    k.os_disk_size_gb = 128;
    berth_node *meta = NULL, *spec = NULL;
    berth_labels labels, ann;
    int rc = dec_meta(m, d, doc, &meta, &k.name, &labels, &ann);
    if (!rc)
        rc = berth_dec_map(d, doc, "spec", 0, &spec);
    if (rc)
        return rc;
    k.hash_annotation = berth_labels_get(&ann, CLASS_HASH_ANN);
    k.hash_version = berth_labels_get(&ann, CLASS_HASH_VER_ANN);
    if (spec) {
        size_t p = berth_dec_push(d, "spec");
        static const char *const sf[] = {"vnetSubnetID", "osDiskSizeGB", "imageFamily",
                                         "imageVersion", "fipsMode", "tags", "kubelet", "maxPods",
                                         "security", "localDNS", "artifactStreaming", NULL};
        static const char *const fam[] = {"Ubuntu", "Ubuntu2204", "Ubuntu2404", "AzureLinux", NULL};
        int f = -1;
        if (!(rc = known(d, spec, sf)) && !(rc = berth_dec_enum(d, spec, "imageFamily", 0, fam, &f)) &&
            !(rc = berth_dec_str(d, spec, "vnetSubnetID", 0, &k.vnet_subnet_id)))
            rc = berth_dec_int(d, spec, "osDiskSizeGB", 0, 30, 2048, &k.os_disk_size_gb);
        if (f >= 0)
            k.image_family = fam[f];
        berth_dec_pop(d, p);
        if (rc)
            return rc;
    }
    if ((rc = berth_nameidx_add(&m->class_names, k.name, m->nclasses, NULL)))
        return rc < 0 ? oom(d) : berth_dec_fail(d, meta, "AKSNodeClass '%s' appears twice", k.name);
    if ((rc = berth_grow((void **)&m->classes, &m->capclasses, m->nclasses + 1, sizeof *m->classes,
                         MAX_OBJECTS)))
        return berth_dec_grow_fail(d, doc, rc, "AKSNodeClasses");
    m->classes[m->nclasses++] = k;
    return 0;
}

/* ---- dispatch: the disruption kinds for berth_dec_walk (io/walk.c) ---- */

static int ld_nodepool(void *c, berth_dec *d, const berth_node *doc, const berth_kind_handler *h)
{
    return load_nodepool(((ctx *)c)->m, d, doc);
}

static int ld_nodeclaim(void *c, berth_dec *d, const berth_node *doc, const berth_kind_handler *h)
{
    return load_nodeclaim(((ctx *)c)->m, d, doc);
}

static int ld_aksnodeclass(void *c, berth_dec *d, const berth_node *doc,
                           const berth_kind_handler *h)
{
    return load_aksnodeclass(((ctx *)c)->m, d, doc);
}

static int ld_instance_type(void *vc, berth_dec *d, const berth_node *doc,
                            const berth_kind_handler *h)
{
    berth_disrupt *m = ((ctx *)vc)->m;
    return berth_instance_types_add(d, &m->kube.arena, doc, &m->types, &m->ntypes, &m->captypes,
                                    &m->type_names);
}


static const char *const karpenter_api[] = {"karpenter.sh/v1", NULL};
static const char *const aks_api[] = {"karpenter.azure.com/v1beta1",
                                      "karpenter.azure.com/v1alpha2", NULL};
/* everything else is the kube loader's (berth_kdocs_forward on ctx->kd) */
static int fwd(void *vc, berth_dec *d, const berth_node *doc, const char *kind)
{
    return berth_kdocs_forward(&((ctx *)vc)->kd, d, doc, kind);
}

static const char *const berth_api[] = {"berth.io/v1", NULL};
static const char *const top[] = {"apiVersion", "kind", "metadata", "spec", "status", NULL};

/* InstanceType checks its own fields (always strict, core/instance.c) */
static const berth_kind_handler kinds[] = {
    {"NodePool", karpenter_api, NULL, top, 0, ld_nodepool, NULL, 0},
    {"NodeClaim", karpenter_api, NULL, top, 0, ld_nodeclaim, NULL, 0},
    {"AKSNodeClass", aks_api, NULL, top, 0, ld_aksnodeclass, NULL, 0},
    {"InstanceType", berth_api, NULL, NULL, 0, ld_instance_type, NULL, 0},
};

static const berth_walker walker = {
    "disrupt", kinds, sizeof kinds / sizeof *kinds, 0, NULL, fwd, NULL,
};

/* ---- the planner's per-node and per-pod tables, from the kube model ---- */

/* node_info of kube node nd (ready, deletion, do-not-disrupt, the
 * initialised label, status.capacity in the limits' units). */
static int node_info_of(void *vm, berth_dec *d, uint32_t row_i, void *row)
{
    berth_disrupt *m = vm;
    const berth_knode *nd = &m->kube.nodes[row_i];
    berth_dnode *dn = row;
    memset(dn, 0, sizeof *dn);
    dn->ready = !nd->not_ready;
    const char *v = berth_kube_annotation(nd->annotations, DND);
    dn->do_not_disrupt = v && !strcmp(v, "true");
    dn->deleting = nd->deleting;
    v = berth_labels_get(&nd->labels, "karpenter.sh/initialized");
    dn->initialized_label = v && !strcmp(v, "true");
    if (!nd->ncapacity)
        return 0;
    dn->capacity = alloc(m, nd->ncapacity, sizeof *dn->capacity);
    if (!dn->capacity)
        return oom(d);
    for (uint32_t i = 0; i < nd->ncapacity; i++)
        dn->capacity[i] = quantity_of(&nd->capacity[i]);
    dn->ncapacity = nd->ncapacity;
    return 0;
}

/* pod_info of kube pod p: its annotations (pod-deletion-cost, an error at
 * the pod's document when it is no int32; do-not-disrupt), readiness,
 * mirror, start and nomination. Pods berth_kube_expand generated have none
 * of these. */
static int pod_info_of(void *vm, berth_dec *d, uint32_t row_i, void *row)
{
    const berth_kpod *p = &((berth_disrupt *)vm)->kube.pods[row_i];
    berth_dpod *dp = row;
    memset(dp, 0, sizeof *dp);
    dp->ready = p->ready;
    dp->mirror = p->mirror;
    const char *v = berth_kube_annotation(p->annotations, "controller.kubernetes.io/pod-deletion-cost");
    if (v) {
        char *end;
        long long x = strtoll(v, &end, 10);
        if (*end || !*v || x < INT32_MIN || x > INT32_MAX) {
            berth_node at = {.line = p->line, .col = p->col, .str = ""};
            return berth_dec_fail(d, &at, "metadata.annotations.controller.kubernetes.io/"
                                          "pod-deletion-cost: expected an int32, got '%s'", v);
        }
        dp->deletion_cost = x;
    }
    v = berth_kube_annotation(p->annotations, DND);
    int64_t ns = 0;
    if (v && !strcmp(v, "true"))
        dp->dnd = 1;
    else if (v && !berth_go_duration_parse(v, &ns) && ns > 0) {
        dp->dnd = 2; /* time.ParseDuration; <= 0 or invalid: as if absent (upstream) */
        dp->dnd_ns = ns;
        dp->dnd_seconds = ns / 1000000000;
    }
    dp->started = p->has_started ? p->started : p->created;
    dp->has_start_time = p->has_started;
    dp->nominated = p->nominated;
    return 0;
}

/* Extends node_info and pod_info to the kube model's nodes and pods. */
static int sync_info(berth_disrupt *m, berth_dec *d)
{
    berth_krows nodes = {(void **)&m->node_info, &m->nnode_info, &m->capnode_info,
                         sizeof *m->node_info, node_info_of};
    berth_krows pods = {(void **)&m->pod_info, &m->npod_info, &m->cappod_info,
                        sizeof *m->pod_info, pod_info_of};
    return berth_krows_sync(d, &m->kube, &nodes, &pods, m);
}

int berth_disrupt_load(berth_disrupt *m, const berth_source *src, int strict, berth_error *e)
{
    berth_dec d;
    ctx c = {m, &d, {NULL, 0, 0}};
    int any;
    int rc = berth_kdocs_walk(&m->kube, &d, src, strict, &walker, &c, &c.kd, &any, e);
    return !rc && any ? sync_info(m, &d) : rc;
}

/* streamed: the file at path, or (path NULL) buf[0, len) named name */
static int load_stream(berth_disrupt *m, const char *path, const char *name, const char *buf,
                       size_t len, int strict, berth_error *e)
{
    berth_dec d;
    ctx c = {m, &d, {NULL, 0, 0}};
    int any;
    int rc = path ? berth_kdocs_walk_file(&m->kube, &d, path, strict, &walker, &c, &c.kd, &any, e)
                  : berth_kdocs_walk_buffer(&m->kube, &d, name, buf, len, strict, &walker, &c,
                                            &c.kd, &any, e);
    return !rc && any ? sync_info(m, &d) : rc;
}

int berth_disrupt_load_file(berth_disrupt *m, const char *path, int strict, berth_error *e)
{
    return load_stream(m, path, NULL, NULL, 0, strict, e);
}

int berth_disrupt_load_buffer(berth_disrupt *m, const char *name, const char *buf, size_t len,
                              int strict, berth_error *e)
{
    return load_stream(m, NULL, name, buf, len, strict, e);
}

int berth_disrupt_finalize(berth_disrupt *m, berth_error *e)
{
    /* workloads become pods (pending, not ready), priority classes resolve;
     * pod_info stays parallel to the kube pods */
    berth_nameidx_free(&m->pool_names); /* loading is over */
    berth_nameidx_free(&m->claim_names);
    berth_nameidx_free(&m->class_names);
    berth_nameidx_free(&m->type_names);
    int rc = berth_kube_expand(&m->kube, e);
    if (rc)
        return rc;
    berth_dec d;
    berth_dec_init(&d, &m->kube.arena, "input", e);
    if ((rc = sync_info(m, &d)))
        return rc;
    for (uint32_t i = 0; i < m->npools; i++)
        berth_nodepool_hash(&m->pools[i], m->pools[i].hash);
    for (uint32_t i = 0; i < m->nclasses; i++)
        berth_aksnodeclass_hash(&m->classes[i], m->classes[i].hash);
    if (berth_disrupt_warnings(m)) /* disrupt/warnings.c */
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    return 0;
}
