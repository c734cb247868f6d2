#!/usr/bin/env bash
# Scenario: `berth simulate --workloads` with `--autoscaler` and the bare-metal
# `--advise-upgrade` (docs/nexus.md "The autoscaler's answer", "Bare-metal
# advice, continued"; docs/output.md 2.4) on examples/nexus/workloads:
# - karpenter and ocean: every upgrade batch that leaves pods pending gets an
#   answer whose sums are consistent (costPerHour = sum count x price,
#   windowCost = costPerHour x minutes / 60, the top-level windowCost their
#   sum, placed + left = pending) and the table shows the launches (the
#   launches themselves are checked against `autoscale plan` / the drift
#   path in tests/unit/test_crosslayer_buy.c);
# - the rack order advised is a permutation of the given one and never worse
#   (PDB breaches, then pods pending);
# - machines to add: with nodesToAdd extra worker nodes in the cluster no
#   upgrade batch leaves a pod pending, with one fewer some batch does;
# - the HTML page has the upgrade timeline with a lane per rack and the
#   pod-impact lane;
# - usage errors exit 2.
set -u
BERTH=${BERTH:-build/berth}
D=examples/nexus/workloads
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
sim() { "$BERTH" simulate "$D/site.yaml" "$@"; }

for kind in karpenter ocean; do
  sim --workloads "$D/core.yaml" --autoscaler $kind --autoscaler-config "core=$D/$kind.yaml" \
    -o json >"$tmp/$kind.json" 2>"$tmp/err" || bad "$kind: exit $?: $(cat "$tmp/err")"
  sim --workloads "$D/core.yaml" --autoscaler $kind --autoscaler-config "$D/$kind.yaml" \
    >"$tmp/$kind.txt" 2>/dev/null || bad "$kind table: exit $?"
  grep -q "^  launch   [0-9]* x " "$tmp/$kind.txt" || bad "$kind: no launch line in the table"
  grep -q "^Autoscaler ($kind): .* upgrade window cost \\$" "$tmp/$kind.txt" ||
    bad "$kind: no window cost line"
done
python3 - "$tmp/karpenter.json" "$tmp/ocean.json" <<'PY' || bad "autoscaler JSON checks failed"
import json, sys
for path, kind in ((sys.argv[1], "karpenter"), (sys.argv[2], "ocean")):
    d = json.load(open(path))
    assert d["autoscaler"]["kind"] == kind, d["autoscaler"]
    up = next(s for s in d["steps"] if s["kind"] == "runtime-upgrade")
    total, nodes, answered = 0.0, 0, 0
    for b in up["batches"]:
        for w in b["workloads"]:
            a = w["autoscaler"]
            assert w["minutes"] > 0, w["minutes"]
            per = sum(l["count"] * l["pricePerHour"] for l in a["launches"])
            assert abs(per - a["costPerHour"]) < 1e-9, (per, a)
            assert abs(a["windowCost"] - a["costPerHour"] * w["minutes"] / 60) < 1e-9, a
            assert a["nodes"] == sum(l["count"] for l in a["launches"]), a
            if w["podsPending"]:
                answered += 1
                assert a["podsPlaced"] + a["podsLeft"] == w["podsPending"], (a, w["podsPending"])
                assert a["nodes"] > 0, "%s: pods pending and nothing launched: %s" % (kind, a)
            else:
                assert a["nodes"] == 0 and a["launches"] == [], a
            total += a["windowCost"]
            nodes += a["nodes"]
    assert answered >= 3, answered
    assert abs(total - d["autoscaler"]["windowCost"]) < 1e-9, (total, d["autoscaler"])
    assert nodes == d["autoscaler"]["launchedNodes"], d["autoscaler"]
PY

# bare-metal advice
sim --workloads "$D/core.yaml" --workloads "edge=$D/edge.yaml" --advise-upgrade -o json \
  >"$tmp/adv.json" 2>/dev/null || bad "--advise-upgrade: exit $?"
sim --workloads "$D/core.yaml" --advise-upgrade >"$tmp/adv.txt" 2>/dev/null || bad "advice table: exit $?"
grep -q "^  rack order (upgrade-2404) " "$tmp/adv.txt" || bad "no rack order line"
grep -q "^  machines to add (core): " "$tmp/adv.txt" || bad "no machines line"
python3 - "$tmp/adv.json" >"$tmp/extra" <<'PY' || bad "advice JSON checks failed"
import json, sys
d = json.load(open(sys.argv[1]))
a = d["upgradeAdvice"]
ro = a["rackOrder"][0]
assert sorted(ro["racks"]) == sorted(ro["givenRacks"]) and len(ro["racks"]) == 3, ro
assert (ro["pdbBreaches"], ro["podsPending"]) <= (ro["givenPdbBreaches"], ro["givenPodsPending"]), ro
up = next(s for s in d["steps"] if s["kind"] == "runtime-upgrade")
given = sum(1 for b in up["batches"] for w in b["workloads"] if w["pdbsBelowMinimum"] > 0)
assert ro["givenPdbBreaches"] == given, (ro, given)
m = {x["cluster"]: x for x in a["machinesToAdd"]}
assert m["core"]["pool"] == "worker" and m["core"]["nodes"] >= 1 and m["core"]["machines"] >= 1, m
need = max(w["nodesToAdd"] for b in up["batches"] for w in b["workloads"]
           if w["cluster"] == "core" and w["podsPending"])
assert need == m["core"]["nodes"], (need, m)
print(need)
PY
# the rack-order trials restore the state: the phases are those of a run without advice
sim --workloads "$D/core.yaml" --workloads "edge=$D/edge.yaml" -o json >"$tmp/plain.json" 2>/dev/null
python3 - "$tmp/adv.json" "$tmp/plain.json" <<'PY' || bad "the advice changed the simulated phases"
import json, sys
a, p = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
def strip(d):
    for s in d["steps"]:
        for w in s["workloads"] + [w for b in s.get("batches", []) for w in b["workloads"]]:
            for k in ("nodesToAdd", "nodesToAddPool", "machinesToAdd"):
                w.pop(k, None)
    return d["steps"]
assert strip(a) == strip(p)
PY
need=$(cat "$tmp/extra")
# nodes like core-worker-1 (pool worker) that no VM backs: never taken down
python3 - "$D/core.yaml" "$tmp" "${need:-0}" <<'PY' || bad "could not write the extra-node inputs"
import copy, sys, yaml
src, out, need = sys.argv[1], sys.argv[2], int(sys.argv[3])
docs = list(yaml.safe_load_all(open(src)))
nodes = next(d for d in docs if d.get("kind") == "NodeList")
tmpl = next(n for n in nodes["items"] if n["metadata"]["name"] == "core-worker-1")
for k in (need, need - 1):
    dd = copy.deepcopy(docs)
    nl = next(d for d in dd if d.get("kind") == "NodeList")
    for i in range(k):
        n = copy.deepcopy(tmpl)
        n["metadata"]["name"] = "extra-%d" % (i + 1)
        n["metadata"].setdefault("labels", {})["kubernetes.io/hostname"] = "extra-%d" % (i + 1)
        nl["items"].append(n)
    yaml.safe_dump_all(dd, open("%s/core-%d.yaml" % (out, k), "w"))
PY
for k in "$need" $((need - 1)); do
  sim --workloads "core=$tmp/core-$k.yaml" -o json >"$tmp/with-$k.json" 2>/dev/null ||
    bad "run with $k extra nodes: exit $?"
done
python3 - "$tmp/with-$need.json" "$tmp/with-$((need - 1)).json" <<'PY' || bad "machines-to-add check failed"
import json, sys
def pending(p):
    d = json.load(open(p))
    up = next(s for s in d["steps"] if s["kind"] == "runtime-upgrade")
    return max(w["podsPending"] for b in up["batches"] for w in b["workloads"])
assert pending(sys.argv[1]) == 0, "nodesToAdd extra nodes still leave pods pending"
assert pending(sys.argv[2]) > 0, "one node fewer than nodesToAdd leaves nothing pending"
PY

# HTML: the upgrade timeline with its pod-impact lane
sim --workloads "$D/core.yaml" --advise-upgrade --html "$tmp/page.html" -q || bad "--html: exit $?"
grep -q "<h2>Upgrade timeline and pod impact</h2>" "$tmp/page.html" || bad "no timeline section"
grep -q 'class="xl-pod-lane" id="xl-pod-lane-' "$tmp/page.html" || bad "no pod-impact lane"
[ "$(grep -o '>rack [0-9]*</text>' "$tmp/page.html" | sort -u | wc -l)" -eq 3 ] || bad "not 3 rack lanes"
grep -q 'pods pending' "$tmp/page.html" || bad "no pending bars"
if command -v xmllint >/dev/null 2>&1; then
  sed -n '/<h2>Upgrade timeline/,/<\/svg>/p' "$tmp/page.html" | sed 1,2d >"$tmp/t.svg"
  xmllint --noout "$tmp/t.svg" 2>"$tmp/x" || bad "timeline SVG is not well-formed: $(head -3 "$tmp/x")"
fi

# usage errors
sim --workloads "$D/core.yaml" --autoscaler bogus --autoscaler-config "$D/ocean.yaml" >/dev/null 2>&1
[ $? -eq 2 ] || bad "--autoscaler bogus: want exit 2"
sim --workloads "$D/core.yaml" --autoscaler ocean >/dev/null 2>&1
[ $? -eq 2 ] || bad "--autoscaler without --autoscaler-config: want exit 2"
sim --workloads "$D/core.yaml" --autoscaler-config "$D/ocean.yaml" >/dev/null 2>&1
[ $? -eq 2 ] || bad "--autoscaler-config without --autoscaler: want exit 2"
sim --workloads "$D/core.yaml" --autoscaler ocean --autoscaler-config "$D/ocean.yaml" --advise-upgrade >/dev/null 2>&1
[ $? -eq 2 ] || bad "--advise-upgrade with --autoscaler: want exit 2"
sim --autoscaler ocean --autoscaler-config "$D/ocean.yaml" >/dev/null 2>&1
[ $? -eq 2 ] || bad "--autoscaler without --workloads: want exit 2"
sim --workloads "$D/core.yaml" --autoscaler karpenter --autoscaler-config "$D/ocean.yaml" >/dev/null 2>"$tmp/e1"
[ $? -eq 2 ] && grep -q "has no NodePool" "$tmp/e1" || bad "karpenter without NodePools: $(cat "$tmp/e1")"
sim --workloads "$D/core.yaml" --autoscaler ocean --autoscaler-config "edge=$D/ocean.yaml" >/dev/null 2>"$tmp/e2"
[ $? -eq 2 ] && grep -q "no --workloads file for cluster 'edge'" "$tmp/e2" || bad "config of another cluster: $(cat "$tmp/e2")"
sim --workloads "$D/core.yaml" --workloads "edge=$D/edge.yaml" --autoscaler ocean --autoscaler-config "edge=$D/ocean.yaml" >/dev/null 2>"$tmp/e3"
[ $? -eq 2 ] && grep -q "no --autoscaler-config file for cluster core" "$tmp/e3" || bad "cluster without config: $(cat "$tmp/e3")"

[ $fails -eq 0 ] || { echo "nexus_autoscaler: $fails failed"; exit 1; }
echo "nexus_autoscaler: ok"
