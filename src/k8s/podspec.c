/* k8s/podspec.c - a PodSpec (containers and resources, host ports,
 * volumes and claims, tolerations, node and pod (anti-)affinity,
 * topology spread) into a berth_kpod. Pods and pod templates of every
 * workload kind are decoded here. */
#include "k8s/k8s.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int k8s_dec_tolerations(berth_kcluster *k, berth_dec *d, const berth_node *spec, berth_kpod *pod)
{
    berth_node *ts = NULL;
    int rc = berth_dec_seq(d, spec, "tolerations", 0, &ts);
    if (rc || !ts)
        return rc;
    pod->tols = k8s_alloc(k, ts->n, sizeof *pod->tols);
    if (!pod->tols)
        return ENOMEM_(d);
    for (size_t i = 0; !rc && i < ts->n; i++) {
        const berth_node *t = ts->items[i];
        size_t p = berth_dec_push(d, "tolerations");
        berth_dec_push_index(d, i);
        static const char *const tf[] = {"key", "operator", "value", "effect", "tolerationSeconds",
                                         NULL};
        static const char *const effects[] = {"NoSchedule", "PreferNoSchedule", "NoExecute", NULL};
        const char *key = "", *val = "", *eff_s = NULL, *op_s = NULL;
        int op = 0, eff = -1;
        int64_t secs = -1;
        if (t->type != BERTH_NODE_MAP)
            rc = berth_dec_fail(d, t, "expected a mapping with key, operator, value, effect");
        if (!rc && !(rc = k8s_known(d, t, tf)) && !(rc = berth_dec_str(d, t, "key", 0, &key)) &&
            !(rc = berth_dec_str(d, t, "value", 0, &val)) &&
            !(rc = berth_dec_str(d, t, "effect", 0, &eff_s)))
            rc = berth_dec_str(d, t, "operator", 0, &op_s);
        /* an empty operator is Equal (v1.Toleration.ToleratesTaint and the
         * API's ValidateTolerations accept "" as Equal) */
        if (!rc && op_s && (op = berth_toleration_op_parse(op_s)) < 0)
            rc = k8s_fail_at(d, t, "operator", "expected Equal, Exists or \"\" (Equal), got '%s'",
                             op_s);
        if (!rc && eff_s && *eff_s)
            rc = k8s_dec_choice(d, t, "effect", 0, effects, &eff);
        if (!rc)
            rc = berth_dec_int(d, t, "tolerationSeconds", 0, INT64_MIN, INT64_MAX, &secs);
        if (!rc) {
            berth_toleration *tl = &pod->tols[pod->ntols];
            *tl = (berth_toleration){key, val, (berth_toleration_op)op,
                                     (berth_taint_effect)(eff + 1), secs};
            const char *why = NULL;
            if (berth_toleration_validate(tl, &why))
                rc = berth_dec_fail(d, t, "invalid toleration: %s", why);
            else
                pod->ntols++;
        }
        berth_dec_pop(d, p);
    }
    return rc;
}

/* ---- Node ---- */

const char *const kube_top_fields[] = {"apiVersion", "kind", "metadata", "spec", "status", NULL};


static const char *const container_fields[] = {
    "name", "image", "command", "args", "workingDir", "ports", "envFrom", "env", "resources",
    "resizePolicy", "restartPolicy", "volumeMounts", "volumeDevices", "livenessProbe",
    "readinessProbe", "startupProbe", "lifecycle", "terminationMessagePath",
    "terminationMessagePolicy", "imagePullPolicy", "securityContext", "stdin", "stdinOnce", "tty",
    NULL};

typedef struct portvec {
    berth_kport *v;
    uint32_t n, cap;
} portvec;

static int dec_container(berth_kcluster *k, berth_dec *d, const berth_node *c, int init,
                         berth_kcontainer *out, portvec *ports)
{
    memset(out, 0, sizeof *out);
    if (c->type != BERTH_NODE_MAP)
        return berth_dec_fail(d, c, "expected a container mapping");
    int rc = k8s_known(d, c, container_fields);
    if (!rc)
        rc = berth_dec_str(d, c, "name", 0, &out->name);
    if (!rc)
        rc = berth_dec_str(d, c, "image", 0, &out->image);
    berth_node *res = NULL;
    if (!rc)
        rc = berth_dec_map(d, c, "resources", 0, &res);
    if (!rc && res) {
        static const char *const rf[] = {"limits", "requests", "claims", NULL};
        size_t p = berth_dec_push(d, "resources");
        if (!(rc = k8s_known(d, res, rf)) &&
            !(rc = k8s_dec_res_list(k, d, res, "requests", out->req, &out->has_req, NULL, 0)))
            rc = k8s_dec_res_list(k, d, res, "limits", out->lim, &out->has_lim, NULL, 0);
        /* requests above limits are rejected by the API server */
        for (uint32_t r = 0; !rc && r < k->nres; r++) {
            uint32_t bit = 1u << r;
            if ((out->has_req & bit) && (out->has_lim & bit) && out->req[r] > out->lim[r]) {
                size_t p2 = berth_dec_push(d, "requests");
                berth_dec_push(d, k->res_names[r]);
                const berth_node *rq = berth_node_get(res, "requests");
                rc = berth_dec_fail(d, berth_node_get(rq, k->res_names[r]),
                                    "%s request must be less than or equal to its limit",
                                    k->res_names[r]);
                berth_dec_pop(d, p2);
            }
        }
        /* API defaulting: a limit without a request sets the request */
        for (uint32_t r = 0; !rc && r < k->nres; r++) {
            uint32_t bit = 1u << r;
            if ((out->has_lim & bit) && !(out->has_req & bit)) {
                out->req[r] = out->lim[r];
                out->has_req |= bit;
            }
        }
        berth_dec_pop(d, p);
    }
    const char *restart = NULL;
    if (!rc)
        rc = berth_dec_str(d, c, "restartPolicy", 0, &restart);
    if (!rc && restart) {
        if (!init || strcmp(restart, "Always"))
            rc = k8s_fail_at(d, c, "restartPolicy",
                         init ? "an init container's restartPolicy must be Always, got '%s'"
                              : "restartPolicy is only allowed on init containers (got '%s')",
                         restart);
        else
            out->sidecar = 1;
    }
    berth_node *ps = NULL;
    if (!rc)
        rc = berth_dec_seq(d, c, "ports", 0, &ps);
    for (size_t i = 0; !rc && ps && i < ps->n; i++) {
        const berth_node *pt = ps->items[i];
        size_t p = berth_dec_push(d, "ports");
        berth_dec_push_index(d, i);
        static const char *const pf[] = {"name", "hostPort", "containerPort", "protocol", "hostIP",
                                         NULL};
        static const char *const protos[] = {"TCP", "UDP", "SCTP", NULL};
        int64_t hp = 0, cp = 0;
        int proto = 0;
        const char *ip = "0.0.0.0";
        if (pt->type != BERTH_NODE_MAP)
            rc = berth_dec_fail(d, pt, "expected a mapping with containerPort, hostPort, protocol");
        if (!rc && !(rc = k8s_known(d, pt, pf)) &&
            !(rc = berth_dec_int(d, pt, "hostPort", 0, 0, 65535, &hp)) &&
            !(rc = berth_dec_int(d, pt, "containerPort", 0, 0, 65535, &cp)) &&
            !(rc = k8s_dec_choice(d, pt, "protocol", 0, protos, &proto)))
            rc = berth_dec_str(d, pt, "hostIP", 0, &ip);
        if (!rc && !*ip)
            ip = "0.0.0.0";
        if (!rc && hp > 0) {
            if ((rc = grow((void **)&ports->v, &ports->cap, ports->n + 1, sizeof *ports->v,
                           65536)))
                rc = k8s_grow_fail(d, pt, rc, "host ports in a pod", 65536);
            else
                ports->v[ports->n++] = (berth_kport){(int32_t)hp, (berth_kproto)proto, ip};
        }
        berth_dec_pop(d, p);
    }
    return rc;
}

static int dec_containers(berth_kcluster *k, berth_dec *d, const berth_node *spec, const char *key,
                          int init, berth_kcontainer **out, uint32_t *n, portvec *ports)
{
    berth_node *cs = NULL;
    *n = 0;
    int rc = berth_dec_seq(d, spec, key, 0, &cs);
    if (rc || !cs)
        return rc;
    *out = k8s_alloc(k, cs->n, sizeof **out);
    if (!*out)
        return ENOMEM_(d);
    for (size_t i = 0; !rc && i < cs->n; i++) {
        size_t p = berth_dec_push(d, key);
        berth_dec_push_index(d, i);
        rc = dec_container(k, d, cs->items[i], init, &(*out)[i], ports);
        berth_dec_pop(d, p);
    }
    if (!rc)
        *n = (uint32_t)cs->n;
    return rc;
}
/* A v1.NodeAffinity. added = 0: a pod's (API validation: nodeSelectorTerms
 * required, preferred weights 1..100; values labels.NewRequirement rejects
 * mark their term invalid); added = 1: a KubeSchedulerConfiguration's
 * NodeAffinityArgs.addedAffinity (nodeaffinity.NewNodeSelector and
 * NewPreferredSchedulingTerms must parse every requirement; no terms is
 * allowed and then matches no node; weights 0..2^31-1, 0 counting
 * nothing). */
static int dec_node_affinity(berth_kcluster *k, berth_dec *d, const berth_node *na, int added,
                             int *has_req, berth_kterm **req_terms, uint32_t *nreq,
                             berth_kpref_term **pref_terms, uint32_t *npref)
{
    static const char *const nf[] = {"requiredDuringSchedulingIgnoredDuringExecution",
                                     "preferredDuringSchedulingIgnoredDuringExecution", NULL};
    int (*dec_term)(berth_kcluster *, berth_dec *, const berth_node *, berth_kterm *) =
        added ? k8s_dec_nsterm : k8s_dec_pod_nsterm;
    berth_node *req = NULL, *pref = NULL;
    int rc;
    if ((rc = k8s_known(d, na, nf)) ||
        (rc = berth_dec_map(d, na, nf[0], 0, &req)) || (rc = berth_dec_seq(d, na, nf[1], 0, &pref)))
        return rc;
    if (req) {
        size_t p = berth_dec_push(d, nf[0]);
        static const char *const rf[] = {"nodeSelectorTerms", NULL};
        berth_node *terms = NULL;
        *has_req = 1;
        if (!(rc = k8s_known(d, req, rf)) &&
            !(rc = berth_dec_seq(d, req, "nodeSelectorTerms", !added, &terms)) && terms) {
            *req_terms = k8s_alloc(k, terms->n, sizeof **req_terms);
            if (!*req_terms)
                rc = ENOMEM_(d);
            for (size_t i = 0; !rc && i < terms->n; i++) {
                size_t p2 = berth_dec_push(d, "nodeSelectorTerms");
                berth_dec_push_index(d, i);
                rc = dec_term(k, d, terms->items[i], &(*req_terms)[i]);
                berth_dec_pop(d, p2);
            }
            if (!rc)
                *nreq = (uint32_t)terms->n;
        }
        berth_dec_pop(d, p);
        if (rc)
            return rc;
    }
    if (pref) {
        *pref_terms = k8s_alloc(k, pref->n, sizeof **pref_terms);
        if (!*pref_terms)
            return ENOMEM_(d);
        for (size_t i = 0; !rc && i < pref->n; i++) {
            const berth_node *t = pref->items[i];
            size_t p = berth_dec_push(d, nf[1]);
            berth_dec_push_index(d, i);
            static const char *const pf[] = {"weight", "preference", NULL};
            berth_kpref_term *pt = &(*pref_terms)[i];
            int64_t w = 0;
            berth_node *prefn = NULL;
            if (t->type != BERTH_NODE_MAP)
                rc = berth_dec_fail(d, t, "expected a mapping with weight, preference");
            if (!rc && !(rc = k8s_known(d, t, pf)) &&
                !(rc = berth_dec_int(d, t, "weight", !added, added ? 0 : 1,
                                     added ? INT32_MAX : 100, &w)) &&
                !(rc = berth_dec_map(d, t, "preference", !added, &prefn)) && prefn) {
                size_t p2 = berth_dec_push(d, "preference");
                rc = dec_term(k, d, prefn, &pt->term);
                berth_dec_pop(d, p2);
            }
            pt->weight = (int32_t)w;
            berth_dec_pop(d, p);
        }
        if (!rc)
            *npref = (uint32_t)pref->n;
    }
    return rc;
}

int k8s_dec_node_affinity(berth_kcluster *k, berth_dec *d, const berth_node *na, berth_kpod *pod)
{
    return dec_node_affinity(k, d, na, 0, &pod->has_req_affinity, &pod->req_terms,
                             &pod->nreq_terms, &pod->pref_terms, &pod->npref_terms);
}

int k8s_dec_added_affinity(berth_kcluster *k, berth_dec *d, const berth_node *na,
                           berth_kprofile *prof)
{
    prof->has_added_req = 0;
    prof->added_req = NULL;
    prof->nadded_req = 0;
    prof->added_pref = NULL;
    prof->nadded_pref = 0;
    return dec_node_affinity(k, d, na, 1, &prof->has_added_req, &prof->added_req,
                             &prof->nadded_req, &prof->added_pref, &prof->nadded_pref);
}

/* PodAffinityTerm; pod labels feed matchLabelKeys / mismatchLabelKeys. */
static int dec_pod_term(berth_kcluster *k, berth_dec *d, const berth_node *t,
                        const berth_labels *pod_labels, berth_kaffinity_term *out)
{
    memset(out, 0, sizeof *out);
    if (t->type != BERTH_NODE_MAP)
        return berth_dec_fail(d, t, "expected a pod affinity term (labelSelector, topologyKey)");
    static const char *const tf[] = {"labelSelector", "namespaces", "topologyKey",
                                     "namespaceSelector", "matchLabelKeys", "mismatchLabelKeys",
                                     NULL};
    int rc;
    const char **mk = NULL, **mmk = NULL;
    uint32_t nmk = 0, nmmk = 0;
    berth_node *nss = NULL;
    if ((rc = k8s_known(d, t, tf)) || (rc = k8s_dec_label_selector(k, d, t, "labelSelector", &out->selector)) ||
        (rc = k8s_dec_str_list(k, d, t, "namespaces", &out->namespaces, &out->nnamespaces)) ||
        (rc = berth_dec_str(d, t, "topologyKey", 1, &out->topology_key)) ||
        (rc = berth_dec_map(d, t, "namespaceSelector", 0, &nss)) ||
        (rc = k8s_dec_str_list(k, d, t, "matchLabelKeys", &mk, &nmk)) ||
        (rc = k8s_dec_str_list(k, d, t, "mismatchLabelKeys", &mmk, &nmmk)))
        return rc;
    if (!*out->topology_key)
        return k8s_fail_at(d, t, "topologyKey", "must not be empty%s", "");
    if (nss) {
        out->has_ns_selector = 1;
        if ((rc = k8s_dec_label_selector(k, d, t, "namespaceSelector", &out->ns_selector)))
            return rc;
    }
    if ((rc = k8s_merge_label_keys(k, d, &out->selector, pod_labels, mk, nmk, BERTH_SEL_IN)))
        return rc;
    return k8s_merge_label_keys(k, d, &out->selector, pod_labels, mmk, nmmk, BERTH_SEL_NOTIN);
}

static int dec_pod_affinity(berth_kcluster *k, berth_dec *d, const berth_node *pa,
                            const berth_labels *labels, berth_kaffinity_term **req, uint32_t *nreq,
                            berth_kaffinity_term **pref, uint32_t *npref)
{
    static const char *const nf[] = {"requiredDuringSchedulingIgnoredDuringExecution",
                                     "preferredDuringSchedulingIgnoredDuringExecution", NULL};
    berth_node *r = NULL, *p = NULL;
    int rc;
    if ((rc = k8s_known(d, pa, nf)) || (rc = berth_dec_seq(d, pa, nf[0], 0, &r)) ||
        (rc = berth_dec_seq(d, pa, nf[1], 0, &p)))
        return rc;
    if (r) {
        *req = k8s_alloc(k, r->n, sizeof **req);
        if (!*req)
            return ENOMEM_(d);
        for (size_t i = 0; !rc && i < r->n; i++) {
            size_t q = berth_dec_push(d, nf[0]);
            berth_dec_push_index(d, i);
            rc = dec_pod_term(k, d, r->items[i], labels, &(*req)[i]);
            berth_dec_pop(d, q);
        }
        if (rc)
            return rc;
        *nreq = (uint32_t)r->n;
    }
    if (p) {
        *pref = k8s_alloc(k, p->n, sizeof **pref);
        if (!*pref)
            return ENOMEM_(d);
        for (size_t i = 0; !rc && i < p->n; i++) {
            const berth_node *w = p->items[i];
            size_t q = berth_dec_push(d, nf[1]);
            berth_dec_push_index(d, i);
            static const char *const wf[] = {"weight", "podAffinityTerm", NULL};
            int64_t wt = 0;
            berth_node *term = NULL;
            if (w->type != BERTH_NODE_MAP)
                rc = berth_dec_fail(d, w, "expected a mapping with weight, podAffinityTerm");
            if (!rc && !(rc = k8s_known(d, w, wf)) &&
                !(rc = berth_dec_int(d, w, "weight", 1, 1, 100, &wt)) &&
                !(rc = berth_dec_map(d, w, "podAffinityTerm", 1, &term))) {
                size_t q2 = berth_dec_push(d, "podAffinityTerm");
                rc = dec_pod_term(k, d, term, labels, &(*pref)[i]);
                berth_dec_pop(d, q2);
                (*pref)[i].weight = (int32_t)wt;
            }
            berth_dec_pop(d, q);
        }
        if (rc)
            return rc;
        *npref = (uint32_t)p->n;
    }
    return 0;
}

/* A TopologySpreadConstraint. pod_labels: the pod's (matchLabelKeys);
 * NULL for PodTopologySpreadArgs.defaultConstraints (no selector allowed). */
int k8s_dec_spread(berth_kcluster *k, berth_dec *d, const berth_node *t,
                      const berth_labels *pod_labels, int defaults, berth_kspread *s)
{
    memset(s, 0, sizeof *s);
    s->min_domains = 1;
    s->honor_node_affinity = 1;
    if (t->type != BERTH_NODE_MAP)
        return berth_dec_fail(d, t, "expected a mapping with maxSkew, topologyKey, "
                                    "whenUnsatisfiable");
    static const char *const tf[] = {"maxSkew", "topologyKey", "whenUnsatisfiable",
                                     "labelSelector", "minDomains", "nodeAffinityPolicy",
                                     "nodeTaintsPolicy", "matchLabelKeys", NULL};
    static const char *const wu[] = {"DoNotSchedule", "ScheduleAnyway", NULL};
    static const char *const pol[] = {"Honor", "Ignore", NULL};
    int64_t skew = 0, mind = 1;
    int w = 0, nap = 0, ntp = 1;
    int rc;
    if ((rc = k8s_known(d, t, tf)) || (rc = berth_dec_int(d, t, "maxSkew", 1, 1, INT32_MAX, &skew)) ||
        (rc = berth_dec_str(d, t, "topologyKey", 1, &s->topology_key)) ||
        (rc = k8s_dec_choice(d, t, "whenUnsatisfiable", 1, wu, &w)) ||
        (rc = berth_dec_int(d, t, "minDomains", 0, 1, INT32_MAX, &mind)) ||
        (rc = k8s_dec_choice(d, t, "nodeAffinityPolicy", 0, pol, &nap)) ||
        (rc = k8s_dec_choice(d, t, "nodeTaintsPolicy", 0, pol, &ntp)) ||
        (rc = k8s_dec_str_list(k, d, t, "matchLabelKeys", &s->match_label_keys,
                           &s->nmatch_label_keys)))
        return rc;
    if (!*s->topology_key)
        return k8s_fail_at(d, t, "topologyKey", "must not be empty%s", "");
    if (berth_node_get(t, "minDomains") && w != 0)
        return k8s_fail_at(d, t, "minDomains",
                       "minDomains needs whenUnsatisfiable: DoNotSchedule%s", "");
    if (defaults && berth_node_get(t, "labelSelector"))
        return k8s_fail_at(d, t, "labelSelector",
                       "default constraints must not define a selector%s", "");
    if (!defaults && (rc = k8s_dec_label_selector(k, d, t, "labelSelector", &s->selector)))
        return rc;
    s->max_skew = (int32_t)skew;
    s->min_domains = (int32_t)mind;
    s->do_not_schedule = w == 0;
    s->honor_node_affinity = nap == 0;
    s->honor_node_taints = ntp == 0;
    return k8s_merge_label_keys(k, d, &s->selector, pod_labels, s->match_label_keys,
                            s->nmatch_label_keys, BERTH_SEL_IN);
}

static const char *const pod_spec_fields[] = {
    "volumes", "initContainers", "containers", "ephemeralContainers", "restartPolicy",
    "terminationGracePeriodSeconds", "activeDeadlineSeconds", "dnsPolicy", "nodeSelector",
    "serviceAccountName", "serviceAccount", "automountServiceAccountToken", "nodeName",
    "hostNetwork", "hostPID", "hostIPC", "shareProcessNamespace", "securityContext",
    "imagePullSecrets", "hostname", "subdomain", "affinity", "schedulerName", "tolerations",
    "hostAliases", "priorityClassName", "priority", "dnsConfig", "readinessGates",
    "runtimeClassName", "enableServiceLinks", "preemptionPolicy", "overhead",
    "topologySpreadConstraints", "setHostnameAsFQDN", "os", "hostUsers", "schedulingGates",
    "resourceClaims", "resources", NULL};

const char *const k8s_pod_status_fields[] = {
    "phase", "conditions", "message", "reason", "nominatedNodeName", "hostIP", "hostIPs", "podIP",
    "podIPs", "startTime", "initContainerStatuses", "containerStatuses", "qosClass",
    "ephemeralContainerStatuses", "resize", "resourceClaimStatuses", "observedGeneration", NULL};

/* spec.volumes[].persistentVolumeClaim.claimName (VolumeZone), in order;
 * other volume sources are not decoded. */
static int dec_claims(berth_kcluster *k, berth_dec *d, const berth_node *vols, berth_kpod *pod)
{
    static const char *const cf[] = {"claimName", "readOnly", NULL};
    uint32_t n = 0;
    for (size_t i = 0; i < vols->n; i++)
        n += vols->items[i]->type == BERTH_NODE_MAP &&
             berth_node_get(vols->items[i], "persistentVolumeClaim") != NULL;
    if (!n)
        return 0;
    pod->claims = k8s_alloc(k, n, sizeof *pod->claims);
    if (!pod->claims)
        return ENOMEM_(d);
    int rc = 0;
    for (size_t i = 0; !rc && i < vols->n; i++) {
        const berth_node *v = vols->items[i];
        if (v->type != BERTH_NODE_MAP || !berth_node_get(v, "persistentVolumeClaim"))
            continue;
        size_t p = berth_dec_push(d, "volumes");
        berth_dec_push_index(d, i);
        berth_node *pvc = NULL;
        const char *name = NULL;
        if (!(rc = berth_dec_map(d, v, "persistentVolumeClaim", 1, &pvc)) && pvc) {
            size_t p2 = berth_dec_push(d, "persistentVolumeClaim");
            if (!(rc = k8s_known(d, pvc, cf)) && !(rc = berth_dec_str(d, pvc, "claimName", 1, &name)) &&
                !*name)
                rc = k8s_fail_at(d, pvc, "claimName", "must not be empty%s", "");
            berth_dec_pop(d, p2);
        } else if (!rc)
            rc = berth_dec_fail(d, v, "persistentVolumeClaim: expected a mapping with claimName");
        berth_dec_pop(d, p);
        if (!rc)
            pod->claims[pod->nclaims++] = name;
    }
    if (!rc)
        k->volumes_stale = 1;
    return rc;
}

/* spec.priorityClassName: resolved by berth_kube_expand once every
 * PriorityClass is in, so its location is kept (only when spec.priority is
 * absent: a stored pod keeps its priority and needs no lookup). */
static int dec_priority_class(berth_kcluster *k, berth_dec *d, const berth_node *spec,
                              berth_kpod *pod)
{
    const char *name = NULL;
    int rc = berth_dec_str(d, spec, "priorityClassName", 0, &name);
    if (rc || !name || !*name)
        return rc;
    pod->priority_class = name;
    if (pod->has_priority)
        return 0;
    const berth_node *n = berth_node_get(spec, "priorityClassName");
    size_t p = berth_dec_push(d, "priorityClassName");
    pod->priority_class_at = (berth_kloc){berth_arena_strdup(&k->arena, d->file),
                                          berth_arena_strdup(&k->arena, d->path), n->line, n->col};
    berth_dec_pop(d, p);
    if (!pod->priority_class_at.file || !pod->priority_class_at.path)
        return ENOMEM_(d);
    return 0;
}

/* Local storage (cluster-autoscaler's drain rule, utils/drain/drain.go
 * isLocalVolume): hostPath, or an emptyDir not backed by memory. Their
 * names (spec.volumes[].name, required by the API) are kept, in order, for
 * the safe-to-evict-local-volumes annotation. */
static int is_local_volume(const berth_node *v)
{
    if (v->type != BERTH_NODE_MAP)
        return 0;
    const berth_node *ed = berth_node_get(v, "emptyDir"), *hp = berth_node_get(v, "hostPath");
    const berth_node *med = ed && ed->type == BERTH_NODE_MAP ? berth_node_get(ed, "medium") : NULL;
    if (ed && berth_node_is_null(ed))
        ed = NULL; /* a null source is no source (nil in the Go type) */
    return (hp && !berth_node_is_null(hp)) ||
           (ed && !(med && med->type == BERTH_NODE_SCALAR && !strcmp(med->str, "Memory")));
}

static int dec_local_volumes(berth_kcluster *k, berth_dec *d, const berth_node *vols,
                             berth_kpod *pod)
{
    uint32_t n = 0;
    for (size_t i = 0; i < vols->n; i++)
        n += (uint32_t)is_local_volume(vols->items[i]);
    if (!n)
        return 0;
    pod->local_storage = 1;
    pod->local_volumes = k8s_alloc(k, n, sizeof *pod->local_volumes);
    if (!pod->local_volumes)
        return ENOMEM_(d);
    int rc = 0;
    for (size_t i = 0; !rc && i < vols->n; i++) {
        const berth_node *v = vols->items[i];
        if (!is_local_volume(v))
            continue;
        size_t p = berth_dec_push(d, "volumes");
        berth_dec_push_index(d, i);
        const char *name = NULL;
        if (!(rc = berth_dec_str(d, v, "name", 1, &name)) && !*name)
            rc = k8s_fail_at(d, v, "name", "must not be empty%s", "");
        berth_dec_pop(d, p);
        if (!rc)
            pod->local_volumes[pod->nlocal_volumes++] = name;
    }
    return rc;
}

int k8s_dec_pod_spec(berth_kcluster *k, berth_dec *d, const berth_node *spec, berth_kpod *pod)
{
    portvec ports = {NULL, 0, 0};
    int rc = k8s_known(d, spec, pod_spec_fields);
    if (!rc)
        rc = dec_containers(k, d, spec, "containers", 0, &pod->containers, &pod->ncontainers,
                            &ports);
    if (!rc)
        rc = dec_containers(k, d, spec, "initContainers", 1, &pod->init, &pod->ninit, &ports);
    if (!rc && ports.n) {
        pod->ports = k8s_alloc(k, ports.n, sizeof *pod->ports);
        if (!pod->ports)
            rc = ENOMEM_(d);
        else {
            memcpy(pod->ports, ports.v, ports.n * sizeof *pod->ports);
            pod->nports = ports.n;
        }
    }
    free(ports.v);
    berth_node *vols = NULL;
    if (!rc)
        rc = berth_dec_seq(d, spec, "volumes", 0, &vols);
    if (!rc && vols)
        rc = dec_local_volumes(k, d, vols, pod);
    if (!rc && vols)
        rc = dec_claims(k, d, vols, pod);
    if (!rc)
        rc = k8s_dec_res_list(k, d, spec, "overhead", pod->overhead, NULL, NULL, 0);
    if (!rc) {
        pod->has_priority = berth_node_get(spec, "priority") != NULL;
        rc = berth_dec_int(d, spec, "priority", 0, INT32_MIN, INT32_MAX, &pod->priority);
    }
    if (!rc) {
        /* DefaultPreemption: Never keeps the pod from preempting others */
        static const char *const policies[] = {"PreemptLowerPriority", "Never", NULL};
        rc = k8s_dec_choice(d, spec, "preemptionPolicy", 0, policies, &pod->preemption_policy);
    }
    if (!rc)
        rc = dec_priority_class(k, d, spec, pod);
    if (!rc)
        rc = berth_dec_str(d, spec, "schedulerName", 0, &pod->scheduler_name);
    if (!rc && !*pod->scheduler_name)
        pod->scheduler_name = "default-scheduler";
    if (!rc)
        rc = berth_dec_str(d, spec, "nodeName", 0, &pod->node_name);
    if (!rc && pod->node_name && !*pod->node_name)
        pod->node_name = NULL;
    if (!rc)
        rc = k8s_dec_labels_at(k, d, spec, "nodeSelector", &pod->node_selector, 0);
    if (!rc)
        rc = k8s_dec_tolerations(k, d, spec, pod);
    berth_node *aff = NULL, *tsc = NULL;
    if (!rc)
        rc = berth_dec_map(d, spec, "affinity", 0, &aff);
    if (!rc && aff) {
        static const char *const af[] = {"nodeAffinity", "podAffinity", "podAntiAffinity", NULL};
        berth_node *na = NULL, *pa = NULL, *paa = NULL;
        size_t p = berth_dec_push(d, "affinity");
        if (!(rc = k8s_known(d, aff, af)) && !(rc = berth_dec_map(d, aff, "nodeAffinity", 0, &na)) &&
            !(rc = berth_dec_map(d, aff, "podAffinity", 0, &pa)))
            rc = berth_dec_map(d, aff, "podAntiAffinity", 0, &paa);
        if (!rc && na) {
            size_t p2 = berth_dec_push(d, "nodeAffinity");
            rc = k8s_dec_node_affinity(k, d, na, pod);
            berth_dec_pop(d, p2);
        }
        if (!rc && pa) {
            size_t p2 = berth_dec_push(d, "podAffinity");
            rc = dec_pod_affinity(k, d, pa, &pod->labels, &pod->aff_req, &pod->naff_req,
                                  &pod->aff_pref, &pod->naff_pref);
            berth_dec_pop(d, p2);
        }
        if (!rc && paa) {
            size_t p2 = berth_dec_push(d, "podAntiAffinity");
            rc = dec_pod_affinity(k, d, paa, &pod->labels, &pod->anti_req, &pod->nanti_req,
                                  &pod->anti_pref, &pod->nanti_pref);
            berth_dec_pop(d, p2);
        }
        berth_dec_pop(d, p);
    }
    if (!rc)
        rc = berth_dec_seq(d, spec, "topologySpreadConstraints", 0, &tsc);
    if (!rc && tsc) {
        pod->spread = k8s_alloc(k, tsc->n, sizeof *pod->spread);
        if (!pod->spread)
            rc = ENOMEM_(d);
        for (size_t i = 0; !rc && i < tsc->n; i++) {
            size_t p = berth_dec_push(d, "topologySpreadConstraints");
            berth_dec_push_index(d, i);
            rc = k8s_dec_spread(k, d, tsc->items[i], &pod->labels, 0, &pod->spread[i]);
            berth_dec_pop(d, p);
        }
        if (!rc)
            pod->nspread = (uint32_t)tsc->n;
    }
    return rc;
}
