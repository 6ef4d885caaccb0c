"""The loop's control-flow signals: exceptions that say where the loop goes next, not errors.

A signal is raised deep in a step (a model call, a tool's executor, a hook) and caught by
`drive` or by the one shell that drives it, never by a user: each names a turn the loop takes.
They share this base (the runtime's own, exported nowhere: no user catches one) so `drive`
tells them from failures: an exception `drive` does not expect ends the run as failed (`run_failed`), but a signal that
reaches `drive` passes through it untouched, like a store's `JournalError`, and records nothing.

    LoopSignal
    ├── ContextRejected   (model_calls) the request was too long: build a smaller one
    ├── CallCancelled     (call_watch) a cancel closed the model call: journal run_cancelled
    ├── OutcomeLost       (tool_calls) a started call's outcome is lost: decide as after a crash
    └── _ContinueAsNew    (temporal) the history is long: go on in a new workflow execution
"""

from __future__ import annotations


class LoopSignal(Exception):
    """The base of the loop's control-flow signals; never raised itself."""
