"""Names in requests hold no invisible characters: run, thread, call and agent ids, filters.

A NUL in an id is not an id anyone meant: PostgreSQL cannot store it (psycopg raises DataError
mid-request, a 500, or worse in a background task after the answer), a lone surrogate cannot
be encoded at all, and bidi overrides or zero-width characters make two different ids look
alike on a screen. So every such character is refused (422) before a route runs: in the path
and the query string of every request (`VisibleNames`, pure ASGI), and in the id fields of
request bodies (`VisibleId`, a pydantic type the schemas use). Message text (`input`, notes)
is not an id and may hold anything; the journal stores it escaped.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Annotated
from urllib.parse import parse_qsl

from pydantic import AfterValidator
from starlette.types import ASGIApp, Receive, Scope, Send

REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
"""Controls (NUL, ESC, C1), format characters (bidi overrides, zero-width), lone surrogates,
line and paragraph separators."""


def first_invisible(text: str) -> str | None:
    """The first refused character of `text`, as `U+XXXX`, or None."""
    for char in text:
        if unicodedata.category(char) in REFUSED_CATEGORIES:
            return f"U+{ord(char):04X}"
    return None


def _visible(value: str) -> str:
    found = first_invisible(value)
    if found is not None:
        raise ValueError(f"an id may not hold control, format or bidi characters; found {found}")
    return value


ID_MAX_LENGTH = 256
"""The longest thread id a request may name (`thread_id` in the API's bodies)."""


def id_problem(name: str, value: str, max_length: int = ID_MAX_LENGTH) -> str | None:
    """Why `value`, the id a protocol field `name` carries (A2A's `contextId`, AG-UI's
    `threadId`), is refused by the rules the API's own ids follow; None when it is not."""
    if not value:
        return f"{name} is empty; send a non-empty id"
    if len(value) > max_length:
        return f"{name} is {len(value)} characters long; an id holds at most {max_length}"
    found = first_invisible(value)
    if found is not None:
        return f"{name} holds {found}, a control, format or bidi character; ids hold visible characters only"
    return None


VisibleId = Annotated[str, AfterValidator(_visible)]
"""A `str` field that is an id: refused (422) when it holds a control, format or bidi character."""


class VisibleNames:
    """Refuse (422) a request whose path or query string, decoded, holds a refused character."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            problem = _problem(scope)
            if problem is not None:
                body = json.dumps({"detail": problem}).encode()
                await send(
                    {
                        "type": "http.response.start",
                        "status": 422,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def _problem(scope: Scope) -> str | None:
    found = first_invisible(str(scope.get("path", "")))
    if found is not None:
        return f"the path holds {found}, a control, format or bidi character; ids hold visible characters only"
    query = bytes(scope.get("query_string", b"")).decode("utf-8", "surrogateescape")
    for name, value in parse_qsl(query, keep_blank_values=True, errors="surrogateescape"):
        found = first_invisible(name + value)
        if found is not None:
            shown = name[:40].encode("ascii", "backslashreplace").decode()
            return f"query parameter {shown!r} holds {found}, a control, format or bidi character; send visible text"
    return None
