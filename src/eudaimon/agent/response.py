"""`eudaimon.agent.response`: the old path of `AgentResponse`, which the runtime writes (`eudaimon.runtime.process.response`)."""

from eudaimon.runtime.process.response import AgentResponse, OutputT

__all__ = ["AgentResponse", "OutputT"]
