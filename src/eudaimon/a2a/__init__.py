"""A2A: eudaimon agents other agents can call, and remote A2A agents as an agent's tools.

Needs the `a2a` extra: `pip install -e '.[a2a]'` (the official `a2a-sdk`).

- Serving: `eudaimon serve --a2a` or `create_app(..., a2a=True)` publishes each agent at
  `/a2a/{agent}` (card at `/a2a/{agent}/.well-known/agent-card.json`); each A2A task is a
  durable run (task id = run id, `contextId` = thread id), answered from the journal.
- Calling: `Agent(tools=[A2AAgent("http://host/a2a/researcher")])`: a remote agent as a tool,
  its message id the call's idempotency key.
"""

from eudaimon._extras import needs

with needs("a2a", "eudaimon.a2a (A2AAgent)"):
    from eudaimon.a2a._card import IDEMPOTENT_MESSAGES
    from eudaimon.a2a._remote import A2AAgent, A2AToolError

__all__ = ["IDEMPOTENT_MESSAGES", "A2AAgent", "A2AToolError"]


def __dir__() -> list[str]:
    """The public names, not the helpers this module imports."""
    return sorted(__all__)
