"""The scripted tool loop `benchmarks/temporal_step.py` measures, for eudaimon and Pydantic AI.

The user's input is `steps=N`: the model calls the READ tool `lookup` N times, one call per
step, then answers. Both frameworks get the same script, the same tool and a model that is a
function of the conversation, so what differs is the framework's own work per step.
This is a module of its own because Temporal's sandbox re-imports a workflow's module.
"""

from __future__ import annotations

from typing import Any

from eudaimon import Agent, Effect, Message, ToolCall, tool
from eudaimon.models import ChatRequest, FunctionModel


def _steps(text: str) -> int:
    return int(text.partition("steps=")[2] or 0)


@tool(effect=Effect.READ)
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def answer(request: ChatRequest) -> Message:
    users = [m for m in request.messages if m.role == "user"]
    done = sum(1 for m in request.messages if m.role == "tool")
    if done < _steps(users[-1].content):
        return Message.assistant(tool_calls=[ToolCall(f"c{done}", "lookup", {"key": f"k{done}"})])
    return Message.assistant(f"looked up {done} keys")


def make(**options: Any) -> Agent:
    """The eudaimon agent (workers call it with no options)."""
    return Agent(FunctionModel(answer, model_id="bench"), tools=[lookup], name="bench", memory=None, **options)


try:  # Pydantic AI's Temporal integration, when installed (benchmarks/.peers)
    from pydantic_ai import Agent as PAgent
    from pydantic_ai.durable_exec.temporal import TemporalAgent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart, UserPromptPart
    from pydantic_ai.models.function import AgentInfo
    from pydantic_ai.models.function import FunctionModel as PFunctionModel
    from temporalio import workflow

    def _p_answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = next(p.content for m in messages for p in m.parts if isinstance(p, UserPromptPart))
        done = sum(1 for m in messages for p in m.parts if isinstance(p, ToolReturnPart))
        if done < _steps(str(prompt)):
            return ModelResponse(parts=[ToolCallPart("lookup", {"key": f"k{done}"}, tool_call_id=f"c{done}")])
        return ModelResponse(parts=[TextPart(f"looked up {done} keys")])

    p_agent = PAgent(PFunctionModel(_p_answer), name="bench")

    @p_agent.tool_plain(name="lookup")
    def p_lookup(key: str) -> str:
        """Look a key up."""
        return f"value of {key}"

    p_temporal = TemporalAgent(p_agent)

    @workflow.defn(name="pydantic-ai-bench")
    class PydanticAIBench:
        @workflow.run
        async def run(self, prompt: str) -> str:
            result = await p_temporal.run(prompt)
            return str(result.output)

    PYDANTIC_AI_ERROR: str | None = None
except Exception as exc:  # ImportError, or an API that moved
    PYDANTIC_AI_ERROR = f"{type(exc).__name__}: {exc}"
