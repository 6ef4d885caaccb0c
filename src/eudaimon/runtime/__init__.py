"""`eudaimon.runtime`: the one loop and everything with effects around it, in two packages.

`loop` is the loop and what a step needs (model and tool calls, the journal, the clock, the
config); `process` is the process around runs (starting and reopening them, leases, cancels,
queues, threads, timers, schedules, engines, operations from outside a run). `process` imports
`loop`; `loop` never imports `process`.

Nothing is re-exported here: each module is imported by what it needs, so importing one part of the
runtime does not load the rest.
"""
