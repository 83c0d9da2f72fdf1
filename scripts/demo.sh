#!/usr/bin/env bash
# The main job: bridge + supervisor + headless Chromium, acting on a real local page.
# Installs what it needs first (scripts/bootstrap.sh). Safe to re-run.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/bootstrap.sh"
exec "$ROOT/.venv/bin/trustbridge" demo "$@"
