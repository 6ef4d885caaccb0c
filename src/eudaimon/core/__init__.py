"""The functional core: messages, events, the fold and the decision. No I/O, clock or randomness."""

from eudaimon.core.decide import (
    AwaitApproval,
    AwaitReconciliation,
    AwaitWake,
    CallModel,
    CallPlan,
    DecideConfig,
    Decision,
    Fail,
    Finish,
    RunTools,
    Step,
    Stop,
    next_step,
)
from eudaimon.core.effects import Effect, ToolTraits
from eudaimon.core.events import EVENT_REGISTRY, EVENT_TYPES, Event, EventData, ParentRef
from eudaimon.core.messages import Message, Role, ToolCall, Usage
from eudaimon.core.state import CallProgress, CallStatus, PendingCall, RunState, Status

__all__ = [
    # events
    "EVENT_REGISTRY",
    "EVENT_TYPES",
    "Event",
    "EventData",
    "ParentRef",
    # messages
    "Message",
    "Role",
    "ToolCall",
    "Usage",
    # state
    "CallProgress",
    "CallStatus",
    "PendingCall",
    "RunState",
    "Status",
    # decisions
    "AwaitApproval",
    "AwaitWake",
    "AwaitReconciliation",
    "CallModel",
    "CallPlan",
    "DecideConfig",
    "Decision",
    "Effect",
    "Fail",
    "Finish",
    "RunTools",
    "Step",
    "Stop",
    "ToolTraits",
    "next_step",
]
