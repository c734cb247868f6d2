#!/usr/bin/env bash
# Scenario: `berth disrupt plan --threads N` (docs/disrupt.md "Threads")
# prints what --threads 1 prints, byte for byte, with the same exit code: on
# every disrupt input under examples/ and tests/scenarios/ (table and JSON,
# --optimize; a file disrupt plan does not take alone is skipped), and on
# random Karpenter estates of 1,100-1,400 nodes
# (tests/scenarios/threads/gen-disrupt.awk: large enough for the what-if
# session's parallel per-node loops, with pods the session must schedule
# through the full pipeline; and an estate of plain pods, where the counting
# certificate's slot sums run in chunks; and an estate of pinned pods where
# single-node consolidation walks past many failing candidates, answered in
# speculative batches). Also: bad --threads values, --help.
# The kube side is tests/scenarios/kube_threads.sh.
set -u
AT="--at 2024-05-01T12:00:00Z"

THREADS="2 4"
CMD="disrupt plan $AT"
. tests/scenarios/threads/same.sh

n=0
THREADS=2 # below 1024 nodes no pool is started: one other count is enough
for f in $(find examples/disrupt examples/autoscale tests/scenarios -name '*.yaml' -o -name '*.json' | sort); do
  "$BERTH" disrupt plan -q $AT --threads 1 "$f" 2>/dev/null
  [ $? -eq 2 ] && continue # not a disrupt input on its own
  same "$f" "$f"
  same "$f (json, optimize)" -o json --optimize "$f"
  n=$((n + 1))
done
[ $n -ge 8 ] || fail "only $n disrupt inputs compared"
THREADS="2 4"

for seed in 1 2 3; do
  nodes=$((1000 + seed * 120))
  awk -v seed=$seed -v nodes=$nodes -f tests/scenarios/threads/gen-disrupt.awk > "$T/e$seed.yaml"
  same "estate $seed" "$T/e$seed.yaml"
  same "estate $seed (json)" -o json "$T/e$seed.yaml"
  # the answer is not trivial: the pass deletes nodes
  grep -q '"action": "delete"' "$T/t1" || fail "estate $seed: no action"
  [ "$(grep -c '"aks-default-' "$T/t1")" -gt 10 ] || fail "estate $seed: few nodes in the plan"
done
# plain pods only: the counting certificate's chunked slot sums answer
awk -v seed=4 -v nodes=1500 -v plain=1 -f tests/scenarios/threads/gen-disrupt.awk > "$T/p.yaml"
same "plain estate" -o json "$T/p.yaml"
grep -q '"action": "delete"' "$T/t1" || fail "plain estate: no action"
same "plain estate (optimize)" --optimize "$T/p.yaml"
# single-node consolidation past many failing candidates (pinned pods,
# budget of one node): the candidates are answered in speculative batches
# on worker sessions, the first that acts taken in candidate order
awk -v seed=7 -v nodes=1100 -v pin=30 -f tests/scenarios/threads/gen-disrupt.awk > "$T/w.yaml"
same "walk estate" -o json "$T/w.yaml"
grep -q '"action": "delete"' "$T/t1" || fail "walk estate: no action"
[ "$(grep -c 'fit neither' "$T/t1")" -ge 8 ] || fail "walk estate: few failing candidates before the action"
same "walk estate (table)" "$T/w.yaml"
# the optimiser's questions go through the same session
same "estate 1 (optimize)" -o json --optimize "$T/e1.yaml"
grep -q '"optimizer"' "$T/t1" || grep -q 'ptimi' "$T/t1" || fail "optimize: no optimiser output"

for bad in 0 -1 x 257 ""; do
  "$BERTH" disrupt plan $AT --threads "$bad" examples/disrupt/consolidate.yaml > /dev/null 2> "$T/err"
  [ $? -eq 2 ] && grep -q -- '--threads expects' "$T/err" || fail "--threads '$bad' is not a usage error"
done
"$BERTH" disrupt plan --help | grep -q -- '--threads N' || fail "--help lacks --threads"

[ $fails -eq 0 ] || exit 1
echo "ok: $n inputs and 5 random estates, --threads 1/2/4 identical"
