"""Webhooks: the operator's receiver is told when a run needs someone, or ended.

Configured by whoever starts the server (`create_app(webhook=Webhook(...))`, `eudaimon serve
--webhook URL --webhook-secret-env VAR`), never by an API caller: no request names a URL.
Deliveries come from the outbox in the store (`server.outbox`); each is signed per the Standard
Webhooks specification (`webhook-id`, `webhook-timestamp`, `webhook-signature`, by the
`standardwebhooks` package, extra `webhooks`) and retried with exponential backoff until the
receiver answers 2xx or `max_attempts` are spent — across restarts, since the attempts are
records too. At least once: a server that dies after the receiver took a delivery but before
noting it sends it again, with the same id, which is what a receiver deduplicates by.
One server at a time makes a given attempt (a lease per delivery). Deliveries that are done are
pruned from the outbox once old (`outbox.prune`, every `PRUNE_EVERY_S`, ages in `Webhook`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import time
import urllib.error
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

from eudaimon._extras import needs
from eudaimon.core.errors import ConfigurationError, LeaseHeld
from eudaimon.server import outbox
from eudaimon.server.outbox import Delivery
from eudaimon.server.webhook_events import DEFAULT_EVENTS, EVENT_NAMES
from eudaimon.stores.base import EventStore
from eudaimon.stores.records import RecordStore, records_of

logger = logging.getLogger("eudaimon.server")

_KEPT_ATTEMPTS = 20
DAY_S = 86400.0
PRUNE_EVERY_S = 300.0
"""How often a deliverer removes the old deliveries: reading every delivery kept costs a scan of
the outbox, which retention ages of days need not repeat every second."""


@dataclass(frozen=True, slots=True)
class Webhook:
    """Where and how to tell: a receiver URL, its Standard Webhooks secret (`whsec_…` or base64),
    the event names to send (`EVENT_NAMES`), and the retry schedule."""

    url: str
    secret: str = field(repr=False)
    events: frozenset[str] = DEFAULT_EVENTS
    max_attempts: int = 12
    backoff_s: float = 1.0
    """The wait after the first failure, doubling after each, up to `max_backoff_s`."""
    max_backoff_s: float = 600.0
    timeout_s: float = 10.0
    keep_delivered_s: float = 7 * DAY_S
    """How long a delivered delivery stays visible (`GET /v1/webhooks/deliveries`), from its last attempt."""
    keep_failed_s: float = 30 * DAY_S
    """How long one that failed for good stays: longer, as it is what an operator looks into."""

    def __post_init__(self) -> None:
        for name in ("keep_delivered_s", "keep_failed_s"):
            age = getattr(self, name)
            if isinstance(age, bool) or not isinstance(age, int | float) or not 0 < age < float("inf"):
                raise ConfigurationError(f"the webhook's {name} must be a positive number of seconds, got {age!r}")
        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ConfigurationError("a webhook URL must be an absolute http:// or https:// URL")
        unknown = sorted(set(self.events) - set(EVENT_NAMES))
        if unknown:
            raise ConfigurationError(
                f"unknown webhook events {', '.join(unknown)}; known: {', '.join(sorted(EVENT_NAMES))}"
            )
        with needs("webhooks", "signing webhooks"):
            from standardwebhooks.webhooks import Webhook as Signer
        try:
            Signer(self.secret)
        except Exception as exc:  # the package raises bare errors for a bad secret
            raise ConfigurationError(
                f"the webhook secret is not a Standard Webhooks secret ({type(exc).__name__})"
            ) from None

    @classmethod
    def parse_events(cls, text: str | Iterable[str]) -> frozenset[str]:
        names = text.split(",") if isinstance(text, str) else text
        return frozenset(n.strip() for n in names if n.strip())

    def delay_after(self, attempts: int) -> float:
        return float(min(self.backoff_s * 2 ** max(attempts - 1, 0), self.max_backoff_s))

    def headers(self, delivery: Delivery, at: datetime) -> dict[str, str]:
        with needs("webhooks", "signing webhooks"):
            from standardwebhooks.webhooks import Webhook as Signer
        signature = Signer(self.secret).sign(delivery.id, at, delivery.payload)
        return {
            "content-type": "application/json",
            "user-agent": "eudaimon-webhooks",
            "webhook-id": delivery.id,
            "webhook-timestamp": str(int(at.timestamp())),
            "webhook-signature": signature,
        }


def new_secret() -> str:
    """A fresh secret in the specification's `whsec_` form."""
    import base64

    return "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None  # a 3xx is the receiver's answer, not a new URL to send to


_OPENER = urllib.request.build_opener(_NoRedirects)


def _post(url: str, body: bytes, headers: dict[str, str], timeout_s: float) -> tuple[int | None, str | None]:
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with _OPENER.open(request, timeout=timeout_s) as answer:
            return int(answer.status), None
    except urllib.error.HTTPError as exc:
        return int(exc.code), None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return None, type(reason).__name__ if not isinstance(reason, str) else reason[:200]


class Deliverer:
    """Scans the journal into the outbox and makes the attempts that are due."""

    def __init__(self, store: EventStore, webhook: Webhook) -> None:
        self.store = store
        self.webhook = webhook
        self.records: RecordStore = records_of(store, what="webhooks")
        self.owner = f"webhooks-{secrets.token_hex(6)}"
        self._pruned_at = float("-inf")

    async def tick(self) -> int:
        """One scan and one round of due attempts (and, every `PRUNE_EVERY_S`, the old
        deliveries removed); returns how many were delivered."""
        if time.monotonic() - self._pruned_at >= PRUNE_EVERY_S:
            await self.prune()
        await outbox.scan(self.store, self.records, self.webhook.events)
        delivered = 0
        now = datetime.now(UTC)
        for due in await self.records.load_records(outbox.DUE):
            if datetime.fromisoformat(json.loads(due.body)["next_at"]) <= now:
                delivered += await self._attempt(due.key)
        return delivered

    async def prune(self) -> int:
        """Remove the deliveries older than the webhook's retention ages; return how many."""
        self._pruned_at = time.monotonic()
        removed = await outbox.prune(
            self.records, keep_delivered_s=self.webhook.keep_delivered_s, keep_failed_s=self.webhook.keep_failed_s
        )
        if removed:
            logger.info("pruned %d old webhook deliveries", removed)
        return removed

    async def _attempt(self, delivery_id: str) -> int:
        lease = f"webhook:{delivery_id}"
        try:
            await self.store.acquire_lease(lease, self.owner, self.webhook.timeout_s + 30)
        except LeaseHeld:
            return 0
        try:
            kept = await self.records.load_record(outbox.DELIVERY, delivery_id)
            if kept is None or await self.records.load_record(outbox.DUE, delivery_id) is None:
                return 0  # another server finished it between our listing and the lease
            delivery = Delivery.from_json(kept.body)
            at = datetime.now(UTC)
            started = time.monotonic()
            status, error = await asyncio.to_thread(
                _post,
                self.webhook.url,
                delivery.payload.encode(),
                self.webhook.headers(delivery, at),
                self.webhook.timeout_s,
            )
            took = round((time.monotonic() - started) * 1000)
            attempt = {"at": at.isoformat(), "status": status, "error": error, "duration_ms": took}
            ok = status is not None and 200 <= status < 300
            attempts = [*delivery.attempts, attempt][-_KEPT_ATTEMPTS:]
            count = len(delivery.attempts) + 1
            state = "delivered" if ok else "failed" if count >= self.webhook.max_attempts else "pending"
            await self.records.put_record(
                outbox.DELIVERY, delivery_id, replace(delivery, state=state, attempts=attempts).to_json()
            )
            if state == "pending":
                next_at = at + timedelta(seconds=self.webhook.delay_after(count))
                await self.records.put_record(outbox.DUE, delivery_id, json.dumps({"next_at": next_at.isoformat()}))
            else:
                await self.records.delete_record(outbox.DUE, delivery_id)
            return int(ok)
        finally:
            await self.store.release_lease(lease, self.owner)

    async def run_forever(self, interval_s: float) -> None:
        while True:
            try:
                await self.tick()
            except Exception:  # a store that is briefly away must not stop deliveries for good
                logger.exception("webhook deliveries failed; trying again in %.1f s", interval_s)
            await asyncio.sleep(interval_s)
