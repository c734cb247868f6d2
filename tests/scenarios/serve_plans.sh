#!/usr/bin/env bash
# serve_plans: `berth serve` answers disruption and autoscaling plans over
# HTTP with the same SPEC 6.3 JSON as the CLI (stateless endpoints
# POST /v1/disrupt/plan?at=T and POST /v1/autoscale/plan?at=T).
set -u
BERTH=${BERTH:-build/berth}
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$tmp/log" ] && tail -5 "$tmp/log"; exit 1; }

"$BERTH" serve --listen 127.0.0.1:0 --db "$tmp/db" 2> "$tmp/log" &
pid=$!
port=
for _ in $(seq 1 200); do
  port=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$tmp/log")
  [ -n "$port" ] && curl -sf "http://127.0.0.1:$port/readyz" > /dev/null && break
  kill -0 "$pid" 2>/dev/null || fail "server exited: $(cat "$tmp/log")"
  sleep 0.05
done
[ -n "$port" ] || fail "server not ready"

AT=2024-05-01T12:00:00Z
post() { # CODE PATH FILE
  local code
  code=$(curl -s -o "$tmp/out" -w '%{http_code}' -X POST --data-binary @"$3" \
    "http://127.0.0.1:$port$2")
  [ "$code" = "$1" ] || fail "POST $2: status $code, want $1: $(head -c 300 "$tmp/out")"
}
same_as_cli() { # the HTTP JSON equals the CLI JSON (compact both)
  "$BERTH" "$@" -o json | tr -d ' \n' > "$tmp/cli"
  tr -d ' \n' < "$tmp/out" > "$tmp/http"
  cmp -s "$tmp/cli" "$tmp/http" || fail "HTTP and CLI differ for $*: $(head -c 300 "$tmp/http")"
}
for f in examples/disrupt/*.yaml; do
  post 200 "/v1/disrupt/plan?at=$AT" "$f"
  grep -q '"nodePools"' "$tmp/out" || fail "no nodePools for $f"
  same_as_cli disrupt plan "$f" --at "$AT"
done
for f in examples/autoscale/*.yaml; do
  post 200 "/v1/autoscale/plan?at=$AT" "$f"
  grep -q '"scaleUp"' "$tmp/out" || fail "no scaleUp for $f"
  same_as_cli autoscale plan "$f" --at "$AT"
done
# kube schedule: the default answer (score, feasibleCount, reasons, top) and
# ?detail=all (feasible, filtered, scores too) equal the CLI's JSON
for f in examples/kube/workloads.yaml examples/kube/preemption.yaml examples/kube/volume-zone.yaml; do
  post 200 /v1/kube/schedule "$f"
  grep -q '"feasibleCount"' "$tmp/out" || fail "no feasibleCount for $f"
  grep -q '"feasible":' "$tmp/out" && fail "default kube answer has feasible for $f"
  same_as_cli kube schedule "$f"
  post 200 "/v1/kube/schedule?detail=all" "$f"
  grep -q '"filtered"' "$tmp/out" || fail "no filtered with detail=all for $f"
  same_as_cli kube schedule "$f" --detail all
done
post 400 "/v1/kube/schedule?detail=some" examples/kube/workloads.yaml
grep -q 'detail: expected' "$tmp/out" || fail "bad detail: $(cat "$tmp/out")"

# fleet place: by default at most 20 unselected clusters per placement
# (clustersOmitted counts the rest), ?detail=all every one; both equal the CLI
{
  echo "apiVersion: v1"; echo "kind: List"; echo "items:"
  for i in $(seq -w 1 40); do
    cat <<YAML
- apiVersion: cluster.kubernetes-fleet.io/v1beta1
  kind: MemberCluster
  metadata: {name: m-$i, labels: {env: prod}}
  status:
    agentStatus: [{type: MemberAgent, lastReceivedHeartbeat: "2024-05-01T11:59:30Z",
                   conditions: [{type: Joined, status: "True"},
                                {type: Healthy, status: "True", lastTransitionTime: "2024-04-01T00:00:00Z"}]}]
YAML
  done
  cat <<'YAML'
- apiVersion: placement.kubernetes-fleet.io/v1beta1
  kind: ClusterResourcePlacement
  metadata: {name: two}
  spec:
    resourceSelectors: [{group: "", kind: Namespace, version: v1, name: web}]
    policy: {placementType: PickN, numberOfClusters: 2}
YAML
} > "$tmp/fleet40.yaml"
post 200 "/v1/fleet/place?now=$AT" "$tmp/fleet40.yaml"
[ "$(grep -o '"affinityScore"' "$tmp/out" | wc -l)" -eq 22 ] || fail "fleet default: 22 clusters expected: $(head -c 300 "$tmp/out")"
grep -q '"clustersOmitted":18' "$tmp/out" || fail "fleet default: clustersOmitted 18 expected"
same_as_cli fleet place "$tmp/fleet40.yaml" --now "$AT"
post 200 "/v1/fleet/place?now=$AT&detail=all" "$tmp/fleet40.yaml"
[ "$(grep -o '"affinityScore"' "$tmp/out" | wc -l)" -eq 40 ] || fail "fleet detail=all: 40 clusters expected"
same_as_cli fleet place "$tmp/fleet40.yaml" --now "$AT" --detail all
post 400 "/v1/fleet/place?now=$AT&detail=some" "$tmp/fleet40.yaml"
grep -q 'detail: expected' "$tmp/out" || fail "fleet bad detail: $(cat "$tmp/out")"
# the planner's warnings come over HTTP too (examples/disrupt/warnings.yaml)
post 200 "/v1/disrupt/plan?at=$AT" examples/disrupt/warnings.yaml
grep -q '"1 NodeClaim whose Node is not in the input' "$tmp/out" || fail "no planner warning over HTTP"
post 400 "/v1/disrupt/plan?at=yesterday" examples/disrupt/consolidate.yaml
grep -q '"error":{"code":"bad_input"' "$tmp/out" || fail "bad at: no error body"
printf 'apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: p}\nspec: {disruption: {budgets: [{nodes: "lots"}]}}\n' > "$tmp/bad.yaml"
post 400 "/v1/disrupt/plan?at=$AT" "$tmp/bad.yaml"
grep -q 'body:' "$tmp/out" || fail "bad input not located: $(cat "$tmp/out")"
echo "serve plans OK"
