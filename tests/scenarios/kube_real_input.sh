#!/usr/bin/env bash
# Scenario: real kubectl output as input (SPEC 6.1, docs/kube-input.md "Real
# kubectl output"). examples/kube/real/ holds one small AKS cluster as
# `kubectl get nodes -o yaml`, `kubectl get all -A -o yaml`, `kubectl get
# nodes,pods,pdb,pc -A -o json` and `kubectl cluster-info dump` (typed lists
# whose items have no kind, back to back, with container log sections).
# Each loads as it is in `kube schedule` and gives the same decisions; kinds
# berth does not read are one "berth: skipped N KIND" line each on stderr
# (none with -q) and in the JSON's warnings, and errors with --strict; a
# bad field in a later document of a stream names its own line. Typed-list
# JSON streams of the disrupt, autoscale and fleet examples
# (tests/scenarios/real/, ConfigMaps, a Secret and a log section added)
# give the same tables as the examples, through the CLI and `berth serve`.
set -u
BERTH=${BERTH:-build/berth}
R=examples/kube/real
T=tests/scenarios/real
AT=2024-05-01T12:00:00Z
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
fails=0
checked=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

# run WANT-RC ARGS...: stdout in $tmp/out, stderr in $tmp/err
run() {
  local want=$1
  shift
  "$BERTH" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
  local rc=$?
  checked=$((checked + 1))
  [ $rc -eq "$want" ] || bad "berth $*: exit $rc, want $want: $(head -c 400 "$tmp/err")"
  if grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:' "$tmp/err"; then
    bad "berth $*: sanitizer report"; head -20 "$tmp/err"
  fi
}
has_err() { grep -qxF -- "$1" "$tmp/err" || bad "stderr lacks '$1': $(head -c 400 "$tmp/err")"; }
has_out() { grep -qF -- "$1" "$tmp/out" || bad "stdout lacks '$1': $(head -c 400 "$tmp/out")"; }
no_err() { grep -qF -- "$1" "$tmp/err" && bad "stderr has '$1'"; }

# ---- kubectl get nodes -o yaml + kubectl get all -A -o yaml ----
run 0 kube schedule $R/nodes.yaml $R/get-all.yaml
has_out "default/web-6f7c9d8b5-kq7wd"
has_out "1 of 1 pending pods scheduled"      # the Succeeded Job pod is not pending
cp "$tmp/out" "$tmp/get-all.table"
has_err "berth: skipped 1 HorizontalPodAutoscaler"
has_err "berth: skipped 1 CronJob (not expanded: berth places what runs now)"
for k in Pod Service DaemonSet ReplicaSet StatefulSet Node; do no_err "skipped 1 $k"; done
[ "$(grep -c 'skipped 1 CronJob' "$tmp/err")" = 1 ] || bad "CronJob warned more than once"
run 0 kube schedule -o json $R/nodes.yaml $R/get-all.yaml
has_out '"warnings": ['
has_out '"skipped 1 HorizontalPodAutoscaler"'
has_out '"skipped 1 CronJob (not expanded: berth places what runs now)"'
run 0 kube schedule -q $R/nodes.yaml $R/get-all.yaml
[ -s "$tmp/err" ] && bad "-q printed: $(head -c 200 "$tmp/err")"
run 2 kube schedule --strict $R/nodes.yaml $R/get-all.yaml
grep -qE "^berth: $R/get-all.yaml:[0-9]+:[0-9]+: items\[[0-9]+\]\.kind: unknown kind '" "$tmp/err" ||
  bad "--strict get-all: $(head -c 300 "$tmp/err")"
[ -s "$tmp/out" ] && bad "--strict get-all wrote to stdout"
run 0 kube size $R/get-all.yaml
has_out "default/db-0"
has_err "berth: skipped 1 HorizontalPodAutoscaler"

# ---- kubectl get nodes,pods,pdb,pc -A -o json ----
run 0 kube schedule $R/nodes-pods-pdb-pc.json
has_out "default/web-6f7c9d8b5-kq7wd"
has_out "1 of 1 pending pods scheduled"
for k in Node Pod PodDisruptionBudget; do no_err "skipped 3 $k"; done
run 0 disrupt plan $R/nodes-pods-pdb-pc.json --at $AT
run 0 autoscale plan $R/nodes-pods-pdb-pc.json --at $AT

# ---- kubectl cluster-info dump ----
run 0 kube schedule $R/cluster-info-dump.json
has_err "berth: skipped 3 Event"
# the same cluster, the same decisions as from get all (the pending pod's
# spreading comes from its Service and ReplicaSet, in both)
cmp -s "$tmp/out" "$tmp/get-all.table" ||
  bad "cluster-info dump and get all schedule differently: $(cat "$tmp/out")"
run 2 kube schedule --strict $R/cluster-info-dump.json
# the first EventList's first item: the line after its "items": [
ev=$(grep -n '"kind": "EventList"' $R/cluster-info-dump.json | head -1 | cut -d: -f1)
items=$(awk -v s="$ev" 'NR > s && /"items": \[/ { print NR; exit }' $R/cluster-info-dump.json)
grep -qF "$R/cluster-info-dump.json:$((items + 1)):9: items[0].kind: unknown kind 'Event'" "$tmp/err" ||
  bad "--strict dump: $(head -c 300 "$tmp/err") (want line $((items + 1)))"
# a bad quantity in the last PodList (a later document): its own line
ln=$(grep -n '"cpu": "500m"' $R/cluster-info-dump.json | tail -1 | cut -d: -f1)
sed "${ln}s/500m/5.0.0m/" $R/cluster-info-dump.json >"$tmp/dump.json"
col=$(sed -n "${ln}p" "$tmp/dump.json" | awk '{ print index($0, "\"5.0.0m\"") }')
run 2 kube schedule "$tmp/dump.json"
grep -qF "$tmp/dump.json:$ln:$col: items[2].spec.containers[0].resources.requests.cpu: invalid quantity '5.0.0m'" "$tmp/err" ||
  bad "bad field in a later document: $(head -c 300 "$tmp/err") (want line $ln, column $col)"
# a log section cut short
head -c -60 $R/cluster-info-dump.json >"$tmp/cut.json"
run 2 kube schedule "$tmp/cut.json"
grep -qE "cut.json:[0-9]+:1: container log section without" "$tmp/err" || bad "cut log: $(cat "$tmp/err")"

# ---- typed lists through disrupt, autoscale and fleet ----
# same_table WANT-RC EXAMPLE TYPED ARGS...: equal stdout, the two warnings
same_table() {
  local want=$1 ex=$2 ty=$3
  shift 3
  run "$want" "$@" "$ex"
  cp "$tmp/out" "$tmp/ex.out"
  run "$want" "$@" "$ty"
  cmp -s "$tmp/out" "$tmp/ex.out" || bad "$* $ty differs from $ex: $(diff "$tmp/ex.out" "$tmp/out" | head -5)"
  has_err "berth: skipped 2 ConfigMap"
  has_err "berth: skipped 1 Secret"
  run 2 "$@" --strict "$ty"
  grep -qF "unknown kind 'ConfigMap'" "$tmp/err" || bad "$* --strict $ty: $(head -c 300 "$tmp/err")"
}
same_table 0 examples/disrupt/consolidate.yaml $T/disrupt-consolidate.json disrupt plan --at $AT
same_table 1 examples/autoscale/scale-up.yaml $T/autoscale-scale-up.json autoscale plan --at $AT
same_table 1 examples/fleet/pickn-spread.yaml $T/fleet-pickn-spread.json fleet place --now $AT
same_table 0 examples/disrupt/simulate.yaml $T/disrupt-simulate.json disrupt simulate \
  --from 2024-05-01T23:58:00Z --to 2024-05-02T00:30:00Z
for c in "0 disrupt plan --at $AT $T/disrupt-consolidate.json" \
         "1 autoscale plan --at $AT $T/autoscale-scale-up.json" \
         "1 fleet place --now $AT $T/fleet-pickn-spread.json"; do
  run $c -o json
  has_out '"skipped 2 ConfigMap"'
  has_out '"skipped 1 Secret"'
done

# ---- berth serve: the stateless endpoints read the same documents ----
if command -v curl >/dev/null 2>&1; then
  "$BERTH" serve --listen 127.0.0.1:0 --db "$tmp/db" 2>"$tmp/log" &
  pid=$!
  port=
  for _ in $(seq 1 200); do
    port=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$tmp/log")
    [ -n "$port" ] && curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break
    kill -0 "$pid" 2>/dev/null || { bad "server exited: $(cat "$tmp/log")"; break; }
    sleep 0.05
  done
  post() { # PATH FILE CLI-ARGS...: 200 and the CLI's JSON
    local path=$1 file=$2
    shift 2
    local code
    code=$(curl -s -o "$tmp/http" -w '%{http_code}' -X POST --data-binary @"$file" \
      "http://127.0.0.1:$port$path")
    checked=$((checked + 1))
    [ "$code" = 200 ] || { bad "POST $path $file: $code $(head -c 300 "$tmp/http")"; return; }
    "$BERTH" "$@" "$file" -o json 2>/dev/null | tr -d ' \n' >"$tmp/cli"
    tr -d ' \n' <"$tmp/http" >"$tmp/http.c"
    cmp -s "$tmp/cli" "$tmp/http.c" || bad "POST $path $file differs from the CLI: $(head -c 300 "$tmp/http")"
  }
  if [ -n "$port" ]; then
    post /v1/kube/schedule $R/cluster-info-dump.json kube schedule
    grep -qF '"skipped 3 Event"' "$tmp/http" || bad "kube schedule over HTTP: no warnings"
    post "/v1/disrupt/plan?at=$AT" $T/disrupt-consolidate.json disrupt plan --at $AT
    post "/v1/autoscale/plan?at=$AT" $T/autoscale-scale-up.json autoscale plan --at $AT
    post "/v1/fleet/place?now=$AT" $T/fleet-pickn-spread.json fleet place --now $AT
  else
    bad "server not ready"
  fi
else
  echo "note: curl not found: berth serve checks skipped"
fi

if [ $fails -gt 0 ]; then
  echo "$fails problem(s) in $checked checks"
  exit 1
fi
echo "kube real input OK: $checked checks"
