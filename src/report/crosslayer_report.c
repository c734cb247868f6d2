/* report/crosslayer_report.c - the kube view of `simulate --workloads`
 * (berth/crosslayer.h) as JSON added to the simulate object (SPEC 6.3
 * style: new keys only) and as a per-step table. */
#include "berth/crosslayer.h"
#include "berth/report.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define EXAMPLES 3

static json_t *jstr(const char *s) { return s ? json_string(s) : json_null(); }

static int set(json_t *o, const char *k, json_t *v)
{
    return !v || json_object_set_new(o, k, v) ? -1 : 0;
}

static int push(json_t *a, json_t *v)
{
    return !v || json_array_append_new(a, v) ? -1 : 0;
}

static json_t *pods_json(const berth_xl *x, const berth_xl_phase *ph, int pending, int detail)
{
    json_t *a = json_array();
    uint32_t shown = 0;
    for (uint32_t i = 0; a && i < ph->npods; i++) {
        const berth_xl_pod *p = &x->pods[ph->pod0 + i];
        if ((p->to == NULL) != pending)
            continue;
        if (!detail && shown++ >= EXAMPLES)
            break;
        json_t *o = json_object();
        if (push(a, o) || set(o, "namespace", jstr(p->ns)) || set(o, "name", jstr(p->name)) ||
            set(o, "from", jstr(p->from)) ||
            (pending ? set(o, "reason", jstr(p->reason)) : set(o, "to", jstr(p->to))) ||
            set(o, "forced", json_boolean(p->forced))) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static json_t *phase_json(const berth_xl *x, const berth_xl_phase *ph, int detail)
{
    json_t *o = json_object(), *holds = json_array(), *shorts = json_array(), *pdbs = json_array();
    if (!o || !holds || !shorts || !pdbs)
        goto fail;
    for (uint32_t i = 0; i < ph->nholds && (detail || i < EXAMPLES); i++) {
        const berth_xl_hold *h = &x->holds[ph->hold0 + i];
        json_t *r = json_object();
        if (push(holds, r) || set(r, "namespace", jstr(h->ns)) || set(r, "name", jstr(h->name)) ||
            set(r, "node", jstr(h->node)) || set(r, "reason", jstr(h->reason)) ||
            set(r, "heldMinutes", json_integer(h->held_minutes)))
            goto fail;
    }
    for (uint32_t i = 0; i < ph->nshorts && (detail || i < EXAMPLES); i++) {
        const berth_xl_short *s = &x->shorts[ph->short0 + i];
        json_t *r = json_object();
        if (push(shorts, r) || set(r, "workload", jstr(s->workload)) ||
            set(r, "running", json_integer(s->running)) ||
            set(r, "desired", json_integer(s->desired)))
            goto fail;
    }
    for (uint32_t i = 0; i < ph->npdbs && (detail || i < EXAMPLES); i++) {
        const berth_xl_pdb *b = &x->pdbs[ph->pdb0 + i];
        json_t *r = json_object();
        if (push(pdbs, r) || set(r, "namespace", jstr(b->ns)) || set(r, "name", jstr(b->name)) ||
            set(r, "healthy", json_integer(b->healthy)) ||
            set(r, "desired", json_integer(b->desired)))
            goto fail;
    }
    if (set(o, "cluster", jstr(berth_xl_cluster_name(x, ph->cluster))) ||
        set(o, "nodes", json_integer(ph->nodes)) ||
        set(o, "nodesDown", json_integer(ph->nodes_down)) ||
        set(o, "clusterDeleted", json_boolean(ph->deleted)) ||
        set(o, "podsLost", json_integer(ph->lost)) ||
        set(o, "podsMoved", json_integer(ph->moved)) ||
        set(o, "podsForced", json_integer(ph->forced)) ||
        set(o, "podsPending", json_integer(ph->pending)) ||
        set(o, "podsRecovered", json_integer(ph->recovered)) ||
        set(o, "daemonSetPodsLeft", json_integer(ph->ds_left)) ||
        set(o, "drainsBlocked", json_integer(ph->nholds)) ||
        set(o, "workloadsBelowDesired", json_integer(ph->nshorts)) ||
        set(o, "pdbsBelowMinimum", json_integer(ph->npdbs)) ||
        set(o, "moved", pods_json(x, ph, 0, detail)) ||
        set(o, "pending", pods_json(x, ph, 1, detail)))
        goto fail;
    if (set(o, "minutes", json_integer(ph->minutes)))
        goto fail;
    if (x->autoscaler != BERTH_XL_AUTOSCALER_NONE) {
        /* each made once its parent holds it: a failed set frees what it
         * was given, never a sibling made beforehand (a leak found by
         * failure injection) */
        json_t *as = json_object(), *ls = NULL;
        if (set(o, "autoscaler", as) || set(as, "launches", ls = json_array()) ||
            set(as, "nodes", json_integer(ph->launch_nodes)) ||
            set(as, "podsPlaced", json_integer(ph->launch_placed)) ||
            set(as, "podsLeft", json_integer(ph->launch_left)) ||
            set(as, "costPerHour", json_real(ph->launch_per_hour)) ||
            set(as, "windowCost", json_real(ph->window_cost)))
            goto fail;
        for (uint32_t i = 0; i < ph->nlaunches; i++) {
            const berth_xl_launch *l = &x->launches[ph->launch0 + i];
            json_t *r = json_object();
            if (push(ls, r) || set(r, "group", jstr(l->group)) ||
                set(r, "instanceType", jstr(l->instance_type)) || set(r, "zone", jstr(l->zone)) ||
                set(r, "capacityType", jstr(l->capacity_type)) ||
                set(r, "count", json_integer(l->count)) || set(r, "pods", json_integer(l->pods)) ||
                set(r, "pricePerHour", json_real(l->price)))
                goto fail;
        }
    }
    if (ph->extra_pool &&
        (set(o, "nodesToAdd", ph->extra_nodes == BERTH_XL_NONE ? json_null()
                                                              : json_integer(ph->extra_nodes)) ||
         set(o, "nodesToAddPool", jstr(ph->extra_pool)) ||
         set(o, "machinesToAdd", json_integer(ph->extra_machines))))
        goto fail;
    json_t *h = holds, *s = shorts, *b = pdbs;
    holds = shorts = pdbs = NULL;
    if (set(o, "blocked", h)) {
        json_decref(s);
        json_decref(b);
        goto fail;
    }
    if (set(o, "belowDesired", s)) {
        json_decref(b);
        goto fail;
    }
    if (set(o, "pdbs", b))
        goto fail;
    return o;
fail:
    json_decref(holds);
    json_decref(shorts);
    json_decref(pdbs);
    json_decref(o);
    return NULL;
}

/* The array `key` of obj, created empty when absent. */
static json_t *array_at(json_t *obj, const char *key)
{
    json_t *a = json_object_get(obj, key);
    if (a)
        return a;
    a = json_array();
    return set(obj, key, a) ? NULL : a;
}

int berth_report_crosslayer_json(json_t *root, const berth_nexus *nx, const berth_xl *x, int detail)
{
    json_t *steps = json_object_get(root, "steps");
    if (!steps)
        return BERTH_ENOMEM;
    for (uint32_t i = 0; i < json_array_size(steps); i++) {
        json_t *st = json_array_get(steps, i);
        if (!array_at(st, "workloads"))
            return BERTH_ENOMEM;
        json_t *bs = json_object_get(st, "batches");
        for (uint32_t b = 0; bs && b < json_array_size(bs); b++)
            if (!array_at(json_array_get(bs, b), "workloads"))
                return BERTH_ENOMEM;
    }
    for (uint32_t i = 0; i < x->nphases; i++) {
        const berth_xl_phase *ph = &x->phases[i];
        json_t *st = json_array_get(steps, ph->step), *at = st;
        if (!st)
            continue;
        if (ph->batch != BERTH_XL_NONE)
            at = json_array_get(json_object_get(st, "batches"), ph->batch);
        if (!at || push(json_object_get(at, "workloads"), phase_json(x, ph, detail)))
            return BERTH_ENOMEM;
    }
    json_t *cl = json_array();
    if (set(root, "workloads", cl))
        return BERTH_ENOMEM;
    for (uint32_t c = 0; c < x->nclusters; c++) {
        const berth_kcluster *k = berth_xl_kube(x, c);
        json_t *o = json_object();
        if (push(cl, o) || set(o, "cluster", jstr(berth_xl_cluster_name(x, c))) ||
            set(o, "nodes", json_integer(k->nnodes)) || set(o, "pods", json_integer(k->npods)) ||
            set(o, "pdbs", json_integer(k->npdbs)))
            return BERTH_ENOMEM;
    }
    if (x->autoscaler != BERTH_XL_AUTOSCALER_NONE) {
        double cost = 0, peak = 0;
        uint32_t nodes = 0;
        for (uint32_t i = 0; i < x->nphases; i++) {
            cost += x->phases[i].window_cost;
            nodes += x->phases[i].launch_nodes;
            if (x->phases[i].launch_per_hour > peak)
                peak = x->phases[i].launch_per_hour;
        }
        json_t *a = json_object();
        if (set(root, "autoscaler", a) ||
            set(a, "kind", jstr(berth_xl_autoscaler_name(x->autoscaler))) ||
            set(a, "launchedNodes", json_integer(nodes)) ||
            set(a, "peakCostPerHour", json_real(peak)) || set(a, "windowCost", json_real(cost)))
            return BERTH_ENOMEM;
    }
    (void)nx;
    return berth_report_set_warnings(root, &x->warnings);
}

static void phase_where(const berth_nexus *nx, const berth_xl_phase *ph, char *buf, size_t size)
{
    const berth_step *st = &nx->steps[ph->step];
    if (ph->batch == BERTH_XL_NONE) {
        snprintf(buf, size, "%s", st->kind == BERTH_STEP_RUNTIME_UPGRADE ? "after" : "-");
        return;
    }
    const berth_upgrade_batch *b = &st->batches[ph->batch];
    snprintf(buf, size, "rack %s %u/%u", nx->racks[b->rack].name, b->batch, b->nbatches);
}

int berth_report_crosslayer_table(FILE *out, const berth_nexus *nx, const berth_xl *x, int detail)
{
    fprintf(out, "\nWorkloads (the kube view of each step%s)\n",
             detail ? "" : "; --detail all lists every pod");
    if (!x->nphases) {
        fprintf(out, "  no step takes a node of the given clusters down\n");
        return 0;
    }
    fprintf(out, "%-18s %-12s %-12s %9s %6s %6s %8s %5s %7s %8s %6s %6s\n", "STEP", "BATCH",
            "CLUSTER", "DOWN", "MOVED", "FORCED", "PENDING", "HELD", "DS-LEFT", "RECOVER",
            "SHORT", "PDB<MIN");
    for (uint32_t i = 0; i < x->nphases; i++) {
        const berth_xl_phase *ph = &x->phases[i];
        char where[64], down[32];
        phase_where(nx, ph, where, sizeof where);
        snprintf(down, sizeof down, "%u/%u", ph->nodes_down, ph->nodes);
        fprintf(out, "%-18s %-12s %-12s %9s %6u %6u %8u %5u %7u %8u %6u %6u\n",
                nx->steps[ph->step].name ? nx->steps[ph->step].name : "-", where,
                berth_xl_cluster_name(x, ph->cluster), down, ph->moved, ph->forced, ph->pending,
                ph->nholds, ph->ds_left, ph->recovered, ph->nshorts, ph->npdbs);
        if (ph->deleted)
            fprintf(out, "  cluster deleted: %u pods lost\n", ph->lost);
        uint32_t nm = 0, np = 0;
        for (uint32_t j = 0; j < ph->npods; j++) {
            const berth_xl_pod *p = &x->pods[ph->pod0 + j];
            if (p->to && (detail || nm++ < EXAMPLES))
                fprintf(out, "  moved    %s/%s %s -> %s%s\n", p->ns, p->name,
                        p->from ? p->from : "(pending)", p->to, p->forced ? " (forced)" : "");
            if (!p->to && (detail || np++ < EXAMPLES))
                fprintf(out, "  pending  %s/%s: %s\n", p->ns, p->name,
                        p->reason ? p->reason : "");
        }
        for (uint32_t j = 0; j < ph->nholds && (detail || j < EXAMPLES); j++) {
            const berth_xl_hold *h = &x->holds[ph->hold0 + j];
            fprintf(out, "  held     %s/%s on %s for %lld min: %s\n", h->ns, h->name, h->node,
                    (long long)h->held_minutes, h->reason);
        }
        for (uint32_t j = 0; j < ph->nshorts && (detail || j < EXAMPLES); j++) {
            const berth_xl_short *s = &x->shorts[ph->short0 + j];
            fprintf(out, "  short    %s: %u of %u running\n", s->workload, s->running, s->desired);
        }
        for (uint32_t j = 0; j < ph->npdbs && (detail || j < EXAMPLES); j++) {
            const berth_xl_pdb *b = &x->pdbs[ph->pdb0 + j];
            fprintf(out, "  pdb      %s/%s: %lld healthy, %lld needed\n", b->ns, b->name,
                    (long long)b->healthy, (long long)b->desired);
        }
        for (uint32_t j = 0; j < ph->nlaunches; j++) {
            const berth_xl_launch *l = &x->launches[ph->launch0 + j];
            fprintf(out, "  launch   %u x %s (%s, %s%s%s) $%.4f/h each\n", l->count,
                    l->instance_type, l->group, l->capacity_type, *l->zone ? ", zone " : "",
                    l->zone, l->price);
        }
        if (x->autoscaler != BERTH_XL_AUTOSCALER_NONE && ph->pending && !ph->deleted)
            fprintf(out, "  %s: %u node%s, $%.4f/h, %lld min: $%.4f; %u of %u pending pods "
                         "placed\n",
                    berth_xl_autoscaler_name(x->autoscaler), ph->launch_nodes,
                    ph->launch_nodes == 1 ? "" : "s", ph->launch_per_hour,
                    (long long)ph->minutes, ph->window_cost, ph->launch_placed, ph->pending);
        if (ph->extra_pool) {
            if (ph->extra_nodes == BERTH_XL_NONE)
                fprintf(out, "  add      more than %u nodes%s%s would not place every pending "
                             "pod\n",
                        BERTH_XL_SPARE_MAX, ph->extra_pool ? " of pool " : "",
                        ph->extra_pool ? ph->extra_pool : "");
            else
                fprintf(out, "  add      %u node%s of pool %s (%u machine%s) place every pending "
                             "pod\n",
                        ph->extra_nodes, ph->extra_nodes == 1 ? "" : "s", ph->extra_pool,
                        ph->extra_machines, ph->extra_machines == 1 ? "" : "s");
        }
    }
    if (x->autoscaler != BERTH_XL_AUTOSCALER_NONE) {
        double cost = 0;
        uint32_t nodes = 0;
        for (uint32_t i = 0; i < x->nphases; i++) {
            cost += x->phases[i].window_cost;
            nodes += x->phases[i].launch_nodes;
        }
        fprintf(out, "\nAutoscaler (%s): %u node%s launched over the steps; upgrade window cost "
                     "$%.4f (sum over batches of nodes x price x minutes / 60)\n",
                berth_xl_autoscaler_name(x->autoscaler), nodes, nodes == 1 ? "" : "s", cost);
    }
    return 0;
}

static void racks_text(FILE *out, const berth_nexus *nx, const uint32_t *r, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        fprintf(out, "%s%s", i ? ", " : "", nx->racks[r[i]].name);
}

/* The given rack order of a runtime upgrade step (as its batches run). */
static uint32_t given_racks(const berth_step *st, uint32_t *r)
{
    uint32_t n = 0;
    for (uint32_t b = 0; b < st->nbatches; b++)
        if (!n || r[n - 1] != st->batches[b].rack)
            r[n++] = st->batches[b].rack;
    return n;
}

/* Per cluster: the most nodes any phase needs, and their machines. */
static void extra_of(const berth_xl *x, uint32_t c, uint32_t *nodes, uint32_t *machines,
                     const char **pool, int *any)
{
    *nodes = *machines = 0;
    *pool = NULL;
    *any = 0;
    for (uint32_t i = 0; i < x->nphases; i++) {
        const berth_xl_phase *ph = &x->phases[i];
        if (ph->cluster != c || !ph->extra_pool)
            continue;
        *any = 1;
        if (ph->extra_pool)
            *pool = ph->extra_pool;
        if (*nodes == BERTH_XL_NONE)
            continue;
        if (ph->extra_nodes == BERTH_XL_NONE) {
            *nodes = BERTH_XL_NONE;
            continue;
        }
        if (ph->extra_nodes > *nodes) {
            *nodes = ph->extra_nodes;
            *machines = ph->extra_machines;
        }
    }
}

static json_t *racks_json(const berth_nexus *nx, const uint32_t *r, uint32_t n)
{
    json_t *a = json_array();
    for (uint32_t i = 0; a && i < n; i++)
        if (push(a, jstr(nx->racks[r[i]].name))) {
            json_decref(a);
            return NULL;
        }
    return a;
}

int berth_report_crosslayer_advice_json(json_t *root, const berth_nexus *nx, const berth_xl *x,
                                        const berth_xl_advice *a)
{
    json_t *o = json_object(), *ro = NULL, *ma = NULL; /* as in phase_json */
    if (set(root, "upgradeAdvice", o) || set(o, "maxUnavailable", json_integer(a->given)) ||
        set(o, "pdbBreaches", json_integer(a->breaches)) ||
        set(o, "safeMaxUnavailable", a->safe > 0 ? json_integer(a->safe) : json_null()) ||
        set(o, "rackOrder", ro = json_array()) || set(o, "machinesToAdd", ma = json_array()))
        return BERTH_ENOMEM;
    uint32_t *tmp = malloc((nx->nracks + 1) * sizeof *tmp);
    if (!tmp)
        return BERTH_ENOMEM;
    for (uint32_t i = 0; i < x->norders; i++) {
        const berth_xl_order *od = &x->orders[i];
        const berth_step *st = &nx->steps[od->step];
        uint32_t ng = given_racks(st, tmp);
        json_t *r = json_object();
        if (push(ro, r) || set(r, "step", jstr(st->name)) ||
            set(r, "racks", racks_json(nx, od->racks, od->nracks)) ||
            set(r, "pdbBreaches", json_integer(od->advised_breaches)) ||
            set(r, "podsPending", json_integer((json_int_t)od->advised_pending)) ||
            set(r, "givenRacks", racks_json(nx, tmp, ng)) ||
            set(r, "givenPdbBreaches", json_integer(od->given_breaches)) ||
            set(r, "givenPodsPending", json_integer((json_int_t)od->given_pending)) ||
            set(r, "searched", json_boolean(od->searched))) {
            free(tmp);
            return BERTH_ENOMEM;
        }
    }
    free(tmp);
    for (uint32_t c = 0; c < x->nclusters; c++) {
        uint32_t nodes, machines;
        const char *pool;
        int any;
        extra_of(x, c, &nodes, &machines, &pool, &any);
        if (!any)
            continue;
        json_t *r = json_object();
        if (push(ma, r) || set(r, "cluster", jstr(berth_xl_cluster_name(x, c))) ||
            set(r, "pool", jstr(pool)) ||
            set(r, "nodes", nodes == BERTH_XL_NONE ? json_null() : json_integer(nodes)) ||
            set(r, "machines", nodes == BERTH_XL_NONE ? json_null() : json_integer(machines)))
            return BERTH_ENOMEM;
    }
    return 0;
}

void berth_report_crosslayer_advice_text(FILE *out, const berth_nexus *nx, const berth_xl *x,
                                         const berth_xl_advice *a)
{
    fprintf(out, "\nUpgrade advice (bare metal: no node can be bought)\n");
    if (!a->breaches)
        fprintf(out, "  maxUnavailable %lld keeps every PodDisruptionBudget at its minimum\n",
                (long long)a->given);
    else if (a->safe > 0)
        fprintf(out, "  maxUnavailable %lld leaves a PodDisruptionBudget below its minimum in %u "
                     "batch%s; maxUnavailable %lld keeps every one\n",
                (long long)a->given, a->breaches, a->breaches == 1 ? "" : "es",
                (long long)a->safe);
    else
        fprintf(out, "  maxUnavailable %lld leaves a PodDisruptionBudget below its minimum in %u "
                     "batch%s, and so does 1: the remaining nodes cannot hold the drained pods "
                     "(add machines or nodes)\n",
                (long long)a->given, a->breaches, a->breaches == 1 ? "" : "es");
    uint32_t *tmp = malloc((nx->nracks + 1) * sizeof *tmp);
    for (uint32_t i = 0; tmp && i < x->norders; i++) {
        const berth_xl_order *od = &x->orders[i];
        uint32_t ng = given_racks(&nx->steps[od->step], tmp);
        fprintf(out, "  rack order (%s) ", nx->steps[od->step].name);
        racks_text(out, nx, od->racks, od->nracks);
        fprintf(out, ": %u batch%s below a PDB minimum, %llu pods pending over the batches "
                     "(given ",
                od->advised_breaches, od->advised_breaches == 1 ? "" : "es",
                (unsigned long long)od->advised_pending);
        racks_text(out, nx, tmp, ng);
        fprintf(out, ": %u, %llu)%s\n", od->given_breaches,
                (unsigned long long)od->given_pending,
                od->searched ? "" : "; not searched: too many racks");
    }
    free(tmp);
    for (uint32_t c = 0; c < x->nclusters; c++) {
        uint32_t nodes, machines;
        const char *pool;
        int any;
        extra_of(x, c, &nodes, &machines, &pool, &any);
        if (!any)
            continue;
        if (nodes == BERTH_XL_NONE)
            fprintf(out, "  machines to add (%s): more than %u nodes%s%s would not place every "
                         "pending pod\n",
                    berth_xl_cluster_name(x, c), BERTH_XL_SPARE_MAX, pool ? " of pool " : "",
                    pool ? pool : "");
        else
            fprintf(out, "  machines to add (%s): %u (for %u node%s of pool %s) place every pod "
                         "pending in any step\n",
                    berth_xl_cluster_name(x, c), machines, nodes, nodes == 1 ? "" : "s",
                    pool ? pool : "-");
    }
}
