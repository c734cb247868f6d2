/* tests/torture/torture.c - the in-process half of `make torture`
 * (docs/testing.md): runs the request paths of `berth serve` through their
 * C API with the Nth allocation failing (fail_alloc.c), for N = 1, 2, ...
 * until a run completes without reaching N, and checks after each run:
 *
 *   stateless (POST /v1/kube/schedule, /v1/fleet/place, /v1/disrupt/plan,
 *   /v1/autoscale/plan over a file): the reply is the failure-free reply,
 *   or a 500 "internal" error; an input that is valid never answers 400 and
 *   a bad one answers its own 400 message (an allocation failure is never
 *   reported as bad input).
 *   engine (PUT /v1/estate, POST /v1/clusters, PATCH pool count, DELETE
 *   cluster, and POST /v1/clusters on the site alone; serve/engine.c and the SQLite log of store.c): a 2xx reply
 *   leaves exactly the failure-free state, any other reply leaves the state
 *   as it was before the request (GET /v1/estate compares equal), and a
 *   restart (replay of the log) rebuilds the same state as the live one.
 *   replay (serve_engine_open over a log): it fails cleanly or rebuilds the
 *   state of the log.
 *   nexus (berth_nexus_load, _validate and _run over FILEs, the library path
 *   of `berth simulate`): the failure-free result (its JSON), or a failure
 *   whose message says out of memory.
 *   autoscale-simulate (ESTATE EVENTS pairs: the library path of `berth
 *   autoscale simulate`): the failure-free timeline (its JSON), or a
 *   failure whose message says out of memory.
 *
 * Usage: torture [--sample K] [--lenient] CASE [FILE...]
 *   CASE: stateless-kube, stateless-fleet, stateless-disrupt,
 *         stateless-autoscale, nexus (each over FILEs), autoscale-simulate
 *         (over ESTATE EVENTS pairs), engine, replay.
 *   --sample K: only every Kth N (plus N = 1..8 and the last; at most about
 *   40 runs a case), for make check.
 *   --lenient: wrong answers and half-applied changes are counted and
 *   printed as findings, not failures (crashes and leaks still fail).
 * Exit 0 when every run passed; leaks are LeakSanitizer's (at exit). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "berth/autoscale.h"
#include "berth/doc.h"
#include "berth/nexus.h"
#include "berth/plan_report.h"
#include "berth/report.h"
#include "serve/serve.h"
#include "torture.h"

static unsigned long sample = 1;
static int lenient;             /* --lenient: count wrong answers, fail only on crashes and leaks */
static int failures, inconsistencies;
static unsigned long runs;

#define FAIL(...)                                                                            \
    do {                                                                                     \
        fprintf(stderr, "torture: FAIL: " __VA_ARGS__);                                      \
        fputc('\n', stderr);                                                                 \
        failures++;                                                                          \
    } while (0)

/* a wrong answer or a half-applied change: a failure, or with --lenient
 * only counted (the open findings of docs/testing.md) */
#define WRONG(...)                                                                           \
    do {                                                                                     \
        fprintf(stderr, "torture: %s: ", lenient ? "finding" : "FAIL");                     \
        fprintf(stderr, __VA_ARGS__);                                                        \
        fputc('\n', stderr);                                                                 \
        if (lenient)                                                                         \
            inconsistencies++;                                                               \
        else                                                                                 \
            failures++;                                                                      \
    } while (0)

/* with --sample K: N = 1..8, then every Kth, spaced so that a case takes
 * at most about 40 runs */
static int take(unsigned long n, unsigned long total)
{
    unsigned long step = sample > total / 40 ? sample : total / 40;
    return sample <= 1 || n <= 8 || n % step == 0;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *b = malloc(cap);
    size_t got;
    while (b && (got = fread(b + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *nb = realloc(b, cap *= 2);
            if (!nb) {
                free(b);
                b = NULL;
            }
            b = nb;
        }
    }
    fclose(f);
    *len = n;
    return b;
}

/* ---- stateless endpoints ---- */

typedef void (*endpoint)(const char *body, size_t len, serve_reply *r);

static void ep_kube(const char *b, size_t n, serve_reply *r) { serve_kube_schedule(b, n, NULL, NULL, NULL, NULL, r); }
static void ep_fleet(const char *b, size_t n, serve_reply *r) { serve_fleet_place(b, n, "2024-05-01T12:00:00Z", NULL, NULL, r); }
static void ep_disrupt(const char *b, size_t n, serve_reply *r) { serve_disrupt_plan(b, n, "2024-05-01T12:00:00Z", NULL, r); }
static void ep_autoscale(const char *b, size_t n, serve_reply *r) { serve_autoscale_plan(b, n, "2024-05-01T12:00:00Z", NULL, r); }

static int internal_error(const serve_reply *r)
{
    return r->status == 500 && r->body && strstr(r->body, "\"code\":\"internal\"");
}

static void stateless(const char *name, endpoint fn, const char *path)
{
    size_t len;
    char *body = slurp(path, &len);
    if (!body) {
        FAIL("%s: cannot read", path);
        return;
    }
    serve_reply ref = {0};
    torture_fail_at(0);
    fn(body, len, &ref);
    unsigned long total = torture_allocations();
    unsigned long n;
    for (n = 1;; n++) {
        if (!take(n, total) && n < total)
            continue;
        serve_reply r = {0};
        torture_fail_at(n);
        fn(body, len, &r);
        int failed = torture_failed();
        torture_fail_at(0);
        runs++;
        if (r.status == ref.status && r.body && ref.body && !strcmp(r.body, ref.body)) {
            /* the same answer (the failure was handled, or not reached) */
        } else if (internal_error(&r)) {
            /* out of memory, reported as such */
        } else {
            /* the first difference, with some context */
            size_t at = 0;
            if (r.body && ref.body)
                while (r.body[at] && r.body[at] == ref.body[at])
                    at++;
            at = at > 80 ? at - 80 : 0;
            WRONG("%s %s: N=%lu: status %d (failure-free: %d): ...%.300s\n  failure-free: ...%.300s",
                  name, path, n, r.status, ref.status, r.body ? r.body + at : "(no body)",
                  ref.body ? ref.body + (ref.body && strlen(ref.body) > at ? at : 0) : "");
        }
        free(r.body);
        if (!failed)
            break;
    }
    printf("torture: %s %s: %lu allocations, %lu runs\n", name, path, total, n);
    free(ref.body);
    free(body);
}

/* ---- the bare-metal timeline (berth simulate's library path) ---- */

/* j's text as the CLI writes it into *out (j released); BERTH_ENOMEM with
 * e's message when it cannot be built or rendered. */
static int render(json_t *j, char **out, berth_error *e)
{
    *out = j ? berth_report_json_text(j, JSON_INDENT(2)) : NULL;
    json_decref(j);
    if (*out)
        return 0;
    snprintf(e->msg, sizeof e->msg, "out of memory");
    return BERTH_ENOMEM;
}

/* Loads, validates and runs the nexus file at path; the result's JSON (as
 * `simulate -o json` writes it) in *out, or NULL with the error in msg.
 * Returns the run's code (BERTH_ENOFIT: a step did not fit, reported). */
static int nexus_once(const char *path, char **out, char *msg, size_t size)
{
    berth_nexus nx;
    berth_nexus_init(&nx);
    berth_error e;
    berth_error_clear(&e);
    berth_source src;
    *out = NULL;
    int rc = berth_doc_load_file(&nx.arena, path, &src, &e);
    if (!rc)
        rc = berth_nexus_load(&nx, &src, 1, &e);
    if (!rc)
        rc = berth_nexus_validate(&nx, &e);
    berth_nexus_options opt = {.use_index = 1};
    if (!rc)
        rc = berth_nexus_run(&nx, &opt, &e);
    if (!rc || rc == BERTH_ENOFIT) {
        int jrc = render(berth_report_nexus_json(&nx), out, &e);
        rc = jrc ? jrc : rc;
    }
    snprintf(msg, size, "%s", e.msg);
    berth_nexus_free(&nx);
    return rc;
}

/* ---- the autoscaler over a timeline (berth autoscale simulate) ---- */

/* Loads the estate and the events as `autoscale simulate` does (default
 * step, launch delay and drain timeout; one thread), simulates, and
 * renders the timeline's JSON into *out; NULL with the error in msg. */
static int asim_once(const char *estate, const char *events, char **out, char *msg, size_t size)
{
    berth_autoscale m;
    berth_autoscale_init(&m);
    berth_atimeline t;
    berth_atimeline_init(&t);
    berth_error e;
    berth_error_clear(&e);
    berth_source src;
    berth_asim_options o = {.step = 60, .launch_delay = 120, .drain_timeout = 300, .threads = 1};
    berth_asim_result r;
    memset(&r, 0, sizeof r);
    *out = NULL;
    int rc = berth_doc_load_file(&m.kube.arena, estate, &src, &e);
    if (!rc)
        rc = berth_autoscale_load(&m, &src, 1, &e);
    if (!rc)
        rc = berth_atimeline_scan_pods(&t, &m, &src, &e);
    if (!rc)
        rc = berth_autoscale_finalize(&m, &e);
    if (!rc)
        rc = berth_doc_load_file(&m.kube.arena, events, &src, &e);
    if (!rc)
        rc = berth_atimeline_load_events(&t, &m, &src, &e);
    if (!rc) {
        berth_atimeline_finish(&t);
        o.from = t.nev ? t.ev[0].at : 0;
        o.to = (t.nev ? t.ev[t.nev - 1].at : o.from) + 15 * 60;
        rc = berth_autoscale_simulate(&m, &t, &o, &r, &e);
    }
    if (!rc)
        rc = render(berth_report_autoscale_timeline_json(&t, &o, &r), out, &e);
    snprintf(msg, size, "%s", e.msg);
    berth_asim_result_free(&r);
    berth_atimeline_free(&t);
    berth_autoscale_free(&m);
    return rc;
}

/* A library path's run over its inputs (args): the result's text in *out,
 * or NULL with the error in msg; its code. */
typedef int (*lib_run)(const char *const *args, char **out, char *msg, size_t size);

static int nexus_run(const char *const *args, char **out, char *msg, size_t size)
{
    return nexus_once(args[0], out, msg, size);
}

static int asim_run(const char *const *args, char **out, char *msg, size_t size)
{
    return asim_once(args[0], args[1], out, msg, size);
}

/* Every N: the failure-free result (the same code and text), or a failure
 * whose message says out of memory (never an empty message or an input
 * error, never another result). label names the run in the output. */
static void lib_case(const char *name, lib_run fn, const char *const *args, const char *label)
{
    char msg[1024], rmsg[1024];
    char *ref = NULL;
    torture_fail_at(0);
    int refrc = fn(args, &ref, rmsg, sizeof rmsg);
    unsigned long total = torture_allocations();
    if (refrc && refrc != BERTH_ENOFIT) {
        FAIL("%s %s: the failure-free run failed: %s", name, label, rmsg);
        free(ref);
        return;
    }
    unsigned long n;
    for (n = 1;; n++) {
        if (!take(n, total) && n < total)
            continue;
        char *out = NULL;
        torture_fail_at(n);
        int rc = fn(args, &out, msg, sizeof msg);
        int failed = torture_failed();
        torture_fail_at(0);
        runs++;
        if (rc == refrc && out && !strcmp(out, ref)) {
            /* the same result */
        } else if (rc != refrc && rc != BERTH_ENOFIT && strstr(msg, "out of memory")) {
            /* out of memory, said so */
        } else if (rc == refrc) {
            WRONG("%s %s: N=%lu: a result other than the failure-free one", name, label, n);
        } else {
            WRONG("%s %s: N=%lu: code %d (failure-free: %d) with '%.300s'", name, label, n, rc,
                  refrc, msg);
        }
        free(out);
        if (!failed)
            break;
    }
    printf("torture: %s %s: %lu allocations, %lu runs\n", name, label, total, n);
    free(ref);
}

/* ---- the engine's commit path ---- */

static char dbdir[64];

static const char *db_path(const char *name)
{
    static char p[128];
    snprintf(p, sizeof p, "%s/%s", dbdir, name);
    return p;
}

static void rm_db(const char *path)
{
    char p[160];
    unlink(path);
    snprintf(p, sizeof p, "%s-wal", path);
    unlink(p);
    snprintf(p, sizeof p, "%s-shm", path);
    unlink(p);
}

static char *estate_json(serve_engine *g)
{
    serve_reply r;
    serve_engine_get_estate(g, &r);
    char *s = NULL;
    if (asprintf(&s, "%d %s", r.status, r.body ? r.body : "") < 0)
        s = NULL;
    free(r.body);
    return s;
}

typedef struct bodies {
    char *site, *site2, *cluster_a, *cluster_b;
    size_t site_len, site2_len, a_len, b_len;
} bodies;

/* create-first: cluster A on the site alone, so the placement's context
 * lists grow during the request (a later create finds them grown) */
enum { OP_CREATE, OP_SCALE, OP_DELETE, OP_ESTATE, OP_SCALE_NOFIT, OP_CREATE_FIRST, OP_COUNT };
static const char *const op_names[OP_COUNT] = {"create", "scale", "delete", "estate",
                                               "scale-nofit", "create-first"};

static void do_op(serve_engine *g, const bodies *b, int op, serve_reply *r)
{
    switch (op) {
    case OP_CREATE: serve_engine_create(g, b->cluster_b, b->b_len, r); break;
    case OP_SCALE: serve_engine_scale(g, "A", "pool-2", 9, r); break;
    case OP_DELETE: serve_engine_delete(g, "A", r); break;
    case OP_ESTATE: serve_engine_put_estate(g, b->site2, b->site2_len, r); break;
    case OP_CREATE_FIRST: serve_engine_create(g, b->cluster_a, b->a_len, r); break;
    default: serve_engine_scale(g, "A", "pool-1", 100000, r); break;
    }
}

/* A fresh engine at path holding the site and (with_a) cluster A; NULL on
 * failure. */
static serve_engine *setup(const char *path, const bodies *b, int with_a)
{
    rm_db(path);
    torture_fail_at(0);
    berth_error e;
    serve_engine *g;
    if (serve_engine_open(path, 64, &g, &e)) {
        FAIL("setup: open: %s", e.msg);
        return NULL;
    }
    serve_reply r;
    serve_engine_put_estate(g, b->site, b->site_len, &r);
    int ok = r.status == 200;
    free(r.body);
    if (with_a) {
        serve_engine_create(g, b->cluster_a, b->a_len, &r);
        ok = ok && r.status == 201;
        free(r.body);
    }
    if (!ok) {
        FAIL("setup: estate or cluster A rejected");
        serve_engine_close(g);
        return NULL;
    }
    return g;
}

static void engine_op(const bodies *b, int op)
{
    const char *path = db_path("engine.db");
    /* the failure-free run */
    int with_a = op != OP_CREATE_FIRST;
    serve_engine *g = setup(path, b, with_a);
    if (!g)
        return;
    char *before = estate_json(g);
    serve_reply ref;
    torture_fail_at(0);
    do_op(g, b, op, &ref);
    unsigned long total = torture_allocations();
    char *ref_after = estate_json(g);
    serve_engine_close(g);
    unsigned long n;
    for (n = 1;; n++) {
        if (!take(n, total) && n < total)
            continue;
        if (!(g = setup(path, b, with_a)))
            break;
        serve_reply r;
        torture_fail_at(n);
        do_op(g, b, op, &r);
        int failed = torture_failed();
        torture_fail_at(0);
        runs++;
        char *after = estate_json(g);
        int ok2xx = r.status >= 200 && r.status < 300;
        const char *want = ok2xx ? ref_after : before;
        if (r.status != ref.status && !internal_error(&r) &&
            !(r.status == 503 && r.body && strstr(r.body, "\"code\":\"storage\"")))
            WRONG("engine %s: N=%lu: status %d (failure-free: %d): %.300s", op_names[op], n,
                 r.status, ref.status, r.body ? r.body : "");
        if (!after || strcmp(after, want))
            WRONG("engine %s: N=%lu: status %d but the estate is %s", op_names[op], n,
                 r.status, ok2xx ? "not the failure-free one" : "not as before the request");
        if (!serve_engine_ready(g))
            WRONG("engine %s: N=%lu: the engine stopped taking requests", op_names[op], n);
        serve_engine_close(g);
        /* a restart replays the log into the same state */
        berth_error e;
        if (serve_engine_open(path, 64, &g, &e)) {
            FAIL("engine %s: N=%lu: reopen: %s", op_names[op], n, e.msg);
        } else {
            char *replayed = estate_json(g);
            if (!replayed || !after || strcmp(replayed, after))
                WRONG("engine %s: N=%lu: the replayed state differs from the live one",
                     op_names[op], n);
            free(replayed);
            serve_engine_close(g);
        }
        free(after);
        free(r.body);
        if (!failed)
            break;
    }
    printf("torture: engine %s: %lu allocations, %lu runs\n", op_names[op], total, n);
    free(ref.body);
    free(before);
    free(ref_after);
}

static void replay(const bodies *b)
{
    const char *path = db_path("replay.db");
    serve_engine *g = setup(path, b, 1);
    if (!g)
        return;
    serve_reply r;
    serve_engine_create(g, b->cluster_b, b->b_len, &r);
    free(r.body);
    serve_engine_scale(g, "A", "pool-2", 9, &r);
    free(r.body);
    char *want = estate_json(g);
    serve_engine_close(g);
    torture_fail_at(0);
    berth_error e;
    if (serve_engine_open(path, 64, &g, &e)) {
        FAIL("replay: %s", e.msg);
        free(want);
        return;
    }
    unsigned long total = torture_allocations();
    serve_engine_close(g);
    unsigned long n;
    for (n = 1;; n++) {
        if (!take(n, total) && n < total)
            continue;
        torture_fail_at(n);
        int rc = serve_engine_open(path, 64, &g, &e);
        int failed = torture_failed();
        torture_fail_at(0);
        runs++;
        if (rc == 0) {
            char *got = estate_json(g);
            if (!got || strcmp(got, want))
                WRONG("replay: N=%lu: opened, but the state differs from the log's", n);
            free(got);
            serve_engine_close(g);
        }
        if (!failed)
            break;
    }
    printf("torture: replay: %lu allocations, %lu runs\n", total, n);
    free(want);
}

static int load_bodies(bodies *b)
{
    b->site = slurp("examples/serve/site.yaml", &b->site_len);
    b->cluster_a = slurp("examples/serve/cluster-a.yaml", &b->a_len);
    static const char site2[] =
        "apiVersion: berth.io/v1\nkind: Site\nmetadata: {name: t2}\n"
        "spec: {racks: 2, machinesPerRack: 4, machine: {numaCells: 2, "
        "cell: {cpu: 48, memory: 224Gi}}}\n";
    static const char cb[] =
        "kind: KubernetesCluster\nmetadata: {name: B}\nspec:\n"
        "  controlPlaneNodeConfiguration: {count: 1, vmSkuName: NC_G2_8_v1}\n"
        "  initialAgentPoolConfigurations: [{name: p, count: 2, vmSkuName: NC_G6_28_v1}]\n";
    b->site2 = strdup(site2);
    b->site2_len = sizeof site2 - 1;
    b->cluster_b = strdup(cb);
    b->b_len = sizeof cb - 1;
    return b->site && b->cluster_a && b->site2 && b->cluster_b ? 0 : -1;
}

static void free_bodies(bodies *b)
{
    free(b->site);
    free(b->site2);
    free(b->cluster_a);
    free(b->cluster_b);
}

int main(int argc, char **argv)
{
    int i = 1;
    for (;;) {
        if (i + 1 < argc && !strcmp(argv[i], "--sample")) {
            sample = strtoul(argv[i + 1], NULL, 10);
            i += 2;
        } else if (i < argc && !strcmp(argv[i], "--lenient")) {
            lenient = 1;
            i++;
        } else {
            break;
        }
    }
    if (i >= argc) {
        fprintf(stderr, "usage: torture [--sample K] [--lenient] CASE [FILE...]\n");
        return 2;
    }
    const char *c = argv[i++];
    static const struct {
        const char *name;
        endpoint fn;
    } eps[] = {{"stateless-kube", ep_kube},
               {"stateless-fleet", ep_fleet},
               {"stateless-disrupt", ep_disrupt},
               {"stateless-autoscale", ep_autoscale}};
    for (size_t k = 0; k < sizeof eps / sizeof *eps; k++)
        if (!strcmp(c, eps[k].name)) {
            for (; i < argc; i++)
                stateless(c, eps[k].fn, argv[i]);
            goto done;
        }
    if (!strcmp(c, "autoscale-simulate")) {
        for (; i + 1 < argc; i += 2)
            lib_case(c, asim_run, (const char *const *)&argv[i], argv[i + 1]);
        goto done;
    }
    if (!strcmp(c, "nexus")) {
        for (; i < argc; i++)
            lib_case(c, nexus_run, (const char *const *)&argv[i], argv[i]);
        goto done;
    }
    if (strcmp(c, "engine") && strcmp(c, "replay")) {
        fprintf(stderr, "torture: unknown case '%s'\n", c);
        return 2;
    }
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(dbdir, sizeof dbdir, "%s/berth-torture-XXXXXX", base);
    if (!mkdtemp(dbdir))
        return 2;
    bodies b = {0};
    if (load_bodies(&b)) {
        FAIL("cannot read examples/serve/");
    } else if (!strcmp(c, "engine")) {
        for (int op = 0; op < OP_COUNT; op++)
            engine_op(&b, op);
    } else {
        replay(&b);
    }
    free_bodies(&b);
    rm_db(db_path("engine.db"));
    rm_db(db_path("replay.db"));
    rmdir(dbdir);
done:
    printf("torture: %s: %lu runs, %d failures, %d findings counted (--lenient)\n", c, runs,
           failures, inconsistencies);
    return failures ? 1 : 0;
}
