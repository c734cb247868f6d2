#!/usr/bin/env bash
# Scenario: `berth autoscale plan --policy cluster-autoscaler` (SPEC 5.1) on
# examples/autoscale/cluster-autoscaler.yaml (+ -pending.yaml): each
# expander's first node group, the seeded random expander, scale-down by
# utilisation, unneeded time and drainability (JSON checked with python3),
# the cooldown after a scale-up, and exit 2 for bad flag values.
set -u
BERTH=${BERTH:-build/berth}
E=examples/autoscale/cluster-autoscaler.yaml
P=examples/autoscale/cluster-autoscaler-pending.yaml
AT=2024-05-01T12:00:00Z
CA="--policy cluster-autoscaler --at $AT"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
T=$("$BERTH" autoscale plan $E $CA); rc=$?
[ $rc -eq 0 ] || fail "scale-down: exit $rc"
echo "$T" | grep -q "batch/warmup deleted (expendable)" || fail "expendable pod not deleted: $T"
echo "$T" | grep -q "fresh-1 .*unneeded for 5m0s" || fail "fresh-1 reason: $T"
if command -v python3 >/dev/null 2>&1; then
  got=$("$BERTH" autoscale plan $E $CA -o json | python3 -c "
import json, sys
d = json.load(sys.stdin)
assert set(d) >= {'scaleUp', 'scaleDown', 'replacements', 'unschedulable'}, d.keys()
assert d['scaleUp'] == [] and d['replacements'] == [], d
for x in d['scaleDown']:
    print('down', x['node'], sorted(x['moves']), x['evicted'])
for x in sorted(d['blocked'], key=lambda b: b['node']):
    print('kept', x['node'], ' '.join(x['reason'].split()[:4]))
")
  want="down idle-1 ['batch/web'] ['batch/warmup']
kept busy-1 utilisation 0.625 is above
kept fresh-1 unneeded for 5m0s; cluster-autoscaler
kept local-1 pod batch/scratch uses local
kept system-1 pod kube-system/metrics-agent is a"
  [ "$got" = "$want" ] || fail "scale-down JSON: got
$got
expected
$want"
  for pair in least-waste:small/s2 most-pods:ssd/m2 least-nodes:big/b8 price:cheap/c4 priority:ssd/m2; do
    x=${pair%%:*}; want=${pair#*:}
    got=$("$BERTH" autoscale plan $E $P $CA --expander $x -o json | python3 -c "
import json, sys
d = json.load(sys.stdin)
assert d['unschedulable'] == [], d['unschedulable']
placed = sorted(p for u in d['scaleUp'] for p in u['pods'])
assert placed == ['shop/api-%d' % i for i in range(1, 7)] + ['shop/db-1'], placed
assert d['scaleDown'] == [], d['scaleDown']
assert all('scale-down waits' in b['reason'] for b in d['blocked']), d['blocked']
u = d['scaleUp'][0]
print(u['virtualNodeGroup'] + '/' + u['instanceType'])
")
    [ "$got" = "$want" ] || fail "--expander $x: got '$got', expected '$want'"
  done
  a=$("$BERTH" autoscale plan $E $P $CA --expander random --seed 7 -o json)
  b=$("$BERTH" autoscale plan $E $P $CA --expander random --seed 7 -o json)
  [ "$a" = "$b" ] || fail "random expander: same seed, different plans"
else
  echo "note: python3 not found: JSON checks skipped"
fi
for bad in "--policy karpenter" "--expander biggest" "--expander" "--scale-down-unneeded-time soon" \
           "--expander least-waste --policy ocean" "--interrupt idle-1"; do
  case $bad in *"--policy ocean"*) flags="--at $AT $bad" ;; *) flags="$CA $bad" ;; esac
  err=$("$BERTH" autoscale plan $E $flags 2>&1 >/dev/null); rc=$?
  [ $rc -eq 2 ] || fail "'$bad': exit $rc, expected 2"
  [ -n "$err" ] || fail "'$bad': no message"
done
err=$("$BERTH" autoscale plan $E $CA --expander priority 2>&1 >/dev/null); rc=$?
[ $rc -eq 0 ] || fail "--expander priority with the ConfigMap: exit $rc ($err)"
[ $fails -eq 0 ] && echo "autoscale_ca: ok"
[ $fails -eq 0 ]
