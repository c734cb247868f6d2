#!/usr/bin/env bash
# serve_etcd_partition: a `berth serve --etcd` replica cut from etcd, inside
# a network namespace the test creates (loopback only: nothing outside it
# is touched). etcd listens on 127.0.0.1 and 127.0.0.2; replica 0 reaches it
# through 127.0.0.2, replicas 1 and 2 through 127.0.0.1. The cut: routing
# rules that blackhole every packet to or from 127.0.0.2 (the kernel here
# has no tc actions to drop with). While replica 0 takes a stream of
# creates, the cut happens; then: no create is acknowledged by replica 0
# more than 3 s after the cut, replica 0 never answers a read that misses a
# change acknowledged by replica 1 after the cut (it answers 503 instead),
# /readyz fails on replica 0 (and passes on 1 and 2) within 3 s plus the
# heartbeat's period. The cut healed, replica 0 is ready again, sees the
# change and answers byte-identical GET /v1/estate and /v1/clusters.
# Skipped (with a message saying why) when etcd is missing or network
# namespaces cannot be created (not root, or no CAP_SYS_ADMIN).
# run-tests: alone (its asserts bound response times: nothing runs beside it)
set -u
BERTH=${BERTH:-build/berth}
case $BERTH in /*) ;; *) BERTH="$PWD/$BERTH" ;; esac
export BERTH
BUILD_DIR=$(dirname "$BERTH")
if [ "${1:-}" != inside ]; then
  if ! command -v etcd > /dev/null 2>&1; then
    echo "serve_etcd_partition: SKIPPED: etcd is not installed (apt-get install etcd-server)"
    exit 0
  fi
  if [ "$(id -u)" -ne 0 ] || ! command -v ip > /dev/null 2>&1; then
    echo "serve_etcd_partition: SKIPPED: creating a network namespace needs root and iproute2"
    exit 0
  fi
  ns="berth-part-$$"
  if ! ip netns add "$ns" 2> "$BUILD_DIR/netns.err"; then
    echo "serve_etcd_partition: SKIPPED: ip netns add failed: $(cat "$BUILD_DIR/netns.err")"
    rm -f "$BUILD_DIR/netns.err"
    exit 0
  fi
  rm -f "$BUILD_DIR/netns.err"
  ip netns exec "$ns" bash "$0" inside
  rc=$?
  ip netns pids "$ns" 2>/dev/null | while read -r p; do kill -9 "$p" 2>/dev/null; done
  ip netns del "$ns"
  exit $rc
fi

# ---- inside the namespace: its own loopback, its own ports ----
ip link set lo up || { echo "FAIL: cannot bring lo up in the namespace"; exit 1; }
tmp=$(mktemp -d "$BUILD_DIR/etcd-part.XXXXXX")
etcd_pid=; pids=(); loop=
cleanup() {
  [ -n "$loop" ] && kill "$loop" 2>/dev/null
  for p in "${pids[@]}"; do [ -n "$p" ] && kill -9 "$p" 2>/dev/null; done
  [ -n "$etcd_pid" ] && kill "$etcd_pid" 2>/dev/null
  wait 2>/dev/null; rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for i in 0 1 2; do tail -5 "$tmp/r$i.log" 2>/dev/null; done; exit 1; }
now_ms() { date +%s%3N; }

etcd --name t --data-dir "$tmp/etcd" \
  --listen-client-urls "http://127.0.0.1:2379,http://127.0.0.2:2379" \
  --advertise-client-urls "http://127.0.0.1:2379" --listen-peer-urls "http://127.0.0.1:2380" \
  --initial-advertise-peer-urls "http://127.0.0.1:2380" \
  --initial-cluster "t=http://127.0.0.1:2380" > "$tmp/etcd.log" 2>&1 &
etcd_pid=$!
for _ in $(seq 1 100); do
  curl -sf -X POST -d '{}' "http://127.0.0.1:2379/v3/maintenance/status" > /dev/null && break
  kill -0 "$etcd_pid" 2>/dev/null || fail "etcd exited: $(tail -3 "$tmp/etcd.log")"
  sleep 0.1
done

ports=(8090 8091 8092)
via=(127.0.0.2 127.0.0.1 127.0.0.1)
for i in 0 1 2; do
  "$BERTH" serve --listen "127.0.0.1:${ports[$i]}" --etcd "http://${via[$i]}:2379" \
    --estate part --db "$tmp/r$i.db" 2> "$tmp/r$i.log" &
  pids[$i]=$!
done
for i in 0 1 2; do
  for _ in $(seq 1 200); do
    curl -sf "http://127.0.0.1:${ports[$i]}/readyz" > /dev/null && break
    kill -0 "${pids[$i]}" 2>/dev/null || fail "replica $i exited: $(cat "$tmp/r$i.log")"
    sleep 0.05
  done
done
cluster() {
  printf 'kind: KubernetesCluster\nmetadata: {name: %s}\nspec:\n  controlPlaneNodeConfiguration: {count: 1, vmSkuName: NC_G2_8_v1}\n  initialAgentPoolConfigurations:\n  - {name: p, count: 1, vmSkuName: NC_G6_28_v1}\n' "$1"
}
create() { # replica name -> status
  cluster "$2" | curl -s -o /dev/null -w '%{http_code}' --max-time 15 -X POST --data-binary @- \
    "http://127.0.0.1:${ports[$1]}/v1/clusters"
}
code() { curl -s -o /dev/null -w '%{http_code}' --max-time 8 "http://127.0.0.1:${ports[$1]}$2"; }
sed 's/racks: 8/racks: 16/' examples/serve/site.yaml > "$tmp/site.yaml"
curl -sf -X PUT --data-binary @"$tmp/site.yaml" "http://127.0.0.1:${ports[1]}/v1/estate" \
  > /dev/null || fail "cannot load the estate"
for i in 0 1 2; do
  c=$(create $i "pre$i"); [ "$c" = 201 ] || fail "create pre$i on replica $i: $c"
done

# a stream of creates on replica 0: "<time acknowledged or answered> <status>"
( n=0; while :; do n=$((n+1)); c=$(create 0 "s$n"); echo "$(now_ms) $c" >> "$tmp/stream"; sleep 0.05; done ) &
loop=$!
sleep 1
t0=$(now_ms)
ip rule add pref 100 lookup local && ip rule add pref 10 to 127.0.0.2 blackhole &&
  ip rule add pref 11 from 127.0.0.2 blackhole && ip rule del pref 0 || fail "cannot cut 127.0.0.2"
c=$(create 1 after1); [ "$c" = 201 ] || fail "replica 1 cannot write during the cut: $c"
# replica 0 must not answer without the change replica 1 acknowledged
stale=
while [ $(( $(now_ms) - t0 )) -lt 5000 ]; do
  c=$(code 0 /v1/clusters/after1)
  case $c in 200|503) ;; *) stale="$stale $c" ;; esac
done
[ -z "$stale" ] || fail "replica 0 answered a read it cannot prove during the cut:$stale"
for i in 0 1 2; do r[$i]=$(code $i /readyz); done
[ "${r[0]}" = 503 ] || fail "replica 0 is still ready 5 s after the cut: ${r[0]}"
[ "${r[1]}" = 200 ] && [ "${r[2]}" = 200 ] || fail "replicas 1 and 2 not ready: ${r[1]} ${r[2]}"
c=$(create 0 cut0); [ "$c" = 503 ] || fail "replica 0 write after the cut: $c"
c=$(code 0 /v1/estate); [ "$c" = 503 ] || fail "replica 0 read after the cut: $c"
c=$(create 2 after2); [ "$c" = 201 ] || fail "replica 2 cannot write during the cut: $c"
kill "$loop"; wait "$loop" 2>/dev/null; loop=
late=$(awk -v t="$t0" '$2 ~ /^2/ && $1 > t + 3000' "$tmp/stream" | wc -l)
acked=$(awk -v t="$t0" '$2 ~ /^2/ && $1 <= t' "$tmp/stream" | wc -l)
[ "$late" = 0 ] || fail "replica 0 acknowledged $late writes more than 3 s after the cut"
[ "$acked" -ge 1 ] || fail "the stream acknowledged nothing before the cut"

# heal
ip rule add pref 0 lookup local && ip rule del pref 100 && ip rule del pref 10 &&
  ip rule del pref 11 || fail "cannot heal the cut"
ok=
for _ in $(seq 1 150); do
  [ "$(code 0 /readyz)" = 200 ] && ok=1 && break
  sleep 0.1
done
[ -n "$ok" ] || fail "replica 0 not ready 15 s after the cut healed"
c=$(code 0 /v1/clusters/after2); [ "$c" = 200 ] || fail "replica 0 misses after2: $c"
for i in 0 1 2; do
  curl -sf "http://127.0.0.1:${ports[$i]}/v1/estate" > "$tmp/estate$i.json" || fail "GET estate $i"
  curl -sf "http://127.0.0.1:${ports[$i]}/v1/clusters" > "$tmp/clusters$i.json" ||
    fail "GET clusters $i"
done
for i in 1 2; do
  cmp -s "$tmp/estate0.json" "$tmp/estate$i.json" || fail "GET /v1/estate differs (0, $i)"
  cmp -s "$tmp/clusters0.json" "$tmp/clusters$i.json" || fail "GET /v1/clusters differs (0, $i)"
done
grep -q '"cut0"' "$tmp/clusters0.json" && fail "a write answered 503 was applied"
echo "serve_etcd_partition: ok ($acked writes acknowledged by replica 0 before the cut, none after 3 s; 503 and unready while cut; identical after healing)"
