"""Who may do what: keys name a principal and a role; the principal is journaled as `by`;
keys are never echoed; a server without keys binds loopback only."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from _server_support import OPERATOR, VIEWER, Server

from eudaimon.cli._serve import is_loopback
from eudaimon.errors import ConfigurationError
from eudaimon.server import ApiKeys, Principal, Role
from support.ports import free_port


def test_no_key_or_a_wrong_key_is_401_and_the_key_is_not_echoed(keyed: Server) -> None:
    """Invariant: reads and writes need a valid key (401 with WWW-Authenticate); the presented
    key never appears in the answer."""
    with keyed.client() as anon:
        missing = anon.get("/v1/runs")
        assert missing.status_code == 401 and missing.headers["www-authenticate"] == "Bearer"
    with keyed.client("not-a-key-s3cr3t") as wrong:
        answer = wrong.post("/v1/agents/payer/runs", json={"input": "pay 1 to X"})
        assert answer.status_code == 401 and "s3cr3t" not in answer.text
    with keyed.client() as anon:
        assert anon.get("/health").status_code == 200  # liveness needs no key
        assert anon.get("/").status_code == 200  # nor the inspector's page (its API calls do)


def test_a_viewer_reads_but_may_not_decide(keyed: Server) -> None:
    """Invariant: a viewer's key reads (200) and gets 403 for starting and deciding; nothing changes."""
    with keyed.client(OPERATOR) as operator, keyed.client(VIEWER) as viewer:
        run_id = operator.post("/v1/agents/payer/runs?wait=true", json={"input": "pay 2 to Y"}).json()["run_id"]
        assert viewer.get(f"/v1/runs/{run_id}").status_code == 200
        refused = viewer.post(f"/v1/runs/{run_id}/approvals/wire_1", json={"approved": True})
        assert refused.status_code == 403 and "victor" in refused.json()["detail"]
        assert viewer.post("/v1/agents/payer/runs", json={"input": "pay 3 to Z"}).status_code == 403
        assert viewer.post(f"/v1/runs/{run_id}/cancel", json={}).status_code == 403
        assert operator.get(f"/v1/runs/{run_id}").json()["status"] == "awaiting_approval"


def test_the_principal_of_the_key_is_journaled_and_x_api_key_works(keyed: Server) -> None:
    """Invariant: `by` is the key's principal, whichever header carried it; a body naming `by` is refused."""
    with keyed.client(OPERATOR) as operator, keyed.client() as header_client:
        run_id = operator.post("/v1/agents/payer/runs?wait=true", json={"input": "pay 4 to Q"}).json()["run_id"]
        claim = header_client.post(
            f"/v1/runs/{run_id}/approvals/wire_1",
            json={"approved": True, "by": "mallory"},
            headers={"X-API-Key": OPERATOR},
        )
        assert claim.status_code == 422
        decided = header_client.post(
            f"/v1/runs/{run_id}/approvals/wire_1",
            json={"approved": True, "note": "ok"},
            headers={"X-API-Key": OPERATOR},
        )
        assert decided.status_code == 200
        assert decided.json()["decisions"][0]["by"] == "alice"


def test_keys_from_a_file_and_bad_entries(tmp_path: Path) -> None:
    """Invariant: the key file's `KEY PRINCIPAL ROLE` lines are read (comments skipped); a bad line
    or role is a ConfigurationError that names the line but never the key."""
    good = tmp_path / "keys"
    good.write_text("# keys\nk1 ann operator\n\nk2 vic viewer\n")
    keys = ApiKeys.from_file(good)
    assert keys.authenticate("k1") == Principal("ann", Role.OPERATOR)
    assert keys.authenticate("k2") == Principal("vic", Role.VIEWER)
    assert keys.authenticate("k3") is None and "k1" not in repr(keys)
    bad = tmp_path / "bad"
    bad.write_text("topsecret ann admin\n")
    with pytest.raises(ConfigurationError, match="line 1") as caught:
        ApiKeys.from_file(bad)
    assert "topsecret" not in str(caught.value)
    with pytest.raises(ConfigurationError, match="entry 2"):
        ApiKeys.parse("a:b:viewer,secretonly")


def test_a_server_without_keys_refuses_a_public_address(tmp_path: Path) -> None:
    """Invariant: `serve --host` with a non-loopback address and no keys exits 1 saying why,
    without binding; loopback names are recognised."""
    command = [sys.executable, "-c", "from eudaimon.cli import app; app()", "serve", "--agent", "_server_agents:payer"]
    done = subprocess.run(
        [*command, "--store", f"sqlite:///{tmp_path / 'r.db'}", "--host", "0.0.0.0", "--port", str(free_port())],
        cwd=Path(__file__).parent,
        capture_output=True,
        text=True,
        timeout=60,
        env={**__import__("os").environ, "PYTHONPATH": str(Path(__file__).parent), "EUDAIMON_API_KEYS": ""},
    )
    assert done.returncode == 1
    assert "without API keys" in done.stderr and "--insecure" in done.stderr
    assert all(is_loopback(h) for h in ("127.0.0.1", "::1", "localhost", "127.8.0.1"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "10.0.0.1", "example.com"))


def test_a_keyless_server_says_it_serves_loopback_only(server: Server) -> None:
    """Invariant: the keyless server says so when it starts."""
    assert "serving loopback only" in server.output()
