/* pipeline/pipeline.c - the shared placement loop: filter a batch of
 * candidates through the profile's filters, score the survivors, normalise,
 * combine (weighted sum or lexicographic), break ties, reserve. Every
 * domain's decisions go through berth_pipeline_pick. */
#include "berth/pipeline.h"
#include "berth/error.h"
#include "berth/pool.h"
#include "core/invariant.h"

#include <stdlib.h>
#include <string.h>

/* per chunk of a parallel filter: reject counts, unresolvable, kept */
#define CHUNK_SLOTS (BERTH_MAX_PLUGINS + 2)

int berth_cycle_init(berth_cycle *c, uint32_t cap, uint32_t max_scores, uint64_t seed)
{
    memset(c, 0, sizeof *c);
    if (cap == 0)
        cap = 1;
    if (max_scores == 0)
        max_scores = 1;
    c->cap = cap;
    c->cand = malloc(cap * sizeof *c->cand);
    c->verdict = malloc(cap);
    c->feasible = malloc(cap * sizeof *c->feasible);
    c->scores = malloc((size_t)cap * max_scores * sizeof *c->scores);
    c->total = malloc(cap * sizeof *c->total);
    c->ties = malloc(cap * sizeof *c->ties);
    c->first_reject = calloc(cap, 1);
    c->reject_mask = calloc(cap, sizeof *c->reject_mask);
    berth_rng_seed(&c->rng, seed);
    if (!c->cand || !c->verdict || !c->feasible || !c->scores || !c->total || !c->ties ||
        !c->first_reject || !c->reject_mask) {
        berth_cycle_free(c);
        return BERTH_ENOMEM;
    }
    return 0;
}

int berth_cycle_set_pool(berth_cycle *c, struct berth_pool *pool)
{
    if (pool && !c->chunk_scratch) {
        c->chunk_scratch = malloc(((size_t)c->cap / BERTH_PAR_CHUNK + 1) * CHUNK_SLOTS *
                                  sizeof *c->chunk_scratch);
        if (!c->chunk_scratch)
            return BERTH_ENOMEM;
    }
    c->pool = pool;
    return 0;
}

void berth_cycle_free(berth_cycle *c)
{
    free(c->cand);
    free(c->verdict);
    free(c->feasible);
    free(c->scores);
    free(c->total);
    free(c->ties);
    free(c->first_reject);
    free(c->reject_mask);
    free(c->chunk_scratch);
    memset(c, 0, sizeof *c);
}

/* tot[i] += w * col[i] for i < n, four at a time where the compiler has
 * vector types (-O2 does not vectorise the plain loop). */
static void add_weighted(int64_t *restrict tot, const int64_t *restrict col, int64_t w,
                         uint32_t n)
{
    uint32_t i = 0;
#if defined(__GNUC__)
    typedef int64_t v4 __attribute__((vector_size(32)));
    for (; i + 4 <= n; i += 4) {
        v4 a, b;
        memcpy(&a, tot + i, sizeof a);
        memcpy(&b, col + i, sizeof b);
        a += b * w;
        memcpy(tot + i, &a, sizeof a);
    }
#endif
    for (; i < n; i++)
        tot[i] += w * col[i];
}

/* Whether v[0..n) are all BERTH_FIT (0): 32 bytes a step. */
static int all_fit(const uint8_t *v, uint32_t n)
{
    uint64_t any = 0;
    uint32_t i = 0;
    for (; i + 32 <= n; i += 32) {
        uint64_t w[4];
        memcpy(w, v + i, sizeof w);
        any |= w[0] | w[1] | w[2] | w[3];
    }
    for (; i < n; i++)
        any |= v[i];
    return any == 0;
}

/* Filters cand[0..n) in place with verdict[0..n) as scratch, counting
 * rejections into reject_count[] and *unresolvable; returns the survivors'
 * count. Touches per-candidate arrays only at cand[0..n)'s ids, so chunks
 * of one batch may run at once. */
static uint32_t filter_span(const berth_profile *p, void *state, const void *req,
                            const berth_cycle *c, uint32_t *cand, uint32_t n, uint8_t *verdict,
                            uint32_t *reject_count, uint32_t *unresolvable)
{
    if (c->all_filters) {
        for (uint32_t i = 0; i < n; i++)
            c->reject_mask[cand[i]] = 0;
        for (uint32_t f = 0; f < p->nfilters && n; f++) {
            memset(verdict, BERTH_FIT, n);
            p->filters[f]->filter(state, req, cand, n, verdict);
            if (all_fit(verdict, n))
                continue; /* the common case: nothing to record */
            for (uint32_t i = 0; i < n; i++) {
                BERTH_ASSERT(cand[i] < c->cap && verdict[i] <= BERTH_UNRESOLVABLE);
                if (verdict[i] == BERTH_FIT)
                    continue;
                if (!c->reject_mask[cand[i]]) {
                    if (f < BERTH_MAX_PLUGINS)
                        reject_count[f]++;
                    if (verdict[i] == BERTH_UNRESOLVABLE)
                        (*unresolvable)++;
                    if (c->explain)
                        c->first_reject[cand[i]] = (uint8_t)(f + 1);
                }
                c->reject_mask[cand[i]] |= 1u << (f & 31);
            }
        }
        uint32_t k = 0;
        for (uint32_t i = 0; i < n; i++)
            if (!c->reject_mask[cand[i]])
                cand[k++] = cand[i];
        return k;
    }
    for (uint32_t f = 0; f < p->nfilters && n; f++) {
        memset(verdict, BERTH_FIT, n);
        p->filters[f]->filter(state, req, cand, n, verdict);
        if (all_fit(verdict, n))
            continue;
        uint32_t k = 0;
        for (uint32_t i = 0; i < n; i++) {
            if (verdict[i] == BERTH_FIT) {
                cand[k++] = cand[i];
                continue;
            }
            if (f < BERTH_MAX_PLUGINS)
                reject_count[f]++;
            if (verdict[i] == BERTH_UNRESOLVABLE)
                (*unresolvable)++;
            if (c->explain && cand[i] < c->cap)
                c->first_reject[cand[i]] = (uint8_t)(f + 1);
        }
        n = k;
    }
    return n;
}

/* ---- parallel chunks (berth_cycle.pool) ---- */

typedef struct par_job {
    const berth_profile *p;
    void *state;
    const void *req;
    berth_cycle *c;
    uint32_t *cand;
    uint32_t n;
    uint32_t score;          /* score jobs: the profile's score plugin count */
    int64_t *out;
} par_job;

static void filter_chunk(void *ctx, uint32_t k)
{
    par_job *j = ctx;
    uint32_t lo = k * BERTH_PAR_CHUNK, len = j->n - lo < BERTH_PAR_CHUNK ? j->n - lo : BERTH_PAR_CHUNK;
    uint32_t *slot = j->c->chunk_scratch + (size_t)k * CHUNK_SLOTS;
    memset(slot, 0, CHUNK_SLOTS * sizeof *slot);
    slot[BERTH_MAX_PLUGINS + 1] = filter_span(j->p, j->state, j->req, j->c, j->cand + lo, len,
                                              j->c->verdict + lo, slot, slot + BERTH_MAX_PLUGINS);
}

/* Chunk k of every per_node score plugin (j->score of them, columns of
 * j->c->cap in j->out). */
static void score_chunk(void *ctx, uint32_t k)
{
    par_job *j = ctx;
    uint32_t lo = k * BERTH_PAR_CHUNK, len = j->n - lo < BERTH_PAR_CHUNK ? j->n - lo : BERTH_PAR_CHUNK;
    for (uint32_t s = 0; s < j->score; s++)
        if (j->p->scores[s]->per_node)
            j->p->scores[s]->score(j->state, j->req, j->cand + lo, len,
                                   j->out + (size_t)s * j->c->cap + lo);
}

static uint32_t nchunks_of(uint32_t n)
{
    return (n + BERTH_PAR_CHUNK - 1) / BERTH_PAR_CHUNK;
}

/* Whether a batch of n goes to the pool (profile->prepare then ran). */
static int go_parallel(const berth_profile *p, void *state, const void *req, berth_cycle *c,
                       const uint32_t *cand, uint32_t n)
{
    return c->pool && p->prepare && n >= BERTH_PAR_MIN && c->chunk_scratch &&
           p->prepare(state, req, cand, n) == 0;
}

/* Filters cand[0..n) in place; returns the survivors' count. */
static uint32_t run_filters(const berth_profile *p, void *state, const void *req, berth_cycle *c,
                            uint32_t *cand, uint32_t n)
{
    if (!go_parallel(p, state, req, c, cand, n))
        return filter_span(p, state, req, c, cand, n, c->verdict, c->reject_count,
                           &c->unresolvable);
    par_job j = {p, state, req, c, cand, n, 0, NULL};
    uint32_t nch = nchunks_of(n);
    berth_pool_run(c->pool, nch, filter_chunk, &j);
    /* merge in chunk order: survivors compacted, counts summed */
    uint32_t kept = 0;
    for (uint32_t k = 0; k < nch; k++) {
        const uint32_t *slot = c->chunk_scratch + (size_t)k * CHUNK_SLOTS;
        for (uint32_t f = 0; f < BERTH_MAX_PLUGINS; f++)
            c->reject_count[f] += slot[f];
        c->unresolvable += slot[BERTH_MAX_PLUGINS];
        uint32_t got = slot[BERTH_MAX_PLUGINS + 1];
        memmove(cand + kept, cand + (size_t)k * BERTH_PAR_CHUNK, got * sizeof *cand);
        kept += got;
    }
    return kept;
}

/* Every per_node score plugin over the feasible batch into its column, in
 * one run on the pool: each chunk scores its candidates with each such
 * plugin (their scores read the node and the pod only, never another
 * plugin's column, so running them before the others' Score and
 * NormalizeScore changes nothing). One run per pod instead of one per
 * plugin: fewer wake-ups and hand-offs for the same work. */
static void run_per_node_scores(const berth_profile *p, void *state, const void *req,
                                berth_cycle *c, uint32_t n)
{
    par_job jb = {p, state, req, c, c->feasible, n, p->nscores, c->scores};
    berth_pool_run(c->pool, nchunks_of(n), score_chunk, &jb);
}

/* Filters with an early stop after max_feasible survivors: the batch is
 * filtered in chunks, survivors compacted to the front. */
static uint32_t run_filters_limited(const berth_profile *p, void *state, const void *req,
                                    berth_cycle *c, uint32_t *cand, uint32_t n,
                                    uint32_t *examined)
{
    if (!c->max_feasible || c->max_feasible >= n) {
        *examined = n;
        return run_filters(p, state, req, c, cand, n);
    }
    enum { chunk = 256 };
    uint32_t saved[chunk];
    uint32_t kept = 0, i = 0;
    while (i < n && kept < c->max_feasible) {
        uint32_t len = n - i < chunk ? n - i : chunk;
        /* move the chunk next to the survivors, filter it there */
        memmove(cand + kept, cand + i, len * sizeof *cand);
        memcpy(saved, cand + kept, len * sizeof *cand);
        uint32_t got = run_filters(p, state, req, c, cand + kept, len);
        if (kept + got >= c->max_feasible) {
            /* stop at exactly max_feasible, as upstream: the examined
             * prefix ends at the last kept candidate */
            uint32_t last = cand[c->max_feasible - 1], j = 0;
            while (j < len && saved[j] != last)
                j++;
            BERTH_ASSERT(j < len); /* the last kept candidate came from this chunk */
            *examined = i + j + 1;
            return c->max_feasible;
        }
        i += len;
        kept += got;
    }
    *examined = i;
    return kept;
}

static int pick_rest(const berth_profile *p, void *state, const void *req, berth_cycle *c,
                     uint32_t n, berth_pick *out);

static int lex_compare(const berth_cycle *c, uint32_t nscores, uint32_t a, uint32_t b)
{
    for (uint32_t j = 0; j < nscores; j++) {
        int64_t x = c->scores[(size_t)j * c->cap + a], y = c->scores[(size_t)j * c->cap + b];
        if (x != y)
            return x > y ? 1 : -1;
    }
    return 0;
}

int berth_pipeline_pick(const berth_profile *p, void *state, const void *req, berth_cycle *c,
                        uint32_t ncand, int use_index, berth_pick *out)
{
    memset(out, 0, sizeof *out);
    out->chosen = BERTH_NO_CANDIDATE;
    memset(c->reject_count, 0, sizeof c->reject_count);
    c->unresolvable = 0;

    uint32_t n = 0;
    int narrowed = -1;
    if (use_index && p->narrow)
        narrowed = p->narrow(state, req, c->feasible, c->cap);
    if (narrowed >= 0) {
        if (NEVER((uint32_t)narrowed > c->cap)) /* narrow() must respect cap */
            return BERTH_EINTERNAL;
        n = (uint32_t)narrowed;
        out->used_index = 1;
    } else {
        if (ncand > c->cap)
            return BERTH_ELIMIT;
        n = ncand;
        for (uint32_t i = 0; i < n; i++)
            c->feasible[i] = i;
        if (c->explain)
            memset(c->first_reject, 0, c->cap);
    }
    return pick_rest(p, state, req, c, n, out);
}

int berth_pipeline_pick_batch(const berth_profile *p, void *state, const void *req,
                              berth_cycle *c, const uint32_t *cand, uint32_t n, berth_pick *out)
{
    memset(out, 0, sizeof *out);
    out->chosen = BERTH_NO_CANDIDATE;
    memset(c->reject_count, 0, sizeof c->reject_count);
    c->unresolvable = 0;
    if (n > c->cap)
        return BERTH_ELIMIT;
    memcpy(c->feasible, cand, n * sizeof *cand);
    if (c->explain)
        memset(c->first_reject, 0, c->cap);
    return pick_rest(p, state, req, c, n, out);
}

/* Filters the batch in c->feasible, scores, combines and picks. */
static int pick_rest(const berth_profile *p, void *state, const void *req, berth_cycle *c,
                     uint32_t n, berth_pick *out)
{
    uint32_t examined = n;
    n = run_filters_limited(p, state, req, c, c->feasible, n, &examined);
    BERTH_ASSERT(n <= examined && examined <= c->cap);
    out->examined = examined;
    out->nfeasible = n;
    if (n == 0)
        return 0;

    uint32_t ns = p->nscores;
    int par = 0;
    for (uint32_t j = 0; j < ns && !par; j++)
        par = p->scores[j]->per_node;
    par = par && go_parallel(p, state, req, c, c->feasible, n);
    if (par)
        run_per_node_scores(p, state, req, c, n);
    for (uint32_t j = 0; j < ns; j++) {
        int64_t *col = c->scores + (size_t)j * c->cap;
        if (!par || !p->scores[j]->per_node)
            p->scores[j]->score(state, req, c->feasible, n, col);
        if (p->combine == BERTH_COMBINE_SUM && p->scores[j]->normalize)
            p->scores[j]->normalize(state, req, col, n);
    }

    uint32_t nties = 0;
    if (p->combine == BERTH_COMBINE_SUM) {
        /* column by column (vectorised), each node's sum in plugin order */
        int64_t best = INT64_MIN, *restrict tot = c->total;
        for (uint32_t i = 0; i < n; i++)
            tot[i] = 0;
        for (uint32_t j = 0; j < ns; j++)
            add_weighted(tot, c->scores + (size_t)j * c->cap, p->weights ? p->weights[j] : 1, n);
        for (uint32_t i = 0; i < n; i++) {
            int64_t t = tot[i];
            if (t > best) {
                best = t;
                nties = 0;
            }
            if (t == best)
                c->ties[nties++] = i;
        }
    } else {
        c->ties[nties++] = 0;
        for (uint32_t i = 1; i < n; i++) {
            int cmp = lex_compare(c, ns, i, c->ties[0]);
            if (cmp > 0) {
                nties = 0;
                c->ties[nties++] = i;
            } else if (cmp == 0) {
                c->ties[nties++] = i;
            }
        }
        for (uint32_t i = 0; i < n; i++)
            c->total[i] = 0;
    }
    /* ties[] holds batch slots in candidate order only when the batch is in
     * candidate order; pick by candidate id to stay order-independent. */
    BERTH_ASSERT(nties >= 1 && nties <= n);
    uint32_t pickslot = c->ties[0];
    if (p->tiebreak == BERTH_TIE_RANDOM && nties > 1) {
        pickslot = c->ties[berth_rng_below(&c->rng, nties)];
    } else {
        for (uint32_t t = 1; t < nties; t++) {
            uint32_t s = c->ties[t];
            if (p->tiebreak == BERTH_TIE_LAST ? c->feasible[s] > c->feasible[pickslot]
                                              : c->feasible[s] < c->feasible[pickslot])
                pickslot = s;
        }
    }
    BERTH_ASSERT(pickslot < n && c->feasible[pickslot] < c->cap);
    out->chosen = c->feasible[pickslot];
    return 0;
}

int berth_pipeline_place(const berth_profile *p, void *state, const void *req, berth_cycle *c,
                         uint32_t ncand, int use_index, berth_pick *out)
{
    int rc = berth_pipeline_pick(p, state, req, c, ncand, use_index, out);
    if (rc)
        return rc;
    if (out->chosen == BERTH_NO_CANDIDATE)
        return BERTH_ENOFIT;
    if (p->reserve)
        return p->reserve(state, req, out->chosen);
    return 0;
}
