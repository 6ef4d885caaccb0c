"""Where the real model of `conftest.py` answers, and how a test waits for it to come up."""

from __future__ import annotations

import os
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

MODEL_NAME = "smollm2-135m"
STARTING_WAIT_S = 1800.0
"""How long a test waits for a server `scripts/test.sh` is still building (~10 min on 2 cores)."""


@dataclass(frozen=True)
class RealModelServer:
    """Where the real model answers: `base_url` ends in `/v1`, as the OpenAI SDK wants it."""

    port: int

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def model_string(self) -> str:
        return f"openai-compatible:{MODEL_NAME}"


def answers(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as reply:
            return bool(reply.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def background_start_failed() -> str | None:
    """Wait for the start `scripts/test.sh` left running in the background, if any; say why it
    failed, if it did.

    `scripts/real-model-server.sh` may build llama-server from source (the prebuilt one dies of
    SIGILL on some AVX-512 machines), so `scripts/test.sh` runs it while the other checks run and
    names its log in `EUDAIMON_TEST_LLM_STARTING` (its exit status lands in `<log>.rc`).
    """
    starting = os.environ.get("EUDAIMON_TEST_LLM_STARTING")
    if not starting:
        return None
    log, status = Path(starting), Path(starting + ".rc")
    deadline = time.monotonic() + STARTING_WAIT_S
    while not status.exists():
        if time.monotonic() > deadline:
            return f"scripts/real-model-server.sh was still starting after {STARTING_WAIT_S:.0f} s (log: {log})"
        time.sleep(2)
    if status.read_text().strip() == "0":
        return None
    tail = log.read_text(errors="replace").strip().splitlines()[-3:] if log.exists() else []
    return f"scripts/real-model-server.sh failed: {' / '.join(tail)}"
