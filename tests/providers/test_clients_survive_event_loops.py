"""Provider models work on every event loop they meet, and leave no connection open behind.

Bug (issue 26): the SDK client was built once and bound to the first loop, so the second
`prompt_sync` (a new `asyncio.run`) raised "Event loop is closed". Each loop now gets its own
client, closed when that loop shuts down (or the model is closed): the fake server counts the
connections clients still hold open.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from _fake_providers import FakeAnthropic, FakeOpenAI, FakeProvider
from _wire import ask
from openai import AsyncOpenAI

from eudaimon import Agent
from eudaimon.core.errors import ConfigurationError
from eudaimon.models import Model
from eudaimon.models.anthropic import AnthropicModel
from eudaimon.models.fallback import FallbackModel
from eudaimon.models.openai import OpenAIModel
from eudaimon.models.registry import infer_model

OPENAI_KEY = "sk-test-openai-loops"
ANTHROPIC_KEY = "sk-ant-test-loops"


def settled_open(server: FakeProvider) -> int:
    """The connections still open once the server has seen every hang-up (within 5 s)."""
    deadline = time.monotonic() + 5
    while server.open_connections and time.monotonic() < deadline:
        time.sleep(0.01)
    return len(server.open_connections)


def answer(openai: FakeOpenAI, anthropic: FakeAnthropic, times: int, *, stream: bool = False) -> None:
    for _ in range(times):
        if stream:
            openai.reply(
                openai.stream([openai.chunk({"role": "assistant", "content": "from openai"}, finish_reason="stop")])
            )
            anthropic.reply(
                anthropic.stream(
                    [anthropic.message_start(), *anthropic.text_block(0, ["from anthropic"]), *anthropic.message_end()]
                )
            )
        else:
            openai.reply(openai.completion("from openai"))
            anthropic.reply(anthropic.message([{"type": "text", "text": "from anthropic"}]))


MODELS: dict[str, Callable[[FakeOpenAI, FakeAnthropic, pytest.MonkeyPatch], Model]] = {
    "openai": lambda o, a, mp: OpenAIModel("gpt-test", api_key=OPENAI_KEY, base_url=o.url),
    "openai-compatible": lambda o, a, mp: (
        mp.setenv("OPENAI_COMPATIBLE_BASE_URL", o.url),
        infer_model("openai-compatible:local"),
    )[1],
    "ollama": lambda o, a, mp: (mp.setenv("OLLAMA_BASE_URL", o.url), infer_model("ollama:llama3.2"))[1],
    "anthropic": lambda o, a, mp: AnthropicModel("claude-test", api_key=ANTHROPIC_KEY, base_url=a.url),
    "fallback": lambda o, a, mp: FallbackModel(
        [OpenAIModel("gpt-test", api_key=OPENAI_KEY, base_url=o.url), "anthropic:claude-test"]
    ),
}


@pytest.fixture(params=sorted(MODELS))
def model(request: Any, openai_server: FakeOpenAI, anthropic_server: FakeAnthropic, monkeypatch: Any) -> Model:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic_server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    return MODELS[request.param](openai_server, anthropic_server, monkeypatch)


def test_prompt_sync_again_and_again_on_an_openai_compatible_server(openai_server, monkeypatch):
    """The issue's reproduction: three `prompt_sync` calls on `Agent("openai-compatible:…")`."""
    monkeypatch.setenv("OPENAI_COMPATIBLE_BASE_URL", openai_server.url)
    agent = Agent("openai-compatible:local", memory=None)
    for n in range(3):
        openai_server.reply(openai_server.completion(f"answer {n}"))
    texts = [agent.prompt_sync(f"question {n}").text() for n in range(3)]
    assert texts == ["answer 0", "answer 1", "answer 2"]
    assert settled_open(openai_server) == 0, "each prompt_sync's client is closed when its loop ends"


def test_asyncio_run_twice_for_every_provider(model, openai_server, anthropic_server):
    """`asyncio.run(agent.prompt(…))` twice, streaming and not, for every SDK-backed model."""
    agent = Agent(model, memory=None)
    answer(openai_server, anthropic_server, 2)
    first = asyncio.run(agent.prompt("one"))
    second = asyncio.run(agent.prompt("two"))
    answer(openai_server, anthropic_server, 1, stream=True)
    streamed = asyncio.run(_streamed_text(agent, "three"))
    assert first.text() == second.text() != ""
    assert streamed == first.text()
    assert settled_open(openai_server) == 0
    assert settled_open(anthropic_server) == 0


async def _streamed_text(agent: Agent[Any, Any], text: str) -> str:
    from eudaimon.streaming import TextDelta

    return "".join([e.text async for e in agent.prompt_stream(text) if isinstance(e, TextDelta)])


def test_threads_each_with_their_own_loop_share_one_model(model, openai_server, anthropic_server):
    """Four threads, each running three loops one after another, all on one model at once."""
    agent = Agent(model, memory=None)
    answer(openai_server, anthropic_server, 12)
    texts: list[str] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for n in range(3):
                texts.append(asyncio.run(agent.prompt(f"q{n}")).text())
        except BaseException as exc:  # reported below, with the thread's failure
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(texts) == 12 and len(set(texts)) == 1
    assert settled_open(openai_server) == 0
    assert settled_open(anthropic_server) == 0


def test_many_loops_leak_no_connection(openai_server):
    """Twenty loops leave no connection open (ResourceWarnings are errors in this suite too)."""
    model = OpenAIModel("gpt-test", api_key=OPENAI_KEY, base_url=openai_server.url)
    for n in range(20):
        openai_server.reply(openai_server.completion(f"a{n}"))
        assert asyncio.run(model.generate(ask())).text() == f"a{n}"
    assert settled_open(openai_server) == 0
    assert len(openai_server.requests) == 20


def test_closing_the_model_closes_the_clients_of_running_loops(openai_server):
    """`aclose` on one loop closes this loop's client and, on its own loop, another thread's."""
    model = OpenAIModel("gpt-test", api_key=OPENAI_KEY, base_url=openai_server.url)
    other = asyncio.new_event_loop()
    runner = threading.Thread(target=other.run_forever)
    runner.start()
    try:
        openai_server.reply(openai_server.completion("there"), openai_server.completion("here"))
        there = asyncio.run_coroutine_threadsafe(model.generate(ask()), other).result(timeout=10)

        async def here_then_close() -> tuple[str, int]:
            text = (await model.generate(ask())).text()
            held = len(openai_server.open_connections)
            await model.aclose()
            return text, held

        here, held = asyncio.run(here_then_close())
        assert (there.text(), here, held) == ("there", "here", 2)
        assert settled_open(openai_server) == 0, "both loops' connections closed by aclose"
    finally:
        other.call_soon_threadsafe(other.stop)
        runner.join()
        other.close()


def test_a_client_given_is_refused_on_a_second_loop(openai_server):
    """A `client=` is the user's: used as given on its first loop, never copied or closed; on
    another loop the model says so instead of failing with "Event loop is closed"."""

    client = AsyncOpenAI(api_key=OPENAI_KEY, base_url=openai_server.url)
    model = OpenAIModel("gpt-test", client=client)

    async def use_then_close_the_client() -> str:
        text = (await model.generate(ask())).text()
        await client.close()  # the owner's part, on the loop its connections belong to
        return text

    openai_server.reply(openai_server.completion("first loop"))
    assert asyncio.run(use_then_close_the_client()) == "first loop"
    with pytest.raises(ConfigurationError, match=r"client=.*another event loop.*leave client= out"):
        asyncio.run(model.generate(ask()))
    assert len(openai_server.requests) == 1
