#!/usr/bin/env bash
# Scenario: every `build/berth ...` example line of README.md runs: exit 0
# (everything placed) or 1 (something did not fit, by design), never 2 (bad
# input or usage) or 3 (internal error). Keeps the README's examples
# runnable as the code changes.
set -u
BERTH=${BERTH:-build/berth}
fails=0
n=0
while IFS= read -r line; do
  cmd=${line%%#*}              # drop the trailing comment
  args=${cmd#build/berth }
  n=$((n + 1))
  # shellcheck disable=SC2086
  out=$("$BERTH" $args 2>&1 >/dev/null)
  rc=$?
  if [ $rc -ne 0 ] && [ $rc -ne 1 ]; then
    echo "FAIL: README example exits $rc: $cmd"
    echo "$out" | head -3
    fails=$((fails + 1))
  fi
done < <(grep -E '^build/berth ' README.md)
[ $n -gt 20 ] || { echo "FAIL: only $n README examples found"; exit 1; }
[ $fails -eq 0 ] || { echo "readme_examples: $fails of $n failed"; exit 1; }
echo "readme_examples: $n ok"
