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
    int fail = 0, *bad = &fail;
    report_set(bad, root, "at", report_time_json(p->at));
    report_set(bad, root, "scaleUp", up);
    report_set(bad, root, "scaleDown", down);
    report_set(bad, root, "replacements", rep);
    report_set(bad, root, "unschedulable", un);
    report_set(bad, root, "blocked", blk);
    for (uint32_t i = 0; i < p->nup; i++) {
        const berth_ascaleup *u = &p->up[i];
        json_t *o = json_object(), *pods = json_array(), *nodes = json_array();
        report_set(bad, o, "virtualNodeGroup", json_string(m->vngs[u->vng].name));
        report_set(bad, o, "instanceType", json_string(m->types[u->type].name));
        report_set(bad, o, "capacityType", json_string(berth_capacity_type_name(u->capacity_type)));
        report_set(bad, o, "zone", json_string(u->zone));
        report_set(bad, o, "count", json_integer(u->count));
        report_set(bad, o, "pricePerHour", json_real(report_round6(u->price)));
        for (uint32_t j = 0; j < u->npods; j++)
            report_append(bad, pods, pod_name(m, u->pods[j]));
        report_set(bad, o, "pods", pods);
        for (uint32_t j = 0; j < u->count; j++)
            report_append(bad, nodes, json_string(u->nodes[j]));
        report_set(bad, o, "nodes", nodes);
        report_set(bad, o, "headroomUnits", json_integer(u->headroom_units));
        report_set(bad, o, "reservation", report_str_or_null(u->reservation));
        report_append(bad, up, o);
    }
    for (uint32_t i = 0; i < p->ndown; i++) {
        const berth_ascaledown *d = &p->down[i];
        json_t *o = json_object(), *mv = json_object();
        report_set(bad, o, "node", json_string(m->kube.nodes[d->node].name));
        report_set(bad, o, "virtualNodeGroup", json_string(m->vngs[d->vng].name));
        report_set(bad, o, "utilisation", json_real(report_round6(d->utilisation)));
        for (uint32_t j = 0; j < d->nmoves; j++) {
            const berth_kpod *kp = &m->kube.pods[d->moves[j].pod];
            char key[512];
            snprintf(key, sizeof key, "%s/%s", kp->ns, kp->name);
            report_set(bad, mv, key, json_string(m->kube.nodes[d->moves[j].node].name));
        }
        report_set(bad, o, "moves", mv);
        json_t *ev = json_array(); /* cluster-autoscaler: expendable pods deleted */
        for (uint32_t j = 0; j < d->nevicted; j++)
            report_append(bad, ev, pod_name(m, d->evicted[j]));
        report_set(bad, o, "evicted", ev);
        report_append(bad, down, o);
    }
    for (uint32_t i = 0; i < p->nrep; i++) {
        const berth_areplace *r = &p->rep[i];
        json_t *o = json_object(), *w = json_object(), *mv = json_object(), *wait = json_array();
        report_set(bad, o, "node", json_string(m->kube.nodes[r->node].name));
        report_set(bad, o, "reason", json_string(berth_replace_reason_name(r->reason)));
        report_set(bad, w, "virtualNodeGroup", json_string(m->vngs[r->vng].name));
        report_set(bad, w, "instanceType", json_string(m->types[r->type].name));
        report_set(bad, w, "capacityType",
                            json_string(berth_capacity_type_name(r->capacity_type)));
        report_set(bad, w, "zone", json_string(r->zone));
        report_set(bad, w, "pricePerHour", json_real(report_round6(r->price)));
        if (r->reservation)
            report_set(bad, w, "reservation", json_string(r->reservation));
        report_set(bad, w, "node", json_string(r->new_node));
        report_set(bad, o, "with", w);
        report_set(bad, o, "launchFirst", json_true());
        report_set(bad, o, "drainAfter",
                            json_string(r->drain_immediately ? "immediately" : "registered"));
        for (uint32_t j = 0; j < r->nmoves; j++) {
            const berth_kpod *kp = &m->kube.pods[r->moves[j].pod];
            char key[512];
            snprintf(key, sizeof key, "%s/%s", kp->ns, kp->name);
            report_set(bad, mv, key, json_string(r->moves[j].node));
            if (r->moves[j].waits)
                report_append(bad, wait, json_string(key));
        }
        report_set(bad, o, "moves", mv);
        report_set(bad, o, "waiting", wait);
        report_append(bad, rep, o);
    }
    for (uint32_t i = 0; i < p->nunsched; i++) {
        json_t *o = json_object();
        report_set(bad, o, "pod", pod_name(m, p->unsched[i].pod));
        report_set(bad, o, "reason", json_string(p->unsched[i].reason));
        report_append(bad, un, o);
    }
    for (uint32_t i = 0; i < p->nblocked; i++) {
        json_t *o = json_object();
        report_set(bad, o, "node", json_string(m->kube.nodes[p->blocked[i].node].name));
        report_set(bad, o, "reason", json_string(p->blocked[i].reason));
        report_append(bad, blk, o);
    }
    /* added fields (SPEC 6.3 allows additions): scale-up's cost, its lower
     * bound and how far the plan is above it (docs/autoscale.md) */
    report_set(bad, root, "scaleUpCostPerHour", json_real(report_round6(p->up_cost)));
    json_t *lb = json_object();
    report_set(bad, lb, "costPerHour", json_real(report_round6(p->up_bound)));
    report_set(bad, lb, "method", json_string("fractional"));
    report_set(bad, lb, "podNodesCostPerHour", json_real(report_round6(p->up_pods_cost)));
    report_set(bad, lb, "abovePerHour",
               json_real(report_round6(p->up_pods_cost > p->up_bound ? p->up_pods_cost - p->up_bound
                                                                      : 0)));
    double gap;
    report_set(bad, lb, "above", berth_aplan_above_bound(p, &gap) ? json_real(report_round6(gap))
                                                                  : json_null());
    report_set(bad, root, "lowerBound", lb);
    if (berth_report_set_warnings(root, &m->kube.skipped)) /* skipped kinds (SPEC 6.1) */
        fail = 1;
    return report_done(root, fail);
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
    if (p->nup) {
        double gap;
        fprintf(out, "  cost %.4f $/h", p->up_cost);
        if (p->up_cost > p->up_pods_cost)
            fprintf(out, " (nodes with pods %.4f $/h, headroom %.4f $/h)", p->up_pods_cost,
                    p->up_cost - p->up_pods_cost);
        fprintf(out, ", lower bound %.4f $/h: ", p->up_bound);
        if (berth_aplan_above_bound(p, &gap))
            fprintf(out, "%.1f %% above it\n", 100 * gap);
        else
            fprintf(out, "%.4f $/h above it\n",
                    p->up_pods_cost > p->up_bound ? p->up_pods_cost - p->up_bound : 0);
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

