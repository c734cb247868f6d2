#!/usr/bin/env bash
# Scenario: input the planners ignore is said, never silently dropped
# (docs/disrupt.md and docs/autoscale.md "Warnings"): a NodeClaim whose Node
# is missing, a NodeClaim and a Node whose NodePool is missing (kubectl-shaped
# dump: examples/disrupt/warnings.yaml), an oversized headroom unit. Each is a
# "berth: ..." line on stderr (none with -q) and an entry of the JSON's
# `warnings`, in `disrupt plan`, `disrupt simulate`, `autoscale plan` and
# `autoscale simulate`; the `disrupt plan` table labels its allowance columns.
set -u
BERTH=${BERTH:-build/berth}
AT=2024-05-01T12:00:00Z
W=examples/disrupt/warnings.yaml
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
claim="1 NodeClaim whose Node is not in the input (taken as still launching: never disrupted, counted for its NodePool's limits): general-x7k2p (node aks-general-x7k2p)"
pool="1 NodeClaim whose NodePool is not in the input (never disrupted, counted for no NodePool's budgets or limits): batch-q9w8e (NodePool batch)"
node="1 Node labelled karpenter.sh/nodepool with a NodePool that is not in the input (never disrupted): aks-legacy-0 (NodePool legacy)"
# warns CMD...: every disrupt warning on stderr and in the JSON, once each
warns() {
  "$BERTH" "$@" -o json >"$tmp/out" 2>"$tmp/err"; rc=$?
  [ $rc -le 1 ] || fail "$*: exit $rc: $(cat "$tmp/err")"
  for w in "$claim" "$pool" "$node"; do
    [ "$(grep -cxF "berth: $w" "$tmp/err")" = 1 ] || fail "$*: stderr lacks (or repeats) '$w': $(cat "$tmp/err")"
    grep -qF "\"$w\"" "$tmp/out" || fail "$*: JSON warnings lack '$w'"
  done
}
warns disrupt plan $W --at $AT
warns disrupt simulate $W --from $AT --to 2024-05-01T12:05:00Z
# the plan still acts: the empty node of the NodePool that is there goes
T=$("$BERTH" disrupt plan $W --at $AT 2>/dev/null)
echo "$T" | grep -q "delete  Empty *aks-general-a1b2c" || fail "no empty delete: $T"
echo "$T" | grep -q "aks-batch-q9w8e *NodePool batch not found" || fail "batch node not blocked: $T"
# the table says its last three columns are allowances
echo "$T" | grep -qE '^ {44}-+ ALLOWED DISRUPTIONS -+$' || fail "no ALLOWED DISRUPTIONS legend: $T"
echo "$T" | grep -qE '^NODEPOOL +NODES +DISRUPTING +EMPTY +DRIFTED +UNDERUTILIZED$' || fail "header: $T"
# -q: nothing at all
[ -z "$("$BERTH" disrupt plan $W --at $AT -q 2>&1)" ] || fail "-q printed something"
# an input without such problems has no warnings
"$BERTH" disrupt plan examples/disrupt/consolidate.yaml --at $AT -o json >"$tmp/out" 2>"$tmp/err"
[ -s "$tmp/err" ] && fail "consolidate.yaml warns: $(cat "$tmp/err")"
grep -q '"warnings": \[\]' "$tmp/out" || fail "consolidate.yaml: warnings not empty"
# a skipped kind and a planner warning share the one list, kinds first
{ cat $W; printf -- '---\napiVersion: v1\nkind: Event\nmetadata: {name: e, namespace: default}\n'; } >"$tmp/ev.yaml"
command -v python3 >/dev/null 2>&1 &&
"$BERTH" disrupt plan "$tmp/ev.yaml" --at $AT -o json 2>/dev/null | python3 -c "
import json, sys
w = json.load(sys.stdin)['warnings']
assert w[0] == 'skipped 1 Event' and len(w) == 4, w
" || fail "skipped kinds and planner warnings not in one list"

# autoscale: a headroom unit larger than every type the group allows
hr="VirtualNodeGroup general: headroom unit (cpu 64, memory 1Gi, gpu 0) is larger than the allocatable of every instance type the group allows (its 3 units are never held)"
big='---\napiVersion: berth.io/v1\nkind: Headroom\nmetadata: {name: big}\nspec: {virtualNodeGroup: general, cpuPerUnit: "64", memoryPerUnit: 1Gi, numOfUnits: 3}\n'
{ cat examples/autoscale/scale-up.yaml; printf -- "$big"; } >"$tmp/as.yaml"
"$BERTH" autoscale plan "$tmp/as.yaml" --at $AT -o json >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -le 1 ] || fail "autoscale plan: exit $rc: $(cat "$tmp/err")"
grep -qxF "berth: $hr" "$tmp/err" || fail "autoscale plan: stderr lacks '$hr': $(cat "$tmp/err")"
grep -qF "\"$hr\"" "$tmp/out" || fail "autoscale plan: JSON lacks '$hr'"
# the group's own 1-cpu headroom fits: no warning for it
grep -q "cpu 1," "$tmp/err" && fail "the fitting headroom unit warned"
S=examples/autoscale/simulate
{ cat $S/estate.yaml; printf -- "$big"; } >"$tmp/sim.yaml"
"$BERTH" autoscale simulate "$tmp/sim.yaml" --events $S/events.yaml -o json >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -le 1 ] || fail "autoscale simulate: exit $rc: $(cat "$tmp/err")"
grep -q "^berth: VirtualNodeGroup general: headroom unit (cpu 64" "$tmp/err" || fail "autoscale simulate: stderr: $(cat "$tmp/err")"
grep -qF '"VirtualNodeGroup general: headroom unit (cpu 64' "$tmp/out" || fail "autoscale simulate: JSON lacks the warning"
"$BERTH" autoscale simulate $S/estate.yaml --events $S/events.yaml -o json 2>/dev/null | grep -q '"warnings": \[\]' ||
  fail "autoscale simulate: no empty warnings array"
[ $fails -eq 0 ]
