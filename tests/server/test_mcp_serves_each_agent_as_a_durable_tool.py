"""`eudaimon serve --mcp`: each agent is a tool of an MCP server, each call a run journaled before
it is answered, answered when it ends or waits for a person, and found again — never started a
second time — when the call is sent again with its idempotency key, across a kill -9 of the server.

Driven through the official MCP SDK's client over Streamable HTTP against a real server process.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import mcp_types
import pytest
from _server_support import KEYS, OPERATOR, VIEWER, Server, wait_until
from mcp.shared.exceptions import MCPError

from support.mcp_client import KEY_META, mcp_client


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """payer, ticker and charger over MCP, with an operator key (alice) and a viewer key (victor)."""
    running = Server(
        tmp_path_factory.mktemp("mcp") / "runs.db", env={"EUDAIMON_API_KEYS": KEYS}, args=("--mcp",)
    ).start()
    yield running
    running.stop()


def _text(result: mcp_types.CallToolResult) -> str:
    return " ".join(block.text for block in result.content if isinstance(block, mcp_types.TextContent))


def _runs(server: Server, **params: str) -> list[dict[str, Any]]:
    with server.client(OPERATOR) as client:
        runs: list[dict[str, Any]] = client.get("/v1/runs", params=params).json()["runs"]
    return runs


async def test_each_agent_is_a_tool_whose_annotations_say_what_its_tools_may_do(served: Server) -> None:
    """Invariant: a caller that trusts annotations gives a call the effect class of the agent's
    own tools: read-only only when every tool reads, destructive when one is irreversible."""
    async with mcp_client(served.url + "/mcp", VIEWER) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert sorted(tools) == ["charger", "payer", "ticker"]
    hints = {
        name: (t.annotations.read_only_hint, t.annotations.destructive_hint)
        for name, t in tools.items()
        if t.annotations
    }
    assert hints == {"ticker": (True, False), "payer": (False, True), "charger": (False, False)}
    assert tools["ticker"].input_schema["required"] == ["input"]


async def test_a_call_is_a_run_answered_at_its_end_with_its_steps_as_progress(served: Server) -> None:
    """Invariant: the answer is the run's, as the journal holds it, and names the run."""
    progress: list[str] = []

    async def heard(done: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    async with mcp_client(served.url + "/mcp", OPERATOR) as client:
        result = await client.call_tool("ticker", {"input": "ticks=3"}, progress_callback=heard)
        run = result.structured_content
        assert run is not None and not result.is_error
        assert run["status"] == "completed" and _text(result).startswith("Ticked 3 times")
        assert progress.count("tool tick runs") == 3 and progress.count("the model is asked") == 4
        links = [b.uri for b in result.content if isinstance(b, mcp_types.ResourceLink)]
        assert links == [f"eudaimon://runs/{run['run_id']}"]
        read = await client.read_resource(links[0])
    [contents] = read.contents
    assert isinstance(contents, mcp_types.TextResourceContents) and '"status": "completed"' in contents.text
    with served.client(OPERATOR) as http:
        journaled = http.get(f"/v1/runs/{run['run_id']}").json()
        first = http.get(f"/v1/runs/{run['run_id']}/events").json()["events"][0]
    assert journaled["status"] == "completed"
    assert first["type"] == "run_queued" and first["principal"] == "alice"  # journaled before it began


async def test_a_call_that_needs_a_person_answers_that_it_waits_and_its_run_goes_on_after(served: Server) -> None:
    """Invariant: an irreversible call is never made for an MCP caller without a person; the
    caller is told the run waits (not an error), and reads its end once approved."""
    async with mcp_client(served.url + "/mcp", OPERATOR) as client:
        result = await client.call_tool("payer", {"input": "send 12 to BOB"})
        run = result.structured_content
        assert run is not None and not result.is_error
        assert run["status"] == "awaiting_approval"
        assert run["awaiting_approval"] == [
            {"call_id": "wire_1", "tool": "send_wire", "arguments": {"amount_usd": 12.0, "to": "BOB"}}
        ]
        assert "waits for a person to approve send_wire" in _text(result)
        with served.client(OPERATOR) as http:
            http.post(f"/v1/runs/{run['run_id']}/approvals/wire_1", json={"approved": True}).raise_for_status()
            wait_until(lambda: http.get(f"/v1/runs/{run['run_id']}").json()["status"] == "completed", "the run's end")
        read = await client.read_resource(f"eudaimon://runs/{run['run_id']}")
    [contents] = read.contents
    assert isinstance(contents, mcp_types.TextResourceContents)
    assert '"output": "Done: sent $12.00 to BOB."' in contents.text


async def test_runs_are_resources_listed_most_recent_first(served: Server) -> None:
    """Invariant: the server says it has resources (a client that checks capabilities reads
    them), lists the runs newest first with what each was asked, and refuses a cursor it did
    not give."""
    async with mcp_client(served.url + "/mcp", OPERATOR) as client:
        done = await client.call_tool("ticker", {"input": "ticks=1 (listed)"})
        assert done.structured_content is not None
        listed = await client.list_resources()
        with pytest.raises(MCPError, match="cursor"):
            await client.list_resources(cursor="not-a-cursor")
    first = listed.resources[0]
    assert first.uri == f"eudaimon://runs/{done.structured_content['run_id']}"
    assert first.description == "ticks=1 (listed)" and first.title == "ticker run, completed"
    assert listed.next_cursor is None  # fewer runs than a page


async def test_keys_roles_and_bad_arguments_start_nothing(served: Server) -> None:
    """Invariant: only an operator's well-formed call starts a run; every refusal says why."""
    no_key = httpx2.post(served.url + "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert no_key.status_code == 401 and "API key" in no_key.json()["detail"]
    before = len(_runs(served))
    async with mcp_client(served.url + "/mcp", VIEWER) as client:
        refused = await client.call_tool("ticker", {"input": "ticks=1"})
    assert refused.is_error and "needs an operator key" in _text(refused)
    async with mcp_client(served.url + "/mcp", OPERATOR) as client:
        for arguments, said in (
            ({"input": "  "}, "`input` must be a non-empty string"),
            ({"input": "ticks=1", "amount": 5}, "unknown argument amount"),
            ({"input": "ticks=1", "thread_id": "a\x00b"}, "thread_id"),
        ):
            answer = await client.call_tool("ticker", arguments)
            assert answer.is_error and said in _text(answer), _text(answer)
        with pytest.raises(MCPError, match="no tool 'nobody'"):
            await client.call_tool("nobody", {"input": "hi"})
        with pytest.raises(MCPError, match="no run at"):
            await client.read_resource("eudaimon://runs/run_that_never_was")
    assert len(_runs(served)) == before


def test_a_foreign_origin_or_host_never_reaches_the_agents(served: Server) -> None:
    """Invariant: the MCP endpoint is guarded as every route is (the MCP specification asks
    servers to check `Origin` against DNS rebinding): a page on another origin, or a request
    for another host name, is refused before any key is read or any run starts."""
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "ticker", "arguments": {"input": "ticks=1"}},
    }
    before = len(_runs(served))
    headers = {"Authorization": f"Bearer {OPERATOR}", "Accept": "application/json, text/event-stream"}
    foreign = httpx2.post(served.url + "/mcp", json=call, headers={**headers, "Origin": "http://evil.example"})
    rebound = httpx2.post(served.url + "/mcp", json=call, headers={**headers, "Host": "evil.example"})
    assert (foreign.status_code, rebound.status_code) == (403, 421)
    assert len(_runs(served)) == before


async def test_a_key_sent_again_finds_its_run_and_another_request_with_it_is_refused(served: Server) -> None:
    """Invariant: one idempotency key, one run: a resent call is answered with the run it
    started; the key with other arguments starts nothing and says which field differs."""
    meta = {KEY_META: "order-7-refund"}
    before = {r["run_id"] for r in _runs(served, agent="ticker")}
    async with mcp_client(served.url + "/mcp", OPERATOR) as client:
        first = await client.call_tool("ticker", {"input": "ticks=2"}, meta=meta)
        again = await client.call_tool("ticker", {"input": "ticks=2"}, meta=meta)
        other = await client.call_tool("ticker", {"input": "ticks=5"}, meta=meta)
    assert first.structured_content is not None and again.structured_content == first.structured_content
    assert other.is_error and "`input` differs" in _text(other) and "io.eudaimon/idempotency-key" in _text(other)
    started = {r["run_id"] for r in _runs(served, agent="ticker")} - before
    assert started == {first.structured_content["run_id"]}


async def test_a_call_cut_by_a_kill_9_is_sent_again_and_finds_its_run_finished_by_recovery(tmp_path: Path) -> None:
    """Invariant: a server killed with a call in flight never starts that call's run twice:
    the run was journaled before the first step; resent with its key after the restart, the call
    follows the same run, which recovery took over, to its end."""
    server = Server(
        tmp_path / "runs.db", env={"EUDAIMON_API_KEYS": KEYS, "EUDAIMON_TEST_STEP_S": "0.3"}, args=("--mcp",)
    ).start()
    meta = {KEY_META: "nightly-report"}
    try:
        ticked: list[str] = []

        async def heard(done: float, total: float | None, message: str | None) -> None:
            ticked.append(message or "")
            if ticked.count("tool tick runs") == 2:
                server.kill()  # SIGKILL mid-call: the client's request is cut, the run half done

        with pytest.raises(BaseExceptionGroup) as cut_off:  # the SDK's task group, around the error
            async with mcp_client(server.url + "/mcp", OPERATOR) as client:
                await client.call_tool("ticker", {"input": "ticks=6"}, progress_callback=heard, meta=meta)
        assert cut_off.group_contains(MCPError, match="ended without a response", depth=None)
        [cut] = _runs_of(server.db)
        server.start()
        async with mcp_client(server.url + "/mcp", OPERATOR) as client:
            result = await client.call_tool("ticker", {"input": "ticks=6"}, meta=meta)
        assert result.structured_content is not None and result.structured_content["run_id"] == cut
        assert result.structured_content["status"] == "completed" and _text(result).startswith("Ticked 6 times")
        assert [r["run_id"] for r in _runs(server)] == [cut]
    finally:
        server.stop()


def _runs_of(db: Path) -> list[str]:
    """The runs the SQLite journal holds, read with no server up."""
    import sqlite3

    with sqlite3.connect(db) as connection:
        return [row[0] for row in connection.execute("SELECT DISTINCT run_id FROM events")]


async def test_an_eudaimon_agent_calls_a_served_agent_as_a_read_tool_whose_run_its_key_names(served: Server) -> None:
    """Invariant: eudaimon calling eudaimon over MCP keeps both promises: the served agent's
    annotations give the call its effect class (READ: safe to send again), and the call's own
    idempotency key names the remote run, so sending it again after a crash finds that run."""
    from eudaimon import Agent, Message, ToolCall
    from eudaimon.core.events import ToolStarted
    from eudaimon.mcp import Effect, MCPTools
    from eudaimon.models import ScriptedModel
    from eudaimon.server.auth import Principal, Role
    from eudaimon.server.runs import idempotent_run_id

    remote = MCPTools(url=served.url + "/mcp", headers={"Authorization": f"Bearer {OPERATOR}"}, trusted=True)
    ask = Message.assistant(tool_calls=[ToolCall("c1", "ticker", {"input": "ticks=2"})])
    caller = Agent(ScriptedModel([ask, "The ticker is done."]), tools=[remote], memory=None)
    try:
        response = await caller.prompt("Ask the ticker.", run_id="caller-1")
        records = {r.name: r.effect for r in await remote.list_tools()}
    finally:
        await remote.aclose()
    assert records == {"charger": Effect.WRITE, "payer": Effect.IRREVERSIBLE, "ticker": Effect.READ}
    assert response.text() == "The ticker is done."
    assert response.messages[-2].content.startswith("Ticked 2 times")
    [started] = [e.data for e in await caller.store.load("caller-1") if isinstance(e.data, ToolStarted)]
    alice = Principal("alice", Role.OPERATOR)
    with served.client(OPERATOR) as http:
        remote_run = http.get(f"/v1/runs/{idempotent_run_id(alice, 'ticker', started.idempotency_key)}").json()
    assert remote_run["status"] == "completed"


async def test_a_run_that_sleeps_until_later_answers_at_once_and_wakes_by_itself(tmp_path: Path) -> None:
    """Invariant: a durable wait (a tool's `RetryAfter`, which may be days) does not keep the
    caller: the call answers that the run sleeps and until when, not as an error; the run wakes
    and ends on the server with no caller, readable as its resource."""
    server = Server(
        tmp_path / "runs.db",
        env={"EUDAIMON_API_KEYS": KEYS, "EUDAIMON_TEST_WAIT_S": "2"},
        args=("--mcp", "--agent", "_timed_agents:napper"),
    ).start()
    try:
        async with mcp_client(server.url + "/mcp", OPERATOR) as client:
            result = await client.call_tool("napper", {"input": "the q3 report"})
            run = result.structured_content
            assert run is not None and not result.is_error
            assert run["status"] == "waiting"
            assert "sleeps until it tries again (fetch_report at " in _text(result)
            with server.client(OPERATOR) as http:
                wait_until(lambda: http.get(f"/v1/runs/{run['run_id']}").json()["status"] == "completed", "the wake")
            read = await client.read_resource(f"eudaimon://runs/{run['run_id']}")
        [contents] = read.contents
        assert isinstance(contents, mcp_types.TextResourceContents) and '"status": "completed"' in contents.text
    finally:
        server.stop()
