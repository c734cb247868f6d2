#!/usr/bin/env bash
# serve_hostile: `berth serve` under hostile load, on loopback only, with
# bounded counts and times. 400 connections from 10 loopback addresses
# sending one header byte a second cannot stop /healthz or an estate write
# from answering within a second, and are closed by --request-timeout; a
# slow body is cut the same way; the per-IP limit refuses the 65th
# connection of one address; a planner request over the objects or nodes x
# pods budget is a 413 / 422 naming the option; a full planner pool is a
# 503 with Retry-After while /healthz and estate reads and writes still
# answer within a second. tests/tools/slow_clients.c is the slow client.
# run-tests: alone (its asserts bound response times: nothing runs beside it)
set -u
BERTH=${BERTH:-build/berth}
tmp=$(mktemp -d)
pid=; bg=()
cleanup() {
  for b in "${bg[@]}"; do kill "$b" 2>/dev/null; done
  [ -n "$pid" ] && kill "$pid" 2>/dev/null
  wait 2>/dev/null; rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$tmp/log" ] && tail -5 "$tmp/log"; exit 1; }
cc -std=c11 -D_GNU_SOURCE -O1 -o "$tmp/slow" tests/tools/slow_clients.c || fail "cannot build the slow client"

. tests/lib/kubegen.sh   # gen_kube NODES PODS

"$BERTH" serve --listen 127.0.0.1:0 --db "$tmp/db" --request-timeout 3 --planner-threads 1 \
  --planner-queue 1 --max-objects 3000 --max-pairs 1000000 \
  --max-request-seconds 0 2> "$tmp/log" &
pid=$!
port=
for _ in $(seq 1 200); do
  port=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$tmp/log")
  [ -n "$port" ] && curl -sf "http://127.0.0.1:$port/readyz" > /dev/null && break
  kill -0 "$pid" 2>/dev/null || fail "server exited: $(cat "$tmp/log")"
  sleep 0.05
done
[ -n "$port" ] || fail "server not ready"
B=http://127.0.0.1:$port

# within LIMIT NAME STATUS CURL-ARGS...: answered STATUS in under LIMIT seconds
within() {
  local lim=$1 name=$2 want=$3; shift 3
  local out code t
  out=$(curl -s -o "$tmp/body" -m 5 -w '%{http_code} %{time_total}' "$@") || true
  code=${out% *}; t=${out#* }
  [ "$code" = "$want" ] || fail "$name: status $code, want $want: $(head -c 300 "$tmp/body")"
  awk -v t="$t" -v l="$lim" 'BEGIN { exit !(t < l) }' || fail "$name took ${t}s (want < $lim s)"
}
# within_1s NAME STATUS CURL-ARGS...: the same in under a second
within_1s() { within 1.0 "$@"; }

# 1. 400 slow-header connections (40 per address, under the per-IP limit)
"$tmp/slow" "$port" 400 8 10 > "$tmp/slow.out" &
bg+=($!); slow=$!
sleep 1
for i in 1 2 3 4 5; do
  within_1s "healthz under slow clients ($i)" 200 "$B/healthz"
  sleep 0.2
done
within_1s "estate PUT under slow clients" 200 -X PUT --data-binary @examples/serve/site.yaml "$B/v1/estate"
within_1s "cluster list under slow clients" 200 "$B/v1/clusters"
wait "$slow"
read -r _ opened _ refused _ cut _ first _ last _ open < "$tmp/slow.out"
[ "$opened" = 400 ] && [ "$refused" = 0 ] ||
  fail "slow clients: $(cat "$tmp/slow.out") (want 400 opened, none refused)"
[ "$cut" = 400 ] && [ "$open" = 0 ] ||
  fail "slow clients: $(cat "$tmp/slow.out") (want all 400 closed by --request-timeout 3)"
awk -v f="$first" -v l="$last" 'BEGIN { exit !(f >= 2.5 && l <= 5.5) }' ||
  fail "slow clients were closed between ${first}s and ${last}s (want about 3 s)"
curl -s "$B/metrics" | grep -q '^berth_http_deadline_closed_total [1-9]' ||
  fail "metrics: no berth_http_deadline_closed_total"

# 2. a body trickling at 2 KB/s is cut by the same deadline
head -c 100000 /dev/zero | tr '\0' 'a' > "$tmp/big"
out=$(curl -s -o /dev/null -m 20 -w '%{http_code} %{time_total}' --limit-rate 2k -X PUT \
  --data-binary @"$tmp/big" "$B/v1/estate") || true
awk -v t="${out#* }" 'BEGIN { exit !(t < 6.0) }' || fail "slow body lasted ${out#* }s (want ~3 s)"
[ "${out% *}" = 000 ] || fail "slow body answered ${out% *} (want the connection closed)"

# 3. per-IP limit: 80 connections from one address, 64 stay open
"$tmp/slow" "$port" 80 1.5 1 > "$tmp/perip.out"
read -r _ opened _ refused _ cut _ _ _ _ _ open < "$tmp/perip.out"
[ "$refused" = 16 ] && [ "$open" = 64 ] ||
  fail "per-IP limit: $(cat "$tmp/perip.out") (want 16 refused, 64 open)"
within_1s "healthz after the per-IP test" 200 "$B/healthz"

# 4. budgets
gen_kube 2500 600 > "$tmp/objects.json"   # 3100 objects > --max-objects 3000
within 3.0 "objects budget" 413 -X POST --data-binary @"$tmp/objects.json" "$B/v1/kube/schedule"
grep -q -- '--max-objects' "$tmp/body" || fail "413 does not name --max-objects: $(cat "$tmp/body")"
grep -q '3100 objects' "$tmp/body" || fail "413 does not count the objects: $(cat "$tmp/body")"
gen_kube 1100 1000 > "$tmp/pairs.json"   # 2100 objects, 1,100,000 pairs > --max-pairs 1000000
within 3.0 "pairs budget" 422 -X POST --data-binary @"$tmp/pairs.json" "$B/v1/kube/schedule"
grep -q '"over_budget"' "$tmp/body" && grep -q -- '--max-pairs' "$tmp/body" &&
  grep -q '1100 nodes x 1000 pods' "$tmp/body" || fail "422 body: $(cat "$tmp/body")"

# 5. full planner pool (1 thread, 1 queued): the third request is a 503,
# while /healthz and estate reads and writes still answer within a second
# (detail=all: every pod's per-node reasons and scores keep a request busy
# for a while even on a fast machine). The first request (at the budget)
# holds the thread; the second, small, waits in the queue: each is sent
# once the pool shows the one before it (polled, not a fixed sleep).
gen_kube 1000 1000 > "$tmp/slow.json"   # 1,000,000 pairs: at the budget
gen_kube 20 20 > "$tmp/small.json"
# planner_is STATE N: the planner pool shows N requests in STATE within 20 s
planner_is() {
  local _
  for _ in $(seq 1 400); do
    curl -s "$B/metrics" | grep -q "^berth_pool_requests{pool=\"planner\",state=\"$1\"} $2\$" && return 0
    sleep 0.05
  done
  return 1
}
i=0
for f in slow small; do
  i=$((i + 1))
  curl -s -o "$tmp/plan$i" -w '%{http_code}' -X POST --data-binary @"$tmp/$f.json" \
    "$B/v1/kube/schedule?detail=all" > "$tmp/plan$i.code" &
  bg+=($!)
  if [ $i = 1 ]; then planner_is running 1 || fail "planner request 1 never ran"
  else planner_is queued 1 || fail "planner request 2 never queued"; fi
done
curl -s -D "$tmp/h503" -o "$tmp/b503" -w '%{http_code}' -X POST --data-binary @"$tmp/slow.json" \
  "$B/v1/kube/schedule" > "$tmp/c503"
[ "$(cat "$tmp/c503")" = 503 ] || fail "full planner pool: status $(cat "$tmp/c503"), want 503"
grep -qi '^Retry-After: 1' "$tmp/h503" || fail "503 without Retry-After: $(cat "$tmp/h503")"
grep -q -- '--planner-threads' "$tmp/b503" || fail "503 body: $(cat "$tmp/b503")"
within_1s "healthz with the planner pool full" 200 "$B/healthz"
within_1s "estate read with the planner pool full" 200 "$B/v1/clusters"
within_1s "estate write with the planner pool full" 201 -X POST \
  --data-binary @examples/serve/cluster-a.yaml "$B/v1/clusters"
curl -s "$B/metrics" | grep -q 'berth_pool_requests{pool="planner",state="running"} 1' ||
  fail "metrics: the planner pool is not shown busy"
wait "${bg[@]}" 2>/dev/null
for i in 1 2; do
  [ "$(cat "$tmp/plan$i.code")" = 200 ] || fail "planner request $i: $(cat "$tmp/plan$i.code")"
done
grep -q '"node":"node-' "$tmp/plan1" || fail "planner request 1 placed nothing"
curl -s "$B/metrics" | grep -q '^berth_http_busy_total 1$' || fail "metrics: busy count"

echo "serve_hostile: ok"
