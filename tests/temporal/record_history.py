"""Record the workflow history fixtures the replay test holds today's code against.

    cd tests/temporal && FLEET_GATES=$(mktemp -d) python record_history.py HOST:PORT [NAME…]

runs each path of the loop against a Temporal server at HOST:PORT with an in-process worker
(the default worker: eudaimon passed through the sandbox) and writes its history under
`histories/<RELEASE>/NAME.json`. Histories of earlier releases stay beside them, and keep
replaying: runs in flight when a release is deployed must finish under it.

- `histories/wire_money_approved.json`, `histories/picture_by_reference.json`: the release
  before content parts, snapshots, stash deletion and continue-as-new, and the one after;
- `histories/<RELEASE>/`: one history per path — tools (a READ then a WRITE), parallel
  calls, an approval, a call reconciled after its outcome was lost, a model call retried,
  continue-as-new, a waiting run cancelled (its workflow cancelled: `cancel`; the `cancel` Update
  the CLI and the server send: `cancel_requested`); an approval deadline that fired and a tool's
  `RetryAfter` woken by the workflow's timer (agents of `timed_fleet_agent`), and a sub-second
  one woken by a sleep in the worker (`short_wake`: the `eudaimon.sleep_until` local activity); an approval awaited
  on a fresh execution (both executions: `awaited_fresh`, `awaited_fresh_earlier`), an agent used
  as a tool (`children`, served by `fleet_agent:make_parent`).

Re-record a release's only when a deliberate change makes its histories unreplayable (and
say so: runs in flight when such a change is deployed would fail).
"""

from __future__ import annotations

import asyncio
import importlib
import os
import sys
import tempfile
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

from _fleet import in_process_worker
from temporalio.client import Client

from eudaimon import Agent
from eudaimon.runtime.process import operations
from eudaimon.temporal import TemporalEngine

HISTORIES = Path(__file__).parent / "histories"
RELEASE = "v5"
"""This release's histories: a READ call runs as a local activity (`RunInput.local_reads`).
`v4`: the release before (every tool call an activity; the caller's `settled` Update arrives
with the workflow's start, and a run the engine starts takes every earlier patch without a
marker, `RunInput.patched`); `v3`: the Update on a task of its own, patch markers; `v2`:
every append an activity."""

Path_ = Callable[[Agent, Client], Awaitable[str]]


def _gates() -> Path:
    return Path(os.environ["FLEET_GATES"])


async def _tools(agent: Agent, client: Client) -> str:
    return (await agent.prompt("read then write")).run_id


async def _parallel(agent: Agent, client: Client) -> str:
    return (await agent.prompt("parallel")).run_id


async def _approval(agent: Agent, client: Client) -> str:
    waiting = await agent.prompt("wire money")
    [call] = waiting.pending_approvals
    await agent.approve(waiting.run_id, call.id, True, by="recorder")
    return waiting.run_id


async def _retry(agent: Agent, client: Client) -> str:
    (_gates() / "model-down").touch()  # the first model call fails as an outage; the retry answers
    return (await agent.prompt("read then write")).run_id


async def _reconciliation(agent: Agent, client: Client) -> str:
    gate = _gates() / "gate-write"
    gate.touch()  # the WRITE outlives its activity's timeout: its outcome is unknown
    stuck = await agent.prompt("hold charge")
    gate.unlink()
    [call] = (await agent.state(stuck.run_id)).unknown_outcomes()
    await agent.reconcile(stuck.run_id, call.id, output="charged 9 (seen in the ledger)", by="recorder")
    return stuck.run_id


async def _continue_as_new(agent: Agent, client: Client) -> str:
    return (await agent.prompt("many lookups")).run_id


async def _awaited_fresh(agent: Agent, client: Client) -> str:
    return await _approval(agent, client)  # the run waits for the human on a fresh execution


async def _children(agent: Agent, client: Client) -> str:
    return (await agent.prompt("research gold")).run_id  # its one tool is an agent (`as_tool`)


async def _cancel(agent: Agent, client: Client) -> str:
    waiting = await agent.prompt("wire money")
    await client.get_workflow_handle(waiting.run_id).cancel()
    return waiting.run_id


async def _cancel_requested(agent: Agent, client: Client) -> str:
    waiting = await agent.prompt("wire money")
    await operations.cancel(agent.store, waiting.run_id, reason="not today", by="ops")  # the `cancel` Update
    return waiting.run_id


async def _deadline(agent: Agent, client: Client) -> str:
    return (await agent.prompt("pay ACME")).run_id  # nobody decides: the deadline denies the call


async def _wake(agent: Agent, client: Client) -> str:
    return (await agent.prompt("fetch the q3 report")).run_id  # RetryAfter(2), then the timer wakes it


async def _short_wake(agent: Agent, client: Client) -> str:
    os.environ["TIMED_WAIT_S"] = "0.3"  # the in-process worker's tool reads it: a wait that sleeps in the worker
    try:
        return (await agent.prompt("fetch the q3 report")).run_id
    finally:
        del os.environ["TIMED_WAIT_S"]


PATHS: dict[str, tuple[Path_, dict[str, float]]] = {
    "tools": (_tools, {}),
    "parallel": (_parallel, {}),
    "approval": (_approval, {}),
    "retry": (_retry, {}),
    "reconciliation": (_reconciliation, {"tool_timeout_s": 1.0, "heartbeat_timeout_s": 1.0}),
    "continue_as_new": (_continue_as_new, {"continue_after_events": 30}),
    "cancel": (_cancel, {}),
    "cancel_requested": (_cancel_requested, {}),
    "deadline": (_deadline, {}),
    "wake": (_wake, {}),
    "short_wake": (_short_wake, {}),
    "awaited_fresh": (_awaited_fresh, {}),
    "children": (_children, {}),
}
SPECS = {
    "children": "fleet_agent:make_parent",
    "deadline": "timed_fleet_agent:make_slowpay",
    "wake": "timed_fleet_agent:make_napper",
    "short_wake": "timed_fleet_agent:make_napper",
}
"""The agent module a path's worker serves, when it is not `fleet_agent:make`."""


async def record(target: str, name: str) -> None:
    client = await Client.connect(target)
    queue = f"record-{uuid.uuid4().hex[:8]}"
    run, options = PATHS[name]
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/journal.db"
        spec = SPECS.get(name, "fleet_agent:make")
        module, _, attr = spec.partition(":")
        async with in_process_worker(client, queue, url, spec=spec):
            engine = TemporalEngine(target, task_queue=queue, **options)  # type: ignore[arg-type]
            agent: Agent = getattr(importlib.import_module(module), attr)(store=url, engine=engine)
            run_id = await run(agent, client)
            handle = client.get_workflow_handle(run_id)
            await handle.result()
            history = await handle.fetch_history()
            _write(name, history.to_json())
            started = history.events[0].workflow_execution_started_event_attributes
            if started.continued_execution_run_id:  # the execution that continued as new, too
                earlier = client.get_workflow_handle(run_id, run_id=started.continued_execution_run_id)
                _write(f"{name}_earlier", (await earlier.fetch_history()).to_json())
            await agent.aclose()


def _write(name: str, text: str) -> None:
    out = HISTORIES / RELEASE / f"{name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)


if __name__ == "__main__":
    target, names = sys.argv[1], sys.argv[2:] or list(PATHS)
    os.environ.setdefault("FLEET_GATES", tempfile.mkdtemp())
    for each in names:
        asyncio.run(record(target, each))
        print("recorded", each)
