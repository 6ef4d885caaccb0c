"""Tool retries inside the one loop: every attempt journaled as an intent with the same idempotency
key, and only tools that may safely run twice are ever retried."""

from __future__ import annotations

import warnings

import pytest
from _in_loop_support import answer, call, payloads

from eudaimon import Agent, ToolContext, ToolPolicy, tool
from eudaimon.errors import ToolRetryIgnored
from eudaimon.models import ScriptedModel
from eudaimon.retry import ToolRetryPolicy

TINY = 0.001


def flaky_tool(
    name: str, *, failures: int, error: type[Exception] = ConnectionError, **options: object
) -> tuple[object, list[ToolContext]]:
    """A tool that raises `error` on its first `failures` attempts, recording each attempt's context."""
    seen: list[ToolContext] = []

    def body(ctx: ToolContext) -> str:
        seen.append(ctx)
        if len(seen) <= failures:
            raise error(f"transient failure #{len(seen)}")
        return f"ok on attempt {ctx.attempt}"

    body.__doc__ = "A flaky tool."
    return tool(name=name, **options)(body), seen  # type: ignore[call-overload]


async def _run(tools: list[object], policy: ToolRetryPolicy, name: str) -> tuple[Agent, str]:
    agent = Agent(ScriptedModel([call(name), answer("done")]), tools=tools, tool_retry_policy=policy)  # type: ignore[arg-type]
    response = await agent.prompt("go")
    return agent, response.run_id


async def test_exponential_retry_journals_each_attempt_with_the_same_key() -> None:
    """Invariant: a flaky READ tool that succeeds on attempt 3 leaves tool_started attempts 1, 2, 3 with
    one idempotency key (the one the tool saw), then exactly one tool_completed."""
    flaky, seen = flaky_tool("fetch", failures=2, effect="read")
    agent, run_id = await _run([flaky], ToolRetryPolicy.exponential(3, initial_delay=TINY, max_delay=TINY), "fetch")
    started = await payloads(agent, run_id, "tool_started")
    assert [s.attempt for s in started] == [1, 2, 3]
    assert len({s.idempotency_key for s in started}) == 1
    assert [c.attempt for c in seen] == [1, 2, 3]
    assert {c.idempotency_key for c in seen} == {started[0].idempotency_key}
    (completed,) = await payloads(agent, run_id, "tool_completed")
    assert (completed.output, completed.is_error) == ("ok on attempt 3", False)


async def test_fixed_retry_gives_up_after_max_attempts_with_the_last_error() -> None:
    """Invariant: ToolRetryPolicy.fixed tries max_attempts times in all; the last error is the model's result."""
    flaky, seen = flaky_tool("fetch", failures=5, effect="read")
    agent, run_id = await _run([flaky], ToolRetryPolicy.fixed(2, TINY), "fetch")
    assert len(seen) == 2
    assert [s.attempt for s in await payloads(agent, run_id, "tool_started")] == [1, 2]
    (completed,) = await payloads(agent, run_id, "tool_completed")
    assert completed.is_error and "transient failure #2" in completed.output


async def test_retry_on_filter_does_not_retry_other_errors() -> None:
    """Invariant: an error outside retry_on is final at once: one attempt, an error result."""
    flaky, seen = flaky_tool("fetch", failures=1, error=KeyError, effect="read")
    agent, run_id = await _run(
        [flaky], ToolRetryPolicy.exponential(5, TINY, TINY, retry_on=(ConnectionError,)), "fetch"
    )
    assert len(seen) == 1
    assert len(await payloads(agent, run_id, "tool_started")) == 1
    (completed,) = await payloads(agent, run_id, "tool_completed")
    assert completed.is_error and "KeyError" in completed.output


async def test_per_tool_override_wins_over_the_default_policy() -> None:
    """Invariant: for_tool(name, policy) applies to that tool only; others keep the default."""
    fetch, fetch_seen = flaky_tool("fetch", failures=2, effect="read")
    probe, probe_seen = flaky_tool("probe", failures=2, effect="read")
    policy = ToolRetryPolicy.fixed(3, TINY).for_tool("probe", ToolRetryPolicy.never())
    await _run([fetch, probe], policy, "fetch")
    await _run([fetch, probe], policy, "probe")
    assert len(fetch_seen) == 3 and len(probe_seen) == 1


async def test_write_and_irreversible_tools_are_never_retried() -> None:
    """Invariant (safety): a plain WRITE or IRREVERSIBLE tool that raised may have half-acted, so the
    retry policy does not run it again; a WRITE declared idempotent is retried like a READ."""
    policy = ToolRetryPolicy.fixed(3, TINY)
    write, write_seen = flaky_tool("save", failures=2, effect="write")
    with pytest.warns(ToolRetryIgnored):
        agent, run_id = await _run([write], policy, "save")
    assert len(write_seen) == 1
    assert [s.attempt for s in await payloads(agent, run_id, "tool_started")] == [1]
    (completed,) = await payloads(agent, run_id, "tool_completed")
    assert completed.is_error and "transient failure #1" in completed.output

    pay, pay_seen = flaky_tool("pay", failures=2, effect="irreversible")
    with pytest.warns(ToolRetryIgnored):
        agent = Agent(
            ScriptedModel([call("pay"), answer("done")]),
            tools=[pay],  # type: ignore[list-item]
            tool_retry_policy=policy,
            approval_policy=lambda call, tool: ToolPolicy.ALLOW,
        )
    response = await agent.prompt("go")
    assert len(pay_seen) == 1
    assert len(await payloads(agent, response.run_id, "tool_started")) == 1

    upsert, upsert_seen = flaky_tool("upsert", failures=2, effect="write", idempotent=True)
    agent, run_id = await _run([upsert], policy, "upsert")
    assert len(upsert_seen) == 3
    assert [s.attempt for s in await payloads(agent, run_id, "tool_started")] == [1, 2, 3]


async def test_bad_arguments_are_not_retried() -> None:
    """Invariant: arguments that cannot be bound will not get better by waiting: the call is answered
    with an error before any intent is written, so nothing runs and nothing is retried."""
    attempts: list[int] = []

    @tool(effect="read")
    def strict(n: int) -> int:
        """Needs a positive n."""
        attempts.append(n)
        return n

    agent = Agent(
        ScriptedModel([call("strict", {"n": "not a number"}), answer("done")]),
        tools=[strict],
        tool_retry_policy=ToolRetryPolicy.fixed(3, TINY),
        validate_tool_inputs=False,  # even lax binding cannot make an int of this
    )
    response = await agent.prompt("go")
    assert attempts == []
    assert await payloads(agent, response.run_id, "tool_started") == []
    (completed,) = await payloads(agent, response.run_id, "tool_completed")
    assert completed.is_error


def test_a_policy_that_skips_tools_names_them_when_the_agent_is_built() -> None:
    """Bug: tool_retry_policy was silently ignored for WRITE tools (the default `@tool`). Building
    the agent warns, naming exactly the tools the policy will not re-run and how to opt in."""
    save, _ = flaky_tool("save", failures=0)
    pay, _ = flaky_tool("pay", failures=0, effect="irreversible")
    fetch, _ = flaky_tool("fetch", failures=0, effect="read")
    upsert, _ = flaky_tool("upsert", failures=0, idempotent=True)
    with pytest.warns(ToolRetryIgnored) as caught:
        Agent(ScriptedModel([]), tools=[save, pay, fetch, upsert], tool_retry_policy=ToolRetryPolicy.fixed(3, TINY))  # type: ignore[list-item]
    (warning,) = caught
    message = str(warning.message)
    assert "'pay', 'save'" in message and "fetch" not in message and "upsert" not in message
    assert "retryable=True" in message
    assert warning.filename == __file__, "the warning points at the user's Agent(...) line"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Agent(ScriptedModel([]), tools=[fetch, upsert], tool_retry_policy=ToolRetryPolicy.fixed(3, TINY))  # type: ignore[list-item]
        never = ToolRetryPolicy.fixed(3, TINY).for_tool("save", ToolRetryPolicy.never())
        Agent(ScriptedModel([]), tools=[save, fetch], tool_retry_policy=never)  # type: ignore[list-item]


async def test_a_write_tool_that_opts_in_is_retried_with_its_intents_journaled() -> None:
    """Invariant: `@tool(retryable=True)` lets the retry policy re-run a WRITE tool (its author
    says a call that raised did nothing), each attempt journaled as an intent with one key;
    no warning is given for it, and crash recovery still treats it as a plain WRITE."""
    save, seen = flaky_tool("save", failures=2, retryable=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        agent, run_id = await _run([save], ToolRetryPolicy.fixed(3, TINY), "save")
    assert len(seen) == 3
    started = await payloads(agent, run_id, "tool_started")
    assert [s.attempt for s in started] == [1, 2, 3] and len({s.idempotency_key for s in started}) == 1
    (completed,) = await payloads(agent, run_id, "tool_completed")
    assert (completed.output, completed.is_error) == ("ok on attempt 3", False)
    assert not agent.tools["save"].traits.rerunnable, "recovery after a crash still follows the effect"
