/* report/autoscale_svg.c - the `autoscale simulate --svg` picture: three
 * charts over the same time axis, one column per step: nodes (with the
 * nodes launched and terminated at each step), pods pending, and the cost
 * per hour; replacements and event steps are marked, every step has a
 * hover title with its figures. Written through report/svg.h. */
#include "berth/plan_report.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "berth/error.h"
#include "report/plan_common.h"
#include "report/svg.h"

#define W 1400.0
#define M 16.0
#define PX 90.0                  /* plot left */
#define PW (W - PX - 30.0)       /* plot width */
#define CH 150.0                 /* chart height */
#define GAP 56.0                 /* between charts (title and axis labels) */
#define TOP 118.0
#define MAX_TITLED 3000u         /* steps with a hover title */

#define C_NODES "#4e79a7"
#define C_UP "#3f9a4a"
#define C_DOWN "#d9534f"
#define C_PEND "#e0862b"
#define C_COST "#6b4f9e"
#define C_REP "#b07aa1"

/* A round axis maximum at least v: 1, 2 or 5 x 10^k; for counts (whole
 * numbers at 0, max/2 and max) 2, 4 or 10 x 10^k, at least 2. */
static double nice_max(double v, int counts)
{
    if (!(v > 0))
        v = counts ? 2.0 : 1.0;
    double p = pow(10.0, floor(log10(v)));
    double one[3] = {1.0, 2.0, 5.0}, whole[3] = {2.0, 4.0, 10.0};
    const double *steps = counts ? whole : one;
    for (int i = 0; i < 3; i++)
        if (steps[i] * p >= v && (!counts || steps[i] * p >= 2.0))
            return steps[i] * p;
    return 10.0 * p;
}

/* The chart frame at y (top): title, horizontal grid at 0, max/2 and max
 * with labels (decimals places), and the time labels below. */
static void frame(FILE *out, double y, const char *title, double max, int decimals,
                  const berth_asim_result *r)
{
    rsvg_text(out, M, y - 12.0, "rs-h", NULL, "%s", title);
    for (int i = 0; i <= 2; i++) {
        double gy = y + CH - CH * i / 2.0;
        fprintf(out,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                "stroke-width=\"1\"/>\n",
                PX, gy, PX + PW, gy, i ? "#e3e6ea" : "#9aa3ad");
        rsvg_text(out, PX - 8.0, gy + 4.0, "rs-n", "end", "%.*f", decimals, max * i / 2.0);
    }
    uint32_t n = r->nsteps;
    uint32_t every = n > 12 ? (n + 11) / 12 : 1;
    for (uint32_t s = 0; s < n; s += every) {
        char t[40];
        report_fmt_time(r->steps[s].at, t, sizeof t);
        /* "2024-05-01T12:05:00Z": the clock, and the day on the first label */
        const char *clock = strlen(t) >= 16 ? t + 11 : t;
        double x = PX + (s + 0.5) * PW / n;
        rsvg_text(out, x, y + CH + 15.0, "rs-n", "middle", "%.5s", clock);
    }
}

int berth_report_autoscale_timeline_svg(FILE *out, const berth_asim_options *o,
                                        const berth_asim_result *r)
{
    uint32_t n = r->nsteps;
    uint32_t nmax = 0, pmax = 0, lmax = 0;
    double cmax = 0;
    for (uint32_t s = 0; s < n; s++) {
        const berth_asim_step *st = &r->steps[s];
        if (st->nodes > nmax)
            nmax = st->nodes;
        if (st->pending > pmax)
            pmax = st->pending;
        if (st->launched > lmax)
            lmax = st->launched;
        if (st->terminated > lmax)
            lmax = st->terminated;
        if (st->cost_per_hour > cmax)
            cmax = st->cost_per_hour;
    }
    double y1 = TOP, y2 = y1 + CH + GAP, y3 = y2 + CH + GAP;
    double h = y3 + CH + 30.0 + M;
    double bw = n ? PW / n : PW;
    char from[40], to[40];
    report_fmt_time(o->from, from, sizeof from);
    report_fmt_time(o->to, to, sizeof to);

    rsvg_open(out, W, h, NULL);
    rsvg_text(out, M, 30.0, "rs-t", NULL, "autoscale simulate: %s to %s, %" PRIu32 " steps of %" PRId64 "s",
              from, to, n, o->step);
    rsvg_text(out, M, 52.0, "rs-l", NULL,
              "total cost $%.4f \xc2\xb7 nodes %" PRIu32 "..%" PRIu32 " \xc2\xb7 launched %" PRIu32
              " \xc2\xb7 terminated %" PRIu32 " \xc2\xb7 replacements %" PRIu32
              " \xc2\xb7 pod-pending time %.0f s (longest %.0f s)",
              r->total_cost, r->nodes_min, r->nodes_max, r->launched, r->terminated, r->nreps,
              r->pending_seconds, r->max_pending_seconds);
    /* legend */
    static const struct {
        const char *fill, *what;
    } key[] = {{C_NODES, "nodes (registered, launching, draining)"},
               {C_UP, "nodes launched in the step"},
               {C_DOWN, "nodes terminated in the step"},
               {C_PEND, "pods pending after the step"},
               {C_COST, "cost per hour"},
               {C_REP, "replacement started"}};
    double lx = M;
    for (size_t i = 0; i < sizeof key / sizeof key[0]; i++) {
        rsvg_rect(out, lx, 62.0, 14.0, 12.0, key[i].fill, NULL, NULL);
        rsvg_text(out, lx + 19.0, 72.5, "rs-l", NULL, "%s", key[i].what);
        lx += 34.0 + rsvg_text_w(strlen(key[i].what), 12.0);
    }

    /* 1: nodes, with the launched and terminated ones at each step */
    double nm = nice_max((double)(nmax + lmax), 1);
    frame(out, y1, "Nodes per step (green: launched, red: terminated; ticks under the time axis: steps where events apply)", nm, 0, r);
    fprintf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", C_NODES);
    for (uint32_t s = 0; s < n; s++) {
        double y = y1 + CH - CH * r->steps[s].nodes / nm;
        fprintf(out, "%.1f,%.1f %.1f,%.1f ", PX + s * bw, y, PX + (s + 1) * bw, y);
    }
    fputs("\"/>\n", out);
    for (uint32_t s = 0; s < n; s++) {
        const berth_asim_step *st = &r->steps[s];
        double base = y1 + CH - CH * st->nodes / nm;
        /* launched nodes count in the step's nodes (below the line); the
         * terminated ones no longer do (above it) */
        if (st->launched)
            rsvg_rect(out, PX + s * bw + bw * 0.15, base, bw * 0.7, CH * st->launched / nm, C_UP,
                      "fill-opacity=\"0.85\"", NULL);
        if (st->terminated)
            rsvg_rect(out, PX + s * bw + bw * 0.15, base - CH * st->terminated / nm, bw * 0.7,
                      CH * st->terminated / nm, C_DOWN, "fill-opacity=\"0.75\"", NULL);
    }
    /* 2: pending pods */
    double pm = nice_max((double)pmax, 1);
    frame(out, y2, "Pods pending after each step", pm, 0, r);
    for (uint32_t s = 0; s < n; s++)
        if (r->steps[s].pending)
            rsvg_rect(out, PX + s * bw, y2 + CH - CH * r->steps[s].pending / pm, bw, CH * r->steps[s].pending / pm,
                      C_PEND, NULL, NULL);
    /* 3: cost per hour */
    double cm = nice_max(cmax, 0);
    frame(out, y3, "Cost per hour ($)", cm, cm < 1.0 ? 3 : 2, r);
    fprintf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", C_COST);
    for (uint32_t s = 0; s < n; s++) {
        double y = y3 + CH - CH * r->steps[s].cost_per_hour / cm;
        fprintf(out, "%.1f,%.1f %.1f,%.1f ", PX + s * bw, y, PX + (s + 1) * bw, y);
    }
    fputs("\"/>\n", out);

    /* event steps: a tick above the first chart; every step: a hover band */
    for (uint32_t s = 0; s < n; s++) {
        const berth_asim_step *st = &r->steps[s];
        if (st->nev)
            rsvg_rect(out, PX + s * bw + bw / 2 - 1.5, y1 + CH + 20.0, 3.0, 8.0, "#333", NULL,
                      "%" PRIu32 " event%s applied", st->nev, st->nev == 1 ? "" : "s");
        if (n > MAX_TITLED)
            continue;
        char at[40];
        report_fmt_time(st->at, at, sizeof at);
        rsvg_rect(out, PX + s * bw, y1, bw, y3 + CH - y1, "#000", "fill-opacity=\"0\"",
                  "%s\n%" PRIu32 " nodes (+%" PRIu32 " launched, -%" PRIu32 " terminated)\n"
                  "%" PRIu32 " pods pending\n$%.4f per hour\n%" PRIu32 " events, %" PRIu32
                  " replacements started",
                  at, st->nodes, st->launched, st->terminated, st->pending, st->cost_per_hour,
                  st->nev, st->nrep);
    }
    /* replacements: a mark across the charts at their step */
    for (uint32_t i = 0; i < r->nreps; i++) {
        const berth_asim_replace *rp = &r->reps[i];
        double x = PX + (o->step > 0 ? (double)(rp->at - o->from) / (double)o->step + 0.5 : 0) * bw;
        char at[40];
        report_fmt_time(rp->at, at, sizeof at);
        rsvg_begin_g(out, "%s: replacing %s by %s (%s %s %s)", at, rp->node ? rp->node : "?",
                     rp->new_node ? rp->new_node : "?", rp->type_name ? rp->type_name : "?",
                     berth_capacity_type_name(rp->capacity_type), rp->zone ? rp->zone : "?");
        fprintf(out,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                "stroke-width=\"2\" stroke-dasharray=\"4 3\"/>\n",
                x, y1, x, y3 + CH, C_REP);
        rsvg_rect(out, x - 5.0, y1 - 6.0, 10.0, 10.0, C_REP, "rx=\"5\"", NULL);
        rsvg_end_g(out);
    }
    rsvg_close(out);
    return ferror(out) ? BERTH_EIO : 0;
}
