#!/usr/bin/env bash
# serve_etcd_checkpoint: checkpoints and quorum loss of `berth serve --etcd`
# on a one-member etcd (data dir under the build folder, stopped by PID).
# Two replicas with --checkpoint-every 4 take creates, scales and a delete;
# the elected checkpoint leader writes a snapshot (in two parts: the estate's
# text carries a 900 KB comment) and removes the log keys
# below it (none left at or below the snapshot's revision); a fresh third
# replica loads the snapshot and the log after it and answers byte-identical
# GET /v1/estate and /v1/clusters, then places a cluster the others see.
# Quorum loss: etcd SIGSTOPped, every replica fails /readyz and answers
# reads and writes 503 within 3 s of the last heartbeat; SIGCONT, then
# SIGKILL and a restart on the same data dir: the replicas come back ready,
# take writes, and still agree byte for byte. Skipped (with a message) only
# when etcd is not installed and cannot be.
# run-tests: alone (its asserts bound response times: nothing runs beside it)
set -u
BERTH=${BERTH:-build/berth}
BUILD_DIR=$(dirname "$BERTH")
. tests/lib/etcd.sh
etcd_require serve_etcd_checkpoint
mkdir -p "$BUILD_DIR"
tmp=$(mktemp -d "$BUILD_DIR/etcd-ckpt.XXXXXX")
etcd_pid=; pids=()
cleanup() {
  [ -n "$etcd_pid" ] && kill -CONT "$etcd_pid" 2>/dev/null
  for p in "${pids[@]}"; do [ -n "$p" ] && kill -9 "$p" 2>/dev/null; done
  [ -n "$etcd_pid" ] && kill "$etcd_pid" 2>/dev/null
  wait 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for i in 0 1 2; do tail -5 "$tmp/r$i.log" 2>/dev/null; done; exit 1; }

start_etcd() { # on $cport/$pport; returns 1 when a port was taken before etcd bound it
  ETCD="http://127.0.0.1:$cport"
  etcd --name t --data-dir "$tmp/etcd" --listen-client-urls "$ETCD" \
    --advertise-client-urls "$ETCD" --listen-peer-urls "http://127.0.0.1:$pport" \
    --initial-advertise-peer-urls "http://127.0.0.1:$pport" \
    --initial-cluster "t=http://127.0.0.1:$pport" >> "$tmp/etcd.log" 2>&1 &
  etcd_pid=$!
  for _ in $(seq 1 100); do
    curl -sf -X POST -d '{}' "$ETCD/v3/maintenance/status" > /dev/null && return 0
    if ! kill -0 "$etcd_pid" 2>/dev/null; then
      etcd_bind_lost "$tmp/etcd.log" && { wait "$etcd_pid"; return 1; }
      fail "etcd exited: $(tail -3 "$tmp/etcd.log")"
    fi
    sleep 0.1
  done
  fail "etcd did not start"
}
for try in 1 2 3 4; do
  etcd_free_port 1 && cport=$port && etcd_free_port 1 && pport=$port || fail "no free port"
  rm -rf "$tmp/etcd"; : > "$tmp/etcd.log"
  start_etcd && break
  [ $try -lt 4 ] || fail "etcd lost its ports four times: $(tail -3 "$tmp/etcd.log")"
done

ports=(0 0 0)
start() { # replica i
  local i=$1
  : > "$tmp/r$i.log"
  "$BERTH" serve --listen 127.0.0.1:0 --etcd "$ETCD" --estate ckpt --db "$tmp/r$i.db" \
    --checkpoint-every 4 2> "$tmp/r$i.log" &
  pids[$i]=$!
  for _ in $(seq 1 200); do
    ports[$i]=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$tmp/r$i.log")
    [ -n "${ports[$i]}" ] && curl -sf "http://127.0.0.1:${ports[$i]}/readyz" > /dev/null && return 0
    kill -0 "${pids[$i]}" 2>/dev/null || fail "replica $i exited: $(cat "$tmp/r$i.log")"
    sleep 0.05
  done
  fail "replica $i not ready"
}
metric() { # replica name
  curl -s "http://127.0.0.1:${ports[$1]}/metrics" | sed -n "s/^$2 \([0-9]*\)$/\1/p"
}
cluster() { # name
  printf 'kind: KubernetesCluster\nmetadata: {name: %s}\nspec:\n  controlPlaneNodeConfiguration: {count: 1, vmSkuName: NC_G2_8_v1}\n  initialAgentPoolConfigurations:\n  - {name: p, count: 2, vmSkuName: NC_G6_28_v1}\n' "$1"
}
create() { # replica name -> status
  cluster "$2" | curl -s -o /dev/null -w '%{http_code}' --max-time 10 -X POST --data-binary @- \
    "http://127.0.0.1:${ports[$1]}/v1/clusters"
}
same() { # replicas...: byte-identical estate and cluster list
  local i
  for i in "$@"; do
    curl -sf "http://127.0.0.1:${ports[$i]}/v1/estate" > "$tmp/estate$i.json" ||
      fail "GET /v1/estate on replica $i"
    curl -sf "http://127.0.0.1:${ports[$i]}/v1/clusters" > "$tmp/clusters$i.json" ||
      fail "GET /v1/clusters on replica $i"
    cmp -s "$tmp/estate$1.json" "$tmp/estate$i.json" ||
      fail "GET /v1/estate differs between replicas $1 and $i"
    cmp -s "$tmp/clusters$1.json" "$tmp/clusters$i.json" ||
      fail "GET /v1/clusters differs between replicas $1 and $i"
  done
}
b64() { printf '%s' "$1" | base64 -w0; }
# log keys with a mod revision at or below $1 (count_only would ignore the
# revision filter: the keys are listed and counted here)
log_keys_upto() {
  curl -s -X POST "$ETCD/v3/kv/range" -d "{\"key\":\"$(b64 /berth/v1/ckpt/log/)\",\"range_end\":\"$(b64 /berth/v1/ckpt/log0)\",\"keys_only\":true}" |
    grep -o '"mod_revision":"[0-9]*"' | tr -dc '0-9\n' | awk -v s="$1" '$1 <= s' | wc -l
}
all_log_keys() {
  curl -s -X POST "$ETCD/v3/kv/range" -d "{\"key\":\"$(b64 /berth/v1/ckpt/log/)\",\"range_end\":\"$(b64 /berth/v1/ckpt/log0)\",\"count_only\":true}" |
    sed -n 's/.*"count":"\([0-9]*\)".*/\1/p'
}

start 0; start 1
# the estate's text with a 900 KB comment: the snapshot holds it, so it is
# written in two parts (768 KiB each at most, under etcd's request limit)
{ cat examples/serve/site.yaml; printf '# %0900000d\n' 0; } > "$tmp/site.yaml"
curl -sf -X PUT --data-binary @"$tmp/site.yaml" "http://127.0.0.1:${ports[0]}/v1/estate" \
  > /dev/null || fail "cannot load the estate"
for n in $(seq 1 14); do
  c=$(create $((n % 2)) "k$n"); [ "$c" = 201 ] || fail "create k$n on replica $((n % 2)): $c"
done
c=$(curl -s -o /dev/null -w '%{http_code}' -X PATCH -d '{"count": 4}' \
  "http://127.0.0.1:${ports[1]}/v1/clusters/k3/pools/p"); [ "$c" = 200 ] || fail "scale up: $c"
c=$(curl -s -o /dev/null -w '%{http_code}' -X PATCH -d '{"count": 1}' \
  "http://127.0.0.1:${ports[0]}/v1/clusters/k5/pools/p"); [ "$c" = 200 ] || fail "scale down: $c"
c=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "http://127.0.0.1:${ports[0]}/v1/clusters/k2")
[ "$c" = 204 ] || fail "delete: $c"
written=18 # batches: the estate, 14 creates, 2 scales, 1 delete (one request at a time)
last=$(metric 0 berth_replicated_revision)

# the leader checkpoints (every 4 batches: the log after its latest snapshot
# holds fewer than 4 records)
leader=
for _ in $(seq 1 100); do
  for i in 0 1; do
    s=$(metric $i berth_replicated_snapshot_revision)
    [ "$(metric $i berth_replicated_checkpoint_leader)" = 1 ] && [ "${s:-0}" -gt 0 ] &&
      leader=$i
  done
  [ -n "$leader" ] && break
  sleep 0.2
done
[ -n "$leader" ] || fail "no snapshot within 20 s (the last write is at revision $last)"
srev=$(metric "$leader" berth_replicated_snapshot_revision)
removed=$(metric "$leader" berth_replicated_log_keys_removed_total)
left=$(log_keys_upto "$srev"); left=${left:-0}
[ "$left" = 0 ] || fail "$left log keys at or below the snapshot's revision $srev are left"
total=$(all_log_keys); total=${total:-0}
[ "$total" -lt "$written" ] || fail "the log still holds $total of $written keys"
[ "${removed:-0}" -ge 1 ] || fail "berth_replicated_log_keys_removed_total is ${removed:-empty}"
[ "$(metric $((1 - leader)) berth_replicated_checkpoint_leader)" = 0 ] || fail "two leaders"
ptr=$(curl -s -X POST "$ETCD/v3/kv/range" -d "{\"key\":\"$(b64 /berth/v1/ckpt/snapshot)\"}" |
  sed -n 's/.*"value":"\([^"]*\)".*/\1/p' | base64 -d)
[ "${ptr#* }" = 2 ] || fail "the snapshot pointer is '$ptr', expected 2 parts"

# a fresh replica: the snapshot and the log after it
start 2
same 0 1 2
[ "$(metric 2 berth_replicated_snapshot_revision)" -ge "$srev" ] ||
  fail "replica 2 did not load the snapshot"
c=$(create 2 fresh1); [ "$c" = 201 ] || fail "create on the fresh replica: $c"
c=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:${ports[0]}/v1/clusters/fresh1")
[ "$c" = 200 ] || fail "replica 0 does not see the fresh replica's cluster: $c"
c=$(create 1 fresh1); [ "$c" = 409 ] || fail "a taken name on replica 1: $c"
same 0 1 2

# deleted cluster entries (a planned create leaves one on its replica, a
# delete on every replica) are dropped by rebuilding the state once they
# outnumber the live clusters
for n in $(seq 1 40); do
  c=$(create 2 "tmp$n"); [ "$c" = 201 ] || fail "create tmp$n: $c"
done
for n in $(seq 1 40); do
  c=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "http://127.0.0.1:${ports[2]}/v1/clusters/tmp$n")
  [ "$c" = 204 ] || fail "delete tmp$n: $c"
done
for _ in $(seq 1 50); do
  [ "$(metric 2 berth_replicated_state_rebuilds_total)" -ge 1 ] && break
  sleep 0.1
done
[ "$(metric 2 berth_replicated_state_rebuilds_total)" -ge 1 ] || fail "replica 2 kept its deleted entries"
entries=$(metric 2 berth_estate_cluster_entries)
[ "$entries" -lt 64 ] || fail "replica 2 still holds $entries cluster entries"
same 0 1 2
c=$(create 2 fresh2); [ "$c" = 201 ] || fail "create after the rebuild: $c"
same 0 1 2

# quorum loss: etcd stopped; 3 s after the last heartbeat every replica is
# unready and answers 503 at once
kill -STOP "$etcd_pid"
sleep 4
for i in 0 1 2; do
  c=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:${ports[$i]}/readyz")
  [ "$c" = 503 ] || fail "replica $i /readyz with etcd stopped: $c"
  c=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:${ports[$i]}/v1/clusters")
  [ "$c" = 503 ] || fail "replica $i read with etcd stopped: $c"
  c=$(create $i "lost$i")
  [ "$c" = 503 ] || fail "replica $i write with etcd stopped: $c"
  c=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:${ports[$i]}/healthz")
  [ "$c" = 200 ] || fail "replica $i /healthz (the process is fine): $c"
done
kill -CONT "$etcd_pid"
ready_all() {
  local i ok
  for _ in $(seq 1 100); do
    ok=1
    for i in 0 1 2; do
      curl -sf --max-time 2 "http://127.0.0.1:${ports[$i]}/readyz" > /dev/null || ok=
    done
    [ -n "$ok" ] && return 0
    sleep 0.1
  done
  fail "the replicas are not ready again: $1"
}
ready_all "after SIGCONT"
c=$(create 0 back1); [ "$c" = 201 ] || fail "write after SIGCONT: $c"

# etcd killed and restarted on its data dir
kill -9 "$etcd_pid"; wait "$etcd_pid" 2>/dev/null
sleep 1
for i in 0 1 2; do
  c=$(create $i "dead$i")
  [ "$c" = 503 ] || fail "replica $i write with etcd killed: $c"
done
start_etcd || fail "etcd's ports were taken while it was down: $(tail -3 "$tmp/etcd.log")"
ready_all "after etcd restarted"
c=$(create 1 back2); [ "$c" = 201 ] || fail "write after the restart: $c"
for i in 0 2; do
  c=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:${ports[$i]}/v1/clusters/back2")
  [ "$c" = 200 ] || fail "replica $i does not see back2: $c"
done
same 0 1 2
grep -q '"lost\|"dead' "$tmp/clusters0.json" && fail "a change answered 503 was applied"
echo "serve_etcd_checkpoint: ok (snapshot at revision $srev by replica $leader, $removed log keys removed, $total left; fresh replica identical; state rebuilt to $entries cluster entries; 503 and unready without etcd, back after SIGCONT and a restart)"
