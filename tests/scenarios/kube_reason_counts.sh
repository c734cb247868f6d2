#!/usr/bin/env bash
# Scenario: the FitError text's counts over many nodes (kube/sched.c
# count_reasons groups nodes by reason code and formats each text once).
# A generated NodeList (kubectl-shaped: items without kind, managedFields,
# status) mixes, in an interleaved order, nodes short of cpu, of memory, of
# both, with a full pod slot, and nodes of another pool; one pod fits
# nowhere. The expected message is built here from the generated counts
# (kube-scheduler's "N reason" items sorted as strings), and --reference
# must print the same.
set -u
BERTH=${BERTH:-build/berth}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0

run_case() { # A B C F E: cpu-short, memory-short, both, pods-full, other pool
  local a=$1 b=$2 c=$3 f=$4 e=$5 n=0 i kind left
  {
    echo "apiVersion: v1"
    echo "kind: NodeList"
    echo "metadata: {resourceVersion: \"1\"}"
    echo "items:"
    local ca=$a cb=$b cc=$c cf=$f ce=$e
    while [ $((ca + cb + cc + cf + ce)) -gt 0 ]; do
      for kind in a b c f e; do
        eval "left=\$c$kind"
        [ "$left" -gt 0 ] || continue
        eval "c$kind=$((left - 1))"
        local cpu=8 mem=32Gi pods=110 pool=x
        case $kind in
        a) cpu=2 ;; b) mem=4Gi ;; c) cpu=1 mem=2Gi ;; f) pods=0 ;; e) pool=y ;;
        esac
        n=$((n + 1))
        cat <<EOF
- metadata:
    name: n-$n
    labels: {kubernetes.io/hostname: n-$n, pool: $pool}
    managedFields:
    - {manager: kubelet, operation: Update, apiVersion: v1}
  spec: {}
  status:
    allocatable: {cpu: "$cpu", memory: $mem, pods: "$pods"}
    capacity: {cpu: "$cpu", memory: $mem, pods: "$pods"}
    conditions:
    - {type: Ready, status: "True"}
EOF
      done
    done
    cat <<EOF
---
apiVersion: v1
kind: PodList
metadata: {resourceVersion: "1"}
items:
- metadata:
    name: big
    namespace: default
    managedFields:
    - {manager: kubectl, operation: Update, apiVersion: v1}
  spec:
    nodeSelector: {pool: x}
    containers:
    - name: app
      image: busybox:1.36
      resources: {requests: {cpu: "4", memory: 8Gi}}
  status: {phase: Pending}
EOF
  } >"$T/in.yaml"
  local items=()
  [ $((a + c)) -gt 0 ] && items+=("$((a + c)) Insufficient cpu")
  [ $((b + c)) -gt 0 ] && items+=("$((b + c)) Insufficient memory")
  [ "$f" -gt 0 ] && items+=("$f Too many pods")
  [ "$e" -gt 0 ] && items+=("$e node(s) didn't match Pod's node affinity/selector")
  local want
  want="0/$n nodes are available: $(printf '%s\n' "${items[@]}" | LC_ALL=C sort | paste -sd '#' | sed 's/#/, /g')."
  local got ref
  got=$("$BERTH" kube schedule -o json "$T/in.yaml" 2>/dev/null)
  ref=$("$BERTH" kube schedule --reference -o json "$T/in.yaml" 2>/dev/null)
  if ! printf '%s' "$got" | grep -qF "\"$want\""; then
    echo "FAIL [$*] expected message '$want' in: $(printf '%s' "$got" | grep -o '0/[^"]*' | head -2)"
    fails=$((fails + 1))
  fi
  if [ "$got" != "$ref" ]; then
    echo "FAIL [$*] --reference JSON differs"
    fails=$((fails + 1))
  fi
}

run_case 3 0 0 0 0
run_case 37 12 9 5 40
run_case 120 7 33 1 2
run_case 0 0 0 0 25

[ $fails -eq 0 ] && echo "kube_reason_counts: 8 checks passed"
[ $fails -eq 0 ]
