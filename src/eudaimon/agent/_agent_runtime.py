"""`AgentRuntime`: what an agent's runs are made of, the one interface its helpers and engines use.

`Agent` is the public face; starting a prompt (`_start.py`), a queued run (`_queued.py`), a
child run (`_delegation.py`) and a Temporal worker need more of it than its public attributes:
the driver of its runs, the configs its toolsets give them, its instructions rendered for a run,
the check of a run's model settings. They get that here, from `runtime_of(agent)` or handed by
the agent, and never from the agent's private attributes (`tests/agents/
test_no_module_reaches_into_an_agent.py`).
"""

from __future__ import annotations

from typing import Any

from eudaimon.agent._build import Instructions, check_settings
from eudaimon.core.errors import ConfigurationError
from eudaimon.core.events import ToolRecord
from eudaimon.core.settings import ModelSettings
from eudaimon.core.state import RunState
from eudaimon.runtime.loop.config import RuntimeConfig
from eudaimon.runtime.loop.toolset_binding import ToolsetBinding
from eudaimon.runtime.process.runs import RunDriver
from eudaimon.stores.base import EventStore
from eudaimon.tools import ToolContext, call_with_context


class AgentRuntime:
    """The runtime side of one agent: its `RunDriver` and how a run of it gets its tools,
    instructions and settings."""

    def __init__(
        self,
        driver: RunDriver,
        toolsets: ToolsetBinding,
        *,
        system_prompt: str | None,
        instructions: Instructions | None,
        output_instruction: str | None,
        carries_rejections: bool,
    ) -> None:
        self.driver = driver
        """Starts, drives, reopens and answers the agent's runs in its store."""
        self.toolsets = toolsets
        self.carries_rejections = carries_rejections
        """The agent has output guardrails: a run takes over its thread's streak of rejections."""
        self._system_prompt = system_prompt
        self._instructions = instructions
        self._output_instruction = output_instruction

    @property
    def config(self) -> RuntimeConfig:
        """The agent's configuration, before a run's toolset tools are bound into it."""
        return self.driver.config

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
        config = self.driver.config
        check_settings(config.model, config.model_settings.merged(model_settings), config.tools)

    async def fresh_tools(self) -> tuple[tuple[ToolRecord, ...], RuntimeConfig | None]:
        """For a new run: its toolsets' tools now, and the config with them (None: the agent's)."""
        return await self.toolsets.fresh()

    async def resumed_tools(self, state: RunState) -> RuntimeConfig | None:
        """For a run already journaled: the config with the tools it recorded (None: the agent's)."""
        return await self.toolsets.resumed(state.tools, state.status.is_terminal)

    async def render_instructions(self, run_id: str, deps: Any) -> str | None:
        """The system prompt for run `run_id`: the static one, or the function's text for this
        run (called with a `ToolContext` carrying `deps`)."""
        if self._instructions is None:
            return self._system_prompt
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
        driver = self.driver
        child = RunDriver(driver.config, store, None, driver.output, driver.config_digest)
        child.identity = driver.identity
        return child
