/* nexus/load.c - decodes the nexus input kinds (SPEC 6.1): Site (compact
 * racks and explicit machines), VmSku, KubernetesCluster (Azure field
 * names, under `spec` or ARM's `properties`), Operation (timeline steps),
 * and List (the table at the end, walked by berth_dec_walk). berth.io kinds
 * are strict; Azure kinds ignore fields berth does
 * not use unless strict is set. Every error is located. */
#include "nexus/state.h"
#include "berth/nameidx.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *where(berth_nexus *nx, const berth_dec *d, const berth_node *n)
{
    char buf[600];
    snprintf(buf, sizeof buf, "%s:%d:%d", d->file, n ? n->line : 0, n ? n->col : 0);
    return berth_arena_strdup(&nx->arena, buf);
}

/* "file:line:col: path.field" of m's field (or of m when absent). */
static const char *field_where(berth_nexus *nx, berth_dec *d, const berth_node *m, const char *field)
{
    const berth_node *n = berth_node_get(m, field);
    size_t prev = berth_dec_push(d, field);
    char buf[900];
    snprintf(buf, sizeof buf, "%s:%d:%d: %s", d->file, n ? n->line : m->line, n ? n->col : m->col,
             d->path);
    berth_dec_pop(d, prev);
    return berth_arena_strdup(&nx->arena, buf);
}

static int dec_cpu_count(berth_dec *d, const berth_node *m, const char *key, int required,
                         int32_t *out)
{
    berth_quantity q;
    int have = berth_node_get(m, key) != NULL;
    int rc = berth_dec_quantity(d, m, key, required, &q);
    if (rc || !have)
        return rc;
    int64_t milli = berth_quantity_milli(q);
    if (milli <= 0 || milli % 1000 || milli / 1000 > 1000000) {
        size_t prev = berth_dec_push(d, key);
        rc = berth_dec_fail(d, berth_node_get(m, key),
                            "expected a positive whole number of vCPU, got '%s'",
                            berth_node_get(m, key)->str);
        berth_dec_pop(d, prev);
        return rc;
    }
    *out = (int32_t)(milli / 1000);
    return 0;
}

static int dec_bytes(berth_dec *d, const berth_node *m, const char *key, int required, int64_t *out)
{
    berth_quantity q;
    int have = berth_node_get(m, key) != NULL;
    int rc = berth_dec_quantity(d, m, key, required, &q);
    if (rc || !have)
        return rc;
    int64_t v = berth_quantity_value(q);
    if (v <= 0 || v == INT64_MAX) {
        size_t prev = berth_dec_push(d, key);
        rc = berth_dec_fail(d, berth_node_get(m, key), "expected a positive size such as 224Gi, got '%s'",
                            berth_node_get(m, key)->str);
        berth_dec_pop(d, prev);
        return rc;
    }
    *out = v;
    return 0;
}

static const char *const meta_fields[] = {"name", "namespace", "labels", "annotations",
                                          "creationTimestamp", "uid", "resourceVersion",
                                          "generation", NULL};

static int dec_metadata(berth_dec *d, const berth_node *doc, int strict_kind, const char **name)
{
    berth_node *meta = NULL;
    int rc = berth_dec_map(d, doc, "metadata", 1, &meta);
    if (rc)
        return rc;
    size_t prev = berth_dec_push(d, "metadata");
    if (strict_kind)
        rc = berth_dec_known_fields(d, meta, meta_fields);
    if (!rc)
        rc = berth_dec_str(d, meta, "name", 1, name);
    if (!rc && !**name)
        rc = berth_dec_fail(d, berth_node_get(meta, "name"), "must not be empty");
    berth_dec_pop(d, prev);
    return rc;
}

/* ---- Site ---- */

typedef struct mdef {
    const char *name, *rack;
    int cordoned, down;
    int32_t ncells, cpu;
    int64_t mem;
    uint32_t rank;        /* its rack's place in natural order */
} mdef;

/* The rack's index in names, added when new; idx maps the names. */
static int rack_index_add(berth_nameidx *idx, const char ***names, uint32_t *n, uint32_t *cap,
                          const char *rack)
{
    uint32_t had = 0;
    int rc = berth_nameidx_add(idx, rack, *n, &had);
    if (rc < 0)
        return BERTH_ENOMEM;
    if (rc)
        return (int)had;
    if (nexus_grow((void **)names, cap, *n + 1, sizeof **names))
        return BERTH_ENOMEM;
    (*names)[*n] = rack;
    return (int)(*n)++;
}

static int dec_cell(berth_dec *d, const berth_node *parent, int32_t *ncells, int32_t *cpu,
                    int64_t *mem, int required)
{
    int64_t nc = *ncells;
    int rc = berth_dec_int(d, parent, "numaCells", 0, 1, BERTH_NEXUS_MAX_CELLS, &nc);
    if (rc)
        return rc;
    *ncells = (int32_t)nc;
    berth_node *cell = NULL;
    rc = berth_dec_map(d, parent, "cell", required, &cell);
    if (rc || !cell)
        return rc;
    size_t prev = berth_dec_push(d, "cell");
    static const char *const cf[] = {"cpu", "memory", NULL};
    rc = berth_dec_known_fields(d, cell, cf);
    if (!rc)
        rc = dec_cpu_count(d, cell, "cpu", required, cpu);
    if (!rc)
        rc = dec_bytes(d, cell, "memory", required, mem);
    berth_dec_pop(d, prev);
    return rc;
}

static int natural_less(const char *a, const char *b);

/* rack indices by their names' natural order, equal names by index (the
 * order a stable sort keeps) */
static int cmp_rack(const void *a, const void *b, void *ctx)
{
    const char *const *names = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (natural_less(names[x], names[y]))
        return -1;
    if (natural_less(names[y], names[x]))
        return 1;
    return (x > y) - (x < y);
}

static int load_site(berth_nexus *nx, berth_dec *d, const berth_node *doc)
{
    const char *name;
    int rc = dec_metadata(d, doc, 1, &name);
    if (rc)
        return rc;
    if (nx->have_site)
        return berth_dec_fail(d, doc, "a second Site ('%s'): give exactly one Site", name);
    berth_node *spec = NULL;
    if ((rc = berth_dec_map(d, doc, "spec", 1, &spec)))
        return rc;
    size_t prev = berth_dec_push(d, "spec");
    static const char *const sf[] = {"racks", "machinesPerRack", "machine", "machines", NULL};
    if ((rc = berth_dec_known_fields(d, spec, sf)))
        goto out;
    int64_t racks = 0, per = 0;
    if ((rc = berth_dec_int(d, spec, "racks", 0, 1, 100000, &racks)))
        goto out;
    if ((rc = berth_dec_int(d, spec, "machinesPerRack", racks > 0, 1, 100000, &per)))
        goto out;
    int32_t ncells = 2, cpu = 0;
    int64_t mem = 0;
    berth_node *machine = NULL;
    if ((rc = berth_dec_map(d, spec, "machine", racks > 0, &machine)))
        goto out;
    if (machine) {
        size_t p2 = berth_dec_push(d, "machine");
        static const char *const mf[] = {"numaCells", "cell", NULL};
        rc = berth_dec_known_fields(d, machine, mf);
        if (!rc)
            rc = dec_cell(d, machine, &ncells, &cpu, &mem, 1);
        berth_dec_pop(d, p2);
        if (rc)
            goto out;
    }
    berth_node *list = NULL;
    if ((rc = berth_dec_seq(d, spec, "machines", racks == 0, &list)))
        goto out;
    if ((uint64_t)racks * (uint64_t)per > BERTH_NEXUS_MAX_MACHINES) {
        rc = berth_dec_fail(d, spec, "racks x machinesPerRack exceeds %u machines",
                            BERTH_NEXUS_MAX_MACHINES);
        goto out;
    }
    /* gather machine definitions: compact ones, then explicit overrides */
    uint32_t nexp = list ? (uint32_t)list->n : 0;
    uint32_t total = (uint32_t)(racks * per) + nexp;
    mdef *defs = calloc(total ? total : 1, sizeof *defs);
    const char **rnames = NULL;
    uint32_t nr = 0, capr = 0;
    uint32_t *ord = NULL, *rank = NULL, *first = NULL, *morder = NULL; /* rack order, machines by rack */
    berth_nameidx rack_idx = {0}, machine_idx = {0}; /* names -> index in rnames, defs */
    if (!defs) {
        rc = berth_error_set(d->err, BERTH_ENOMEM, "out of memory");
        goto out;
    }
    uint32_t nd = 0;
    int width = per >= 100 ? 3 : 2;
    for (int64_t r = 0; r < racks; r++) {
        char rb[32];
        snprintf(rb, sizeof rb, "%" PRId64, r + 1);
        const char *rn = berth_arena_strdup(&nx->arena, rb);
        if (!rn || rack_index_add(&rack_idx, &rnames, &nr, &capr, rn) < 0) {
            rc = berth_error_set(d->err, BERTH_ENOMEM, "out of memory");
            goto out2;
        }
        for (int64_t i = 0; i < per; i++) {
            char mb[64];
            snprintf(mb, sizeof mb, "rack%" PRId64 "-bmm%0*" PRId64, r + 1, width, i + 1);
            defs[nd] = (mdef){berth_arena_strdup(&nx->arena, mb), rn, 0, 0, ncells, cpu, mem};
            if (!defs[nd].name || berth_nameidx_add(&machine_idx, defs[nd].name, nd, NULL) < 0) {
                rc = berth_error_set(d->err, BERTH_ENOMEM, "out of memory");
                goto out2;
            }
            nd++;
        }
    }
    uint32_t ncompact = nd;
    for (uint32_t i = 0; i < nexp; i++) {
        const berth_node *mn = list->items[i];
        size_t p2 = berth_dec_push(d, "machines");
        berth_dec_push_index(d, i);
        static const char *const ef[] = {"name", "rack", "cordonStatus", "readyState",
                                         "numaCells", "cell", NULL};
        mdef md = {0};
        if (mn->type != BERTH_NODE_MAP)
            rc = berth_dec_fail(d, mn, "expected a mapping with name and rack");
        if (!rc)
            rc = berth_dec_known_fields(d, mn, ef);
        if (!rc)
            rc = berth_dec_str(d, mn, "name", 1, &md.name);
        /* an explicit entry naming a compact machine overrides it */
        mdef *target = NULL;
        uint32_t seen = rc ? BERTH_NAMEIDX_NONE : berth_nameidx_find(&machine_idx, md.name);
        if (seen < ncompact)
            target = &defs[seen];
        else if (seen != BERTH_NAMEIDX_NONE)
            rc = berth_dec_fail(d, berth_node_get(mn, "name"), "duplicate machine name '%s'",
                                md.name);
        if (!rc) {
            if (target) {
                md = *target;
            } else {
                md.ncells = ncells;
                md.cpu = cpu;
                md.mem = mem;
            }
            rc = berth_dec_str(d, mn, "rack", !target, &md.rack);
        }
        static const char *const cordon_values[] = {"Uncordoned", "Cordoned", NULL};
        static const char *const ready_values[] = {"True", "False", "true", "false", NULL};
        int ready = md.down ? 1 : 0;
        if (!rc)
            rc = berth_dec_enum(d, mn, "cordonStatus", 0, cordon_values, &md.cordoned);
        if (!rc)
            rc = berth_dec_enum(d, mn, "readyState", 0, ready_values, &ready);
        md.down = ready % 2;
        if (!rc)
            rc = dec_cell(d, mn, &md.ncells, &md.cpu, &md.mem, md.cpu == 0);
        if (!rc && (md.cpu <= 0 || md.mem <= 0))
            rc = berth_dec_fail(d, mn, "machine '%s' has no cell size: give cell.cpu and "
                                       "cell.memory here or in spec.machine",
                                md.name);
        if (!rc && (!md.rack || !*md.rack))
            rc = berth_dec_fail(d, mn, "rack must not be empty");
        berth_dec_pop(d, p2);
        if (rc)
            goto out2;
        if (rack_index_add(&rack_idx, &rnames, &nr, &capr, md.rack) < 0 ||
            (!target && berth_nameidx_add(&machine_idx, md.name, nd, NULL) < 0)) {
            rc = berth_error_set(d->err, BERTH_ENOMEM, "out of memory");
            goto out2;
        }
        if (target)
            *target = md;
        else
            defs[nd++] = md;
    }
    if (nd == 0) {
        rc = berth_dec_fail(d, spec, "the site has no machines");
        goto out2;
    }
    /* racks in natural order (equal in that order: first seen first);
     * machines grouped by rack in definition order: a counting sort by
     * rack, each machine's rack found through the rack index (a scan of
     * the machines per rack was quadratic: 20,000 machines in 20,000
     * racks took 9.9 s) */
    ord = malloc((size_t)nr * sizeof *ord);
    rank = malloc((size_t)nr * sizeof *rank);
    first = calloc((size_t)nr + 1, sizeof *first);
    morder = malloc((size_t)nd * sizeof *morder);
    if (!ord || !rank || !first || !morder) {
        rc = berth_error_set(d->err, BERTH_ENOMEM, "out of memory");
        goto out2;
    }
    for (uint32_t i = 0; i < nr; i++)
        ord[i] = i;
    qsort_r(ord, nr, sizeof *ord, cmp_rack, rnames);
    for (uint32_t k = 0; k < nr; k++)
        rank[ord[k]] = k;
    for (uint32_t i = 0; i < nd; i++) {
        uint32_t ri = berth_nameidx_find(&rack_idx, defs[i].rack);
        if (ri >= nr) { /* every machine's rack was added above */
            rc = berth_error_set(d->err, BERTH_EINTERNAL, "machine '%s': rack '%s' not indexed",
                                 defs[i].name, defs[i].rack);
            goto out2;
        }
        defs[i].rank = rank[ri];
        first[defs[i].rank + 1]++;
    }
    for (uint32_t r = 0; r < nr; r++)
        first[r + 1] += first[r];
    for (uint32_t i = 0; i < nd; i++) /* stable: definition order within a rack */
        morder[first[defs[i].rank]++] = i;
    uint32_t ncell_total = 0;
    for (uint32_t i = 0; i < nd; i++)
        ncell_total += (uint32_t)defs[i].ncells;
    nx->racks = calloc(nr, sizeof *nx->racks);
    nx->machines = calloc(nd, sizeof *nx->machines);
    nx->cells = calloc(ncell_total, sizeof *nx->cells);
    if (!nx->racks || !nx->machines || !nx->cells) {
        rc = berth_error_set(d->err, BERTH_ENOMEM, "out of memory");
        goto out2;
    }
    nx->nracks = nr;
    uint32_t m = 0, c = 0;
    for (uint32_t r = 0, at = 0; r < nr; r++) {
        nx->racks[r].name = rnames[ord[r]];
        nx->racks[r].first_machine = m;
        for (; at < nd && defs[morder[at]].rank == r; at++) {
            uint32_t i = morder[at];
            berth_machine *mm = &nx->machines[m++];
            mm->name = defs[i].name;
            mm->rack = r;
            mm->cordoned = defs[i].cordoned;
            mm->down = defs[i].down;
            mm->first_cell = c;
            mm->ncells = (uint32_t)defs[i].ncells;
            for (int32_t k = 0; k < defs[i].ncells; k++, c++) {
                nx->cells[c].cpu = defs[i].cpu;
                nx->cells[c].memory = defs[i].mem;
            }
        }
        nx->racks[r].nmachines = m - nx->racks[r].first_machine;
    }
    nx->nmachines = m;
    nx->ncells = c;
    nx->site_name = name;
    nx->have_site = 1;
    if (nexus_index_machines(nx))
        rc = berth_error_set(d->err, BERTH_ENOMEM, "out of memory");
out2:
    free(defs);
    free(rnames);
    free(ord);
    free(rank);
    free(first);
    free(morder);
    berth_nameidx_free(&rack_idx);
    berth_nameidx_free(&machine_idx);
out:
    berth_dec_pop(d, prev);
    return rc;
}

static int natural_less(const char *a, const char *b)
{
    /* digits compare as numbers */
    while (*a && *b) {
        if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
            char *ea, *eb;
            unsigned long long x = strtoull(a, &ea, 10), y = strtoull(b, &eb, 10);
            if (x != y)
                return x < y;
            a = ea;
            b = eb;
            continue;
        }
        if (*a != *b)
            return (unsigned char)*a < (unsigned char)*b;
        a++;
        b++;
    }
    return !*a && *b;
}

/* ---- VmSku ---- */

static int load_sku(berth_nexus *nx, berth_dec *d, const berth_node *doc)
{
    const char *name;
    int rc = dec_metadata(d, doc, 1, &name);
    if (rc)
        return rc;
    berth_node *spec = NULL;
    if ((rc = berth_dec_map(d, doc, "spec", 1, &spec)))
        return rc;
    size_t prev = berth_dec_push(d, "spec");
    static const char *const f[] = {"vcpu", "hostVcpu", "memory", "numaCells", "extraLarge", NULL};
    berth_sku s = {0};
    uint32_t existing = berth_nexus_find_sku(nx, name);
    if (existing != BERTH_NEXUS_NONE)
        s = nx->skus[existing];
    s.name = name;
    s.builtin = 0;
    int64_t v = s.vcpu, h = 0, nc = s.numa_cells ? s.numa_cells : 1;
    int xl = s.extra_large;
    rc = berth_dec_known_fields(d, spec, f);
    if (!rc)
        rc = berth_dec_int(d, spec, "vcpu", existing == BERTH_NEXUS_NONE, 1, 4096, &v);
    if (!rc)
        rc = berth_dec_int(d, spec, "hostVcpu", 0, 1, 4096, &h);
    if (!rc)
        rc = dec_bytes(d, spec, "memory", existing == BERTH_NEXUS_NONE, &s.memory);
    if (!rc)
        rc = berth_dec_int(d, spec, "numaCells", 0, 1, 2, &nc);
    if (!rc)
        rc = berth_dec_bool(d, spec, "extraLarge", 0, &xl);
    if (!rc && h && h < v)
        rc = berth_dec_fail(d, berth_node_get(spec, "hostVcpu"),
                            "hostVcpu %" PRId64 " is less than vcpu %" PRId64, h, v);
    berth_dec_pop(d, prev);
    if (rc)
        return rc;
    s.vcpu = (int32_t)v;
    if (h)
        s.host_vcpu = (int32_t)h;
    else if (existing == BERTH_NEXUS_NONE || berth_node_get(spec, "vcpu"))
        s.host_vcpu = (int32_t)v + (strncmp(name, "NC_P", 4) == 0 ? 2 : 0);
    s.numa_cells = (int32_t)nc;
    s.extra_large = xl;
    if (existing != BERTH_NEXUS_NONE) {
        nx->skus[existing] = s;
        return 0;
    }
    if (nx->nskus >= nx->capskus)
        return berth_dec_fail(d, doc, "more than %d SKUs", BERTH_NEXUS_MAX_SKUS);
    nx->skus[nx->nskus++] = s;
    return 0;
}

/* ---- KubernetesCluster ---- */

static int dec_zones(berth_nexus *nx, berth_dec *d, const berth_node *m, const char ***zones,
                     uint32_t *nzones)
{
    berth_node *z = NULL;
    int rc = berth_dec_seq(d, m, "availabilityZones", 0, &z);
    if (rc || !z)
        return rc;
    size_t prev = berth_dec_push(d, "availabilityZones");
    *zones = berth_arena_alloc(&nx->arena, (z->n ? z->n : 1) * sizeof **zones);
    if (!*zones)
        rc = berth_error_set(d->err, BERTH_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < z->n; i++) {
        size_t p2 = berth_dec_push_index(d, i);
        const char *s;
        rc = berth_dec_node_str(d, z->items[i], &s);
        if (!rc && !*s)
            rc = berth_dec_fail(d, z->items[i], "zone must not be empty");
        for (uint32_t j = 0; !rc && j < *nzones; j++)
            if (strcmp((*zones)[j], s) == 0)
                rc = berth_dec_fail(d, z->items[i], "zone '%s' is listed twice", s);
        if (!rc)
            (*zones)[(*nzones)++] = s;
        berth_dec_pop(d, p2);
    }
    berth_dec_pop(d, prev);
    return rc;
}

static int dec_pool(berth_nexus *nx, berth_dec *d, const berth_node *pn, berth_pool_spec *ps,
                    int control_plane)
{
    static const char *const cpf[] = {"count", "vmSkuName", "availabilityZones", "name",
                                      "administratorConfiguration", NULL};
    static const char *const apf[] = {"name", "count", "vmSkuName", "availabilityZones", "mode",
                                      "agentOptions", "attachedNetworkConfiguration", "labels",
                                      "taints", "upgradeSettings", "administratorConfiguration",
                                      NULL};
    int rc = 0;
    if (pn->type != BERTH_NODE_MAP)
        return berth_dec_fail(d, pn, "expected a mapping");
    if (d->strict)
        rc = berth_dec_known_fields(d, pn, control_plane ? cpf : apf);
    ps->role = control_plane ? BERTH_ROLE_CONTROL_PLANE : BERTH_ROLE_WORKER;
    ps->name = "control-plane";
    if (!rc && !control_plane)
        rc = berth_dec_str(d, pn, "name", 1, &ps->name);
    if (!rc && !*ps->name)
        rc = berth_dec_fail(d, berth_node_get(pn, "name"), "must not be empty");
    if (!rc)
        rc = berth_dec_int(d, pn, "count", 1, 0, 100000, &ps->count);
    if (!rc)
        rc = berth_dec_str(d, pn, "vmSkuName", 1, &ps->sku);
    if (!rc)
        rc = dec_zones(nx, d, pn, &ps->zones, &ps->nzones);
    ps->where = where(nx, d, pn);
    ps->sku_where = field_where(nx, d, pn, "vmSkuName");
    ps->zones_where = field_where(nx, d, pn, "availabilityZones");
    return rc;
}

static int push_step(berth_nexus *nx, berth_step **out)
{
    if (nexus_grow((void **)&nx->steps, &nx->capsteps, nx->nsteps + 1, sizeof *nx->steps))
        return BERTH_ENOMEM;
    *out = &nx->steps[nx->nsteps++];
    memset(*out, 0, sizeof **out);
    return 0;
}

static int load_cluster(berth_nexus *nx, berth_dec *d, const berth_node *doc)
{
    const char *name;
    int rc = dec_metadata(d, doc, d->strict, &name);
    if (rc)
        return rc;
    static const char *const top[] = {"apiVersion", "kind", "metadata", "spec", "properties",
                                      "status", "location", "extendedLocation", "tags", "id",
                                      "type", "systemData", NULL};
    if (d->strict && (rc = berth_dec_known_fields(d, doc, top)))
        return rc;
    const char *specname = berth_node_get(doc, "spec") ? "spec" : "properties";
    berth_node *spec = NULL;
    if ((rc = berth_dec_map(d, doc, specname, 1, &spec)))
        return rc;
    size_t prev = berth_dec_push(d, specname);
    static const char *const sf[] = {"controlPlaneNodeConfiguration",
                                     "initialAgentPoolConfigurations", "kubernetesVersion",
                                     "networkConfiguration", "aadConfiguration",
                                     "administratorConfiguration", "managedResourceGroupConfiguration",
                                     "featureStatuses", "provisioningState", "detailedStatus",
                                     "detailedStatusMessage", "nodes", "attachedNetworkIds",
                                     "availableUpgrades", "clusterId", "connectedClusterId",
                                     "controlPlaneKubernetesVersion", NULL};
    berth_cluster_spec cs = {0};
    cs.name = name;
    cs.where = where(nx, d, doc);
    berth_node *cp = NULL, *aps = NULL;
    if (d->strict)
        rc = berth_dec_known_fields(d, spec, sf);
    if (!rc)
        rc = berth_dec_map(d, spec, "controlPlaneNodeConfiguration", 1, &cp);
    if (!rc)
        rc = berth_dec_seq(d, spec, "initialAgentPoolConfigurations", 1, &aps);
    if (!rc && aps->n == 0) {
        size_t p2 = berth_dec_push(d, "initialAgentPoolConfigurations");
        rc = berth_dec_fail(d, aps, "at least one agent pool is required");
        berth_dec_pop(d, p2);
    }
    if (!rc) {
        cs.npools = 1 + (uint32_t)aps->n;
        cs.pools = berth_arena_alloc(&nx->arena, cs.npools * sizeof *cs.pools);
        if (!cs.pools)
            rc = berth_error_set(d->err, BERTH_ENOMEM, "out of memory");
    }
    if (!rc) {
        size_t p2 = berth_dec_push(d, "controlPlaneNodeConfiguration");
        rc = dec_pool(nx, d, cp, &cs.pools[0], 1);
        if (!rc && cs.pools[0].count < 1)
            rc = berth_dec_fail(d, berth_node_get(cp, "count"), "a control plane needs at least 1 VM");
        berth_dec_pop(d, p2);
    }
    for (size_t i = 0; !rc && i < aps->n; i++) {
        size_t p2 = berth_dec_push(d, "initialAgentPoolConfigurations");
        berth_dec_push_index(d, i);
        rc = dec_pool(nx, d, aps->items[i], &cs.pools[1 + i], 0);
        for (size_t j = 0; !rc && j < i; j++)
            if (strcmp(cs.pools[1 + j].name, cs.pools[1 + i].name) == 0 ||
                strcmp(cs.pools[1 + i].name, "control-plane") == 0)
                rc = berth_dec_fail(d, berth_node_get(aps->items[i], "name"),
                                    "pool name '%s' is used twice", cs.pools[1 + i].name);
        berth_dec_pop(d, p2);
    }
    berth_dec_pop(d, prev);
    if (rc)
        return rc;
    if (nexus_grow((void **)&nx->specs, &nx->capspecs, nx->nspecs + 1, sizeof *nx->specs))
        return berth_error_set(d->err, BERTH_ENOMEM, "out of memory");
    nx->specs[nx->nspecs] = cs;
    berth_step *st;
    if (push_step(nx, &st))
        return berth_error_set(d->err, BERTH_ENOMEM, "out of memory");
    st->kind = BERTH_STEP_CREATE_CLUSTER;
    st->name = name;
    st->cluster = name;
    st->source = cs.where;
    st->spec_doc = nx->nspecs++;
    return 0;
}

/* ---- Operation ---- */

static const struct {
    const char *action;
    berth_step_kind kind;
} actions[] = {
    {"delete-cluster", BERTH_STEP_DELETE_CLUSTER}, {"scale-pool", BERTH_STEP_SCALE_POOL},
    {"add-pool", BERTH_STEP_ADD_POOL},             {"cordon", BERTH_STEP_CORDON},
    {"uncordon", BERTH_STEP_UNCORDON},             {"runtime-upgrade", BERTH_STEP_RUNTIME_UPGRADE},
};

static int load_operation(berth_nexus *nx, berth_dec *d, const berth_node *doc)
{
    const char *name;
    int rc = dec_metadata(d, doc, 1, &name);
    if (rc)
        return rc;
    berth_node *spec = NULL;
    if ((rc = berth_dec_map(d, doc, "spec", 1, &spec)))
        return rc;
    size_t prev = berth_dec_push(d, "spec");
    static const char *const f[] = {"action", "cluster", "pool", "count", "vmSkuName",
                                    "availabilityZones", "machine", "updateStrategy", NULL};
    const char *action = NULL;
    berth_step s = {0};
    s.name = name;
    s.source = where(nx, d, doc);
    rc = berth_dec_known_fields(d, spec, f);
    if (!rc)
        rc = berth_dec_str(d, spec, "action", 1, &action);
    int found = 0;
    for (size_t i = 0; !rc && i < sizeof actions / sizeof actions[0]; i++)
        if (strcmp(actions[i].action, action) == 0) {
            s.kind = actions[i].kind;
            found = 1;
        }
    if (!rc && !found) {
        rc = berth_dec_fail_field(d, spec, "action",
                                  "unknown action '%s' (expected delete-cluster, scale-pool, "
                                  "add-pool, cordon, uncordon or runtime-upgrade)", action);
    }
    if (rc)
        goto out;
    int need_cluster = s.kind == BERTH_STEP_DELETE_CLUSTER || s.kind == BERTH_STEP_SCALE_POOL ||
                       s.kind == BERTH_STEP_ADD_POOL;
    int need_pool = s.kind == BERTH_STEP_SCALE_POOL || s.kind == BERTH_STEP_ADD_POOL;
    int need_machine = s.kind == BERTH_STEP_CORDON || s.kind == BERTH_STEP_UNCORDON;
    if ((rc = berth_dec_str(d, spec, "cluster", need_cluster, &s.cluster)))
        goto out;
    if ((rc = berth_dec_str(d, spec, "pool", need_pool, &s.pool)))
        goto out;
    if ((rc = berth_dec_int(d, spec, "count", need_pool, 0, 100000, &s.count)))
        goto out;
    if ((rc = berth_dec_str(d, spec, "vmSkuName", s.kind == BERTH_STEP_ADD_POOL, &s.sku)))
        goto out;
    if ((rc = dec_zones(nx, d, spec, &s.zones, &s.nzones)))
        goto out;
    if ((rc = berth_dec_str(d, spec, "machine", need_machine, &s.machine)))
        goto out;
    s.sku_where = field_where(nx, d, spec, "vmSkuName");
    s.zones_where = field_where(nx, d, spec, "availabilityZones");
    s.machine_where = field_where(nx, d, spec, "machine");
    s.strategy = (berth_update_strategy){0, 32767, 0, 80, 15, 60};
    berth_node *us = NULL;
    if ((rc = berth_dec_map(d, spec, "updateStrategy", 0, &us)))
        goto out;
    if (us) {
        size_t p2 = berth_dec_push(d, "updateStrategy");
        static const char *const uf[] = {"strategyType", "maxUnavailable", "thresholdType",
                                         "thresholdValue", "waitTimeMinutes", "reimageMinutes",
                                         NULL};
        static const char *const types[] = {"Rack", "PauseAfterRack", NULL};
        static const char *const thresholds[] = {"PercentSuccess", "CountSuccess", NULL};
        rc = berth_dec_known_fields(d, us, uf);
        if (!rc)
            rc = berth_dec_enum(d, us, "strategyType", 0, types, &s.strategy.pause_after_rack);
        if (!rc)
            rc = berth_dec_int(d, us, "maxUnavailable", 0, 1, 32767, &s.strategy.max_unavailable);
        if (!rc)
            rc = berth_dec_enum(d, us, "thresholdType", 0, thresholds, &s.strategy.count_success);
        if (!rc)
            rc = berth_dec_int(d, us, "thresholdValue", 0, 0, s.strategy.count_success ? 32767 : 100,
                               &s.strategy.threshold_value);
        if (!rc)
            rc = berth_dec_int(d, us, "waitTimeMinutes", 0, 0, 60, &s.strategy.wait_time_minutes);
        if (!rc)
            rc = berth_dec_int(d, us, "reimageMinutes", 0, 0, 10080, &s.strategy.reimage_minutes);
        berth_dec_pop(d, p2);
        if (rc)
            goto out;
    }
    berth_step *st;
    if (push_step(nx, &st)) {
        rc = berth_error_set(d->err, BERTH_ENOMEM, "out of memory");
        goto out;
    }
    *st = s;
out:
    berth_dec_pop(d, prev);
    return rc;
}

/* ---- dispatch: the nexus kinds for berth_dec_walk (io/walk.c) ---- */

static int ld_site(void *nx, berth_dec *d, const berth_node *doc, const berth_kind_handler *h)
{
    return load_site(nx, d, doc);
}

static int ld_sku(void *nx, berth_dec *d, const berth_node *doc, const berth_kind_handler *h)
{
    return load_sku(nx, d, doc);
}

static int ld_cluster(void *nx, berth_dec *d, const berth_node *doc, const berth_kind_handler *h)
{
    return load_cluster(nx, d, doc);
}

static int ld_operation(void *nx, berth_dec *d, const berth_node *doc, const berth_kind_handler *h)
{
    return load_operation(nx, d, doc);
}

/* The nexus input's own apiVersion rule: every document's apiVersion, when
 * present, is a string; the berth.io kinds need berth.io/v1 ("kind K needs
 * apiVersion berth.io/v1", at the field or the document). */
static int check_api(berth_dec *d, const berth_node *doc, const char *kind,
                     const berth_kind_handler *h)
{
    const char *api = NULL;
    int rc = berth_dec_str(d, doc, "apiVersion", 0, &api);
    if (rc || !h || !h->api || (api && !strcmp(api, h->api[0])))
        return rc;
    size_t p = berth_dec_push(d, "apiVersion");
    const berth_node *at = berth_node_get(doc, "apiVersion");
    rc = berth_dec_fail(d, at ? at : doc, "kind %s needs apiVersion %s", kind, h->api[0]);
    berth_dec_pop(d, p);
    return rc;
}

static const char *const berth_api[] = {"berth.io/v1", NULL};
static const char *const top[] = {"apiVersion", "kind", "metadata", "spec", NULL};

/* berth.io kinds are strict; KubernetesCluster (Azure) checks its own */
static const berth_kind_handler kinds[] = {
    {"Site", berth_api, NULL, top, BERTH_KIND_STRICT, ld_site, NULL, 0},
    {"VmSku", berth_api, NULL, top, BERTH_KIND_STRICT, ld_sku, NULL, 0},
    {"KubernetesCluster", NULL, NULL, NULL, 0, ld_cluster, NULL, 0},
    {"Operation", berth_api, NULL, top, BERTH_KIND_STRICT, ld_operation, NULL, 0},
};

/* only `kind: List`; every other kind is an error (no skip table) */
static const berth_walker walker = {
    "nexus", kinds, sizeof kinds / sizeof *kinds, BERTH_WALK_PLAIN_LISTS, NULL, NULL, check_api,
};

int berth_nexus_load(berth_nexus *nx, const berth_source *src, int strict, berth_error *e)
{
    if (!nx->skus) /* berth_nexus_init could not allocate the SKU catalog */
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    berth_dec d;
    berth_dec_init(&d, &nx->arena, src->path, e);
    d.strict = strict;
    return berth_dec_walk_source(&d, src, &walker, nx);
}

static int check_pool_refs(const berth_nexus *nx, const char *sku_where, const char *zones_where,
                           const char *sku, const char *const *zones, uint32_t nzones,
                           berth_error *e)
{
    if (sku && berth_nexus_find_sku(nx, sku) == BERTH_NEXUS_NONE)
        return berth_error_set(e, BERTH_EINVAL,
                               "%s: unknown SKU '%s' (not built in and no VmSku document "
                               "defines it)",
                               sku_where, sku);
    for (uint32_t z = 0; z < nzones; z++)
        if (berth_nexus_find_rack(nx, zones[z]) == BERTH_NEXUS_NONE)
            return berth_error_set(e, BERTH_EINVAL, "%s: no rack (zone) named '%s' in the site",
                                   zones_where, zones[z]);
    return 0;
}

/* create-cluster and delete-cluster steps by (cluster name, step index) */
static int cmp_cluster_step(const void *a, const void *b, void *ctx)
{
    const berth_step *s = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    int c = strcmp(s[x].cluster, s[y].cluster);
    return c ? c : (x > y) - (x < y);
}

/* Two live clusters with one name: a KubernetesCluster whose name was
 * created by an earlier step and not deleted in between is bad input,
 * located at the second document. O(S log S) over the S steps. */
static int check_cluster_names(const berth_nexus *nx, berth_error *e)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < nx->nsteps; i++)
        n += nx->steps[i].kind == BERTH_STEP_CREATE_CLUSTER ||
             nx->steps[i].kind == BERTH_STEP_DELETE_CLUSTER;
    if (n < 2)
        return 0;
    uint32_t *ord = malloc(n * sizeof *ord);
    if (!ord)
        return berth_error_set(e, BERTH_ENOMEM, "out of memory");
    n = 0;
    for (uint32_t i = 0; i < nx->nsteps; i++)
        if (nx->steps[i].kind == BERTH_STEP_CREATE_CLUSTER ||
            nx->steps[i].kind == BERTH_STEP_DELETE_CLUSTER)
            ord[n++] = i;
    qsort_r(ord, n, sizeof *ord, cmp_cluster_step, nx->steps);
    int rc = 0;
    uint32_t live = BERTH_NEXUS_NONE; /* the create step that made the name live */
    for (uint32_t k = 0; k < n && !rc; k++) {
        const berth_step *s = &nx->steps[ord[k]];
        if (k && strcmp(s->cluster, nx->steps[ord[k - 1]].cluster))
            live = BERTH_NEXUS_NONE;
        if (s->kind == BERTH_STEP_DELETE_CLUSTER)
            live = BERTH_NEXUS_NONE;
        else if (live == BERTH_NEXUS_NONE)
            live = ord[k];
        else
            rc = berth_error_set(e, BERTH_EINVAL,
                                 "%s: metadata.name: cluster '%s' already exists (created at %s "
                                 "and not deleted before this KubernetesCluster)",
                                 s->source, s->cluster, nx->steps[live].source);
    }
    free(ord);
    return rc;
}

int berth_nexus_validate(const berth_nexus *nx, berth_error *e)
{
    if (!nx->have_site)
        return berth_error_set(e, BERTH_EINVAL, "no Site document: the input needs one Site");
    int crc = check_cluster_names(nx, e);
    if (crc)
        return crc;
    for (uint32_t i = 0; i < nx->nspecs; i++)
        for (uint32_t p = 0; p < nx->specs[i].npools; p++) {
            const berth_pool_spec *ps = &nx->specs[i].pools[p];
            int rc = check_pool_refs(nx, ps->sku_where, ps->zones_where, ps->sku, ps->zones,
                                     ps->nzones, e);
            if (rc)
                return rc;
        }
    for (uint32_t i = 0; i < nx->nsteps; i++) {
        const berth_step *s = &nx->steps[i];
        if (s->kind == BERTH_STEP_ADD_POOL) {
            int rc = check_pool_refs(nx, s->sku_where, s->zones_where, s->sku, s->zones,
                                     s->nzones, e);
            if (rc)
                return rc;
        }
        if ((s->kind == BERTH_STEP_CORDON || s->kind == BERTH_STEP_UNCORDON) &&
            berth_nexus_find_machine(nx, s->machine) == BERTH_NEXUS_NONE)
            return berth_error_set(e, BERTH_EINVAL, "%s: no machine named '%s' in the site",
                                   s->machine_where, s->machine);
    }
    return 0;
}
