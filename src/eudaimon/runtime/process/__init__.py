"""The process around runs: the upper half of the runtime.

Starting, reopening and finishing runs around the loop (`runs`) and what a finished run returns
(`response`, checked by `output`); one driver per run (`leases`, `takeover`), how many at once
(`admission`); cancels, queues and threads (`operations`, `queued`, `threads`); timers and
schedules (`timers`, `schedules`); engines that drive a run elsewhere (`engines`); and reading a
run from its journal (`load_state`). It imports the `loop` package beside it; the loop never
imports it.

Nothing is re-exported here: each module is imported by what it needs.
"""
