/* report/autoscale_report.c - the `autoscale plan` table and its SPEC 6.3
 * JSON, shared by the CLI and the service. */
#include "berth/plan_report.h"
#include "berth/report.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "berth/time.h"

#include "report/plan_common.h"

static json_t *pod_name(const berth_autoscale *m, uint32_t pod)
{
    const berth_kpod *p = &m->kube.pods[pod];
    return json_sprintf("%s/%s", p->ns, p->name);
}

json_t *berth_report_autoscale_json(const berth_autoscale *m, const berth_aplan *p)
{
    json_t *root = json_object(), *up = json_array(), *down = json_array(), *rep = json_array(),
           *un = json_array(), *blk = json_array();
    json_object_set_new(root, "at", report_time_json(p->at));
    json_object_set_new(root, "scaleUp", up);
    json_object_set_new(root, "scaleDown", down);
    json_object_set_new(root, "replacements", rep);
    json_object_set_new(root, "unschedulable", un);
    json_object_set_new(root, "blocked", blk);
    for (uint32_t i = 0; i < p->nup; i++) {
        const berth_ascaleup *u = &p->up[i];
        json_t *o = json_object(), *pods = json_array(), *nodes = json_array();
        json_object_set_new(o, "virtualNodeGroup", json_string(m->vngs[u->vng].name));
        json_object_set_new(o, "instanceType", json_string(m->types[u->type].name));
        json_object_set_new(o, "capacityType", json_string(berth_capacity_type_name(u->capacity_type)));
        json_object_set_new(o, "zone", json_string(u->zone));
        json_object_set_new(o, "count", json_integer(u->count));
        json_object_set_new(o, "pricePerHour", json_real(report_round6(u->price)));
        for (uint32_t j = 0; j < u->npods; j++)
            json_array_append_new(pods, pod_name(m, u->pods[j]));
        json_object_set_new(o, "pods", pods);
        for (uint32_t j = 0; j < u->count; j++)
            json_array_append_new(nodes, json_string(u->nodes[j]));
        json_object_set_new(o, "nodes", nodes);
        json_object_set_new(o, "headroomUnits", json_integer(u->headroom_units));
        json_object_set_new(o, "reservation", report_str_or_null(u->reservation));
        json_array_append_new(up, o);
    }
    for (uint32_t i = 0; i < p->ndown; i++) {
        const berth_ascaledown *d = &p->down[i];
        json_t *o = json_object(), *mv = json_object();
        json_object_set_new(o, "node", json_string(m->kube.nodes[d->node].name));
        json_object_set_new(o, "virtualNodeGroup", json_string(m->vngs[d->vng].name));
        json_object_set_new(o, "utilisation", json_real(report_round6(d->utilisation)));
        for (uint32_t j = 0; j < d->nmoves; j++) {
            const berth_kpod *kp = &m->kube.pods[d->moves[j].pod];
            char key[512];
            snprintf(key, sizeof key, "%s/%s", kp->ns, kp->name);
            json_object_set_new(mv, key, json_string(m->kube.nodes[d->moves[j].node].name));
        }
        json_object_set_new(o, "moves", mv);
        json_t *ev = json_array(); /* cluster-autoscaler: expendable pods deleted */
        for (uint32_t j = 0; j < d->nevicted; j++)
            json_array_append_new(ev, pod_name(m, d->evicted[j]));
        json_object_set_new(o, "evicted", ev);
        json_array_append_new(down, o);
    }
    for (uint32_t i = 0; i < p->nrep; i++) {
        const berth_areplace *r = &p->rep[i];
        json_t *o = json_object(), *w = json_object(), *mv = json_object(), *wait = json_array();
        json_object_set_new(o, "node", json_string(m->kube.nodes[r->node].name));
        json_object_set_new(o, "reason", json_string(berth_replace_reason_name(r->reason)));
        json_object_set_new(w, "virtualNodeGroup", json_string(m->vngs[r->vng].name));
        json_object_set_new(w, "instanceType", json_string(m->types[r->type].name));
        json_object_set_new(w, "capacityType",
                            json_string(berth_capacity_type_name(r->capacity_type)));
        json_object_set_new(w, "zone", json_string(r->zone));
        json_object_set_new(w, "pricePerHour", json_real(report_round6(r->price)));
        if (r->reservation)
            json_object_set_new(w, "reservation", json_string(r->reservation));
        json_object_set_new(w, "node", json_string(r->new_node));
        json_object_set_new(o, "with", w);
        json_object_set_new(o, "launchFirst", json_true());
        json_object_set_new(o, "drainAfter",
                            json_string(r->drain_immediately ? "immediately" : "registered"));
        for (uint32_t j = 0; j < r->nmoves; j++) {
            const berth_kpod *kp = &m->kube.pods[r->moves[j].pod];
            char key[512];
            snprintf(key, sizeof key, "%s/%s", kp->ns, kp->name);
            json_object_set_new(mv, key, json_string(r->moves[j].node));
            if (r->moves[j].waits)
                json_array_append_new(wait, json_string(key));
        }
        json_object_set_new(o, "moves", mv);
        json_object_set_new(o, "waiting", wait);
        json_array_append_new(rep, o);
    }
    for (uint32_t i = 0; i < p->nunsched; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "pod", pod_name(m, p->unsched[i].pod));
        json_object_set_new(o, "reason", json_string(p->unsched[i].reason));
        json_array_append_new(un, o);
    }
    for (uint32_t i = 0; i < p->nblocked; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "node", json_string(m->kube.nodes[p->blocked[i].node].name));
        json_object_set_new(o, "reason", json_string(p->blocked[i].reason));
        json_array_append_new(blk, o);
    }
    berth_report_set_warnings(root, &m->kube.skipped); /* skipped kinds (SPEC 6.1) */
    return root;
}

void berth_report_autoscale_table(FILE *out, const berth_autoscale *m, const berth_aplan *p)
{
    char at[40];
    report_fmt_time(p->at, at, sizeof at);
    fprintf(out, "autoscale plan at %s\n\nSCALE UP\n", at);
    if (!p->nup)
        fprintf(out, "  (none)\n");
    else
        fprintf(out, "  %-16s %-20s %-9s %-12s %-5s %-12s %s\n", "GROUP", "TYPE", "CAPACITY",
                "ZONE", "NODES", "$/h PER NODE", "PODS");
    for (uint32_t i = 0; i < p->nup; i++) {
        const berth_ascaleup *u = &p->up[i];
        fprintf(out, "  %-16s %-20s %-9s %-12s x%-4u %-12.4f %u", m->vngs[u->vng].name,
               m->types[u->type].name, berth_capacity_type_name(u->capacity_type), u->zone,
               u->count, u->price, u->npods);
        if (u->headroom_units)
            fprintf(out, "  headroom %lld", (long long)u->headroom_units);
        if (u->reservation)
            fprintf(out, "  reservation %s", u->reservation);
        fprintf(out, "\n");
        /* the new nodes by name: REPLACEMENTS' moves refer to them */
        if (u->nodes && u->count) {
            fprintf(out, "    new node%s:", u->count > 1 ? "s" : "");
            for (uint32_t j = 0; j < u->count; j++)
                fprintf(out, "%s %s", j ? "," : "", u->nodes[j] ? u->nodes[j] : "?");
            fprintf(out, "\n");
        }
        for (uint32_t j = 0; j < u->npods; j++)
            fprintf(out, "    %s/%s\n", m->kube.pods[u->pods[j]].ns, m->kube.pods[u->pods[j]].name);
    }
    fprintf(out, "\nSCALE DOWN\n");
    if (!p->ndown)
        fprintf(out, "  (none)\n");
    for (uint32_t i = 0; i < p->ndown; i++) {
        const berth_ascaledown *d = &p->down[i];
        fprintf(out, "  %-28s %-16s utilisation %.2f\n", m->kube.nodes[d->node].name,
               m->vngs[d->vng].name, d->utilisation);
        for (uint32_t j = 0; j < d->nmoves; j++)
            fprintf(out, "    %s/%s -> %s\n", m->kube.pods[d->moves[j].pod].ns,
                   m->kube.pods[d->moves[j].pod].name, m->kube.nodes[d->moves[j].node].name);
        for (uint32_t j = 0; j < d->nevicted; j++)
            fprintf(out, "    %s/%s deleted (expendable)\n", m->kube.pods[d->evicted[j]].ns,
                    m->kube.pods[d->evicted[j]].name);
    }
    fprintf(out, "\nREPLACEMENTS\n");
    if (!p->nrep)
        fprintf(out, "  (none)\n");
    for (uint32_t i = 0; i < p->nrep; i++) {
        const berth_areplace *r = &p->rep[i];
        fprintf(out, "  %-28s %-16s -> new node %s %s %s %s %.4f $/h%s%s, drain %s\n",
                m->kube.nodes[r->node].name, berth_replace_reason_name(r->reason), r->new_node,
                m->types[r->type].name, berth_capacity_type_name(r->capacity_type), r->zone,
                r->price, r->reservation ? " reservation " : "",
                r->reservation ? r->reservation : "",
                r->drain_immediately ? "immediately" : "once it registered");
        for (uint32_t j = 0; j < r->nmoves; j++)
            fprintf(out, "    %s/%s -> %s%s\n", m->kube.pods[r->moves[j].pod].ns,
                    m->kube.pods[r->moves[j].pod].name, r->moves[j].node,
                    r->moves[j].waits ? " (pending until it registers)" : "");
    }
    fprintf(out, "\nUNSCHEDULABLE\n");
    if (!p->nunsched)
        fprintf(out, "  (none)\n");
    for (uint32_t i = 0; i < p->nunsched; i++)
        fprintf(out, "  %s/%s: %s\n", m->kube.pods[p->unsched[i].pod].ns,
               m->kube.pods[p->unsched[i].pod].name, p->unsched[i].reason);
    /* KEPT: nodes scale-down keeps, less those REPLACEMENTS replaces (each
     * node is listed once, in the section that applies) */
    fprintf(out, "\nKEPT\n");
    uint32_t nkept = 0;
    for (uint32_t i = 0; i < p->nblocked; i++) {
        int replaced = 0;
        for (uint32_t j = 0; j < p->nrep && !replaced; j++)
            replaced = p->rep[j].node == p->blocked[i].node;
        if (replaced)
            continue;
        fprintf(out, "  %-28s %s\n", m->kube.nodes[p->blocked[i].node].name, p->blocked[i].reason);
        nkept++;
    }
    if (!nkept)
        fprintf(out, "  (none)\n");
}

