/* tests/unit/test_nexus_seed.c - the seed's acceptance scenarios (SPEC 1.6)
 * from examples/nexus/seed-scenarios.yaml through berth_doc_load_file,
 * berth_nexus_load, berth_nexus_validate and berth_nexus_run: racks used and
 * VMs per rack for A..D exactly (fast path and reference scan); E places all
 * 32 extra-large VMs with 3..5 per rack, and a rack holding fewer than 4 has
 * no NUMA cell left for one. Then the runtime-upgrade report (SPEC 1.5):
 * racks in alphanumeric (natural) order, machines and VMs down per pool
 * recomputed, quorum loss and pools at zero, maxUnavailable batches,
 * CountSuccess / PercentSuccess thresholds, the estate unchanged. Then the
 * advice (SPEC 1.7), one crafted input per berth_advice_kind, and a clean
 * input with none. Run from the repository root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "berth/advice.h"
#include "berth/doc.h"
#include "berth/nexus.h"

#define GiB (1024LL * 1024 * 1024)
#define NONE BERTH_NEXUS_NONE
#define SEED_FILE "examples/nexus/seed-scenarios.yaml"

static void load_seed(berth_nexus *nx, int use_index)
{
    berth_nexus_init(nx);
    berth_source src;
    berth_error e;
    berth_error_clear(&e);
    int rc = berth_doc_load_file(&nx->arena, SEED_FILE, &src, &e);
    if (rc)
        fail_msg("%s: %s", SEED_FILE, e.msg);
    rc = berth_nexus_load(nx, &src, 1, &e);
    if (rc)
        fail_msg("load: %s", e.msg);
    rc = berth_nexus_validate(nx, &e);
    if (rc)
        fail_msg("validate: %s", e.msg);
    berth_nexus_options opt = {.use_index = use_index, .tiebreak = BERTH_TIE_FIRST};
    rc = berth_nexus_run(nx, &opt, &e);
    if (rc)
        fail_msg("run: %d %s", rc, e.msg);
}

/* One row of the SPEC 1.6 table. racks: which racks (names) hold the pool,
 * NULL when any `nracks` racks may. */
typedef struct seed_row {
    const char *cluster, *pool, *sku;
    int count;
    uint32_t racks_used, per_rack;
    const char *racks[3];
} seed_row;

static const seed_row table[] = {
    {"A", "control-plane", "NC_G12_56_v1", 3, 3, 1, {NULL}},
    {"A", "pool-1", "NC_P46_224_v1", 24, 8, 3, {NULL}},
    {"A", "pool-2", "NC_G6_28_v1", 6, 6, 1, {NULL}},
    {"B", "control-plane", "NC_G24_112_v1", 5, 5, 1, {NULL}},
    {"B", "pool-1", "NC_P46_224_v1", 48, 8, 6, {NULL}},
    {"B", "pool-2", "NC_P22_112_v1", 24, 8, 3, {NULL}},
    {"C", "control-plane", "NC_G12_56_v1", 3, 3, 1, {NULL}},
    {"C", "pool-1", "NC_P46_224_v1", 12, 2, 6, {"1", "4", NULL}},
    {"D", "control-plane", "NC_G24_112_v1", 5, 5, 1, {NULL}},
    {"D", "pool-1", "NC_P46_224_v1", 24, 2, 12, {"7", "8", NULL}},
    {"D", "pool-2", "NC_P22_112_v1", 24, 8, 3, {NULL}},
    {"E", "control-plane", "NC_G24_112_v1", 5, 5, 1, {NULL}},
};

static const berth_step_row *find_row(const berth_nexus *nx, const char *cluster,
                                      const char *pool)
{
    for (uint32_t s = 0; s < nx->nsteps; s++)
        for (uint32_t i = 0; i < nx->steps[s].nrows; i++) {
            const berth_step_row *r = &nx->steps[s].rows[i];
            const berth_pool *p = &nx->pools[r->pool];
            if (!strcmp(nx->clusters[p->cluster].name, cluster) && !strcmp(p->name, pool))
                return r;
        }
    fail_msg("no table row for %s/%s", cluster, pool);
    return NULL;
}

static void check_table(const berth_nexus *nx)
{
    assert_int_equal(nx->nracks, 8);
    assert_int_equal(nx->nmachines, 128);
    assert_int_equal(nx->nsteps, 5);
    for (uint32_t s = 0; s < nx->nsteps; s++) {
        assert_int_equal(nx->steps[s].kind, BERTH_STEP_CREATE_CLUSTER);
        assert_false(nx->steps[s].failed);
    }
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const seed_row *t = &table[i];
        const berth_step_row *r = find_row(nx, t->cluster, t->pool);
        const berth_pool *p = &nx->pools[r->pool];
        if (strcmp(nx->skus[p->sku].name, t->sku) || r->count != t->count ||
            r->placed != (uint32_t)t->count || r->racks_used != t->racks_used)
            fail_msg("%s/%s: %s count %d placed %u racks %u; SPEC 1.6 says %s %d, %u racks",
                     t->cluster, t->pool, nx->skus[p->sku].name, r->count, r->placed,
                     r->racks_used, t->sku, t->count, t->racks_used);
        for (uint32_t k = 0; k < nx->nracks; k++) {
            uint32_t n = r->per_rack[k];
            int listed = 0;
            for (int j = 0; t->racks[j]; j++)
                listed |= !strcmp(t->racks[j], nx->racks[k].name);
            if (n != 0 && n != t->per_rack)
                fail_msg("%s/%s has %u VMs in rack %s, SPEC 1.6 says %u per rack", t->cluster,
                         t->pool, n, nx->racks[k].name, t->per_rack);
            if (t->racks[0] && (n != 0) != listed)
                fail_msg("%s/%s: rack %s holds %u VMs, zones say %s", t->cluster, t->pool,
                         nx->racks[k].name, n, listed ? "it should hold some" : "none");
        }
        /* and the live pool agrees with the step's row */
        assert_int_equal(p->nvms, (uint32_t)t->count);
    }
    /* E pool-1: all 32 placed, 3..5 per rack, and a rack below 4 is full */
    const berth_step_row *r = find_row(nx, "E", "pool-1");
    assert_int_equal(r->count, 32);
    assert_int_equal(r->placed, 32);
    assert_int_equal(r->racks_used, 8);
    uint32_t xl = berth_nexus_find_sku(nx, "NC_P46_224_v1");
    const berth_sku *k = &nx->skus[xl];
    for (uint32_t rk = 0; rk < nx->nracks; rk++) {
        uint32_t n = r->per_rack[rk];
        if (n < 3 || n > 5)
            fail_msg("E/pool-1 has %u VMs in rack %s, the seed allows 3 to 5", n,
                     nx->racks[rk].name);
        if (n >= 4)
            continue;
        const berth_rack *rr = &nx->racks[rk];
        for (uint32_t m = rr->first_machine; m < rr->first_machine + rr->nmachines; m++) {
            const berth_machine *mm = &nx->machines[m];
            for (uint32_t c = 0; c < mm->ncells; c++) {
                const berth_cell *cl = &nx->cells[mm->first_cell + c];
                if (cl->cpu - cl->used_cpu >= k->host_vcpu &&
                    cl->memory - cl->used_memory >= k->memory)
                    fail_msg("rack %s got only %u of E's pool-1 but cell %u of %s still fits "
                             "NC_P46_224_v1",
                             rr->name, n, c, mm->name);
            }
        }
    }
    /* the estate is consistent: every cell within capacity */
    for (uint32_t c = 0; c < nx->ncells; c++) {
        assert_true(nx->cells[c].used_cpu <= nx->cells[c].cpu);
        assert_true(nx->cells[c].used_memory <= nx->cells[c].memory);
    }
}

static void test_seed_table(void **state)
{
    (void)state;
    berth_nexus a, b;
    load_seed(&a, 1);
    check_table(&a);
    load_seed(&b, 0);
    check_table(&b);
    assert_int_equal(a.nvms, b.nvms);
    for (uint32_t v = 0; v < a.nvms; v++) {
        assert_int_equal(a.vms[v].machine, b.vms[v].machine);
        assert_int_equal(a.vms[v].cell, b.vms[v].cell);
    }
    berth_nexus_free(&a);
    berth_nexus_free(&b);
}

/* ---- runtime upgrade ---- */

static berth_step upgrade_step(int64_t max_unavailable, int count_success, int64_t threshold)
{
    berth_step st;
    memset(&st, 0, sizeof st);
    st.kind = BERTH_STEP_RUNTIME_UPGRADE;
    st.name = "upgrade";
    st.source = "test";
    st.strategy = (berth_update_strategy){0, max_unavailable, count_success, threshold, 15, 60};
    return st;
}

/* Recomputes one batch from the VM table and compares every field. */
static void check_batch(const berth_nexus *nx, const berth_upgrade_batch *b, uint32_t first,
                        uint32_t last)
{
    uint32_t *down = calloc(nx->npools, sizeof *down);
    assert_non_null(down);
    uint32_t vms = 0;
    for (uint32_t v = 0; v < nx->nvms; v++) {
        uint32_t m = nx->vms[v].machine;
        if (m != NONE && m >= first && m < last) {
            down[nx->vms[v].pool]++;
            vms++;
        }
    }
    assert_int_equal(b->machines_down, last - first);
    assert_int_equal(b->vms_down, vms);
    uint32_t k = 0, nq = 0, nz = 0;
    for (uint32_t p = 0; p < nx->npools; p++) {
        if (!down[p])
            continue;
        const berth_pool *pl = &nx->pools[p];
        if (k >= b->npool_down)
            fail_msg("batch of rack %s misses pool %s", nx->racks[b->rack].name, pl->name);
        assert_int_equal(b->pool_down[3 * k], p);
        assert_int_equal(b->pool_down[3 * k + 1], down[p]);
        assert_int_equal(b->pool_down[3 * k + 2], pl->nvms);
        k++;
        if (pl->role == BERTH_ROLE_CONTROL_PLANE && 2 * down[p] > pl->nvms) {
            if (nq >= b->nquorum_lost || b->quorum_lost[nq] != pl->cluster)
                fail_msg("rack %s: cluster %s loses quorum (%u of %u control-plane VMs down) "
                         "but is not reported",
                         nx->racks[b->rack].name, nx->clusters[pl->cluster].name, down[p],
                         pl->nvms);
            nq++;
        }
        if (down[p] == pl->nvms) {
            if (nz >= b->npools_zero || b->pools_zero[nz] != p)
                fail_msg("rack %s: pool %s drops to zero but is not reported",
                         nx->racks[b->rack].name, pl->name);
            nz++;
        }
    }
    assert_int_equal(b->npool_down, k);
    assert_int_equal(b->nquorum_lost, nq);
    assert_int_equal(b->npools_zero, nz);
    free(down);
}

static void snapshot(const berth_nexus *nx, berth_cell *cells, berth_vm *vms)
{
    memcpy(cells, nx->cells, nx->ncells * sizeof *cells);
    memcpy(vms, nx->vms, nx->nvms * sizeof *vms);
}

static void test_seed_upgrade(void **state)
{
    (void)state;
    berth_nexus nx;
    load_seed(&nx, 1);
    berth_cell *cells = malloc(nx.ncells * sizeof *cells);
    berth_vm *vms = malloc(nx.nvms * sizeof *vms);
    assert_non_null(cells);
    assert_non_null(vms);
    snapshot(&nx, cells, vms);
    berth_step st = upgrade_step(32767, 0, 80);
    berth_error e;
    assert_int_equal(berth_nexus_runtime_upgrade(&nx, &st, &e), 0);
    assert_int_equal(st.nbatches, 8);
    for (uint32_t i = 0; i < 8; i++) {
        const berth_upgrade_batch *b = &st.batches[i];
        assert_int_equal(b->rack, i);
        assert_int_equal(b->batch, 1);
        assert_int_equal(b->nbatches, 1);
        check_batch(&nx, b, nx.racks[i].first_machine,
                    nx.racks[i].first_machine + nx.racks[i].nmachines);
        /* control planes are spread one per rack: no quorum loss, no pool at zero */
        assert_int_equal(b->nquorum_lost, 0);
        assert_int_equal(b->npools_zero, 0);
        assert_int_equal(b->threshold_machines, 13); /* 80 % of 16, rounded up */
        if (i == 0)
            assert_int_equal(b->start_minute, 15);
        else
            assert_true(b->start_minute > st.batches[i - 1].start_minute);
    }
    /* the estate is the same after the upgrade */
    assert_memory_equal(cells, nx.cells, nx.ncells * sizeof *cells);
    assert_memory_equal(vms, nx.vms, nx.nvms * sizeof *vms);
    free(cells);
    free(vms);
    berth_nexus_free(&nx);
}

static void make(berth_nexus *nx, uint32_t racks, uint32_t per, uint32_t cells)
{
    berth_nexus_init(nx);
    berth_error e;
    assert_int_equal(berth_nexus_make_site(nx, racks, per, cells, 48, 224 * GiB, &e), 0);
    berth_nexus_options opt = {.use_index = 1};
    assert_int_equal(berth_nexus_prepare(nx, &opt, &e), 0);
}

static uint32_t create(berth_nexus *nx, const char *name, berth_pool_spec *ps, uint32_t n,
                       int expect)
{
    berth_cluster_spec spec = {name, ps, n, "test"};
    berth_nexus_options opt = {.use_index = 1};
    berth_error e;
    berth_error_clear(&e);
    uint32_t cid = NONE;
    int rc = berth_nexus_create_cluster(nx, &spec, &opt, &cid, &e);
    if (rc != expect)
        fail_msg("create %s: %d (%s), expected %d", name, rc, e.msg, expect);
    return cid;
}

static const char *z1[] = {"1"}, *z2[] = {"2"}, *z13[] = {"1", "3"}, *z12[] = {"1", "2"};

static void test_upgrade_quorum_and_zero(void **state)
{
    (void)state;
    berth_nexus nx;
    make(&nx, 2, 2, 2);
    /* q: 3 control-plane VMs over 2 racks -> one rack holds 2 (a majority) */
    berth_pool_spec q[2] = {
        {"control-plane", BERTH_ROLE_CONTROL_PLANE, "NC_G12_56_v1", 3, NULL, 0, "t"},
        {"pool-1", BERTH_ROLE_WORKER, "NC_G6_28_v1", 2, z2, 1, "t"}};
    uint32_t cq = create(&nx, "q", q, 2, 0);
    /* p: its whole control plane pinned to rack 1 */
    berth_pool_spec pp[2] = {
        {"control-plane", BERTH_ROLE_CONTROL_PLANE, "NC_G2_8_v1", 1, z1, 1, "t"},
        {"pool-1", BERTH_ROLE_WORKER, "NC_G6_28_v1", 4, NULL, 0, "t"}};
    uint32_t cp = create(&nx, "p", pp, 2, 0);
    const berth_pool *qcp = &nx.pools[nx.clusters[cq].pools[0]];
    uint32_t in1 = 0;
    for (uint32_t i = 0; i < qcp->nvms; i++)
        in1 += nx.machines[nx.vms[qcp->vms[i]].machine].rack == 0;
    berth_step st = upgrade_step(32767, 0, 80);
    berth_error e;
    assert_int_equal(berth_nexus_runtime_upgrade(&nx, &st, &e), 0);
    assert_int_equal(st.nbatches, 2);
    for (uint32_t i = 0; i < 2; i++)
        check_batch(&nx, &st.batches[i], nx.racks[i].first_machine,
                    nx.racks[i].first_machine + nx.racks[i].nmachines);
    const berth_upgrade_batch *r1 = &st.batches[0], *r2 = &st.batches[1];
    /* rack 1: p's control plane is gone (quorum and zero); q loses quorum
     * where it has 2 of 3 */
    int p_lost = 0, q_lost1 = 0, q_lost2 = 0, pcp_zero = 0, qw_zero = 0;
    for (uint32_t i = 0; i < r1->nquorum_lost; i++) {
        p_lost |= r1->quorum_lost[i] == cp;
        q_lost1 |= r1->quorum_lost[i] == cq;
    }
    for (uint32_t i = 0; i < r2->nquorum_lost; i++)
        q_lost2 |= r2->quorum_lost[i] == cq;
    for (uint32_t i = 0; i < r1->npools_zero; i++)
        pcp_zero |= r1->pools_zero[i] == nx.clusters[cp].pools[0];
    for (uint32_t i = 0; i < r2->npools_zero; i++)
        qw_zero |= r2->pools_zero[i] == nx.clusters[cq].pools[1];
    assert_true(p_lost);
    assert_true(pcp_zero);
    assert_true(qw_zero); /* q's pool-1 lives only in rack 2 */
    assert_int_equal(q_lost1, in1 >= 2);
    assert_int_equal(q_lost2, in1 <= 1);
    berth_nexus_free(&nx);
}

static void test_upgrade_batches_and_thresholds(void **state)
{
    (void)state;
    berth_nexus nx;
    make(&nx, 12, 5, 2);
    berth_pool_spec ps[2] = {
        {"control-plane", BERTH_ROLE_CONTROL_PLANE, "NC_G12_56_v1", 3, NULL, 0, "t"},
        {"pool-1", BERTH_ROLE_WORKER, "NC_G24_112_v1", 40, NULL, 0, "t"}};
    create(&nx, "x", ps, 2, 0);
    /* racks "1".."12" go in natural order 1, 2, ..., 10, 11, 12 */
    berth_step st = upgrade_step(2, 0, 80);
    berth_error e;
    assert_int_equal(berth_nexus_runtime_upgrade(&nx, &st, &e), 0);
    assert_int_equal(st.nbatches, 12 * 3);
    for (uint32_t i = 0; i < st.nbatches; i++) {
        const berth_upgrade_batch *b = &st.batches[i];
        uint32_t r = i / 3, k = i % 3;
        if (b->rack != r)
            fail_msg("batch %u is rack %s, expected rack %s (natural order)", i,
                     nx.racks[b->rack].name, nx.racks[r].name);
        assert_int_equal(b->batch, k + 1);
        assert_int_equal(b->nbatches, 3);
        uint32_t first = nx.racks[r].first_machine + 2 * k;
        uint32_t last = first + (k < 2 ? 2 : 1);
        check_batch(&nx, b, first, last);
        assert_true(b->threshold_machines <= nx.racks[r].nmachines);
        if (i)
            assert_true(b->start_minute > st.batches[i - 1].start_minute);
    }
    /* whole-rack batches: thresholds per SPEC 1.5 */
    struct {
        int count;
        int64_t value;
        uint32_t want;
    } th[] = {{0, 80, 4}, {0, 50, 3}, {0, 100, 5}, {0, 0, 0}, {1, 3, 3}, {1, 5, 5}, {1, 1, 1}};
    for (size_t t = 0; t < sizeof th / sizeof th[0]; t++) {
        berth_step s2 = upgrade_step(32767, th[t].count, th[t].value);
        assert_int_equal(berth_nexus_runtime_upgrade(&nx, &s2, &e), 0);
        assert_int_equal(s2.nbatches, 12);
        for (uint32_t i = 0; i < s2.nbatches; i++)
            if (s2.batches[i].threshold_machines != th[t].want)
                fail_msg("%s %lld on a rack of 5: threshold %u machines, expected %u",
                         th[t].count ? "CountSuccess" : "PercentSuccess",
                         (long long)th[t].value, s2.batches[i].threshold_machines, th[t].want);
    }
    /* maxUnavailable larger than a rack: one batch per rack */
    berth_step s3 = upgrade_step(7, 0, 80);
    assert_int_equal(berth_nexus_runtime_upgrade(&nx, &s3, &e), 0);
    assert_int_equal(s3.nbatches, 12);
    /* racks sorted by name, not index: rename and re-run */
    nx.racks[0].name = "rack-10";
    nx.racks[1].name = "rack-9";
    nx.racks[2].name = "rack-1";
    berth_step s4 = upgrade_step(32767, 0, 80);
    assert_int_equal(berth_nexus_runtime_upgrade(&nx, &s4, &e), 0);
    /* "1".."12" (digits) sort before "rack-..."; among those: 1, 9, 10 */
    uint32_t n = s4.nbatches;
    assert_int_equal(n, 12);
    assert_int_equal(s4.batches[n - 3].rack, 2);
    assert_int_equal(s4.batches[n - 2].rack, 1);
    assert_int_equal(s4.batches[n - 1].rack, 0);
    berth_nexus_free(&nx);
}

/* ---- advice ---- */

static uint32_t count_advice(const berth_advice *a, uint32_t n, berth_advice_kind k,
                             uint32_t cluster, uint32_t pool, const char *code)
{
    uint32_t hits = 0;
    for (uint32_t i = 0; i < n; i++) {
        assert_non_null(a[i].code);
        assert_non_null(a[i].message);
        assert_true(a[i].message[0] != 0);
        if (a[i].kind == k && (cluster == NONE || a[i].cluster == cluster) &&
            (pool == NONE || a[i].pool == pool)) {
            assert_string_equal(a[i].code, code);
            hits++;
        }
    }
    return hits;
}

static void test_advice_clean(void **state)
{
    (void)state;
    berth_nexus nx;
    make(&nx, 4, 4, 2);
    berth_pool_spec ps[3] = {
        {"control-plane", BERTH_ROLE_CONTROL_PLANE, "NC_G12_56_v1", 3, NULL, 0, "t"},
        {"pool-1", BERTH_ROLE_WORKER, "NC_P46_224_v1", 8, NULL, 0, "t"},
        {"pool-2", BERTH_ROLE_WORKER, "NC_G6_28_v1", 4, NULL, 0, "t"}};
    create(&nx, "big", ps, 3, 0);
    berth_pool_spec small[2] = {
        {"control-plane", BERTH_ROLE_CONTROL_PLANE, "NC_G2_8_v1", 1, NULL, 0, "t"},
        {"pool-1", BERTH_ROLE_WORKER, "NC_G2_8_v1", 2, z13, 2, "t"}}; /* alternating: fine */
    create(&nx, "small", small, 2, 0);
    berth_advice *adv = NULL;
    uint32_t n = 99;
    assert_int_equal(berth_nexus_advise(&nx, &adv, &n), 0);
    for (uint32_t i = 0; i < n; i++)
        print_message("unexpected advice: [%s] %s\n", adv[i].code, adv[i].message);
    assert_int_equal(n, 0);
    berth_nexus_free(&nx);
}

typedef struct advice_fx {
    berth_nexus nx;
    uint32_t c_small, c_big, c_fail;
    uint64_t fit;          /* NC_P46_224_v1 that fit after the failure */
    berth_advice *adv;
    uint32_t n;
} advice_fx;

/* A small cluster first; then a larger one with a pinned agent pool, a
 * smaller pool listed before larger XL pools, and its control plane pinned
 * to one rack; then a cluster that does not fit (40 XL VMs where at most
 * 32 - 8 cells are left). */
static int advice_setup(void **state)
{
    advice_fx *fx = calloc(1, sizeof *fx);
    if (!fx)
        return -1;
    *state = fx;
    berth_nexus *nx = &fx->nx;
    make(nx, 4, 4, 2);
    berth_pool_spec small[2] = {
        {"control-plane", BERTH_ROLE_CONTROL_PLANE, "NC_G2_8_v1", 1, NULL, 0, "t"},
        {"pool-1", BERTH_ROLE_WORKER, "NC_G2_8_v1", 1, NULL, 0, "t"}};
    fx->c_small = create(nx, "small", small, 2, 0);
    berth_pool_spec big[4] = {
        {"control-plane", BERTH_ROLE_CONTROL_PLANE, "NC_G12_56_v1", 3, z1, 1, "t"},
        {"pinned", BERTH_ROLE_WORKER, "NC_G6_28_v1", 6, z12, 2, "t"},
        {"xl-small", BERTH_ROLE_WORKER, "NC_P46_224_v1", 2, NULL, 0, "t"},
        {"xl-large", BERTH_ROLE_WORKER, "NC_P46_224_v1", 6, NULL, 0, "t"}};
    fx->c_big = create(nx, "big", big, 4, 0);
    berth_pool_spec fail[2] = {
        {"control-plane", BERTH_ROLE_CONTROL_PLANE, "NC_G2_8_v1", 1, NULL, 0, "t"},
        {"pool-1", BERTH_ROLE_WORKER, "NC_P46_224_v1", 40, NULL, 0, "t"}};
    fx->c_fail = create(nx, "too-big", fail, 2, BERTH_ENOFIT);
    fx->fit = berth_nexus_max_fit(nx, berth_nexus_find_sku(nx, "NC_P46_224_v1"), NULL);
    assert_true(fx->fit < 40);
    assert_int_equal(berth_nexus_advise(nx, &fx->adv, &fx->n), 0);
    return 0;
}

static int advice_teardown(void **state)
{
    advice_fx *fx = *state;
    if (fx) {
        berth_nexus_free(&fx->nx);
        free(fx);
    }
    return 0;
}

static void test_advice_kinds(void **state)
{
    advice_fx *fxp = *state, fx = *fxp;
    berth_advice *adv = fx.adv;
    uint32_t n = fx.n;
    const berth_cluster *cb = &fx.nx.clusters[fx.c_big];
    for (uint32_t i = 0; i < n; i++)
        print_message("advice: [%s] %s\n", adv[i].code, adv[i].message);
    assert_int_equal(count_advice(adv, n, BERTH_ADVICE_POOL_ZONES, fx.c_big, cb->pools[1],
                                  "PoolAvailabilityZones"),
                     1);
    assert_int_equal(count_advice(adv, n, BERTH_ADVICE_POOL_ZONES, NONE, NONE,
                                  "PoolAvailabilityZones"),
                     1);
    assert_int_equal(count_advice(adv, n, BERTH_ADVICE_CLUSTER_ORDER, fx.c_big, NONE,
                                  "ClusterOrder"),
                     1);
    assert_int_equal(count_advice(adv, n, BERTH_ADVICE_CLUSTER_ORDER, fx.c_small, NONE,
                                  "ClusterOrder"),
                     0);
    assert_int_equal(count_advice(adv, n, BERTH_ADVICE_POOL_ORDER, fx.c_big, cb->pools[3],
                                  "PoolOrder"),
                     1);
    assert_int_equal(count_advice(adv, n, BERTH_ADVICE_CONTROL_PLANE_RACK, fx.c_big,
                                  cb->pools[0], "ControlPlaneRackMajority"),
                     1);
    assert_int_equal(count_advice(adv, n, BERTH_ADVICE_CONTROL_PLANE_RACK, fx.c_small, NONE,
                                  "ControlPlaneRackMajority"),
                     0);
    uint32_t fp = fx.nx.clusters[fx.c_fail].pools[1];
    assert_int_equal(count_advice(adv, n, BERTH_ADVICE_REDUCE_COUNT, fx.c_fail, fp,
                                  "ReduceCountBeforeSku"),
                     1);
    /* the reduce-count advice says how many fit now */
    char want[64];
    snprintf(want, sizeof want, "%llu fit now", (unsigned long long)fx.fit);
    int found = 0;
    for (uint32_t i = 0; i < n; i++)
        if (adv[i].kind == BERTH_ADVICE_REDUCE_COUNT && adv[i].pool == fp)
            found |= strstr(adv[i].message, want) != NULL;
    if (!found)
        fail_msg("no ReduceCountBeforeSku message for pool-1 says '%s'", want);
}

/* The control-plane advice names how many of its VMs the rack holds. */
static void test_advice_control_plane_count(void **state)
{
    advice_fx fx = *(advice_fx *)*state;
    /* all three are pinned to rack 1 */
    for (uint32_t i = 0; i < fx.n; i++)
        if (fx.adv[i].kind == BERTH_ADVICE_CONTROL_PLANE_RACK &&
            !strstr(fx.adv[i].message, "3 of its 3"))
            fail_msg("control-plane advice miscounts the rack's VMs: '%s' (all 3 are in rack 1)",
                     fx.adv[i].message);
}

/* Reduce-count advice only for the pool that did not fit: too-big's
 * control plane fitted and was released by all-or-nothing. */
static void test_advice_reduce_only_failed_pool(void **state)
{
    advice_fx fx = *(advice_fx *)*state;
    uint32_t cpp = fx.nx.clusters[fx.c_fail].pools[0];
    for (uint32_t i = 0; i < fx.n; i++)
        if (fx.adv[i].kind == BERTH_ADVICE_REDUCE_COUNT && fx.adv[i].pool == cpp)
            fail_msg("reduce-count advice for a pool that fitted: '%s'", fx.adv[i].message);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_table),
        cmocka_unit_test(test_seed_upgrade),
        cmocka_unit_test(test_upgrade_quorum_and_zero),
        cmocka_unit_test(test_upgrade_batches_and_thresholds),
        cmocka_unit_test(test_advice_clean),
        cmocka_unit_test_setup_teardown(test_advice_kinds, advice_setup, advice_teardown),
        cmocka_unit_test_setup_teardown(test_advice_control_plane_count, advice_setup,
                                        advice_teardown),
        cmocka_unit_test_setup_teardown(test_advice_reduce_only_failed_pool, advice_setup,
                                        advice_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
