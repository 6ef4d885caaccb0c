"""An AG-UI client reading an eudaimon run's event stream. Runs offline.

The agent is served with `create_app(agent, ag_ui=True)` (what `eudaimon serve --ag-ui` does);
a `RunAgentInput` is posted to `/v1/agents/{agent}/ag-ui` and each server-sent event is parsed
with `ag-ui-protocol`'s models, as a React front end (CopilotKit, or any AG-UI client) would.
Posting the same `runId` again replays the run from its journal: a reloaded page loses nothing.

    pip install 'eudaimon[server,ag-ui]'
    python examples/ag_ui_stream.py
"""

from __future__ import annotations

import httpx
from _background_server import serving
from ag_ui.core import Event, EventType
from pydantic import TypeAdapter

from eudaimon import Agent, Message, ToolCall, tool
from eudaimon.models import ScriptedModel
from eudaimon.server import create_app

EVENT = TypeAdapter(Event)


@tool(effect="read")
def weather(city: str) -> str:
    """Today's weather."""
    return f"{city}: 21°C, sunny"


agent = Agent(
    ScriptedModel(
        [Message.assistant(tool_calls=[ToolCall("c1", "weather", {"city": "Porto"})]), "It is sunny in Porto, 21°C."]
    ),
    tools=[weather],
    name="forecaster",
    store="memory:",
)


def read(url: str, body: dict[str, object]) -> list[str]:
    lines = []
    with httpx.Client(timeout=30) as http, http.stream("POST", f"{url}/v1/agents/forecaster/ag-ui", json=body) as r:
        for line in r.iter_lines():
            if line.startswith("data: "):
                event = EVENT.validate_json(line.removeprefix("data: "))
                detail = {k: v for k, v in event.model_dump(exclude_none=True).items() if k != "type"}
                lines.append(f"{event.type.value:<22} {detail}")
                if event.type in (EventType.RUN_FINISHED, EventType.RUN_ERROR):
                    break
    return lines


if __name__ == "__main__":
    body = {
        "threadId": "t-porto",
        "runId": "run-porto-1",
        "messages": [{"id": "u1", "role": "user", "content": "Weather?"}],
    }
    with serving(create_app(agent, ag_ui=True)) as base:
        first = read(base, body)
        print("\n".join(first))
        print("reconnecting with the same runId replays the journal:", read(base, body) == first)
