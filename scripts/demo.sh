#!/usr/bin/env bash
# Play the offline demo: creates .venv if missing, installs eudaimon, runs `eudaimon demo`.
# Arguments go to `eudaimon demo`, e.g. ./scripts/demo.sh --store sqlite:///demo.db --pace 0
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

die() { printf '\033[1;31merror:\033[0m %s\n' "$*" >&2; exit 1; }

python=${PYTHON:-python3}
command -v "$python" >/dev/null || die "$python not found; install Python >= 3.11 (apt-get install python3 python3-venv)"
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
    || die "eudaimon needs Python >= 3.11, but $python is $("$python" -V 2>&1); set PYTHON=/path/to/python3.11+"
if [ ! -x .venv/bin/python ]; then
    echo "==> creating .venv with $("$python" -V 2>&1)"
    "$python" -m venv .venv || die "could not create .venv; on Debian: apt-get install python3-venv"
fi
.venv/bin/python -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
    || die ".venv uses $(.venv/bin/python -V 2>&1), older than 3.11; delete .venv and run again"

# Install when pyproject.toml changed since the last install (by this script or scripts/test.sh).
stamp=.venv/.eudaimon-install
hash=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ ! -f "$stamp" ] || ! grep -q "^$hash" "$stamp"; then
    echo "==> installing eudaimon into .venv"
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet -e .
    printf '%s \n' "$hash" >"$stamp"
fi

exec .venv/bin/eudaimon demo "$@"
