/* berth/pipeline.h - the one placement framework every domain plugs into.
 *
 *   candidates -> filters (fit / unfit / unresolvable) -> scores ->
 *   normalise -> combine -> pick -> reserve
 *
 * A domain (nexus, kube, fleet, ...) supplies a berth_profile: a table of
 * filter and score plugins over its own state, how scores combine (a
 * weighted sum, as kube-scheduler; or lexicographic, as ranked rules), and
 * optionally an index ("narrow") that proposes a small batch of candidates
 * proven to contain the best one, so a pick need not scan the estate.
 * Plugins work on batches of candidate indices and read columns of hot state;
 * they never allocate. The pipeline itself allocates only in
 * berth_cycle_init.
 *
 * Threads: a berth_cycle is one thread's scratch; distinct cycles may run
 * at once over state their plugins only read. Profiles are constant. A
 * cycle given a pool (berth_cycle.pool) runs filter and per-node score
 * calls on chunks of one batch concurrently, after profile->prepare: those
 * calls then must only read shared state and write their own slots. */
#ifndef BERTH_PIPELINE_H
#define BERTH_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "berth/random.h"

#define BERTH_PLUGIN_VERSION 1
#define BERTH_MAX_PLUGINS 32
#define BERTH_NO_CANDIDATE UINT32_MAX

typedef enum berth_verdict {
    BERTH_FIT = 0,
    BERTH_UNFIT = 1,          /* could fit after other changes (capacity) */
    BERTH_UNRESOLVABLE = 2,   /* never fits this request (zone, name) */
} berth_verdict;

/* A filter: for each of the n candidates in cand[], writes BERTH_UNFIT or
 * BERTH_UNRESOLVABLE into verdict[i] when it rejects it and leaves
 * verdict[i] alone otherwise. `reason` writes why candidate c was rejected
 * (one line, no newline) into buf. */
typedef struct berth_filter_plugin {
    int version;
    const char *name;
    void (*filter)(void *state, const void *req, const uint32_t *cand, uint32_t n,
                   uint8_t *verdict);
    void (*reason)(void *state, const void *req, uint32_t c, char *buf, size_t size);
} berth_filter_plugin;

/* A score: writes a raw score per candidate (higher is better).
 * `normalize`, when set, maps the raw scores of all feasible candidates in
 * place (kube's NormalizeScore); used only with BERTH_COMBINE_SUM. */
typedef struct berth_score_plugin {
    int version;
    const char *name;
    void (*score)(void *state, const void *req, const uint32_t *cand, uint32_t n, int64_t *out);
    void (*normalize)(void *state, const void *req, int64_t *scores, uint32_t n);
    /* 1: out[i] depends on cand[i] alone (not on the rest of the batch), so
     * the pipeline may score chunks of the batch in parallel (berth_cycle.pool).
     * 0: always one call over the whole batch. */
    int per_node;
} berth_score_plugin;

typedef enum berth_combine {
    BERTH_COMBINE_SUM,            /* total = sum(weight_i * score_i), highest wins */
    BERTH_COMBINE_LEXICOGRAPHIC,  /* compare score_0, then score_1, ... highest wins */
} berth_combine;

typedef enum berth_tiebreak {
    BERTH_TIE_FIRST,   /* lowest candidate index among equal bests */
    BERTH_TIE_LAST,    /* highest candidate index */
    BERTH_TIE_RANDOM,  /* uniform among equal bests, from the cycle's seeded rng */
} berth_tiebreak;

typedef struct berth_profile {
    int version;
    const char *name;
    const berth_filter_plugin *const *filters;
    uint32_t nfilters;
    const berth_score_plugin *const *scores;
    const int64_t *weights;       /* per score plugin; NULL = all 1 */
    uint32_t nscores;
    berth_combine combine;
    berth_tiebreak tiebreak;
    /* Optional index: fills cand[] (at most cap) with a batch that contains
     * every candidate the full scan could pick; returns the count, or -1
     * to ask for a full scan. Must agree exactly with the full scan. */
    int (*narrow)(void *state, const void *req, uint32_t *cand, uint32_t cap);
    /* Optional: commit / roll back a pick in the domain's state. */
    int (*reserve)(void *state, const void *req, uint32_t c);
    void (*unreserve)(void *state, const void *req, uint32_t c);
    /* Optional: called on the calling thread before a batch of n candidates
     * is filtered (and scored by per_node plugins) in parallel chunks; it
     * builds whatever the plugins build lazily for this request, so that
     * the chunks only read shared state. A profile without it is never run
     * in parallel. Returns 0, or an error to run the batch in one thread. */
    int (*prepare)(void *state, const void *req, const uint32_t *cand, uint32_t n);
} berth_profile;

/* Scratch space for picks over up to `cap` candidates, reused across
 * placements. `explain` keeps per-candidate verdicts and scores of the last
 * pick for reporting. */
typedef struct berth_cycle {
    uint32_t cap;
    uint32_t *cand;          /* candidate batch */
    uint8_t *verdict;        /* per batch slot */
    uint32_t *feasible;      /* feasible candidate ids */
    int64_t *scores;         /* nscores x cap, plugin-major */
    int64_t *total;
    uint32_t *ties;
    uint32_t reject_count[BERTH_MAX_PLUGINS];      /* per filter, last pick */
    uint32_t unresolvable;                          /* last pick */
    berth_rng rng;
    /* explain capture */
    int explain;
    uint8_t *first_reject;   /* per candidate id: filter index + 1, 0 = feasible */
    /* all_filters: every filter sees every candidate (no short-cut after
     * the first rejection) and reject_mask[id] gets bit f per rejecting
     * filter; for reports that list every reason. */
    int all_filters;
    uint32_t *reject_mask;   /* per candidate id (valid for the last pick's batch) */
    /* max_feasible: stop filtering once this many candidates are feasible
     * (kube's percentageOfNodesToScore); 0 = filter the whole batch.
     * Candidates are taken in batch order. */
    uint32_t max_feasible;
    /* pool: when set (berth/pool.h) and the profile has prepare, batches of
     * at least BERTH_PAR_MIN candidates are filtered, and scored by per_node
     * plugins, in chunks of BERTH_PAR_CHUNK on the pool's threads; chunk
     * results are merged in candidate order, so every output (feasible
     * list, scores, reject counts, explain capture, the pick and the rng
     * stream) equals the one-thread run's. Owned by the caller; set it
     * with berth_cycle_set_pool. */
    struct berth_pool *pool;
    uint32_t *chunk_scratch;  /* per chunk: BERTH_MAX_PLUGINS + 2 counters */
} berth_cycle;

/* Chunk size of the parallel loops (candidates), and the smallest batch
 * worth splitting: below it one thread is faster than waking another. */
#define BERTH_PAR_CHUNK 256
#define BERTH_PAR_MIN 1024

typedef struct berth_pick {
    uint32_t chosen;         /* candidate id or BERTH_NO_CANDIDATE */
    uint32_t examined;       /* candidates filtered (batch prefix when max_feasible cut it) */
    uint32_t nfeasible;
    int used_index;          /* the profile's narrow() decided the batch */
} berth_pick;

int berth_cycle_init(berth_cycle *c, uint32_t cap, uint32_t max_scores, uint64_t seed);
void berth_cycle_free(berth_cycle *c);
/* Gives c a pool (NULL: none) and, the first time, its per-chunk scratch.
 * 0 or BERTH_ENOMEM (then c is unchanged). */
int berth_cycle_set_pool(berth_cycle *c, struct berth_pool *pool);

/* Runs one pick. ncand is the total number of candidates (ids 0..ncand-1).
 * use_index: 1 to let profile->narrow propose the batch, 0 for the plain
 * full scan (the reference, and what explain uses). After the call,
 * c->feasible[0..nfeasible) and c->scores hold the feasible candidates and
 * their (normalised) scores, in candidate order. Returns 0. */
int berth_pipeline_pick(const berth_profile *p, void *state, const void *req, berth_cycle *c,
                        uint32_t ncand, int use_index, berth_pick *out);

/* The same with the candidate batch given by the caller (cand[0..n), ids
 * < c->cap, in the order they are to be examined). The batch is copied. */
int berth_pipeline_pick_batch(const berth_profile *p, void *state, const void *req,
                              berth_cycle *c, const uint32_t *cand, uint32_t n, berth_pick *out);

/* pick, then profile->reserve on the chosen candidate. Returns 0, or
 * BERTH_ENOFIT when nothing is feasible, or reserve's error. */
int berth_pipeline_place(const berth_profile *p, void *state, const void *req, berth_cycle *c,
                         uint32_t ncand, int use_index, berth_pick *out);

#endif
