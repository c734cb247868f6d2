/* core/instance.c - the instance catalog shared by disruption and
 * autoscaling: capacity type names, the berth.io/v1 InstanceType decoder
 * (strict: capacity cpu/memory/pods/GPUs, optional family and labels,
 * offerings with zone, capacityType, price, available, interruptionRate;
 * the node overhead fields, computed in overhead.c; derived labels in
 * instance_labels.c) and lookups. */
#include "berth/doc.h"
#include "berth/instance.h"

#include "berth/grow.h"

#include <string.h>

#define MAX_TYPES (1u << 20)

int berth_capacity_type_parse(const char *s)
{
    if (!s)
        return -1;
    if (!strcmp(s, "reserved"))
        return BERTH_CT_RESERVED;
    if (!strcmp(s, "spot"))
        return BERTH_CT_SPOT;
    if (!strcmp(s, "on-demand"))
        return BERTH_CT_ON_DEMAND;
    return -1;
}

const char *berth_capacity_type_name(berth_capacity_type c)
{
    switch (c) {
    case BERTH_CT_RESERVED: return "reserved";
    case BERTH_CT_SPOT: return "spot";
    case BERTH_CT_ON_DEMAND: return "on-demand";
    case BERTH_CT_COUNT: break;
    }
    return "?";
}

/* A map of cpu / memory quantities at key into out[0] (millicores) and
 * out[1] (bytes); a key absent keeps its value. memory_only: only memory. */
static int dec_reserve(berth_dec *d, const berth_node *spec, const char *key, int memory_only,
                       int64_t out[2])
{
    berth_node *m = NULL;
    int rc = berth_dec_map(d, spec, key, 0, &m);
    if (rc || !m)
        return rc;
    static const char *const both[] = {"cpu", "memory", NULL};
    static const char *const mem[] = {"memory", NULL};
    size_t p = berth_dec_push(d, key);
    berth_quantity q = {0};
    rc = berth_dec_known_fields(d, m, memory_only ? mem : both);
    if (!rc && !memory_only && berth_node_get(m, "cpu") &&
        !(rc = berth_dec_quantity(d, m, "cpu", 1, &q))) {
        out[0] = berth_quantity_milli(q);
        if (out[0] < 0)
            rc = berth_dec_fail(d, berth_node_get(m, "cpu"), "cpu must not be negative");
    }
    if (!rc && berth_node_get(m, "memory") && !(rc = berth_dec_quantity(d, m, "memory", 1, &q))) {
        out[1] = berth_quantity_value(q);
        if (out[1] < 0)
            rc = berth_dec_fail(d, berth_node_get(m, "memory"), "memory must not be negative");
    }
    berth_dec_pop(d, p);
    return rc;
}

/* spec.provider, maxPods, enis, ipv4PerENI, kubeReserved, systemReserved,
 * evictionThreshold (core/instance_overhead.c computes the allocatable). */
static int dec_overhead(berth_dec *d, const berth_node *spec, berth_instance_type *it)
{
    static const char *const prov[] = {"none", "aws", "azure", NULL};
    int pv = -1;
    int64_t evict[2] = {0, -1};
    it->max_pods = -1;
    it->kube_reserved[0] = it->kube_reserved[1] = -1;
    int rc = berth_dec_enum(d, spec, "provider", 0, prov, &pv);
    if (!rc)
        rc = berth_dec_int(d, spec, "maxPods", 0, 0, 1000000, &it->max_pods);
    if (!rc)
        rc = berth_dec_int(d, spec, "enis", 0, 1, 1024, &it->enis);
    if (!rc)
        rc = berth_dec_int(d, spec, "ipv4PerENI", 0, 1, 1024, &it->ipv4_per_eni);
    if (!rc && (it->enis > 0) != (it->ipv4_per_eni > 0))
        rc = berth_dec_fail(d, spec, "enis and ipv4PerENI go together (AWS max pods: enis x "
                                     "(ipv4PerENI - 1) + 2)");
    if (!rc)
        rc = dec_reserve(d, spec, "kubeReserved", 0, it->kube_reserved);
    if (!rc)
        rc = dec_reserve(d, spec, "systemReserved", 0, it->system_reserved);
    if (!rc)
        rc = dec_reserve(d, spec, "evictionThreshold", 1, evict);
    it->eviction_memory = evict[1];
    it->provider = pv >= 0 ? (berth_provider)pv : berth_instance_provider_of_name(it->name);
    return rc;
}

int berth_instance_type_decode(berth_dec *d, berth_arena *a, const berth_node *doc,
                               berth_instance_type *out)
{
    berth_instance_type it;
    memset(&it, 0, sizeof it);
    memset(out, 0, sizeof *out);
    berth_node *spec = NULL, *cap = NULL, *offs = NULL;
    static const char *const top[] = {"apiVersion", "kind", "metadata", "spec", NULL};
    int rc = berth_dec_known_fields(d, doc, top);
    if (!rc)
        rc = berth_dec_meta_named(d, a, doc, 1, &it.name, NULL, NULL);
    if (!rc)
        rc = berth_dec_map(d, doc, "spec", 1, &spec);
    if (rc)
        return rc;
    size_t p = berth_dec_push(d, "spec");
    static const char *const sf[] = {"capacity",       "offerings",        "family",     "labels",
                                     "provider",       "maxPods",          "enis",       "ipv4PerENI",
                                     "kubeReserved",   "systemReserved",   "evictionThreshold", NULL};
    static const char *const cf[] = {"cpu", "memory", "pods", "nvidia.com/gpu", NULL};
    static const char *const of[] = {"zone", "capacityType", "price", "available",
                                     "interruptionRate", NULL};
    if (!(rc = berth_dec_known_fields(d, spec, sf)) &&
        !(rc = berth_dec_str(d, spec, "family", 0, &it.family)) &&
        !(rc = berth_dec_labels(d, spec, "labels", &it.labels, 1)) &&
        !(rc = berth_dec_map(d, spec, "capacity", 1, &cap)) &&
        !(rc = berth_dec_seq(d, spec, "offerings", 1, &offs))) {
        size_t p2 = berth_dec_push(d, "capacity");
        berth_quantity q = {0};
        it.pods = 110;
        if (!(rc = berth_dec_known_fields(d, cap, cf)) &&
            !(rc = berth_dec_quantity(d, cap, "cpu", 1, &q))) {
            it.cpu = berth_quantity_milli(q);
            if (!(rc = berth_dec_quantity(d, cap, "memory", 1, &q)))
                it.memory = berth_quantity_value(q);
        }
        if (!rc)
            rc = berth_dec_int(d, cap, "pods", 0, 0, 1000000, &it.pods);
        if (!rc)
            rc = berth_dec_int(d, cap, "nvidia.com/gpu", 0, 0, 1 << 20, &it.gpus);
        if (!rc && (it.cpu < 0 || it.memory < 0))
            rc = berth_dec_fail(d, cap, "capacity must not be negative");
        berth_dec_pop(d, p2);
    }
    if (!rc)
        rc = dec_overhead(d, spec, &it);
    if (!rc) {
        it.offerings = berth_arena_alloc(a, (offs->n ? offs->n : 1) * sizeof *it.offerings);
        if (!it.offerings)
            rc = berth_error_set(d->err, BERTH_ENOMEM, "out of memory");
    }
    for (size_t i = 0; !rc && i < offs->n; i++) {
        const berth_node *o = offs->items[i];
        size_t p2 = berth_dec_push(d, "offerings");
        berth_dec_push_index(d, i);
        berth_offering off = {NULL, BERTH_CT_ON_DEMAND, 0, 1, 0};
        static const char *const cts[] = {"reserved", "spot", "on-demand", NULL};
        int ct = 2;
        if (o->type != BERTH_NODE_MAP)
            rc = berth_dec_fail(d, o, "expected an offering mapping with zone, capacityType, price");
        if (!rc && !(rc = berth_dec_known_fields(d, o, of)) &&
            !(rc = berth_dec_str(d, o, "zone", 1, &off.zone)) &&
            !(rc = berth_dec_enum(d, o, "capacityType", 1, cts, &ct)) &&
            !(rc = berth_dec_bool(d, o, "available", 0, &off.available)) &&
            !(rc = berth_dec_number(d, o, "interruptionRate", &off.interruption_rate))) {
            if (!berth_node_get(o, "price"))
                rc = berth_dec_fail(d, o, "price: required field is missing");
            else
                rc = berth_dec_number(d, o, "price", &off.price);
        }
        off.capacity_type = (berth_capacity_type)ct;
        berth_dec_pop(d, p2);
        if (!rc)
            it.offerings[it.nofferings++] = off;
    }
    berth_dec_pop(d, p);
    if (rc)
        return rc;
    it.capacity_cpu = it.cpu;
    it.capacity_memory = it.memory;
    it.capacity_pods = it.pods;
    berth_instance_type_allocatable(&it);
    if (!it.family) {
        const char *dot = strchr(it.name, '.');
        it.family = dot ? berth_arena_strndup(a, it.name, (size_t)(dot - it.name)) : it.name;
        if (!it.family)
            return berth_error_set(d->err, BERTH_ENOMEM, "out of memory");
    }
    if (berth_instance_type_derive_labels(a, &it))
        return berth_error_set(d->err, BERTH_ENOMEM, "out of memory");
    *out = it;
    return 0;
}

int berth_instance_types_add(berth_dec *d, berth_arena *a, const berth_node *doc,
                             berth_instance_type **v, uint32_t *n, uint32_t *cap,
                             berth_nameidx *names)
{
    berth_instance_type it;
    int rc = berth_instance_type_decode(d, a, doc, &it);
    if (rc)
        return rc;
    if (names ? (rc = berth_nameidx_add(names, it.name, *n, NULL)) != 0
              : berth_instance_type_find(*v, *n, it.name) >= 0) {
        if (rc < 0)
            return berth_error_set(d->err, rc, "out of memory");
        return berth_dec_fail(d, berth_node_get(doc, "metadata"), "InstanceType '%s' appears twice",
                              it.name);
    }
    if ((rc = berth_grow((void **)v, cap, *n + 1, sizeof **v, MAX_TYPES)))
        return berth_dec_grow_fail(d, doc, rc, "InstanceTypes");
    (*v)[(*n)++] = it;
    return 0;
}

int berth_instance_type_find(const berth_instance_type *v, uint32_t n, const char *name)
{
    for (uint32_t i = 0; name && i < n; i++)
        if (!strcmp(v[i].name, name))
            return (int)i;
    return -1;
}

const berth_offering *berth_instance_offering(const berth_instance_type *t, const char *zone,
                                              berth_capacity_type ct)
{
    for (uint32_t i = 0; zone && i < t->nofferings; i++)
        if (t->offerings[i].capacity_type == ct && !strcmp(t->offerings[i].zone, zone))
            return &t->offerings[i];
    return NULL;
}
