"""What a long-lived eudaimon process tells CPython's garbage collector once it has started.

`eudaimon serve` and `eudaimon worker` import FastAPI, Pydantic, uvicorn or temporalio, build
their app and load the agents before they serve: a few hundred thousand objects that live as
long as the process. A full collection walks every tracked object, and stops the whole process
while it does, so with those objects in the old generation each one costs every timer on the
loop tens of milliseconds (with 1,000 runs in flight, full collections took 77–430 ms).
`gc.freeze()` moves every object alive at that moment to a permanent generation the collector
never walks again; what it walks from then on is what the runs themselves keep alive.

The young generations' thresholds are left as CPython sets them: a run suspended on its model
call keeps its objects alive across young collections whatever their period. What is changed is
how often a full collection runs: after every `FULL_EVERY` collections of the middle generation
instead of every 10. With 1,000 runs in flight a full collection walks their objects (tens of
milliseconds, every timer on the loop waiting), and at CPython's pace four of them fell in the
ten seconds of `benchmarks/process_lateness.py`'s serve burst, so its p99 was their length.
What that costs: a cycle of garbage that outlives two young collections is freed later (the
runtime makes next to none: its collections found 0.0 objects a step to free); memory held by
what is alive is the same.
"""

from __future__ import annotations

import gc

FULL_EVERY = 100
"""Collections of the middle generation between two full ones (CPython's default: 10)."""


def freeze_start_up() -> int:
    """Collect what start-up left behind, then exempt every object still alive from later
    collections (objects freed later are still freed: only cycles among them would stay), and
    run full collections after `FULL_EVERY` middle ones. Returns how many objects were frozen.
    Call once, when the process is about to serve."""
    gc.collect()
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_EVERY)
    return gc.get_freeze_count()
