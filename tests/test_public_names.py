"""The public names of DESIGN §6 exist: tests outside this repo import them."""

from __future__ import annotations

import importlib
import inspect

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
    "eudaimon.a2a": ["A2AAgent"],
    "eudaimon.telemetry": ["instrument"],
}


@pytest.mark.parametrize("module", sorted(CONTRACT))
def test_contract_names_exist(module: str) -> None:
    """Invariant: every DESIGN §6 name of this module can be imported."""
    loaded = importlib.import_module(module)
    missing = [name for name in CONTRACT[module] if not hasattr(loaded, name)]
    assert not missing, f"{module} lacks {missing}"


# Packages whose public names are re-exported, some of them lazily (PEP 562).
PACKAGES = [
    "eudaimon",
    "eudaimon.errors",
    "eudaimon.core",
    "eudaimon.models",
    "eudaimon.stores",
    "eudaimon.memory",
    "eudaimon.tools",
    "eudaimon.server",
    "eudaimon.temporal",
    "eudaimon.telemetry",
    "eudaimon.mcp",
    "eudaimon.a2a",
    "eudaimon.ag_ui",
]


@pytest.mark.parametrize("module", PACKAGES)
def test_all_matches_the_namespace(module: str) -> None:
    """Invariant: `__all__` lists exactly what a package exports, lazy names included, both
    ways: every listed name resolves, and every public name the package shows is listed."""
    loaded = importlib.import_module(module)
    exported = loaded.__all__
    assert len(set(exported)) == len(exported)
    unresolved = [name for name in exported if getattr(loaded, name, None) is None]
    assert unresolved == []
    submodules = {name for name in dir(loaded) if inspect.ismodule(getattr(loaded, name))}
    shown = {name for name in dir(loaded) if not name.startswith("_")} - submodules
    assert shown - set(exported) == set(), "public but not in __all__"
    assert set(exported) - set(dir(loaded)) == set(), "in __all__ but not in dir()"


def test_lazy_names_are_the_objects_of_their_home_modules() -> None:
    """Invariant: `eudaimon.X` is the same object as the module that defines it has, so
    `isinstance` and `except` agree whichever path a user imported."""
    homes = _homes()
    assert set(homes) == set(eudaimon.__all__)
    for name, home in homes.items():
        loaded = importlib.import_module(home)
        expected = loaded if name == "errors" else getattr(loaded, name)
        assert getattr(eudaimon, name) is expected, name


def test_an_unknown_name_is_an_attribute_error() -> None:
    """Invariant: a misspelt name fails as Python's own would, so `hasattr` and `getattr(.., default)` work."""
    assert not hasattr(eudaimon, "Agnet")
    with pytest.raises(AttributeError, match="Agnet"):
        _ = eudaimon.Agnet  # type: ignore[attr-defined]


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
        "queued",
        "waiting",
    }


def test_agents_calling_agents_names() -> None:
    """Invariant: DESIGN §8's `agent.as_tool(name=…, description=…)` and `Agent(handoffs=…)` exist."""
    assert {"name", "description"} <= set(inspect.signature(eudaimon.Agent.as_tool).parameters)
    assert "handoffs" in inspect.signature(eudaimon.Agent).parameters
    assert "tracer_provider" in inspect.signature(importlib.import_module("eudaimon.telemetry").instrument).parameters


def _homes() -> dict[str, str]:
    from pathlib import Path

    from eudaimon._lazy import typed_homes

    return typed_homes(Path(eudaimon.__file__).read_text(), "eudaimon")


def test_each_public_name_is_written_once_as_the_import_mypy_reads() -> None:
    """Invariant: `eudaimon/__init__.py` writes each public name once, as `from M import X as X`
    under TYPE_CHECKING (PEP 484's explicit re-export, what mypy reads); `__all__` and the lazy
    lookup are that block, in its order, so what mypy accepts is what `import eudaimon` resolves."""
    import ast
    from pathlib import Path

    tree = ast.parse(Path(eudaimon.__file__).read_text())
    guarded = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
    aliases = [alias for node in guarded.body if isinstance(node, ast.ImportFrom) for alias in node.names]
    assert all(alias.asname == alias.name for alias in aliases), "each re-export is spelt `X as X`"
    assert [alias.name for alias in aliases] == eudaimon.__all__ == list(_homes())
    assert "Agent" in eudaimon.__all__ and "errors" in eudaimon.__all__
