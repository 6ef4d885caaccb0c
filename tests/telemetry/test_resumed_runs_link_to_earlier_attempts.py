"""A resumed run's attempt links to the spans of its earlier attempts; a call re-run after a
crash is a new span; an effect recorded before is read back and never reported again."""

from __future__ import annotations

import asyncio
from pathlib import Path

from _spans import Spans

from eudaimon import Agent, tool
from eudaimon.core.messages import Message, ToolCall
from eudaimon.models import ScriptedModel


def _context(span: object) -> tuple[int, int]:
    ctx = span.context  # type: ignore[attr-defined]
    return ctx.trace_id, ctx.span_id


async def test_resume_after_approval_links_and_reports_only_new_executions(spans: Spans) -> None:
    """Invariant: the resumed attempt's span links to the first one; the READ that ran before
    the pause has one execution span in all, the approved call gets its own in the resumed attempt."""
    ran: list[str] = []

    @tool(effect="read")
    def look() -> str:
        """Look."""
        ran.append("look")
        return "seen"

    @tool(effect="irreversible")
    def pay() -> str:
        """Pay."""
        ran.append("pay")
        return "paid"

    model = ScriptedModel(
        [Message.assistant(None, [ToolCall("c1", "look", {}), ToolCall("c2", "pay", {})]), "all done"]
    )
    agent = Agent(model, name="payer", tools=[look, pay])
    paused = await agent.prompt("go")
    assert paused.status == "awaiting_approval"
    await agent.approve(paused.run_id, "c2")
    done = await agent.resume(paused.run_id)
    assert done.status == "completed" and ran == ["look", "pay"]

    first, second = spans.named("invoke_agent")
    assert [_context(link) for link in second.links] == [_context(first)]
    assert second.attributes is not None and second.attributes["eudaimon.resumed"] is True
    executions = spans.named("execute_tool")
    assert [(s.name, s.parent.span_id) for s in executions] == [  # type: ignore[union-attr]
        ("execute_tool look", first.context.span_id),
        ("execute_tool pay", second.context.span_id),
    ]


async def test_a_rerun_after_a_crash_is_a_new_span(spans: Spans, tmp_path: Path) -> None:
    """Invariant: a READ interrupted mid-call (its process gone) re-runs on resume as a new
    `execute_tool` span, in an attempt linked to the crashed one. A step of READ calls commits
    once, after them, so the crash lost the step: the model is asked again and the call runs
    again as its first attempt, under the same idempotency key."""
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    started = asyncio.Event()

    @tool(effect="read", name="slow")
    async def hangs() -> str:
        """Hangs the first time."""
        started.set()
        await asyncio.Event().wait()
        return "never"

    @tool(effect="read", name="slow")
    def answers() -> str:
        """Answers."""
        return "fast now"

    script = [Message.assistant(None, [ToolCall("c1", "slow", {})]), "done"]
    async with Agent(ScriptedModel(script), tools=[hangs], store=store, name="a") as crashing:
        task = asyncio.ensure_future(crashing.prompt("go", run_id="run_crash"))
        await started.wait()
        task.cancel()  # the process dies with the call in flight: no completion is journaled
        await asyncio.gather(task, return_exceptions=True)
    async with Agent(ScriptedModel(script), tools=[answers], store=store, name="a") as later:
        await later.state("run_crash")
        resumed = await later.resume("run_crash")
    assert resumed.status == "completed"
    runs = spans.named("invoke_agent")
    assert _context(runs[0]) in [_context(link) for link in runs[-1].links]
    attempts = [s.attributes["eudaimon.tool.attempt"] for s in spans.named("execute_tool slow") if s.attributes]
    assert attempts == [1, 1]
