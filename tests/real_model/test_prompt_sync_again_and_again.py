"""`prompt_sync` again and again against the real server, and no connection left open to it.

Bug (issue 26): the second `prompt_sync` on `Agent("openai-compatible:…")` raised "Event loop
is closed": the SDK client was bound to the first call's loop.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from eudaimon import Agent
from eudaimon.models.registry import infer_model


def connections_to(port: int) -> int:
    """This process's established TCP connections to `port` on 127.0.0.1 (from /proc)."""
    mine = {
        link.removeprefix("socket:[").removesuffix("]")
        for fd in Path("/proc/self/fd").iterdir()
        if (link := os.readlink(fd) if fd.is_symlink() else "").startswith("socket:[")
    }
    count = 0
    for row in Path("/proc/self/net/tcp").read_text().splitlines()[1:]:
        fields = row.split()
        remote, state, inode = fields[2], fields[3], fields[9]
        if remote.endswith(f":{port:04X}") and state == "01" and inode in mine:
            count += 1
    return count


def test_prompt_sync_again_and_again_on_the_real_server(real_model):
    """Three `prompt_sync` calls complete; each call's connection is closed with its loop."""
    model = infer_model(real_model.model_string, base_url=real_model.base_url)
    agent = Agent(model, memory=None, max_tokens=8, temperature=0.0)
    statuses = [agent.prompt_sync(f"Say the number {n}.").status for n in range(3)]
    assert statuses == ["completed"] * 3
    assert connections_to(real_model.port) == 0

    async def held_while_the_loop_runs() -> int:
        await agent.prompt("Say yes.")
        return connections_to(real_model.port)

    assert asyncio.run(held_while_the_loop_runs()) == 1, "the count sees a kept-alive connection"
    assert connections_to(real_model.port) == 0
