"""A worker that stalls (SIGSTOPs itself) on the way to committing a tool's intent.

    python _stalled_writer.py SPEC RUN_ID MARKER_FILE before|inside

The agent's model asks for one WRITE tool, `pay`, which appends a line to MARKER_FILE (the
outside world). The worker stops itself at the append that carries the `tool_started` intent:
`before` the store is called (after the driver's own lease check), or, on SQLite, `inside` the
commit's transaction, holding the write lock. When continued it prints one JSON line: how the
run ended, and the error class if it raised.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _proc_support import open_store

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.models import ChatRequest, FunctionModel


def _stop() -> None:
    """Stop the whole process, from this very point of the calling thread. Sent to the thread
    itself: sent to the process (`os.kill`), the stop is taken by its main thread, and a commit
    running on the store's worker thread meanwhile could finish before that thread is stopped."""
    signal.pthread_kill(threading.get_ident(), signal.SIGSTOP)


def _answer(request: ChatRequest) -> Message:
    if any(m.role.value == "tool" for m in request.messages):
        return Message.assistant("paid")
    return Message.assistant(tool_calls=[ToolCall("c1", "pay", {"amount": 10})])


async def main(spec: str, run_id: str, marker: Path, where: str) -> dict[str, Any]:
    @tool(effect="write")
    def pay(amount: int) -> str:
        """Pay; not safe to run twice."""
        with marker.open("a") as out:
            out.write(f"paid {amount} by {os.getpid()}\n")
        return "ok"

    store = open_store(spec)
    carries_intent = lambda events: any(e.type == "tool_started" for e in events)  # noqa: E731
    if where == "before":
        real_append = store.append

        async def append(run: str, expected: int, events: Any, *args: Any, **kwargs: Any) -> None:
            if carries_intent(events):
                _stop()  # stalled between the driver's lease check and the commit
            await real_append(run, expected, events, *args, **kwargs)

        store.append = append  # type: ignore[method-assign]
    else:
        from eudaimon.stores.sqlite import _sql

        real = _sql.append

        def stalled(conn: Any, run: str, expected: int, events: Any, *args: Any, **kwargs: Any) -> Any:
            written = real(conn, run, expected, events, *args, **kwargs)
            if carries_intent(events):
                _stop()  # inside BEGIN IMMEDIATE … COMMIT: the write lock is held
            return written

        _sql.append = stalled  # type: ignore[assignment]
    agent = Agent(FunctionModel(_answer), tools=[pay], store=store)
    try:
        response = await agent.prompt("pay ten", run_id=run_id, thread_id=run_id)
        return {"status": str(response.status.value), "error": None}
    except Exception as exc:
        return {"status": "raised", "error": type(exc).__name__, "message": str(exc)}
    finally:
        await store.close()


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2], Path(sys.argv[3]), sys.argv[4]))), flush=True)
