/* nexus/model.c - lifetime of a berth_nexus, growable tables, lookups by
 * name, compact site construction and VM naming. */
#include "berth/nexus.h"
#include "nexus/state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void berth_nexus_init(berth_nexus *nx)
{
    memset(nx, 0, sizeof *nx);
    berth_arena_init(&nx->arena, 0);
    berth_nameidx_key_new(nx->cluster_key);
    nx->capskus = BERTH_NEXUS_MAX_SKUS;
    nx->skus = calloc(nx->capskus, sizeof *nx->skus);
    if (nx->skus)
        berth_nexus_add_builtin_skus(nx);
    else
        nx->capskus = 0;
}

void berth_nexus_free(berth_nexus *nx)
{
    nexus_state_free(nx);
    for (uint32_t i = 0; i < nx->nclusters; i++)
        free(nx->clusters[i].pools);
    for (uint32_t i = 0; i < nx->npools; i++) {
        free(nx->pools[i].vms);
        free(nx->pools[i].zones);
    }
    free(nx->clusters);
    free(nx->cluster_index);
    berth_nameidx_free(&nx->machine_idx);
    free(nx->pools);
    free(nx->vms);
    free(nx->skus);
    free(nx->specs);
    free(nx->steps);
    free(nx->racks);
    free(nx->machines);
    free(nx->cells);
    berth_arena_free(&nx->arena);
    memset(nx, 0, sizeof *nx);
}


uint32_t berth_nexus_find_rack(const berth_nexus *nx, const char *name)
{
    for (uint32_t i = 0; i < nx->nracks; i++)
        if (strcmp(nx->racks[i].name, name) == 0)
            return i;
    return BERTH_NEXUS_NONE;
}

uint32_t berth_nexus_find_machine(const berth_nexus *nx, const char *name)
{
    if (nx->machine_idx.n) { /* the site's index (nexus_index_machines) */
        uint32_t m = berth_nameidx_find(&nx->machine_idx, name);
        return m < nx->nmachines ? m : BERTH_NEXUS_NONE;
    }
    for (uint32_t i = 0; i < nx->nmachines; i++)
        if (strcmp(nx->machines[i].name, name) == 0)
            return i;
    return BERTH_NEXUS_NONE;
}

int nexus_index_machines(berth_nexus *nx)
{
    berth_nameidx_free(&nx->machine_idx);
    if (berth_nameidx_reserve(&nx->machine_idx, nx->nmachines))
        return BERTH_ENOMEM;
    for (uint32_t m = 0; m < nx->nmachines; m++)
        if (berth_nameidx_add(&nx->machine_idx, nx->machines[m].name, m, NULL) < 0)
            return BERTH_ENOMEM;
    return 0;
}

static uint32_t name_hash(const berth_nexus *nx, const char *s)
{
    return berth_nameidx_hash(nx->cluster_key, s);
}

/* Live clusters by name: linear probing over cluster ids; deleted clusters
 * are skipped on lookup and their slots reused on rebuild. */
uint32_t berth_nexus_find_cluster(const berth_nexus *nx, const char *name)
{
    if (!nx->cluster_index_cap)
        return BERTH_NEXUS_NONE;
    uint32_t mask = nx->cluster_index_cap - 1;
    for (uint32_t i = name_hash(nx, name) & mask;; i = (i + 1) & mask) {
        uint32_t v = nx->cluster_index[i];
        if (!v)
            return BERTH_NEXUS_NONE;
        const berth_cluster *c = &nx->clusters[v - 1];
        if (c->status != BERTH_CLUSTER_DELETED && strcmp(c->name, name) == 0)
            return v - 1;
    }
}

int nexus_index_cluster(berth_nexus *nx, uint32_t id)
{
    if (2 * (nx->nclusters + 1) > nx->cluster_index_cap) {
        uint32_t cap = nx->cluster_index_cap ? nx->cluster_index_cap * 2 : 64;
        while (2 * (nx->nclusters + 1) > cap)
            cap *= 2;
        uint32_t *t = calloc(cap, sizeof *t);
        if (!t)
            return BERTH_ENOMEM;
        free(nx->cluster_index);
        nx->cluster_index = t;
        nx->cluster_index_cap = cap;
        for (uint32_t c = 0; c < nx->nclusters; c++)
            if (c != id && nx->clusters[c].status != BERTH_CLUSTER_DELETED) {
                uint32_t i = name_hash(nx, nx->clusters[c].name) & (cap - 1);
                while (t[i])
                    i = (i + 1) & (cap - 1);
                t[i] = c + 1;
            }
    }
    uint32_t mask = nx->cluster_index_cap - 1;
    uint32_t i = name_hash(nx, nx->clusters[id].name) & mask;
    while (nx->cluster_index[i])
        i = (i + 1) & mask;
    nx->cluster_index[i] = id + 1;
    return 0;
}

uint32_t berth_nexus_find_pool(const berth_nexus *nx, uint32_t cluster, const char *name)
{
    const berth_cluster *c = &nx->clusters[cluster];
    for (uint32_t i = 0; i < c->npools; i++)
        if (strcmp(nx->pools[c->pools[i]].name, name) == 0)
            return c->pools[i];
    return BERTH_NEXUS_NONE;
}

void berth_nexus_vm_name(const berth_nexus *nx, uint32_t vm, char *buf, size_t size)
{
    const berth_vm *v = &nx->vms[vm];
    const berth_pool *p = &nx->pools[v->pool];
    snprintf(buf, size, "%s-%s-%u", nx->clusters[p->cluster].name, p->name, v->ordinal);
}

int berth_nexus_make_site(berth_nexus *nx, uint32_t nracks, uint32_t per_rack, uint32_t ncells,
                          int32_t cell_cpu, int64_t cell_memory, berth_error *e)
{
    if (nracks == 0 || per_rack == 0 || ncells == 0 || ncells > BERTH_NEXUS_MAX_CELLS)
        return berth_error_set(e, BERTH_EINVAL, "site: racks, machines per rack and cells must be positive (cells at most %d)",
                               BERTH_NEXUS_MAX_CELLS);
    if ((uint64_t)nracks * per_rack > BERTH_NEXUS_MAX_MACHINES)
        return berth_error_set(e, BERTH_ELIMIT, "site: more than %u machines",
                               BERTH_NEXUS_MAX_MACHINES);
    free(nx->racks);
    free(nx->machines);
    free(nx->cells);
    nx->nracks = nracks;
    nx->nmachines = nracks * per_rack;
    nx->ncells = nx->nmachines * ncells;
    nx->racks = calloc(nracks, sizeof *nx->racks);
    nx->machines = calloc(nx->nmachines, sizeof *nx->machines);
    nx->cells = calloc(nx->ncells, sizeof *nx->cells);
    if (!nx->racks || !nx->machines || !nx->cells)
        return berth_error_set(e, BERTH_ENOMEM, "site: out of memory");
    int width = per_rack >= 100 ? 3 : 2;
    char buf[64];
    for (uint32_t r = 0; r < nracks; r++) {
        snprintf(buf, sizeof buf, "%u", r + 1);
        nx->racks[r].name = berth_arena_strdup(&nx->arena, buf);
        nx->racks[r].first_machine = r * per_rack;
        nx->racks[r].nmachines = per_rack;
        for (uint32_t i = 0; i < per_rack; i++) {
            uint32_t m = r * per_rack + i;
            snprintf(buf, sizeof buf, "rack%u-bmm%0*u", r + 1, width, i + 1);
            berth_machine *mm = &nx->machines[m];
            mm->name = berth_arena_strdup(&nx->arena, buf);
            if (!mm->name || !nx->racks[r].name)
                return berth_error_set(e, BERTH_ENOMEM, "site: out of memory");
            mm->rack = r;
            mm->first_cell = m * ncells;
            mm->ncells = ncells;
            for (uint32_t c = 0; c < ncells; c++) {
                nx->cells[m * ncells + c].cpu = cell_cpu;
                nx->cells[m * ncells + c].memory = cell_memory;
            }
        }
    }
    nx->have_site = 1;
    if (nexus_index_machines(nx))
        return berth_error_set(e, BERTH_ENOMEM, "site: out of memory");
    return 0;
}

void berth_nexus_format_zones(const berth_nexus *nx, const uint32_t *zones, uint32_t n, char *buf,
                              size_t size)
{
    size_t off = 0;
    if (size)
        buf[0] = 0;
    for (uint32_t i = 0; i < n && off < size; i++) {
        int w = snprintf(buf + off, size - off, "%s%s", i ? ", " : "", nx->racks[zones[i]].name);
        off += w > 0 ? (size_t)w : 0;
    }
}
