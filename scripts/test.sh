#!/usr/bin/env bash
# Runs the whole test suite (unit, loopback server and real headless-browser tests).
# Installs what it needs first (scripts/bootstrap.sh). Safe to re-run. Extra args go to pytest.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/bootstrap.sh"
# The extension's build tools (pinned in extension/package-lock.json), for the build drift check.
if [ ! -d "$ROOT/extension/node_modules/esbuild" ]; then
  (cd "$ROOT/extension" && npm ci --no-audit --no-fund --loglevel=error)
fi
cd "$ROOT"
exec "$ROOT/.venv/bin/python" -m pytest "$@"
