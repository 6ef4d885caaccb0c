"""The error a failed run raises: built from what its journal recorded (the limit, the
guardrail, the failure kind), never from today's configuration, and, in the process where
user code raised, chained to that exception and logged once with its traceback."""

from __future__ import annotations

import logging

import pytest

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.core.codec import event_from_dict
from eudaimon.core.events import FailureKind, RunFailed
from eudaimon.core.state import RunState, Status
from eudaimon.errors import MaxIterations, ModelRequestRejected, RunFailedError
from eudaimon.guardrails import OutputGuardrail
from eudaimon.hooks import AgentHook, LoopState
from eudaimon.middleware import Middleware
from eudaimon.models import ChatRequest, ChatResponse, FunctionModel, ScriptedModel
from eudaimon.runtime.process.runs import error_for
from eudaimon.stores import MemoryStore


class BadHook(AgentHook):
    def on_iteration_start(self, state: LoopState) -> None:
        raise ValueError("the hook broke")


class BadMiddleware(Middleware):
    def on_request(self, request: ChatRequest) -> None:
        raise KeyError("the middleware broke")


class BadGuardrail(OutputGuardrail):
    def check(self, text: str) -> None:
        raise RuntimeError("the guardrail broke")


@pytest.mark.parametrize(
    ("options", "raised"),
    [
        ({"hooks": [BadHook()]}, ValueError),
        ({"middleware": [BadMiddleware()]}, KeyError),
        ({"output_guardrails": [BadGuardrail()]}, RuntimeError),
    ],
    ids=["hook", "middleware", "guardrail"],
)
async def test_user_code_that_raised_is_the_cause_and_is_logged_once(
    options: dict[str, object], raised: type[Exception], caplog: pytest.LogCaptureFixture
) -> None:
    """Bug: when a hook, middleware or guardrail raised, the run's error lost the original
    exception. Now it is the error's `__cause__`, logged once with its traceback, and the
    journal's `run_failed` records its type with kind EXCEPTION."""
    agent = Agent(ScriptedModel(["answer"]), **options)  # type: ignore[arg-type]
    with caplog.at_level(logging.ERROR, logger="eudaimon"), pytest.raises(RunFailedError) as info:
        await agent.prompt("hi")
    assert isinstance(info.value.__cause__, raised)
    logged = [r for r in caplog.records if r.exc_info is not None]
    assert len(logged) == 1 and logged[0].exc_info is not None and logged[0].exc_info[1] is info.value.__cause__
    (failed,) = [e.data for e in await agent.store.load(info.value.run_id or "") if isinstance(e.data, RunFailed)]
    assert (failed.kind, failed.exception) == (FailureKind.EXCEPTION, raised.__name__)


@tool(effect="read")
def again() -> str:
    """Ask again."""
    return "more"


async def test_max_iterations_says_the_limit_the_run_had_not_todays() -> None:
    """Bug: a run that failed at max_iterations=1, read by an agent configured with 7, raised
    `MaxIterations` saying 7. The limit is journaled in `run_failed`; every reader says 1."""
    store = MemoryStore()
    calls = [Message.assistant(tool_calls=[ToolCall(f"c{i}", "again", {})]) for i in range(3)]
    strict = Agent(ScriptedModel(calls), tools=[again], max_iterations=1, store=store)
    with pytest.raises(MaxIterations) as info:
        await strict.prompt("loop")
    run_id = info.value.run_id or ""
    (failed,) = [e.data for e in await store.load(run_id) if isinstance(e.data, RunFailed)]
    assert (failed.kind, failed.limit) == (FailureKind.MAX_ITERATIONS, 1)
    lenient = Agent(ScriptedModel([]), tools=[again], max_iterations=7, store=store)
    with pytest.raises(MaxIterations) as reread:
        await lenient.resume(run_id)
    assert reread.value.limit == 1 and "max_iterations=1" in str(reread.value)


def test_older_journals_free_string_kinds_read_as_enum_members() -> None:
    """Invariant: `run_failed.kind` is a `FailureKind`; the free strings older journals wrote
    (an error class name, or nothing) still read back, and an old MaxIterations failure without
    a recorded limit still raises with the limit its text gave."""

    def kind_of(kind: str | None) -> FailureKind:
        row = {"v": 1, "run_id": "r", "seq": 1, "at": "2025-01-01T00:00:00+00:00", "type": "run_failed", "error": "x"}
        data = event_from_dict(row if kind is None else {**row, "kind": kind}).data
        assert isinstance(data, RunFailed)
        return data.kind

    assert kind_of("MaxIterations") is FailureKind.MAX_ITERATIONS
    assert kind_of("GuardrailBlocked") is FailureKind.GUARDRAIL_BLOCKED
    assert kind_of("ModelUnavailable") is FailureKind.MODEL_ERROR
    assert kind_of("ValueError") is FailureKind.EXCEPTION
    assert kind_of("") is FailureKind.EXCEPTION and kind_of(None) is FailureKind.EXCEPTION
    old = RunState(run_id="r", status=Status.FAILED, error="max_iterations=3 reached without a final answer")
    old.error_kind = FailureKind.MAX_ITERATIONS
    error = error_for(old)
    assert isinstance(error, MaxIterations) and error.limit == 3


async def test_a_model_failure_is_journaled_as_a_model_error() -> None:
    """Invariant: a model that fails for good ends the run with kind MODEL_ERROR, its type kept."""

    def reject(request: ChatRequest) -> ChatResponse:
        raise ModelRequestRejected("401: bad key")

    agent = Agent(FunctionModel(reject))
    with pytest.raises(RunFailedError) as info:
        await agent.prompt("hi")
    assert isinstance(info.value.__cause__, ModelRequestRejected)
    (failed,) = [e.data for e in await agent.store.load(info.value.run_id or "") if isinstance(e.data, RunFailed)]
    assert (failed.kind, failed.exception) == (FailureKind.MODEL_ERROR, "ModelRequestRejected")
