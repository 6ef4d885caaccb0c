"""Guardrails: every result type, the runners' combination rules, the built-ins; all fail closed."""

from __future__ import annotations

import re

import pytest

from eudaimon.core.errors import ConfigurationError, GuardrailBlocked
from eudaimon.core.messages import Message
from eudaimon.guardrails import (
    Block,
    ContentPolicyGuardrail,
    InputGuardrail,
    MaxTokenGuardrail,
    OutputGuardrail,
    Pass,
    RegexFilterGuardrail,
    RetryWithFeedback,
    Transform,
    guardrail_name,
    run_input_guardrails,
    run_output_guardrails,
)
from eudaimon.models import FunctionModel, ScriptedModel
from eudaimon.models.base import ChatRequest


class Upper(InputGuardrail, OutputGuardrail):
    """Sync guardrail transforming to upper case."""

    def check(self, text: str) -> Transform:
        return Transform(text.upper())


class Suffix(OutputGuardrail):
    """Async guardrail appending a suffix."""

    async def check(self, text: str) -> Transform:
        return Transform(text + "!")


class Never(InputGuardrail, OutputGuardrail):
    """Blocks everything."""

    async def check(self, text: str) -> Block:
        return Block(f"never: {text}")


class AskAgain(OutputGuardrail):
    def check(self, text: str) -> RetryWithFeedback:
        return RetryWithFeedback("cite a source")


class Exploding(OutputGuardrail):
    def check(self, text: str) -> Pass:
        raise AssertionError("must not run after a verdict")


async def test_input_transforms_chain_and_pass_keeps_the_text() -> None:
    """Input Transforms chain in order; Pass leaves the text as it is."""
    assert await run_input_guardrails([], "hi") == "hi"
    assert await run_input_guardrails([MaxTokenGuardrail(100)], "hi") == "hi"

    class Exclaim(InputGuardrail):
        async def check(self, text: str) -> Transform:
            return Transform(text + "!")

    assert await run_input_guardrails([Upper(), Exclaim()], "hi") == "HI!"


async def test_input_block_raises_naming_the_guardrail() -> None:
    """An input Block raises GuardrailBlocked carrying the reason and the guardrail's name."""
    with pytest.raises(GuardrailBlocked) as info:
        await run_input_guardrails([Upper(), Never(name="no-entry")], "hi")
    assert info.value.guardrail == "no-entry"
    assert info.value.reason == "never: HI"


async def test_input_retry_with_feedback_blocks() -> None:
    """RetryWithFeedback on input cannot retry anything, so it blocks (fail closed)."""

    class InputAskAgain(InputGuardrail):
        def check(self, text: str) -> RetryWithFeedback:
            return RetryWithFeedback("rephrase")

    with pytest.raises(GuardrailBlocked) as info:
        await run_input_guardrails([InputAskAgain()], "hi")
    assert info.value.guardrail == "InputAskAgain"
    assert info.value.reason == "rephrase"


async def test_output_verdicts_combine() -> None:
    """Output: Pass if unchanged, Transforms chain, the first Block/RetryWithFeedback wins and names its guardrail."""
    assert await run_output_guardrails([], "ok") == Pass()
    assert await run_output_guardrails([MaxTokenGuardrail(10)], "ok") == Pass()
    assert await run_output_guardrails([Upper(), Suffix()], "ok") == Transform("OK!")

    verdict = await run_output_guardrails([Upper(), AskAgain(), Exploding()], "ok")
    assert verdict == RetryWithFeedback("cite a source", guardrail="AskAgain")

    verdict = await run_output_guardrails([Upper(), Never(), AskAgain()], "ok")
    assert verdict == Block("never: OK", guardrail="Never")


async def test_a_guardrail_that_forgets_to_return_fails_closed() -> None:
    """A guardrail answering None (or anything not a result) is an error, never a silent pass."""

    class Forgetful(OutputGuardrail):
        def check(self, text: str) -> None:
            return None

    with pytest.raises(ConfigurationError, match="Forgetful"):
        await run_output_guardrails([Forgetful()], "x")
    with pytest.raises(ConfigurationError, match="Forgetful"):
        await run_input_guardrails([Forgetful()], "x")


async def test_duck_typed_guardrail_and_names() -> None:
    """Any object with check() is a guardrail; its name is `name` if set, else its class name."""

    class Plain:
        def check(self, text: str) -> Block:
            return Block("plain says no")

    assert guardrail_name(Plain()) == "Plain"
    assert guardrail_name(MaxTokenGuardrail(3)) == "MaxTokenGuardrail"
    assert guardrail_name(MaxTokenGuardrail(3, name="short")) == "short"
    assert await run_output_guardrails([Plain()], "x") == Block("plain says no", guardrail="Plain")


async def test_max_token_guardrail_uses_four_chars_per_token() -> None:
    """MaxTokenGuardrail estimates ~4 characters a token and blocks only above the limit."""
    guard = MaxTokenGuardrail(2)
    assert guard.check("12345678") == Pass()  # 8 chars = 2 tokens
    verdict = guard.check("123456789")  # 9 chars -> 3 tokens
    assert isinstance(verdict, Block)
    assert "3 tokens" in verdict.reason
    with pytest.raises(ConfigurationError):
        MaxTokenGuardrail(0)


async def test_regex_filter_blocks_and_redacts() -> None:
    """Block patterns win over redactions; redactions apply in order; no match passes."""
    base = RegexFilterGuardrail()
    guard = base.block(r"(?i)password\s*[:=]", "potential credential leak").redact(
        r"\b\d{3}-\d{2}-\d{4}\b", "[SSN REDACTED]"
    )

    assert guard.check("nothing here") == Pass()
    assert guard.check("my ssn is 123-45-6789.") == Transform("my ssn is [SSN REDACTED].")
    assert guard.check("PASSWORD = hunter2, ssn 123-45-6789") == Block("potential credential leak")
    assert base.check("PASSWORD = x") == Pass(), "the builder returns new guardrails; the base is unchanged"

    precompiled = RegexFilterGuardrail().redact(re.compile("cat", re.IGNORECASE), "dog")
    assert precompiled.check("Cat and cat") == Transform("dog and dog")


def test_bad_regex_fails_at_construction() -> None:
    """A pattern that does not compile is refused when the guardrail is built (never fails open)."""
    with pytest.raises(ConfigurationError, match="does not compile"):
        RegexFilterGuardrail().block("(unclosed", "x")
    with pytest.raises(ConfigurationError, match="does not compile"):
        RegexFilterGuardrail().redact("[a-", "x")


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("PASS", Pass()),
        ("  pass.\n", Pass()),
        ("BLOCK: threatens violence", Block("threatens violence")),
        ("block:hate speech", Block("hate speech")),
        ("BLOCK", Block("content policy violation")),
        ("I think this is fine", Block("unparseable policy verdict: 'I think this is fine'")),
        ("", Block("unparseable policy verdict: ''")),
        ("BLOCKED because reasons", Block("unparseable policy verdict: 'BLOCKED because reasons'")),
        ("PASS\nactually no", Block("unparseable policy verdict: 'PASS\\nactually no'")),
    ],
)
async def test_content_policy_verdict_parsing(answer: str, expected: Pass | Block) -> None:
    """The policy model's PASS passes, BLOCK: reason blocks with the reason, anything else blocks."""
    guard = ContentPolicyGuardrail(ScriptedModel([answer]), "No threats.")
    assert await guard.check("some text") == expected


async def test_content_policy_asks_the_model_with_policy_and_text() -> None:
    """The policy goes in the system message and the judged text in the user message."""
    seen: list[ChatRequest] = []

    def judge(request: ChatRequest) -> str:
        seen.append(request)
        return "BLOCK: mentions weapons" if "sword" in request.messages[-1].content else "PASS"

    guard = ContentPolicyGuardrail(FunctionModel(judge), "No weapons talk.")
    assert await run_output_guardrails([guard], "hello") == Pass()
    assert await run_output_guardrails([guard], "a sword") == Block(
        "mentions weapons", guardrail="ContentPolicyGuardrail"
    )
    system, user = seen[0].messages
    assert system.role == "system"
    assert "No weapons talk." in system.content
    assert user == Message.user("hello")


async def test_content_policy_model_failure_propagates() -> None:
    """A failing policy model raises instead of letting the text through."""
    guard = ContentPolicyGuardrail(ScriptedModel([]), "policy")
    with pytest.raises(Exception, match="ran out of responses"):
        await run_input_guardrails([guard], "text")
    with pytest.raises(ConfigurationError):
        ContentPolicyGuardrail(ScriptedModel([]), "  ")


def test_results_are_frozen_values() -> None:
    """Guardrail results are immutable values compared by their fields."""
    assert Block("x") == Block("x")
    assert Block("x") != Block("x", guardrail="g")
    with pytest.raises(AttributeError):
        Transform("a").text = "b"  # type: ignore[misc]
