"""`eudaimon demo`: what eudaimon is for, offline, in a minute.

A refund-desk agent (`_agent`: a scripted model and three tools) is driven by worker processes
(`_worker`); the demo (`_run`) kills one with SIGKILL in the middle of a tool, resumes the run
in another, asks a human to approve a refund over the limit, and prints (`_show`) the proof
from the journal and the tools' own ledger: the plain WRITE ran once, the READ ran again with the
same idempotency key.
"""

from eudaimon.cli.demo._agent import (
    DEMO_INPUT,
    DEMO_MODEL_ID,
    REFUND_LIMIT_USD,
    DemoModel,
    DemoPrices,
    demo_agent,
    demo_script,
    issue_refund,
    lookup_order,
    open_case,
    refund_limit_policy,
)

__all__ = [
    "DEMO_INPUT",
    "DEMO_MODEL_ID",
    "REFUND_LIMIT_USD",
    "DemoModel",
    "DemoPrices",
    "demo_agent",
    "demo_script",
    "issue_refund",
    "lookup_order",
    "open_case",
    "refund_limit_policy",
]
