/* berth/kube_report.h - reports for kube scheduling (SPEC 6.3 `kube
 * schedule`) and vSphere Pod sizes (`kube size`): a collector that is the
 * berth_kube_options.on_decision callback, then a table or JSON.
 *
 * Threads: a collector belongs to one run; writers only read it. */
#ifndef BERTH_KUBE_REPORT_H
#define BERTH_KUBE_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "berth/kube.h"

typedef struct berth_kube_report berth_kube_report;

/* detail: build the per-pod JSON (feasible, filtered, scores). NULL on OOM. */
berth_kube_report *berth_kube_report_new(int detail);
void berth_kube_report_free(berth_kube_report *r);
/* The on_decision callback; ctx is the report. */
void berth_kube_report_decision(void *ctx, const berth_kcluster *k, const berth_kdecision *d);
/* 0, or BERTH_ENOMEM when a decision could not be recorded. */
int berth_kube_report_status(const berth_kube_report *r);

/* Pods in queue order: NAMESPACE/NAME, NODE, QOS, FEASIBLE, SCORE, and the
 * kube-scheduler message for unschedulable pods, or "preempted N pods:
 * ns/a, ..." for a pod placed by preemption (SCORE "-"). */
int berth_kube_report_table(FILE *out, const berth_kube_report *r, const berth_kcluster *k);
/* --explain (detail reports only): per pod, the chosen node, the best
 * feasible nodes with each plugin's normalised score and the weighted
 * total, and the rejected nodes counted by reason. */
int berth_kube_report_explain(FILE *out, const berth_kube_report *r);

/* {"pods": [...]} per SPEC 6.3 (new reference to the report's JSON). */
json_t *berth_kube_report_json(berth_kube_report *r);

/* `kube size`: every pod's QoS class and vSphere Pod size. */
int berth_kube_size_table(FILE *out, const berth_kcluster *k, const berth_vsphere_opts *o);
json_t *berth_kube_size_json(const berth_kcluster *k, const berth_vsphere_opts *o);

/* `kube fit`: "Deployment/ns/web: 12 more replicas fit beyond the 3 it has
 * (3 placed)", the new replicas per node, and the next replica's FitError. */
int berth_kube_fit_table(FILE *out, const berth_kfit *f, const berth_kcluster *k);
/* {"workload", "existing", "existingPlaced", "fits", "nodes": {"<node>": n},
 * "reason": text|null, "atMax", "max": n|null} (docs/kube.md). */
json_t *berth_kube_fit_json(const berth_kfit *f, const berth_kcluster *k);

#endif
