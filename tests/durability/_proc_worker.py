"""One short-lived process of the racing-resumer and cross-process approval tests.

Usage: python _proc_worker.py STORE_SPEC LEDGER_DIR INCARNATION COMMAND RUN_ID [ARGS…]

Commands (each prints exactly one JSON line last, then exits):
  prompt RUN_ID PLAN POLICY   start the run; PLAN is `kind,kind|kind,…` (one batch per `|`);
                              POLICY is `default` (IRREVERSIBLE waits for a human), `allow`
                              or `ask` (every call waits for a human)
  approve RUN_ID CALL_ID yes|no   decide through `eudaimon.runtime.process.operations.approve`, no Agent
  resume RUN_ID PLAN          print `ready`, wait for a line on stdin (the start gate), resume

The JSON line is the run's state as the process saw it when done (`status`, `final_text`,
`next_seq`, pending approvals, unknown outcomes), or `{"error": kind, "message": …}`.
`EUDAIMON_TEST_TOOL_SLEEP_S` sets how long every tool sleeps after its ledger line;
`EUDAIMON_TEST_STALL` (JSON `{"tool": seconds}`) makes a tool block the whole process that long;
`EUDAIMON_TEST_SIGSTOP` (`hook` or `intent`, see `_stall_points`) makes the process stop itself
before its first WRITE/IRREVERSIBLE call runs, until the parent sends SIGCONT.
`EUDAIMON_TEST_COMMIT_LOG` (a directory) makes the process write, after each append its store
committed, one line with the types of the events committed together (`CommitLog`).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
from pathlib import Path
from typing import Any

from _proc_support import CommitLog, LedgerWriter, Timing, build_tools, open_store, plan_model, stdout_emit
from _stall_points import StopAfterIntent, StopInHook

from eudaimon import Agent, AgentResponse, ToolCall, ToolPolicy
from eudaimon.core.digest import digest
from eudaimon.core.errors import EudaimonError
from eudaimon.core.state import RunState
from eudaimon.runtime.process import operations
from eudaimon.runtime.process.load_state import load_state


def parse_plan(text: str) -> list[list[str]]:
    return [batch.split(",") for batch in text.split("|") if batch]


def ask_always(call: ToolCall, tool: Any) -> ToolPolicy:
    return ToolPolicy.REQUIRE_APPROVAL


def summary(state: RunState, response: AgentResponse | None = None) -> dict[str, Any]:
    """What this process saw: the state it read last, and what its own call returned."""
    report: dict[str, Any] = {
        "status": state.status.value,
        "final_text": state.output,
        "next_seq": state.next_seq,
        "pending_approvals": [c.id for c in state.awaiting_approval()],
        "unknown": [c.id for c in state.unknown_outcomes()],
        "pid": os.getpid(),
    }
    if response is not None:
        report["returned"] = {
            "status": str(response.status),
            "final_text": response.final_text,
            "messages": digest([(m.id, m.role.value, m.content, m.is_error) for m in response.messages]),
            "pending_approvals": [c.id for c in response.pending_approvals],
        }
    return report


def build(spec: str, ledger_dir: str, incarnation: str, plan: list[list[str]], policy: str) -> Agent:
    sleep_s = float(os.environ.get("EUDAIMON_TEST_TOOL_SLEEP_S", "0.01"))
    timing = Timing(before_ledger=(0.0, 0.0), after_ledger=(sleep_s, sleep_s), model=(0.0, 0.002))
    rng = random.Random(incarnation)
    store: Any = open_store(spec)
    stall = json.loads(os.environ.get("EUDAIMON_TEST_STALL", "{}"))
    tools = build_tools(LedgerWriter(Path(ledger_dir), incarnation), rng, timing, stdout_emit, stall=stall)
    approval = {"default": None, "allow": lambda c, t: ToolPolicy.ALLOW, "ask": ask_always}[policy]
    model = plan_model(rng, timing, stdout_emit, plan=lambda run_id: plan)
    stop = os.environ.get("EUDAIMON_TEST_SIGSTOP")
    hooks = [StopInHook()] if stop == "hook" else None
    if stop == "intent":
        store = StopAfterIntent(store)
    commit_log = os.environ.get("EUDAIMON_TEST_COMMIT_LOG")
    if commit_log:
        store = CommitLog(store, Path(commit_log), incarnation)
    return Agent(model, tools=tools, store=store, name="proc-test", approval_policy=approval, hooks=hooks)


async def main() -> dict[str, Any]:
    spec, ledger_dir, incarnation, command, run_id, *args = sys.argv[1:]
    if command == "approve":
        store = open_store(spec)
        try:
            await operations.approve(store, run_id, args[0], args[1] == "yes", by=f"approver-{os.getpid()}")
            return summary(await load_state(store, run_id))
        finally:
            await store.close()
    agent = build(spec, ledger_dir, incarnation, parse_plan(args[0]), args[1] if len(args) > 1 else "default")
    try:
        if command == "prompt":
            response = await agent.prompt(f"test {run_id}", run_id=run_id)
        elif command == "resume":
            await agent.store.list_runs(limit=1)
            stdout_emit("ready")
            sys.stdin.readline()
            response = await agent.resume(run_id)
        else:
            raise SystemExit(f"unknown command {command!r}")
        return summary(await agent.state(response.run_id), response)
    finally:
        await agent.store.close()


if __name__ == "__main__":
    try:
        report = asyncio.run(main())
    except EudaimonError as exc:
        report = {"error": type(exc).__name__, "message": str(exc)}
    stdout_emit(json.dumps(report))
