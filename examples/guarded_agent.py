"""An agent with guardrails on both sides, a USD budget and a logging hook. Runs offline.

The model is a `ScriptedModel` playing a support bot (it reports token usage, and its id,
"gpt-4o-mini", is priced by `OpenAICostModel` from the genai-prices data), so everything here
runs without a key. Swap in `model="openai:gpt-4o-mini"` for the real thing.

- The input guardrail redacts card numbers before anything is persisted, and blocks passwords.
- The first answer leaks an internal ticket note; an output guardrail rejects it with feedback.
  The rejected answer is never persisted, but what it cost is counted.
- A second output guardrail redacts e-mail addresses from the accepted answer.
- `max_budget` stops the run before any model call once $0.01 has been spent.

    python examples/guarded_agent.py
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from eudaimon import Agent, Message, ToolCall, Usage, tool
from eudaimon.cost import OpenAICostModel
from eudaimon.errors import BudgetExceeded, GuardrailBlocked
from eudaimon.guardrails import OutputGuardrail, Pass, RegexFilterGuardrail, RetryWithFeedback
from eudaimon.hooks import AgentHook, LoopState, ToolOutput
from eudaimon.models import ChatResponse, ScriptedModel, StopReason

log = logging.getLogger("guarded_agent")


@tool(effect="read")
def order_status(order_id: str) -> str:
    """The shipping status of an order.

    Args:
        order_id: The order's id, e.g. "A-1042".
    """
    return f"order {order_id}: shipped on 2026-11-28, arriving Tuesday"


class LoggingHook(AgentHook):
    """Logs the loop as it runs; hooks observe, they cannot change anything."""

    def on_iteration_start(self, state: LoopState) -> None:
        log.info("iteration %d/%d of %s", state.iteration, state.max_iterations, state.run_id)

    def on_model_response(self, response: ChatResponse) -> None:
        usage = response.usage or Usage()
        log.info("model answered: %d in / %d out tokens", usage.input_tokens, usage.output_tokens)

    def on_tool_call(self, call: ToolCall) -> None:
        log.info("tool call %s(%s)", call.name, call.arguments)

    def on_tool_result(self, call: ToolCall, result: ToolOutput) -> None:
        log.info("tool result %s: %s", call.name, result.content)


class NoInternalNotes(OutputGuardrail):
    """Asks the model to try again when an answer quotes internal notes."""

    def check(self, text: str) -> Any:
        if "INTERNAL" in text:
            return RetryWithFeedback("Do not quote internal notes to the customer; answer from the order status only.")
        return Pass()


redact_cards = (
    RegexFilterGuardrail(name="pii")
    .block(r"(?i)password\s*[:=]", "never send passwords")
    .redact(r"\b(?:\d[ -]?){13,16}\b", "[CARD REDACTED]")
)
redact_emails = RegexFilterGuardrail(name="emails").redact(r"[\w.+-]+@[\w-]+\.[\w.]+", "[EMAIL REDACTED]")


def support_model() -> ScriptedModel:
    return ScriptedModel(
        [
            ChatResponse(
                Message.assistant(tool_calls=[ToolCall("call_1", "order_status", {"order_id": "A-1042"})]),
                StopReason.TOOL_USE,
                usage=Usage(420, 25),
            ),
            ChatResponse(
                Message.assistant("INTERNAL: customer flagged as difficult. Your order shipped."), usage=Usage(480, 18)
            ),
            ChatResponse(
                Message.assistant(
                    "Your order A-1042 shipped on Nov 28 and arrives Tuesday. Questions: help@shop.example"
                ),
                usage=Usage(530, 24),
            ),
        ],
        model_id="gpt-4o-mini",
    )


def make_agent(model: ScriptedModel, max_budget: float = 0.01) -> Agent:
    return Agent(
        model,
        system_prompt="You are a courteous support agent for an online shop.",
        tools=[order_status],
        hooks=LoggingHook(),
        input_guardrails=[redact_cards],
        output_guardrails=[NoInternalNotes(), redact_emails],
        cost_model=OpenAICostModel(),
        max_budget=max_budget,
    )


async def main() -> None:
    logging.basicConfig(level=logging.INFO, format="  [hook] %(message)s")

    print("== a guarded run")
    agent = make_agent(support_model())
    response = await agent.prompt("Where is order A-1042? I paid with card 4111 1111 1111 1111.")
    print("input as journaled:", response.messages[1].content)
    print("answer:", response.text())
    print(f"cost: ${response.cost:.6f} for {response.usage.total_tokens} tokens in {response.iterations} model calls")
    events = await agent.store.load(response.run_id)
    print("journal:", " ".join(e.type for e in events))

    print("\n== a blocked input: nothing is journaled")
    try:
        await agent.prompt("my password: hunter2")
    except GuardrailBlocked as exc:
        print("blocked:", exc)

    print("\n== a budget too small for the whole run")
    tight = make_agent(support_model(), max_budget=0.00005)
    try:
        await tight.prompt("Where is order A-1042?")
    except BudgetExceeded as exc:
        print(f"stopped: {exc}")
        events = await tight.store.load(exc.run_id or "")
        print("journal:", " ".join(e.type for e in events))


if __name__ == "__main__":
    asyncio.run(main())
