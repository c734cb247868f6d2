/* report/fleet_report.c - `fleet place` output: the per-placement table and
 * the SPEC 6.3 JSON entry ({"name", "selected", "clusters": [{"name",
 * "status", "affinityScore", "topologySpreadScore", "reason"}]}, plus
 * "kind", "namespace" for a ResourcePlacement, "placementType", "status",
 * "reason" and, with explain, per-cluster "terms"). Clusters are listed in name order, then PickFixed names that
 * matched no member cluster. */
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>

#include "berth/fleet.h"

const char *berth_fleet_cstatus_name(berth_fleet_cstatus s)
{
    switch (s) {
    case BERTH_FLEET_SELECTED: return "Selected";
    case BERTH_FLEET_NOT_SELECTED: return "NotSelected";
    case BERTH_FLEET_FILTERED: return "Filtered";
    case BERTH_FLEET_NOT_FOUND: return "NotFound";
    case BERTH_FLEET_INVALID: return "Invalid";
    }
    return "?";
}

const char *berth_fleet_type_name(berth_fleet_type t)
{
    switch (t) {
    case BERTH_FLEET_PICK_ALL: return "PickAll";
    case BERTH_FLEET_PICK_N: return "PickN";
    case BERTH_FLEET_PICK_FIXED: return "PickFixed";
    }
    return "?";
}

static const char *pstatus_name(berth_fleet_pstatus s)
{
    return s == BERTH_FLEET_FULFILLED ? "Fulfilled" : s == BERTH_FLEET_UNFULFILLED ? "Unfulfilled"
                                                                                  : "Invalid";
}


static int add(json_t *o, const char *k, json_t *v)
{
    return v ? json_object_set_new(o, k, v) : -1;
}

json_t *berth_report_fleet_json(const berth_fleet_ctx *ctx, const berth_fleet_outcome *o,
                                int explain)
{
    const berth_fleet *f = berth_fleet_ctx_fleet(ctx);
    const berth_fleet_placement *pl = &f->placements[o->placement];
    json_t *root = json_object(), *sel = json_array(), *cl = json_array();
    if (!root || !sel || !cl)
        goto fail;
    int rc = add(root, "name", json_string(pl->name));
    rc |= add(root, "kind", json_string(pl->ns ? "ResourcePlacement" : "ClusterResourcePlacement"));
    if (pl->ns)
        rc |= add(root, "namespace", json_string(pl->ns));
    rc |= json_object_set_new(root, "selected", sel);
    rc |= json_object_set_new(root, "clusters", cl);
    sel = cl = NULL;
    rc |= add(root, "placementType", json_string(berth_fleet_type_name(pl->type)));
    rc |= add(root, "status", json_string(pstatus_name(o->status)));
    rc |= add(root, "reason", json_string(o->reason));
    if (rc)
        goto fail;
    json_t *js = json_object_get(root, "selected"), *jc = json_object_get(root, "clusters");
    for (uint32_t i = 0; i < o->nselected; i++)
        if (json_array_append_new(js, json_string(f->clusters[o->selected[i]].name)))
            goto fail;
    char why[1024];
    for (uint32_t c = 0; c < f->nclusters; c++) {
        json_t *e = json_object();
        if (!e || json_array_append_new(jc, e))
            goto fail;
        berth_fleet_reason(ctx, c, why, sizeof why);
        rc = add(e, "name", json_string(f->clusters[c].name));
        rc |= add(e, "status", json_string(berth_fleet_cstatus_name(o->cstatus[c])));
        rc |= add(e, "affinityScore", json_integer(o->affinity[c]));
        rc |= add(e, "topologySpreadScore", json_integer(o->spread[c]));
        rc |= add(e, "reason", json_string(why));
        if (explain && pl->type == BERTH_FLEET_PICK_N && o->status != BERTH_FLEET_POLICY_ERROR) {
            json_t *terms = json_array();
            rc |= add(e, "terms", terms);
            for (uint32_t t = 0; terms && t < pl->npref; t++) {
                double r;
                int64_t s = berth_fleet_term_score(ctx, t, c, &r);
                json_t *te = json_object();
                rc |= json_array_append_new(terms, te);
                if (te) {
                    rc |= add(te, "weight", json_integer(pl->pref[t].weight));
                    if (!isnan(r))
                        rc |= add(te, "fraction", json_real(r));
                    rc |= add(te, "score", json_integer(s));
                }
            }
        }
        if (rc)
            goto fail;
    }
    for (uint32_t i = 0; i < o->nnotfound; i++) {
        json_t *e = json_object();
        if (!e || json_array_append_new(jc, e))
            goto fail;
        rc = add(e, "name", json_string(o->notfound[i]));
        rc |= add(e, "status", json_string("NotFound"));
        rc |= add(e, "affinityScore", json_integer(0));
        rc |= add(e, "topologySpreadScore", json_integer(0));
        rc |= add(e, "reason", json_string("listed in clusterNames but no such member cluster"));
        if (rc)
            goto fail;
    }
    return root;
fail:
    json_decref(sel);
    json_decref(cl);
    json_decref(root);
    return NULL;
}

int berth_report_fleet_table(FILE *out, const berth_fleet_ctx *ctx, const berth_fleet_outcome *o,
                             int explain)
{
    const berth_fleet *f = berth_fleet_ctx_fleet(ctx);
    const berth_fleet_placement *pl = &f->placements[o->placement];
    fprintf(out, "%s %s (%s", pl->ns ? "ResourcePlacement" : "Placement", pl->name,
            berth_fleet_type_name(pl->type));
    if (pl->type == BERTH_FLEET_PICK_N)
        fprintf(out, ", numberOfClusters %" PRId64, pl->n);
    fprintf(out, "): %s", pstatus_name(o->status));
    if (o->reason[0])
        fprintf(out, ": %s", o->reason);
    fprintf(out, "\nselected:");
    for (uint32_t i = 0; i < o->nselected; i++)
        fprintf(out, "%s%s", i ? ", " : " ", f->clusters[o->selected[i]].name);
    if (!o->nselected)
        fprintf(out, " -");
    fprintf(out, "\n%-24s %-12s %8s %8s  %s\n", "CLUSTER", "STATUS", "AFFINITY", "SPREAD",
            "REASON");
    char why[1024];
    for (uint32_t c = 0; c < f->nclusters; c++) {
        berth_fleet_reason(ctx, c, why, sizeof why);
        fprintf(out, "%-24s %-12s %8" PRId64 " %8" PRId64 "  %s\n", f->clusters[c].name,
                berth_fleet_cstatus_name(o->cstatus[c]), o->affinity[c], o->spread[c], why);
        if (explain && pl->type == BERTH_FLEET_PICK_N && o->status != BERTH_FLEET_POLICY_ERROR)
            for (uint32_t t = 0; t < pl->npref; t++) {
                double r;
                int64_t s = berth_fleet_term_score(ctx, t, c, &r);
                const berth_fleet_pref *pr = &pl->pref[t];
                if (isnan(r))
                    fprintf(out, "    term %u: weight %" PRId64 "%s -> %" PRId64 "\n", t,
                            pr->weight, pr->sorter ? " (label selector not matched)" : "", s);
                else
                    fprintf(out, "    term %u: weight %" PRId64 " x %.2f%% (%s %s) -> %" PRId64 "\n",
                            t, pr->weight, r * 100, pr->sorter, pr->order, s);
            }
    }
    for (uint32_t i = 0; i < o->nnotfound; i++)
        fprintf(out, "%-24s %-12s %8d %8d  %s\n", o->notfound[i], "NotFound", 0, 0,
                "listed in clusterNames but no such member cluster");
    return ferror(out) ? BERTH_EIO : 0;
}
