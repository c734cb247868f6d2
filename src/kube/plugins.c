/* kube/plugins.c - the kube plugin tables: berth_kplugin -> its filter and
 * score extension points (NULL where upstream has none). The node-level
 * plugins live in kube/plugins_node.c, the resource plugins in
 * kube/plugins_resources.c, PodTopologySpread and InterPodAffinity in
 * kube/terms.c. The usage-aware admission (SPEC 2.4) is a mode of the
 * NodeResourcesFit filter (prof->usage_aware), so UsageHeadroom has a
 * score only. */
#include "kube/state.h"

extern const berth_filter_plugin kube_unschedulable_filter, kube_node_name_filter,
    kube_taint_filter, kube_affinity_filter, kube_ports_filter, kube_volume_zone_filter,
    kube_fit_filter;
extern const berth_score_plugin kube_taint_score, kube_affinity_score, kube_image_score,
    kube_fit_score, kube_balanced_score, kube_headroom_score;

const berth_filter_plugin *kube_filter_plugin(berth_kplugin p)
{
    switch (p) {
    case BERTH_KP_NODE_UNSCHEDULABLE: return &kube_unschedulable_filter;
    case BERTH_KP_NODE_NAME: return &kube_node_name_filter;
    case BERTH_KP_TAINT_TOLERATION: return &kube_taint_filter;
    case BERTH_KP_NODE_AFFINITY: return &kube_affinity_filter;
    case BERTH_KP_NODE_PORTS: return &kube_ports_filter;
    case BERTH_KP_NODE_RESOURCES_FIT: return &kube_fit_filter;
    case BERTH_KP_VOLUME_ZONE: return &kube_volume_zone_filter;
    case BERTH_KP_POD_TOPOLOGY_SPREAD: return &kube_pts_filter;
    case BERTH_KP_INTER_POD_AFFINITY: return &kube_ipa_filter;
    case BERTH_KP_BALANCED_ALLOCATION:
    case BERTH_KP_IMAGE_LOCALITY:
    case BERTH_KP_USAGE_HEADROOM:
    case BERTH_KP_COUNT: break;
    }
    return NULL;
}

const berth_score_plugin *kube_score_plugin(berth_kplugin p)
{
    switch (p) {
    case BERTH_KP_TAINT_TOLERATION: return &kube_taint_score;
    case BERTH_KP_NODE_AFFINITY: return &kube_affinity_score;
    case BERTH_KP_NODE_RESOURCES_FIT: return &kube_fit_score;
    case BERTH_KP_POD_TOPOLOGY_SPREAD: return &kube_pts_score;
    case BERTH_KP_INTER_POD_AFFINITY: return &kube_ipa_score;
    case BERTH_KP_BALANCED_ALLOCATION: return &kube_balanced_score;
    case BERTH_KP_IMAGE_LOCALITY: return &kube_image_score;
    case BERTH_KP_USAGE_HEADROOM: return &kube_headroom_score;
    case BERTH_KP_NODE_UNSCHEDULABLE:
    case BERTH_KP_NODE_NAME:
    case BERTH_KP_NODE_PORTS:
    case BERTH_KP_VOLUME_ZONE:
    case BERTH_KP_COUNT: break;
    }
    return NULL;
}

uint32_t kube_reason_code(const kube_sched *s, const kube_req *r, berth_kplugin f, uint32_t c)
{
    switch (f) {
    case BERTH_KP_NODE_RESOURCES_FIT: return kube_fit_reason_code(s, r, c);
    case BERTH_KP_NODE_AFFINITY: return kube_affinity_reason_code(s, r, c);
    case BERTH_KP_TAINT_TOLERATION: return kube_taint_reason_code(s, r, c);
    default: return KUBE_NO_REASON_CODE;
    }
}
