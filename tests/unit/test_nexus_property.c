/* tests/unit/test_nexus_property.c - property tests of Operator Nexus VM
 * placement (SPEC 1.4) on random estates (seeded): 2..12 racks of 1..20
 * machines with 1-2 NUMA cells of 48 or 56 vCPU / 224Gi, some machines down
 * or cordoned, and random timelines of cluster creates (control plane plus
 * 1..3 pools of random built-in SKUs, extra-large and 2-cell NC_E ones
 * included, sometimes availabilityZones), deletes, scale up/down, add-pool
 * and cordon/uncordon, built through the library API.
 *
 * After EVERY step it checks the engine's state: no NUMA cell over
 * capacity, cell usage equal to the sum of the VMs on it, pool VM lists
 * consistent, zones respected, the internal counters and rack index
 * consistent with a recomputation. Every VM a step placed is then replayed
 * in placement order against an independent model of the state at that
 * moment: the machine was schedulable (not cordoned or down), in an allowed
 * rack, had the cells free; RackSpread (no allowed rack with fewer VMs of
 * the pool had a fitting machine), MachineSpread (no fitting machine in the
 * rack with fewer VMs of the cluster), and finally the whole SPEC 1.4
 * ranking (pack extra-large, rack utilisation, lowest rack/machine/cell).
 * Failures must be real (the model finds no machine either) and
 * all-or-nothing (no VMs left, usage as before) unless partial. At the end
 * berth_nexus_max_fit must equal what a best-effort pool actually places
 * (and, in a fixed case, for a 2-cell SKU on a 3-cell machine).
 * NEXUS_PROPERTY_RUNS=N in the environment runs more scenarios. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "berth/nexus.h"
#include "berth/random.h"
#include "nexus/state.h"

#define GiB (1024LL * 1024 * 1024)
#define NONE BERTH_NEXUS_NONE

static char ctx[256]; /* scenario and step, printed with every failure */
static void check_failed(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void check_failed(const char *fmt, ...)
{
    char m[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    fail_msg("%s: %s", ctx, m);
}
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond))                                                                               \
            check_failed(__VA_ARGS__);                                                             \
    } while (0)

static const char *rack_names[64];
static char rack_name_buf[64][16];

static void init_names(void)
{
    for (int i = 0; i < 64; i++) {
        snprintf(rack_name_buf[i], sizeof rack_name_buf[i], "%u", (unsigned)i + 1u);
        rack_names[i] = rack_name_buf[i];
    }
}

static uint32_t rnd(berth_rng *r, uint32_t lo, uint32_t hi)
{
    return lo + (uint32_t)berth_rng_below(r, (uint64_t)(hi - lo) + 1);
}

static int chance(berth_rng *r, uint32_t pct) { return berth_rng_below(r, 100) < pct; }

static const char *const xl_skus[] = {"NC_G56_224_v1", "NC_P54_224_v1", "NC_G48_224_v1",
                                      "NC_P46_224_v1"};
static const char *const e_skus[] = {"NC_E110_448_v1", "NC_E94_448_v1", "NC_E70_336_v1"};
static const char *const mid_skus[] = {
    "NC_G42_168_v1", "NC_P40_168_v1", "NC_G36_168_v1", "NC_P34_168_v1", "NC_G28_112_v1",
    "NC_P26_112_v1", "NC_G24_112_v1", "NC_P22_112_v1", "NC_G18_74_v1",  "NC_P16_74_v1",
    "NC_G16_74_v1",  "NC_P14_74_v1",  "NC_G14_56_v1",  "NC_P12_56_v1",  "NC_G12_56_v1",
    "NC_P10_56_v1",  "NC_G6_28_v1",   "NC_P4_28_v1",   "NC_G2_8_v1"};
static const char *const cp_skus[] = {"NC_G12_56_v1", "NC_G24_112_v1", "NC_P22_112_v1",
                                      "NC_G6_28_v1", "NC_G2_8_v1", "NC_P10_56_v1"};
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const char *worker_sku(berth_rng *r)
{
    uint32_t x = rnd(r, 0, 99);
    if (x < 40)
        return xl_skus[berth_rng_below(r, NELEM(xl_skus))];
    if (x < 52)
        return e_skus[berth_rng_below(r, NELEM(e_skus))];
    return mid_skus[berth_rng_below(r, NELEM(mid_skus))];
}

/* What one VM of a SKU needs in each cell it uses. */
static void sku_need(const berth_nexus *nx, uint32_t sku, uint32_t *nc, int64_t *cpu, int64_t *mem)
{
    const berth_sku *k = &nx->skus[sku];
    *nc = k->numa_cells > 1 ? (uint32_t)k->numa_cells : 1;
    *cpu = (k->host_vcpu + (int64_t)*nc - 1) / (int64_t)*nc;
    *mem = (k->memory + (int64_t)*nc - 1) / (int64_t)*nc;
}

static int popcount32(uint32_t x)
{
    int n = 0;
    for (; x; x &= x - 1)
        n++;
    return n;
}

/* ---- an independent model of the estate (the reference of SPEC 1.4) ---- */

typedef struct world {
    const berth_nexus *nx;
    uint32_t M, R, NC;
    int64_t *ucpu, *umem; /* per cell */
    uint8_t *sched;
    uint32_t *xl;         /* extra-large VMs per machine */
    int64_t *rack_used, *rack_cap;
    uint32_t nv, capv;    /* VMs by id; vmach NONE = not live */
    uint32_t *vpool, *vmach, *vmask;
    /* context: the cluster and pool being placed */
    uint32_t ctx_cluster, ctx_pool;
    uint32_t *pool_rack, *cl_mach, *cl_xl;
    uint8_t *allowed;
    int zoned;
} world;

static void world_free(world *w)
{
    free(w->ucpu);
    free(w->umem);
    free(w->sched);
    free(w->xl);
    free(w->rack_used);
    free(w->rack_cap);
    free(w->vpool);
    free(w->vmach);
    free(w->vmask);
    free(w->pool_rack);
    free(w->cl_mach);
    free(w->cl_xl);
    free(w->allowed);
    memset(w, 0, sizeof *w);
}

static void world_init(world *w, const berth_nexus *nx)
{
    memset(w, 0, sizeof *w);
    w->nx = nx;
    w->M = nx->nmachines;
    w->R = nx->nracks;
    w->NC = nx->ncells;
    w->ucpu = calloc(w->NC, sizeof *w->ucpu);
    w->umem = calloc(w->NC, sizeof *w->umem);
    w->sched = calloc(w->M, 1);
    w->xl = calloc(w->M, sizeof *w->xl);
    w->rack_used = calloc(w->R, sizeof *w->rack_used);
    w->rack_cap = calloc(w->R, sizeof *w->rack_cap);
    w->pool_rack = calloc(w->R, sizeof *w->pool_rack);
    w->cl_mach = calloc(w->M, sizeof *w->cl_mach);
    w->cl_xl = calloc(w->M, sizeof *w->cl_xl);
    w->allowed = calloc(w->R, 1);
    assert_non_null(w->ucpu);
    assert_non_null(w->umem);
    assert_non_null(w->sched);
    assert_non_null(w->xl);
    assert_non_null(w->rack_used);
    assert_non_null(w->rack_cap);
    assert_non_null(w->pool_rack);
    assert_non_null(w->cl_mach);
    assert_non_null(w->cl_xl);
    assert_non_null(w->allowed);
    w->ctx_cluster = w->ctx_pool = NONE;
}

static void world_grow(world *w, uint32_t id)
{
    if (id < w->capv)
        return;
    uint32_t nc = w->capv ? w->capv : 64;
    while (nc <= id)
        nc *= 2;
    w->vpool = realloc(w->vpool, nc * sizeof *w->vpool);
    w->vmach = realloc(w->vmach, nc * sizeof *w->vmach);
    w->vmask = realloc(w->vmask, nc * sizeof *w->vmask);
    assert_non_null(w->vpool);
    assert_non_null(w->vmach);
    assert_non_null(w->vmask);
    for (uint32_t i = w->capv; i < nc; i++)
        w->vmach[i] = NONE;
    w->capv = nc;
}

static void world_add(world *w, uint32_t id, uint32_t pool, uint32_t m, uint32_t mask, int sign)
{
    const berth_nexus *nx = w->nx;
    uint32_t nc;
    int64_t cpu, mem;
    const berth_pool *p = &nx->pools[pool];
    sku_need(nx, p->sku, &nc, &cpu, &mem);
    const berth_machine *mm = &nx->machines[m];
    for (uint32_t i = 0; i < mm->ncells; i++)
        if (mask & (1u << i)) {
            w->ucpu[mm->first_cell + i] += sign * cpu;
            w->umem[mm->first_cell + i] += sign * mem;
        }
    w->rack_used[mm->rack] += sign * cpu * (int64_t)nc;
    int xl = nx->skus[p->sku].extra_large;
    if (xl)
        w->xl[m] += (uint32_t)sign;
    if (p->cluster == w->ctx_cluster) {
        w->cl_mach[m] += (uint32_t)sign;
        if (xl)
            w->cl_xl[m] += (uint32_t)sign;
        if (pool == w->ctx_pool)
            w->pool_rack[mm->rack] += (uint32_t)sign;
    }
    world_grow(w, id);
    if (sign > 0) {
        w->vpool[id] = pool;
        w->vmach[id] = m;
        w->vmask[id] = mask;
        if (id >= w->nv)
            w->nv = id + 1;
    } else {
        w->vmach[id] = NONE;
    }
}

/* Loads the model from the engine's live VMs (not from its cell counters). */
static void world_load(world *w)
{
    const berth_nexus *nx = w->nx;
    memset(w->ucpu, 0, w->NC * sizeof *w->ucpu);
    memset(w->umem, 0, w->NC * sizeof *w->umem);
    memset(w->xl, 0, w->M * sizeof *w->xl);
    memset(w->rack_used, 0, w->R * sizeof *w->rack_used);
    memset(w->rack_cap, 0, w->R * sizeof *w->rack_cap);
    w->ctx_cluster = w->ctx_pool = NONE;
    for (uint32_t m = 0; m < w->M; m++) {
        const berth_machine *mm = &nx->machines[m];
        w->sched[m] = !mm->cordoned && !mm->down;
        for (uint32_t c = 0; c < mm->ncells; c++)
            w->rack_cap[mm->rack] += nx->cells[mm->first_cell + c].cpu;
    }
    for (uint32_t i = 0; i < w->nv; i++)
        w->vmach[i] = NONE;
    w->nv = 0;
    world_grow(w, nx->nvms + 1);
    for (uint32_t v = 0; v < nx->nvms; v++)
        if (nx->vms[v].machine != NONE)
            world_add(w, v, nx->vms[v].pool, nx->vms[v].machine, nx->vms[v].cells_mask, +1);
    if (w->nv < nx->nvms)
        w->nv = nx->nvms;
}

static void world_ctx(world *w, uint32_t cluster, uint32_t pool)
{
    const berth_nexus *nx = w->nx;
    memset(w->pool_rack, 0, w->R * sizeof *w->pool_rack);
    memset(w->cl_mach, 0, w->M * sizeof *w->cl_mach);
    memset(w->cl_xl, 0, w->M * sizeof *w->cl_xl);
    w->ctx_cluster = cluster;
    w->ctx_pool = pool;
    for (uint32_t v = 0; v < w->nv; v++) {
        if (w->vmach[v] == NONE)
            continue;
        const berth_pool *p = &nx->pools[w->vpool[v]];
        if (p->cluster != cluster)
            continue;
        uint32_t m = w->vmach[v];
        w->cl_mach[m]++;
        if (nx->skus[p->sku].extra_large)
            w->cl_xl[m]++;
        if (w->vpool[v] == pool)
            w->pool_rack[nx->machines[m].rack]++;
    }
    const berth_pool *p = &nx->pools[pool];
    w->zoned = p->nzones > 0;
    memset(w->allowed, 0, w->R);
    for (uint32_t i = 0; i < p->nzones; i++)
        w->allowed[p->zones[i]] = 1;
}

/* Does machine m fit one VM of sku now? *mask gets the first fitting cells. */
static int w_fits(const world *w, uint32_t m, uint32_t sku, uint32_t *mask)
{
    const berth_nexus *nx = w->nx;
    uint32_t nc;
    int64_t cpu, mem;
    sku_need(nx, sku, &nc, &cpu, &mem);
    const berth_machine *mm = &nx->machines[m];
    uint32_t got = 0, mk = 0;
    for (uint32_t i = 0; i < mm->ncells && got < nc; i++) {
        const berth_cell *c = &nx->cells[mm->first_cell + i];
        if (c->cpu - w->ucpu[mm->first_cell + i] >= cpu &&
            c->memory - w->umem[mm->first_cell + i] >= mem) {
            mk |= 1u << i;
            got++;
        }
    }
    if (mask)
        *mask = mk;
    return got == nc;
}

static int w_feasible(const world *w, uint32_t m, uint32_t sku)
{
    if (!w->sched[m])
        return 0;
    if (w->zoned && !w->allowed[w->nx->machines[m].rack])
        return 0;
    return w_fits(w, m, sku, NULL);
}

/* SPEC 1.4 ranking: negative when machine a is better than b. */
static int w_rank_cmp(const world *w, uint32_t sku, uint32_t a, uint32_t b)
{
    const berth_nexus *nx = w->nx;
    uint32_t ra = nx->machines[a].rack, rb = nx->machines[b].rack;
    if (w->pool_rack[ra] != w->pool_rack[rb])
        return w->pool_rack[ra] < w->pool_rack[rb] ? -1 : 1;
    if (w->cl_mach[a] != w->cl_mach[b])
        return w->cl_mach[a] < w->cl_mach[b] ? -1 : 1;
    if (nx->skus[sku].extra_large) {
        int pa = w->xl[a] > w->cl_xl[a], pb = w->xl[b] > w->cl_xl[b];
        if (pa != pb)
            return pa ? -1 : 1;
    }
    /* less utilised rack: used/cap compared exactly */
    int64_t ua = w->rack_used[ra] * w->rack_cap[rb], ub = w->rack_used[rb] * w->rack_cap[ra];
    if (ua != ub)
        return ua < ub ? -1 : 1;
    return a < b ? -1 : a > b ? 1 : 0;
}

/* Reference pick for the context pool. */
static int w_pick(const world *w, uint32_t *best, uint32_t *mask)
{
    uint32_t sku = w->nx->pools[w->ctx_pool].sku;
    uint32_t b = NONE;
    for (uint32_t m = 0; m < w->M; m++) {
        if (!w_feasible(w, m, sku))
            continue;
        if (b == NONE || w_rank_cmp(w, sku, m, b) < 0)
            b = m;
    }
    if (b == NONE)
        return 0;
    *best = b;
    w_fits(w, b, sku, mask);
    return 1;
}

/* Checks one VM the engine placed (id vm, on machine m, cells mask) against
 * the model's state just before it, then applies it to the model. */
static void check_vm(world *w, uint32_t vm, uint32_t m, uint32_t mask, uint32_t cell)
{
    const berth_nexus *nx = w->nx;
    uint32_t pool = w->ctx_pool, sku = nx->pools[pool].sku;
    char name[256];
    berth_nexus_vm_name(nx, vm, name, sizeof name);
    CHECK(m < w->M, "VM %s has machine %u out of range", name, m);
    const berth_machine *mm = &nx->machines[m];
    uint32_t r = mm->rack;
    CHECK(w->sched[m], "VM %s was placed on machine %s, which was %s before it was placed", name,
          mm->name, mm->down ? "down" : "cordoned");
    CHECK(!w->zoned || w->allowed[r], "VM %s was placed in rack %s outside its pool's zones",
          name, nx->racks[r].name);
    uint32_t nc;
    int64_t cpu, mem;
    sku_need(nx, sku, &nc, &cpu, &mem);
    CHECK(popcount32(mask) == (int)nc && (mask >> mm->ncells) == 0,
          "VM %s uses cells mask 0x%x, expected %u of the machine's %u cells", name, mask, nc,
          mm->ncells);
    CHECK(mask & (1u << cell) && (mask & ((1u << cell) - 1)) == 0,
          "VM %s: numaCell %u is not the first cell of its mask 0x%x", name, cell, mask);
    for (uint32_t i = 0; i < mm->ncells; i++)
        if (mask & (1u << i)) {
            const berth_cell *c = &nx->cells[mm->first_cell + i];
            CHECK(c->cpu - w->ucpu[mm->first_cell + i] >= cpu &&
                      c->memory - w->umem[mm->first_cell + i] >= mem,
                  "VM %s put NUMA cell %u of %s over capacity (free %lld vCPU %lldGi, needs "
                  "%lld vCPU %lldGi)",
                  name, i, mm->name, (long long)(c->cpu - w->ucpu[mm->first_cell + i]),
                  (long long)((c->memory - w->umem[mm->first_cell + i]) / GiB), (long long)cpu,
                  (long long)(mem / GiB));
        }
    /* RackSpread: no allowed rack with fewer VMs of the pool had a fitting machine */
    for (uint32_t o = 0; o < w->M; o++) {
        uint32_t ro = nx->machines[o].rack;
        if (w->pool_rack[ro] < w->pool_rack[r] && w_feasible(w, o, sku))
            CHECK(0,
                  "RackSpread: VM %s went to rack %s holding %u VMs of pool %s while rack %s "
                  "holding %u had fitting machine %s",
                  name, nx->racks[r].name, w->pool_rack[r], nx->pools[pool].name,
                  nx->racks[ro].name, w->pool_rack[ro], nx->machines[o].name);
    }
    /* MachineSpread: no fitting machine in the rack with fewer VMs of the cluster */
    for (uint32_t o = nx->racks[r].first_machine;
         o < nx->racks[r].first_machine + nx->racks[r].nmachines; o++)
        if (w->cl_mach[o] < w->cl_mach[m] && w_feasible(w, o, sku))
            CHECK(0,
                  "MachineSpread: VM %s went to %s holding %u VMs of its cluster while %s in "
                  "the same rack held %u and fitted",
                  name, mm->name, w->cl_mach[m], nx->machines[o].name, w->cl_mach[o]);
    /* the full ranking */
    uint32_t best = NONE, bmask = 0;
    CHECK(w_pick(w, &best, &bmask), "VM %s placed but the reference finds no machine", name);
    CHECK(best == m && bmask == mask,
          "VM %s: engine chose %s cells 0x%x, SPEC 1.4 ranking chooses %s cells 0x%x "
          "(pool VMs in racks %u/%u, cluster VMs on machines %u/%u, xl %u-%u/%u-%u)",
          name, mm->name, mask, nx->machines[best].name, bmask, w->pool_rack[r],
          w->pool_rack[nx->machines[best].rack], w->cl_mach[m], w->cl_mach[best], w->xl[m],
          w->cl_xl[m], w->xl[best], w->cl_xl[best]);
    world_add(w, vm, pool, m, mask, +1);
}

/* ---- engine-state invariants ---- */

static void check_invariants(const berth_nexus *nx)
{
    uint32_t NC = nx->ncells;
    int64_t *cpu = calloc(NC ? NC : 1, sizeof *cpu), *mem = calloc(NC ? NC : 1, sizeof *mem);
    uint32_t *seen = calloc(nx->nvms ? nx->nvms : 1, sizeof *seen);
    assert_non_null(cpu);
    assert_non_null(mem);
    assert_non_null(seen);
    for (uint32_t v = 0; v < nx->nvms; v++) {
        const berth_vm *vm = &nx->vms[v];
        if (vm->machine == NONE)
            continue;
        CHECK(vm->machine < nx->nmachines && vm->pool < nx->npools, "VM %u has bad indices", v);
        const berth_pool *p = &nx->pools[vm->pool];
        const berth_machine *mm = &nx->machines[vm->machine];
        uint32_t nc;
        int64_t c, g;
        sku_need(nx, p->sku, &nc, &c, &g);
        CHECK(popcount32(vm->cells_mask) == (int)nc && (vm->cells_mask >> mm->ncells) == 0,
              "VM %u cells mask 0x%x", v, vm->cells_mask);
        for (uint32_t i = 0; i < mm->ncells; i++)
            if (vm->cells_mask & (1u << i)) {
                cpu[mm->first_cell + i] += c;
                mem[mm->first_cell + i] += g;
            }
        if (p->nzones) {
            int ok = 0;
            for (uint32_t z = 0; z < p->nzones; z++)
                ok |= p->zones[z] == mm->rack;
            char name[256];
            berth_nexus_vm_name(nx, v, name, sizeof name);
            CHECK(ok, "VM %s is in rack %s, outside its pool's availabilityZones", name,
                  nx->racks[mm->rack].name);
        }
        CHECK(nx->clusters[p->cluster].status != BERTH_CLUSTER_DELETED,
              "VM %u of a deleted cluster is still placed", v);
    }
    for (uint32_t c = 0; c < NC; c++) {
        const berth_cell *cl = &nx->cells[c];
        CHECK(cl->used_cpu >= 0 && cl->used_cpu <= cl->cpu && cl->used_memory >= 0 &&
                  cl->used_memory <= cl->memory,
              "NUMA cell %u over capacity: cpu %d/%d memory %lld/%lld", c, cl->used_cpu, cl->cpu,
              (long long)cl->used_memory, (long long)cl->memory);
        CHECK(cl->used_cpu == cpu[c] && cl->used_memory == mem[c],
              "NUMA cell %u used cpu %d memory %lld, but its VMs sum to %lld and %lld", c,
              cl->used_cpu, (long long)cl->used_memory, (long long)cpu[c], (long long)mem[c]);
    }
    /* pool VM lists: each live VM exactly once, in its own pool */
    for (uint32_t p = 0; p < nx->npools; p++) {
        const berth_pool *pl = &nx->pools[p];
        for (uint32_t i = 0; i < pl->nvms; i++) {
            uint32_t v = pl->vms[i];
            CHECK(v < nx->nvms && nx->vms[v].pool == p && nx->vms[v].machine != NONE,
                  "pool %s lists VM %u that is not a live VM of it", pl->name, v);
            CHECK(seen[v]++ == 0, "VM %u listed twice", v);
            if (i)
                CHECK(nx->vms[pl->vms[i - 1]].ordinal < nx->vms[v].ordinal,
                      "pool %s VMs out of placement order", pl->name);
        }
    }
    for (uint32_t v = 0; v < nx->nvms; v++)
        CHECK((nx->vms[v].machine != NONE) == (seen[v] == 1), "VM %u live %d but listed %u", v,
              nx->vms[v].machine != NONE, seen[v]);
    /* the index's own counters, fit flags and rack trees, recomputed from the
     * model by the index (its layout is its own business: what this test
     * holds it to is its decisions, checked VM by VM against the reference
     * model below, and agreement with a recomputation here) */
    char why[512];
    CHECK(nexus_index_check((berth_nexus *)nx, why, sizeof why) == 0, "index state: %s", why);
    free(cpu);
    free(mem);
    free(seen);
}

/* ---- scenario driver ---- */

typedef struct scen {
    berth_nexus nx;
    berth_nexus_options opt;
    world w;
    berth_rng rng;
    uint64_t seed;
    uint32_t nextname;
    berth_cell *before; /* engine cells before the step */
    uint32_t cells_checked, vms_checked, failures_checked;
} scen;

static void snapshot_cells(scen *s)
{
    memcpy(s->before, s->nx.cells, s->nx.ncells * sizeof *s->before);
}

static void check_cells_unchanged(scen *s, const char *what)
{
    for (uint32_t c = 0; c < s->nx.ncells; c++)
        CHECK(s->nx.cells[c].used_cpu == s->before[c].used_cpu &&
                  s->nx.cells[c].used_memory == s->before[c].used_memory,
              "%s changed the usage of NUMA cell %u (cpu %d -> %d)", what, c,
              s->before[c].used_cpu, s->nx.cells[c].used_cpu);
}

static void random_zones(scen *s, const char **zones, uint32_t *nz)
{
    uint32_t R = s->nx.nracks;
    uint32_t want = rnd(&s->rng, 1, R);
    *nz = 0;
    for (uint32_t r = 0; r < R; r++)
        if (berth_rng_below(&s->rng, R - r) < want - *nz)
            zones[(*nz)++] = rack_names[r];
}

static uint32_t random_count(berth_rng *r)
{
    return chance(r, 50) ? rnd(r, 1, 8) : rnd(r, 1, 40);
}

/* Replays the VMs a step placed for pools[0..n) (add[i] more VMs each),
 * starting at VM id first, against the model loaded before the step. */
static void replay(scen *s, uint32_t cluster, const uint32_t *pools, const uint32_t *add,
                   uint32_t n, uint32_t first, int may_stop)
{
    berth_nexus *nx = &s->nx;
    world *w = &s->w;
    uint32_t vmi = first;
    for (uint32_t i = 0; i < n; i++) {
        world_ctx(w, cluster, pools[i]);
        for (uint32_t k = 0; k < add[i]; k++) {
            if (vmi < nx->nvms && nx->vms[vmi].pool == pools[i]) {
                const berth_vm *v = &nx->vms[vmi];
                CHECK(v->machine != NONE, "VM id %u of a step that kept its VMs is not placed",
                      vmi);
                check_vm(w, vmi, v->machine, v->cells_mask, v->cell);
                s->vms_checked++;
                vmi++;
                continue;
            }
            uint32_t b, mk;
            int found = w_pick(w, &b, &mk);
            CHECK(!found,
                  "pool %s stopped after %u of %u VMs, but machine %s (rack %s) fits the next",
                  nx->pools[pools[i]].name, k, add[i], nx->machines[found ? b : 0].name,
                  nx->racks[nx->machines[found ? b : 0].rack].name);
            CHECK(may_stop, "pool %s placed %u of %u VMs in a step that succeeded",
                  nx->pools[pools[i]].name, k, add[i]);
            s->failures_checked++;
            break;
        }
    }
    CHECK(vmi == nx->nvms, "the step created %u VMs, the replay accounted for %u",
          nx->nvms - first, vmi - first);
}

/* For a failed all-or-nothing step: the reference, placing the same pools
 * from the state before, must fail too, after as many VMs as the engine
 * tried (it allocated ids for them), on the pool its reason names. */
static void check_real_failure(scen *s, uint32_t cluster, const uint32_t *pools,
                               const uint32_t *add, uint32_t n, uint32_t first,
                               const char *reason)
{
    berth_nexus *nx = &s->nx;
    world *w = &s->w;
    uint32_t id = first, failed_pool = NONE, failed_at = 0;
    for (uint32_t i = 0; i < n && failed_pool == NONE; i++) {
        world_ctx(w, cluster, pools[i]);
        for (uint32_t k = 0; k < add[i]; k++) {
            uint32_t b, mk;
            if (!w_pick(w, &b, &mk)) {
                failed_pool = i;
                failed_at = k;
                break;
            }
            world_add(w, id++, pools[i], b, mk, +1);
        }
    }
    CHECK(failed_pool != NONE, "the engine failed (%.300s), but the reference places everything",
          reason);
    CHECK(id == nx->nvms, "the engine tried %u VMs before failing, the reference %u",
          nx->nvms - first, id - first);
    char want[256];
    snprintf(want, sizeof want, "pool %s: placed %u of %u ", nx->pools[pools[failed_pool]].name,
             failed_at, add[failed_pool]);
    CHECK(reason && strstr(reason, want), "failure reason '%.300s' does not say '%s'",
          reason ? reason : "(null)", want);
    for (uint32_t v = first; v < nx->nvms; v++)
        CHECK(nx->vms[v].machine == NONE, "failed step left VM %u placed", v);
    s->failures_checked++;
    world_load(w); /* the reference run polluted the model */
}

static uint32_t live_cluster(scen *s)
{
    uint32_t live[4096], n = 0;
    for (uint32_t c = 0; c < s->nx.nclusters && n < 4096; c++)
        if (s->nx.clusters[c].status == BERTH_CLUSTER_SUCCEEDED)
            live[n++] = c;
    return n ? live[berth_rng_below(&s->rng, n)] : NONE;
}

static void op_create(scen *s)
{
    berth_nexus *nx = &s->nx;
    berth_rng *r = &s->rng;
    char name[32];
    /* sometimes reuse the name of a deleted cluster */
    uint32_t reuse = NONE;
    for (uint32_t c = 0; c < nx->nclusters; c++)
        if (nx->clusters[c].status == BERTH_CLUSTER_DELETED &&
            berth_nexus_find_cluster(nx, nx->clusters[c].name) == NONE && chance(r, 30))
            reuse = c;
    if (reuse != NONE)
        snprintf(name, sizeof name, "%s", nx->clusters[reuse].name);
    else
        snprintf(name, sizeof name, "c%u", s->nextname++);
    berth_pool_spec ps[4];
    const char *zones[4][64];
    uint32_t np = 1 + rnd(r, 1, 3);
    memset(ps, 0, sizeof ps);
    for (uint32_t i = 0; i < np; i++) {
        char pn[16];
        if (i == 0) {
            ps[i].name = "control-plane";
            ps[i].role = BERTH_ROLE_CONTROL_PLANE;
            ps[i].sku = cp_skus[berth_rng_below(r, NELEM(cp_skus))];
            ps[i].count = chance(r, 70) ? 1 + 2 * rnd(r, 0, 2) : rnd(r, 1, 7);
        } else {
            snprintf(pn, sizeof pn, "pool-%u", i);
            ps[i].name = berth_arena_strdup(&nx->arena, pn);
            ps[i].role = BERTH_ROLE_WORKER;
            ps[i].sku = worker_sku(r);
            ps[i].count = random_count(r);
        }
        if (chance(r, i == 0 ? 10 : 25)) {
            random_zones(s, zones[i], &ps[i].nzones);
            ps[i].zones = zones[i];
        }
        ps[i].where = "test";
    }
    berth_cluster_spec spec = {berth_arena_strdup(&nx->arena, name), ps, np, "test"};
    uint32_t first = nx->nvms, npools0 = nx->npools, cid = NONE;
    world_load(&s->w);
    snapshot_cells(s);
    berth_error e;
    berth_error_clear(&e);
    int rc = berth_nexus_create_cluster(nx, &spec, &s->opt, &cid, &e);
    CHECK(rc == 0 || rc == BERTH_ENOFIT, "create %s returned %d (%.300s)", name, rc, e.msg);
    CHECK(cid == nx->nclusters - 1 && nx->clusters[cid].npools == np &&
              nx->npools == npools0 + np,
          "create %s: cluster/pool records", name);
    uint32_t pools[4], add[4];
    for (uint32_t i = 0; i < np; i++) {
        pools[i] = nx->clusters[cid].pools[i];
        add[i] = (uint32_t)ps[i].count;
        const berth_pool *p = &nx->pools[pools[i]];
        CHECK(!strcmp(p->name, ps[i].name) && p->role == ps[i].role &&
                  !strcmp(nx->skus[p->sku].name, ps[i].sku) && p->count == ps[i].count &&
                  p->nzones == ps[i].nzones,
              "pool %s recorded differently from its spec", ps[i].name);
    }
    const berth_cluster *c = &nx->clusters[cid];
    if (rc == 0) {
        CHECK(c->status == BERTH_CLUSTER_SUCCEEDED, "create %s: status %d", name, c->status);
        for (uint32_t i = 0; i < np; i++)
            CHECK(nx->pools[pools[i]].nvms == add[i], "pool %s has %u of %u VMs",
                  nx->pools[pools[i]].name, nx->pools[pools[i]].nvms, add[i]);
        replay(s, cid, pools, add, np, first, 0);
    } else {
        CHECK(c->status == BERTH_CLUSTER_FAILED && c->reason && c->reason[0],
              "failed create %s: status %d, reason '%s'", name, c->status,
              c->reason ? c->reason : "");
        CHECK(strstr(e.msg, name) && strstr(e.msg, "pool "), "error '%.300s' names neither %s nor a pool",
              e.msg, name);
        if (s->opt.partial) {
            replay(s, cid, pools, add, np, first, 1);
        } else {
            for (uint32_t i = 0; i < np; i++)
                CHECK(nx->pools[pools[i]].nvms == 0, "failed cluster %s kept VMs in pool %s",
                      name, nx->pools[pools[i]].name);
            check_cells_unchanged(s, "a failed all-or-nothing create");
            check_real_failure(s, cid, pools, add, np, first, c->reason);
        }
    }
}

static void op_delete(scen *s)
{
    berth_nexus *nx = &s->nx;
    uint32_t cid = live_cluster(s);
    if (cid == NONE)
        return;
    berth_error e;
    int rc = berth_nexus_delete_cluster(nx, cid, &e);
    CHECK(rc == 0, "delete returned %d", rc);
    CHECK(nx->clusters[cid].status == BERTH_CLUSTER_DELETED, "deleted cluster status");
    for (uint32_t i = 0; i < nx->clusters[cid].npools; i++)
        CHECK(nx->pools[nx->clusters[cid].pools[i]].nvms == 0, "deleted cluster kept VMs");
    CHECK(berth_nexus_find_cluster(nx, nx->clusters[cid].name) == NONE,
          "a deleted cluster is still found by name");
}

static void scale_or_add(scen *s, uint32_t cid, uint32_t pid, uint32_t old_nvms,
                         const uint32_t *old_list, uint32_t first, int rc, const char *msg,
                         uint32_t want)
{
    berth_nexus *nx = &s->nx;
    const berth_pool *p = &nx->pools[pid];
    CHECK(rc == 0 || rc == BERTH_ENOFIT, "scale/add of %s returned %d (%.300s)", p->name, rc,
          msg);
    for (uint32_t i = 0; i < old_nvms && i < p->nvms; i++)
        CHECK(p->vms[i] == old_list[i], "scaling %s moved or dropped an existing VM", p->name);
    uint32_t add = want - old_nvms;
    if (rc == 0) {
        CHECK(p->nvms == want, "pool %s has %u VMs after scaling to %u", p->name, p->nvms, want);
        replay(s, cid, &pid, &add, 1, first, 0);
    } else if (s->opt.partial) {
        replay(s, cid, &pid, &add, 1, first, 1);
    } else {
        CHECK(p->nvms == old_nvms, "failed scale of %s kept %u new VMs", p->name,
              p->nvms - old_nvms);
        check_cells_unchanged(s, "a failed all-or-nothing scale");
        check_real_failure(s, cid, &pid, &add, 1, first, msg);
    }
}

static void op_scale(scen *s)
{
    berth_nexus *nx = &s->nx;
    uint32_t cid = live_cluster(s);
    if (cid == NONE)
        return;
    const berth_cluster *c = &nx->clusters[cid];
    uint32_t pid = c->pools[berth_rng_below(&s->rng, c->npools)];
    berth_pool *p = &nx->pools[pid];
    uint32_t old = p->nvms;
    uint32_t want = chance(&s->rng, 50) ? rnd(&s->rng, 0, old) : old + rnd(&s->rng, 1, 12);
    if (p->role == BERTH_ROLE_CONTROL_PLANE && want == 0)
        want = 1;
    uint32_t *list = malloc((old ? old : 1) * sizeof *list);
    assert_non_null(list);
    if (old)
        memcpy(list, p->vms, old * sizeof *list);
    world_load(&s->w);
    snapshot_cells(s);
    uint32_t first = nx->nvms;
    berth_error e;
    berth_error_clear(&e);
    int rc = berth_nexus_scale_pool(nx, pid, want, &s->opt, &e);
    p = &nx->pools[pid];
    CHECK(p->count == (int32_t)want, "pool %s count %d after scaling to %u", p->name, p->count,
          want);
    if (want <= old) {
        CHECK(rc == 0 && p->nvms == want, "scale-down of %s to %u: rc %d, %u VMs", p->name, want,
              rc, p->nvms);
        for (uint32_t i = 0; i < old; i++)
            CHECK((nx->vms[list[i]].machine != NONE) == (i < want),
                  "scale-down of %s must remove the newest VMs", p->name);
        CHECK(nx->nvms == first, "scale-down created VMs");
    } else {
        scale_or_add(s, cid, pid, old, list, first, rc, e.msg, want);
    }
    free(list);
}

static void op_add_pool(scen *s)
{
    berth_nexus *nx = &s->nx;
    uint32_t cid = live_cluster(s);
    if (cid == NONE)
        return;
    char pn[32];
    snprintf(pn, sizeof pn, "extra-%u", s->nextname++);
    const char *zones[64];
    berth_pool_spec ps = {berth_arena_strdup(&nx->arena, pn), BERTH_ROLE_WORKER,
                          worker_sku(&s->rng), random_count(&s->rng), NULL, 0, "test"};
    if (chance(&s->rng, 25)) {
        random_zones(s, zones, &ps.nzones);
        ps.zones = zones;
    }
    world_load(&s->w);
    snapshot_cells(s);
    uint32_t first = nx->nvms, pid = NONE;
    berth_error e;
    berth_error_clear(&e);
    int rc = berth_nexus_add_pool(nx, cid, &ps, &s->opt, &pid, &e);
    CHECK(pid == nx->npools - 1, "add-pool id");
    CHECK(nx->clusters[cid].pools[nx->clusters[cid].npools - 1] == pid,
          "the added pool is not the cluster's last");
    scale_or_add(s, cid, pid, 0, NULL, first, rc, e.msg, (uint32_t)ps.count);
    /* the same name again is refused */
    berth_error_clear(&e);
    uint32_t again = NONE;
    CHECK(berth_nexus_add_pool(nx, cid, &ps, &s->opt, &again, &e) == BERTH_EINVAL,
          "adding pool %s twice was accepted", pn);
}

static void op_cordon(scen *s)
{
    berth_nexus *nx = &s->nx;
    uint32_t m = (uint32_t)berth_rng_below(&s->rng, nx->nmachines);
    int cordon = chance(&s->rng, 70);
    berth_error e;
    CHECK(berth_nexus_set_cordon(nx, m, cordon, &e) == 0, "set_cordon failed");
    CHECK(nx->machines[m].cordoned == cordon, "cordon flag not recorded");
}

/* max_fit must equal what a best-effort pool of that SKU really places. */
static void probe_max_fit(scen *s)
{
    berth_nexus *nx = &s->nx;
    uint32_t sku = berth_nexus_find_sku(nx, chance(&s->rng, 50) ? worker_sku(&s->rng)
                                                                : cp_skus[berth_rng_below(
                                                                      &s->rng, NELEM(cp_skus))]);
    uint64_t *per = calloc(nx->nracks, sizeof *per);
    uint32_t *got = calloc(nx->nracks, sizeof *got);
    assert_non_null(per);
    assert_non_null(got);
    uint64_t fit = berth_nexus_max_fit(nx, sku, per);
    uint64_t sum = 0;
    for (uint32_t r = 0; r < nx->nracks; r++)
        sum += per[r];
    CHECK(sum == fit, "max_fit %llu but per-rack sums to %llu", (unsigned long long)fit,
          (unsigned long long)sum);
    if (fit + 1 <= 20000) {
        berth_pool_spec ps = {"probe", BERTH_ROLE_WORKER, nx->skus[sku].name, (int64_t)fit + 1,
                              NULL, 0, "test"};
        berth_cluster_spec spec = {"max-fit-probe", &ps, 1, "test"};
        berth_nexus_options o = s->opt;
        o.partial = 1;
        berth_error e;
        uint32_t cid = NONE;
        int rc = berth_nexus_create_cluster(nx, &spec, &o, &cid, &e);
        CHECK(rc == BERTH_ENOFIT, "probe of %llu+1 %s returned %d", (unsigned long long)fit,
              nx->skus[sku].name, rc);
        const berth_pool *p = &nx->pools[nx->clusters[cid].pools[0]];
        CHECK(p->nvms == fit, "max_fit says %llu %s fit, a best-effort pool placed %u",
              (unsigned long long)fit, nx->skus[sku].name, p->nvms);
        for (uint32_t i = 0; i < p->nvms; i++)
            got[nx->machines[nx->vms[p->vms[i]].machine].rack]++;
        for (uint32_t r = 0; r < nx->nracks; r++)
            CHECK(got[r] == per[r], "max_fit says %llu %s fit in rack %s, %u were placed",
                  (unsigned long long)per[r], nx->skus[sku].name, nx->racks[r].name, got[r]);
        check_invariants(nx);
    }
    free(per);
    free(got);
}

static void run_scenario(uint64_t seed, uint32_t *totals)
{
    scen s;
    memset(&s, 0, sizeof s);
    s.seed = seed;
    berth_rng_seed(&s.rng, seed);
    berth_rng *r = &s.rng;
    berth_nexus_init(&s.nx);
    uint32_t racks = rnd(r, 2, 12), per = rnd(r, 1, 20), cells = rnd(r, 1, 2);
    int32_t cpu = chance(r, 50) ? 48 : 56;
    snprintf(ctx, sizeof ctx, "seed %llu (%u racks x %u, %u cells of %d)",
             (unsigned long long)seed, racks, per, cells, cpu);
    berth_error e;
    assert_int_equal(berth_nexus_make_site(&s.nx, racks, per, cells, cpu, 224 * GiB, &e), 0);
    uint32_t downpct = chance(r, 50) ? 0 : rnd(r, 1, 20);
    for (uint32_t m = 0; m < s.nx.nmachines; m++)
        if (chance(r, downpct)) {
            if (chance(r, 50))
                s.nx.machines[m].down = 1;
            else
                s.nx.machines[m].cordoned = 1;
        }
    s.opt.use_index = chance(r, 80);
    s.opt.partial = chance(r, 25);
    s.opt.tiebreak = BERTH_TIE_FIRST;
    assert_int_equal(berth_nexus_prepare(&s.nx, &s.opt, &e), 0);
    s.before = calloc(s.nx.ncells, sizeof *s.before);
    assert_non_null(s.before);
    world_init(&s.w, &s.nx);
    check_invariants(&s.nx);
    uint32_t nops = rnd(r, 1, 60);
    uint32_t ncreate = rnd(r, 1, 30), created = 0;
    for (uint32_t i = 0; i < nops || created == 0; i++) {
        snprintf(ctx, sizeof ctx, "seed %llu (%u racks x %u, %u cells of %d, index %d, partial %d) step %u",
                 (unsigned long long)seed, racks, per, cells, cpu, s.opt.use_index, s.opt.partial,
                 i);
        uint32_t x = rnd(r, 0, 99);
        if (x < 55 && created < ncreate) {
            op_create(&s);
            created++;
        } else if (x < 63) {
            op_delete(&s);
        } else if (x < 78) {
            op_scale(&s);
        } else if (x < 88) {
            op_add_pool(&s);
        } else {
            op_cordon(&s);
        }
        check_invariants(&s.nx);
    }
    snprintf(ctx, sizeof ctx, "seed %llu max-fit probe", (unsigned long long)seed);
    probe_max_fit(&s);
    totals[0] += s.vms_checked;
    totals[1] += s.failures_checked;
    world_free(&s.w);
    free(s.before);
    berth_nexus_free(&s.nx);
}

static void test_random_estates(void **state)
{
    (void)state;
    init_names();
    uint32_t runs = 500;
    const char *env = getenv("NEXUS_PROPERTY_RUNS");
    if (env && atoi(env) > 0)
        runs = (uint32_t)atoi(env);
    uint32_t totals[2] = {0, 0};
    for (uint32_t i = 0; i < runs; i++)
        run_scenario(0x5eed0000u + i, totals);
    printf("property: %u scenarios, %u VM placements replayed, %u failures confirmed\n", runs,
           totals[0], totals[1]);
    /* the generator must exercise both outcomes */
    assert_true(totals[0] > 1000);
    assert_true(totals[1] > 10);
}

/* A hand-made case of each rule, so a failure above has a readable twin. */
static void test_rules_small(void **state)
{
    (void)state;
    init_names();
    snprintf(ctx, sizeof ctx, "rules_small");
    berth_nexus nx;
    berth_nexus_init(&nx);
    berth_error e;
    assert_int_equal(berth_nexus_make_site(&nx, 3, 2, 2, 48, 224 * GiB, &e), 0);
    berth_nexus_options opt = {.use_index = 1};
    /* cluster x: 4 XL VMs -> racks 1,2,3,1; MachineSpread puts the 4th on
     * rack 1's second machine */
    berth_pool_spec ps[2] = {
        {"control-plane", BERTH_ROLE_CONTROL_PLANE, "NC_G2_8_v1", 1, NULL, 0, "t"},
        {"w", BERTH_ROLE_WORKER, "NC_P46_224_v1", 4, NULL, 0, "t"}};
    berth_cluster_spec x = {"x", ps, 2, "t"};
    uint32_t cid;
    assert_int_equal(berth_nexus_create_cluster(&nx, &x, &opt, &cid, &e), 0);
    const berth_pool *w = &nx.pools[nx.clusters[cid].pools[1]];
    uint32_t racks[4], machs[4];
    for (int i = 0; i < 4; i++) {
        machs[i] = nx.vms[w->vms[i]].machine;
        racks[i] = nx.machines[machs[i]].rack;
    }
    /* control plane on rack1-bmm01 -> rack 1 is the most utilised: the
     * workers go to racks 2, 3, 1 (its free machine), then 2 again */
    assert_int_equal(racks[0], 1);
    assert_int_equal(racks[1], 2);
    assert_int_equal(racks[2], 0);
    assert_int_equal(racks[3], 1);
    assert_int_equal(machs[2], 1); /* MachineSpread: not the control plane's machine */
    /* the 4th VM in rack 2 avoids the machine holding the 1st */
    assert_int_not_equal(machs[3], machs[0]);
    /* a second cluster's XL VMs pack onto machines hosting x's XL VMs */
    berth_pool_spec ps2[2] = {
        {"control-plane", BERTH_ROLE_CONTROL_PLANE, "NC_G2_8_v1", 1, NULL, 0, "t"},
        {"w", BERTH_ROLE_WORKER, "NC_P46_224_v1", 1, NULL, 0, "t"}};
    berth_cluster_spec y = {"y", ps2, 2, "t"};
    assert_int_equal(berth_nexus_create_cluster(&nx, &y, &opt, &cid, &e), 0);
    uint32_t m = nx.vms[nx.pools[nx.clusters[cid].pools[1]].vms[0]].machine;
    uint32_t xl_on_m = 0;
    for (uint32_t v = 0; v < nx.nvms; v++)
        xl_on_m += nx.vms[v].machine == m && nx.skus[nx.pools[nx.vms[v].pool].sku].extra_large;
    assert_true(xl_on_m >= 2);
    check_invariants(&nx);
    berth_nexus_free(&nx);
}

/* max_fit for a 2-cell SKU on a machine with more than 2 cells: a VM needs
 * two distinct cells, so two slots in one cell hold none. Machine of 3
 * cells (112 vCPU / 448Gi each); 4 NC_G56_224_v1 fill cells 0 and 1; cell 2
 * alone has room for two NC_E70_336_v1 halves (36 vCPU / 168Gi), which make
 * no whole VM. */
static void test_max_fit_two_cell_sku_on_three_cells(void **state)
{
    (void)state;
    snprintf(ctx, sizeof ctx, "max_fit 3 cells");
    berth_nexus nx;
    berth_nexus_init(&nx);
    berth_error e;
    assert_int_equal(berth_nexus_make_site(&nx, 1, 1, 3, 112, 448 * GiB, &e), 0);
    berth_nexus_options opt = {.use_index = 1};
    berth_pool_spec fill = {"fill", BERTH_ROLE_WORKER, "NC_G56_224_v1", 4, NULL, 0, "t"};
    berth_cluster_spec f = {"f", &fill, 1, "t"};
    uint32_t cid;
    assert_int_equal(berth_nexus_create_cluster(&nx, &f, &opt, &cid, &e), 0);
    assert_int_equal(nx.cells[0].used_cpu, 112);
    assert_int_equal(nx.cells[1].used_cpu, 112);
    assert_int_equal(nx.cells[2].used_cpu, 0);
    uint32_t e70 = berth_nexus_find_sku(&nx, "NC_E70_336_v1");
    uint64_t per[1] = {99};
    uint64_t fit = berth_nexus_max_fit(&nx, e70, per);
    /* what really fits: a best-effort pool places none */
    berth_pool_spec probe = {"probe", BERTH_ROLE_WORKER, "NC_E70_336_v1", 1, NULL, 0, "t"};
    berth_cluster_spec pc = {"p", &probe, 1, "t"};
    opt.partial = 1;
    assert_int_equal(berth_nexus_create_cluster(&nx, &pc, &opt, &cid, &e), BERTH_ENOFIT);
    assert_int_equal(nx.pools[nx.clusters[cid].pools[0]].nvms, 0);
    if (fit != 0 || per[0] != 0)
        fail_msg("max_fit says %llu NC_E70_336_v1 fit (rack: %llu), but only one cell has room "
                 "and the VM spans two",
                 (unsigned long long)fit, (unsigned long long)per[0]);
    berth_nexus_free(&nx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rules_small),
        cmocka_unit_test(test_max_fit_two_cell_sku_on_three_cells),
        cmocka_unit_test(test_random_estates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
