"""`ModelSettings`: how a model call is made (sampling, limits, tool choice, reasoning).

A frozen dataclass whose fields are all optional: `None` means "not set, the provider's
default". Settings merge key by key (`agent.merged(prompt)`: the prompt's set keys win), so a
prompt can change the temperature without restating the rest. The settings a run was started
with are journaled in its `run_started`, so a resumed run calls the model the same way, and
every call's request digest covers them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, Literal

ReasoningEffort = Literal["minimal", "low", "medium", "high"]
ToolChoice = str
"""`"auto"` (the model decides), `"none"` (no tool), `"required"` (some tool), or a tool's name."""
TOOL_CHOICE_MODES = frozenset({"auto", "none", "required"})


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelSettings:
    """Settings for a model call. Every field is optional; unset fields use the provider's default.

    A provider that has no such setting refuses it with a `ConfigurationError` when the agent
    is built or the prompt is given, before anything is journaled.
    """

    temperature: float | None = None
    max_tokens: int | None = None
    """Most tokens the answer may have."""
    top_p: float | None = None
    seed: int | None = None
    """Best-effort deterministic sampling (OpenAI and compatible servers; not Anthropic)."""
    stop_sequences: tuple[str, ...] | None = None
    tool_choice: ToolChoice | None = None
    """`"auto"`, `"none"`, `"required"`, or the name of the one tool the model must call."""
    parallel_tool_calls: bool | None = None
    """False asks for at most one tool call per answer."""
    reasoning_effort: ReasoningEffort | None = None
    """OpenAI reasoning models (and compatible servers that accept it)."""
    thinking_budget_tokens: int | None = None
    """Anthropic extended thinking: tokens the model may think before answering."""
    extra_body: Mapping[str, Any] | None = None
    """Provider-specific fields sent as they are in the request body (merged key by key)."""

    def __post_init__(self) -> None:
        if isinstance(self.stop_sequences, list):
            object.__setattr__(self, "stop_sequences", tuple(self.stop_sequences))
        if self.extra_body is not None and not isinstance(self.extra_body, dict):
            object.__setattr__(self, "extra_body", dict(self.extra_body))

    def merged(self, other: ModelSettings | None) -> ModelSettings:
        """These settings with `other`'s set keys winning; `extra_body` merges key by key."""
        if other is None or other == NO_SETTINGS:
            return self
        changes: dict[str, Any] = {}
        for f in fields(other):
            value = getattr(other, f.name)
            if value is None:
                continue
            if f.name == "extra_body" and self.extra_body:
                value = {**self.extra_body, **value}
            changes[f.name] = value
        return replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        """The set keys only, as JSON-ready values (for digests and errors)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None:
                out[f.name] = (
                    list(value) if isinstance(value, tuple) else dict(value) if f.name == "extra_body" else value
                )
        return out

    def is_set(self, name: str) -> bool:
        return getattr(self, name) is not None


NO_SETTINGS = ModelSettings()
"""Nothing set: one shared value, since settings are frozen."""
