"""Message groups: an assistant message with tool calls and its tool results belong together.

A provider rejects a tool result whose call is missing, and a call without its result, so
anything that drops history (memory windows, a context-length retry) drops whole groups.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from eudaimon.core.messages import Message, Role

TokenCounter = Callable[[Message], int]


def estimate_tokens(message: Message) -> int:
    """About four characters a token, the heuristic providers document; at least one."""
    chars = len(message.content) + sum(len(c.name) + len(str(c.arguments)) for c in message.tool_calls)
    return max(1, (chars + 3) // 4)


def group_messages(messages: Sequence[Message]) -> list[list[Message]]:
    """Split into groups: a tool-calling assistant message with the tool results that follow
    it, or any other single message."""
    groups: list[list[Message]] = []
    for message in messages:
        if message.role is Role.TOOL and groups and _open_calls(groups[-1]):
            groups[-1].append(message)
        else:
            groups.append([message])
    return groups


def _open_calls(group: list[Message]) -> bool:
    head = group[0]
    return head.role is Role.ASSISTANT and bool(head.tool_calls)


def fit_to_budget(
    messages: Sequence[Message], budget_tokens: int, count: TokenCounter = estimate_tokens
) -> list[Message]:
    """Drop the oldest history groups until the rest fits `budget_tokens`.

    System messages and the last group (the turn being answered) are always kept, so the
    result may still exceed a budget too small for them.
    """
    groups = group_messages(messages)
    system = [g for g in groups if g[0].role is Role.SYSTEM]
    history = [g for g in groups if g[0].role is not Role.SYSTEM]
    total = sum(count(m) for g in groups for m in g)
    start = 0
    while total > budget_tokens and start < len(history) - 1:
        total -= sum(count(m) for m in history[start])
        start += 1
    # Begin the kept history on a user turn: some providers refuse anything else first.
    while start < len(history) - 1 and history[start][0].role is not Role.USER:
        start += 1
    return [m for g in system for m in g] + [m for g in history[start:] for m in g]
