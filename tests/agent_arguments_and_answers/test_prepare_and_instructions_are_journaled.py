"""`@tool(prepare=…)` decides per step which tools are offered (and how); a `system_prompt`
function is rendered per run. Both are journaled, so a resumed run and time travel show what
the model was actually sent."""

from __future__ import annotations

from dataclasses import replace

from eudaimon import Agent, Message, ToolCall, ToolContext, ToolSpec, tool
from eudaimon.core.events import ModelAttemptStarted, RunStarted
from eudaimon.models import ScriptedModel


def _offer_after_first_step(ctx: ToolContext, spec: ToolSpec) -> ToolSpec | None:
    if ctx.step < 2:
        return None
    return replace(spec, description=f"{spec.description} (step {ctx.step})")


@tool(effect="read", prepare=_offer_after_first_step)
def secret() -> str:
    """Reveal the secret."""
    return "42"


@tool(effect="read")
def hint() -> str:
    """A hint."""
    return "ask for the secret"


async def test_prepare_decides_each_step_and_the_journal_records_it() -> None:
    """Invariant: step 1 offers only `hint`; step 2 offers `secret` with its prepared
    description; each change of the offer is in that step's `model_attempt_started`; the
    folded state after any event names what was offered then."""
    model = ScriptedModel(
        [
            Message.assistant(tool_calls=[ToolCall("c1", "hint", {})]),
            Message.assistant(tool_calls=[ToolCall("c2", "secret", {})]),
            "the secret is 42",
        ]
    )
    agent = Agent(model, tools=[secret, hint])
    response = await agent.prompt("what is the secret?")
    assert response.output == "the secret is 42"

    offered = [[(t.name, t.description) for t in r.tools] for r in model.requests]
    assert offered == [
        [("hint", "A hint.")],
        [("secret", "Reveal the secret. (step 2)"), ("hint", "A hint.")],
        [("secret", "Reveal the secret. (step 3)"), ("hint", "A hint.")],
    ]
    events = await agent.store.load(response.run_id)
    attempts = [(e.seq, e.data) for e in events if isinstance(e.data, ModelAttemptStarted)]
    assert [a.tools is not None for _, a in attempts] == [True, True, True], "each step's offer differed"
    assert len({a.tools_digest for _, a in attempts}) == 3
    for seq, data in attempts:
        state = await agent.state(response.run_id, at_seq=seq)
        assert state.offered_tools == data.tools


async def test_an_unchanged_offer_is_journaled_by_digest_only() -> None:
    """Invariant: when a step offers what the previous one did, its attempt carries the digest
    alone, not the specs again."""

    def always(ctx: ToolContext, spec: ToolSpec) -> ToolSpec:
        return spec

    @tool(effect="read", prepare=always)
    def ping() -> str:
        """Ping."""
        return "pong"

    agent = Agent(ScriptedModel([Message.assistant(tool_calls=[ToolCall("c1", "ping", {})]), "done"]), tools=[ping])
    response = await agent.prompt("ping")
    attempts = [e.data for e in await agent.store.load(response.run_id) if isinstance(e.data, ModelAttemptStarted)]
    assert attempts[0].tools is not None and attempts[1].tools is None
    assert attempts[0].tools_digest == attempts[1].tools_digest != ""


async def test_a_call_to_a_tool_not_offered_gets_an_error_result() -> None:
    """Bug guard: a model that calls a tool `prepare` withheld this step is told it is not
    available; the tool does not run."""
    ran: list[str] = []

    def never(ctx: ToolContext, spec: ToolSpec) -> None:
        return None

    @tool(effect="read", prepare=never)
    def hidden() -> str:
        """Hidden."""
        ran.append("hidden")
        return "x"

    agent = Agent(ScriptedModel([Message.assistant(tool_calls=[ToolCall("c1", "hidden", {})]), "ok"]), tools=[hidden])
    response = await agent.prompt("go")
    result = response.messages[-2]
    assert result.is_error and "not available at this step" in result.content
    assert ran == []


async def test_async_prepare_with_deps() -> None:
    """`prepare` may be async and read the run's deps."""

    async def only_for_admins(ctx: ToolContext[dict[str, bool]], spec: ToolSpec) -> ToolSpec | None:
        return spec if ctx.deps["admin"] else None

    @tool(prepare=only_for_admins)
    def drop_table() -> str:
        """Drop the table."""
        return "dropped"

    model = ScriptedModel(["no", "yes"])
    agent = Agent(model, tools=[drop_table])
    await agent.prompt("a", deps={"admin": False})
    await agent.prompt("b", deps={"admin": True})
    assert [[t.name for t in r.tools] for r in model.requests] == [[], ["drop_table"]]


async def test_system_prompt_function_is_rendered_per_run_and_journaled() -> None:
    """Invariant: a `system_prompt` function (sync or async, with the context) is rendered when
    each run starts; the text is the first message of `run_started`; `output_type`'s
    instruction follows it."""
    calls: list[str] = []

    async def instructions(ctx: ToolContext[str]) -> str:
        calls.append(ctx.run_id)
        return f"You serve {ctx.deps}."

    model = ScriptedModel(['{"n": 1}', '{"n": 2}'])
    agent = Agent(model, system_prompt=instructions, output_type=dict[str, int], memory=None)
    one = await agent.prompt("hi", deps="alice", thread_id="a")
    two = await agent.prompt("hi", deps="bob", thread_id="b")
    assert calls == [one.run_id, two.run_id]
    for response, who in ((one, "alice"), (two, "bob")):
        started = (await agent.store.load(response.run_id))[0].data
        assert isinstance(started, RunStarted)
        system = started.messages[0].content
        assert system.startswith(f"You serve {who}.\n\n") and "JSON Schema" in system
    assert model.requests[1].messages[0].content.startswith("You serve bob.")
