/* report/kube_fit.c - `berth kube fit` output: how many more replicas of a
 * workload fit, where they land (per node) and why the next one does not;
 * as a table and as JSON (docs/kube.md, "kube fit"). */
#include "berth/kube_report.h"

int berth_kube_fit_table(FILE *out, const berth_kfit *f, const berth_kcluster *k)
{
    if (f->at_max)
        fprintf(out, "%s: %u more replicas fit (stopped at %s %u)", f->workload, f->fits,
                f->max ? "--max" : "berth's limit of", f->fits);
    else
        fprintf(out, "%s: %u more replica%s fit", f->workload, f->fits, f->fits == 1 ? "" : "s");
    if (f->existing)
        fprintf(out, " beyond the %u it has (%u placed)", f->existing, f->existing_placed);
    fprintf(out, "\n");
    if (f->fits) {
        fprintf(out, "\n%-40s %s\n", "NODE", "NEW REPLICAS");
        for (uint32_t n = 0; n < k->nnodes; n++)
            if (f->per_node[n])
                fprintf(out, "%-40s %u\n", k->nodes[n].name, f->per_node[n]);
    }
    if (f->reason)
        fprintf(out, "\nreplica %u: %s\n", f->fits + 1, f->reason);
    return ferror(out) ? BERTH_EIO : 0;
}

json_t *berth_kube_fit_json(const berth_kfit *f, const berth_kcluster *k)
{
    json_t *nodes = json_object();
    for (uint32_t n = 0; nodes && n < k->nnodes; n++)
        if (f->per_node[n] && json_object_set_new(nodes, k->nodes[n].name,
                                                  json_integer(f->per_node[n]))) {
            json_decref(nodes);
            return NULL;
        }
    if (!nodes)
        return NULL;
    return json_pack("{s:s, s:i, s:i, s:i, s:o, s:s?, s:b, s:o?}", "workload", f->workload,
                     "existing", (json_int_t)f->existing, "existingPlaced",
                     (json_int_t)f->existing_placed, "fits", (json_int_t)f->fits, "nodes", nodes,
                     "reason", f->reason, "atMax", f->at_max, "max",
                     f->max ? json_integer(f->max) : NULL);
}
