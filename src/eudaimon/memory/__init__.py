"""Conversation memory: which history a new run of a thread is sent (DESIGN §7).

Every backend keeps the `Memory` contract (`eudaimon.memory.base`): scoped by thread,
idempotent by message id, and evicting or returning history only in whole tool-call groups.

- `SlidingWindowMemory`, `TokenWindowMemory`: in-process windows by count or by tokens.
- `SummaryMemory`: old messages folded into a model-written summary.
- `SqliteMemory`, `RedisMemory`: persistent, shared by processes (and, for Redis, machines).
- `JournalMemory`: the thread's own runs, read back from the journal: no second copy.
- `ThreadState`: the per-thread snapshot derived from the thread's runs.
"""

from eudaimon.memory.base import Memory
from eudaimon.memory.journal import JournalMemory
from eudaimon.memory.redis import RedisMemory
from eudaimon.memory.sqlite import SqliteMemory
from eudaimon.memory.summary import DEFAULT_SUMMARY_PROMPT, SummaryMemory
from eudaimon.memory.thread import ThreadState
from eudaimon.memory.windows import SlidingWindowMemory, TokenWindowMemory, tiktoken_counter

__all__ = [
    "DEFAULT_SUMMARY_PROMPT",
    "JournalMemory",
    "Memory",
    "RedisMemory",
    "SlidingWindowMemory",
    "SqliteMemory",
    "SummaryMemory",
    "ThreadState",
    "TokenWindowMemory",
    "tiktoken_counter",
]
