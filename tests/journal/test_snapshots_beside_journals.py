"""Snapshots are derived data, kept beside the journals they were folded from.

`fixtures/snapshots/fold<N>/<journal>.json` is the snapshot today's fold (`FOLD_VERSION` N) makes
of `fixtures/v1/<journal>.jsonl`. A snapshot of the current version must decode to exactly the
fold of its journal; one of an older version must be ignored (and the journal folded instead).
After bumping `FOLD_VERSION`, write the new version's files with
`python tests/journal/test_snapshots_beside_journals.py`; never edit older ones.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from eudaimon import Agent
from eudaimon.core.codec import FOLD_VERSION, event_from_json, state_from_json, state_to_json
from eudaimon.core.events import Event
from eudaimon.core.state import RunState
from eudaimon.errors import GuardrailBlocked, MaxIterations
from eudaimon.models import ScriptedModel
from eudaimon.runtime.process.load_state import load_state
from eudaimon.stores import MemoryStore
from eudaimon.stores.base import Snapshot

FIXTURES = Path(__file__).parent / "fixtures"
JOURNALS = sorted((FIXTURES / "v1").glob("*.jsonl"))
SNAPSHOTS = FIXTURES / "snapshots"


def _events(path: Path) -> list[Event]:
    return [event_from_json(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _fold(path: Path) -> RunState:
    state = RunState.from_events(_events(path))
    assert state is not None
    return state


@pytest.mark.parametrize("journal", JOURNALS, ids=lambda p: p.stem)
def test_each_journal_has_a_snapshot_of_the_current_fold_that_equals_its_fold(journal: Path) -> None:
    """Invariant: the snapshot kept beside a journal, for today's FOLD_VERSION, reads back as
    exactly the state the journal folds to, and today's writer still reads it the same."""
    path = SNAPSHOTS / f"fold{FOLD_VERSION}" / f"{journal.stem}.json"
    assert path.exists(), f"no {path}: run `python {__file__}` after bumping FOLD_VERSION"
    stored = state_from_json(path.read_text(encoding="utf-8"))
    assert stored == _fold(journal)
    assert state_from_json(state_to_json(_fold(journal))) == stored


@pytest.mark.parametrize(
    "path", sorted(p for p in SNAPSHOTS.glob("fold*/*.json") if p.parent.name != f"fold{FOLD_VERSION}")
)
async def test_a_snapshot_of_an_older_fold_is_ignored_and_the_journal_folded(path: Path) -> None:
    """Invariant: a snapshot written by an older fold is never trusted: `state_from_json` gives
    None, and `load_state` (what `agent.state()` and the CLI use) folds the events instead."""
    text = path.read_text(encoding="utf-8")
    assert state_from_json(text) is None
    journal = _events(FIXTURES / "v1" / f"{path.stem}.jsonl")
    store = MemoryStore()
    await store.append(journal[0].run_id, 0, journal)
    await store.save_snapshot(Snapshot(f"run:{journal[0].run_id}", len(journal) - 1, text))
    assert await load_state(store, journal[0].run_id) == RunState.from_events(journal)


async def test_old_failed_journals_raise_the_error_their_facts_say() -> None:
    """Invariant: runs that failed before the limit and the guardrail were journaled as fields
    still raise the right error with the right facts, read from their text."""
    store = MemoryStore()
    for name in ("failed_max_iterations", "failed_output_block"):
        events = _events(FIXTURES / "v1" / f"{name}.jsonl")
        await store.append(events[0].run_id, 0, events)
    agent = Agent(ScriptedModel([]), store=store, max_iterations=7)
    with pytest.raises(MaxIterations) as reached:
        await agent.resume("run-golden-max-iterations")
    assert reached.value.limit == 1
    with pytest.raises(GuardrailBlocked) as blocked:
        await agent.resume("run-golden-output-block")
    assert (blocked.value.guardrail, blocked.value.reason) == ("no_secrets", "mentions a secret")


def write_snapshot_fixtures() -> None:
    """Write `fixtures/snapshots/fold<FOLD_VERSION>/` from the journals (after a version bump)."""
    directory = SNAPSHOTS / f"fold{FOLD_VERSION}"
    directory.mkdir(parents=True, exist_ok=True)
    for journal in JOURNALS:
        (directory / f"{journal.stem}.json").write_text(state_to_json(_fold(journal)) + "\n", encoding="utf-8")


if __name__ == "__main__":
    write_snapshot_fixtures()
