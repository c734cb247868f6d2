/* report/kube_report.c - the `kube schedule` collector, table (pods in
 * queue order, then one line per workload) and JSON (SPEC 6.3: by default
 * score, feasibleCount, reasons and the top 3 nodes per pod; with detail
 * also feasible, filtered and scores), built as a tree or streamed one pod
 * at a time, and the `kube size` table and JSON. */
#include "berth/grow.h"
#include "berth/kube_report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "berth/report.h"
#include "report/plan_common.h"

typedef struct row {
    uint32_t pod;
    const char *node;       /* name, NULL when unschedulable */
    uint32_t nfeasible;
    int64_t total;
    char *message;
    int terminating;        /* skipped: the pod is being deleted */
    char *preempted;        /* "preempted 2 pods: ns/a, ns/b" when it preempts */
} row;

struct berth_kube_report {
    int detail, status;
    row *rows;
    uint32_t n, cap;
    json_t *pods;           /* the JSON array, when not streaming (NULL: rows only) */
    berth_stream *stream;   /* streaming: pods are written here as decided */
    FILE *explain;          /* --explain: each pod's explanation is written here */
};

berth_kube_report *berth_kube_report_new(int detail)
{
    berth_kube_report *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->detail = detail;
    r->pods = json_array();
    if (!r->pods) {
        free(r);
        return NULL;
    }
    return r;
}

void berth_kube_report_free(berth_kube_report *r)
{
    if (!r)
        return;
    for (uint32_t i = 0; i < r->n; i++) {
        free(r->rows[i].message);
        free(r->rows[i].preempted);
    }
    free(r->rows);
    json_decref(r->pods);
    berth_stream_free(r->stream);
    free(r);
}

int berth_kube_report_status(const berth_kube_report *r) { return r->status; }

/* "nominatedNode" (null unless the pod preempts) and "victims" (SPEC 6.3);
 * a failure sets *bad (report_set). */
static void preemption_json(json_t *o, const berth_kcluster *k, const berth_kdecision *d, int *bad)
{
    json_t *v = json_array();
    for (uint32_t i = 0; v && i < d->nvictims; i++) {
        const berth_kpod *q = &k->pods[d->victims[i]];
        json_t *e = json_object();
        report_set(bad, e, "namespace", json_string(q->ns));
        report_set(bad, e, "name", json_string(q->name));
        report_set(bad, e, "node", json_string(k->nodes[d->nominated].name));
        report_append(bad, v, e);
    }
    report_set(bad, o, "nominatedNode",
                        d->nvictims ? json_string(k->nodes[d->nominated].name) : json_null());
    report_set(bad, o, "victims", v);
}

/* The table's note for a preempting pod. */
static char *preempted_text(const berth_kcluster *k, const berth_kdecision *d)
{
    size_t cap = 64;
    for (uint32_t i = 0; i < d->nvictims; i++) {
        const berth_kpod *q = &k->pods[d->victims[i]];
        cap += strlen(q->ns) + strlen(q->name) + 3;
    }
    char *t = malloc(cap);
    if (!t)
        return NULL;
    size_t off = (size_t)snprintf(t, cap, "preempted %u pod%s:", d->nvictims,
                                  d->nvictims == 1 ? "" : "s");
    for (uint32_t i = 0; i < d->nvictims; i++) {
        const berth_kpod *q = &k->pods[d->victims[i]];
        off += (size_t)snprintf(t + off, cap - off, "%s %s/%s", i ? "," : "", q->ns, q->name);
    }
    return t;
}

/* "top": the chosen node first (when it was picked by score), then the
 * best of the other feasible nodes by total, lowest node index (name)
 * first among equals; at most KUBE_TOP. O(feasible) per pod. */
#define KUBE_TOP 3
static json_t *top_json(const berth_kcluster *k, const berth_kdecision *d, int picked)
{
    json_t *a = json_array();
    int fail = 0, *bad = &fail;
    if (!a || !d->feasible || !d->totals || !d->plugin_scores)
        return a;
    uint32_t slot[KUBE_TOP], nt = 0;
    for (uint32_t i = 0; picked && i < d->nfeasible; i++)
        if (d->feasible[i] == d->node) {
            slot[nt++] = i;
            break;
        }
    while (nt < KUBE_TOP) {
        uint32_t best = UINT32_MAX;
        for (uint32_t i = 0; i < d->nfeasible; i++) {
            int taken = 0;
            for (uint32_t t = 0; t < nt && !taken; t++)
                taken = slot[t] == i;
            if (taken)
                continue;
            if (best == UINT32_MAX || d->totals[i] > d->totals[best] ||
                (d->totals[i] == d->totals[best] && d->feasible[i] < d->feasible[best]))
                best = i;
        }
        if (best == UINT32_MAX)
            break;
        slot[nt++] = best;
    }
    for (uint32_t t = 0; t < nt; t++) {
        uint32_t i = slot[t];
        json_t *pl = json_object(), *e = json_object();
        for (uint32_t j = 0; pl && j < d->nscore_plugins; j++)
            report_set(bad, pl, berth_kplugin_name(d->score_plugins[j]),
                                json_integer(d->plugin_scores[(size_t)j * d->cap + i]));
        report_set(bad, e, "node", json_string(k->nodes[d->feasible[i]].name));
        report_set(bad, e, "total", json_integer(d->totals[i]));
        report_set(bad, e, "plugins", pl);
        report_append(bad, a, e);
    }
    return report_done(a, fail);
}

/* --detail all: "feasible", "filtered" and "scores" (every (pod, node)). */
static void detail_json(json_t *o, const berth_kcluster *k, const berth_kdecision *d, int *bad)
{
    json_t *feas = json_array(), *filt = json_object(), *sc = json_object();
    /* feasible nodes in name order (= index order) */
    uint32_t *ids = malloc((d->nfeasible ? d->nfeasible : 1) * sizeof *ids);
    uint32_t *slot = malloc((d->nfeasible ? d->nfeasible : 1) * sizeof *slot);
    if (!ids || !slot)
        *bad = 1;
    if (ids && slot && d->feasible) {
        for (uint32_t i = 0; i < d->nfeasible; i++)
            ids[i] = d->feasible[i], slot[i] = i;
        for (uint32_t i = 1; i < d->nfeasible; i++) /* insertion sort by node id */
            for (uint32_t j = i; j > 0 && ids[j - 1] > ids[j]; j--) {
                uint32_t t = ids[j]; ids[j] = ids[j - 1]; ids[j - 1] = t;
                t = slot[j]; slot[j] = slot[j - 1]; slot[j - 1] = t;
            }
        for (uint32_t i = 0; i < d->nfeasible; i++) {
            const char *nn = k->nodes[ids[i]].name;
            report_append(bad, feas, json_string(nn));
            if (!d->plugin_scores || !d->totals)
                continue; /* not scored (NodeAffinity's PreScore failed) */
            json_t *pl = json_object(), *e = json_object();
            for (uint32_t j = 0; j < d->nscore_plugins; j++)
                report_set(bad, pl, berth_kplugin_name(d->score_plugins[j]),
                                    json_integer(d->plugin_scores[(size_t)j * d->cap + slot[i]]));
            report_set(bad, e, "total", json_integer(d->totals[slot[i]]));
            report_set(bad, e, "plugins", pl);
            report_set(bad, sc, nn, e);
        }
    }
    free(ids);
    free(slot);
    /* every rejecting plugin's reasons, per examined node that was not feasible */
    char buf[512];
    for (uint32_t i = 0; d->fail_mask && i < d->nexamined; i++) {
        uint32_t n = d->examined[i];
        uint32_t mask = d->fail_mask[n];
        if (!mask)
            continue;
        json_t *list = json_array();
        for (uint32_t f = 0; f < d->nfilter_plugins; f++) {
            if (!(mask & (1u << f)))
                continue;
            berth_kube_decision_reason(d, n, d->filter_plugins[f], buf, sizeof buf);
            char *save = NULL;
            for (char *tok = strtok_r(buf, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
                while (*tok == ' ')
                    tok++;
                report_append(bad, list, json_string(tok));
            }
        }
        report_set(bad, filt, k->nodes[n].name, list);
    }
    report_set(bad, o, "feasible", feas);
    report_set(bad, o, "filtered", filt);
    report_set(bad, o, "scores", sc);
    /* each score plugin's weight: total = sum of weight x score */
    json_t *w = json_object();
    for (uint32_t j = 0; w && d->score_weights && j < d->nscore_plugins; j++)
        report_set(bad, w, berth_kplugin_name(d->score_plugins[j]),
                   json_integer(d->score_weights[j]));
    report_set(bad, o, "weights", w);
}

/* One pod of SPEC 6.3 `kube schedule`: namespace, name, node, qosClass,
 * workload, [terminating], score, feasibleCount, reasons, top, [feasible,
 * filtered, scores with detail], [message], nominatedNode, victims. */
static json_t *decision_json(const berth_kcluster *k, const berth_kdecision *d, const row *rw,
                             int detail)
{
    const berth_kpod *p = &k->pods[d->pod];
    json_t *o = json_object(), *reasons = json_object();
    int fail = 0, *bad = &fail;
    if (!o || !reasons) {
        json_decref(o);
        json_decref(reasons);
        return NULL;
    }
    int picked = rw->node && !d->nvictims; /* placed by score, not by preemption */
    report_set(bad, o, "namespace", json_string(p->ns));
    report_set(bad, o, "name", json_string(p->name));
    report_set(bad, o, "node", rw->node ? json_string(rw->node) : json_null());
    report_set(bad, o, "qosClass", json_string(berth_qos_name(p->qos)));
    report_set(bad, o, "workload", p->workload ? json_string(p->workload) : json_null());
    if (rw->terminating)
        report_set(bad, o, "terminating", json_true());
    report_set(bad, o, "score", picked ? json_integer(d->total) : json_null());
    report_set(bad, o, "feasibleCount", json_integer(d->nfeasible));
    for (uint32_t i = 0; i < d->nreasons; i++)
        report_set(bad, reasons, d->reasons[i].text, json_integer(d->reasons[i].count));
    report_set(bad, o, "reasons", reasons);
    report_set(bad, o, "top", top_json(k, d, picked));
    if (detail)
        detail_json(o, k, d, bad);
    if (rw->message)
        report_set(bad, o, "message", json_string(rw->message));
    preemption_json(o, k, d, bad);
    return report_done(o, fail);
}

int berth_kube_report_stream_format(berth_kube_report *r, FILE *out, berth_stream_format fmt,
                                    size_t flags)
{
    berth_stream_free(r->stream);
    r->stream = NULL;
    int rc = berth_stream_open(out, fmt, flags, "pods", &r->stream);
    if (!rc) { /* the pods go to the stream, not to a tree */
        json_decref(r->pods);
        r->pods = NULL;
    }
    return rc;
}

int berth_kube_report_stream(berth_kube_report *r, FILE *out, size_t flags)
{
    return berth_kube_report_stream_format(r, out, BERTH_STREAM_JSON, flags);
}

int berth_kube_report_stream_end(berth_kube_report *r, json_t *tail)
{
    return r->stream ? berth_stream_close(r->stream, tail) : BERTH_EINVAL;
}

void berth_kube_report_rows_only(berth_kube_report *r)
{
    json_decref(r->pods);
    r->pods = NULL;
}

void berth_kube_report_explain_to(berth_kube_report *r, FILE *out) { r->explain = out; }

static int explain_pod(FILE *out, json_t *pod);

void berth_kube_report_decision(void *ctx, const berth_kcluster *k, const berth_kdecision *d)
{
    berth_kube_report *r = ctx;
    if (berth_grow((void **)&r->rows, &r->cap, r->n + 1, sizeof *r->rows, 0)) {
        r->status = BERTH_ENOMEM;
        return;
    }
    row *rw = &r->rows[r->n++];
    memset(rw, 0, sizeof *rw);
    rw->pod = d->pod;
    rw->node = d->node == BERTH_KUBE_NONE ? NULL : k->nodes[d->node].name;
    rw->nfeasible = d->nfeasible;
    rw->total = d->total;
    rw->terminating = d->terminating;
    if (d->summary) {
        rw->message = strdup(d->summary);
        if (!rw->message)
            r->status = BERTH_ENOMEM;
    }
    if (d->nvictims && !(rw->preempted = preempted_text(k, d)))
        r->status = BERTH_ENOMEM;
    if (!r->pods && !r->stream && !r->explain)
        return; /* rows only (the table) */
    json_t *o = decision_json(k, d, rw, r->detail || r->explain);
    if (!o) {
        r->status = BERTH_ENOMEM;
        return;
    }
    if (r->explain) {
        int rc = explain_pod(r->explain, o);
        if (rc)
            r->status = rc;
        if (!r->detail) { /* explain read the detail; the JSON does not show it */
            json_object_del(o, "feasible");
            json_object_del(o, "filtered");
            json_object_del(o, "scores");
            json_object_del(o, "weights");
        }
    }
    if (r->stream) {
        int rc = berth_stream_item(r->stream, o);
        json_decref(o);
        if (rc)
            r->status = rc;
    } else if (!r->pods) {
        json_decref(o);
    } else if (json_array_append_new(r->pods, o)) {
        r->status = BERTH_ENOMEM;
    }
}

/* ---- the table's per-workload lines ---- */

/* a pending pod of the report (row index) or a pod bound in the input */
typedef struct wl_entry {
    const char *workload;
    uint32_t row;             /* row index; UINT32_MAX for a bound pod */
} wl_entry;

static int cmp_wl_entry(const void *a, const void *b)
{
    const wl_entry *x = a, *y = b;
    int c = strcmp(x->workload, y->workload);
    return c ? c : (x->row > y->row) - (x->row < y->row);
}

static int cmp_wl_group(const void *a, const void *b, void *ctx)
{
    const wl_entry *e = ctx;
    uint32_t x = e[*(const uint32_t *)a].row, y = e[*(const uint32_t *)b].row;
    return (x > y) - (x < y);
}

/* "Kind/ns/name: P of N placed[, pod: why[ (and M more unplaced)]]" per
 * workload with pending pods, in queue order of its first pending pod; N
 * counts its pods bound in the input too (terminating pods aside) */
static int workload_lines(FILE *out, const berth_kube_report *r, const berth_kcluster *k)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < r->n; i++)
        n += !r->rows[i].terminating && k->pods[r->rows[i].pod].workload != NULL;
    if (!n)
        return 0;
    for (uint32_t p = 0; p < k->npods; p++)
        n += k->pods[p].node_name && !k->pods[p].assumed && !k->pods[p].terminating &&
             k->pods[p].workload;
    wl_entry *e = malloc(n * sizeof *e);
    uint32_t *groups = malloc(n * sizeof *groups);
    if (!e || !groups) {
        free(e);
        free(groups);
        return BERTH_ENOMEM;
    }
    uint32_t m = 0, ng = 0;
    for (uint32_t i = 0; i < r->n; i++)
        if (!r->rows[i].terminating && k->pods[r->rows[i].pod].workload)
            e[m++] = (wl_entry){k->pods[r->rows[i].pod].workload, i};
    for (uint32_t p = 0; p < k->npods; p++)
        if (k->pods[p].node_name && !k->pods[p].assumed && !k->pods[p].terminating &&
            k->pods[p].workload)
            e[m++] = (wl_entry){k->pods[p].workload, UINT32_MAX};
    qsort(e, m, sizeof *e, cmp_wl_entry);
    for (uint32_t i = 0; i < m; i++)
        if ((i == 0 || strcmp(e[i - 1].workload, e[i].workload)) && e[i].row != UINT32_MAX)
            groups[ng++] = i; /* a workload with pending pods: its first row */
    qsort_r(groups, ng, sizeof *groups, cmp_wl_group, e);
    fputc('\n', out);
    for (uint32_t g = 0; g < ng; g++) {
        uint32_t i = groups[g], total = 0, placed = 0, unplaced = 0;
        const row *first_bad = NULL;
        for (uint32_t j = i; j < m && !strcmp(e[j].workload, e[i].workload); j++) {
            total++;
            const row *rw = e[j].row == UINT32_MAX ? NULL : &r->rows[e[j].row];
            if (!rw || rw->node)
                placed++;
            else if (!unplaced++)
                first_bad = rw;
        }
        fprintf(out, "%s: %u of %u placed", e[i].workload, placed, total);
        if (first_bad) {
            fprintf(out, ", %s: %s", k->pods[first_bad->pod].name,
                    first_bad->message ? first_bad->message : "unschedulable");
            if (unplaced > 1)
                fprintf(out, " (and %u more unplaced)", unplaced - 1);
        }
        fputc('\n', out);
    }
    free(e);
    free(groups);
    return 0;
}

int berth_kube_report_table(FILE *out, const berth_kube_report *r, const berth_kcluster *k)
{
    size_t wp = 3, wn = 4;
    for (uint32_t i = 0; i < r->n; i++) {
        const berth_kpod *p = &k->pods[r->rows[i].pod];
        size_t l = strlen(p->ns) + 1 + strlen(p->name);
        if (l > wp)
            wp = l;
        if (r->rows[i].node && strlen(r->rows[i].node) > wn)
            wn = strlen(r->rows[i].node);
    }
    if (wn < 6)
        wn = 6;
    fprintf(out, "%-*s  %-*s  %-10s  %8s  %6s\n", (int)wp, "POD", (int)wn, "NODE", "QOS",
            "FEASIBLE", "SCORE");
    for (uint32_t i = 0; i < r->n; i++) {
        const row *rw = &r->rows[i];
        const berth_kpod *p = &k->pods[rw->pod];
        char name[600];
        snprintf(name, sizeof name, "%s/%s", p->ns, p->name);
        char score[32] = "-";
        if (rw->node && !rw->preempted)
            snprintf(score, sizeof score, "%" PRId64, rw->total);
        fprintf(out, "%-*s  %-*s  %-10s  %8u  %6s", (int)wp, name, (int)wn,
                rw->node ? rw->node : "<none>", berth_qos_name(p->qos), rw->nfeasible, score);
        if (rw->message)
            fprintf(out, "  %s", rw->message);
        if (rw->preempted)
            fprintf(out, "  %s", rw->preempted);
        fputc('\n', out);
    }
    uint32_t placed = 0, terminating = 0, preemptors = 0;
    for (uint32_t i = 0; i < r->n; i++) {
        placed += r->rows[i].node != NULL;
        terminating += r->rows[i].terminating;
        preemptors += r->rows[i].preempted != NULL;
    }
    if (workload_lines(out, r, k))
        return BERTH_ENOMEM;
    fprintf(out, "\n%u of %u pending pods scheduled", placed, r->n - terminating);
    if (preemptors)
        fprintf(out, " (%u by preemption)", preemptors);
    if (terminating)
        fprintf(out, " (%u terminating, not scheduled)", terminating);
    fputc('\n', out);
    return ferror(out) ? BERTH_EIO : 0;
}

json_t *berth_kube_report_json(berth_kube_report *r)
{
    json_t *root = json_object();
    if (!root || json_object_set(root, "pods", r->pods)) {
        json_decref(root);
        return NULL;
    }
    return root;
}

int berth_kube_size_table(FILE *out, const berth_kcluster *k, const berth_vsphere_opts *o)
{
    fprintf(out, "%-40s  %-10s  %5s  %10s  %12s  %14s\n", "POD", "QOS", "VCPU", "MEMORY",
            "RESERVED CPU", "RESERVED MEMORY");
    for (uint32_t i = 0; i < k->npods; i++) {
        const berth_kpod *p = &k->pods[i];
        berth_vsphere_size sz;
        berth_kube_vsphere_size(p, o, &sz);
        char name[600];
        snprintf(name, sizeof name, "%s/%s", p->ns, p->name);
        fprintf(out, "%-40s  %-10s  %5" PRId64 "  %8" PRId64 "Mi  %11" PRId64 "m  %12" PRId64 "Mi\n",
                name, berth_qos_name(p->qos), sz.vcpu, sz.memory / (1024 * 1024),
                sz.reservation_cpu, sz.reservation_memory / (1024 * 1024));
    }
    return ferror(out) ? BERTH_EIO : 0;
}

json_t *berth_kube_size_json(const berth_kcluster *k, const berth_vsphere_opts *o)
{
    json_t *root = json_object(), *arr = json_array();
    int fail = 0, *bad = &fail;
    if (!root || !arr) {
        json_decref(root);
        json_decref(arr);
        return NULL;
    }
    for (uint32_t i = 0; i < k->npods; i++) {
        const berth_kpod *p = &k->pods[i];
        berth_vsphere_size sz;
        berth_kube_vsphere_size(p, o, &sz);
        json_t *e = json_object(), *res = json_object();
        report_set(bad, e, "namespace", json_string(p->ns));
        report_set(bad, e, "name", json_string(p->name));
        report_set(bad, e, "qosClass", json_string(berth_qos_name(p->qos)));
        report_set(bad, e, "vcpu", json_integer(sz.vcpu));
        report_set(bad, e, "memory", json_integer(sz.memory));
        report_set(bad, res, "cpuMilli", json_integer(sz.reservation_cpu));
        report_set(bad, res, "memory", json_integer(sz.reservation_memory));
        report_set(bad, e, "reservation", res);
        report_append(bad, arr, e);
    }
    report_set(bad, root, "pods", arr);
    return report_done(root, fail);
}

static int cmp_total_desc(const void *a, const void *b)
{
    const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    json_int_t tx = json_integer_value(json_object_get(x, "total"));
    json_int_t ty = json_integer_value(json_object_get(y, "total"));
    return tx > ty ? -1 : tx < ty;
}

/* one pod of --explain, from its JSON with detail */
static int explain_pod(FILE *out, json_t *pod)
{
    {
        const json_t *node = json_object_get(pod, "node");
        fprintf(out, "explain %s/%s: %s\n", json_string_value(json_object_get(pod, "namespace")),
                json_string_value(json_object_get(pod, "name")),
                json_is_string(node)                         ? json_string_value(node)
                : json_is_true(json_object_get(pod, "terminating")) ? "terminating, not scheduled"
                                                                    : "unschedulable");
        json_t *scores = json_object_get(pod, "scores");
        size_t n = json_object_size(scores), k = 0;
        json_t **rows = malloc((n ? n : 1) * sizeof *rows);
        const char **names = malloc((n ? n : 1) * sizeof *names);
        if (!rows || !names) {
            free(rows);
            free(names);
            return BERTH_ENOMEM;
        }
        const char *key;
        json_t *val;
        json_object_foreach(scores, key, val)
        {
            json_object_set_new(val, "_node", json_string(key));
            rows[k++] = val;
        }
        qsort(rows, k, sizeof *rows, cmp_total_desc);
        /* weight x score = contribution per plugin; the contributions add
         * up to the total */
        const json_t *weights = json_object_get(pod, "weights");
        for (size_t j = 0; j < k && j < 5; j++) {
            fprintf(out, "  %s %-30s total %5" JSON_INTEGER_FORMAT " =",
                    j == 0 && json_is_string(node) ? "*" : " ",
                    json_string_value(json_object_get(rows[j], "_node")),
                    json_integer_value(json_object_get(rows[j], "total")));
            const char *pl;
            json_t *sv;
            int first = 1;
            json_object_foreach(json_object_get(rows[j], "plugins"), pl, sv)
            {
                const json_t *wv = json_object_get(weights, pl);
                json_int_t w = json_is_integer(wv) ? json_integer_value(wv) : 1;
                json_int_t s = json_integer_value(sv);
                fprintf(out, "%s %s %" JSON_INTEGER_FORMAT "x%" JSON_INTEGER_FORMAT
                        "=%" JSON_INTEGER_FORMAT, first ? "" : " +", pl, w, s, w * s);
                first = 0;
            }
            fputc('\n', out);
        }
        if (k > 5)
            fprintf(out, "    ... and %zu more feasible nodes\n", k - 5);
        for (size_t j = 0; j < k; j++)
            json_object_del(rows[j], "_node");
        free(rows);
        free(names);
        /* rejections by reason */
        json_t *filt = json_object_get(pod, "filtered");
        json_t *counts = json_object();
        json_object_foreach(filt, key, val)
        {
            size_t x;
            json_t *reason;
            json_array_foreach(val, x, reason)
            {
                const char *rs = json_string_value(reason);
                json_t *c = json_object_get(counts, rs);
                json_object_set_new(counts, rs, json_integer(c ? json_integer_value(c) + 1 : 1));
            }
        }
        json_object_foreach(counts, key, val)
            fprintf(out, "    rejected %" JSON_INTEGER_FORMAT " node(s): %s\n",
                    json_integer_value(val), key);
        json_decref(counts);
        const json_t *msg = json_object_get(pod, "message");
        if (json_is_string(msg))
            fprintf(out, "    %s\n", json_string_value(msg));
    }
    return ferror(out) ? BERTH_EIO : 0;
}

uint32_t berth_kube_report_size(const berth_kube_report *r)
{
    return r->n;
}

int berth_kube_report_row(const berth_kube_report *r, uint32_t i, uint32_t *pod, const char **node,
                          const char **message)
{
    const row *rw = &r->rows[i];
    *pod = rw->pod;
    *node = rw->node;
    *message = rw->terminating ? "being deleted (metadata.deletionTimestamp): not scheduled"
                               : rw->message;
    return rw->terminating;
}

int berth_kube_report_explain(FILE *out, const berth_kube_report *r)
{
    size_t i;
    json_t *pod;
    json_array_foreach(r->pods, i, pod)
    {
        int rc = explain_pod(out, pod);
        if (rc)
            return rc;
    }
    return 0;
}
