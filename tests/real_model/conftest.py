"""A real model behind an OpenAI-compatible server: llama.cpp's llama-server and SmolLM2-135M.

The safety promises are proved on `ScriptedModel` elsewhere; here they meet a real provider:
tool arguments arrive as JSON strings (also split across stream chunks), answers are cut by
`max_tokens`, generations take real time. The model is tiny and sometimes writes broken tool
calls, so the tests here check structure and fault handling, never wording.

`scripts/test.sh` starts the server in the background (`scripts/real-model-server.sh`, which runs
`../shared/tools/llm-server.sh`) and the fixture here waits for it; when nothing answers on
`EUDAIMON_TEST_LLM_PORT` (default 8088) and nothing is starting, the fixture starts it itself, and
skips, saying why, only where the server cannot be installed.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from _real_model import RealModelServer, answers, background_start_failed

_ROOT = Path(__file__).resolve().parents[2]
_SCRIPT = Path(os.environ.get("EUDAIMON_LLM_SERVER_SCRIPT", _ROOT.parent / "shared" / "tools" / "llm-server.sh"))


@pytest.fixture(scope="session")
def real_model() -> RealModelServer:
    """The running llama-server, started here if `scripts/test.sh` did not start it."""
    port = int(os.environ.get("EUDAIMON_TEST_LLM_PORT", "8088"))
    failed = background_start_failed()
    if failed:
        pytest.skip(f"the real model server could not be installed: {failed}")
    if not answers(port):
        unavailable = os.environ.get("EUDAIMON_TEST_LLM_UNAVAILABLE")
        if unavailable:
            pytest.skip(f"the real model server could not be installed: {unavailable}")
        if not _SCRIPT.is_file():
            pytest.skip(f"no real model server: {_SCRIPT} is missing (set EUDAIMON_LLM_SERVER_SCRIPT)")
        started = subprocess.run(
            ["bash", str(_ROOT / "scripts" / "real-model-server.sh"), "start"],
            env={**os.environ, "PORT": str(port), "EUDAIMON_LLM_SERVER_SCRIPT": str(_SCRIPT)},
            capture_output=True,
            text=True,
            timeout=1800,
            check=False,
        )
        if started.returncode != 0 or not answers(port):
            tail = (started.stdout + started.stderr).strip().splitlines()[-5:]
            pytest.skip(f"the real model server could not be installed or started: {' / '.join(tail)}")
    return RealModelServer(port)
