"""Fuzz the API against a real server on SQLite and on PostgreSQL: no 5xx, ever.

Two generators, each against both backends:

- schemathesis over `/openapi.json`: every operation (valid, invalid, missing fields, odd
  strings, the headers the schema declares), checking each answer against its declared schema.
  Bounded: a few examples an operation, a time budget, one worker; the stream endpoints are
  left to the second generator (a stream of a live run only ends when the run does).
- Hypothesis over the headers a browser, a proxy or an attacker may send (`Host`, `Origin`,
  `Content-Type`, `Sec-Fetch-Site`, `Last-Event-ID`, `Idempotency-Key`, keys, …) and over ids
  in paths, on the reads, the stream of a run that waits, starts and decisions.

Each prints how many requests it made and how many answers were 5xx (the count the server's
note reports); the assertion is that the latter is 0, and that the server logged no exception.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx2
import pytest
from _backends_support import BACKENDS, served_on
from _server_support import KEYS, OPERATOR, Server
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


@pytest.fixture(scope="module", params=BACKENDS)
def keyed_on(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with served_on(request.param, tmp_path_factory.mktemp(f"fuzz-{request.param}"), {"EUDAIMON_API_KEYS": KEYS}) as s:
        yield s


def _no_exception_logged(server: Server) -> None:
    log = server.output()
    assert "Exception in ASGI application" not in log and "Traceback" not in log, log[-4000:]


def test_no_endpoint_answers_5xx(keyed_on: Server, tmp_path: Path) -> None:
    """Invariant: whatever schemathesis sends (valid, invalid, missing fields, odd strings,
    declared headers), no endpoint answers with a server error, with an operator's key or with
    none, and no answer departs from its declared schema."""
    with keyed_on.client(OPERATOR) as client:
        client.post("/v1/agents/payer/runs", json={"input": "pay 3 to FUZZ"})  # something to read and decide
        assert client.get("/openapi.json").status_code == 200
    har = tmp_path / "requests.har"
    command = [
        sys.executable, "-m", "schemathesis.cli", "run", f"{keyed_on.url}/openapi.json",
        "--checks", "not_a_server_error,response_schema_conformance",
        "--max-examples", "10", "--max-time", "90", "--workers", "1",
        "--exclude-path-regex", "stream", "--seed", "16", "--request-timeout", "20",
        "-H", f"Authorization: Bearer {OPERATOR}", "--report-dir", str(tmp_path),
        "--report", "har", "--report-har-path", str(har), "--generation-allow-x00", "true",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=400, cwd=tmp_path)  # its cache goes there
    entries = json.loads(har.read_text())["log"]["entries"] if har.exists() else []
    errors = [e for e in entries if e["response"]["status"] >= 500]
    print(f"\nschemathesis on {keyed_on.store or 'sqlite'}: {len(entries)} requests, {len(errors)} answered 5xx")
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    assert entries and not errors, errors[:3]
    _no_exception_logged(keyed_on)
    with httpx2.Client(base_url=keyed_on.url) as anon:
        assert anon.get("/v1/runs/x/events/stream").status_code == 401


def test_a_nul_in_a_prompt_never_breaks_a_listing(keyed_on: Server) -> None:
    """Invariant: a run started with a NUL in its input is listed, and every listing that reads
    the run index answers (the fuzzer's find on PostgreSQL: after such a start, `/v1/runs`,
    `/v1/dashboard`, `/v1/inbox` and `/v1/threads/…` answered 500 until the run was deleted);
    a NUL in a listing's filter is a 422 naming it."""
    with keyed_on.client(OPERATOR) as client:
        started = client.post("/v1/agents/payer/runs", json={"input": "pay 3 to \x00NUL", "thread_id": "nul"})
        assert started.status_code == 202, started.text
        run_id = started.json()["run_id"]
        for path in ("/v1/runs", "/v1/runs?replays=true", "/v1/runs?version=", "/v1/dashboard", "/v1/inbox"):
            assert client.get(path).status_code == 200, (path, client.get(path).text)
        listed = client.get("/v1/runs", params={"thread_id": "nul"}).json()["runs"]
        assert [(r["run_id"], r["input_preview"]) for r in listed] == [(run_id, "pay 3 to \x00NUL")]
        assert client.get("/v1/threads/nul").status_code == 200
        for name in ("version", "replay_of"):
            refused = client.get("/v1/runs", params={name: "a\x00"})
            assert refused.status_code == 422 and name in refused.text, refused.text
    _no_exception_logged(keyed_on)


_LATIN1 = st.text(st.characters(min_codepoint=0x20, max_codepoint=0xFF, exclude_characters="\x7f"), max_size=30)
_HEADERS = {
    "Host": st.sampled_from(["127.0.0.1", "localhost", "[::1]", "attacker.example", "127.0.0.1:1", ""]) | _LATIN1,
    "Origin": st.sampled_from(["null", "http://127.0.0.1", "http://evil.example", "file://"]) | _LATIN1,
    "Content-Type": st.sampled_from(["application/json", "application/json; charset=utf-8", "text/plain", ""])
    | _LATIN1,
    "Sec-Fetch-Site": st.sampled_from(["same-origin", "same-site", "cross-site", "none"]) | _LATIN1,
    "Last-Event-ID": st.sampled_from(["0", "-1", "--1", "\xb2", "1\xb2", "99999999999999999999999"])
    | st.integers(-(2**70), 2**70).map(str)
    | _LATIN1,
    "Idempotency-Key": _LATIN1,
    "Authorization": st.sampled_from([f"Bearer {OPERATOR}", "Bearer ", "Basic x"]) | _LATIN1,
    "X-API-Key": _LATIN1,
    "Accept": _LATIN1,
    "Cookie": _LATIN1,
}
_OPERATIONS = [
    ("GET", "/v1/runs/{run}/events/stream"),
    ("GET", "/v1/runs/{run}"),
    ("GET", "/v1/runs/{run}/events"),
    ("GET", "/v1/runs"),
    ("GET", "/v1/threads/{run}"),
    ("POST", "/v1/agents/payer/runs"),
    ("POST", "/v1/runs/{run}/approvals/{call}"),
    ("POST", "/v1/runs/{run}/resume"),
    ("POST", "/prompt"),
]
_BODIES = st.sampled_from(
    [b"", b"{}", b'{"input": "pay 1 to HYP"}', b'{"approved": false}', b"{", b"\xff"]
) | st.binary(max_size=40)


@st.composite
def _requests(draw: st.DrawFn, run_id: str) -> tuple[str, str, dict[str, bytes], bytes]:
    method, template = draw(st.sampled_from(_OPERATIONS))
    ident = draw(st.just(run_id) | st.text(max_size=12))
    path = template.format(run=quote(ident, safe=""), call=quote(draw(st.text(max_size=8)) or "c", safe=""))
    chosen = draw(st.lists(st.sampled_from(sorted(_HEADERS)), unique=True, max_size=5))
    headers = {name: draw(_HEADERS[name]).encode("latin-1") for name in chosen}
    headers.setdefault("Authorization", f"Bearer {OPERATOR}".encode())
    return method, path, headers, draw(_BODIES) if method == "POST" else b""


def test_no_header_or_id_makes_a_5xx(keyed_on: Server) -> None:
    """Invariant: headers of any Latin-1 text (what HTTP carries) and ids of any text in paths
    get a 4xx or a 2xx, never a 5xx, on every backend."""
    with keyed_on.client(OPERATOR) as client:
        run_id = client.post("/v1/agents/payer/runs", json={"input": "pay 2 to HEADERS"}).json()["run_id"]
    sent: list[int] = []
    with httpx2.Client(base_url=keyed_on.url, timeout=20) as client:

        @settings(
            max_examples=300, deadline=None, database=None, derandomize=True,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )  # fmt: skip
        @given(_requests(run_id))
        def fuzz(request: tuple[str, str, dict[str, bytes], bytes]) -> None:
            method, path, headers, body = request
            try:
                answer = client.request(method, path, headers=headers, content=body)
            except httpx2.LocalProtocolError:
                return  # a header value the client itself refuses to send (e.g. leading space)
            sent.append(answer.status_code)
            assert answer.status_code < 500, (method, path, headers, body, answer.text)

        fuzz()
    errors = sum(1 for status in sent if status >= 500)
    print(f"\nhypothesis on {keyed_on.store or 'sqlite'}: {len(sent)} requests, {errors} answered 5xx")
    assert len(sent) > 100
    _no_exception_logged(keyed_on)
