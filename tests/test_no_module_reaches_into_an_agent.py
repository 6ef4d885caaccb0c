"""No module but the Agent's own reaches a private attribute of an `Agent`.

An agent's helpers (`agent/_start.py`, `_queued.py`, `_delegation.py`) and engines (the Temporal
worker and workflow) use its one internal interface, `AgentRuntime`, handed by the agent or got
with `runtime_of(agent)`: so the Agent's private parts can change without the modules around it.

What counts as a reach: `x._name` anywhere in a module's AST where `_name` is a private attribute
or method of an `Agent` (read off a real one) and `x` is not `self` or `cls` (another class's own
`self._name` is its own business).
"""

from __future__ import annotations

import ast
from pathlib import Path

import eudaimon
from eudaimon import Agent
from eudaimon.models import FunctionModel
from eudaimon.stores import MemoryStore

SRC = Path(eudaimon.__file__).parent
OWN = (SRC / "agent" / "_agent.py", SRC / "agent" / "agent_runtime.py")
"""The Agent's own module, and the one that hands its runtime out (`runtime_of`)."""


def agent_private_names() -> frozenset[str]:
    agent = Agent(FunctionModel(lambda request: "ok"), store=MemoryStore())
    names = {*vars(agent), *dir(type(agent))}
    return frozenset(n for n in names if n.startswith("_") and not n.startswith("__"))


def reaches(source: str, private: frozenset[str]) -> list[tuple[int, str]]:
    """(line, `x._name`) for each reach into an Agent's private attribute in `source`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in private:
            owner = node.value
            if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
                continue
            found.append((node.lineno, f"{ast.unparse(owner)}.{node.attr}"))
    return found


def test_the_check_sees_a_reach() -> None:
    private = agent_private_names()
    assert "_runtime" in private
    assert reaches("agent._runtime.config\nself._runtime\n", private) == [(1, "agent._runtime")]


def test_no_module_other_than_the_agents_own_reaches_a_private_attribute_of_an_agent() -> None:
    private = agent_private_names()
    found = [
        f"{path.relative_to(SRC)}:{line} {reach}"
        for path in sorted(SRC.rglob("*.py"))
        if path not in OWN
        for line, reach in reaches(path.read_text(), private)
    ]
    assert not found, "reaches into an Agent's private parts (use AgentRuntime / runtime_of):\n" + "\n".join(found)
