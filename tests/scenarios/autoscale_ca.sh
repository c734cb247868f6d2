#!/usr/bin/env bash
# Scenario: `berth autoscale plan --policy cluster-autoscaler` (SPEC 5.1) on
# examples/autoscale/cluster-autoscaler.yaml (+ -pending.yaml): each
# expander's first node group, the seeded random expander, scale-down by
# utilisation, unneeded time and drainability (JSON checked with python3:
# custom controllers, the kube-system pod timeout, safe local volumes),
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
  want="down system-2 ['kube-system/coredns-5d78c9869d-x7x2p'] []
down local-2 ['batch/cache-0'] []
down idle-1 ['batch/web'] ['batch/warmup']
kept busy-1 utilisation 0.625 is above
kept custom-1 pod batch/canary-7f9c6b5d4-q2w3e is owned
kept fresh-1 unneeded for 5m0s; cluster-autoscaler
kept local-1 pod batch/scratch uses local
kept system-1 pod kube-system/metrics-agent is a"
  [ "$got" = "$want" ] || fail "scale-down JSON: got
$got
expected
$want"
  # the drain flags: which of custom-1, system-1, system-2 go
  fate() {
    "$BERTH" autoscale plan $E $CA "$@" -o json | python3 -c "
import json, sys
d = json.load(sys.stdin)
down = {x['node'] for x in d['scaleDown']}
kept = {b['node']: b['reason'] for b in d['blocked']}
for n in ('custom-1', 'system-1', 'system-2'):
    print(n, 'down' if n in down else 'kept: ' + kept.get(n, '?'))
"
  }
  got=$(fate --skip-nodes-with-custom-controller-pods=false | head -1)
  [ "$got" = "custom-1 down" ] || fail "custom controllers allowed: $got"
  got=$(fate --skip-nodes-with-custom-controller-pods | head -1)
  case $got in "custom-1 kept: pod batch/canary-7f9c6b5d4-q2w3e is owned by Rollout canary"*) ;;
    *) fail "bare --skip-nodes-with-custom-controller-pods: $got" ;; esac
  got=$(fate --blocking-system-pod-distruption-timeout 30m | sed -n 2p)
  [ "$got" = "system-1 down" ] || fail "timeout 30m (pod created 30m ago): $got"
  got=$(fate --blocking-system-pod-distruption-timeout 30m1s | sed -n 2p)
  case $got in "system-1 kept: "*"created 30m0s ago"*) ;; *) fail "timeout 30m1s: $got" ;; esac
  got=$(fate --blocking-system-pod-distruption-timeout 30h | sed -n 3p)
  case $got in "system-2 kept: "*"created 28h0m0s ago"*"30h0m0s"*) ;; *) fail "timeout 30h: $got" ;; esac
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
           "--expander least-waste --policy ocean" "--interrupt idle-1" \
           "--blocking-system-pod-distruption-timeout soon" \
           "--blocking-system-pod-distruption-timeout 1h --policy ocean" \
           "--skip-nodes-with-custom-controller-pods=maybe" \
           "--skip-nodes-with-custom-controller-pods=false --policy ocean"; do
  case $bad in *"--policy ocean"*) flags="--at $AT $bad" ;; *) flags="$CA $bad" ;; esac
  err=$("$BERTH" autoscale plan $E $flags 2>&1 >/dev/null); rc=$?
  [ $rc -eq 2 ] || fail "'$bad': exit $rc, expected 2"
  [ -n "$err" ] || fail "'$bad': no message"
done
err=$("$BERTH" autoscale plan $E $CA --expander priority 2>&1 >/dev/null); rc=$?
[ $rc -eq 0 ] || fail "--expander priority with the ConfigMap: exit $rc ($err)"
[ $fails -eq 0 ] && echo "autoscale_ca: ok"
[ $fails -eq 0 ]
