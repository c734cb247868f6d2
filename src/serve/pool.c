/* serve/pool.c - bounded worker pools of `berth serve`: a fixed number of
 * threads taking jobs from a FIFO whose length is capped, so a request
 * that would exceed the pool is refused at once (503 with Retry-After in
 * http.c) instead of queueing without bound. Jobs are intrusive (the
 * caller's serve_job): submitting allocates nothing. */
#include "serve/serve.h"

#include <pthread.h>
#include <stdlib.h>

struct serve_pool {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    serve_job *head, *tail;
    unsigned nthreads, started, max_queue, queued, running;
    int stop;
    pthread_t *th;
};

static void *pool_main(void *arg)
{
    serve_pool *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->head && !p->stop)
            pthread_cond_wait(&p->cv, &p->mu);
        if (!p->head)
            break; /* stopping and drained */
        serve_job *j = p->head;
        p->head = j->next;
        if (!p->head)
            p->tail = NULL;
        p->queued--;
        p->running++;
        pthread_mutex_unlock(&p->mu);
        j->fn(j);
        pthread_mutex_lock(&p->mu);
        p->running--;
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

serve_pool *serve_pool_new(unsigned threads, unsigned max_queue)
{
    serve_pool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->nthreads = threads ? threads : 1;
    p->max_queue = max_queue;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->th = calloc(p->nthreads, sizeof *p->th);
    if (!p->th) {
        serve_pool_free(p);
        return NULL;
    }
    for (; p->started < p->nthreads; p->started++)
        if (pthread_create(&p->th[p->started], NULL, pool_main, p)) {
            serve_pool_free(p);
            return NULL;
        }
    return p;
}

int serve_pool_submit(serve_pool *p, serve_job *j)
{
    pthread_mutex_lock(&p->mu);
    /* full: every thread busy and the queue at its cap */
    if (p->stop || p->running + p->queued >= p->nthreads + p->max_queue) {
        pthread_mutex_unlock(&p->mu);
        return -1;
    }
    j->next = NULL;
    if (p->tail)
        p->tail->next = j;
    else
        p->head = j;
    p->tail = j;
    p->queued++;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return 0;
}

void serve_pool_load(serve_pool *p, unsigned *running, unsigned *queued)
{
    pthread_mutex_lock(&p->mu);
    *running = p->running;
    *queued = p->queued;
    pthread_mutex_unlock(&p->mu);
}

void serve_pool_stop(serve_pool *p)
{
    pthread_mutex_lock(&p->mu);
    int joined = p->stop == 2;
    p->stop = 1; /* refuse new jobs; the threads finish the queued ones */
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    if (joined)
        return;
    for (unsigned i = 0; i < p->started; i++)
        pthread_join(p->th[i], NULL);
    pthread_mutex_lock(&p->mu);
    p->stop = 2;
    pthread_mutex_unlock(&p->mu);
}

void serve_pool_free(serve_pool *p)
{
    if (!p)
        return;
    serve_pool_stop(p);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p->th);
    free(p);
}
