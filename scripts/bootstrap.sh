#!/usr/bin/env bash
# Installs what trustbridge needs on a Debian machine; safe to re-run (does nothing twice).
#   - Debian packages: chromium (the default browser), firefox-esr, nodejs/npm (extension build check)
#   - a virtualenv in .venv with trustbridge installed editable, plus the test extra and the
#     camoufox extra (the Camoufox launch code is tested offline, without its browser binary)
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

# trustbridge needs Python 3.11+ (pyproject.toml requires-python). $PYTHON picks the interpreter;
# otherwise the first of python3, python3.13, python3.12, python3.11 that is new enough.
py=""
for cand in ${PYTHON:-python3 python3.13 python3.12 python3.11}; do
  if command -v "$cand" >/dev/null 2>&1 && "$cand" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    py="$cand"; break
  fi
done
if [ -z "$py" ]; then
  if [ -n "${PYTHON:-}" ]; then found="PYTHON=$PYTHON is not one"; else found="found $(python3 --version 2>&1 || echo 'no python3')"; fi
  echo "bootstrap: trustbridge needs Python 3.11 or newer; $found." >&2
  echo "bootstrap: install one (Debian 12: apt-get install python3) or name it: PYTHON=/path/to/python3.11 $0" >&2
  exit 1
fi
if [ -x "$ROOT/.venv/bin/python" ] && ! "$ROOT/.venv/bin/python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "bootstrap: .venv has Python older than 3.11; remove it ($ROOT/.venv) and re-run" >&2
  exit 1
fi
if [ ! -x "$ROOT/.venv/bin/python" ]; then
  echo "bootstrap: creating .venv with $py" >&2
  "$py" -m venv "$ROOT/.venv"
fi
stamp="$ROOT/.venv/.trustbridge-installed"
if [ ! -f "$stamp" ] || [ "$ROOT/pyproject.toml" -nt "$stamp" ]; then
  echo "bootstrap: installing Python packages into .venv" >&2
  "$ROOT/.venv/bin/python" -m pip install -q --disable-pip-version-check -e "$ROOT[test,camoufox]"
  touch "$stamp"
fi
