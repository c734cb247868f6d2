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
#include "berth/report.h"

typedef struct berth_kube_report berth_kube_report;

/* Each pod's JSON has score, feasibleCount, reasons and top (run the
 * scheduler with berth_kube_options.reasons for reasons and top); detail
 * adds feasible, filtered and scores (berth_kube_options.detail). NULL on
 * OOM. */
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
/* --explain from the kept tree (detail reports only): per pod, the chosen
 * node, the best feasible nodes with each plugin's normalised score and
 * the weighted total, and the rejected nodes counted by reason. */
int berth_kube_report_explain(FILE *out, const berth_kube_report *r);
/* The same explanation written to out as each pod is decided (run the
 * scheduler with berth_kube_options.detail); the pods' JSON shows the
 * detail fields only when the report was made with detail. */
void berth_kube_report_explain_to(berth_kube_report *r, FILE *out);
/* Keep the rows for berth_kube_report_table only, no JSON per pod. */
void berth_kube_report_rows_only(berth_kube_report *r);

/* The pods decided so far, in queue order: row i's pod (index into the
 * cluster's pods), its node's name (NULL: not scheduled) and the
 * kube-scheduler message of a pod not scheduled (else NULL); returns 1
 * when the pod was skipped because it is being deleted, else 0. O(1). */
uint32_t berth_kube_report_size(const berth_kube_report *r);
int berth_kube_report_row(const berth_kube_report *r, uint32_t i, uint32_t *pod, const char **node,
                           const char **message);
/* `kube schedule --svg`: the nodes as bars of requested vs allocatable cpu
 * and memory after the run (pods bound before it darker than those it
 * placed), at most BERTH_KUBE_SVG_MAX_NODES drawn (the rest summarised with
 * a utilisation histogram of every node), then the pods not scheduled with
 * their reason (report/kube_svg.c, docs/output.md "Pictures"). 0,
 * BERTH_ENOMEM or BERTH_EIO. */
#define BERTH_KUBE_SVG_MAX_NODES 40u
int berth_kube_report_svg(FILE *out, const berth_kube_report *r, const berth_kcluster *k);

/* {"pods": [...]} per SPEC 6.3 (new reference to the report's JSON). */
json_t *berth_kube_report_json(berth_kube_report *r);
/* Streaming instead of a tree (berth_stream, berth/report.h): writes
 * '{"pods": [' (or the YAML "pods:" sequence) to out now, then each pod as
 * it is decided (the report keeps no pod JSON, so memory does not grow with
 * the output); berth_kube_report_stream_end writes the end of the
 * sequence, the members of tail (e.g. "warnings") and the end of the
 * document. flags are jansson's dump flags (JSON_INDENT(n), JSON_COMPACT,
 * JSON_PRESERVE_ORDER); the text equals json_dumpf (or
 * berth_report_yaml_write) of the whole tree. 0, BERTH_ENOMEM or
 * BERTH_EIO. berth_kube_report_json and _explain need the tree. */
int berth_kube_report_stream_format(berth_kube_report *r, FILE *out, berth_stream_format fmt,
                                    size_t flags);
int berth_kube_report_stream(berth_kube_report *r, FILE *out, size_t flags); /* JSON */
int berth_kube_report_stream_end(berth_kube_report *r, json_t *tail);

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
