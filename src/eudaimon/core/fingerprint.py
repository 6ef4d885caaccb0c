"""What makes an agent, as named parts, and the differences between two of them.

A run outlives the code that started it: an approval may wait three days, across deploys. So
`run_started` records the agent's `version` and a fingerprint of its parts (each tool's schema
and effect class, the system prompt, the model, the output schema), and a process that continues
the run compares its own. Parts are kept apart, rather than one digest, so that a difference can
be named ("tool refund: schema changed") and so that a call knows whether *its* tool changed.

Pure: the agent computes its parts once, when it is built.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from eudaimon.core.digest import digest

Parts = tuple[tuple[str, str], ...]
"""`(part, value)` pairs in a stable order: `model`, `system_prompt`, `output`, then per tool
`tool:<name>:schema` and `tool:<name>:effect`. Digests, except the model id and effect class."""

_TOOL = "tool:"


def fingerprint(
    *,
    model: str,
    system_prompt: str | None,
    output_schema: object,
    tools: Iterable[tuple[str, object, str]],
) -> Parts:
    """The parts of an agent with `model`, `system_prompt` (text, or a function's name),
    `output_schema` (a JSON Schema, or None) and `tools` as `(name, JSON Schema, effect)`."""
    parts: list[tuple[str, str]] = [
        ("model", model),
        ("system_prompt", digest(system_prompt)[:16] if system_prompt else ""),
        ("output", digest(output_schema)[:16] if output_schema is not None else ""),
    ]
    for name, schema, effect in sorted(tools, key=lambda t: t[0]):
        parts.append((f"{_TOOL}{name}:schema", digest(schema)[:16]))
        parts.append((f"{_TOOL}{name}:effect", effect))
    return tuple(parts)


def fingerprint_digest(parts: Parts) -> str:
    """One short name for a fingerprint: equal parts, equal digest."""
    return digest(list(parts))[:16] if parts else ""


@dataclass(frozen=True, slots=True)
class ToolChange:
    """How one tool differs: `removed`, `added`, or its schema and/or effect class changed."""

    tool: str
    removed: bool = False
    added: bool = False
    schema: bool = False
    effect: tuple[str, str] | None = None
    """(before, after) when the effect class changed."""

    def describe(self) -> str:
        if self.removed:
            return f"tool {self.tool} removed"
        if self.added:
            return f"tool {self.tool} added"
        said = []
        if self.schema:
            said.append("schema changed")
        if self.effect is not None:
            said.append(f"effect {self.effect[0]} -> {self.effect[1]}")
        return f"tool {self.tool}: {', '.join(said)}"


def tool_changes(before: Parts, after: Parts) -> dict[str, ToolChange]:
    """Each tool that differs between two fingerprints, by name."""
    old, new = _tools(before), _tools(after)
    changes: dict[str, ToolChange] = {}
    for name in sorted(old.keys() | new.keys()):
        if name not in new:
            changes[name] = ToolChange(name, removed=True)
        elif name not in old:
            changes[name] = ToolChange(name, added=True)
        else:
            (s0, e0), (s1, e1) = old[name], new[name]
            if s0 != s1 or e0 != e1:
                changes[name] = ToolChange(name, schema=s0 != s1, effect=(e0, e1) if e0 != e1 else None)
    return changes


def differences(before: Parts, after: Parts) -> tuple[str, ...]:
    """What differs between two fingerprints, one line per part, in words; () when equal.

    A run recorded before fingerprints existed (`before` empty) differs in nothing that can be named.
    """
    if not before or before == after:
        return ()
    old, new = dict(before), dict(after)
    said: list[str] = []
    if old.get("model") != new.get("model"):
        said.append(f"model {old.get('model') or '?'} -> {new.get('model') or '?'}")
    if old.get("system_prompt") != new.get("system_prompt"):
        said.append("system prompt changed")
    if old.get("output") != new.get("output"):
        said.append("output schema changed")
    said.extend(change.describe() for change in tool_changes(before, after).values())
    return tuple(said)


def tool_effects(parts: Parts) -> dict[str, str]:
    """Each tool's effect class, by name, as the fingerprint recorded it."""
    return {name: effect for name, (_, effect) in _tools(parts).items() if effect}


def _tools(parts: Parts) -> Mapping[str, tuple[str, str]]:
    found: dict[str, list[str]] = {}
    for key, value in parts:
        if key.startswith(_TOOL):
            name, _, which = key[len(_TOOL) :].rpartition(":")
            slot = found.setdefault(name, ["", ""])
            slot[0 if which == "schema" else 1] = value
    return {name: (v[0], v[1]) for name, v in found.items()}
