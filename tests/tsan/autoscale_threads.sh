#!/usr/bin/env bash
# tests/tsan/autoscale_threads.sh - `berth autoscale plan --threads 4` and
# `autoscale simulate --threads 4` built with ThreadSanitizer (make tsan) on
# a random 1,100-node Ocean estate (tests/scenarios/threads/gen-autoscale.awk):
# the scale-up and scale-down what-if sessions' pools (the full pipeline's
# filter and per-node score chunks for anti-affinity and spread pods, the
# fast path's filtered chunks), both policies, a session per pass. Fails on
# any ThreadSanitizer report or when the output differs from --threads 1.
set -u
. tests/tsan/same.sh
awk -v seed=5 -v nodes=1100 -f tests/scenarios/threads/gen-autoscale.awk > "$tmp/e.yaml"
cat > "$tmp/ev.yaml" <<'EOT'
apiVersion: berth.io/v1
kind: AutoscaleEvent
metadata: {name: cheaper}
spec: {at: 2024-05-01T12:01:00Z, type: PriceChange, instanceType: m5.large, zone: us-east-1a, capacityType: spot, price: 0.02, available: true}
EOT
for run in "plan --at 2024-05-01T12:00:00Z -o json" \
           "plan --at 2024-05-01T12:00:00Z -o json --policy cluster-autoscaler" \
           "simulate --events $tmp/ev.yaml --from 2024-05-01T12:00:00Z --to 2024-05-01T12:01:00Z"; do
  # shellcheck disable=SC2086
  tsan_same autoscale $run --threads @T@ "$tmp/e.yaml"
done
[ $fails -eq 0 ] || exit 1
echo "tsan autoscale threads: ok"
