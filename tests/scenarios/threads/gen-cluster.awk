# tests/scenarios/threads/gen-cluster.awk - a random kube cluster as the API
# server lists it (NodeList, PodList, ServiceList: items without kind,
# managedFields, status blocks), big enough (>= 1024 nodes) for the
# parallel per-node loops. awk -v seed=S -v nodes=N -v pods=P -v bound=B.
# Pod shapes: plain (the pod-class fast path), zone spread with hostname
# anti-affinity (filtered chunks), Service members (default spread), host
# ports and preferred node affinity (the full pipeline), too big for any
# node (reasons), preferred pod affinity (scores).
function pick(n) { return int(rand() * n) }
function node(i,   z, cpu, mem, taint, unsched, img) {
  z = pick(4)
  cpu = (i % 3 == 0) ? 16 : (i % 3 == 1 ? 8 : 4)
  mem = cpu * 4
  taint = (pick(10) == 0) ? ", \"taints\": [{\"key\": \"gpu\", \"value\": \"true\", \"effect\": \"NoSchedule\"}]" : ""
  unsched = (pick(60) == 0) ? ", \"unschedulable\": true" : ""
  img = (pick(3) == 0) ? ", \"images\": [{\"names\": [\"registry.example/app:1\"], \"sizeBytes\": 300000000}]" : ""
  printf "%s{\"metadata\": {\"name\": \"node-%05d\", \"uid\": \"n-%d\", \"labels\": {\"kubernetes.io/hostname\": \"node-%05d\", \"topology.kubernetes.io/zone\": \"zone-%d\", \"pool\": \"%s\"}, \"managedFields\": [{\"manager\": \"kubelet\", \"operation\": \"Update\"}]}, \"spec\": {\"podCIDR\": \"10.0.0.0/24\"%s%s}, \"status\": {\"allocatable\": {\"cpu\": \"%d\", \"memory\": \"%dGi\", \"pods\": \"110\"}, \"conditions\": [{\"type\": \"Ready\", \"status\": \"True\"}]%s}}", (i ? ",\n" : ""), i, i, i, z, (pick(5) ? "general" : "batch"), taint, unsched, cpu, mem, img
}
function pod(i, first,   kind, app, cpu, mem, extra, labels, spec, nodename, tol) {
  kind = pick(100)
  app = "app-" pick(40)
  cpu = 100 + 50 * pick(8)
  mem = 128 + 64 * pick(8)
  labels = "\"app\": \"" app "\""
  extra = ""
  nodename = ""
  tol = (pick(8) == 0) ? ", \"tolerations\": [{\"key\": \"gpu\", \"operator\": \"Equal\", \"value\": \"true\", \"effect\": \"NoSchedule\"}]" : ""
  if (i < bound)
    nodename = sprintf("\"nodeName\": \"node-%05d\", ", pick(nodes))
  else if (kind < 40) {
    # plain
  } else if (kind < 60) {
    extra = ", \"topologySpreadConstraints\": [{\"maxSkew\": 1, \"topologyKey\": \"topology.kubernetes.io/zone\", \"whenUnsatisfiable\": \"DoNotSchedule\", \"labelSelector\": {\"matchLabels\": {\"app\": \"" app "\"}}}], \"affinity\": {\"podAntiAffinity\": {\"requiredDuringSchedulingIgnoredDuringExecution\": [{\"topologyKey\": \"kubernetes.io/hostname\", \"labelSelector\": {\"matchLabels\": {\"app\": \"" app "\"}}}]}}"
  } else if (kind < 75) {
    labels = "\"app\": \"svc-" pick(3) "\""
  } else if (kind < 82) {
    extra = ", \"affinity\": {\"nodeAffinity\": {\"preferredDuringSchedulingIgnoredDuringExecution\": [{\"weight\": " (1 + pick(50)) ", \"preference\": {\"matchExpressions\": [{\"key\": \"pool\", \"operator\": \"In\", \"values\": [\"batch\"]}]}}]}}"
  } else if (kind < 88) {
    extra = ", \"affinity\": {\"podAffinity\": {\"preferredDuringSchedulingIgnoredDuringExecution\": [{\"weight\": 10, \"podAffinityTerm\": {\"topologyKey\": \"topology.kubernetes.io/zone\", \"labelSelector\": {\"matchLabels\": {\"app\": \"" app "\"}}}}]}}"
  } else if (kind < 95) {
    extra = ""
    cpu = cpu; mem = mem
    ports = ", \"ports\": [{\"containerPort\": 8080, \"hostPort\": " (8000 + pick(3)) "}]"
  } else {
    cpu = 64000
  }
  printf "%s{\"metadata\": {\"name\": \"pod-%05d\", \"namespace\": \"shop\", \"uid\": \"p-%d\", \"labels\": {%s}, \"managedFields\": [{\"manager\": \"kube-controller-manager\", \"operation\": \"Update\"}]}, \"spec\": {%s\"containers\": [{\"name\": \"main\", \"image\": \"registry.example/app:1\", \"resources\": {\"requests\": {\"cpu\": \"%dm\", \"memory\": \"%dMi\"}}%s}]%s%s}, \"status\": {\"phase\": \"%s\"}}", (first ? "" : ",\n"), i, i, labels, nodename, cpu, mem, ports, tol, extra, (i < bound ? "Running" : "Pending")
  ports = ""
}
BEGIN {
  srand(seed)
  print "{\"apiVersion\": \"v1\", \"kind\": \"NodeList\", \"metadata\": {\"resourceVersion\": \"1\"}, \"items\": ["
  for (i = 0; i < nodes; i++) node(i)
  print "]}"
  print "{\"apiVersion\": \"v1\", \"kind\": \"ServiceList\", \"metadata\": {\"resourceVersion\": \"2\"}, \"items\": ["
  for (s = 0; s < 3; s++)
    printf "%s{\"metadata\": {\"name\": \"svc-%d\", \"namespace\": \"shop\"}, \"spec\": {\"selector\": {\"app\": \"svc-%d\"}, \"ports\": [{\"port\": 80}]}, \"status\": {\"loadBalancer\": {}}}", (s ? ",\n" : ""), s, s
  print "]}"
  print "{\"apiVersion\": \"v1\", \"kind\": \"PodList\", \"metadata\": {\"resourceVersion\": \"3\"}, \"items\": ["
  for (i = 0; i < pods; i++) pod(i, i == 0)
  print "]}"
}
