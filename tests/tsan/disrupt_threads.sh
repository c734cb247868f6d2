#!/usr/bin/env bash
# tests/tsan/disrupt_threads.sh - `berth disrupt plan --threads 4` built
# with ThreadSanitizer (make tsan) on a random 1,100-node Karpenter estate
# (tests/scenarios/threads/gen-disrupt.awk): the what-if session's pool
# (the full pipeline's filter and per-node score chunks, the fast path's
# filtered chunks) across many questions, the session rolled back between
# them; and an estate of plain pods (the counting certificate's chunked
# slot sums); and an estate of pinned pods (single-node consolidation's
# speculative batches on worker sessions, the binary search's probe
# rounds run on the first estate). Fails on any ThreadSanitizer report or
# when the output differs from --threads 1.
set -u
. tests/tsan/same.sh
awk -v seed=5 -v nodes=1100 -f tests/scenarios/threads/gen-disrupt.awk > "$tmp/e.yaml"
awk -v seed=6 -v nodes=1100 -v plain=1 -f tests/scenarios/threads/gen-disrupt.awk > "$tmp/p.yaml"
awk -v seed=7 -v nodes=1100 -v pin=30 -f tests/scenarios/threads/gen-disrupt.awk > "$tmp/w.yaml"
for run in "e.yaml -o json" "e.yaml --optimize" "p.yaml -o json" "w.yaml -o json"; do
  f=${run%% *}
  args=${run#* }
  # shellcheck disable=SC2086
  tsan_same disrupt plan --at 2024-05-01T12:00:00Z --threads @T@ $args "$tmp/$f"
done
[ $fails -eq 0 ] || exit 1
echo "tsan disrupt threads: ok"
