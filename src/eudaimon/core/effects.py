"""What a tool does to the world, which decides whether it may run again after a crash."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Effect(StrEnum):
    """A tool's effect class (DESIGN §4). Lower-case names are accepted: `Effect("read")`."""

    READ = "read"
    """Only reads: safe to run again, with the same idempotency key."""
    WRITE = "write"
    """Changes something; runs again after a crash only when declared idempotent."""
    IRREVERSIBLE = "irreversible"
    """Cannot be undone (sending money, an e-mail): never re-run, approval by default."""

    @classmethod
    def _missing_(cls, value: object) -> Effect | None:
        if isinstance(value, str):
            return cls.__members__.get(value.upper())
        return None


@dataclass(frozen=True, slots=True)
class ToolTraits:
    """What recovery needs to know about a tool, without the tool itself."""

    effect: Effect = Effect.WRITE
    idempotent: bool = False
    transactional: bool = False
    """The tool writes to a datasource in one transaction with its completion record: after a
    crash, recovery reads whether it committed, and runs it again only if it did not."""

    @property
    def rerunnable(self) -> bool:
        """True when running the call again after a crash cannot do harm."""
        return self.effect is Effect.READ or (self.effect is Effect.WRITE and self.idempotent) or self.transactional
