#!/usr/bin/env bash
# serve_extender: the kube-scheduler extender protocol of `berth serve` over
# curl: filter (feasible nodes echoed, failedNodes and
# failedAndUnresolvableNodes in kube-scheduler's words), prioritize (0..10,
# highest for berth's pick), bind (recorded, counted by the next filter,
# kept across a restart), nodeCacheCapable calls against PUT /v1/kube/nodes,
# and bad bodies (400 with the JSON error body).
set -u
BERTH=${BERTH:-build/berth}
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$tmp/log" ] && tail -5 "$tmp/log"; exit 1; }

start() {
  : > "$tmp/log"
  "$BERTH" serve --listen 127.0.0.1:0 --db "$tmp/db" 2> "$tmp/log" &
  pid=$!
  port=
  for _ in $(seq 1 200); do
    port=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$tmp/log")
    [ -n "$port" ] && curl -sf "http://127.0.0.1:$port/readyz" > /dev/null && return 0
    kill -0 "$pid" 2>/dev/null || fail "server exited: $(cat "$tmp/log")"
    sleep 0.05
  done
  fail "server not ready"
}
# a clean stop: exit 0, and no sanitizer report (ASan/LSan write to the log)
stop() {
  kill "$pid"; wait "$pid"; local rc=$?; pid=
  [ $rc = 0 ] || fail "server exit status $rc"
  ! grep -q "Sanitizer" "$tmp/log" || fail "sanitizer report: $(grep -m3 -A8 Sanitizer "$tmp/log")"
}
req() {
  local want=$1 m=$2 p=$3; shift 3
  local code
  code=$(curl -s -o "$tmp/out" -w '%{http_code}' -X "$m" "$@" "http://127.0.0.1:$port$p")
  [ "$code" = "$want" ] || fail "$m $p: status $code, want $want: $(head -c 400 "$tmp/out")"
}
has() { grep -q -- "$1" "$tmp/out" || fail "reply lacks '$1': $(head -c 600 "$tmp/out")"; }
hasnt() { ! grep -q -- "$1" "$tmp/out" || fail "reply has '$1': $(head -c 600 "$tmp/out")"; }
errbody() { has '"error":{"code":"'"$1"'","message":"'; }

# ExtenderArgs as kube-scheduler sends them (nodeCacheCapable: false):
# upstream objects without kind/apiVersion. The pod asks for 3 cpu.
args() { # POD_NAME
  cat <<JSON
{"pod": {"metadata": {"name": "$1", "namespace": "shop", "uid": "uid-$1"},
         "spec": {"containers": [{"name": "c", "image": "nginx",
                  "resources": {"requests": {"cpu": "3", "memory": "1Gi"}}}]},
         "status": {"phase": "Pending"}},
 "nodes": {"metadata": {}, "items": [
   {"metadata": {"name": "node-a", "labels": {"kubernetes.io/hostname": "node-a"}},
    "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}},
   {"metadata": {"name": "node-b"},
    "status": {"allocatable": {"cpu": "2", "memory": "8Gi", "pods": "110"}}},
   {"metadata": {"name": "node-c"},
    "spec": {"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]},
    "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"}}},
   {"metadata": {"name": "node-d"},
    "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"}}}]},
 "nodenames": null}
JSON
}
args web-1 > "$tmp/web-1.json"
args web-2 > "$tmp/web-2.json"

start
# filter: node-a and node-d pass (full objects echoed), node-b is short of cpu
# (resolvable), node-c has an untolerated NoSchedule taint (unresolvable)
req 200 POST /v1/extender/filter --data-binary @"$tmp/web-1.json"
has '"nodes":{"metadata":{},"items":\[{"metadata":{"name":"node-a"'
has '"labels":{"kubernetes.io/hostname":"node-a"}'
has '{"metadata":{"name":"node-d"},"status":{"allocatable":{"cpu":"16"'
has '"nodenames":null'
has '"failedNodes":{"node-b":"Insufficient cpu"}'
has '"failedAndUnresolvableNodes":{"node-c":"node(s) had untolerated taint {dedicated: gpu}"}'
has '"error":""'
# the node berth would pick: POST /v1/kube/schedule of the same pod and nodes
python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); a["pod"]["kind"]="Pod"; a["pod"]["apiVersion"]="v1"
print(json.dumps({"kind":"List","apiVersion":"v1","items":[a["pod"]]+[dict(n,kind="Node",apiVersion="v1") for n in a["nodes"]["items"]]}))' \
  "$tmp/web-1.json" > "$tmp/sched.json" || fail "python3"
req 200 POST /v1/kube/schedule --data-binary @"$tmp/sched.json"; has '"node":"node-d"'
# prioritize: every node listed, scores 0..10, 10 for node-d only
req 200 POST /v1/extender/prioritize --data-binary @"$tmp/web-1.json"
has '^\[{"host":"node-a","score":[0-9]},{"host":"node-b","score":0},{"host":"node-c","score":0},{"host":"node-d","score":10}\]$'
# bind web-1 to node-a (Go sends the field names of ExtenderBindingArgs as
# they are: PodName, ...); the next filter counts its 3 cpu on node-a
req 200 POST /v1/extender/bind -d '{"PodName":"web-1","PodNamespace":"shop","PodUID":"uid-web-1","Node":"node-a"}'
has '^{"error":""}$'
req 200 POST /v1/extender/filter --data-binary @"$tmp/web-2.json"
has '"failedNodes":{"node-a":"Insufficient cpu","node-b":"Insufficient cpu"}'
has '"items":\[{"metadata":{"name":"node-d"}'
hasnt '"name":"node-a"'
# re-filtering web-1 itself does not count its own (stale) binding
req 200 POST /v1/extender/filter --data-binary @"$tmp/web-1.json"
has '"failedNodes":{"node-b":"Insufficient cpu"}'
# a bind for a pod never seen by filter is the scheduler's error
req 200 POST /v1/extender/bind -d '{"podName":"ghost","podNamespace":"shop","podUID":"u","node":"node-a"}'
has '"error":"pod shop/ghost was not seen'
# nodeCacheCapable: nodenames against PUT /v1/kube/nodes
cat > "$tmp/nodes.yaml" <<'YAML'
apiVersion: v1
kind: NodeList
items:
- metadata: {name: node-a}
  status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
- metadata: {name: node-d}
  status: {allocatable: {cpu: "16", memory: 64Gi, pods: "110"}}
YAML
req 200 PUT /v1/kube/nodes --data-binary @"$tmp/nodes.yaml"; has '"nodes":2'
pod3='{"metadata": {"name": "web-3", "namespace": "shop"}, "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "2"}}}]}}'
req 200 POST /v1/extender/filter -d '{"pod": '"$pod3"', "nodenames": ["node-a", "node-d", "node-x"]}'
has '"nodes":null'; has '"nodenames":\["node-d"\]'
has '"node-a":"Insufficient cpu"'; has '"node-x":"node(s) were unknown to the extender'
req 200 POST /v1/extender/prioritize -d '{"pod": '"$pod3"', "nodenames": ["node-a", "node-d"]}'
has '^\[{"host":"node-a","score":0},{"host":"node-d","score":10}\]$'
# bad bodies: 400 with the JSON error body, nothing recorded
req 400 POST /v1/extender/filter -d '{"pod": '; errbody bad_input; has 'body:1:'
req 400 POST /v1/extender/filter -d '[]'; errbody bad_input
req 400 POST /v1/extender/filter -d '{"nodes": {"items": []}}'; errbody bad_input; has 'pod'
req 400 POST /v1/extender/filter -d '{"pod": '"$pod3"'}'; errbody bad_input; has 'nodenames'
req 400 POST /v1/extender/filter -d '{"pod": '"$pod3"', "nodenames": ["a", "a"]}'; errbody bad_input
req 400 POST /v1/extender/filter -d '{"pod": '"$pod3"', "nodes": {"items": [{"metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "lots"}}}]}}'
errbody bad_input; has "invalid quantity 'lots'"
req 400 POST /v1/extender/prioritize -d 'nope'; errbody bad_input
req 400 POST '/v1/extender/filter?profile=nope' --data-binary @"$tmp/web-2.json"; errbody bad_input
req 400 POST /v1/extender/bind -d '{"podName": "web-2"}'; errbody bad_input
req 400 POST /v1/extender/bind -d '{"podName": 3, "node": "node-a"}'; errbody bad_input
req 400 PUT /v1/kube/nodes -d 'kind: Pod'; errbody bad_input
req 405 GET /v1/extender/filter; errbody method_not_allowed
# bindings survive a restart (SQLite table kube_bindings)
stop
start
req 200 POST /v1/extender/filter --data-binary @"$tmp/web-2.json"
has '"failedNodes":{"node-a":"Insufficient cpu","node-b":"Insufficient cpu"}'
req 200 GET /metrics; has 'berth_http_requests_total{route="/v1/extender/filter",method="POST",code="200"} 1'
stop
echo "serve_extender: ok"
