/* tests/unit/test_serve_store.c - the `berth serve` store and engine: log
 * append, commit, rollback and replay from the latest estate; the engine's
 * replay after a restart; group commit (concurrent mutations share
 * transactions, every one is applied exactly once). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "serve/serve.h"
#include "berth/pipeline.h"

static char dir[64];

static const char *db_path(const char *name)
{
    static char p[128];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return p;
}

typedef struct seen {
    int n;
    int kinds[16];
    char names[16][32];
} seen;

static int collect(void *ctx, const serve_record *r, berth_error *e)
{
    seen *s = ctx;
    if (s->n < 16) {
        s->kinds[s->n] = r->kind;
        snprintf(s->names[s->n], 32, "%s", r->cluster ? r->cluster : "");
    }
    s->n++;
    return 0;
}

static void test_append_replay(void **state)
{
    berth_error e;
    serve_store *s;
    assert_int_equal(serve_store_open(db_path("a.db"), &s, &e), 0);
    serve_record est = {.kind = SERVE_REC_ESTATE, .body = "site", .body_len = 4};
    serve_record c1 = {.kind = SERVE_REC_CREATE, .cluster = "c1", .body = "x", .body_len = 1};
    serve_record c2 = {.kind = SERVE_REC_DELETE, .cluster = "c2"};
    assert_int_equal(serve_store_begin(s, &e), 0);
    assert_int_equal(serve_store_append(s, &est, &e), 0);
    assert_int_equal(serve_store_append(s, &c1, &e), 0);
    assert_int_equal(serve_store_commit(s, &e), 0);
    assert_true(c1.seq == est.seq + 1);
    /* a rolled-back transaction leaves nothing */
    assert_int_equal(serve_store_begin(s, &e), 0);
    assert_int_equal(serve_store_append(s, &c2, &e), 0);
    serve_store_rollback(s);
    assert_int_equal(serve_store_commits(s), 1);
    serve_store_close(s);

    assert_int_equal(serve_store_open(db_path("a.db"), &s, &e), 0);
    seen got = {0};
    assert_int_equal(serve_store_replay(s, collect, &got, &e), 0);
    assert_int_equal(got.n, 2);
    assert_int_equal(got.kinds[0], SERVE_REC_ESTATE);
    assert_string_equal(got.names[1], "c1");
    /* a new estate supersedes (and compacts) everything before it */
    serve_record est2 = {.kind = SERVE_REC_ESTATE, .body = "site2", .body_len = 5};
    serve_record c3 = {.kind = SERVE_REC_SCALE, .cluster = "c3", .pool = "p", .count = 4};
    assert_int_equal(serve_store_begin(s, &e), 0);
    assert_int_equal(serve_store_append(s, &est2, &e), 0);
    assert_int_equal(serve_store_append(s, &c3, &e), 0);
    assert_int_equal(serve_store_commit(s, &e), 0);
    assert_true(est2.seq > c1.seq);
    memset(&got, 0, sizeof got);
    assert_int_equal(serve_store_replay(s, collect, &got, &e), 0);
    assert_int_equal(got.n, 2);
    assert_string_equal(got.names[1], "c3");
    serve_store_close(s);
}

static const char *site = "apiVersion: berth.io/v1\nkind: Site\nmetadata: {name: t}\n"
                          "spec: {racks: 4, machinesPerRack: 8, machine: {numaCells: 2, "
                          "cell: {cpu: 48, memory: 224Gi}}}\n";

static char *cluster_doc(int i)
{
    char *b = malloc(512);
    snprintf(b, 512,
             "kind: KubernetesCluster\nmetadata: {name: k%d}\nspec:\n"
             "  controlPlaneNodeConfiguration: {count: 1, vmSkuName: NC_G2_8_v1}\n"
             "  initialAgentPoolConfigurations: [{name: p, count: 2, vmSkuName: NC_G6_28_v1}]\n",
             i);
    return b;
}

typedef struct worker_arg {
    serve_engine *g;
    int first, n, created;
} worker_arg;

static void *creator(void *p)
{
    worker_arg *a = p;
    for (int i = a->first; i < a->first + a->n; i++) {
        char *b = cluster_doc(i);
        serve_reply r = {0};
        serve_engine_create(a->g, b, strlen(b), &r);
        if (r.status == 201)
            a->created++;
        free(r.body);
        free(b);
    }
    return NULL;
}

static void test_group_commit_and_restart(void **state)
{
    berth_error e;
    serve_engine *g;
    assert_int_equal(serve_engine_open(db_path("g.db"), 1024, &g, &e), 0);
    serve_reply r = {0};
    serve_engine_put_estate(g, site, strlen(site), &r);
    assert_int_equal(r.status, 200);
    free(r.body);
    enum { THREADS = 8, PER = 12 };
    pthread_t th[THREADS];
    worker_arg args[THREADS];
    for (int t = 0; t < THREADS; t++) {
        args[t] = (worker_arg){.g = g, .first = t * PER, .n = PER};
        pthread_create(&th[t], NULL, creator, &args[t]);
    }
    int created = 0;
    for (int t = 0; t < THREADS; t++) {
        pthread_join(th[t], NULL);
        created += args[t].created;
    }
    assert_int_equal(created, THREADS * PER);
    serve_engine_stats st;
    serve_engine_stats_get(g, &st);
    assert_int_equal(st.accepted[SERVE_REC_CREATE], THREADS * PER);
    assert_int_equal(st.clusters, THREADS * PER);
    /* one estate commit plus at most one commit per creation; group commit
     * usually shares them, and never loses one */
    assert_true(st.commits >= 2 && st.commits <= 1 + THREADS * PER);
    assert_int_equal(st.batched_ops, 1 + THREADS * PER);
    print_message("group commit: %d creations in %llu commits\n", THREADS * PER,
                  (unsigned long long)st.commits - 1);
    /* a rejected mutation writes nothing */
    char *dup = cluster_doc(0);
    serve_engine_create(g, dup, strlen(dup), &r);
    assert_int_equal(r.status, 409);
    free(r.body);
    free(dup);
    serve_engine_scale(g, "k1", "p", 5, &r);
    assert_int_equal(r.status, 200);
    free(r.body);
    serve_engine_delete(g, "k2", &r);
    assert_int_equal(r.status, 204);
    free(r.body);
    serve_engine_get_estate(g, &r);
    assert_int_equal(r.status, 200);
    char *before = r.body;
    uint64_t commits = 0;
    serve_engine_stats_get(g, &st);
    commits = st.commits;
    serve_engine_close(g);

    assert_int_equal(serve_engine_open(db_path("g.db"), 1024, &g, &e), 0);
    serve_engine_get_estate(g, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, before);
    free(r.body);
    free(before);
    serve_engine_stats_get(g, &st);
    assert_int_equal(st.clusters, THREADS * PER - 1);
    assert_true(commits > 0);
    serve_engine_close(g);
}

/* Runs the same mutations on g: an estate, 6 clusters, a scale up, a scale
 * down and a delete. */
static void drive(serve_engine *g)
{
    serve_reply r = {0};
    serve_engine_put_estate(g, site, strlen(site), &r);
    assert_int_equal(r.status, 200);
    free(r.body);
    for (int i = 0; i < 6; i++) {
        char *b = cluster_doc(100 + i);
        serve_engine_create(g, b, strlen(b), &r);
        assert_int_equal(r.status, 201);
        free(r.body);
        free(b);
    }
    serve_engine_scale(g, "k101", "p", 5, &r);
    assert_int_equal(r.status, 200);
    free(r.body);
    serve_engine_scale(g, "k102", "p", 1, &r);
    assert_int_equal(r.status, 200);
    free(r.body);
    serve_engine_delete(g, "k103", &r);
    assert_int_equal(r.status, 204);
    free(r.body);
}

static char *estate_of(serve_engine *g)
{
    serve_reply r = {0};
    serve_engine_get_estate(g, &r);
    assert_int_equal(r.status, 200);
    return r.body;
}

/* Records carry decisions: a log written under one ranking rule and
 * replayed under another gives the same estate; the same requests planned
 * under the other rule give a different one (so the rule matters). */
static void test_replay_under_changed_rule(void **state)
{
    berth_error e;
    serve_engine *g;
    serve_engine_config first = {.db = db_path("rule.db"), .tiebreak = BERTH_TIE_FIRST};
    assert_int_equal(serve_engine_open_config(&first, &g, &e), 0);
    drive(g);
    char *written = estate_of(g);
    serve_engine_close(g);

    serve_engine_config last = {.db = db_path("rule.db"), .tiebreak = BERTH_TIE_LAST};
    assert_int_equal(serve_engine_open_config(&last, &g, &e), 0);
    char *replayed = estate_of(g);
    assert_string_equal(replayed, written);
    /* and a change after the replay still has the right cluster versions */
    serve_reply r = {0};
    serve_engine_scale(g, "k101", "p", 2, &r);
    assert_int_equal(r.status, 200);
    free(r.body);
    serve_engine_close(g);

    serve_engine_config other = {.db = db_path("rule2.db"), .tiebreak = BERTH_TIE_LAST};
    assert_int_equal(serve_engine_open_config(&other, &g, &e), 0);
    drive(g);
    char *planned = estate_of(g);
    serve_engine_close(g);
    assert_string_not_equal(planned, written);
    free(written);
    free(replayed);
    free(planned);
}

/* A log written before decision records (format 1: requests only) still
 * replays, through the planner, as it did. */
static void test_format1_log_replays(void **state)
{
    berth_error e;
    serve_store *s;
    assert_int_equal(serve_store_open(db_path("old.db"), &s, &e), 0);
    assert_int_equal(serve_store_begin(s, &e), 0);
    serve_record est = {.kind = SERVE_REC_ESTATE, .body = site, .body_len = strlen(site)};
    assert_int_equal(serve_store_append(s, &est, &e), 0);
    char *docs[3];
    for (int i = 0; i < 3; i++) {
        docs[i] = cluster_doc(200 + i);
        char name[16];
        snprintf(name, sizeof name, "k%d", 200 + i);
        serve_record c = {.kind = SERVE_REC_CREATE, .cluster = name, .body = docs[i],
                          .body_len = strlen(docs[i])};
        assert_int_equal(serve_store_append(s, &c, &e), 0);
    }
    serve_record sc = {.kind = SERVE_REC_SCALE, .cluster = "k201", .pool = "p", .count = 4};
    assert_int_equal(serve_store_append(s, &sc, &e), 0);
    assert_int_equal(serve_store_commit(s, &e), 0);
    serve_store_close(s);

    serve_engine *g;
    assert_int_equal(serve_engine_open(db_path("old.db"), 64, &g, &e), 0);
    char *old = estate_of(g);
    serve_engine_close(g);
    /* the same requests through today's engine */
    assert_int_equal(serve_engine_open(db_path("new.db"), 64, &g, &e), 0);
    serve_reply r = {0};
    serve_engine_put_estate(g, site, strlen(site), &r);
    free(r.body);
    for (int i = 0; i < 3; i++) {
        serve_engine_create(g, docs[i], strlen(docs[i]), &r);
        assert_int_equal(r.status, 201);
        free(r.body);
        free(docs[i]);
    }
    serve_engine_scale(g, "k201", "p", 4, &r);
    assert_int_equal(r.status, 200);
    free(r.body);
    char *now = estate_of(g);
    serve_engine_close(g);
    assert_string_equal(old, now);
    free(old);
    free(now);
}

static void test_tokens(void **state)
{
    const char *p = db_path("tokens");
    FILE *f = fopen(p, "w");
    fputs("# comment\n\n  alpha  \nbeta\n", f);
    fclose(f);
    serve_tokens t;
    berth_error e;
    assert_int_equal(serve_tokens_load(&t, p, &e), 0);
    assert_int_equal(t.n, 2);
    assert_true(serve_tokens_match(&t, "alpha"));
    assert_true(serve_tokens_match(&t, "beta"));
    assert_false(serve_tokens_match(&t, "alph"));
    assert_false(serve_tokens_match(&t, "alphaa"));
    assert_false(serve_tokens_match(&t, ""));
    serve_tokens_free(&t);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/berth-test-serve-XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_append_replay),
        cmocka_unit_test(test_group_commit_and_restart),
        cmocka_unit_test(test_replay_under_changed_rule),
        cmocka_unit_test(test_format1_log_replays),
        cmocka_unit_test(test_tokens),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        rc = 1;
    return rc;
}
