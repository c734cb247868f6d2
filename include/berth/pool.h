/* berth/pool.h - a small pool of worker threads for the placement
 * framework's per-candidate loops (filter and score over chunks of
 * candidates), in the manner of kube-scheduler's Parallelizer
 * (pkg/scheduler/framework/parallelize/parallelism.go: Until over
 * "pieces"; schedule_one.go findNodesThatPassFilters and prioritizeNodes).
 *
 * A pool is created once per run (a scheduling loop, a what-if session)
 * with nthreads - 1 workers; the caller is the n-th thread and takes
 * chunks too. berth_pool_run(pool, nchunks, fn, ctx) calls fn(ctx, i) once
 * for every chunk i in [0, nchunks), on any of the threads, and returns
 * when every call has returned (their writes are then visible to the
 * caller). Which thread runs which chunk varies from run to run; callers
 * that want the same answer for every thread count give each chunk its own
 * output slot and merge the slots in chunk order (the pipeline and the kube
 * fast path do; docs/kube.md "Threads"). Chunk boundaries must depend on
 * the work only, never on the thread count.
 *
 * Between runs the workers spin briefly (5 us: a run that follows at once,
 * such as the score run after the filter run of one pod, starts without a
 * wake-up) and then sleep on a condition variable, so a pool whose owner
 * starts no run costs no CPU; a run never allocates.
 *
 * Threads: a pool is driven by one thread at a time (its owner); fn runs
 * concurrently with itself and must only read shared state and write its
 * chunk's slots. A NULL pool runs every chunk in the caller, in order. */
#ifndef BERTH_POOL_H
#define BERTH_POOL_H

#include <stdint.h>

typedef struct berth_pool berth_pool;
typedef void (*berth_pool_fn)(void *ctx, uint32_t chunk);

/* The number of online processors (at least 1): the CLI's default
 * --threads. */
uint32_t berth_threads_online(void);

/* A pool of nthreads threads in all (the caller and nthreads - 1
 * workers). nthreads <= 1 gives *out = NULL (every run in the caller) and
 * returns 0. Returns 0 or BERTH_ENOMEM / BERTH_EINTERNAL (a thread could
 * not be started; nothing is left running). */
int berth_pool_create(berth_pool **out, uint32_t nthreads);
/* Stops and joins the workers (NULL: nothing). */
void berth_pool_destroy(berth_pool *p);
/* Threads in all (1 for NULL). */
uint32_t berth_pool_threads(const berth_pool *p);
/* Runs fn(ctx, i) for i in [0, nchunks) (see above). */
void berth_pool_run(berth_pool *p, uint32_t nchunks, berth_pool_fn fn, void *ctx);

#endif
