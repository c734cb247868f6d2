/* autoscale/scaledown.h - internal: scale-down's what-if questions
 * (scaledown.c) and their speculative evaluation on threads (parallel.c,
 * docs/autoscale.md "Threads").
 *
 * Thread rules: a context (sd_ctx) is used by one thread at a time; the
 * contexts of one plan may run their questions at once (distinct sessions
 * over one cluster: berth/kube.h); the cluster, its pod table and the pass
 * are read only while questions run. */
#ifndef BERTH_AUTOSCALE_SCALEDOWN_H
#define BERTH_AUTOSCALE_SCALEDOWN_H

#include "autoscale/state.h"
#include "kube/fitindex.h"

/* A what-if context: a session over the cluster (opened as the plan's),
 * its fit index (NULL: the session alone) and the arena the scheduler's
 * texts go to. */
typedef struct sd_ctx {
    berth_ksession *ks;
    kube_fitidx *fx;
    berth_arena *arena;
    const berth_cancel *cancel;
    int seq_ok;                 /* per_pod_ok of the cluster */
} sd_ctx;

/* One candidate's question: remove `node` (its pods all_on[0..non), pod
 * order), place its movable pods pods[0..npods) on the other nodes. The
 * answer: all (every pod placed, placed[i]), else reason (the first pod
 * that fits nowhere); rc (an error, err its text). The session keeps the
 * answer's changes until sd_rollback (rejected) or for good (accepted). */
typedef struct sd_question {
    uint32_t node;
    uint32_t *all_on, non;
    uint32_t *pods, npods;
    uint32_t *placed;
    const char **why;
    uint64_t mark, fxpos;
    int rc, all;
    berth_error err;            /* rc: its text */
    char reason[256];
} sd_question;

/* Opens c for a walk over the pass's existing nodes (scale-down, and
 * cluster-autoscaler mode's): a what-if session holding the pods of the
 * nodes not removed (pn, per pod of the cluster, filled here; the caller
 * keeps and frees it), the removed nodes excluded, its per-node loops on
 * the plan's threads; the fit index when the cluster's profiles let pods
 * be answered one at a time (seq_ok). 0, or an error with e set (c then
 * holds what was opened: sd_close it). */
int sd_open(capacity_pass *s, sd_ctx *c, uint32_t *pn, berth_error *e);
void sd_close(sd_ctx *c);
/* The pods on node n in the session, in pod order, into out: their count. */
uint32_t sd_pods_on(const capacity_pass *s, const berth_ksession *ks, uint32_t n, uint32_t *out);
/* Every existing node's utilisation (capacity_utilisation) in one pass over
 * the pods: util[n]. 0 or BERTH_ENOMEM. */
int sd_utilisation_all(const capacity_pass *s, double *util);
int sd_whatif(sd_ctx *c, const berth_kcluster *k, sd_question *q);
/* Undoes a question's changes on its context. 0 or an error. */
int sd_rollback(sd_ctx *c, const sd_question *q);
/* Applies an accepted removal to a context that did not ask it: every pod
 * the session has on node (berth_ksession_pods_on) leaves, the node is
 * excluded, moves[i] pods are assumed where they were placed (as the
 * scheduling decision did). 0, BERTH_ENOMEM or
 * BERTH_EINVAL (a moved pod still placed: the context was out of step, a
 * defect). */
int sd_replay(sd_ctx *c, uint32_t node, const berth_amove *moves, uint32_t nmoves);

/* ---- parallel.c ---- */
typedef struct sd_workers sd_workers;

/* Questions asked one at a time before the first wave. */
#define SD_WARMUP 4
/* A wave's width after `run` rejected answers in a row, with T threads:
 * the rule in parallel.c's header. */
uint32_t sd_width(uint32_t run, uint32_t T);
/* Whether the pass speculates: threads > 1, the fast path, BERTH_PAR_MIN
 * nodes or more. */
int sd_par_on(const capacity_pass *s);
/* T - 1 worker contexts over the cluster (T: the wave's widest, at most
 * the threads), each opened as the plan's (pod_node pn, the removed nodes
 * excluded, a fit index when the plan's context has one) and brought to
 * the plan's state by replaying plan->down[down0..ndown); and a pool of T
 * threads. *out NULL and 0 when a worker (out of memory) or the pool
 * cannot be had: the caller walks sequentially; another error of a
 * worker's replay is returned (it would be a defect). */
int sd_workers_open(sd_workers **out, capacity_pass *s, uint32_t T, const sd_ctx *plan,
                    const uint32_t *pn, uint32_t down0);
/* Whether a worker failed a replay (out of memory): the caller closes the
 * workers and walks on sequentially (the plan's context is whole). */
int sd_workers_broken(const sd_workers *x);
/* A worker's failure other than out of memory (a replay out of step: a
 * defect, which the caller reports rather than falls back from), or 0. */
int sd_workers_defect(const sd_workers *x);
void sd_workers_close(sd_workers *x);
/* Context i of a wave: 0 the plan's (given; also for x NULL), 1.. the
 * workers'. */
sd_ctx *sd_workers_ctx(sd_workers *x, sd_ctx *plan, uint32_t i);
/* sd_replay of an accepted removal on every context but `skip`, at once
 * (the answer was question skip's: that context has it). The plan's
 * context's result; a worker's failure shows in sd_workers_broken. */
int sd_workers_replay(sd_workers *x, sd_ctx *plan, uint32_t skip, uint32_t node,
                      const berth_amove *moves, uint32_t nmoves);
/* Every context keeps its changes for good (berth_ksession_commit, and
 * its fit index's retouch position moves up): after an accepted removal,
 * which no question rolls back past. x NULL: the plan's context only. */
void sd_workers_commit(sd_workers *x, sd_ctx *plan);
/* Runs question i on context i for i < nq, at once. */
void sd_workers_ask(sd_workers *x, sd_ctx *plan, const berth_kcluster *k, sd_question *q,
                    uint32_t nq);

#endif
