"""`import eudaimon.core` loads only the standard library; `import eudaimon` loads no optional package.

Checked in a fresh interpreter: the modules an import adds to `sys.modules` are what it costs.
"""

from __future__ import annotations

import json

import pytest
from _fresh import run_python

NOT_AT_IMPORT = (  # the extras, and jsonschema, which only bare-schema tools and outputs use
    "openai",
    "anthropic",
    "httpx2",
    "psycopg",
    "psycopg_pool",
    "redis",
    "genai_prices",
    "fastapi",
    "uvicorn",
    "starlette",
    "temporalio",
    "mcp",
    "a2a",
    "ag_ui",
    "opentelemetry",
    "tiktoken",
    "jsonschema",
)


def _loaded_by(statement: str) -> list[str]:
    result = run_python(
        f"""
        import json, sys
        before = set(sys.modules)
        {statement}
        print(json.dumps(sorted(set(sys.modules) - before)))
        """
    )
    assert result.returncode == 0, result.stderr
    loaded: list[str] = json.loads(result.stdout.strip().splitlines()[-1])
    return loaded


def _top(name: str) -> str:
    return name.partition(".")[0]


def test_import_eudaimon_core_loads_only_the_stdlib_and_core() -> None:
    """The pure core imports nothing outside itself and the standard library (not even pydantic);
    `eudaimon` itself loads only `eudaimon._lazy`, its stdlib-only lookup of public names."""
    import sys

    loaded = _loaded_by("import eudaimon.core")
    outside = [
        m
        for m in loaded
        if _top(m) not in sys.stdlib_module_names
        and m not in ("eudaimon", "eudaimon._lazy")
        and not m.startswith("eudaimon.core")
    ]
    assert "eudaimon.core.state" in loaded
    assert outside == []


def test_every_core_module_imports_only_the_stdlib() -> None:
    """Codec and validity too: pydantic is loaded on the first encode, not by importing core."""
    import sys

    loaded = _loaded_by(
        "import importlib, pkgutil, eudaimon.core\n"
        "        for m in pkgutil.iter_modules(eudaimon.core.__path__): importlib.import_module('eudaimon.core.' + m.name)"
    )
    outside = [
        m
        for m in loaded
        if _top(m) not in sys.stdlib_module_names
        and m not in ("eudaimon", "eudaimon._lazy")
        and not m.startswith("eudaimon.core")
    ]
    assert "eudaimon.core.codec" in loaded
    assert outside == []


def test_import_eudaimon_loads_no_optional_package() -> None:
    """`import eudaimon` loads no provider SDK, driver, price table, server, Temporal, MCP or otel."""
    loaded = _loaded_by("import eudaimon")
    assert "eudaimon" in loaded
    assert [m for m in loaded if _top(m) in NOT_AT_IMPORT] == []


@pytest.mark.parametrize(
    "statement",
    [
        "from eudaimon import Agent, tool, Message, MissingExtra",
        "import eudaimon.models, eudaimon.stores, eudaimon.memory, eudaimon.tools",
        "from eudaimon.cost import OpenAICostModel, AnthropicCostModel",
        "import eudaimon.cli",
    ],
)
def test_the_agent_surface_loads_no_optional_package(statement: str) -> None:
    """Building blocks a base install uses load no extra until one of its parts is asked for."""
    loaded = _loaded_by(statement)
    assert [m for m in loaded if _top(m) in NOT_AT_IMPORT] == []


def test_asking_for_a_provider_loads_its_sdk() -> None:
    """The lazy names are real: asking for OpenAIModel loads openai (the test above can fail)."""
    loaded = _loaded_by("from eudaimon.models import OpenAIModel")
    assert "openai" in loaded


def test_eudaimon_help_loads_neither_the_agent_nor_pydantic() -> None:
    """`eudaimon --help` lists the commands; each command imports what it runs when it runs."""
    loaded = _loaded_by(
        "import runpy, sys\n"
        "        sys.argv = ['eudaimon', '--help']\n"
        "        try: runpy.run_module('eudaimon', run_name='__main__')\n"
        "        except SystemExit: pass"
    )
    assert "eudaimon.cli.app" in loaded
    assert [m for m in loaded if _top(m) in (*NOT_AT_IMPORT, "pydantic") or m.startswith("eudaimon.agent")] == []
