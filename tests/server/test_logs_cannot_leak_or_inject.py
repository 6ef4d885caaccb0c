"""What the server writes to its log: no credential from a query string, and no control or bidi
character from a model's or a tool's error text, read from a real server's output.

Two servers: `eudaimon serve` (its own logging configuration) and `create_app` run by uvicorn
directly (uvicorn's configuration; the app's lifespan installs the same filter).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx2
import pytest
from _server_support import HERE, KEYS, OPERATOR, Server, wait_until

from support.ports import free_port

SECRET = "sk-live-QUERYSTRINGSECRET42"
INVISIBLE = ("\x1b", "\x07", "\u202e", "\u202c")


def _assert_safe(log: str) -> None:
    for char in INVISIBLE:
        assert char not in log, f"U+{ord(char):04X} reached the log raw:\n{log[-3000:]}"
    assert SECRET not in log and "QUERYSTRINGSECRET" not in log
    for line in log.splitlines():
        assert not line.startswith("INFO:     forged"), line  # a newline in error text forged a record


def _log_with(read: Callable[[], str], *needles: str) -> str:
    """The log once it holds every needle (the server writes as it goes)."""

    def check() -> str | None:
        text = read()
        return text if all(n in text for n in needles) else None

    return str(wait_until(check, f"{needles} in the log"))


def _query_key_requests(url: str) -> None:
    with httpx2.Client(base_url=url) as anon:
        for name in ("api_key", "token", "key", "X-API-Key"):
            assert anon.get("/v1/runs", params={name: SECRET, "limit": 5}).status_code in (200, 401)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Server]:
    server = Server(
        tmp_path / "runs.db",
        env={"EUDAIMON_API_KEYS": KEYS},
        args=("--agent", "_hostile_agents:glitcher", "--agent", "_hostile_agents:crasher", "--log-level", "info"),
    )
    yield server.start()
    server.stop()


def test_eudaimon_serve_masks_query_keys_and_escapes_error_text(served: Server) -> None:
    """Invariant: `eudaimon serve`'s access log masks a key sent in a query string (refused,
    401), and a model error (a warning) and a user-code exception (a traceback) with ANSI/OSC
    escapes, bells, bidi overrides and a newline reach the log escaped, one record a line."""
    _query_key_requests(served.url)
    with served.client(OPERATOR) as client:
        for agent in ("glitcher", "crasher"):
            run = client.post(f"/v1/agents/{agent}/runs", params={"wait": True}, json={"input": "go"})
            assert run.status_code == 200 and run.json()["status"] == "failed", run.text
    log = _log_with(served.output, "user code said", "provider said")
    _assert_safe(log)
    assert "api_key=***" in log and "GET /v1/runs?" in log  # the access log is on, with the key masked
    assert "\\x1b[2J" in log and "\\u202e" in log  # shown, as escapes
    assert "failed: ModelError: provider said:" in log and "\\nINFO:     forged record" in log
    assert "  Traceback (most recent call last)" in log and "\n  INFO:     forged record" in log  # indented


def test_create_app_under_plain_uvicorn_masks_and_escapes(tmp_path: Path) -> None:
    """Invariant: `create_app` served by uvicorn with uvicorn's own logging gets the same: the
    app's lifespan puts the filter on the handlers uvicorn configured."""
    port = free_port()
    log_path = tmp_path / "uvicorn.log"
    with log_path.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, str(HERE / "_logged_app.py"), str(tmp_path / "runs.db"), str(port)],
            cwd=HERE,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=Server(tmp_path / "x.db").environment(),
        )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until(lambda: _answers(url), "the app to answer")
        _query_key_requests(url)
        with httpx2.Client(base_url=url, timeout=30) as client:
            run = client.post("/v1/agents/glitcher/runs", params={"wait": True}, json={"input": "go"})
            assert run.json()["status"] == "failed", run.text
        log = _log_with(lambda: log_path.read_text(errors="replace"), "provider said")
        _assert_safe(log)
        assert "api_key=***" in log and "\\u202e" in log
    finally:
        process.terminate()
        process.wait(15)


def _answers(url: str) -> bool:
    try:
        return httpx2.get(url + "/health", timeout=1).status_code == 200
    except httpx2.TransportError:
        return False
