"""The fleet workload's Pydantic AI side (`fleet_loop`): a module of its own importing no eudaimon,
since Temporal's sandbox re-imports a workflow's module (and what it imports) for every run."""

from __future__ import annotations

import asyncio

MODEL_S = 0.05

try:  # Pydantic AI's Temporal integration, when installed
    from pydantic_ai import Agent as PAgent
    from pydantic_ai.durable_exec.temporal import TemporalAgent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo
    from pydantic_ai.models.function import FunctionModel as PFunctionModel
    from temporalio import workflow

    async def _p_answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        await asyncio.sleep(MODEL_S)
        if not any(isinstance(p, ToolReturnPart) for m in messages for p in m.parts):
            return ModelResponse(parts=[ToolCallPart("lookup", {"key": "k"}, tool_call_id="c0")])
        return ModelResponse(parts=[TextPart("looked it up")])

    p_agent = PAgent(PFunctionModel(_p_answer), name="fleet-bench")

    @p_agent.tool_plain(name="lookup")
    def p_lookup(key: str) -> str:
        """Look a key up."""
        return f"value of {key}"

    p_temporal = TemporalAgent(p_agent)

    @workflow.defn(name="pydantic-ai-fleet")
    class PydanticAIFleet:
        @workflow.run
        async def run(self, prompt: str) -> str:
            result = await p_temporal.run(prompt)
            return str(result.output)

    PYDANTIC_AI_ERROR: str | None = None
except Exception as exc:  # ImportError, or an API that moved
    PYDANTIC_AI_ERROR = f"{type(exc).__name__}: {exc}"
