/* report/nexus_json.c - the `simulate` JSON document (SPEC 6.3): clusters
 * with their pools and VMs in placement order, each step's own report and
 * the machines' NUMA cells, built with jansson; plus the pretty writer. */
#include "berth/report.h"

#include <stdlib.h>
#include <string.h>

/* A JSON string for s ("" for NULL). jansson rejects invalid UTF-8; such
 * bytes become '?' rather than failing the whole document. */
static json_t *jstr(const char *s)
{
    if (!s)
        s = "";
    json_t *v = json_string(s);
    if (v)
        return v;
    char *copy = strdup(s);
    if (!copy)
        return NULL;
    for (char *p = copy; *p; p++)
        if ((unsigned char)*p >= 0x80u)
            *p = '?';
    v = json_string(copy);
    free(copy);
    return v;
}

/* Setters that steal val and report failure (including val == NULL). */
static int set(json_t *obj, const char *key, json_t *val)
{
    if (!val)
        return -1;
    return json_object_set_new(obj, key, val) ? -1 : 0;
}

static int set_key(json_t *obj, const char *key, json_t *val)
{
    /* keys that come from input (rack names) may be invalid UTF-8 */
    json_t *k = jstr(key);
    if (!k || !val) {
        json_decref(k);
        json_decref(val);
        return -1;
    }
    int rc = json_object_set_new(obj, json_string_value(k), val) ? -1 : 0;
    json_decref(k);
    return rc;
}

static int push(json_t *arr, json_t *val)
{
    if (!val)
        return -1;
    return json_array_append_new(arr, val) ? -1 : 0;
}

static const char *cluster_name(const berth_nexus *nx, uint32_t c)
{
    return c < nx->nclusters && nx->clusters[c].name ? nx->clusters[c].name : "";
}

static const char *rack_name(const berth_nexus *nx, uint32_t r)
{
    return r < nx->nracks && nx->racks[r].name ? nx->racks[r].name : "";
}

static const berth_pool *pool_at(const berth_nexus *nx, uint32_t p)
{
    return p < nx->npools ? &nx->pools[p] : NULL;
}

/* {"<rack name>": n} for racks with n > 0, in rack order. */
static json_t *per_rack_object(const berth_nexus *nx, const uint32_t *per_rack)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    for (uint32_t r = 0; per_rack && r < nx->nracks; r++)
        if (per_rack[r] && set_key(o, rack_name(nx, r), json_integer(per_rack[r]))) {
            json_decref(o);
            return NULL;
        }
    return o;
}

/* ---- clusters ---- */

static json_t *vm_json(const berth_nexus *nx, uint32_t v)
{
    const berth_vm *vm = &nx->vms[v];
    const berth_machine *m = &nx->machines[vm->machine];
    char name[512];
    berth_nexus_vm_name(nx, v, name, sizeof name);
    json_t *o = json_object();
    if (!o || set(o, "name", jstr(name)) || set(o, "bareMetalMachineId", jstr(m->name)) ||
        set(o, "rack", jstr(rack_name(nx, m->rack))) ||
        set(o, "numaCell", json_integer(vm->cell))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *pool_json(const berth_nexus *nx, const berth_pool *p, uint32_t *per_rack)
{
    json_t *o = json_object(), *vms = json_array();
    if (!o || !vms)
        goto fail;
    memset(per_rack, 0, (size_t)nx->nracks * sizeof *per_rack);
    uint32_t placed = 0;
    for (uint32_t i = 0; p->vms && i < p->nvms; i++) {
        uint32_t v = p->vms[i];
        /* only placed VMs are listed; anything inconsistent is skipped */
        if (v >= nx->nvms || nx->vms[v].machine >= nx->nmachines)
            continue;
        uint32_t r = nx->machines[nx->vms[v].machine].rack;
        if (r < nx->nracks)
            per_rack[r]++;
        placed++;
        if (push(vms, vm_json(nx, v)))
            goto fail;
    }
    const char *sku = p->sku < nx->nskus && nx->skus[p->sku].name ? nx->skus[p->sku].name : "";
    if (set(o, "name", jstr(p->name)) || set(o, "role", jstr(berth_report_role_name(p->role))) ||
        set(o, "vmSkuName", jstr(sku)) || set(o, "count", json_integer(p->count)) ||
        set(o, "placed", json_integer(placed)) ||
        set(o, "vmsPerRack", per_rack_object(nx, per_rack)))
        goto fail;
    if (set(o, "vms", vms)) {
        vms = NULL; /* stolen even on failure */
        goto fail;
    }
    return o;
fail:
    json_decref(vms);
    json_decref(o);
    return NULL;
}

/* One cluster: {"name", "status", "reason", "pools"}; per_rack has nracks entries. */
static json_t *cluster_json(const berth_nexus *nx, const berth_cluster *cl, uint32_t *per_rack)
{
    json_t *o = json_object(), *pools = json_array();
    if (!o || !pools)
        goto fail;
    for (uint32_t k = 0; cl->pools && k < cl->npools; k++) {
        const berth_pool *p = pool_at(nx, cl->pools[k]);
        if (p && push(pools, pool_json(nx, p, per_rack)))
            goto fail;
    }
    if (set(o, "name", jstr(cl->name)) ||
        set(o, "status", jstr(berth_report_cluster_status_name(cl->status))) ||
        set(o, "reason", jstr(cl->reason)))
        goto fail;
    json_t *ps = pools;
    pools = NULL;
    if (set(o, "pools", ps))
        goto fail;
    return o;
fail:
    json_decref(pools);
    json_decref(o);
    return NULL;
}

static json_t *clusters_json(const berth_nexus *nx)
{
    json_t *arr = json_array();
    uint32_t *per_rack = calloc(nx->nracks ? nx->nracks : 1, sizeof *per_rack);
    if (!arr || !per_rack)
        goto fail;
    for (uint32_t c = 0; c < nx->nclusters; c++)
        if (push(arr, cluster_json(nx, &nx->clusters[c], per_rack)))
            goto fail;
    free(per_rack);
    return arr;
fail:
    free(per_rack);
    json_decref(arr);
    return NULL;
}

json_t *berth_report_nexus_cluster_json(const berth_nexus *nx, uint32_t cluster)
{
    if (cluster >= nx->nclusters)
        return NULL;
    uint32_t *per_rack = calloc(nx->nracks ? nx->nracks : 1, sizeof *per_rack);
    if (!per_rack)
        return NULL;
    json_t *o = cluster_json(nx, &nx->clusters[cluster], per_rack);
    free(per_rack);
    return o;
}

/* ---- steps ---- */

static json_t *row_json(const berth_nexus *nx, const berth_step_row *row)
{
    const berth_pool *p = pool_at(nx, row->pool);
    json_t *o = json_object();
    const char *sku = p && p->sku < nx->nskus && nx->skus[p->sku].name ? nx->skus[p->sku].name : "";
    if (!o || set(o, "cluster", jstr(p ? cluster_name(nx, p->cluster) : "")) ||
        set(o, "pool", jstr(p ? p->name : "")) || set(o, "vmSkuName", jstr(sku)) ||
        set(o, "count", json_integer(row->count)) || set(o, "placed", json_integer(row->placed)) ||
        set(o, "racksUsed", json_integer(row->racks_used)) ||
        set(o, "vmsPerRack", per_rack_object(nx, row->per_rack))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *pool_ref(const berth_nexus *nx, uint32_t pool)
{
    const berth_pool *p = pool_at(nx, pool);
    json_t *o = json_object();
    if (!o || set(o, "cluster", jstr(p ? cluster_name(nx, p->cluster) : "")) ||
        set(o, "pool", jstr(p ? p->name : ""))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *batch_json(const berth_nexus *nx, const berth_upgrade_batch *ub)
{
    json_t *o = json_object(), *pools = json_array(), *quorum = json_array(),
           *zero = json_array();
    if (!o || !pools || !quorum || !zero)
        goto fail;
    for (uint32_t k = 0; ub->pool_down && k < ub->npool_down; k++) {
        const uint32_t *e = &ub->pool_down[3u * k];
        json_t *po = pool_ref(nx, e[0]);
        if (push(pools, po) || set(po, "down", json_integer(e[1])) ||
            set(po, "total", json_integer(e[2])))
            goto fail;
    }
    for (uint32_t k = 0; ub->quorum_lost && k < ub->nquorum_lost; k++)
        if (push(quorum, jstr(cluster_name(nx, ub->quorum_lost[k]))))
            goto fail;
    for (uint32_t k = 0; ub->pools_zero && k < ub->npools_zero; k++)
        if (push(zero, pool_ref(nx, ub->pools_zero[k])))
            goto fail;
    if (set(o, "rack", jstr(rack_name(nx, ub->rack))) || set(o, "batch", json_integer(ub->batch)) ||
        set(o, "batches", json_integer(ub->nbatches)) ||
        set(o, "machinesDown", json_integer(ub->machines_down)) ||
        set(o, "vmsDown", json_integer(ub->vms_down)) ||
        set(o, "startMinute", json_integer(ub->start_minute)) ||
        set(o, "thresholdMachines", json_integer(ub->threshold_machines)))
        goto fail;
    /* set() steals each array even when it fails */
    json_t *p = pools, *q = quorum, *z = zero;
    pools = quorum = zero = NULL;
    if (set(o, "pools", p)) {
        json_decref(q);
        json_decref(z);
        goto fail;
    }
    if (set(o, "quorumLost", q)) {
        json_decref(z);
        goto fail;
    }
    if (set(o, "poolsAtZero", z))
        goto fail;
    return o;
fail:
    json_decref(pools);
    json_decref(quorum);
    json_decref(zero);
    json_decref(o);
    return NULL;
}

static json_t *step_json(const berth_nexus *nx, const berth_step *st)
{
    json_t *o = json_object(), *rows = json_array();
    if (!o || !rows)
        goto fail;
    for (uint32_t r = 0; st->rows && r < st->nrows; r++)
        if (push(rows, row_json(nx, &st->rows[r])))
            goto fail;
    if (set(o, "kind", jstr(berth_report_step_kind_name(st->kind))) ||
        set(o, "name", jstr(st->name)) || set(o, "failed", json_boolean(st->failed)) ||
        set(o, "reason", jstr(st->reason)))
        goto fail;
    if (st->source && set(o, "source", jstr(st->source)))
        goto fail;
    json_t *rw = rows;
    rows = NULL;
    if (set(o, "rows", rw))
        goto fail;
    if (st->kind == BERTH_STEP_RUNTIME_UPGRADE) {
        json_t *batches = json_array();
        if (set(o, "batches", batches))
            goto fail;
        for (uint32_t b = 0; st->batches && b < st->nbatches; b++)
            if (push(batches, batch_json(nx, &st->batches[b])))
                goto fail;
    }
    return o;
fail:
    json_decref(rows);
    json_decref(o);
    return NULL;
}

static json_t *steps_json(const berth_nexus *nx)
{
    json_t *arr = json_array();
    if (!arr)
        return NULL;
    for (uint32_t i = 0; i < nx->nsteps; i++)
        if (push(arr, step_json(nx, &nx->steps[i]))) {
            json_decref(arr);
            return NULL;
        }
    return arr;
}

/* ---- machines ---- */

static json_t *machine_json(const berth_nexus *nx, const berth_machine *m)
{
    json_t *o = json_object(), *cells = json_array();
    if (!o || !cells)
        goto fail;
    for (uint32_t k = 0; k < m->ncells; k++) {
        uint64_t ci = (uint64_t)m->first_cell + k;
        if (ci >= nx->ncells)
            break;
        const berth_cell *c = &nx->cells[ci];
        json_t *co = json_object();
        if (push(cells, co) || set(co, "cpu", json_integer(c->cpu)) ||
            set(co, "memory", json_integer(c->memory)) ||
            set(co, "usedCpu", json_integer(c->used_cpu)) ||
            set(co, "usedMemory", json_integer(c->used_memory)))
            goto fail;
    }
    if (set(o, "name", jstr(m->name)) || set(o, "rack", jstr(rack_name(nx, m->rack))))
        goto fail;
    json_t *cs = cells;
    cells = NULL;
    if (set(o, "cells", cs) || set(o, "cordoned", json_boolean(m->cordoned)) ||
        set(o, "down", json_boolean(m->down)))
        goto fail;
    return o;
fail:
    json_decref(cells);
    json_decref(o);
    return NULL;
}

static json_t *machines_json(const berth_nexus *nx)
{
    json_t *arr = json_array();
    if (!arr)
        return NULL;
    for (uint32_t i = 0; i < nx->nmachines; i++)
        if (push(arr, machine_json(nx, &nx->machines[i]))) {
            json_decref(arr);
            return NULL;
        }
    return arr;
}

json_t *berth_report_nexus_json(const berth_nexus *nx)
{
    json_t *root = json_object();
    if (!root || set(root, "clusters", clusters_json(nx)) || set(root, "steps", steps_json(nx)) ||
        set(root, "machines", machines_json(nx))) {
        json_decref(root);
        return NULL;
    }
    return root;
}

int berth_report_json_write(FILE *out, json_t *root)
{
    if (!root)
        return BERTH_EINVAL;
    if (json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER | BERTH_JSON_REAL) != 0)
        return ferror(out) ? BERTH_EIO : BERTH_ENOMEM;
    fputc('\n', out);
    return ferror(out) ? BERTH_EIO : 0;
}
