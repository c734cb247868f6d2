#!/usr/bin/env bash
# Scenario: bad input and bad usage never crash and always exit 2 (SPEC 6.2).
# Every tests/bad/*.yaml is run through `berth simulate` (plain, -o json,
# with --svg/--html) and `berth advise`: exit code exactly 2, nothing on
# stdout, no output file written, no sanitizer report, and stderr carries
# every "# expect: FRAGMENT" line of the file plus "FILE:LINE:COLUMN:"
# (unless the file says "# expect-location: no", for file-level errors such
# as a missing Site). Then: an empty file, a directory, a missing file,
# garbage on stdin, unknown flags and commands, flags without values, and
# --help (exit 0).
set -u
. tests/lib/bad_input.sh   # $tmp, bad, checked, run2

nfiles=0
for f in tests/bad/*.yaml; do
  [ -f "$f" ] || continue
  case $(basename "$f") in kube-*|fleet-*) continue ;; esac   # other domains have their own scripts
  nfiles=$((nfiles + 1))
  sed -n 's/^# expect: //p' "$f" >"$tmp/frags"
  [ -s "$tmp/frags" ] || bad "$f: no '# expect:' line"
  loc=$f
  grep -q '^# expect-location: no' "$f" && loc=
  run2 "$f" "$loc" "$tmp/frags" -- simulate "$f"
  run2 "$f (-o json)" "$loc" "$tmp/frags" -- simulate -o json "$f"
  rm -f "$tmp/x.svg" "$tmp/x.html"
  run2 "$f (--svg --html)" "$loc" "$tmp/frags" -- simulate "$f" --svg "$tmp/x.svg" --html "$tmp/x.html"
  if [ -e "$tmp/x.svg" ] || [ -e "$tmp/x.html" ]; then bad "$f: a picture was written for bad input"; fi
  if ls "$tmp" | grep -q '\.tmp\.'; then bad "$f: a temporary output file was left behind"; fi
  run2 "$f (advise)" "$loc" "$tmp/frags" -- advise "$f"
done
[ $nfiles -ge 25 ] || bad "only $nfiles files in tests/bad (want at least 25)"

# file-level trouble
: >"$tmp/zero.yaml"
echo "no input documents" >"$tmp/nosite"
run2 "zero-byte file" "" "$tmp/nosite" -- simulate "$tmp/zero.yaml"
echo "$tmp" >"$tmp/dirfrag"
run2 "a directory" "" "$tmp/dirfrag" -- simulate "$tmp"
echo "$tmp/missing.yaml" >"$tmp/missfrag"
run2 "a missing file" "" "$tmp/missfrag" -- simulate "$tmp/missing.yaml"
run2 "a missing file (advise)" "" "$tmp/missfrag" -- advise "$tmp/missing.yaml"
# garbage on stdin
printf 'kind: [\x01\x02' | "$BERTH" simulate - >"$tmp/out" 2>"$tmp/err"
rc=$?
checked=$((checked + 1))
[ $rc -eq 2 ] || bad "garbage on stdin: exit $rc"
[ -s "$tmp/out" ] && bad "garbage on stdin: wrote to stdout"
# a good file followed by a bad one: still nothing on stdout
run2 "good then bad" "tests/bad/unknown-kind.yaml" "" -- simulate examples/nexus/seed-scenarios.yaml tests/bad/unknown-kind.yaml

# usage
: >"$tmp/none"
run2 "unknown flag" "" "$tmp/none" -- simulate --bogus examples/nexus/seed-scenarios.yaml
run2 "unknown flag (advise)" "" "$tmp/none" -- advise --bogus examples/nexus/seed-scenarios.yaml
run2 "no files" "" "$tmp/none" -- simulate
run2 "bad -o" "" "$tmp/none" -- simulate -o xml examples/nexus/seed-scenarios.yaml
run2 "bad --seed" "" "$tmp/none" -- simulate --seed abc examples/nexus/seed-scenarios.yaml
run2 "bad --tie-break" "" "$tmp/none" -- simulate --tie-break sometimes examples/nexus/seed-scenarios.yaml
run2 "--svg without a value" "" "$tmp/none" -- simulate examples/nexus/seed-scenarios.yaml --svg
run2 "unknown command" "" "$tmp/none" -- frobnicate
run2 "unknown --sku (advise)" "" "$tmp/none" -- advise --sku NC_NOPE examples/nexus/seed-scenarios.yaml
"$BERTH" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] || bad "berth without a command: exit $rc, expected 2"

for cmd in simulate advise; do
  "$BERTH" $cmd --help >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ $rc -eq 0 ] || bad "$cmd --help: exit $rc"
  grep -q "usage: berth $cmd" "$tmp/out" || bad "$cmd --help: no usage on stdout"
  [ -s "$tmp/err" ] && bad "$cmd --help: wrote to stderr"
done

if [ $fails -gt 0 ]; then
  echo "$fails problem(s) in $checked checks"
  exit 1
fi
echo "bad input OK: $nfiles files, $checked checks"
