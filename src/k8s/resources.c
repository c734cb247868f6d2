/* k8s/resources.c - ResourceLists (requests, limits, allocatable,
 * overhead) into the cluster's resource columns, ResourceLists as written
 * (a Node's status.capacity, a NodePool's limits: k8s_dec_quantities), and
 * observed usage (status.usage, berth.io/usage-* annotations). */
#include "k8s/k8s.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* A quantity in resource r's unit: millicores for cpu, else the value. */
int64_t k8s_res_value(uint32_t r, berth_quantity q)
{
    return r == BERTH_KRES_CPU ? berth_quantity_milli(q) : berth_quantity_value(q);
}

/* A ResourceList (map name -> quantity). Each entry is stored in out[]
 * with its bit in *has; "pods" goes to *pods (when pods is NULL it is an
 * error). skip_zero_ext: a zero-valued extended resource adds no column. */
int k8s_dec_res_list(berth_kcluster *k, berth_dec *d, const berth_node *m, const char *key,
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
                out[r] = k8s_res_value(r, q);
                if (has)
                    *has |= 1u << r;
            }
        }
        berth_dec_pop(d, p);
    }
    berth_dec_pop(d, prev);
    return rc;
}

int k8s_dec_quantities(berth_kcluster *k, berth_dec *d, const berth_node *m, const char *key,
                       berth_kquantity **out, uint32_t *n)
{
    berth_node *rl = NULL;
    *out = NULL;
    *n = 0;
    int rc = berth_dec_map(d, m, key, 0, &rl);
    if (rc || !rl)
        return rc;
    *out = k8s_dalloc(d, rl->n, sizeof **out);
    if (!*out)
        return ENOMEM_(d);
    size_t p = berth_dec_push(d, key);
    for (size_t i = 0; !rc && i < rl->n; i++) {
        const char *name = rl->entries[i].key->str;
        const berth_node *v = rl->entries[i].value;
        size_t p2 = berth_dec_push(d, name);
        berth_quantity q;
        if (!*name)
            rc = berth_dec_fail(d, rl->entries[i].key, "empty resource name");
        if (!rc && berth_node_is_null(v))
            rc = berth_dec_fail(d, rl->entries[i].key, "expected a quantity");
        if (!rc)
            rc = berth_dec_node_quantity(d, v, &q);
        if (!rc && berth_quantity_cmp(q, (berth_quantity){0}) < 0)
            rc = berth_dec_fail(d, v, "must not be negative, got '%s'", v->str);
        if (!rc)
            (*out)[(*n)++] = (berth_kquantity){name, q};
        berth_dec_pop(d, p2);
    }
    berth_dec_pop(d, p);
    return rc;
}

/* Observed usage: a {cpu, memory} map under key, and/or the annotations
 * berth.io/usage-cpu and berth.io/usage-memory (the map wins). */
int k8s_dec_usage(berth_kcluster *k, berth_dec *d, const berth_node *status, k8s_meta *meta,
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
                usage[r] = k8s_res_value(r, q);
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
                rc = k8s_fail_at(d, um, names[r], "must not be negative%s", "");
            if (!rc) {
                usage[r] = k8s_res_value(r, q);
                *has_usage = 1;
            }
        }
        berth_dec_pop(d, p);
    }
    (void)k;
    return rc;
}
