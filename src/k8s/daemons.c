/* k8s/daemons.c - DaemonSet pods on nodes that do not exist yet: which
 * DaemonSets the DaemonSet controller would run on a hypothetical node
 * (k8s_daemon_should_run, the controller's own rule) and the room their
 * pods take. The disruption planner's replacements and the autoscaler's
 * template nodes subtract it from the node's allocatable, as Karpenter's
 * scheduler does with a NodeClaim's daemon overhead
 * (pkg/controllers/provisioning/scheduling/scheduler.go getDaemonOverhead,
 * nodeclaim.go: the daemon requests seed the NodeClaim's requests) and as
 * cluster-autoscaler's template NodeInfo carries its DaemonSet pods
 * (simulator/node_info_utils.go). docs/disrupt.md "DaemonSets on new
 * nodes" says why berth subtracts rather than places them. */
#include "k8s/k8s.h"

#include <string.h>

int k8s_pod_is_daemon(const berth_kpod *p)
{
    return p->owner_kind && !strcmp(p->owner_kind, "DaemonSet");
}

void k8s_daemon_requests(const berth_kcluster *k, const berth_knode *nd, int64_t *req,
                         int64_t *npods)
{
    if (req)
        memset(req, 0, k->nres * sizeof *req);
    *npods = 0;
    for (uint32_t c = 0; c < k->ncontrollers; c++) {
        const berth_kcontroller *ct = &k->controllers[c];
        if (ct->type != BERTH_KCTL_DAEMONSET || ct->terminating ||
            !k8s_daemon_should_run(&ct->tmpl, nd))
            continue;
        ++*npods;
        for (uint32_t r = 0; req && r < k->nres; r++)
            req[r] += ct->tmpl.req[r];
    }
}

int64_t k8s_daemon_reserve(const berth_kcluster *k, berth_knode *nd)
{
    int64_t req[BERTH_KUBE_MAX_RES], n;
    k8s_daemon_requests(k, nd, req, &n);
    if (!n)
        return 0;
    for (uint32_t r = 0; r < k->nres; r++) {
        nd->alloc[r] -= req[r];
        if (nd->alloc[r] < 0)
            nd->alloc[r] = 0;
    }
    nd->alloc_pods -= n;
    if (nd->alloc_pods < 0)
        nd->alloc_pods = 0;
    return n;
}
