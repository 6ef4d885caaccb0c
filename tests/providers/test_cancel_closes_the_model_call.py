"""A cancel during a model call closes that HTTP request; nothing is tried after it.

Bug (issue 26): a cancel was checked only between steps, so a run waiting on its model went
on waiting (the provider generating 6,000+ tokens), retries were still scheduled after the
cancel, and the run ended `failed: ModelUnavailable`. Now the call is cut where it waits: the
provider's socket sees the client hang up, no retry or fallback starts, and the run ends
`run_cancelled` with who and why. The providers here are real sockets (`_slow_server`)
spoken to by the official SDKs.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from _slow_server import SlowProvider

from eudaimon import Agent, CancellationToken
from eudaimon.core.errors import Cancelled
from eudaimon.core.events import RunCancelled
from eudaimon.models import Model
from eudaimon.models.anthropic import AnthropicModel
from eudaimon.models.fallback import FallbackModel
from eudaimon.models.openai import OpenAIModel
from eudaimon.runtime.process import operations
from eudaimon.stores import MemoryStore
from eudaimon.streaming import Done

OPENAI_KEY = "sk-test-openai-cancel"
ANTHROPIC_KEY = "sk-ant-test-cancel"
WAIT_S = 10.0
"""How long a test waits for something that should happen at once (a hang-up, a request)."""


@pytest.fixture(params=["openai", "anthropic"])
async def slow(request: Any) -> AsyncIterator[SlowProvider]:
    server = SlowProvider(request.param)
    yield server
    server.close()


def model_for(server: SlowProvider) -> Model:
    if server.wire == "openai":
        return OpenAIModel("gpt-slow", api_key=OPENAI_KEY, base_url=server.url)
    return AnthropicModel("claude-slow", api_key=ANTHROPIC_KEY, base_url=server.url)


async def until(check: Callable[[], Any], what: str) -> None:
    for _ in range(int(WAIT_S / 0.01)):
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never happened: {what}")


async def drive(agent: Agent[Any, Any], run_id: str, stream: bool, **options: Any) -> str:
    """The run's final status, as `prompt_stream`'s `Done` says it or `prompt` raises it."""
    if stream:
        status = ""
        async for event in agent.prompt_stream("write a long essay", run_id=run_id, **options):
            if isinstance(event, Done):
                status = event.status
        return status
    try:
        return (await agent.prompt("write a long essay", run_id=run_id, **options)).status.value
    except Cancelled:
        return "cancelled"


async def last_event(store: MemoryStore, run_id: str) -> Any:
    return (await store.load(run_id))[-1].data


@pytest.mark.parametrize("stream", [False, True], ids=["generate", "stream"])
async def test_a_token_cancel_closes_the_request_and_the_run_says_who(slow: SlowProvider, stream: bool) -> None:
    """Waiting for an answer, or mid-stream: the socket sees the hang-up, the run is cancelled."""
    store = MemoryStore()
    agent = Agent(model_for(slow), store=store, memory=None)
    token = CancellationToken()
    run = asyncio.ensure_future(drive(agent, "r1", stream, cancel=token))
    await until(lambda: slow.calls, "the request reached the provider")
    if stream:
        await until(lambda: slow.calls[0].tokens_sent >= 3, "tokens were streamed")
    token.cancel("the user pressed stop", by="alice")
    assert await asyncio.wait_for(run, WAIT_S) == "cancelled"
    await until(lambda: slow.calls[0].hung_up_at is not None, "the client hung up")
    event = await last_event(store, "r1")
    assert event == RunCancelled(reason="the user pressed stop", by="alice")
    assert len(slow.calls) == 1
    types = [e.type for e in await store.load("r1")]
    assert "model_called" not in types and "model_failed" not in types
    await agent.aclose()


async def test_a_cancel_from_another_thread_closes_the_request(slow: SlowProvider) -> None:
    """`token.cancel()` called from a thread that runs no event loop (a UI, a signal handler)."""
    store = MemoryStore()
    agent = Agent(model_for(slow), store=store, memory=None)
    token = CancellationToken()
    run = asyncio.ensure_future(drive(agent, "r1", False, cancel=token))
    await until(lambda: slow.calls, "the request reached the provider")
    await asyncio.to_thread(token.cancel, "from a thread", by="heidi")
    assert await asyncio.wait_for(run, WAIT_S) == "cancelled"
    await until(lambda: slow.calls[0].hung_up_at is not None, "the client hung up")
    assert await last_event(store, "r1") == RunCancelled(reason="from a thread", by="heidi")
    await agent.aclose()


async def test_a_cancel_during_the_backoff_starts_no_retry(openai_server: Any) -> None:
    """The first attempt fails retryably (503, Retry-After 20 s); a cancel in the backoff ends
    the run at once, and no second request is sent."""
    openai_server.reply(openai_server.error(503, "overloaded", type="server_error", headers={"Retry-After": "20"}))
    store = MemoryStore()
    agent = Agent(OpenAIModel("gpt-test", api_key=OPENAI_KEY, base_url=openai_server.url), store=store, memory=None)
    token = CancellationToken()
    run = asyncio.ensure_future(agent.prompt("hi", run_id="r1", cancel=token))

    async def scheduled() -> bool:
        return any(e.type == "model_retry_scheduled" for e in await store.load("r1"))

    for _ in range(int(WAIT_S / 0.01)):
        if await scheduled():
            break
        await asyncio.sleep(0.01)
    token.cancel("no longer needed", by="bob")
    with pytest.raises(Cancelled):
        await asyncio.wait_for(run, WAIT_S)
    types = [e.type for e in await store.load("r1")]
    assert types[-2:] == ["model_retry_scheduled", "run_cancelled"]
    assert len(openai_server.requests) == 1
    await agent.aclose()


async def test_a_fallback_model_starts_no_fallback_after_a_cancel(anthropic_server: Any) -> None:
    """The primary is cut mid-call; the secondary is never asked."""
    primary = SlowProvider("openai")
    try:
        model = FallbackModel(
            [
                OpenAIModel("gpt-slow", api_key=OPENAI_KEY, base_url=primary.url),
                AnthropicModel("claude-backup", api_key=ANTHROPIC_KEY, base_url=anthropic_server.url),
            ]
        )
        store = MemoryStore()
        agent = Agent(model, store=store, memory=None)
        token = CancellationToken()
        run = asyncio.ensure_future(agent.prompt("hi", run_id="r1", cancel=token))
        await until(lambda: primary.calls, "the primary was asked")
        token.cancel("stop", by="carol")
        with pytest.raises(Cancelled):
            await asyncio.wait_for(run, WAIT_S)
        await until(lambda: primary.calls[0].hung_up_at is not None, "the primary's request was closed")
        assert anthropic_server.requests == []
        assert (await last_event(store, "r1")).by == "carol"
        await agent.aclose()
    finally:
        primary.close()


@pytest.mark.parametrize("stream", [False, True], ids=["generate", "stream"])
async def test_a_request_left_in_the_store_reaches_a_run_waiting_on_its_model(stream: bool) -> None:
    """The cancel of a run another process drives (`operations.cancel`, as the CLI and the
    server use it): the driver holds the lease, so only a request is left; the driver sees it
    while it waits on the model, and closes the call."""
    slow = SlowProvider("openai")
    try:
        store = MemoryStore()
        agent = Agent(model_for(slow), store=store, memory=None)
        run = asyncio.ensure_future(drive(agent, "r1", stream))
        await until(lambda: slow.calls, "the request reached the provider")
        assert await operations.cancel(store, "r1", reason="from elsewhere", by="dave") is None
        assert await asyncio.wait_for(run, WAIT_S) == "cancelled"
        await until(lambda: slow.calls[0].hung_up_at is not None, "the client hung up")
        assert await last_event(store, "r1") == RunCancelled(reason="from elsewhere", by="dave")
        await agent.aclose()
    finally:
        slow.close()


async def test_a_cancelled_parent_closes_its_child_runs_model_call(slow: SlowProvider) -> None:
    """A child run (an agent used as a tool) waiting on its model is cut with its parent."""
    from eudaimon import Message, ToolCall
    from eudaimon.models import ScriptedModel

    store = MemoryStore()
    child = Agent(model_for(slow), store=store, memory=None, name="writer")
    parent = Agent(
        ScriptedModel([Message.assistant(tool_calls=[ToolCall("c1", "writer", {"input": "an essay"})])]),
        tools=[child.as_tool(name="writer")],
        store=store,
        memory=None,
    )
    token = CancellationToken()
    run = asyncio.ensure_future(parent.prompt("delegate", run_id="p1", cancel=token))
    await until(lambda: slow.calls, "the child asked its model")
    token.cancel("the parent was stopped", by="erin")
    with pytest.raises(Cancelled):
        await asyncio.wait_for(run, WAIT_S)
    await until(lambda: slow.calls[0].hung_up_at is not None, "the child's request was closed")
    child_events = await store.load("p1.c1")
    assert child_events[-1].data == RunCancelled(reason="the parent was stopped", by="erin")
    await child.aclose()


_DRIVER = """
import asyncio, sys
from eudaimon import Agent
from eudaimon.errors import Cancelled
from eudaimon.models.openai import OpenAIModel
from eudaimon.stores import SqliteStore

async def main() -> str:
    store = SqliteStore(sys.argv[2])
    agent = Agent(OpenAIModel("gpt-slow", api_key="sk-test", base_url=sys.argv[1]), store=store, memory=None)
    try:
        return (await agent.prompt("write a long essay", run_id="r1")).status.value
    except Cancelled:
        return "cancelled"
    finally:
        await agent.aclose()
        await store.close()

print(asyncio.run(main()))
"""


async def test_runs_cancel_from_the_cli_stops_a_model_call_in_another_process(tmp_path: Any) -> None:
    """`eudaimon runs cancel RUN --reason … --by …` while another process waits on the model:
    that driver closes its request within its poll interval and journals who cancelled."""
    import os
    import subprocess
    import sys

    from eudaimon.stores import SqliteStore

    slow = SlowProvider("openai")
    db = tmp_path / "runs.db"
    script = tmp_path / "driver.py"
    script.write_text(_DRIVER)
    driver = subprocess.Popen(
        [sys.executable, str(script), slow.url, str(db)], stdout=subprocess.PIPE, text=True, env=os.environ.copy()
    )
    try:
        await until(lambda: slow.calls, "the driver's request reached the provider")
        by_frank = ("--reason", "wrong question", "--by", "frank")
        cancel = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-m", "eudaimon", "runs", "cancel", "r1", "--store", f"sqlite:///{db}", *by_frank],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert cancel.returncode == 0, cancel.stderr
        assert "cancel requested for run r1 (by frank)" in cancel.stdout
        out, _ = await asyncio.to_thread(driver.communicate, timeout=60)
        assert out.strip() == "cancelled"
        assert slow.calls[0].hung_up.wait(WAIT_S)
        store = SqliteStore(str(db))
        try:
            assert (await store.load("r1"))[-1].data == RunCancelled(reason="wrong question", by="frank")
        finally:
            await store.close()
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
        if driver.stdout is not None:
            driver.stdout.close()
        slow.close()


_SERVED_AGENT = """
import os
from eudaimon import Agent
from eudaimon.models.openai import OpenAIModel

writer = Agent(OpenAIModel("gpt-slow", api_key="sk-test", base_url=os.environ["SLOW_URL"]), name="writer", memory=None)
"""


async def test_post_cancel_on_a_served_run_closes_its_model_call(tmp_path: Any) -> None:
    """`POST /v1/runs/{id}/cancel` on a run `eudaimon serve` drives, waiting on its model: the
    request is closed, and the run ends cancelled by the key's principal."""
    import os
    import socket
    import subprocess
    import sys

    import httpx2

    slow = SlowProvider("openai")
    (tmp_path / "served_writer.py").write_text(_SERVED_AGENT)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {
        **os.environ,
        "SLOW_URL": slow.url,
        "PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
    }
    command = [sys.executable, "-m", "eudaimon", "serve", "--store", f"sqlite:///{tmp_path / 'runs.db'}"]
    command += ["--agent", "served_writer:writer", "--port", str(port), "--log-level", "warning"]
    log = (tmp_path / "serve.log").open("wb")
    server = subprocess.Popen(command, env=env, cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT)
    try:
        async with httpx2.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            for _ in range(600):
                try:
                    if (await client.get("/health")).status_code == 200:
                        break
                except httpx2.TransportError:
                    pass
                assert server.poll() is None, (tmp_path / "serve.log").read_text()
                await asyncio.sleep(0.05)
            started = await client.post("/v1/agents/writer/runs", json={"input": "write a long essay"})
            assert started.status_code == 202, started.text
            run_id = started.json()["run_id"]
            await until(lambda: slow.calls, "the served run asked its model")
            cancelled = await client.post(f"/v1/runs/{run_id}/cancel", json={"reason": "too slow"})
            assert cancelled.status_code == 200, cancelled.text
            assert slow.calls[0].hung_up.wait(WAIT_S)
            run = (await client.get(f"/v1/runs/{run_id}")).json()
            assert run["status"] == "cancelled"
            events = (await client.get(f"/v1/runs/{run_id}/events")).json()
            rows = events["events"] if isinstance(events, dict) else events
            assert rows[-1]["type"] == "run_cancelled"
            assert (rows[-1]["reason"], rows[-1]["by"]) == ("too slow", "anonymous")
            assert len(slow.calls) == 1
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()
        slow.close()
