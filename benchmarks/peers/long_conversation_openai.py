"""The long conversation of `peers/long_conversation.py` on Temporal's OpenAI Agents integration.

`temporalio.contrib.openai_agents` runs the OpenAI Agents SDK's loop in a workflow: each model
call is an activity (`invoke_model_activity`) whose input is the whole conversation so far,
and the tool is an activity (`activity_as_tool`). The model is an HTTP server on 127.0.0.1
speaking OpenAI's Chat Completions (`history_size.py` starts it) that answers as
`long_conversation.answer` does: 4k characters and a call of `read_page` (4k characters) per
call. A module of its own, because Temporal's sandbox re-imports a workflow's module.
"""

from __future__ import annotations

from datetime import timedelta

from agents import Agent, Runner
from temporalio import activity, workflow
from temporalio.contrib.openai_agents.workflow import activity_as_tool

PAGE = 4_000


@activity.defn
async def read_page(page: int) -> str:
    """Read a page of the document."""
    line = f"page {page}: the quick brown fox jumps over the lazy dog. "
    return (line * (PAGE // len(line) + 1))[:PAGE]


@workflow.defn
class LongConversation:
    @workflow.run
    async def run(self, prompt: str) -> str:
        tool = activity_as_tool(read_page, start_to_close_timeout=timedelta(seconds=60))
        agent = Agent(name="long", instructions="Read every page.", model="long", tools=[tool])
        result = await Runner.run(agent, prompt, max_turns=500)
        return str(result.final_output)
