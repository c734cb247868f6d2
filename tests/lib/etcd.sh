# tests/lib/etcd.sh - sourced by the etcd scenarios: `etcd_require NAME`
# installs etcd-server when it is missing (as root, or with sudo -n) and,
# when it still is, prints "NAME: SKIPPED: ..." and ends the scenario with
# exit 0 (the one case an etcd scenario may skip).
etcd_require() {
  if ! command -v etcd > /dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ]; then
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server > /dev/null 2>&1
    elif sudo -n true > /dev/null 2>&1; then
      DEBIAN_FRONTEND=noninteractive sudo apt-get install -y -qq etcd-server > /dev/null 2>&1
    fi
  fi
  if ! command -v etcd > /dev/null 2>&1; then
    echo "$1: SKIPPED: etcd is not installed and cannot be (apt-get install etcd-server)"
    exit 0
  fi
}

# etcd_free_port SLICE: sets $port to a port nothing listens on and not
# handed out before in this script. Ports come from the scenario's own slice
# (0, 1, 2, ...) of 3,000 ports from 10000 up, below the kernel's ephemeral
# range: a client socket of a concurrent test (curl, a replica's etcd
# connection) takes its source port from that range and could otherwise
# take a chosen port before etcd binds it, and two etcd scenarios running
# side by side never draw from the same slice.
etcd_taken=" "
etcd_free_port() {
  local width=3000 base=$(( 10000 + $1 * 3000 )) lo=32768
  read -r lo _ < /proc/sys/net/ipv4/ip_local_port_range 2> /dev/null || lo=32768
  # a lowered ephemeral range: slices of 1,000 above its usual top instead
  [ $(( base + width )) -le "$lo" ] || { width=1000; base=$(( 61000 + $1 * 1000 )); }
  for _ in $(seq 1 100); do
    port=$(( base + RANDOM % width ))
    case $etcd_taken in *" $port "*) continue ;; esac
    (echo > /dev/tcp/127.0.0.1/$port) 2> /dev/null && continue
    etcd_taken+="$port "; return 0
  done
  echo "no free port in slice $1" >&2; port=0; return 1
}

# etcd_bind_lost LOG: true when etcd's log says one of its ports was taken
# (another process bound it after etcd_free_port chose it): start again on
# fresh ports.
etcd_bind_lost() { grep -q "address already in use" "$1" 2> /dev/null; }
