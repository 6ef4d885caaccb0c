"""Input and output guardrail blocks raise `GuardrailBlocked` with the same fields: the reason,
and the guardrail's name in `guardrail`, read from the journal for an output block."""

from __future__ import annotations

import pytest
from _in_loop_support import answer, payloads

from eudaimon import Agent
from eudaimon.core.events import FailureKind
from eudaimon.errors import GuardrailBlocked
from eudaimon.guardrails import Block
from eudaimon.models import ScriptedModel
from eudaimon.stores import MemoryStore


class NoSecrets:
    name = "no_secrets"

    def check(self, text: str) -> Block:
        return Block("mentions a secret")


async def test_an_output_block_names_its_guardrail_like_an_input_block() -> None:
    """Bug: an output-guardrail Block raised GuardrailBlocked with an empty `guardrail` (the name
    folded into the message). Input and output blocks now carry the same fields; the output
    one's come from `run_failed`, so another process reading the run raises the same error."""
    with pytest.raises(GuardrailBlocked) as blocked_input:
        await Agent(ScriptedModel(["x"]), input_guardrails=[NoSecrets()]).prompt("hi")
    store = MemoryStore()
    agent = Agent(ScriptedModel([answer("the secret is 42")]), output_guardrails=[NoSecrets()], store=store)
    with pytest.raises(GuardrailBlocked) as blocked_output:
        await agent.prompt("hi")
    for error in (blocked_input.value, blocked_output.value):
        assert (error.guardrail, error.reason) == ("no_secrets", "mentions a secret")
    (failed,) = await payloads(agent, blocked_output.value.run_id or "", "run_failed")
    assert (failed.kind, failed.guardrail, failed.error) == (
        FailureKind.GUARDRAIL_BLOCKED,
        "no_secrets",
        "mentions a secret",
    )
    elsewhere = Agent(ScriptedModel([]), store=store)
    with pytest.raises(GuardrailBlocked) as again:
        await elsewhere.resume(blocked_output.value.run_id or "")
    assert (again.value.guardrail, again.value.reason) == ("no_secrets", "mentions a secret")
