/* autoscale/parallel.c - scale-down's candidates evaluated speculatively
 * on the plan's threads (docs/autoscale.md "Threads"): the worker
 * contexts, each a what-if session of its own (with its own fit index when
 * the plan's has one, and an arena for the scheduler's texts), opened as
 * the plan's is in capacity_scale_down (the pods bound where the pass
 * found them, the removed nodes excluded) and brought to the plan's state
 * by replaying the removals accepted before it opened; the runs of a
 * wave's questions and of a removal's replay on a pool of the plan's
 * threads (berth/pool.h), chunk i on context i (0: the plan's own).
 *
 * A wave (scaledown.c): the next candidates' checks in order on the plan's
 * thread (they read what an acceptance changes), the what-if questions of
 * up to `width` candidates that pass them at once, the answers taken in
 * candidate order: a rejection is exact (nothing changed before it), the
 * first acceptance is exact and committed, the answers after it are
 * dropped (rolled back on their contexts) and asked again in the next
 * wave. So the plan is the sequential one for every thread count. After an
 * acceptance every other context replays it (its pods leave the node, the
 * node is excluded, each moved pod is assumed where it was placed, the fit
 * index touched), at once on the pool, instead of reopening.
 *
 * The rule (sd_width): the first SD_WARMUP questions alone; then a wave is
 * 1 + (rejections in a row) questions wide, at most the threads. The walk
 * goes least utilised first, so its accepted candidates come in runs
 * (nearly empty nodes first) and its rejections too (the fuller nodes
 * later): after an acceptance the next answer is likely an acceptance as
 * well, and a wider wave would mostly ask questions that are dropped (each
 * one also costs a rollback); after rejections it is likely a rejection,
 * and every rejection in a wave is kept. The workers open at the first
 * wave wider than one (the price, O(nodes + pods) per worker, is paid only
 * by walks that reject).
 *
 * What a question mutates, per context: its session (and the undo log),
 * its fit index, its arena, its question slot (pods, placements and texts
 * in the wave's buffers at the question's own offset: the candidates are
 * distinct nodes, so their pods are too). What every context reads only:
 * the model and its kube cluster (the pod table included: distinct
 * sessions over one cluster may run at once, berth/kube.h) and the cancel
 * deadline. The pass itself (requests, group counts,
 * PDB budgets, the plan) is written by the plan's thread only, between
 * runs. If a worker or the pool cannot be had, the walk stays sequential
 * (the same answers); a worker that runs out of memory later (a question,
 * a rollback, a replay) closes the workers and the walk goes on
 * sequentially from there (scaledown.c). */
#include "autoscale/scaledown.h"
#include "berth/pool.h"

#include <stdlib.h>
#include <string.h>

typedef struct sd_worker {
    sd_ctx c;
    berth_arena arena;
    int rc;                     /* open or replay */
} sd_worker;

struct sd_workers {
    berth_pool *pool;
    sd_worker *w;
    uint32_t nw;
    /* the run in progress */
    capacity_pass *s;
    const uint32_t *pn;
    uint32_t down0;
    sd_ctx *plan;
    const berth_kcluster *k;
    sd_question *q;
    uint32_t skip, node, nmoves;
    const berth_amove *moves;
    int plan_rc;
};

int sd_par_on(const capacity_pass *s)
{
    return s->threads > 1 && !s->reference && s->m->kube.nnodes >= BERTH_PAR_MIN;
}

uint32_t sd_width(uint32_t run, uint32_t T)
{
    return run + 1 < T ? run + 1 : T;
}

sd_ctx *sd_workers_ctx(sd_workers *x, sd_ctx *plan, uint32_t i)
{
    return i && x && i <= x->nw ? &x->w[i - 1].c : plan;
}

void sd_workers_close(sd_workers *x)
{
    if (!x)
        return;
    berth_pool_destroy(x->pool);
    for (uint32_t i = 0; i < x->nw; i++) {
        kube_fitidx_close(x->w[i].c.fx);
        berth_ksession_close(x->w[i].c.ks);
        berth_arena_free(&x->w[i].arena);
    }
    free(x->w);
    free(x);
}

/* chunk i: worker i opened as the plan's session was, then the removals
 * accepted so far */
static void open_chunk(void *ctx, uint32_t i)
{
    struct sd_workers *x = ctx;
    sd_worker *w = &x->w[i];
    capacity_pass *s = x->s;
    const berth_kcluster *k = &s->m->kube;
    berth_error se;
    berth_error_clear(&se);
    if ((w->rc = berth_ksession_open(&w->c.ks, k, x->pn, 0, NULL, &se)))
        return;
    berth_ksession_set_cancel(w->c.ks, s->cancel);
    /* the removed nodes: before the pass's scale-down and the ones it
     * took (excluded again by their replay: no change) */
    for (uint32_t n = 0; n < s->nexisting; n++)
        if (s->n[n].removed)
            berth_ksession_exclude(w->c.ks, n, 1);
    if (w->c.seq_ok && (w->rc = kube_fitidx_open(&w->c.fx, w->c.ks)))
        return;
    const berth_aplan *p = s->plan;
    for (uint32_t d = x->down0; d < p->ndown && !w->rc; d++)
        w->rc = sd_replay(&w->c, p->down[d].node, p->down[d].moves, p->down[d].nmoves);
}

int sd_workers_open(sd_workers **out, capacity_pass *s, uint32_t T, const sd_ctx *plan,
                    const uint32_t *pn, uint32_t down0)
{
    *out = NULL;
    if (T < 2)
        return 0;
    struct sd_workers *x = calloc(1, sizeof *x);
    if (!x)
        return 0;
    if (!(x->w = calloc(T - 1, sizeof *x->w)) || berth_pool_create(&x->pool, T) || !x->pool) {
        sd_workers_close(x);
        return 0; /* no workers: the sequential walk */
    }
    x->nw = T - 1;
    for (uint32_t i = 0; i < x->nw; i++) {
        berth_arena_init(&x->w[i].arena, 0);
        x->w[i].c.arena = &x->w[i].arena;
        x->w[i].c.cancel = plan->cancel;
        x->w[i].c.seq_ok = plan->seq_ok;
    }
    x->s = s;
    x->pn = pn;
    x->down0 = down0;
    berth_pool_run(x->pool, x->nw, open_chunk, x);
    int rc = 0;
    for (uint32_t i = 0; i < x->nw; i++) {
        int w = x->w[i].rc;
        if (w == BERTH_ENOMEM || (!w && plan->fx && !x->w[i].c.fx))
            rc = rc ? rc : 1; /* out of memory: no workers, the sequential walk */
        else if (w)
            rc = w; /* a replay out of step with the plan: a defect, not a fallback */
    }
    if (rc) {
        sd_workers_close(x);
        return rc == 1 ? 0 : rc;
    }
    *out = x;
    return 0;
}

int sd_workers_broken(const sd_workers *x)
{
    for (uint32_t i = 0; x && i < x->nw; i++)
        if (x->w[i].rc)
            return 1;
    return 0;
}

int sd_workers_defect(const sd_workers *x)
{
    for (uint32_t i = 0; x && i < x->nw; i++)
        if (x->w[i].rc && x->w[i].rc != BERTH_ENOMEM)
            return x->w[i].rc;
    return 0;
}

static void ask_chunk(void *ctx, uint32_t i)
{
    struct sd_workers *x = ctx;
    sd_whatif(sd_workers_ctx(x, x->plan, i), x->k, &x->q[i]);
}

void sd_workers_ask(sd_workers *x, sd_ctx *plan, const berth_kcluster *k, sd_question *q,
                    uint32_t nq)
{
    x->plan = plan;
    x->k = k;
    x->q = q;
    berth_pool_run(x->pool, nq, ask_chunk, x);
    x->q = NULL;
}

/* (the fit index's position too: no retouch goes back past the removal,
 * so its change log may drop what came before) */
static void commit_ctx(sd_ctx *c)
{
    berth_ksession_commit(c->ks);
    if (c->fx)
        (void)kube_fitidx_pos(c->fx);
}

void sd_workers_commit(sd_workers *x, sd_ctx *plan)
{
    commit_ctx(plan);
    for (uint32_t i = 0; x && i < x->nw; i++)
        if (x->w[i].c.ks)
            commit_ctx(&x->w[i].c);
}

static void replay_chunk(void *ctx, uint32_t i)
{
    struct sd_workers *x = ctx;
    if (i == x->skip)
        return;
    int rc = sd_replay(sd_workers_ctx(x, x->plan, i), x->node, x->moves, x->nmoves);
    if (i)
        x->w[i - 1].rc = rc;
    else
        x->plan_rc = rc;
}

int sd_workers_replay(sd_workers *x, sd_ctx *plan, uint32_t skip, uint32_t node,
                      const berth_amove *moves, uint32_t nmoves)
{
    x->plan = plan;
    x->skip = skip;
    x->node = node;
    x->moves = moves;
    x->nmoves = nmoves;
    x->plan_rc = 0;
    berth_pool_run(x->pool, x->nw + 1, replay_chunk, x);
    return x->plan_rc; /* a worker's failure: sd_workers_broken */
}
