"""The demo's worker process: `python -m eudaimon.cli.demo._worker STORE RUN_ID start|resume PACE`.

`eudaimon demo` starts it as a real child process, so that killing it with SIGKILL is a real
crash: nothing in the worker gets to clean up, and whatever comes next knows only what the
journal holds. It streams what the run does to its stdout (which it shares with the demo) and
exits when the run finishes or waits for a human.
"""

from __future__ import annotations

import asyncio
import sys

from rich.text import Text

from eudaimon.cli._common import out
from eudaimon.cli._escape import shown
from eudaimon.cli._render import StreamPrinter, status_text
from eudaimon.cli.demo._agent import DEMO_INPUT, demo_agent


async def drive(store: str, run_id: str, mode: str, pace_s: float) -> str:
    """Start or resume the demo run, printing its stream; return the status it stops in."""
    agent = demo_agent(store, pace_s=pace_s)
    console = out()
    try:
        if mode == "start":
            printer = StreamPrinter(console)
            console.print(Text("user ", style="bold") + shown(DEMO_INPUT))
            stream = agent.prompt_stream(DEMO_INPUT, run_id=run_id)
        else:
            before = await agent.state(run_id)
            calls = {call.id: call.name for message in before.messages for call in message.tool_calls}
            printer = StreamPrinter(console, names=calls)
            stream = agent.resume_stream(run_id)
        async for event in stream:
            printer.show(event)
    finally:
        await agent.store.close()
    status = printer.done.status if printer.done is not None else (await agent.state(run_id)).status
    console.print(Text("  run ", style="dim") + shown(run_id) + Text(" ") + status_text(status))
    return str(status)


def main(argv: list[str]) -> int:
    if len(argv) != 4 or argv[2] not in ("start", "resume"):
        print("usage: python -m eudaimon.cli.demo._worker STORE RUN_ID start|resume PACE", file=sys.stderr)
        return 2
    store, run_id, mode, pace = argv
    asyncio.run(drive(store, run_id, mode, float(pace)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
