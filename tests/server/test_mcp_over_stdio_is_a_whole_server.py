"""`eudaimon mcp`: the agents as an MCP server on stdin and stdout, started as a process by the
official SDK's stdio client, as desktop assistants and IDEs start their servers. Each call is a
durable run in the store, the login name's; a call that waits for a person goes on in that process once an
operator decides elsewhere (`eudaimon runs approve`), found by its recovery sweep.
"""

from __future__ import annotations

import asyncio
import getpass
import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import mcp_types
from _server_support import HERE
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from standardwebhooks.webhooks import Webhook as Verifier

from eudaimon.server.webhooks import new_secret

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _server(db: Path, *extra: str, env: dict[str, str] | None = None) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=[
            *("-c", "from eudaimon.cli import app; app()", "mcp", "--store", f"sqlite:///{db}"),
            *("--agent", "_server_agents:payer", "--agent", "_server_agents:ticker", *extra),
        ],
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(HERE), SRC]),
            "EUDAIMON_LEASE_TTL_S": "2",
            **(env or {}),
        },
        cwd=str(HERE),
    )


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), SRC])}
    return subprocess.run(
        [sys.executable, "-c", "from eudaimon.cli import app; app()", *args],
        env=env,
        cwd=HERE,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


async def _read_run(client: Client, run_id: str) -> dict[str, object]:
    read = await client.read_resource(f"eudaimon://runs/{run_id}")
    [contents] = read.contents
    assert isinstance(contents, mcp_types.TextResourceContents)
    run: dict[str, object] = json.loads(contents.text)
    return run


async def test_a_call_over_stdio_is_a_journaled_run_of_the_local_user(tmp_path: Path) -> None:
    """Invariant: the answer is the run the store journaled, started by the login name of the
    user who started the process (as the CLI's decisions are journaled)."""
    db = tmp_path / "runs.db"
    async with Client(stdio_client(_server(db))) as client:
        names = sorted(t.name for t in (await client.list_tools()).tools)
        result = await client.call_tool("ticker", {"input": "ticks=2"})
    assert names == ["payer", "ticker"]
    run = result.structured_content
    assert run is not None and run["status"] == "completed" and not result.is_error
    shown = _cli("runs", "events", run["run_id"], "--store", f"sqlite:///{db}", "--json")
    assert shown.returncode == 0, shown.stderr
    first = json.loads(shown.stdout.splitlines()[0])
    assert first["type"] == "run_queued" and first["principal"] == getpass.getuser()


def test_stdout_carries_the_protocol_alone_and_the_process_ends_with_its_input(tmp_path: Path) -> None:
    """Invariant: a client reads every line of stdout as JSON-RPC, so nothing else is printed
    there (no banner, no log line); stdin closed, the process ends cleanly."""
    server = _server(tmp_path / "runs.db")
    hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    with subprocess.Popen(
        [server.command, *server.args],
        env=server.env,
        cwd=server.cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        assert process.stdin is not None and process.stdout is not None and process.stderr is not None
        try:
            process.stdin.write("".join(json.dumps(line) + "\n" for line in lines))
            process.stdin.flush()
            answers = [json.loads(process.stdout.readline()) for _ in range(2)]  # each line: JSON-RPC
            process.stdin.close()  # the client is done: the process ends, and prints nothing more
            process.wait(60)
        finally:
            if process.poll() is None:
                process.kill()
        rest, errors = process.stdout.read(), process.stderr.read()
    assert process.returncode == 0, errors
    assert rest == ""
    assert [a.get("id") for a in answers] == [1, 2] and all(a["jsonrpc"] == "2.0" for a in answers)
    assert sorted(t["name"] for t in answers[1]["result"]["tools"]) == ["payer", "ticker"]


async def test_a_call_waiting_for_approval_goes_on_in_the_process_once_decided_elsewhere(tmp_path: Path) -> None:
    """Invariant: the irreversible call waits for a person, and the person need not be the MCP
    client: approved with the CLI, the run is finished by the stdio server's own recovery."""
    db = tmp_path / "runs.db"
    async with Client(stdio_client(_server(db))) as client:
        result = await client.call_tool("payer", {"input": "send 30 to ANA"})
        run = result.structured_content
        assert run is not None and run["status"] == "awaiting_approval" and not result.is_error
        decided = _cli("runs", "approve", run["run_id"], "wire_1", "--store", f"sqlite:///{db}")
        assert decided.returncode == 0, decided.stderr
        for _ in range(300):  # the sweep runs every lease TTL (2 s here)
            now = await _read_run(client, run["run_id"])
            if now["status"] == "completed":
                break
            await asyncio.sleep(0.1)
    assert now["status"] == "completed" and now["output"] == "Done: sent $30.00 to ANA."


async def test_a_receiver_is_told_that_a_call_over_stdio_waits_for_a_person(tmp_path: Path) -> None:
    """Invariant: someone is told: with `--webhook`, the run a stdio call left waiting for
    approval is announced to the receiver, signed (Standard Webhooks), while the process runs."""
    got: list[tuple[dict[str, str], bytes]] = []

    class Hook(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            got.append(
                ({k.lower(): v for k, v in self.headers.items()}, self.rfile.read(int(self.headers["content-length"])))
            )
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    receiver = ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    secret = new_secret()
    hook = ("--webhook", f"http://127.0.0.1:{receiver.server_address[1]}/hook", "--webhook-secret-env", "HOOK_SECRET")
    try:
        async with Client(stdio_client(_server(tmp_path / "runs.db", *hook, env={"HOOK_SECRET": secret}))) as client:
            result = await client.call_tool("payer", {"input": "send 40 to ANA"})
            run = result.structured_content
            assert run is not None and run["status"] == "awaiting_approval"
            for _ in range(300):
                if got:
                    break
                await asyncio.sleep(0.1)
    finally:
        receiver.shutdown()
        receiver.server_close()
    headers, body = got[0]
    payload = Verifier(secret).verify(body, headers)  # raises on a bad signature
    assert payload["type"] == "awaiting_approval" and payload["data"]["run_id"] == run["run_id"], payload


def test_a_store_it_cannot_open_is_one_line_on_stderr_and_exit_1(tmp_path: Path) -> None:
    """Invariant: what went wrong is said on stderr in one line (a traceback printed there
    before), with the fix, and stdout stays the protocol's: empty."""
    server = _server(tmp_path / "missing" / "runs.db")
    done = subprocess.run(
        [server.command, *server.args], env=server.env, cwd=server.cwd, input="", capture_output=True, text=True,
        timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 1 and done.stdout == ""
    assert "Traceback" not in done.stderr and "mkdir -p" in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
