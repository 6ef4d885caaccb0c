"""What an Agent checks of the model and memory it is given: the methods the loop awaits are async.

A custom model or memory written with `def` where `async def` is needed would otherwise fail
mid-run with Python's "object … can't be used in 'await' expression", naming neither the class
nor the method. Checked once, when the Agent is built.
"""

from __future__ import annotations

import inspect
from typing import Any

from eudaimon.core.errors import ConfigurationError

MEMORY_METHODS = ("get_messages", "add_message", "clear")


def _is_async(method: Any) -> bool:
    return inspect.iscoroutinefunction(inspect.unwrap(method)) or inspect.iscoroutinefunction(method)


def check_model(model: object) -> None:
    """Raise `ConfigurationError` naming the method when `model` cannot be awaited as a `Model`.

    `generate` must be `async def`; `stream`, when present, an async generator (`async def`
    with `yield`) or a plain method returning an async iterator, not a generator or a coroutine.
    """
    kind = type(model).__name__
    generate = getattr(model, "generate", None)
    if not callable(generate):
        raise ConfigurationError(
            f"model {kind} has no generate method: a Model needs `async def generate(self, request)` "
            "returning a ChatResponse (or pass a model string such as 'openai:gpt-4o-mini')"
        )
    if not _is_async(generate):
        raise ConfigurationError(
            f"{kind}.generate must be `async def generate(self, request)`: the loop awaits it; "
            "a blocking client can run in `await asyncio.to_thread(...)` inside it"
        )
    stream = getattr(model, "stream", None)
    if stream is None:
        return
    target = inspect.unwrap(stream)
    if inspect.isgeneratorfunction(target) or (_is_async(stream) and not inspect.isasyncgenfunction(target)):
        raise ConfigurationError(
            f"{kind}.stream must be an async generator, `async def stream(self, request)` with `yield`: "
            "the loop iterates it with `async for`"
        )


def check_memory(memory: object) -> None:
    """Raise `ConfigurationError` naming the method when `memory`'s methods are not `async def`."""
    kind = type(memory).__name__
    for name in MEMORY_METHODS:
        method = getattr(memory, name, None)
        if not callable(method):
            raise ConfigurationError(
                f"memory {kind} has no {name} method: a Memory needs `async def get_messages`, "
                "`async def add_message` and `async def clear` (see eudaimon.memory.Memory)"
            )
        if not _is_async(method):
            raise ConfigurationError(f"{kind}.{name} must be `async def {name}(...)`: the agent awaits it")
