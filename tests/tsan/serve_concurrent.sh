#!/usr/bin/env bash
# tests/tsan/serve_concurrent.sh - `berth serve` built with ThreadSanitizer
# (make tsan) under concurrent requests, loopback only, bounded in count
# and time: every stateless endpoint (kube schedule, fleet place, disrupt
# and autoscale plans, the extender's filter, prioritize and bind (full
# objects, and nodeCacheCapable names whose name sets, cycles and warm
# scheduler states concurrent calls share), its node cache) and the estate
# endpoints (estate, clusters, pools, metrics, the picture) at once, several rounds. Fails on any ThreadSanitizer report,
# on a 5xx or a transport error, or when the server does not stop cleanly.
set -u
BERTH=${BERTH:-build/tsan/berth}
PAR=${TSAN_PARALLEL:-12}
ROUNDS=${TSAN_ROUNDS:-3}
[ -x "$BERTH" ] || { echo "FAIL: $BERTH missing (run make tsan)"; exit 1; }
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$tmp/log" ] && grep -m1 -A30 ThreadSanitizer "$tmp/log"; exit 1; }
t0=$(date +%s)

export TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1 history_size=2 ${TSAN_OPTIONS:-}"
"$BERTH" serve --listen 127.0.0.1:0 --db "$tmp/db" --planner-threads 4 --planner-queue 64 2> "$tmp/log" &
pid=$!
port=
for _ in $(seq 1 400); do
  port=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$tmp/log")
  [ -n "$port" ] && curl -sf --max-time 5 "http://127.0.0.1:$port/readyz" > /dev/null && break
  port=
  kill -0 "$pid" 2>/dev/null || fail "server exited: $(cat "$tmp/log")"
  sleep 0.05
done
[ -n "$port" ] || fail "server not ready"
B="http://127.0.0.1:$port"
curl -sf --max-time 30 -X PUT --data-binary @examples/serve/site.yaml "$B/v1/estate" > /dev/null ||
  fail "PUT /v1/estate"

# inputs
for c in A B C D E F G H; do
  sed "s/{name: A}/{name: T$c}/" examples/serve/cluster-a.yaml > "$tmp/cluster-$c.yaml"
done
cat > "$tmp/ext.json" <<'JSON'
{"pod": {"metadata": {"name": "web-1", "namespace": "shop", "uid": "uid-web-1"},
         "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "3"}}}]}},
 "nodes": {"items": [
   {"metadata": {"name": "node-a"}, "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}},
   {"metadata": {"name": "node-b"}, "status": {"allocatable": {"cpu": "2", "memory": "8Gi", "pods": "110"}}}]},
 "nodenames": null}
JSON
cat > "$tmp/nodes.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata: {name: node-a}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
YAML
# the extender's nodeCacheCapable path (name sets, kept cycles, warm
# scheduler states shared by concurrent calls): a 40-node cache and pods
# named by nodenames; the cache replaced and bindings recorded in between
{
  echo '{"apiVersion": "v1", "kind": "NodeList", "items": ['
  for i in $(seq 1 40); do
    [ "$i" -gt 1 ] && echo ','
    echo '{"metadata": {"name": "x'"$i"'", "labels": {"topology.kubernetes.io/zone": "z'"$((i % 3))"'"}}, "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}'
  done
  echo ']}'
} > "$tmp/ext-nodes.json"
ext_names=$(seq 1 40 | sed 's/.*/"x&"/' | paste -sd, -)
for i in 1 2 3 4 5 6; do
  echo '{"pod": {"metadata": {"name": "w'"$i"'", "namespace": "shop", "uid": "uid-w'"$i"'", "labels": {"app": "w"}}, "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "500m"}}}], "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": {"app": "w"}}}]}}, "nodenames": ['"$ext_names"']}' > "$tmp/extn-$i.json"
  echo '{"PodName": "w'"$i"'", "PodNamespace": "shop", "PodUID": "uid-w'"$i"'", "Node": "x'"$i"'"}' > "$tmp/bindn-$i.json"
done
AT=2024-06-01T12:00:00Z
# a heavier kube input (a NodeList and a PodList as kubectl writes them),
# so that schedules overlap in time
{
  echo '{"apiVersion": "v1", "kind": "NodeList", "metadata": {"resourceVersion": "1"}, "items": ['
  for i in $(seq 1 60); do
    [ "$i" -gt 1 ] && echo ','
    echo '{"metadata": {"name": "n'"$i"'", "uid": "u-n'"$i"'", "labels": {"kubernetes.io/hostname": "n'"$i"'", "topology.kubernetes.io/zone": "z'"$((i % 3))"'"}}, "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}, "conditions": [{"type": "Ready", "status": "True"}]}}'
  done
  echo ']}'
  echo '{"apiVersion": "v1", "kind": "PodList", "metadata": {"resourceVersion": "2"}, "items": ['
  for i in $(seq 1 100); do
    [ "$i" -gt 1 ] && echo ','
    echo '{"metadata": {"name": "p'"$i"'", "namespace": "shop", "uid": "u-p'"$i"'", "labels": {"app": "a'"$((i % 7))"'"}}, "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "'"$((100 + i % 5 * 150))"'m", "memory": "1Gi"}}}]}, "status": {"phase": "Pending"}}'
  done
  echo ']}'
} > "$tmp/kube-big.json"

# one request per line: METHOD PATH [BODYFILE]
{
  for r in $(seq 1 "$ROUNDS"); do
    for f in examples/kube/workloads.yaml examples/kube/preemption.yaml examples/kube/usage-aware.yaml \
             examples/kube/scheduler-config.yaml; do
      echo "POST /v1/kube/schedule $f"
    done
    echo "POST /v1/kube/schedule?detail=all examples/kube/workloads.yaml"
    for f in examples/fleet/*.yaml; do echo "POST /v1/fleet/place?now=$AT $f"; done
    for f in examples/disrupt/consolidate.yaml examples/disrupt/optimize.yaml examples/disrupt/blocked.yaml; do
      echo "POST /v1/disrupt/plan?at=$AT $f"
    done
    for f in examples/autoscale/scale-up.yaml examples/autoscale/scale-down.yaml \
             examples/autoscale/cluster-autoscaler.yaml; do
      echo "POST /v1/autoscale/plan?at=$AT $f"
    done
    echo "POST /v1/extender/filter $tmp/ext.json"
    echo "POST /v1/extender/prioritize $tmp/ext.json"
    echo "PUT /v1/kube/nodes $tmp/nodes.yaml"
    echo "POST /v1/extender/bind $tmp/bind.json"
    echo "PUT /v1/kube/nodes $tmp/ext-nodes.json"
    for i in 1 2 3 4 5 6; do
      echo "POST /v1/extender/filter $tmp/extn-$i.json"
      echo "POST /v1/extender/filter $tmp/extn-$i.json"
      echo "POST /v1/extender/prioritize $tmp/extn-$i.json"
      echo "POST /v1/extender/bind $tmp/bindn-$i.json"
    done
    for c in A B C D E F G H; do echo "POST /v1/clusters $tmp/cluster-$c.yaml"; done
    for c in A B C D; do
      echo "GET /v1/clusters/T$c"
      echo "PATCH /v1/clusters/T$c/pools/pool-2 $tmp/scale-$r.json"
    done
    echo "DELETE /v1/clusters/TE"
    echo "DELETE /v1/clusters/TF"
    echo "GET /v1/estate"; echo "GET /v1/clusters"; echo "GET /v1/estate.svg"
    echo "GET /metrics"; echo "GET /healthz"; echo "GET /readyz"
  done
} | shuf --random-source=<(yes) > "$tmp/requests"
echo '{"podName": "web-1", "podNamespace": "shop", "podUID": "uid-web-1", "node": "node-a"}' > "$tmp/bind.json"
for r in $(seq 1 "$ROUNDS"); do echo "{\"count\": $((r + 3))}" > "$tmp/scale-$r.json"; done

burst() { # PAR copies of each heavy request at once
  for _ in $(seq 1 "$PAR"); do
    echo "POST /v1/kube/schedule $tmp/kube-big.json"
    echo "POST /v1/kube/schedule?detail=all $tmp/kube-big.json"
  done
}
one() { # METHOD PATH [BODY] -> "CODE METHOD PATH"
  local args=(-s -o /dev/null --max-time 60 -w '%{http_code}' -X "$1")
  [ $# -ge 3 ] && args+=(--data-binary "@$3")
  echo "$(curl "${args[@]}" "$B$2") $1 $2"
}
export -f one
export B
burst > "$tmp/burst"
cat "$tmp/burst" >> "$tmp/requests"
xargs -P "$PAR" -L 1 bash -c 'one "$@"' _ < "$tmp/burst" > "$tmp/codes"
head -n -"$(wc -l < "$tmp/burst")" "$tmp/requests" | xargs -P "$PAR" -L 1 bash -c 'one "$@"' _ >> "$tmp/codes"
n=$(wc -l < "$tmp/codes")
[ "$n" -eq "$(wc -l < "$tmp/requests")" ] || fail "only $n replies"
bad=$(grep -Ev '^(2[0-9][0-9]|404|409|422) ' "$tmp/codes")
[ -z "$bad" ] || fail "unexpected statuses: $(echo "$bad" | head -5)"
# the stateless endpoints must have answered (not only rejected)
for ep in /v1/kube/schedule /v1/fleet/place /v1/disrupt/plan /v1/autoscale/plan /v1/extender/filter \
          /v1/extender/prioritize /v1/kube/nodes; do
  notok=$(grep -F " $ep" "$tmp/codes" | grep -v '^200 ')
  [ -z "$notok" ] || fail "$ep did not answer 200: $(echo "$notok" | head -3)"
done
grep -q '^201 POST /v1/clusters' "$tmp/codes" || fail "no cluster was created"

kill -TERM "$pid"
wait "$pid"; rc=$?
pid=
grep -q "ThreadSanitizer" "$tmp/log" && fail "ThreadSanitizer reported:"
[ "$rc" -eq 0 ] || fail "server exit status $rc: $(tail -5 "$tmp/log")"
echo "tsan: $n concurrent requests ($PAR at a time, $(( $(date +%s) - t0 )) s), no ThreadSanitizer report"
