#!/usr/bin/env bash
# Scenario: `berth disrupt plan --optimize` and `--reference` (docs/disrupt.md)
# on examples/disrupt/optimize.yaml: Karpenter's pass deletes one node, the
# optimiser two (down to the lower bound); the JSON's extra fields (nodesAfter,
# costAfter, lowerBound, optimized, karpenter); the reference path plans the
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
if command -v python3 >/dev/null 2>&1; then
  got=$("$BERTH" disrupt plan $O --at $AT --optimize -o json | python3 -c "
import json, sys
d = json.load(sys.stdin)
assert set(d) >= {'at', 'nodePools', 'actions', 'blocked'}, d.keys()
print(d['nodesBefore'], d['nodesAfter'], round(d['costAfter'], 4), d['lowerBound']['nodes'],
      d['optimized'], d['karpenter']['nodesAfter'], round(d['karpenter']['savingsPerHour'], 4))
")
  [ "$got" = "5 3 0.576 3 True 4 0.192" ] || fail "JSON: got '$got'"
  got=$("$BERTH" disrupt plan $O --at $AT -o json | python3 -c "
import json, sys
d = json.load(sys.stdin)
print(d['optimized'], d['nodesAfter'], d['karpenter']['nodesAfter'])
")
  [ "$got" = "False 4 4" ] || fail "JSON without --optimize: got '$got'"
fi
for f in examples/disrupt/*.yaml; do
  a=$("$BERTH" disrupt plan "$f" --at $AT -o json 2>&1); b=$("$BERTH" disrupt plan "$f" --at $AT --reference -o json 2>&1)
  [ "$a" = "$b" ] || fail "--reference differs on $f"
done
"$BERTH" disrupt plan --help | grep -q -- "--optimize" || fail "--help lacks --optimize"
[ $fails -eq 0 ]
