"""The A2A Agent Card is public (discovery needs no key): its description is the agent's own
`description=`, or `--a2a-description`, or a line naming the agent, and never the system prompt.

Before: the card published the whole system prompt, to callers with no key, and there was no way
to give another description.
"""

from __future__ import annotations

from pathlib import Path

import httpx
from _holes_agents import SECRET
from _holes_support import holes_on

CARD = "/.well-known/agent-card.json"


def test_the_card_says_the_agents_description_and_never_its_system_prompt(tmp_path: Path) -> None:
    """Invariant: `Agent(description=…)` is the card's description; an agent without one gets a
    line naming it; the system prompt appears nowhere in either card."""
    with holes_on("sqlite", tmp_path, args=("--a2a", "--api-key-file", _keys(tmp_path))) as server:
        refunder = httpx.get(f"{server.agent_url('refunder')}{CARD}", timeout=30)
        prompted = httpx.get(f"{server.agent_url('prompted')}{CARD}", timeout=30)
    assert refunder.status_code == prompted.status_code == 200
    assert refunder.json()["description"] == "Refunds orders, each refund approved by a person."
    assert prompted.json()["description"] == "The eudaimon agent 'prompted': every task is a durable run."
    assert SECRET not in refunder.text and SECRET not in prompted.text


def test_a2a_description_names_what_the_served_agents_do(tmp_path: Path) -> None:
    """Invariant: `eudaimon serve --a2a --a2a-description TEXT` puts TEXT on the cards."""
    said = "Answers questions about orders."
    with holes_on("sqlite", tmp_path, args=("--a2a", "--a2a-description", said)) as server:
        card = httpx.get(f"{server.agent_url('prompted')}{CARD}", timeout=30).json()
    assert card["description"] == said and SECRET not in str(card)


def _keys(where: Path) -> str:
    path = where / "keys"
    path.write_text("op-key-1 alice operator\n")
    return str(path)
