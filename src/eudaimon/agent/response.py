"""`eudaimon.agent.response`: the old path of `AgentResponse`, which the runtime writes (`eudaimon.runtime.loop.response`)."""

from eudaimon.runtime.loop.response import AgentResponse, OutputT

__all__ = ["AgentResponse", "OutputT"]
