#!/usr/bin/env bash
# pictures_chromium: every picture berth draws, rendered in headless
# Chromium (Debian's chromium, installed here when missing; SKIP with exit 0
# only when it cannot be installed) at 1,400 x 900: the nexus layout
# (`simulate --svg`) and its HTML page (`--html`; with `--workloads`: the
# upgrade timeline and its pod-impact lane), `kube schedule --svg`
# (and, checked in the file only, a many-node input: nodes drawn capped,
# the rest summarised), `disrupt plan --svg`, `autoscale simulate --svg`, and the live page of
# `berth serve` with a loaded estate and a cluster. Each one must give a
# 1400 x 900 PNG screenshot, no console message (errors, uncaught
# exceptions) and, for the SVGs, no XML parse error in the rendered DOM.
# The screenshots are kept in build/artifacts/pictures/; with
# BERTH_DOCS_IMG=DIR they are also copied there: the README's pictures are
# made with `BERTH_DOCS_IMG=docs/img bash tests/scenarios/pictures_chromium.sh`.
# Each page is one Chromium run (screenshot, DOM and log together), three
# at a time, to keep the scenario fast (about 15-20 s on 2 cores).
set -u
BERTH=${BERTH:-build/berth}
ART=${ARTIFACTS:-build/artifacts}/pictures
case $ART in /*) ;; *) ART=$PWD/$ART ;; esac
tmp=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

# ---- Chromium ----
. tests/lib/chromium.sh
chromium_require pictures_chromium ci-strict

# png_size FILE: "WIDTH HEIGHT" from the PNG's IHDR chunk
png_size() {
  od -An -tu1 -j16 -N8 "$1" | awk '{ printf "%d %d\n", $1*16777216+$2*65536+$3*256+$4, $5*16777216+$6*65536+$7*256+$8 }'
}

# shot NAME URL [wait-ms]: one headless run (its own profile) writes
# NAME.png (1400 x 900), the DOM after load (NAME.dom) and Chromium's log
# (NAME.log); check NAME then fails on a failed run, a console message, an
# XML parse error or a wrong screenshot size. Shots run in the background
# (several at once: Chromium mostly waits while starting); wait, then check.
shot() {
  local name=$1 url=$2 wait=${3:-0} png="$ART/$1.png"
  rm -rf "$tmp/profile-$name" "$png"; mkdir -p "$tmp/profile-$name" "$ART"
  local budget=()
  [ "$wait" -gt 0 ] && budget=(--virtual-time-budget="$wait")
  timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --disable-dev-shm-usage --hide-scrollbars --user-data-dir="$tmp/profile-$name" \
    --enable-logging=stderr --v=0 --window-size=1400,900 "${budget[@]}" \
    --screenshot="$png" --dump-dom "$url" > "$tmp/$name.dom" 2> "$tmp/$name.log"
  echo $? > "$tmp/$name.rc"
}
check() {
  local name=$1 png="$ART/$1.png"
  local rc; rc=$(cat "$tmp/$name.rc" 2>/dev/null || echo none)
  [ "$rc" = 0 ] || fail "$name: chromium exited $rc: $(grep -v dbus "$tmp/$name.log" | tail -3)"
  [ -s "$png" ] || fail "$name: no screenshot written: $(grep -v dbus "$tmp/$name.log" | tail -3)"
  [ "$(png_size "$png")" = "1400 900" ] || fail "$name: screenshot is $(png_size "$png"), want 1400 900"
  grep -q ':CONSOLE' "$tmp/$name.log" &&
    fail "$name: console messages: $(grep ':CONSOLE' "$tmp/$name.log" | head -3)"
  grep -q '<parsererror\|This page contains the following errors' "$tmp/$name.dom" &&
    fail "$name: the document does not parse: $(grep -o 'error on line[^<]*' "$tmp/$name.dom" | head -1)"
  echo "$name: $png ($(stat -c %s "$png") bytes)"
}

# ---- the pictures ----
"$BERTH" simulate examples/nexus/seed-scenarios.yaml --svg "$tmp/layout.svg" \
  --html "$tmp/layout-page.html" -q || fail "simulate --svg --html: exit $?"
"$BERTH" kube schedule examples/kube/workloads.yaml --svg "$tmp/kube.svg" -q
[ $? -eq 1 ] || fail "kube schedule workloads.yaml --svg: want exit 1 (pods do not fit)"
"$BERTH" disrupt plan examples/disrupt/blocked.yaml --at 2024-05-01T12:00:00Z \
  --svg "$tmp/disrupt.svg" -q || fail "disrupt plan --svg: exit $?"
"$BERTH" autoscale simulate examples/autoscale/simulate/estate.yaml \
  --events examples/autoscale/simulate/events.yaml --svg "$tmp/autoscale.svg" -q ||
  fail "autoscale simulate --svg: exit $?"
grep -qx '2 pods pending' "$tmp/autoscale.svg" || fail "autoscale: the steps' pending pods are not shown"
# a replacement is marked across the charts with the nodes it concerns
"$BERTH" autoscale simulate examples/autoscale/simulate/revert-to-spot.yaml \
  --events examples/autoscale/simulate/spot-returns.yaml --from 2024-05-01T12:00:00Z \
  --svg "$tmp/autoscale-replace.svg" -q || fail "autoscale simulate (replacement) --svg: exit $?"
grep -q '<g><title>2024-05-01T12:03:00Z: replacing ' "$tmp/autoscale-replace.svg" ||
  fail "autoscale: the replacement is not marked"
# many nodes: at most 40 drawn, the others summarised
{
  echo "apiVersion: v1"; echo "kind: NodeList"; echo "items:"
  for i in $(seq -w 1 90); do
    printf -- "- metadata: {name: n%s}\n  status: {allocatable: {cpu: '4', memory: 16Gi, pods: '110'}}\n" "$i"
  done
} > "$tmp/nodes.yaml"
{
  echo "apiVersion: v1"; echo "kind: PodList"; echo "items:"
  for i in $(seq 1 200); do
    printf -- "- metadata: {name: p%s, namespace: default}\n  spec: {containers: [{name: c, image: x, resources: {requests: {cpu: 1500m, memory: 3Gi}}}]}\n" "$i"
  done
} > "$tmp/pods.yaml"
"$BERTH" kube schedule "$tmp/nodes.yaml" "$tmp/pods.yaml" --svg "$tmp/kube-many.svg" -q
[ $? -eq 1 ] || fail "kube schedule (90 nodes, 200 pods) --svg: want exit 1"
drawn=$(grep -c '<g><title>n[0-9]*$' "$tmp/kube-many.svg")
[ "$drawn" = 40 ] || fail "kube-many: $drawn nodes drawn, want 40"
grep -q 'and 50 more nodes not drawn' "$tmp/kube-many.svg" || fail "kube-many: the other 50 nodes are not summarised"
grep -q 'all 90 nodes by cpu requested' "$tmp/kube-many.svg" || fail "kube-many: no histogram of every node"
grep -q 'Not scheduled (20 pods)' "$tmp/kube-many.svg" || fail "kube-many: the 20 pods that do not fit are not listed"

for f in layout kube kube-many disrupt autoscale autoscale-replace; do
  head -c 4 "$tmp/$f.svg" | grep -q '<svg' || fail "$f.svg is not SVG"
  grep -o 'font-size:[0-9.]*px' "$tmp/$f.svg" | sort -u | while IFS=: read -r _ px; do
    [ "${px%px}" -ge 11 ] 2>/dev/null || { echo "FAIL: $f.svg has text of $px (want >= 11px)"; exit 1; }
  done || exit 1
done
w=$(sed -n '1s/.* width="\([0-9]*\)".*/\1/p' "$tmp/layout.svg")
[ "${w:-99999}" -le 1400 ] || fail "the layout picture is $w px wide (want <= 1400: racks wrap into rows)"

# the upgrade timeline with its pod-impact lane (simulate --workloads --html)
"$BERTH" simulate examples/nexus/workloads/site.yaml --workloads examples/nexus/workloads/core.yaml \
  --advise-upgrade --html "$tmp/upgrade-page.html" -q || fail "simulate --workloads --html: exit $?"

files="layout:svg layout-page:html kube:svg disrupt:svg autoscale:svg upgrade-page:html"
jobs=()
for f in $files; do
  shot "${f%%:*}" "file://$tmp/${f%%:*}.${f#*:}" &
  jobs+=($!)
  # at most three Chromiums at once
  [ ${#jobs[@]} -ge 3 ] && { wait "${jobs[0]}"; jobs=("${jobs[@]:1}"); }
done
wait "${jobs[@]}"
for f in $files; do check "${f%%:*}"; done
grep -q '<h2>Utilisation heat map</h2>' "$tmp/layout-page.dom" || fail "the HTML page has no heat map"
grep -q 'class="xl-pod-lane"' "$tmp/upgrade-page.dom" || fail "the upgrade page has no pod-impact lane"

# ---- the live page of berth serve ----
printf 'pictures-token\n' > "$tmp/rw"
"$BERTH" serve --listen 127.0.0.1:0 --db "$tmp/db" --token-file "$tmp/rw" 2> "$tmp/serve.log" &
pid=$!
port=
for _ in $(seq 1 200); do
  port=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$tmp/serve.log")
  [ -n "$port" ] && curl -sf -m 2 "http://127.0.0.1:$port/readyz" > /dev/null && break
  kill -0 "$pid" 2>/dev/null || fail "server exited: $(cat "$tmp/serve.log")"
  port=
  sleep 0.05
done
[ -n "$port" ] || fail "server not ready"
B="http://127.0.0.1:$port"
A=(-H "Authorization: Bearer pictures-token")
code=$(curl -s -m 10 -o "$tmp/out" -w '%{http_code}' "${A[@]}" -X PUT \
  --data-binary @examples/serve/site.yaml "$B/v1/estate")
[ "$code" = 200 ] || fail "PUT /v1/estate: $code $(cat "$tmp/out")"
code=$(curl -s -m 10 -o "$tmp/out" -w '%{http_code}' "${A[@]}" -X POST \
  --data-binary @examples/serve/cluster-a.yaml "$B/v1/clusters")
[ "$code" = 201 ] || fail "POST /v1/clusters: $code $(cat "$tmp/out")"
shot serve-page "$B/?token=pictures-token" 3000
check serve-page
grep -q 'id="heat-map"' "$tmp/serve-page.dom" || fail "the live page has no heat map"
n=$(grep -o '<rect [^>]*><title>[^<]*host vCPU used' "$tmp/serve-page.dom" | wc -l)
[ "$n" -ge 128 ] || fail "the live page's heat map has $n machine squares, want 128"

# the README's pictures: the SVGs shot again at their own height (at most
# 900 px), palette-reduced with pngquant when it is there
if [ -n "${BERTH_DOCS_IMG:-}" ]; then
  mkdir -p "$BERTH_DOCS_IMG"
  for f in layout kube disrupt autoscale serve-page; do
    h=900
    [ -f "$tmp/$f.svg" ] && h=$(sed -n '1s/.* height="\([0-9]*\)".*/\1/p' "$tmp/$f.svg")
    if [ "${h:-900}" -lt 900 ]; then
      rm -rf "$tmp/profile-docs"; mkdir -p "$tmp/profile-docs"
      timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --user-data-dir="$tmp/profile-docs" --window-size=1400,"$h" --screenshot="$ART/$f.png" \
        "file://$tmp/$f.svg" > /dev/null 2>&1 || fail "$f: docs screenshot failed"
    fi
    if command -v pngquant > /dev/null; then
      pngquant --force --quality=60-90 --output "$BERTH_DOCS_IMG/$f.png" "$ART/$f.png" ||
        cp "$ART/$f.png" "$BERTH_DOCS_IMG/$f.png"
    else
      cp "$ART/$f.png" "$BERTH_DOCS_IMG/$f.png"
    fi
  done
  echo "copied the screenshots to $BERTH_DOCS_IMG"
fi
echo "pictures_chromium: ok"
