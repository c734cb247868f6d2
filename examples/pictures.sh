#!/usr/bin/env bash
# Writes every picture berth draws into build/pictures/ (or DIR): the nexus
# layout (SVG and HTML page), `kube schedule --svg`, `disrupt plan --svg`
# and `autoscale simulate --svg`, from the bundled examples. Open them in a
# browser; hover for details. docs/output.md section 3 describes them.
# usage: examples/pictures.sh [DIR]   (run from the repository root)
set -euo pipefail
out=${1:-build/pictures}
berth=${BERTH:-build/berth}
mkdir -p "$out"
"$berth" simulate examples/nexus/seed-scenarios.yaml -q --svg "$out/layout.svg" --html "$out/layout.html"
# exit 1 by design: two pods of workloads.yaml do not fit (their reasons are in the picture)
"$berth" kube schedule examples/kube/workloads.yaml -q --svg "$out/kube.svg" || [ $? -eq 1 ]
"$berth" disrupt plan examples/disrupt/blocked.yaml --at 2024-05-01T12:00:00Z -q --svg "$out/disrupt.svg"
"$berth" autoscale simulate examples/autoscale/simulate/estate.yaml \
  --events examples/autoscale/simulate/events.yaml -q --svg "$out/autoscale.svg"
# a replacement (spot comes back: the on-demand node is replaced)
"$berth" autoscale simulate examples/autoscale/simulate/revert-to-spot.yaml \
  --events examples/autoscale/simulate/spot-returns.yaml --from 2024-05-01T12:00:00Z \
  -q --svg "$out/autoscale-replace.svg"
ls -1 "$out"
