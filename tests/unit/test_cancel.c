/* tests/unit/test_cancel.c - the planners' deadline (berth/cancel.h): for
 * every planner family (kube schedule, what-if session, kube fit, fleet
 * place, disrupt plan with --optimize and simulate, autoscale plan and
 * simulate) an expired deadline (or a raised stop flag) returns
 * BERTH_ETIMEDOUT with nothing to free (ASan checks the leaks) and a far
 * deadline gives the same answer as none; a stop raised while kube
 * schedules stops it within the check interval; a session stopped mid-way
 * rolls back to the state it had; the service's four planner endpoints
 * answer 422 over_budget naming --max-request-seconds when their deadline
 * passed, and 200 without one. Inputs: the runnable examples. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "berth/autoscale.h"
#include "berth/cancel.h"
#include "berth/disrupt.h"
#include "berth/fleet.h"
#include "berth/kube.h"
#include "berth/plan_report.h"
#include "serve/serve.h"

#define AT 1714564800 /* 2024-05-01T12:00:00Z */

static void expired(berth_cancel *c)
{
    berth_cancel_init(c, 1e-9);
    while (!berth_cancel_expired(c))
        ;
}

/* JSON text of j (stolen); the caller frees it. */
static char *dump(json_t *j)
{
    assert_non_null(j);
    char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(j);
    assert_non_null(s);
    return s;
}

static void test_cancel_record(void **st)
{
    (void)st;
    berth_cancel c;
    assert_int_equal(berth_cancel_expired(NULL), 0);
    berth_cancel_init(&c, 0);
    assert_int_equal(berth_cancel_expired(&c), 0);   /* no deadline */
    berth_cancel_stop(&c);
    assert_int_equal(berth_cancel_expired(&c), 1);   /* the flag */
    berth_cancel_init(&c, 3600);
    assert_int_equal(berth_cancel_expired(&c), 0);
    expired(&c);
    /* poll: the clock on the first call and every BERTH_CANCEL_EVERY-th */
    uint32_t tick = 0;
    assert_int_equal(berth_cancel_poll(&c, &tick), 1);
    assert_int_equal(berth_cancel_poll(&c, &tick), 0);
    tick = BERTH_CANCEL_EVERY;
    assert_int_equal(berth_cancel_poll(&c, &tick), 1);
    assert_int_equal(berth_cancel_poll(NULL, &tick), 0);
    assert_string_equal(berth_err_name(BERTH_ETIMEDOUT), "ETIMEDOUT");
}

/* ---- kube ---- */

static void kube_load(berth_kcluster *k, const char *const *files)
{
    berth_kube_init(k);
    berth_error e;
    berth_error_clear(&e);
    for (; *files; files++) {
        berth_source src;
        int rc = berth_doc_load_file(&k->arena, *files, &src, &e);
        if (!rc)
            rc = berth_kube_load(k, &src, 0, &e);
        if (rc)
            fail_msg("%s: %s", *files, e.msg);
    }
}

/* Schedules files with cancel; *rc the result; the placed nodes joined
 * (malloc'd), NULL after an error. */
static char *kube_run(const char *const *files, const berth_cancel *c, int *rc)
{
    berth_kcluster k;
    kube_load(&k, files);
    berth_error e;
    berth_error_clear(&e);
    assert_int_equal(berth_kube_expand(&k, &e), 0);
    berth_kube_options o = {.tiebreak = BERTH_TIE_FIRST, .preempt = 1, .cancel = c};
    *rc = berth_kube_schedule(&k, &o, &e);
    char *s = NULL;
    if (*rc == 0 || *rc == BERTH_ENOFIT) {
        size_t cap = 64 + (size_t)k.npods * 80, n = 0;
        s = calloc(1, cap);
        assert_non_null(s);
        for (uint32_t p = 0; p < k.npods; p++)
            n += (size_t)snprintf(s + n, cap - n, "%s=%s;", k.pods[p].name,
                                  k.pods[p].node_name ? k.pods[p].node_name : "-");
    }
    berth_kube_free(&k);
    return s;
}

static void test_kube_schedule(void **st)
{
    (void)st;
    static const char *const files[] = {"examples/kube/preemption.yaml", NULL};
    static const char *const wl[] = {"examples/kube/workloads.yaml", NULL};
    const char *const *sets[] = {files, wl};
    for (int i = 0; i < 2; i++) {
        int rc0, rc1, rc2;
        char *none = kube_run(sets[i], NULL, &rc0);
        berth_cancel far;
        berth_cancel_init(&far, 3600);
        char *f = kube_run(sets[i], &far, &rc1);
        assert_int_equal(rc0, rc1);
        assert_non_null(none);
        assert_string_equal(none, f);
        berth_cancel c;
        expired(&c);
        assert_null(kube_run(sets[i], &c, &rc2));
        assert_int_equal(rc2, BERTH_ETIMEDOUT);
        free(none);
        free(f);
    }
}

/* A stop raised by the third decision ends the run within the check
 * interval (8 pods). */
typedef struct stop_ctx {
    berth_cancel *c;
    uint32_t seen;
} stop_ctx;

static void stop_at_third(void *ctx, const berth_kcluster *k, const berth_kdecision *d)
{
    (void)k;
    (void)d;
    stop_ctx *s = ctx;
    if (++s->seen == 3)
        berth_cancel_stop(s->c);
}

static void test_kube_stop_midway(void **st)
{
    (void)st;
    /* 40 pending pods on one node */
    char text[16384];
    size_t n = (size_t)snprintf(text, sizeof text,
                                "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
                                "status: {allocatable: {cpu: '64', memory: 64Gi, pods: '110'}}\n");
    for (int i = 0; i < 40; i++)
        n += (size_t)snprintf(text + n, sizeof text - n,
                              "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p%02d, namespace: "
                              "default}\nspec: {containers: [{name: c, resources: {requests: "
                              "{cpu: 10m}}}]}\n",
                              i);
    berth_kcluster k;
    berth_kube_init(&k);
    berth_error e;
    berth_error_clear(&e);
    berth_source src;
    assert_int_equal(berth_doc_load_buffer(&k.arena, "t.yaml", text, n, &src, &e), 0);
    assert_int_equal(berth_kube_load(&k, &src, 0, &e), 0);
    assert_int_equal(berth_kube_expand(&k, &e), 0);
    berth_cancel c;
    berth_cancel_init(&c, 0);
    stop_ctx sc = {&c, 0};
    berth_kube_options o = {.tiebreak = BERTH_TIE_FIRST, .on_decision = stop_at_third, .ctx = &sc,
                            .cancel = &c};
    assert_int_equal(berth_kube_schedule(&k, &o, &e), BERTH_ETIMEDOUT);
    assert_true(sc.seen >= 3 && sc.seen <= 8);
    berth_kube_free(&k);
}

/* A session stopped in the middle of a placement rolls back to where it
 * was: the same question then gets the answer of an unstopped session. */
static void test_kube_session(void **st)
{
    (void)st;
    static const char *const files[] = {"examples/kube/real/nodes.yaml",
                                        "examples/kube/real/get-all.yaml", NULL};
    berth_kcluster k;
    kube_load(&k, files);
    berth_error e;
    berth_error_clear(&e);
    assert_int_equal(berth_kube_expand(&k, &e), 0);
    /* the question: evict every pod of the first node that has some, place them again */
    uint32_t *pods = malloc((k.npods + 1) * sizeof *pods), np = 0;
    uint32_t *placed_a = malloc((k.npods + 1) * sizeof *placed_a);
    uint32_t *placed_b = malloc((k.npods + 1) * sizeof *placed_b);
    assert_true(pods && placed_a && placed_b);
    const char *node = NULL;
    for (uint32_t p = 0; p < k.npods && !node; p++)
        if (k.pods[p].node_name && !k.pods[p].terminating)
            node = k.pods[p].node_name;
    assert_non_null(node);
    for (uint32_t p = 0; p < k.npods; p++)
        if (k.pods[p].node_name && !strcmp(k.pods[p].node_name, node) && !k.pods[p].terminating)
            pods[np++] = p;
    assert_true(np > 0);
    for (int stopped = 0; stopped < 2; stopped++) {
        berth_ksession *s;
        assert_int_equal(berth_ksession_open(&s, &k, NULL, 0, NULL, &e), 0);
        uint64_t mark = berth_ksession_mark(s);
        for (uint32_t i = 0; i < np; i++)
            assert_int_equal(berth_ksession_evict(s, pods[i]), 0);
        if (stopped) {
            uint64_t inner = berth_ksession_mark(s);
            berth_cancel c;
            expired(&c);
            berth_ksession_set_cancel(s, &c);
            assert_int_equal(berth_ksession_place(s, pods, np, placed_b, NULL, NULL, &e),
                             BERTH_ETIMEDOUT);
            assert_int_equal(berth_ksession_rollback(s, inner), 0);
            for (uint32_t i = 0; i < np; i++)
                assert_int_equal(berth_ksession_node_of(s, pods[i]), BERTH_KUBE_NONE);
            berth_cancel far;
            berth_cancel_init(&far, 3600);
            berth_ksession_set_cancel(s, &far);
        }
        int rc = berth_ksession_place(s, pods, np, stopped ? placed_b : placed_a, NULL, NULL, &e);
        assert_true(rc == 0 || rc == BERTH_ENOFIT);
        assert_int_equal(berth_ksession_rollback(s, mark), 0);
        berth_ksession_close(s);
    }
    assert_memory_equal(placed_a, placed_b, np * sizeof *placed_a);
    free(pods);
    free(placed_a);
    free(placed_b);
    berth_kube_free(&k);
}

/* kube fit: examples/kube/fit/web.yaml on the real cluster. */
static int fit_run(const berth_cancel *c, berth_kfit *out, uint32_t *per0)
{
    static const char *const files[] = {"examples/kube/real/nodes.yaml",
                                        "examples/kube/real/get-all.yaml", NULL};
    berth_kcluster k;
    kube_load(&k, files);
    uint32_t first_ctl = k.ncontrollers, first_pod = k.npods;
    static const char *const wl[] = {"examples/kube/fit/web.yaml", NULL};
    berth_error e;
    berth_error_clear(&e);
    berth_source src;
    assert_int_equal(berth_doc_load_file(&k.arena, wl[0], &src, &e), 0);
    assert_int_equal(berth_kube_load(&k, &src, 0, &e), 0);
    int rc = berth_kube_fit(&k, first_ctl, first_pod, 0, NULL, c, out, &e);
    *per0 = rc ? 0 : out->per_node[0];
    berth_kube_free(&k);
    return rc;
}

static void test_kube_fit(void **st)
{
    (void)st;
    berth_kfit a, b, x;
    uint32_t pa, pb, px;
    assert_int_equal(fit_run(NULL, &a, &pa), 0);
    berth_cancel far, c;
    berth_cancel_init(&far, 3600);
    assert_int_equal(fit_run(&far, &b, &pb), 0);
    assert_true(a.fits > 0);
    assert_int_equal(a.fits, b.fits);
    assert_int_equal(a.existing, b.existing);
    assert_int_equal(pa, pb);
    expired(&c);
    assert_int_equal(fit_run(&c, &x, &px), BERTH_ETIMEDOUT);
    assert_int_equal(x.fits, 0);
    assert_null(x.per_node);
}

/* ---- fleet ---- */

/* Places every placement of examples/fleet/pickn-spread.yaml; the
 * selections joined (malloc'd), NULL when a placement was stopped. */
static char *fleet_run(const berth_cancel *c, int *rc)
{
    berth_fleet f;
    berth_fleet_init(&f);
    berth_error e;
    berth_error_clear(&e);
    berth_source src;
    assert_int_equal(berth_doc_load_file(&f.arena, "examples/fleet/pickn-spread.yaml", &src, &e),
                     0);
    assert_int_equal(berth_fleet_load(&f, &src, 0, &e), 0);
    assert_int_equal(berth_fleet_finalize(&f, &e), 0);
    berth_fleet_options o = {.now_ms = (int64_t)AT * 1000, .cancel = c};
    berth_fleet_ctx *ctx;
    assert_int_equal(berth_fleet_ctx_new(&f, &o, &ctx, &e), 0);
    size_t cap = 8192, n = 0;
    char *s = calloc(1, cap);
    assert_non_null(s);
    *rc = 0;
    for (uint32_t p = 0; p < f.nplacements && !*rc; p++) {
        berth_fleet_outcome out;
        *rc = berth_fleet_place(ctx, p, &out);
        for (uint32_t i = 0; !*rc && i < out.nselected && n + 8 < cap; i++)
            n += (size_t)snprintf(s + n, cap - n, "%u,", out.selected[i]);
        if (!*rc && n + 2 < cap)
            s[n++] = ';';
    }
    assert_true(f.nplacements > 0);
    berth_fleet_ctx_free(ctx);
    berth_fleet_free(&f);
    if (*rc) {
        free(s);
        return NULL;
    }
    return s;
}

static void test_fleet_place(void **st)
{
    (void)st;
    int rc;
    char *a = fleet_run(NULL, &rc);
    assert_int_equal(rc, 0);
    berth_cancel far, c;
    berth_cancel_init(&far, 3600);
    char *b = fleet_run(&far, &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(a, b);
    expired(&c);
    assert_null(fleet_run(&c, &rc));
    assert_int_equal(rc, BERTH_ETIMEDOUT);
    free(a);
    free(b);
}

/* ---- disrupt ---- */

static char *disrupt_run(const char *file, int optimize, const berth_cancel *c, int *rc)
{
    berth_disrupt m;
    berth_disrupt_init(&m);
    berth_error e;
    berth_error_clear(&e);
    berth_source src;
    assert_int_equal(berth_doc_load_file(&m.kube.arena, file, &src, &e), 0);
    assert_int_equal(berth_disrupt_load(&m, &src, 0, &e), 0);
    assert_int_equal(berth_disrupt_finalize(&m, &e), 0);
    berth_dplan_options o = {.now = AT, .optimize = optimize, .cancel = c};
    berth_dplan p;
    *rc = berth_disrupt_plan(&m, &o, &p, &e);
    char *s = *rc ? NULL : dump(berth_report_disrupt_json(&m, &p));
    if (!*rc)
        berth_dplan_free(&p);
    berth_disrupt_free(&m);
    return s;
}

static void test_disrupt_plan(void **st)
{
    (void)st;
    static const char *const files[] = {"examples/disrupt/consolidate.yaml",
                                        "examples/disrupt/optimize.yaml"};
    for (int i = 0; i < 2; i++)
        for (int opt = 0; opt < 2; opt++) {
            int rc;
            char *a = disrupt_run(files[i], opt, NULL, &rc);
            assert_int_equal(rc, 0);
            berth_cancel far, c;
            berth_cancel_init(&far, 3600);
            char *b = disrupt_run(files[i], opt, &far, &rc);
            assert_int_equal(rc, 0);
            assert_string_equal(a, b);
            expired(&c);
            assert_null(disrupt_run(files[i], opt, &c, &rc));
            assert_int_equal(rc, BERTH_ETIMEDOUT);
            free(a);
            free(b);
        }
}

static char *dsim_run(const berth_cancel *c, int *rc)
{
    berth_disrupt m;
    berth_disrupt_init(&m);
    berth_error e;
    berth_error_clear(&e);
    berth_source src;
    assert_int_equal(berth_doc_load_file(&m.kube.arena, "examples/disrupt/simulate.yaml", &src, &e),
                     0);
    assert_int_equal(berth_disrupt_load(&m, &src, 0, &e), 0);
    assert_int_equal(berth_disrupt_finalize(&m, &e), 0);
    /* 2024-05-01T23:58:00Z .. 2024-05-02T00:30:00Z by 1 minute */
    berth_dsim_options o = {.from = 1714607880, .to = 1714609800, .step = 60,
                            .launch_delay = 60, .cancel = c};
    berth_dtimeline t;
    memset(&t, 0, sizeof t);
    *rc = berth_disrupt_simulate(&m, &o, &t, &e);
    char *s = *rc ? NULL : dump(berth_report_disrupt_timeline_json(&t));
    berth_dtimeline_free(&t);
    berth_disrupt_free(&m);
    return s;
}

static void test_disrupt_simulate(void **st)
{
    (void)st;
    int rc;
    char *a = dsim_run(NULL, &rc);
    assert_int_equal(rc, 0);
    berth_cancel far, c;
    berth_cancel_init(&far, 3600);
    char *b = dsim_run(&far, &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(a, b);
    expired(&c);
    assert_null(dsim_run(&c, &rc));
    assert_int_equal(rc, BERTH_ETIMEDOUT);
    free(a);
    free(b);
}

/* ---- autoscale ---- */

static char *autoscale_run(const char *file, berth_apolicy policy, const berth_cancel *c, int *rc)
{
    berth_autoscale m;
    berth_autoscale_init(&m);
    berth_error e;
    berth_error_clear(&e);
    berth_source src;
    assert_int_equal(berth_doc_load_file(&m.kube.arena, file, &src, &e), 0);
    assert_int_equal(berth_autoscale_load(&m, &src, 0, &e), 0);
    assert_int_equal(berth_autoscale_finalize(&m, &e), 0);
    berth_aplan_options o = {.now = AT, .policy = policy, .cancel = c};
    berth_aplan p;
    memset(&p, 0, sizeof p);
    *rc = berth_autoscale_plan(&m, &o, &p, &e);
    char *s = *rc ? NULL : dump(berth_report_autoscale_json(&m, &p));
    berth_aplan_free(&p);
    berth_autoscale_free(&m);
    return s;
}

static void test_autoscale_plan(void **st)
{
    (void)st;
    static const char *const files[] = {"examples/autoscale/scale-up.yaml",
                                        "examples/autoscale/scale-down.yaml",
                                        "examples/autoscale/cluster-autoscaler.yaml"};
    for (int i = 0; i < 3; i++) {
        berth_apolicy pol = i == 2 ? BERTH_POLICY_CLUSTER_AUTOSCALER : BERTH_POLICY_OCEAN;
        int rc;
        char *a = autoscale_run(files[i], pol, NULL, &rc);
        assert_int_equal(rc, 0);
        berth_cancel far, c;
        berth_cancel_init(&far, 3600);
        char *b = autoscale_run(files[i], pol, &far, &rc);
        assert_int_equal(rc, 0);
        assert_string_equal(a, b);
        expired(&c);
        assert_null(autoscale_run(files[i], pol, &c, &rc));
        assert_int_equal(rc, BERTH_ETIMEDOUT);
        free(a);
        free(b);
    }
}

static char *asim_run(const berth_cancel *c, int *rc)
{
    berth_autoscale m;
    berth_atimeline t;
    berth_autoscale_init(&m);
    berth_atimeline_init(&t);
    berth_error e;
    berth_error_clear(&e);
    berth_source src, ev;
    assert_int_equal(
        berth_doc_load_file(&m.kube.arena, "examples/autoscale/simulate/estate.yaml", &src, &e), 0);
    assert_int_equal(berth_autoscale_load(&m, &src, 0, &e), 0);
    assert_int_equal(berth_atimeline_scan_pods(&t, &m, &src, &e), 0);
    assert_int_equal(berth_autoscale_finalize(&m, &e), 0);
    assert_int_equal(
        berth_doc_load_file(&m.kube.arena, "examples/autoscale/simulate/events.yaml", &ev, &e), 0);
    assert_int_equal(berth_atimeline_load_events(&t, &m, &ev, &e), 0);
    berth_atimeline_finish(&t);
    berth_asim_options o = {.from = AT, .to = AT + 1800, .step = 60, .launch_delay = 120,
                            .drain_timeout = 300, .cancel = c};
    berth_asim_result r;
    memset(&r, 0, sizeof r);
    *rc = berth_autoscale_simulate(&m, &t, &o, &r, &e);
    char *s = *rc ? NULL : dump(berth_report_autoscale_timeline_json(&t, &o, &r));
    berth_asim_result_free(&r);
    berth_atimeline_free(&t);
    berth_autoscale_free(&m);
    return s;
}

static void test_autoscale_simulate(void **st)
{
    (void)st;
    int rc;
    char *a = asim_run(NULL, &rc);
    assert_int_equal(rc, 0);
    berth_cancel far, c;
    berth_cancel_init(&far, 3600);
    char *b = asim_run(&far, &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(a, b);
    expired(&c);
    assert_null(asim_run(&c, &rc));
    assert_int_equal(rc, BERTH_ETIMEDOUT);
    free(a);
    free(b);
}

/* ---- the service's planner endpoints (serve/stateless.c) ---- */

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *b = malloc(1 << 20);
    assert_non_null(b);
    *len = fread(b, 1, (1 << 20) - 1, f);
    fclose(f);
    b[*len] = 0;
    return b;
}

static void serve_call(int ep, const char *body, size_t len, const serve_budget *b, serve_reply *r)
{
    switch (ep) {
    case 0: serve_kube_schedule(body, len, NULL, NULL, NULL, b, r); break;
    case 1: serve_fleet_place(body, len, "2024-05-01T12:00:00Z", NULL, b, r); break;
    case 2: serve_disrupt_plan(body, len, "2024-05-01T12:00:00Z", b, r); break;
    default: serve_autoscale_plan(body, len, "2024-05-01T12:00:00Z", b, r); break;
    }
}

static void test_serve_endpoints(void **st)
{
    (void)st;
    static const char *const files[] = {"examples/kube/workloads.yaml",
                                        "examples/fleet/pickn-spread.yaml",
                                        "examples/disrupt/consolidate.yaml",
                                        "examples/autoscale/scale-up.yaml"};
    for (int ep = 0; ep < 4; ep++) {
        size_t len;
        char *body = slurp(files[ep], &len);
        serve_budget none = {0, 0, 0}, tiny = {0, 0, 1e-9};
        serve_reply r;
        serve_call(ep, body, len, &none, &r);
        assert_int_equal(r.status, 200);
        assert_int_equal(r.stopped, 0);
        free(r.body);
        /* 1 ns: past before the planner's first look */
        serve_call(ep, body, len, &tiny, &r);
        assert_int_equal(r.status, 422);
        assert_int_equal(r.stopped, 1);
        assert_non_null(strstr(r.body, "\"over_budget\""));
        assert_non_null(strstr(r.body, "request stopped after 1e-09 s of planning"));
        assert_non_null(strstr(r.body, "berth serve --max-request-seconds N"));
        free(r.body);
        free(body);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cancel_record),      cmocka_unit_test(test_kube_schedule),
        cmocka_unit_test(test_kube_stop_midway),   cmocka_unit_test(test_kube_session),
        cmocka_unit_test(test_kube_fit),           cmocka_unit_test(test_fleet_place),
        cmocka_unit_test(test_disrupt_plan),       cmocka_unit_test(test_disrupt_simulate),
        cmocka_unit_test(test_autoscale_plan),     cmocka_unit_test(test_autoscale_simulate),
        cmocka_unit_test(test_serve_endpoints),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
