#!/usr/bin/env bash
# Scenario: `berth disrupt plan --optimize` and `--reference` (docs/disrupt.md)
# on examples/disrupt/optimize.yaml: Karpenter's pass deletes one node, the
# optimiser two (down to the lower bound); the JSON's extra fields (nodesAfter,
# costAfter, lowerBound, optimized, karpenter, optimizer), how far the plan is
# above the bound and what --optimize gained; the reference path plans the
# same as the default one on every disrupt example.
set -u
BERTH=${BERTH:-build/berth}
O=examples/disrupt/optimize.yaml
AT=2024-05-01T12:00:00Z
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
T=$("$BERTH" disrupt plan $O --at $AT); rc=$?
[ $rc -eq 0 ] || fail "default: exit $rc"
echo "$T" | grep -q "delete  Underutilized node-a  " || fail "default: single delete of node-a: $T"
echo "$T" | grep -q "nodes 5 -> 4 (lower bound 3, within budgets 3)" || fail "default: outcome line: $T"
T=$("$BERTH" disrupt plan $O --at $AT --optimize); rc=$?
[ $rc -eq 0 ] || fail "optimize: exit $rc"
echo "$T" | grep -q "delete  Underutilized node-a,node-c" || fail "optimize: node-a and node-c: $T"
echo "$T" | grep -q "nodes 5 -> 3 (lower bound 3, within budgets 3)" || fail "optimize: outcome line: $T"
echo "$T" | grep -q "Karpenter's pass would leave 4 nodes" || fail "optimize: comparison line: $T"
# how far above the bound, and what --optimize gained (issue 18)
echo "$T" | grep -q "above the lower bound: +0 nodes, +0.0528/h (+10.09 %); within budgets: +0 nodes, +0.0528/h (+10.09 %)" \
  || fail "optimize: above-bound line: $T"
echo "$T" | grep -q "optimize: gained 0.1920/h (+25.00 %) and 1 nodes over Karpenter's pass" \
  || fail "optimize: gain line: $T"
T=$("$BERTH" disrupt plan $O --at $AT)
echo "$T" | grep -q "above the lower bound: +1 nodes, +0.2448/h (+46.79 %)" || fail "default: above-bound line: $T"
echo "$T" | grep -q "^optimize:" && fail "default: a gain line without --optimize: $T"
if command -v python3 >/dev/null 2>&1; then
  got=$("$BERTH" disrupt plan $O --at $AT --optimize -o json | python3 -c "
import json, sys
d = json.load(sys.stdin)
assert set(d) >= {'at', 'nodePools', 'actions', 'blocked'}, d.keys()
print(d['nodesBefore'], d['nodesAfter'], round(d['costAfter'], 4), d['lowerBound']['nodes'],
      d['optimized'], d['karpenter']['nodesAfter'], round(d['karpenter']['savingsPerHour'], 4))
")
  [ "$got" = "5 3 0.576 3 True 4 0.192" ] || fail "JSON: got '$got'"
  got=$("$BERTH" disrupt plan $O --at $AT --optimize -o json | python3 -c "
import json, sys
d = json.load(sys.stdin)
b, o = d['lowerBound'], d['optimizer']
print(b['nodesAbove'], b['costPerHourAbove'], b['percentAbove'], b['percentAboveWithinBudgets'],
      d['karpenter']['costAfter'], o['nodesAfter'], o['costAfter'], o['gainPerHour'],
      o['gainPercent'], o['gainNodes'])
")
  [ "$got" = "0 0.0528 10.09 10.09 0.768 3 0.576 0.192 25.0 1" ] || fail "JSON optimizer: got '$got'"
  got=$("$BERTH" disrupt plan $O --at $AT -o json | python3 -c "
import json, sys
d = json.load(sys.stdin)
print(d['optimized'], d['nodesAfter'], d['karpenter']['nodesAfter'], 'optimizer' in d,
      d['lowerBound']['nodesAbove'])
")
  [ "$got" = "False 4 4 False 1" ] || fail "JSON without --optimize: got '$got'"
fi
for f in examples/disrupt/*.yaml; do
  a=$("$BERTH" disrupt plan "$f" --at $AT -o json 2>&1); b=$("$BERTH" disrupt plan "$f" --at $AT --reference -o json 2>&1)
  [ "$a" = "$b" ] || fail "--reference differs on $f"
done
"$BERTH" disrupt plan --help | grep -q -- "--optimize" || fail "--help lacks --optimize"
[ $fails -eq 0 ]
