"""A run started with `RunInput.patched` takes the patches of the release that set it without
asking Temporal, and no later ones: a later patch taken that way would send a run started
before it down the new path on replay, without its marker, and fail with nondeterminism.

The patches the flag stands for are frozen here; a new patch must call `workflow.patched`
itself (as `eudaimon.short-waits-sleep-in-the-worker` and
`eudaimon.lost-datasource-calls-are-looked-up` do)."""

from __future__ import annotations

import re
from pathlib import Path

import eudaimon.temporal as temporal_package

FLAGGED_PATCHES = frozenset(
    {
        "FRESH_WAIT_PATCH",
        "SUSPENDED_PATCH",
        "TIMERS_PATCH",
        "_CARRY_PATCH",
        "_NO_MEMORY_PATCH",
        "_UNSTASH_PATCH",
    }
)
"""The patches `RunInput.patched` covers: those of the release that added the flag."""

_TAKEN_BY_FLAG = re.compile(r"(?:patched or workflow\.patched|self\._patched)\((_?[A-Z][A-Z0-9_]*)\)")


def patches_taken_by_the_flag(source: str) -> set[str]:
    return set(_TAKEN_BY_FLAG.findall(source))


def test_only_the_releases_own_patches_are_taken_by_the_flag() -> None:
    package = Path(temporal_package.__file__).parent
    taken = set().union(*(patches_taken_by_the_flag(p.read_text()) for p in package.glob("*.py")))
    assert taken, "the flag is taken for no patch: the pattern no longer matches the code"
    assert taken <= FLAGGED_PATCHES, (
        f"{sorted(taken - FLAGGED_PATCHES)} taken by RunInput.patched: a patch added after the flag "
        "must ask workflow.patched itself"
    )


def test_a_later_patch_taken_by_the_flag_is_caught() -> None:
    planted = "if self._patched(_NEWER_PATCH):\n    pass\n"
    assert patches_taken_by_the_flag(planted) - FLAGGED_PATCHES == {"_NEWER_PATCH"}
