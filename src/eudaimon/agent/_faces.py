"""What an agent's helpers read of their agent, each as a protocol that an `Agent` satisfies.

Starting a run (`_start`, `_queued`) reads `StartingAgent`; answering a call with a child run
(`_delegation`) reads `CalledAgent`. Naming these rather than `Agent` or `DrivenRuns`, which
import the helpers, keeps each module of `agent/` below the modules that import it: no circle,
not even one for type checking (`tests/test_imports_point_down.py`).
"""

from __future__ import annotations

from typing import Any, Protocol

from eudaimon.extensions.guardrails import Guardrail
from eudaimon.memory import Memory
from eudaimon.stores.base import EventStore


class StartingAgent(Protocol):
    """What starting a run reads of its agent: its name, journal and memory, the thread a prompt
    naming none joins, the deps its tools expect and its input guardrails."""

    @property
    def name(self) -> str: ...
    @property
    def store(self) -> EventStore: ...
    @property
    def memory(self) -> Memory | None: ...
    @property
    def default_thread(self) -> str | None: ...
    @property
    def deps_type(self) -> type[Any] | None: ...
    @property
    def input_guardrails(self) -> tuple[Guardrail, ...]: ...


class CalledAgent(Protocol):
    """What a call answered by a child run reads of the agent it asks: its name (the tool's, and
    the one its answers give) and its static system prompt."""

    @property
    def name(self) -> str: ...
    @property
    def system_prompt(self) -> str | None: ...
