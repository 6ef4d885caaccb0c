"""`SummaryMemory`: old messages are folded by a model into one running summary.

Summarising is the one memory operation that can fail (the model is a remote call), so it is
arranged to lose nothing: messages leave the thread only after the model has answered with a
summary that includes them, and a failure leaves everything in place to be retried on a later
add. The summary is sent ahead of the recent messages as one system message.
"""

from __future__ import annotations

import logging

from eudaimon.core.groups import group_messages
from eudaimon.core.messages import Message, Role
from eudaimon.memory._groups import is_complete, visible
from eudaimon.memory.base import check_window, thread_key, with_id
from eudaimon.models.base import ChatRequest, Model

logger = logging.getLogger("eudaimon.memory")

DEFAULT_SUMMARY_PROMPT = (
    "You keep the running summary of a conversation between a user and an AI assistant that uses "
    "tools. Write a concise summary that preserves the facts, names, numbers, decisions and "
    "commitments, the results of tool calls (and which ones failed), open questions, and whatever "
    "else the assistant needs to continue the conversation. Fold the summary so far, if there is "
    "one, into the new summary. Reply with the summary only."
)

SUMMARY_HEADER = "Summary of the earlier conversation:\n"
"""Starts the system message that carries the summary in `get_messages`."""


class _Thread:
    __slots__ = ("busy", "ids", "messages", "summaries", "summary")

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.ids: set[str] = set()
        self.summary: str | None = None
        self.summaries = 0
        self.busy = False


class SummaryMemory:
    """Keeps the recent messages of each thread and a model-written summary of the older ones.

    When a thread holds more than `max_messages`, everything but the most recent
    `retain_recent` is summarised. The cut moves back to a group boundary, so no tool group is
    split (a few more than `retain_recent` may stay), and a tool group still awaiting results
    is never summarised. The previous summary
    is folded into the new one. If the model raises, or answers with no text, nothing is
    dropped and the next add tries again; the failure is logged to the `eudaimon.memory` logger.

    Args:
        model: The model that writes summaries; a cheap one is usually enough.
        max_messages: Summarise when a thread holds more than this many messages.
        retain_recent: How many of the most recent messages stay verbatim.
        summary_prompt: The instructions sent to the model as its system message.
    """

    def __init__(
        self,
        model: Model,
        max_messages: int = 20,
        retain_recent: int = 10,
        summary_prompt: str = DEFAULT_SUMMARY_PROMPT,
    ) -> None:
        check_window("max_messages", max_messages)
        if not 0 <= retain_recent < max_messages:
            raise ValueError(
                f"retain_recent must be at least 0 and less than max_messages={max_messages}, got {retain_recent}"
            )
        self.model = model
        self.max_messages = max_messages
        self.retain_recent = retain_recent
        self.summary_prompt = summary_prompt
        self._threads: dict[str, _Thread] = {}

    async def get_messages(self, thread_id: str | None = None) -> list[Message]:
        key = thread_key(thread_id)
        thread = self._threads.get(key)
        if thread is None:
            return []
        recent = visible(thread.messages)
        if thread.summary is None:
            return recent
        summary = Message.system(SUMMARY_HEADER + thread.summary, id=f"summary:{key}:{thread.summaries}")
        return [summary, *recent]

    async def add_message(self, message: Message, thread_id: str | None = None) -> None:
        message = with_id(message)
        message_id = message.id
        key = thread_key(thread_id)
        thread = self._threads.get(key)
        if thread is None:
            thread = self._threads[key] = _Thread()
        if message_id in thread.ids:
            return
        thread.ids.add(message_id)
        thread.messages.append(message)
        if len(thread.messages) > self.max_messages and not thread.busy:
            await self._summarise(key, thread)

    async def clear(self, thread_id: str | None = None) -> None:
        self._threads.pop(thread_key(thread_id), None)

    async def current_summary(self, thread_id: str | None = None) -> str | None:
        """The thread's summary so far; None before its first successful summarisation."""
        thread = self._threads.get(thread_key(thread_id))
        return thread.summary if thread is not None else None

    async def _summarise(self, key: str, thread: _Thread) -> None:
        cut = self._cut(thread.messages)
        if cut == 0:
            return
        folded = thread.messages[:cut]
        request = ChatRequest(
            messages=[
                Message.system(self.summary_prompt, id="summary-prompt"),
                Message.user(transcript(thread.summary, folded), id="summary-input"),
            ]
        )
        thread.busy = True
        try:
            response = await self.model.generate(request)
        except Exception as exc:
            logger.warning(
                "summarising %d message(s) of thread %r failed; they are kept and the next add retries: %r",
                cut,
                key,
                exc,
            )
            return
        finally:
            thread.busy = False
        text = response.text().strip()
        if not text:
            logger.warning("the summary model answered with no text for thread %r; the messages are kept", key)
            return
        if self._threads.get(key) is not thread:
            return  # cleared while the model was answering
        # Only appends can have happened meanwhile, so the folded messages are still the front.
        del thread.messages[:cut]
        thread.summary = text
        thread.summaries += 1

    def _cut(self, messages: list[Message]) -> int:
        """How many of the oldest messages to summarise: whole groups up to the retained tail."""
        target = len(messages) - self.retain_recent
        groups = group_messages(messages)
        cut = 0
        for index, group in enumerate(groups):
            last = index == len(groups) - 1
            if cut + len(group) > target or (last and not is_complete(group)):
                break
            cut += len(group)
        return cut

    def __repr__(self) -> str:
        return (
            f"SummaryMemory(model={self.model!r}, max_messages={self.max_messages}, retain_recent={self.retain_recent})"
        )


def transcript(previous: str | None, messages: list[Message]) -> str:
    """The text the summary model reads: the summary so far, then the messages to fold in."""
    lines = [f"Summary so far:\n{previous}\n"] if previous else []
    lines.append("Conversation to fold into the summary:")
    for m in messages:
        if m.role is Role.TOOL:
            status = ", failed" if m.is_error else ""
            lines.append(f"tool result ({m.tool_call_id}{status}): {m.content}")
        elif m.tool_calls:
            calls = ", ".join(f"{c.name}({c.arguments})" for c in m.tool_calls)
            lines.append(f"{m.role}: {m.content} [calls {calls}]".replace(":  [", ": ["))
        else:
            lines.append(f"{m.role}: {m.content}")
    return "\n".join(lines)
