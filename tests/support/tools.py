"""Sample tools: pure, so a run that calls them can be replayed and compared with its journal."""

from __future__ import annotations

from eudaimon import tool


@tool(effect="read")
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


@tool(effect="read")
def explode(reason: str) -> str:
    """Always fails."""
    raise RuntimeError(reason)


@tool(effect="irreversible")
def transfer(amount: int) -> str:
    """Move money."""
    return f"moved {amount}"
