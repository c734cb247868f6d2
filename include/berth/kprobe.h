/* berth/kprobe.h - a warm kube scheduler for one-pod questions
 * (kube/probe.c): the scheduler state (node columns, term counters,
 * plugin caches) is built once over a cluster and each question runs one
 * pod through one scheduling cycle with berth_kube_options' callback, then
 * undoes the pod's assume, so the next question sees the same state. The
 * kube-scheduler extender (serve/extender.c) keeps one per cluster-state
 * version instead of rebuilding the state for every pod.
 *
 * The pods asked about go into slots appended to the cluster at open (one
 * slot per question, never reused: the plugins memoise per pod index), so
 * a probe answers at most `nslots` questions; then the caller opens a new
 * one. Each slot is a pending copy of `like` at open: a question's pod must
 * have like's namespace (the term counters read a pod's namespace at open).
 *
 * Decisions equal berth_kube_schedule's on the cluster holding the bound
 * pods and the pod asked about as its only pending pod (tests: the
 * extender's fast path against its general way).
 *
 * Threads: a probe and its cluster belong to one thread at a time (run
 * writes the cluster's slot and the state); distinct probes over distinct
 * clusters may run concurrently. */
#ifndef BERTH_KPROBE_H
#define BERTH_KPROBE_H

#include "berth/kube.h"

typedef struct berth_kprobe berth_kprobe;

/* Appends nslots pending copies of *like to k's pods and builds the
 * scheduler state over k (opt is copied; opt->profile must outlive the
 * probe; preemption and threads are not used). k must outlive the probe
 * and is the probe's until close. Work: one kube_loop_init. */
int berth_kprobe_open(berth_kprobe **out, berth_kcluster *k, const berth_kube_options *opt,
                      const berth_kpod *like, uint32_t nslots, berth_error *e);
/* Slots left (questions the probe can still answer). */
uint32_t berth_kprobe_left(const berth_kprobe *p);
/* Runs *pod (copied into the next slot; its strings and arrays must live
 * as long as the probe) through one cycle: opt->on_decision gets the
 * decision with ctx (its pod index is *slot). The state is then as before. BERTH_EINVAL when pod is
 * bound, terminating, not in like's namespace or no slot is left (nothing
 * done), else 0 or an error of the cycle. Work: the kube scheduler's
 * per-pod work. */
int berth_kprobe_run(berth_kprobe *p, const berth_kpod *pod, void *ctx, uint32_t *slot,
                     berth_error *e);
void berth_kprobe_close(berth_kprobe *p);

#endif
