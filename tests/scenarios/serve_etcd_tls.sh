#!/usr/bin/env bash
# serve_etcd_tls: one `berth serve --etcd https://...` replica talks to a
# one-member etcd that serves TLS and demands client certificates
# (--client-cert-auth), given --etcd-cacert/--etcd-cert/--etcd-key: it
# takes an estate and a cluster and reads the cluster back. Without
# --etcd-cert/--etcd-key the replica does not start (etcd refuses the TLS
# handshake: exit 3, "etcd unavailable"); an unreadable --etcd-cacert is
# exit 2 naming the option. The CA and certificates are made here with
# openssl. Skipped (with a message) only when etcd is not installed and
# cannot be.
set -u
BERTH=${BERTH:-build/berth}
BUILD_DIR=$(dirname "$BERTH")
. tests/lib/etcd.sh
etcd_require serve_etcd_tls
mkdir -p "$BUILD_DIR"
tmp=$(mktemp -d "$BUILD_DIR/etcd-tls-test.XXXXXX")
epid=; pid=
cleanup() {
  [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
  [ -n "$epid" ] && kill "$epid" 2>/dev/null
  wait 2>/dev/null; rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; tail -5 "$tmp/r.log" 2>/dev/null; tail -5 "$tmp/etcd.log" 2>/dev/null; exit 1; }

# a throwaway CA, a server certificate for 127.0.0.1, a client certificate
ssl() { openssl "$@" > /dev/null 2>&1 || fail "openssl $1 failed"; }
ssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=berth-test-ca \
  -keyout "$tmp/ca.key" -out "$tmp/ca.pem"
printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n' > "$tmp/srv.ext"
printf 'extendedKeyUsage=clientAuth\n' > "$tmp/cli.ext"
for n in srv cli; do
  ssl req -newkey rsa:2048 -nodes -subj "/CN=berth-test-$n" -keyout "$tmp/$n.key" \
    -out "$tmp/$n.csr"
  ssl x509 -req -in "$tmp/$n.csr" -CA "$tmp/ca.pem" -CAkey "$tmp/ca.key" -CAcreateserial \
    -days 2 -extfile "$tmp/$n.ext" -out "$tmp/$n.pem"
done

TLS=(--cacert "$tmp/ca.pem" --cert "$tmp/cli.pem" --key "$tmp/cli.key")
start_etcd() { # on fresh ports; returns 1 when one was taken before etcd bound it
  etcd_free_port 2 && cport=$port && etcd_free_port 2 && pport=$port || fail "no free port"
  rm -rf "$tmp/etcd"
  etcd --name m0 --data-dir "$tmp/etcd" --listen-client-urls "https://127.0.0.1:$cport" \
    --advertise-client-urls "https://127.0.0.1:$cport" \
    --listen-peer-urls "http://127.0.0.1:$pport" --initial-advertise-peer-urls "http://127.0.0.1:$pport" \
    --initial-cluster "m0=http://127.0.0.1:$pport" --initial-cluster-state new \
    --cert-file "$tmp/srv.pem" --key-file "$tmp/srv.key" --client-cert-auth \
    --trusted-ca-file "$tmp/ca.pem" > "$tmp/etcd.log" 2>&1 &
  epid=$!
  for _ in $(seq 1 150); do
    curl -sf "${TLS[@]}" -X POST -d '{}' "https://127.0.0.1:$cport/v3/maintenance/status" \
      > /dev/null && return 0
    if ! kill -0 "$epid" 2>/dev/null; then
      etcd_bind_lost "$tmp/etcd.log" && { wait "$epid"; return 1; }
      fail "etcd exited: $(tail -3 "$tmp/etcd.log")"
    fi
    sleep 0.1
  done
  fail "etcd did not start"
}
for try in 1 2 3 4; do
  start_etcd && break
  [ $try -lt 4 ] || fail "etcd lost its ports four times: $(tail -3 "$tmp/etcd.log")"
done
ETCD="https://127.0.0.1:$cport"
# the member really demands a client certificate
curl -s --cacert "$tmp/ca.pem" -X POST -d '{}' "$ETCD/v3/maintenance/status" > /dev/null &&
  fail "etcd answered without a client certificate"

# without the client certificate: the replica does not start
"$BERTH" serve --listen 127.0.0.1:0 --etcd "$ETCD" --estate tls --db "$tmp/r.db" \
  --etcd-cacert "$tmp/ca.pem" 2> "$tmp/nocert.log" &
p=$!
for _ in $(seq 1 100); do kill -0 $p 2>/dev/null || break; sleep 0.1; done
kill -0 $p 2>/dev/null && { kill -9 $p; fail "a replica without --etcd-cert started"; }
wait $p; rc=$?
[ $rc -eq 3 ] || fail "without --etcd-cert: exit $rc, expected 3: $(cat "$tmp/nocert.log")"
grep -q "etcd unavailable" "$tmp/nocert.log" || fail "without --etcd-cert: $(cat "$tmp/nocert.log")"
# an unreadable file: exit 2 naming the option
"$BERTH" serve --listen 127.0.0.1:0 --etcd "$ETCD" --estate tls --db "$tmp/r.db" \
  --etcd-cacert "$tmp/none.pem" --etcd-cert "$tmp/cli.pem" --etcd-key "$tmp/cli.key" \
  2> "$tmp/bad.log"
rc=$?
[ $rc -eq 2 ] || fail "missing --etcd-cacert file: exit $rc, expected 2"
grep -q -- "--etcd-cacert: cannot read '$tmp/none.pem'" "$tmp/bad.log" ||
  fail "missing --etcd-cacert file: $(cat "$tmp/bad.log")"

# with the three options: serves
"$BERTH" serve --listen 127.0.0.1:0 --etcd "$ETCD" --estate tls --db "$tmp/r.db" \
  --etcd-cacert "$tmp/ca.pem" --etcd-cert "$tmp/cli.pem" --etcd-key "$tmp/cli.key" \
  2> "$tmp/r.log" &
pid=$!
rport=
for _ in $(seq 1 200); do
  rport=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$tmp/r.log")
  [ -n "$rport" ] && curl -sf "http://127.0.0.1:$rport/readyz" > /dev/null && break
  kill -0 "$pid" 2>/dev/null || fail "replica exited: $(cat "$tmp/r.log")"
  sleep 0.05
done
[ -n "$rport" ] || fail "replica not ready"
R="http://127.0.0.1:$rport"
curl -sf -X PUT --data-binary @examples/serve/site.yaml "$R/v1/estate" > /dev/null ||
  fail "cannot load the estate"
code=$(curl -s -o "$tmp/created.json" -w '%{http_code}' -X POST \
  --data-binary @examples/serve/cluster-a.yaml "$R/v1/clusters")
[ "$code" = 201 ] || fail "create: HTTP $code: $(cat "$tmp/created.json")"
name=$(sed -n 's/.*metadata: {name: \([^},]*\)}.*/\1/p' examples/serve/cluster-a.yaml | head -1)
[ -n "$name" ] || fail "no cluster name in examples/serve/cluster-a.yaml"
curl -sf "$R/v1/clusters/$name" > "$tmp/got.json" || fail "cannot read back cluster $name"
grep -q "\"$name\"" "$tmp/got.json" || fail "read back: $(head -c 300 "$tmp/got.json")"
# the log is in etcd: its revision moved past the writes (read over TLS)
keys=$(curl -sf "${TLS[@]}" -X POST \
  -d "{\"key\":\"$(printf /berth/v1/tls/ | base64)\",\"range_end\":\"$(printf /berth/v1/tls0 | base64)\",\"count_only\":true}" \
  "$ETCD/v3/kv/range" | sed -n 's/.*"count":"\([0-9]*\)".*/\1/p')
[ -n "$keys" ] && [ "$keys" -ge 2 ] || fail "no berth keys in etcd (count '$keys')"
echo "serve_etcd_tls: OK (estate and cluster $name over https with a client certificate)"
