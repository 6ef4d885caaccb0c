"""Invariant: the configured API key never reaches an exception, the journal or the CLI, even
when an OpenAI-compatible server echoes it back and it does not look like `sk-…`.

Bug (issue 14): a key such as `acme-prod+…` echoed in a 400's message went into
`RunFailedError`, the `model_failed`/`run_failed` rows and `eudaimon runs show`."""

from __future__ import annotations

import asyncio
from pathlib import Path
from urllib.parse import quote

import pytest
from _fake_providers import FakeOpenAI
from typer.testing import CliRunner

from eudaimon import Agent
from eudaimon.cli import app
from eudaimon.core.errors import RunFailedError
from eudaimon.models.openai import OpenAIModel
from eudaimon.stores.sqlite import SqliteStore

KEY = "acme-prod+7f3k9q2w1z8xK4"


@pytest.mark.parametrize(
    "echo",
    [
        f"invalid key {KEY} for this model",
        f"invalid key {quote(KEY, safe='')} for this model",
        f"invalid key {KEY[:6]}****************{KEY[-4:]} for this model",
        f"bad request for this model (Authorization: Bearer {KEY})",
    ],
    ids=["whole", "percent-encoded", "masked", "bearer"],
)
def test_an_echoed_key_is_in_no_error_row_or_cli_view(openai_server: FakeOpenAI, tmp_path: Path, echo: str) -> None:
    """The run fails on the server's 400; its error, its journal rows and `runs show`/`events`
    name the failure without the key in any form."""
    openai_server.reply(openai_server.error(400, echo))

    async def run() -> None:
        store = SqliteStore(tmp_path / "runs.db")
        model = OpenAIModel("m", provider="openai-compatible", api_key=KEY, base_url=openai_server.url, timeout=5.0)
        try:
            await Agent(model, store=store).prompt("hi")
        finally:
            await model.aclose()
            await store.close()

    with pytest.raises(RunFailedError) as failed:
        asyncio.run(run())
    assert openai_server.requests[0].headers["authorization"] == f"Bearer {KEY}"  # the key was really used
    texts = [str(failed.value)]
    runner = CliRunner()
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    for args in (
        ["show", failed.value.run_id],
        ["events", failed.value.run_id],
        ["events", failed.value.run_id, "--json"],
    ):
        result = runner.invoke(app, ["runs", *args, "--store", url], env={"COLUMNS": "300"})
        assert result.exit_code == 0, result.output
        texts.append(result.output)
    assert "400" in texts[0] and "for this model" in texts[3]  # the failure itself is still told
    for text in texts:
        for part in (KEY, quote(KEY, safe=""), KEY[:6], KEY[-6:]):
            assert part not in text, text
