"""Replaying N recorded runs with a changed agent: wall time, tool executions (0 WRITEs expected).

Records N runs of a support agent (a READ lookup, then a WRITE refund) in a SQLite file, then
replays them twice: with the same agent (every call served from the journal) and with a new
prompt that changes the refund's amount (each replay stops at the WRITE: diverged). The model
is a local function (no network, no price): the figures are eudaimon's own cost.

    python benchmarks/replay_batch.py --runs 200
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.models import ChatRequest, FunctionModel
from eudaimon.stores.sqlite import SqliteStore


def _agent(store: SqliteStore, prompt: str, version: str, executions: dict[str, int]) -> Agent[Any, Any]:
    @tool(effect="read")
    def lookup(order: int) -> str:
        """Look an order up."""
        executions["read"] += 1
        return f"order {order}: paid"

    @tool(effect="write")
    def refund(order: int, amount: int) -> str:
        """Refund an order."""
        executions["write"] += 1
        return f"refunded {amount}"

    def answer(request: ChatRequest) -> Message | str:
        order = int("".join(ch for ch in str(request.messages[1].content) if ch.isdigit()))
        told = [m for m in request.messages if m.role == "tool"]
        if not told:
            return Message.assistant(tool_calls=[ToolCall("l1", "lookup", {"order": order})])
        if len(told) == 1:
            amount = 10 if "generous" in str(request.messages[0].content) else 5
            return Message.assistant(tool_calls=[ToolCall("r1", "refund", {"order": order, "amount": amount})])
        return f"refunded order {order}"

    return Agent(
        FunctionModel(answer),
        system_prompt=prompt,
        tools=[lookup, refund],
        store=store,
        name="support",
        version=version,
        memory=None,
    )


async def main(runs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        store = SqliteStore(Path(folder) / "runs.db")
        try:
            recorded = {"read": 0, "write": 0}
            v1 = _agent(store, "Be fair.", "v1", recorded)
            began = time.perf_counter()
            ids = [(await v1.prompt(f"refund order {n}")).run_id for n in range(1, runs + 1)]
            record_s = time.perf_counter() - began
            results: dict[str, Any] = {"runs": runs, "record_s": round(record_s, 3)}
            for label, prompt, version in (("same_agent", "Be fair.", "v1"), ("new_prompt", "Be generous.", "v2")):
                executions = {"read": 0, "write": 0}
                agent = _agent(store, prompt, version, executions)
                began = time.perf_counter()
                done = [await agent.replay(run_id) for run_id in ids]
                seconds = time.perf_counter() - began
                results[label] = {
                    "seconds": round(seconds, 3),
                    "ms_per_replay": round(seconds * 1000 / runs, 2),
                    "tool_executions": executions,
                    "completed": sum(1 for r in done if r.status == "completed"),
                    "diverged": sum(1 for r in done if r.status == "diverged"),
                    "served": sum(r.served for r in done),
                    "cost_usd": sum(r.cost_usd for r in done),
                    "tokens": sum(r.usage.input_tokens + r.usage.output_tokens for r in done),
                }
            return results
        finally:
            await store.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=200)
    print(json.dumps(asyncio.run(main(parser.parse_args().runs)), indent=2))
