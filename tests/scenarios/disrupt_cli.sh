#!/usr/bin/env bash
# Scenario: `berth disrupt plan` (SPEC 4.1, 6.3) on examples/disrupt/*.yaml:
# the table, the JSON shape, the seed's budget window (none during the first
# 10 minutes of a day), blocked reasons, and exit codes for bad usage/input.
set -u
BERTH=${BERTH:-build/berth}
C=examples/disrupt/consolidate.yaml
B=examples/disrupt/blocked.yaml
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
T=$("$BERTH" disrupt plan $C --at 2024-05-01T12:00:00Z); rc=$?
[ $rc -eq 0 ] || fail "consolidate: exit $rc"
echo "$T" | grep -q "delete  Underutilized node-a" || fail "consolidate: no single-node delete of node-a: $T"
# the "0 nodes during the first 10 minutes of each day" budget
T=$("$BERTH" disrupt plan $C --at 2024-05-01T00:09:59Z); rc=$?
[ $rc -eq 0 ] || fail "window: exit $rc"
echo "$T" | grep -q "(none)" || fail "window: expected no action: $T"
T=$("$BERTH" disrupt plan $C --at 2024-05-01T00:10:00Z)
echo "$T" | grep -q "Underutilized node-a" || fail "window end: expected an action: $T"
T=$("$BERTH" disrupt plan $B --at 2024-05-01T12:00:00Z)
echo "$T" | grep -q "Expired *ancient" || fail "blocked: no expiration: $T"
echo "$T" | grep -q "replace Drifted *drifted" || fail "blocked: no drift replacement: $T"
echo "$T" | grep -q "dnd .*do-not-disrupt" || fail "blocked: dnd reason: $T"
echo "$T" | grep -q "guarded .*PodDisruptionBudget default/db" || fail "blocked: pdb reason: $T"
if command -v python3 >/dev/null 2>&1; then
  got=$("$BERTH" disrupt plan $B --at 2024-05-01T12:00:00Z -o json | python3 -c "
import json, sys
d = json.load(sys.stdin)
assert set(d) >= {'at', 'nodePools', 'actions', 'blocked'}, d.keys()
p = d['nodePools'][0]
a = p['allowedDisruptions']
print(d['at'], p['name'], a['Empty'], a['Drifted'], a['Underutilized'])
for x in d['actions']:
    r = x['replacement']
    print(x['action'], x['reason'], ','.join(x['nodes']), r and (r['instanceType'], r['capacityType'], r['zone'], r['price']), round(x['savingsPerHour'], 3))
for b in d['blocked']:
    print('blocked', b['node'])
")
  want="2024-05-01T12:00:00Z general 1 1 1
delete Expired ancient None 0.192
replace Drifted drifted ('Standard_D4s_v3', 'on-demand', 'eastus-1', 0.192) 0.0
blocked dnd
blocked guarded"
  [ "$got" = "$want" ] || fail "JSON: got
$got
expected
$want"
else
  echo "note: python3 not found: JSON check skipped"
fi
"$BERTH" disrupt plan $C --at yesterday >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "--at yesterday: exit $rc, expected 2"
"$BERTH" disrupt plan $C --feature-gates Bogus=true >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "bad gate: exit $rc, expected 2"
"$BERTH" disrupt plan $C --at 2024-05-01T12:00:00Z --feature-gates SpotToSpotConsolidation=true >/dev/null 2>&1; rc=$?
[ $rc -eq 0 ] || fail "good gate: exit $rc"
"$BERTH" disrupt plan >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "no files: exit $rc, expected 2"
"$BERTH" disrupt plan --help | grep -q "usage: berth disrupt plan" || fail "--help"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
printf 'apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: p}\nspec:\n  template: {spec: {}}\n  disruption:\n    budgets: [{nodes: "1", schedule: "61 * * * *", duration: 10m}]\n' >"$tmp/bad.yaml"
out=$("$BERTH" disrupt plan "$tmp/bad.yaml" --at 2024-05-01T12:00:00Z 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] || fail "bad schedule: exit $rc, expected 2"
echo "$out" | grep -q "bad.yaml:7:.*budgets\[0\].schedule" || fail "bad schedule message: $out"
[ $fails -eq 0 ]
