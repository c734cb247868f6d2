/* report/kube_svg.c - the `kube schedule --svg` picture: every node as two
 * horizontal bars, cpu and memory requested against allocatable after the
 * run (pods bound before the run darker, pods this run placed lighter),
 * its pod count; beyond BERTH_KUBE_SVG_MAX_NODES nodes the rest are
 * summarised with a histogram of every node's utilisation; then the pods
 * not scheduled with kube-scheduler's reason. Written through report/svg.h. */
#include "berth/kube_report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "berth/error.h"
#include "report/svg.h"

#define W 1400.0
#define M 16.0
#define NAME_W 268.0
#define CPU_X 300.0
#define MEM_X 750.0
#define BAR_W 310.0
#define PODS_X 1180.0
#define ROW 24.0
#define HIST_H 70.0
#define MAX_PENDING 30u

#define C_OLD "#2f6f9f"
#define C_NEW "#8cc0e3"
#define C_BACK "#e6eaee"
#define C_OVER "#c62828"

typedef struct node_use {
    int64_t cpu_old, cpu_new, mem_old, mem_new;
    uint32_t pods, pods_new;
} node_use;

static int by_name(const void *a, const void *b, void *ctx)
{
    const berth_kcluster *k = ctx;
    return strcmp(k->nodes[*(const uint32_t *)a].name, k->nodes[*(const uint32_t *)b].name);
}

/* The node named name: its index, or BERTH_KUBE_NONE. O(log nodes). */
static uint32_t find_node(const berth_kcluster *k, const uint32_t *sorted, const char *name)
{
    uint32_t lo = 0, hi = k->nnodes;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int c = strcmp(k->nodes[sorted[mid]].name, name);
        if (c == 0)
            return sorted[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return BERTH_KUBE_NONE;
}

static double frac(int64_t used, int64_t cap)
{
    return cap > 0 ? (double)used / (double)cap : (used > 0 ? 2.0 : 0.0);
}

/* A bar at (x, y): old then new request over the allocatable background,
 * a red end mark when requests exceed it, the numbers after it. */
static void bar(FILE *out, double x, double y, int64_t old, int64_t add, int64_t cap, double unit)
{
    double f_old = frac(old, cap), f_all = frac(old + add, cap);
    rsvg_rect(out, x, y, BAR_W, 14.0, C_BACK, "rx=\"2\"", NULL);
    double w_old = BAR_W * (f_old > 1.0 ? 1.0 : f_old);
    double w_all = BAR_W * (f_all > 1.0 ? 1.0 : f_all);
    if (w_old > 0)
        rsvg_rect(out, x, y, w_old, 14.0, C_OLD, "rx=\"2\"", NULL);
    if (w_all > w_old)
        rsvg_rect(out, x + w_old, y, w_all - w_old, 14.0, C_NEW, NULL, NULL);
    if (f_all > 1.0)
        rsvg_rect(out, x + BAR_W - 3.0, y - 2.0, 3.0, 18.0, C_OVER, NULL, NULL);
    if (cap > 0)
        rsvg_text(out, x + BAR_W + 8.0, y + 11.5, "rs-l", NULL, "%.1f / %.1f  (%.0f%%)",
                  (double)(old + add) / unit, (double)cap / unit, 100.0 * f_all);
    else
        rsvg_text(out, x + BAR_W + 8.0, y + 11.5, "rs-l", NULL, "%.1f / 0", (double)(old + add) / unit);
}

/* Histogram of nodes by requested fraction (10 buckets, the last one
 * includes 100% and above) at (x, y). */
static void histogram(FILE *out, double x, double y, const char *what, const uint32_t b[10],
                      uint32_t nodes)
{
    uint32_t most = 1;
    for (int i = 0; i < 10; i++)
        if (b[i] > most)
            most = b[i];
    rsvg_text(out, x, y, "rs-h", NULL, "all %" PRIu32 " nodes by %s requested (%% of allocatable)",
              nodes, what);
    double base = y + 20.0 + HIST_H;
    for (int i = 0; i < 10; i++) {
        double h = HIST_H * (double)b[i] / (double)most;
        double bx = x + i * 44.0;
        rsvg_rect(out, bx, base - h, 36.0, h, C_OLD, NULL, "%" PRIu32 " nodes with %d-%d%% %s requested",
                  b[i], i * 10, i == 9 ? 100 : i * 10 + 9, what);
        rsvg_text(out, bx + 18.0, base - h - 4.0, "rs-n", "middle", "%" PRIu32, b[i]);
        rsvg_text(out, bx + 18.0, base + 14.0, "rs-n", "middle", "%d%%", i * 10);
    }
}

static int bucket(double f)
{
    int i = (int)(f * 10.0);
    return i < 0 ? 0 : i > 9 ? 9 : i;
}

int berth_kube_report_svg(FILE *out, const berth_kube_report *r, const berth_kcluster *k)
{
    uint32_t nn = k->nnodes;
    node_use *u = calloc(nn ? nn : 1, sizeof *u);
    uint32_t *sorted = malloc((nn ? nn : 1) * sizeof *sorted);
    if (!u || !sorted) {
        free(u);
        free(sorted);
        return BERTH_ENOMEM;
    }
    for (uint32_t i = 0; i < nn; i++)
        sorted[i] = i;
    qsort_r(sorted, nn, sizeof *sorted, by_name, (void *)k);
    for (uint32_t p = 0; p < k->npods; p++) {
        const berth_kpod *pod = &k->pods[p];
        if (!pod->node_name)
            continue;
        uint32_t n = find_node(k, sorted, pod->node_name);
        if (n == BERTH_KUBE_NONE)
            continue;
        u[n].pods++;
        if (pod->assumed) {
            u[n].cpu_new += pod->req[BERTH_KRES_CPU];
            u[n].mem_new += pod->req[BERTH_KRES_MEMORY];
            u[n].pods_new++;
        } else {
            u[n].cpu_old += pod->req[BERTH_KRES_CPU];
            u[n].mem_old += pod->req[BERTH_KRES_MEMORY];
        }
    }
    uint32_t nrows = berth_kube_report_size(r), placed = 0, pending = 0, deleting = 0;
    for (uint32_t i = 0; i < nrows; i++) {
        uint32_t pod;
        const char *node, *msg;
        deleting += (uint32_t)berth_kube_report_row(r, i, &pod, &node, &msg);
        if (node)
            placed++;
        else
            pending++;
    }
    uint32_t drawn = nn > BERTH_KUBE_SVG_MAX_NODES ? BERTH_KUBE_SVG_MAX_NODES : nn;
    uint32_t listed = pending > MAX_PENDING ? MAX_PENDING : pending;
    double nodes_y = 96.0;
    double summary_y = nodes_y + drawn * ROW + 10.0;
    double summary_h = nn > drawn ? 40.0 + 20.0 + HIST_H + 30.0 : 0.0;
    double pend_y = summary_y + summary_h + 16.0;
    double h = pend_y + (pending ? 24.0 + listed * 18.0 + (pending > listed ? 18.0 : 0.0) : 0.0) + M;

    rsvg_open(out, W, h, NULL);
    char del[64] = "";
    if (deleting)
        snprintf(del, sizeof del, " (and %" PRIu32 " being deleted, not scheduled)", deleting);
    rsvg_text(out, M, 30.0, "rs-t", NULL,
              "kube schedule: %" PRIu32 " node%s, %" PRIu32 " of %" PRIu32
              " pending pods scheduled%s",
              nn, nn == 1 ? "" : "s", placed, nrows - deleting, del);
    /* legend */
    double lx = M;
    rsvg_rect(out, lx, 40.0, 14.0, 12.0, C_OLD, NULL, NULL);
    rsvg_text(out, lx + 19.0, 50.5, "rs-l", NULL, "requested by pods bound before the run");
    lx += 270.0;
    rsvg_rect(out, lx, 40.0, 14.0, 12.0, C_NEW, NULL, NULL);
    rsvg_text(out, lx + 19.0, 50.5, "rs-l", NULL, "requested by pods this run placed");
    lx += 240.0;
    rsvg_rect(out, lx, 40.0, 14.0, 12.0, C_BACK, NULL, NULL);
    rsvg_text(out, lx + 19.0, 50.5, "rs-l", NULL, "allocatable");
    lx += 100.0;
    rsvg_rect(out, lx + 5.0, 38.0, 3.0, 16.0, C_OVER, NULL, NULL);
    rsvg_text(out, lx + 14.0, 50.5, "rs-l", NULL, "requests above allocatable; hover a node for details");
    rsvg_text(out, M, 80.0, "rs-h", NULL, "node");
    rsvg_text(out, CPU_X, 80.0, "rs-h", NULL, "cpu requested / allocatable (cores)");
    rsvg_text(out, MEM_X, 80.0, "rs-h", NULL, "memory requested / allocatable (GiB)");
    rsvg_text(out, PODS_X, 80.0, "rs-h", NULL, "pods");

    const double GI = 1024.0 * 1024.0 * 1024.0;
    for (uint32_t i = 0; i < drawn; i++) {
        const berth_knode *n = &k->nodes[i];
        const node_use *x = &u[i];
        double y = nodes_y + i * ROW;
        rsvg_begin_g(out,
                     "%s%s%s\ncpu %.3f of %.3f cores requested (%.3f placed by this run)\n"
                     "memory %.2f of %.2f GiB requested (%.2f placed by this run)\n"
                     "%" PRIu32 " pods (%" PRIu32 " placed by this run), at most %" PRId64,
                     n->name, n->unschedulable ? " (cordoned)" : "",
                     n->not_ready ? " (not ready)" : "", (x->cpu_old + x->cpu_new) / 1000.0,
                     n->alloc[BERTH_KRES_CPU] / 1000.0, x->cpu_new / 1000.0,
                     (x->mem_old + x->mem_new) / GI, n->alloc[BERTH_KRES_MEMORY] / GI,
                     x->mem_new / GI, x->pods, x->pods_new, n->alloc_pods);
        if (i % 2)
            rsvg_rect(out, M - 4.0, y - 4.0, W - 2 * M + 8.0, ROW, "#f6f8fa", NULL, NULL);
        fprintf(out, "<text class=\"rs-l\" x=\"%.1f\" y=\"%.1f\">", M, y + 11.5);
        rsvg_esc_fit(out, n->name, (size_t)((NAME_W - 8.0) / (12.0 * 0.58)));
        fputs("</text>\n", out);
        bar(out, CPU_X, y, x->cpu_old, x->cpu_new, n->alloc[BERTH_KRES_CPU], 1000.0);
        bar(out, MEM_X, y, x->mem_old, x->mem_new, n->alloc[BERTH_KRES_MEMORY], GI);
        rsvg_text(out, PODS_X, y + 11.5, "rs-l", NULL, "%" PRIu32 " / %" PRId64 "%s%s", x->pods,
                  n->alloc_pods, n->unschedulable ? "  cordoned" : "",
                  n->not_ready ? "  not ready" : "");
        rsvg_end_g(out);
    }
    if (nn > drawn) {
        int64_t cpu = 0, cap_cpu = 0, mem = 0, cap_mem = 0;
        uint32_t pods = 0, hc[10] = {0}, hm[10] = {0};
        for (uint32_t i = 0; i < nn; i++) {
            const berth_knode *n = &k->nodes[i];
            int64_t c = u[i].cpu_old + u[i].cpu_new, m = u[i].mem_old + u[i].mem_new;
            hc[bucket(frac(c, n->alloc[BERTH_KRES_CPU]))]++;
            hm[bucket(frac(m, n->alloc[BERTH_KRES_MEMORY]))]++;
            if (i >= drawn) {
                cpu += c;
                cap_cpu += n->alloc[BERTH_KRES_CPU];
                mem += m;
                cap_mem += n->alloc[BERTH_KRES_MEMORY];
                pods += u[i].pods;
            }
        }
        rsvg_text(out, M, summary_y + 14.0, "rs-l", NULL,
                  "\xe2\x80\xa6 and %" PRIu32 " more nodes not drawn: %.1f of %.1f cores (%.0f%%), "
                  "%.1f of %.1f GiB (%.0f%%), %" PRIu32 " pods",
                  nn - drawn, cpu / 1000.0, cap_cpu / 1000.0, 100.0 * frac(cpu, cap_cpu), mem / GI,
                  cap_mem / GI, 100.0 * frac(mem, cap_mem), pods);
        histogram(out, M, summary_y + 44.0, "cpu", hc, nn);
        histogram(out, M + 520.0, summary_y + 44.0, "memory", hm, nn);
    }
    if (pending) {
        rsvg_text(out, M, pend_y + 12.0, "rs-h", NULL, "Not scheduled (%" PRIu32 " pod%s), with the reason",
                  pending, pending == 1 ? "" : "s");
        uint32_t shown = 0;
        for (uint32_t i = 0; i < nrows && shown < listed; i++) {
            uint32_t pod;
            const char *node, *msg;
            berth_kube_report_row(r, i, &pod, &node, &msg);
            if (node)
                continue;
            const berth_kpod *p = &k->pods[pod];
            double y = pend_y + 24.0 + shown * 18.0;
            rsvg_begin_g(out, "%s/%s: %s", p->ns, p->name, msg ? msg : "not scheduled");
            rsvg_rect(out, M, y + 2.0, 10.0, 10.0, C_OVER, "rx=\"5\"", NULL);
            fprintf(out, "<text class=\"rs-l\" x=\"%.1f\" y=\"%.1f\"><tspan font-weight=\"bold\">",
                    M + 16.0, y + 11.5);
            rsvg_esc_fit(out, p->ns, 40);
            fputc('/', out);
            rsvg_esc_fit(out, p->name, 60);
            fputs("</tspan>  ", out);
            rsvg_esc_fit(out, msg ? msg : "not scheduled", 150);
            fputs("</text>\n", out);
            rsvg_end_g(out);
            shown++;
        }
        if (pending > listed)
            rsvg_text(out, M + 16.0, pend_y + 24.0 + listed * 18.0 + 11.5, "rs-n", NULL,
                      "\xe2\x80\xa6 and %" PRIu32 " more (see the table or JSON output)",
                      pending - listed);
    }
    rsvg_close(out);
    free(u);
    free(sorted);
    return ferror(out) ? BERTH_EIO : 0;
}
