"""A web front end on another origin, named with `--allowed-origin`, runs an agent from a real
browser: its page `fetch`es `POST /v1/agents/{agent}/ag-ui` (JSON, so a CORS preflight first)
and reads the AG-UI stream to RUN_FINISHED. The same page from an origin not named is refused
(the fetch fails, nothing is journaled), and gets no CORS header. Keys and roles still apply.

The server is a real `eudaimon serve --ag-ui --a2a --mcp --allowed-origin …`; the front ends are
plain HTTP servers on other ports of 127.0.0.1 (other origins), opened in real Chromium.
"""

from __future__ import annotations

import http.server
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _a2a_support import A2AServer
from _server_support import KEYS, OPERATOR, VIEWER, Server
from playwright.sync_api import Page

RUN_AGENT = """async ([url, body]) => {
  try {
    const response = await fetch(url, {
      method: "POST", body: JSON.stringify(body),
      headers: {"Content-Type": "application/json", "Accept": "text/event-stream"},
    });
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    const types = [];
    let buffer = "";
    for (;;) {
      const {value, done} = await reader.read();
      if (done) return {status: response.status, types, ended: false};
      buffer += decoder.decode(value, {stream: true});
      const lines = buffer.split("\\n");
      buffer = lines.pop();
      for (const line of lines) {
        if (!line.startsWith("data: ")) continue;
        const event = JSON.parse(line.slice(6));
        types.push(event.type);
        if (event.type === "RUN_FINISHED" || event.type === "RUN_ERROR") {
          await reader.cancel();
          return {status: response.status, types, ended: true, runId: event.runId};
        }
      }
    }
  } catch (error) {
    return {failed: error.name + ": " + error.message};
  }
}"""


class FrontEnd:
    """An HTTP server of one blank page: a web front end's origin."""

    def __init__(self) -> None:
        class Page(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = b"<!doctype html><title>front end</title><p>front end</p>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.served = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
        self.origin = f"http://127.0.0.1:{self.served.server_address[1]}"
        threading.Thread(target=self.served.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.served.shutdown()
        self.served.server_close()


@pytest.fixture(scope="module")
def front_ends() -> Iterator[tuple[FrontEnd, FrontEnd]]:
    """(the allowed front end, a stranger): two origins, the first named to the server."""
    allowed, stranger = FrontEnd(), FrontEnd()
    yield allowed, stranger
    allowed.close()
    stranger.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, front_ends: tuple[FrontEnd, FrontEnd]) -> Iterator[A2AServer]:
    running = A2AServer(
        tmp_path_factory.mktemp("allowed-origin") / "runs.db",
        agents=("_server_agents:ticker",),
        args=("--ag-ui", "--a2a", "--mcp", "--allowed-origin", front_ends[0].origin),
    ).start()
    yield running
    running.stop()


def _run_input(run_id: str) -> dict[str, Any]:
    """A RunAgentInput as an AG-UI client (CopilotKit's HttpAgent) sends it."""
    return {
        "threadId": f"thread-{run_id}",
        "runId": run_id,
        "messages": [{"id": "u1", "role": "user", "content": "ticks=2"}],
        "state": {},
        "tools": [],
        "context": [],
        "forwardedProps": {},
    }


def test_an_allowed_front_end_runs_an_agent_and_reads_its_stream(
    served: A2AServer, front_ends: tuple[FrontEnd, FrontEnd], page: Page
) -> None:
    """Invariant: a page on an `--allowed-origin` origin `fetch`es the AG-UI endpoint (its CORS
    preflight answered) and reads the stream from RUN_STARTED to RUN_FINISHED; the run is journaled."""
    run_id = f"cors-{uuid.uuid4().hex[:12]}"
    page.goto(front_ends[0].origin + "/")
    result = page.evaluate(RUN_AGENT, [f"{served.url}/v1/agents/ticker/ag-ui", _run_input(run_id)])
    assert "failed" not in result, result
    assert result["status"] == 200 and result["ended"], result
    assert result["types"][0] == "RUN_STARTED" and result["types"][-1] == "RUN_FINISHED", result
    assert result["runId"] == run_id and "TOOL_CALL_RESULT" in result["types"]
    with served.client() as client:
        run = client.get(f"/v1/runs/{run_id}").json()
    assert run["status"] == "completed" and run["thread_id"] == f"thread-{run_id}", run


def test_the_same_page_on_another_origin_is_refused_and_nothing_is_journaled(
    served: A2AServer, front_ends: tuple[FrontEnd, FrontEnd], page: Page
) -> None:
    """Invariant: from an origin not named, the browser's fetch fails (its preflight gets no CORS
    header) and no run is journaled; the POST itself, sent without a browser, is refused (403)."""
    run_id = f"cors-{uuid.uuid4().hex[:12]}"
    stranger = front_ends[1].origin
    page.goto(stranger + "/")
    result = page.evaluate(RUN_AGENT, [f"{served.url}/v1/agents/ticker/ag-ui", _run_input(run_id)])
    assert result.get("failed", "").startswith("TypeError"), result
    with served.client() as client:
        assert client.get(f"/v1/runs/{run_id}").status_code == 404
        refused = client.post("/v1/agents/ticker/ag-ui", json=_run_input(run_id), headers={"Origin": stranger})
        assert refused.status_code == 403 and "access-control-allow-origin" not in refused.headers
        assert client.get(f"/v1/runs/{run_id}").status_code == 404


SEND_AS_TEXT = """async (url) => {
  try {
    const response = await fetch(url, {method: "POST", body: "{}", headers: {"Content-Type": "text/plain"}});
    return {status: response.status, answer: await response.json()};
  } catch (error) {
    return {failed: error.name + ": " + error.message};
  }
}"""


def test_an_allowed_front_end_reads_why_the_guard_refused_it(
    served: A2AServer, front_ends: tuple[FrontEnd, FrontEnd], page: Page
) -> None:
    """Invariant: a refusal by the guard itself (here 415, a body not sent as JSON: a "simple"
    request, so no preflight) reaches an allowed front end with its CORS header, so the page
    reads the status and what to do instead of an opaque network error; a stranger's page
    still reads nothing."""
    url = f"{served.url}/v1/agents/ticker/runs"
    page.goto(front_ends[0].origin + "/")
    result = page.evaluate(SEND_AS_TEXT, url)
    assert result.get("status") == 415, result
    assert "application/json" in result["answer"]["detail"], result
    page.goto(front_ends[1].origin + "/")
    assert page.evaluate(SEND_AS_TEXT, url).get("failed", "").startswith("TypeError")
    with served.client() as client:
        answer = client.post(url, content=b"{}", headers={"Origin": front_ends[0].origin, "Content-Type": "text/plain"})
        assert answer.status_code == 415 and answer.headers["access-control-allow-origin"] == front_ends[0].origin
        assert answer.headers["vary"] == "Origin"


PREFLIGHT = {"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type,authorization"}


def test_cors_is_answered_only_for_the_allowed_origin(served: A2AServer, front_ends: tuple[FrontEnd, FrontEnd]) -> None:
    """Invariant: a preflight from the allowed origin (AG-UI and A2A paths) is answered with its
    origin echoed, the methods and headers a front end sends; from another origin, with no
    `Access-Control-Allow-Origin`; a plain GET from it neither. The `Host` check still applies."""
    allowed, stranger = front_ends[0].origin, front_ends[1].origin
    with served.client() as client:
        for path in ("/v1/agents/ticker/ag-ui", "/a2a/ticker", "/v1/runs/x/cancel", "/mcp"):
            answer = client.options(path, headers={"Origin": allowed, **PREFLIGHT})
            assert answer.status_code == 200, (path, answer.text)
            assert answer.headers["access-control-allow-origin"] == allowed
            assert {"GET", "POST", "DELETE"} <= set(answer.headers["access-control-allow-methods"].split(", "))
            sent = {h.strip().lower() for h in answer.headers["access-control-allow-headers"].split(",")}
            want = {
                "content-type",
                "authorization",
                "x-api-key",
                "idempotency-key",
                "last-event-id",
                "accept",
                "a2a-version",
                "mcp-protocol-version",
            }
            assert want <= sent, sent
            refused = client.options(path, headers={"Origin": stranger, **PREFLIGHT})
            assert "access-control-allow-origin" not in refused.headers, path
        assert client.get("/v1/runs", headers={"Origin": allowed}).headers["access-control-allow-origin"] == allowed
        assert "access-control-allow-origin" not in client.get("/v1/runs", headers={"Origin": stranger}).headers
        rebound = client.options("/v1/runs", headers={"Origin": allowed, "Host": "attacker.example", **PREFLIGHT})
        assert rebound.status_code == 421


def test_an_allowed_origin_still_needs_a_key_and_a_role(tmp_path: Path) -> None:
    """Invariant: on a server with keys, a request from an allowed origin without a key is 401
    (with CORS headers, so the front end can read why), with a viewer key may not act (403),
    with an operator key acts."""
    origin = "http://localhost:3000"
    keyed = Server(tmp_path / "runs.db", env={"EUDAIMON_API_KEYS": KEYS}, args=("--allowed-origin", origin)).start()
    try:
        start = {"input": "ticks=1"}
        with keyed.client() as anonymous:
            answer = anonymous.post("/v1/agents/ticker/runs", json=start, headers={"Origin": origin})
            assert answer.status_code == 401 and answer.headers["access-control-allow-origin"] == origin
        with keyed.client(VIEWER) as viewer:
            assert viewer.post("/v1/agents/ticker/runs", json=start, headers={"Origin": origin}).status_code == 403
        with keyed.client(OPERATOR) as operator:
            started = operator.post("/v1/agents/ticker/runs", json=start, headers={"Origin": origin})
            assert started.status_code in (200, 201, 202), started.text
            assert started.headers["access-control-allow-origin"] == origin
    finally:
        keyed.stop()


def test_serve_refuses_a_wildcard_without_keys_and_a_malformed_origin(tmp_path: Path) -> None:
    """Invariant: `eudaimon serve --allowed-origin '*'` without keys exits saying why; a value
    that is not an origin exits saying what is wrong with it."""
    for value, why in (("*", "any web page"), ("http://localhost:3000/", "trailing '/'")):
        refused = Server(tmp_path / "runs.db", args=("--allowed-origin", value)).start(wait=False)
        assert refused.process is not None
        assert refused.process.wait(60) != 0
        assert why in refused.output(), refused.output()


SEND_MESSAGE = """async ([agent, request, readCard]) => {
  try {
    const card = readCard ? await (await fetch(agent + "/.well-known/agent-card.json")).json() : {};
    const response = await fetch(agent, {
      method: "POST",
      headers: {"Content-Type": "application/json", "A2A-Version": "1.0"},
      body: JSON.stringify({jsonrpc: "2.0", id: 1, method: "SendMessage", params: request}),
    });
    return {card: card.name, status: response.status, answer: await response.json()};
  } catch (error) {
    return {failed: error.name + ": " + error.message};
  }
}"""


def test_a_browser_a2a_client_on_an_allowed_origin_reads_the_card_and_sends_a_message(
    served: A2AServer, front_ends: tuple[FrontEnd, FrontEnd], page: Page
) -> None:
    """Invariant: a page on the allowed origin reads the agent's card and sends an A2A 1.0
    `SendMessage` (JSON-RPC, with the `A2A-Version` header a 1.0 client sends): the task is a
    journaled run. The same page on another origin cannot send it (its preflight is refused):
    no run on its context."""
    from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest
    from google.protobuf import json_format

    context = f"ctx-{uuid.uuid4().hex[:12]}"
    message = Message(
        message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=[Part(text="ticks=1")], context_id=context
    )
    request = json_format.MessageToDict(SendMessageRequest(message=message))
    page.goto(front_ends[0].origin + "/")
    result = page.evaluate(SEND_MESSAGE, [served.agent_url("ticker"), request, True])
    assert result.get("card") == "ticker" and result["status"] == 200, result
    task = result["answer"]["result"]["task"]
    assert task["contextId"] == context, result
    with served.client() as client:
        assert client.get(f"/v1/runs/{task['id']}").json()["thread_id"] == context
        assert [run["run_id"] for run in client.get("/v1/runs", params={"thread_id": context}).json()["runs"]] == [
            task["id"]
        ]
    page.goto(front_ends[1].origin + "/")
    other = f"ctx-{uuid.uuid4().hex[:12]}"
    message.context_id, message.message_id = other, uuid.uuid4().hex
    refused = page.evaluate(
        SEND_MESSAGE, [served.agent_url("ticker"), json_format.MessageToDict(SendMessageRequest(message=message))]
    )
    assert refused.get("failed", "").startswith("TypeError"), refused
    with served.client() as client:
        assert client.get("/v1/runs", params={"thread_id": other}).json()["runs"] == []


CALL_MCP = """async ([url, request]) => {
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                "Mcp-Protocol-Version": "2025-11-25"},
      body: JSON.stringify(request),
    });
    const text = await response.text();
    const data = text.split("\\n").filter((line) => line.startsWith("data: ")).map((line) => JSON.parse(line.slice(6)));
    return {status: response.status, answers: data};
  } catch (error) {
    return {failed: error.name + ": " + error.message};
  }
}"""


def test_a_browser_mcp_client_on_an_allowed_origin_calls_an_agent(
    served: A2AServer, front_ends: tuple[FrontEnd, FrontEnd], page: Page
) -> None:
    """Invariant: a page on the allowed origin (a browser MCP client, such as an MCP inspector)
    sends its protocol version header through the preflight and calls an agent over MCP; the
    stranger's page is refused and starts nothing."""
    asked = f"ticks=1 from the page {uuid.uuid4().hex[:8]}"
    call = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "ticker", "arguments": {"input": asked}},
    }
    page.goto(front_ends[0].origin + "/")
    result = page.evaluate(CALL_MCP, [f"{served.url}/mcp", call])
    assert result.get("status") == 200, result
    [answer] = [a for a in result["answers"] if a.get("id") == 7]
    assert answer["result"]["structuredContent"]["status"] == "completed", answer
    run_id = answer["result"]["structuredContent"]["run_id"]
    page.goto(front_ends[1].origin + "/")
    assert page.evaluate(CALL_MCP, [f"{served.url}/mcp", call]).get("failed", "").startswith("TypeError")
    with served.client() as client:
        runs = client.get("/v1/runs", params={"agent": "ticker", "q": asked}).json()["runs"]
    assert [r["run_id"] for r in runs] == [run_id]


DELETE_SCHEDULE = """async (url) => {
  try {
    const response = await fetch(url, {method: "DELETE"});
    return {status: response.status};
  } catch (error) {
    return {failed: error.name + ": " + error.message};
  }
}"""


def test_an_allowed_front_end_removes_a_schedule(
    served: A2AServer, front_ends: tuple[FrontEnd, FrontEnd], page: Page
) -> None:
    """Invariant: the API's DELETE (removing a schedule) passes the preflight of an allowed
    front end (it was refused: only GET and POST were allowed), and a stranger's is still refused."""
    with served.client() as client:
        for sid in ("from-front-end", "from-stranger"):
            body = {"schedule_id": sid, "agent": "ticker", "cron": "0 9 * * *", "input": "x"}
            added = client.post("/v1/schedules", json=body)
            assert added.status_code == 201, added.text
    page.goto(front_ends[0].origin + "/")
    assert page.evaluate(DELETE_SCHEDULE, f"{served.url}/v1/schedules/from-front-end") == {"status": 204}
    page.goto(front_ends[1].origin + "/")
    assert (
        page.evaluate(DELETE_SCHEDULE, f"{served.url}/v1/schedules/from-stranger")
        .get("failed", "")
        .startswith("TypeError")
    )
    with served.client() as client:
        left = [s["id"] for s in client.get("/v1/schedules").json()["schedules"]]
    assert "from-front-end" not in left and "from-stranger" in left
