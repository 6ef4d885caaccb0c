"""`redact`: the one function that takes credentials out of text before anyone sees it.

Store URLs, DSNs, provider errors and reprs end up in terminals, logs, issue trackers and the
journal itself. Every place that shows one calls `redact`, so a credential is masked the same
way whatever form it takes:

- a URL's user info: `postgresql://user:pw@host/db`, `sqlite://u:pw@h/x.db`, `http://:pw@h`
  -> `postgresql://user:***@host/db`;
- a secret-named query parameter: `…?password=X`, `&sslpassword=X`, `&api_key=X`, `&token=X`;
- a libpq `key=value` pair: `host=db password=X` or `password='it''s'` -> `password=***`;
- an `Authorization` value: `Bearer X`, `Basic X`;
- anything shaped like a provider key (`sk-…`, `sk-ant-…`, `gsk_…`, `xai-…`), masked or not;
- a key as a provider masks it when it echoes it (`abcd****wxyz`);
- and each exact secret the caller knows (the configured API key, whatever its shape), also
  in its percent-encoded form.

Pure: no I/O, so `core` may use it, and so may every shell around it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MASK = "***"

_SECRET_NAMES = (
    r"password|passwd|pwd|pass|sslpassword|secret|client_secret|token|access_token|refresh_token"
    r"|auth_token|api[_-]?key|apikey|x-api-key|key"
)
_USERINFO = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.\-]*://)(?P<user>[^/@:\s?#]*):(?P<pw>[^\s/?#]*)@")
"""`scheme://user:password@`: the password is everything up to the last `@` of the authority."""
_QUERY = re.compile(rf"(?P<head>[?&;](?:{_SECRET_NAMES})=)(?P<value>[^&#\s]*)", re.IGNORECASE)
_KEYWORD = re.compile(
    rf"(?P<head>(?<![\w.\-])(?:{_SECRET_NAMES})\s*=\s*)(?P<value>'(?:[^'\\]|\\.|'')*'|\"[^\"]*\"|[^\s'\",;&]+)",
    re.IGNORECASE,
)
"""libpq's `key=value` form (quoted values may hold spaces and escaped quotes), and the same in
JSON-less config dumps (`api_key = X`)."""
_AUTHORIZATION = re.compile(r"(?P<head>\b(?:Bearer|Basic|Token)\s+)(?P<value>[A-Za-z0-9._~+/=\-]{6,})", re.IGNORECASE)
_KEY_SHAPE = re.compile(r"(?<![A-Za-z0-9])(?:sk|gsk|xai|pk|rk)[-_][A-Za-z0-9_\-*.]{4,}")
_MASKED_KEY = re.compile(r"[A-Za-z0-9_\-.]*\*{4,}[A-Za-z0-9_\-.]*")
"""A key as providers echo it with its middle starred out (`sk-abc1****************wxyz`)."""
_MIN_SECRET = 4
"""Shorter "secrets" would mask ordinary words; such a key is refused by any provider anyway."""


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """`text` with every credential in it replaced by `***`.

    Args:
        text: Anything about to be shown or stored: a URL, a DSN, an error message, a repr.
        secrets: Exact values to mask wherever they appear (e.g. the configured API key, which
            may have any shape); `None` and values shorter than 4 characters are ignored.

    Returns:
        The text with each credential masked; the rest (hosts, ports, database names, the
        user name) is kept, since it is what a reader needs to find the thing named.
    """
    for secret in sorted({s for s in secrets if s and len(s) >= _MIN_SECRET}, key=len, reverse=True):
        text = text.replace(secret, MASK)
        encoded = _percent_encoded(secret)
        if encoded != secret:
            text = text.replace(encoded, MASK)
        partial = _partials(secret)
        if partial is not None:
            text = partial.sub(MASK, text)
    text = _USERINFO.sub(_mask_userinfo, text)
    text = _QUERY.sub(lambda m: m.group("head") + MASK, text)
    text = _KEYWORD.sub(lambda m: m.group("head") + MASK, text)
    text = _AUTHORIZATION.sub(lambda m: m.group("head") + MASK, text)
    text = _KEY_SHAPE.sub(MASK, text)
    return _MASKED_KEY.sub(_mask_masked, text)


_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def _percent_encoded(text: str) -> str:
    """`text` as a URL carries it (`urllib.parse.quote(text, safe="")`; `core` imports no I/O
    modules, urllib among them)."""
    return "".join(chr(b) if b in _UNRESERVED else f"%{b:02X}" for b in text.encode())


def _mask_userinfo(match: re.Match[str]) -> str:
    user = match.group("user")
    return f"{match.group('head')}{user}:{MASK}@"


def _mask_masked(match: re.Match[str]) -> str:
    # `***` alone (what `redact` itself writes) is kept as it is.
    return MASK if match.group(0).strip("*") else match.group(0)


def _partials(secret: str) -> re.Pattern[str] | None:
    """A key echoed in part: its first or last 6+ characters run into stars or an ellipsis."""
    if len(secret) < 12:
        return None
    head, tail = re.escape(secret[:6]), re.escape(secret[-6:])
    return re.compile(rf"{head}[A-Za-z0-9_\-.]*(?:\*+|…|\.\.\.)[A-Za-z0-9_\-.]*|(?:\*+|…|\.\.\.)[A-Za-z0-9_\-.]*{tail}")
