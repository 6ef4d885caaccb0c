"""`eudaimon runs cancel RUN_ID`: stop a run from outside its loop, wherever it is driven.

A run nobody drives (it waits for a human, or its driver died) is cancelled here at once. A run
another process drives gets a request in the store (`runtime.loop.cancel_requests`): its driver
sees it within its poll interval, a model call it waits on included, closes that call and
journals `run_cancelled` with who and why.
"""

from __future__ import annotations

from typing import Annotated

import typer

from eudaimon.cli._common import RunArgument, StoreOption, out, resolve_store_url, run_async, with_store
from eudaimon.cli._escape import shown
from eudaimon.cli._ops import ByOption, login_name
from eudaimon.runtime.process import operations

ReasonOption = Annotated[str, typer.Option("--reason", help="Why, for the journal's `run_cancelled`.")]


def register(runs: typer.Typer) -> None:
    """Add `cancel` to the `runs` group."""
    runs.command("cancel")(cancel)


def cancel(
    run_id: RunArgument,
    store: StoreOption = None,
    reason: ReasonOption = "cancelled from the command line",
    by: ByOption = None,
) -> None:
    """Cancel a run that has not ended. One driven by another process stops within its poll
    interval (about a second), a model call under way included."""
    url = resolve_store_url(store)
    who = by or login_name()
    done = run_async(with_store(url, lambda journal: operations.cancel(journal, run_id, reason=reason, by=who)))
    console = out()
    suffix = f" (by {who})" if who else ""
    if done is not None:
        console.print(shown(f"cancelled run {run_id}{suffix}"))
    else:
        console.print(shown(f"cancel requested for run {run_id}{suffix}: the process driving it stops it shortly"))
