#!/usr/bin/env bash
# Failure injection (docs/testing.md): runs berth with the Nth allocation
# failing, N = 1, 2, ... until a run completes without reaching N, over
#   - the bad-input corpus (tests/bad/*.yaml) and the examples, through the
#     CLI linked with tests/torture/fail_alloc.c (BERTH_FAIL_AT=N): no
#     crash, no sanitizer or leak report, exit 0 or 2 (1 for an `advise`
#     that does not fit, as without failure), and a message on stderr that
#     is either "out of memory" or the failure-free run's message;
#   - the service's request paths in process (tests/torture/torture.c):
#     stateless endpoints over the examples, the engine's commit path and
#     the replay of its log, the bare-metal timeline (`nexus`) and the
#     autoscaler's timeline (`autoscale-simulate`).
# Usage: scripts/torture.sh all|sample   (sample: N = 1..8 and every 7th
# after, at most ~40 runs a case, and a few files, for `make check`; all: everything, for `make torture`)
# A wrong answer or half-applied change fails in both modes; TORTURE_STRICT=0
# prints it as a "finding" and counts it instead (docs/testing.md). Crashes,
# sanitizer reports and leaks always fail.
set -u
mode=${1:-all}
BUILD=${BUILD:-build/asan}
T=$BUILD/torture
export ASAN_OPTIONS=${TORTURE_ASAN_OPTIONS:-detect_leaks=1:exitcode=99:abort_on_error=0}
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0; runs=0
strict=${TORTURE_STRICT:-1}
findings=0
bad() { echo "torture: FAIL: $*"; fails=$((fails + 1)); }
wrong() { if [ "$strict" = 1 ]; then bad "$@"; else echo "torture: finding: $*"; findings=$((findings + 1)); fi; }
step=1; [ "$mode" = sample ] && step=7

# cli_file CMD... FILE: every N for one CLI run
cli_file() {
  local f=${*: -1}
  BERTH_FAIL_AT=0 BERTH_FAIL_REPORT=$tmp/rep "$T/berth" "$@" >"$tmp/ref.out" 2>"$tmp/ref.err" </dev/null
  local refrc=$? total
  total=$(cut -d' ' -f1 "$tmp/rep")
  local n=1 step=$step
  # a sample takes at most about 40 runs per file
  [ "$step" -gt 1 ] && [ $((total / 40)) -gt "$step" ] && step=$((total / 40))
  while :; do
    if [ "$step" -gt 1 ] && [ $n -gt 8 ] && [ $((n % step)) -ne 0 ] && [ $n -lt "$total" ]; then
      n=$((n + 1)); continue
    fi
    BERTH_FAIL_AT=$n BERTH_FAIL_REPORT=$tmp/rep "$T/berth" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
    local rc=$?
    runs=$((runs + 1))
    local label="berth $* (N=$n)"
    if [ $rc -ge 99 ] || grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:' "$tmp/err"; then
      bad "$label: exit $rc, sanitizer report or crash"; head -30 "$tmp/err" | sed 's/^/    /'
    elif [ $rc -ne $refrc ] && [ ! -s "$tmp/err" ]; then
      wrong "$label: exit $rc (failure-free: $refrc) without a message"
    elif [ $rc -ne $refrc ] && ! grep -q 'out of memory' "$tmp/err"; then
      wrong "$label: exit $rc (failure-free: $refrc) without 'out of memory': $(head -c 300 "$tmp/err")"
    elif [ $rc -ne 0 ] && ! grep -q 'out of memory' "$tmp/err" && ! cmp -s "$tmp/err" "$tmp/ref.err"; then
      wrong "$label: a message other than 'out of memory' or the failure-free one: $(head -c 300 "$tmp/err")"
    elif [ $rc -eq 0 ] && ! cmp -s "$tmp/out" "$tmp/ref.out"; then
      wrong "$label: exit 0 with output other than the failure-free run's"
    fi
    [ "$(cut -d' ' -f2 "$tmp/rep" 2>/dev/null)" = 1 ] || break
    n=$((n + 1))
  done
  echo "torture: berth $*: $total allocations"
}

files=(tests/bad/*.yaml)
if [ "$mode" = sample ]; then
  # a fixed sample: one file of each domain, and every 9th of the rest
  sel=(); i=0
  for f in "${files[@]}"; do
    case $(basename "$f") in
      deep-nesting.yaml|kube-pod-spec-typo.yaml|fleet-*placement*|duplicate-cluster.yaml) sel+=("$f") ;;
      *) [ $((i % 9)) -eq 0 ] && sel+=("$f") ;;
    esac
    i=$((i + 1))
  done
  files=("${sel[@]}")
fi
for f in "${files[@]}"; do
  case $(basename "$f") in
    kube-*) cli_file kube schedule "$f" ;;
    fleet-*) cli_file fleet place "$f" ;;
    *) cli_file simulate "$f" ;;
  esac
done
good_kube=(examples/kube/workloads.yaml examples/kube/preemption.yaml)
good_nexus=(examples/nexus/seed-scenarios.yaml)
if [ "$mode" = all ]; then
  good_kube=(examples/kube/*.yaml)
  good_nexus=(examples/nexus/*.yaml)
fi
for f in "${good_nexus[@]}"; do cli_file simulate -o json "$f"; done
for f in "${good_kube[@]}"; do cli_file kube schedule -o json "$f"; done
# the streamed loaders (docs/disrupt.md "Streaming the input")
cli_file disrupt plan --at 2024-05-01T12:00:00Z -o json examples/disrupt/consolidate.yaml
cli_file autoscale plan --at 2024-05-01T12:00:00Z -o json examples/autoscale/scale-up.yaml
if [ "$mode" = all ]; then
  cli_file disrupt plan --at 2024-05-01T12:00:00Z -o json examples/kube/real/nodes-pods-pdb-pc.json
  # the other commands' own paths (timelines, the cross-layer hook, fit,
  # advice, sizes, fleet), each over one example (2026-11-28: the events
  # reader of `autoscale simulate` answered "too many events" for a failed
  # allocation; the cross-layer runs printed empty messages, leaked, and
  # bought a node for a pod whose affinity filter ran out of memory)
  for f in examples/fleet/*.yaml; do cli_file fleet place -o json "$f"; done
  cli_file disrupt simulate --from 2024-05-01T23:58:00Z --to 2024-05-02T00:30:00Z -o json \
    examples/disrupt/simulate.yaml
  cli_file autoscale simulate --events examples/autoscale/simulate/spot-returns.yaml \
    --from 2024-05-01T12:00:00Z -o json examples/autoscale/simulate/revert-to-spot.yaml
  cli_file simulate -o json --workloads examples/nexus/workloads/core.yaml \
    --workloads edge=examples/nexus/workloads/edge.yaml examples/nexus/workloads/site.yaml
  cli_file simulate -o json --workloads examples/nexus/workloads/core.yaml --autoscaler karpenter \
    --autoscaler-config core=examples/nexus/workloads/karpenter.yaml examples/nexus/workloads/site.yaml
  cli_file kube fit -o json examples/kube/fit/web.yaml examples/kube/real/nodes.yaml \
    examples/kube/real/get-all.yaml
  cli_file advise examples/nexus/seed-scenarios.yaml
  cli_file kube size examples/kube/vsphere-pods.yaml
fi

# the service, in process
drv() {
  local out
  out=$("$T/torture" "$@" 2>&1); local rc=$?
  echo "$out" | grep -E '^torture: .*(runs|FAIL)' | tail -20
  findings=$((findings + $(echo "$out" | grep -c '^torture: finding:')))
  if [ $rc -ne 0 ]; then bad "torture $*: exit $rc"; echo "$out" | grep -vE '^torture: ' | head -40; fi
}
s=(); [ "$mode" = sample ] && s=(--sample 7)
[ "$strict" = 1 ] || s+=(--lenient)
full=(); [ "$strict" = 1 ] || full+=(--lenient) # every N, for the cases below that ask it
if [ "$mode" = all ]; then
  drv "${s[@]}" stateless-kube examples/kube/*.yaml
  drv "${s[@]}" stateless-fleet examples/fleet/*.yaml
  drv "${s[@]}" stateless-disrupt examples/disrupt/*.yaml
  drv "${s[@]}" stateless-autoscale examples/autoscale/*.yaml
else
  # every N, not a sample, where findings hid between the sampled N (about
  # 3,400 runs, a few seconds): the kube workloads (a spread score that ran
  # out of memory scored zeros), the fleet's topology spread (a failed
  # allocation freed an unset pointer), the autoscale plan's what-if
  # sessions (a failed exclude let the fit index place pods back on the
  # candidate) and the priority expander's inner YAML (a failed allocation
  # answered 400)
  drv "${full[@]}" stateless-kube examples/kube/workloads.yaml
  drv "${s[@]}" stateless-fleet examples/fleet/seed-sorters.yaml
  drv "${full[@]}" stateless-fleet examples/fleet/pickn-spread.yaml
  drv "${s[@]}" stateless-disrupt examples/disrupt/consolidate.yaml
  drv "${full[@]}" stateless-autoscale examples/autoscale/scale-up.yaml \
    examples/autoscale/cluster-autoscaler.yaml
fi
# every N in both modes: a failed allocation while a scale's decision was
# written as JSON once committed a record that the replay refused, and one
# while the first cluster was placed steered its next pool (create-first;
# about 2,000 runs, half a minute to a minute under ASan)
drv "${full[@]}" engine
drv "${s[@]}" replay
# the bare-metal timeline in process, every N in both modes: a failed
# allocation once let the previous pool's rack counts steer the next pool,
# and a failed scale-pool step printed an empty message (about 2,800 runs,
# a few seconds; `all`: every nexus example, about 12,000 runs, a minute)
if [ "$mode" = all ]; then
  drv "${full[@]}" nexus examples/nexus/*.yaml
else
  drv "${full[@]}" nexus examples/nexus/timeline.yaml examples/nexus/capacity-failure.yaml
fi

# the autoscaler over a timeline in process, every N in both modes: a
# failed allocation while the events were read once answered "too many
# events" (bad input) (about 3,400 runs, ten seconds; `all`: both example
# timelines, about 11,000 runs)
sim=examples/autoscale/simulate
if [ "$mode" = all ]; then
  drv "${full[@]}" autoscale-simulate $sim/estate.yaml $sim/events.yaml \
    $sim/revert-to-spot.yaml $sim/spot-returns.yaml
else
  drv "${full[@]}" autoscale-simulate $sim/revert-to-spot.yaml $sim/spot-returns.yaml
fi

echo "torture ($mode): $runs CLI runs, $fails failures, $findings findings (wrong answers or half-applied changes; docs/testing.md)"
[ $fails -eq 0 ]
