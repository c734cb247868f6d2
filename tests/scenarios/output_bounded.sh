#!/usr/bin/env bash
# Scenario: outputs that could grow as clusters x placements or nodes x pods
# stay bounded by default (docs/output.md "Output size"), with everything
# behind --detail all:
#   - `fleet place -o json|yaml|table`: at a fixed number of placements the
#     default output does not grow with the member clusters (each placement
#     lists its Selected clusters and at most 20 others; clusterCounts and
#     reasons count them all); --detail all lists every cluster;
#   - `kube schedule --explain`: the same lines per pod at 40 and 400 nodes;
#   - `kube schedule -o yaml` (streamed) holds the same pods as -o json,
#     default and --detail all (read back with python3's yaml when present;
#     tests/unit/test_report_stream.c compares them with berth's decoder).
# Sizes and counts only, never times.
set -u
BERTH=${BERTH:-build/berth}
NOW="--now 2024-05-01T12:00:00Z"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# fleet FILE CLUSTERS: C member clusters (every third one env=test, every
# fifth one tainted) and 4 placements: PickN 3 over env=prod, PickN 2
# tolerating nothing, PickAll over env=test, PickFixed naming two clusters
# and a missing one
fleet() {
  local f=$1 n=$2 i
  {
    echo "apiVersion: v1"
    echo "kind: List"
    echo "items:"
    for ((i = 0; i < n; i++)); do
      local env=prod taint=""
      [ $((i % 3)) -eq 0 ] && env=test
      [ $((i % 5)) -eq 0 ] && taint="  spec: {taints: [{key: dedicated, value: gpu, effect: NoSchedule}]}"
      printf -- '- apiVersion: cluster.kubernetes-fleet.io/v1beta1\n  kind: MemberCluster\n'
      printf '  metadata: {name: c-%05d, labels: {env: %s}}\n' "$i" "$env"
      [ -n "$taint" ] && echo "$taint"
      cat <<'YAML'
  status:
    agentStatus: [{type: MemberAgent, lastReceivedHeartbeat: "2024-05-01T11:59:30Z",
                   conditions: [{type: Joined, status: "True"},
                                {type: Healthy, status: "True", lastTransitionTime: "2024-04-01T00:00:00Z"}]}]
YAML
    done
    cat <<'YAML'
- apiVersion: placement.kubernetes-fleet.io/v1beta1
  kind: ClusterResourcePlacement
  metadata: {name: prod-three}
  spec:
    resourceSelectors: [{group: "", kind: Namespace, version: v1, name: web}]
    policy:
      placementType: PickN
      numberOfClusters: 3
      affinity: {clusterAffinity: {requiredDuringSchedulingIgnoredDuringExecution:
        {clusterSelectorTerms: [{labelSelector: {matchLabels: {env: prod}}}]}}}
- apiVersion: placement.kubernetes-fleet.io/v1beta1
  kind: ClusterResourcePlacement
  metadata: {name: any-two}
  spec:
    resourceSelectors: [{group: "", kind: Namespace, version: v1, name: api}]
    policy: {placementType: PickN, numberOfClusters: 2}
- apiVersion: placement.kubernetes-fleet.io/v1beta1
  kind: ClusterResourcePlacement
  metadata: {name: fixed}
  spec:
    resourceSelectors: [{group: "", kind: Namespace, version: v1, name: db}]
    policy: {placementType: PickFixed, clusterNames: [c-00001, c-00002, nowhere]}
YAML
  } >"$f"
}

fleet "$tmp/f100.yaml" 100
fleet "$tmp/f1000.yaml" 1000
for n in 100 1000; do
  "$BERTH" fleet place "$tmp/f$n.yaml" $NOW -o json >"$tmp/d$n.json"
  "$BERTH" fleet place "$tmp/f$n.yaml" $NOW -o json --detail all >"$tmp/a$n.json"
  "$BERTH" fleet place "$tmp/f$n.yaml" $NOW >"$tmp/d$n.txt"
  "$BERTH" fleet place "$tmp/f$n.yaml" $NOW -o yaml >"$tmp/d$n.yaml"
done
# listed clusters: one "affinityScore" per cluster entry
d100=$(grep -c '"affinityScore"' "$tmp/d100.json")
d1000=$(grep -c '"affinityScore"' "$tmp/d1000.json")
a1000=$(grep -c '"affinityScore"' "$tmp/a1000.json")
# 3 placements: 3 + 2 selected + 20 others each, PickFixed 2 selected + 1 NotFound + 20 others
[ "$d1000" -le $((3 + 20 + 2 + 20 + 3 + 20)) ] || fail "default fleet JSON lists $d1000 clusters at 1000 clusters"
[ "$d1000" -eq "$d100" ] || fail "default fleet JSON lists $d100 clusters at 100, $d1000 at 1000"
[ "$a1000" -eq $((3 * 1000 + 1)) ] || fail "--detail all lists $a1000 cluster entries, expected 3001"
s100=$(wc -c <"$tmp/d100.json"); s1000=$(wc -c <"$tmp/d1000.json")
[ "$s1000" -le $((s100 * 3 / 2)) ] || fail "default fleet JSON: $s100 bytes at 100 clusters, $s1000 at 1000"
[ "$(wc -c <"$tmp/a1000.json")" -gt $((s1000 * 5)) ] || fail "--detail all is not the full listing"
# the summary counts every cluster
grep -q '"clustersOmitted": 977' "$tmp/d1000.json" || fail "prod-three: clustersOmitted 977 expected (1000 - 3 - 20)"
grep -q '"clustersOmitted": 0' "$tmp/a1000.json" || fail "--detail all omits clusters"
grep -q '"NotSelected": 998' "$tmp/d1000.json" || fail "fixed: 998 NotSelected expected in clusterCounts"
grep -q '"not in clusterNames": 998' "$tmp/d1000.json" || fail "fixed: reasons should count 998 'not in clusterNames'"
grep -q '"Selected": 3,' "$tmp/d1000.json" || fail "prod-three: clusterCounts.Selected 3 expected"
# the table: the same clusters, then one line counting the others
t100=$(wc -l <"$tmp/d100.txt"); t1000=$(wc -l <"$tmp/d1000.txt")
[ "$t100" -eq "$t1000" ] || fail "default fleet table: $t100 lines at 100 clusters, $t1000 at 1000"
grep -q '^(and 977 more not listed: ' "$tmp/d1000.txt" || fail "table: no 'and 977 more not listed' line"
# yaml: the same number of listed clusters
[ "$(grep -c 'affinityScore:' "$tmp/d1000.yaml")" -eq "$d1000" ] || fail "fleet YAML lists other clusters than the JSON"
"$BERTH" fleet place "$tmp/f100.yaml" $NOW --detail some >/dev/null 2>&1; [ $? -eq 2 ] || fail "--detail some: exit 2 expected"

# kube --explain: lines per pod do not grow with the nodes
kube() {
  local f=$1 n=$2 i
  for ((i = 0; i < n; i++)); do
    printf 'apiVersion: v1\nkind: Node\nmetadata: {name: n-%04d}\nstatus: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}\n---\n' "$i"
  done >"$f"
  for ((i = 0; i < 20; i++)); do
    printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: p-%02d, namespace: default}\nspec: {containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]}\n---\n' "$i"
  done >>"$f"
}
kube "$tmp/k40.yaml" 40
kube "$tmp/k400.yaml" 400
e40=$("$BERTH" kube schedule "$tmp/k40.yaml" --explain 2>&1 >/dev/null | wc -l)
e400=$("$BERTH" kube schedule "$tmp/k400.yaml" --explain 2>&1 >/dev/null | wc -l)
[ "$e40" -gt 20 ] || fail "--explain printed $e40 lines for 20 pods"
[ "$e40" -eq "$e400" ] || fail "--explain: $e40 lines at 40 nodes, $e400 at 400"
# --explain with -o json: the JSON holds no per-node detail unless asked
"$BERTH" kube schedule "$tmp/k400.yaml" --explain -o json 2>/dev/null >"$tmp/kx.json"
! grep -q '"scores"' "$tmp/kx.json" || fail "--explain -o json shows --detail all's scores"
"$BERTH" kube schedule "$tmp/k40.yaml" --explain -o json --detail all 2>/dev/null | grep -q '"scores"' ||
  fail "--explain -o json --detail all has no scores"

# kube -o yaml is -o json (when python3 can read YAML)
if python3 -c 'import yaml' 2>/dev/null; then
  for args in "" "--detail all"; do
    "$BERTH" kube schedule "$tmp/k40.yaml" -o json $args >"$tmp/k.json"
    "$BERTH" kube schedule "$tmp/k40.yaml" -o yaml $args >"$tmp/k.yaml"
    python3 - "$tmp/k.json" "$tmp/k.yaml" <<'PY' || fail "kube -o yaml $args differs from -o json"
import json, sys, yaml
j = json.load(open(sys.argv[1]))
y = yaml.safe_load(open(sys.argv[2]))
sys.exit(0 if j == y and len(j["pods"]) == 20 else 1)
PY
  done
  for n in 100; do
    "$BERTH" fleet place "$tmp/f$n.yaml" $NOW -o json --detail all >"$tmp/fa.json"
    "$BERTH" fleet place "$tmp/f$n.yaml" $NOW -o yaml --detail all >"$tmp/fa.yaml"
    python3 -c 'import json, sys, yaml; sys.exit(json.load(open(sys.argv[1])) != yaml.safe_load(open(sys.argv[2])))' \
      "$tmp/fa.json" "$tmp/fa.yaml" || fail "fleet -o yaml differs from -o json"
  done
else
  echo "note: python3 yaml not found: YAML = JSON checked by tests/unit/test_report_stream.c only"
fi

[ $fails -eq 0 ] || exit 1
echo "output bounded OK"
