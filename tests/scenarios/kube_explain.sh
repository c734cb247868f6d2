#!/usr/bin/env bash
# Scenario: `kube schedule --explain` names the chosen node, the ranked
# feasible nodes with per-plugin scores, and the rejected nodes by reason;
# the usage-aware admission honours the node's berth.io/vm-overhead-memory.
set -euo pipefail
err=$("$BERTH" kube schedule examples/kube/kubectl-list.yaml --explain 2>&1 >/dev/null)
grep -q '^explain default/web-6f7c9d8b5-ccccc: aks-pool1-12345678-vmss000001$' <<<"$err"
grep -q '^  \* aks-pool1-12345678-vmss000001 *total   475 = TaintToleration 3x100=300 + ' <<<"$err"
# every ranked line shows weight x score = contribution per plugin, and the
# contributions add up to the total
rows=$(echo "$err" | grep -c ' total ')
[ "$rows" -ge 2 ] || { echo "expected ranked nodes, got $rows"; exit 1; }
echo "$err" | grep ' total ' | awk '{
  total = -1; sum = 0
  for (i = 1; i <= NF; i++) {
    if ($i == "total") total = $(i + 1)
    if ($i ~ /^[0-9]+x[0-9]+=[0-9]+$/) {
      split($i, a, /[x=]/)
      if (a[1] * a[2] != a[3]) { print "bad product: " $i; exit 1 }
      sum += a[3]
    }
  }
  if (total < 0 || sum != total) { print "terms add up to " sum ", total " total ": " $0; exit 1 }
}'
grep -q 'rejected 1 node(s): node(s) had untolerated taint {sku: gpu}' <<<"$err"
# the explanation goes to stderr only: stdout is the ordinary table
out=$("$BERTH" kube schedule examples/kube/kubectl-list.yaml --explain 2>/dev/null)
grep -q '^POD ' <<<"$out"
! grep -q '^explain' <<<"$out"

# usage-aware admission with a per-VM overhead: C (100Gi, 40Gi reserved by one
# pod) admits the 35Gi pod with 10Gi overhead per VM only while
# 35 + 10 <= 100 - 40 - 1 x 10; with 20Gi it no longer does.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for ov in 10Gi 20Gi; do
  sed "s|^      berth.io/usage-memory: 45Gi|      berth.io/usage-memory: 45Gi\n      berth.io/vm-overhead-memory: $ov|" \
    examples/kube/usage-aware.yaml > "$tmp/ua-$ov.yaml"
done
grep -q 'vm-overhead-memory: 10Gi' "$tmp/ua-10Gi.yaml"
n10=$("$BERTH" kube schedule "$tmp/ua-10Gi.yaml" --profile usage-aware | awk '$1 == "default/newcomer" {print $2}')
n20=$("$BERTH" kube schedule "$tmp/ua-20Gi.yaml" --profile usage-aware | awk '$1 == "default/newcomer" {print $2}')
[ "$n10" = "host-c" ] || { echo "10Gi overhead: expected host-c, got '$n10'"; exit 1; }
[ "$n20" != "host-c" ] || { echo "20Gi overhead: host-c must not admit the pod"; exit 1; }
echo "kube explain and overhead OK"

# a pod for another scheduler is left pending with a reason (exit 1)
cat > "$tmp/other.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p1, namespace: default}
spec:
  schedulerName: my-sched
  containers: [{name: c, image: x}]
YAML
set +e
out=$("$BERTH" kube schedule "$tmp/other.yaml"); rc=$?
set -e
[ $rc -eq 1 ] || { echo "other scheduler: exit $rc, expected 1"; exit 1; }
grep -q "no scheduler profile named 'my-sched'" <<<"$out"
echo "other scheduler OK"

# nodes with different hard-taint lists whose first untolerated taint is the
# same give one reason, counted over both (the scheduler groups nodes by
# hard-taint set, kube/taintsets.h; the texts are merged as upstream's are)
cat > "$tmp/taints.yaml" <<'YAML'
apiVersion: v1
kind: NodeList
items:
- metadata: {name: n1}
  spec: {taints: [{key: a, value: "1", effect: NoSchedule}]}
  status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
- metadata: {name: n2}
  spec: {taints: [{key: soft, effect: PreferNoSchedule}, {key: a, value: "1", effect: NoSchedule}, {key: b, value: "2", effect: NoExecute}]}
  status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
- metadata: {name: n3}
  spec: {taints: [{key: b, value: "2", effect: NoExecute}, {key: a, value: "1", effect: NoSchedule}]}
  status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p1, namespace: default}
spec:
  tolerations: [{key: other, operator: Exists}]
  containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]
YAML
set +e
out=$("$BERTH" kube schedule "$tmp/taints.yaml" -o json); rc=$?
set -e
[ $rc -eq 1 ] || { echo "tainted nodes: exit $rc, expected 1"; exit 1; }
grep -q '0/3 nodes are available: 1 node(s) had untolerated taint {b: 2}, 2 node(s) had untolerated taint {a: 1}\.' <<<"$out" \
  || { echo "tainted nodes: reasons not merged: $out"; exit 1; }
echo "taint reasons OK"
