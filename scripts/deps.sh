#!/usr/bin/env bash
# Installs the Debian packages berth needs, only those that are missing.
set -euo pipefail
need=(gcc make pkg-config libyaml-dev libjansson-dev libcmocka-dev libmicrohttpd-dev libsqlite3-dev curl)
missing=()
for p in "${need[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "berth: installing missing packages: ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
