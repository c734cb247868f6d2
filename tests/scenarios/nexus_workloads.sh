#!/usr/bin/env bash
# Scenario: `berth simulate --workloads` (docs/nexus.md "Workloads across the
# layers", docs/output.md): on examples/nexus/workloads, rack 1's re-image
# leaves StatefulSet db below its PDB (db-1's drain held by the PDB for the
# 10-minute limit, then forced), DaemonSet pods are left on their nodes and
# never moved or pending, the pool scaled to zero leaves its Deployment with
# nothing running, no pod is reported moved to a node of a VM that is down
# in that batch, a Node without a VM is a warning (JSON and stderr), the
# table has the Workloads section, --detail all lists more than the
# summary, runs are deterministic, and bad usage exits 2.
set -u
BERTH=${BERTH:-build/berth}
D=examples/nexus/workloads
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
run() { "$BERTH" simulate "$D/site.yaml" --workloads "$D/core.yaml" --workloads "edge=$D/edge.yaml" "$@"; }

run -o json >"$tmp/a.json" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] || bad "simulate --workloads -o json: exit $rc: $(cat "$tmp/err")"
grep -q "cluster core: 1 Node without a VM of the site (core-gpu-1)" "$tmp/err" ||
  bad "no stderr warning for core-gpu-1: $(cat "$tmp/err")"
run -o json 2>/dev/null >"$tmp/b.json"
cmp -s "$tmp/a.json" "$tmp/b.json" || bad "two runs differ"
run -o json --detail all 2>/dev/null >"$tmp/all.json"

if command -v python3 >/dev/null 2>&1; then
  python3 - "$tmp/a.json" "$tmp/all.json" <<'PY' || bad "JSON checks failed"
import json, sys
d = json.load(open(sys.argv[1]))
full = json.load(open(sys.argv[2]))
assert any("core-gpu-1" in w for w in d["warnings"]), d["warnings"]
assert [c["cluster"] for c in d["workloads"]] == ["core", "edge"], d["workloads"]
# VM -> rack from the estate (cluster core is never changed after its creation)
rack_of = {}
for c in d["clusters"]:
    for p in c["pools"]:
        for v in p["vms"]:
            rack_of[v["name"]] = v["rack"]
# the fixture's Nodes that do not carry their VM's name
vm_of = {"aks-worker-3": "core-worker-3", "edge-host-6": "core-worker-6"}
up = next(s for s in d["steps"] if s["kind"] == "runtime-upgrade")
keys = ["cluster", "nodes", "nodesDown", "clusterDeleted", "podsLost", "podsMoved", "podsForced",
        "podsPending", "podsRecovered", "daemonSetPodsLeft", "drainsBlocked",
        "workloadsBelowDesired", "pdbsBelowMinimum", "moved", "pending", "blocked",
        "belowDesired", "pdbs"]
seen_ds = 0
for b in up["batches"]:
    for w in b["workloads"]:
        for k in keys:
            assert k in w, (k, w)
        seen_ds += w["daemonSetPodsLeft"]
        for m in w["moved"] + w["pending"]:
            assert not m["name"].startswith(("node-exporter", "log-agent")), "DaemonSet pod moved: %s" % m
        for m in w["moved"]:
            vm = vm_of.get(m["to"], m["to"])
            assert rack_of.get(vm) != b["rack"], "pod %s moved to %s on rack %s, down in this batch" % (m["name"], m["to"], b["rack"])
assert seen_ds > 0, "no DaemonSet pod left on a drained node"
r1 = next(w for w in up["batches"][0]["workloads"] if w["cluster"] == "core")
assert up["batches"][0]["rack"] == "1"
assert {"workload": "StatefulSet/shop/db", "running": 1, "desired": 3} in r1["belowDesired"], r1["belowDesired"]
pdb = [p for p in r1["pdbs"] if p["name"] == "db"]
assert pdb and pdb[0]["healthy"] < pdb[0]["desired"], r1["pdbs"]
held = {h["name"]: h for h in r1["blocked"]}
assert "db-1" in held and "disruption budget" in held["db-1"]["reason"] and held["db-1"]["heldMinutes"] == 10, held
assert "ingest-0" in held and "do-not-disrupt" in held["ingest-0"]["reason"], held
assert any(p["name"] == "db-1" and p["forced"] for p in r1["pending"]), r1["pending"]
assert all("nodes are available" in p["reason"] for p in r1["pending"]), r1["pending"]
assert r1["drainsBlocked"] == len(r1["blocked"]) and r1["podsForced"] >= 2
# the pool scaled to zero: its Deployment has nothing running
z = next(s for s in d["steps"] if s["name"] == "edge-apps-to-zero")
e = z["workloads"][0]
assert e["cluster"] == "edge" and e["podsPending"] == 2, e
assert {"workload": "Deployment/web/portal", "running": 0, "desired": 2} in e["belowDesired"], e
# --detail all: never fewer entries, and the counts are the same
def lists(doc):
    n = 0
    for s in doc["steps"]:
        for w in s["workloads"] + [w for b in s.get("batches", []) for w in b["workloads"]]:
            n += len(w["moved"]) + len(w["pending"]) + len(w["blocked"])
    return n
assert lists(full) >= lists(d)
# existing simulate keys are untouched
for k in ("clusters", "steps", "machines"):
    assert k in d
PY
else
  grep -q '"belowDesired"' "$tmp/a.json" || bad "no belowDesired in JSON"
fi

# --advise-upgrade: the whole rack at once breaks db's PDB; the advice's
# value, checked by a run of the site with that maxUnavailable, breaks none
run -o json --advise-upgrade 2>/dev/null >"$tmp/adv.json" || bad "--advise-upgrade failed"
sed 's/updateStrategy: {strategyType: Rack, waitTimeMinutes: 15}/updateStrategy: {strategyType: Rack, waitTimeMinutes: 15, maxUnavailable: 1}/' \
  "$D/site.yaml" >"$tmp/site1.yaml"
grep -q "maxUnavailable: 1" "$tmp/site1.yaml" || bad "could not set maxUnavailable in the site copy"
"$BERTH" simulate "$tmp/site1.yaml" --workloads "$D/core.yaml" --workloads "edge=$D/edge.yaml" -o json \
  2>/dev/null >"$tmp/one.json" || bad "maxUnavailable 1 run failed"
if command -v python3 >/dev/null 2>&1; then
  python3 - "$tmp/adv.json" "$tmp/one.json" "$tmp/a.json" <<'PY' || bad "advice checks failed"
import json, sys
adv = json.load(open(sys.argv[1]))["upgradeAdvice"]
one, whole = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
def breaches(d):
    up = next(s for s in d["steps"] if s["kind"] == "runtime-upgrade")
    return sum(1 for b in up["batches"] for w in b["workloads"] if w["pdbsBelowMinimum"] > 0)
assert adv["maxUnavailable"] == 2 and adv["pdbBreaches"] == breaches(whole) > 0, adv
assert adv["safeMaxUnavailable"] == 1, adv
assert breaches(one) == 0, "maxUnavailable 1 still breaks a PDB"
PY
fi
"$BERTH" simulate "$D/site.yaml" --advise-upgrade >/dev/null 2>&1
[ $? -eq 2 ] || bad "--advise-upgrade without --workloads: want exit 2"

run >"$tmp/table" 2>/dev/null || bad "table run failed"
grep -q "^Workloads (the kube view of each step" "$tmp/table" || bad "no Workloads section"
grep -q "held     shop/db-1 on core-worker-4 for 10 min" "$tmp/table" || bad "table lacks the held drain"
grep -q "short    StatefulSet/shop/db: 1 of 3 running" "$tmp/table" || bad "table lacks the short StatefulSet"

# usage and input errors: exit 2
"$BERTH" simulate "$D/site.yaml" --workloads "$D/nothing.yaml" >/dev/null 2>"$tmp/e1"
[ $? -eq 2 ] || bad "missing workloads file: want exit 2"
"$BERTH" simulate "$D/site.yaml" --workloads "nope=$D/core.yaml" >/dev/null 2>"$tmp/e2"
[ $? -eq 2 ] && grep -q "no KubernetesCluster named 'nope'" "$tmp/e2" || bad "unknown cluster: $(cat "$tmp/e2")"
printf 'apiVersion: v1\nkind: NodeList\nitems:\n- metadata: {name: unrelated}\n' >"$tmp/n.yaml"
"$BERTH" simulate "$D/site.yaml" --workloads "$tmp/n.yaml" >/dev/null 2>"$tmp/e3"
[ $? -eq 2 ] && grep -q "no Node names a VM" "$tmp/e3" || bad "unguessable file: $(cat "$tmp/e3")"
"$BERTH" simulate "$D/site.yaml" --detail bogus >/dev/null 2>&1
[ $? -eq 2 ] || bad "--detail bogus: want exit 2"
"$BERTH" simulate "$D/site.yaml" --workloads >/dev/null 2>&1
[ $? -eq 2 ] || bad "--workloads without a value: want exit 2"

[ $fails -eq 0 ] || { echo "nexus_workloads: $fails failed"; exit 1; }
echo "nexus_workloads: ok"
