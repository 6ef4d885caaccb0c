"""What a tool or a policy says about time: `RetryAfter` (run me again later, durably) and
`RequireApproval` (a human decides, by a deadline)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from eudaimon.core.errors import ConfigurationError

ON_TIMEOUT = ("deny", "cancel")
"""What an approval deadline does when it passes: deny the call, or cancel the run."""


class RetryAfter(Exception):
    """Raised by a tool that cannot act now but can later (a rate limit, a file not there yet).

    The call waits durably: the run's status becomes `waiting` with its `wake_at`, no process
    holds it, and when the time comes the call runs again (same idempotency key, the next
    attempt) in whatever process serves the run then. `Agent(max_waits=…)` bounds how often.
    """

    def __init__(self, seconds: float, reason: str | None = None) -> None:
        if not (isinstance(seconds, int | float) and math.isfinite(seconds) and seconds >= 0):
            raise ValueError(f"RetryAfter needs a finite number of seconds, 0 or more; got {seconds!r}")
        super().__init__(reason or f"retry after {seconds:g}s")
        self.seconds = float(seconds)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class RequireApproval:
    """An approval policy's answer asking a human, with a deadline: `ToolPolicy.REQUIRE_APPROVAL`
    that says how long the human has (`timeout_s`) and what happens when nobody decided."""

    timeout_s: float | None = None
    on_timeout: str = "deny"

    def __post_init__(self) -> None:
        check_timeout(self.timeout_s, self.on_timeout, "RequireApproval")


def check_timeout(timeout_s: float | None, on_timeout: str, where: str) -> None:
    if timeout_s is not None and not (math.isfinite(timeout_s) and timeout_s > 0):
        raise ConfigurationError(f"{where}: approval_timeout_s must be a positive number of seconds, got {timeout_s!r}")
    if on_timeout not in ON_TIMEOUT:
        raise ConfigurationError(f"{where}: on_approval_timeout must be 'deny' or 'cancel', got {on_timeout!r}")
