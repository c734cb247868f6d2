/* berth/report.h - rendering results for people and programs: the nexus
 * (SPEC 1) step tables, the `simulate` JSON document (SPEC 6.3) and the
 * layout pictures (SVG, standalone HTML). docs/output.md describes every
 * format.
 *
 * Renderers only read the model; they never change it. Writers return 0,
 * BERTH_ENOMEM when memory ran out, or BERTH_EIO when the stream reported
 * an error (ferror).
 *
 * Threads: renderers only read the model, so several may run at once on
 * one model that nothing changes meanwhile. */
#ifndef BERTH_REPORT_H
#define BERTH_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "berth/nexus.h"

/* JSON numbers with at most 15 significant digits (0.768, not
 * 0.76800000000000002): every JSON berth writes, CLI and service. */
#define BERTH_JSON_REAL JSON_REAL_PRECISION(15)

/* ---- nexus: text ---- */

/* One heading line per step ("Step 3: create-cluster C", with
 * "  FAILED: reason" when it failed), then the step's table: per pool
 * cluster, pool, SKU, count, placed, racks used, VMs per rack; for a
 * runtime upgrade one line per batch instead. Steps are separated by a
 * blank line. */
int berth_report_nexus_table(FILE *out, const berth_nexus *nx);

/* ---- nexus: JSON (SPEC 6.3 `simulate`) ---- */

/* The whole document: {"clusters", "steps", "machines"}. NULL when out of
 * memory. The caller owns the reference (json_decref). */
json_t *berth_report_nexus_json(const berth_nexus *nx);

/* One cluster as it appears in the document's "clusters" array (name,
 * status, reason, pools with their VMs). NULL when out of memory or when
 * cluster is out of range. The caller owns the reference. */
json_t *berth_report_nexus_cluster_json(const berth_nexus *nx, uint32_t cluster);

/* Writes root pretty-printed (2-space indent, keys in insertion order)
 * with a trailing newline. Does not take the reference. */
int berth_report_json_write(FILE *out, json_t *root);

/* The whole document as YAML (block style; strings a YAML reader would take
 * for a number, bool or null are quoted): what every `-o yaml` writes.
 * Does not take the reference. 0, BERTH_ENOMEM or BERTH_EIO. */
int berth_report_yaml_write(FILE *out, json_t *root);

/* root as JSON text with jansson's dump flags (malloc'd), or NULL when
 * memory ran out. Use it instead of json_dumps: jansson 2.14's json_dumps
 * drops an object's key when its buffer cannot grow and goes on, giving a
 * document without the key instead of NULL. Does not take the reference. */
char *berth_report_json_text(json_t *root, size_t flags);

/* ---- streamed documents (report/stream.c) ---- */

/* A document {"<key>": [item, ...], <tail members>} written as it is
 * produced: berth_stream_open writes the opening now, each
 * berth_stream_item one item (the stream keeps none, so memory does not
 * grow with the output), berth_stream_close the closing bracket, the
 * members of tail (e.g. "warnings") and the closing brace. JSON: flags are
 * jansson's dump flags (JSON_INDENT(n), JSON_COMPACT, JSON_PRESERVE_ORDER,
 * BERTH_JSON_REAL) and the text equals json_dumpf of the whole tree with
 * them; YAML: libyaml's emitter fed event by event, the text equals
 * berth_report_yaml_write of the whole tree. Each returns 0, BERTH_ENOMEM
 * or BERTH_EIO; after a failure the caller frees the stream (its output
 * is then incomplete). Threads: one stream belongs to one thread. */
typedef struct berth_stream berth_stream;
typedef enum berth_stream_format { BERTH_STREAM_JSON, BERTH_STREAM_YAML } berth_stream_format;
int berth_stream_open(FILE *out, berth_stream_format fmt, size_t flags, const char *key,
                      berth_stream **s);
int berth_stream_item(berth_stream *s, json_t *item); /* does not take the reference */
int berth_stream_close(berth_stream *s, json_t *tail); /* tail: an object, or NULL */
uint64_t berth_stream_count(const berth_stream *s);     /* items written */
void berth_stream_free(berth_stream *s);

/* ---- nexus: pictures ---- */

/* Racks above this count, or machines above BERTH_REPORT_SVG_MAX_MACHINES,
 * switch the picture to the compact heat map (one square per machine). */
#define BERTH_REPORT_SVG_MAX_RACKS 64u
#define BERTH_REPORT_SVG_MAX_MACHINES 4096u

/* A standalone SVG document (it starts with "<svg"): racks as columns,
 * machines as rows, NUMA cells side by side, VMs as blocks coloured by
 * cluster, plus a legend. Large estates get the heat map. */
int berth_report_nexus_svg(FILE *out, const berth_nexus *nx);

/* A standalone HTML page (no external resources): the same SVG, a per-rack
 * utilisation table, a clusters/pools summary and the timeline. */
int berth_report_nexus_html(FILE *out, const berth_nexus *nx);
/* The same page with extra(out, ctx) written after the steps table (NULL:
 * none; `simulate --workloads` adds its upgrade timeline). */
int berth_report_nexus_html_with(FILE *out, const berth_nexus *nx,
                                 int (*extra)(FILE *out, const void *ctx), const void *ctx);

/* ---- shared helpers (also used by the CLI) ---- */

/* "create-cluster", "delete-cluster", "scale-pool", "add-pool", "cordon",
 * "uncordon", "runtime-upgrade"; "unknown" otherwise. */
const char *berth_report_step_kind_name(berth_step_kind kind);
/* "ControlPlane" or "Worker". */
const char *berth_report_role_name(berth_pool_role role);
/* "Pending", "Succeeded", "Failed", "Deleted". */
const char *berth_report_cluster_status_name(berth_cluster_status status);

/* Formats a VMs-per-rack vector (n entries) for people: "-" when no rack
 * holds a VM, "3" when every used rack holds 3, "3, 4, 5" for up to six
 * distinct counts (ascending), "1..12" (lowest..highest) beyond that.
 * Always NUL-terminates buf (size > 0); returns the length it needed like
 * snprintf. */
int berth_report_per_rack_text(const uint32_t *per_rack, uint32_t n, char *buf, size_t size);

/* ---- skipped kinds (SPEC 6.1, 6.3 `warnings`; report/warnings.c) ---- */

/* ["skipped 12 ConfigMap", "skipped 2 CronJob (not expanded: ...)"], in
 * the order the kinds first appeared, then the planners' warnings
 * (berth_skips_warn); NULL when out of memory. */
json_t *berth_report_warnings_json(const berth_skips *s);
/* Sets root["warnings"] (an empty array when nothing was skipped). 0 or
 * BERTH_ENOMEM. */
int berth_report_set_warnings(json_t *root, const berth_skips *s);
/* One "berth: skipped 12 ConfigMap" line per kind (the CLI prints them on
 * stderr once every input file is loaded, unless -q). */
int berth_report_warnings_text(FILE *out, const berth_skips *s);

#endif
