/* disrupt/parallel.c - speculative candidate evaluation for one pass
 * (docs/disrupt.md "Threads"): the worker contexts (the plan's own
 * disrupt_state for question 0 of a batch, and for questions 1.. a shallow
 * copy of it each with its own what-if session, scratch and counting
 * certificate) and the batch runs of computeConsolidation questions on a
 * pool of the plan's threads, one chunk per question; the probe tree of
 * the parallel binary search.
 *
 * What a question mutates, per worker: the session (ks, ks_base), the
 * simulation scratch (sim_moving, sim_placed), the usable options of the
 * question (opt_use), the limits of the question (lim_q, lim_round), the
 * certificate's classes and marks (cert), cancel_tick and unplaced. What
 * every worker shares read only: the node view, indexes, allowances, the
 * options and their hypothetical nodes (built before the first batch by
 * disrupt_options_ready on the plan's state), the rejects, the limits'
 * usage (lim_used), the model and its kube cluster (distinct sessions over
 * one cluster may run at once: berth/kube.h). A worker's session is opened
 * on its first question as the plan's own is (disrupt_session: deleting
 * and expired nodes excluded, their pods evicted, the base mark after),
 * so every worker answers a question exactly as the plan's state would;
 * the session is rolled back to its base after each question.
 *
 * Question 0 runs on the plan's own state (its session and certificate,
 * opened anyway for the other steps), so T threads cost T - 1 more
 * sessions; its session's per-node loops and its certificate keep their
 * own pools (distinct pools may run at once; they matter only for the full
 * pipeline over 1,024 candidates or more and the certificate's scan).
 *
 * Threads: the plan's thread drives the batches; chunk i of a batch runs
 * question i on its context only (0: the plan's state, i: worker i - 1)
 * and writes only its slot and that context. */
#include "disrupt/state.h"
#include "berth/pool.h"

#include <stdlib.h>
#include <string.h>

struct disrupt_workers {
    berth_pool *pool;
    disrupt_state *s;           /* the plan's state: question 0 */
    disrupt_state *w;           /* questions 1..: per worker */
    uint32_t nw;
    disrupt_question *q;        /* the batch being run */
};

int disrupt_par_on(const disrupt_state *s)
{
    return s->threads > 1 && !s->reference && s->nn >= BERTH_PAR_MIN;
}

static void worker_free(disrupt_state *w)
{
    if (w->ks)
        berth_ksession_close(w->ks);
    free(w->sim_moving);
    free(w->sim_placed);
    free(w->opt_use);
    free(w->lim_q);
    free(w->lim_round);
    disrupt_cert_free(w);
}

void disrupt_workers_free(disrupt_state *s)
{
    struct disrupt_workers *x = s->workers;
    if (!x)
        return;
    for (uint32_t i = 0; i < x->nw; i++)
        worker_free(&x->w[i]);
    free(x->w);
    berth_pool_destroy(x->pool);
    free(x);
    s->workers = NULL;
}

/* s->workers with s->threads worker contexts over s (built on first use). */
static int workers_ready(disrupt_state *s)
{
    if (s->workers)
        return 0;
    int rc = disrupt_options_ready(s);
    if (rc)
        return rc;
    struct disrupt_workers *x = calloc(1, sizeof *x);
    if (!x)
        return BERTH_ENOMEM;
    s->workers = x;
    x->s = s;
    uint32_t T = s->threads;
    if (!(x->w = calloc(T > 1 ? T - 1 : 1, sizeof *x->w))) /* question 0: the plan's state */
        return BERTH_ENOMEM;
    for (uint32_t i = 0; i + 1 < T; i++) {
        disrupt_state *w = &x->w[i];
        *w = *s;
        w->workers = NULL;
        w->threads = 1; /* the pool runs questions, not per-node loops */
        w->ks = NULL;
        w->ks_base = 0;
        w->cancel_tick = 0;
        w->sim_moving = w->sim_placed = NULL;
        w->unplaced = 0;
        w->cert = NULL;
        w->in_head = w->in_next = NULL;
        w->opt_use = malloc(s->nopts + 1);
        w->lim_q = calloc(s->nlim + 1, sizeof *w->lim_q);
        w->lim_round = calloc(s->nlim + 1, sizeof *w->lim_round);
        x->nw = i + 1;
        if (!w->opt_use || !w->lim_q || !w->lim_round)
            return BERTH_ENOMEM;
    }
    /* BERTH_EINTERNAL (no thread could start): every chunk in the caller */
    rc = berth_pool_create(&x->pool, T);
    return rc == BERTH_ENOMEM ? rc : 0;
}

uint32_t disrupt_par_width(const disrupt_state *s)
{
    return s->threads;
}

static void question_chunk(void *ctx, uint32_t i)
{
    struct disrupt_workers *x = ctx;
    disrupt_question *q = &x->q[i];
    disrupt_state *w = i ? &x->w[i - 1] : x->s;
    uint64_t u0 = w->unplaced;
    q->why[0] = 0;
    q->res = 0;
    q->rc = disrupt_consolidate(w, q->cands, q->nc, q->multi, &q->r, q->why, sizeof q->why,
                                &q->res);
    q->unplaced = w->unplaced - u0;
    w->unplaced = u0; /* the caller counts the answers it takes */
}

int disrupt_consolidate_many(disrupt_state *s, disrupt_question *q, uint32_t nq)
{
    int rc = workers_ready(s);
    if (rc)
        return rc;
    struct disrupt_workers *x = s->workers;
    if (nq > x->nw + 1)
        return BERTH_EINTERNAL;
    x->q = q;
    berth_pool_run(x->pool, nq, question_chunk, x);
    x->q = NULL;
    return 0;
}

uint32_t disrupt_probe_depth(uint32_t threads)
{
    uint32_t d = 0;
    while (d < DISRUPT_PROBE_DEPTH_MAX && (1u << (d + 1)) - 1 <= threads)
        d++;
    return d;
}

void disrupt_probes_plan(disrupt_probes *t, uint32_t depth, uint32_t lo, uint32_t hi)
{
    t->np = (1u << depth) - 1;
    t->nq = 0;
    for (uint32_t k = 0; k < t->np; k++) {
        t->slot[k] = -1;
        if (!k) {
            t->lo[0] = lo;
            t->hi[0] = hi;
        } else {
            uint32_t p = (k - 1) / 2;
            if (t->slot[p] < 0)
                continue;
            uint32_t pm = (t->lo[p] + t->hi[p]) / 2;
            if (k == 2 * p + 1) { /* the parent failed: [lo, mid - 1] */
                if (!pm)
                    continue; /* the sequential search stops there */
                t->lo[k] = t->lo[p];
                t->hi[k] = pm - 1;
            } else { /* it worked: [mid + 1, hi] */
                t->lo[k] = pm + 1;
                t->hi[k] = t->hi[p];
            }
            if (t->lo[k] > t->hi[k])
                continue;
        }
        t->mid[t->nq] = (t->lo[k] + t->hi[k]) / 2;
        t->slot[k] = (int)t->nq++;
    }
}

uint32_t disrupt_probes_walk(const disrupt_probes *t, const int *ok, uint32_t *taken)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < t->np && t->slot[k] >= 0;) {
        uint32_t q = (uint32_t)t->slot[k];
        taken[n++] = q;
        k = ok[q] ? 2 * k + 2 : 2 * k + 1;
    }
    return n;
}
