"""What a long-lived eudaimon process tells CPython's garbage collector once it has started.

`eudaimon serve` and `eudaimon worker` import FastAPI, Pydantic, uvicorn or temporalio, build
their app and load the agents before they serve: a few hundred thousand objects that live as
long as the process. A full collection walks every tracked object, and stops the whole process
while it does, so with those objects in the old generation each one costs every timer on the
loop tens of milliseconds (with 1,000 runs in flight, full collections took 77–430 ms).
`gc.freeze()` moves every object alive at that moment to a permanent generation the collector
never walks again; what it walks from then on is what the runs themselves keep alive.

The collector's thresholds are left as CPython sets them: a run suspended on its model call
keeps its objects alive across young collections whatever their period, so what shortens full
collections is fewer objects per run (`MemoryStore` keeps ended runs encoded); no threshold
was measured to help (`benchmarks/process_lateness.py` times the pauses in both commands).
"""

from __future__ import annotations

import gc


def freeze_start_up() -> int:
    """Collect what start-up left behind, then exempt every object still alive from later
    collections (objects freed later are still freed: only cycles among them would stay).
    Returns how many objects were frozen. Call once, when the process is about to serve."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
