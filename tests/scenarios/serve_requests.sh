#!/usr/bin/env bash
# serve_requests: the checks `berth serve` makes before any work
# (docs/api.md "Request checks"), over curl on loopback: authentication
# before routing (unknown /v1 paths answer 401 without a token), a 413
# straight from Content-Length (no 100 Continue), cluster and pool names of
# 1-63 letters, digits, '-', '_' or '.' (located 400 otherwise), and an
# encoded NUL or '/' in a path segment (400, nothing deleted).
set -u
BERTH=${BERTH:-build/berth}
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$tmp/log" ] && tail -5 "$tmp/log"; exit 1; }

printf 'tok-rw\n' > "$tmp/rw"
printf 'tok-ro\n' > "$tmp/ro"
"$BERTH" serve --listen 127.0.0.1:0 --db "$tmp/db" --token-file "$tmp/rw" \
  --read-only-token-file "$tmp/ro" --max-body 65536 2> "$tmp/log" &
pid=$!
port=
for _ in $(seq 1 200); do
  port=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$tmp/log")
  [ -n "$port" ] && curl -sf "http://127.0.0.1:$port/readyz" > /dev/null && break
  kill -0 "$pid" 2>/dev/null || fail "server exited: $(cat "$tmp/log")"
  sleep 0.05
done
[ -n "$port" ] || fail "server not ready"

W=(-H "Authorization: Bearer tok-rw")
req() {
  local want=$1 m=$2 p=$3; shift 3
  local code
  code=$(curl -s --max-time 10 -o "$tmp/out" -w '%{http_code}' -X "$m" "$@" "http://127.0.0.1:$port$p")
  [ "$code" = "$want" ] || fail "$m $p: status $code, want $want: $(head -c 400 "$tmp/out")"
}
has() { grep -q -- "$1" "$tmp/out" || fail "reply lacks '$1': $(head -c 400 "$tmp/out")"; }

# authentication before routing
req 401 GET /v1/nothing; has unauthorized
req 401 POST /v1/clusters/A/nothing/else -d '{}'; has unauthorized
req 401 GET /v2/anything; has unauthorized
req 401 GET /v1/clusters/A%2Fx; has unauthorized
req 404 GET /v1/nothing "${W[@]}"; has not_found
req 404 POST /v1/nothing -H "Authorization: Bearer tok-ro" -d '{}'; has not_found
req 200 GET /healthz

# 413 from Content-Length, before the body and without 100 Continue
head -c 2000000 /dev/zero | tr '\0' 'x' > "$tmp/big"
code=$(curl -sv --max-time 10 -o "$tmp/out" -w '%{http_code}' -X POST "${W[@]}" \
  -H "Expect: 100-continue" --expect100-timeout 5 --data-binary @"$tmp/big" \
  "http://127.0.0.1:$port/v1/clusters" 2> "$tmp/verbose")
[ "$code" = 413 ] || fail "big body: status $code, want 413"
has payload_too_large; has 'Content-Length 2000000'
grep -q "HTTP/1.1 100" "$tmp/verbose" && fail "big body: the server sent 100 Continue"
# unauthenticated big body: 401, not 413
req 401 POST /v1/clusters --data-binary @"$tmp/big"

# names
req 200 PUT /v1/estate "${W[@]}" --data-binary @examples/serve/site.yaml
req 201 POST /v1/clusters "${W[@]}" --data-binary @examples/serve/cluster-a.yaml
cluster() { # NAME POOL -> $tmp/c.yaml
  printf 'apiVersion: networkcloud.azure.com/v1\nkind: KubernetesCluster\nmetadata: {name: "%s"}\nspec:\n  controlPlaneNodeConfiguration: {count: 1, vmSkuName: NC_G6_28_v1}\n  initialAgentPoolConfigurations:\n  - {name: "%s", count: 1, vmSkuName: NC_G6_28_v1}\n' "$1" "$2" > "$tmp/c.yaml"
}
long=$(printf 'a%.0s' $(seq 1 64))
for bad in 'x/y' '-x' 'x.' 'a b' "$long" 'x%00' 'é'; do
  cluster "$bad" p1
  req 400 POST /v1/clusters "${W[@]}" --data-binary @"$tmp/c.yaml"; has bad_input
  has 'body:[0-9]*:[0-9]*: metadata.name: cluster name'
done
cluster ok-1 'p/1'
req 400 POST /v1/clusters "${W[@]}" --data-binary @"$tmp/c.yaml"; has 'pool name'; has 'body:[0-9]*:[0-9]*: '
ok63=$(printf 'b%.0s' $(seq 1 63))
cluster "$ok63" p_1.x
req 201 POST /v1/clusters "${W[@]}" --data-binary @"$tmp/c.yaml"
req 200 GET "/v1/clusters/$ok63" "${W[@]}"
req 400 GET "/v1/clusters/$long" "${W[@]}"; has 'path: cluster name'
req 400 GET /v1/clusters/.A "${W[@]}"; has 'path: cluster name'
req 400 PATCH /v1/clusters/A/pools/-p "${W[@]}" -d '{"count": 1}'; has 'path: pool name'

# encoded NUL or '/' in a segment: 400, and cluster A is still there
req 400 DELETE /v1/clusters/A%00junk "${W[@]}"; has 'encoded NUL'
req 400 DELETE /v1/clusters/A%2fjunk "${W[@]}"
req 400 GET /v1/clusters/A%2F "${W[@]}"
req 400 PATCH /v1/clusters/A/pools/pool-1%00 "${W[@]}" -d '{"count": 1}'
req 200 GET /v1/clusters/A "${W[@]}"
req 200 GET /v1/clusters/%41 "${W[@]}"
req 204 DELETE /v1/clusters/A "${W[@]}"
req 404 GET /v1/clusters/A "${W[@]}"
echo "serve_requests: ok"
