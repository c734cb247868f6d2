#!/usr/bin/env bash
# Scenario: `berth kube size` (SPEC 2.1 QoS classes, 2.3 vSphere Pod sizes)
# on examples/kube/vsphere-pods.yaml: the seed's one-container pod without
# requests or limits gets 1 vCPU (0.5 rounded up) and 512Mi.
set -u
BERTH=${BERTH:-build/berth}
F=examples/kube/vsphere-pods.yaml
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
T=$("$BERTH" kube size $F); rc=$?
[ $rc -eq 0 ] || fail "exit $rc"
# row POD: "QOS VCPU MEMORY RESERVED-CPU RESERVED-MEMORY" from the table
row() { echo "$T" | awk -v p="demo/$1" '$1 == p {print $2, $3, $4, $5, $6}'; }
want() { [ "$(row "$1")" = "$2" ] || fail "$1: table '$(row "$1")', expected '$2'"; }
want bare "BestEffort 1 512Mi 0m 0Mi"                # 0.5 vCPU -> 1; 512Mi default
want frontend "Burstable 1 1024Mi 500m 128Mi"        # 2 x default (0.5, 512Mi); requests summed
want three-besteffort "BestEffort 2 1536Mi 0m 0Mi"   # 3 x 0.5 = 1.5 -> 2; 3 x 512Mi
want db "Guaranteed 2 4096Mi 2000m 4096Mi"           # larger than the default; reservation = size
if command -v python3 >/dev/null 2>&1; then
  got=$("$BERTH" kube size $F -o json | python3 -c "
import json, sys
d = json.load(sys.stdin)
p = [x for x in d['pods'] if x['name'] == 'bare'][0]
print(p['qosClass'], p['vcpu'], p['memory'], p['reservation']['cpuMilli'], p['reservation']['memory'])")
  [ "$got" = "BestEffort 1 536870912 0 0" ] || fail "bare JSON: '$got'"
else
  echo "note: python3 not found: JSON check skipped"
fi
# the lifecycle margin: bare + 600m = 1100m -> 2 vCPU; + 64Mi -> 576Mi
T=$("$BERTH" kube size $F --margin-cpu 600 --margin-memory 64); rc=$?
[ $rc -eq 0 ] || fail "margins: exit $rc"
want bare "BestEffort 2 576Mi 0m 0Mi"
"$BERTH" kube size $F --margin-cpu -1 >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "--margin-cpu -1: exit $rc, expected 2"
"$BERTH" kube size $F --bogus >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "--bogus: exit $rc, expected 2"
# QoS edges (SPEC 2.1): limits only (requests default to them) is
# Guaranteed; a cpu limit alone is Burstable; an init container counts
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/qos.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: limits-only, namespace: demo}
spec:
  containers:
  - name: app
    image: busybox:1.36
    resources:
      limits: {cpu: "1", memory: 1Gi}
---
apiVersion: v1
kind: Pod
metadata: {name: cpu-limit, namespace: demo}
spec:
  containers:
  - name: app
    image: busybox:1.36
    resources:
      limits: {cpu: "1"}
---
apiVersion: v1
kind: Pod
metadata: {name: init-only, namespace: demo}
spec:
  initContainers:
  - name: setup
    image: busybox:1.36
    resources:
      requests: {cpu: 100m}
  containers:
  - {name: app, image: busybox:1.36}
YAML
T=$("$BERTH" kube size "$tmp/qos.yaml"); rc=$?
[ $rc -eq 0 ] || fail "qos file: exit $rc"
want limits-only "Guaranteed 1 1024Mi 1000m 1024Mi"
want cpu-limit "Burstable 1 512Mi 1000m 0Mi"
# init container's request makes it Burstable; regular init containers run
# before the app, so the size is the app's default (1 vCPU, 512Mi)
want init-only "Burstable 1 512Mi 0m 0Mi"
[ $fails -eq 0 ] || { echo "kube size scenario: $fails FAILED"; exit 1; }
echo "kube size scenario OK"
