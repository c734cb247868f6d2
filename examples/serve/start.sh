#!/usr/bin/env bash
# Starts `berth serve` on loopback with the example tokens, loads the seed's
# estate and creates the seed's clusters (SPEC 1.6) with curl, then prints
# the per-rack counts. Stop the server with Ctrl-C (or kill the printed pid).
# usage: examples/serve/start.sh [PORT]   (run from the repository root)
set -euo pipefail
port=${1:-8080}
here=$(cd "$(dirname "$0")" && pwd)
berth=${BERTH:-build/berth}
db=${DB:-build/serve-example.db}
rm -f "$db" "$db-wal" "$db-shm"
"$berth" serve --listen "127.0.0.1:$port" --db "$db" --token-file "$here/tokens.txt" \
  --read-only-token-file "$here/read-only-tokens.txt" &
pid=$!
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "berth serve pid $pid"
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/readyz" > /dev/null && break; sleep 0.1; done
auth=(-H "Authorization: Bearer example-write-token-change-me")
api="http://127.0.0.1:$port/v1"
curl -sf "${auth[@]}" -X PUT --data-binary @"$here/site.yaml" "$api/estate"; echo
# the seed's clusters, from the simulate example, one POST each
for c in A B C D E; do
  awk -v want="$c" 'BEGIN{RS="\n---\n"} $0 ~ "kind: KubernetesCluster" && $0 ~ "name: " want "[}\n ]" {print}' \
    examples/nexus/seed-scenarios.yaml > "$work/seed-$c.yaml"
  code=$(curl -s -o "$work/seed-$c.out" -w '%{http_code}' "${auth[@]}" -X POST \
    --data-binary @"$work/seed-$c.yaml" "$api/clusters")
  echo "cluster $c: $code"
done
curl -sf "${auth[@]}" "$api/clusters"; echo
echo "server still running (pid $pid); try: curl -H 'Authorization: Bearer example-read-token-change-me' $api/clusters/A"
wait "$pid"
