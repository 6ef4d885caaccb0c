"""`eudaimon runs list --check`: every listed run whose Temporal workflow closed outside the
loop is recorded (`_gave_up.record_if_gave_up`), one client per engine URL. The operator asked
about these rows: each is described, not looked up in visibility, which lags by seconds."""

from __future__ import annotations

from temporalio.client import Client

from eudaimon.core.errors import RunNotFound
from eudaimon.runtime.process.load_state import load_state
from eudaimon.stores.base import EventStore
from eudaimon.temporal._connect import connect
from eudaimon.temporal._engine import TemporalEngine
from eudaimon.temporal._gave_up import record_if_gave_up


async def check_runs(store: EventStore, run_ids: list[str]) -> list[str]:
    """Record every run of `run_ids` whose Temporal workflow closed outside the loop
    (`record_if_gave_up`); the ids recorded now. Runs of other engines are left alone."""
    clients: dict[str, Client] = {}
    recorded: list[str] = []
    for run_id in run_ids:
        try:
            state = await load_state(store, run_id)
        except RunNotFound:
            continue
        if state.status.is_terminal or not state.engine.startswith("temporal"):
            continue
        engine = TemporalEngine.from_url(state.engine)
        client = clients.get(engine.url)
        if client is None:
            client = clients[engine.url] = await connect(engine.target, engine.namespace)
        after = await record_if_gave_up(client, store, run_id)
        if after is not None and after.status.is_terminal:
            recorded.append(run_id)
    return recorded
