/* tests/unit/test_report_nexus.c - the nexus report layer on hand-built
 * estates (no placement involved): step tables, the `simulate` JSON
 * document checked key by key, SVG/HTML well-formedness and escaping, and
 * the compact heat map for large estates. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <jansson.h>

#include "berth/nexus.h"
#include "berth/report.h"

#define GiB (1024LL * 1024 * 1024)

/* ---- fixture: a small estate filled in by hand ---- */

enum { SKU_G12, SKU_P46, SKU_E70, NSKUS };

typedef struct fixture {
    berth_nexus nx;
} fixture;

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    assert_non_null(p);
    return p;
}

static void add_vm(berth_nexus *nx, uint32_t pool, uint32_t machine, uint32_t cell)
{
    berth_pool *p = &nx->pools[pool];
    const berth_sku *s = &nx->skus[p->sku];
    uint32_t v = nx->nvms++;
    assert_true(v < nx->capvms);
    nx->vms[v] = (berth_vm){.pool = pool, .machine = machine, .cell = cell,
                            .ordinal = p->next_ordinal++};
    assert_true(p->nvms < p->capvms);
    p->vms[p->nvms++] = v;
    const berth_machine *m = &nx->machines[machine];
    for (int32_t k = 0; k < s->numa_cells; k++) {
        berth_cell *c = &nx->cells[m->first_cell + cell + (uint32_t)k];
        c->used_cpu += s->host_vcpu / s->numa_cells;
        c->used_memory += s->memory / s->numa_cells;
    }
}

static uint32_t *per_rack3(berth_nexus *nx, uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t *v = berth_arena_alloc(&nx->arena, 3 * sizeof *v);
    assert_non_null(v);
    v[0] = a;
    v[1] = b;
    v[2] = c;
    return v;
}

static uint32_t *u32s(berth_nexus *nx, const uint32_t *src, uint32_t n)
{
    uint32_t *v = berth_arena_alloc(&nx->arena, (n ? n : 1) * sizeof *v);
    assert_non_null(v);
    memcpy(v, src, n * sizeof *v);
    return v;
}

/* 3 racks of 2 machines (2 cells of 48 host vCPU / 224 GiB); machine
 * bmm-3-1 is cordoned, bmm-3-2 is down. Clusters: "cluster-a" (control
 * plane 3 x G12 over the three racks, pool-1 2 x P46), "b<&>" (failed:
 * control plane 1 x G12, pool "w" wants 2 x E70 across both cells, got 1)
 * and "gone" (deleted). Four steps, the last a runtime upgrade. */
static void build(berth_nexus *nx)
{
    memset(nx, 0, sizeof *nx);
    berth_arena_init(&nx->arena, 0);
    nx->site_name = "lab & <test>";

    nx->nskus = nx->capskus = NSKUS;
    nx->skus = xcalloc(NSKUS, sizeof *nx->skus);
    nx->skus[SKU_G12] = (berth_sku){"NC_G12_56_v1", 12, 12, 56 * GiB, 1, 0, 1};
    nx->skus[SKU_P46] = (berth_sku){"NC_P46_224_v1", 46, 48, 224 * GiB, 1, 1, 1};
    nx->skus[SKU_E70] = (berth_sku){"NC_E70_336_v1", 70, 72, 336 * GiB, 2, 0, 1};

    nx->nracks = 3;
    nx->racks = xcalloc(3, sizeof *nx->racks);
    nx->nmachines = 6;
    nx->machines = xcalloc(6, sizeof *nx->machines);
    nx->ncells = 12;
    nx->cells = xcalloc(12, sizeof *nx->cells);
    static const char *const rnames[3] = {"1", "2", "3"};
    static const char *const mnames[6] = {"bmm-1-1", "bmm-1-2", "bmm-2-1",
                                          "bmm-2-2", "bmm-3-1", "bmm-3-2"};
    for (uint32_t r = 0; r < 3; r++)
        nx->racks[r] = (berth_rack){rnames[r], 2 * r, 2};
    for (uint32_t m = 0; m < 6; m++)
        nx->machines[m] = (berth_machine){mnames[m], m / 2, 2 * m, 2, 0, 0};
    nx->machines[4].cordoned = 1;
    nx->machines[5].down = 1;
    for (uint32_t c = 0; c < 12; c++)
        nx->cells[c] = (berth_cell){.cpu = 48, .memory = 224 * GiB};

    nx->nclusters = nx->capclusters = 3;
    nx->clusters = xcalloc(3, sizeof *nx->clusters);
    nx->npools = nx->cappools = 5;
    nx->pools = xcalloc(5, sizeof *nx->pools);
    nx->capvms = 16;
    nx->vms = xcalloc(16, sizeof *nx->vms);

    static const uint32_t apools[2] = {0, 1}, bpools[2] = {2, 3}, gpools[1] = {4};
    nx->clusters[0] = (berth_cluster){"cluster-a", BERTH_CLUSTER_SUCCEEDED, "", NULL, 2, 2};
    nx->clusters[1] = (berth_cluster){"b<&>", BERTH_CLUSTER_FAILED,
                                      "pool w: placed 1 of 2 VMs \"NC_E70_336_v1\"", NULL, 2, 2};
    nx->clusters[2] = (berth_cluster){"gone", BERTH_CLUSTER_DELETED, "", NULL, 1, 1};
    nx->clusters[0].pools = xcalloc(2, sizeof(uint32_t));
    memcpy(nx->clusters[0].pools, apools, sizeof apools);
    nx->clusters[1].pools = xcalloc(2, sizeof(uint32_t));
    memcpy(nx->clusters[1].pools, bpools, sizeof bpools);
    nx->clusters[2].pools = xcalloc(1, sizeof(uint32_t));
    memcpy(nx->clusters[2].pools, gpools, sizeof gpools);

    static const struct {
        const char *name;
        uint32_t cluster;
        berth_pool_role role;
        uint32_t sku;
        int32_t count;
    } pools[5] = {
        {"control-plane", 0, BERTH_ROLE_CONTROL_PLANE, SKU_G12, 3},
        {"pool-1", 0, BERTH_ROLE_WORKER, SKU_P46, 2},
        {"control-plane", 1, BERTH_ROLE_CONTROL_PLANE, SKU_G12, 1},
        {"w", 1, BERTH_ROLE_WORKER, SKU_E70, 2},
        {"control-plane", 2, BERTH_ROLE_CONTROL_PLANE, SKU_G12, 1},
    };
    for (uint32_t p = 0; p < 5; p++) {
        berth_pool *pl = &nx->pools[p];
        pl->name = pools[p].name;
        pl->cluster = pools[p].cluster;
        pl->role = pools[p].role;
        pl->sku = pools[p].sku;
        pl->count = pools[p].count;
        pl->capvms = 4;
        pl->vms = xcalloc(4, sizeof(uint32_t));
        pl->next_ordinal = 1;
    }
    /* placement order deliberately not machine order */
    add_vm(nx, 0, 2, 0);  /* cluster-a control plane: rack 2 first */
    add_vm(nx, 0, 0, 0);
    add_vm(nx, 0, 4, 0);
    add_vm(nx, 1, 0, 1);
    add_vm(nx, 1, 2, 1);
    add_vm(nx, 2, 1, 0);
    add_vm(nx, 3, 3, 0);  /* spans both cells */

    nx->nsteps = nx->capsteps = 5;
    nx->steps = xcalloc(5, sizeof *nx->steps);
    berth_step *st = nx->steps;
    st[0] = (berth_step){.kind = BERTH_STEP_CREATE_CLUSTER, .name = "cluster-a",
                         .source = "seed.yaml:12", .cluster = "cluster-a"};
    st[0].nrows = 2;
    st[0].rows = berth_arena_alloc(&nx->arena, 2 * sizeof *st[0].rows);
    assert_non_null(st[0].rows);
    st[0].rows[0] = (berth_step_row){0, 3, 3, 3, per_rack3(nx, 1, 1, 1)};
    st[0].rows[1] = (berth_step_row){1, 2, 2, 2, per_rack3(nx, 1, 1, 0)};

    st[1] = (berth_step){.kind = BERTH_STEP_CREATE_CLUSTER, .name = "b<&>", .failed = 1,
                         .reason = nx->clusters[1].reason};
    st[1].nrows = 2;
    st[1].rows = berth_arena_alloc(&nx->arena, 2 * sizeof *st[1].rows);
    assert_non_null(st[1].rows);
    st[1].rows[0] = (berth_step_row){2, 1, 1, 1, per_rack3(nx, 1, 0, 0)};
    st[1].rows[1] = (berth_step_row){3, 2, 1, 1, per_rack3(nx, 0, 1, 0)};

    st[2] = (berth_step){.kind = BERTH_STEP_SCALE_POOL, .name = "grow", .cluster = "cluster-a",
                         .pool = "pool-1", .count = 9};
    st[2].nrows = 1;
    st[2].rows = berth_arena_alloc(&nx->arena, sizeof *st[2].rows);
    assert_non_null(st[2].rows);
    st[2].rows[0] = (berth_step_row){1, 9, 9, 3, per_rack3(nx, 3, 5, 4)};

    st[3] = (berth_step){.kind = BERTH_STEP_CORDON, .name = "cordon-3-1", .machine = "bmm-3-1"};

    st[4] = (berth_step){.kind = BERTH_STEP_RUNTIME_UPGRADE, .name = "upgrade"};
    st[4].nbatches = 2;
    st[4].batches = berth_arena_alloc(&nx->arena, 2 * sizeof *st[4].batches);
    assert_non_null(st[4].batches);
    static const uint32_t down1[6] = {0, 1, 3, 1, 1, 2};
    static const uint32_t down2[6] = {2, 1, 1, 3, 1, 1};
    static const uint32_t ql[1] = {1}, pz[1] = {3};
    st[4].batches[0] = (berth_upgrade_batch){.rack = 0, .batch = 1, .nbatches = 1,
                                             .machines_down = 2, .vms_down = 3,
                                             .pool_down = u32s(nx, down1, 6), .npool_down = 2,
                                             .start_minute = 15, .threshold_machines = 2};
    st[4].batches[1] = (berth_upgrade_batch){.rack = 1, .batch = 1, .nbatches = 1,
                                             .machines_down = 2, .vms_down = 2,
                                             .pool_down = u32s(nx, down2, 6), .npool_down = 2,
                                             .quorum_lost = u32s(nx, ql, 1), .nquorum_lost = 1,
                                             .pools_zero = u32s(nx, pz, 1), .npools_zero = 1,
                                             .start_minute = 130, .threshold_machines = 2};
}

static void release(berth_nexus *nx)
{
    for (uint32_t c = 0; c < nx->nclusters; c++)
        free(nx->clusters[c].pools);
    for (uint32_t p = 0; p < nx->npools; p++)
        free(nx->pools[p].vms);
    free(nx->clusters);
    free(nx->pools);
    free(nx->vms);
    free(nx->skus);
    free(nx->steps);
    free(nx->racks);
    free(nx->machines);
    free(nx->cells);
    berth_arena_free(&nx->arena);
}

/* A bare estate of nracks x per_rack machines with 2 cells, every machine
 * about half used, a few cordoned/down; no clusters. */
static void build_big(berth_nexus *nx, uint32_t nracks, uint32_t per_rack)
{
    memset(nx, 0, sizeof *nx);
    berth_arena_init(&nx->arena, 0);
    nx->nracks = nracks;
    nx->nmachines = nracks * per_rack;
    nx->ncells = 2 * nx->nmachines;
    nx->racks = xcalloc(nracks, sizeof *nx->racks);
    nx->machines = xcalloc(nx->nmachines, sizeof *nx->machines);
    nx->cells = xcalloc(nx->ncells, sizeof *nx->cells);
    for (uint32_t r = 0; r < nracks; r++) {
        char buf[16];
        snprintf(buf, sizeof buf, "%u", r + 1);
        nx->racks[r] = (berth_rack){berth_arena_strdup(&nx->arena, buf), r * per_rack, per_rack};
    }
    for (uint32_t m = 0; m < nx->nmachines; m++) {
        char buf[32];
        snprintf(buf, sizeof buf, "bmm-%u", m);
        nx->machines[m] = (berth_machine){berth_arena_strdup(&nx->arena, buf), m / per_rack,
                                          2 * m, 2, m % 97 == 3, m % 89 == 5};
    }
    for (uint32_t c = 0; c < nx->ncells; c++)
        nx->cells[c] = (berth_cell){48, (int32_t)(c % 49), 224 * GiB, (int64_t)(c % 5) * GiB};
}

/* ---- capture and well-formedness ---- */

typedef int (*render_fn)(FILE *, const berth_nexus *);

/* The stream's buffer pointer lives in static storage: gcc 12 at -O3
 * otherwise warns (wrongly) that the returned text dangles. */
static char *mem_buf;
static size_t mem_len;

static char *render(render_fn fn, const berth_nexus *nx, size_t *len)
{
    char *buf;
    size_t n;
    mem_buf = NULL;
    mem_len = 0;
    FILE *f = open_memstream(&mem_buf, &mem_len);
    assert_non_null(f);
    assert_int_equal(fn(f, nx), 0);
    assert_int_equal(fclose(f), 0);
    buf = mem_buf;
    n = mem_len;
    if (len)
        *len = n;
    return buf;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0, k = strlen(needle);
    for (const char *p = strstr(hay, needle); p; p = strstr(p + k, needle))
        n++;
    return n;
}

static int is_void_html(const char *name, size_t n)
{
    return (n == 4 && !strncmp(name, "meta", 4)) || (n == 2 && !strncmp(name, "br", 2));
}

/* Tags nest properly, attribute quotes close, '&' starts an entity and no
 * raw '<' appears in text. Returns the number of elements seen. */
static size_t check_markup(const char *doc)
{
    const char *stack[256];
    size_t len[256], depth = 0, elements = 0;
    const char *p = doc;
    while (*p) {
        if (*p == '&') {
            const char *q = p + 1;
            if (*q == '#')
                q++;
            while ((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9'))
                q++;
            assert_true(q > p + 1 && *q == ';');
            p = q + 1;
            continue;
        }
        if (*p != '<') {
            p++;
            continue;
        }
        if (!strncmp(p, "<!DOCTYPE", 9)) {
            p = strchr(p, '>');
            assert_non_null(p);
            p++;
            continue;
        }
        int closing = p[1] == '/';
        const char *name = p + (closing ? 2 : 1);
        size_t n = strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-");
        assert_true(n > 0);
        const char *q = name + n;
        char quote = 0;
        while (*q && (quote || *q != '>')) {
            if (quote && *q == quote)
                quote = 0;
            else if (!quote && (*q == '"' || *q == '\''))
                quote = *q;
            else if (*q == '<')
                fail_msg("raw '<' inside a tag");
            q++;
        }
        assert_int_equal(*q, '>');
        int self = q[-1] == '/';
        if (closing) {
            assert_true(depth > 0);
            depth--;
            assert_int_equal(len[depth], n);
            assert_memory_equal(stack[depth], name, n);
        } else if (!self && !is_void_html(name, n)) {
            assert_true(depth < 256);
            stack[depth] = name;
            len[depth] = n;
            depth++;
        }
        if (!closing)
            elements++;
        p = q + 1;
    }
    assert_int_equal(depth, 0);
    return elements;
}

/* ---- tests ---- */

static void test_per_rack_text(void **state)
{
    (void)state;
    char buf[64];
    static const uint32_t same[5] = {3, 0, 3, 3, 0}, mixed[6] = {5, 3, 4, 0, 4, 3},
                          many[8] = {1, 2, 3, 4, 5, 6, 7, 12}, none[3] = {0, 0, 0};
    berth_report_per_rack_text(same, 5, buf, sizeof buf);
    assert_string_equal(buf, "3");
    berth_report_per_rack_text(mixed, 6, buf, sizeof buf);
    assert_string_equal(buf, "3, 4, 5");
    berth_report_per_rack_text(many, 8, buf, sizeof buf);
    assert_string_equal(buf, "1..12");
    berth_report_per_rack_text(none, 3, buf, sizeof buf);
    assert_string_equal(buf, "-");
    berth_report_per_rack_text(NULL, 3, buf, sizeof buf);
    assert_string_equal(buf, "-");
    char tiny[4];
    int need = berth_report_per_rack_text(mixed, 6, tiny, sizeof tiny);
    assert_int_equal(need, 7);
    assert_string_equal(tiny, "3, ");
    assert_string_equal(berth_report_step_kind_name(BERTH_STEP_RUNTIME_UPGRADE),
                        "runtime-upgrade");
    assert_string_equal(berth_report_role_name(BERTH_ROLE_CONTROL_PLANE), "ControlPlane");
    assert_string_equal(berth_report_cluster_status_name(BERTH_CLUSTER_DELETED), "Deleted");
}

static void test_table(void **state)
{
    (void)state;
    berth_nexus nx;
    build(&nx);
    char *t = render(berth_report_nexus_table, &nx, NULL);
    assert_non_null(strstr(t, "Step 1: create-cluster cluster-a\n"));
    assert_non_null(strstr(t, "Step 2: create-cluster b<&>  FAILED: pool w: placed 1 of 2"));
    assert_non_null(strstr(t, "Step 3: scale-pool grow (cluster-a/pool-1 to 9)\n"));
    assert_non_null(strstr(t, "Step 4: cordon cordon-3-1 (machine bmm-3-1)\n"));
    assert_non_null(strstr(t, "Step 5: runtime-upgrade upgrade\n"));
    /* header and rows aligned: columns computed from content */
    assert_non_null(strstr(t, "  cluster    pool           SKU            count  placed  racks used"
                              "  VMs per rack\n"));
    assert_non_null(strstr(t, "  cluster-a  control-plane  NC_G12_56_v1       3       3           3"
                              "  1\n"));
    assert_non_null(strstr(t, "  cluster-a  pool-1         NC_P46_224_v1      2       2           2"
                              "  1\n"));
    assert_non_null(strstr(t, "  b<&>     w              NC_E70_336_v1      2       1           1"
                              "  1\n"));
    assert_non_null(strstr(t, "9           3  3, 4, 5\n"));
    /* upgrade batches */
    assert_non_null(strstr(t, "  rack  batch  machines down  VMs down  start minute  impact\n"));
    assert_non_null(strstr(t, "  1       1/1              2         3            15  VMs down: "
                              "cluster-a/control-plane 1/3, cluster-a/pool-1 1/2\n"));
    assert_non_null(strstr(t, "  2       1/1              2         2           130  quorum lost: "
                              "b<&>; pools at zero: b<&>/w; VMs down: b<&>/control-plane 1/1,"
                              " b<&>/w 1/1\n"));
    /* no trailing spaces anywhere */
    assert_null(strstr(t, " \n"));
    free(t);
    release(&nx);
}

static json_t *at(json_t *arr, size_t i)
{
    json_t *v = json_array_get(arr, i);
    assert_non_null(v);
    return v;
}

static json_t *key(json_t *obj, const char *k)
{
    json_t *v = json_object_get(obj, k);
    if (!v)
        fail_msg("missing key %s", k);
    return v;
}

static void assert_str(json_t *obj, const char *k, const char *want)
{
    json_t *v = key(obj, k);
    assert_true(json_is_string(v));
    assert_string_equal(json_string_value(v), want);
}

static void assert_int(json_t *obj, const char *k, long long want)
{
    json_t *v = key(obj, k);
    assert_true(json_is_integer(v));
    assert_int_equal(json_integer_value(v), want);
}

static void test_json(void **state)
{
    (void)state;
    berth_nexus nx;
    build(&nx);
    json_t *root = berth_report_nexus_json(&nx);
    assert_non_null(root);
    assert_int_equal(json_object_size(root), 3);

    json_t *clusters = key(root, "clusters");
    assert_int_equal(json_array_size(clusters), 3);
    json_t *a = at(clusters, 0);
    assert_str(a, "name", "cluster-a");
    assert_str(a, "status", "Succeeded");
    assert_str(a, "reason", "");
    json_t *cp = at(key(a, "pools"), 0);
    assert_str(cp, "name", "control-plane");
    assert_str(cp, "role", "ControlPlane");
    assert_str(cp, "vmSkuName", "NC_G12_56_v1");
    assert_int(cp, "count", 3);
    assert_int(cp, "placed", 3);
    json_t *vpr = key(cp, "vmsPerRack");
    assert_int_equal(json_object_size(vpr), 3);
    assert_int(vpr, "1", 1);
    assert_int(vpr, "3", 1);
    json_t *vms = key(cp, "vms");
    assert_int_equal(json_array_size(vms), 3);
    /* placement order, names from berth_nexus_vm_name */
    static const char *const machine_of[3] = {"bmm-2-1", "bmm-1-1", "bmm-3-1"};
    static const char *const rack_of[3] = {"2", "1", "3"};
    for (uint32_t i = 0; i < 3; i++) {
        char name[128];
        berth_nexus_vm_name(&nx, nx.pools[0].vms[i], name, sizeof name);
        json_t *vm = at(vms, i);
        assert_int_equal(json_object_size(vm), 4);
        assert_str(vm, "name", name);
        assert_str(vm, "bareMetalMachineId", machine_of[i]);
        assert_str(vm, "rack", rack_of[i]);
        assert_int(vm, "numaCell", 0);
    }
    json_t *p1 = at(key(a, "pools"), 1);
    assert_str(p1, "role", "Worker");
    assert_int(at(key(p1, "vms"), 1), "numaCell", 1);
    assert_int_equal(json_object_size(key(p1, "vmsPerRack")), 2);

    json_t *b = at(clusters, 1);
    assert_str(b, "name", "b<&>");
    assert_str(b, "status", "Failed");
    assert_str(b, "reason", "pool w: placed 1 of 2 VMs \"NC_E70_336_v1\"");
    json_t *w = at(key(b, "pools"), 1);
    assert_int(w, "count", 2);
    assert_int(w, "placed", 1);
    assert_int(key(w, "vmsPerRack"), "2", 1);
    json_t *g = at(clusters, 2);
    assert_str(g, "status", "Deleted");
    assert_int(at(key(g, "pools"), 0), "placed", 0);
    assert_int_equal(json_array_size(key(at(key(g, "pools"), 0), "vms")), 0);
    assert_int_equal(json_object_size(key(at(key(g, "pools"), 0), "vmsPerRack")), 0);

    json_t *steps = key(root, "steps");
    assert_int_equal(json_array_size(steps), 5);
    json_t *s0 = at(steps, 0);
    assert_str(s0, "kind", "create-cluster");
    assert_str(s0, "name", "cluster-a");
    assert_true(json_is_false(key(s0, "failed")));
    assert_str(s0, "reason", "");
    assert_str(s0, "source", "seed.yaml:12");
    assert_null(json_object_get(s0, "batches"));
    json_t *row = at(key(s0, "rows"), 1);
    assert_str(row, "cluster", "cluster-a");
    assert_str(row, "pool", "pool-1");
    assert_str(row, "vmSkuName", "NC_P46_224_v1");
    assert_int(row, "count", 2);
    assert_int(row, "placed", 2);
    assert_int(row, "racksUsed", 2);
    assert_int_equal(json_object_size(key(row, "vmsPerRack")), 2);
    assert_int(key(row, "vmsPerRack"), "2", 1);
    assert_true(json_is_true(key(at(steps, 1), "failed")));
    assert_str(at(steps, 2), "kind", "scale-pool");
    assert_str(at(steps, 3), "kind", "cordon");
    assert_int_equal(json_array_size(key(at(steps, 3), "rows")), 0);
    json_t *up = at(steps, 4);
    assert_str(up, "kind", "runtime-upgrade");
    json_t *batches = key(up, "batches");
    assert_int_equal(json_array_size(batches), 2);
    json_t *b1 = at(batches, 1);
    assert_str(b1, "rack", "2");
    assert_int(b1, "batch", 1);
    assert_int(b1, "batches", 1);
    assert_int(b1, "machinesDown", 2);
    assert_int(b1, "vmsDown", 2);
    assert_int(b1, "startMinute", 130);
    assert_int(b1, "thresholdMachines", 2);
    json_t *pd = at(key(b1, "pools"), 1);
    assert_str(pd, "cluster", "b<&>");
    assert_str(pd, "pool", "w");
    assert_int(pd, "down", 1);
    assert_int(pd, "total", 1);
    assert_int_equal(json_array_size(key(b1, "quorumLost")), 1);
    assert_string_equal(json_string_value(at(key(b1, "quorumLost"), 0)), "b<&>");
    assert_str(at(key(b1, "poolsAtZero"), 0), "pool", "w");
    assert_int_equal(json_array_size(key(at(batches, 0), "quorumLost")), 0);
    assert_int_equal(json_array_size(key(at(batches, 0), "poolsAtZero")), 0);

    json_t *machines = key(root, "machines");
    assert_int_equal(json_array_size(machines), 6);
    json_t *m3 = at(machines, 3);
    assert_str(m3, "name", "bmm-2-2");
    assert_str(m3, "rack", "2");
    assert_true(json_is_false(key(m3, "cordoned")));
    json_t *cell = at(key(m3, "cells"), 1);
    assert_int(cell, "cpu", 48);
    assert_int(cell, "memory", 224 * GiB);
    assert_int(cell, "usedCpu", 36);
    assert_int(cell, "usedMemory", 168 * GiB);
    assert_true(json_is_true(key(at(machines, 4), "cordoned")));
    assert_true(json_is_true(key(at(machines, 5), "down")));

    /* the writer: 2-space indent, insertion order, trailing newline, parses back */
    mem_buf = NULL;
    mem_len = 0;
    FILE *f = open_memstream(&mem_buf, &mem_len);
    assert_non_null(f);
    assert_int_equal(berth_report_json_write(f, root), 0);
    assert_int_equal(fclose(f), 0);
    char *buf = mem_buf;
    size_t n = mem_len;
    assert_true(n > 2 && buf[n - 1] == '\n' && buf[n - 2] == '}');
    assert_int_equal(strncmp(buf, "{\n  \"clusters\": [\n    {\n      \"name\": \"cluster-a\"", 48), 0);
    json_error_t jerr;
    json_t *back = json_loads(buf, 0, &jerr);
    assert_non_null(back);
    assert_true(json_equal(back, root));
    json_decref(back);
    free(buf);
    json_decref(root);
    release(&nx);
}

static void test_svg(void **state)
{
    (void)state;
    berth_nexus nx;
    build(&nx);
    size_t n;
    char *s = render(berth_report_nexus_svg, &nx, &n);
    assert_int_equal(strncmp(s, "<svg", 4), 0);
    assert_true(n > 6 && !strcmp(s + n - 7, "</svg>\n"));
    check_markup(s);
    assert_int_equal(count(s, "<g>") + count(s, "<g "), count(s, "</g>"));
    /* legend names every live cluster, escaped; raw text never leaks */
    assert_non_null(strstr(s, ">cluster-a</tspan>"));
    assert_non_null(strstr(s, ">b&lt;&amp;&gt;</tspan>"));
    assert_null(strstr(s, "b<&>"));
    assert_null(strstr(s, ">gone</tspan>"));
    assert_non_null(strstr(s, "Layout of lab &amp; &lt;test&gt;"));
    /* racks, machines, VMs with hover titles */
    assert_non_null(strstr(s, ">Rack 1</text>"));
    assert_non_null(strstr(s, ">Rack 3</text>"));
    char name[128];
    berth_nexus_vm_name(&nx, 3, name, sizeof name);
    assert_non_null(strstr(s, name));
    assert_non_null(strstr(s, "\nSKU NC_P46_224_v1 (46 vCPU, 48 host vCPU, 224 GiB)\nmachine "
                              "bmm-1-1, rack 1, NUMA cell 1</title>"));
    assert_non_null(strstr(s, "NUMA cells 0-1</title>"));
    assert_non_null(strstr(s, ">cluster-a/pool-1</text>"));
    /* cordoned and down machines are marked */
    assert_non_null(strstr(s, "url(#bth-hatch)\" pointer-events"));
    assert_non_null(strstr(s, "url(#bth-down)\" pointer-events"));
    assert_non_null(strstr(s, ">C</text>"));
    assert_non_null(strstr(s, ">D</text>"));
    assert_null(strstr(s, "Compact view"));
    free(s);
    release(&nx);
}

static void test_html(void **state)
{
    (void)state;
    berth_nexus nx;
    build(&nx);
    size_t n;
    char *h = render(berth_report_nexus_html, &nx, &n);
    assert_int_equal(strncmp(h, "<!DOCTYPE html>\n<html", 21), 0);
    assert_true(!strcmp(h + n - 8, "</html>\n"));
    check_markup(h);
    assert_non_null(strstr(h, "<svg xmlns="));
    assert_null(strstr(h, "src=\"http"));
    assert_null(strstr(h, "href=\"http"));
    assert_null(strstr(h, "b<&>"));
    assert_non_null(strstr(h, "<h2>Racks</h2>"));
    assert_non_null(strstr(h, "<h2>Clusters and pools</h2>"));
    assert_non_null(strstr(h, "<td>b&lt;&amp;&gt;</td><td class=\"st-bad\">Failed</td>"));
    assert_non_null(strstr(h, "<td>NC_P46_224_v1</td><td class=\"n\">2</td><td class=\"n\">2"));
    assert_non_null(strstr(h, "FAILED: pool w: placed 1 of 2 VMs &quot;NC_E70_336_v1&quot;"));
    /* rack 1: 2 machines, 3 VMs (2 x G12 + 1 x P46... ) */
    assert_non_null(strstr(h, "<tr><td>1</td><td class=\"n\">2</td>"));
    assert_non_null(strstr(h, "<tr class=\"total\"><td>total</td><td class=\"n\">6</td><td "
                              "class=\"n\">1</td><td class=\"n\">1</td><td class=\"n\">7</td>"));
    free(h);
    release(&nx);
}

static void check_compact(uint32_t nracks, uint32_t per_rack, const char *title)
{
    berth_nexus nx;
    build_big(&nx, nracks, per_rack);
    size_t n;
    char *s = render(berth_report_nexus_svg, &nx, &n);
    assert_int_equal(strncmp(s, "<svg", 4), 0);
    assert_non_null(strstr(s, "Compact view"));
    size_t elements = check_markup(s);
    /* one square per machine (or group), not per VM: stays proportionate */
    assert_true(elements < 3u * nx.nmachines + 64u * nracks + 64u);
    assert_true(n < 200u * (size_t)nx.nmachines + 4096u);
    assert_non_null(strstr(s, title));
    free(s);
    /* the HTML page wraps it and stays well-formed */
    char *h = render(berth_report_nexus_html, &nx, NULL);
    check_markup(h);
    free(h);
    release(&nx);
}

/* The smallest font-size in px the document's CSS sets (0 when none;
 * sizes in em, relative to the browser's 16 px, are not counted). */
static double min_font(const char *doc)
{
    double least = 0;
    for (const char *p = strstr(doc, "font-size:"); p; p = strstr(p + 10, "font-size:")) {
        char *end;
        double v = strtod(p + 10, &end);
        if (strncmp(end, "px", 2))
            continue;
        if (least == 0 || v < least)
            least = v;
    }
    return least;
}

/* The detailed picture reads at 1,400 px: racks wrap into rows no wider,
 * spread evenly (12 racks: 3 rows of 4), no text under 11 px; the HTML
 * page adds the heat map with one titled square per machine. */
static void test_wrap(void **state)
{
    (void)state;
    berth_nexus nx;
    build_big(&nx, 12, 6);
    char *s = render(berth_report_nexus_svg, &nx, NULL);
    double w = strtod(strstr(s, "width=\"") + 7, NULL);
    assert_true(w <= 1400.0 && w >= 1000.0);
    assert_true(min_font(s) >= 11.0);
    /* rack 5 starts the second row at the left margin, rack 9 the third */
    const char *r1 = strstr(s, ">Rack 1</text>"), *r5 = strstr(s, ">Rack 5</text>");
    assert_non_null(r1);
    assert_non_null(r5);
    /* each "Rack N" heading is written as <text ... x="X" y="Y">Rack N */
    double x1 = 0, y1 = 0, x5 = 0, y5 = 0;
    for (const char *q = r1; q > s && !(x1 && y1); q--) {
        if (!y1 && !strncmp(q, " y=\"", 4))
            y1 = strtod(q + 4, NULL);
        if (y1 && !strncmp(q, " x=\"", 4))
            x1 = strtod(q + 4, NULL);
    }
    for (const char *q = r5; q > s && !(x5 && y5); q--) {
        if (!y5 && !strncmp(q, " y=\"", 4))
            y5 = strtod(q + 4, NULL);
        if (y5 && !strncmp(q, " x=\"", 4))
            x5 = strtod(q + 4, NULL);
    }
    assert_true(x1 > 0 && x5 == x1);
    assert_true(y5 > y1 + 6 * 20.0);
    check_markup(s);
    free(s);
    char *h = render(berth_report_nexus_html, &nx, NULL);
    assert_true(min_font(h) >= 11.0);
    assert_non_null(strstr(h, "<h2>Utilisation heat map</h2>"));
    assert_non_null(strstr(h, "<title>Rack 5: 6 machines, "));
    assert_non_null(strstr(h, "<title>bmm-3 (rack 1): "));
    check_markup(h);
    free(h);
    release(&nx);
}

static void test_compact(void **state)
{
    (void)state;
    check_compact(65, 2, "<title>bmm-3: 14% host vCPU, cordoned</title>"); /* too many racks */
    check_compact(50, 100, "<title>bmm-3: ");             /* too many machines */
    check_compact(4100, 1, "<title>bmm-5 (rack 6): ");    /* one global grid */
    berth_nexus nx;
    build_big(&nx, 64, 64);         /* exactly at the limits: detailed */
    char *s = render(berth_report_nexus_svg, &nx, NULL);
    assert_null(strstr(s, "Compact view"));
    check_markup(s);
    free(s);
    release(&nx);
}

static void test_compact_grouped(void **state)
{
    (void)state;
    /* 80 000 machines: squares stand for groups of two, no per-square titles */
    berth_nexus nx;
    build_big(&nx, 40, 2000);
    size_t n;
    char *s = render(berth_report_nexus_svg, &nx, &n);
    assert_non_null(strstr(s, "up to 2 machines"));
    assert_null(strstr(s, "<title>bmm-"));
    check_markup(s);
    assert_true(n < 100u * 40000u);
    free(s);
    release(&nx);
}

static void test_empty(void **state)
{
    (void)state;
    berth_nexus nx;
    memset(&nx, 0, sizeof nx);
    char *t = render(berth_report_nexus_table, &nx, NULL);
    assert_string_equal(t, "");
    free(t);
    char *s = render(berth_report_nexus_svg, &nx, NULL);
    check_markup(s);
    free(s);
    char *h = render(berth_report_nexus_html, &nx, NULL);
    check_markup(h);
    free(h);
    json_t *root = berth_report_nexus_json(&nx);
    assert_non_null(root);
    assert_int_equal(json_array_size(key(root, "clusters")), 0);
    assert_int_equal(json_array_size(key(root, "machines")), 0);
    json_decref(root);
}

static void test_bad_utf8(void **state)
{
    (void)state;
    berth_nexus nx;
    build(&nx);
    nx.racks[1].name = "r\xff" "2";
    nx.clusters[0].name = "bad\xc3(";
    json_t *root = berth_report_nexus_json(&nx);
    assert_non_null(root);
    assert_str(at(key(root, "clusters"), 0), "name", "bad?(");
    assert_int(key(at(key(at(key(root, "clusters"), 0), "pools"), 0), "vmsPerRack"), "r?2", 1);
    json_decref(root);
    char *s = render(berth_report_nexus_svg, &nx, NULL);
    assert_null(strstr(s, "\xff"));
    check_markup(s);
    free(s);
    release(&nx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_per_rack_text),
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_svg),
        cmocka_unit_test(test_html),
        cmocka_unit_test(test_wrap),
        cmocka_unit_test(test_compact),
        cmocka_unit_test(test_compact_grouped),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_bad_utf8),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
