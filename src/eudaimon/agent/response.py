"""`AgentResponse`: what a prompt returns, read off the run's folded state."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from eudaimon.core.messages import Message, Role, Usage
from eudaimon.core.state import PendingCall, RunState, Status


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentResponse:
    run_id: str
    status: Status
    messages: list[Message]
    """The whole conversation: system prompt, history, input, every iteration."""
    final_text: str
    iterations: int
    """Model invocations; 1 means no tool was called."""
    usage: Usage
    cost: float
    """USD, priced per call at the model that served it; 0 without a cost model."""
    structured_output: Any = None
    pending_approvals: list[PendingCall] = field(default_factory=list)

    def text(self) -> str:
        return self.final_text

    @classmethod
    def from_state(cls, state: RunState, structured: Any = None) -> AgentResponse:
        return cls(
            run_id=state.run_id,
            status=state.status,
            messages=list(state.messages),
            final_text=state.output if state.output is not None else _last_answer(state.messages),
            iterations=state.steps,
            usage=state.usage,
            cost=state.cost_usd,
            structured_output=structured,
            # Only a paused run can have calls awaiting approval.
            pending_approvals=state.awaiting_approval() if state.status.is_paused else [],
        )


def _last_answer(messages: list[Message]) -> str:
    for message in reversed(messages):
        if message.role is Role.ASSISTANT and not message.tool_calls:
            return message.content
    return ""
