#!/usr/bin/env bash
# Scenario: the `berth simulate` and `berth advise` command line (SPEC 6.2,
# 6.3). simulate -o json is valid JSON with the 6.3 keys at every level
# (checked with python3 when present, else by grep) and its VMs are listed
# in placement order; -o yaml works; --svg/--html write complete files, and
# a failing run (bad input) writes none and leaves an existing file alone;
# a capacity failure exits 1 naming the pool and keeps nothing, --partial
# keeps what fits and still exits 1; the same input gives the same output;
# --explain writes to stderr; `berth advise` prints max-fit counts that
# agree with the free NUMA cells and exits 1 with warnings, 0 without.
set -u
BERTH=${BERTH:-build/berth}
SEED=examples/nexus/seed-scenarios.yaml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
have_py=0
command -v python3 >/dev/null 2>&1 && have_py=1
[ $have_py -eq 1 ] || echo "note: python3 not found, JSON checked by grep only"

# ---- -o json ----
"$BERTH" simulate -o json "$SEED" >"$tmp/seed.json" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] || bad "simulate -o json: exit $rc: $(cat "$tmp/err")"
for k in '"clusters"' '"steps"' '"machines"' '"name"' '"status"' '"reason"' '"pools"' '"role"' \
         '"vmSkuName"' '"count"' '"placed"' '"vmsPerRack"' '"vms"' '"bareMetalMachineId"' \
         '"rack"' '"numaCell"' '"cells"' '"cpu"' '"memory"' '"usedCpu"' '"usedMemory"'; do
  grep -q "$k" "$tmp/seed.json" || bad "simulate -o json lacks key $k"
done
if [ $have_py -eq 1 ]; then
  python3 - "$tmp/seed.json" <<'EOF' || bad "simulate -o json: structure check failed"
import json, re, sys
d = json.load(open(sys.argv[1]))
def need(obj, keys, what):
    missing = [k for k in keys if k not in obj]
    if missing:
        sys.exit(f"{what} lacks {missing}")
need(d, ["clusters", "steps", "machines"], "top level")
assert isinstance(d["steps"], list) and len(d["steps"]) == 5, "5 steps expected"
names = [c["name"] for c in d["clusters"]]
assert names == ["A", "B", "C", "D", "E"], f"clusters in creation order: {names}"
total = 0
for c in d["clusters"]:
    need(c, ["name", "status", "reason", "pools"], "cluster " + c.get("name", "?"))
    assert c["status"] == "Succeeded", c["name"] + " " + c["status"]
    assert c["pools"][0]["role"] == "ControlPlane", "control plane first"
    for p in c["pools"]:
        need(p, ["name", "role", "vmSkuName", "count", "placed", "vmsPerRack", "vms"], "pool")
        assert p["role"] in ("ControlPlane", "Worker")
        assert p["placed"] == p["count"] == len(p["vms"]), p["name"]
        assert sum(p["vmsPerRack"].values()) == p["placed"]
        ords = []
        for v in p["vms"]:
            need(v, ["name", "bareMetalMachineId", "rack", "numaCell"], "vm")
            assert isinstance(v["numaCell"], int) and isinstance(v["rack"], str)
            assert v["bareMetalMachineId"].startswith("rack" + v["rack"] + "-"), v
            ords.append(int(re.search(r"-(\d+)$", v["name"]).group(1)))
        assert ords == sorted(ords), "vms not in placement order: %s" % ords
        total += len(p["vms"])
assert total == 215, f"215 VMs expected, got {total}"
assert len(d["machines"]) == 128
for m in d["machines"]:
    need(m, ["name", "rack", "cells"], "machine")
    for cl in m["cells"]:
        need(cl, ["cpu", "memory", "usedCpu", "usedMemory"], "cell")
        assert 0 <= cl["usedCpu"] <= cl["cpu"] and 0 <= cl["usedMemory"] <= cl["memory"]
EOF
fi

# ---- -o yaml ----
"$BERTH" simulate -o yaml "$SEED" >"$tmp/seed.out.yaml" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] || bad "simulate -o yaml: exit $rc"
for k in 'clusters:' 'bareMetalMachineId:' 'numaCell:' 'machines:' 'usedMemory:'; do
  grep -q "$k" "$tmp/seed.out.yaml" || bad "simulate -o yaml lacks $k"
done
[ "$(grep -c 'bareMetalMachineId:' "$tmp/seed.out.yaml")" -eq 215 ] || bad "-o yaml: not 215 VMs"

# ---- the same input gives the same output ----
"$BERTH" simulate -o json "$SEED" >"$tmp/seed2.json" 2>/dev/null
cmp -s "$tmp/seed.json" "$tmp/seed2.json" || bad "two runs of the same input differ"
"$BERTH" simulate -o json --tie-break random --seed 7 "$SEED" >"$tmp/r1.json" 2>/dev/null
"$BERTH" simulate -o json --tie-break random --seed 7 "$SEED" >"$tmp/r2.json" 2>/dev/null
cmp -s "$tmp/r1.json" "$tmp/r2.json" || bad "--tie-break random --seed 7 is not reproducible"

# ---- --svg / --html ----
"$BERTH" simulate "$SEED" --svg "$tmp/l.svg" --html "$tmp/l.html" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] || bad "simulate --svg --html: exit $rc"
[ -s "$tmp/l.svg" ] || bad "--svg wrote nothing"
[ -s "$tmp/l.html" ] || bad "--html wrote nothing"
grep -q '<svg' "$tmp/l.svg" && tail -c 200 "$tmp/l.svg" | grep -q '</svg>' || bad "SVG incomplete"
grep -qi '<html' "$tmp/l.html" && tail -c 200 "$tmp/l.html" | grep -qi '</html>' || bad "HTML incomplete"
grep -q 'rack1-bmm01' "$tmp/l.svg" || grep -q 'A-' "$tmp/l.svg" || bad "SVG shows no machine or VM"
ls "$tmp" | grep -q '\.tmp\.' && bad "temporary files left next to the pictures"
# a failing run writes nothing and leaves an existing file alone
echo OLD >"$tmp/keep.svg"
"$BERTH" simulate tests/bad/unknown-kind.yaml --svg "$tmp/keep.svg" --html "$tmp/new.html" \
  >/dev/null 2>&1
rc=$?
[ $rc -eq 2 ] || bad "bad input with --svg: exit $rc"
[ "$(cat "$tmp/keep.svg")" = OLD ] || bad "bad input overwrote an existing --svg file"
[ -e "$tmp/new.html" ] && bad "bad input created the --html file"
# an unwritable target: exit 3 (internal/output error), no stray files
"$BERTH" simulate "$SEED" --svg "$tmp/no/such/dir/x.svg" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -ne 0 ] && [ $rc -lt 128 ] || bad "unwritable --svg: exit $rc"

# ---- capacity failure: all-or-nothing, then --partial ----
cat >"$tmp/full.yaml" <<'EOF'
apiVersion: berth.io/v1
kind: Site
metadata: {name: small}
spec:
  racks: 2
  machinesPerRack: 2
  machine: {numaCells: 2, cell: {cpu: 48, memory: 224Gi}}
---
apiVersion: networkcloud.azure.com/v1
kind: KubernetesCluster
metadata: {name: fits}
spec:
  controlPlaneNodeConfiguration: {count: 1, vmSkuName: NC_G2_8_v1}
  initialAgentPoolConfigurations:
  - {name: small, count: 2, vmSkuName: NC_G2_8_v1}
---
apiVersion: networkcloud.azure.com/v1
kind: KubernetesCluster
metadata: {name: greedy}
spec:
  controlPlaneNodeConfiguration: {count: 1, vmSkuName: NC_G2_8_v1}
  initialAgentPoolConfigurations:
  - {name: big-pool, count: 10, vmSkuName: NC_P46_224_v1}
EOF
"$BERTH" simulate "$tmp/full.yaml" >"$tmp/full.txt" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] || bad "capacity failure: exit $rc, expected 1"
grep -q 'big-pool' "$tmp/full.txt" || bad "capacity failure: the table does not name the pool"
grep -Eqi 'placed [0-9]+ of 10' "$tmp/full.txt" || bad "capacity failure: no 'placed N of 10' reason"
"$BERTH" simulate -o json "$tmp/full.yaml" >"$tmp/full.json" 2>/dev/null
rc=$?
[ $rc -eq 1 ] || bad "capacity failure -o json: exit $rc"
"$BERTH" simulate -o json --partial "$tmp/full.yaml" >"$tmp/partial.json" 2>/dev/null
rc=$?
[ $rc -eq 1 ] || bad "--partial capacity failure: exit $rc, expected 1"
if [ $have_py -eq 1 ]; then
  python3 - "$tmp/full.json" "$tmp/partial.json" <<'EOF' || bad "capacity failure JSON check failed"
import json, sys
full, part = (json.load(open(p)) for p in sys.argv[1:3])
def cl(d, n): return next(c for c in d["clusters"] if c["name"] == n)
g = cl(full, "greedy")
assert g["status"] == "Failed", g["status"]
assert "big-pool" in g["reason"], g["reason"]
assert all(p["placed"] == 0 and p["vms"] == [] for p in g["pools"]), "all-or-nothing kept VMs"
assert cl(full, "fits")["status"] == "Succeeded"
used = sum(c["usedCpu"] for m in full["machines"] for c in m["cells"])
assert used == 3 * 2, f"only 'fits' (3 x 2 vCPU) may use capacity, used {used}"
g = cl(part, "greedy")
assert g["status"] == "Failed" and "big-pool" in g["reason"]
bp = next(p for p in g["pools"] if p["name"] == "big-pool")
assert 0 < bp["placed"] < 10 and len(bp["vms"]) == bp["placed"], bp["placed"]
assert g["pools"][0]["placed"] == 1, "partial keeps the control plane"
EOF
else
  grep -q '"Failed"' "$tmp/full.json" || bad "capacity failure JSON: no Failed status"
fi

# ---- empty collections are valid input ({}, [], availabilityZones: [] = any rack) ----
cat >"$tmp/empty.yaml" <<'EOF2'
apiVersion: berth.io/v1
kind: Site
metadata: {name: e, labels: {}}
spec:
  racks: 2
  machinesPerRack: 2
  machine: {numaCells: 2, cell: {cpu: 48, memory: 224Gi}}
  machines: []
---
apiVersion: networkcloud.azure.com/v1
kind: KubernetesCluster
metadata: {name: e, annotations: {}}
spec:
  controlPlaneNodeConfiguration: {count: 1, vmSkuName: NC_G12_56_v1, availabilityZones: []}
  initialAgentPoolConfigurations:
  - {name: pool-1, count: 2, vmSkuName: NC_G6_28_v1, availabilityZones: []}
EOF2
"$BERTH" simulate "$tmp/empty.yaml" >"$tmp/empty.out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] || bad "empty lists and maps: exit $rc: $(head -c 300 "$tmp/err")"
grep -q 'pool-1' "$tmp/empty.out" || bad "empty lists and maps: no table"

# ---- --explain ----
"$BERTH" simulate "$SEED" --explain A-pool-1-1 >"$tmp/ex.out" 2>"$tmp/ex.err"
rc=$?
[ $rc -eq 0 ] || bad "--explain: exit $rc"
grep -q 'A-pool-1-1' "$tmp/ex.err" || bad "--explain printed nothing about A-pool-1-1 on stderr"
"$BERTH" simulate "$SEED" >"$tmp/plain.out" 2>/dev/null
cmp -s "$tmp/ex.out" "$tmp/plain.out" || bad "--explain changed stdout"

# ---- advise ----
"$BERTH" advise "$SEED" >"$tmp/adv.txt" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] || bad "advise on the seed (it has warnings): exit $rc, expected 1"
grep -Eq 'NC_P46_224_v1 +[0-9]+' "$tmp/adv.txt" || bad "advise prints no max-fit count for NC_P46_224_v1"
grep -q 'PoolAvailabilityZones' "$tmp/adv.txt" || bad "advise: no zones warning for C/D"
"$BERTH" advise -o json "$SEED" >"$tmp/adv.json" 2>/dev/null
rc=$?
[ $rc -eq 1 ] || bad "advise -o json: exit $rc"
if [ $have_py -eq 1 ]; then
  python3 - "$tmp/adv.json" "$tmp/seed.json" "$tmp/adv.txt" <<'EOF' || bad "advise max-fit disagrees with the free cells"
import json, re, sys
adv = json.load(open(sys.argv[1]))
sim = json.load(open(sys.argv[2]))
txt = open(sys.argv[3]).read()
Gi = 1 << 30
# NC_P46_224_v1 needs 48 host vCPU and 224Gi in one cell: count free slots
slots = 0
for m in sim["machines"]:
    for c in m["cells"]:
        slots += min((c["cpu"] - c["usedCpu"]) // 48, (c["memory"] - c["usedMemory"]) // (224 * Gi))
fits = {e["vmSkuName"]: e["fits"] for e in adv["maxFit"]}
assert fits["NC_P46_224_v1"] == slots, (fits["NC_P46_224_v1"], slots)
m = re.search(r"^NC_P46_224_v1 +(\d+)", txt, re.M)
assert m and int(m.group(1)) == slots, "table and JSON disagree"
EOF
fi
cat >"$tmp/clean.yaml" <<'EOF'
apiVersion: berth.io/v1
kind: Site
metadata: {name: clean}
spec:
  racks: 4
  machinesPerRack: 4
  machine: {numaCells: 2, cell: {cpu: 48, memory: 224Gi}}
---
apiVersion: networkcloud.azure.com/v1
kind: KubernetesCluster
metadata: {name: only}
spec:
  controlPlaneNodeConfiguration: {count: 3, vmSkuName: NC_G12_56_v1}
  initialAgentPoolConfigurations:
  - {name: pool-1, count: 8, vmSkuName: NC_P46_224_v1}
EOF
"$BERTH" advise "$tmp/clean.yaml" >"$tmp/clean.txt" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] || bad "advise on a clean input: exit $rc, expected 0: $(cat "$tmp/clean.txt")"
# 32 cells - 8 XL - 3 cells holding a control-plane VM = 21
grep -Eq 'NC_P46_224_v1 +21( |$)' "$tmp/clean.txt" || bad "advise: 21 NC_P46_224_v1 should fit"
"$BERTH" advise --sku NC_G2_8_v1 "$tmp/clean.yaml" >"$tmp/one.txt" 2>/dev/null
grep -q 'NC_P46_224_v1' "$tmp/one.txt" && bad "advise --sku NC_G2_8_v1 lists other SKUs"
grep -q 'NC_G2_8_v1' "$tmp/one.txt" || bad "advise --sku NC_G2_8_v1 omits it"

if [ $fails -gt 0 ]; then
  echo "$fails problem(s)"
  exit 1
fi
echo "nexus CLI OK"
