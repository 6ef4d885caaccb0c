"""`AgentResponse[T]`: what a prompt returns, read off the run's folded state."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic

from typing_extensions import TypeVar

from eudaimon.core.messages import Message, Role, Usage
from eudaimon.core.state import PendingCall, RunState, Status
from eudaimon.models.base import StopReason

OutputT = TypeVar("OutputT", default=str)
"""The type of `AgentResponse.output`: the agent's `output_type`, `str` without one."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentResponse(Generic[OutputT]):
    run_id: str
    status: Status
    messages: list[Message]
    """The whole conversation: system prompt, history, input, every iteration."""
    final_text: str
    iterations: int
    """Model invocations; 1 means no tool was called."""
    usage: Usage
    cost: float
    """USD, priced per call at the model that served it; 0 without a cost model (`cost_usd`
    tells unpriced from free)."""
    structured_output: Any = None
    pending_approvals: list[PendingCall] = field(default_factory=list)
    output: OutputT = None  # type: ignore[assignment]
    """The answer, typed: the `output_type` value (validated, then passed through the output
    validators), or the final text when the agent has no `output_type`. None while the run
    waits for a human."""
    input_index: int = 0
    """Where this run's own messages begin in `messages` (its input)."""
    stop_reason: StopReason = StopReason.END_TURN
    """Why the run's last model call stopped, as its provider said (`model_called.stop_reason`):
    `max_tokens` means the answer was cut by the token limit, `refusal` and `content_filter`
    that the provider withheld it. `end_turn` before any model call."""
    cost_usd: float | None = None
    """USD as the API, the CLI and the inspector give it: None while no call was priced
    ("unpriced": no cost model knows the model), never a 0 that reads as free."""

    def text(self) -> str:
        return self.final_text

    def all_messages(self) -> list[Message]:
        """Every message of the run: instructions, history, the input and what followed. Pass
        it as `prompt(..., message_history=…)` to continue the conversation yourself."""
        return list(self.messages)

    def new_messages(self) -> list[Message]:
        """The messages this run added: its input and everything after it (no instructions,
        no history)."""
        return self.messages[self.input_index :]

    @classmethod
    def from_state(cls, state: RunState, structured: Any = None, *, typed: bool = False) -> AgentResponse[Any]:
        """The response for `state`; `typed` says the agent has an `output_type`, so `output`
        is `structured` rather than the text."""
        final_text = state.output if state.output is not None else _last_answer(state.messages)
        completed = state.status is Status.COMPLETED
        output: Any = (structured if typed else final_text) if completed else None
        return cls(
            run_id=state.run_id,
            status=state.status,
            messages=list(state.messages),
            final_text=final_text,
            iterations=state.steps,
            usage=state.usage,
            cost=state.cost_usd,
            structured_output=structured,
            # Only a paused run can have calls awaiting approval.
            pending_approvals=state.awaiting_approval() if state.status.is_paused else [],
            output=output,
            input_index=state.input_index,
            stop_reason=stop_reason_of(state),
            cost_usd=state.cost_usd if state.cost_known else None,
        )


def stop_reason_of(state: RunState) -> StopReason:
    """The last model call's stop reason; a reason this version does not know reads as
    `end_turn` (the journal keeps the provider's word)."""
    try:
        return StopReason(state.stop_reason) if state.stop_reason else StopReason.END_TURN
    except ValueError:
        return StopReason.END_TURN


def _last_answer(messages: list[Message]) -> str:
    for message in reversed(messages):
        if message.role is Role.ASSISTANT and not message.tool_calls:
            return message.content
    return ""
