"""An approver's edit is a new call: decoded and validated as the model's are, then judged by the
agent's approval policy (DENY: 422 with the policy's word, nothing recorded, the call still
waits). And an edit is shown as an edit everywhere a decision is read: the journal keeps both
the model's and the human's arguments, the run view's `decisions`, `runs show`, `runs events`,
the AG-UI stream and the A2A task say who changed what from what to what. Against a real
`eudaimon serve --a2a --ag-ui`, on SQLite and on PostgreSQL.

Before: the policy (DENY above $10,000) never saw an edit, so $50,000 and -$50,000 refunds ran;
a 401-digit integer reached a `float` tool as `inf`; and the run view, `runs events` and the
inspector showed the model's $500 while $9,000 was refunded.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from _a2a_support import a2a_client
from _backends_support import BACKENDS
from _holes_support import HolesServer, holes_on, journal, paused_refund, still_waiting
from _server_support import wait_until
from a2a.types.a2a_pb2 import GetTaskRequest
from google.protobuf.json_format import MessageToDict

SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture(scope="module", params=BACKENDS)
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HolesServer]:
    with holes_on(request.param, tmp_path_factory.mktemp(f"edits-{request.param}")) as server:
        yield server


@pytest.mark.parametrize("amount", [50_000, -50_000, 10_000.01])
def test_an_edit_the_policy_denies_answers_422_and_records_nothing(served: HolesServer, amount: float) -> None:
    """Bug: an approval edited to $50,000 (or -$50,000) ran although the policy denies any
    refund above $10,000 or below $0. Now it answers 422 with the policy's word; no event is
    journaled and the call still waits for a decision."""
    with served.client() as client:
        run_id = paused_refund(client, 500)
        count = len(journal(client, run_id))
        body = {"approved": True, "arguments": {"order": "A-1", "amount_usd": amount}}
        answer = client.post(f"/v1/runs/{run_id}/approvals/refund_1", json=body)
        assert answer.status_code == 422, answer.text
        assert "approval policy denies" in answer.text and "still waits" in answer.text
        still_waiting(client, run_id, count)


@pytest.mark.parametrize(
    "raw",
    [
        '{"order": "A-1", "amount_usd": ' + "9" * 401 + "}",
        '{"order": "A-1", "amount_usd": 1e999}',
        '{"order": "A-1", "amount_usd": NaN}',
        '{"order": "A-1", "amount_usd": -Infinity}',
    ],
)
def test_numbers_no_tool_should_get_are_refused_in_an_edit(served: HolesServer, raw: str) -> None:
    """Bug: a 401-digit integer in edited arguments reached the tool as `inf`. Now non-finite
    numbers and integers beyond 64 bits answer 422 naming the number; nothing is recorded."""
    with served.client() as client:
        run_id = paused_refund(client, 500)
        count = len(journal(client, run_id))
        content = '{"approved": true, "arguments": ' + raw + "}"
        answer = client.post(
            f"/v1/runs/{run_id}/approvals/refund_1", content=content, headers={"content-type": "application/json"}
        )
        assert answer.status_code == 422, answer.text
        assert "amount_usd" in answer.text and ("finite" in answer.text or "64 bits" in answer.text), answer.text
        still_waiting(client, run_id, count)


def _cli(served: HolesServer, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(SRC), "COLUMNS": "400"}
    command = [sys.executable, "-c", "from eudaimon.cli import app; app()", *args, "--store", served.store_url]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


async def test_an_allowed_edit_runs_and_is_shown_as_an_edit_everywhere(served: HolesServer) -> None:
    """Invariant: an edit within the policy runs; `approval_decided` keeps `original_arguments`
    beside `arguments`; the run view's decision carries both; `runs show` and `runs events`,
    the AG-UI replay and the A2A task say who changed `amount_usd` from 500 to 9000."""
    with served.client() as client:
        run_id = paused_refund(client, 500)
        body = {"approved": True, "note": "agreed on the phone", "arguments": {"order": "A-1", "amount_usd": 9000}}
        assert client.post(f"/v1/runs/{run_id}/approvals/refund_1", json=body).status_code == 200
        done = wait_until(
            lambda: (r := client.get(f"/v1/runs/{run_id}").json())["status"] == "completed" and r, "the run to end"
        )
        assert done["output"] == "Done: refunded $9000.00 on A-1."
        [decision] = done["decisions"]
        assert decision["arguments"] == {"order": "A-1", "amount_usd": 9000}
        assert decision["original_arguments"] == {"order": "A-1", "amount_usd": 500.0}
        [decided] = [e for e in journal(client, run_id) if e["type"] == "approval_decided"]
        assert decided["original_arguments"] == {"order": "A-1", "amount_usd": 500.0}
        assert decided["arguments"] == {"order": "A-1", "amount_usd": 9000}

    said = "amount_usd: 500.0 → 9000"
    shown = _cli(served, "runs", "show", run_id)
    assert "refund_1: refund edited by anonymous before it ran" in shown and said in shown
    assert said in _cli(served, "runs", "events", run_id)

    replay = {"threadId": done["thread_id"], "runId": run_id, "messages": []}
    async with httpx.AsyncClient(base_url=served.url, timeout=60) as http:
        streamed = (await http.post("/v1/agents/refunder/ag-ui", json=replay)).text
        assert '"eudaimon.approval_decided"' in streamed and said in streamed
        assert '"original_arguments":{"order":"A-1","amount_usd":500.0}' in streamed

        a2a = await a2a_client(http, served.agent_url("refunder"), streaming=False)
        task = await a2a.get_task(GetTaskRequest(id=run_id))
    [edit] = MessageToDict(task.metadata)["edits"]
    assert edit["by"] == "anonymous" and edit["edit"] == said
    assert edit["original_arguments"] == {"order": "A-1", "amount_usd": 500.0}
    assert edit["arguments"] == {"order": "A-1", "amount_usd": 9000}


def test_an_edit_sent_as_a_string_boolean_or_with_a_denial_is_refused(served: HolesServer) -> None:
    """Invariant: edits go with a real `true`; `"true"` is refused like any non-boolean."""
    with served.client() as client:
        run_id = paused_refund(client, 500)
        count = len(journal(client, run_id))
        for approved in ("true", False):
            body: dict[str, Any] = {"approved": approved, "arguments": {"order": "A-1", "amount_usd": 5}}
            assert client.post(f"/v1/runs/{run_id}/approvals/refund_1", json=body).status_code == 422
        still_waiting(client, run_id, count)
