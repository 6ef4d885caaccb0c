"""A caller through `TemporalEngine` never starts a run twice and never sees a raw Temporal error.

The run's workflow id is the run id, started with a reuse policy that refuses a second start:
a retried `prompt(run_id=…)` finds the run that exists and waits on it (its WRITE ran once);
a caller whose Temporal cannot be reached is told the run id and what to do.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from _fleet import in_process_worker
from fleet_agent import make
from temporalio.client import Client

from eudaimon.errors import InvalidOperation, RunError
from eudaimon.temporal import TemporalEngine


def _charges(ledger: Path) -> list[dict[str, object]]:
    lines = ledger.read_text().splitlines() if ledger.exists() else []
    return [row for row in map(json.loads, lines) if row["tool"] == "charge"]


async def test_a_retried_prompt_finds_its_run(
    client: Client, temporal_target: str, task_queue: str, store_url: str, ledger: Path
) -> None:
    """The same run id prompted again, at once and after the run ended: one run, one WRITE,
    every caller answered with its output."""
    async with in_process_worker(client, task_queue, store_url):
        agent = make(store=store_url, engine=TemporalEngine(temporal_target, task_queue=task_queue))
        first, second = await asyncio.gather(
            agent.prompt("read then write", run_id="run_retried"),
            agent.prompt("read then write", run_id="run_retried"),
        )
        third = await agent.prompt("read then write", run_id="run_retried")
        assert first.run_id == second.run_id == third.run_id == "run_retried"
        assert first.output == second.output == third.output
        assert "charged 5" in first.output
        assert len(_charges(ledger)) == 1
        with pytest.raises(InvalidOperation, match="another input"):
            await agent.prompt("wire money", run_id="run_retried")
        await agent.aclose()


async def test_an_unreachable_temporal_is_a_eudaimon_error_with_the_run_id(store_url: str) -> None:
    agent = make(store=store_url, engine=TemporalEngine("127.0.0.1:1", task_queue="nowhere"))
    with pytest.raises(RunError) as raised:
        await agent.prompt("read then write", run_id="run_unreached")
    assert raised.value.run_id == "run_unreached"
    assert "resume" in str(raised.value)
    await agent.aclose()
