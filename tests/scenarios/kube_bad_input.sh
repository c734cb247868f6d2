#!/usr/bin/env bash
# Scenario: bad kube input (SPEC 6.1, 6.2). Every tests/bad/kube-*.yaml is
# run through `berth kube schedule FILE`: exit code exactly 2, nothing on
# stdout, no sanitizer report, and stderr carries every "# expect: FRAGMENT"
# line of the file plus "FILE:LINE:COLUMN:" (unless the file says
# "# expect-location: no"). The same files with --strict must fail the same
# way. A file with "# strict-only: WARNING" (a kind berth does not read)
# fails only with --strict; without it the run succeeds (exit 0 or 1) with
# "berth: WARNING" on stderr and WARNING in the JSON's warnings. Also:
# `kube size` on each file, and a strict-only typo.
set -u
. tests/lib/bad_input.sh   # $tmp, bad, checked, run2

nfiles=0
for f in tests/bad/kube-*.yaml; do
  [ -f "$f" ] || continue
  nfiles=$((nfiles + 1))
  sed -n 's/^# expect: //p' "$f" >"$tmp/frags"
  [ -s "$tmp/frags" ] || bad "$f: no '# expect:' line"
  loc=$f
  grep -q '^# expect-location: no' "$f" && loc=
  warn=$(sed -n 's/^# strict-only: //p' "$f")
  if [ -n "$warn" ]; then
    for fmt in table json; do
      "$BERTH" kube schedule -o $fmt "$f" >"$tmp/out" 2>"$tmp/err" </dev/null
      rc=$?
      checked=$((checked + 1))
      [ $rc -le 1 ] || bad "$f (-o $fmt, not strict): exit $rc: $(head -c 300 "$tmp/err")"
      grep -qxF "berth: $warn" "$tmp/err" || bad "$f (-o $fmt): stderr lacks 'berth: $warn': $(head -c 300 "$tmp/err")"
      [ $fmt = table ] || grep -qF "\"$warn\"" "$tmp/out" || bad "$f: JSON warnings lack '$warn'"
    done
    "$BERTH" kube schedule -q "$f" >"$tmp/out" 2>"$tmp/err" </dev/null
    checked=$((checked + 1))
    [ -s "$tmp/err" ] && bad "$f -q: printed $(head -c 200 "$tmp/err")"
  else
    run2 "$f" "$loc" "$tmp/frags" -- kube schedule "$f"
    run2 "$f (-o json)" "$loc" "$tmp/frags" -- kube schedule -o json "$f"
  fi
  run2 "$f (--strict)" "$loc" "$tmp/frags" -- kube schedule --strict "$f"
done
[ $nfiles -ge 12 ] || bad "only $nfiles tests/bad/kube-*.yaml files (want at least 12)"

# a field outside the real API: accepted, but an error with --strict
cat >"$tmp/typo.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers: []
  nodeSelectr: {disk: ssd}
YAML
"$BERTH" kube schedule "$tmp/typo.yaml" >"$tmp/out" 2>"$tmp/err"
rc=$?
checked=$((checked + 1))
[ $rc -ge 2 ] && bad "typo without --strict: exit $rc ($(head -c 200 "$tmp/err"))"
echo "spec.nodeSelectr" >"$tmp/typofrag"
echo "did you mean 'nodeSelector'" >>"$tmp/typofrag"
run2 "typo with --strict" "$tmp/typo.yaml" "$tmp/typofrag" -- kube schedule --strict "$tmp/typo.yaml"

# the realistic kubectl dump loads as is, strict or not
for s in "" --strict; do
  "$BERTH" kube schedule $s examples/kube/kubectl-list.yaml >"$tmp/out" 2>"$tmp/err"
  rc=$?
  checked=$((checked + 1))
  [ $rc -le 1 ] || bad "kubectl-list.yaml $s: exit $rc: $(head -c 300 "$tmp/err")"
done

if [ $fails -gt 0 ]; then
  echo "$fails problem(s) in $checked checks"
  exit 1
fi
echo "kube bad input OK: $nfiles files, $checked checks"
