"""The agent module a test fleet serves: `eudaimon worker --agent fleet_agent:make`.

Its tools write every execution to a ledger outside eudaimon (`$FLEET_LEDGER`, one JSON line
per execution, written before the tool returns), so a test can count what really ran. A tool
whose argument names a file under `$FLEET_GATES` waits until that file is deleted: a test
holds a worker inside a tool call that way, and kills it there.

The model is a function of the conversation alone, so any worker process, and any replay,
answers the same: the user's input names a script of tool calls, one per step.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eudaimon import Agent, Effect, ImagePart, Message, ToolCall, ToolContext, tool
from eudaimon.agent.agent_runtime import runtime_of
from eudaimon.errors import ModelUnavailable
from eudaimon.models import ChatRequest, FunctionModel

SCRIPTS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "read then write": [("lookup", {"key": "a"}), ("charge", {"amount": 5})],
    "wire money": [("wire", {"to": "bob"})],
    "hold lookup": [("lookup", {"key": "gate-read"}), ("charge", {"amount": 7})],
    "hold charge": [("lookup", {"key": "b"}), ("charge", {"amount": 9, "gate": "gate-write"})],
    "big output": [("dump", {"size": 3_000_000})],
    "parallel": [("lookup", {"key": "x"}), ("lookup", {"key": "y"})],
    "many lookups": [("lookup", {"key": f"k{i}"}) for i in range(12)],
    "lookups then wire": [*((("lookup", {"key": f"k{i}"})) for i in range(6)), ("wire", {"to": "carol"})],
    "picture": [("snap", {"size": 5000}), ("snap", {"size": 40})],
    "big then hold": [("dump", {"size": 3_000_000}), ("lookup", {"key": "gate-read"})],
    "big then break": [("dump", {"size": 3_000_000})],
    "who am i": [("whoami", {})],
}
"""User input -> the tool calls the model makes, in order; "parallel" makes both in one step."""


def _ledger(tool_name: str, ctx: ToolContext, **fields: Any) -> None:
    path = os.environ.get("FLEET_LEDGER")
    if not path:
        return
    line = {"tool": tool_name, "run": ctx.run_id, "call": ctx.call_id, "key": ctx.idempotency_key}
    line |= {"attempt": ctx.attempt, "pid": os.getpid(), **fields}
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(line) + "\n")
        f.flush()
        os.fsync(f.fileno())


async def _gate(name: str | None) -> None:
    gates = os.environ.get("FLEET_GATES")
    if not name or not gates:
        return
    gate = Path(gates) / name
    while gate.exists():
        await asyncio.sleep(0.05)


@tool(effect=Effect.READ)
async def lookup(key: str, ctx: ToolContext) -> str:
    """Look a key up."""
    _ledger("lookup", ctx, key_arg=key)
    await _gate(key if key.startswith("gate") else None)
    return f"value of {key}"


@tool(effect=Effect.WRITE)
async def charge(amount: int, ctx: ToolContext, gate: str | None = None) -> str:
    """Charge an amount."""
    _ledger("charge", ctx, amount=amount)
    await _gate(gate)
    return f"charged {amount}"


@tool(effect=Effect.IRREVERSIBLE)
def wire(to: str, ctx: ToolContext) -> str:
    """Wire money to someone (needs a human's approval)."""
    _ledger("wire", ctx, to=to)
    return f"wired to {to}"


@tool(effect=Effect.READ)
def dump(size: int) -> str:
    """Return a large text."""
    return "x" * size


@tool(effect=Effect.READ)
def snap(size: int) -> list[Any]:
    """Take a picture (an image and its caption)."""
    return [ImagePart(data=bytes(i % 251 for i in range(size)), media_type="image/png"), f"a {size}-byte picture"]


@tool(effect=Effect.READ)
def whoami(ctx: ToolContext) -> str:
    """Say whose deps the tool got."""
    deps = ctx.deps
    return f"{type(deps).__name__}: {getattr(deps, 'user', deps)} via {getattr(deps, 'source', '-')}"


def _script_of(request: ChatRequest) -> list[tuple[str, dict[str, Any]]]:
    users = [m for m in request.messages if m.role == "user"]
    return SCRIPTS.get(users[-1].content if users else "", [])


def answer(request: ChatRequest) -> Message:
    """The next message of the script the user's input names, given the results so far.

    While a file `model-down` exists under `$FLEET_GATES`, the call fails as a provider outage
    would (and the file is removed): the first try of a step fails, the retry answers.
    """
    gates = os.environ.get("FLEET_GATES")
    outage = Path(gates) / "model-down" if gates else None
    if outage is not None and outage.exists():
        outage.unlink()
        raise ModelUnavailable("503 from the provider (simulated)", model="fleet-model", status_code=503)
    script = _script_of(request)
    results = [m for m in request.messages if m.role == "tool"]
    calls = [m for m in request.messages if m.role == "assistant" and m.tool_calls]
    if script is SCRIPTS["big then break"] and results:
        raise RuntimeError("the model broke after a big result (simulated)")
    if script and script is SCRIPTS["parallel"] and not calls:
        return Message.assistant(tool_calls=[ToolCall(f"c{i}", n, a) for i, (n, a) in enumerate(script)])
    if len(calls) < len(script) and len(results) >= len(calls):
        name, arguments = script[len(calls)]
        return Message.assistant(tool_calls=[ToolCall(f"c{len(calls)}", name, arguments)])
    summary = "; ".join(f"{'error: ' if m.is_error else ''}{m.content[:60]}" for m in results)
    longest = max(len(m.content) for m in request.messages)
    seen = f" (longest message sent: {longest} chars)" if longest > 1_000_000 and not results else ""
    total = sum(len(m.content) for m in request.messages)
    if total > 1_000_000 and not seen and not results:
        seen = f" (characters sent: {total})"
    return Message.assistant((f"done: {summary}" if summary else "hello") + seen)


def make(**options: Any) -> Agent:
    """The fleet's agent. Workers call it with no options: their store is `--store`.

    `$FLEET_SNAPSHOT_EVERY` sets how often runs snapshot their state (the runtime's default is
    200 events), so that a test run of a few steps takes some."""
    agent = Agent(
        FunctionModel(answer, model_id="fleet-model"),
        tools=[lookup, charge, wire, dump, snap],
        name="fleet",
        **options,
    )
    every = os.environ.get("FLEET_SNAPSHOT_EVERY")
    if every:
        runtime_of(agent).snapshot_every = int(every)
    return agent


def make_forgetful(**options: Any) -> Agent:
    """The fleet's agent without memory, as the fleet benchmark's: no `remember` activity."""
    return make(memory=None, **options)


@dataclass
class Who:
    """Deps that serialize: they travel with the run to the workers."""

    user: str
    source: str = "the prompt"


class Pool:
    """Deps that do not serialize (a lock, as a database pool holds): they stay where they are."""

    def __init__(self, user: str, source: str) -> None:
        self.user = user
        self.source = source
        self.lock = threading.Lock()


def make_typed(**options: Any) -> Agent:
    """An agent declaring `deps_type=Who`, whose tool reports the deps it was given."""
    return Agent(FunctionModel(answer, model_id="fleet-model"), tools=[whoami], name="typed", deps_type=Who, **options)


def make_untyped(**options: Any) -> Agent:
    """The same tool on an agent declaring no deps_type."""
    return Agent(FunctionModel(answer, model_id="fleet-model"), tools=[whoami], name="untyped", **options)


WORKER_WHO = Who("the worker's user", "the worker")
"""What `eudaimon worker --deps fleet_agent:WORKER_WHO` gives its tools."""


def call_once(call_id: str, tool: str, key: str, value: str | None, says: str) -> Callable[[ChatRequest], Message]:
    """A scripted model that calls `tool` once with `{key: value}` (`None`: the user's last line),
    then answers with `says: <the tool's result>`."""

    def answer(request: ChatRequest) -> Message:
        results = [m for m in request.messages if m.role == "tool"]
        if results:
            return Message.assistant(f"{says}: {results[-1].content}")
        asked = value if value is not None else [m for m in request.messages if m.role == "user"][-1].content
        return Message.assistant(tool_calls=[ToolCall(call_id, tool, {key: asked})])

    return answer


child_answer = call_once("k0", "lookup", "key", None, "the child found")
"""The child agent: looks the question up once, then answers with what it found."""
parent_answer = call_once("p0", "researcher", "input", "gold", "parent says")
"""The parent: asks the researcher once, then answers with its answer."""


def make_parent(**options: Any) -> Agent:
    """A parent agent whose one tool is a child agent (`as_tool`): the child has no engine and
    runs wherever its parent's call runs (on the fleet: in the call's tool activity)."""
    child = Agent(FunctionModel(child_answer, model_id="child-model"), tools=[lookup], name="researcher")
    return Agent(
        FunctionModel(parent_answer, model_id="parent-model"), tools=[child.as_tool()], name="parent", **options
    )


payer_answer = call_once("w0", "wire", "to", None, "the payer says")
"""The child that pays: wires to whom it is asked about (a call a human approves)."""
asking_parent_answer = call_once("p0", "payer", "input", "bob", "parent says")


def make_asking_parent(**options: Any) -> Agent:
    """A parent whose child agent's call waits for a human: the parent's call waits with it."""
    child = Agent(FunctionModel(payer_answer, model_id="payer-model"), tools=[wire], name="payer")
    return Agent(
        FunctionModel(asking_parent_answer, model_id="parent-model"), tools=[child.as_tool()], name="asking", **options
    )
