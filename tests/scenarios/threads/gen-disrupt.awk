# tests/scenarios/threads/gen-disrupt.awk - a random Karpenter estate as
# kubectl lists it (NodeClaimList, NodeList, PodList: items without kind,
# managedFields, status blocks) big enough (>= 1024 nodes) for the
# what-if session's parallel per-node loops (docs/disrupt.md "Threads").
# awk -v seed=S -v nodes=N [-v plain=1] [-v pin=P].
# Nodes 4-16 cpu in 3 zones, some lightly used (consolidation candidates),
# some with a stale nodepool hash (drift) when drift=1. Pods: plain
# ReplicaSet pods, pods with a hostname anti-affinity on their app (no
# counting certificate: the session schedules the moved pods), host ports
# and preferred node affinity (the full pipeline over every node), zone
# spread (DoNotSchedule). plain=1: plain pods only (the counting
# certificate answers the questions, src/disrupt/fitcert.c). pin=P: the
# pods of all but about one node in P select a label no node carries (they
# fit nowhere else, nor on a new node) and the budget is one node, so that
# single-node consolidation answers many failing candidates before the
# first that acts (speculative candidate evaluation, docs/disrupt.md).
function pick(n) { return int(rand() * n) }
BEGIN {
  srand(seed)
  split("eastus-1 eastus-2 eastus-3", zone, " ")
  split("D E F", fam, " ")
  gib["D"] = 4; gib["E"] = 8; gib["F"] = 2
  price["D"] = 0.048; price["E"] = 0.063; price["F"] = 0.0425
  split("2 4 8 16 32", size, " ")
  printf "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\n"
  printf "spec:\n  template:\n    spec:\n      requirements:\n"
  printf "      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}\n"
  printf "  disruption:\n    consolidationPolicy: WhenEmptyOrUnderutilized\n"
  printf "    consolidateAfter: 30s\n    budgets: [{nodes: \"%s\"}]\n", (pin ? "1" : "10%")
  for (f = 1; f <= 3; f++)
    for (s = 1; s <= 5; s++) {
      printf "---\napiVersion: berth.io/v1\nkind: InstanceType\n"
      printf "metadata: {name: Standard_%s%ds_v5}\nspec:\n", fam[f], size[s]
      printf "  capacity: {cpu: \"%d\", memory: %dGi, pods: 110}\n  offerings:\n", size[s], size[s] * gib[fam[f]]
      for (z = 1; z <= 3; z++)
        printf "  - {zone: %s, capacityType: on-demand, price: %.4f}\n", zone[z], size[s] * price[fam[f]] * (1 + 0.01 * z)
    }
  for (i = 0; i < nodes; i++) {
    nf[i] = 1 + pick(3); ns[i] = 2 + pick(3); nz[i] = 1 + pick(3)
    light[i] = pick(8) == 0
    pinned[i] = pin && pick(pin) != 0
  }
  printf "---\napiVersion: karpenter.sh/v1\nkind: NodeClaimList\nmetadata: {resourceVersion: \"91\"}\nitems:\n"
  for (i = 0; i < nodes; i++) {
    printf "- apiVersion: karpenter.sh/v1\n  kind: NodeClaim\n  metadata:\n"
    printf "    name: default-%06d\n    creationTimestamp: \"2024-04-20T00:00:00Z\"\n", i
    printf "    labels: {karpenter.sh/nodepool: default, node.kubernetes.io/instance-type: Standard_%s%ds_v5, ", fam[nf[i]], size[ns[i]]
    printf "topology.kubernetes.io/zone: %s, karpenter.sh/capacity-type: on-demand}\n", zone[nz[i]]
    printf "    managedFields: [{manager: karpenter, operation: Update, apiVersion: karpenter.sh/v1}]\n"
    printf "  status:\n    nodeName: aks-default-%06d\n    conditions:\n", i
    printf "    - {type: Initialized, status: \"True\", lastTransitionTime: \"2024-04-20T00:05:00Z\"}\n"
  }
  printf "---\napiVersion: v1\nkind: NodeList\nmetadata: {resourceVersion: \"92\"}\nitems:\n"
  for (i = 0; i < nodes; i++) {
    cpu = size[ns[i]]; mem = cpu * gib[fam[nf[i]]]
    printf "- metadata:\n    name: aks-default-%06d\n", i
    printf "    labels: {karpenter.sh/nodepool: default, karpenter.sh/initialized: \"true\", "
    printf "node.kubernetes.io/instance-type: Standard_%s%ds_v5, topology.kubernetes.io/zone: %s, ", fam[nf[i]], cpu, zone[nz[i]]
    printf "karpenter.sh/capacity-type: on-demand, kubernetes.io/hostname: aks-default-%06d, tier: %s}\n", i, (pick(4) ? "web" : "batch")
    printf "    managedFields: [{manager: kubelet, operation: Update, apiVersion: v1}]\n"
    printf "  spec: {providerID: \"azure:///vm/%06d\"}\n", i
    printf "  status:\n    capacity: {cpu: \"%d\", memory: %dGi, pods: \"110\"}\n", cpu, mem
    printf "    allocatable: {cpu: %dm, memory: %dMi, pods: \"110\"}\n", cpu * 1000 - 140, mem * 1024 - 1500
    printf "    conditions: [{type: Ready, status: \"True\"}]\n"
  }
  printf "---\napiVersion: v1\nkind: PodList\nmetadata: {resourceVersion: \"93\"}\nitems:\n"
  for (i = 0; i < nodes; i++) {
    cpu = size[ns[i]] * 1000
    target = light[i] ? cpu / 10 : cpu / 3 + pick(cpu / 3)
    np = light[i] ? 1 + pick(2) : 3
    for (j = 0; j < np; j++) {
      app = pick(60); req = int(target / np); kind = plain ? 9 : pick(10)
      extra = ""
      if (kind == 0)
        extra = "    affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: app" app "}}}]}}\n"
      else if (kind == 1)
        extra = "    affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: " (1 + pick(50)) ", preference: {matchExpressions: [{key: tier, operator: In, values: [batch]}]}}]}}\n"
      else if (kind == 2)
        extra = "    topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: app" app "}}}]\n"
      ports = (kind == 3) ? ", ports: [{containerPort: 8080, hostPort: " (9000 + pick(4)) "}]" : ""
      printf "- metadata:\n    name: app%d-%06d-%d\n    namespace: ns%d\n", app, i, j, app % 7
      printf "    labels: {app: app%d}\n    creationTimestamp: \"2024-04-21T00:00:00Z\"\n", app
      printf "    ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: app%d-5d8f, uid: u%d, controller: true}]\n", app, app
      printf "  spec:\n    nodeName: aks-default-%06d\n%s", i, extra
      if (pinned[i])
        printf "    nodeSelector: {pinned: \"true\"}\n"
      printf "    containers: [{name: app, image: app:1, resources: {requests: {cpu: %dm, memory: %dMi}}%s}]\n", req, req * gib[fam[nf[i]]] / 2, ports
      printf "  status: {phase: Running, conditions: [{type: Ready, status: \"True\"}]}\n"
    }
  }
}
