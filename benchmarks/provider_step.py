"""What a step with a real provider costs the framework, as the history grows (issue 20).

`OpenAIModel` and Pydantic AI's `OpenAIChatModel` (both on the official `openai` SDK) talk to a
zero-latency Chat Completions server on 127.0.0.1, in a process of its own so its work does
not share the client's interpreter. Each run carries a history of N messages and plays K model
turns that each call one READ tool `echo`, then answers "done". A step's cost is the marginal
one, (T(K2) − T(K1)) / (K2 − K1), so run start and end (and the first conversion of the
history) are left out. The overhead is that minus a raw `httpx2` POST of the same body to the
same server (the server's own time and the transport), measured in the same run. Two clocks:
the CPU time of the run's thread (the server runs in another process, so this is the client's
own work, and other processes on a shared machine barely move it: the figure the targets are
judged on) and wall time (reported beside it; noisy when the machine is shared).

Each run has a thread of its own (`asyncio.run` in a fresh thread), frameworks alternate
within each round, and a figure is accepted only when both answered "done" after the same
number of tool calls and the server saw the requests it should have.

`--memory` also pushes 1,000 runs of 100 fresh messages through one `OpenAIModel`'s cache and
reports what it holds (entries, bytes, traced memory).

    benchmarks/.peers/bin/python benchmarks/provider_step.py [--ns 10 100 1000] [--rounds 5]
    .venv/bin/python benchmarks/provider_step.py --no-peer      # eudaimon alone
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import threading
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from typing import Any

FLAT_RATIO = 1.5
PEER_SHARE = 1 / 3
K1 = 2
K2 = {"eudaimon": 22, "pydantic-ai": 8}
"""Turns of the long run: more for eudaimon, whose steps are short enough for noise to dominate
fewer; a step's marginal cost does not depend on K."""


# --- the server (run with --serve, in its own process) -------------------------------------------

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


def in_thread(coro: Callable[[], Awaitable[Any]]) -> Any:
    """Run `coro()` with `asyncio.run` in a fresh thread: each run its own thread and loop."""
    out: list[Any] = []

    def body() -> None:
        out.append(asyncio.run(coro()))  # type: ignore[arg-type]

    thread = threading.Thread(target=body, name="bench-run")
    thread.start()
    thread.join()
    return out[0]


def timed_run(run: Run, url: str, n: int, k: int) -> tuple[float, float]:
    """(wall, CPU of the run's thread) seconds of one run, checked to have done the work."""

    async def go() -> tuple[float, float]:
        start, cpu = time.perf_counter(), time.thread_time()
        text, calls = await run(url, n, k)
        elapsed = time.perf_counter() - start, time.thread_time() - cpu
        if text != "done" or calls != k - 1:
            raise RuntimeError(f"{run.__name__} n={n} k={k}: answered {text!r} after {calls} tool calls")
        return elapsed

    result: tuple[float, float] = in_thread(go)
    return result


# --- memory -------------------------------------------------------------------------------------


def memory_report(runs: int = 1000, n: int = 100) -> str:
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
    return (
        f"memory: {runs} runs x {n} messages through one OpenAIModel's cache: {len(cache)} entries kept, "
        f"{cache.nbytes / 2**20:.1f} MiB of JSON; traced {current / 2**20:.1f} MiB held after, peak {peak / 2**20:.1f} MiB"
    )


# --- main ---------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--ns", type=int, nargs="+", default=[10, 100, 1000], help="history lengths")
    parser.add_argument("--rounds", type=int, default=5, help="rounds; medians are reported")
    parser.add_argument("--no-peer", action="store_true", help="eudaimon only (no Pydantic AI installed)")
    parser.add_argument("--memory", action="store_true", help="also report the cache's memory after 1,000 runs")
    args = parser.parse_args()
    if args.serve:
        serve()
        return
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        report(port, args)
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=10)


def report(port: int, args: argparse.Namespace) -> None:
    from importlib.metadata import version

    frameworks: dict[str, Run] = {"eudaimon": eudaimon_run}
    if not args.no_peer:
        frameworks["pydantic-ai"] = pydantic_run
    names = ", ".join(
        f"{n} {version(d)}"
        for n, d in [("eudaimon", "eudaimon"), ("openai", "openai")]
        + ([("pydantic-ai", "pydantic-ai-slim")] if not args.no_peer else [])
    )
    import eudaimon

    print(f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores (shared); {names}")
    print(f"eudaimon from {os.path.dirname(eudaimon.__file__)}")
    print(f"K1={K1}, K2={K2} model turns a run; {args.rounds} rounds; figures are medians in µs per step")
    from eudaimon.models._openai_convert import to_openai_messages

    def dumps(value: Any) -> bytes:  # as the SDK encodes a body (and runs on main's eudaimon too)
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()

    wall: dict[tuple[str, int], float] = {}
    cpu: dict[tuple[str, int], float] = {}
    for n in args.ns:
        body = dumps({"messages": to_openai_messages(eudaimon_history(n)), "model": "gpt-4o"})
        for name, run in frameworks.items():  # warm up: imports, schema builds
            timed_run(run, f"http://127.0.0.1:{port}/warm{name.replace('-', '')}/{K1}/v1", n, K1)
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name in frameworks}
        raw: list[tuple[float, float]] = []
        for _ in range(args.rounds):
            raw.append(in_thread(functools.partial(raw_calls, f"http://127.0.0.1:{port}/raw/1/v1", body, 20)))
            for name, run in frameworks.items():
                prefix = name.replace("-", "")
                short = timed_run(run, f"http://127.0.0.1:{port}/{prefix}/{K1}/v1", n, K1)
                k2 = K2[name]
                long = timed_run(run, f"http://127.0.0.1:{port}/{prefix}/{k2}/v1", n, k2)
                samples[name].append(((long[0] - short[0]) / (k2 - K1), (long[1] - short[1]) / (k2 - K1)))
        wall[("raw", n)] = statistics.median(r[0] for r in raw)
        cpu[("raw", n)] = statistics.median(r[1] for r in raw)
        for name in frameworks:
            wall[(name, n)] = statistics.median(s[0] for s in samples[name])
            cpu[(name, n)] = statistics.median(s[1] for s in samples[name])
        print(
            f"  n={n}: raw POST {wall[('raw', n)] * 1e6:.0f} µs wall / {cpu[('raw', n)] * 1e6:.0f} µs CPU; "
            + ", ".join(f"{f} {wall[(f, n)] * 1e6:.0f} / {cpu[(f, n)] * 1e6:.0f} µs a step" for f in frameworks),
            flush=True,
        )
    for label, figures in (("CPU of the client thread", cpu), ("wall", wall)):
        print(f"\n{label}, µs per step (overhead = step − raw POST of the same body)")
        print("| history | raw POST | " + " | ".join(f"{f} step | {f} overhead" for f in frameworks) + " |")
        print("|---:|---:|" + "---:|---:|" * len(frameworks))
        for n in args.ns:
            raw_us = figures[("raw", n)] * 1e6
            cells = [f"{figures[(f, n)] * 1e6:.0f} | {figures[(f, n)] * 1e6 - raw_us:.0f}" for f in frameworks]
            print(f"| {n} | {raw_us:.0f} | " + " | ".join(cells) + " |")
        first, last = args.ns[0], args.ns[-1]

        def overhead(f: str, n: int, figures: dict[tuple[str, int], float] = figures) -> float:
            return figures[(f, n)] - figures[("raw", n)]

        ratio = overhead("eudaimon", last) / overhead("eudaimon", first)
        verdict = "PASS" if ratio <= FLAT_RATIO else "MISS"
        print(f"eudaimon flat ({label}): overhead n={last} / n={first} = {ratio:.2f} (≤ {FLAT_RATIO}): {verdict}")
        if "pydantic-ai" in frameworks:
            for n in args.ns:
                share = overhead("eudaimon", n) / overhead("pydantic-ai", n)
                verdict = "PASS" if share <= PEER_SHARE else "MISS"
                print(
                    f"eudaimon / pydantic-ai overhead ({label}) at n={n}: {share:.3f} (≤ {PEER_SHARE:.3f}): {verdict}"
                )
    if args.memory:
        print(memory_report())


if __name__ == "__main__":
    main()
