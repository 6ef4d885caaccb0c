"""`AgentRuntime`: the one object an `Agent(...)` is turned into, and what its helpers and engines use.

`Agent` is the public face; starting a prompt (`_start.py`), a queued run (`_queued.py`), a
child run (`_delegation.py`) and a Temporal worker need more of it than its public attributes:
the driver of its runs, the configs its toolsets give them, its instructions rendered for a run,
the check of a run's model settings. An `AgentRuntime` is all of that at once: a `RunDriver`
(it starts, drives, reopens and answers the agent's runs) that also knows how a run of this
agent gets its tools, instructions and settings. They get it from `runtime_of(agent)` or handed
by the agent, and never from the agent's private attributes (`tests/
test_no_module_reaches_into_an_agent.py`).
"""

from __future__ import annotations

from typing import Any, Protocol

from eudaimon.agent._build import Instructions, check_settings
from eudaimon.core.errors import ConfigurationError
from eudaimon.core.events import ToolRecord
from eudaimon.core.settings import ModelSettings
from eudaimon.core.state import RunState
from eudaimon.memory import Memory
from eudaimon.runtime.loop.config import RuntimeConfig
from eudaimon.runtime.loop.toolset_binding import ToolsetBinding
from eudaimon.runtime.process.agent_change import AgentIdentity
from eudaimon.runtime.process.engines import Engine
from eudaimon.runtime.process.output import OutputSchema
from eudaimon.runtime.process.runs import RunDriver
from eudaimon.stores.base import EventStore
from eudaimon.tools.context import ToolContext, call_with_context
from eudaimon.tools.toolsets import Toolset


class AgentRuntime(RunDriver):
    """The runtime side of one agent: the `RunDriver` of its runs, and how a run of it gets its
    tools, instructions and settings."""

    def __init__(
        self,
        config: RuntimeConfig,
        store: EventStore,
        memory: Memory | None,
        output: OutputSchema | None,
        config_digest: str,
        *,
        identity: AgentIdentity,
        engine: Engine | None,
        toolsets: tuple[Toolset, ...],
        system_prompt: str | None,
        instructions: Instructions | None,
        output_instruction: str | None,
        carries_rejections: bool,
    ) -> None:
        super().__init__(config, store, memory, output, config_digest)
        self.identity = identity
        self.engine = engine
        self.toolsets = toolsets
        """The agent's toolsets (MCP servers, …), listed when each run starts."""
        self.binding = ToolsetBinding(config, toolsets)
        self.system_prompt = system_prompt
        """The static system prompt (None when it is a function, rendered per run)."""
        self.carries_rejections = carries_rejections
        """The agent has output guardrails: a run takes over its thread's streak of rejections."""
        self._instructions = instructions
        self._output_instruction = output_instruction

    def check_run_settings(self, model_settings: ModelSettings | None) -> None:
        """Refuse a prompt's `model_settings` that cannot work, before anything is journaled.

        Raises:
            TypeError: not a `ModelSettings`.
            ConfigurationError: merged over the agent's, a setting its model does not have.
        """
        if model_settings is None:
            return
        if not isinstance(model_settings, ModelSettings):
            raise TypeError(f"model_settings must be a ModelSettings, got {type(model_settings).__name__}")
        config = self.config
        check_settings(config.model, config.model_settings.merged(model_settings), config.tools)

    async def fresh_tools(self) -> tuple[tuple[ToolRecord, ...], RuntimeConfig | None]:
        """For a new run: its toolsets' tools now, and the config with them (None: the agent's)."""
        return await self.binding.fresh()

    async def resumed_tools(self, state: RunState) -> RuntimeConfig | None:
        """For a run already journaled: the config with the tools it recorded (None: the agent's)."""
        return await self.binding.resumed(state.tools, state.status.is_terminal)

    async def render_instructions(self, run_id: str, deps: Any) -> str | None:
        """The system prompt for run `run_id`: the static one, or the function's text for this
        run (called with a `ToolContext` carrying `deps`)."""
        if self._instructions is None:
            return self.system_prompt
        ctx: ToolContext[Any] = ToolContext(run_id, "", "", 0, deps, 0)
        rendered = await call_with_context(self._instructions, ctx)
        if rendered is not None and not isinstance(rendered, str):
            raise ConfigurationError(
                f"the system_prompt function returned {type(rendered).__name__}; return the text (or None)"
            )
        parts = [p for p in (rendered, self._output_instruction) if p]
        return "\n\n".join(parts) or None

    def driver_in(self, store: EventStore) -> RunDriver:
        """A driver of this agent's runs in another `store`, without memory: a child run's,
        journaled where its parent is."""
        child = RunDriver(self.config, store, None, self.output, self.config_digest)
        child.identity = self.identity
        return child


class HoldsRuntime(Protocol):
    """What `runtime_of` reads: an `Agent`, whose runtime is its own, handed out here alone. A
    protocol rather than `Agent`, whose module imports this one."""

    @property
    def _runtime(self) -> AgentRuntime: ...


def runtime_of(agent: HoldsRuntime) -> AgentRuntime:
    """The runtime side of `agent` (its driver, toolset configs, instructions), for the engines
    and shells that run it (the Temporal worker and workflow) instead of its private attributes."""
    return agent._runtime
