# tests/lib/chromium.sh - sourced by the browser scenarios:
# `chromium_require NAME [ci-strict]` sets CHROMIUM to Debian's chromium,
# installing it with apt-get when missing (as root; the install log goes to
# $tmp/apt.log). When it still is missing the scenario ends: skipped
# (exit 0, a SKIP line) - or, with ci-strict and CI set, failed.
chromium_require() {
  CHROMIUM=${CHROMIUM:-}
  [ -z "$CHROMIUM" ] && CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
  if [ -z "$CHROMIUM" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
      echo "installing Debian's chromium (apt-get install -y chromium)..."
      export DEBIAN_FRONTEND=noninteractive
      timeout 420 apt-get install -y -q chromium > "$tmp/apt.log" 2>&1 ||
        { timeout 120 apt-get update -q > /dev/null 2>&1 &&
          timeout 420 apt-get install -y -q chromium > "$tmp/apt.log" 2>&1; }
      CHROMIUM=$(command -v chromium || true)
    fi
    if [ -z "$CHROMIUM" ]; then
      if [ "${2:-}" = ci-strict ] && [ -n "${CI:-}" ]; then
        echo "FAIL: chromium is required in CI and could not be installed: $(tail -2 "$tmp/apt.log" 2>/dev/null)"
        exit 1
      fi
      echo "SKIP: $1 needs Debian's chromium and it could not be installed" \
           "(not root, no apt-get, or the install failed): $(tail -2 "$tmp/apt.log" 2>/dev/null)"
      exit 0
    fi
  fi
}
