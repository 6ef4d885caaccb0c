"""The seam observers (tracing) hang on: a run's attempts and the events they record.

An attempt is one process driving a run, from taking its lease to letting go. Observers see
only what is recorded live, as it is recorded: events read back from the journal on resume
are never shown to them, so a recorded effect is never reported as happening again. An
observer may record events itself (`journal.record`) before the one it is shown; none is
given to it after a terminal event.

The observers and their protocol (`journal.observers`, `journal.RunObserver`) sit with the
journal, which calls them as it records; a model call shows them here what the journal does
not keep (`model_answered`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from eudaimon.runtime.loop.journal import observers

if TYPE_CHECKING:
    from eudaimon.models.base import ChatRequest, ChatResponse
    from eudaimon.runtime.loop.journal import RunJournal


def model_answered(
    journal: RunJournal, request: ChatRequest, response: ChatResponse | None, error: BaseException | None
) -> None:
    """Show observers that have a `model_answered` method what a model call was asked and
    what came back (or the error it raised), before its outcome is recorded: what the journal
    does not keep (the provider's response id, the request's parameters as sent)."""
    for observer in observers:
        answered = getattr(observer, "model_answered", None)
        if answered is not None:
            answered(journal, request, response, error)
