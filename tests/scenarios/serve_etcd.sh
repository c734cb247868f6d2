#!/usr/bin/env bash
# serve_etcd: three `berth serve --etcd` replicas share one estate through a
# three-member etcd (data dirs under the build folder, stopped by PID). 32
# concurrent curl loops spread over the replicas create clusters, half of
# the names asked twice on different replicas, and scale pools; one
# replica and then the etcd leader are killed with SIGKILL mid-load and
# restarted. At the end every
# acknowledged (201) cluster is present exactly once on every replica, no
# VM is placed twice, no NUMA cell is over capacity
# (tests/tools/estate_check.c), and the three replicas answer byte-identical
# GET /v1/estate and GET /v1/clusters. Skipped (with a message) only when
# etcd is not installed and cannot be.
set -u
BERTH=${BERTH:-build/berth}
BUILD_DIR=$(dirname "$BERTH")
. tests/lib/etcd.sh
etcd_require serve_etcd
mkdir -p "$BUILD_DIR"
tmp=$(mktemp -d "$BUILD_DIR/etcd-test.XXXXXX")
epids=(); pids=(); loops=()
cleanup() {
  for l in "${loops[@]}"; do kill "$l" 2>/dev/null; done
  for p in "${pids[@]}"; do [ -n "$p" ] && kill -9 "$p" 2>/dev/null; done
  for p in "${epids[@]}"; do [ -n "$p" ] && kill "$p" 2>/dev/null; done
  wait 2>/dev/null; rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for i in 0 1 2; do tail -5 "$tmp/r$i.log" 2>/dev/null; done; exit 1; }
cc -std=c11 -O1 -o "$tmp/check" tests/tools/estate_check.c -ljansson || fail "cannot build the checker"

cport=(); pport=(); epids=(); initial=
start_member() { # m
  local m=$1
  etcd --name "m$m" --data-dir "$tmp/etcd$m" --listen-client-urls "http://127.0.0.1:${cport[$m]}" \
    --advertise-client-urls "http://127.0.0.1:${cport[$m]}" \
    --listen-peer-urls "http://127.0.0.1:${pport[$m]}" \
    --initial-advertise-peer-urls "http://127.0.0.1:${pport[$m]}" \
    --initial-cluster "$initial" --initial-cluster-state new --initial-cluster-token scen \
    >> "$tmp/etcd$m.log" 2>&1 &
  epids[$m]=$!
}
start_cluster() { # three members on fresh ports; returns 1 when one lost a port before binding it
  local m
  initial=
  for m in 0 1 2; do
    etcd_free_port 0 && cport[$m]=$port && etcd_free_port 0 && pport[$m]=$port || fail "no free port"
    initial+="${initial:+,}m$m=http://127.0.0.1:${pport[$m]}"
    rm -rf "$tmp/etcd$m"; : > "$tmp/etcd$m.log"
  done
  for m in 0 1 2; do start_member $m; done
  for m in 0 1 2; do
    for _ in $(seq 1 150); do
      curl -sf -X POST -d '{}' "http://127.0.0.1:${cport[$m]}/v3/maintenance/status" > /dev/null && break
      if ! kill -0 "${epids[$m]}" 2>/dev/null; then
        if etcd_bind_lost "$tmp/etcd$m.log"; then
          for m in 0 1 2; do kill -9 "${epids[$m]}" 2>/dev/null; wait "${epids[$m]}" 2>/dev/null; done
          return 1
        fi
        fail "etcd member $m exited: $(tail -3 "$tmp/etcd$m.log")"
      fi
      sleep 0.1
    done
  done
}
for try in 1 2 3 4; do
  start_cluster && break
  [ $try -lt 4 ] || fail "etcd members lost their ports four times"
done
ETCD="http://127.0.0.1:${cport[0]},http://127.0.0.1:${cport[1]},http://127.0.0.1:${cport[2]}"
# the member that leads: its status names itself as leader
etcd_leader() {
  local m st
  for m in 0 1 2; do
    st=$(curl -s --max-time 2 -X POST -d '{}' "http://127.0.0.1:${cport[$m]}/v3/maintenance/status")
    [ -n "$st" ] || continue
    [ "$(sed -n 's/.*"member_id":"\([0-9]*\)".*/\1/p' <<< "$st")" = \
      "$(sed -n 's/.*"leader":"\([0-9]*\)".*/\1/p' <<< "$st")" ] && { echo $m; return; }
  done
  echo -1
}

ports=(0 0 0)
start() { # replica i
  local i=$1
  : > "$tmp/r$i.log"
  "$BERTH" serve --listen 127.0.0.1:0 --etcd "$ETCD" --estate scen --db "$tmp/r$i.db" \
    2> "$tmp/r$i.log" &
  pids[$i]=$!
  for _ in $(seq 1 200); do
    ports[$i]=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$tmp/r$i.log")
    [ -n "${ports[$i]}" ] && curl -sf "http://127.0.0.1:${ports[$i]}/readyz" > /dev/null && return 0
    kill -0 "${pids[$i]}" 2>/dev/null || fail "replica $i exited: $(cat "$tmp/r$i.log")"
    sleep 0.05
  done
  fail "replica $i not ready"
}
for i in 0 1 2; do start $i; done

sed 's/racks: 8/racks: 16/' examples/serve/site.yaml > "$tmp/site.yaml"
curl -sf -X PUT --data-binary @"$tmp/site.yaml" "http://127.0.0.1:${ports[1]}/v1/estate" \
  > /dev/null || fail "cannot load the estate"

# loop W on replica W%3: clusters c<W%16>-<i> (loops W and W+16 ask the same
# names on different replicas: exactly one of each pair may win), then a scale
loop() {
  local w=$1 i=0 code r=$(( $1 % 3 )) n=$(( $1 % 16 ))
  while [ $i -lt 12 ]; do
    i=$((i+1))
    printf 'kind: KubernetesCluster\nmetadata: {name: c%s-%s}\nspec:\n  controlPlaneNodeConfiguration: {count: 1, vmSkuName: NC_G2_8_v1}\n  initialAgentPoolConfigurations:\n  - {name: p, count: 2, vmSkuName: NC_G6_28_v1}\n' "$n" "$i" > "$tmp/body.$w"
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 15 -X POST \
      --data-binary @"$tmp/body.$w" "http://127.0.0.1:${ports[$r]}/v1/clusters")
    case $code in
      201) echo "c$n-$i" >> "$tmp/acked.$w" ;;
      409) ;;
      000|503) r=$(( (r + 1) % 3 )) ;; # that replica is down: the next one
      *) echo "$code" >> "$tmp/odd.$w" ;;
    esac
    [ $((i % 4)) = 0 ] && curl -s -o /dev/null --max-time 15 -X PATCH -d '{"count": 3}' \
      "http://127.0.0.1:${ports[$r]}/v1/clusters/c$n-$((i-1))/pools/p"
  done
}
for w in $(seq 0 31); do : > "$tmp/acked.$w"; loop $w & loops+=($!); done
# kill replica 2 mid-load (after a random 30-60 acknowledged creations),
# restart it
at=$(( 30 + RANDOM % 31 ))
for _ in $(seq 1 300); do
  [ "$(cat "$tmp"/acked.* | wc -l)" -ge $at ] && break
  sleep 0.05
done
kill -9 "${pids[2]}"; wait "${pids[2]}" 2>/dev/null
start 2
# then the etcd leader (after 20-40 more), restarted on its data dir
at=$(( $(cat "$tmp"/acked.* | wc -l) + 20 + RANDOM % 21 ))
for _ in $(seq 1 300); do
  [ "$(cat "$tmp"/acked.* | wc -l)" -ge $at ] && break
  sleep 0.05
done
lead=$(etcd_leader)
[ "$lead" -ge 0 ] || fail "no etcd leader"
kill -9 "${epids[$lead]}"; wait "${epids[$lead]}" 2>/dev/null
sleep 0.5
start_member "$lead"
for l in "${loops[@]}"; do wait "$l"; done; loops=()
cat "$tmp"/odd.* 2>/dev/null | sort | uniq -c | sed 's/^/unexpected status: /'
cat "$tmp"/acked.* | sort > "$tmp/acked"
n=$(wc -l < "$tmp/acked")
[ "$n" -ge 32 ] || fail "only $n clusters acknowledged"
[ "$(sort -u "$tmp/acked" | wc -l)" = "$n" ] || fail "a name was acknowledged twice: $(uniq -d "$tmp/acked")"

for i in 0 1 2; do
  curl -sf -D "$tmp/h$i" "http://127.0.0.1:${ports[$i]}/v1/estate" > "$tmp/estate$i.json" ||
    fail "GET /v1/estate on replica $i"
  curl -sf "http://127.0.0.1:${ports[$i]}/v1/clusters" > "$tmp/clusters$i.json" ||
    fail "GET /v1/clusters on replica $i"
  grep -qi '^X-Berth-Revision: [0-9]' "$tmp/h$i" || fail "no X-Berth-Revision on replica $i"
  "$tmp/check" "$tmp/estate$i.json" "$tmp/acked" > "$tmp/check$i.out" ||
    fail "estate check failed on replica $i: $(cat "$tmp/check$i.out")"
done
cmp -s "$tmp/estate0.json" "$tmp/estate1.json" && cmp -s "$tmp/estate0.json" "$tmp/estate2.json" ||
  fail "GET /v1/estate differs between replicas"
cmp -s "$tmp/clusters0.json" "$tmp/clusters1.json" &&
  cmp -s "$tmp/clusters0.json" "$tmp/clusters2.json" || fail "GET /v1/clusters differs"
# a write on one replica is visible on the others at once (linearizable reads)
curl -sf -o /dev/null -X DELETE "http://127.0.0.1:${ports[0]}/v1/clusters/$(head -1 "$tmp/acked")" ||
  fail "DELETE"
for i in 1 2; do
  curl -s "http://127.0.0.1:${ports[$i]}/v1/clusters/$(head -1 "$tmp/acked")" -o /dev/null \
    -w '%{http_code}' | grep -q 404 || fail "replica $i still shows the deleted cluster"
done
replans=$(curl -s "http://127.0.0.1:${ports[0]}/metrics" | sed -n 's/^berth_replicated_replans_total \([0-9]*\)/\1/p')
[ -n "$replans" ] || fail "no berth_replicated_replans_total in /metrics"
read -r _ nclusters _ nvms < "$tmp/check0.out"
echo "serve_etcd: ok ($n acknowledged, $nclusters clusters, $nvms VMs, identical on 3 replicas, $replans re-plans on replica 0; replica 2 and etcd leader m$lead killed and restarted)"
