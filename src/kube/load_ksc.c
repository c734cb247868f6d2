/* kube/kube_load_ksc.c - KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1):
 * profiles, plugin sets, weights and pluginConfig args (NodeAffinityArgs
 * addedAffinity through the object layer's node-affinity decoder). */
#include "k8s/k8s.h"
#include "kube/load.h"
#include "berth/time.h"
#include "berth/grow.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- KubeSchedulerConfiguration ---- */

#define BIT(p) (1u << (unsigned)(p))

static const uint32_t filter_capable =
    BIT(BERTH_KP_NODE_UNSCHEDULABLE) | BIT(BERTH_KP_NODE_NAME) | BIT(BERTH_KP_TAINT_TOLERATION) |
    BIT(BERTH_KP_NODE_AFFINITY) | BIT(BERTH_KP_NODE_PORTS) | BIT(BERTH_KP_NODE_RESOURCES_FIT) |
    BIT(BERTH_KP_VOLUME_ZONE) | BIT(BERTH_KP_POD_TOPOLOGY_SPREAD) |
    BIT(BERTH_KP_INTER_POD_AFFINITY);
static const uint32_t score_capable =
    BIT(BERTH_KP_TAINT_TOLERATION) | BIT(BERTH_KP_NODE_AFFINITY) |
    BIT(BERTH_KP_NODE_RESOURCES_FIT) | BIT(BERTH_KP_POD_TOPOLOGY_SPREAD) |
    BIT(BERTH_KP_INTER_POD_AFFINITY) | BIT(BERTH_KP_BALANCED_ALLOCATION) |
    BIT(BERTH_KP_IMAGE_LOCALITY) | BIT(BERTH_KP_USAGE_HEADROOM);

/* Upstream in-tree plugins berth does not model: accepted and ignored. */
static const char *const other_plugins[] = {
    "PrioritySort", "DefaultBinder", "DefaultPreemption", "VolumeBinding", "VolumeRestrictions",
    "NodeVolumeLimits", "EBSLimits", "GCEPDLimits", "AzureDiskLimits", "CinderLimits",
    "SchedulingGates", "DynamicResources", NULL};

/* berth_kplugin index, BERTH_KP_COUNT for a k8s_known plugin berth does not
 * model, -1 when unknown. */
static int plugin_by_name(const char *name)
{
    for (int i = 0; i < BERTH_KP_COUNT; i++)
        if (!strcmp(berth_kplugin_name((berth_kplugin)i), name))
            return i;
    for (const char *const *o = other_plugins; *o; o++)
        if (!strcmp(*o, name))
            return BERTH_KP_COUNT;
    return -1;
}

static int fail_plugin(berth_dec *d, const berth_node *m, const char *name)
{
    return k8s_fail_at(d, m, "name",
                   "unknown plugin '%s' (berth knows NodeUnschedulable, NodeName, "
                   "TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit, VolumeZone, "
                   "PodTopologySpread, InterPodAffinity, NodeResourcesBalancedAllocation, "
                   "ImageLocality, UsageHeadroom and upstream's other in-tree plugins)",
                   name);
}

enum { EP_FILTER = 1, EP_SCORE = 2, EP_MULTI = 3, EP_OTHER = 0 };

static int dec_plugin_set(berth_dec *d, const berth_node *set, int ep, berth_kprofile *prof,
                          const berth_kprofile *def)
{
    static const char *const sf[] = {"enabled", "disabled", NULL};
    berth_node *en = NULL, *dis = NULL;
    int rc;
    if (set->type != BERTH_NODE_MAP)
        return berth_dec_fail(d, set, "expected a mapping with enabled, disabled");
    if ((rc = k8s_known(d, set, sf)) || (rc = berth_dec_seq(d, set, "enabled", 0, &en)) ||
        (rc = berth_dec_seq(d, set, "disabled", 0, &dis)))
        return rc;
    uint32_t fmask = ep == EP_FILTER || ep == EP_MULTI ? filter_capable : 0;
    uint32_t smask = ep == EP_SCORE || ep == EP_MULTI ? score_capable : 0;
    for (size_t i = 0; !rc && dis && i < dis->n; i++) {
        const berth_node *pl = dis->items[i];
        size_t p = berth_dec_push(d, "disabled");
        berth_dec_push_index(d, i);
        static const char *const pf[] = {"name", "weight", NULL};
        const char *name = NULL;
        if (pl->type != BERTH_NODE_MAP)
            rc = berth_dec_fail(d, pl, "expected a mapping with name");
        if (!rc && !(rc = k8s_known(d, pl, pf)))
            rc = berth_dec_str(d, pl, "name", 1, &name);
        if (!rc) {
            if (!strcmp(name, "*")) {
                prof->filters &= ~fmask;
                prof->scores &= ~smask;
            } else {
                int pi = plugin_by_name(name);
                if (pi < 0)
                    rc = fail_plugin(d, pl, name);
                else if (pi < BERTH_KP_COUNT) {
                    prof->filters &= ~(fmask & BIT(pi));
                    prof->scores &= ~(smask & BIT(pi));
                }
            }
        }
        berth_dec_pop(d, p);
    }
    for (size_t i = 0; !rc && en && i < en->n; i++) {
        const berth_node *pl = en->items[i];
        size_t p = berth_dec_push(d, "enabled");
        berth_dec_push_index(d, i);
        static const char *const pf[] = {"name", "weight", NULL};
        const char *name = NULL;
        int64_t w = 0;
        if (pl->type != BERTH_NODE_MAP)
            rc = berth_dec_fail(d, pl, "expected a mapping with name, weight");
        if (!rc && !(rc = k8s_known(d, pl, pf)) && !(rc = berth_dec_str(d, pl, "name", 1, &name)))
            rc = berth_dec_int(d, pl, "weight", 0, 1, 1000000, &w);
        int pi = -1;
        if (!rc && (pi = plugin_by_name(name)) < 0)
            rc = fail_plugin(d, pl, name);
        if (!rc && pi < BERTH_KP_COUNT && ep != EP_OTHER) {
            uint32_t bit = BIT(pi);
            if (ep == EP_FILTER && !(filter_capable & bit))
                rc = k8s_fail_at(d, pl, "name", "plugin %s has no filter extension point", name);
            else if (ep == EP_SCORE && !(score_capable & bit))
                rc = k8s_fail_at(d, pl, "name", "plugin %s has no score extension point", name);
            else if (ep == EP_MULTI && !((filter_capable | score_capable) & bit))
                rc = k8s_fail_at(d, pl, "name", "plugin %s has no filter or score extension point",
                             name);
            if (!rc) {
                prof->filters |= fmask & bit;
                if (smask & bit) {
                    prof->scores |= bit;
                    if (w > 0)
                        prof->weight[pi] = w;
                    else if (prof->weight[pi] <= 0)
                        prof->weight[pi] = def->weight[pi] > 0 ? def->weight[pi] : 1;
                }
            }
        }
        berth_dec_pop(d, p);
    }
    return rc;
}

/* A [{name, weight}] resource list (weight 1..100, default 1). */
static int dec_res_weights(berth_kcluster *k, berth_dec *d, const berth_node *m, const char *key,
                           berth_kres_weight *out, uint32_t *n)
{
    berth_node *s = NULL;
    int rc = berth_dec_seq(d, m, key, 0, &s);
    if (rc || !s)
        return rc;
    *n = 0;
    for (size_t i = 0; !rc && i < s->n; i++) {
        const berth_node *e = s->items[i];
        size_t p = berth_dec_push(d, key);
        berth_dec_push_index(d, i);
        static const char *const rf[] = {"name", "weight", NULL};
        const char *name = NULL;
        int64_t w = 1;
        if (e->type != BERTH_NODE_MAP)
            rc = berth_dec_fail(d, e, "expected a mapping with name, weight");
        if (!rc && !(rc = k8s_known(d, e, rf)) && !(rc = berth_dec_str(d, e, "name", 1, &name)))
            rc = berth_dec_int(d, e, "weight", 0, 1, 100, &w);
        if (!rc && strcmp(name, "pods")) {
            uint32_t r = berth_kube_resource(k, name, 1);
            if (r == BERTH_KUBE_NONE)
                rc = k8s_fail_at(d, e, "name", "too many distinct resources (at most 16): '%s'", name);
            for (uint32_t j = 0; !rc && j < *n; j++)
                if (out[j].res == r)
                    rc = k8s_fail_at(d, e, "name", "resource '%s' listed twice", name);
            if (!rc && *n >= BERTH_KUBE_MAX_RES)
                rc = berth_dec_fail(d, e, "more than %d resources", BERTH_KUBE_MAX_RES);
            if (!rc)
                out[(*n)++] = (berth_kres_weight){r, w};
        }
        berth_dec_pop(d, p);
    }
    return rc;
}

static int dec_fit_args(berth_kcluster *k, berth_dec *d, const berth_node *a, berth_kprofile *prof)
{
    static const char *const af[] = {"apiVersion", "kind", "ignoredResources",
                                     "ignoredResourceGroups", "scoringStrategy", NULL};
    const char **ign = NULL;
    uint32_t nign = 0;
    berth_node *ss = NULL, *groups = NULL;
    int rc;
    if ((rc = k8s_known(d, a, af)) || (rc = k8s_dec_str_list(k, d, a, "ignoredResources", &ign, &nign)) ||
        (rc = berth_dec_seq(d, a, "ignoredResourceGroups", 0, &groups)) ||
        (rc = berth_dec_map(d, a, "scoringStrategy", 0, &ss)))
        return rc;
    if (groups && groups->n)
        return k8s_fail_at(d, a, "ignoredResourceGroups",
                       "not supported by berth; list the resources in ignoredResources%s", "");
    for (uint32_t i = 0; i < nign; i++) {
        uint32_t r = berth_kube_resource(k, ign[i], 1);
        if (r == BERTH_KUBE_NONE)
            continue; /* "pods" or a full table: nothing to ignore */
        prof->ignored_res |= 1u << r;
    }
    if (!ss)
        return 0;
    size_t p = berth_dec_push(d, "scoringStrategy");
    static const char *const sf[] = {"type", "resources", "requestedToCapacityRatio", NULL};
    static const char *const types[] = {"LeastAllocated", "MostAllocated",
                                        "RequestedToCapacityRatio", NULL};
    int type = 0;
    berth_node *rtcr = NULL, *shape = NULL;
    if (!(rc = k8s_known(d, ss, sf)) && !(rc = k8s_dec_choice(d, ss, "type", 0, types, &type)) &&
        !(rc = dec_res_weights(k, d, ss, "resources", prof->fit_res, &prof->nfit_res)))
        rc = berth_dec_map(d, ss, "requestedToCapacityRatio", 0, &rtcr);
    if (!rc) {
        prof->fit_strategy = (berth_kfit_strategy)type;
        if (berth_node_get(ss, "resources") && !prof->nfit_res)
            rc = k8s_fail_at(d, ss, "resources", "must list at least one resource%s", "");
    }
    if (!rc && type == BERTH_FIT_REQUESTED_TO_CAPACITY_RATIO && !rtcr)
        rc = k8s_fail_at(d, ss, "requestedToCapacityRatio",
                     "required with type RequestedToCapacityRatio%s", "");
    if (!rc && rtcr) {
        size_t p2 = berth_dec_push(d, "requestedToCapacityRatio");
        static const char *const rf[] = {"shape", NULL};
        if (!(rc = k8s_known(d, rtcr, rf)) && !(rc = berth_dec_seq(d, rtcr, "shape", 1, &shape)) &&
            (shape->n == 0 || shape->n > 16))
            rc = k8s_fail_at(d, rtcr, "shape", "expected 1 to 16 points%s", "");
        prof->nshape = 0;
        for (size_t i = 0; !rc && i < shape->n; i++) {
            const berth_node *pt = shape->items[i];
            size_t p3 = berth_dec_push(d, "shape");
            berth_dec_push_index(d, i);
            static const char *const pf[] = {"utilization", "score", NULL};
            int64_t u = 0, s = 0;
            if (pt->type != BERTH_NODE_MAP)
                rc = berth_dec_fail(d, pt, "expected a mapping with utilization, score");
            if (!rc && !(rc = k8s_known(d, pt, pf)) &&
                !(rc = berth_dec_int(d, pt, "utilization", 0, 0, 100, &u)))
                rc = berth_dec_int(d, pt, "score", 0, 0, 10, &s);
            if (!rc && i > 0 && u <= prof->shape_util[i - 1])
                rc = k8s_fail_at(d, pt, "utilization",
                             "utilization values must be strictly increasing%s", "");
            if (!rc) {
                prof->shape_util[i] = (int32_t)u;
                prof->shape_score[i] = (int32_t)s;
                prof->nshape++;
            }
            berth_dec_pop(d, p3);
        }
        berth_dec_pop(d, p2);
    }
    berth_dec_pop(d, p);
    return rc;
}

static int dec_plugin_config(berth_kcluster *k, berth_dec *d, const berth_node *pc,
                             berth_kprofile *prof)
{
    int rc = 0;
    for (size_t i = 0; !rc && i < pc->n; i++) {
        const berth_node *e = pc->items[i];
        size_t p = berth_dec_push(d, "pluginConfig");
        berth_dec_push_index(d, i);
        static const char *const ef[] = {"name", "args", NULL};
        const char *name = NULL;
        berth_node *args = NULL;
        int pi = -1;
        if (e->type != BERTH_NODE_MAP)
            rc = berth_dec_fail(d, e, "expected a mapping with name, args");
        if (!rc && !(rc = k8s_known(d, e, ef)) && !(rc = berth_dec_str(d, e, "name", 1, &name)) &&
            (pi = plugin_by_name(name)) < 0)
            rc = fail_plugin(d, e, name);
        if (!rc)
            rc = berth_dec_map(d, e, "args", 0, &args);
        if (!rc && args) {
            size_t p2 = berth_dec_push(d, "args");
            if (pi == BERTH_KP_NODE_RESOURCES_FIT) {
                rc = dec_fit_args(k, d, args, prof);
            } else if (pi == BERTH_KP_BALANCED_ALLOCATION) {
                static const char *const af[] = {"apiVersion", "kind", "resources", NULL};
                if (!(rc = k8s_known(d, args, af)))
                    rc = dec_res_weights(k, d, args, "resources", prof->balanced_res,
                                         &prof->nbalanced_res);
                if (!rc && berth_node_get(args, "resources") && !prof->nbalanced_res)
                    rc = k8s_fail_at(d, args, "resources", "must list at least one resource%s", "");
            } else if (pi == BERTH_KP_INTER_POD_AFFINITY) {
                static const char *const af[] = {"apiVersion", "kind", "hardPodAffinityWeight",
                                                 "ignorePreferredTermsOfExistingPods", NULL};
                int ign = 0;
                if (!(rc = k8s_known(d, args, af)) &&
                    !(rc = berth_dec_int(d, args, "hardPodAffinityWeight", 0, 0, 100,
                                         &prof->hard_pod_affinity_weight)))
                    rc = berth_dec_bool(d, args, "ignorePreferredTermsOfExistingPods", 0, &ign);
                if (!rc && ign)
                    rc = k8s_fail_at(d, args, "ignorePreferredTermsOfExistingPods",
                                 "not supported by berth%s", "");
            } else if (pi == BERTH_KP_POD_TOPOLOGY_SPREAD) {
                static const char *const af[] = {"apiVersion", "kind", "defaultConstraints",
                                                 "defaultingType", NULL};
                static const char *const dt[] = {"System", "List", NULL};
                int type = 0;
                berth_node *dc = NULL;
                if (!(rc = k8s_known(d, args, af)) &&
                    !(rc = k8s_dec_choice(d, args, "defaultingType", 0, dt, &type)))
                    rc = berth_dec_seq(d, args, "defaultConstraints", 0, &dc);
                if (!rc && type == 0 && dc && dc->n)
                    rc = k8s_fail_at(d, args, "defaultConstraints",
                                 "must be empty with defaultingType System%s", "");
                if (!rc && type == 1) {
                    prof->spread_system_defaults = 0;
                    prof->ndefault_spread = 0;
                    prof->default_spread = k8s_alloc(k, dc ? dc->n : 0, sizeof *prof->default_spread);
                    if (!prof->default_spread)
                        rc = ENOMEM_(d);
                    for (size_t j = 0; !rc && dc && j < dc->n; j++) {
                        size_t p3 = berth_dec_push(d, "defaultConstraints");
                        berth_dec_push_index(d, j);
                        rc = k8s_dec_spread(k, d, dc->items[j], NULL, 1, &prof->default_spread[j]);
                        berth_dec_pop(d, p3);
                        if (!rc)
                            prof->ndefault_spread++;
                    }
                }
            } else if (pi == BERTH_KP_NODE_AFFINITY) {
                /* NodeAffinityArgs (upstream nodeaffinity.New) */
                static const char *const af[] = {"apiVersion", "kind", "addedAffinity", NULL};
                berth_node *added = NULL;
                if (!(rc = k8s_known(d, args, af)) &&
                    !(rc = berth_dec_map(d, args, "addedAffinity", 0, &added)) && added) {
                    size_t p3 = berth_dec_push(d, "addedAffinity");
                    rc = k8s_dec_added_affinity(k, d, added, prof);
                    berth_dec_pop(d, p3);
                }
            }
            /* other plugins' args are accepted and not used */
            berth_dec_pop(d, p2);
        }
        berth_dec_pop(d, p);
    }
    return rc;
}

static int dec_profile(berth_kcluster *k, berth_dec *d, const berth_node *pn, int32_t top_pct,
                       berth_kprofile *prof)
{
    berth_kprofile def;
    berth_kube_default_profile(k, &def);
    *prof = def;
    prof->percentage_of_nodes_to_score = top_pct;
    if (pn->type != BERTH_NODE_MAP)
        return berth_dec_fail(d, pn, "expected a profile mapping");
    static const char *const pf[] = {"schedulerName", "percentageOfNodesToScore", "plugins",
                                     "pluginConfig", NULL};
    int64_t pct = top_pct;
    berth_node *plugins = NULL, *pc = NULL;
    int rc;
    if ((rc = k8s_known(d, pn, pf)) || (rc = berth_dec_str(d, pn, "schedulerName", 0, &prof->name)) ||
        (rc = berth_dec_int(d, pn, "percentageOfNodesToScore", 0, 0, 100, &pct)) ||
        (rc = berth_dec_map(d, pn, "plugins", 0, &plugins)) ||
        (rc = berth_dec_seq(d, pn, "pluginConfig", 0, &pc)))
        return rc;
    if (!*prof->name)
        prof->name = "default-scheduler";
    prof->percentage_of_nodes_to_score = (int32_t)pct;
    if (plugins) {
        size_t p = berth_dec_push(d, "plugins");
        static const struct { const char *name; int ep; } eps[] = {
            {"multiPoint", EP_MULTI}, {"preEnqueue", EP_OTHER}, {"queueSort", EP_OTHER},
            {"preFilter", EP_OTHER},  {"filter", EP_FILTER},    {"postFilter", EP_OTHER},
            {"preScore", EP_OTHER},   {"score", EP_SCORE},      {"reserve", EP_OTHER},
            {"permit", EP_OTHER},     {"preBind", EP_OTHER},    {"bind", EP_OTHER},
            {"postBind", EP_OTHER},
        };
        const char *names[sizeof eps / sizeof *eps + 1];
        for (size_t i = 0; i < sizeof eps / sizeof *eps; i++)
            names[i] = eps[i].name;
        names[sizeof eps / sizeof *eps] = NULL;
        rc = k8s_known(d, plugins, names);
        /* multiPoint first, then the specific extension points override it */
        for (size_t i = 0; !rc && i < sizeof eps / sizeof *eps; i++) {
            const berth_node *set = berth_node_get(plugins, eps[i].name);
            if (!set)
                continue;
            size_t p2 = berth_dec_push(d, eps[i].name);
            rc = dec_plugin_set(d, set, eps[i].ep, prof, &def);
            berth_dec_pop(d, p2);
        }
        berth_dec_pop(d, p);
    }
    if (!rc && pc)
        rc = dec_plugin_config(k, d, pc, prof);
    return rc;
}

int kube_load_ksc(berth_kcluster *k, berth_dec *d, const berth_node *doc)
{
    static const char *const tf[] = {
        "apiVersion", "kind", "parallelism", "leaderElection", "clientConnection",
        "healthzBindAddress", "metricsBindAddress", "debuggingConfiguration",
        "percentageOfNodesToScore", "podInitialBackoffSeconds", "podMaxBackoffSeconds",
        "profiles", "extenders", "delayCacheUntilActive", NULL};
    int64_t pct = 0;
    berth_node *profs = NULL;
    int rc;
    if ((rc = k8s_known(d, doc, tf)) ||
        (rc = berth_dec_int(d, doc, "percentageOfNodesToScore", 0, 0, 100, &pct)) ||
        (rc = berth_dec_seq(d, doc, "profiles", 0, &profs)))
        return rc;
    k->percentage_of_nodes_to_score = (int32_t)pct;
    size_t n = profs ? profs->n : 0;
    if (n > KUBE_MAX_PROFILES)
        return berth_dec_fail(d, profs, "more than %u profiles", KUBE_MAX_PROFILES);
    for (size_t i = 0; i < (n ? n : 1); i++) {
        berth_kprofile prof;
        if (n) {
            size_t p = berth_dec_push(d, "profiles");
            berth_dec_push_index(d, i);
            rc = dec_profile(k, d, profs->items[i], (int32_t)pct, &prof);
            if (!rc && berth_kube_find_profile(k, prof.name))
                rc = k8s_fail_at(d, profs->items[i], "schedulerName",
                             "profile '%s' is defined twice", prof.name);
            berth_dec_pop(d, p);
            if (rc)
                return rc;
        } else {
            berth_kube_default_profile(k, &prof);
            prof.percentage_of_nodes_to_score = (int32_t)pct;
            if (berth_kube_find_profile(k, prof.name))
                return berth_dec_fail(d, doc, "profile '%s' is defined twice", prof.name);
        }
        if ((rc = grow((void **)&k->profiles, &k->capprofiles, k->nprofiles + 1,
                       sizeof *k->profiles, KUBE_MAX_PROFILES)))
            return k8s_grow_fail(d, doc, rc, "profiles", KUBE_MAX_PROFILES);
        k->profiles[k->nprofiles++] = prof;
    }
    return 0;
}
