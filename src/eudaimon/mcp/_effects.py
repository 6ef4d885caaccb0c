"""Effect classes from MCP tool annotations, trusted only where the user says so.

The MCP specification calls annotations hints that clients must not rely on from untrusted
servers. So for an untrusted server (the default) an annotation may make a tool stricter
(`destructiveHint` asks for approval) but never safe to re-run; for a trusted one
`readOnlyHint` means READ, `idempotentHint` an idempotent WRITE, `destructiveHint`
IRREVERSIBLE, and no annotation a plain WRITE. A per-tool override decides outright.
"""

from __future__ import annotations

from collections.abc import Mapping

from mcp_types import ToolAnnotations

from eudaimon.core.effects import Effect, ToolTraits
from eudaimon.core.errors import ConfigurationError

EffectOverride = Effect | str | ToolTraits
"""`Effect.READ`, `"irreversible"`, or `ToolTraits(Effect.WRITE, idempotent=True)`."""


def from_annotations(annotations: ToolAnnotations | None, *, trusted: bool) -> ToolTraits:
    hints = annotations or ToolAnnotations()
    read_only = hints.read_only_hint is True
    if hints.destructive_hint is True and not read_only:
        return ToolTraits(Effect.IRREVERSIBLE)
    if not trusted:
        return ToolTraits(Effect.WRITE)
    if read_only:
        return ToolTraits(Effect.READ)
    return ToolTraits(Effect.WRITE, idempotent=hints.idempotent_hint is True)


def as_traits(name: str, value: EffectOverride) -> ToolTraits:
    if isinstance(value, ToolTraits):
        return value
    try:
        return ToolTraits(Effect(value))
    except ValueError:
        raise ConfigurationError(
            f"effects[{name!r}] = {value!r} is not an effect; use Effect.READ, Effect.WRITE, Effect.IRREVERSIBLE "
            "or ToolTraits(Effect.WRITE, idempotent=True)"
        ) from None


def check_overrides(overrides: Mapping[str, ToolTraits], offered: set[str], server: str) -> None:
    unknown = sorted(set(overrides) - offered)
    if unknown:
        raise ConfigurationError(
            f"effects= names {', '.join(map(repr, unknown))}, which MCP server {server} does not offer; "
            f"it offers: {', '.join(sorted(offered)) or 'no tools'}"
        )
