#!/usr/bin/env bash
# Scenario: SPEC 2.4's seed example (examples/kube/usage-aware.yaml). The
# default profile ties B and C and picks B (lowest name); --profile
# usage-aware admits on unreserved capacity and picks C by observed usage.
set -u
BERTH=${BERTH:-build/berth}
F=examples/kube/usage-aware.yaml
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
HAVE_PY=0
command -v python3 >/dev/null 2>&1 && HAVE_PY=1
# py JSON EXPR: EXPR over d (the JSON) and tot(node), sc(node, plugin) of the only pod
py() {
  echo "$1" | python3 -c "
import json, sys
d = json.load(sys.stdin)
p = d['pods'][0]
def tot(n): return p['scores'][n]['total']
def sc(n, pl): return p['scores'][n]['plugins'][pl]
print($2)"
}
tnode() { echo "$1" | awk '$1 == "default/newcomer" {print $2}'; }

# ---- default profile ----
T=$("$BERTH" kube schedule $F); rc=$?
[ $rc -eq 0 ] || fail "default profile: exit $rc"
[ "$(tnode "$T")" = host-b ] || fail "default profile: picked '$(tnode "$T")', expected host-b"
if [ $HAVE_PY = 1 ]; then
  J=$("$BERTH" kube schedule $F -o json --detail all)
  # LeastAllocated: cpu (16000-4000)*100/16000 = 75 on every host; memory
  # A (100-95)*100/100 = 5, B and C (100-75) = 25 -> A 40, B 50, C 50.
  # Balanced: A |0.25-0.95|/2 = 0.35 -> 65; B, C |0.25-0.75|/2 = 0.25 -> 75.
  # Totals: 3*100 (TaintToleration) + Fit + Balanced: A 405, B 425, C 425.
  got=$(py "$J" "tot('host-a'), tot('host-b'), tot('host-c')")
  [ "$got" = "405 425 425" ] || fail "default totals A, B, C: got $got, expected 405 425 425"
  [ "$(py "$J" "tot('host-b') == tot('host-c')")" = True ] || fail "default: B and C must tie"
  [ "$(py "$J" "sc('host-b', 'NodeResourcesFit'), sc('host-c', 'NodeResourcesFit')")" = "50 50" ] ||
    fail "default: NodeResourcesFit B, C not 50 50"
  [ "$(py "$J" "p['node']")" = host-b ] || fail "default JSON node not host-b"
else
  echo "note: python3 not found: JSON total checks skipped"
fi

# ---- usage-aware profile ----
T=$("$BERTH" kube schedule $F --profile usage-aware); rc=$?
[ $rc -eq 0 ] || fail "usage-aware: exit $rc"
[ "$(tnode "$T")" = host-c ] || fail "usage-aware: picked '$(tnode "$T")', expected host-c"
if [ $HAVE_PY = 1 ]; then
  J=$("$BERTH" kube schedule $F --profile usage-aware -o json --detail all)
  # admission: unreserved A 40, B 60, C 60 >= 35: all three admitted
  [ "$(py "$J" "','.join(p['feasible'])")" = "host-a,host-b,host-c" ] || fail "usage-aware feasible"
  # UsageHeadroom: cpu (16-4-2)/16 = 625000 ppm everywhere; memory after
  # placement A (100-65-35)/100 = 0, B -5/100 = -50000 ppm, C 20/100 = 200000;
  # averages A 312500, B 287500, C 412500; min..max to 0..100:
  # A 100*25000/125000 = 20, B 0, C 100
  got=$(py "$J" "sc('host-a', 'UsageHeadroom'), sc('host-b', 'UsageHeadroom'), sc('host-c', 'UsageHeadroom')")
  [ "$got" = "20 0 100" ] || fail "usage-aware UsageHeadroom A, B, C: got $got, expected 20 0 100"
  [ "$(py "$J" "sorted(p['scores']['host-c']['plugins'])")" = "['UsageHeadroom']" ] ||
    fail "usage-aware must score with UsageHeadroom only"
fi
# the same decisions with --reference
for prof in default-scheduler usage-aware; do
  a=$("$BERTH" kube schedule $F --profile $prof -o json)
  b=$("$BERTH" kube schedule $F --profile $prof -o json --reference)
  [ "$a" = "$b" ] || fail "$prof: --reference differs"
done

# ---- admission: reservation plus the pod's overhead must be unreserved ----
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
sed 's/requests: {cpu: "2", memory: 35Gi}/requests: {cpu: "2", memory: 35Gi}\n    overhead: {memory: 6Gi}/' $F >"$tmp/ovh.yaml"
grep -q 'overhead: {memory: 6Gi}' "$tmp/ovh.yaml" || fail "could not build the overhead variant"
T=$("$BERTH" kube schedule "$tmp/ovh.yaml" --profile usage-aware -o json --detail all); rc=$?
[ $rc -eq 0 ] || fail "overhead variant: exit $rc"
if [ $HAVE_PY = 1 ]; then
  # A: 35 + 6 = 41 GB > 40 unreserved -> not admitted
  [ "$(py "$T" "','.join(p['feasible'])")" = "host-b,host-c" ] || fail "overhead variant: A must not be admitted"
  [ "$(py "$T" "p['node']")" = host-c ] || fail "overhead variant: expected host-c"
fi
# nothing fits: 61 GB
sed 's/memory: 35Gi}/memory: 61Gi}/' $F >"$tmp/big.yaml"
T=$("$BERTH" kube schedule "$tmp/big.yaml" --profile usage-aware); rc=$?
[ $rc -eq 1 ] || fail "61 GB pod: exit $rc, expected 1"
echo "$T" | grep -q "0/3 nodes are available: 3 Insufficient memory." || fail "61 GB pod: message: $T"
# an unknown profile is a usage error
"$BERTH" kube schedule $F --profile nope >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "--profile nope: exit $rc, expected 2"

[ $fails -eq 0 ] || { echo "usage-aware scenario: $fails FAILED"; exit 1; }
echo "usage-aware scenario OK"
