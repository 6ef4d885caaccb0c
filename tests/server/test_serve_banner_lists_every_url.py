"""`eudaimon serve --a2a --ag-ui --mcp` says, as it starts, every URL it serves: the inspector, the
API and OpenAPI, each agent's runs, its A2A endpoint and card, its AG-UI endpoint, the MCP
endpoint; and each of them answers, each URL on one line whatever the width of the terminal.

Bug (issue 39): the banner named the inspector and the API only, not the A2A and AG-UI URLs.
"""

from __future__ import annotations

import re
from pathlib import Path

from _a2a_support import A2AServer


def test_the_banner_lists_every_url_and_each_answers(tmp_path: Path) -> None:
    server = A2AServer(
        tmp_path / "runs.db",
        agents=("_server_agents:payer", "_server_agents:ticker"),
        args=("--a2a", "--ag-ui", "--mcp"),
        env={"COLUMNS": "80"},  # a small terminal: a URL longer than the screen is still one line
    ).start()
    try:
        banner = server.output()
        with server.client() as http:
            where = server.url
            for name in ("payer", "ticker"):
                assert f"runs of {name}: POST {where}/v1/agents/{name}/runs" in banner
                assert (
                    f"A2A {name}: {where}/a2a/{name}   card: {where}/a2a/{name}/.well-known/agent-card.json" in banner
                )
                assert f"AG-UI {name}: POST {where}/v1/agents/{name}/ag-ui" in banner
                card = http.get(f"/a2a/{name}/.well-known/agent-card.json")
                assert card.status_code == 200 and card.json()["name"]
            assert f"inspector: {where}/   API: {where}/v1   OpenAPI: {where}/openapi.json" in banner
            assert f"MCP (Streamable HTTP), a tool per agent: {where}/mcp" in banner
            paths = http.get("/openapi.json").json()["paths"]
            assert "/v1/agents/{agent}/ag-ui" in paths and "/v1/agents/{agent}/runs" in paths
            shown = set(re.findall(r"http://[^\s]+", banner))
            for url in shown:
                if "/ag-ui" in url or url.endswith(("/runs", "/v1", "/mcp")) or re.fullmatch(r".*/a2a/\w+", url):
                    continue  # POST endpoints and the API prefix: their presence is checked above
                assert http.get(url.removeprefix(where) or "/").status_code == 200, url
    finally:
        server.stop()
