"""`scripts/test.sh`: `--help` says what it runs; pytest arguments run pytest alone (the
pre-checks only with `--all`); `.ci/run` runs everything whatever it is given.

Bug (issue 39): `scripts/test.sh -k …` ran every pre-check first (53 s of a 3.5 min run for
18 tests) and had no `--help`.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "test.sh"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        # Services as the test session has them; no real model server is started from here.
        "EUDAIMON_TEST_PG_DSN": os.environ.get("EUDAIMON_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres"),
        "EUDAIMON_TEST_REDIS_URL": os.environ.get("EUDAIMON_TEST_REDIS_URL", "redis://127.0.0.1:6379/0"),
        "EUDAIMON_LLM_SERVER_SCRIPT": "/nonexistent/llm-server.sh",
        "EUDAIMON_TEST_LLM_PORT": "1",
        "EUDAIMON_TEST_ALL": "",
    }
    return subprocess.run(["bash", str(SCRIPT), *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


def test_help_lists_the_checks_and_the_options():
    """`--help` exits 0 before touching anything and names every check and option."""
    for flag in ("--help", "-h"):
        done = _run(flag)
        assert done.returncode == 0, done.stderr
        for word in ("usage: scripts/test.sh", "--all", "package", "ruff", "mypy", "mkdocs", "pytest"):
            assert word in done.stdout
        assert "==>" not in done.stdout, "help starts nothing"


def test_pytest_arguments_skip_the_pre_checks():
    """Invariant: with pytest arguments only pytest runs, and the output says how to run the rest."""
    done = _run("tests/test_public_names.py", "-q", "-p", "no:cacheprovider")
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-2000:]
    assert "pre-checks (package, ruff, mypy, mkdocs) skipped" in out
    for check in ("==> mypy", "==> ruff check", "==> mkdocs", "==> package"):
        assert check not in out
    assert "passed" in out


def test_ci_runs_every_check_whatever_its_arguments():
    """`.ci/run` passes `--all`, so CI's arguments never drop a check."""
    run = (ROOT / ".ci" / "run").read_text()
    assert 'scripts/test.sh --all "$@"' in run
