"""What the served agents' models read of a request: the turn being answered, and the tool
results in it (memory adds earlier turns before it, which a model of the request ignores)."""

from __future__ import annotations

from eudaimon import Message
from eudaimon.core.messages import Role
from eudaimon.models import ChatRequest


def this_turn(request: ChatRequest) -> list[Message]:
    """The messages from the last user message on."""
    last_user = max(i for i, m in enumerate(request.messages) if m.role is Role.USER)
    return request.messages[last_user:]


def tool_results(request: ChatRequest) -> list[Message]:
    """The tool results of this turn, in order."""
    return [m for m in this_turn(request) if m.role is Role.TOOL]
