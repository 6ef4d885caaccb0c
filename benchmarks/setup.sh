#!/usr/bin/env bash
# Create benchmarks/.peers: a virtualenv apart from the project's, holding the frameworks that
# benchmarks/compare.py measures eudaimon against (pinned in requirements.txt), the profilers,
# and eudaimon itself installed editable from this repository. Nothing here becomes a
# dependency of eudaimon. Needs the network (PyPI) once; the benchmarks then run offline.
#
#   benchmarks/peers/setup.sh                 # PYTHON=python3.12 benchmarks/peers/setup.sh to choose
#   benchmarks/.peers/bin/python benchmarks/compare.py
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="$repo/benchmarks/.peers"
python="${PYTHON:-python3}"

"$python" - <<'PY'
import sys
if sys.version_info < (3, 11):
    raise SystemExit(f"eudaimon needs Python >= 3.11; {sys.executable} is {sys.version.split()[0]}")
PY

if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "$repo"

"$venv/bin/python" - <<'PY'
from importlib.metadata import version
names = ["eudaimon", "langgraph", "langgraph-checkpoint-sqlite", "langgraph-checkpoint-postgres", "langchain-core",
         "pydantic-ai-slim", "openai",
         "openai-agents", "pyinstrument", "py-spy"]
print("benchmarks/.peers ready: " + ", ".join(f"{n} {version(n)}" for n in names))
PY
