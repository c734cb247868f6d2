/* report/disrupt_report.c - the `disrupt plan` table and its SPEC 6.3 JSON,
 * shared by the CLI and the service. */
#include "berth/plan_report.h"
#include "berth/report.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "berth/time.h"

#include "report/plan_common.h"

static json_t *allowed_json(int64_t v)
{
    return json_integer(v);
}

/* 100 x part / whole, rounded to 0.01; null when whole is not positive */
static double percent_of(double part, double whole)
{
    double v = 100.0 * part / whole;
    return (double)(long long)(v * 100.0 + (v < 0 ? -0.5 : 0.5)) / 100.0;
}

static json_t *percent_json(double part, double whole)
{
    return whole > 1e-12 ? json_real(percent_of(part, whole)) : json_null();
}

static void percent_text(double part, double whole, char *buf, size_t size)
{
    if (whole > 1e-12)
        snprintf(buf, size, " (+%.2f %%)", percent_of(part, whole));
    else
        buf[0] = 0;
}

json_t *berth_report_disrupt_json(const berth_disrupt *m, const berth_dplan *p)
{
    json_t *root = json_object(), *pools = json_array(), *acts = json_array(), *blk = json_array();
    int fail = 0, *bad = &fail;
    report_set(bad, root, "at", report_time_json(p->at));
    report_set(bad, root, "nodePools", pools);
    report_set(bad, root, "actions", acts);
    report_set(bad, root, "blocked", blk);
    /* extra fields (SPEC 6.3 allows additions): the outcome, the lower
     * bound, and with --optimize which result is shown */
    report_set(bad, root, "nodesBefore", json_integer(p->nodes_before));
    report_set(bad, root, "nodesAfter", json_integer(p->nodes_after));
    report_set(bad, root, "costBefore", json_real(report_round6(p->cost_before)));
    report_set(bad, root, "costAfter", json_real(report_round6(p->cost_after)));
    json_t *lb = json_object();
    report_set(bad, lb, "nodes", json_integer(p->bound_nodes));
    report_set(bad, lb, "costPerHour", json_real(report_round6(p->bound_cost)));
    report_set(bad, lb, "method", json_string(p->bound_method ? p->bound_method : ""));
    report_set(bad, lb, "nodesWithinBudgets", json_integer(p->bound_nodes_budgets));
    report_set(bad, lb, "costPerHourWithinBudgets",
                        json_real(report_round6(p->bound_cost_budgets)));
    /* how far the shown plan is above the bound (per hour, percent of the
     * bound: null when the bound is 0) */
    report_set(bad, lb, "nodesAbove", json_integer(p->nodes_after - p->bound_nodes));
    report_set(bad, lb, "costPerHourAbove", json_real(report_round6(p->cost_after - p->bound_cost)));
    report_set(bad, lb, "percentAbove", percent_json(p->cost_after - p->bound_cost, p->bound_cost));
    report_set(bad, lb, "nodesAboveWithinBudgets",
                        json_integer(p->nodes_after - p->bound_nodes_budgets));
    report_set(bad, lb, "costPerHourAboveWithinBudgets",
                        json_real(report_round6(p->cost_after - p->bound_cost_budgets)));
    report_set(bad, lb, "percentAboveWithinBudgets",
                        percent_json(p->cost_after - p->bound_cost_budgets, p->bound_cost_budgets));
    report_set(bad, root, "lowerBound", lb);
    report_set(bad, root, "optimized", json_boolean(p->optimized));
    json_t *kp = json_object();
    report_set(bad, kp, "nodesAfter", json_integer(p->karpenter_nodes_after));
    report_set(bad, kp, "savingsPerHour", json_real(report_round6(p->karpenter_savings)));
    report_set(bad, kp, "costAfter", json_real(report_round6(p->cost_before - p->karpenter_savings)));
    report_set(bad, root, "karpenter", kp);
    if (p->optimize_ran) {
        /* --optimize: its own plan (shown or not) and what the shown plan
         * gained over Karpenter's pass (0 when Karpenter's stays) */
        double kc = p->cost_before - p->karpenter_savings;
        json_t *op = json_object();
        report_set(bad, op, "nodesAfter", json_integer(p->optimizer_nodes_after));
        report_set(bad, op, "costAfter", json_real(report_round6(p->optimizer_cost_after)));
        report_set(bad, op, "gainPerHour", json_real(report_round6(kc - p->cost_after)));
        report_set(bad, op, "gainPercent", percent_json(kc - p->cost_after, kc));
        report_set(bad, op, "gainNodes", json_integer(p->karpenter_nodes_after - p->nodes_after));
        report_set(bad, root, "optimizer", op);
    }
    for (uint32_t i = 0; i < p->npools; i++) {
        const berth_dpool_allow *a = &p->pools[i];
        json_t *o = json_object(), *al = json_object();
        report_set(bad, o, "name", json_string(m->pools[a->pool].name));
        report_set(bad, al, "Empty", allowed_json(a->allowed[BERTH_DR_EMPTY]));
        report_set(bad, al, "Drifted", allowed_json(a->allowed[BERTH_DR_DRIFTED]));
        report_set(bad, al, "Underutilized", allowed_json(a->allowed[BERTH_DR_UNDERUTILIZED]));
        report_set(bad, o, "allowedDisruptions", al);
        report_set(bad, o, "nodes", json_integer(a->nodes));
        report_set(bad, o, "disrupting", json_integer(a->disrupting));
        report_set(bad, o, "templateHash", json_string(m->pools[a->pool].hash));
        report_append(bad, pools, o);
    }
    for (uint32_t i = 0; i < p->nactions; i++) {
        const berth_daction *a = &p->actions[i];
        json_t *o = json_object(), *nodes = json_array();
        report_set(bad, o, "action", json_string(a->replace ? "replace" : "delete"));
        report_set(bad, o, "reason", json_string(berth_dreason_name(a->reason)));
        for (uint32_t j = 0; j < a->nnodes; j++)
            report_append(bad, nodes, json_string(m->kube.nodes[a->nodes[j]].name));
        report_set(bad, o, "nodes", nodes);
        json_t *reps = json_array();
        for (uint32_t j = 0; j < a->nreplacements; j++) {
            const berth_dreplacement *r = &a->replacements[j];
            json_t *ro = json_object();
            report_set(bad, ro, "instanceType", json_string(r->instance_type));
            report_set(bad, ro, "capacityType",
                                json_string(berth_capacity_type_name(r->capacity_type)));
            report_set(bad, ro, "zone", json_string(r->zone));
            report_set(bad, ro, "price", json_real(report_round6(r->price)));
            report_set(bad, ro, "nodePool", json_string(r->nodepool));
            /* extra fields: the NodePool requirements it satisfies, and the
             * cheaper offerings excluded (docs/disrupt.md) */
            json_t *rq = json_array(), *ex = json_array();
            for (uint32_t k = 0; k < r->nrequirements; k++) {
                char buf[320];
                berth_requirement_format(&r->requirements[k], buf, sizeof buf);
                if (r->min_values && r->min_values[k]) {
                    size_t l = strlen(buf);
                    snprintf(buf + l, sizeof buf - l, " (minValues %u)", r->min_values[k]);
                }
                report_append(bad, rq, json_string(buf));
            }
            for (uint32_t k = 0; k < r->nexcluded; k++) {
                const berth_dexcluded *x = &r->excluded[k];
                json_t *xo = json_object();
                report_set(bad, xo, "instanceType", json_string(x->instance_type));
                report_set(bad, xo, "price", json_real(report_round6(x->price)));
                report_set(bad, xo, "reason", json_string(x->reason));
                report_set(bad, xo, "capacityType",
                                    json_string(berth_capacity_type_name(x->capacity_type)));
                report_set(bad, xo, "zone", json_string(x->zone));
                report_set(bad, xo, "nodePool", json_string(x->nodepool));
                report_append(bad, ex, xo);
            }
            report_set(bad, ro, "requirements", rq);
            report_set(bad, ro, "excluded", ex);
            report_append(bad, reps, ro);
        }
        report_set(bad, o, "replacement",
                            a->nreplacements ? json_incref(json_array_get(reps, 0)) : json_null());
        if (a->nreplacements > 1)
            report_set(bad, o, "replacements", reps);
        else
            json_decref(reps);
        report_set(bad, o, "savingsPerHour", json_real(report_round6(a->savings)));
        report_append(bad, acts, o);
    }
    for (uint32_t i = 0; i < p->nblocked; i++) {
        json_t *o = json_object();
        report_set(bad, o, "node", json_string(m->kube.nodes[p->blocked[i].node].name));
        report_set(bad, o, "reason", json_string(p->blocked[i].reason));
        report_append(bad, blk, o);
    }
    if (berth_report_set_warnings(root, &m->kube.skipped)) /* skipped kinds (SPEC 6.1) */
        fail = 1;
    return report_done(root, fail);
}

static void allowed_text(int64_t v, char *buf, size_t size)
{
    if (v >= BERTH_BUDGET_UNLIMITED - 1000000)
        snprintf(buf, size, "unlimited");
    else
        snprintf(buf, size, "%lld", (long long)v);
}

void berth_report_disrupt_table(FILE *out, const berth_disrupt *m, const berth_dplan *p)
{
    char at[40];
    report_fmt_time(p->at, at, sizeof at);
    fprintf(out, "disruption plan at %s\n\n", at);
    /* the last three columns are the allowances per reason (budget minus
     * disrupting nodes), not nodes in those states */
    fprintf(out, "%-44s%s\n", "", "------ ALLOWED DISRUPTIONS -----");
    fprintf(out, "%-24s %6s %11s %8s %8s %14s\n", "NODEPOOL", "NODES", "DISRUPTING", "EMPTY", "DRIFTED",
           "UNDERUTILIZED");
    for (uint32_t i = 0; i < p->npools; i++) {
        const berth_dpool_allow *a = &p->pools[i];
        char e[24], d[24], u[24];
        allowed_text(a->allowed[0], e, sizeof e);
        allowed_text(a->allowed[1], d, sizeof d);
        allowed_text(a->allowed[2], u, sizeof u);
        fprintf(out, "%-24s %6lld %11lld %8s %8s %14s\n", m->pools[a->pool].name, (long long)a->nodes,
               (long long)a->disrupting, e, d, u);
    }
    fprintf(out, "\nACTIONS\n");
    if (!p->nactions)
        fprintf(out, "  (none)\n");
    for (uint32_t i = 0; i < p->nactions; i++) {
        const berth_daction *a = &p->actions[i];
        fprintf(out, "  %-7s %-13s ", a->replace ? "replace" : "delete", berth_dreason_name(a->reason));
        for (uint32_t j = 0; j < a->nnodes; j++)
            fprintf(out, "%s%s", j ? "," : "", m->kube.nodes[a->nodes[j]].name);
        for (uint32_t j = 0; j < a->nreplacements; j++) {
            const berth_dreplacement *r = &a->replacements[j];
            fprintf(out, "%s%s %s %s %.4f/h", j ? "; " : " -> ", r->instance_type,
                   berth_capacity_type_name(r->capacity_type), r->zone, r->price);
        }
        fprintf(out, "  savings %.4f/h\n", a->savings);
        for (uint32_t j = 0; j < a->nreplacements && j < 1; j++)
            for (uint32_t k = 0; k < a->replacements[j].nexcluded; k++) {
                const berth_dexcluded *x = &a->replacements[j].excluded[k];
                fprintf(out, "      not %s %s %.4f/h: %s\n", x->instance_type,
                        berth_capacity_type_name(x->capacity_type), x->price, x->reason);
            }
    }
    fprintf(out, "\nnodes %lld -> %lld (lower bound %lld, within budgets %lld), cost %.4f/h -> "
                 "%.4f/h (lower bound %.4f/h, within budgets %.4f/h)\n",
            (long long)p->nodes_before, (long long)p->nodes_after, (long long)p->bound_nodes,
            (long long)p->bound_nodes_budgets, p->cost_before, p->cost_after, p->bound_cost,
            p->bound_cost_budgets);
    char pa[40], pb[40];
    percent_text(p->cost_after - p->bound_cost, p->bound_cost, pa, sizeof pa);
    percent_text(p->cost_after - p->bound_cost_budgets, p->bound_cost_budgets, pb, sizeof pb);
    fprintf(out, "above the lower bound: +%lld nodes, +%.4f/h%s; within budgets: +%lld nodes, "
                 "+%.4f/h%s\n",
            (long long)(p->nodes_after - p->bound_nodes), p->cost_after - p->bound_cost, pa,
            (long long)(p->nodes_after - p->bound_nodes_budgets),
            p->cost_after - p->bound_cost_budgets, pb);
    if (p->optimized)
        fprintf(out, "optimized: Karpenter's pass would leave %lld nodes, saving %.4f/h\n",
                (long long)p->karpenter_nodes_after, p->karpenter_savings);
    if (p->optimize_ran) {
        double kc = p->cost_before - p->karpenter_savings;
        char pg[40];
        percent_text(kc - p->cost_after, kc, pg, sizeof pg);
        if (p->optimized)
            fprintf(out, "optimize: gained %.4f/h%s and %lld nodes over Karpenter's pass\n",
                    kc - p->cost_after, pg, (long long)(p->karpenter_nodes_after - p->nodes_after));
        else
            fprintf(out, "optimize: no gain over Karpenter's pass (the optimiser's plan leaves "
                         "%lld nodes, %.4f/h)\n",
                    (long long)p->optimizer_nodes_after, p->optimizer_cost_after);
    }
    fprintf(out, "\nBLOCKED\n");
    if (!p->nblocked)
        fprintf(out, "  (none)\n");
    for (uint32_t i = 0; i < p->nblocked; i++)
        fprintf(out, "  %-28s %s\n", m->kube.nodes[p->blocked[i].node].name, p->blocked[i].reason);
}

