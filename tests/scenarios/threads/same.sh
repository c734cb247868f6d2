# tests/scenarios/threads/same.sh - sourced by the *_threads.sh scenarios:
# `same LABEL ARGS...` runs `$BERTH $CMD --threads N ARGS...` for N = 1 and
# every N of $THREADS and records a failure (the caller's `fail`) when an
# exit code or a byte of the output differs from --threads 1's; returns
# --threads 1's exit code, its output left in $T/t1. Sourcing it also sets
# BERTH (default build/berth), the scratch folder $T (removed on exit),
# fails=0 and `fail MESSAGE` (prints it, counts it in $fails). The caller
# sets CMD (e.g. "kube schedule") and THREADS.
BERTH=${BERTH:-build/berth}
T=${TMPDIR:-/tmp}/$(basename "$0" .sh).$$
mkdir -p "$T"
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
same() {
  local label=$1
  shift
  "$BERTH" $CMD --threads 1 "$@" > "$T/t1" 2>/dev/null
  local rc1=$?
  for t in $THREADS; do
    "$BERTH" $CMD --threads $t "$@" > "$T/t$t" 2>/dev/null
    local rc=$?
    [ $rc -eq $rc1 ] || fail "$label --threads $t: exit $rc, --threads 1 exit $rc1"
    cmp -s "$T/t1" "$T/t$t" || fail "$label --threads $t: output differs from --threads 1: $(diff "$T/t1" "$T/t$t" | head -4)"
  done
  return $rc1
}
