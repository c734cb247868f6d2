# tests/scenarios/threads/gen-autoscale.awk - a random Spot Ocean estate as
# kubectl lists it (NodeList, PodList: items without kind, managedFields,
# status blocks) with VirtualNodeGroups and InstanceTypes, big enough
# (>= 1024 nodes) for the what-if sessions' parallel per-node loops
# (docs/autoscale.md "Threads"). awk -v seed=S -v nodes=N.
# Two groups ("general" spot/on-demand in 3 zones, "batch"), nodes 2-8 cpu,
# some lightly used (scale-down candidates). Running pods: plain ReplicaSet
# pods, pods with a hostname anti-affinity on their app and zone spread
# (DoNotSchedule), which the fit index does not answer (the session
# schedules them through the full pipeline), preferred node affinity.
# Pending pods: plain, anti-affinity and spread ones of 7.1-7.7 cpu that fit
# no existing node (scale-up onto new 8-cpu nodes), and one that no type can
# hold.
function pick(n) { return int(rand() * n) }
function extra(kind, app) {
  if (kind == 0)
    return "    affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: app" app "}}}]}}\n"
  if (kind == 1)
    return "    affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: " (1 + pick(50)) ", preference: {matchExpressions: [{key: tier, operator: In, values: [batch]}]}}]}}\n"
  if (kind == 2)
    return "    topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: app" app "}}}]\n"
  return ""
}
function pod(name, app, node, req, mem, kind) {
  printf "- metadata:\n    name: %s\n    namespace: ns%d\n", name, app % 7
  printf "    labels: {app: app%d}\n    creationTimestamp: \"2024-04-21T00:00:00Z\"\n", app
  printf "    ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: app%d-5d8f, uid: u%d, controller: true}]\n", app, app
  printf "  spec:\n"
  if (node != "")
    printf "    nodeName: %s\n", node
  printf "%s", extra(kind, app)
  printf "    containers: [{name: app, image: app:1, resources: {requests: {cpu: %dm, memory: %dMi}}}]\n", req, mem
  if (node != "")
    printf "  status: {phase: Running, conditions: [{type: Ready, status: \"True\"}]}\n"
  else
    printf "  status: {phase: Pending, conditions: [{type: PodScheduled, status: \"False\", reason: Unschedulable}]}\n"
}
BEGIN {
  srand(seed)
  split("us-east-1a us-east-1b us-east-1c", zone, " ")
  split("2 4 8", size, " ")
  split("large xlarge 2xlarge", sname, " ")
  split("general batch", grp, " ")
  printf "apiVersion: berth.io/v1\nkind: VirtualNodeGroup\nmetadata: {name: general}\nspec:\n"
  printf "  labels: {pool: general}\n  instanceTypes: [m5.large, m5.xlarge, m5.2xlarge]\n"
  printf "  zones: [us-east-1a, us-east-1b, us-east-1c]\n  minNodes: 10\n  maxNodes: %d\n  spotPercentage: 80\n", nodes + 200
  printf "---\napiVersion: berth.io/v1\nkind: VirtualNodeGroup\nmetadata: {name: batch}\nspec:\n"
  printf "  labels: {pool: batch}\n  instanceTypes: [m5.large, m5.xlarge, m5.2xlarge]\n"
  printf "  zones: [us-east-1a, us-east-1b, us-east-1c]\n  minNodes: 1\n  maxNodes: %d\n", nodes
  for (s = 1; s <= 3; s++) {
    printf "---\napiVersion: berth.io/v1\nkind: InstanceType\nmetadata: {name: m5.%s}\nspec:\n", sname[s]
    printf "  capacity: {cpu: \"%d\", memory: %dGi, pods: 58}\n  offerings:\n", size[s], size[s] * 4
    for (z = 1; z <= 3; z++) {
      printf "  - {zone: %s, capacityType: on-demand, price: %.4f}\n", zone[z], size[s] * 0.048
      printf "  - {zone: %s, capacityType: spot, price: %.4f, interruptionRate: %.2f}\n", zone[z], size[s] * 0.017 * (1 + 0.02 * z), 0.05 * z
    }
  }
  for (i = 0; i < nodes; i++) {
    ns[i] = 1 + pick(3); nz[i] = 1 + pick(3); ng[i] = pick(5) ? 1 : 2
    light[i] = pick(8) == 0
  }
  printf "---\napiVersion: v1\nkind: NodeList\nmetadata: {resourceVersion: \"92\"}\nitems:\n"
  for (i = 0; i < nodes; i++) {
    cpu = size[ns[i]]; mem = cpu * 4
    printf "- metadata:\n    name: ip-10-0-%06d\n", i
    printf "    labels: {pool: %s, node.kubernetes.io/instance-type: m5.%s, ", grp[ng[i]], sname[ns[i]]
    printf "topology.kubernetes.io/zone: %s, kubernetes.io/hostname: ip-10-0-%06d, tier: %s}\n", zone[nz[i]], i, (pick(4) ? "web" : "batch")
    printf "    creationTimestamp: \"2024-04-20T00:00:00Z\"\n"
    printf "    managedFields: [{manager: kubelet, operation: Update, apiVersion: v1}]\n"
    printf "  spec: {providerID: \"aws:///%s/i-%06d\"}\n", zone[nz[i]], i
    printf "  status:\n    capacity: {cpu: \"%d\", memory: %dGi, pods: \"58\"}\n", cpu, mem
    printf "    allocatable: {cpu: %dm, memory: %dMi, pods: \"58\"}\n", cpu * 1000 - 140, mem * 1024 - 1500
    printf "    conditions: [{type: Ready, status: \"True\"}]\n"
  }
  printf "---\napiVersion: v1\nkind: PodList\nmetadata: {resourceVersion: \"93\"}\nitems:\n"
  for (i = 0; i < nodes; i++) {
    cpu = size[ns[i]] * 1000
    target = light[i] ? cpu / 10 : cpu / 2 + pick(cpu / 3)
    np = light[i] ? 1 + pick(2) : 3
    for (j = 0; j < np; j++) {
      app = pick(60); req = int(target / np)
      pod(sprintf("app%d-%06d-%d", app, i, j), app, sprintf("ip-10-0-%06d", i), req, req * 2, pick(10))
    }
  }
  npend = 20 + pick(20)
  for (j = 0; j < npend; j++) {
    app = pick(60); req = 7100 + pick(600)
    pod(sprintf("pending%d-%03d", app, j), app, "", req, req * 2, pick(4))
  }
  pod("huge-000", 61, "", 64000, 1024, 9)
}
