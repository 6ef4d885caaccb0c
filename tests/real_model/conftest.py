"""A real model behind an OpenAI-compatible server: llama.cpp's llama-server and SmolLM2-135M.

The safety promises are proved on `ScriptedModel` elsewhere; here they meet a real provider:
tool arguments arrive as JSON strings (also split across stream chunks), answers are cut by
`max_tokens`, generations take real time. The model is tiny and sometimes writes broken tool
calls, so the tests here check structure and fault handling, never wording.

`scripts/test.sh` starts the server (`../shared/tools/llm-server.sh start`); when nothing answers
on `EUDAIMON_TEST_LLM_PORT` (default 8088) this module starts it itself, and skips, saying why,
only where the server cannot be installed.
"""

from __future__ import annotations

import os
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from _real_model import RealModelServer

_ROOT = Path(__file__).resolve().parents[2]
_SCRIPT = Path(os.environ.get("EUDAIMON_LLM_SERVER_SCRIPT", _ROOT.parent / "shared" / "tools" / "llm-server.sh"))


def _answers(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as reply:
            return bool(reply.status == 200)
    except (urllib.error.URLError, OSError):
        return False


@pytest.fixture(scope="session")
def real_model() -> RealModelServer:
    """The running llama-server, started here if `scripts/test.sh` did not start it."""
    port = int(os.environ.get("EUDAIMON_TEST_LLM_PORT", "8088"))
    if not _answers(port):
        unavailable = os.environ.get("EUDAIMON_TEST_LLM_UNAVAILABLE")
        if unavailable:
            pytest.skip(f"the real model server could not be installed: {unavailable}")
        if not _SCRIPT.is_file():
            pytest.skip(f"no real model server: {_SCRIPT} is missing (set EUDAIMON_LLM_SERVER_SCRIPT)")
        started = subprocess.run(
            ["bash", str(_SCRIPT), "start"],
            env={**os.environ, "PORT": str(port)},
            capture_output=True,
            text=True,
            timeout=1800,
            check=False,
        )
        if started.returncode != 0 or not _answers(port):
            tail = (started.stdout + started.stderr).strip().splitlines()[-5:]
            pytest.skip(f"the real model server could not be installed or started: {' / '.join(tail)}")
    return RealModelServer(port)
