"""A local run's datasource call whose datasource stays unreachable through the call's own
retries (`RETRY_WAITS_S`) is never answered to the model as an error: whether one of its
tries committed is not known (a commit cut off may have landed, and nothing since could look
it up). The run stops, the call started and unfinished, with an error naming the run and
saying the datasource is unreachable; resumed once the datasource is back, the call is
looked up and run again only if it did not commit, and each row lands exactly once.

The tool (`datasource_fault_agent`) has its connection ended from another session after its
insert on every try of its first attempt: eudaimon's commit is cut off each time. Before, the
call was answered to the model as `DatasourceUnreachable: …`, an error result: the scripted
model, like any model that moves on, went to its next call and the run completed with its
rows missing (and had a cut-off commit landed, the model would have been told a write failed
that was there). When no try can have committed (the connection dead before the tool's
insert, on every try of the first attempt), the unreachable datasource stays the call's error
result: that is the truth. Against a real PostgreSQL, in a local run (no Temporal).
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from _datasource_faults import CALLS, check_each_call_landed_once, local_journal, prompt_once, shop
from datasource_fault_agent import make

from eudaimon.datasources import DatasourceError
from eudaimon.stores.url import open_store

__all__ = ["shop"]  # the fixture this module uses


@pytest.mark.parametrize("shop", ["after_insert"], indirect=True)  # before it, nothing could commit
async def test_a_call_whose_datasource_stays_unreachable_stops_the_run_and_resumes_once(
    tmp_path: Path, shop: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from eudaimon.runtime.loop import datasource_calls

    monkeypatch.setattr(datasource_calls, "RETRY_WAITS_S", (0.01, 0.01))
    monkeypatch.setenv("FAULT_UNTIL_ATTEMPT", "2")  # every try of a call's first attempt is cut off
    url, table = shop
    run_id = f"run-{uuid.uuid4().hex[:8]}"
    store = open_store(local_journal(tmp_path))
    agent = make(store=store)
    stops = 0
    try:
        with pytest.raises(DatasourceError) as stopped:
            await agent.prompt("two rows", run_id=run_id)
        while True:
            stops += 1
            said = str(stopped.value)
            assert run_id in said and "unreachable" in said and "not known" in said, said
            events = await store.load(run_id)
            assert events[-1].type == "tool_started", events  # the call unfinished, the run not failed
            shown = [e for e in events if e.type == "tool_completed" and e.data.is_error]  # type: ignore[union-attr]
            assert not shown, shown  # the model was never shown an error
            assert not any(e.type == "run_failed" for e in events), events
            try:
                response = await agent.resume(run_id)  # the datasource is back for attempt 2
            except DatasourceError as exc:  # the run's next call: its first attempt cut off too
                stopped = pytest.ExceptionInfo.from_exception(exc)
                continue
            break
        events = await store.load(run_id)
    finally:
        await agent.aclose()
        await store.close()
    assert str(response.status) == "completed", events
    check_each_call_landed_once(url, table, run_id, events)
    assert stops == CALLS
    attempts = [e.data.attempt for e in events if e.type == "tool_started"]  # type: ignore[union-attr]
    assert attempts == [1, 2] * CALLS


@pytest.mark.parametrize("shop", ["before_insert"], indirect=True)
async def test_a_call_that_cannot_have_committed_is_an_error_result_with_no_row(
    tmp_path: Path, shop: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import psycopg

    from eudaimon.runtime.loop import datasource_calls

    monkeypatch.setattr(datasource_calls, "RETRY_WAITS_S", (0.01, 0.01))
    monkeypatch.setenv("FAULT_UNTIL_ATTEMPT", "2")
    url, table = shop
    response, events = await prompt_once(None, local_journal(tmp_path))
    assert str(response.status) == "completed", events
    shown = [e.data for e in events if e.type == "tool_completed"]
    assert len(shown) == CALLS and all(d.is_error and "DatasourceUnreachable" in d.output for d in shown), shown  # type: ignore[union-attr]
    with psycopg.connect(url) as conn:
        assert conn.execute(f"SELECT count(*) FROM {table}").fetchone() == (0,)
