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
    json_object_set_new(o, "at", report_time_json(ev->at));
    json_object_set_new(o, "type", json_string(berth_aevent_type_name(ev->type)));
    json_object_set_new(o, "target", json_string(ev->what ? ev->what : ""));
    json_object_set_new(o, "note", report_str_or_null(r->notes[i]));
    return o;
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
    json_object_set_new(o, "at", report_time_json(x->at));
    json_object_set_new(o, "type", json_string("Replace"));
    json_object_set_new(o, "target", json_string(x->node));
    json_object_set_new(o, "note", json_string(note));
    json_object_set_new(o, "reason", json_string(berth_replace_reason_name(x->reason)));
    json_object_set_new(o, "newNode", json_string(x->new_node));
    return o;
}

json_t *berth_report_autoscale_timeline_json(const berth_atimeline *t, const berth_asim_options *o,
                                             const berth_asim_result *r)
{
    char buf[40];
    json_t *root = json_object(), *steps = json_array(), *sum = json_object();
    json_object_set_new(root, "from", report_time_json(o->from));
    json_object_set_new(root, "to", report_time_json(o->to));
    long long sec = (long long)o->step;
    if (sec % 3600 == 0)
        snprintf(buf, sizeof buf, "%lldh", sec / 3600);
    else if (sec % 60 == 0)
        snprintf(buf, sizeof buf, "%lldm", sec / 60);
    else
        snprintf(buf, sizeof buf, "%llds", sec);
    json_object_set_new(root, "step", json_string(buf));
    json_object_set_new(root, "launchDelaySeconds", json_integer(o->launch_delay));
    json_object_set_new(root, "drainTimeoutSeconds", json_integer(o->drain_timeout));
    json_object_set_new(root, "steps", steps);
    for (uint32_t i = 0; i < r->nsteps; i++) {
        const berth_asim_step *st = &r->steps[i];
        json_t *s = json_object(), *ev = json_array();
        json_object_set_new(s, "at", report_time_json(st->at));
        json_object_set_new(s, "nodes", json_integer(st->nodes));
        json_object_set_new(s, "costPerHour", json_real(report_round6(st->cost_per_hour)));
        json_object_set_new(s, "pendingPods", json_integer(st->pending));
        json_object_set_new(s, "launched", json_integer(st->launched));
        json_object_set_new(s, "terminated", json_integer(st->terminated));
        json_object_set_new(s, "replaced", json_integer(st->nrep));
        for (uint32_t k = st->ev0; k < st->ev0 + st->nev; k++)
            json_array_append_new(ev, event_json(t, r, k));
        for (uint32_t k = st->rep0; k < st->rep0 + st->nrep; k++)
            json_array_append_new(ev, replace_json(&r->reps[k]));
        json_object_set_new(s, "events", ev);
        json_array_append_new(steps, s);
    }
    json_object_set_new(sum, "totalCost", json_real(report_round6(r->total_cost)));
    json_object_set_new(sum, "podPendingSeconds", json_real(report_round6(r->pending_seconds)));
    json_object_set_new(sum, "maxPodPendingSeconds",
                        json_real(report_round6(r->max_pending_seconds)));
    json_object_set_new(sum, "nodesMin", json_integer(r->nodes_min));
    json_object_set_new(sum, "nodesMax", json_integer(r->nodes_max));
    json_object_set_new(sum, "launched", json_integer(r->launched));
    json_object_set_new(sum, "terminated", json_integer(r->terminated));
    json_object_set_new(sum, "replaced", json_integer(r->nreps));
    json_object_set_new(root, "summary", sum);
    return root;
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
