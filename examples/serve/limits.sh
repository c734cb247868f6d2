#!/usr/bin/env bash
# Starts `berth serve` on loopback with every connection, thread and budget
# option spelled out (docs/api.md "Connections, threads and budgets"; the
# values are the defaults except the planner pool and the request deadline),
# then shows the pools and connection counters in /metrics and stops it.
# usage: examples/serve/limits.sh [PORT]   (run from the repository root)
set -euo pipefail
port=${1:-8081}
berth=${BERTH:-build/berth}
db=$(mktemp -d)/limits.db
"$berth" serve --listen "127.0.0.1:$port" --db "$db" \
  --max-connections 10000 --per-ip-connections 64 --timeout 30 --request-timeout 5 \
  --threads 4 --workers 64 --planner-threads 2 --planner-queue 4 \
  --max-objects 100000 --max-pairs 250000 --max-request-seconds 30 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$(dirname "$db")"' EXIT
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/readyz" > /dev/null && break; sleep 0.1; done
curl -s "http://127.0.0.1:$port/metrics" | grep -E '^berth_(http_open|http_deadline|http_busy|http_stopped|pool)'
