#!/usr/bin/env bash
# Scenario: `berth kube schedule --threads N` (docs/kube.md "Threads") gives
# the same output as --threads 1, byte for byte: on every kube input under
# examples/ and tests/scenarios/ (table and JSON; a file kube schedule does
# not take alone is skipped), and on random clusters of 1,100-1,300 nodes
# (tests/scenarios/threads/gen-cluster.awk: large enough for the parallel
# filter and score chunks and the fast path's filtered chunks) with tie-break
# first and random, JSON, table and --detail all. Also: bad --threads values.
set -u

THREADS="2 4"
CMD="kube schedule"
. tests/scenarios/threads/same.sh

n=0
THREADS=2 # below 1024 nodes no pool is started: one other count is enough
for f in $(find examples/kube examples/disrupt examples/autoscale tests/scenarios/kube tests/scenarios/real \
             -name '*.yaml' -o -name '*.json' | sort); do
  "$BERTH" kube schedule -q --threads 1 "$f" 2>/dev/null
  [ $? -eq 2 ] && continue # not a kube input on its own
  same "$f" "$f"
  same "$f (random json)" --tie-break random --seed 11 -o json "$f"
  n=$((n + 1))
done
[ $n -ge 30 ] || fail "only $n kube inputs compared"
THREADS="2 4"

for seed in 1 2 3; do
  nodes=$((1250 + seed * 100))
  awk -v seed=$seed -v nodes=$nodes -v pods=360 -v bound=120 -f tests/scenarios/threads/gen-cluster.awk \
    > "$T/c$seed.json"
  same "cluster $seed" "$T/c$seed.json"
  same "cluster $seed (json)" -o json "$T/c$seed.json"
  same "cluster $seed (random)" --tie-break random --seed $seed "$T/c$seed.json"
  same "cluster $seed (random json)" --tie-break random --seed $seed -o json "$T/c$seed.json"
  # the answer is not trivial: most pods placed, some not
  placed=$(grep -c '"node": "node-' "$T/t1")
  [ "$placed" -gt 150 ] || fail "cluster $seed: only $placed placements"
done
# every node's reasons (all filters on every candidate), fewer pods
awk -v seed=9 -v nodes=1100 -v pods=150 -v bound=100 -f tests/scenarios/threads/gen-cluster.awk > "$T/d.json"
same "detail all" --detail all -o json "$T/d.json"
grep -q '"feasible"' "$T/t1" || grep -q '"nodes"' "$T/t1" || fail "detail all: no per-node detail"

for bad in 0 -1 x 257 ""; do
  "$BERTH" kube schedule --threads "$bad" examples/kube/workloads.yaml > /dev/null 2> "$T/err"
  [ $? -eq 2 ] && grep -q -- '--threads expects' "$T/err" || fail "--threads '$bad' is not a usage error"
done
"$BERTH" kube schedule --help | grep -q -- '--threads N' || fail "--help lacks --threads"

[ $fails -eq 0 ] || exit 1
echo "ok: $n inputs and 4 random clusters, --threads 1/2/4 identical"
