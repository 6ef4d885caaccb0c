"""Webhooks are delivered at least once from the outbox in the store, signed per Standard Webhooks:
a receiver that is down while runs start waiting for approval, while the server is killed with
SIGKILL and started again, then gets every event once it is up (deduplicated by `webhook-id`),
each signature valid; `GET /v1/webhooks/deliveries` shows each delivery with the refused
attempts and the 2xx that ended it. No request names a URL: the receiver is the server's option."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from _queue_support import BACKENDS
from _server_support import Server, wait_until
from standardwebhooks.webhooks import Webhook as Verifier

from eudaimon.server import outbox
from eudaimon.server.webhooks import new_secret
from eudaimon.stores.records import RecordStore
from eudaimon.stores.url import open_store
from support.databases import postgres_database
from support.ports import free_port

SECRET = new_secret()


class Receiver:
    """A real HTTP receiver on a fixed port, started late (refused connections until then)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.got: list[tuple[dict[str, str], bytes]] = []
        self.http: ThreadingHTTPServer | None = None

    def start(self) -> None:
        got = self.got

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["content-length"]))
                got.append(({k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self.http is not None:
            self.http.shutdown()
            self.http.server_close()

    def by_id(self) -> dict[str, Any]:
        verifier = Verifier(SECRET)
        seen: dict[str, Any] = {}
        for headers, body in self.got:
            payload = verifier.verify(body, headers)  # raises on a bad signature or a stale timestamp
            assert seen.get(headers["webhook-id"], payload) == payload  # a retry is the same message
            seen[headers["webhook-id"]] = payload
        return seen


@contextlib.contextmanager
def store_url(backend: str, where: Path) -> Iterator[str]:
    if backend == "sqlite":
        yield f"sqlite:///{where / 'runs.db'}"
        return
    with postgres_database("eudaimon_hook") as url:
        yield url


def _server(tmp_path: Path, url: str, receiver: Receiver) -> Server:
    args = (
        "--webhook", f"http://127.0.0.1:{receiver.port}/hook", "--webhook-secret-env", "HOOK_SECRET",
        "--webhook-events", "awaiting_approval,completed,failed",
    )  # fmt: skip
    return Server(tmp_path / "runs.db", store=url, env={"HOOK_SECRET": SECRET}, args=args)


def _start(server: Server, agent: str, text: str) -> str:
    with server.client() as client:
        answer = client.post(f"/v1/agents/{agent}/runs", json={"input": text})
        assert answer.status_code == 202, answer.text
        run_id: str = answer.json()["run_id"]
    return run_id


def _status(server: Server, run_id: str) -> str:
    with server.client() as client:
        status: str = client.get(f"/v1/runs/{run_id}").json()["status"]
    return status


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_receiver_down_then_up_gets_every_event_once_across_a_restart(backend: str, tmp_path: Path) -> None:
    receiver = Receiver()
    with store_url(backend, tmp_path) as url:
        first = _server(tmp_path, url, receiver).start()
        second: Server | None = None
        try:
            waiting = [_start(first, "payer", "pay 10 to bob"), _start(first, "payer", "pay 20 to eve")]
            for run_id in waiting:
                wait_until(lambda r=run_id: _status(first, r) == "awaiting_approval", f"{run_id} to wait")
            wait_until(lambda: _refused(first), "a refused attempt", tries=400)
            down_since = time.monotonic()
            first.kill()
            second = _server(tmp_path, url, receiver)
            second.port = free_port()
            second.start()
            done = _start(second, "ticker", "ticks=1")
            wait_until(lambda: _status(second, done) == "completed", "the ticker to complete")  # type: ignore[arg-type]
            time.sleep(max(0.0, 10 - (time.monotonic() - down_since)))
            receiver.start()  # up after 10 s of refusing (backoff 1, 2, 4, 8 s … after the first failure)
            expected = {(r, "awaiting_approval") for r in waiting} | {(done, "completed")}
            got = wait_until(lambda: _received(receiver) >= expected and receiver.by_id(), "every event", tries=1200)
            assert {(p["data"]["run_id"], p["type"]) for p in got.values()} == expected
            with second.client() as client:
                shown = client.get("/v1/webhooks/deliveries").json()
            assert shown["configured"] is True
            delivered = {d["id"]: d for d in shown["deliveries"]}
            assert set(delivered) == set(got)
            for delivery in delivered.values():
                assert delivery["state"] == "delivered"
                assert delivery["attempts"][-1]["status"] == 204
            assert any(a["status"] is None for d in delivered.values() for a in d["attempts"])
        finally:
            first.stop()
            if second is not None:
                second.stop()
            receiver.stop()


def _refused(server: Server) -> bool:
    with server.client() as client:
        shown = client.get("/v1/webhooks/deliveries").json()["deliveries"]
    return len(shown) >= 2 and all(d["attempts"] and d["attempts"][0]["status"] is None for d in shown)


def _received(receiver: Receiver) -> set[tuple[str, str]]:
    return {(json.loads(body)["data"]["run_id"], json.loads(body)["type"]) for _, body in receiver.got}


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_event_journaled_while_no_webhook_server_ran_is_still_delivered(backend: str, tmp_path: Path) -> None:
    """The outbox is read from the journal: a run that started waiting while the webhook server
    was dead (killed with SIGKILL; another server without webhooks drove the run) is announced
    when the webhook server is back, once."""
    receiver = Receiver()
    receiver.start()
    with store_url(backend, tmp_path) as url:
        hooked = _server(tmp_path, url, receiver).start()
        plain: Server | None = None
        again: Server | None = None
        try:
            wait_until(lambda: _scanned(url), "the webhook server's first scan (its watermark)")
            hooked.kill()
            plain = Server(tmp_path / "runs.db", store=url).start()
            run_id = _start(plain, "payer", "pay 30 to ann")
            wait_until(lambda: _status(plain, run_id) == "awaiting_approval", "the run to wait")  # type: ignore[arg-type]
            plain.stop()
            assert receiver.got == []
            again = _server(tmp_path, url, receiver)
            again.port = free_port()
            again.start()
            got = wait_until(lambda: receiver.by_id(), "the delivery", tries=600)
            assert [(p["data"]["run_id"], p["type"]) for p in got.values()] == [(run_id, "awaiting_approval")]
        finally:
            for server in (hooked, plain, again):
                if server is not None:
                    server.stop()
            receiver.stop()


def _scanned(url: str) -> bool:
    async def read() -> bool:
        store = open_store(url)
        try:
            assert isinstance(store, RecordStore)
            return await store.load_record(outbox.SCAN, "watermark") is not None
        finally:
            await store.close()

    return asyncio.run(read())
