/* tests/unit/test_nexus_reference.c - the nexus fast path (the per-SKU rack
 * index, options.use_index = 1) and the plain reference scan of every
 * machine (use_index = 0) make identical decisions: the same machine and
 * NUMA cells for every VM, the same failures and reasons, the same cluster
 * states, on many random estates and timelines.
 *
 * Two drivers: (1) the library API on compact sites (1..40 racks of 1..20
 * machines, sometimes 65..700 racks of 1..3 so that the 8-ary rack trees
 * have three and four levels, some down or cordoned): creates, deletes, scale up/down,
 * add-pool, cordon/uncordon, zone-restricted pools, extra-large and 2-cell
 * SKUs, best-effort and all-or-nothing; (2) generated YAML input run
 * through berth_nexus_load + berth_nexus_run: heterogeneous explicit
 * machines (1..4 cells of different sizes, cordonStatus, readyState),
 * Operations naming clusters that may have failed or been deleted, and
 * runtime upgrades (batches compared too). Each API scenario ends with the
 * index self-check (nexus_index_check). Also: --tie-break random is
 * reproducible for a seed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "berth/doc.h"
#include "berth/nexus.h"
#include "berth/random.h"
#include "nexus/state.h"

#define GiB (1024LL * 1024 * 1024)
#define NONE BERTH_NEXUS_NONE
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static char ctx[256];
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
                                      "NC_G6_28_v1", "NC_G2_8_v1"};

static const char *worker_sku(berth_rng *r)
{
    uint32_t x = rnd(r, 0, 99);
    if (x < 45)
        return xl_skus[berth_rng_below(r, NELEM(xl_skus))];
    if (x < 57)
        return e_skus[berth_rng_below(r, NELEM(e_skus))];
    return mid_skus[berth_rng_below(r, NELEM(mid_skus))];
}

static uint32_t random_count(berth_rng *r) { return chance(r, 50) ? rnd(r, 1, 8) : rnd(r, 1, 40); }

/* ---- comparing two models ---- */

static int same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void compare_models(const berth_nexus *a, const berth_nexus *b)
{
    CHECK(a->nclusters == b->nclusters && a->npools == b->npools && a->nvms == b->nvms,
          "index: %u clusters %u pools %u VMs; scan: %u, %u, %u", a->nclusters, a->npools,
          a->nvms, b->nclusters, b->npools, b->nvms);
    for (uint32_t v = 0; v < a->nvms; v++) {
        const berth_vm *x = &a->vms[v], *y = &b->vms[v];
        char name[256];
        berth_nexus_vm_name(a, v, name, sizeof name);
        CHECK(x->pool == y->pool && x->ordinal == y->ordinal, "VM %u identity differs", v);
        CHECK(x->machine == y->machine && (x->machine == NONE || (x->cell == y->cell &&
                                                                  x->cells_mask == y->cells_mask)),
              "VM %s: index put it on %s cell %u (mask 0x%x), the reference scan on %s cell %u "
              "(mask 0x%x)",
              name, x->machine == NONE ? "(none)" : a->machines[x->machine].name, x->cell,
              x->cells_mask, y->machine == NONE ? "(none)" : b->machines[y->machine].name,
              y->cell, y->cells_mask);
    }
    for (uint32_t c = 0; c < a->nclusters; c++) {
        const berth_cluster *x = &a->clusters[c], *y = &b->clusters[c];
        CHECK(!strcmp(x->name, y->name) && x->status == y->status && same_str(x->reason, y->reason),
              "cluster %s: index status %d reason '%.200s', scan status %d reason '%.200s'",
              x->name, x->status, x->reason ? x->reason : "", y->status,
              y->reason ? y->reason : "");
    }
    for (uint32_t p = 0; p < a->npools; p++) {
        const berth_pool *x = &a->pools[p], *y = &b->pools[p];
        CHECK(x->nvms == y->nvms && x->count == y->count, "pool %s: %u/%d vs %u/%d", x->name,
              x->nvms, x->count, y->nvms, y->count);
        for (uint32_t i = 0; i < x->nvms; i++)
            CHECK(x->vms[i] == y->vms[i], "pool %s VM order differs at %u", x->name, i);
    }
    for (uint32_t c = 0; c < a->ncells; c++)
        CHECK(a->cells[c].used_cpu == b->cells[c].used_cpu &&
                  a->cells[c].used_memory == b->cells[c].used_memory,
              "cell %u usage differs", c);
    for (uint32_t m = 0; m < a->nmachines; m++)
        CHECK(a->machines[m].cordoned == b->machines[m].cordoned, "machine %s cordon differs",
              a->machines[m].name);
}

/* ---- driver 1: the library API ---- */

typedef struct pair {
    berth_nexus nx[2];
    berth_nexus_options opt[2];
    berth_rng rng;
    uint32_t nextname;
    uint64_t decisions, failures;
} pair;

static uint32_t live_cluster(pair *p)
{
    uint32_t live[1024], n = 0;
    for (uint32_t c = 0; c < p->nx[0].nclusters && n < 1024; c++)
        if (p->nx[0].clusters[c].status != BERTH_CLUSTER_DELETED)
            live[n++] = c;
    return n ? live[berth_rng_below(&p->rng, n)] : NONE;
}

static void random_zones(berth_rng *r, const berth_nexus *nx, const char **zones, uint32_t *nz)
{
    uint32_t R = nx->nracks, want = rnd(r, 1, R < 6 ? R : 6);
    if (chance(r, 20))
        want = rnd(r, 1, R < 40 ? R : 40); /* the callers' arrays hold 48 */
    *nz = 0;
    for (uint32_t i = 0; i < R; i++)
        if (berth_rng_below(r, R - i) < want - *nz)
            zones[(*nz)++] = nx->racks[i].name;
}

/* Runs call on both models (k = 0 index, 1 scan; nx, opt, e bound to
 * model k) and compares the return codes and messages. */
#define BOTH(call)                                                                                 \
    do {                                                                                           \
        berth_error e_[2];                                                                         \
        int rc_[2];                                                                                \
        for (int k = 0; k < 2; k++) {                                                              \
            berth_nexus *nx = &p->nx[k];                                                           \
            const berth_nexus_options *opt = &p->opt[k];                                           \
            berth_error *e = &e_[k];                                                               \
            (void)opt;                                                                             \
            berth_error_clear(e);                                                                  \
            rc_[k] = (call);                                                                       \
        }                                                                                          \
        CHECK(rc_[0] == rc_[1] && !strcmp(e_[0].msg, e_[1].msg),                                  \
              "index returned %d '%.300s', scan %d '%.300s'", rc_[0], e_[0].msg, rc_[1],           \
              e_[1].msg);                                                                          \
        p->failures += rc_[0] != 0;                                                                \
    } while (0)

static void api_create(pair *p)
{
    berth_rng *r = &p->rng;
    berth_nexus *n0 = &p->nx[0];
    berth_pool_spec ps[4];
    const char *zones[4][48];
    uint32_t np = 1 + rnd(r, 1, 3);
    memset(ps, 0, sizeof ps);
    char name[32];
    snprintf(name, sizeof name, "k%u", p->nextname++);
    const char *names[4] = {"control-plane", "pool-1", "pool-2", "pool-3"};
    for (uint32_t i = 0; i < np; i++) {
        ps[i].name = names[i];
        ps[i].role = i ? BERTH_ROLE_WORKER : BERTH_ROLE_CONTROL_PLANE;
        ps[i].sku = i ? worker_sku(r) : cp_skus[berth_rng_below(r, NELEM(cp_skus))];
        ps[i].count = i ? random_count(r) : (chance(r, 70) ? 1 + 2 * rnd(r, 0, 2) : rnd(r, 1, 7));
        if (chance(r, i ? 25 : 8)) {
            random_zones(r, n0, zones[i], &ps[i].nzones);
            ps[i].zones = zones[i];
        }
        ps[i].where = "test";
    }
    /* names must outlive the call: keep them in each model's arena */
    berth_cluster_spec spec[2];
    for (int k = 0; k < 2; k++) {
        spec[k] = (berth_cluster_spec){berth_arena_strdup(&p->nx[k].arena, name), ps, np, "test"};
    }
    uint32_t cid[2] = {NONE, NONE};
    BOTH(berth_nexus_create_cluster(nx, &spec[k], opt, &cid[k], e));
    CHECK(cid[0] == cid[1], "cluster ids differ");
}

static void api_scale(pair *p)
{
    uint32_t c = live_cluster(p);
    if (c == NONE)
        return;
    const berth_cluster *cl = &p->nx[0].clusters[c];
    uint32_t pid = cl->pools[berth_rng_below(&p->rng, cl->npools)];
    uint32_t old = p->nx[0].pools[pid].nvms;
    int64_t want = chance(&p->rng, 50) ? rnd(&p->rng, 0, old) : old + rnd(&p->rng, 1, 12);
    BOTH(berth_nexus_scale_pool(nx, pid, want, opt, e));
}

static void api_add_pool(pair *p)
{
    uint32_t c = live_cluster(p);
    if (c == NONE)
        return;
    char pn[32];
    snprintf(pn, sizeof pn, "extra-%u", p->nextname++);
    const char *zones[48];
    berth_pool_spec ps = {NULL, BERTH_ROLE_WORKER, worker_sku(&p->rng), random_count(&p->rng),
                          NULL, 0, "test"};
    if (chance(&p->rng, 25)) {
        random_zones(&p->rng, &p->nx[0], zones, &ps.nzones);
        ps.zones = zones;
    }
    berth_pool_spec pk[2] = {ps, ps};
    for (int k = 0; k < 2; k++)
        pk[k].name = berth_arena_strdup(&p->nx[k].arena, pn);
    uint32_t pid[2] = {NONE, NONE};
    BOTH(berth_nexus_add_pool(nx, c, &pk[k], opt, &pid[k], e));
    CHECK(pid[0] == pid[1], "pool ids differ");
}

static void api_delete(pair *p)
{
    uint32_t c = live_cluster(p);
    if (c == NONE)
        return;
    BOTH(berth_nexus_delete_cluster(nx, c, e));
}

static void api_cordon(pair *p)
{
    uint32_t m = (uint32_t)berth_rng_below(&p->rng, p->nx[0].nmachines);
    int on = chance(&p->rng, 65);
    BOTH(berth_nexus_set_cordon(nx, m, on, e));
}

static void run_api_scenario(uint64_t seed, uint64_t *decisions, uint64_t *failures)
{
    pair *p = calloc(1, sizeof *p);
    assert_non_null(p);
    berth_rng_seed(&p->rng, seed);
    berth_rng *r = &p->rng;
    uint32_t racks = chance(r, 70) ? rnd(r, 2, 12) : rnd(r, 1, 40);
    uint32_t per = rnd(r, 1, 20), cells = rnd(r, 1, 2);
    if (chance(r, 10)) {
        /* many small racks: rack trees of three and four levels */
        racks = rnd(r, 65, 700);
        per = rnd(r, 1, 3);
    }
    int32_t cpu = chance(r, 50) ? 48 : 56;
    int partial = chance(r, 30);
    uint32_t downpct = chance(r, 50) ? 0 : rnd(r, 1, 25);
    snprintf(ctx, sizeof ctx, "api seed %llu (%u racks x %u, %u cells of %d, partial %d)",
             (unsigned long long)seed, racks, per, cells, cpu, partial);
    berth_rng flags;
    for (int k = 0; k < 2; k++) {
        berth_error e;
        berth_nexus_init(&p->nx[k]);
        assert_int_equal(berth_nexus_make_site(&p->nx[k], racks, per, cells, cpu, 224 * GiB, &e),
                         0);
        berth_rng_seed(&flags, seed ^ 0xABCDEFu);
        for (uint32_t m = 0; m < p->nx[k].nmachines; m++)
            if (chance(&flags, downpct)) {
                if (chance(&flags, 50))
                    p->nx[k].machines[m].down = 1;
                else
                    p->nx[k].machines[m].cordoned = 1;
            }
        p->opt[k] = (berth_nexus_options){.partial = partial, .use_index = k == 0,
                                          .tiebreak = BERTH_TIE_FIRST};
        assert_int_equal(berth_nexus_prepare(&p->nx[k], &p->opt[k], &e), 0);
    }
    uint32_t nops = rnd(r, 5, 45);
    for (uint32_t i = 0; i < nops; i++) {
        snprintf(ctx, sizeof ctx, "api seed %llu (%u racks x %u, %u cells of %d, partial %d) op %u",
                 (unsigned long long)seed, racks, per, cells, cpu, partial, i);
        uint32_t x = rnd(r, 0, 99);
        if (x < 50)
            api_create(p);
        else if (x < 58)
            api_delete(p);
        else if (x < 75)
            api_scale(p);
        else if (x < 85)
            api_add_pool(p);
        else
            api_cordon(p);
        compare_models(&p->nx[0], &p->nx[1]);
    }
    /* the index at the end (not after every op: a SKU's tree left behind
     * by many changes must be caught up from the change log, or rebuilt) */
    char why[256];
    CHECK(nexus_index_check(&p->nx[0], why, sizeof why) == 0, "index state: %s", why);
    *decisions += p->nx[0].nvms;
    *failures += p->failures;
    berth_nexus_free(&p->nx[0]);
    berth_nexus_free(&p->nx[1]);
    free(p);
}

static void test_index_matches_scan_api(void **state)
{
    (void)state;
    uint64_t decisions = 0, failures = 0;
    uint32_t runs = 500;
    const char *env = getenv("NEXUS_REFERENCE_RUNS");
    if (env && atoi(env) > 0)
        runs = (uint32_t)atoi(env);
    for (uint32_t i = 0; i < runs; i++)
        run_api_scenario(0xC0FFEE00u + i, &decisions, &failures);
    printf("reference/api: %u scenarios, %llu VM decisions, %llu failed calls, identical\n", runs,
           (unsigned long long)decisions, (unsigned long long)failures);
    assert_true(decisions > 5000);
    assert_true(failures > 50);
}

/* ---- driver 2: generated YAML through load + run ---- */

typedef struct sbuf {
    char *s;
    size_t n, cap;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int w = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
        assert_true(w >= 0);
        if ((size_t)w < b->cap - b->n) {
            b->n += (size_t)w;
            return;
        }
        b->cap = b->cap * 2 + (size_t)w + 64;
        b->s = realloc(b->s, b->cap);
        assert_non_null(b->s);
    }
}

static void gen_zones(sbuf *b, berth_rng *r, uint32_t racks)
{
    uint32_t want = rnd(r, 1, racks < 5 ? racks : 5), got = 0;
    sb_printf(b, ", availabilityZones: [");
    for (uint32_t i = 0; i < racks; i++)
        if (berth_rng_below(r, racks - i) < want - got)
            sb_printf(b, "%s\"%u\"", got++ ? ", " : "", i + 1);
    sb_printf(b, "]");
}

static char *gen_yaml(uint64_t seed, size_t *len)
{
    berth_rng rr, *r = &rr;
    berth_rng_seed(r, seed);
    sbuf b = {malloc(4096), 0, 4096};
    assert_non_null(b.s);
    uint32_t racks = rnd(r, 1, 16), per = rnd(r, 1, 12);
    sb_printf(&b, "apiVersion: berth.io/v1\nkind: Site\nmetadata: {name: gen}\nspec:\n"
                  "  racks: %u\n  machinesPerRack: %u\n  machine:\n    numaCells: %u\n"
                  "    cell: {cpu: %u, memory: 224Gi}\n",
              racks, per, rnd(r, 1, 2), chance(r, 50) ? 48 : 56);
    uint32_t nexp = rnd(r, 0, 12);
    if (nexp) {
        sb_printf(&b, "  machines:\n");
        for (uint32_t i = 0; i < nexp; i++) {
            uint32_t rk = rnd(r, 1, racks + 2); /* sometimes a rack of its own */
            if (chance(r, 50)) /* override a compact machine */
                sb_printf(&b, "  - name: rack%u-bmm%02u\n", rnd(r, 1, racks), rnd(r, 1, per));
            else
                sb_printf(&b, "  - name: extra-%u\n    rack: \"%u\"\n", i, rk);
            if (chance(r, 50)) {
                static const uint32_t cpus[] = {24, 48, 56, 64, 112};
                static const char *mems[] = {"112Gi", "224Gi", "256Gi", "448Gi"};
                sb_printf(&b, "    numaCells: %u\n    cell: {cpu: %u, memory: %s}\n", rnd(r, 1, 4),
                          cpus[berth_rng_below(r, NELEM(cpus))],
                          mems[berth_rng_below(r, NELEM(mems))]);
            }
            if (chance(r, 25))
                sb_printf(&b, "    cordonStatus: %s\n", chance(r, 80) ? "Cordoned" : "Uncordoned");
            if (chance(r, 20))
                sb_printf(&b, "    readyState: \"%s\"\n", chance(r, 80) ? "False" : "True");
        }
    }
    uint32_t nclusters = 0, nsteps = rnd(r, 3, 30);
    for (uint32_t s = 0; s < nsteps; s++) {
        uint32_t x = rnd(r, 0, 99);
        if (x < 50 || nclusters == 0) {
            uint32_t np = rnd(r, 1, 3);
            sb_printf(&b, "---\napiVersion: networkcloud.azure.com/v1\nkind: KubernetesCluster\n"
                          "metadata: {name: g%u}\nspec:\n  controlPlaneNodeConfiguration: "
                          "{count: %u, vmSkuName: %s",
                      nclusters++, chance(r, 70) ? 1 + 2 * rnd(r, 0, 2) : rnd(r, 1, 6),
                      cp_skus[berth_rng_below(r, NELEM(cp_skus))]);
            if (chance(r, 8))
                gen_zones(&b, r, racks);
            sb_printf(&b, "}\n  initialAgentPoolConfigurations:\n");
            for (uint32_t i = 0; i < np; i++) {
                sb_printf(&b, "  - {name: pool-%u, count: %u, vmSkuName: %s", i + 1,
                          random_count(r), worker_sku(r));
                if (chance(r, 25))
                    gen_zones(&b, r, racks);
                sb_printf(&b, "}\n");
            }
            continue;
        }
        sb_printf(&b, "---\napiVersion: berth.io/v1\nkind: Operation\nmetadata: {name: op%u}\n"
                      "spec:\n",
                  s);
        uint32_t c = rnd(r, 0, nclusters - 1);
        if (x < 58) {
            sb_printf(&b, "  action: delete-cluster\n  cluster: g%u\n", c);
        } else if (x < 72) {
            sb_printf(&b, "  action: scale-pool\n  cluster: g%u\n  pool: %s\n  count: %u\n", c,
                      chance(r, 20) ? "control-plane" : "pool-1", rnd(r, 0, 30));
        } else if (x < 82) {
            sb_printf(&b, "  action: add-pool\n  cluster: g%u\n  pool: added-%u\n  count: %u\n"
                          "  vmSkuName: %s\n",
                      c, s, random_count(r), worker_sku(r));
            if (chance(r, 25)) {
                sb_printf(&b, "  availabilityZones: [\"%u\"]\n", rnd(r, 1, racks));
            }
        } else if (x < 94) {
            sb_printf(&b, "  action: %s\n  machine: rack%u-bmm%02u\n",
                      chance(r, 70) ? "cordon" : "uncordon", rnd(r, 1, racks), rnd(r, 1, per));
        } else {
            sb_printf(&b, "  action: runtime-upgrade\n");
            if (chance(r, 50))
                sb_printf(&b, "  updateStrategy: {maxUnavailable: %u, thresholdType: %s, "
                              "thresholdValue: %u}\n",
                          rnd(r, 1, 6), chance(r, 50) ? "CountSuccess" : "PercentSuccess",
                          rnd(r, 0, 100));
        }
    }
    *len = b.n;
    return b.s;
}

static int load_and_run(berth_nexus *nx, const char *text, size_t len, int use_index, int *rc,
                        berth_error *e)
{
    berth_nexus_init(nx);
    berth_source src;
    int lrc = berth_doc_load_buffer(&nx->arena, "gen.yaml", text, len, &src, e);
    if (!lrc)
        lrc = berth_nexus_load(nx, &src, 1, e);
    if (!lrc)
        lrc = berth_nexus_validate(nx, e);
    if (lrc)
        return lrc;
    berth_nexus_options opt = {.use_index = use_index, .tiebreak = BERTH_TIE_FIRST};
    *rc = berth_nexus_run(nx, &opt, e);
    return 0;
}

static void compare_steps(const berth_nexus *a, const berth_nexus *b)
{
    CHECK(a->nsteps == b->nsteps, "step counts differ");
    for (uint32_t i = 0; i < a->nsteps; i++) {
        const berth_step *x = &a->steps[i], *y = &b->steps[i];
        CHECK(x->failed == y->failed && same_str(x->reason, y->reason) && x->nrows == y->nrows &&
                  x->nbatches == y->nbatches,
              "step %u (%s) differs: failed %d/%d reason '%.200s'/'%.200s'", i, x->name,
              x->failed, y->failed, x->reason ? x->reason : "", y->reason ? y->reason : "");
        for (uint32_t k = 0; k < x->nrows; k++) {
            const berth_step_row *u = &x->rows[k], *v = &y->rows[k];
            CHECK(u->pool == v->pool && u->placed == v->placed && u->racks_used == v->racks_used &&
                      !memcmp(u->per_rack, v->per_rack, a->nracks * sizeof *u->per_rack),
                  "step %u row %u differs", i, k);
        }
        for (uint32_t k = 0; k < x->nbatches; k++) {
            const berth_upgrade_batch *u = &x->batches[k], *v = &y->batches[k];
            CHECK(u->rack == v->rack && u->machines_down == v->machines_down &&
                      u->vms_down == v->vms_down && u->npool_down == v->npool_down &&
                      u->nquorum_lost == v->nquorum_lost && u->npools_zero == v->npools_zero &&
                      !memcmp(u->pool_down, v->pool_down, 3 * u->npool_down * sizeof(uint32_t)),
                  "step %u upgrade batch %u differs", i, k);
        }
    }
}

static void test_index_matches_scan_yaml(void **state)
{
    (void)state;
    uint32_t runs = 250, loaded = 0;
    const char *env = getenv("NEXUS_REFERENCE_RUNS");
    if (env && atoi(env) > 0)
        runs = (uint32_t)atoi(env) / 2 + 1;
    uint64_t vms = 0;
    for (uint32_t i = 0; i < runs; i++) {
        uint64_t seed = 0xFEED0000u + i;
        size_t len;
        char *text = gen_yaml(seed, &len);
        snprintf(ctx, sizeof ctx, "yaml seed %llu", (unsigned long long)seed);
        berth_nexus a, b;
        berth_error ea, eb;
        berth_error_clear(&ea);
        berth_error_clear(&eb);
        int rca = 0, rcb = 0;
        int la = load_and_run(&a, text, len, 1, &rca, &ea);
        int lb = load_and_run(&b, text, len, 0, &rcb, &eb);
        CHECK(la == 0 && lb == 0, "generated input rejected: %.400s\n%.600s", ea.msg, text);
        CHECK(rca == rcb && (rca == 0 || rca == BERTH_ENOFIT), "run: index %d '%.300s', scan %d",
              rca, ea.msg, rcb);
        compare_models(&a, &b);
        compare_steps(&a, &b);
        loaded++;
        vms += a.nvms;
        berth_nexus_free(&a);
        berth_nexus_free(&b);
        free(text);
    }
    printf("reference/yaml: %u timelines, %llu VM decisions, identical\n", loaded,
           (unsigned long long)vms);
    assert_true(vms > 2000);
}

/* --tie-break random: the same seed gives the same decisions; across
 * scenarios, other seeds give other decisions. */
static void test_random_tiebreak_reproducible(void **state)
{
    (void)state;
    uint32_t differs = 0;
    for (uint32_t i = 0; i < 30; i++) {
        uint64_t seed = 0xD1CE0000u + i;
        size_t len;
        char *text = gen_yaml(seed, &len);
        snprintf(ctx, sizeof ctx, "random tie-break seed %llu", (unsigned long long)seed);
        berth_nexus n[3];
        for (int k = 0; k < 3; k++) {
            berth_nexus_init(&n[k]);
            berth_source src;
            berth_error e;
            assert_int_equal(berth_doc_load_buffer(&n[k].arena, "gen.yaml", text, len, &src, &e), 0);
            assert_int_equal(berth_nexus_load(&n[k], &src, 1, &e), 0);
            assert_int_equal(berth_nexus_validate(&n[k], &e), 0);
            berth_nexus_options opt = {.use_index = 1, .tiebreak = BERTH_TIE_RANDOM,
                                       .seed = k < 2 ? 42 : 43};
            int rc = berth_nexus_run(&n[k], &opt, &e);
            assert_true(rc == 0 || rc == BERTH_ENOFIT);
        }
        compare_models(&n[0], &n[1]);
        compare_steps(&n[0], &n[1]);
        int d = n[0].nvms != n[2].nvms;
        for (uint32_t v = 0; !d && v < n[0].nvms; v++)
            d = n[0].vms[v].machine != n[2].vms[v].machine;
        differs += (uint32_t)d;
        for (int k = 0; k < 3; k++)
            berth_nexus_free(&n[k]);
        free(text);
    }
    assert_true(differs > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_index_matches_scan_api),
        cmocka_unit_test(test_index_matches_scan_yaml),
        cmocka_unit_test(test_random_tiebreak_reproducible),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
