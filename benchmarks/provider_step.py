"""A step with a real provider (the `openai` SDK) as the history grows, beside Pydantic AI's.

`OpenAIModel` and Pydantic AI's `OpenAIChatModel` (both on the official `openai` SDK) talk to a
zero-latency Chat Completions server on 127.0.0.1, in a process of its own (this file, run as a
script). Each run carries a history of N messages and plays K model turns that each call one
READ tool `echo`, then answers "done". A step's cost is the marginal one, (T(K2) − T(K1)) /
(K2 − K1), so run start and end are left out; its overhead is that minus a raw `httpx2` POST of
the same body to the same server, measured in the same round. Judged on the CPU time of the
run's thread (the server is another process, so other processes barely move it); wall time is
reported beside it. Each run on a thread of its own, frameworks alternating within each round;
a figure is kept only when both answered "done" after K-1 tool calls. Also: what 1,000 runs of
100 fresh messages leave in one model's message cache.

Targets: eudaimon's overhead flat in the history (N=1000 ÷ N=10 ≤ 1.5); ≤ 1/3 of Pydantic AI's.
"""

from __future__ import annotations

import asyncio
import functools
import json
import re
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import _harness as h

ROUNDS = 1

K1 = 2
K2 = {"eudaimon": 22, "pydantic-ai": 8}
"""Turns of the long run: more for eudaimon, whose steps are short enough for noise to dominate
fewer; a step's marginal cost does not depend on K."""


# --- the server (this file run as a script, in its own process) ----------------------------------

_PATH = re.compile(rb"^POST /(\w+)/(\d+)/v1/chat/completions ")


def _completion(counter: int, k: int) -> bytes:
    if counter % k == k - 1:
        message: dict[str, Any] = {"role": "assistant", "content": "done"}
        finish = "stop"
    else:
        call = {"id": f"call_{counter}", "type": "function", "function": {"name": "echo", "arguments": '{"i": 1}'}}
        message, finish = {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
    body = {
        "id": f"chatcmpl-{counter}",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "gpt-4o-2024-08-06",
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
    }
    return json.dumps(body).encode()


def serve() -> None:
    """A Chat Completions server: for path /FW/K/v1/..., every K-th request of FW answers "done",
    the others call `echo`; /raw/1/v1/... always answers "done". Bodies are read, not parsed."""
    counters: dict[tuple[bytes, int], int] = {}

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                match = _PATH.match(head)
                length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))  # type: ignore[union-attr]
                await reader.readexactly(length)
                if match is None:
                    writer.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
                    continue
                key = (match.group(1), int(match.group(2)))
                counter = counters.get(key, 0)
                counters[key] = counter + 1
                body = _completion(counter, key[1])
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s"
                    % (len(body), body)
                )
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        print(server.sockets[0].getsockname()[1], flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)  # until the parent closes it

    asyncio.run(main())


# --- the histories ------------------------------------------------------------------------------

TEXT = "A sentence of history, as long as a short chat message usually is, give or take. "


def eudaimon_history(n: int) -> list[Any]:
    from eudaimon import Message

    return [
        Message.user(f"{i}: {TEXT}", id=f"h{i}") if i % 2 == 0 else Message.assistant(f"{i}: {TEXT}", id=f"h{i}")
        for i in range(n)
    ]


def pydantic_history(n: int) -> list[Any]:
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

    return [
        ModelRequest(parts=[UserPromptPart(f"{i}: {TEXT}")])
        if i % 2 == 0
        else ModelResponse(parts=[TextPart(f"{i}: {TEXT}")])
        for i in range(n)
    ]


# --- one run of each framework ------------------------------------------------------------------

Run = Callable[[str, int, int], Awaitable[tuple[str, int]]]
"""(base_url, n, k) -> (final text, tool calls made)."""


async def eudaimon_run(base_url: str, n: int, k: int) -> tuple[str, int]:
    from eudaimon import Agent, tool
    from eudaimon.models.openai import OpenAIModel

    calls = 0

    @tool(effect="read")
    async def echo(i: int) -> int:
        """Return `i`.

        Args:
            i: Any integer.
        """
        nonlocal calls
        calls += 1
        return i

    model = OpenAIModel("gpt-4o", api_key="sk-bench", base_url=base_url)
    agent = Agent(model, tools=[echo], memory=None, max_iterations=k + 1)
    try:
        response = await agent.prompt("go", message_history=eudaimon_history(n))
    finally:
        await model.aclose()
    return response.output if isinstance(response.output, str) else str(response.output), calls


async def pydantic_run(base_url: str, n: int, k: int) -> tuple[str, int]:
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider
    from pydantic_ai.usage import UsageLimits

    calls = 0
    provider = OpenAIProvider(base_url=base_url, api_key="sk-bench")
    agent = Agent(OpenAIChatModel("gpt-4o", provider=provider))

    @agent.tool_plain
    async def echo(i: int) -> int:
        """Return `i`."""
        nonlocal calls
        calls += 1
        return i

    result = await agent.run("go", message_history=pydantic_history(n), usage_limits=UsageLimits(request_limit=None))
    await provider.client.close()
    return str(result.output), calls


async def raw_calls(base_url: str, body: bytes, calls: int) -> tuple[float, float]:
    """(wall, CPU) seconds per POST of `body` over one keep-alive connection: the server and
    the transport."""
    import httpx2

    async with httpx2.AsyncClient(base_url=base_url) as client:
        headers = {"content-type": "application/json", "authorization": "Bearer sk-bench"}
        (await client.post("/chat/completions", content=body, headers=headers)).raise_for_status()
        start, cpu = time.perf_counter(), time.thread_time()
        for _ in range(calls):
            (await client.post("/chat/completions", content=body, headers=headers)).read()
        return (time.perf_counter() - start) / calls, (time.thread_time() - cpu) / calls


def timed_run(run: Run, url: str, n: int, k: int) -> tuple[float, float]:
    """(wall, CPU of the run's thread) seconds of one run, checked to have done the work."""

    async def go() -> tuple[float, float]:
        start, cpu = time.perf_counter(), time.thread_time()
        text, calls = await run(url, n, k)
        elapsed = time.perf_counter() - start, time.thread_time() - cpu
        if text != "done" or calls != k - 1:
            raise RuntimeError(f"{run.__name__} n={n} k={k}: answered {text!r} after {calls} tool calls")
        return elapsed

    return h.run_on_thread(go)


# --- memory -------------------------------------------------------------------------------------


def cache_memory(runs: int = 1000, n: int = 100) -> dict[str, float]:
    from eudaimon import Message
    from eudaimon.models._openai_body import encode_messages, message_cache

    cache = message_cache()
    tracemalloc.start()
    for r in range(runs):
        history = [Message.user(f"run {r} message {i}: {TEXT}", id=f"r{r}:{i}") for i in range(n)]
        for step in range(1, n + 1, 10):
            encode_messages(history[:step], cache)
        del history
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "cache after 1,000 runs × 100 messages / entries": len(cache),
        "cache after 1,000 runs × 100 messages / MiB of JSON": cache.nbytes / 2**20,
        "cache after 1,000 runs × 100 messages / MiB traced, held after": current / 2**20,
        "cache after 1,000 runs × 100 messages / MiB traced, peak": peak / 2**20,
    }


# --- the workload ------------------------------------------------------------------------------


def measure(quick: bool) -> dict[str, Any]:
    h.requires("openai", "pydantic_ai")
    server = subprocess.Popen(
        [sys.executable, str(Path(__file__))], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        figures = steps(port, [10, 100] if quick else [10, 100, 1000], 1 if quick else 5)
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=10)
    return figures if quick else {**figures, **cache_memory()}


def steps(port: int, ns: list[int], rounds: int) -> dict[str, Any]:
    from eudaimon.models._openai_convert import to_openai_messages

    frameworks: dict[str, Run] = {"eudaimon": eudaimon_run, "pydantic-ai": pydantic_run}

    def dumps(value: Any) -> bytes:  # as the SDK encodes a body
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()

    figures: dict[str, Any] = {"N": ns}
    for n in ns:
        h.say(f"history of {n}")
        body = dumps({"messages": to_openai_messages(eudaimon_history(n)), "model": "gpt-4o"})
        for name, run in frameworks.items():  # warm up: imports, schema builds
            timed_run(run, f"http://127.0.0.1:{port}/warm{name.replace('-', '')}/{K1}/v1", n, K1)
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name in frameworks}
        raw: list[tuple[float, float]] = []
        for r in range(rounds):
            raw.append(h.run_on_thread(functools.partial(raw_calls, f"http://127.0.0.1:{port}/raw/1/v1", body, 20)))
            for name, run in h.rotate(list(frameworks.items()), r):
                prefix = name.replace("-", "")
                short = timed_run(run, f"http://127.0.0.1:{port}/{prefix}/{K1}/v1", n, K1)
                k2 = K2[name]
                long = timed_run(run, f"http://127.0.0.1:{port}/{prefix}/{k2}/v1", n, k2)
                samples[name].append(((long[0] - short[0]) / (k2 - K1), (long[1] - short[1]) / (k2 - K1)))
        raw_wall, raw_cpu = h.median([w for w, _ in raw]) * 1e6, h.median([c for _, c in raw]) * 1e6
        figures[f"N={n} / raw POST CPU µs"] = raw_cpu
        for name in frameworks:
            cpu = h.median([c for _, c in samples[name]]) * 1e6
            figures[f"N={n} / {name} overhead CPU µs/step"] = cpu - raw_cpu
            figures[f"N={n} / {name} overhead wall µs/step"] = h.median([w for w, _ in samples[name]]) * 1e6 - raw_wall
    del figures["N"]
    figures["largest N"] = ns[-1]
    return figures


def targets(f: dict[str, Any]) -> list[h.Target]:
    last = int(f["largest N"])
    first, end = f["N=10 / eudaimon overhead CPU µs/step"], f[f"N={last} / eudaimon overhead CPU µs/step"]
    peer = f[f"N={last} / pydantic-ai overhead CPU µs/step"]
    return [
        h.Target(
            f"provider step overhead flat in the history (N={last} ÷ N=10)",
            end / first,
            1.5,
            f"{end:.0f} ÷ {first:.0f} µs CPU",
        ),
        h.Target(
            f"provider step overhead ≤ 1/3 of Pydantic AI's at N={last}",
            end / peer,
            1 / 3,
            f"{end:.0f} ÷ {peer:.0f} µs CPU",
        ),
    ]


if __name__ == "__main__":
    serve()
