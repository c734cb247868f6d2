#!/usr/bin/env bash
# Scenario: `berth autoscale simulate` (docs/autoscale.md "Simulate") on
# examples/autoscale/simulate/estate.yaml with examples/autoscale/simulate/events.yaml: the
# table, the JSON shape (from, to, step, steps with nodes, costPerHour,
# pendingPods, launched, terminated, events; summary), the example's
# timeline (launch and 120 s wait, price change, scale-down after the pods
# leave, spot interruption and replacement), a revert to spot carried out
# (examples/autoscale/simulate/revert-to-spot.yaml), and bad event files: a located
# error (file:line:col) and exit 2; bad flags exit 2.
set -u
BERTH=${BERTH:-build/berth}
E=examples/autoscale/simulate/estate.yaml
EV=examples/autoscale/simulate/events.yaml
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
T=$("$BERTH" autoscale simulate $E --events $EV); rc=$?
[ $rc -eq 0 ] || fail "table: exit $rc"
echo "$T" | grep -q "^2024-05-01T12:00:00Z .* 2 .* 1 .*PodArrive 3 pods (jobs/batch-1" || fail "table: arrival row: $T"
echo "$T" | grep -q "^2024-05-01T12:20:00Z .*SpotInterruption spot-1" || fail "table: interruption row: $T"
echo "$T" | grep -q "pod-pending seconds 360 (max 120)" || fail "table: summary: $T"
if command -v python3 >/dev/null 2>&1; then
  got=$("$BERTH" autoscale simulate $E --events $EV -o json | python3 -c "
import json, sys
d = json.load(sys.stdin)
assert set(d) >= {'from', 'to', 'step', 'steps', 'summary'}, d.keys()
assert d['from'] == '2024-05-01T12:00:00Z' and d['to'] == '2024-05-01T12:35:00Z' and d['step'] == '1m', d
for s in d['steps']:
    assert set(s) >= {'at', 'nodes', 'costPerHour', 'pendingPods', 'launched', 'terminated', 'events'}, s.keys()
    for e in s['events']:
        assert set(e) >= {'at', 'type', 'target'}, e
by = {s['at'][11:16]: s for s in d['steps']}
print(by['12:00']['launched'], by['12:00']['pendingPods'], by['12:01']['pendingPods'], by['12:02']['pendingPods'])
print(by['12:05']['events'][0]['type'], round(by['12:05']['costPerHour'] - by['12:04']['costPerHour'], 4))
print(by['12:10']['nodes'], by['12:11']['nodes'], by['12:11']['terminated'])
print(by['12:20']['terminated'], by['12:20']['launched'], by['12:20']['pendingPods'], by['12:22']['pendingPods'])
sm = d['summary']
print(sm['podPendingSeconds'], sm['maxPodPendingSeconds'], sm['nodesMin'], sm['nodesMax'], sm['launched'], sm['terminated'], sm['totalCost'] > 0)
")
  want="1 2 2 0
PriceChange 0.082
2 1 1
1 1 1 0
360.0 120.0 1 2 2 2 True"
  [ "$got" = "$want" ] || fail "JSON: got
$got
expected
$want"
fi
# replacements carried out: spot returns (PriceChange available: true), the
# on-demand node is replaced by a spot node, launched first, drained once it registered
R=examples/autoscale/simulate/revert-to-spot.yaml
RV=examples/autoscale/simulate/spot-returns.yaml
T=$("$BERTH" autoscale simulate $R --events $RV --from 2024-05-01T12:00:00Z --to 2024-05-01T12:10:00Z); rc=$?
[ $rc -eq 0 ] || fail "replace table: exit $rc"
echo "$T" | grep -q "^2024-05-01T12:03:00Z .*Replace od-1 (RevertToSpot: launched general-n1 (m5.large spot us-east-1a))" || fail "replace table: row: $T"
echo "$T" | grep -q "launched 1, terminated 1, replaced 1" || fail "replace table: summary: $T"
if command -v python3 >/dev/null 2>&1; then
  got=$("$BERTH" autoscale simulate $R --events $RV --from 2024-05-01T12:00:00Z --to 2024-05-01T12:10:00Z -o json | python3 -c "
import json, sys
d = json.load(sys.stdin)
by = {s['at'][11:16]: s for s in d['steps']}
print(by['12:02']['replaced'], by['12:03']['replaced'], by['12:03']['launched'], by['12:03']['nodes'])
e = by['12:03']['events'][-1]
print(e['type'], e['target'], e['reason'], e['newNode'])
print(by['12:05']['nodes'], by['12:06']['nodes'], by['12:06']['terminated'], by['12:06']['pendingPods'], round(by['12:06']['costPerHour'], 4))
print(d['summary']['replaced'], d['summary']['podPendingSeconds'])
")
  want="0 1 1 2
Replace od-1 RevertToSpot general-n1
2 1 1 0 0.035
1 0.0"
  [ "$got" = "$want" ] || fail "replace JSON: got
$got
expected
$want"
fi
# --from / --to / --step
n=$("$BERTH" autoscale simulate $E --events $EV --from 2024-05-01T12:00:00Z --to 2024-05-01T12:10:00Z --step 5m | grep -c "^2024")
[ "$n" -eq 3 ] || fail "--step 5m: $n rows, expected 3"
# bad event files: located errors, exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'apiVersion: berth.io/v1\nkind: AutoscaleEvent\nspec:\n  at: 2024-05-01T12:00:00Z\n  type: PodLeave\n  pod: default/x\n  nodes: n1\n' > "$tmp/typo.yaml"
out=$("$BERTH" autoscale simulate $E --events "$tmp/typo.yaml" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "typo: exit $rc"
echo "$out" | grep -q "typo.yaml:7:3: .*spec.nodes" || fail "typo: message: $out"
printf 'apiVersion: berth.io/v1\nkind: AutoscaleEvent\nspec: {at: noon, type: SpotInterruption, node: n1}\n' > "$tmp/at.yaml"
out=$("$BERTH" autoscale simulate $E --events "$tmp/at.yaml" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "at: exit $rc"
echo "$out" | grep -q "at.yaml:3:.*RFC 3339" || fail "at: message: $out"
printf 'apiVersion: berth.io/v1\nkind: AutoscaleEvent\nspec:\n  at: 2024-05-01T12:00:00Z\n  type: PodArrive\n  pods:\n  - apiVersion: v1\n    kind: Pod\n    metadata: {name: p, namespace: default}\n    spec: {containers: [{name: c, resources: {requests: {cpu: lots}}}]}\n' > "$tmp/pod.yaml"
out=$("$BERTH" autoscale simulate $E --events "$tmp/pod.yaml" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "pod: exit $rc"
echo "$out" | grep -q "pod.yaml:10:" || fail "pod: message: $out"
"$BERTH" autoscale simulate $E >/dev/null 2>&1; [ $? -eq 2 ] || fail "no --events: exit not 2"
"$BERTH" autoscale simulate $E --events $EV --drain-timeout 60s >/dev/null 2>&1; [ $? -eq 2 ] || fail "--drain-timeout 60s: exit not 2"
"$BERTH" autoscale simulate $E --events $EV --step soon >/dev/null 2>&1; [ $? -eq 2 ] || fail "--step soon: exit not 2"
[ $fails -eq 0 ] && echo "autoscale_simulate: ok"
[ $fails -eq 0 ]
