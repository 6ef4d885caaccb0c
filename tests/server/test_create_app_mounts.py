"""`create_app` returns an ASGI app that lives inside another application, under a prefix."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx2
from _server_support import HERE, wait_until

from support.ports import free_port


def test_the_app_mounted_under_a_prefix_serves_its_api_and_inspector(tmp_path: Path) -> None:
    """Invariant: mounted at /eudaimon in a FastAPI app, the API works under the prefix, the host
    app's own routes still answer, and the inspector's page points its assets and API at the prefix."""
    port = free_port()
    process = subprocess.Popen([sys.executable, "_mounted_app.py", str(tmp_path / "runs.db"), str(port)], cwd=HERE)
    try:
        with httpx2.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:

            def up() -> bool:
                try:
                    return client.get("/hello").status_code == 200
                except httpx2.TransportError:
                    return False

            wait_until(up, "the host application")
            run = client.post("/eudaimon/v1/agents/ticker/runs?wait=true", json={"input": "ticks=1"})
            assert run.status_code == 200 and run.json()["status"] == "completed"
            page = client.get("/eudaimon/runs/" + run.json()["run_id"])
            assert page.status_code == 200
            assert 'src="/eudaimon/inspector/app.js"' in page.text and 'data-root="/eudaimon"' in page.text
            assert "default-src 'none'" in page.headers["content-security-policy"]
            assert client.get("/eudaimon/inspector/app.js").status_code == 200
            assert client.get("/eudaimon/health").json()["status"] == "ok"
    finally:
        process.terminate()
        process.wait(15)
