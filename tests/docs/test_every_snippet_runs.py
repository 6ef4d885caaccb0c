"""Every ```python block of the README and of docs/ runs as written.

Each block is written to a file of its own in an empty directory and run by this interpreter
in a subprocess, as a reader who pastes it would run it: so a snippet with `await` outside a
function, a missing import or a name it never defined fails here. What a block needs from
outside is local and real: `openai:` models reach a Chat Completions server on 127.0.0.1
(`OPENAI_BASE_URL`), `DATABASE_URL` and `REDIS_URL` name the PostgreSQL and Redis the tests
use, and SQLite files land in the block's directory.

A block may be skipped only by an HTML comment on the line before it that gives the reason:
`<!-- snippet: skip (needs …) -->`. None is today.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from _fake_openai import fake_openai

import eudaimon

ROOT = Path(__file__).resolve().parents[2]
SRC = str(Path(eudaimon.__file__).resolve().parents[1])
_FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<lang>[\w+-]*)[^\n]*$")
_SKIP = re.compile(r"<!--\s*snippet:\s*skip\b(?P<reason>.*?)-->")


@dataclass(frozen=True)
class Snippet:
    path: Path
    line: int
    code: str
    skip: str | None

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def snippets_of(path: Path) -> Iterator[Snippet]:
    """The python blocks of one Markdown file, dedented, with the reason to skip one if given."""
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if fence is None:
            i += 1
            continue
        start, indent, lang = i, fence["indent"], fence["lang"]
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            i += 1
        if lang in ("python", "py"):
            body = "\n".join(line[len(indent) :] if line.startswith(indent) else line for line in lines[start + 1 : i])
            before = next((line for line in reversed(lines[:start]) if line.strip()), "")
            marker = _SKIP.search(before)
            skip = None
            if marker is not None:
                skip = marker["reason"].strip(" ():—-")
                if not skip:
                    raise ValueError(
                        f"{path}:{start + 1}: a skipped snippet must say why: <!-- snippet: skip (why) -->"
                    )
            yield Snippet(path, start + 1, textwrap.dedent(body), skip)
        i += 1


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


SNIPPETS = [snippet for path in documents() for snippet in snippets_of(path)]


@pytest.fixture(scope="module")
def openai_url() -> Iterator[str]:
    with fake_openai() as url:
        yield url


@pytest.fixture(scope="module")
def database_url() -> Iterator[str]:
    """A PostgreSQL database of the module's own, dropped after it: snippets name fixed schemas
    (`eudaimon_docs`), which a shared database would keep from older runs and older versions."""
    from support.databases import postgres_database

    with postgres_database("eudaimon_docs") as url:
        yield url


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[s.id for s in SNIPPETS])
def test_snippet_runs_as_written(snippet: Snippet, openai_url: str, database_url: str, tmp_path: Path) -> None:
    """Invariant: the block, pasted into a file of its own, runs to the end and exits 0."""
    if snippet.skip is not None:
        pytest.skip(snippet.skip)
    script = tmp_path / "snippet.py"
    script.write_text(snippet.code, encoding="utf-8")
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("OPENAI_", "ANTHROPIC_", "EUDAIMON_STORE", "OTEL_"))
    }
    env.update(
        PYTHONPATH=SRC,
        OPENAI_API_KEY="sk-docs-snippets-0123456789",
        OPENAI_BASE_URL=openai_url,
        DATABASE_URL=database_url,
        REDIS_URL=os.environ.get("EUDAIMON_TEST_REDIS_URL", "redis://127.0.0.1:6379/0"),
        EUDAIMON_LEASE_TTL_S="2",
    )
    result = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180, check=False
    )
    assert result.returncode == 0, f"{snippet.id} failed:\n{result.stdout}\n{result.stderr}"


def test_the_collector_finds_blocks_and_refuses_a_skip_without_a_reason(tmp_path: Path) -> None:
    """The collector sees indented blocks (inside lists and admonitions), honours a skip with a
    reason, refuses one without, and leaves shell blocks alone."""
    page = tmp_path / "page.md"
    page.write_text(
        "```bash\necho no\n```\n\n- item\n\n    ```python\n    print(1)\n    ```\n\n"
        "<!-- snippet: skip (needs a GPU) -->\n```python\nimport torch\n```\n"
    )
    found = list(snippets_of(page))
    assert [(s.code.strip(), s.skip) for s in found] == [("print(1)", None), ("import torch", "needs a GPU")]
    page.write_text("<!-- snippet: skip -->\n```python\nprint(2)\n```\n")
    with pytest.raises(ValueError, match="must say why"):
        list(snippets_of(page))
    # The README keeps one example; the rest of its old sections live in docs/guide.md.
    assert len([s for s in SNIPPETS if s.path.name in ("README.md", "guide.md")]) >= 15
