#!/usr/bin/env bash
# System tools the test suite needs beyond Python packages: headless Chromium
# renders report.html in the report tests.
set -euo pipefail
if ! command -v chromium >/dev/null 2>&1; then
  echo "installing Debian's chromium for the report rendering test"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq chromium >/dev/null
fi
