#!/usr/bin/env bash
# Scenario: `berth autoscale plan --threads N` and `autoscale simulate
# --threads N` (docs/autoscale.md "Threads") print what --threads 1 prints,
# byte for byte, with the same exit code: on every autoscale input under
# examples/ and tests/scenarios/ (table and JSON, both policies; a file
# autoscale plan does not take alone is skipped), the simulate examples, and
# random Ocean estates of 1,100-1,400 nodes
# (tests/scenarios/threads/gen-autoscale.awk: large enough for the what-if
# sessions' parallel per-node loops, with pod anti-affinity and zone spread
# the fit index does not answer, so the sessions schedule them through the
# full pipeline; pending pods that need new nodes). Also: bad --threads
# values, --help. The disrupt side is tests/scenarios/disrupt_threads.sh.
set -u
AT="--at 2024-05-01T12:00:00Z"

THREADS="2 4"
. tests/scenarios/threads/same.sh
same_as() { # same_as LABEL CMD ARGS...: same, for `autoscale CMD`
  local label=$1
  CMD="autoscale $2"
  shift 2
  same "$label" "$@"
}

n=0
THREADS=2 # below 1024 nodes no pool is started: one other count is enough
for f in $(find examples/autoscale examples/disrupt tests/scenarios -name '*.yaml' -o -name '*.json' | sort); do
  "$BERTH" autoscale plan -q $AT --threads 1 "$f" 2>/dev/null
  [ $? -eq 2 ] && continue # not an autoscale input on its own
  same_as "$f" plan $AT "$f"
  same_as "$f (json)" plan $AT -o json "$f"
  same_as "$f (cluster-autoscaler)" plan $AT -o json --policy cluster-autoscaler "$f"
  n=$((n + 1))
done
[ $n -ge 8 ] || fail "only $n autoscale inputs compared"
S=examples/autoscale/simulate
same_as "simulate estate" simulate -o json $S/estate.yaml --events $S/events.yaml
same_as "simulate revert-to-spot" simulate -o json $S/revert-to-spot.yaml --events $S/spot-returns.yaml \
  --from 2024-05-01T12:00:00Z --to 2024-05-01T12:10:00Z
THREADS="2 4"

for seed in 1 2 3; do
  nodes=$((1000 + seed * 120))
  awk -v seed=$seed -v nodes=$nodes -f tests/scenarios/threads/gen-autoscale.awk > "$T/e$seed.yaml"
  same_as "estate $seed" plan $AT "$T/e$seed.yaml"
  same_as "estate $seed (json)" plan $AT -o json "$T/e$seed.yaml"
  # the answer is not trivial: the pass buys and removes nodes
  grep -q '"virtualNodeGroup": "general"' "$T/t1" || fail "estate $seed: no group in the plan"
  python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if len(d['scaleUp']) > 0 and len(d['scaleDown']) > 10 else 1)" "$T/t1" ||
    fail "estate $seed: no scale-up or few scale-downs"
done
same_as "estate 1 (cluster-autoscaler)" plan $AT -o json --policy cluster-autoscaler "$T/e1.yaml"
grep -q '"node"' "$T/t1" || fail "estate 1 (cluster-autoscaler): empty plan"
# a short timeline over the large estate: every pass on the pool
cat > "$T/ev.yaml" <<'EOT'
apiVersion: berth.io/v1
kind: AutoscaleEvent
metadata: {name: cheaper}
spec: {at: 2024-05-01T12:01:00Z, type: PriceChange, instanceType: m5.large, zone: us-east-1a, capacityType: spot, price: 0.02, available: true}
EOT
same_as "simulate estate 2" simulate -o json "$T/e2.yaml" --events "$T/ev.yaml" \
  --from 2024-05-01T12:00:00Z --to 2024-05-01T12:02:00Z

for bad in 0 -1 x 257 ""; do
  for cmd in "plan $AT" "simulate --events $S/events.yaml"; do
    # shellcheck disable=SC2086
    "$BERTH" autoscale $cmd --threads "$bad" $S/estate.yaml > /dev/null 2> "$T/err"
    [ $? -eq 2 ] && grep -q -- '--threads expects' "$T/err" || fail "autoscale ${cmd%% *} --threads '$bad' is not a usage error"
  done
done
"$BERTH" autoscale plan --help | grep -q -- '--threads N' || fail "plan --help lacks --threads"
"$BERTH" autoscale simulate --help | grep -q -- '--threads N' || fail "simulate --help lacks --threads"

[ $fails -eq 0 ] || exit 1
echo "ok: $n inputs, the simulate examples and 3 random estates, --threads 1/2/4 identical"
