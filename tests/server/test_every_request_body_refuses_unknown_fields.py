"""Every JSON body the API takes refuses a field it does not know (422 naming it), so a client's
misnamed field (`"id"` where the API reads `"schedule_id"`) is never dropped without a word.
Read from the app's own OpenAPI document: a body added later is held to it too. The protocols'
bodies (AG-UI's `RunAgentInput`, A2A's and MCP's JSON-RPC) are their SDKs' and follow their specs."""

from __future__ import annotations

from typing import Any

from eudaimon import Agent
from eudaimon.models import ScriptedModel
from eudaimon.server import create_app


def _schemas_of(body: dict[str, Any], components: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    schema = body["content"]["application/json"]["schema"]
    found = []
    for option in schema.get("anyOf", [schema]):  # `Cancel | None`
        ref = option.get("$ref")
        if ref is not None:
            name = ref.rsplit("/", 1)[-1]
            found.append((name, components[name]))
    return found


def test_every_body_schema_forbids_extra_fields() -> None:
    app = create_app(Agent(ScriptedModel(["ok"]), name="desk", store="memory:"))
    document = app.openapi()
    components = document["components"]["schemas"]
    bodies: dict[str, str] = {}
    lax: dict[str, str] = {}
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            if "requestBody" not in operation:
                continue
            for name, schema in _schemas_of(operation["requestBody"], components):
                bodies[f"{method.upper()} {path}"] = name
                if schema.get("additionalProperties") is not False:
                    lax[f"{method.upper()} {path}"] = name
    assert len(bodies) >= 8, bodies  # runs, decisions, fork, cancel, prompt, schedules, …
    assert lax == {}, f"bodies that would drop unknown fields: {lax}"
