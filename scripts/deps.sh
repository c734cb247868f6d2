#!/usr/bin/env bash
# Installs the Debian packages berth needs, only those that are missing;
# when it cannot (no root and no sudo, not Debian, apt fails) it stops with
# one line naming the command to run. `make`, `make demo` and `make check`
# run it first.
set -uo pipefail
need=(gcc make pkg-config libyaml-dev libjansson-dev libcmocka-dev libmicrohttpd-dev libsqlite3-dev libcurl4-openssl-dev libsodium-dev curl)
if ! command -v dpkg-query >/dev/null 2>&1; then
  # not Debian: check that the headers and libraries compile and link
  cc=${CC:-cc}
  probe='#include <yaml.h>
#include <jansson.h>
#include <microhttpd.h>
#include <sqlite3.h>
#include <sodium.h>
int main(void) { return 0; }'
  if ! printf '%s\n' "$probe" | "$cc" -x c - -o /dev/null -lyaml -ljansson -lmicrohttpd -lsqlite3 -lsodium >/dev/null 2>&1; then
    echo "berth: missing build dependencies: install a C compiler, make, and the development packages of libyaml, jansson, libmicrohttpd, sqlite3, libsodium and cmocka (Debian: sudo apt-get install -y ${need[*]})" >&2
    exit 1
  fi
  exit 0
fi
missing=()
for p in "${need[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
cmd="apt-get install -y ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then
  SUDO=
elif command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; then
  SUDO=sudo
else
  echo "berth: missing packages ${missing[*]}: run 'sudo $cmd' (then make again)" >&2
  exit 1
fi
echo "berth: installing missing packages: ${missing[*]}"
if ! { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"; }; then
  echo "berth: could not install ${missing[*]}: run '${SUDO:+sudo }$cmd' and make again" >&2
  exit 1
fi
