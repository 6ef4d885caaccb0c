"""Invariant: one function, `eudaimon.core.redact.redact`, masks every form a credential takes
in a URL, a DSN or a provider's text, and keeps what a reader needs (host, port, database, user).

Bug (issue 14): a libpq DSN, `?password=` parameters, `mysql://…?password=`, `sqlite://u:pw@h`
and a provider key not shaped like `sk-…` were echoed whole."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from eudaimon.core.redact import redact

SECRET = "hunter2-Zq9"


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (f"host=db.internal port=5432 dbname=app user=bob password={SECRET}", "host=db.internal port=5432"),
        (f"host=db password='{SECRET} with spaces' dbname=app", "dbname=app"),
        (f"host=db password = '{SECRET}''quoted' user=bob", "user=bob"),
        (f"postgresql://bob:{SECRET}@db:5432/app", "postgresql://bob:***@db:5432/app"),
        (f"postgresql://bob:p@{SECRET}@db/app", "@db/app"),
        (f"postgresql://bob@db/app?sslmode=require&password={SECRET}", "?sslmode=require&password=***"),
        (f"mysql://root@h/x?password={SECRET}", "mysql://root@h/x?password=***"),
        (f"sqlite://u:{SECRET}@h/x.db", "sqlite://u:***@h/x.db"),
        (f"redis://:{SECRET}@127.0.0.1:6379/0", "127.0.0.1:6379/0"),
        (f"https://api.example/v1?api_key={SECRET}&x=1", "&x=1"),
        (f"Authorization: Bearer {SECRET}", "Authorization: Bearer ***"),
        ("Incorrect API key provided: sk-proj-abcd1234efgh5678", "Incorrect API key provided: ***"),
        ("Incorrect API key provided: acme-p**************9Zq", "Incorrect API key provided: ***"),
    ],
)
def test_each_form_of_credential_is_masked_and_the_rest_kept(text: str, kept: str) -> None:
    """Invariant: the secret never survives; the parts that locate the service do."""
    shown = redact(text)
    assert SECRET not in shown and "hunter2" not in shown
    assert "sk-proj" not in shown and "**************" not in shown
    assert kept in shown


def test_a_known_secret_of_any_shape_is_masked_whole_encoded_and_in_part() -> None:
    """Bug: a configured key that is not `sk-…` shaped, echoed back by a server (whole,
    percent-encoded, or cut to its first and last characters), reached errors."""
    key = "acme-prod+7f3k9q2w1z8x"
    text = f"key {key} rejected; got {quote(key, safe='')}; prefix acme-p...1z8x; tail ****9q2w1z8x"
    shown = redact(text, [key])
    for part in (key, "acme-p", "9q2w1z8x", "7f3k"):
        assert part not in shown, shown
    assert shown.startswith("key *** rejected")


def test_ordinary_text_is_left_alone() -> None:
    """Invariant: redaction does not mangle text without credentials (ids, keys of dicts, URLs)."""
    text = "run_1 seq 3: idempotency_key=abc, monkey=1, see https://example.com/docs?page=2"
    assert redact(text, [None, "", "ab"]) == text
