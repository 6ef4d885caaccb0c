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

import importlib
from typing import TYPE_CHECKING, Any

from eudaimon._extras import needs

if TYPE_CHECKING:
    from eudaimon.temporal._engine import TemporalEngine
    from eudaimon.temporal._worker import create_worker, sandbox_restrictions
    from eudaimon.temporal._workflow import RunWorkflow

_WHERE = {
    "TemporalEngine": "eudaimon.temporal._engine",
    "create_worker": "eudaimon.temporal._worker",
    "sandbox_restrictions": "eudaimon.temporal._worker",
    "RunWorkflow": "eudaimon.temporal._workflow",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'eudaimon.temporal' has no attribute {name!r}")
    with needs("temporal", f"eudaimon.temporal.{name}"):
        return getattr(importlib.import_module(module), name)


__all__ = ["RunWorkflow", "TemporalEngine", "create_worker", "sandbox_restrictions"]


def __dir__() -> list[str]:
    """The public names, which are imported on first use (so a plain `dir()` would miss them)."""
    return sorted(__all__)
