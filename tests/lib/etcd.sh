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
