#!/usr/bin/env bash
# Runs every test: unit test binaries, then the CLI scenario tests.
# Prints one closing line "N passed, N failed" and exits non-zero on failure.
set -u
BUILD=${BUILD:-build}
case $BUILD in /*) export BERTH="$BUILD/berth" ;; *) export BERTH="$PWD/$BUILD/berth" ;; esac
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
pass=0; fail=0; failed=()
for t in "$BUILD"/tests/test_*; do
  [ -x "$t" ] || continue
  name=$(basename "$t")
  if out=$(timeout 600 "$t" 2>&1); then
    pass=$((pass+1)); echo "PASS $name"
  else
    fail=$((fail+1)); failed+=("$name"); echo "FAIL $name"; echo "$out" | tail -40
  fi
done
for s in tests/scenarios/*.sh; do
  [ -f "$s" ] || continue
  name=$(basename "$s" .sh)
  if out=$(timeout 600 bash "$s" 2>&1); then
    pass=$((pass+1)); echo "PASS scenario/$name"
  else
    fail=$((fail+1)); failed+=("scenario/$name"); echo "FAIL scenario/$name"; echo "$out" | tail -40
  fi
done
[ $fail -gt 0 ] && echo "failed: ${failed[*]}"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
