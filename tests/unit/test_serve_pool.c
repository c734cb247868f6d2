/* tests/unit/test_serve_pool.c - the bounded worker pools of `berth serve`
 * (src/serve/pool.c): a pool of T threads and queue Q takes T + Q jobs and
 * refuses the next one while they are held; every accepted job runs exactly
 * once; stopping runs the queued jobs and refuses new ones. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <string.h>

#include "serve/serve.h"

typedef struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int open, started, ran;
} gate;

typedef struct job {
    serve_job j; /* first */
    gate *g;
    int runs;
} job;

static void held(serve_job *sj)
{
    job *jb = (job *)sj;
    pthread_mutex_lock(&jb->g->mu);
    jb->g->started++;
    pthread_cond_broadcast(&jb->g->cv);
    while (!jb->g->open)
        pthread_cond_wait(&jb->g->cv, &jb->g->mu);
    jb->runs++;
    jb->g->ran++;
    pthread_mutex_unlock(&jb->g->mu);
}

static void wait_started(gate *g, int n)
{
    pthread_mutex_lock(&g->mu);
    while (g->started < n)
        pthread_cond_wait(&g->cv, &g->mu);
    pthread_mutex_unlock(&g->mu);
}

static void test_full_then_drains(void **state)
{
    (void)state;
    gate g = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    serve_pool *p = serve_pool_new(2, 3);
    assert_non_null(p);
    job jobs[6];
    memset(jobs, 0, sizeof jobs);
    for (int i = 0; i < 6; i++) {
        jobs[i].j.fn = held;
        jobs[i].g = &g;
    }
    for (int i = 0; i < 5; i++)
        assert_int_equal(serve_pool_submit(p, &jobs[i].j), 0);
    wait_started(&g, 2);
    unsigned running, queued;
    serve_pool_load(p, &running, &queued);
    assert_int_equal(running, 2);
    assert_int_equal(queued, 3);
    /* 2 running + 3 queued: full */
    assert_int_equal(serve_pool_submit(p, &jobs[5].j), -1);
    pthread_mutex_lock(&g.mu);
    g.open = 1;
    pthread_cond_broadcast(&g.cv);
    pthread_mutex_unlock(&g.mu);
    serve_pool_stop(p); /* runs what was queued */
    assert_int_equal(g.ran, 5);
    for (int i = 0; i < 5; i++)
        assert_int_equal(jobs[i].runs, 1);
    assert_int_equal(jobs[5].runs, 0);
    /* stopped: refuses */
    assert_int_equal(serve_pool_submit(p, &jobs[5].j), -1);
    serve_pool_free(p);
}

static void test_zero_queue(void **state)
{
    (void)state;
    gate g = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    serve_pool *p = serve_pool_new(1, 0);
    assert_non_null(p);
    job a = {.j.fn = held, .g = &g}, b = {.j.fn = held, .g = &g};
    assert_int_equal(serve_pool_submit(p, &a.j), 0);
    wait_started(&g, 1);
    assert_int_equal(serve_pool_submit(p, &b.j), -1);
    pthread_mutex_lock(&g.mu);
    g.open = 1;
    pthread_cond_broadcast(&g.cv);
    pthread_mutex_unlock(&g.mu);
    serve_pool_free(p);
    assert_int_equal(a.runs, 1);
    assert_int_equal(b.runs, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_then_drains),
        cmocka_unit_test(test_zero_queue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
