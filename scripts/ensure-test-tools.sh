#!/usr/bin/env bash
# What the test suite needs beyond the project's own packages:
# - headless Chromium renders report.html in the report tests;
# - the harness venv (lm-eval, inspect-ai, datasets from the package index, into the
#   git-ignored tests/.data/harness-venv) loads the exports in tests/export and
#   tests/security. It is started here in the background, so it builds while make test
#   lints and type-checks; the tests that need it wait for it (a file lock), or build it
#   themselves when this script was not run. Its log: tests/.data/harness-venv.log.
# Usage: scripts/ensure-test-tools.sh [PYTHON]   (default .venv/bin/python)
set -euo pipefail
cd "$(dirname "$0")/.."
python=${1:-.venv/bin/python}
mkdir -p tests/.data
if ! "$python" -c 'import sys; sys.path.insert(0, "tests"); from helpers.export_harness import is_built; sys.exit(not is_built())'; then
  echo "building the harness venv in the background (log: tests/.data/harness-venv.log)"
  nohup "$python" tests/helpers/export_harness.py >tests/.data/harness-venv.log 2>&1 </dev/null &
fi
if ! command -v chromium >/dev/null 2>&1; then
  echo "installing Debian's chromium for the report rendering test"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq chromium >/dev/null
fi
