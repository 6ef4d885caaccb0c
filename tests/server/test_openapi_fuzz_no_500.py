"""Fuzz every endpoint of `/openapi.json` with schemathesis against a real server: no 500, and
every answer matches the schema the document declares for it.

Bounded: a few examples an operation, a time budget, one worker; the stream endpoints are
left out of the fuzzing (a stream of a live run only ends when the run does) and are covered by
their own tests, except that their error answers are checked here too.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx2
from _server_support import OPERATOR, Server


def test_no_endpoint_answers_500(keyed: Server, tmp_path: Path) -> None:
    """Invariant: whatever schemathesis sends (valid, invalid, missing fields, odd strings), no
    endpoint answers with a server error, with an operator's key or with none, and no answer
    departs from its declared schema."""
    with keyed.client(OPERATOR) as client:
        client.post("/v1/agents/payer/runs", json={"input": "pay 3 to FUZZ"})  # something to read and decide
        assert client.get("/openapi.json").status_code == 200
    command = [
        sys.executable, "-m", "schemathesis.cli", "run", f"{keyed.url}/openapi.json",
        "--checks", "not_a_server_error,response_schema_conformance",
        "--max-examples", "10", "--max-time", "90", "--workers", "1",
        "--exclude-path-regex", "stream", "--seed", "16", "--request-timeout", "20",
        "-H", f"Authorization: Bearer {OPERATOR}", "--report-dir", str(tmp_path),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=400, cwd=tmp_path)  # its cache goes there
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    assert "500" not in keyed.output()
    with httpx2.Client(base_url=keyed.url) as anon:
        assert anon.get("/v1/runs/x/events/stream").status_code == 401
