#!/usr/bin/env bash
# serve_api: `berth serve` end to end over curl on loopback: every endpoint
# and error status, auth (401/403), the body limit (413), and a restart
# that must restore the same state from the SQLite log.
set -u
BERTH=${BERTH:-build/berth}
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$tmp/log" ] && tail -5 "$tmp/log"; exit 1; }

printf 'tok-rw-1\n# comment\n\ntok-rw-2\n' > "$tmp/rw"
printf 'tok-ro\n' > "$tmp/ro"

start() {
  : > "$tmp/log"
  "$BERTH" serve --listen 127.0.0.1:0 --db "$tmp/db" --token-file "$tmp/rw" \
    --read-only-token-file "$tmp/ro" --max-body 65536 2> "$tmp/log" &
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
stop() { kill "$pid"; wait "$pid" 2>/dev/null; pid=; }

# req EXPECTED_CODE METHOD PATH [curl args...]: body in $tmp/out
W=(-H "Authorization: Bearer tok-rw-2")
req() {
  local want=$1 m=$2 p=$3; shift 3
  local code
  code=$(curl -s -o "$tmp/out" -w '%{http_code}' -X "$m" "$@" "http://127.0.0.1:$port$p")
  [ "$code" = "$want" ] || fail "$m $p: status $code, want $want: $(head -c 400 "$tmp/out")"
}
has() { grep -q -- "$1" "$tmp/out" || fail "reply lacks '$1': $(head -c 400 "$tmp/out")"; }
errbody() { has '"error":{"code":"'"$1"'","message":"'; }

start
req 200 GET /healthz; has '"status":"ok"'
req 200 GET /readyz
# auth
req 401 GET /v1/estate; errbody unauthorized
req 401 GET /v1/estate -H "Authorization: Bearer wrong"; errbody unauthorized
req 403 PUT /v1/estate -H "Authorization: Bearer tok-ro" --data-binary @examples/serve/site.yaml
errbody forbidden
req 404 GET /v1/estate -H "Authorization: Bearer tok-ro"; errbody no_estate
# a read-only token may call the stateless planning endpoints (they change nothing)
req 200 POST /v1/kube/schedule -H "Authorization: Bearer tok-ro" --data-binary @examples/kube/kubectl-list.yaml
has '"pods":'
for ep in /v1/fleet/place?now=2024-05-01T12:00:00Z:examples/fleet/pickn-spread.yaml \
          /v1/disrupt/plan:examples/disrupt/consolidate.yaml /v1/autoscale/plan:examples/autoscale/scale-down.yaml; do
  code=$(curl -s -o "$tmp/out" -w '%{http_code}' -X POST -H "Authorization: Bearer tok-ro" \
    --data-binary @"${ep#*:}" "http://127.0.0.1:$port${ep%%:*}")
  [ "$code" != 403 ] && [ "$code" != 401 ] || fail "read-only POST ${ep%%:*}: $code"
done
req 401 POST /v1/kube/schedule --data-binary @examples/kube/kubectl-list.yaml; errbody unauthorized
req 409 POST /v1/clusters "${W[@]}" --data-binary @examples/serve/cluster-a.yaml; errbody no_estate
# estate: bad input is located, nothing is kept
printf 'apiVersion: berth.io/v1\nkind: Site\nmetadata: {name: x}\nspec:\n  racks: many\n' > "$tmp/bad.yaml"
req 400 PUT /v1/estate "${W[@]}" --data-binary @"$tmp/bad.yaml"; errbody bad_input; has 'body:5:'
req 404 GET /v1/estate "${W[@]}"
req 200 PUT /v1/estate "${W[@]}" --data-binary @examples/serve/site.yaml
has '"machines":128'
# clusters
req 201 POST /v1/clusters "${W[@]}" --data-binary @examples/serve/cluster-a.yaml
has '"name":"A"'; has '"status":"Succeeded"'; has '"A-pool-1-24"'
req 409 POST /v1/clusters "${W[@]}" --data-binary @examples/serve/cluster-a.yaml; errbody conflict
sed 's/name: A}/name: BIG}/; s/count: 24/count: 500/' examples/serve/cluster-a.yaml > "$tmp/big.yaml"
req 422 POST /v1/clusters "${W[@]}" --data-binary @"$tmp/big.yaml"; errbody does_not_fit
req 404 GET /v1/clusters/BIG "${W[@]}"
sed 's/name: A}/name: S}/; s/NC_G6_28_v1/NC_NOPE/' examples/serve/cluster-a.yaml > "$tmp/sku.yaml"
req 422 POST /v1/clusters "${W[@]}" --data-binary @"$tmp/sku.yaml"; errbody invalid; has "NC_NOPE"
req 400 POST /v1/clusters "${W[@]}" --data-binary @examples/serve/site.yaml; errbody bad_input
req 400 POST /v1/clusters "${W[@]}" --data-binary 'kind: ['; errbody bad_input
sed 's/name: A}/name: B}/; s/count: 24/count: 8/' examples/serve/cluster-a.yaml > "$tmp/b.yaml"
req 201 POST /v1/clusters "${W[@]}" --data-binary @"$tmp/b.yaml"
req 200 GET /v1/clusters "${W[@]}"; has '"clusters":\["A","B"\]'
req 200 GET /v1/clusters/A -H "Authorization: Bearer tok-ro"; has '"vmsPerRack"'
req 404 GET /v1/clusters/nope "${W[@]}"; errbody not_found
# scale
req 200 PATCH /v1/clusters/B/pools/pool-1 "${W[@]}" -d '{"count": 10}'; has '"B-pool-1-10"'
req 200 PATCH /v1/clusters/B/pools/pool-2 "${W[@]}" -d '{"count": 2}'
req 422 PATCH /v1/clusters/B/pools/pool-1 "${W[@]}" -d '{"count": 900}'; errbody does_not_fit
req 422 PATCH /v1/clusters/B/pools/pool-1 "${W[@]}" -d '{"count": -1}'; errbody invalid
req 400 PATCH /v1/clusters/B/pools/pool-1 "${W[@]}" -d '{"count": "ten"}'; errbody bad_input
req 400 PATCH /v1/clusters/B/pools/pool-1 "${W[@]}" -d '{"count": 1'; errbody bad_input
deep=$(printf '[%.0s' $(seq 1 100))
req 400 PATCH /v1/clusters/B/pools/pool-1 "${W[@]}" -d "$deep"; has 'nested too deeply'
req 404 PATCH /v1/clusters/B/pools/nope "${W[@]}" -d '{"count": 1}'; errbody not_found
req 403 PATCH /v1/clusters/B/pools/pool-1 -H "Authorization: Bearer tok-ro" -d '{"count": 1}'
# after the failed scale the next VM keeps its name: pool-1-11
req 200 PATCH /v1/clusters/B/pools/pool-1 "${W[@]}" -d '{"count": 11}'; has '"B-pool-1-11"'
# delete
sed 's/name: A}/name: C}/; s/count: 24/count: 4/' examples/serve/cluster-a.yaml > "$tmp/c.yaml"
req 201 POST /v1/clusters "${W[@]}" --data-binary @"$tmp/c.yaml"
req 204 DELETE /v1/clusters/C "${W[@]}"
req 404 DELETE /v1/clusters/C "${W[@]}"
req 404 GET /v1/clusters/C "${W[@]}"
# methods, paths, limits
req 405 DELETE /v1/estate "${W[@]}"; errbody method_not_allowed
req 404 GET /v2/nothing "${W[@]}"; errbody not_found
head -c 70000 /dev/zero | tr '\0' 'a' > "$tmp/huge"
req 413 POST /v1/clusters "${W[@]}" --data-binary @"$tmp/huge"; errbody payload_too_large
req 413 POST /v1/clusters "${W[@]}" -H "Transfer-Encoding: chunked" --data-binary @"$tmp/huge"
errbody payload_too_large
# stateless engines
req 200 POST /v1/kube/schedule "${W[@]}" --data-binary @examples/kube/usage-aware.yaml
has '"pods":\['
req 400 POST /v1/kube/schedule "${W[@]}" --data-binary 'kind: Pod'; errbody bad_input
# preemption (default) and ?preempt=false
req 200 POST /v1/kube/schedule "${W[@]}" --data-binary @examples/kube/preemption.yaml
has '"nominatedNode":"node-1"'; has '"victims":\[{"namespace":"default","name":"batch-a","node":"node-1"}'
req 200 POST '/v1/kube/schedule?preempt=false' "${W[@]}" --data-binary @examples/kube/preemption.yaml
has '"nominatedNode":null'; grep -q '"nominatedNode":"' "$tmp/out" && fail "preempt=false preempted"
req 400 POST '/v1/kube/schedule?preempt=maybe' "${W[@]}" --data-binary @examples/kube/preemption.yaml
errbody bad_input
req 200 POST '/v1/fleet/place?now=2024-05-01T12:00:00Z' "${W[@]}" --data-binary @examples/fleet/seed-sorters.yaml
has '"placements":\['
req 400 POST '/v1/fleet/place?now=yesterday' "${W[@]}" --data-binary @examples/fleet/seed-sorters.yaml
# metrics
req 200 GET /metrics "${W[@]}"
has 'berth_http_requests_total{route="/v1/clusters",method="POST",code="201"} 3'
has 'berth_rejections_total{reason="does_not_fit"} 2'
has 'berth_placements_total{op="create"} 3'
has 'berth_estate_utilisation_ratio 0\.'
# restart: the same state comes back from the log
req 200 GET /v1/estate "${W[@]}"; cp "$tmp/out" "$tmp/before.json"
stop
start
req 200 GET /v1/estate "${W[@]}"
cmp -s "$tmp/out" "$tmp/before.json" || fail "state after restart differs"
# the next placement after a restart continues identically
req 200 PATCH /v1/clusters/B/pools/pool-1 "${W[@]}" -d '{"count": 12}'; has '"B-pool-1-12"'
# replacing the estate drops the clusters; that survives a restart too
req 200 PUT /v1/estate "${W[@]}" --data-binary @examples/serve/site.yaml
stop
start
req 200 GET /v1/clusters "${W[@]}"; has '"clusters":\[\]'
stop
echo "serve_api: ok"
