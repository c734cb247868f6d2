#!/usr/bin/env bash
# tests/tsan/kube_threads.sh - `berth kube schedule --threads 4` built with
# ThreadSanitizer (make tsan) on a random 1,300-node cluster
# (tests/scenarios/threads/gen-cluster.awk): the pool's chunks in the
# pipeline's filters and per-node scores (JSON, --detail all: the full
# pipeline) and in the fast path's filtered chunks (table). Fails on any
# ThreadSanitizer report or when the output differs from --threads 1.
set -u
. tests/tsan/same.sh
awk -v seed=4 -v nodes=1300 -v pods=120 -v bound=60 -f tests/scenarios/threads/gen-cluster.awk > "$tmp/c.json"
for args in "" "-o json" "--tie-break random --seed 3 -o json" "--detail all -o json"; do
  # shellcheck disable=SC2086
  tsan_same kube schedule --threads @T@ $args "$tmp/c.json"
done
[ $fails -eq 0 ] || exit 1
echo "tsan kube threads: ok"
