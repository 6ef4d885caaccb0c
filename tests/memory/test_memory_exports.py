"""The public surface of `eudaimon.memory` (DESIGN §6) is pinned."""

from __future__ import annotations

import eudaimon.memory


def test_the_documented_names_are_exported() -> None:
    """Public names: the names DESIGN §6 promises exist, and __all__ lists exactly what is public."""
    promised = {
        "Memory",
        "SlidingWindowMemory",
        "TokenWindowMemory",
        "SummaryMemory",
        "SqliteMemory",
        "RedisMemory",
        "ThreadState",
        "tiktoken_counter",
        "JournalMemory",
    }
    assert promised <= set(eudaimon.memory.__all__)
    for name in eudaimon.memory.__all__:
        assert getattr(eudaimon.memory, name) is not None
    public = {n for n in vars(eudaimon.memory) if not n.startswith("_")}
    submodules = {"base", "journal", "redis", "sqlite", "summary", "thread", "windows"}
    assert public - submodules == set(eudaimon.memory.__all__)


def test_importing_eudaimon_does_not_import_redis() -> None:
    """Start-up cost: redis-py is imported by the first `RedisMemory` that connects, not by
    `import eudaimon`, so a CLI command or a program without Redis never pays for it."""
    import subprocess
    import sys

    probe = "import sys, eudaimon, eudaimon.memory; print('redis' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"
