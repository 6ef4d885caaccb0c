"""A part used without its extra raises `MissingExtra` (an `EudaimonError` and an `ImportError`)
whose message is the `pip install` line that fixes it, true for a clone: `pip install -e
'.[server]'`.

Bug (issue 39): from a clone the message said `pip install 'eudaimon[server]'`, which no index
serves.

Each case runs in a fresh interpreter in which the extra's package cannot be imported, as on a
base install.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _fresh import run_python

from eudaimon.errors import MissingExtra

ROOT = Path(__file__).resolve().parents[2]

CHECK = """
from eudaimon.errors import EudaimonError, MissingExtra
try:
{code}
except MissingExtra as exc:
    assert isinstance(exc, ImportError) and isinstance(exc, EudaimonError)
    print("MISSING", exc.extra, "|", exc)
else:
    print("NO ERROR")
"""

CASES = {
    "openai-model": (("openai",), "from eudaimon.models import OpenAIModel", "openai"),
    "openai-string": (
        ("openai",),
        "from eudaimon.models import infer_model; infer_model('openai:gpt-4o-mini')",
        "openai",
    ),
    "anthropic-model": (("anthropic",), "from eudaimon.models import AnthropicModel", "anthropic"),
    "postgres-store": (("psycopg",), "from eudaimon.stores import PostgresStore", "postgres"),
    "postgres-url": (
        ("psycopg_pool",),
        "from eudaimon.stores import open_store; open_store('postgresql://u@127.0.0.1/db')",
        "postgres",
    ),
    "redis-memory": (
        ("redis",),
        "from eudaimon.memory import RedisMemory; RedisMemory('redis://127.0.0.1:6379/0', 'k')",
        "redis",
    ),
    "server-app": (("fastapi",), "from eudaimon.server import create_app", "server"),
    "temporal-engine": (("temporalio",), "from eudaimon.temporal import TemporalEngine", "temporal"),
    "mcp-tools": (("mcp", "mcp_types"), "from eudaimon.mcp import MCPTools", "mcp"),
    "a2a-agent": (("a2a",), "from eudaimon.a2a import A2AAgent", "a2a"),
    "a2a-serve": (
        ("a2a",),
        "from eudaimon import Agent; from eudaimon.server import create_app; "
        "from eudaimon.models import ScriptedModel; create_app(Agent(ScriptedModel(['hi']), store='memory:'), a2a=True)",
        "a2a",
    ),
    "ag-ui-serve": (
        ("ag_ui",),
        "from eudaimon import Agent; from eudaimon.server import create_app; "
        "from eudaimon.models import ScriptedModel; create_app(Agent(ScriptedModel(['hi']), store='memory:'), ag_ui=True)",
        "ag-ui",
    ),
    "otel": (("opentelemetry",), "from eudaimon.telemetry import instrument", "otel"),
    "prices": (("genai_prices",), "from eudaimon.cost import OpenAICostModel; OpenAICostModel()", "prices"),
    "tiktoken": (("tiktoken",), "from eudaimon.memory import tiktoken_counter; tiktoken_counter()", "tiktoken"),
    "schedules": (
        ("cronsim",),
        "from eudaimon.runtime.process.schedules import check; check('0 9 * * 1-5', 'UTC')",
        "schedules",
    ),
    "webhooks": (
        ("standardwebhooks",),
        "from eudaimon.server import Webhook; Webhook('http://127.0.0.1:9/hook', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')",
        "webhooks",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_part_without_its_extra_names_the_pip_install_line(case: str) -> None:
    blocked, code, extra = CASES[case]
    result = run_python(CHECK.format(code="    " + code), blocked=blocked)
    assert result.returncode == 0, result.stderr
    line = result.stdout.strip().splitlines()[-1]
    assert line.startswith(f"MISSING {extra} |"), line
    assert f"pip install -e '.[{extra}]'" in line, line


def test_with_the_package_present_the_same_code_raises_nothing() -> None:
    """The blocker is what makes the cases above fail: unblocked, the part loads."""
    result = run_python(CHECK.format(code="    from eudaimon.models import OpenAIModel"))
    assert result.stdout.strip().splitlines()[-1] == "NO ERROR", result.stderr


CLI = """
import runpy, sys
sys.argv = ["eudaimon", *sys.argv[1:]]
runpy.run_module("eudaimon", run_name="__main__")
"""


@pytest.mark.parametrize(
    ("command", "blocked", "extra"),
    [
        (("serve", "--agent", "nowhere:agent"), ("fastapi", "uvicorn"), "server"),
        (
            ("worker", "--agent", "nowhere:agent", "--temporal", "127.0.0.1:1", "--task-queue", "q"),
            ("temporalio",),
            "temporal",
        ),
        (
            ("schedules", "add", "a", "--cron", "0 9 * * *", "--input", "hi", "--store", "memory:"),
            ("cronsim",),
            "schedules",
        ),
    ],
)
def test_a_command_without_its_extra_names_the_pip_install_line(
    command: tuple[str, ...], blocked: tuple[str, ...], extra: str
) -> None:
    result = run_python(CLI, blocked=blocked, args=command)
    assert result.returncode == 1, (result.stdout, result.stderr)
    said = " ".join((result.stdout + result.stderr).split())
    assert f"pip install -e '.[{extra}]'" in said, said
    assert "Traceback" not in said


def test_the_line_is_the_one_the_readme_gives() -> None:
    """The line is the README's install line for a clone, never the unpublished package's."""
    assert MissingExtra.install_line("server").startswith("pip install -e '.[server]'")
    assert "pip install -e '.[" in (ROOT / "README.md").read_text(encoding="utf-8")
    assert "eudaimon[" not in MissingExtra.install_line("server")
