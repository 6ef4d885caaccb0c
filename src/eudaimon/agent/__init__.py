"""The agent surface: `Agent`, what building one checks, and the `AgentResponse` a prompt returns."""

from eudaimon.agent._agent import Agent
from eudaimon.runtime.process.response import AgentResponse

__all__ = ["Agent", "AgentResponse"]
