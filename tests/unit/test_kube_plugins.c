/* tests/unit/test_kube_plugins.c - the kube plugins of SPEC 2.5 on
 * hand-computed cases: NodeResourcesFit's filter (every reason, ignored
 * resources, the usage-aware admission) and its three scoring strategies
 * with their integer truncation and rounding edges, BalancedAllocation (one,
 * two and three resources, clamp, best-effort skip), DefaultNormalizeScore,
 * TaintToleration, NodeUnschedulable, NodeName, NodeAffinity (Gt/Lt, NotIn
 * on an absent key, matchFields, empty terms, preferred weights), NodePorts,
 * VolumeZone, ImageLocality (spread, clamps, reference mode) and
 * UsageHeadroom (the seed's three hosts), plus the plugin tables.
 *
 * A cluster is built by hand (nodes n0, n1, ... so kube_sched_init's name
 * sort keeps their order), the columns come from kube_sched_init, and each
 * case then sets the node values it needs directly (KS_*_OF). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "berth/kube.h"
#include "kube/state.h"

#define MiB (1024LL * 1024)
#define GB (1000LL * 1000 * 1000)
#define CPU BERTH_KRES_CPU
#define MEM BERTH_KRES_MEMORY
#define EPH BERTH_KRES_EPHEMERAL

typedef struct fx {
    berth_kcluster k;
    berth_kprofile prof;
    kube_sched s;
    kube_req r;
    int inited;
    uint32_t ncand;        /* candidates scored (0: every node) */
    uint32_t cand[16];
    uint8_t v[16];
    int64_t out[16];
} fx;

static const char *const node_names[] = {"n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7"};

static fx *fx_new(uint32_t nnodes, uint32_t npods)
{
    fx *f = calloc(1, sizeof *f);
    assert_non_null(f);
    berth_kube_init(&f->k);
    f->k.nodes = calloc(nnodes, sizeof *f->k.nodes);
    f->k.pods = calloc(npods ? npods : 1, sizeof *f->k.pods);
    assert_non_null(f->k.nodes);
    assert_non_null(f->k.pods);
    f->k.nnodes = f->k.capnodes = nnodes;
    f->k.npods = f->k.cappods = npods;
    for (uint32_t n = 0; n < nnodes; n++) {
        f->k.nodes[n].name = node_names[n];
        f->k.nodes[n].alloc_pods = 110;
    }
    for (uint32_t p = 0; p < npods; p++) {
        f->k.pods[p].ns = "default";
        f->k.pods[p].name = "p";
    }
    berth_kube_default_profile(&f->k, &f->prof);
    for (uint32_t i = 0; i < 16; i++)
        f->cand[i] = i;
    return f;
}

static void fx_sched(fx *f)
{
    assert_int_equal(kube_sched_init(&f->s, &f->k, &f->prof, 0), 0);
    f->inited = 1;
}

static void fx_free(fx *f)
{
    if (f->inited)
        kube_sched_free(&f->s);
    berth_kube_free(&f->k);
    free(f);
}

static void fx_pod(fx *f, uint32_t pod)
{
    f->r.pod = pod;
    f->r.p = &f->k.pods[pod];
}

/* The tests change pod specs in place: drop the plugins' memoised
 * per-spec columns before each run. */
static void fx_touch(fx *f)
{
    if (f->inited)
        kube_plugins_free(&f->s);
}

static void run_filter(fx *f, berth_kplugin p)
{
    const berth_filter_plugin *pl = kube_filter_plugin(p);
    assert_non_null(pl);
    fx_touch(f);
    memset(f->v, BERTH_FIT, sizeof f->v);
    pl->filter(&f->s, &f->r, f->cand, f->k.nnodes, f->v);
}

static void reason(fx *f, berth_kplugin p, uint32_t node, char *buf, size_t size)
{
    kube_filter_plugin(p)->reason(&f->s, &f->r, node, buf, size);
}

/* Raw scores, then NormalizeScore when the plugin has one. */
static void run_score(fx *f, berth_kplugin p)
{
    const berth_score_plugin *pl = kube_score_plugin(p);
    assert_non_null(pl);
    fx_touch(f);
    for (uint32_t i = 0; i < 16; i++)
        f->out[i] = -999;
    uint32_t n = f->ncand ? f->ncand : f->k.nnodes;
    pl->score(&f->s, &f->r, f->cand, n, f->out);
    if (pl->normalize)
        pl->normalize(&f->s, &f->r, f->out, n);
}

/* Sets node n's capacity and already-requested amounts (plain and non-zero
 * the same) for resource r. */
static void set_node(fx *f, uint32_t n, uint32_t r, int64_t cap, int64_t used)
{
    KS_ALLOC_OF(&f->s, r, n) = cap;
    KS_REQ_OF(&f->s, r, n) = used;
    if (r <= MEM)
        KS_NZ_OF(&f->s, r, n) = used;
}

static void set_pod(fx *f, uint32_t pod, uint32_t r, int64_t q)
{
    f->k.pods[pod].req[r] = q;
    if (r <= BERTH_KRES_MEMORY)
        f->k.pods[pod].req_nz[r] = q;
}

/* ---- tables ---- */

static void test_tables(void **state)
{
    (void)state;
    assert_null(kube_filter_plugin(BERTH_KP_BALANCED_ALLOCATION));
    assert_null(kube_filter_plugin(BERTH_KP_IMAGE_LOCALITY));
    assert_null(kube_filter_plugin(BERTH_KP_USAGE_HEADROOM));
    assert_null(kube_filter_plugin(BERTH_KP_COUNT));
    assert_null(kube_score_plugin(BERTH_KP_NODE_UNSCHEDULABLE));
    assert_null(kube_score_plugin(BERTH_KP_NODE_NAME));
    assert_null(kube_score_plugin(BERTH_KP_NODE_PORTS));
    assert_null(kube_score_plugin(BERTH_KP_VOLUME_ZONE));
    assert_ptr_equal(kube_filter_plugin(BERTH_KP_POD_TOPOLOGY_SPREAD), &kube_pts_filter);
    assert_ptr_equal(kube_filter_plugin(BERTH_KP_INTER_POD_AFFINITY), &kube_ipa_filter);
    assert_ptr_equal(kube_score_plugin(BERTH_KP_POD_TOPOLOGY_SPREAD), &kube_pts_score);
    assert_ptr_equal(kube_score_plugin(BERTH_KP_INTER_POD_AFFINITY), &kube_ipa_score);
    for (int p = 0; p < BERTH_KP_COUNT; p++) {
        const berth_filter_plugin *fp = kube_filter_plugin((berth_kplugin)p);
        const berth_score_plugin *sp = kube_score_plugin((berth_kplugin)p);
        if (fp && p != BERTH_KP_POD_TOPOLOGY_SPREAD && p != BERTH_KP_INTER_POD_AFFINITY)
            assert_string_equal(fp->name, berth_kplugin_name((berth_kplugin)p));
        if (sp && p != BERTH_KP_POD_TOPOLOGY_SPREAD && p != BERTH_KP_INTER_POD_AFFINITY)
            assert_string_equal(sp->name, berth_kplugin_name((berth_kplugin)p));
    }
    /* TaintToleration normalises reverse, NodeAffinity forward, the
     * resource scores not at all. */
    assert_non_null(kube_score_plugin(BERTH_KP_TAINT_TOLERATION)->normalize);
    assert_non_null(kube_score_plugin(BERTH_KP_NODE_AFFINITY)->normalize);
    assert_null(kube_score_plugin(BERTH_KP_NODE_RESOURCES_FIT)->normalize);
    assert_null(kube_score_plugin(BERTH_KP_BALANCED_ALLOCATION)->normalize);
    assert_null(kube_score_plugin(BERTH_KP_IMAGE_LOCALITY)->normalize);
}

/* ---- DefaultNormalizeScore ---- */

static void test_default_normalize(void **state)
{
    (void)state;
    int64_t z[3] = {0, 0, 0};
    kube_default_normalize(z, 3, 1);
    assert_int_equal(z[0], 100);
    assert_int_equal(z[2], 100);
    int64_t z2[3] = {0, 0, 0};
    kube_default_normalize(z2, 3, 0);
    assert_int_equal(z2[0], 0);
    assert_int_equal(z2[2], 0);
    int64_t a[3] = {1, 2, 4};
    kube_default_normalize(a, 3, 1);
    assert_int_equal(a[0], 75);
    assert_int_equal(a[1], 50);
    assert_int_equal(a[2], 0);
    int64_t b[3] = {3, 0, 7};
    kube_default_normalize(b, 3, 0);
    assert_int_equal(b[0], 42); /* 300 / 7 truncated */
    assert_int_equal(b[1], 0);
    assert_int_equal(b[2], 100);
    int64_t c[2] = {1, 3};
    kube_default_normalize(c, 2, 1);
    assert_int_equal(c[0], 67); /* 100 - 33 */
    assert_int_equal(c[1], 0);
    /* a negative score: the plain division, truncating toward zero */
    int64_t d[3] = {-5, 7, 3};
    kube_default_normalize(d, 3, 0);
    assert_int_equal(d[0], -71); /* -500 / 7 */
    assert_int_equal(d[1], 100);
    assert_int_equal(d[2], 42);
    /* large scores (the double estimate's numerator rounded): exact */
    int64_t e[3] = {(1LL << 53) + 1, (1LL << 53) + 3, 3};
    kube_default_normalize(e, 3, 1);
    assert_int_equal(e[0], 1); /* 100 - 99: (2^53 + 1) * 100 / (2^53 + 3) = 99.99.. */
    assert_int_equal(e[1], 0);
    assert_int_equal(e[2], 100);
}

/* ---- NodeResourcesFit filter ---- */

static void test_fit_filter(void **state)
{
    (void)state;
    fx *f = fx_new(4, 2);
    uint32_t gpu = berth_kube_resource(&f->k, "nvidia.com/gpu", 1);
    assert_int_equal(gpu, BERTH_KRES_FIRST_EXT);
    fx_sched(f);
    for (uint32_t n = 0; n < 4; n++) {
        set_node(f, n, CPU, 2000, 0);
        set_node(f, n, MEM, 4000, 0);
        set_node(f, n, EPH, 1000, 0);
    }
    /* n0: 2 pods of 2 allowed, cpu short; n1: cpu and memory short;
     * n2: exactly full on cpu (fits); n3: ephemeral and gpu short. */
    KS_APODS_OF(&f->s, 0) = 2;
    KS_NPODS_OF(&f->s, 0) = 2;
    set_node(f, 0, CPU, 2000, 1500);
    set_node(f, 1, CPU, 2000, 1500);
    set_node(f, 1, MEM, 4000, 3500);
    set_node(f, 2, CPU, 2000, 1000);
    set_node(f, 3, EPH, 1000, 800);
    set_pod(f, 0, CPU, 1000);
    set_pod(f, 0, MEM, 1000);
    set_pod(f, 0, EPH, 300);
    set_pod(f, 0, gpu, 1);
    set_node(f, 2, gpu, 1, 0);
    fx_pod(f, 0);
    run_filter(f, BERTH_KP_NODE_RESOURCES_FIT);
    /* n2 lacks nothing but has one gpu: fits. */
    assert_int_equal(f->v[0], BERTH_UNFIT);
    assert_int_equal(f->v[1], BERTH_UNFIT);
    assert_int_equal(f->v[2], BERTH_FIT);
    assert_int_equal(f->v[3], BERTH_UNFIT);
    char buf[256];
    reason(f, BERTH_KP_NODE_RESOURCES_FIT, 0, buf, sizeof buf);
    assert_string_equal(buf, "Too many pods; Insufficient cpu; Insufficient nvidia.com/gpu");
    reason(f, BERTH_KP_NODE_RESOURCES_FIT, 1, buf, sizeof buf);
    assert_string_equal(buf, "Insufficient cpu; Insufficient memory; Insufficient nvidia.com/gpu");
    reason(f, BERTH_KP_NODE_RESOURCES_FIT, 3, buf, sizeof buf);
    assert_string_equal(buf, "Insufficient ephemeral-storage; Insufficient nvidia.com/gpu");
    /* A small buffer truncates without overflow. */
    reason(f, BERTH_KP_NODE_RESOURCES_FIT, 1, buf, 10);
    assert_string_equal(buf, "Insuffici");

    /* ignoredResources: the gpu is not checked. */
    f->prof.ignored_res = 1u << gpu;
    run_filter(f, BERTH_KP_NODE_RESOURCES_FIT);
    assert_int_equal(f->v[3], BERTH_UNFIT);
    reason(f, BERTH_KP_NODE_RESOURCES_FIT, 3, buf, sizeof buf);
    assert_string_equal(buf, "Insufficient ephemeral-storage");
    set_node(f, 3, EPH, 1000, 700);
    run_filter(f, BERTH_KP_NODE_RESOURCES_FIT);
    assert_int_equal(f->v[3], BERTH_FIT);
    f->prof.ignored_res = 0;

    /* A pod requesting nothing fits anywhere with room for one more pod. */
    fx_pod(f, 1);
    run_filter(f, BERTH_KP_NODE_RESOURCES_FIT);
    assert_int_equal(f->v[0], BERTH_UNFIT);
    reason(f, BERTH_KP_NODE_RESOURCES_FIT, 0, buf, sizeof buf);
    assert_string_equal(buf, "Too many pods");
    assert_int_equal(f->v[1], BERTH_FIT);
    assert_int_equal(f->v[2], BERTH_FIT);
    assert_int_equal(f->v[3], BERTH_FIT);
    /* Over-committed node (requested > allocatable) still admits a
     * zero request. */
    set_node(f, 1, MEM, 4000, 5000);
    run_filter(f, BERTH_KP_NODE_RESOURCES_FIT);
    assert_int_equal(f->v[1], BERTH_FIT);
    fx_free(f);
}

/* ---- NodeResourcesFit score ---- */

/* Nodes: n0 cpu 3000 mem 7000 (empty); n1 cpu 1000 mem 7000 (pod's cpu
 * exceeds it); n2 cpu 3000, no memory (cap 0: skipped). Pod 0: cpu 1000,
 * memory 1000. */
static fx *fit_fixture(void)
{
    fx *f = fx_new(3, 1);
    fx_sched(f);
    set_node(f, 0, CPU, 3000, 0);
    set_node(f, 0, MEM, 7000, 0);
    set_node(f, 1, CPU, 1000, 0);
    set_node(f, 1, MEM, 7000, 0);
    set_node(f, 2, CPU, 3000, 0);
    set_node(f, 2, MEM, 0, 0);
    set_pod(f, 0, CPU, 1000);
    set_pod(f, 0, MEM, 1000);
    fx_pod(f, 0);
    return f;
}

static void test_least_allocated(void **state)
{
    (void)state;
    fx *f = fit_fixture();
    run_score(f, BERTH_KP_NODE_RESOURCES_FIT);
    /* cpu (3000-1000)*100/3000 = 66, mem 6000*100/7000 = 85: 151/2 = 75 */
    assert_int_equal(f->out[0], 75);
    /* cpu 1000 > 1000 cap: 0; mem 85: 42 */
    assert_int_equal(f->out[1], 42);
    /* memory cap 0 is skipped: cpu alone */
    assert_int_equal(f->out[2], 66);
    /* weights cpu 1, memory 3: (66 + 255) / 4 = 80 */
    f->prof.fit_res[1].weight = 3;
    run_score(f, BERTH_KP_NODE_RESOURCES_FIT);
    assert_int_equal(f->out[0], 80);
    assert_int_equal(f->out[1], 63); /* (0 + 255) / 4 */
    assert_int_equal(f->out[2], 66);
    f->prof.fit_res[1].weight = 1;
    /* The non-zero variant: the pod's plain cpu request is 0 but scoring
     * uses 100m; the node's non-zero requested also counts. */
    f->k.pods[0].req[CPU] = 0;
    f->k.pods[0].req_nz[CPU] = 100;
    KS_NZ_OF(&f->s, CPU, 0) = 900;
    run_score(f, BERTH_KP_NODE_RESOURCES_FIT);
    assert_int_equal(f->out[0], 75); /* (3000-1000) again: 66, 85 */
    fx_free(f);
}

static void test_fit_extended(void **state)
{
    (void)state;
    fx *f = fx_new(2, 1);
    uint32_t gpu = berth_kube_resource(&f->k, "nvidia.com/gpu", 1);
    fx_sched(f);
    for (uint32_t n = 0; n < 2; n++) {
        set_node(f, n, CPU, 3000, 0);
        set_node(f, n, MEM, 7000, 0);
    }
    set_node(f, 0, gpu, 4, 1);
    set_node(f, 1, gpu, 0, 0);
    f->prof.fit_res[0] = (berth_kres_weight){CPU, 1};
    f->prof.fit_res[1] = (berth_kres_weight){gpu, 5};
    f->prof.nfit_res = 2;
    set_pod(f, 0, CPU, 1000);
    fx_pod(f, 0);
    /* Not requested: the gpu is skipped, cpu alone. */
    run_score(f, BERTH_KP_NODE_RESOURCES_FIT);
    assert_int_equal(f->out[0], 66);
    assert_int_equal(f->out[1], 66);
    /* Requested: (4-2)*100/4 = 50 weighted 5 with cpu 66: 316/6 = 52; n1
     * has none (cap 0): cpu alone. */
    set_pod(f, 0, gpu, 1);
    run_score(f, BERTH_KP_NODE_RESOURCES_FIT);
    assert_int_equal(f->out[0], 52);
    assert_int_equal(f->out[1], 66);
    /* ephemeral-storage is scored from plain requests even at 0 request. */
    f->prof.fit_res[1] = (berth_kres_weight){EPH, 1};
    set_node(f, 0, EPH, 1000, 250);
    set_node(f, 1, EPH, 0, 0);
    run_score(f, BERTH_KP_NODE_RESOURCES_FIT);
    assert_int_equal(f->out[0], 70); /* (66 + 75) / 2 */
    assert_int_equal(f->out[1], 66);
    /* No weight left at all: 0. */
    f->prof.fit_res[0] = (berth_kres_weight){gpu, 1};
    f->prof.nfit_res = 1;
    run_score(f, BERTH_KP_NODE_RESOURCES_FIT);
    assert_int_equal(f->out[1], 0);
    assert_int_equal(f->out[0], 50);
    fx_free(f);
}

static void test_most_allocated(void **state)
{
    (void)state;
    fx *f = fit_fixture();
    f->prof.fit_strategy = BERTH_FIT_MOST_ALLOCATED;
    run_score(f, BERTH_KP_NODE_RESOURCES_FIT);
    /* cpu 1000*100/3000 = 33, mem 100000/7000 = 14: 47/2 = 23 */
    assert_int_equal(f->out[0], 23);
    /* req > cap counts as cap: 100, mem 14: 57 */
    assert_int_equal(f->out[1], 57);
    assert_int_equal(f->out[2], 33);
    fx_free(f);
}

/* floor(a * 100 / b) on large values: the double estimate is corrected. */
static void test_fit_exact_division(void **state)
{
    (void)state;
    fx *f = fx_new(1, 1);
    fx_sched(f);
    f->prof.fit_res[0] = (berth_kres_weight){MEM, 1};
    f->prof.nfit_res = 1;
    fx_pod(f, 0);
    uint64_t x = 0x9E3779B97F4A7C15ULL;
    for (int it = 0; it < 20000; it++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        int shift = (int)(x % 63);
        int64_t cap = (int64_t)((x >> 1) >> shift) + 1;
        int64_t used = (int64_t)((x * 2654435761ULL >> 1) % (uint64_t)cap);
        if (it % 7 == 0)
            used = cap - 1; /* a quotient just under an integer */
        set_node(f, 0, MEM, cap, used);
        set_pod(f, 0, MEM, 0);
        f->k.pods[0].req_nz[MEM] = 0;
        f->prof.fit_strategy = BERTH_FIT_LEAST_ALLOCATED;
        run_score(f, BERTH_KP_NODE_RESOURCES_FIT);
        assert_int_equal(f->out[0], (int64_t)((__int128)(cap - used) * 100 / cap));
        f->prof.fit_strategy = BERTH_FIT_MOST_ALLOCATED;
        run_score(f, BERTH_KP_NODE_RESOURCES_FIT);
        assert_int_equal(f->out[0], (int64_t)((__int128)used * 100 / cap));
    }
    fx_free(f);
}

static void set_shape(fx *f, const int32_t *u, const int32_t *y, uint32_t n)
{
    f->prof.fit_strategy = BERTH_FIT_REQUESTED_TO_CAPACITY_RATIO;
    for (uint32_t i = 0; i < n; i++) {
        f->prof.shape_util[i] = u[i];
        f->prof.shape_score[i] = y[i];
    }
    f->prof.nshape = n;
}

static void test_rtcr(void **state)
{
    (void)state;
    fx *f = fit_fixture();
    /* cpu utilisation 1000*100/3000 = 33, memory 100000/7000 = 14. */
    set_shape(f, (int32_t[]){0, 100}, (int32_t[]){0, 10}, 2);
    run_score(f, BERTH_KP_NODE_RESOURCES_FIT);
    assert_int_equal(f->out[0], 24);  /* round((33 + 14) / 2 = 23.5) */
    assert_int_equal(f->out[1], 57);  /* req > cap: f(100) = 100; round(114 / 2) */
    assert_int_equal(f->out[2], 33);  /* memory cap 0 skipped */

    set_shape(f, (int32_t[]){0, 100}, (int32_t[]){10, 0}, 2);
    run_score(f, BERTH_KP_NODE_RESOURCES_FIT);
    assert_int_equal(f->out[0], 77);  /* 67 and 86: round(76.5) */
    /* n1: cpu f(100) = 0 is left out of sum and weights: 86 alone */
    assert_int_equal(f->out[1], 86);

    /* Three points {0:0, 30:10, 90:3}: cpu p = 33 on the falling segment:
     * 100 + (30 - 100) * 3 / 60 = 100 + (-3.5 truncated toward zero) = 97;
     * memory p = 14: 100 * 14 / 30 = 46. round(143 / 2 = 71.5) = 72. */
    set_shape(f, (int32_t[]){0, 30, 90}, (int32_t[]){0, 10, 3}, 3);
    run_score(f, BERTH_KP_NODE_RESOURCES_FIT);
    assert_int_equal(f->out[0], 72);
    /* n1: cpu f(100) = last score 30 (beyond u_last); memory 46: 38 */
    assert_int_equal(f->out[1], 38);

    /* p below the first point: the first score; weights cpu 1 memory 2. */
    set_shape(f, (int32_t[]){20, 80}, (int32_t[]){2, 8}, 2);
    f->prof.fit_res[1].weight = 2;
    run_score(f, BERTH_KP_NODE_RESOURCES_FIT);
    /* cpu 33: 20 + 60 * 13 / 60 = 33; memory 14 <= 20: 20.
     * round((33 + 40) / 3 = 24.33) = 24 */
    assert_int_equal(f->out[0], 24);
    f->prof.fit_res[1].weight = 1;

    /* Only s_i > 0 counts: a tiny cpu request has p = 0, f = 0. */
    set_shape(f, (int32_t[]){0, 100}, (int32_t[]){0, 10}, 2);
    set_pod(f, 0, CPU, 10);
    run_score(f, BERTH_KP_NODE_RESOURCES_FIT);
    assert_int_equal(f->out[0], 14); /* memory alone, not 7 */
    assert_int_equal(f->out[2], 0);  /* nothing positive: 0 */
    fx_free(f);
}

/* ---- BalancedAllocation ---- */

static void test_balanced(void **state)
{
    (void)state;
    fx *f = fx_new(4, 2);
    fx_sched(f);
    /* n0: cpu 0.5, memory 0.25 -> std 0.125 -> 87.5 -> 87.
     * n1: cpu (3000 + 2000) / 4000 clamps to 1, memory 0.25 -> 62.
     * n2: 0.5 and 0.2 -> 85. n3: memory cap 0 -> one resource -> 100. */
    set_node(f, 0, CPU, 4000, 1000);
    set_node(f, 0, MEM, 10000, 500);
    set_node(f, 1, CPU, 4000, 3000);
    set_node(f, 1, MEM, 10000, 500);
    set_node(f, 2, CPU, 4000, 1000);
    set_node(f, 2, MEM, 10000, 0);
    set_node(f, 3, CPU, 4000, 1000);
    set_node(f, 3, MEM, 0, 0);
    /* the non-zero columns must not be used */
    for (uint32_t n = 0; n < 4; n++) {
        KS_NZ_OF(&f->s, CPU, n) += 777;
        KS_NZ_OF(&f->s, MEM, n) += 777;
    }
    set_pod(f, 0, CPU, 1000);
    set_pod(f, 0, MEM, 2000);
    f->k.pods[0].req_nz[CPU] = 5000;
    fx_pod(f, 0);
    run_score(f, BERTH_KP_BALANCED_ALLOCATION);
    assert_int_equal(f->out[0], 87);
    assert_int_equal(f->out[1], 62);
    assert_int_equal(f->out[2], 85);
    assert_int_equal(f->out[3], 100);

    /* Three resources: 0.5, 0.25, 1.0 -> std 0.3118 -> 68. */
    f->prof.balanced_res[2] = (berth_kres_weight){EPH, 1};
    f->prof.nbalanced_res = 3;
    set_node(f, 0, EPH, 1000, 900);
    set_pod(f, 0, EPH, 100);
    run_score(f, BERTH_KP_BALANCED_ALLOCATION);
    assert_int_equal(f->out[0], 68);
    f->prof.nbalanced_res = 2;

    /* A pod with no configured requests is skipped: 0 everywhere. */
    fx_pod(f, 1);
    f->k.pods[1].req_nz[CPU] = 100;
    f->k.pods[1].req_nz[MEM] = 200 * MiB;
    run_score(f, BERTH_KP_BALANCED_ALLOCATION);
    for (uint32_t n = 0; n < 4; n++)
        assert_int_equal(f->out[n], 0);
    fx_free(f);
}

/* ---- NodeUnschedulable, NodeName, VolumeZone ---- */

static void test_unschedulable_name_volume(void **state)
{
    (void)state;
    for (int ref = 0; ref < 2; ref++) {
        fx *f = fx_new(3, 2);
        f->k.nodes[1].unschedulable = 1;
        fx_sched(f);
        f->s.reference = ref;
        fx_pod(f, 0);
        run_filter(f, BERTH_KP_NODE_UNSCHEDULABLE);
        assert_int_equal(f->v[0], BERTH_FIT);
        assert_int_equal(f->v[1], BERTH_UNRESOLVABLE);
        assert_int_equal(f->v[2], BERTH_FIT);
        char buf[128];
        reason(f, BERTH_KP_NODE_UNSCHEDULABLE, 1, buf, sizeof buf);
        assert_string_equal(buf, "node(s) were unschedulable");
        /* Tolerating node.kubernetes.io/unschedulable:NoSchedule passes. */
        berth_toleration tol = {"node.kubernetes.io/unschedulable", NULL, BERTH_TOL_EXISTS,
                                BERTH_EFFECT_NOSCHEDULE, -1};
        f->k.pods[0].tols = &tol;
        f->k.pods[0].ntols = 1;
        run_filter(f, BERTH_KP_NODE_UNSCHEDULABLE);
        assert_int_equal(f->v[1], BERTH_FIT);
        /* ... but not with a NoExecute-only toleration. */
        tol.effect = BERTH_EFFECT_NOEXECUTE;
        run_filter(f, BERTH_KP_NODE_UNSCHEDULABLE);
        assert_int_equal(f->v[1], BERTH_UNRESOLVABLE);
        f->k.pods[0].ntols = 0;

        /* NodeName: empty passes all; a name passes that node only. */
        run_filter(f, BERTH_KP_NODE_NAME);
        assert_int_equal(f->v[0] | f->v[1] | f->v[2], BERTH_FIT);
        f->k.pods[1].node_name = "n2";
        fx_pod(f, 1);
        run_filter(f, BERTH_KP_NODE_NAME);
        assert_int_equal(f->v[0], BERTH_UNRESOLVABLE);
        assert_int_equal(f->v[1], BERTH_UNRESOLVABLE);
        assert_int_equal(f->v[2], BERTH_FIT);
        reason(f, BERTH_KP_NODE_NAME, 0, buf, sizeof buf);
        assert_string_equal(buf, "node(s) didn't match the requested node name");
        f->k.pods[1].node_name = "missing";
        run_filter(f, BERTH_KP_NODE_NAME);
        assert_int_equal(f->v[2], BERTH_UNRESOLVABLE);

        run_filter(f, BERTH_KP_VOLUME_ZONE);
        assert_int_equal(f->v[0] | f->v[1] | f->v[2], BERTH_FIT);
        fx_free(f);
    }
}

/* ---- TaintToleration ---- */

static void test_taints(void **state)
{
    (void)state;
    fx *f = fx_new(4, 2);
    static berth_taint t0[] = {{"a", "1", BERTH_EFFECT_PREFERNOSCHEDULE},
                               {"b", "2", BERTH_EFFECT_PREFERNOSCHEDULE}};
    static berth_taint t2[] = {{"a", "1", BERTH_EFFECT_PREFERNOSCHEDULE},
                               {"c", "", BERTH_EFFECT_PREFERNOSCHEDULE},
                               {"d", "x", BERTH_EFFECT_PREFERNOSCHEDULE}};
    static berth_taint t3[] = {{"soft", "", BERTH_EFFECT_PREFERNOSCHEDULE},
                               {"dedicated", "gpu", BERTH_EFFECT_NOSCHEDULE},
                               {"gone", NULL, BERTH_EFFECT_NOEXECUTE}};
    f->k.nodes[0].taints = t0;
    f->k.nodes[0].ntaints = 2;
    f->k.nodes[2].taints = t2;
    f->k.nodes[2].ntaints = 3;
    f->k.nodes[3].taints = t3;
    f->k.nodes[3].ntaints = 3;
    fx_sched(f);
    /* Tolerations: a (Exists, NoSchedule: does not count for the score),
     * b=2 (Equal, any effect: counts). */
    berth_toleration tols[] = {{"a", NULL, BERTH_TOL_EXISTS, BERTH_EFFECT_NOSCHEDULE, -1},
                               {"b", "2", BERTH_TOL_EQUAL, BERTH_EFFECT_ALL, -1}};
    f->k.pods[0].tols = tols;
    f->k.pods[0].ntols = 2;
    fx_pod(f, 0);
    f->k.nnodes = 3;
    run_score(f, BERTH_KP_TAINT_TOLERATION);
    /* raw 1, 0, 3 -> reverse: 100 - 33, 100, 0 */
    assert_int_equal(f->out[0], 67);
    assert_int_equal(f->out[1], 100);
    assert_int_equal(f->out[2], 0);
    /* a PreferNoSchedule toleration for "a" counts */
    tols[0].effect = BERTH_EFFECT_PREFERNOSCHEDULE;
    run_score(f, BERTH_KP_TAINT_TOLERATION);
    assert_int_equal(f->out[0], 100); /* raw 0, 0, 2 */
    assert_int_equal(f->out[2], 0);
    f->k.nnodes = 4;

    /* Filter: PreferNoSchedule never rejects; the first untolerated hard
     * taint is named. */
    run_filter(f, BERTH_KP_TAINT_TOLERATION);
    assert_int_equal(f->v[0] | f->v[1] | f->v[2], BERTH_FIT);
    assert_int_equal(f->v[3], BERTH_UNRESOLVABLE);
    char buf[128];
    reason(f, BERTH_KP_TAINT_TOLERATION, 3, buf, sizeof buf);
    assert_string_equal(buf, "node(s) had untolerated taint {dedicated: gpu}");
    /* tolerate dedicated=gpu: the NoExecute taint without value is next */
    berth_toleration tols2[] = {{"dedicated", "gpu", BERTH_TOL_EQUAL, BERTH_EFFECT_ALL, -1}};
    f->k.pods[0].tols = tols2;
    f->k.pods[0].ntols = 1;
    run_filter(f, BERTH_KP_TAINT_TOLERATION);
    assert_int_equal(f->v[3], BERTH_UNRESOLVABLE);
    reason(f, BERTH_KP_TAINT_TOLERATION, 3, buf, sizeof buf);
    assert_string_equal(buf, "node(s) had untolerated taint {gone: }");
    /* an empty-key Exists toleration tolerates everything */
    berth_toleration all[] = {{NULL, NULL, BERTH_TOL_EXISTS, BERTH_EFFECT_ALL, -1}};
    f->k.pods[0].tols = all;
    run_filter(f, BERTH_KP_TAINT_TOLERATION);
    assert_int_equal(f->v[3], BERTH_FIT);
    /* A pod without tolerations is rejected by hard taints only. */
    fx_pod(f, 1);
    run_filter(f, BERTH_KP_TAINT_TOLERATION);
    assert_int_equal(f->v[0] | f->v[1] | f->v[2], BERTH_FIT);
    assert_int_equal(f->v[3], BERTH_UNRESOLVABLE);
    run_score(f, BERTH_KP_TAINT_TOLERATION);
    /* raw 2, 0, 3, 1 -> 100 - 66, 100, 0, 100 - 33 */
    assert_int_equal(f->out[0], 34);
    assert_int_equal(f->out[1], 100);
    assert_int_equal(f->out[2], 0);
    assert_int_equal(f->out[3], 67);
    fx_free(f);
}

/* ---- NodeAffinity ---- */

static void test_node_affinity(void **state)
{
    (void)state;
    fx *f = fx_new(3, 1);
    static berth_label l0[] = {{"cores", "64"}, {"zone", "a"}};
    static berth_label l1[] = {{"cores", "8"}, {"zone", "b"}};
    f->k.nodes[0].labels = (berth_labels){l0, 2};
    f->k.nodes[1].labels = (berth_labels){l1, 2};
    fx_sched(f);
    berth_kpod *p = &f->k.pods[0];
    fx_pod(f, 0);
    char buf[128];

    /* Nothing asked: all pass; no preferred terms: 0 everywhere. */
    run_filter(f, BERTH_KP_NODE_AFFINITY);
    assert_int_equal(f->v[0] | f->v[1] | f->v[2], BERTH_FIT);
    run_score(f, BERTH_KP_NODE_AFFINITY);
    assert_int_equal(f->out[0] | f->out[1] | f->out[2], 0);

    /* nodeSelector zone=a */
    berth_label sel[] = {{"zone", "a"}};
    p->node_selector = (berth_labels){sel, 1};
    run_filter(f, BERTH_KP_NODE_AFFINITY);
    assert_int_equal(f->v[0], BERTH_FIT);
    assert_int_equal(f->v[1], BERTH_UNRESOLVABLE);
    assert_int_equal(f->v[2], BERTH_UNRESOLVABLE);
    reason(f, BERTH_KP_NODE_AFFINITY, 1, buf, sizeof buf);
    assert_string_equal(buf, "node(s) didn't match Pod's node affinity/selector");
    p->node_selector.n = 0;

    const char *v16[] = {"16"}, *va[] = {"a"}, *vn2[] = {"n2"}, *vbad[] = {"x"};
    berth_requirement gt = {"cores", BERTH_SEL_GT, v16, 1};
    berth_requirement lt = {"cores", BERTH_SEL_LT, v16, 1};
    berth_requirement notin = {"zone", BERTH_SEL_NOTIN, va, 1};
    berth_requirement ltbad = {"zone", BERTH_SEL_LT, v16, 1};
    berth_requirement fname = {"metadata.name", BERTH_SEL_IN, vn2, 1};
    berth_requirement fnot = {"metadata.name", BERTH_SEL_NOTIN, vn2, 1};
    berth_requirement fother = {"metadata.uid", BERTH_SEL_IN, vbad, 1};
    berth_kterm terms[2];
    p->req_terms = terms;
    p->has_req_affinity = 1;
    struct {
        berth_kterm a, b;
        uint32_t nterms;
        uint8_t want[3];
    } cases[] = {
        {{&gt, 1, NULL, 0}, {0}, 1, {0, 2, 2}},          /* Gt 16: 64 only */
        {{&lt, 1, NULL, 0}, {0}, 1, {2, 0, 2}},          /* Lt 16: 8 only */
        {{&notin, 1, NULL, 0}, {0}, 1, {2, 0, 0}},       /* NotIn: absent key matches */
        {{&ltbad, 1, NULL, 0}, {0}, 1, {2, 2, 2}},       /* Lt on a non-integer: false */
        {{NULL, 0, &fname, 1}, {0}, 1, {2, 2, 0}},       /* matchFields metadata.name */
        {{NULL, 0, &fnot, 1}, {0}, 1, {0, 0, 2}},
        {{NULL, 0, &fother, 1}, {0}, 1, {2, 2, 2}},      /* other field reads "" */
        {{NULL, 0, NULL, 0}, {0}, 1, {2, 2, 2}},         /* empty term: nothing */
        {{0}, {0}, 0, {2, 2, 2}},                        /* required, no terms */
        {{&gt, 1, NULL, 0}, {NULL, 0, &fname, 1}, 2, {0, 2, 0}}, /* terms ORed */
        {{&gt, 1, &fname, 1}, {0}, 1, {2, 2, 2}},        /* within a term ANDed */
        {{NULL, 0, NULL, 0}, {&lt, 1, NULL, 0}, 2, {2, 0, 2}}, /* empty term skipped */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        terms[0] = cases[c].a;
        terms[1] = cases[c].b;
        p->nreq_terms = cases[c].nterms;
        run_filter(f, BERTH_KP_NODE_AFFINITY);
        for (int n = 0; n < 3; n++)
            if (f->v[n] != cases[c].want[n])
                fail_msg("case %zu node %d: got %d want %d", c, n, f->v[n], cases[c].want[n]);
    }
    /* nodeSelector AND required affinity */
    terms[0] = (berth_kterm){&notin, 1, NULL, 0};
    p->nreq_terms = 1;
    berth_label sel2[] = {{"cores", "8"}};
    p->node_selector = (berth_labels){sel2, 1};
    run_filter(f, BERTH_KP_NODE_AFFINITY);
    assert_int_equal(f->v[0], BERTH_UNRESOLVABLE);
    assert_int_equal(f->v[1], BERTH_FIT);
    assert_int_equal(f->v[2], BERTH_UNRESOLVABLE);
    p->node_selector.n = 0;
    p->has_req_affinity = 0;

    /* Preferred: zone In [a] weight 5, cores Exists weight 3, an empty
     * term weight 50 (ignored): 8, 3, 0 -> 100, 37, 0. */
    berth_requirement zin = {"zone", BERTH_SEL_IN, va, 1};
    berth_requirement cex = {"cores", BERTH_SEL_EXISTS, NULL, 0};
    berth_kpref_term pref[] = {{5, {&zin, 1, NULL, 0}}, {3, {&cex, 1, NULL, 0}},
                               {50, {NULL, 0, NULL, 0}}};
    p->pref_terms = pref;
    p->npref_terms = 3;
    run_score(f, BERTH_KP_NODE_AFFINITY);
    assert_int_equal(f->out[0], 100);
    assert_int_equal(f->out[1], 37);
    assert_int_equal(f->out[2], 0);
    /* no node matches any preferred term: all 0 (not reversed) */
    pref[0].term.exprs = &gt;
    pref[0].term.nexprs = 1;
    p->npref_terms = 1;
    f->cand[0] = 1;
    f->cand[1] = 2;
    f->ncand = 2;
    run_score(f, BERTH_KP_NODE_AFFINITY);
    assert_int_equal(f->out[0], 0);
    assert_int_equal(f->out[1], 0);
    f->ncand = 0;
    f->cand[0] = 0;
    f->cand[1] = 1;
    fx_free(f);
}

/* The memoised per-spec columns: equal specs in different pods share a
 * column, different specs do not, and the reference mode agrees. */
static void test_memo(void **state)
{
    (void)state;
    fx *f = fx_new(3, 4);
    static berth_label l0[] = {{"zone", "a"}}, l1[] = {{"zone", "b"}};
    static berth_taint t1[] = {{"k", "v", BERTH_EFFECT_NOSCHEDULE},
                               {"s", "", BERTH_EFFECT_PREFERNOSCHEDULE}};
    f->k.nodes[0].labels = (berth_labels){l0, 1};
    f->k.nodes[1].labels = (berth_labels){l1, 1};
    f->k.nodes[1].taints = t1;
    f->k.nodes[1].ntaints = 2;
    berth_label sa[] = {{"zone", "a"}}, sa2[] = {{"zone", "a"}}, sb[] = {{"zone", "b"}};
    f->k.pods[0].node_selector = (berth_labels){sa, 1};
    f->k.pods[1].node_selector = (berth_labels){sb, 1};
    f->k.pods[2].node_selector = (berth_labels){sa2, 1};
    berth_toleration tk[] = {{"k", "v", BERTH_TOL_EQUAL, BERTH_EFFECT_ALL, -1}};
    berth_toleration tx[] = {{"x", "v", BERTH_TOL_EQUAL, BERTH_EFFECT_ALL, -1}};
    f->k.pods[0].tols = tk;
    f->k.pods[0].ntols = 1;
    f->k.pods[1].tols = tx;
    f->k.pods[1].ntols = 1;
    f->k.pods[2].tols = tk;
    f->k.pods[2].ntols = 1;
    f->k.pods[3].tols = tx;
    f->k.pods[3].ntols = 1;
    fx_sched(f);
    static const uint8_t want_aff[4][3] = {{0, 2, 2}, {2, 0, 2}, {0, 2, 2}, {0, 0, 0}};
    static const uint8_t want_taint[4][3] = {{0, 0, 0}, {0, 2, 0}, {0, 0, 0}, {0, 2, 0}};
    static const uint32_t order[] = {0, 1, 2, 3, 2, 1, 0};
    for (int ref = 0; ref < 2; ref++) {
        f->s.reference = ref;
        for (size_t o = 0; o < sizeof order / sizeof order[0]; o++) {
            uint32_t pod = order[o];
            fx_pod(f, pod);
            memset(f->v, 0, sizeof f->v);
            kube_filter_plugin(BERTH_KP_NODE_AFFINITY)->filter(&f->s, &f->r, f->cand, 3, f->v);
            assert_memory_equal(f->v, want_aff[pod], 3);
            memset(f->v, 0, sizeof f->v);
            kube_filter_plugin(BERTH_KP_TAINT_TOLERATION)->filter(&f->s, &f->r, f->cand, 3, f->v);
            assert_memory_equal(f->v, want_taint[pod], 3);
            kube_score_plugin(BERTH_KP_TAINT_TOLERATION)->score(&f->s, &f->r, f->cand, 3, f->out);
            assert_int_equal(f->out[0], 0);
            assert_int_equal(f->out[1], 1);
        }
    }
    fx_free(f);
}

/* ---- NodePorts ---- */

static void test_node_ports(void **state)
{
    (void)state;
    fx *f = fx_new(3, 4);
    berth_kport used0[] = {{8080, BERTH_PROTO_TCP, "0.0.0.0"}};
    berth_kport used1[] = {{8080, BERTH_PROTO_TCP, "10.0.0.1"}};
    berth_kport used2[] = {{8080, BERTH_PROTO_UDP, NULL}};
    f->k.pods[0].ports = used0;
    f->k.pods[0].nports = 1;
    f->k.pods[0].node_name = "n0";
    f->k.pods[1].ports = used1;
    f->k.pods[1].nports = 1;
    f->k.pods[1].node_name = "n1";
    f->k.pods[2].ports = used2;
    f->k.pods[2].nports = 1;
    f->k.pods[2].node_name = "n2";
    fx_sched(f);
    assert_int_equal(f->s.plist[0].n, 1);
    berth_kpod *p = &f->k.pods[3];
    fx_pod(f, 3);
    run_filter(f, BERTH_KP_NODE_PORTS);
    assert_int_equal(f->v[0] | f->v[1] | f->v[2], BERTH_FIT);

    berth_kport want = {8080, BERTH_PROTO_TCP, "10.0.0.2"};
    p->ports = &want;
    p->nports = 1;
    run_filter(f, BERTH_KP_NODE_PORTS);
    assert_int_equal(f->v[0], BERTH_UNFIT); /* used on 0.0.0.0 */
    assert_int_equal(f->v[1], BERTH_FIT);   /* distinct IPs */
    assert_int_equal(f->v[2], BERTH_FIT);   /* UDP */
    char buf[128];
    reason(f, BERTH_KP_NODE_PORTS, 0, buf, sizeof buf);
    assert_string_equal(buf, "node(s) didn't have free ports for the requested pod ports");
    want.ip = "10.0.0.1";
    run_filter(f, BERTH_KP_NODE_PORTS);
    assert_int_equal(f->v[1], BERTH_UNFIT); /* same IP */
    want.ip = NULL;                         /* unset = 0.0.0.0: every IP */
    run_filter(f, BERTH_KP_NODE_PORTS);
    assert_int_equal(f->v[0], BERTH_UNFIT);
    assert_int_equal(f->v[1], BERTH_UNFIT);
    assert_int_equal(f->v[2], BERTH_FIT);
    want.proto = BERTH_PROTO_UDP;
    want.ip = "10.9.9.9";
    run_filter(f, BERTH_KP_NODE_PORTS);
    assert_int_equal(f->v[0], BERTH_FIT);
    assert_int_equal(f->v[1], BERTH_FIT);
    assert_int_equal(f->v[2], BERTH_UNFIT);
    want.port = 8081;
    run_filter(f, BERTH_KP_NODE_PORTS);
    assert_int_equal(f->v[2], BERTH_FIT);
    /* a zero-initialised port is TCP (the default protocol) */
    berth_kport dflt = {0};
    dflt.port = 8080;
    p->ports = &dflt;
    run_filter(f, BERTH_KP_NODE_PORTS);
    assert_int_equal(f->v[0], BERTH_UNFIT);
    assert_int_equal(f->v[2], BERTH_FIT);
    fx_free(f);
}

/* ---- ImageLocality ---- */

static void test_image_locality(void **state)
{
    (void)state;
    for (int ref = 0; ref < 2; ref++) {
        fx *f = fx_new(4, 4);
        berth_kimage i0[] = {{"nginx:1.25", 500 * MiB}, {"redis:latest", 100 * MiB},
                             {"big:1", 3000 * MiB}, {"small:1", 40 * MiB}};
        berth_kimage i1[] = {{"nginx:1.25", 500 * MiB}, {"big:1", 3000 * MiB}};
        berth_kimage i23[] = {{"big:1", 3000 * MiB}};
        f->k.nodes[0].images = i0;
        f->k.nodes[0].nimages = 4;
        f->k.nodes[1].images = i1;
        f->k.nodes[1].nimages = 2;
        f->k.nodes[2].images = i23;
        f->k.nodes[2].nimages = 1;
        f->k.nodes[3].images = i23;
        f->k.nodes[3].nimages = 1;
        berth_kcontainer c0[2] = {{0}};
        c0[0].image = "nginx:1.25";
        c0[1].image = "redis"; /* normalised to redis:latest */
        f->k.pods[0].containers = c0;
        f->k.pods[0].ncontainers = 2;
        berth_kcontainer c1[1] = {{0}};
        c1[0].image = "big:1";
        f->k.pods[1].containers = c1;
        f->k.pods[1].ncontainers = 1;
        berth_kcontainer c2[1] = {{0}};
        c2[0].image = "small:1";
        f->k.pods[2].containers = c2;
        f->k.pods[2].ncontainers = 1;
        berth_kcontainer c3[2] = {{0}};
        c3[0].image = "unknown";
        c3[1].image = "big:1";
        f->k.pods[3].init = c3;
        f->k.pods[3].ninit = 1;
        f->k.pods[3].containers = c3 + 1;
        f->k.pods[3].ncontainers = 1;
        fx_sched(f);
        f->s.reference = ref;

        /* nginx: 500 MiB x 2/4 = 250 MiB; redis: 100 MiB x 1/4 = 25 MiB.
         * max = 2 x 1000 MiB. n0: 100 x (275 - 23) / 1977 = 12;
         * n1: 100 x 227 / 1977 = 11; n2, n3: below 23 MiB -> 0. */
        fx_pod(f, 0);
        run_score(f, BERTH_KP_IMAGE_LOCALITY);
        assert_int_equal(f->out[0], 12);
        assert_int_equal(f->out[1], 11);
        assert_int_equal(f->out[2], 0);
        assert_int_equal(f->out[3], 0);
        /* 3000 MiB on every node, one container: clamps to 1000 MiB -> 100 */
        fx_pod(f, 1);
        run_score(f, BERTH_KP_IMAGE_LOCALITY);
        for (int n = 0; n < 4; n++)
            assert_int_equal(f->out[n], 100);
        /* 40 MiB x 1/4 = 10 MiB < 23 MiB: 0 */
        fx_pod(f, 2);
        run_score(f, BERTH_KP_IMAGE_LOCALITY);
        assert_int_equal(f->out[0], 0);
        /* an init container counts toward the max: 2 containers, 3000 MiB
         * clamps to 2000 MiB -> 100; then again (scratch reset) */
        fx_pod(f, 3);
        run_score(f, BERTH_KP_IMAGE_LOCALITY);
        assert_int_equal(f->out[0], 100);
        c3[1].image = "small:1";
        run_score(f, BERTH_KP_IMAGE_LOCALITY);
        assert_int_equal(f->out[0], 0);
        assert_int_equal(f->out[1], 0);
        fx_free(f);
    }
}

/* ---- usage-aware: admission and UsageHeadroom ---- */

/* The usage column from the nodes and their bound pods: a node with
 * observed usage counts its bound pods once (they are in the observation;
 * kube_assume_bound reads the node's usage flag, KS_FLAG_USAGE), a node
 * without it their demand; an assumed pod adds its demand on both, and
 * taking it off restores them. */
static void test_usage_columns(void **state)
{
    (void)state;
    fx *f = fx_new(2, 3);
    f->k.nodes[0].has_usage = 1;
    f->k.nodes[0].usage[CPU] = 1500;
    f->k.nodes[0].usage[MEM] = 3 * GB;
    berth_kcontainer c[1] = {{0}};
    c[0].req[CPU] = 400;
    c[0].lim[CPU] = 500;
    c[0].req[MEM] = GB;
    c[0].lim[MEM] = GB;
    c[0].has_req = c[0].has_lim = (1u << CPU) | (1u << MEM);
    for (uint32_t p = 0; p < 3; p++) {
        f->k.pods[p].containers = c;
        f->k.pods[p].ncontainers = 1;
        berth_kube_pod_requests(&f->k, &f->k.pods[p]);
    }
    f->k.pods[0].node_name = "n0";
    f->k.pods[1].node_name = "n1";
    fx_sched(f);
    assert_int_equal(KS_USAGE_OF(&f->s, CPU, 0), 1500);
    assert_int_equal(KS_USAGE_OF(&f->s, MEM, 0), 3 * GB);
    assert_int_equal(KS_USAGE_OF(&f->s, CPU, 1), 500);
    assert_int_equal(KS_USAGE_OF(&f->s, MEM, 1), GB);
    assert_int_equal(KS_NPODS_OF(&f->s, 0), 1);
    assert_int_equal(KS_REQ_OF(&f->s, CPU, 0), 400);
    for (uint32_t n = 0; n < 2; n++) {
        int64_t before = KS_USAGE_OF(&f->s, CPU, n);
        assert_int_equal(kube_assume(&f->s, 2, n), 0);
        assert_int_equal(KS_USAGE_OF(&f->s, CPU, n), before + 500);
        assert_int_equal(kube_unassume(&f->s, 2, n, 0), 0);
        assert_int_equal(KS_USAGE_OF(&f->s, CPU, n), before);
    }
    fx_free(f);
}

static void test_usage_aware(void **state)
{
    (void)state;
    fx *f = fx_new(3, 2);
    berth_kube_usage_aware_profile(&f->k, &f->prof);
    fx_sched(f);
    /* The seed: three hosts of 100 GB; A 60 GB reserved, B and C 40 GB;
     * active usage A 60, B 70, C 45; a workload reserving 35 GB. */
    int64_t reserved[3] = {60 * GB, 40 * GB, 40 * GB}, active[3] = {60 * GB, 70 * GB, 45 * GB};
    for (uint32_t n = 0; n < 3; n++) {
        set_node(f, n, MEM, 100 * GB, reserved[n]);
        KS_USAGE_OF(&f->s, 1, n) = active[n];
        KS_NPODS_OF(&f->s, n) = 1;
    }
    berth_kcontainer c[1] = {{0}};
    c[0].req[MEM] = 35 * GB;
    c[0].lim[MEM] = 35 * GB;
    f->k.pods[0].containers = c;
    f->k.pods[0].ncontainers = 1;
    set_pod(f, 0, MEM, 35 * GB);
    fx_pod(f, 0);
    run_filter(f, BERTH_KP_NODE_RESOURCES_FIT);
    assert_int_equal(f->v[0] | f->v[1] | f->v[2], BERTH_FIT);
    run_score(f, BERTH_KP_USAGE_HEADROOM);
    /* headroom after placement: A 5%, B -5%, C 20% -> (s - min) / range */
    assert_int_equal(f->out[0], 40);
    assert_int_equal(f->out[1], 0);
    assert_int_equal(f->out[2], 100);
    /* The default LeastAllocated ties B and C. */
    f->prof.usage_aware = 0;
    run_score(f, BERTH_KP_NODE_RESOURCES_FIT);
    assert_int_equal(f->out[1], f->out[2]);
    f->prof.usage_aware = 1;

    /* Admission: reservation plus VM overhead, each admitted pod holding
     * its own overhead. A: 100 - 60 - 1 = 39 free, needs 35 + 1. */
    for (uint32_t n = 0; n < 3; n++)
        f->k.nodes[n].overhead_reserve = 1 * GB;
    run_filter(f, BERTH_KP_NODE_RESOURCES_FIT);
    assert_int_equal(f->v[0], BERTH_FIT);
    c[0].req[MEM] = 38 * GB + 1;
    set_pod(f, 0, MEM, 38 * GB + 1);
    run_filter(f, BERTH_KP_NODE_RESOURCES_FIT);
    assert_int_equal(f->v[0], BERTH_UNFIT);
    assert_int_equal(f->v[1], BERTH_FIT);
    char buf[128];
    reason(f, BERTH_KP_NODE_RESOURCES_FIT, 0, buf, sizeof buf);
    assert_string_equal(buf, "Insufficient memory");
    /* kube's own rule would admit it (39 GB unreserved). */
    f->prof.usage_aware = 0;
    run_filter(f, BERTH_KP_NODE_RESOURCES_FIT);
    assert_int_equal(f->v[0], BERTH_FIT);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tables),
        cmocka_unit_test(test_default_normalize),
        cmocka_unit_test(test_fit_filter),
        cmocka_unit_test(test_least_allocated),
        cmocka_unit_test(test_fit_extended),
        cmocka_unit_test(test_most_allocated),
        cmocka_unit_test(test_fit_exact_division),
        cmocka_unit_test(test_rtcr),
        cmocka_unit_test(test_balanced),
        cmocka_unit_test(test_unschedulable_name_volume),
        cmocka_unit_test(test_taints),
        cmocka_unit_test(test_node_affinity),
        cmocka_unit_test(test_memo),
        cmocka_unit_test(test_node_ports),
        cmocka_unit_test(test_image_locality),
        cmocka_unit_test(test_usage_columns), cmocka_unit_test(test_usage_aware),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
