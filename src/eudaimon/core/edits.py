"""An approver's edit of a call, said as what changed: `amount_usd: 500 → 9000`.

The journal keeps both the arguments a call was asked about and those a human approved
instead (`approval_decided.original_arguments`, `.arguments`). Every reader that shows a
decision (the CLI, the A2A and AG-UI views) says the edit the same way, so that no one reads
the model's $500 where $9,000 ran.
"""

from __future__ import annotations

import json
from typing import Any

_ABSENT = object()


def changes(original: Any, edited: Any) -> list[tuple[str, Any, Any]]:
    """`(field, before, after)` for each top-level field the edit changed, added or removed
    (a missing side is `None` in `before`/`after` and named by `edit_text`)."""
    if not isinstance(original, dict) or not isinstance(edited, dict):
        return [] if original == edited else [("(arguments)", original, edited)]
    found = []
    for key in [*original, *(k for k in edited if k not in original)]:
        before, after = original.get(key, _ABSENT), edited.get(key, _ABSENT)
        if before != after:
            found.append((str(key), before, after))
    return found


def edit_text(original: Any, edited: Any, limit: int = 300) -> str:
    """The edit on one line: `amount_usd: 500 → 9000; to: (absent) → "ACME"`; `(no change)`."""
    parts = [f"{key}: {_shown(before)} → {_shown(after)}" for key, before, after in changes(original, edited)]
    text = "; ".join(parts) or "(no change)"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _shown(value: Any) -> str:
    if value is _ABSENT:
        return "(absent)"
    return json.dumps(value, ensure_ascii=False, default=str)
