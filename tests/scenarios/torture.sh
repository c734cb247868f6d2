#!/usr/bin/env bash
# Scenario: failure injection, a sample (docs/testing.md). Runs
# scripts/torture.sh sample: the CLI over a fixed sample of tests/bad/ and
# two examples, and the service's stateless endpoints (every N of the kube
# workloads, the fleet spread and two autoscale examples), commit path
# (every N) and log replay in process, with the Nth allocation failing for
# N = 1..8 and every 7th N after that (or every N where said), up to the
# run that no longer reaches N: no crash, no
# sanitizer or leak report, the failure-free answer or "out of memory", and
# no half-applied change. `make torture` runs every N over everything.
set -u
BERTH=${BERTH:-build/asan/berth}
build=$(dirname "$BERTH")
if [ ! -x "$build/torture/berth" ] || [ ! -x "$build/torture/torture" ]; then
  echo "FAIL: $build/torture/{berth,torture} not built (make check builds them)"; exit 1
fi
BUILD=$build exec scripts/torture.sh sample
