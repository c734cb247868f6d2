/* report/fleet_report.c - `fleet place` output: the per-placement table and
 * the SPEC 6.3 JSON entry ({"name", "selected", "clusters": [{"name",
 * "status", "affinityScore", "topologySpreadScore", "reason"}]}, plus
 * "kind", "namespace" for a ResourcePlacement, "placementType", "status",
 * "reason", the summary "clusterCounts", "reasons", "clustersOmitted" and,
 * with explain, per-cluster "terms"). Clusters are listed in name order,
 * then PickFixed names that matched no member cluster; by default every
 * Selected, Invalid and NotFound one and at most 20 others, with detail
 * all of them. */
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

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

/* One cluster entry of "clusters" (with explain, PickN's per-term scores). */
static json_t *cluster_json(const berth_fleet_ctx *ctx, const berth_fleet_outcome *o, uint32_t c,
                            const char *why, int explain)
{
    const berth_fleet *f = berth_fleet_ctx_fleet(ctx);
    const berth_fleet_placement *pl = &f->placements[o->placement];
    json_t *e = json_object();
    if (!e)
        return NULL;
    int rc = add(e, "name", json_string(f->clusters[c].name));
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
    if (rc) {
        json_decref(e);
        return NULL;
    }
    return e;
}

/* reasons[why] += 1, with the cluster's own name (a word of its own) taken
 * out of the text so that clusters rejected alike count together ("cluster
 * c-7 matches none of ..." -> "cluster matches none of ..."); past
 * BERTH_FLEET_MAX_REASONS distinct texts the rest count under "(other
 * reasons)" */
#define BERTH_FLEET_MAX_REASONS 64
static int count_reason(json_t *reasons, const char *text, const char *name)
{
    char why[1024];
    snprintf(why, sizeof why, "%s", text);
    size_t nl = name ? strlen(name) : 0;
    for (char *at = nl ? strstr(why, name) : NULL; at; at = strstr(at + 1, name)) {
        int starts = at == why || at[-1] == ' ';
        if (starts && (at[nl] == ' ' || at[nl] == '\0')) {
            memmove(at, at + nl + (at[nl] == ' '), strlen(at + nl + (at[nl] == ' ')) + 1);
            break;
        }
    }
    const char *key = why;
    json_t *c = json_object_get(reasons, key);
    if (!c && json_object_size(reasons) >= BERTH_FLEET_MAX_REASONS) {
        key = "(other reasons)";
        c = json_object_get(reasons, key);
    }
    if (c)
        return json_integer_set(c, json_integer_value(c) + 1);
    return json_object_set_new(reasons, key, json_integer(1));
}

/* Which clusters the default output lists: every Selected, Invalid and
 * NotFound one and at most BERTH_FLEET_UNSELECTED_SHOWN others, NotSelected
 * first, then Filtered, each in name order (as KubeFleet's scheduler bounds
 * the unselected decisions it writes: maxUnselectedClusterDecisionCount);
 * with detail every cluster. per[status] counts the clusters. */
typedef struct shown {
    uint32_t per[BERTH_FLEET_INVALID + 1];
    uint32_t ns, fi; /* NotSelected and Filtered clusters still to list */
} shown;

static void shown_init(shown *w, const berth_fleet *f, const berth_fleet_outcome *o, int detail)
{
    memset(w, 0, sizeof *w);
    for (uint32_t c = 0; c < f->nclusters; c++)
        w->per[o->cstatus[c] <= BERTH_FLEET_INVALID ? o->cstatus[c] : BERTH_FLEET_INVALID]++;
    w->per[BERTH_FLEET_NOT_FOUND] += o->nnotfound;
    w->ns = w->per[BERTH_FLEET_NOT_SELECTED];
    w->fi = w->per[BERTH_FLEET_FILTERED];
    if (!detail) {
        if (w->ns > BERTH_FLEET_UNSELECTED_SHOWN)
            w->ns = BERTH_FLEET_UNSELECTED_SHOWN;
        if (w->fi > BERTH_FLEET_UNSELECTED_SHOWN - w->ns)
            w->fi = BERTH_FLEET_UNSELECTED_SHOWN - w->ns;
    }
}

/* whether cluster c (in name order) is listed */
static int shown_take(shown *w, berth_fleet_cstatus st)
{
    uint32_t *left = st == BERTH_FLEET_NOT_SELECTED ? &w->ns : st == BERTH_FLEET_FILTERED ? &w->fi : NULL;
    if (!left)
        return 1;
    if (!*left)
        return 0;
    --*left;
    return 1;
}

json_t *berth_report_fleet_json_detail(const berth_fleet_ctx *ctx, const berth_fleet_outcome *o,
                                       int explain, int detail)
{
    const berth_fleet *f = berth_fleet_ctx_fleet(ctx);
    const berth_fleet_placement *pl = &f->placements[o->placement];
    json_t *root = json_object(), *sel = json_array(), *cl = json_array();
    json_t *counts = json_object(), *reasons = json_object();
    if (!root || !sel || !cl || !counts || !reasons)
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
    shown w;
    shown_init(&w, f, o, detail);
    uint32_t listed = 0;
    char why[1024];
    for (uint32_t c = 0; c < f->nclusters; c++) {
        berth_fleet_cstatus st = (berth_fleet_cstatus)o->cstatus[c];
        berth_fleet_reason(ctx, c, why, sizeof why);
        if (st != BERTH_FLEET_SELECTED && count_reason(reasons, why, f->clusters[c].name))
            goto fail;
        if (!shown_take(&w, st))
            continue;
        json_t *e = cluster_json(ctx, o, c, why, explain);
        if (!e || json_array_append_new(jc, e))
            goto fail;
        listed++;
    }
    for (uint32_t i = 0; i < o->nnotfound; i++) {
        json_t *e = json_object();
        if (!e || json_array_append_new(jc, e))
            goto fail;
        const char *nf = "listed in clusterNames but no such member cluster";
        rc = add(e, "name", json_string(o->notfound[i]));
        rc |= add(e, "status", json_string("NotFound"));
        rc |= add(e, "affinityScore", json_integer(0));
        rc |= add(e, "topologySpreadScore", json_integer(0));
        rc |= add(e, "reason", json_string(nf));
        rc |= count_reason(reasons, nf, NULL);
        if (rc)
            goto fail;
        listed++;
    }
    /* the summary (both levels): clusters per status, the reasons of the
     * clusters not selected counted, and how many "clusters" leaves out */
    for (int st = BERTH_FLEET_SELECTED; st <= BERTH_FLEET_INVALID; st++)
        if (add(counts, berth_fleet_cstatus_name((berth_fleet_cstatus)st), json_integer(w.per[st])))
            goto fail;
    rc = json_object_set_new(root, "clusterCounts", counts);
    counts = NULL;
    rc |= json_object_set_new(root, "reasons", reasons);
    reasons = NULL;
    rc |= add(root, "clustersOmitted", json_integer(f->nclusters + o->nnotfound - listed));
    if (rc)
        goto fail;
    return root;
fail:
    json_decref(sel);
    json_decref(cl);
    json_decref(counts);
    json_decref(reasons);
    json_decref(root);
    return NULL;
}

json_t *berth_report_fleet_json(const berth_fleet_ctx *ctx, const berth_fleet_outcome *o,
                                int explain)
{
    return berth_report_fleet_json_detail(ctx, o, explain, 1);
}

int berth_report_fleet_table_detail(FILE *out, const berth_fleet_ctx *ctx,
                                    const berth_fleet_outcome *o, int explain, int detail)
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
    shown w;
    shown_init(&w, f, o, detail);
    uint32_t left_ns = w.per[BERTH_FLEET_NOT_SELECTED] - w.ns, left_fi = w.per[BERTH_FLEET_FILTERED] - w.fi;
    for (uint32_t c = 0; c < f->nclusters; c++) {
        if (!shown_take(&w, (berth_fleet_cstatus)o->cstatus[c]))
            continue;
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
    if (left_ns + left_fi) {
        fprintf(out, "(and %u more not listed:", left_ns + left_fi);
        if (left_ns)
            fprintf(out, " %u NotSelected%s", left_ns, left_fi ? "," : "");
        if (left_fi)
            fprintf(out, " %u Filtered", left_fi);
        fprintf(out, "; --detail all lists every cluster)\n");
    }
    return ferror(out) ? BERTH_EIO : 0;
}

int berth_report_fleet_table(FILE *out, const berth_fleet_ctx *ctx, const berth_fleet_outcome *o,
                             int explain)
{
    return berth_report_fleet_table_detail(out, ctx, o, explain, 1);
}
