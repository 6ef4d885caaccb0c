"""`Agent.replay`: a recorded run's input, run again by this agent, its tools never trusted.

The replay is a run of its own in the agent's store (`run_started.replay_of`), driven here in
this process whatever engine the agent names: it sends no effect anywhere, so there is nothing
to make durable elsewhere. See `eudaimon.runtime.process.replay` for the rules a call follows.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from eudaimon.agent.agent_runtime import AgentRuntime
from eudaimon.core.errors import InvalidOperation
from eudaimon.core.events import RunCancelled
from eudaimon.core.messages import Message, Role
from eudaimon.core.state import RunState, Status
from eudaimon.extensions.middleware import MiddlewareStack
from eudaimon.runtime.loop.clock import new_run_id
from eudaimon.runtime.process.load_state import load_state
from eudaimon.runtime.process.replay import Recorded, Replay, replay_of, replay_policy
from eudaimon.runtime.process.runs import RunDriver

Evaluator = Callable[[RunState, Replay], Any]
"""`fn(original, replay) -> bool | float | str` (or awaitable): one score of a replay."""


async def replay_run(
    runtime: AgentRuntime,
    run_id: str,
    *,
    live_reads: bool = False,
    evaluators: Sequence[Evaluator] = (),
    deps: Any = None,
) -> Replay:
    """Replay run `run_id` with `runtime`'s agent; see `Agent.replay`."""
    driver = runtime
    original = await load_state(driver.store, run_id)
    if not original.started:
        raise InvalidOperation(f"run {run_id} never started (it is queued): there is nothing to replay")
    base = driver.config
    recorded = Recorded(original, dict(base.tools), live_reads=live_reads)
    layers = base.middleware.layers if base.middleware is not None else ()
    cfg = replace(base, middleware=MiddlewareStack([*layers, recorded]), approval_policy=replay_policy(live_reads))
    replayer = RunDriver(cfg, driver.store, None, driver.output, driver.config_digest, driver.snapshot_every)
    replayer.identity, replayer.replay_of = driver.identity, original.run_id
    new_id = new_run_id()
    instructions = await runtime.render_instructions(new_id, deps)
    history = [replace(m, id="") for m in original.messages[: original.input_index + 1] if m.role is not Role.SYSTEM]
    messages = [Message.system(instructions), *history] if instructions else history
    journal = replayer.start(
        messages,
        input=original.input,
        thread_id=None,
        run_id=new_id,
        uses_memory=False,
        model_settings=original.model_settings,
        deps=deps,
    )
    await replayer.run(journal, None, config=cfg)
    state = journal.state
    would_call = tuple(state.awaiting_approval()) if state.status is Status.AWAITING_APPROVAL else ()
    if would_call:
        said = ", ".join(f"{c.name}({c.arguments})" for c in would_call)
        journal.record(RunCancelled(reason=f"replay stopped: the original made no such call, so it never runs: {said}"))
        await journal.flush()
    result = replay_of(original, journal.state, recorded, would_call, diverged=bool(would_call))
    if evaluators:
        scores = {_name(fn): await _score(fn, original, result) for fn in evaluators}
        result = replace(result, scores=scores)
    return result


def _name(fn: Evaluator) -> str:
    return str(getattr(fn, "__name__", type(fn).__name__))


async def _score(fn: Evaluator, original: RunState, result: Replay) -> bool | float | str:
    value = fn(original, result)
    if inspect.isawaitable(value):
        value = await value
    if isinstance(value, bool | float | str):
        return value
    if isinstance(value, int):
        return float(value)
    return str(value)
