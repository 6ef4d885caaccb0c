"""A datasource call whose transaction's connection dies (the server ended it: a restart, a
failover, a killed backend) is run again in a new transaction, and its row lands once; the
model is never shown an error the tool did not raise.

The tool (`datasource_fault_agent`) has its connection ended from another session, after its
insert (eudaimon's commit of the row and the completion record finds the connection gone, so
nothing was written) or before it (the tool's statement fails on a connection that was dead
when the call got it). Before, that was answered to the model as the tool's error
(`DatasourceError: … committing failed`): the scripted model, like any model that moves on,
went to its next call, and the run completed with its rows missing, as the Temporal kill -9
soak once reported ("1 lost"). On a Temporal worker and in a local run alike, against a real
PostgreSQL (and a real Temporal dev server).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _datasource_faults import CALLS, check_each_call_landed_once, local_journal, prompt_once, shop
from _fleet import in_process_worker
from temporalio.client import Client

from eudaimon.temporal import TemporalEngine

__all__ = ["shop"]  # the fixture this module uses


async def test_a_call_whose_connection_dies_runs_again_on_a_temporal_worker(
    client: Client, temporal_target: str, task_queue: str, store_url: str, shop: tuple[str, str]
) -> None:
    url, table = shop
    async with in_process_worker(client, task_queue, store_url, spec="datasource_fault_agent:make"):
        response, events = await prompt_once(TemporalEngine(temporal_target, task_queue=task_queue), store_url)
    assert str(response.status) == "completed", events
    check_each_call_landed_once(url, table, response.run_id, events)


async def test_a_call_whose_connection_dies_runs_again_in_a_local_run(tmp_path: Path, shop: tuple[str, str]) -> None:
    url, table = shop
    response, events = await prompt_once(None, local_journal(tmp_path))
    assert str(response.status) == "completed", events
    check_each_call_landed_once(url, table, response.run_id, events)


async def test_a_call_whose_every_attempt_fails_is_recovered_on_a_temporal_worker(
    client: Client,
    temporal_target: str,
    task_queue: str,
    store_url: str,
    shop: tuple[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The datasource fails each call through its retries in the worker and Temporal's attempts
    (`read_attempts=2`) twice over: the workflow does not answer the model with an error but
    recovers the call (`tool_started` again, at the next attempt), which looks the record up
    and runs the tool again; the third loop attempt gets through."""
    from eudaimon.runtime.loop import datasource_calls

    monkeypatch.setattr(datasource_calls, "RETRY_WAITS_S", (0.01,))  # the worker runs in this process
    monkeypatch.setenv("FAULT_UNTIL_ATTEMPT", "3")
    url, table = shop
    async with in_process_worker(client, task_queue, store_url, spec="datasource_fault_agent:make"):
        engine = TemporalEngine(temporal_target, task_queue=task_queue, read_attempts=2)
        response, events = await prompt_once(engine, store_url)
    assert str(response.status) == "completed", events
    check_each_call_landed_once(url, table, response.run_id, events)
    attempts = [e.data.attempt for e in events if e.type == "tool_started"]  # type: ignore[union-attr]
    assert attempts == [1, 2, 3] * CALLS
