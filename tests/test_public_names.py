"""The public names of DESIGN §6 exist: tests outside this repo import them."""

from __future__ import annotations

import importlib

import pytest

import eudaimon

CONTRACT = {
    "eudaimon": [
        "Agent",
        "AgentResponse",
        "tool",
        "Tool",
        "ToolContext",
        "Effect",
        "Message",
        "ToolCall",
        "Usage",
        "CancellationToken",
    ],
    "eudaimon.errors": [
        "EudaimonError",
        "MaxIterations",
        "Cancelled",
        "GuardrailBlocked",
        "BudgetExceeded",
        "ConcurrencyConflict",
        "RunNotFound",
    ],
    "eudaimon.core": ["Event", "RunState", "Status", "PendingCall"],
    "eudaimon.models": [
        "Model",
        "ChatRequest",
        "ChatResponse",
        "StopReason",
        "ScriptedModel",
        "FunctionModel",
        "ToolSpec",
    ],
    "eudaimon.stores": ["EventStore", "MemoryStore", "SqliteStore"],
    "eudaimon.streaming": [
        "StreamEvent",
        "TextDelta",
        "ToolCallStart",
        "ToolCallDelta",
        "ToolCallEnd",
        "ToolResult",
        "Usage",
        "Error",
        "Done",
    ],
    "eudaimon.hooks": ["AgentHook", "LoopState"],
    "eudaimon.middleware": ["Middleware", "MiddlewareAction"],
    "eudaimon.guardrails": [
        "InputGuardrail",
        "OutputGuardrail",
        "Pass",
        "Block",
        "Transform",
        "RetryWithFeedback",
        "MaxTokenGuardrail",
        "RegexFilterGuardrail",
        "ContentPolicyGuardrail",
    ],
    "eudaimon.cost": ["CostModel", "TokenDirection", "OpenAICostModel", "AnthropicCostModel"],
    "eudaimon.prompts": ["PromptTemplate", "PromptBuilder", "DynamicContext", "FewShotTemplate"],
    "eudaimon.retry": ["ToolRetryPolicy"],
    "eudaimon.mcp": ["MCPTools", "MCPConnectionError"],
    "eudaimon.telemetry": ["instrument"],
}


@pytest.mark.parametrize("module", sorted(CONTRACT))
def test_contract_names_exist(module: str) -> None:
    """Invariant: every DESIGN §6 name of this module can be imported."""
    loaded = importlib.import_module(module)
    missing = [name for name in CONTRACT[module] if not hasattr(loaded, name)]
    assert not missing, f"{module} lacks {missing}"


def test_all_matches_the_namespace() -> None:
    """Invariant: eudaimon.__all__ lists exactly what it exports, so nothing public is accidental."""
    assert len(set(eudaimon.__all__)) == len(eudaimon.__all__)
    for name in eudaimon.__all__:
        assert hasattr(eudaimon, name), name


def test_status_is_a_str_enum() -> None:
    """Invariant: `response.status == "awaiting_approval"` holds (DESIGN §6)."""
    assert eudaimon.Status.AWAITING_APPROVAL == "awaiting_approval"
    assert {s.value for s in eudaimon.Status} == {
        "running",
        "awaiting_approval",
        "awaiting_reconciliation",
        "completed",
        "failed",
        "budget_exceeded",
        "cancelled",
    }


def test_agents_calling_agents_names() -> None:
    """Invariant: DESIGN §8's `agent.as_tool(name=…, description=…)` and `Agent(handoffs=…)` exist."""
    import inspect

    assert {"name", "description"} <= set(inspect.signature(eudaimon.Agent.as_tool).parameters)
    assert "handoffs" in inspect.signature(eudaimon.Agent).parameters
    assert "tracer_provider" in inspect.signature(importlib.import_module("eudaimon.telemetry").instrument).parameters
