"""The frameworks eudaimon is compared with, each driven by one transcript (`transcript.py`).

Every adapter (`fw_<name>.py`) exposes `make(transcript) -> agent` and
`async run(agent, question, max_steps=...) -> Outcome`; LangGraph's also `durable_loop_*`. They
need benchmarks/.peers (`benchmarks/setup.sh`).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

FRAMEWORKS = ("eudaimon", "pydantic_ai", "openai_agents", "langgraph")


@dataclass(frozen=True, slots=True)
class Outcome:
    """A run's final output and how many tool calls it executed, read from the framework's own
    result (its message history), never from the transcript."""

    final: str
    tool_calls: int


def load(framework: str) -> ModuleType:
    return importlib.import_module(f"peers.fw_{framework}")
