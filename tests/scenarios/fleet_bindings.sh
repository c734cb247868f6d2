#!/usr/bin/env bash
# Scenario: `berth fleet place` on examples/fleet/bindings.yaml (bindings as
# KubeFleet reads them after a policy change; docs/fleet.md): the obsolete
# binding's cluster is picked again by score with the +1, the current one is
# held, the Unscheduled one ignored; the namespaced ResourcePlacement with its
# ResourceBinding and SchedulingPolicySnapshot; --strict accepts the real
# objects; fast path == --reference; the berth.io/policy-snapshot annotation
# instead of snapshot objects; located errors exit 2.
set -u
BERTH=${BERTH:-build/berth}
E=examples/fleet/bindings.yaml
NOW=--now=2024-05-01T12:00:00Z
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

T=$("$BERTH" fleet place $E $NOW --strict); rc=$?
[ $rc -eq 0 ] || fail "exit $rc: $T"
echo "$T" | grep -q "^selected: west-2, east-1$" || fail "web selection: $T"
echo "$T" | grep -q "^east-1 .*picked by score (obsolete binding from an older policy snapshot: +1)" \
  || fail "east-1 reason: $T"
echo "$T" | grep -q "^west-2 .*already holds the placement (binding Bound)" || fail "west-2: $T"
echo "$T" | grep -q "^ResourcePlacement apps/api (PickN, numberOfClusters 1): Fulfilled" \
  || fail "resource placement heading: $T"
diff <("$BERTH" fleet place $E $NOW -o json) <("$BERTH" fleet place $E $NOW -o json --reference) \
  >/dev/null || fail "fast path and --reference differ"
if command -v python3 >/dev/null 2>&1; then
  got=$("$BERTH" fleet place $E $NOW -o json | python3 -c "
import json, sys
d = json.load(sys.stdin)
for p in d['placements']:
    print(p['name'], p['kind'], p.get('namespace', '-'), ','.join(p['selected']), p['status'])
")
  want="web ClusterResourcePlacement - west-2,east-1 Fulfilled
apps/api ResourcePlacement apps east-2 Fulfilled"
  [ "$got" = "$want" ] || fail "JSON: got
$got
expected
$want"
fi

# Without the snapshot objects nothing says which snapshot is current: every
# Scheduled / Bound binding holds (east-1 and west-2), the annotation
# berth.io/policy-snapshot restores the reading.
python3 - "$E" "$tmp/nosnap.yaml" "$tmp/annotated.yaml" <<'PY' || fail "python3 rewrite"
import sys
src = open(sys.argv[1]).read()
items = src.split("\n- ")
keep = [i for i in items if "kind: ClusterSchedulingPolicySnapshot" not in i]
nosnap = "\n- ".join(keep)
open(sys.argv[2], "w").write(nosnap)
ann = nosnap.replace("    name: web\n", "    name: web\n    annotations: {berth.io/policy-snapshot: web-1}\n", 1)
open(sys.argv[3], "w").write(ann)
PY
T=$("$BERTH" fleet place "$tmp/nosnap.yaml" $NOW)
echo "$T" | grep -q "^selected: east-1, west-2$" || fail "without snapshots: $T"
echo "$T" | grep -q "^east-1 .*already holds the placement (binding Bound)" || fail "nosnap east-1: $T"
T=$("$BERTH" fleet place "$tmp/annotated.yaml" $NOW)
echo "$T" | grep -q "^selected: west-2, east-1$" || fail "with the annotation: $T"

# located errors: a second latest snapshot, a binding to a missing placement
sed 's/kubernetes-fleet.io\/is-latest-snapshot: "false"/kubernetes-fleet.io\/is-latest-snapshot: "true"/' \
  $E > "$tmp/two.yaml"
err=$("$BERTH" fleet place "$tmp/two.yaml" $NOW 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] || fail "two latest snapshots: exit $rc"
echo "$err" | grep -q "two.yaml:[0-9]*:[0-9]*: metadata.labels.kubernetes-fleet.io/is-latest-snapshot: placement 'web' already has a latest policy snapshot, 'web-0'" \
  || fail "two latest snapshots: $err"
sed 's/namespace: apps/namespace: shop/' $E > "$tmp/ns.yaml"
sed -i '0,/namespace: shop/s//namespace: apps/' "$tmp/ns.yaml"   # the placement stays in apps
err=$("$BERTH" fleet place "$tmp/ns.yaml" $NOW 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] || fail "binding in another namespace: exit $rc"
echo "$err" | grep -q "ns.yaml:[0-9]*:[0-9]*: metadata.labels.kubernetes-fleet.io/parent-CRP: no ResourcePlacement named 'shop/api'" \
  || fail "binding in another namespace: $err"
[ $fails -eq 0 ] && echo "fleet_bindings: ok"
[ $fails -eq 0 ]
