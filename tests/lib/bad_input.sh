# tests/lib/bad_input.sh - sourced by the bad-input scenarios
# (nexus_bad_input.sh, kube_bad_input.sh): the scratch folder $tmp (removed
# on exit), the failure count `fails` with `bad MESSAGE`, the count of
# checked runs `checked`, and run2, one run that must fail with exit 2.
BERTH=${BERTH:-build/berth}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
checked=0

bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

# run2 LABEL LOCATION-FILE-OR-EMPTY FRAGMENTS-FILE -- ARGS...
# Runs berth ARGS: exit code exactly 2, nothing on stdout, a message and no
# sanitizer report on stderr, every line of FRAGMENTS-FILE (when given) in
# it, and "LOCATION-FILE:LINE:COLUMN:" (when given).
run2() {
  local label=$1 loc=$2 frags=$3
  shift 4
  "$BERTH" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
  local rc=$?
  checked=$((checked + 1))
  if [ $rc -ge 128 ]; then
    bad "$label: crashed (exit $rc)"; sed 's/^/    /' "$tmp/err" | head -20; return
  fi
  [ $rc -eq 2 ] || bad "$label: exit $rc, expected 2"
  [ -s "$tmp/out" ] && bad "$label: wrote to stdout: $(head -c 200 "$tmp/out")"
  [ -s "$tmp/err" ] || bad "$label: no message on stderr"
  if grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:|Segmentation|Aborted' "$tmp/err"; then
    bad "$label: sanitizer report"; head -20 "$tmp/err" | sed 's/^/    /'
  fi
  if [ -n "$frags" ]; then
    while IFS= read -r frag; do
      [ -n "$frag" ] || continue
      grep -qF -- "$frag" "$tmp/err" || bad "$label: stderr lacks '$frag': $(head -c 300 "$tmp/err")"
    done <"$frags"
  fi
  if [ -n "$loc" ]; then
    local err
    err=$(cat "$tmp/err")
    [[ $err =~ "$loc":[0-9]+:[0-9]+: ]] || bad "$label: stderr does not name $loc:LINE:COLUMN: $err"
  fi
}
