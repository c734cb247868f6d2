#!/usr/bin/env bash
# Scenario: one small cluster per kube-scheduler plugin (SPEC 2.5), each run
# through `berth kube schedule`: the node chosen for every pod (table), exit
# code, and in `-o json --detail all` (SPEC 6.3) the feasible nodes, filter reasons and
# plugin scores computed by hand (the computation is next to each number).
# Every scenario also runs with --reference and must give identical JSON;
# the default JSON (score, feasibleCount, reasons, top) must agree with it.
# Inputs: tests/scenarios/kube/*.yaml. JSON checks need python3; without it
# they are skipped with a message (node choices are still checked).
set -u
BERTH=${BERTH:-build/berth}
D=tests/scenarios/kube
fails=0
checks=0
skipped=0
HAVE_PY=0
command -v python3 >/dev/null 2>&1 && HAVE_PY=1
[ $HAVE_PY = 1 ] || echo "note: python3 not found: JSON score checks are skipped"

fail() { echo "FAIL [$SCN] $*"; fails=$((fails + 1)); }

# sched RC FILE [ARGS...]: runs the table and the JSON output (and JSON with
# --reference); both must exit RC. Sets T (table) and J (json).
sched() {
  local want=$1
  shift
  SCN="$*"
  T=$("$BERTH" kube schedule "$@" 2>&1)
  local rc=$?
  [ $rc -eq "$want" ] || fail "table: exit $rc, expected $want: $(echo "$T" | head -5)"
  J=$("$BERTH" kube schedule "$@" -o json --detail all 2>&1)
  rc=$?
  [ $rc -eq "$want" ] || fail "json: exit $rc, expected $want"
  local R
  R=$("$BERTH" kube schedule "$@" -o json --detail all --reference 2>&1)
  [ "$J" = "$R" ] || fail "--reference gives different JSON: $(diff <(echo "$J") <(echo "$R") | head -10)"
  # the default JSON (SPEC 6.3): the same with --reference, and its score,
  # feasibleCount, reasons and top agree with the --detail all JSON
  local DJ DR
  DJ=$("$BERTH" kube schedule "$@" -o json 2>&1)
  DR=$("$BERTH" kube schedule "$@" -o json --reference 2>&1)
  [ "$DJ" = "$DR" ] || fail "--reference gives a different default JSON"
  [ $HAVE_PY = 1 ] || return 0
  local bad
  bad=$(python3 - "$J" "$DJ" <<'PY'
import json, sys
full, dflt = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert len(full["pods"]) == len(dflt["pods"])
for a, d in zip(full["pods"], dflt["pods"]):
    n = a["name"]
    for k in ("feasible", "filtered", "scores"):
        if k in d: print(n, "default JSON has", k)
    for k, v in d.items():
        if a.get(k) != v: print(n, "field", k, "differs from --detail all")
    if d["feasibleCount"] != len(a["feasible"]): print(n, "feasibleCount", d["feasibleCount"])
    if d["node"] and not d["victims"] and a["scores"] and d["score"] != a["scores"][d["node"]]["total"]:
        print(n, "score", d["score"])
    # top: the chosen node, then the best totals, at most 3, as in scores
    want = sorted(a["scores"].items(), key=lambda kv: (-kv[1]["total"], kv[0]))
    if d["node"] in a["scores"] and not d["victims"]:
        want = [kv for kv in want if kv[0] == d["node"]] + [kv for kv in want if kv[0] != d["node"]]
    want = [{"node": k, "total": v["total"], "plugins": v["plugins"]} for k, v in want[:3]]
    if d["top"] != want: print(n, "top", d["top"], "want", want)
    # reasons: each rejected node counted at least once; texts from filtered
    texts = {r for rs in a["filtered"].values() for r in rs}
    if sum(d["reasons"].values()) < len(a["filtered"]): print(n, "reasons count too few", d["reasons"])
    for r in d["reasons"]:
        if r not in texts and "[NodeAffinity]" not in r and not d.get("message", "").endswith(r + "."):
            print(n, "reason", r, "not in filtered")
PY
)
  [ -z "$bad" ] || fail "default JSON: $bad"
}

# node POD WANT: the table's NODE column for default/POD
node() {
  checks=$((checks + 1))
  local got
  got=$(echo "$T" | awk -v p="default/$1" '$1 == p {print $2}')
  [ "$got" = "$2" ] || fail "pod $1: node '$got', expected '$2'"
}

# jcheck LABEL PYEXPR WANT: PYEXPR is evaluated with d = the JSON and
# pod(name) = that pod's object; its str() must equal WANT.
jcheck() {
  checks=$((checks + 1))
  if [ $HAVE_PY = 0 ]; then
    skipped=$((skipped + 1))
    return
  fi
  local got
  got=$(echo "$J" | python3 -c "
import json, sys
d = json.load(sys.stdin)
def pod(n): return [p for p in d['pods'] if p['name'] == n][0]
def sc(n, node, plugin): return pod(n)['scores'][node]['plugins'][plugin]
def tot(n, node): return pod(n)['scores'][node]['total']
def filt(n, node): return '|'.join(pod(n)['filtered'].get(node, []))
def feas(n): return ','.join(pod(n)['feasible'])
v = $2
print('null' if v is None else v)
" 2>&1)
  [ "$got" = "$3" ] || fail "$1: got '$got', expected '$3'"
}
score() { jcheck "pod $1 node $2 $3 score" "sc('$1', '$2', '$3')" "$4"; }
total() { jcheck "pod $1 node $2 total" "tot('$1', '$2')" "$3"; }
feasible() { jcheck "pod $1 feasible" "feas('$1')" "$2"; }
filtered() { jcheck "pod $1 node $2 filter reasons" "filt('$1', '$2')" "$3"; }
message() {
  checks=$((checks + 1))
  local got
  got=$(echo "$T" | awk -v p="default/$1" '$1 == p' | sed 's/.*  0\//0\//')
  [ "$got" = "$2" ] || fail "pod $1: table message '$got', expected '$2'"
  jcheck "pod $1 JSON message" "pod('$1').get('message')" "$2"
}

UNS="node(s) were unschedulable"
TAINT="node(s) had untolerated taint"
NAFF="node(s) didn't match Pod's node affinity/selector"
PORTS="node(s) didn't have free ports for the requested pod ports"

# ---- NodeUnschedulable ----------------------------------------------------
sched 0 $D/unschedulable-node.yaml
node plain n2
feasible plain n2
# a cordoned node also carries the node.kubernetes.io/unschedulable taint
# (kubectl cordon): every rejecting plugin is listed, in plugin order
filtered plain n1 "$UNS|$TAINT {node.kubernetes.io/unschedulable: }"
node tolerant n1                       # tolerates the cordon, selects disk=ssd
feasible tolerant n1
filtered tolerant n2 "$NAFF"
# a single feasible node is chosen without scoring, but scores are reported
score plain n2 TaintToleration 100     # no PreferNoSchedule taints: max 0, reverse -> 100
# NodeResourcesFit LeastAllocated: cpu (4000-100)*100/4000 = 97 (97.5),
# memory (8192Mi-128Mi)*100/8192Mi = 98 (98.4); (97+98)/2 = 97
score plain n2 NodeResourcesFit 97
# Balanced: |100/4000 - 128/8192| / 2 = |0.025-0.015625|/2 = 0.0046875 -> 99.53 -> 99
score plain n2 NodeResourcesBalancedAllocation 99
# total = 3*100 + 2*0 + 1*97 + 2*0 + 2*0 + 1*99 + 1*0 = 496
total plain n2 496

# ---- NodeName: bound pods are not scheduled, their requests count ---------
sched 0 $D/nodename.yaml
node pending n2
node busy-1 ""                           # bound: not in the output
node elsewhere ""
jcheck "pods reported" "len(d['pods'])" 1
feasible pending n2
filtered pending n1 "Insufficient cpu"   # 2000 > 4000 - 3000

# ---- TaintToleration --------------------------------------------------------
sched 0 $D/taints.yaml
node a t-clean
feasible a t-clean,t-prefer,t-prefer2
filtered a t-gpu "$TAINT {sku: gpu}"
filtered a t-exec "$TAINT {dedicated: infra}"
# untolerated PreferNoSchedule counts: t-clean 0, t-prefer 1, t-prefer2 2;
# max 2, reverse: 100 - 100*c/2 -> 100, 50, 0
score a t-clean TaintToleration 100
score a t-prefer TaintToleration 50
score a t-prefer2 TaintToleration 0
# b tolerates sku=gpu:NoSchedule and spot (Exists, any effect): counts
# t-gpu 0, t-prefer 0, t-prefer2 1 (flaky), t-clean 0 -> 100, 100, 0, 100
node b t-gpu                           # t-gpu and t-prefer tie (both empty): lowest name
feasible b t-clean,t-gpu,t-prefer,t-prefer2
score b t-gpu TaintToleration 100
score b t-prefer TaintToleration 100
score b t-prefer2 TaintToleration 0
jcheck "b: t-gpu and t-prefer tie" "tot('b', 't-gpu') == tot('b', 't-prefer')" True
# d: sku=gpu only for NoExecute does not tolerate the NoSchedule taint;
# dedicated Exists (empty effect) tolerates dedicated=infra:NoExecute
node d t-exec
filtered d t-gpu "$TAINT {sku: gpu}"
feasible d t-clean,t-exec,t-prefer,t-prefer2
# e: operator "" is Equal: sku=gpu:NoSchedule tolerated (the sku=cpu one
# tolerates nothing), spot=true for every effect; t-prefer2 keeps flaky
feasible e t-clean,t-gpu,t-prefer,t-prefer2
filtered e t-exec "$TAINT {dedicated: infra}"
score e t-prefer TaintToleration 100
score e t-prefer2 TaintToleration 0
node e t-prefer                          # the emptiest of the nodes without untolerated taints

# ---- NodeAffinity -----------------------------------------------------------
sched 1 $D/nodeaffinity.yaml
node req a1                             # a1 and a3 tie: lowest name
feasible req a1,a3                      # a2 disk=hdd, a4 gen=x (Gt unparsable)
filtered req a2 "$NAFF"
filtered req a4 "$NAFF"
node sel a4                             # a1 already has req
feasible sel a1,a4
node pref a2
# preferred raw: a1 disk 30 + gen 3<6 5 = 35; a2 10 + 30 + 5 = 45; a3 0
# (gen 7); a4 0 (gen x: Lt false). max 45: a1 100*35/45 = 77 (77.7), a2 100
score pref a1 NodeAffinity 77
score pref a2 NodeAffinity 100
score pref a3 NodeAffinity 0
score pref a4 NodeAffinity 0
node empty-term "<none>"
message empty-term "0/4 nodes are available: 4 $NAFF."

# ---- NodeAffinity PreFilter: matchFields metadata.name narrows the nodes ----
sched 1 $D/prefilter-names.yaml
node ds-b "<none>"
message ds-b "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]."
node ds-c c
feasible ds-c c
node two-terms a                        # terms ORed: b (full) or a
feasible two-terms a
node nowhere "<none>"
message nowhere "0/3 nodes are available: 3 node(s) didn't satisfy plugin(s) [NodeAffinity]."

# ---- NodeAffinity: a profile's addedAffinity; values that do not parse ----
# added-affinity-config.yaml: default-scheduler enforces pool In [apps] and
# prefers zone z2 (10); spot-scheduler prefers lifecycle=spot (50).
ENF="node(s) didn't match scheduler-enforced node affinity"
sched 1 $D/added-affinity.yaml --config $D/added-affinity-config.yaml --strict
node web app-b                          # app-b and app-c tie on the added z2 preference
feasible web app-a,app-b,app-c
filtered web sys-1 "$ENF"
score web app-a NodeAffinity 0          # raw a 0, b 10, c 10: max 10
score web app-b NodeAffinity 100
score web app-c NodeAffinity 100
node web-spot app-c                     # the same spec, spot-scheduler: sys-1 allowed
feasible web-spot app-a,app-b,app-c,sys-1
score web-spot app-c NodeAffinity 100   # raw c 50, the others 0
score web-spot app-b NodeAffinity 0
node zone-z1 app-a
filtered zone-z1 sys-1 "$ENF"           # the added selector is checked first
filtered zone-z1 app-b "$NAFF"
node zone-z1-spot sys-1                 # same nodeSelector, spot-scheduler: sys-1 is emptier
feasible zone-z1-spot app-a,sys-1
node pinned "<none>"
message pinned "0/4 nodes are available: 1 $ENF, 3 $NAFF."
# a required term whose NotIn value is no label value matches nothing (were
# it parsed it would match every node): only the gen > 4 term counts
node bad-req app-b
feasible bad-req app-b,app-c
filtered bad-req app-a "$NAFF"
# a preferred term whose Lt value is no integer: PreScore fails (3 feasible)
PRE='running PreScore plugin "NodeAffinity": [0].matchExpressions[0].values[0]: Invalid value: "x": for '"'Gt', 'Lt'"' operators, the value must be an integer'
node bad-pref "<none>"
feasible bad-pref app-a,app-b,app-c
jcheck "bad-pref message" "pod('bad-pref')['message']" "$PRE"
jcheck "bad-pref: no scores" "pod('bad-pref')['scores']" "{}"
checks=$((checks + 1))
[ "$(echo "$T" | awk '$1 == "default/bad-pref"' | sed 's/.*  running/running/')" = "$PRE" ] ||
  fail "bad-pref: table message: $(echo "$T" | grep bad-pref)"
node bad-pref-one app-a                 # one feasible node: chosen without PreScore
# the table (pod-class fast path) equals the reference
checks=$((checks + 1))
TR=$("$BERTH" kube schedule $D/added-affinity.yaml --config $D/added-affinity-config.yaml --reference 2>&1)
[ "$T" = "$TR" ] || fail "--reference table differs: $(diff <(echo "$T") <(echo "$TR") | head -6)"
# the example: web-1 prefers eu-1b (added, 20), report-1 spot (batch-scheduler)
sched 1 examples/kube/added-affinity.yaml --strict
jcheck "example web-1" "pod('web-1')['node']" apps-2
jcheck "example report-1" "pod('report-1')['node']" spot-1
jcheck "example node-agent" "pod('node-agent')['message']" "0/4 nodes are available: 1 $ENF, 3 $NAFF."

# ---- NodePorts --------------------------------------------------------------
sched 0 $D/nodeports.yaml
node web p3                             # p1 (0.0.0.0) and p2 (10.0.0.1 vs 0.0.0.0) conflict
feasible web p3
filtered web p1 "$PORTS"
filtered web p2 "$PORTS"
node web-ip p2                          # p3 now holds web's 8080/TCP on 0.0.0.0
feasible web-ip p2
filtered web-ip p3 "$PORTS"

# ---- NodeResourcesFit: filter reasons, LeastAllocated ----------------------
sched 0 $D/fit.yaml
node big f4
feasible big f4
filtered big f1 "Insufficient cpu"                       # 3000 > 2000
filtered big f2 "Insufficient memory"                    # 3Gi > 2Gi
filtered big f3 "Too many pods"                          # 1 + 1 > 1
filtered big f5 "Insufficient cpu|Insufficient memory"   # both reported
# f4: cpu (4000-3000)*100/4000 = 25; memory (8Gi-3Gi)*100/8Gi = 62 (62.5);
# (25+62)/2 = 43 (43.5)
score big f4 NodeResourcesFit 43
# Balanced: |0.75 - 0.375| / 2 = 0.1875 -> 81.25 -> 81
score big f4 NodeResourcesBalancedAllocation 81
node tiny f1
feasible tiny f1,f2,f4,f5
filtered tiny f3 "Too many pods"
# tiny has no requests: scored as 100m cpu, 200Mi memory.
# f1: cpu 1900*100/2000 = 95; mem (4096-200)*100/4096 = 95 (95.1); 95
score tiny f1 NodeResourcesFit 95
# f2: cpu 3900*100/4000 = 97 (97.5); mem 1848*100/2048 = 90 (90.2); 187/2 = 93
score tiny f2 NodeResourcesFit 93
# f4 (big's 3000m/3Gi counted): cpu 900*100/4000 = 22; mem 4920*100/8192 = 60; 41
score tiny f4 NodeResourcesFit 41
# f5: cpu 900*100/1000 = 90; mem 824*100/1024 = 80 (80.4); 85
score tiny f5 NodeResourcesFit 85
score tiny f1 NodeResourcesBalancedAllocation 0   # every plain request is 0: skipped
total tiny f1 395                                  # 3*100 + 95

# ---- NodeResourcesFit strategies (--config) --------------------------------
# m1 holds 2 cpu / 4Gi; newcomer asks 1 cpu / 1Gi.
sched 0 $D/alloc.yaml
node newcomer m2
# LeastAllocated m1: cpu 1000*100/4000 = 25; mem 3Gi*100/8Gi = 37 (37.5); 62/2 = 31
score newcomer m1 NodeResourcesFit 31
# m2: cpu 75; mem 7*100/8 = 87 (87.5); 162/2 = 81
score newcomer m2 NodeResourcesFit 81
sched 0 $D/alloc.yaml --config $D/alloc-config.yaml
node newcomer m1
# MostAllocated, cpu weight 2, memory 1. m1: cpu 3000*100/4000 = 75;
# mem 5*100/8 = 62 (62.5); (75*2 + 62)/3 = 212/3 = 70 (70.7)
score newcomer m1 NodeResourcesFit 70
# m2: cpu 25; mem 12 (12.5); (50 + 12)/3 = 20 (20.7)
score newcomer m2 NodeResourcesFit 20
sched 0 $D/alloc.yaml --config $D/alloc-config.yaml --profile ratio
node newcomer m1
# RequestedToCapacityRatio, shape (0,0) (80,100) (100,20), cpu 3, memory 2.
# m1: cpu p = 3000*100/4000 = 75 -> 0 + 100*75/80 = 93 (93.75);
#     mem p = 5*100/8 = 62 -> 100*62/80 = 77 (77.5);
#     round((93*3 + 77*2)/5) = round(433/5 = 86.6) = 87
score newcomer m1 NodeResourcesFit 87
# m2: cpu p = 25 -> 2500/80 = 31; mem p = 12 -> 1200/80 = 15;
#     round((31*3 + 15*2)/5) = round(123/5 = 24.6) = 25
score newcomer m2 NodeResourcesFit 25

# ---- NodeResourcesBalancedAllocation ---------------------------------------
sched 0 $D/balanced.yaml
node newcomer b1
# b1: cpu 1/4 = 0.25, mem 4/8 = 0.5: std 0.125 -> 87.5 -> 87
score newcomer b1 NodeResourcesBalancedAllocation 87
# b2 (memory-only pod: plain cpu 0, mem 2Gi): cpu 0.25, mem 6/8 = 0.75:
# std 0.25 -> 75
score newcomer b2 NodeResourcesBalancedAllocation 75
# Fit uses the scoring defaults: b2's memory-only pod counts 100m cpu.
# b1: cpu 3000*100/4000 = 75; mem 4*100/8 = 50; 125/2 = 62
score newcomer b1 NodeResourcesFit 62
# b2: cpu (4000-1100)*100/4000 = 72 (72.5); mem 2*100/8 = 25; 97/2 = 48
score newcomer b2 NodeResourcesFit 48

# ---- PodTopologySpread ------------------------------------------------------
sched 0 $D/spread.yaml
# DoNotSchedule over zones: counts z1 3, z2 1, z3 0; min 0; skew with the
# pod itself: z1 4, z2 2, z3 1 <= 1; nozone lacks the key
node spread-hard z3-a
feasible spread-hard z3-a
filtered spread-hard z1-a "node(s) didn't match pod topology spread constraints"
filtered spread-hard z2-a "node(s) didn't match pod topology spread constraints"
filtered spread-hard nozone "node(s) didn't match pod topology spread constraints (missing required label)"
# ScheduleAnyway over zones (z3 now 1): nozone ignored; 3 zones among the
# other candidates: w = ln(3+2) = 1.609; raw z1 round(3*1.609 = 4.83) = 5,
# z2 round(1.609) = 2, z3 2; max 5, min 2: 100*(7-s)/5 -> z1 40, z2 100, z3 100
node spread-soft z2-a                    # z2-a and z3-a tie: lowest name
score spread-soft z1-a PodTopologySpread 40
score spread-soft z1-b PodTopologySpread 40
score spread-soft z2-a PodTopologySpread 100
score spread-soft z3-a PodTopologySpread 100
score spread-soft nozone PodTopologySpread 0
jcheck "spread-soft: z2-a and z3-a tie" "tot('spread-soft', 'z2-a') == tot('spread-soft', 'z3-a')" True
# ScheduleAnyway over hostnames (app=web on z1-a 2, z1-b 1, z2-a 2, z3-a 1,
# nozone 1): 5 candidates: w = ln(5+2) = 1.946; raw 2 -> round(3.89) = 4,
# 1 -> round(1.95) = 2; max 4, min 2: 100*(6-s)/4 -> 50 and 100
score spread-host z1-a PodTopologySpread 50
score spread-host z2-a PodTopologySpread 50
score spread-host z1-b PodTopologySpread 100
score spread-host nozone PodTopologySpread 100
node spread-host nozone                  # nozone, z1-b, z3-a tie: lowest name

# ---- InterPodAffinity -------------------------------------------------------
sched 0 $D/interpod.yaml
node web-1 i2                            # i1 holds cache-0 (counts 100m/200Mi for Fit)
feasible web-1 i1,i2
filtered web-1 i3 "node(s) didn't match pod affinity rules"
filtered web-1 i4 "node(s) didn't match pod affinity rules"
node web-2 i1
feasible web-2 i1,i3
filtered web-2 i2 "node(s) didn't match pod anti-affinity rules"
filtered web-2 i4 "node(s) didn't satisfy existing pods anti-affinity rules"
# preferred affinity 50 to app=cache per zone: i1 (z1) 50, i3 0 -> 100, 0
score web-2 i1 InterPodAffinity 100
score web-2 i3 InterPodAffinity 0
# cache-1: z1 gets +1 (web-1's required affinity, hardPodAffinityWeight 1)
# and +50 (web-2's preferred affinity) = 51; z3 +1 (own preferred to
# app=guard); z2 0. min 0, max 51: (int)(100*(s-0)/51):
# i1, i2 100; i4 100/51 = 1 (1.96); i3 0
score cache-1 i1 InterPodAffinity 100
score cache-1 i2 InterPodAffinity 100
score cache-1 i4 InterPodAffinity 1
score cache-1 i3 InterPodAffinity 0
node cache-1 i2

# ---- ImageLocality ----------------------------------------------------------
sched 0 $D/images.yaml
node app im2
# app:v1 500Mi on 2 of 4 nodes -> 250Mi; side:v1 300Mi on 1 of 4 -> 75Mi.
# Clamp to [23Mi, 1000Mi * 2 containers]; 100*(sum-23Mi)/(2000Mi-23Mi):
# im1 250Mi: 22700/1977 = 11 (11.48); im2 325Mi: 30200/1977 = 15 (15.28); im3 0
score app im1 ImageLocality 11
score app im2 ImageLocality 15
score app im3 ImageLocality 0

# ---- Queue order ------------------------------------------------------------
sched 1 $D/queue.yaml
node urgent q1                           # priority 1000 first
node early q2                            # then the earlier creationTimestamp
node late "<none>"
jcheck "queue order in the output" "','.join(p['name'] for p in d['pods'])" "urgent,early,late"
message late "0/2 nodes are available: 2 Insufficient cpu."
# mixed: a 10:00, b no timestamp, c 05:00 (input order a, b, c). c must be
# queued before a, so a (the latest) cannot get the only node.
sched 1 $D/queue-mixed.yaml
jcheck "queue order with a missing timestamp (last)" "','.join(p['name'] for p in d['pods'])" "c,a,b"
jcheck "c (05:00) queued before a (10:00)" "[p['name'] for p in d['pods']].index('c') < [p['name'] for p in d['pods']].index('a')" True
checks=$((checks + 1))
[ "$(echo "$T" | awk '$1 == "default/a" {print $2}')" = "<none>" ] || fail "pod a (created last of the timestamped pods) got the only node"

# ---- The unschedulable message (kube-scheduler's FitError format) -----------
sched 1 $D/unschedulable-message.yaml
node too-big "<none>"
message too-big "0/5 nodes are available: 2 $TAINT {dedicated: gpu}, 3 Insufficient cpu."
jcheck "too-big node" "pod('too-big')['node']" null
feasible too-big ""
filtered too-big u1 "Insufficient cpu"
filtered too-big u4 "$TAINT {dedicated: gpu}"
jcheck "too-big scores" "pod('too-big')['scores']" "{}"
sched 1 $D/unschedulable-many.yaml
# sorted as strings: "1 Insufficient memory" < "11 Insufficient cpu" < "2 node(s)..."
message wide "0/13 nodes are available: 1 Insufficient memory, 11 Insufficient cpu, 2 $UNS."
filtered wide n11 "Insufficient cpu|Insufficient memory"
filtered wide n12 "$UNS"

# ---- VolumeZone: pods -> PVCs -> zonal PVs (examples/kube/volume-zone.yaml) --
VZ="node(s) had no available volume zone"
sched 1 examples/kube/volume-zone.yaml --strict
node web za-1                            # no volume: the emptiest node
node db-0 zb-1                           # PV in eu-1b
feasible db-0 zb-1
filtered db-0 za-1 "$VZ"
node cache zc-1                          # PV zone set "eu-1b__eu-1c": zb-1 or zc-1
feasible cache zb-1,zc-1
node legacy zc-1                         # beta failure-domain labels match GA node labels
feasible legacy zc-1
node scratch za-1                        # unbound claim: not constrained
feasible scratch za-1,zb-1,zc-1
node far "<none>"
message far "0/3 nodes are available: 3 $VZ."
# a missing claim or volume is VolumeZone's PreFilter rejection: only its message
node lost "<none>"
message lost "0/3 nodes are available: persistentvolumeclaim \"gone\" not found."
filtered lost zb-1 "persistentvolumeclaim \"gone\" not found"
node orphan "<none>"
message orphan "0/3 nodes are available: persistentvolume \"pv-gone\" not found."

[ $skipped -gt 0 ] && echo "note: $skipped JSON checks skipped (no python3)"
if [ $fails -gt 0 ]; then
  echo "kube plugin scenarios: $fails of $checks checks FAILED"
  exit 1
fi
echo "kube plugin scenarios OK ($checks checks)"
