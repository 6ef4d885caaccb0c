"""Fixtures for the memory tests: one empty memory per backend, Redis included (never skipped)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from _memory_backends import BACKENDS, backend_params, open_backend

from eudaimon.memory import Memory


@pytest.fixture(params=backend_params(BACKENDS))
async def memory(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Memory]:
    """One empty memory of each backend in turn."""
    opened = await open_backend(request.param, tmp_path)
    try:
        yield opened.memory
    finally:
        await opened.close()
