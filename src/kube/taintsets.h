/* kube/taintsets.h - internal: hard-taint sets (kube/taintsets.c). Nodes
 * whose NoSchedule / NoExecute taints form the same list (key, value,
 * effect, in order; PreferNoSchedule ones do not count) get the same id,
 * from 1; 0 is a node without hard taints. Two nodes of one set give any
 * pod the same TaintToleration verdict and the same first untolerated
 * taint, so its filter and reason text can be worked out per set (the
 * scheduler keeps each node's id: kube_sched.taint_set).
 *
 * Thread rules: a kube_taintsets belongs to its scheduler's thread while
 * ids are added (kube_taintsets_id); the lookups are read-only and safe
 * from several threads once no id is being added. */
#ifndef BERTH_KUBE_TAINTSETS_H
#define BERTH_KUBE_TAINTSETS_H

#include "berth/taints.h"

#include <stdint.h>

typedef struct kube_taintsets kube_taintsets;

/* The id of the hard taints among t[0..n) (0 when there are none): an
 * existing set's, else a new one (the sets are created on first use, *ts
 * NULL before). 0 or BERTH_ENOMEM (then *id is 0). */
int kube_taintsets_id(kube_taintsets **ts, const berth_taint *t, uint32_t n, uint32_t *id);
/* The ids in use are 1..count. */
uint32_t kube_taintsets_count(const kube_taintsets *ts);
/* The first taint of set id that tols[0..ntols) do not tolerate (the set's
 * own copy), NULL when all are tolerated or id is 0. */
const berth_taint *kube_taintsets_first_untolerated(const kube_taintsets *ts, uint32_t id,
                                                    const berth_toleration *tols, uint32_t ntols);
/* The longest run of used slots in the sets' hash table (0 when there are
 * none): O(slots), for tests and diagnostics. */
uint32_t kube_taintsets_longest_run(const kube_taintsets *ts);
void kube_taintsets_free(kube_taintsets *ts);

#endif
