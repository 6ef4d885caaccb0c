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
response type and turns its native messages into `Latest`.
"""

from __future__ import annotations

import hashlib
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


# -- the tools every framework gets (same names, same signature, same output) -----------------


def echo_output(i: int) -> str:
    return f"r{i}"


def fetch_output(n: int) -> str:
    """A 4,096-byte ASCII tool output, different for every turn `n` (incompressible-ish hex)."""
    seed = hashlib.sha256(f"tool-{n}".encode()).hexdigest()
    return (seed * (4096 // len(seed) + 1))[:4096]


# -- (2) sequential loop of K steps: K model calls, K-1 tool calls ----------------------------


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


# -- (3) one turn with N parallel tool calls ---------------------------------------------------


class Parallel:
    tool = "echo"

    def __init__(self, n: int) -> None:
        self.n = n

    def question(self) -> str:
        return f"parallel {self.n}"

    def first(self, question: str) -> Turn:
        return Turn(calls=tuple(Call(f"c0_{j}", "echo", {"i": j}) for j in range(self.n)))

    def after_tools(self, results: list[Result]) -> Turn:
        # Call order must be kept: the answer lists the outputs in the order they came back.
        return Turn(text="done: " + ",".join(r.content for r in results[-self.n :]))

    def expected(self) -> tuple[str, int]:
        return "done: " + ",".join(echo_output(j) for j in range(self.n)), self.n


# -- (5) many concurrent runs, each: question i -> echo(i) -> answer ---------------------------


class PerRun:
    """One tool call then an answer; the run's index is read from its question."""

    tool = "echo"

    @staticmethod
    def question_for(i: int) -> str:
        return f"run {i}"

    def first(self, question: str) -> Turn:
        i = int(question.rsplit(" ", 1)[1])
        return Turn(calls=(Call("c0_0", "echo", {"i": i}),))

    def after_tools(self, results: list[Result]) -> Turn:
        return Turn(text=f"done: {results[-1].content}")

    @staticmethod
    def expected_for(i: int) -> str:
        return f"done: {echo_output(i)}"


# -- (4) one thread of many turns: 100-byte question, a 4 KB tool output, a 2 KB answer -------

QUESTION_BYTES = 100
TOOL_BYTES = 4096
ANSWER_BYTES = 2048


def thread_question(n: int) -> str:
    head = f"question {n:04d}: what does the record say? "
    return (head + "x" * QUESTION_BYTES)[:QUESTION_BYTES]


def thread_answer(n: int, tool_output: str) -> str:
    head = f"answer {n:04d}: " + tool_output[:32] + " "
    return (head + "a" * ANSWER_BYTES)[:ANSWER_BYTES]


class Thread:
    tool = "fetch"

    def first(self, question: str) -> Turn:
        n = int(question[len("question ") : len("question ") + 4])
        return Turn(calls=(Call(f"c0_{n}", "fetch", {"n": n}),))

    def after_tools(self, results: list[Result]) -> Turn:
        last = results[-1]
        n = int(last.call_id.split("_", 1)[1])
        return Turn(text=thread_answer(n, last.content))

    @staticmethod
    def payload_bytes(turns: int) -> int:
        return turns * (QUESTION_BYTES + TOOL_BYTES + ANSWER_BYTES)


# -- (7) streaming: one long answer in many word-sized deltas ----------------------------------


class Stream:
    """A final answer of `n` words of 16 characters each (15 + a space): every framework's fake
    streams it one word per delta, and eudaimon's `FunctionModel(chunk_chars=16)` splits it the
    same way."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.pieces = [f"w{i:014d} " for i in range(n)]
        self.text = "".join(self.pieces)

    def question(self) -> str:
        return f"stream {self.n}"

    def first(self, question: str) -> Turn:
        return Turn(text=self.text)

    def after_tools(self, results: list[Result]) -> Turn:  # never called: no tools
        raise AssertionError("the stream transcript calls no tool")
