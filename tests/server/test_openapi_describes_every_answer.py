"""`/openapi.json` describes the bodies the server answers, so a generated client is typed.

Every JSON route under `/v1` declares a named schema with properties for its success answer
and the shared `Problem` schema for its errors; and what a real server answers for a run that
waited, was approved and completed validates against those schemas (jsonschema, the
document's own `$ref`s resolved).
"""

from __future__ import annotations

from typing import Any

import httpx2
import jsonschema
from _server_support import Server, wait_until

JSON_ROUTES = {
    ("get", "/v1/runs"),
    ("get", "/v1/runs/{run_id}"),
    ("get", "/v1/runs/{run_id}/events"),
    ("get", "/v1/runs/{run_id}/state"),
    ("get", "/v1/threads"),
    ("get", "/v1/dashboard"),
    ("get", "/v1/threads/{thread_id}"),
    ("post", "/v1/agents/{agent}/runs"),
    ("post", "/v1/runs/{run_id}/approvals/{call_id}"),
    ("post", "/v1/runs/{run_id}/reconcile/{call_id}"),
    ("post", "/v1/runs/{run_id}/resume"),
    ("post", "/v1/runs/{run_id}/fork"),
    ("post", "/v1/runs/{run_id}/cancel"),
    ("post", "/prompt"),
}


def _success(document: dict[str, Any], method: str, path: str) -> dict[str, Any]:
    answers = document["paths"][path][method]["responses"]
    [code] = [c for c in answers if c.startswith("2")]
    schema: dict[str, Any] = answers[code]["content"]["application/json"]["schema"]
    return schema


def _validator(document: dict[str, Any], schema: dict[str, Any]) -> jsonschema.Draft202012Validator:
    """A validator of `schema` whose `#/components/...` references resolve in the document."""
    return jsonschema.Draft202012Validator({**schema, "components": document["components"]})


def test_every_json_route_declares_a_named_schema_and_its_errors(server: Server) -> None:
    """Invariant: no `/v1` JSON answer is an untyped `{}`: each success refers to a component
    schema with properties, and 404/409/422 answers refer to `Problem`."""
    with server.client() as client:
        document = client.get("/openapi.json").json()
    components = document["components"]["schemas"]
    for method, path in sorted(JSON_ROUTES):
        schema = _success(document, method, path)
        refs = [schema["$ref"]] if "$ref" in schema else [alt["$ref"] for alt in schema.get("anyOf", [])]
        assert refs, f"{method.upper()} {path} answers an unnamed schema: {schema}"
        for ref in refs:
            named = components[ref.rsplit("/", 1)[1]]
            assert named.get("properties"), f"{method.upper()} {path}: {ref} has no properties"
        errors = document["paths"][path][method]["responses"]
        for code in ("404", "409", "422"):
            assert errors[code]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Problem"}, (
                f"{method.upper()} {path} {code}"
            )


def test_real_answers_validate_against_the_document(server: Server) -> None:
    """Invariant: what the server answers along a run's life (started and waiting, listed,
    read, its events and state, approved, completed; a thread; an error) is what the document
    says it answers."""
    with server.client() as client:
        document = client.get("/openapi.json").json()

        def check(method: str, path: str, response: httpx2.Response) -> dict[str, Any]:
            body: dict[str, Any] = response.json()
            if response.status_code >= 400:
                schema = document["paths"][path][method]["responses"][str(response.status_code)]
                schema = schema["content"]["application/json"]["schema"]
            else:
                schema = _success(document, method, path)
            _validator(document, schema).validate(body)
            return body

        started = client.post(
            "/v1/agents/payer/runs?wait=true", json={"input": "pay 40 to SCHEMA", "thread_id": "t-schema"}
        )
        run = check("post", "/v1/agents/{agent}/runs", started)
        run_id = run["run_id"]
        [call] = run["pending_approvals"]
        check("get", "/v1/runs", client.get("/v1/runs", params={"limit": 5}))
        check("get", "/v1/runs/{run_id}", client.get(f"/v1/runs/{run_id}"))
        events = check("get", "/v1/runs/{run_id}/events", client.get(f"/v1/runs/{run_id}/events"))
        assert events["events"] and all("type" in row for row in events["events"])
        check("get", "/v1/runs/{run_id}/state", client.get(f"/v1/runs/{run_id}/state", params={"at_seq": 0}))
        approved = client.post(f"/v1/runs/{run_id}/approvals/{call['call_id']}", json={"approved": True})
        check("post", "/v1/runs/{run_id}/approvals/{call_id}", approved)
        wait_until(lambda: client.get(f"/v1/runs/{run_id}").json()["status"] == "completed", "the run to complete")
        done = check("get", "/v1/runs/{run_id}", client.get(f"/v1/runs/{run_id}"))
        assert done["decisions"] and done["decisions"][0]["kind"] == "approval"
        check("get", "/v1/threads", client.get("/v1/threads"))
        check("get", "/v1/threads/{thread_id}", client.get("/v1/threads/t-schema"))
        missing = client.get("/v1/runs/no-such-run")
        assert missing.status_code == 404
        check("get", "/v1/runs/{run_id}", missing)
        again = client.post(f"/v1/runs/{run_id}/approvals/{call['call_id']}", json={"approved": True})
        assert again.status_code == 409
        check("post", "/v1/runs/{run_id}/approvals/{call_id}", again)
        malformed = client.post(f"/v1/runs/{run_id}/approvals/{call['call_id']}", json={"approved": "perhaps"})
        assert malformed.status_code == 422
        check("post", "/v1/runs/{run_id}/approvals/{call_id}", malformed)
