"""`deps` reach tools, instructions, guardrails, hooks and validators; they are never journaled,
and a run that needs them cannot be resumed without them."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

import pytest

from eudaimon import Agent, AgentHook, Message, ToolCall, ToolContext, tool
from eudaimon.errors import ConfigurationError
from eudaimon.extensions.guardrails import Pass
from eudaimon.models import ScriptedModel
from eudaimon.stores import SqliteStore

SECRET = "db-handle-5f3a9c"


@dataclass
class Deps:
    db: str
    seen: list[str]


def _call(name: str, call_id: str = "c1", **arguments: object) -> Message:
    return Message.assistant(tool_calls=[ToolCall(call_id, name, dict(arguments))])


async def _raw_rows(path: Path) -> str:
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT payload FROM events").fetchall()
        texts = conn.execute("SELECT body FROM texts").fetchall() + conn.execute("SELECT body FROM messages").fetchall()
    return "\n".join(r[0] for r in rows + texts)


async def test_deps_reach_every_kind_of_user_code_and_no_event(tmp_path: Path) -> None:
    """Invariant: tools, the system prompt function, input and output guardrails, hooks and
    output validators all get `ctx.deps`; the deps' content is in no journal row."""

    @tool(effect="read")
    def lookup(ctx: ToolContext[Deps], key: str) -> str:
        """Look a key up."""
        ctx.deps.seen.append(f"tool:{ctx.step}")
        return f"{key}@{ctx.deps.db}"

    def instructions(ctx: ToolContext[Deps]) -> str:
        ctx.deps.seen.append("instructions")
        return "You help."

    class InputCheck:
        def check(self, text: str, ctx: ToolContext[Deps]) -> Pass:
            ctx.deps.seen.append("input")
            return Pass()

    class OutputCheck:
        async def check(self, ctx: ToolContext[Deps], text: str) -> Pass:
            ctx.deps.seen.append("output")
            return Pass()

    class Hook(AgentHook):
        def on_tool_call(self, call: ToolCall, ctx: ToolContext[Deps]) -> None:
            ctx.deps.seen.append(f"hook:{call.name}")

    def validator(ctx: ToolContext[Deps], text: str) -> str:
        ctx.deps.seen.append("validator")
        return text

    path = tmp_path / "runs.db"
    store = SqliteStore(path)
    agent = Agent(
        ScriptedModel([_call("lookup", key="k"), "done"]),
        tools=[lookup],
        system_prompt=instructions,
        input_guardrails=[InputCheck()],
        output_guardrails=[OutputCheck()],
        hooks=Hook(),
        output_validators=[validator],
        deps_type=Deps,
        store=store,
    )
    assert "ctx" not in lookup.parameters["properties"]
    deps = Deps(SECRET, [])
    response = await agent.prompt("go", deps=deps)

    assert response.output == "done"
    assert deps.seen == ["input", "instructions", "hook:lookup", "tool:1", "output", "validator"]
    assert f"k@{SECRET}" in [m.content for m in response.messages]  # the tool's result, which is journaled
    rows = await _raw_rows(path)
    assert "Deps(" not in rows and "seen" not in rows
    assert rows.count(SECRET) == 1, "only the tool's own output, which the model saw, mentions the deps"
    await store.close()


async def test_prompt_without_required_deps_fails_before_anything_is_journaled() -> None:
    """Invariant: an agent with `deps_type` refuses a prompt without deps (or with the wrong
    type), saying how to fix it, and journals nothing."""
    agent = Agent(ScriptedModel(["never"]), deps_type=Deps)
    with pytest.raises(ConfigurationError, match="deps_type=Deps: pass deps="):
        await agent.prompt("hi")
    with pytest.raises(ConfigurationError, match="deps is a str"):
        await agent.prompt("hi", deps="nope")  # type: ignore[arg-type]
    assert await agent.store.list_runs() == []


async def test_resume_takes_deps_again_and_refuses_to_run_without_them(tmp_path: Path) -> None:
    """Invariant: a run paused for approval resumes with new deps (its tool sees the new ones);
    resuming without deps is a clear error that appends nothing."""

    @tool(effect="irreversible")
    def pay(ctx: ToolContext[Deps], amount: int) -> str:
        """Pay."""
        ctx.deps.seen.append(f"pay {amount}")
        return f"paid via {ctx.deps.db}"

    store = SqliteStore(tmp_path / "runs.db")
    agent = Agent(ScriptedModel([_call("pay", amount=5), "paid"]), tools=[pay], deps_type=Deps, store=store)
    first = Deps("first-process", [])
    paused = await agent.prompt("pay", deps=first)
    assert paused.status == "awaiting_approval"
    await agent.approve(paused.run_id, "c1")
    before = len(await store.load(paused.run_id))

    with pytest.raises(ConfigurationError, match=r"resume\('.*', deps=\.\.\.\)"):
        await agent.resume(paused.run_id)
    assert len(await store.load(paused.run_id)) == before, "nothing ran, nothing was appended"

    second = Deps("second-process", [])
    done = await agent.resume(paused.run_id, deps=second)
    assert done.status == "completed"
    assert first.seen == [] and second.seen == ["pay 5"]
    assert "paid via second-process" in [m.content for m in done.messages]
    await store.close()


async def test_unparameterised_tool_context_still_works() -> None:
    """Bug guard: `ToolContext` without a type parameter (the pre-generic spelling) is still
    found by its annotation, kept out of the schema, and given the deps."""

    @tool(effect="read")
    def whoami(ctx: ToolContext) -> str:
        """Who runs this."""
        return f"{ctx.run_id}:{ctx.call_id}:{ctx.deps}"

    assert whoami.parameters["properties"] == {}
    agent = Agent(ScriptedModel([_call("whoami"), "ok"]), tools=[whoami])
    response = await agent.prompt("who?", deps="anything")
    assert response.messages[-2].content == f"{response.run_id}:c1:anything"


async def test_context_is_found_when_other_hints_do_not_resolve() -> None:
    """Bug guard: a hook whose other annotations name a class local to a function (which
    `get_type_hints` cannot resolve under `from __future__ import annotations`) still gets
    its context."""

    class Local:
        pass

    seen: list[object] = []

    class Hook(AgentHook):
        def on_model_response(self, response: Local, ctx: ToolContext[Deps]) -> None:
            seen.append(ctx.deps)

    deps = Deps("x", [])
    await Agent(ScriptedModel(["ok"]), hooks=Hook()).prompt("hi", deps=deps)
    assert seen == [deps]


async def test_resume_stream_takes_deps_as_resume_does(tmp_path: Path) -> None:
    """Invariant: `resume_stream` takes the run's deps (its tool sees them) and, like `resume`,
    refuses to go on without them, appending nothing. Before, it took no `deps` at all: the
    tool of a streamed resume saw `ctx.deps` None."""

    @tool(effect="irreversible")
    def pay(ctx: ToolContext[Deps], amount: int) -> str:
        """Pay."""
        ctx.deps.seen.append(f"pay {amount}")
        return f"paid via {ctx.deps.db}"

    store = SqliteStore(tmp_path / "runs.db")
    agent = Agent(ScriptedModel([_call("pay", amount=5), "paid"]), tools=[pay], deps_type=Deps, store=store)
    paused = await agent.prompt("pay", deps=Deps("first-process", []))
    await agent.approve(paused.run_id, "c1")
    before = len(await store.load(paused.run_id))

    with pytest.raises(ConfigurationError, match=r"resume\('.*', deps=\.\.\.\)"):
        async for _ in agent.resume_stream(paused.run_id):
            pass
    assert len(await store.load(paused.run_id)) == before, "nothing ran, nothing was appended"

    second = Deps("second-process", [])
    events = [event async for event in agent.resume_stream(paused.run_id, deps=second)]
    assert second.seen == ["pay 5"]
    assert type(events[-1]).__name__ == "Done"
    assert (await agent.state(paused.run_id)).status == "completed"
    await store.close()
