#!/usr/bin/env bash
# Scenario: workloads become pods (docs/kube-input.md "Workloads") through
# `berth kube schedule` on examples/kube/workloads.yaml (kubectl-shaped):
# the pods each controller creates (Deployment through its newest
# ReplicaSet, StatefulSet ordinals with an existing zonal claim, a
# DaemonSet on the cordoned node but not the tainted one, a Job), a
# terminating pending pod reported but not scheduled, the per-workload
# lines, the JSON "workload" field (SPEC 6.3), --reference giving the same
# JSON; PriorityClass resolution (an unknown class is exit 2 at
# spec.priorityClassName); the generated-pod cap; the same objects through
# `disrupt plan` and `autoscale plan` (generated pending pods become
# scale-up demand); and `kube size` listing generated pods.
set -u
BERTH=${BERTH:-build/berth}
EX=examples/kube/workloads.yaml
fails=0
checks=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
has() { # has LABEL TEXT PATTERN
  checks=$((checks + 1))
  echo "$2" | grep -qE -- "$3" || fail "$1: no match for '$3' in: $(echo "$2" | head -30)"
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ---- the example ------------------------------------------------------------
T=$("$BERTH" kube schedule $EX --strict 2>&1); rc=$?
[ $rc -eq 1 ] || fail "example: exit $rc, expected 1 (db-2 and one report pod do not fit)"
has table "$T" '^Deployment/shop/web: 4 of 4 placed$'
has table "$T" '^StatefulSet/shop/db: 2 of 3 placed, db-2: 0/4 nodes are available: .*Insufficient cpu'
has table "$T" '^DaemonSet/kube-system/node-agent: 3 of 3 placed$'
has table "$T" '^Job/shop/report: 1 of 2 placed, report-[bcdfghjklmnpqrstvwxz2456789]{5}: 0/4 nodes'
has table "$T" '^shop/web-7f6d4c8b9-p8wnc +<none> .*not scheduled: the pod is terminating'
has table "$T" '^6 of 8 pending pods scheduled \(1 terminating, not scheduled\)$'
# db-1's claim data-db-1 is bound to a zone-b volume: node-b (zone-b)
has table "$T" '^shop/db-1 +node-b '
# the DaemonSet runs on the cordoned node-c (tolerated automatically), not
# on gpu-1 (untolerated taint) nor again on node-a (its pod is there)
has table "$T" '^kube-system/node-agent-[a-z0-9]{5} +node-c '
checks=$((checks + 1))
[ "$(echo "$T" | grep -c '^kube-system/node-agent-')" = 2 ] || fail "expected 2 new node-agent pods: $T"
# the new web pods come from revision 2's ReplicaSet, two of them (4 - 2 live)
checks=$((checks + 1))
[ "$(echo "$T" | grep -cE '^shop/web-7f6d4c8b9-[a-z0-9]{5} +node-')" = 2 ] || fail "expected 2 new web pods: $T"
# deterministic names
T2=$("$BERTH" kube schedule $EX 2>&1)
checks=$((checks + 1))
[ "$T" = "$T2" ] || fail "two runs differ"

if command -v python3 >/dev/null 2>&1; then
  J=$("$BERTH" kube schedule $EX -o json); R=$("$BERTH" kube schedule $EX -o json --reference)
  checks=$((checks + 1))
  [ "$J" = "$R" ] || fail "--reference gives different JSON"
  got=$(echo "$J" | python3 -c "
import json, sys
d = json.load(sys.stdin)
print(';'.join('%s=%s%s' % (p['name'].split('-')[0], p['workload'], '!' if p.get('terminating') else '')
               for p in d['pods']))
" 2>&1)
  checks=$((checks + 1))
  want="node=DaemonSet/kube-system/node-agent;node=DaemonSet/kube-system/node-agent;web=Deployment/shop/web!;web=Deployment/shop/web;web=Deployment/shop/web;db=StatefulSet/shop/db;db=StatefulSet/shop/db;report=Job/shop/report;report=Job/shop/report"
  [ "$got" = "$want" ] || fail "JSON workloads: got $got"
  # a bare pod's workload is null
  cat > "$tmp/bare.yaml" <<'EOF'
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "1", memory: 1Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: bare, namespace: default}
spec: {containers: [{name: c}]}
EOF
  got=$("$BERTH" kube schedule "$tmp/bare.yaml" -o json | python3 -c "
import json, sys; print(json.load(sys.stdin)['pods'][0]['workload'])")
  checks=$((checks + 1))
  [ "$got" = "None" ] || fail "bare pod workload: $got"
fi

# ---- priority classes ---------------------------------------------------------
cat > "$tmp/prio.yaml" <<'EOF'
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "1", memory: 1Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: late, namespace: default, creationTimestamp: "2024-05-01T10:00:00Z"}
spec:
  priorityClassName: urgent
  containers: [{name: c, resources: {requests: {cpu: 600m}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: early, namespace: default, creationTimestamp: "2024-05-01T09:00:00Z"}
spec:
  containers: [{name: c, resources: {requests: {cpu: 600m}}}]
EOF
cat > "$tmp/classes.yaml" <<'EOF'
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: urgent}
value: 1000
EOF
# the class comes in a later file: "late" is scheduled first (priority 1000)
T=$("$BERTH" kube schedule "$tmp/prio.yaml" "$tmp/classes.yaml" 2>&1); rc=$?
[ $rc -eq 1 ] || fail "priority: exit $rc, expected 1"
has priority "$T" '^default/late +n1 '
has priority "$T" '^default/early +<none> '
# without the class: exit 2, located, nothing on stdout
out=$("$BERTH" kube schedule "$tmp/prio.yaml" 2>"$tmp/err"); rc=$?
[ $rc -eq 2 ] || fail "unknown class: exit $rc, expected 2"
[ -z "$out" ] || fail "unknown class: stdout not empty"
has unknown-class "$(cat "$tmp/err")" "prio.yaml:[0-9]+:[0-9]+: spec.priorityClassName: no PriorityClass with name 'urgent' was found"

# ---- the cap --------------------------------------------------------------------
cat > "$tmp/huge.yaml" <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata: {name: huge, namespace: default}
spec:
  replicas: 1000000000
  selector: {matchLabels: {app: huge}}
  template:
    metadata: {labels: {app: huge}}
    spec: {containers: [{name: c}]}
EOF
"$BERTH" kube schedule "$tmp/huge.yaml" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] || fail "cap: exit $rc, expected 2"
has cap "$(cat "$tmp/err")" "huge.yaml:5:13: spec.replicas: Deployment default/huge would create 1000000000 pods"

# ---- kube size lists generated pods ---------------------------------------------
T=$("$BERTH" kube size $EX 2>&1); rc=$?
[ $rc -eq 0 ] || fail "kube size: exit $rc"
has size "$T" '^shop/db-2 '

# ---- the planners see the generated pods ----------------------------------------
# autoscale: a Deployment's pods are pending demand (scale-up for them)
cat > "$tmp/as.yaml" <<'EOF'
apiVersion: berth.io/v1
kind: InstanceType
metadata: {name: m5.large}
spec:
  capacity: {cpu: "2", memory: 8Gi, pods: "29"}
  offerings:
  - {zone: us-east-1a, capacityType: on-demand, price: 0.096, available: true}
---
apiVersion: berth.io/v1
kind: VirtualNodeGroup
metadata: {name: general}
spec:
  instanceTypes: [m5.large]
  zones: [us-east-1a]
  maxNodes: 10
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: default, uid: d1}
spec:
  replicas: 3
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers: [{name: c, resources: {requests: {cpu: "1", memory: 1Gi}}}]
EOF
T=$("$BERTH" autoscale plan "$tmp/as.yaml" --at 2024-05-01T12:00:00Z 2>&1); rc=$?
[ $rc -eq 0 ] || fail "autoscale: exit $rc: $T"
has autoscale "$T" 'general +m5.large +on-demand +us-east-1a +x[0-9]+ +[0-9.]+ +3$'
has autoscale "$T" 'default/api-[a-z0-9]+-[a-z0-9]{5}'

echo "kube_workloads: $checks checks, $fails failures"
[ $fails -eq 0 ]
