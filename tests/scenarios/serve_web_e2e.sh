#!/usr/bin/env bash
# serve_web_e2e: the live estate page (GET /, src/serve/web.c) end to end in
# headless Chromium (Debian's chromium package, installed here when missing;
# SKIP with exit 0 only when it cannot be installed). A server with a token
# file and a loaded site is opened as /?token=...; the DOM dumped after the
# page's script ran must show the racks and the polling loop, and no
# cluster. Then a cluster is created with curl; a new dump of the page must
# show it (its name is rendered by the script from GET /v1/estate, it is not
# in the static HTML) with its pools, and the picture from GET
# /v1/estate.svg. A screenshot is kept as build/artifacts/serve-web.png.
set -u
BERTH=${BERTH:-build/berth}
ART=${ARTIFACTS:-build/artifacts}
case $ART in /*) ;; *) ART=$PWD/$ART ;; esac
tmp=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$tmp/log" ] && tail -5 "$tmp/log"; exit 1; }

# ---- Chromium ----
. tests/lib/chromium.sh
chromium_require serve_web_e2e

# chrome URL OUT [extra flags...]: one headless run, bounded in time. The
# virtual time budget lets the page's timers (the 1.5 s poll) run while the
# network fetches to the server complete in real time.
chrome() {
  local url=$1 out=$2; shift 2
  rm -rf "$tmp/profile"; mkdir -p "$tmp/profile"
  timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --disable-dev-shm-usage --user-data-dir="$tmp/profile" --virtual-time-budget=5000 \
    "$@" "$url" > "$out" 2> "$tmp/chrome.err"
  local rc=$?
  [ $rc -eq 0 ] || fail "chromium exited $rc: $(tail -5 "$tmp/chrome.err")"
}

# ---- server ----
printf 'web-e2e-token\n' > "$tmp/rw"
"$BERTH" serve --listen 127.0.0.1:0 --db "$tmp/db" --token-file "$tmp/rw" 2> "$tmp/log" &
pid=$!
port=
for _ in $(seq 1 200); do
  port=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$tmp/log")
  [ -n "$port" ] && curl -sf -m 2 "http://127.0.0.1:$port/readyz" > /dev/null && break
  kill -0 "$pid" 2>/dev/null || fail "server exited: $(cat "$tmp/log")"
  port=
  sleep 0.05
done
[ -n "$port" ] || fail "server not ready"
B="http://127.0.0.1:$port"
A=(-H "Authorization: Bearer web-e2e-token")
code=$(curl -s -m 10 -o "$tmp/out" -w '%{http_code}' "${A[@]}" -X PUT \
  --data-binary @examples/serve/site.yaml "$B/v1/estate")
[ "$code" = 200 ] || fail "PUT /v1/estate: $code $(cat "$tmp/out")"

# the page is open, the data is not
code=$(curl -s -m 10 -o "$tmp/page" -w '%{http_code} %{content_type}' "$B/")
[ "$code" = "200 text/html; charset=utf-8" ] || fail "GET /: $code"
grep -q 'src=\|href="http' "$tmp/page" && fail "the page loads an external resource"
grep -q 'web-e2e-cluster' "$tmp/page" && fail "the static page already holds the cluster name"
code=$(curl -s -m 10 -o /dev/null -w '%{http_code}' "$B/v1/estate.svg")
[ "$code" = 401 ] || fail "GET /v1/estate.svg without a token: $code, want 401"
code=$(curl -s -m 10 -o "$tmp/svg" -w '%{http_code} %{content_type}' "${A[@]}" "$B/v1/estate.svg")
[ "$code" = "200 image/svg+xml" ] || fail "GET /v1/estate.svg: $code"
head -c 4 "$tmp/svg" | grep -q '<svg' || fail "the picture is not SVG"

# ---- 1: before the cluster ----
chrome "$B/?token=web-e2e-token" "$tmp/dom1" --dump-dom
grep -q 'data-rack="1"' "$tmp/dom1" || fail "no rack rows in the rendered page: $(head -c 600 "$tmp/dom1")"
grep -q '128 machines' "$tmp/dom1" || fail "no estate summary in the rendered page"
grep -q 'id="status" class="ok"' "$tmp/dom1" || fail "the page is not live (auth?)"
grep -q '<svg' "$tmp/dom1" || fail "no layout picture in the rendered page"
polls=$(sed -n 's/.*<span id="polls">\([0-9]*\)<.*/\1/p' "$tmp/dom1")
[ "${polls:-0}" -ge 2 ] || fail "the page did not poll (polls: ${polls:-none})"
grep -q 'web-e2e-cluster' "$tmp/dom1" && fail "cluster shown before it was created"

# ---- 2: a cluster created through the API ----
sed 's/name: A}/name: web-e2e-cluster}/' examples/serve/cluster-a.yaml > "$tmp/cluster.yaml"
code=$(curl -s -m 10 -o "$tmp/out" -w '%{http_code}' "${A[@]}" -X POST \
  --data-binary @"$tmp/cluster.yaml" "$B/v1/clusters")
[ "$code" = 201 ] || fail "POST /v1/clusters: $code $(cat "$tmp/out")"

chrome "$B/?token=web-e2e-token" "$tmp/dom2" --dump-dom
grep -q 'data-cluster="web-e2e-cluster"' "$tmp/dom2" ||
  fail "the page does not show the new cluster: $(grep -o '<div id="clusters">.\{0,300\}' "$tmp/dom2")"
grep -q '<span class="cluster-name">web-e2e-cluster</span>' "$tmp/dom2" || fail "cluster name not rendered"
grep -q 'data-pool="pool-1"' "$tmp/dom2" || fail "the cluster's pools are not shown"
grep -q '24 / 24' "$tmp/dom2" || fail "pool-1 placement (24 / 24) not shown"
grep -q 'web-e2e-cluster' <(sed -n '/<svg/,/<\/svg>/p' "$tmp/dom2") ||
  fail "the layout picture does not show the cluster"

# ---- screenshot (artifact) ----
mkdir -p "$ART"
shot="$ART/serve-web.png"
rm -f "$shot"
chrome "$B/?token=web-e2e-token" "$tmp/shot.out" --hide-scrollbars --window-size=1400,900 \
  --screenshot="$shot"
[ -s "$shot" ] || fail "no screenshot written"
echo "screenshot: $shot"

# ---- no token: the page says what to do ----
chrome "$B/" "$tmp/dom3" --dump-dom
grep -q 'this page needs a token: add ?token=... or set it in the box' "$tmp/dom3" &&
  grep -q 'class="err"' "$tmp/dom3" ||
  fail "without a token the page does not explain how to authenticate"
# (the page's own script holds those words: look at the document without it)
perl -0pe 's{<script\b.*?</script>}{}gs' "$tmp/dom3" > "$tmp/dom3.text"
! grep -q 'loading&hellip;\|loading…\|no estate yet\|no clusters yet' "$tmp/dom3.text" ||
  fail "without a token the page still says loading / no estate yet"
echo "serve_web_e2e: ok"
