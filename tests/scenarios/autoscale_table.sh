#!/usr/bin/env bash
# Scenario: the `autoscale plan` table says what it counts: SCALE UP has a
# header whose price column is "$/h PER NODE" and names the new nodes, so
# that every node REPLACEMENTS moves pods to is named somewhere in the
# table; a node being replaced is not also listed as KEPT.
set -euo pipefail
BERTH=${BERTH:-build/berth}
fail() { echo "FAIL: $*"; exit 1; }
for f in examples/autoscale/scale-up.yaml examples/autoscale/replace.yaml; do
  rc=0; T=$("$BERTH" autoscale plan "$f") || rc=$?   # scale-up.yaml: exit 1, default/huge fits nowhere
  [ $rc -le 1 ] || fail "$f: exit $rc"
  sec() { echo "$T" | awk -v s="$1" '/^[A-Z][A-Z ]*$/ {on = ($0 == s); next} on && NF'; }
  up=$(sec "SCALE UP"); rep=$(sec "REPLACEMENTS"); kept=$(sec "KEPT")
  if [ "$up" != "  (none)" ]; then
    head -1 <<<"$up" | grep -q '^  GROUP .* NODES \$/h PER NODE PODS$' || fail "$f: SCALE UP header: $up"
    # as many names after "new node(s):" as the xN counts say
    want=$(echo "$up" | awk '$5 ~ /^x[0-9]+$/ {n += substr($5, 2)} END {print n + 0}')
    got=$(echo "$up" | sed -n 's/^    new nodes\{0,1\}: //p' | tr ',' '\n' | grep -c .)
    [ "$want" -gt 0 ] && [ "$want" = "$got" ] || fail "$f: $want new nodes counted, $got named: $up"
  fi
  [ "$rep" != "  (none)" ] || fail "$f: expected replacements"
  known=$( { echo "$up" | sed -n 's/^    new nodes\{0,1\}: //p' | tr ',' '\n';
             echo "$rep" | sed -n 's/.* -> new node \([^ ]*\) .*/\1/p';
             { "$BERTH" autoscale plan "$f" -o json || true; } | python3 -c "
import json, sys
d = json.load(sys.stdin)
for x in d['scaleDown']: print(x['node'])
for x in d['blocked']: print(x['node'])" ; } | tr -d ' ' | sort -u)
  echo "$rep" | grep ' \$/h' >/dev/null || fail "$f: replacement price without unit: $rep"
  for target in $(echo "$rep" | sed -n 's/^    [^ ]* -> \([^ ]*\).*/\1/p'); do
    grep -qx "$target" <<<"$known" || fail "$f: REPLACEMENTS moves a pod to $target, named nowhere: $T"
  done
  # no node both replaced and kept
  for n in $(echo "$rep" | awk '/^  [^ ]/ {print $1}'); do
    ! awk -v n="$n" '$1 == n { f = 1 } END { exit !f }' <<<"$kept" || fail "$f: $n is replaced and listed as KEPT"
  done
done
# the JSON keeps every blocked node (the table only lists each node once)
n=$("$BERTH" autoscale plan examples/autoscale/replace.yaml -o json |
    python3 -c "import json,sys; print(len(json.load(sys.stdin)['blocked']))")
[ "$n" = 8 ] || fail "replace.yaml: JSON blocked has $n nodes, expected 8"
echo "autoscale table OK"
