#!/usr/bin/env bash
# Scenario: Ocean replacements in `berth autoscale plan` (SPEC 5, 6.3) on
# examples/autoscale/replace.yaml: each reason (SpotInterruption, AutoHeal,
# Roll, RevertToReserved, RevertToSpot), the `with` object, launchFirst /
# drainAfter, the interrupted node's pod moving at once onto spare room, and
# exit 2 for bad --interrupt / --roll / --autoheal-grace values.
set -u
BERTH=${BERTH:-build/berth}
R=examples/autoscale/replace.yaml
AT=2024-05-01T12:00:00Z
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
T=$("$BERTH" autoscale plan $R --at $AT --interrupt a-interrupted --roll batch:50%); rc=$?
[ $rc -eq 0 ] || fail "exit $rc"
echo "$T" | grep -q "a-interrupted  *SpotInterruption .*drain immediately" || fail "table: $T"
if command -v python3 >/dev/null 2>&1; then
  got=$("$BERTH" autoscale plan $R --at $AT --interrupt a-interrupted --roll batch:50% -o json | python3 -c "
import json, sys
d = json.load(sys.stdin)
for x in d['replacements']:
    w = x['with']
    assert x['launchFirst'] is True
    assert set(w) >= {'virtualNodeGroup', 'instanceType', 'capacityType', 'zone', 'pricePerHour'}, w
    print(x['node'], x['reason'], w['virtualNodeGroup'], w['instanceType'], w['capacityType'],
          w.get('reservation', '-'), x['drainAfter'], json.dumps(x['moves'], sort_keys=True) if x['reason'] == 'SpotInterruption' else len(x['moves']), x['waiting'])
")
  want='a-interrupted SpotInterruption general m5.xlarge reserved ri-xl immediately {"default/api-1": "headroom-1"} []
b-unhealthy AutoHeal general m5.xlarge reserved ri-xl registered 1 []
batch-1 Roll batch m5.large spot - registered 1 []
batch-2 Roll batch m5.large spot - registered 1 []
c-on-demand RevertToReserved general m5.xlarge reserved ri-xl registered 1 []
d-on-demand RevertToSpot general m5.large spot - registered 1 []'
  [ "$got" = "$want" ] || fail "JSON: got
$got
expected
$want"
  n=$("$BERTH" autoscale plan $R --at $AT --autoheal-grace 15m -o json | python3 -c "
import json, sys
print(sorted(x['reason'] for x in json.load(sys.stdin)['replacements']))")
  # b-unhealthy is within the grace; the reservation's three units go to the
  # first nodes by name, d-on-demand reverts to spot
  [ "$n" = "['RevertToReserved', 'RevertToReserved', 'RevertToReserved', 'RevertToSpot']" ] ||
    fail "--autoheal-grace 15m: $n"
else
  echo "note: python3 not found: JSON checks skipped"
fi
for bad in "--interrupt nope" "--roll nope" "--roll batch:0%" "--roll batch:150" "--roll :5" \
           "--autoheal-grace later" "--interrupt" "--autoheal-grace 1m --policy cluster-autoscaler"; do
  err=$("$BERTH" autoscale plan $R --at $AT $bad 2>&1 >/dev/null); rc=$?
  [ $rc -eq 2 ] || fail "'$bad': exit $rc, expected 2"
  [ -n "$err" ] || fail "'$bad': no message"
done
[ $fails -eq 0 ] && echo "autoscale_replace: ok"
[ $fails -eq 0 ]
