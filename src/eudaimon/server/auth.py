"""Who may do what: API keys, each naming a principal and a role.

Keys come from `EUDAIMON_API_KEYS="KEY:PRINCIPAL:ROLE,…"` or a file with one `KEY PRINCIPAL
ROLE` a line, and are sent as `Authorization: Bearer KEY` or `X-API-Key: KEY`. A presented key
is compared with every known key in constant time (`hmac.compare_digest` over digests, so the
length of a key leaks nothing either), and no key is ever logged, echoed or put in an error.
The principal a key names is what the journal records as `by`: a request body cannot claim
another.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from eudaimon.core.errors import ConfigurationError


class Role(StrEnum):
    """`viewer` reads; `operator` also starts runs and decides for them."""

    VIEWER = "viewer"
    OPERATOR = "operator"


@dataclass(frozen=True, slots=True)
class Principal:
    """Who made a request: the name journaled as `by`, and what they may do."""

    name: str
    role: Role

    @property
    def may_operate(self) -> bool:
        return self.role is Role.OPERATOR


ANONYMOUS = Principal("anonymous", Role.OPERATOR)
"""Every request's principal on a server without keys (which binds to loopback only)."""


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode()).digest()


class ApiKeys:
    """The keys a server accepts. Its repr shows principals, never keys."""

    def __init__(self, keys: Mapping[str, Principal]) -> None:
        if not keys:
            raise ConfigurationError("ApiKeys needs at least one key; pass auth=None for a server without keys")
        self._keys = [(_digest(key), principal) for key, principal in keys.items()]

    @classmethod
    def parse(cls, text: str) -> ApiKeys:
        """Keys from `KEY:PRINCIPAL:ROLE,…` (the form of `EUDAIMON_API_KEYS`)."""
        entries = [entry.strip() for entry in text.split(",") if entry.strip()]
        return cls(
            dict(_entry(entry.split(":"), f"entry {n} of EUDAIMON_API_KEYS") for n, entry in enumerate(entries, 1))
        )

    @classmethod
    def from_file(cls, path: str | Path) -> ApiKeys:
        """Keys from a file of `KEY PRINCIPAL ROLE` lines; blank lines and `#` comments are skipped."""
        try:
            lines = Path(path).read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise ConfigurationError(f"cannot read the API key file {path}: {exc.strerror}") from exc
        pairs = [
            _entry(line.split(), f"line {n} of {path}")
            for n, line in enumerate(lines, 1)
            if line.strip() and not line.lstrip().startswith("#")
        ]
        return cls(dict(pairs))

    @classmethod
    def merged(cls, sources: Iterable[ApiKeys]) -> ApiKeys | None:
        keys = cls.__new__(cls)
        keys._keys = [pair for source in sources for pair in source._keys]
        return keys if keys._keys else None

    def authenticate(self, presented: str) -> Principal | None:
        """The principal of `presented`, compared with every key in constant time; None if unknown."""
        digest = _digest(presented)
        found: Principal | None = None
        for known, principal in self._keys:
            if hmac.compare_digest(known, digest):
                found = principal
        return found

    @property
    def principals(self) -> list[Principal]:
        return [principal for _, principal in self._keys]

    def __repr__(self) -> str:
        return f"ApiKeys({', '.join(f'{p.name}:{p.role.value}' for p in self.principals)})"


def _entry(fields: list[str], where: str) -> tuple[str, Principal]:
    if len(fields) != 3 or not all(f.strip() for f in fields):
        raise ConfigurationError(f"{where} is not KEY PRINCIPAL ROLE (three fields); the key itself is not shown")
    key, name, role = (f.strip() for f in fields)
    try:
        return key, Principal(name, Role(role))
    except ValueError:
        raise ConfigurationError(f"{where} names role {role!r}; roles are viewer and operator") from None


def presented_key(authorization: str | None, x_api_key: str | None) -> str | None:
    """The key a request carries: `Authorization: Bearer KEY`, else `X-API-Key: KEY`."""
    if authorization:
        scheme, _, value = authorization.partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            return value.strip()
    return x_api_key.strip() if x_api_key and x_api_key.strip() else None
