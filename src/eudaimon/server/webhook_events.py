"""The names of the webhook events, apart from the code that sends them: `eudaimon serve --help`
lists them without importing the server (which costs the CLI's every start a tenth of a second).
`outbox.NAME_OF_TYPE` says which journal event each name is."""

EVENT_NAMES = (
    "awaiting_approval",
    "awaiting_reconciliation",
    "approval_timed_out",
    "failed",
    "completed",
    "cancelled",
    "budget_exceeded",
    "waiting",
    "queued",
)
DEFAULT_EVENTS = frozenset({"awaiting_approval", "awaiting_reconciliation", "approval_timed_out", "failed"})
"""What a receiver is told of unless `--webhook-events` says otherwise: what needs a person."""
