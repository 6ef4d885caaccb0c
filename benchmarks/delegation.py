"""What a tool reached over MCP, a child run, and an agent called over A2A cost a step, against local work.

Parents run the same K-step loop (K-1 model turns that each call one tool, then an answer) on
zero-latency models, each on a `MemoryStore` of its own:

- local: an async READ tool `echo(i)` in the process;
- mcp: the same `echo` served by an MCP server over stdio (`_echo_mcp_server.py`, connected
  before timing, as an agent does before its first run);
- inline: a tool that answers at once (the floor: what a delegated call replaces);
- child: `helper.as_tool()`, each call a child run of one model turn in the parent's store;
- a2a: `A2AAgent(url)`, the same helper served by `create_app(helper, a2a=True)` on uvicorn in a
  subprocess (this file run as a script, its own `MemoryStore`): the card fetched once, then per
  call a streamed `SendMessage` whose stream carries the task to its end.

Rounds alternate the variants (the first round warms up); all run on one event loop of a thread
of its own, which the MCP and A2A connections belong to. Reported: each variant's median µs
per step, and the µs a call adds above its floor (mcp over local; child and a2a over inline).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

import _harness as h

ROUNDS = 1
HELPER = "helper"


def helper(store: Any) -> Any:
    from eudaimon import Agent
    from eudaimon.models import ChatRequest, FunctionModel

    def answer(request: ChatRequest) -> str:
        return "answer"

    return Agent(FunctionModel(answer, "helper-model"), name=HELPER, store=store, memory=None)


def serve(port: int) -> None:
    """The A2A side: the helper on a real uvicorn server."""
    import uvicorn

    from eudaimon.server import create_app

    app = create_app(helper("memory:"), a2a=True, recover=False)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def start_a2a_server() -> tuple[Any, str]:
    import subprocess

    import httpx

    port = h.free_port()
    process = subprocess.Popen([sys.executable, __file__, str(port)])
    url = f"http://127.0.0.1:{port}"
    for _ in range(400):
        try:
            if httpx.get(url + "/health", timeout=1).status_code == 200:
                return process, f"{url}/a2a/{HELPER}"
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    process.kill()
    raise RuntimeError("the A2A server did not start")


async def variants(k: int, rounds: int, a2a_url: str) -> dict[str, list[float]]:
    from eudaimon import Agent, Message, ToolCall, tool
    from eudaimon.a2a import A2AAgent
    from eudaimon.mcp import MCPTools
    from eudaimon.models import ScriptedModel
    from eudaimon.stores import MemoryStore

    @tool(effect="read")
    async def echo(i: int) -> int:
        """Return `i`."""
        return i

    @tool(effect="read")
    async def ask(input: str) -> str:
        """Answer at once."""
        return "answer"

    def parent(name: str, tools: list[Any]) -> Agent:
        args: Callable[[int], dict[str, Any]] = (lambda i: {"i": i}) if name == "echo" else (lambda i: {"input": "q"})
        script: list[Message | str] = [
            Message.assistant(None, [ToolCall(f"c{i}", name, args(i))]) for i in range(k - 1)
        ]
        return Agent(ScriptedModel([*script, "done"]), tools=tools, store=MemoryStore(), max_iterations=k)

    mcp = MCPTools(command=[sys.executable, str(h.HERE / "_echo_mcp_server.py")], trusted=True)
    await mcp.list_tools()  # connect before timing, as an agent does before its first run
    helper_store = MemoryStore()
    remote = A2AAgent(a2a_url, name=HELPER)
    makers: dict[str, Callable[[], Agent]] = {
        "local": lambda: parent("echo", [echo]),
        "mcp (stdio)": lambda: parent("echo", [mcp]),
        "inline": lambda: parent("ask", [ask]),
        "child run": lambda: parent(HELPER, [helper(helper_store).as_tool()]),
        "a2a": lambda: parent(HELPER, [remote]),
    }
    times: dict[str, list[float]] = {name: [] for name in makers}
    try:
        for r in range(rounds + 1):
            for name in h.rotate(list(makers), r):
                agent = makers[name]()
                started = time.perf_counter()
                response = await agent.prompt("go", thread_id=f"bench-{name}-{r}")
                elapsed = time.perf_counter() - started
                assert response.status == "completed", (name, response.status)
                if r:  # the first round warms up (and fetches the card)
                    times[name].append(elapsed / k * 1e6)
    finally:
        await mcp.aclose()
    return times


def measure(quick: bool) -> dict[str, Any]:
    h.requires("mcp", "a2a", "uvicorn", "fastapi")
    k, rounds = (10, 2) if quick else (30, 7)
    process, url = start_a2a_server()
    try:
        times = h.run_on_thread(lambda: variants(k, rounds, url))
    finally:
        h.stop(process, 10)
    us = {name: h.median(values) for name, values in times.items()}
    figures: dict[str, Any] = {f"{name} µs/step": value for name, value in us.items()}
    per_call = k / (k - 1)
    figures["mcp call above local µs"] = (us["mcp (stdio)"] - us["local"]) * per_call
    figures["child run above inline µs"] = (us["child run"] - us["inline"]) * per_call
    figures["a2a call above inline µs"] = (us["a2a"] - us["inline"]) * per_call
    return figures


if __name__ == "__main__":
    serve(int(sys.argv[1]))
