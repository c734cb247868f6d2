# tests/tsan/same.sh - sourced by the tests/tsan/*_threads.sh scripts:
# `tsan_same ARGS...` runs `$BERTH ARGS...` twice, with @T@ in the
# arguments replaced by 1 and by 4, and counts a failure in $fails when the
# four-thread run prints a ThreadSanitizer report or an output other than
# the one-thread run's. Sourcing it also sets BERTH (default
# build/tsan/berth; ends the script when it is missing), the scratch folder
# $tmp (removed on exit), TSAN_OPTIONS and fails=0.
BERTH=${BERTH:-build/tsan/berth}
[ -x "$BERTH" ] || { echo "FAIL: $BERTH missing (run make tsan)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
fails=0
tsan_same() {
  local a1=() a4=() x
  for x in "$@"; do
    a1+=("${x//@T@/1}")
    a4+=("${x//@T@/4}")
  done
  "$BERTH" "${a1[@]}" > "$tmp/one" 2> /dev/null
  "$BERTH" "${a4[@]}" > "$tmp/four" 2> "$tmp/log"
  if grep -q ThreadSanitizer "$tmp/log"; then
    echo "FAIL: ThreadSanitizer report (berth ${a4[*]}):"
    grep -m1 -A30 ThreadSanitizer "$tmp/log"
    fails=$((fails + 1))
  fi
  cmp -s "$tmp/one" "$tmp/four" || { echo "FAIL: berth ${a4[*]} differs from --threads 1"; fails=$((fails + 1)); }
}
