#!/usr/bin/env bash
# serve_deadline: `berth serve --max-request-seconds` (docs/api.md
# "Connections, threads and budgets"). A planner request that plans longer
# than the limit (here 0.2 s; 1,000 nodes x 1,000 pods with ?detail=all
# takes several seconds) is stopped and answered promptly with 422
# over_budget naming the limit and the option; /healthz still answers; a
# request under the limit gets its 200 with the same JSON as the CLI;
# berth_http_stopped_total counts the stopped one; a bad value of the
# option is a usage error (exit 2).
# run-tests: alone (its asserts bound response times: nothing runs beside it)
set -u
BERTH=${BERTH:-build/berth}
tmp=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null
  wait 2>/dev/null; rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$tmp/log" ] && tail -5 "$tmp/log"; exit 1; }

. tests/lib/kubegen.sh   # gen_kube NODES PODS

for bad in abc -1 1e9 nan; do
  "$BERTH" serve --listen 127.0.0.1:0 --db "$tmp/bad.db" --max-request-seconds "$bad" \
    2> "$tmp/err" && fail "--max-request-seconds $bad accepted"
  [ $? -eq 2 ] || fail "--max-request-seconds $bad: exit code"
  grep -q -- '--max-request-seconds expects seconds' "$tmp/err" || fail "message: $(cat "$tmp/err")"
done
"$BERTH" serve --help | grep -q -- '--max-request-seconds' || fail "--help does not list the option"

"$BERTH" serve --listen 127.0.0.1:0 --db "$tmp/db" --planner-threads 2 --max-pairs 2000000 \
  --max-request-seconds 0.2 2> "$tmp/log" &
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

# 1. over the limit: 422 over_budget, answered soon after the limit
gen_kube 1000 1000 > "$tmp/big.json"
out=$(curl -s -o "$tmp/body" -m 60 -w '%{http_code} %{time_total}' -X POST \
  --data-binary @"$tmp/big.json" "$B/v1/kube/schedule?detail=all") || true
code=${out% *}; t=${out#* }
[ "$code" = 422 ] || fail "long request: status $code, want 422: $(head -c 300 "$tmp/body")"
grep -q '"code":"over_budget"' "$tmp/body" || fail "long request: code: $(cat "$tmp/body")"
grep -q 'request stopped after 0.2 s of planning' "$tmp/body" &&
  grep -q -- 'berth serve --max-request-seconds N' "$tmp/body" ||
  fail "long request: message: $(cat "$tmp/body")"
awk -v t="$t" 'BEGIN { exit !(t < 5.0) }' || fail "the stopped request took ${t}s (want < 5 s)"

# 2. the server is fine: /healthz, and a request under the limit is a 200
# equal to the CLI's JSON
code=$(curl -s -o /dev/null -m 5 -w '%{http_code}' "$B/healthz")
[ "$code" = 200 ] || fail "healthz after the stop: $code"
code=$(curl -s -o "$tmp/small" -m 30 -w '%{http_code}' -X POST \
  --data-binary @examples/kube/workloads.yaml "$B/v1/kube/schedule")
[ "$code" = 200 ] || fail "short request: status $code: $(head -c 300 "$tmp/small")"
"$BERTH" kube schedule examples/kube/workloads.yaml -o json > "$tmp/cli.json" 2>/dev/null
if command -v python3 >/dev/null 2>&1; then
  python3 - "$tmp/small" "$tmp/cli.json" <<'PY' || fail "short request: reply differs from the CLI's JSON"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
sys.exit(0 if a == b else 1)
PY
fi

# 3. counted
curl -s "$B/metrics" | grep -q '^berth_http_stopped_total 1$' ||
  fail "metrics: $(curl -s "$B/metrics" | grep stopped)"

echo "serve_deadline: ok"
