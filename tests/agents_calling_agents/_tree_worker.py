"""Starts the tree of `_tree.py` in its own process: python _tree_worker.py STORE LEDGER RUN_ID."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from _tree import build


async def main(store: str, ledger: str, run_id: str) -> None:
    async with build(store, Path(ledger)) as agent:
        await agent.prompt("file the invoice", run_id=run_id)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
