"""The server is an optional part: its names are there, and the CLI does not need it to start."""

from __future__ import annotations

import subprocess
import sys

import eudaimon.server


def test_the_public_names_exist() -> None:
    """Invariant: every name in `eudaimon.server.__all__` resolves (they are imported on first use)."""
    for name in eudaimon.server.__all__:
        assert getattr(eudaimon.server, name) is not None


def test_the_cli_imports_without_loading_fastapi() -> None:
    """Invariant: `eudaimon` (any command but serve) never imports FastAPI or uvicorn, so it works
    without the `server` extra and starts no slower for it."""
    code = "import sys, eudaimon.cli; assert not {'fastapi', 'uvicorn'} & set(sys.modules), sorted(sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_serve_module_imports_before_the_cli() -> None:
    """Bug guarded: importing `eudaimon.cli._serve` first imported the CLI, which imported the
    half-made module back to register `serve` (AttributeError, circular import)."""
    code = "import eudaimon.cli._serve, eudaimon.cli; assert 'serve' in [c.name for c in eudaimon.cli.app.registered_commands]"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
