/* kube/profiles.c - the built-in scheduler profiles: kube-scheduler's
 * default profile (SPEC 2.5 "Profile defaults") and berth's usage-aware
 * profile (SPEC 2.4). A KubeSchedulerConfiguration profile starts from the
 * default one (kube/load.c). */
#include "berth/kube.h"

#include <string.h>

#define BIT(p) (1u << (unsigned)(p))

static const uint32_t default_filters =
    BIT(BERTH_KP_NODE_UNSCHEDULABLE) | BIT(BERTH_KP_NODE_NAME) | BIT(BERTH_KP_TAINT_TOLERATION) |
    BIT(BERTH_KP_NODE_AFFINITY) | BIT(BERTH_KP_NODE_PORTS) | BIT(BERTH_KP_NODE_RESOURCES_FIT) |
    BIT(BERTH_KP_VOLUME_ZONE) | BIT(BERTH_KP_POD_TOPOLOGY_SPREAD) |
    BIT(BERTH_KP_INTER_POD_AFFINITY);

void berth_kube_default_profile(berth_kcluster *k, berth_kprofile *p)
{
    (void)k;
    memset(p, 0, sizeof *p);
    p->name = "default-scheduler";
    p->filters = default_filters;
    static const struct { berth_kplugin pl; int64_t w; } scores[] = {
        {BERTH_KP_TAINT_TOLERATION, 3},    {BERTH_KP_NODE_AFFINITY, 2},
        {BERTH_KP_NODE_RESOURCES_FIT, 1},  {BERTH_KP_POD_TOPOLOGY_SPREAD, 2},
        {BERTH_KP_INTER_POD_AFFINITY, 2},  {BERTH_KP_BALANCED_ALLOCATION, 1},
        {BERTH_KP_IMAGE_LOCALITY, 1},
    };
    for (size_t i = 0; i < sizeof scores / sizeof *scores; i++) {
        p->scores |= BIT(scores[i].pl);
        p->weight[scores[i].pl] = scores[i].w;
    }
    p->fit_strategy = BERTH_FIT_LEAST_ALLOCATED;
    p->fit_res[0] = (berth_kres_weight){BERTH_KRES_CPU, 1};
    p->fit_res[1] = (berth_kres_weight){BERTH_KRES_MEMORY, 1};
    p->nfit_res = 2;
    p->balanced_res[0] = (berth_kres_weight){BERTH_KRES_CPU, 1};
    p->balanced_res[1] = (berth_kres_weight){BERTH_KRES_MEMORY, 1};
    p->nbalanced_res = 2;
    p->hard_pod_affinity_weight = 1;
    p->spread_system_defaults = 1;
    p->percentage_of_nodes_to_score = 0;
}

/* usage-aware: the default filters (NodeResourcesFit admits on unreserved
 * capacity plus overhead when usage_aware is set) and a single score,
 * UsageHeadroom (weight 1): the node whose observed active usage after
 * placement leaves the most headroom wins. */
void berth_kube_usage_aware_profile(berth_kcluster *k, berth_kprofile *p)
{
    berth_kube_default_profile(k, p);
    p->name = "usage-aware";
    p->usage_aware = 1;
    p->scores = BIT(BERTH_KP_USAGE_HEADROOM);
    memset(p->weight, 0, sizeof p->weight);
    p->weight[BERTH_KP_USAGE_HEADROOM] = 1;
}
