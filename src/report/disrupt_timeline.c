/* report/disrupt_timeline.c - the `disrupt simulate` timeline as a table
 * (one row per recorded step with its events, then a summary) and as JSON
 * (docs/disrupt.md "Simulate"), shared by the CLI and the service. */
#include "berth/plan_report.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "report/plan_common.h"

/* 90 -> "1m30s", 3600 -> "1h", 0 -> "0s" */
static void fmt_duration(int64_t s, char *buf, size_t size)
{
    long long h = s / 3600, mi = s % 3600 / 60, se = s % 60;
    size_t n = 0;
    buf[0] = 0;
    if (h)
        n += (size_t)snprintf(buf + n, size - n, "%lldh", h);
    if (mi && n < size)
        n += (size_t)snprintf(buf + n, size - n, "%lldm", mi);
    if ((se || !s) && n < size)
        snprintf(buf + n, size - n, "%llds", se);
}

static const berth_dreason order[4] = {BERTH_DR_EXPIRED, BERTH_DR_DRIFTED, BERTH_DR_EMPTY,
                                       BERTH_DR_UNDERUTILIZED};

static json_t *disruptions_json(const uint32_t *d)
{
    json_t *o = json_object();
    int fail = 0, *bad = &fail;
    for (int i = 0; i < 4; i++)
        report_set(bad, o, berth_dreason_name(order[i]), json_integer(d[order[i]]));
    return report_done(o, fail);
}

json_t *berth_report_disrupt_timeline_json(const berth_dtimeline *t)
{
    char buf[64];
    json_t *root = json_object(), *steps = json_array(), *sum = json_object();
    int fail = 0, *bad = &fail;
    report_set(bad, root, "from", report_time_json(t->from));
    report_set(bad, root, "to", report_time_json(t->to));
    fmt_duration(t->step, buf, sizeof buf);
    report_set(bad, root, "step", json_string(buf));
    fmt_duration(t->launch_delay, buf, sizeof buf);
    report_set(bad, root, "launchDelay", json_string(buf));
    report_set(bad, root, "steps", steps);
    report_set(bad, root, "summary", sum);
    for (uint32_t i = 0; i < t->nsteps; i++) {
        const berth_dstep *s = &t->steps[i];
        json_t *o = json_object(), *ev = json_array(), *bl = json_array();
        report_set(bad, o, "at", report_time_json(s->at));
        report_set(bad, o, "nodes", json_integer(s->nodes));
        report_set(bad, o, "costPerHour", json_real(report_round6(s->cost)));
        report_set(bad, o, "disruptions", disruptions_json(s->disruptions));
        for (uint32_t j = 0; j < s->nevents; j++) {
            const berth_devent *d = &t->events[s->event0 + j];
            json_t *x = json_object();
            report_set(bad, x, "type", json_string(berth_devent_name(d->type)));
            report_set(bad, x, "node", report_str_or_null(d->node));
            if (d->pod) {
                char pod[512];
                snprintf(pod, sizeof pod, "%s/%s", d->pod_ns, d->pod);
                report_set(bad, x, "pod", json_string(pod));
            } else {
                report_set(bad, x, "pod", json_null());
            }
            report_set(bad, x, "reason", report_str_or_null(d->reason));
            report_append(bad, ev, x);
        }
        for (uint32_t j = 0; j < s->nblocked; j++) {
            const berth_dsim_blocked *b = &t->blocked[s->blocked0 + j];
            json_t *x = json_object();
            report_set(bad, x, "node", json_string(b->node));
            report_set(bad, x, "reason", json_string(b->reason));
            report_append(bad, bl, x);
        }
        report_set(bad, o, "events", ev);
        report_set(bad, o, "blocked", bl);
        report_set(bad, o, "pendingPods", json_integer(s->pending));
        report_append(bad, steps, o);
    }
    report_set(bad, sum, "nodesStart", json_integer(t->nodes_start));
    report_set(bad, sum, "nodesEnd", json_integer(t->nodes_end));
    report_set(bad, sum, "costStart", json_real(report_round6(t->cost_start)));
    report_set(bad, sum, "costEnd", json_real(report_round6(t->cost_end)));
    report_set(bad, sum, "disruptions", disruptions_json(t->disruptions));
    report_set(bad, sum, "pendingPods", json_integer(t->pending_end));
    report_set(bad, sum, "stepsSimulated", json_integer(t->nsteps_run));
    return report_done(root, fail);
}

void berth_report_disrupt_timeline_table(FILE *out, const berth_dtimeline *t)
{
    char from[40], to[40], step[40], delay[40];
    report_fmt_time(t->from, from, sizeof from);
    report_fmt_time(t->to, to, sizeof to);
    fmt_duration(t->step, step, sizeof step);
    fmt_duration(t->launch_delay, delay, sizeof delay);
    fprintf(out, "disruption timeline %s .. %s every %s (launch delay %s)\n\n", from, to, step,
            delay);
    fprintf(out, "%-20s %6s %9s %8s %8s %6s %14s %8s\n", "TIME", "NODES", "COST/H", "EXPIRED",
            "DRIFTED", "EMPTY", "UNDERUTILIZED", "PENDING");
    for (uint32_t i = 0; i < t->nsteps; i++) {
        const berth_dstep *s = &t->steps[i];
        char at[40];
        report_fmt_time(s->at, at, sizeof at);
        fprintf(out, "%-20s %6u %9.4f %8u %8u %6u %14u %8u\n", at, s->nodes, s->cost,
                s->disruptions[BERTH_DR_EXPIRED], s->disruptions[BERTH_DR_DRIFTED],
                s->disruptions[BERTH_DR_EMPTY], s->disruptions[BERTH_DR_UNDERUTILIZED], s->pending);
        for (uint32_t j = 0; j < s->nevents; j++) {
            const berth_devent *d = &t->events[s->event0 + j];
            char pod[512] = "";
            if (d->pod)
                snprintf(pod, sizeof pod, " %s/%s", d->pod_ns, d->pod);
            fprintf(out, "    %-13s %s%s%s%s\n", berth_devent_name(d->type), d->node ? d->node : "",
                    pod, d->reason ? "  " : "", d->reason ? d->reason : "");
        }
    }
    fprintf(out, "\nSUMMARY\n");
    fprintf(out, "  nodes %u -> %u, cost per hour %.4f -> %.4f\n", t->nodes_start, t->nodes_end,
            t->cost_start, t->cost_end);
    fprintf(out, "  disruptions started:");
    for (int i = 0; i < 4; i++)
        fprintf(out, "%s %s %u", i ? "," : "", berth_dreason_name(order[i]),
                t->disruptions[order[i]]);
    fprintf(out, "\n  pods pending at the end: %u; %u steps simulated\n", t->pending_end,
            t->nsteps_run);
    if (t->nsteps) {
        const berth_dstep *s = &t->steps[t->nsteps - 1];
        if (s->nblocked)
            fprintf(out, "\nBLOCKED AT THE END\n");
        for (uint32_t j = 0; j < s->nblocked; j++)
            fprintf(out, "  %-28s %s\n", t->blocked[s->blocked0 + j].node,
                    t->blocked[s->blocked0 + j].reason);
    }
}
