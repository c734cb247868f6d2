#!/usr/bin/env bash
# Scenario: the seed's tables (SPEC 1.6) from examples/nexus/seed-scenarios.yaml.
# A to D must match exactly; E must place all 32 extra-large VMs, 3 to 5 per rack.
set -euo pipefail
out=$("$BERTH" simulate examples/nexus/seed-scenarios.yaml)
diff <(echo "$out") tests/scenarios/expected/nexus-seed.txt
# the same decisions with the index and with the plain reference scan
diff <("$BERTH" simulate examples/nexus/seed-scenarios.yaml -o json) \
     <("$BERTH" simulate examples/nexus/seed-scenarios.yaml -o json --reference)
# explicit checks of the seed's numbers (robust to table formatting)
row() { echo "$out" | awk -v c="$1" -v p="$2" '$1==c && $2==p {print $4, $5, $6, $7}'; }
[ "$(row A control-plane)" = "3 3 3 1" ]
[ "$(row A pool-1)" = "24 24 8 3" ]
[ "$(row A pool-2)" = "6 6 6 1" ]
[ "$(row B control-plane)" = "5 5 5 1" ]
[ "$(row B pool-1)" = "48 48 8 6" ]
[ "$(row B pool-2)" = "24 24 8 3" ]
[ "$(row C control-plane)" = "3 3 3 1" ]
[ "$(row C pool-1)" = "12 12 2 6" ]
[ "$(row D control-plane)" = "5 5 5 1" ]
[ "$(row D pool-1)" = "24 24 2 12" ]
[ "$(row D pool-2)" = "24 24 8 3" ]
[ "$(row E control-plane)" = "5 5 5 1" ]
e=$(row E pool-1)
set -- $e
[ "$1 $2 $3" = "32 32 8" ]
echo "seed scenarios OK"
