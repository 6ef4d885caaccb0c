"""Replays are runs of their own, kept out of listings and the dashboard unless asked for: by
the run they replay, or with `replays=True` (and by agent version). In every store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from _change_agents import open_store
from _replay_agents import Counter, support

from eudaimon.stores import MemoryStore, index

STORES = ["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.mark.parametrize("kind", STORES)
async def test_replays_are_listed_only_when_asked_for(kind: str, tmp_path: Path) -> None:
    """Invariant: a listing shows the originals only; `replay_of` lists a run's replays,
    `version` with `replays=True` an agent version's; the dashboard counts the originals."""
    store = MemoryStore() if kind == "memory" else open_store(kind, tmp_path)
    try:
        counter = Counter()
        v1 = support(store, counter)
        first = await v1.prompt("refund order 1")
        second = await v1.prompt("refund order 2")
        replay = await support(store, counter, prompt="Be generous.", version="v2").replay(first.run_id)

        listed = {r.run_id for r in await index.query_runs(store, index.RunQuery(limit=50))}
        assert listed == {first.run_id, second.run_id}
        of_first = await index.query_runs(store, index.RunQuery(replay_of=first.run_id))
        assert [r.run_id for r in of_first] == [replay.run_id]
        assert of_first[0].version == "v2" and of_first[0].replay_of == first.run_id
        v2 = await index.query_runs(store, index.RunQuery(version="v2", replays=True))
        assert [r.run_id for r in v2] == [replay.run_id]
        assert {r.run_id for r in await index.query_runs(store, index.RunQuery(version="v1"))} == listed
        days = await index.dashboard(store, datetime.now(UTC) - timedelta(days=1), None)
        assert sum(d.runs for d in days) == 2
    finally:
        await store.close()
