"""Every import in `src/eudaimon` points down the layers, and no folders import each other in a circle.

The layers, lowest first, are the ranks in `LAYERS`. A module may import its own folder, any
folder of a lower rank, and a folder of the same rank as long as the folders of that rank form
no circle. The outer shells share the top rank; which shell may use which is written out in
`SHELL_USES` (anything else between shells is an upward import).

What counts as an import: every `import` and `from … import` anywhere in a module's AST —
at the top, inside functions (a lazy import is still a dependency; it only delays it) and under
`if TYPE_CHECKING:` (a type-only import still ties the lower layer's meaning to the higher one,
and mypy follows it). Relative imports are resolved against the module's package.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import eudaimon

SRC = Path(eudaimon.__file__).parent

SHELL = 6
LAYERS: dict[str, int] = {
    "core": 0,
    "_extras": 1,
    "_lazy": 1,
    "errors": 2,
    "streaming": 2,
    "models": 3,
    "tools": 3,
    "stores": 3,
    "memory": 3,
    "extensions": 3,
    "cost": 3,
    "guardrails": 3,
    "hitl": 3,
    "hooks": 3,
    "middleware": 3,
    "prompts": 3,
    "retry": 3,
    "datasources": 3,
    "runtime": 4,
    "agent": 5,
    # The package root re-exports the public names (agent and below) and is what users import;
    # a shell may import it, nothing below the shells may.
    "__init__": 5,
    "cli": SHELL,
    "server": SHELL,
    "temporal": SHELL,
    "mcp": SHELL,
    "a2a": SHELL,
    "ag_ui": SHELL,
    "telemetry": SHELL,
    "__main__": SHELL + 1,
}

# Shell -> shells it may import. `cli` registers `serve`, `mcp` and `worker`, importing the server,
# the MCP stdio server and the Temporal worker inside those commands; the protocols (`a2a`, `ag_ui`, `mcp`) register their routes
# on the server's registration point (`eudaimon.server.protocols`), so the server never names them.
SHELL_USES: dict[str, frozenset[str]] = {
    "cli": frozenset({"server", "temporal", "mcp"}),
    "a2a": frozenset({"server"}),
    "ag_ui": frozenset({"server"}),
    "server": frozenset(),
    "temporal": frozenset(),
    "mcp": frozenset({"server"}),
    "telemetry": frozenset(),
}


@dataclass(frozen=True, slots=True)
class Import:
    path: Path
    line: int
    source: str
    target: str

    def __str__(self) -> str:
        return (
            f"{self.path.relative_to(self.path.parents[len(self.source.split('.')) - 1])}:{self.line} → {self.target}"
        )


def _module_name(path: Path, root: Path = SRC) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, root: Path) -> list[Import]:
    name = _module_name(path, root)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: list[Import] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                targets = [".".join([*base, *([node.module] if node.module else [])])]
            else:
                targets = [node.module or ""]
        found.extend(Import(path, node.lineno, name, t) for t in targets if t.split(".")[0] == "eudaimon")
    return found


def _folder(module: str) -> str:
    """The unit a module belongs to: its folder under `eudaimon`, or the top-level module's name."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def all_imports(root: Path = SRC) -> list[Import]:
    return [imp for path in sorted(root.rglob("*.py")) for imp in _imports(path, root)]


def upward(imports: list[Import]) -> list[Import]:
    """Imports from a lower layer to a higher one, and shell-to-shell imports `SHELL_USES` does not allow."""
    bad = []
    for imp in imports:
        source, target = _folder(imp.source), _folder(imp.target)
        if source == target:
            continue
        rank_source, rank_target = LAYERS[source], LAYERS[target]
        if rank_target > rank_source or (rank_source == rank_target == SHELL and target not in SHELL_USES[source]):
            bad.append(imp)
    return bad


def circles(imports: list[Import]) -> list[list[str]]:
    """Groups of folders that import each other, directly or around a circle (Tarjan's SCCs)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for imp in imports:
        source, target = _folder(imp.source), _folder(imp.target)
        if source != target:
            graph[source].add(target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def test_every_folder_has_a_layer() -> None:
    """Invariant: a new folder or top-level module is placed in a layer before it can import anything."""
    folders = {_folder(_module_name(path)) for path in SRC.rglob("*.py")}
    assert folders <= set(LAYERS), f"give these a layer in LAYERS: {sorted(folders - set(LAYERS))}"


def test_no_import_points_up() -> None:
    """Invariant: no module imports a higher layer, or a shell it is not listed as using."""
    bad = upward(all_imports())
    assert not bad, f"{len(bad)} upward imports:\n" + "\n".join(map(str, bad))


def test_no_circle_across_folders() -> None:
    """Invariant: folders form no circle of imports (files within one folder may)."""
    imports = all_imports()
    groups = circles(imports)
    lines = []
    for group in groups:
        members = set(group)
        edges: dict[tuple[str, str], list[Import]] = defaultdict(list)
        for imp in imports:
            source, target = _folder(imp.source), _folder(imp.target)
            if source != target and source in members and target in members:
                edges[source, target].append(imp)
        lines.append(" ↔ ".join(group))
        lines.extend(f"  {s} → {t} ({len(found)}), first {found[0]}" for (s, t), found in sorted(edges.items()))
    assert not groups, f"{len(groups)} circles across folders:\n" + "\n".join(lines)


def test_the_check_sees_an_upward_import_and_a_circle(tmp_path: Path) -> None:
    """Invariant: the check is not vacuous — a planted upward import and a planted circle are both found."""
    package = tmp_path / "eudaimon"
    (package / "core").mkdir(parents=True)
    (package / "tools").mkdir()
    (package / "models").mkdir()
    (package / "core" / "x.py").write_text("def f():\n    from eudaimon.agent import Agent\n")
    (package / "tools" / "t.py").write_text("from ..models import m\n")
    (package / "models" / "m.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import eudaimon.tools.t\n"
    )
    found = all_imports(package)
    assert [(imp.line, imp.target) for imp in upward(found)] == [(2, "eudaimon.agent")]
    assert circles(found) == [["models", "tools"]]


def _module_circles(imports: list[Import], package: str) -> list[list[str]]:
    """Groups of modules of `package` (itself and the modules under it) that import each other
    (Tarjan's SCCs over modules, not folders)."""

    def inside(module: str) -> bool:
        return module == package or module.startswith(package + ".")

    graph: dict[str, set[str]] = defaultdict(set)
    for imp in imports:
        if inside(imp.source) and inside(imp.target) and imp.source != imp.target:
            graph[imp.source].add(imp.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while (member := stack.pop()) != node:
                group.append(member)
            if group:
                groups.append(sorted([node, *group]))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def test_the_loop_never_imports_the_process_around_it() -> None:
    """Invariant: the process package (leases, queues, engines, operations) stands on the loop package,
    never the other way: the loop can be read, tested and replayed without the process."""
    bad = [
        imp
        for imp in all_imports()
        if imp.source.startswith("eudaimon.runtime.loop.") and imp.target.startswith("eudaimon.runtime.process.")
    ]
    assert not bad, f"{len(bad)} imports from the loop up into the process:\n" + "\n".join(map(str, bad))


def test_no_circle_among_the_runtime_modules() -> None:
    """Invariant: the runtime's modules import each other in no circle (type-only and lazy imports count)."""
    groups = _module_circles(all_imports(), "eudaimon.runtime")
    assert not groups, f"{len(groups)} circles of runtime modules:\n" + "\n".join(" ↔ ".join(g) for g in groups)


def test_no_circle_among_the_agent_modules() -> None:
    """Invariant: the agent package's modules, its `__init__` among them, import each other in no
    circle (type-only and lazy imports count): a helper of `Agent` (`_start`, `_queued`,
    `_delegation`, `agent_runtime`) names what it reads of an agent as a protocol (`_faces`,
    `HoldsRuntime`), never `Agent` or `DrivenRuns`, whose modules import it."""
    groups = _module_circles(all_imports(), "eudaimon.agent")
    assert not groups, f"{len(groups)} circles of agent modules:\n" + "\n".join(" ↔ ".join(g) for g in groups)


def test_the_module_circle_check_sees_a_circle(tmp_path: Path) -> None:
    """Invariant: the module check is not vacuous — a planted type-only circle of two modules is found."""
    package = tmp_path / "eudaimon" / "runtime" / "loop"
    package.mkdir(parents=True)
    (package / "a.py").write_text("from eudaimon.runtime.loop.b import B\n")
    agent = tmp_path / "eudaimon" / "agent"
    agent.mkdir()
    (agent / "__init__.py").write_text("from eudaimon.agent._helper import helper\n")
    (agent / "_helper.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from eudaimon.agent import Agent\n"
    )
    (package / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from eudaimon.runtime.loop.a import A\n"
    )
    found = all_imports(tmp_path / "eudaimon")
    assert _module_circles(found, "eudaimon.runtime") == [["eudaimon.runtime.loop.a", "eudaimon.runtime.loop.b"]]
    assert _module_circles(found, "eudaimon.agent") == [["eudaimon.agent", "eudaimon.agent._helper"]]
