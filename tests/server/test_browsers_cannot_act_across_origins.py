"""A page on another origin, in a real browser, cannot change runs on a keyless server, and a
request for a host name the server does not serve (DNS rebinding) is refused.

The server is a real `eudaimon serve` on 127.0.0.1; the attacker's pages come from a second
HTTP server on another port of the same host (another origin, the same site), opened in real
Chromium. What the browser sends is observed from Playwright's network events, so each test
knows its request reached the server and what the server answered.
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator

import pytest
from _server_support import Server
from playwright.sync_api import Page

from eudaimon.server.origin import same_origin
from support.ports import free_port

FORM = '<form id="f" method="POST" action="{action}"></form><script>document.getElementById("f").submit()</script>'


@pytest.fixture(scope="module")
def attacker() -> Iterator[str]:
    """An HTTP server on another port: `/form?action=URL` posts an empty form to URL; `/` is blank."""

    class Pages(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path, _, query = self.path.partition("?")
            action = query.removeprefix("action=") if path == "/form" else ""
            body = (FORM.format(action=action) if action else "<p>attacker</p>").encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    served = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Pages)
    thread = threading.Thread(target=served.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{served.server_address[1]}"
    served.shutdown()
    served.server_close()


def _waiting_run(server: Server) -> tuple[str, str]:
    """A run waiting for approval of a wire transfer: (run id, call id)."""
    with server.client() as client:
        run = client.post(
            "/v1/agents/payer/runs", params={"wait": "true"}, json={"input": "pay 5000 to MALLORY"}
        ).json()
    assert run["status"] == "awaiting_approval", run
    return run["run_id"], run["pending_approvals"][0]["call_id"]


def _untouched(server: Server, run_id: str) -> None:
    with server.client() as client:
        run = client.get(f"/v1/runs/{run_id}").json()
    assert run["status"] == "awaiting_approval" and run["decisions"] == [], run


def test_a_form_on_another_origin_cannot_cancel_a_run(server: Server, attacker: str, page: Page) -> None:
    """Invariant: an empty `<form method=POST>` to `…/cancel` from another origin is refused (403)
    and the run goes on waiting, undecided."""
    run_id, _ = _waiting_run(server)
    target = f"{server.url}/v1/runs/{run_id}/cancel"
    with page.expect_response(target) as answered:
        page.goto(f"{attacker}/form?action={target}")
    assert answered.value.status == 403
    assert "cross-origin" in answered.value.text()
    _untouched(server, run_id)


def test_no_cors_fetches_from_another_origin_cannot_act(server: Server, attacker: str, page: Page) -> None:
    """Invariant: `fetch(…, {mode: "no-cors"})` from another origin (a simple request: no body, or
    JSON sent as text/plain) cannot cancel, resume or approve: each is refused (403)."""
    run_id, call_id = _waiting_run(server)
    page.goto(attacker + "/")
    attempts = {
        f"{server.url}/v1/runs/{run_id}/cancel": "undefined",
        f"{server.url}/v1/runs/{run_id}/resume": "undefined",
        f"{server.url}/v1/runs/{run_id}/approvals/{call_id}": "'{\"approved\": true}'",
    }
    for url, body in attempts.items():
        with page.expect_response(url) as answered:
            kind = page.evaluate(f"fetch({url!r}, {{method: 'POST', mode: 'no-cors', body: {body}}}).then(r => r.type)")
        assert kind == "opaque"
        assert answered.value.status == 403, url
    _untouched(server, run_id)


def test_a_request_for_another_host_name_is_refused(server: Server) -> None:
    """Invariant: with `Host: attacker.example` (what a page sends after DNS rebinding), reading
    runs and approving a call are refused (421) with a message naming `--allowed-host`."""
    run_id, call_id = _waiting_run(server)
    rebound = {"Host": "attacker.example"}
    with server.client() as client:
        listing = client.get("/v1/runs", headers=rebound)
        assert listing.status_code == 421
        assert "--allowed-host attacker.example" in listing.json()["detail"]
        approval = client.post(f"/v1/runs/{run_id}/approvals/{call_id}", json={"approved": True}, headers=rebound)
        assert approval.status_code == 421
        assert client.get("/v1/runs", headers={"Host": f"localhost:{server.port}"}).status_code == 200
    _untouched(server, run_id)


def test_allowed_host_adds_a_name(fresh: Server) -> None:
    """Invariant: `--allowed-host NAME` (repeatable) serves NAME; other names stay refused."""
    fresh.args = ("--allowed-host", "agents.example", "--allowed-host", "ops.example")
    fresh.start()
    with fresh.client() as client:
        for name in ("agents.example", "ops.example:8443", "AGENTS.EXAMPLE."):
            assert client.get("/v1/runs", headers={"Host": name}).status_code == 200, name
        assert client.get("/v1/runs", headers={"Host": "evil.example"}).status_code == 421
        behind_tls = {"Host": "agents.example", "Origin": "https://agents.example"}  # a TLS proxy in front
        assert client.post("/v1/runs/none/cancel", json={}, headers=behind_tls).status_code == 404  # not 403
        for probe in ("/health", "/ready"):  # probes address a server by IP: answered under any name
            assert client.get(probe, headers={"Host": "10.1.2.3:8000"}).status_code == 200, probe
        assert client.post("/prompt", json={"input": "x"}, headers={"Host": "10.1.2.3"}).status_code == 421


def test_changes_need_json_and_this_origin(server: Server) -> None:
    """Invariant: a request that changes something without `Content-Type: application/json` is
    refused (415); an empty JSON body counts as `{}`; a foreign or `null` Origin, or a
    cross-site `Sec-Fetch-Site`, is refused (403); this server's own Origin is accepted."""
    run_id, _ = _waiting_run(server)
    cancel = f"/v1/runs/{run_id}/cancel"
    with server.client() as client:
        assert client.post(cancel).status_code == 415
        form = client.post(cancel, data={"reason": "x"})
        assert form.status_code == 415 and "application/json" in form.json()["detail"]
        assert client.post(cancel, content=b"{}", headers={"Content-Type": "text/plain"}).status_code == 415
        for foreign in ({"Origin": "null"}, {"Origin": "http://127.0.0.1:1"}, {"Sec-Fetch-Site": "same-site"}):
            assert client.post(cancel, json={}, headers=foreign).status_code == 403, foreign
        _untouched(server, run_id)
        own = {"Origin": server.url, "Sec-Fetch-Site": "same-origin", "Content-Type": "application/json"}
        cancelled = client.post(cancel, headers=own)  # no body at all: read as {}
        assert cancelled.status_code == 200, cancelled.text
        assert cancelled.json()["status"] == "cancelled"


def test_a_delete_needs_no_body_but_only_this_origin_may_send_it(server: Server, attacker: str, page: Page) -> None:
    """Invariant: a DELETE from another origin, in a real browser, removes nothing: the browser
    asks first (a preflight), gets no CORS answer, and never sends it. So a DELETE needs no
    content type (`curl -X DELETE` works), and one that names a foreign Origin is still 403."""
    url = f"{server.url}/v1/schedules/kept"
    with server.client() as client:
        body = {"agent": "payer", "input": "pay 1 to BOB", "schedule_id": "kept", "cron": "0 3 * * *"}
        assert client.post("/v1/schedules", json=body).status_code == 201
        page.goto(attacker + "/")
        outcome = page.evaluate(f"fetch({url!r}, {{method: 'DELETE'}}).then(r => 'sent ' + r.status, e => 'refused')")
        assert outcome == "refused"
        assert client.delete(url, headers={"Origin": "http://127.0.0.1:1"}).status_code == 403
        assert [s["id"] for s in client.get("/v1/schedules").json()["schedules"]] == ["kept"]
        assert client.delete(url).status_code == 204  # no body, no content type: a script's DELETE
        assert client.get("/v1/schedules").json()["schedules"] == []


@pytest.mark.parametrize(
    ("origin", "host", "same"),
    [
        ("http://127.0.0.1:8000", "127.0.0.1:8000", True),
        ("http://127.0.0.1:9000", "127.0.0.1:8000", False),  # another port: another origin
        ("http://localhost:8000", "127.0.0.1:8000", False),
        ("https://agents.example", "agents.example", True),  # TLS ends at a proxy
        ("http://agents.example:443", "agents.example", False),
        ("http://[::1]:8000", "[::1]:8000", True),
        ("HTTP://Agents.Example.", "agents.example", True),
        ("null", "127.0.0.1:8000", False),
        ("http://127.0.0.1:8000/x", "127.0.0.1:8000", False),
    ],
)
def test_same_origin_compares_name_and_port(origin: str, host: str, same: bool) -> None:
    """Invariant: an origin is the server's own only with its name and port (the default port
    of its scheme when the Host names none)."""
    assert same_origin(origin, host) is same
