"""Malformed headers and ids are answered 4xx and change nothing, on SQLite and PostgreSQL.

Each case here once answered 500 (or, for a start, `queued` with nothing ever journaled): a
`Last-Event-ID` that `str.isdigit` accepts but `int` does not, and a NUL in a run id, a
`thread_id` filter, a thread path or a start's `thread_id`, which PostgreSQL cannot store.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from _backends_support import BACKENDS, served_on
from _server_support import Server


@pytest.fixture(scope="module", params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with served_on(request.param, tmp_path_factory.mktemp(request.param)) as server:
        yield server


def _a_paused_run(server: Server) -> str:
    with server.client() as client:
        run = client.post("/v1/agents/payer/runs", json={"input": "pay 1 to BOB", "thread_id": "t-bad-input"})
        assert run.status_code == 202, run.text
        return str(run.json()["run_id"])


@pytest.mark.parametrize("value", ["--1", "²", "1²", "-", "1e3", "0x10", "١"])
def test_a_last_event_id_that_is_not_an_integer_is_422(backend: Server, value: str) -> None:
    """Invariant: `Last-Event-ID` that is not a plain integer is refused (422) naming the header
    (HTTP header bytes are Latin-1: `²` is the byte 0xB2, which `str.isdigit` took for a digit)."""
    run_id = _a_paused_run(backend)
    with backend.client() as client:
        sent = value.encode("latin-1") if value.isascii() or ord(max(value)) < 256 else value.encode()
        answer = client.get(f"/v1/runs/{run_id}/events/stream", headers={"Last-Event-ID": sent})
    assert answer.status_code == 422, answer.text
    assert "Last-Event-ID" in answer.json()["detail"]


@pytest.mark.parametrize(
    "path",
    [
        "/v1/runs/run%00x",
        "/v1/runs/run%00x/events",
        "/v1/runs/run%00x/state",
        "/v1/runs/run%00x/events/stream",
        "/v1/runs?thread_id=a%00b",
        "/v1/runs?agent=pay%1Ber",
        "/v1/threads/t%00x",
        "/v1/threads/t%E2%80%AEx",  # U+202E, a bidi override
        "/v1/runs?thread_id=%ED%A0%80",  # a lone surrogate, percent-encoded
        "/v1/runs?thread_id=%FF",  # not UTF-8
    ],
)
def test_an_invisible_character_in_a_path_or_filter_is_422(backend: Server, path: str) -> None:
    """Invariant: a control, bidi or format character in an id or a filter is refused (422)
    before any store reads it (PostgreSQL cannot hold a NUL: it answered 500)."""
    with backend.client() as client:
        answer = client.get(path)
    assert answer.status_code == 422, answer.text
    assert "U+" in answer.json()["detail"]


@pytest.mark.parametrize("thread_id", ["", "a\x00b", "a\x1b[31mb", "a\u202eb", "a\ud800b"])
def test_a_start_with_an_invisible_thread_id_is_refused_and_journals_nothing(backend: Server, thread_id: str) -> None:
    """Invariant: a start whose `thread_id` is empty or holds a control, bidi or surrogate
    character is refused (422) and no run appears; before, a NUL answered `queued` and was never
    journaled, and "" started a run on a thread named "" (listed, linked to a page of no thread)."""
    with backend.client() as client:
        before = client.get("/v1/runs", params={"limit": 500}).json()["runs"]
        body = json.dumps({"input": "pay 1 to EVE", "thread_id": thread_id})  # \u escapes, as clients send
        answer = client.post("/v1/agents/payer/runs", content=body, headers={"Content-Type": "application/json"})
        assert answer.status_code == 422, answer.text
        assert "thread_id" in answer.json()["message"]
        prompt = client.post("/prompt", content=body, headers={"Content-Type": "application/json"})
        assert prompt.status_code == 422, prompt.text
        assert client.get("/v1/runs", params={"limit": 500}).json()["runs"] == before


def test_a_path_that_is_not_utf8_is_read_as_replacement_characters(backend: Server) -> None:
    """Invariant: bytes in a path that are not UTF-8 arrive as U+FFFD (uvicorn decodes them so):
    an id nobody has, 404, never a store error."""
    with backend.client() as client:
        for path in ("/v1/runs/run%ED%A0%80", "/v1/runs/run%FF/events", "/v1/threads/%C3"):
            assert client.get(path).status_code == 404, path
