/* pipeline/pool.c - the worker pool behind the framework's parallel
 * per-candidate loops (berth/pool.h): workers created once, a run claims
 * chunks through one atomic word (generation << 32 | next chunk), so a
 * worker that wakes late for a finished run claims nothing of the next one;
 * the caller works too and waits for the chunks' completion count. Workers
 * spin for a short while after a run, then sleep on a condition variable. */
#include "berth/pool.h"
#include "berth/error.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* how long an idle worker polls for the next run before sleeping (short:
 * a late worker only takes fewer chunks, the caller never waits for it to
 * wake, while every microsecond polled is CPU taken from the caller's
 * neighbours), and how long the caller polls for the chunks other threads
 * are finishing before sleeping (at most about one chunk's work) */
#define POOL_IDLE_SPIN_NS 5000L
#define POOL_WAIT_SPIN_NS 50000L

struct berth_pool {
    pthread_mutex_t mu;
    pthread_cond_t start, done;
    _Atomic uint32_t gen;        /* generation of the current run */
    _Atomic uint64_t claim;      /* gen << 32 | next chunk */
    _Atomic uint32_t ndone;      /* chunks of the current run finished */
    berth_pool_fn fn;            /* the run's work, set under mu with gen */
    void *ctx;
    uint32_t nchunks;
    uint32_t sleepers;           /* workers waiting on start (under mu) */
    int quit;                    /* under mu */
    uint32_t nworkers;
    pthread_t *tid;
};

uint32_t berth_threads_online(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (uint32_t)n : 1;
}

static long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Claims and runs chunks of generation g until none is left. */
static void work(berth_pool *p, uint32_t g, berth_pool_fn fn, void *ctx, uint32_t n)
{
    for (;;) {
        uint64_t c = atomic_load_explicit(&p->claim, memory_order_relaxed);
        do {
            if ((uint32_t)(c >> 32) != g || (uint32_t)c >= n)
                return;
        } while (!atomic_compare_exchange_weak_explicit(&p->claim, &c, c + 1,
                                                        memory_order_acquire,
                                                        memory_order_relaxed));
        fn(ctx, (uint32_t)c);
        if (atomic_fetch_add_explicit(&p->ndone, 1, memory_order_acq_rel) + 1 == n) {
            pthread_mutex_lock(&p->mu);
            pthread_cond_signal(&p->done);
            pthread_mutex_unlock(&p->mu);
        }
    }
}

static void *worker(void *arg)
{
    berth_pool *p = arg;
    uint32_t seen = atomic_load_explicit(&p->gen, memory_order_acquire);
    for (;;) {
        long t0 = now_ns();
        for (uint32_t i = 1; atomic_load_explicit(&p->gen, memory_order_acquire) == seen; i++) {
            cpu_relax();
            if (!(i & 63) && now_ns() - t0 > POOL_IDLE_SPIN_NS)
                break;
        }
        pthread_mutex_lock(&p->mu);
        while (atomic_load_explicit(&p->gen, memory_order_acquire) == seen && !p->quit) {
            p->sleepers++;
            pthread_cond_wait(&p->start, &p->mu);
            p->sleepers--;
        }
        if (p->quit) {
            pthread_mutex_unlock(&p->mu);
            return NULL;
        }
        seen = atomic_load_explicit(&p->gen, memory_order_acquire);
        berth_pool_fn fn = p->fn;
        void *ctx = p->ctx;
        uint32_t n = p->nchunks;
        pthread_mutex_unlock(&p->mu);
        work(p, seen, fn, ctx, n);
    }
}

int berth_pool_create(berth_pool **out, uint32_t nthreads)
{
    *out = NULL;
    if (nthreads <= 1)
        return 0;
    berth_pool *p = calloc(1, sizeof *p);
    if (!p)
        return BERTH_ENOMEM;
    p->tid = calloc(nthreads - 1, sizeof *p->tid);
    if (!p->tid) {
        free(p);
        return BERTH_ENOMEM;
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->start, NULL);
    pthread_cond_init(&p->done, NULL);
    /* workers take no signals: they stay with the caller's threads */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    for (uint32_t i = 0; i + 1 < nthreads; i++) {
        if (pthread_create(&p->tid[i], NULL, worker, p) != 0)
            break;
        p->nworkers++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (p->nworkers + 1 < nthreads) {
        berth_pool_destroy(p);
        return BERTH_EINTERNAL;
    }
    *out = p;
    return 0;
}

void berth_pool_destroy(berth_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->quit = 1;
    pthread_cond_broadcast(&p->start);
    pthread_mutex_unlock(&p->mu);
    for (uint32_t i = 0; i < p->nworkers; i++)
        pthread_join(p->tid[i], NULL);
    pthread_cond_destroy(&p->start);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->mu);
    free(p->tid);
    free(p);
}

uint32_t berth_pool_threads(const berth_pool *p)
{
    return p ? p->nworkers + 1 : 1;
}

void berth_pool_run(berth_pool *p, uint32_t nchunks, berth_pool_fn fn, void *ctx)
{
    if (!p || nchunks <= 1) {
        for (uint32_t i = 0; i < nchunks; i++)
            fn(ctx, i);
        return;
    }
    pthread_mutex_lock(&p->mu);
    uint32_t g = atomic_load_explicit(&p->gen, memory_order_relaxed) + 1;
    p->fn = fn;
    p->ctx = ctx;
    p->nchunks = nchunks;
    atomic_store_explicit(&p->ndone, 0, memory_order_relaxed);
    atomic_store_explicit(&p->claim, (uint64_t)g << 32, memory_order_release);
    atomic_store_explicit(&p->gen, g, memory_order_release);
    if (p->sleepers)
        pthread_cond_broadcast(&p->start);
    pthread_mutex_unlock(&p->mu);
    work(p, g, fn, ctx, nchunks);
    if (atomic_load_explicit(&p->ndone, memory_order_acquire) == nchunks)
        return;
    long t0 = now_ns();
    for (uint32_t i = 1; atomic_load_explicit(&p->ndone, memory_order_acquire) != nchunks; i++) {
        cpu_relax();
        if (!(i & 63) && now_ns() - t0 > POOL_WAIT_SPIN_NS)
            break;
    }
    pthread_mutex_lock(&p->mu);
    while (atomic_load_explicit(&p->ndone, memory_order_acquire) != nchunks)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}
