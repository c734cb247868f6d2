#!/usr/bin/env bash
# Starts a 3-member etcd and 3 `berth serve --etcd` replicas on loopback
# (docs/ARCHITECTURE.md "Replicas on etcd"), loads the seed's estate through
# replica 1, creates the seed's clusters through replicas 1, 2 and 3 in turn,
# then shows that every replica answers the same estate (X-Berth-Revision
# tells how far each has applied the log). Everything is stopped on exit.
# usage: examples/serve/replicas.sh   (run from the repository root; needs
# etcd-server: apt-get install -y etcd-server)
set -euo pipefail
berth=${BERTH:-build/berth}
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
cluster=
for m in 1 2 3; do cluster+="${cluster:+,}m$m=http://127.0.0.1:$((23800 + m))"; done
for m in 1 2 3; do
  etcd --name "m$m" --data-dir "$work/etcd$m" \
    --listen-client-urls "http://127.0.0.1:$((23790 + m))" \
    --advertise-client-urls "http://127.0.0.1:$((23790 + m))" \
    --listen-peer-urls "http://127.0.0.1:$((23800 + m))" \
    --initial-advertise-peer-urls "http://127.0.0.1:$((23800 + m))" \
    --initial-cluster "$cluster" --initial-cluster-state new > "$work/etcd$m.log" 2>&1 &
  pids+=($!)
done
endpoints=http://127.0.0.1:23791,http://127.0.0.1:23792,http://127.0.0.1:23793
for _ in $(seq 1 100); do
  curl -sf -X POST -d '{}' http://127.0.0.1:23791/v3/maintenance/status > /dev/null && break
  sleep 0.1
done
for r in 1 2 3; do
  "$berth" serve --listen "127.0.0.1:$((8080 + r))" --etcd "$endpoints" --estate lab \
    --db "$work/replica$r.db" --checkpoint-every 3 -q &
  pids+=($!)
done
for r in 1 2 3; do
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$((8080 + r))/readyz" > /dev/null && break; sleep 0.1; done
done
curl -sf -X PUT --data-binary @examples/serve/site.yaml http://127.0.0.1:8081/v1/estate; echo
r=1
for c in A B C D E; do
  awk -v want="$c" 'BEGIN{RS="\n---\n"} $0 ~ "kind: KubernetesCluster" && $0 ~ "name: " want "[}\n ]" {print}' \
    examples/nexus/seed-scenarios.yaml > "$work/seed-$c.yaml"
  code=$(curl -s -o /dev/null -w '%{http_code}' -X POST --data-binary @"$work/seed-$c.yaml" \
    "http://127.0.0.1:$((8080 + r))/v1/clusters")
  echo "cluster $c through replica $r: $code"
  r=$(( r % 3 + 1 ))
done
for r in 1 2 3; do
  rev=$(curl -s -D - -o "$work/estate$r.json" "http://127.0.0.1:$((8080 + r))/v1/estate" |
    sed -n 's/^X-Berth-Revision: \([0-9]*\).*/\1/Ip')
  echo "replica $r: revision $rev, estate $(md5sum < "$work/estate$r.json" | cut -c1-12)"
done
curl -s http://127.0.0.1:8082/v1/clusters; echo
# --checkpoint-every 3: the elected leader has written a snapshot and removed the log below it;
# a fourth replica joins from the snapshot and answers the same estate
sleep 2
for r in 1 2 3; do
  curl -s "http://127.0.0.1:$((8080 + r))/metrics" | grep -E '^berth_replicated_(checkpoint_leader|snapshot_revision) ' |
    tr '\n' ' ' | sed "s/^/replica $r: /"; echo
done
"$berth" serve --listen 127.0.0.1:8084 --etcd "$endpoints" --estate lab --db "$work/replica4.db" -q &
pids+=($!)
for _ in $(seq 1 100); do curl -sf http://127.0.0.1:8084/readyz > /dev/null && break; sleep 0.1; done
echo "replica 4 (joined from the snapshot): estate $(curl -s http://127.0.0.1:8084/v1/estate | md5sum | cut -c1-12)"
