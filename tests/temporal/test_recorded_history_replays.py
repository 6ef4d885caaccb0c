"""Workflow determinism: recorded histories of every path replay against today's code, under
Temporal's strict sandbox, and a divergent one fails loudly.

This is where eudaimon's determinism is checked, now that workers pass it through the sandbox:
the replayer imports eudaimon inside the sandbox (`sandbox_restrictions(module)`, strict), so a
clock, randomness or I/O in the workflow's code fails here, and a change to what the workflow
schedules fails here before it fails runs in flight on deploy.

- `histories/wire_money_approved.json`: a run recorded before content parts, snapshots, stash
  deletion and continue-as-new; `picture_by_reference.json`: the release with them.
- `histories/v2/`: the release before (every append an activity).
- `histories/v3/`: the release before that (eudaimon passed through, the model activity
  carrying its attempt's append, a batch no effect carries appended by a local activity).
- `histories/v4/`: the release before (the caller's `settled` Update delivered with the start,
  a run started with every earlier patch taking it without a marker).
- `histories/v5/`: this release (a READ call a local activity), one history per path of the
  loop: tools, parallel calls, an approval,
  a reconciliation, a retried model call, continue-as-new (both executions), a cancellation,
  an approval deadline fired by the workflow's timer and a `RetryAfter` woken by one (the
  `eudaimon.durable-timers` patch; the histories before it have no deadline and no marker), an
  approval awaited on a fresh execution (both), an agent used as a tool (`children`), and a
  sub-second `RetryAfter` that slept in the worker, no timer (`short_wake`, the
  `eudaimon.short-waits-sleep-in-the-worker` patch; the `wake` of v4 and v5 has a short timer
  and no marker).
  Recorded by `record_history.py`.

The replays run in one fresh interpreter (`replay_histories.py`), not in the pytest worker: in
one full suite a replay in a worker that had run other tests never returned (temporalio's
replayer waits on its core without a timeout); a replay that hangs is run again in a fresh one.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from replay_histories import HUNG_EXIT, MARK

HERE = Path(__file__).parent
HISTORIES = HERE / "histories"
FIXTURE = HISTORIES / "wire_money_approved.json"
RECORDED = sorted(str(p.relative_to(HISTORIES).with_suffix("")) for p in HISTORIES.rglob("*.json"))
PATHS = (
    "tools",
    "parallel",
    "approval",
    "reconciliation",
    "retry",
    "continue_as_new",
    "cancel",
    "deadline",
    "wake",
    "children",
)


def replayed(paths: list[Path]) -> dict[Path, str | None]:
    """Each history's replay failure (None: replayed), from `replay_histories.py` in a fresh
    interpreter. A replay that hung is run again once in another; one that hangs twice fails."""
    results: dict[Path, str | None] = {}
    hung: Counter[Path] = Counter()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent), os.environ.get("PYTHONPATH", "")])}
    todo = [path.resolve() for path in paths]
    while todo:
        done = subprocess.run(
            [sys.executable, "replay_histories.py", *map(str, todo)],
            cwd=HERE,
            env=env,
            capture_output=True,
            text=True,
            timeout=1200,
            check=False,
        )
        rows = [json.loads(line.removeprefix(MARK)) for line in done.stdout.splitlines() if line.startswith(MARK)]
        for row in rows:
            path = Path(row["path"])
            if row.get("hung"):
                hung[path] += 1
                if hung[path] == 2:
                    results[path] = "the replay did not end, twice, each time in a fresh interpreter"
            else:
                results[path] = row["failure"]
        if done.returncode not in (0, HUNG_EXIT):
            raise AssertionError(f"replay_histories.py failed ({done.returncode}): {done.stderr[-3000:]}")
        todo = [path for path in todo if path not in results]
    return results


@pytest.fixture(scope="module")
def replays() -> dict[Path, str | None]:
    return replayed([HISTORIES / f"{name}.json" for name in RECORDED])


def test_this_release_has_a_history_of_every_path() -> None:
    assert {f"v5/{path}" for path in PATHS} <= set(RECORDED)
    assert {f"v{release}/{path}" for release in (2, 3, 4) for path in PATHS} <= set(RECORDED)  # the releases before
    assert {"wire_money_approved", "picture_by_reference"} <= set(RECORDED)
    assert {"v4/short_wake", "v5/short_wake"} <= set(RECORDED)  # a short wait asleep in the worker


@pytest.mark.parametrize("name", RECORDED)
def test_recorded_history_replays_without_nondeterminism(name: str, replays: dict[Path, str | None]) -> None:
    """Today's workflow code makes the same decisions the recorded run made."""
    assert replays[(HISTORIES / f"{name}.json").resolve()] is None


def test_a_divergent_history_fails_the_replay(tmp_path: Path) -> None:
    """A history whose recorded tool activity is not what the code schedules is refused:
    the replay test above can fail."""
    doc = json.loads(FIXTURE.read_text())
    for event in doc["events"]:
        attributes = event.get("activityTaskScheduledEventAttributes")
        if attributes and attributes["activityType"]["name"] == "eudaimon.tool":
            attributes["activityType"]["name"] = "eudaimon.some_other_effect"
    divergent = tmp_path / "divergent.json"
    divergent.write_text(json.dumps(doc))
    [failure] = replayed([divergent]).values()
    assert failure is not None and re.search(r"(?i)nondetermin", failure), failure
