"""The one scripted transcript every framework is driven by, whatever its fake-model hook.

A fake model in any framework sees the conversation so far and must answer. Here that answer
is a pure function of the *latest* message(s) only, so it costs O(1) per call in every
framework, needs no per-run state (one agent may serve 10,000 concurrent runs), and is the same
decision everywhere:

- the latest message is the user's question -> `first(question)`;
- the latest messages are tool results      -> `after_tools(results)` with the trailing results
  (call id, text content) in call order.

Call ids carry the step number (`c{step}_{j}`), so "which step is this" is read off the last
result, never counted over the history. Every adapter turns a `Turn` into its own native
response type and reads the latest question or tool results off its native messages.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Call:
    id: str
    name: str
    args: dict[str, int]


@dataclass(frozen=True, slots=True)
class Turn:
    """What the model answers: tool calls, or (with no calls) a final text."""

    calls: tuple[Call, ...] = ()
    text: str = ""


@dataclass(frozen=True, slots=True)
class Result:
    call_id: str
    content: str


def step_of(call_id: str) -> int:
    return int(call_id[1:].split("_", 1)[0])


# -- the tool every framework gets (same name, same signature, same output) -------------------


def echo_output(i: int) -> str:
    return f"r{i}"


# -- a sequential loop of K steps: K model calls, K-1 tool calls --------------------------------


class Loop:
    """K model calls: K-1 turns that each call `echo(i)` once, then a final answer."""

    tool = "echo"

    def __init__(self, k: int) -> None:
        if k < 1:
            raise ValueError("K >= 1")
        self.k = k

    def question(self) -> str:
        return f"loop {self.k}"

    def first(self, question: str) -> Turn:
        return self._next(0, None)

    def after_tools(self, results: list[Result]) -> Turn:
        last = results[-1]
        return self._next(step_of(last.call_id) + 1, last.content)

    def _next(self, step: int, last_output: str | None) -> Turn:
        if step < self.k - 1:
            return Turn(calls=(Call(f"c{step}_0", "echo", {"i": step}),))
        return Turn(text=f"done after {step} calls; last={last_output}")

    def expected(self) -> tuple[str, int]:
        last = echo_output(self.k - 2) if self.k > 1 else None
        return f"done after {self.k - 1} calls; last={last}", self.k - 1
