#!/usr/bin/env bash
# serve_tls: `berth serve --tls-cert --tls-key` answers HTTPS with a
# self-signed certificate made here (curl --cacert checks it), refuses
# plain HTTP on that port, and rejects bad TLS options with a message.
# Skipped (passes) when openssl is missing.
set -u
BERTH=${BERTH:-build/berth}
if ! command -v openssl > /dev/null; then
  echo "serve_tls: skipped (openssl not found)"; exit 0
fi
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$tmp/log" ] && tail -5 "$tmp/log"; exit 1; }

openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=localhost" \
  -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
  -keyout "$tmp/key.pem" -out "$tmp/cert.pem" 2> "$tmp/openssl.log" ||
  fail "openssl: $(cat "$tmp/openssl.log")"

# bad options: exit 2 with a clear message, nothing listens
"$BERTH" serve --listen 127.0.0.1:0 --db "$tmp/db" --tls-cert "$tmp/cert.pem" 2> "$tmp/err"
[ $? = 2 ] && grep -q "needs both --tls-cert and --tls-key" "$tmp/err" || fail "cert without key: $(cat "$tmp/err")"
"$BERTH" serve --listen 127.0.0.1:0 --db "$tmp/db" --tls-cert "$tmp/nope" --tls-key "$tmp/key.pem" 2> "$tmp/err"
[ $? = 2 ] && grep -q "cannot read" "$tmp/err" || fail "missing cert: $(cat "$tmp/err")"
echo "not pem" > "$tmp/bad.pem"
"$BERTH" serve --listen 127.0.0.1:0 --db "$tmp/db" --tls-cert "$tmp/bad.pem" --tls-key "$tmp/key.pem" 2> "$tmp/err"
[ $? = 2 ] && grep -q "not a PEM file" "$tmp/err" || fail "bad cert: $(cat "$tmp/err")"

"$BERTH" serve --listen 127.0.0.1:0 --db "$tmp/db" --tls-cert "$tmp/cert.pem" \
  --tls-key "$tmp/key.pem" 2> "$tmp/log" &
pid=$!
port=
for _ in $(seq 1 200); do
  port=$(sed -n 's/.*listening on port \([0-9]*\) (HTTPS).*/\1/p' "$tmp/log")
  [ -n "$port" ] && curl -sf --cacert "$tmp/cert.pem" "https://127.0.0.1:$port/readyz" > /dev/null && break
  kill -0 "$pid" 2>/dev/null || fail "server exited: $(cat "$tmp/log")"
  sleep 0.05
done
[ -n "$port" ] || fail "no port"
out=$(curl -s --cacert "$tmp/cert.pem" "https://127.0.0.1:$port/healthz") || fail "https healthz"
[ "$out" = '{"status":"ok"}' ] || fail "healthz over https: $out"
code=$(curl -s -o "$tmp/out" -w '%{http_code}' --cacert "$tmp/cert.pem" -X PUT \
  --data-binary @examples/serve/site.yaml "https://127.0.0.1:$port/v1/estate")
[ "$code" = 200 ] || fail "PUT /v1/estate over https: $code $(cat "$tmp/out")"
# the certificate is checked: without --cacert curl refuses it
curl -s "https://127.0.0.1:$port/healthz" > /dev/null && fail "an unknown CA was accepted"
# plain HTTP on the TLS port gets no HTTP answer
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$port/healthz")
[ "$code" = 200 ] && fail "plain HTTP answered on the TLS port"
echo "serve_tls: ok"
