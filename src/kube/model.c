/* kube/model.c - the kube model's lifetime (berth_kube_init/free), the
 * cluster-wide resource column table (cpu, memory, ephemeral-storage, then
 * extended resources in order of first appearance), the names of QoS
 * classes and plugins, and profile lookup by scheduler name. */
#include "berth/kube.h"

#include <stdlib.h>
#include <string.h>

void berth_kube_init(berth_kcluster *k)
{
    memset(k, 0, sizeof *k);
    berth_arena_init(&k->arena, 0);
    k->res_names[BERTH_KRES_CPU] = "cpu";
    k->res_names[BERTH_KRES_MEMORY] = "memory";
    k->res_names[BERTH_KRES_EPHEMERAL] = "ephemeral-storage";
    k->nres = BERTH_KRES_FIRST_EXT;
}

int berth_kube_names_ascending(const berth_knode *nodes, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++)
        if (strcmp(nodes[i - 1].name, nodes[i].name) >= 0)
            return 0;
    return 1;
}

void berth_kube_free(berth_kcluster *k)
{
    free(k->nodes);
    free(k->pods);
    free(k->workloads);
    free(k->namespaces);
    free(k->profiles);
    free(k->pdbs);
    free(k->pvcs);
    free(k->pvs);
    free(k->controllers);
    free(k->pclasses);
    berth_nameidx_free(&k->node_names);
    berth_nameidx_free(&k->ns_names);
    berth_skips_free(&k->skipped);
    berth_arena_free(&k->arena);
    memset(k, 0, sizeof *k);
}

uint32_t berth_kube_resource(berth_kcluster *k, const char *name, int add)
{
    if (!name || !strcmp(name, "pods"))
        return BERTH_KUBE_NONE;
    for (uint32_t i = 0; i < k->nres; i++)
        if (!strcmp(k->res_names[i], name))
            return i;
    if (!add || k->nres >= BERTH_KUBE_MAX_RES)
        return BERTH_KUBE_NONE;
    const char *copy = berth_arena_strdup(&k->arena, name);
    if (!copy)
        return BERTH_KUBE_NONE;
    k->res_names[k->nres] = copy;
    return k->nres++;
}

const char *berth_qos_name(berth_qos q)
{
    switch (q) {
    case BERTH_QOS_BESTEFFORT: return "BestEffort";
    case BERTH_QOS_BURSTABLE: return "Burstable";
    case BERTH_QOS_GUARANTEED: return "Guaranteed";
    }
    return "?";
}

const char *berth_kplugin_name(berth_kplugin p)
{
    static const char *const names[BERTH_KP_COUNT] = {
        [BERTH_KP_NODE_UNSCHEDULABLE] = "NodeUnschedulable",
        [BERTH_KP_NODE_NAME] = "NodeName",
        [BERTH_KP_TAINT_TOLERATION] = "TaintToleration",
        [BERTH_KP_NODE_AFFINITY] = "NodeAffinity",
        [BERTH_KP_NODE_PORTS] = "NodePorts",
        [BERTH_KP_NODE_RESOURCES_FIT] = "NodeResourcesFit",
        [BERTH_KP_VOLUME_ZONE] = "VolumeZone",
        [BERTH_KP_POD_TOPOLOGY_SPREAD] = "PodTopologySpread",
        [BERTH_KP_INTER_POD_AFFINITY] = "InterPodAffinity",
        [BERTH_KP_BALANCED_ALLOCATION] = "NodeResourcesBalancedAllocation",
        [BERTH_KP_IMAGE_LOCALITY] = "ImageLocality",
        [BERTH_KP_USAGE_HEADROOM] = "UsageHeadroom",
    };
    if ((unsigned)p >= BERTH_KP_COUNT)
        return "?";
    return names[p];
}

const berth_kprofile *berth_kube_find_profile(const berth_kcluster *k, const char *name)
{
    if (!name)
        name = "default-scheduler";
    for (uint32_t i = 0; i < k->nprofiles; i++)
        if (k->profiles[i].name && !strcmp(k->profiles[i].name, name))
            return &k->profiles[i];
    return NULL;
}
