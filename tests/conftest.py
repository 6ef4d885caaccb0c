"""Suite-wide guards.

No test may reach a real provider: provider SDKs are pointed at a closed local port and real
keys are removed, so a test that forgets its fake server fails fast instead of calling out.
Tests that need a provider start their own server on 127.0.0.1 and pass its URL explicitly.
"""

from __future__ import annotations

import os

import pytest

_CLOSED = "http://127.0.0.1:9"


@pytest.fixture(autouse=True)
def _no_real_providers(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", _CLOSED)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", _CLOSED)
    monkeypatch.setenv("OLLAMA_BASE_URL", _CLOSED + "/v1")
    monkeypatch.delenv("EUDAIMON_STORE", raising=False)


def pytest_report_header() -> str:
    return f"eudaimon tests; PG={os.environ.get('EUDAIMON_TEST_PG_DSN', 'unset')}"
