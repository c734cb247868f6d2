#!/usr/bin/env bash
# Scenario: `berth fleet place` on the seed's sorter tables (SPEC 3) and the
# PickN-with-spread example: scores, selection order, exit codes, JSON shape,
# fast path == --reference, policy errors exit 2, located load errors.
set -euo pipefail
NOW=--now=2024-05-01T12:00:00Z
j=$("$BERTH" fleet place examples/fleet/seed-sorters.yaml $NOW -o json)
sel() { echo "$j" | python3 -c "import json,sys; d=json.load(sys.stdin); p=[x for x in d['placements'] if x['name']=='$1'][0]; print(','.join(p['selected']))"; }
score() { echo "$j" | python3 -c "import json,sys; d=json.load(sys.stdin); p=[x for x in d['placements'] if x['name']=='$1'][0]; print(' '.join(str(c['affinityScore']) for c in p['clusters']))"; }
[ "$(sel most-available-cpu)" = "bravelion,smartfish,jumpingcat" ]
[ "$(score most-available-cpu)" = "100 0 11" ]      # clusters in name order
[ "$(sel cheapest-cpu)" = "jumpingcat,smartfish,bravelion" ]
[ "$(score cheapest-cpu)" = "0 100 89" ]
[ "$(sel east-with-five-nodes)" = "bravelion" ]
echo "$j" | python3 -c "
import json,sys
d=json.load(sys.stdin)
for p in d['placements']:
    assert set(['name','selected','clusters']) <= set(p)
    for c in p['clusters']:
        assert set(['name','status','affinityScore','topologySpreadScore','reason']) <= set(c)
        assert c['status'] in ('Selected','NotSelected','Filtered','NotFound','Invalid')
"
diff <("$BERTH" fleet place examples/fleet/pickn-spread.yaml $NOW -o json) \
     <("$BERTH" fleet place examples/fleet/pickn-spread.yaml $NOW -o json --reference)
set +e
"$BERTH" fleet place examples/fleet/pickn-spread.yaml $NOW -q; rc=$?
[ $rc -eq 1 ] || { echo "expected exit 1 (shortfall), got $rc"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cat examples/fleet/seed-sorters.yaml > "$tmp/bad.yaml"
cat >> "$tmp/bad.yaml" <<'YAML'
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata: {name: two-values}
spec:
  policy:
    affinity:
      clusterAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          clusterSelectorTerms:
          - propertySelector:
              matchExpressions:
              - {name: kubernetes-fleet.io/node-count, operator: Ge, values: ["1", "2"]}
YAML
out=$("$BERTH" fleet place "$tmp/bad.yaml" $NOW -o json 2>"$tmp/err"); rc=$?
[ $rc -eq 2 ] || { echo "expected exit 2 (policy error), got $rc"; exit 1; }
grep -q "bad.yaml:.*exactly one value" "$tmp/err"
grep -q '"status": "Invalid"' <<<"$out"
printf 'apiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\nmetadata: {name: x}\nspec: {taintz: []}\n' > "$tmp/typo.yaml"
"$BERTH" fleet place "$tmp/typo.yaml" $NOW -q; [ $? -eq 0 ] || exit 1
"$BERTH" fleet place "$tmp/typo.yaml" $NOW --strict 2>"$tmp/err"; [ $? -eq 2 ] || exit 1
grep -q "typo.yaml:4:8: spec.taintz: unknown field" "$tmp/err"
"$BERTH" fleet place --help | grep -q -- --now
echo "fleet scenarios OK"
