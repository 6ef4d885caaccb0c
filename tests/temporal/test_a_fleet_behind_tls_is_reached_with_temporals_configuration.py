"""A fleet behind TLS (a production cluster, Temporal Cloud) is reached with Temporal's own client
configuration: the caller's engine, `eudaimon worker` and the CLI read `TEMPORAL_TLS_*` and
`TEMPORAL_API_KEY` from their environment, and the engine URL the journal keeps holds no
credential. Without that configuration the run is refused with the reason, not hung."""

from __future__ import annotations

from pathlib import Path

import pytest
from _fleet import running_workers
from fleet_agent import make

from eudaimon.core.codec import event_to_json
from eudaimon.errors import ConfigurationError, RunError
from eudaimon.temporal import TemporalEngine
from eudaimon.temporal._connect import connection_options
from support.tls_proxy import tls_front

API_KEY = "tk-fleet-secret-0451"


async def test_a_run_on_a_fleet_behind_tls_completes_and_journals_no_credential(
    temporal_target: str, task_queue: str, store_url: str, ledger: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("TEMPORAL_TLS_SERVER_CA_CERT_PATH", "TEMPORAL_TLS_SERVER_NAME", "TEMPORAL_API_KEY", "TEMPORAL_TLS"):
        monkeypatch.delenv(name, raising=False)
    ca_file = tmp_path / "ca.pem"
    with tls_front(temporal_target, ca_file) as tls_target:
        plain = make(store=store_url, engine=TemporalEngine(tls_target, task_queue=task_queue))
        with pytest.raises(RunError, match=f"cannot reach Temporal at {tls_target}") as refused:
            await plain.prompt("read then write", run_id="run_without_tls")
        assert "agent.resume('run_without_tls')" in str(refused.value)
        await plain.aclose()

        monkeypatch.setenv("TEMPORAL_TLS_SERVER_CA_CERT_PATH", str(ca_file))
        monkeypatch.setenv("TEMPORAL_TLS_SERVER_NAME", "localhost")
        monkeypatch.setenv("TEMPORAL_API_KEY", API_KEY)
        assert connection_options()["api_key"] == API_KEY  # sent as Temporal's SDK sends it
        with running_workers(1, tls_target, task_queue, store_url, tmp_path) as _:
            agent = make(store=store_url, engine=TemporalEngine(tls_target, task_queue=task_queue))
            done = await agent.prompt("read then write", run_id="run_over_tls")
            assert done.status == "completed"
            resumed = await agent.resume("run_without_tls")  # journaled before the refusal: it goes on now
            assert resumed.status == "completed"
            journal = [
                event_to_json(e) for run in ("run_over_tls", "run_without_tls") for e in await agent.store.load(run)
            ]
            await agent.aclose()
        assert ledger.read_text().count("charge") == 2  # each run charged once
    assert sum('"type":"tool_completed"' in row for row in journal) == 4  # a lookup and a charge each
    assert all(API_KEY not in row for row in journal)
    assert f"temporal://{tls_target}/{task_queue}" in "".join(journal)
    assert API_KEY not in (tmp_path / "worker-0.log").read_text()


def test_a_configuration_that_does_not_load_says_what_to_fix(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TEMPORAL_TLS_SERVER_CA_CERT_PATH", str(tmp_path / "missing-ca.pem"))
    with pytest.raises(ConfigurationError, match="TEMPORAL_"):
        connection_options()


@pytest.mark.parametrize(
    "url", ["temporal://127.0.0.1:7233/agents?api_key=tk-in-url", "temporal://ops:tk-in-url@127.0.0.1:7233/agents"]
)
def test_an_engine_url_with_a_credential_is_refused_without_echoing_it(url: str) -> None:
    with pytest.raises(ConfigurationError, match="TEMPORAL_API_KEY") as refused:
        TemporalEngine.from_url(url)
    assert "tk-in-url" not in str(refused.value)
