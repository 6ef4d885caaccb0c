"""An eudaimon agent calling a remote A2A agent as one of its tools. Runs offline.

The remote agent (a `researcher`) is served over A2A here in the same script; in practice it is
another team's server. `A2AAgent(url)` is a tool whose A2A message id is the call's idempotency
key: a caller that crashes mid-call and is resumed sends the same message again, and the remote
eudaimon server answers with the task it already started (never a second one). The remote
task's id ends the tool's output, so the journal keeps it with the call.

    pip install 'eudaimon[server,a2a]'
    python examples/a2a_remote_tool.py
"""

from __future__ import annotations

from _background_server import serving

from eudaimon import Agent, Message, ToolCall
from eudaimon.a2a import A2AAgent
from eudaimon.models import ScriptedModel
from eudaimon.server import create_app

researcher = Agent(
    ScriptedModel(["Lisbon has about 550,000 inhabitants (2021 census)."]),
    name="researcher",
    store="memory:",
)


def main(url: str) -> None:
    writer = Agent(
        ScriptedModel(
            [
                Message.assistant(tool_calls=[ToolCall("ask_1", "researcher", {"input": "Population of Lisbon?"})]),
                "Lisbon is home to about 550,000 people.",
            ]
        ),
        tools=[A2AAgent(f"{url}/a2a/researcher", effect="read")],  # this one only answers
        name="writer",
        store="memory:",
    )
    response = writer.prompt_sync("Write one line about Lisbon's size.")
    print("writer:", response.text())
    print("the call's result, as journaled:", response.messages[-2].content.replace("\n", " "))


if __name__ == "__main__":
    with serving(create_app(researcher, a2a=True)) as base:
        main(base)
