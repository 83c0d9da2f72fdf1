#!/usr/bin/env bash
# Installs what trustbridge needs on a Debian machine; safe to re-run (does nothing twice).
#   - Debian packages: chromium (the default browser), firefox-esr, nodejs/npm (extension build check)
#   - a virtualenv in .venv with trustbridge installed editable, plus test extras
# Sourced by scripts/demo.sh and scripts/test.sh.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

need_pkgs=()
command -v chromium >/dev/null 2>&1 || need_pkgs+=(chromium)
command -v firefox-esr >/dev/null 2>&1 || need_pkgs+=(firefox-esr)
command -v node >/dev/null 2>&1 || need_pkgs+=(nodejs)
command -v npm >/dev/null 2>&1 || need_pkgs+=(npm)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need_pkgs+=(python3-venv)
if [ "${#need_pkgs[@]}" -gt 0 ]; then
  echo "bootstrap: installing Debian packages: ${need_pkgs[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_pkgs[@]}" >/dev/null
fi

if [ ! -x "$ROOT/.venv/bin/python" ]; then
  echo "bootstrap: creating .venv" >&2
  python3 -m venv "$ROOT/.venv"
fi
stamp="$ROOT/.venv/.trustbridge-installed"
if [ ! -f "$stamp" ] || [ "$ROOT/pyproject.toml" -nt "$stamp" ]; then
  echo "bootstrap: installing Python packages into .venv" >&2
  "$ROOT/.venv/bin/python" -m pip install -q --disable-pip-version-check -e "$ROOT[test]"
  touch "$stamp"
fi
