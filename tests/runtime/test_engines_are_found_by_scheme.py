"""An engine URL finds its engine through the runtime's registry, not an import of the shell.

`runtime/process/engines.py` used to import `eudaimon.temporal`; now the Temporal shell registers an
opener for `temporal://` when its engine module loads, and `open_engine` loads that module
for a URL of the scheme — so `Agent(engine="temporal://…")` works in a process that never
imported `eudaimon.temporal`, and the runtime names no shell.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from eudaimon.core.errors import ConfigurationError
from eudaimon.runtime.process.engines import open_engine


def test_a_temporal_url_opens_a_temporal_engine_in_a_fresh_process() -> None:
    """Invariant: nothing but the URL is needed; the shell registers itself when the registry loads it."""
    code = (
        "import sys\n"
        "from eudaimon.runtime.process.engines import open_engine\n"
        "assert 'eudaimon.temporal' not in sys.modules\n"
        "engine = open_engine('temporal://127.0.0.1:7233/agents?namespace=prod')\n"
        "assert type(engine).__name__ == 'TemporalEngine', type(engine)\n"
        "print(engine.url)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "127.0.0.1:7233" in done.stdout and "agents" in done.stdout


def test_an_unknown_scheme_names_the_supported_one() -> None:
    """Bad input gets a clear error saying what to pass."""
    with pytest.raises(ConfigurationError, match="temporal://host:port/task-queue"):
        open_engine("kafka://127.0.0.1:9092/runs")
