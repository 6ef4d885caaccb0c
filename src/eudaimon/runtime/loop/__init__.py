"""The one loop (`loop.drive`) and what a step needs: the lower half of the runtime.

A step asks the model (`model_calls`), decides and runs the calls it returned (`call_intents`,
`tool_calls`, `datasource_calls`), and records every event in the run's journal (`journal`),
under the config the agent resolved once (`config`) and the clock it was given (`clock`). Nothing
here starts, reopens, leases or schedules a run: that is the `process` package beside it, which
imports this package and is never imported by it.

Nothing is re-exported here: each module is imported by what it needs.
"""
