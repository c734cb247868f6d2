/* report/autoscale_timeline.c - the `autoscale simulate` timeline as a
 * table and as JSON: per step the nodes, cost per hour, pending pods,
 * launches, terminations, replacements started and the events applied
 * (a replacement start is listed as a "Replace" event); the summary (total
 * cost, pod-pending seconds, node range). */
#include "berth/plan_report.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "report/plan_common.h"

static json_t *event_json(const berth_atimeline *t, const berth_asim_result *r, uint32_t i)
{
    const berth_aevent *ev = &t->ev[r->events[i]];
    json_t *o = json_object();
    int fail = 0, *bad = &fail;
    report_set(bad, o, "at", report_time_json(ev->at));
    report_set(bad, o, "type", json_string(berth_aevent_type_name(ev->type)));
    report_set(bad, o, "target", json_string(ev->what ? ev->what : ""));
    report_set(bad, o, "note", report_str_or_null(r->notes[i]));
    return report_done(o, fail);
}

/* "RevertToSpot: launched general-n3 (a.small spot z1)" */
static void replace_note(const berth_asim_replace *x, char *buf, size_t size)
{
    snprintf(buf, size, "%s: launched %s (%s %s %s)", berth_replace_reason_name(x->reason),
             x->new_node, x->type_name ? x->type_name : "?",
             berth_capacity_type_name(x->capacity_type), x->zone ? x->zone : "?");
}

static json_t *replace_json(const berth_asim_replace *x)
{
    char note[400];
    replace_note(x, note, sizeof note);
    json_t *o = json_object();
    int fail = 0, *bad = &fail;
    report_set(bad, o, "at", report_time_json(x->at));
    report_set(bad, o, "type", json_string("Replace"));
    report_set(bad, o, "target", json_string(x->node));
    report_set(bad, o, "note", json_string(note));
    report_set(bad, o, "reason", json_string(berth_replace_reason_name(x->reason)));
    report_set(bad, o, "newNode", json_string(x->new_node));
    return report_done(o, fail);
}

json_t *berth_report_autoscale_timeline_json(const berth_atimeline *t, const berth_asim_options *o,
                                             const berth_asim_result *r)
{
    char buf[40];
    json_t *root = json_object(), *steps = json_array(), *sum = json_object();
    int fail = 0, *bad = &fail;
    report_set(bad, root, "from", report_time_json(o->from));
    report_set(bad, root, "to", report_time_json(o->to));
    long long sec = (long long)o->step;
    if (sec % 3600 == 0)
        snprintf(buf, sizeof buf, "%lldh", sec / 3600);
    else if (sec % 60 == 0)
        snprintf(buf, sizeof buf, "%lldm", sec / 60);
    else
        snprintf(buf, sizeof buf, "%llds", sec);
    report_set(bad, root, "step", json_string(buf));
    report_set(bad, root, "launchDelaySeconds", json_integer(o->launch_delay));
    report_set(bad, root, "drainTimeoutSeconds", json_integer(o->drain_timeout));
    report_set(bad, root, "steps", steps);
    for (uint32_t i = 0; i < r->nsteps; i++) {
        const berth_asim_step *st = &r->steps[i];
        json_t *s = json_object(), *ev = json_array();
        report_set(bad, s, "at", report_time_json(st->at));
        report_set(bad, s, "nodes", json_integer(st->nodes));
        report_set(bad, s, "costPerHour", json_real(report_round6(st->cost_per_hour)));
        report_set(bad, s, "pendingPods", json_integer(st->pending));
        report_set(bad, s, "launched", json_integer(st->launched));
        report_set(bad, s, "terminated", json_integer(st->terminated));
        report_set(bad, s, "replaced", json_integer(st->nrep));
        for (uint32_t k = st->ev0; k < st->ev0 + st->nev; k++)
            report_append(bad, ev, event_json(t, r, k));
        for (uint32_t k = st->rep0; k < st->rep0 + st->nrep; k++)
            report_append(bad, ev, replace_json(&r->reps[k]));
        report_set(bad, s, "events", ev);
        report_append(bad, steps, s);
    }
    report_set(bad, sum, "totalCost", json_real(report_round6(r->total_cost)));
    report_set(bad, sum, "podPendingSeconds", json_real(report_round6(r->pending_seconds)));
    report_set(bad, sum, "maxPodPendingSeconds",
                        json_real(report_round6(r->max_pending_seconds)));
    report_set(bad, sum, "nodesMin", json_integer(r->nodes_min));
    report_set(bad, sum, "nodesMax", json_integer(r->nodes_max));
    report_set(bad, sum, "launched", json_integer(r->launched));
    report_set(bad, sum, "terminated", json_integer(r->terminated));
    report_set(bad, sum, "replaced", json_integer(r->nreps));
    report_set(bad, root, "summary", sum);
    return report_done(root, fail);
}

void berth_report_autoscale_timeline_table(FILE *out, const berth_atimeline *t,
                                           const berth_asim_options *o, const berth_asim_result *r)
{
    (void)o;
    fprintf(out, "%-20s  %5s  %10s  %7s  %8s  %10s  %8s  %s\n", "AT", "NODES", "COST/H",
            "PENDING", "LAUNCHED", "TERMINATED", "REPLACED", "EVENTS");
    for (uint32_t i = 0; i < r->nsteps; i++) {
        const berth_asim_step *st = &r->steps[i];
        char at[40];
        report_fmt_time(st->at, at, sizeof at);
        fprintf(out, "%-20s  %5u  %10.4f  %7u  %8u  %10u  %8u  ", at, st->nodes,
                st->cost_per_hour, st->pending, st->launched, st->terminated, st->nrep);
        for (uint32_t k = st->ev0; k < st->ev0 + st->nev; k++) {
            const berth_aevent *ev = &t->ev[r->events[k]];
            fprintf(out, "%s%s %s%s%s%s", k > st->ev0 ? "; " : "", berth_aevent_type_name(ev->type),
                    ev->what ? ev->what : "", r->notes[k] ? " (" : "", r->notes[k] ? r->notes[k] : "",
                    r->notes[k] ? ")" : "");
        }
        for (uint32_t k = st->rep0; k < st->rep0 + st->nrep; k++) {
            char note[400];
            replace_note(&r->reps[k], note, sizeof note);
            fprintf(out, "%sReplace %s (%s)", st->nev || k > st->rep0 ? "; " : "", r->reps[k].node,
                    note);
        }
        fprintf(out, "%s\n", st->nev || st->nrep ? "" : "-");
    }
    fprintf(out, "\ntotal cost %.4f, pod-pending seconds %.0f (max %.0f), nodes %u..%u, "
                 "launched %u, terminated %u, replaced %u\n",
            r->total_cost, r->pending_seconds, r->max_pending_seconds, r->nodes_min, r->nodes_max,
            r->launched, r->terminated, r->nreps);
}
