/* nexus/plugins.c - the nexus domain as a pipeline profile (SPEC 1.4):
 * filters Schedulable, NumaFit, Zones; lexicographic scores RackSpread
 * (fewer VMs of this pool in the rack), MachineSpread (fewer VMs of this
 * cluster on the machine), PackExtraLarge (machine already hosts another
 * cluster's extra-large VM), RackUtilisation (less utilised rack); ties go
 * to the lowest machine index (rack, machine order). The reserve step
 * takes the first fitting NUMA cell(s). */
#include "nexus/state.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define GiB (1024.0 * 1024 * 1024)

static void f_sched(void *state, const void *req, const uint32_t *cand, uint32_t n, uint8_t *v)
{
    const berth_nexus *nx = state;
    const nexus_mstate *ms = nx->state->mach;
    for (uint32_t i = 0; i < n; i++)
        if (!ms[cand[i]].sched)
            v[i] = BERTH_UNFIT;
}

static void r_sched(void *state, const void *req, uint32_t c, char *buf, size_t size)
{
    const berth_nexus *nx = state;
    const berth_machine *m = &nx->machines[c];
    snprintf(buf, size, "machine %s is %s", m->name,
             m->down ? "down (not ready)" : m->cordoned ? "cordoned" : "schedulable");
}

/* Indexed runs read the maintained fit flags; the reference scan
 * (use_index 0) recomputes from the cells, so the two stay independent. */
static void f_numa(void *state, const void *req, const uint32_t *cand, uint32_t n, uint8_t *v)
{
    const berth_nexus *nx = state;
    const nexus_req *rq = req;
    const berth_nexus_state *st = nx->state;
    if (st->use_index && st->tree[rq->sku]) {
        for (uint32_t i = 0; i < n; i++)
            if (!(nexus_fit_flags(st, cand[i], rq->sku) & NEXUS_FIT))
                v[i] = BERTH_UNFIT;
        return;
    }
    for (uint32_t i = 0; i < n; i++)
        if (!nexus_machine_fits(nx, cand[i], rq))
            v[i] = BERTH_UNFIT;
}

static void r_numa(void *state, const void *req, uint32_t c, char *buf, size_t size)
{
    const berth_nexus *nx = state;
    const nexus_req *rq = req;
    const berth_machine *m = &nx->machines[c];
    const berth_cell *cl = &nx->cells[m->first_cell];
    /* Name the scarcer resource the way kube does: cpu first. */
    int cpu_short = 0, mem_short = 0;
    for (uint32_t i = 0; i < m->ncells; i++) {
        cpu_short += cl[i].cpu - cl[i].used_cpu < rq->cell_cpu;
        mem_short += cl[i].memory - cl[i].used_memory < rq->cell_mem;
    }
    size_t off = 0;
    int w;
    if (cpu_short >= mem_short)
        w = snprintf(buf, size, "Insufficient cpu: requested %d host vCPU%s, free", rq->cell_cpu,
                     rq->ncells > 1 ? " per cell" : "");
    else
        w = snprintf(buf, size, "Insufficient memory: requested %.0fGi%s, free",
                     (double)rq->cell_mem / GiB, rq->ncells > 1 ? " per cell" : "");
    off = w > 0 ? (size_t)w : 0;
    for (uint32_t i = 0; i < m->ncells && off < size; i++) {
        if (cpu_short >= mem_short)
            w = snprintf(buf + off, size - off, "%s %d in NUMA cell %u", i ? "," : "",
                         cl[i].cpu - cl[i].used_cpu, i);
        else
            w = snprintf(buf + off, size - off, "%s %.0fGi in NUMA cell %u", i ? "," : "",
                         (double)(cl[i].memory - cl[i].used_memory) / GiB, i);
        off += w > 0 ? (size_t)w : 0;
    }
}

static void f_zones(void *state, const void *req, const uint32_t *cand, uint32_t n, uint8_t *v)
{
    const berth_nexus *nx = state;
    const nexus_req *rq = req;
    if (!rq->allowed)
        return;
    for (uint32_t i = 0; i < n; i++)
        if (!rq->allowed[nx->machines[cand[i]].rack])
            v[i] = BERTH_UNRESOLVABLE;
}

static void r_zones(void *state, const void *req, uint32_t c, char *buf, size_t size)
{
    const berth_nexus *nx = state;
    const nexus_req *rq = req;
    const berth_pool *p = &nx->pools[rq->pool];
    char zones[256];
    berth_nexus_format_zones(nx, p->zones, p->nzones, zones, sizeof zones);
    snprintf(buf, size, "rack %s is not in availabilityZones [%s]",
             nx->racks[nx->machines[c].rack].name, zones);
}

static void s_rack_spread(void *state, const void *req, const uint32_t *cand, uint32_t n,
                          int64_t *out)
{
    const berth_nexus *nx = state;
    const nexus_rstate *rs = nx->state->rack;
    for (uint32_t i = 0; i < n; i++)
        out[i] = -(int64_t)rs[nx->machines[cand[i]].rack].ctx_pool;
}

static void s_machine_spread(void *state, const void *req, const uint32_t *cand, uint32_t n,
                             int64_t *out)
{
    const berth_nexus *nx = state;
    const nexus_mstate *ms = nx->state->mach;
    for (uint32_t i = 0; i < n; i++)
        out[i] = -(int64_t)ms[cand[i]].ctx_cnt;
}

static void s_pack_xl(void *state, const void *req, const uint32_t *cand, uint32_t n, int64_t *out)
{
    const berth_nexus *nx = state;
    const nexus_req *rq = req;
    const nexus_mstate *ms = nx->state->mach;
    for (uint32_t i = 0; i < n; i++)
        out[i] = rq->xl ? ms[cand[i]].xl_cnt > ms[cand[i]].ctx_xl : 0;
}

static void s_rack_util(void *state, const void *req, const uint32_t *cand, uint32_t n,
                        int64_t *out)
{
    const berth_nexus *nx = state;
    const nexus_rstate *rs = nx->state->rack;
    for (uint32_t i = 0; i < n; i++)
        out[i] = -(int64_t)rs[nx->machines[cand[i]].rack].util;
}

/* Reserve: the first fitting cell(s) of machine c. */
static int reserve(void *state, const void *req, uint32_t c)
{
    berth_nexus *nx = state;
    nexus_req *rq = (nexus_req *)req;
    const berth_machine *m = &nx->machines[c];
    berth_cell *cl = &nx->cells[m->first_cell];
    uint32_t taken = 0;
    rq->chosen_cell = BERTH_NEXUS_NONE;
    rq->chosen_mask = 0;
    for (uint32_t i = 0; i < m->ncells && taken < rq->ncells; i++) {
        if (cl[i].cpu - cl[i].used_cpu >= rq->cell_cpu &&
            cl[i].memory - cl[i].used_memory >= rq->cell_mem) {
            if (rq->chosen_cell == BERTH_NEXUS_NONE)
                rq->chosen_cell = i;
            taken++;
        }
    }
    if (taken < rq->ncells)
        return BERTH_EINTERNAL;
    taken = 0;
    for (uint32_t i = rq->chosen_cell; i < m->ncells && taken < rq->ncells; i++) {
        if (cl[i].cpu - cl[i].used_cpu >= rq->cell_cpu &&
            cl[i].memory - cl[i].used_memory >= rq->cell_mem) {
            cl[i].used_cpu += rq->cell_cpu;
            cl[i].used_memory += rq->cell_mem;
            rq->chosen_mask |= 1u << i;
            taken++;
        }
    }
    nx->state->rack[m->rack].used_cpu += (int64_t)rq->cell_cpu * rq->ncells;
    if (rq->xl)
        nx->state->mach[c].xl_cnt++;
    return 0;
}

static const berth_filter_plugin sched_plugin = {BERTH_PLUGIN_VERSION, "Schedulable", f_sched,
                                                 r_sched};
static const berth_filter_plugin numa_plugin = {BERTH_PLUGIN_VERSION, "NumaFit", f_numa, r_numa};
static const berth_filter_plugin zones_plugin = {BERTH_PLUGIN_VERSION, "Zones", f_zones, r_zones};
static const berth_score_plugin rack_spread = {BERTH_PLUGIN_VERSION, "RackSpread", s_rack_spread,
                                               NULL};
static const berth_score_plugin machine_spread = {BERTH_PLUGIN_VERSION, "MachineSpread",
                                                  s_machine_spread, NULL};
static const berth_score_plugin pack_xl = {BERTH_PLUGIN_VERSION, "PackExtraLarge", s_pack_xl,
                                           NULL};
static const berth_score_plugin rack_util = {BERTH_PLUGIN_VERSION, "RackUtilisation", s_rack_util,
                                             NULL};

static const berth_filter_plugin *const filters[] = {&sched_plugin, &numa_plugin, &zones_plugin};
static const berth_score_plugin *const scores[] = {&rack_spread, &machine_spread, &pack_xl,
                                                   &rack_util};

static const berth_profile profile = {
    .version = BERTH_PLUGIN_VERSION,
    .name = "nexus",
    .filters = filters,
    .nfilters = 3,
    .scores = scores,
    .weights = NULL,
    .nscores = 4,
    .combine = BERTH_COMBINE_LEXICOGRAPHIC,
    .tiebreak = BERTH_TIE_FIRST,
    .narrow = nexus_narrow,
    .reserve = reserve,
    .unreserve = NULL,
};

const berth_profile *berth_nexus_profile(void) { return &profile; }
