"""eudaimon on Temporal: the same agent, its runs driven by a fleet of workers.

    agent = Agent(model, tools=[...], store="postgresql://…",
                  engine=TemporalEngine("temporal:7233", task_queue="agents"))

and on every machine of the fleet:

    eudaimon worker --temporal temporal:7233 --task-queue agents --agent myapp:agent --store postgresql://…

`prompt`, `prompt_stream`, `resume`, `approve`, `reconcile`, `state` and `fork` keep their
signatures and results. Deps that serialize travel with a run to its tools; live ones (a
database pool) are the workers' own: `eudaimon worker ... --deps myapp:deps` (`_deps`).
Needs the extra: `pip install -e '.[temporal]'`. Names are imported on first use, so
`eudaimon.cli._worker` (the `worker` command) loads without it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from eudaimon._lazy import lazy

# The public names, imported on first use; this block is their one list (`eudaimon._lazy`).
if TYPE_CHECKING:
    from eudaimon.temporal._engine import TemporalEngine as TemporalEngine
    from eudaimon.temporal._worker import create_worker as create_worker
    from eudaimon.temporal._worker import sandbox_restrictions as sandbox_restrictions
    from eudaimon.temporal._workflow import RunWorkflow as RunWorkflow

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy(__name__, __file__, extra="temporal")
