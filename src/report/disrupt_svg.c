/* report/disrupt_svg.c - the `disrupt plan --svg` picture: the cost and
 * node count before and after the plan as two bars, then one row per node,
 * before (left) and after (right) with the action between: deleted,
 * replaced (by the new nodes on the right), blocked (with the reason) or
 * kept, each with its instance type and price. Acted-on nodes come first;
 * beyond DSVG_MAX_ROWS rows the kept nodes are summarised. Written through
 * report/svg.h. */
#include "berth/plan_report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "berth/error.h"
#include "report/plan_common.h"
#include "report/svg.h"

#define W 1400.0
#define M 16.0
#define BOX_W 470.0
#define ACT_X 500.0
#define AFTER_X 880.0
#define AFTER_W (W - M - AFTER_X)
#define ROW 24.0
#define DSVG_MAX_ROWS 60u

#define C_DEL "#d9534f"
#define C_REP "#e0862b"
#define C_NEW "#3f9a4a"
#define C_KEEP "#eef0f3"
#define C_BLOCK "#f3d36b"

/* "name · type capacity zone · $0.1920/h" of kube node n into buf. */
static void node_text(const berth_disrupt *m, uint32_t n, char *buf, size_t size)
{
    const berth_knode *kn = &m->kube.nodes[n];
    const char *type = berth_labels_get(&kn->labels, "node.kubernetes.io/instance-type");
    const char *cap = berth_labels_get(&kn->labels, "karpenter.sh/capacity-type");
    const char *zone = berth_labels_get(&kn->labels, "topology.kubernetes.io/zone");
    snprintf(buf, size, "%s \xc2\xb7 %s%s%s%s%s \xc2\xb7 $%.4f/h", kn->name, type ? type : "?", cap ? " " : "",
             cap ? cap : "", zone ? " " : "", zone ? zone : "", berth_node_price(m, n));
}

static const char *plural(int64_t n)
{
    return n == 1 ? "" : "s";
}

static void box(FILE *out, double x, double y, double w, const char *fill, const char *text_cls,
                const char *text, const char *title)
{
    rsvg_rect(out, x, y, w, ROW - 5.0, fill, "rx=\"3\" stroke=\"#aab0b8\" stroke-width=\"0.5\"",
              "%s", title);
    fprintf(out, "<text class=\"%s\" x=\"%.1f\" y=\"%.1f\">", text_cls, x + 6.0, y + 13.5);
    rsvg_esc_fit(out, text, (size_t)((w - 12.0) / (12.0 * 0.58)));
    fputs("</text>\n", out);
}

int berth_report_disrupt_svg(FILE *out, const berth_disrupt *m, const berth_dplan *p)
{
    uint32_t nn = m->kube.nnodes;
    /* per node: 0 kept, 1 + action index, or UINT32_MAX - blocked index */
    uint32_t *state = calloc(nn ? nn : 1, sizeof *state);
    if (!state)
        return BERTH_ENOMEM;
    for (uint32_t a = 0; a < p->nactions; a++)
        for (uint32_t j = 0; j < p->actions[a].nnodes; j++)
            if (p->actions[a].nodes[j] < nn)
                state[p->actions[a].nodes[j]] = 1 + a;
    for (uint32_t b = 0; b < p->nblocked; b++)
        if (p->blocked[b].node < nn && !state[p->blocked[b].node])
            state[p->blocked[b].node] = UINT32_MAX - b;
    uint32_t rows = 0, kept = 0;
    for (uint32_t a = 0; a < p->nactions; a++) {
        const berth_daction *x = &p->actions[a];
        rows += x->nnodes > x->nreplacements ? x->nnodes : x->nreplacements;
    }
    for (uint32_t n = 0; n < nn; n++)
        if (state[n] == 0)
            kept++;
        else if (state[n] > p->nactions)
            rows++;
    uint32_t room = rows < DSVG_MAX_ROWS ? DSVG_MAX_ROWS - rows : 0;
    uint32_t kept_drawn = kept < room ? kept : room;
    rows += kept_drawn;
    double top = 150.0;
    double h = top + rows * ROW + (kept > kept_drawn ? ROW : 0.0) + M + 8.0;

    char at[40], text[512], title[768];
    report_fmt_time(p->at, at, sizeof at);
    rsvg_open(out, W, h, NULL);
    rsvg_text(out, M, 30.0, "rs-t", NULL,
              "disrupt plan at %s: %" PRId64 " node%s \xe2\x86\x92 %" PRId64
              ", $%.4f/h \xe2\x86\x92 $%.4f/h (saves $%.4f/h)",
              at, p->nodes_before, plural(p->nodes_before), p->nodes_after, p->cost_before, p->cost_after,
              p->cost_before - p->cost_after);
    /* cost bars */
    double most = p->cost_before > p->cost_after ? p->cost_before : p->cost_after;
    double scale = most > 0 ? 700.0 / most : 0.0;
    rsvg_text(out, M, 58.0, "rs-l", NULL, "before");
    rsvg_rect(out, M + 50.0, 46.0, p->cost_before * scale, 16.0, "#6b7c8c", "rx=\"2\"",
              "before: %" PRId64 " node%s, $%.4f per hour", p->nodes_before,
              plural(p->nodes_before), p->cost_before);
    rsvg_text(out, M + 58.0 + p->cost_before * scale, 58.0, "rs-l", NULL,
              "%" PRId64 " node%s, $%.4f/h", p->nodes_before, plural(p->nodes_before), p->cost_before);
    rsvg_text(out, M, 82.0, "rs-l", NULL, "after");
    rsvg_rect(out, M + 50.0, 70.0, p->cost_after * scale, 16.0, C_NEW, "rx=\"2\"",
              "after: %" PRId64 " node%s, $%.4f per hour (lower bound %" PRId64 " node%s, $%.4f/h)",
              p->nodes_after, plural(p->nodes_after), p->cost_after, p->bound_nodes,
              plural(p->bound_nodes), p->bound_cost);
    rsvg_text(out, M + 58.0 + p->cost_after * scale, 82.0, "rs-l", NULL,
              "%" PRId64 " node%s, $%.4f/h (lower bound %" PRId64 " node%s, $%.4f/h)", p->nodes_after,
              plural(p->nodes_after), p->cost_after, p->bound_nodes, plural(p->bound_nodes),
              p->bound_cost);
    /* legend */
    static const struct {
        const char *fill, *what;
    } key[] = {{C_DEL, "deleted"}, {C_REP, "replaced"}, {C_NEW, "new node (replacement)"},
               {C_BLOCK, "blocked (kept)"}, {C_KEEP, "kept"}};
    double lx = M;
    for (size_t i = 0; i < sizeof key / sizeof key[0]; i++) {
        rsvg_rect(out, lx, 100.0, 14.0, 12.0, key[i].fill, "stroke=\"#aab0b8\" stroke-width=\"0.5\"",
                  NULL);
        rsvg_text(out, lx + 19.0, 110.5, "rs-l", NULL, "%s", key[i].what);
        lx += 40.0 + rsvg_text_w(strlen(key[i].what), 12.0);
    }
    rsvg_text(out, lx + 10.0, 110.5, "rs-n", NULL, "prices per node per hour; hover for details");
    rsvg_text(out, M, 138.0, "rs-h", NULL, "before");
    rsvg_text(out, ACT_X, 138.0, "rs-h", NULL, "action");
    rsvg_text(out, AFTER_X, 138.0, "rs-h", NULL, "after");

    double y = top;
    for (uint32_t a = 0; a < p->nactions; a++) {
        const berth_daction *x = &p->actions[a];
        uint32_t span = x->nnodes > x->nreplacements ? x->nnodes : x->nreplacements;
        rsvg_begin_g(out, NULL);
        for (uint32_t j = 0; j < x->nnodes; j++) {
            node_text(m, x->nodes[j], text, sizeof text);
            snprintf(title, sizeof title, "%s\n%s (%s)", text, x->replace ? "replaced" : "deleted",
                     berth_dreason_name(x->reason));
            box(out, M, y + j * ROW, BOX_W, x->replace ? C_REP : C_DEL, "rs-w", text, title);
        }
        rsvg_text(out, ACT_X, y + 13.5, "rs-l", NULL, "%s %s \xe2\x86\x92  saves $%.4f/h",
                  x->replace ? "replace" : "delete", berth_dreason_name(x->reason), x->savings);
        for (uint32_t j = 0; j < x->nreplacements; j++) {
            const berth_dreplacement *r = &x->replacements[j];
            snprintf(text, sizeof text, "new %s %s %s \xc2\xb7 $%.4f/h \xc2\xb7 NodePool %s",
                     r->instance_type ? r->instance_type : "?",
                     berth_capacity_type_name(r->capacity_type), r->zone ? r->zone : "?", r->price,
                     r->nodepool ? r->nodepool : "?");
            box(out, AFTER_X, y + j * ROW, AFTER_W, C_NEW, "rs-w", text, text);
        }
        if (!x->nreplacements)
            rsvg_text(out, AFTER_X + 6.0, y + 13.5, "rs-n", NULL, "(removed)");
        rsvg_end_g(out);
        y += span * ROW;
    }
    for (uint32_t n = 0; n < nn; n++) {
        if (state[n] <= p->nactions)
            continue;
        const berth_dblocked *b = &p->blocked[UINT32_MAX - state[n]];
        node_text(m, n, text, sizeof text);
        snprintf(title, sizeof title, "%s\nblocked: %s", text, b->reason);
        rsvg_begin_g(out, NULL);
        box(out, M, y, BOX_W, C_BLOCK, "rs-l", text, title);
        fprintf(out, "<text class=\"rs-l\" x=\"%.1f\" y=\"%.1f\"><title>", ACT_X, y + 13.5);
        rsvg_esc(out, b->reason);
        fputs("</title>blocked: ", out);
        rsvg_esc_fit(out, b->reason, 50);
        fputs("</text>\n", out);
        box(out, AFTER_X, y, AFTER_W, C_BLOCK, "rs-l", text, title);
        rsvg_end_g(out);
        y += ROW;
    }
    uint32_t drawn = 0;
    double kept_cost = 0;
    for (uint32_t n = 0; n < nn; n++) {
        if (state[n] != 0)
            continue;
        if (drawn >= kept_drawn) {
            kept_cost += berth_node_price(m, n);
            continue;
        }
        node_text(m, n, text, sizeof text);
        snprintf(title, sizeof title, "%s\nkept", text);
        box(out, M, y, BOX_W, C_KEEP, "rs-l", text, title);
        rsvg_text(out, ACT_X, y + 13.5, "rs-n", NULL, "kept");
        box(out, AFTER_X, y, AFTER_W, C_KEEP, "rs-l", text, title);
        y += ROW;
        drawn++;
    }
    if (kept > kept_drawn)
        rsvg_text(out, M, y + 13.5, "rs-l", NULL,
                  "\xe2\x80\xa6 and %" PRIu32 " more kept nodes ($%.4f/h) not drawn", kept - kept_drawn,
                  kept_cost);
    rsvg_close(out);
    free(state);
    return ferror(out) ? BERTH_EIO : 0;
}
