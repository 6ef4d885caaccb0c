"""Replaying a recorded run against a changed agent, without a single effect.

"What would the new agent have done on last week's runs?" The journal holds every input,
decision and result, so a replay is a run of its own (`run_started.replay_of` names the
original) in which the changed agent's model decides live and its tools are never trusted:

- a call the original made (same tool, same arguments) gets the original's recorded result;
- a READ call the original did not make runs live only with `live_reads=True`;
- any other call never runs: it waits for an approval that never comes, and the replay stops
  there, `diverged`, with what it would have called journaled (`approval_requested`).

`Recorded` serves results (a middleware layer, innermost), `replay_policy` stops the rest, and
`compare` lines the two runs' decisions up step by step.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from eudaimon.core.digest import canonical_json
from eudaimon.core.messages import JsonObject, Role, ToolCall, Usage
from eudaimon.core.state import RunState
from eudaimon.extensions.hooks import ToolOutput
from eudaimon.extensions.middleware import MiddlewareAction, ToolCallRequest
from eudaimon.tools import Tool, ToolPolicy


def _key(name: str, arguments: JsonObject | str) -> tuple[str, str]:
    if isinstance(arguments, str):
        try:
            import json

            arguments = json.loads(arguments)
        except ValueError:
            pass
    return name, canonical_json(arguments)


class Recorded:
    """A middleware layer serving the original run's results to the calls it made.

    Each recorded result is served once, in the order the original got them: a call the original
    made twice is served twice, a third time is a call it did not make. Counts the calls it let
    through (`live`): READ calls run live under `live_reads`.
    """

    def __init__(self, original: RunState, tools: dict[str, Tool], *, live_reads: bool) -> None:
        self._results: dict[tuple[str, str], deque[tuple[str, bool]]] = defaultdict(deque)
        for call, content, is_error in recorded_calls(original):
            self._results[_key(call.name, call.arguments)].append((content, is_error))
        self._tools = tools
        self.live_reads = live_reads
        self.served = 0
        self.live = 0

    def on_tool_call(self, call: ToolCallRequest) -> Any:
        found = self._results.get(_key(call.name, call.arguments))
        if found:
            content, is_error = found.popleft()
            self.served += 1
            return MiddlewareAction.ShortCircuit(ToolOutput(content, is_error))
        tool = self._tools.get(call.name)
        if self.live_reads and tool is not None and tool.effect.value == "read":
            self.live += 1
        return None


def replay_policy(live_reads: bool) -> Any:
    """The approval policy of a replay: only what `Recorded` let through reaches it, so a READ
    under `live_reads` runs and anything else waits for a human who is never asked."""

    def policy(call: ToolCall, tool: Tool) -> ToolPolicy:
        if live_reads and tool.effect.value == "read":
            return ToolPolicy.ALLOW
        return ToolPolicy.REQUIRE_APPROVAL

    return policy


def recorded_calls(state: RunState) -> list[tuple[ToolCall, str, bool]]:
    """Each call of the run that has a result, with the result: (call, content, is_error)."""
    calls: dict[str, ToolCall] = {}
    found: list[tuple[ToolCall, str, bool]] = []
    for message in state.messages[state.input_index :]:
        if message.role is Role.ASSISTANT:
            for call in message.tool_calls:
                calls[call.id] = call
        elif message.role is Role.TOOL and message.tool_call_id in calls:
            found.append((calls[message.tool_call_id], message.content, message.is_error))
    return found


@dataclass(frozen=True, slots=True)
class Decision:
    """What the model decided at one step: the calls it made (tool and arguments), or its text."""

    calls: tuple[tuple[str, JsonObject | str], ...] = ()
    text: str = ""

    def same_as(self, other: Decision | None) -> bool:
        if other is None:
            return False
        mine = [_key(n, a) for n, a in self.calls]
        theirs = [_key(n, a) for n, a in other.calls]
        return mine == theirs and (bool(self.calls) or self.text == other.text)

    def as_dict(self) -> dict[str, Any]:
        return {"calls": [{"tool": n, "arguments": a} for n, a in self.calls], "text": self.text}


def decisions(state: RunState) -> list[Decision]:
    """The model's decisions in a run, one per answer, in order."""
    return [
        Decision(tuple((c.name, c.arguments) for c in m.tool_calls), m.content if isinstance(m.content, str) else "")
        for m in state.messages[state.input_index :]
        if m.role is Role.ASSISTANT and not (m.id or "").endswith(":handoff")
    ]


@dataclass(frozen=True, slots=True)
class ReplayStep:
    """One step of a replay beside the same step of its original."""

    step: int
    original: Decision | None
    replay: Decision | None
    same: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "same": self.same,
            "original": self.original.as_dict() if self.original is not None else None,
            "replay": self.replay.as_dict() if self.replay is not None else None,
        }


def compare(original: RunState, replay: RunState) -> tuple[tuple[ReplayStep, ...], int | None]:
    """The two runs' decisions side by side, and the first step (from 1) where they differ."""
    mine, theirs = decisions(original), decisions(replay)
    steps = []
    first: int | None = None
    for i in range(max(len(mine), len(theirs))):
        a = mine[i] if i < len(mine) else None
        b = theirs[i] if i < len(theirs) else None
        same = a is not None and a.same_as(b)
        if not same and first is None:
            first = i + 1
        steps.append(ReplayStep(i + 1, a, b, same))
    return tuple(steps), first


@dataclass(frozen=True, slots=True, kw_only=True)
class Replay:
    """A replay of run `of` by a (changed) agent, as `agent.replay` returns it.

    `status` is "completed" when the replay answered, "diverged" when it stopped at a call the
    original did not make and a replay may not run, else how its run ended ("failed", …).
    `diverged_at` is the first step (from 1) whose decision differs from the original's (None:
    the same decisions throughout).
    """

    run_id: str
    of: str
    status: str
    diverged_at: int | None
    steps: tuple[ReplayStep, ...]
    output: str | None
    original_output: str | None = None
    structured_output: object = None
    original_structured_output: object = None
    would_call: tuple[ToolCall, ...] = ()
    """The calls the replay stopped at: what it would have called."""
    scores: dict[str, bool | float | str] = field(default_factory=dict)
    served: int = 0
    """Calls answered with the original's recorded result."""
    live_reads: int = 0
    """READ calls run live (`live_reads=True`)."""
    usage: Usage = field(default_factory=Usage)
    original_usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    original_cost_usd: float = 0.0
    version: str = ""
    original_version: str = ""

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready, for `eudaimon replay --json` and the API."""
        return {
            "run_id": self.run_id,
            "of": self.of,
            "status": self.status,
            "diverged_at": self.diverged_at,
            "version": self.version,
            "original_version": self.original_version,
            "output": self.output,
            "original_output": self.original_output,
            "structured_output": self.structured_output,
            "original_structured_output": self.original_structured_output,
            "would_call": [{"tool": c.name, "arguments": c.arguments} for c in self.would_call],
            "scores": dict(self.scores),
            "served": self.served,
            "live_reads": self.live_reads,
            "tokens": {"input": self.usage.input_tokens, "output": self.usage.output_tokens},
            "original_tokens": {"input": self.original_usage.input_tokens, "output": self.original_usage.output_tokens},
            "cost_usd": self.cost_usd,
            "original_cost_usd": self.original_cost_usd,
            "steps": [s.as_dict() for s in self.steps],
        }


def replay_of(
    original: RunState, replay: RunState, recorded: Recorded, would_call: Sequence[ToolCall], diverged: bool
) -> Replay:
    """The `Replay` of `original` that the run `replay` made."""
    steps, first = compare(original, replay)
    status = "diverged" if diverged else replay.status.value
    return Replay(
        run_id=replay.run_id,
        of=original.run_id,
        status=status,
        diverged_at=first,
        steps=steps,
        output=replay.output,
        original_output=original.output,
        structured_output=replay.structured_output,
        original_structured_output=original.structured_output,
        would_call=tuple(would_call),
        served=recorded.served,
        live_reads=recorded.live,
        usage=replay.usage,
        original_usage=original.usage,
        cost_usd=replay.cost_usd,
        original_cost_usd=original.cost_usd,
        version=replay.version,
        original_version=original.version,
    )
