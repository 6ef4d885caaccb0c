#!/usr/bin/env bash
# The real model of tests/real_model: ../shared/tools/llm-server.sh (llama.cpp's llama-server and
# SmolLM2-135M, from PyPI), started on 127.0.0.1:$PORT (8088), or stopped.
#     scripts/real-model-server.sh start|stop
# Where the prebuilt llama-server cannot run (it dies of SIGILL on some AVX-512 machines, this
# project's CI machine among them), llama-server is built from source instead (BUILD_FROM_SOURCE=1,
# ~10 min on 2 cores the first time; llm-server.sh keeps the build). EUDAIMON_LLM_SERVER_SCRIPT
# overrides where llm-server.sh is; PREFIX where it keeps what it installs.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
script=${EUDAIMON_LLM_SERVER_SCRIPT:-$root/../shared/tools/llm-server.sh}
[ -f "$script" ] || { echo "$script not found (set EUDAIMON_LLM_SERVER_SCRIPT)" >&2; exit 1; }
[ "${1:-start}" = stop ] && exec bash "$script" stop

if bash "$script" start; then exit 0; fi
echo "==> the prebuilt llama-server did not start; building llama-server from source (BUILD_FROM_SOURCE=1)"
# llm-server.sh fetches the sources with `pip download --no-binary :all:`, which would first build
# their build requirement CMake from source (still compiling after 19 min here): put them in its venv
# as wheels and have pip use them there. pip takes PIP_NO_BUILD_ISOLATION as the option's value
# (build_isolation), so "off" turns isolation off.
venv=${PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/eud-llm}/venv
if [ -x "$venv/bin/pip" ]; then
    "$venv/bin/pip" install -q --disable-pip-version-check 'setuptools>=77' 'setuptools-scm>=8' wheel cmake
fi
PIP_NO_BUILD_ISOLATION=off BUILD_FROM_SOURCE=1 exec bash "$script" start
