#!/usr/bin/env bash
# Runs every test: the unit test binaries ($BUILD/tests/test_*), the CLI
# scenario tests (tests/scenarios/*.sh) and, when TSAN_BUILD is set, the
# ThreadSanitizer scripts ($TSAN_SCRIPTS, with BERTH=$TSAN_BUILD/berth).
# They run TEST_JOBS at a time (default: one per processor), longest first:
# the order comes from tests/timings.txt ("<wall s> <cpu s> <name>" lines,
# ordered by the processor time, which a busy machine disturbs less than the
# wall time); an item not listed there starts before all the listed ones,
# so a new long test never starts last. Each item's output goes to
# $BUILD/test-logs/NAME.log; a failure prints its last 40 lines. This run's
# figures are written to $BUILD/test-timings.txt (the same format: copy it
# over tests/timings.txt to refresh the order). A script with a line
# "# run-tests: alone" (its asserts bound response times) runs after all
# the others, one at a time, with nothing beside it.
# Prints one line per item ("PASS name (12.3 s, cpu 11.9 s)"), then one
# closing line "N passed, N failed", and exits non-zero on failure.
set -u
BUILD=${BUILD:-build}
case $BUILD in /*) export BERTH="$BUILD/berth" ;; *) export BERTH="$PWD/$BUILD/berth" ;; esac
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
JOBS=${TEST_JOBS:-$(nproc 2>/dev/null || echo 2)}
[ "$JOBS" -ge 1 ] 2>/dev/null || JOBS=1
# `wait -n -p` (which job ended) needs bash 5.1; older shells run one at a time
if [ "${BASH_VERSINFO[0]}" -lt 5 ] || { [ "${BASH_VERSINFO[0]}" -eq 5 ] && [ "${BASH_VERSINFO[1]}" -lt 1 ]; }; then
  JOBS=1
fi
TSAN_BUILD=${TSAN_BUILD:-}
TSAN_SCRIPTS=${TSAN_SCRIPTS:-tests/tsan/serve_concurrent.sh tests/tsan/kube_threads.sh tests/tsan/disrupt_threads.sh tests/tsan/autoscale_threads.sh}
logs=$BUILD/test-logs
rm -rf "$logs"; mkdir -p "$logs"

# the items: "<name> <kind> <path>"
items=()
for t in "$BUILD"/tests/test_*; do
  [ -x "$t" ] && items+=("$(basename "$t") unit $t")
done
alone=()
for s in tests/scenarios/*.sh; do
  [ -f "$s" ] || continue
  if grep -q '^# run-tests: alone' "$s"; then
    alone+=("scenario/$(basename "$s" .sh) scenario $s")
  else
    items+=("scenario/$(basename "$s" .sh) scenario $s")
  fi
done
if [ -n "$TSAN_BUILD" ]; then
  for s in $TSAN_SCRIPTS; do
    items+=("tsan/$(basename "$s" .sh) tsan $s")
  done
fi

# longest first (tests/timings.txt); unlisted items first of all
declare -A est=()
if [ -f tests/timings.txt ]; then
  while read -r _ cpu name _; do
    case $cpu in ''|\#*) continue ;; esac
    [ -n "$name" ] && est[$name]=$cpu
  done < <(grep -v '^#' tests/timings.txt)
fi
mapfile -t order < <(
  for it in "${items[@]}"; do
    name=${it%% *}
    printf '%s %s\n' "${est[$name]:-100000}" "$it"
  done | sort -s -k1,1 -g -r | cut -d' ' -f2-)

# run_item NAME KIND PATH: runs one item, its output to its log, and writes
# "<exit code> <seconds>" to its .rc file
run_item() {
  local name=$1 kind=$2 path=$3 log=$logs/${1//\//_} t0=$EPOCHREALTIME rc
  case $kind in
    unit) timeout 600 "$path" > "$log.log" 2>&1 ;;
    scenario) timeout 600 bash "$path" > "$log.log" 2>&1 ;;
    tsan) BERTH=$TSAN_BUILD/berth timeout 600 bash "$path" > "$log.log" 2>&1 ;;
  esac
  rc=$?
  local wall cpu
  wall=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
  # the processor time of the item's processes (user + system): `times` in
  # this shell (a pipe or $(...) would run it in a new one, without them)
  times > "$log.times"
  cpu=$(awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, p, /[ms]/); t += p[1] * 60 + p[2] }
                       printf "%.1f", t }' "$log.times")
  echo "$rc $wall $cpu" > "$log.rc"
}

pass=0; fail=0; failed=()
declare -A running=()
: > "$BUILD/test-timings.txt.tmp"
# report PID: prints the result of the item that job PID ran
report() {
  local name=${running[$1]} log rc secs cpu
  unset "running[$1]"
  log=$logs/${name//\//_}
  read -r rc secs cpu < "$log.rc" 2>/dev/null || { rc=1; secs=0; cpu=0; }
  echo "$secs $cpu $name" >> "$BUILD/test-timings.txt.tmp"
  if [ "$rc" -eq 0 ]; then
    pass=$((pass+1)); echo "PASS $name ($secs s, cpu $cpu s)"
  else
    fail=$((fail+1)); failed+=("$name"); echo "FAIL $name ($secs s, cpu $cpu s, exit $rc)"; tail -40 "$log.log"
  fi
}
t_start=$EPOCHREALTIME
for it in "${order[@]}"; do
  read -r name kind path <<< "$it"
  while [ ${#running[@]} -ge "$JOBS" ]; do
    if [ "$JOBS" -gt 1 ]; then wait -n -p done_pid; else done_pid=${!running[*]}; wait "$done_pid"; fi
    report "$done_pid"
  done
  run_item "$name" "$kind" "$path" &
  running[$!]=$name
done
while [ ${#running[@]} -gt 0 ]; do
  if [ "$JOBS" -gt 1 ]; then wait -n -p done_pid; else done_pid=${!running[*]}; wait "$done_pid"; fi
  report "$done_pid"
done
# the scripts that time responses: one at a time, nothing beside them
for it in "${alone[@]}"; do
  read -r name kind path <<< "$it"
  run_item "$name" "$kind" "$path" &
  running[$!]=$name
  wait "$!"
  report "$!"
done
sort -k2,2 -g -r "$BUILD/test-timings.txt.tmp" > "$BUILD/test-timings.txt"
rm -f "$BUILD/test-timings.txt.tmp"
echo "tests: $(awk -v a="$t_start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }') s on $JOBS jobs (durations: $BUILD/test-timings.txt)"
[ $fail -gt 0 ] && echo "failed: ${failed[*]}"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
