/* autoscale/load.c - decodes the autoscaling inputs (SPEC 5, 6.1):
 * berth.io/v1 VirtualNodeGroup, Reservation, Headroom and InstanceType
 * (all strict), List, v1 ConfigMap (the priority expander's, decoded by
 * ca.c; others ignored), the table walked by berth_dec_walk; every other
 * kind goes to berth_kube_load. The planner's per-pod and per-node tables
 * (mirror pods, the safe-to-evict annotations, berth.io/unneeded-since) are
 * then built from the kube model (the object layer decoded the Pods and
 * Nodes once), for the pods berth_kube_expand generates too. finalize resolves
 * Headroom objects to their groups and checks type and zone references.
 * Names are found through berth_nameidx while loading (O(1) per object). */
#include "autoscale/state.h"
#include "k8s/k8s.h"

#include "berth/time.h"
#include "berth/grow.h"

#include <stdlib.h>
#include <string.h>

#define MAX_OBJECTS (1u << 22)

struct berth_headroom_ref {
    const char *vng;              /* NULL: every group */
    berth_headroom h;
    const char *name;
};

void berth_autoscale_init(berth_autoscale *m)
{
    memset(m, 0, sizeof *m);
    berth_kube_init(&m->kube);
}

void berth_autoscale_free(berth_autoscale *m)
{
    for (uint32_t i = 0; i < m->nvngs; i++)
        free(m->vngs[i].headroom);
    free(m->vngs);
    free(m->res);
    free(m->types);
    free(m->pod_info);
    free(m->pending_headroom);
    free(m->node_info);
    free(m->prio);
    berth_nameidx_free(&m->vng_names);
    berth_nameidx_free(&m->res_names);
    berth_nameidx_free(&m->type_names);
    berth_kube_free(&m->kube);
    memset(m, 0, sizeof *m);
}

static int oom(berth_dec *d)
{
    return berth_error_set(d->err, BERTH_ENOMEM, "out of memory");
}

/* One headroom unit spec: cpuPerUnit, memoryPerUnit, gpuPerUnit, numOfUnits. */
static int dec_headroom_unit(berth_dec *d, const berth_node *h, const char *const *extra,
                             berth_headroom *out)
{
    static const char *const hf[] = {"cpuPerUnit", "memoryPerUnit", "gpuPerUnit", "numOfUnits",
                                     "virtualNodeGroup", NULL};
    memset(out, 0, sizeof *out);
    if (h->type != BERTH_NODE_MAP)
        return berth_dec_fail(d, h, "expected a headroom mapping with cpuPerUnit, memoryPerUnit, "
                                    "gpuPerUnit, numOfUnits");
    int rc = berth_dec_known_fields(d, h, extra ? extra : hf);
    if (!rc && !extra && berth_node_get(h, "virtualNodeGroup")) {
        rc = berth_dec_fail_field(d, h, "virtualNodeGroup",
                                  "not allowed inside a VirtualNodeGroup (the group is implied)");
    }
    berth_quantity q = {0};
    if (!rc && !(rc = berth_dec_quantity(d, h, "cpuPerUnit", 0, &q)))
        out->cpu = berth_quantity_milli(q);
    q = (berth_quantity){0};
    if (!rc && !(rc = berth_dec_quantity(d, h, "memoryPerUnit", 0, &q)))
        out->memory = berth_quantity_value(q);
    if (!rc)
        rc = berth_dec_int(d, h, "gpuPerUnit", 0, 0, 1 << 20, &out->gpu);
    if (!rc)
        rc = berth_dec_int(d, h, "numOfUnits", 1, 0, 1 << 20, &out->units);
    if (!rc && (out->cpu < 0 || out->memory < 0))
        rc = berth_dec_fail(d, h, "headroom must not be negative");
    if (!rc && !out->cpu && !out->memory && !out->gpu)
        rc = berth_dec_fail(d, h, "a headroom unit needs cpuPerUnit, memoryPerUnit or gpuPerUnit");
    return rc;
}

static int add_headroom(berth_dec *d, berth_vng *v, const berth_headroom *h)
{
    int rc = berth_grow((void **)&v->headroom, &v->capheadroom, v->nheadroom + 1,
                        sizeof *v->headroom, 1024);
    if (rc == BERTH_ENOMEM) /* an allocation failure is not bad input */
        return berth_error_set(d->err, BERTH_ENOMEM, "%s: out of memory", d->file);
    if (rc)
        return berth_dec_fail(d, NULL, "too many headroom specs for group '%s'", v->name);
    v->headroom[v->nheadroom++] = *h;
    return 0;
}

static int load_vng(berth_autoscale *m, berth_dec *d, const berth_node *doc)
{
    berth_arena *a = &m->kube.arena;
    berth_vng v;
    memset(&v, 0, sizeof v);
    v.max_nodes = BERTH_VNG_UNLIMITED;
    v.spot_percentage = 100;
    v.fallback_to_od = 1;
    v.utilize_reserved = 1;
    berth_node *spec = NULL, *hr = NULL;
    int rc = berth_dec_meta_named(d, a, doc, 1, &v.name, NULL, NULL);
    if (!rc)
        rc = berth_dec_map(d, doc, "spec", 1, &spec);
    if (rc)
        return rc;
    size_t p = berth_dec_push(d, "spec");
    static const char *const sf[] = {"labels", "taints", "instanceTypes", "zones", "minNodes",
                                     "maxNodes", "spotPercentage", "fallbackToOd",
                                     "utilizeReservedInstances", "utilizeCommitments",
                                     "headroom", NULL};
    int64_t maxn = -1;
    if (!(rc = berth_dec_known_fields(d, spec, sf)) &&
        !(rc = berth_dec_labels(d, spec, "labels", &v.labels, 1)) &&
        !(rc = berth_dec_taints_strict(d, a, spec, "taints", &v.taints, &v.ntaints)) &&
        !(rc = berth_dec_strlist(d, a, spec, "instanceTypes", &v.types, &v.ntypes)) &&
        !(rc = berth_dec_strlist(d, a, spec, "zones", &v.zones, &v.nzones)) &&
        !(rc = berth_dec_int(d, spec, "minNodes", 0, 0, 1000000, &v.min_nodes)) &&
        !(rc = berth_dec_int(d, spec, "maxNodes", 0, 0, 1000000, &maxn)) &&
        !(rc = berth_dec_int(d, spec, "spotPercentage", 0, 0, 100, &v.spot_percentage)) &&
        !(rc = berth_dec_bool(d, spec, "fallbackToOd", 0, &v.fallback_to_od)) &&
        !(rc = berth_dec_bool(d, spec, "utilizeReservedInstances", 0, &v.utilize_reserved)) &&
        !(rc = berth_dec_bool(d, spec, "utilizeCommitments", 0, &v.utilize_commitments)))
        rc = berth_dec_seq(d, spec, "headroom", 0, &hr);
    if (!rc && maxn >= 0)
        v.max_nodes = maxn;
    if (!rc && v.max_nodes < v.min_nodes)
        rc = berth_dec_fail(d, berth_node_get(spec, "maxNodes"),
                            "maxNodes (%lld) is below minNodes (%lld)", (long long)v.max_nodes,
                            (long long)v.min_nodes);
    for (size_t i = 0; !rc && hr && i < hr->n; i++) {
        size_t p2 = berth_dec_push(d, "headroom");
        berth_dec_push_index(d, i);
        berth_headroom h;
        if (!(rc = dec_headroom_unit(d, hr->items[i], NULL, &h)))
            rc = add_headroom(d, &v, &h);
        berth_dec_pop(d, p2);
    }
    berth_dec_pop(d, p);
    if (!rc && (rc = berth_nameidx_add(&m->vng_names, v.name, m->nvngs, NULL)))
        rc = rc < 0 ? oom(d)
                    : berth_dec_fail(d, berth_node_get(doc, "metadata"),
                                     "VirtualNodeGroup '%s' appears twice", v.name);
    if (!rc && (rc = berth_grow((void **)&m->vngs, &m->capvngs, m->nvngs + 1, sizeof *m->vngs,
                                MAX_OBJECTS)))
        rc = berth_dec_grow_fail(d, doc, rc, "VirtualNodeGroups");
    if (rc) {
        free(v.headroom);
        return rc;
    }
    m->vngs[m->nvngs++] = v;
    return 0;
}

static int load_reservation(berth_autoscale *m, berth_dec *d, const berth_node *doc)
{
    berth_reservation r;
    memset(&r, 0, sizeof r);
    berth_node *spec = NULL;
    int rc = berth_dec_meta_named(d, &m->kube.arena, doc, 1, &r.name, NULL, NULL);
    if (!rc)
        rc = berth_dec_map(d, doc, "spec", 1, &spec);
    if (rc)
        return rc;
    size_t p = berth_dec_push(d, "spec");
    static const char *const sf[] = {"instanceType", "instanceFamily", "zone", "count",
                                     "hourlyCommitment", NULL};
    if (!(rc = berth_dec_known_fields(d, spec, sf)) &&
        !(rc = berth_dec_str(d, spec, "instanceType", 0, &r.instance_type)) &&
        !(rc = berth_dec_str(d, spec, "instanceFamily", 0, &r.family)) &&
        !(rc = berth_dec_str(d, spec, "zone", 0, &r.zone)) &&
        !(rc = berth_dec_int(d, spec, "count", 0, 1, 1000000, &r.count)))
        rc = berth_dec_number(d, spec, "hourlyCommitment", &r.hourly_commitment);
    if (!rc && (!r.instance_type) == (!r.family))
        rc = berth_dec_fail(d, spec, "exactly one of instanceType and instanceFamily is required");
    if (!rc && (!r.count) == (!berth_node_get(spec, "hourlyCommitment")))
        rc = berth_dec_fail(d, spec, "exactly one of count (reserved instances) and "
                                     "hourlyCommitment (savings plan) is required");
    if (!rc && berth_node_get(spec, "hourlyCommitment") && r.hourly_commitment <= 0)
        rc = berth_dec_fail(d, berth_node_get(spec, "hourlyCommitment"),
                            "hourlyCommitment must be positive");
    berth_dec_pop(d, p);
    if (!rc && (rc = berth_nameidx_add(&m->res_names, r.name, m->nres, NULL)))
        rc = rc < 0 ? oom(d)
                    : berth_dec_fail(d, berth_node_get(doc, "metadata"),
                                     "Reservation '%s' appears twice", r.name);
    if (!rc && (rc = berth_grow((void **)&m->res, &m->capres, m->nres + 1, sizeof *m->res,
                                MAX_OBJECTS)))
        rc = berth_dec_grow_fail(d, doc, rc, "Reservations");
    if (!rc)
        m->res[m->nres++] = r;
    return rc;
}

static int load_headroom(berth_autoscale *m, berth_dec *d, const berth_node *doc)
{
    struct berth_headroom_ref hr;
    memset(&hr, 0, sizeof hr);
    berth_node *spec = NULL;
    int rc = berth_dec_meta_named(d, &m->kube.arena, doc, 1, &hr.name, NULL, NULL);
    if (!rc)
        rc = berth_dec_map(d, doc, "spec", 1, &spec);
    if (rc)
        return rc;
    size_t p = berth_dec_push(d, "spec");
    static const char *const hf[] = {"cpuPerUnit", "memoryPerUnit", "gpuPerUnit", "numOfUnits",
                                     "virtualNodeGroup", NULL};
    if (!(rc = dec_headroom_unit(d, spec, hf, &hr.h)))
        rc = berth_dec_str(d, spec, "virtualNodeGroup", 0, &hr.vng);
    berth_dec_pop(d, p);
    if (!rc && (rc = berth_grow((void **)&m->pending_headroom, &m->cappending_headroom,
                                m->npending_headroom + 1, sizeof *m->pending_headroom, MAX_OBJECTS)))
        rc = berth_dec_grow_fail(d, doc, rc, "Headroom objects");
    if (!rc)
        m->pending_headroom[m->npending_headroom++] = hr;
    return rc;
}

/* ---- dispatch: the autoscaling kinds for berth_dec_walk (io/walk.c) ---- */

typedef struct ctx {
    berth_autoscale *m;
    berth_kdocs kd;              /* kinds for the kube loader */
} ctx;

static int ld_vng(void *c, berth_dec *d, const berth_node *doc, const berth_kind_handler *h)
{
    return load_vng(((ctx *)c)->m, d, doc);
}

static int ld_reservation(void *c, berth_dec *d, const berth_node *doc,
                          const berth_kind_handler *h)
{
    return load_reservation(((ctx *)c)->m, d, doc);
}

static int ld_headroom(void *c, berth_dec *d, const berth_node *doc, const berth_kind_handler *h)
{
    return load_headroom(((ctx *)c)->m, d, doc);
}

/* the priority expander's (ca.c); other ConfigMaps are skipped */
static int ld_configmap(void *c, berth_dec *d, const berth_node *doc, const berth_kind_handler *h)
{
    return capacity_load_priority_configmap(((ctx *)c)->m, d, doc);
}

static int ld_instance_type(void *c, berth_dec *d, const berth_node *doc,
                            const berth_kind_handler *h)
{
    berth_autoscale *m = ((ctx *)c)->m;
    return berth_instance_types_add(d, &m->kube.arena, doc, &m->types, &m->ntypes, &m->captypes,
                                    &m->type_names);
}


/* everything else is the kube loader's (berth_kdocs_forward on ctx->kd) */
static int fwd(void *vc, berth_dec *d, const berth_node *doc, const char *kind)
{
    return berth_kdocs_forward(&((ctx *)vc)->kd, d, doc, kind);
}

static const char *const berth_api[] = {"berth.io/v1", NULL};
static const char *const top[] = {"apiVersion", "kind", "metadata", "spec", NULL};

/* the berth.io kinds are strict; ConfigMap (apiVersion v1) and InstanceType
 * check their own */
static const berth_kind_handler kinds[] = {
    {"VirtualNodeGroup", berth_api, NULL, top, BERTH_KIND_STRICT, ld_vng, NULL, 0},
    {"Reservation", berth_api, NULL, top, BERTH_KIND_STRICT, ld_reservation, NULL, 0},
    {"Headroom", berth_api, NULL, top, BERTH_KIND_STRICT, ld_headroom, NULL, 0},
    {"ConfigMap", NULL, NULL, NULL, 0, ld_configmap, NULL, 0},
    {"InstanceType", berth_api, NULL, NULL, 0, ld_instance_type, NULL, 0},
};

static const berth_walker walker = {
    "autoscale", kinds, sizeof kinds / sizeof *kinds, 0, NULL, fwd, NULL,
};

/* ---- the planner's per-node and per-pod tables, from the kube model ---- */

/* pod_info of kube pod p: mirror, DaemonSet-owned, the restrict-scale-down
 * label and the safe-to-evict annotations (pods berth_kube_expand
 * generated have none). */
static int pod_info_of(void *vm, berth_dec *d, uint32_t row_i, void *row)
{
    (void)d;
    const berth_kpod *p = &((berth_autoscale *)vm)->kube.pods[row_i];
    berth_apod *ap = row;
    ap->mirror = p->mirror;
    ap->daemon = k8s_pod_is_daemon(p);
    const char *r = berth_labels_get(&p->labels, BERTH_RESTRICT_SCALE_DOWN);
    ap->restrict_scale_down = r && !strcmp(r, "true");
    const char *v = berth_kube_annotation(p->annotations, BERTH_SAFE_TO_EVICT);
    ap->safe_to_evict = !v ? -1 : !strcmp(v, "true") ? 1 : !strcmp(v, "false") ? 0 : -1;
    ap->safe_local_volumes = berth_kube_annotation(p->annotations,
                                                   BERTH_SAFE_TO_EVICT_LOCAL_VOLUMES);
    return 0;
}

/* node_info of kube node nd: berth.io/unneeded-since (RFC 3339,
 * cluster-autoscaler mode), an error at the annotation when malformed. */
static int node_info_of(void *vm, berth_dec *d, uint32_t row_i, void *row)
{
    const berth_knode *nd = &((berth_autoscale *)vm)->kube.nodes[row_i];
    berth_anode *an = row;
    memset(an, 0, sizeof *an);
    const char *v = berth_kube_annotation(nd->annotations, BERTH_UNNEEDED_SINCE);
    int64_t ms = 0;
    if (v && berth_time_parse(v, &ms)) {
        size_t p = berth_dec_push(d, "metadata.annotations");
        int rc = berth_dec_fail_field(
            d, nd->annotations, BERTH_UNNEEDED_SINCE,
            "expected an RFC 3339 time such as 2024-05-01T12:00:00Z, got '%s'", v);
        berth_dec_pop(d, p);
        return rc;
    }
    if (v) {
        an->has_unneeded_since = 1;
        an->unneeded_since = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
    }
    return 0;
}

/* Extends node_info and pod_info to the kube model's nodes and pods. */
static int sync_info(berth_autoscale *m, berth_dec *d)
{
    berth_krows nodes = {(void **)&m->node_info, &m->nnode_info, &m->capnode_info,
                         sizeof *m->node_info, node_info_of};
    berth_krows pods = {(void **)&m->pod_info, &m->npod_info, &m->cappod_info,
                        sizeof *m->pod_info, pod_info_of};
    return berth_krows_sync(d, &m->kube, &nodes, &pods, m);
}

int berth_autoscale_load(berth_autoscale *m, const berth_source *src, int strict, berth_error *e)
{
    berth_dec d;
    ctx c = {m, {NULL, 0, 0}};
    int any;
    int rc = berth_kdocs_walk(&m->kube, &d, src, strict, &walker, &c, &c.kd, &any, e);
    return !rc && any ? sync_info(m, &d) : rc;
}

/* streamed: the file at path, or (path NULL) buf[0, len) named name */
static int load_stream(berth_autoscale *m, const char *path, const char *name, const char *buf,
                       size_t len, int strict, berth_error *e)
{
    berth_dec d;
    ctx c = {m, {NULL, 0, 0}};
    int any;
    int rc = path ? berth_kdocs_walk_file(&m->kube, &d, path, strict, &walker, &c, &c.kd, &any, e)
                  : berth_kdocs_walk_buffer(&m->kube, &d, name, buf, len, strict, &walker, &c,
                                            &c.kd, &any, e);
    return !rc && any ? sync_info(m, &d) : rc;
}

int berth_autoscale_load_file(berth_autoscale *m, const char *path, int strict, berth_error *e)
{
    return load_stream(m, path, NULL, NULL, 0, strict, e);
}

/* The group / type named name, -1 when none: through the loading index
 * when it covers the table (a model built in memory has none). */
static int find_vng(const berth_autoscale *m, const char *name)
{
    if (m->vng_names.n != m->nvngs) {
        for (uint32_t i = 0; i < m->nvngs; i++)
            if (!strcmp(m->vngs[i].name, name))
                return (int)i;
        return -1;
    }
    uint32_t v = berth_nameidx_find(&m->vng_names, name);
    return v == BERTH_NAMEIDX_NONE ? -1 : (int)v;
}

static int find_type(const berth_autoscale *m, const char *name)
{
    if (m->type_names.n != m->ntypes)
        return berth_instance_type_find(m->types, m->ntypes, name);
    uint32_t t = berth_nameidx_find(&m->type_names, name);
    return t == BERTH_NAMEIDX_NONE ? -1 : (int)t;
}

static int finalize(berth_autoscale *m, berth_error *e)
{
    /* workloads become pods (pending), priority classes resolve; pod_info
     * stays parallel to the kube pods */
    int erc = berth_kube_expand(&m->kube, e);
    if (erc)
        return erc;
    berth_dec d;
    berth_dec_init(&d, &m->kube.arena, "input", e);
    if ((erc = sync_info(m, &d)))
        return erc;
    for (uint32_t i = 0; i < m->npending_headroom; i++) {
        const struct berth_headroom_ref *h = &m->pending_headroom[i];
        if (h->vng) {
            int v = find_vng(m, h->vng);
            if (v < 0)
                return berth_error_set(e, BERTH_EINVAL,
                                       "Headroom '%s': spec.virtualNodeGroup: no VirtualNodeGroup "
                                       "named '%s'", h->name, h->vng);
            if (add_headroom(&d, &m->vngs[v], &h->h))
                return BERTH_EINVAL;
        } else {
            for (uint32_t v = 0; v < m->nvngs; v++)
                if (add_headroom(&d, &m->vngs[v], &h->h))
                    return BERTH_EINVAL;
        }
    }
    m->npending_headroom = 0;
    for (uint32_t v = 0; v < m->nvngs; v++)
        for (uint32_t t = 0; t < m->vngs[v].ntypes; t++)
            if (find_type(m, m->vngs[v].types[t]) < 0)
                return berth_error_set(e, BERTH_EINVAL,
                                       "VirtualNodeGroup '%s': spec.instanceTypes[%u]: no "
                                       "InstanceType named '%s'", m->vngs[v].name, t,
                                       m->vngs[v].types[t]);
    for (uint32_t r = 0; r < m->nres; r++)
        if (m->res[r].instance_type &&
            find_type(m, m->res[r].instance_type) < 0)
            return berth_error_set(e, BERTH_EINVAL,
                                   "Reservation '%s': spec.instanceType: no InstanceType named '%s'",
                                   m->res[r].name, m->res[r].instance_type);
    if (berth_autoscale_warnings(m)) /* autoscale/warnings.c */
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    return 0;
}

int berth_autoscale_finalize(berth_autoscale *m, berth_error *e)
{
    int rc = finalize(m, e);
    berth_nameidx_free(&m->vng_names); /* loading is over */
    berth_nameidx_free(&m->res_names);
    berth_nameidx_free(&m->type_names);
    return rc;
}
