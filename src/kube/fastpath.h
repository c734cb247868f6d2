/* kube/fastpath.h - internal: the pod-class cache (kube/fastpath.c). */
#ifndef BERTH_KUBE_FASTPATH_H
#define BERTH_KUBE_FASTPATH_H

#include "kube/state.h"

typedef struct kube_fast_result {
    uint32_t node;
    uint32_t nfeasible;
    int64_t total;
} kube_fast_result;

int kube_fast_init(kube_sched *s);
void kube_fast_free(kube_sched *s);
/* Records that a pod was assumed on node (the classes refresh it lazily). */
int kube_fast_assumed(kube_sched *s, uint32_t node);
/* Node n became (non-)candidate, or (data) its static data changed: every
 * class recomputes it (its static filters and constant scores too when
 * data, its constant scores when it returns as a candidate unchecked);
 * all: every node of every class is recomputed (ImageLocality changed). */
int kube_fast_node_changed(kube_sched *s, uint32_t n, int data, int all);
/* 1: *out holds the decision (same as the full pipeline would make);
 * 2: no node fits (as the full pipeline would find; it is needed only to
 * explain why); 0: this pod needs the full pipeline; < 0: error. */
int kube_fast_pick(kube_sched *s, const berth_profile *prof, kube_req *r, berth_rng *rng,
                   kube_fast_result *out);

#endif
