/* kube/fitindex.h - internal: the per-pod-class fit index over a what-if
 * session (kube/fitindex.c), for planners that ask "where does this pod go,
 * or why does it fit nowhere" many times while moving few pods per
 * question (autoscale scale-down). Node indices are the caller's (the
 * cluster the session was opened on).
 *
 * Thread rules: an index belongs to one thread, as its session does; it
 * must be closed before the session. */
#ifndef BERTH_KUBE_FITINDEX_H
#define BERTH_KUBE_FITINDEX_H

#include "berth/arena.h"
#include "berth/kube.h"

typedef struct kube_fitidx kube_fitidx;

/* Opens an index over ks (opened with the default profile, no spare slots).
 * *out is NULL (and 0 returned) when the session's profile or cluster is
 * not one the index answers for (then ask the session). 0 or BERTH_ENOMEM. */
int kube_fitidx_open(kube_fitidx **out, berth_ksession *ks);
void kube_fitidx_close(kube_fitidx *x);

/* Caller node `node` changed in the session (a pod left or joined it, it
 * was excluded or brought back): every class looks at it again before its
 * next answer. 0 or BERTH_ENOMEM. */
int kube_fitidx_touch(kube_fitidx *x, uint32_t node);
/* The change log position, and: touch again every node touched since pos
 * (after berth_ksession_rollback to a mark taken with pos). Retouch takes
 * the last position kube_fitidx_pos handed out (the log keeps the entries
 * from there on, not the older ones): BERTH_EINVAL for another. */
uint64_t kube_fitidx_pos(kube_fitidx *x);
/* A hint: pods[0..n) are about to be placed. */
void kube_fitidx_prefetch(const kube_fitidx *x, const uint32_t *pods, uint32_t n);
int kube_fitidx_retouch(kube_fitidx *x, uint64_t pos);

enum { KUBE_FIT_ASK = 0, KUBE_FIT_PLACED = 1, KUBE_FIT_NONE = 2 };
/* Decides unbound pod `pod` as berth_ksession_place(ks, &pod, 1, ...) would:
 * KUBE_FIT_PLACED: placed on *node in the session (logged there for
 * rollback, touched here); KUBE_FIT_NONE: it fits no node, *why is the
 * scheduler's text (copied in a; a NULL: the index's own copy, valid
 * until its next place or touch), nothing changed; KUBE_FIT_ASK: not a pod
 * the index answers for (ask the session). Returns 0 or BERTH_ENOMEM. */
int kube_fitidx_place(kube_fitidx *x, uint32_t pod, int *answer, uint32_t *node,
                      const char **why, berth_arena *a);

/* ---- kube/session.c: what the index needs of a session ---- */
struct kube_loop;
struct kube_loop *kube_session_loop(berth_ksession *s);
/* caller node <-> session node (BERTH_KUBE_NONE stays) */
uint32_t kube_session_node(const berth_ksession *s, uint32_t node);
uint32_t kube_session_caller_node(const berth_ksession *s, uint32_t node);
/* Places unbound pod on session node n as a scheduling decision does
 * (assumed, logged for rollback). 0 or BERTH_ENOMEM (also once an exclude
 * ran out of memory, as berth_ksession_place). */
int kube_session_assume(berth_ksession *s, uint32_t pod, uint32_t n);

#endif
