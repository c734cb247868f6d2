/* kube/load_objects.c - Namespace, Service and PodDisruptionBudget (the
 * workload controllers: load_workloads.c). */
#include "k8s/k8s.h"
#include "kube/load.h"
#include "berth/time.h"
#include "berth/grow.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Namespace, Service, workloads, PodDisruptionBudget ---- */

int kube_load_namespace(berth_kcluster *k, berth_dec *d, const berth_node *doc)
{
    k8s_meta meta;
    int rc = k8s_dec_metadata(k, d, doc, 0, &meta);
    if (rc)
        return rc;
    berth_node *spec = NULL, *status = NULL;
    static const char *const sf[] = {"finalizers", NULL};
    static const char *const stf[] = {"phase", "conditions", NULL};
    if ((rc = berth_dec_map(d, doc, "spec", 0, &spec)) ||
        (rc = berth_dec_map(d, doc, "status", 0, &status)))
        return rc;
    size_t p = berth_dec_push(d, "spec");
    rc = k8s_known(d, spec, sf);
    berth_dec_pop(d, p);
    if (!rc) {
        p = berth_dec_push(d, "status");
        rc = k8s_known(d, status, stf);
        berth_dec_pop(d, p);
    }
    if (rc)
        return rc;
    uint32_t had = BERTH_NAMEIDX_NONE;
    if (k->ns_names.n != k->nnamespaces) /* namespaces added without the loader */
        for (uint32_t i = k->ns_names.n; i < k->nnamespaces; i++)
            if (berth_nameidx_put(&k->ns_names, k->namespaces[i].name, i))
                return berth_error_set(d->err, BERTH_ENOMEM, "out of memory");
    if ((rc = berth_nameidx_add(&k->ns_names, meta.name, k->nnamespaces, &had)) < 0)
        return berth_error_set(d->err, BERTH_ENOMEM, "out of memory");
    if (rc) {
        k->namespaces[had].labels = meta.labels; /* the later object wins */
        return 0;
    }
    if ((rc = grow((void **)&k->namespaces, &k->capnamespaces, k->nnamespaces + 1,
                   sizeof *k->namespaces, KUBE_MAX_OBJECTS)))
        return k8s_grow_fail(d, doc, rc, "namespaces", KUBE_MAX_OBJECTS);
    k->namespaces[k->nnamespaces++] = (berth_knamespace){meta.name, meta.labels};
    return 0;
}

static int add_workload(berth_kcluster *k, berth_dec *d, const berth_node *doc, const char *kind,
                        const k8s_meta *meta, berth_selector sel)
{
    int rc = grow((void **)&k->workloads, &k->capworkloads, k->nworkloads + 1,
                  sizeof *k->workloads, KUBE_MAX_OBJECTS);
    if (rc)
        return k8s_grow_fail(d, doc, rc, "workload objects", KUBE_MAX_OBJECTS);
    k->workloads[k->nworkloads++] = (berth_kworkload){kind, meta->ns, meta->name, sel};
    return 0;
}

int kube_load_service(berth_kcluster *k, berth_dec *d, const berth_node *doc)
{
    k8s_meta meta;
    int rc = k8s_dec_metadata(k, d, doc, 1, &meta);
    if (rc)
        return rc;
    static const char *const sf[] = {
        "ports", "selector", "clusterIP", "clusterIPs", "type", "externalIPs", "sessionAffinity",
        "loadBalancerIP", "loadBalancerSourceRanges", "externalName", "externalTrafficPolicy",
        "healthCheckNodePort", "publishNotReadyAddresses", "sessionAffinityConfig", "ipFamilies",
        "ipFamilyPolicy", "allocateLoadBalancerNodePorts", "loadBalancerClass",
        "internalTrafficPolicy", "trafficDistribution", NULL};
    berth_node *spec = NULL;
    berth_selector sel;
    int present = 0;
    if ((rc = berth_dec_map(d, doc, "spec", 0, &spec)) || !spec)
        return rc;
    size_t p = berth_dec_push(d, "spec");
    if (!(rc = k8s_known(d, spec, sf)))
        rc = k8s_dec_map_selector(k, d, spec, "selector", &sel, &present);
    berth_dec_pop(d, p);
    if (rc || !present) /* a Service without a selector selects no pods */
        return rc;
    return add_workload(k, d, doc, "Service", &meta, sel);
}

/* An IntOrString that is an integer >= 0 or "N%". */
static int dec_int_or_pct(berth_dec *d, const berth_node *m, const char *key, int *has,
                          int64_t *val, int *pct)
{
    const berth_node *n = berth_node_get(m, key);
    if (!n)
        return 0;
    size_t p = berth_dec_push(d, key);
    int rc = 0;
    const char *s = n->type == BERTH_NODE_SCALAR ? n->str : "";
    size_t len = strlen(s);
    char *end = NULL;
    long long v = -1;
    if (len && s[len - 1] == '%') {
        v = strtoll(s, &end, 10);
        if (end != s + len - 1 || len < 2 || v < 0 || v > 100 || s[0] == '+' || s[0] == '-')
            v = -1;
        *pct = 1;
    } else if (len && !n->quoted) {
        v = strtoll(s, &end, 10);
        if (*end || s[0] == '+' || s[0] == '-')
            v = -1;
        *pct = 0;
    }
    if (v < 0)
        rc = berth_dec_fail(d, n, "expected a non-negative integer or a percentage such as \"50%%\", got '%s'",
                            s);
    else {
        *val = v;
        *has = 1;
    }
    berth_dec_pop(d, p);
    return rc;
}

int kube_load_pdb(berth_kcluster *k, berth_dec *d, const berth_node *doc)
{
    k8s_meta meta;
    int rc = k8s_dec_metadata(k, d, doc, 1, &meta);
    if (rc)
        return rc;
    static const char *const sf[] = {"minAvailable", "maxUnavailable", "selector",
                                     "unhealthyPodEvictionPolicy", NULL};
    static const char *const stf[] = {"observedGeneration", "disruptedPods", "disruptionsAllowed",
                                      "currentHealthy", "desiredHealthy", "expectedPods",
                                      "conditions", NULL};
    static const char *const policies[] = {"IfHealthyBudget", "AlwaysAllow", NULL};
    berth_kpdb pdb;
    memset(&pdb, 0, sizeof pdb);
    pdb.ns = meta.ns;
    pdb.name = meta.name;
    pdb.selector.nothing = 1;
    berth_node *spec = NULL, *status = NULL;
    if ((rc = berth_dec_map(d, doc, "spec", 0, &spec)) ||
        (rc = berth_dec_map(d, doc, "status", 0, &status)))
        return rc;
    if (spec) {
        size_t p = berth_dec_push(d, "spec");
        int pol = 0;
        if (!(rc = k8s_known(d, spec, sf)) &&
            !(rc = dec_int_or_pct(d, spec, "minAvailable", &pdb.has_min_available,
                                  &pdb.min_available, &pdb.min_pct)) &&
            !(rc = dec_int_or_pct(d, spec, "maxUnavailable", &pdb.has_max_unavailable,
                                  &pdb.max_unavailable, &pdb.max_pct)) &&
            !(rc = k8s_dec_label_selector(k, d, spec, "selector", &pdb.selector)))
            rc = k8s_dec_choice(d, spec, "unhealthyPodEvictionPolicy", 0, policies, &pol);
        if (!rc && pdb.has_min_available && pdb.has_max_unavailable)
            rc = berth_dec_fail(d, spec, "minAvailable and maxUnavailable cannot both be set");
        pdb.always_allow = pol == 1;
        berth_dec_pop(d, p);
        if (rc)
            return rc;
    }
    if (status) {
        size_t p = berth_dec_push(d, "status");
        if (!(rc = k8s_known(d, status, stf)) && berth_node_get(status, "disruptionsAllowed")) {
            rc = berth_dec_int(d, status, "disruptionsAllowed", 1, 0, INT32_MAX,
                               &pdb.disruptions_allowed);
            pdb.has_disruptions_allowed = !rc;
        }
        berth_dec_pop(d, p);
        if (rc)
            return rc;
    }
    if ((rc = grow((void **)&k->pdbs, &k->cappdbs, k->npdbs + 1, sizeof *k->pdbs,
                   KUBE_MAX_OBJECTS)))
        return k8s_grow_fail(d, doc, rc, "PodDisruptionBudgets", KUBE_MAX_OBJECTS);
    k->pdbs[k->npdbs++] = pdb;
    return 0;
}
