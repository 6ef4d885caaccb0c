"""An agent's settings in three groups: how far its runs may go, how their calls are approved,
and where they are kept and driven.

Each group is one frozen value, checked when it is made, so a limit that cannot work fails at the
line that writes it, and one group can serve many agents (`Agent(model, limits=STRICT)`), as
`ModelSettings` does for model calls. Every field is also an `Agent` keyword of its own
(`max_iterations=`, `approval_timeout_s=`, `store=`…, the keywords the design documents): a
keyword left at its default yields to the group, and a value given both ways, differently, is
refused, so an agent never runs with a value it was not given.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar

from eudaimon.core.errors import ConfigurationError
from eudaimon.datasources import Datasource
from eudaimon.tools._time import check_timeout

if TYPE_CHECKING:
    from eudaimon.runtime.loop.config import ApprovalPolicy
    from eudaimon.runtime.process.engines import Engine
    from eudaimon.stores.base import EventStore

__all__ = ["ApprovalSettings", "DurabilitySettings", "RunLimits"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RunLimits:
    """How far one run may go before it stops: model calls, corrections, waits, time and money.

    `Agent(limits=RunLimits(max_iterations=5))` is `Agent(max_iterations=5)`.
    """

    max_iterations: int = 25
    """Model calls a run may make before it fails with `MaxIterations`."""
    max_output_retries: int = 2
    """Corrections a run may ask of the model for its final answer (schema or validator)
    before it fails with `OutputRejected`."""
    max_waits: int = 10
    """How often one call may wait (its tool raised `RetryAfter`) before the next wait is an
    error result the model reads."""
    tool_timeout_s: float | None = None
    """How long a tool call may take when its tool sets no `timeout_s` (None: no limit)."""
    max_budget: float | None = None
    """USD a run may spend (the agent needs a `cost_model`); the run stops when it is reached."""
    max_budget_tokens: int | None = None
    """Tokens a run may spend."""

    _KEYWORDS: ClassVar[Mapping[str, str]] = MappingProxyType({})
    """`Agent` keywords named otherwise than their field (none: every field is its keyword)."""

    def __post_init__(self) -> None:
        if self.max_iterations < 1:
            raise ConfigurationError(f"max_iterations must be at least 1, got {self.max_iterations}")
        if self.max_output_retries < 0:
            raise ConfigurationError(f"max_output_retries must be 0 or more, got {self.max_output_retries}")
        if self.max_waits < 0:
            raise ConfigurationError(f"max_waits must be 0 or more, got {self.max_waits}")
        if self.tool_timeout_s is not None and not self.tool_timeout_s > 0:
            raise ConfigurationError(
                f"tool_timeout_s must be a positive number of seconds, got {self.tool_timeout_s!r}"
            )


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalSettings:
    """Who judges each call, and how long a human has to decide one.

    `Agent(approvals=ApprovalSettings(timeout_s=3600))` is `Agent(approval_timeout_s=3600)`.
    """

    policy: ApprovalPolicy | None = None
    """`fn(call, tool) -> ToolPolicy` deciding allow / deny / require approval per call (the
    `Agent` keyword `approval_policy`); None: only tools that need approval wait for a human."""
    timeout_s: float | None = None
    """How long a human has to decide a call of a tool that sets no `approval_timeout_s` of its
    own (`approval_timeout_s`); None: no deadline."""
    on_timeout: Literal["deny", "cancel"] = "deny"
    """`"deny"` the call or `"cancel"` the run when a deadline passes (`on_approval_timeout`)."""

    _KEYWORDS: ClassVar[Mapping[str, str]] = MappingProxyType(
        {"policy": "approval_policy", "timeout_s": "approval_timeout_s", "on_timeout": "on_approval_timeout"}
    )

    def __post_init__(self) -> None:
        check_timeout(self.timeout_s, self.on_timeout, "Agent")


@dataclass(frozen=True, slots=True, kw_only=True)
class DurabilitySettings:
    """Where an agent's runs are journaled and driven, what they write to, and what a process
    does with a run another version of the agent started."""

    store: EventStore | str | None = None
    """An `EventStore` or a store URL (`memory:`, `sqlite:///runs.db`, `postgresql://…`);
    None: `$EUDAIMON_STORE`, else an in-memory store."""
    engine: Engine | str | None = None
    """Where runs are driven: None for this process, else an engine or its URL
    (`"temporal://host:7233/agents"`)."""
    datasources: Mapping[str, Datasource] | None = None
    """Databases by name that `@tool(datasource=name)` tools write to, exactly once."""
    version: str = ""
    """The agent's own name for what it is (free text), journaled in `run_started`."""
    on_change: Literal["continue", "refuse"] = "continue"
    """What a process does with a run another agent started: journal the change and go on, or
    refuse it (`AgentChanged`)."""

    _KEYWORDS: ClassVar[Mapping[str, str]] = MappingProxyType({})

    def __post_init__(self) -> None:
        if self.on_change not in ("continue", "refuse"):
            raise ConfigurationError(f"on_change must be 'continue' or 'refuse', got {self.on_change!r}")
        for name, source in (self.datasources or {}).items():
            if not isinstance(source, Datasource):
                raise ConfigurationError(
                    f"datasources[{name!r}] must be a Datasource(url), got {type(source).__name__}"
                )


Group = TypeVar("Group", RunLimits, ApprovalSettings, DurabilitySettings)


def settled(kind: type[Group], given: Group | None, parameter: str, **keywords: Any) -> Group:
    """The group `Agent(parameter=given)` names (its defaults when None), with the keywords
    given on their own (by `Agent` keyword name) over it.

    Raises:
        ConfigurationError: `given` is not a `kind`; a keyword and the group both set one field,
            to different values; or a value that cannot work.
    """
    if given is not None and not isinstance(given, kind):
        raise ConfigurationError(f"{parameter} must be a {kind.__name__}, got {type(given).__name__}")
    changes: dict[str, Any] = {}
    for field in fields(kind):
        keyword = kind._KEYWORDS.get(field.name, field.name)
        value = keywords[keyword]
        if _same(value, field.default):
            continue
        kept = field.default if given is None else getattr(given, field.name)
        if not _same(kept, field.default) and not _same(kept, value):
            # Values are not shown: a store URL may carry a password.
            raise ConfigurationError(
                f"Agent() got {keyword}= and {parameter}={kind.__name__}({field.name}=…) with different "
                "values; give it one way"
            )
        changes[field.name] = value
    base = given if given is not None else kind()
    return replace(base, **changes) if changes else base


def _same(a: object, b: object) -> bool:
    return a is b or (type(a) is type(b) and a == b)
