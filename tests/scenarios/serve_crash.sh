#!/usr/bin/env bash
# serve_crash: 8 concurrent curl loops create clusters while the server is
# killed with SIGKILL; after a restart every acknowledged (201) cluster is
# present exactly once, no VM is listed twice and no NUMA cell is over
# capacity (tests/tools/estate_check.c on GET /v1/estate).
set -u
BERTH=${BERTH:-build/berth}
tmp=$(mktemp -d)
pid=; loops=()
cleanup() {
  for l in "${loops[@]}"; do kill "$l" 2>/dev/null; done
  [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
  wait 2>/dev/null; rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
cc -std=c11 -O1 -o "$tmp/check" tests/tools/estate_check.c -ljansson || fail "cannot build the checker"

start() {
  : > "$tmp/log"
  "$BERTH" serve --listen 127.0.0.1:0 --db "$tmp/db" 2> "$tmp/log" &
  pid=$!
  port=
  for _ in $(seq 1 400); do
    port=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$tmp/log")
    [ -n "$port" ] && curl -sf "http://127.0.0.1:$port/readyz" > /dev/null && return 0
    kill -0 "$pid" 2>/dev/null || fail "server exited: $(cat "$tmp/log")"
    sleep 0.05
  done
  fail "server not ready"
}

start
# 16 racks x 16 machines: room for every cluster the loops can create
sed 's/racks: 8/racks: 16/' examples/serve/site.yaml > "$tmp/site.yaml"
curl -sf -X PUT --data-binary @"$tmp/site.yaml" "http://127.0.0.1:$port/v1/estate" > /dev/null ||
  fail "cannot load the estate"

# loop W: create clusters wW-1, wW-2, ... and record the acknowledged ones
loop() {
  local w=$1 i=0 code
  while [ $i -lt 60 ]; do
    i=$((i+1))
    printf 'kind: KubernetesCluster\nmetadata: {name: w%s-%s}\nspec:\n  controlPlaneNodeConfiguration: {count: 1, vmSkuName: NC_G2_8_v1}\n  initialAgentPoolConfigurations:\n  - {name: p, count: 2, vmSkuName: NC_G6_28_v1}\n' "$w" "$i" > "$tmp/body.$w"
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X POST \
      --data-binary @"$tmp/body.$w" "http://127.0.0.1:$port/v1/clusters")
    [ "$code" = 201 ] && echo "w$w-$i" >> "$tmp/acked.$w"
    [ "$code" = 000 ] && break   # the server is gone
  done
}
for w in 1 2 3 4 5 6 7 8; do : > "$tmp/acked.$w"; loop $w & loops+=($!); done
# kill mid-load: once some clusters were acknowledged
for _ in $(seq 1 200); do
  [ "$(cat "$tmp"/acked.* | wc -l)" -ge 40 ] && break
  sleep 0.02
done
kill -9 "$pid"; wait "$pid" 2>/dev/null; pid=
for l in "${loops[@]}"; do wait "$l"; done; loops=()
cat "$tmp"/acked.* > "$tmp/acked"
n=$(wc -l < "$tmp/acked")
[ "$n" -ge 1 ] || fail "no cluster acknowledged before the kill"

start
curl -sf "http://127.0.0.1:$port/v1/estate" > "$tmp/estate.json" || fail "GET /v1/estate"
"$tmp/check" "$tmp/estate.json" "$tmp/acked" > "$tmp/check.out" || fail "estate check failed"
read -r _ nclusters _ _ < "$tmp/check.out"
[ "$nclusters" -ge "$n" ] || fail "$nclusters clusters after restart, $n acknowledged"
# a second crash-free restart gives the same document (deterministic replay)
kill "$pid"; wait "$pid" 2>/dev/null; pid=
start
curl -sf "http://127.0.0.1:$port/v1/estate" > "$tmp/estate2.json"
cmp -s "$tmp/estate.json" "$tmp/estate2.json" || fail "replay is not deterministic"
kill "$pid"; wait "$pid" 2>/dev/null; pid=
echo "serve_crash: ok ($n acknowledged, $nclusters present)"
