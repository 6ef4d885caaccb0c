"""`eudaimon.agent.response`: the old path of `AgentResponse`, which the runtime writes (`eudaimon.runtime.response`)."""

from eudaimon.runtime.response import AgentResponse, OutputT

__all__ = ["AgentResponse", "OutputT"]
