"""`allowed_origins` (`eudaimon serve --allowed-origin`) takes exact origins only: each is
checked and written as a browser writes its `Origin`, anything else is refused naming what is
wrong, and `"*"` is refused on a server without keys (where every request is an operator)."""

from __future__ import annotations

from pathlib import Path

import pytest

from eudaimon import Agent
from eudaimon.core.errors import ConfigurationError
from eudaimon.models import FunctionModel
from eudaimon.server import ApiKeys, create_app
from eudaimon.server.origin import BrowserGuard, allowed_origins
from eudaimon.stores import SqliteStore


@pytest.mark.parametrize(
    ("given", "written"),
    [
        ("http://localhost:3000", "http://localhost:3000"),
        ("  HTTP://LocalHost:3000 ", "http://localhost:3000"),  # as a browser writes it
        ("https://app.example:443", "https://app.example"),  # a browser omits the default port
        ("http://app.example:80", "http://app.example"),
        ("http://[::1]:5173", "http://[::1]:5173"),
        ("https://app.example.", "https://app.example"),
    ],
)
def test_an_origin_is_written_as_a_browser_writes_it(given: str, written: str) -> None:
    assert allowed_origins([given], keyed=False) == (written,)


@pytest.mark.parametrize(
    ("given", "why"),
    [
        ("localhost:3000", "has no scheme://"),
        ("null", "has no scheme://"),
        ("ftp://files.example", "scheme 'ftp'"),
        ("ws://localhost:3000", "scheme 'ws'"),
        ("http://localhost:3000/", "trailing '/'"),
        ("http://localhost:3000/app", "has a path"),
        ("http://localhost:3000?x=1", "query"),
        ("http://*.example.com", "has a wildcard"),
        ("https://user:pw@app.example", "user information"),
        ("http://localhost:0", "port '0'"),
        ("http://localhost:70000", "port '70000'"),
        ("http://localhost:http", "port 'http'"),
        ("http://localhost:", "port ''"),
        ("http://::1:3000", "IPv6 address without brackets"),
        ("http://", "no valid host name"),
        ("http://exämple.com", "xn--"),
    ],
)
def test_what_is_not_an_origin_is_refused_saying_what_is_wrong(given: str, why: str) -> None:
    with pytest.raises(ConfigurationError, match="scheme://host\\[:port\\]") as refused:
        allowed_origins([given], keyed=True)
    assert why in str(refused.value)


def test_any_origin_needs_keys(tmp_path: Path) -> None:
    """Invariant: `"*"` on a keyless server is refused, saying why (any page could act as an
    operator) and what to do; with keys it is accepted (a key is still needed to act)."""
    store = SqliteStore(str(tmp_path / "runs.db"))
    agent = Agent(FunctionModel(lambda request: "hi", "hello-model"), name="hello", store=store, memory=None)
    with pytest.raises(ConfigurationError) as refused:
        create_app(agent, allowed_origins=["*"])
    assert "any web page" in str(refused.value) and "API keys" in str(refused.value)
    assert "http://localhost:3000" in str(refused.value)  # names the exact form to use instead
    create_app(agent, auth=ApiKeys.parse("k:alice:operator"), allowed_origins=["*"])
    with pytest.raises(ConfigurationError, match="has a path"):
        create_app(agent, allowed_origins=["http://localhost:3000/"])


def test_the_guard_lets_in_only_the_origins_named() -> None:
    """Invariant: an allowed origin passes however the browser spells its default port; other
    ports, schemes and `null` do not; `"*"` lets in any origin but `null`."""

    async def app(scope: object, receive: object, send: object) -> None: ...

    guard = BrowserGuard(
        app, allowed_origins=allowed_origins(["http://localhost:3000", "https://app.example"], keyed=False)
    )
    assert guard.lets_in("http://localhost:3000") and guard.lets_in("https://app.example:443")
    for other in ("http://localhost:3001", "https://localhost:3000", "http://app.example", "null", "garbage"):
        assert not guard.lets_in(other), other
    assert not BrowserGuard(app).lets_in("http://localhost:3000")
    anyone = BrowserGuard(app, allowed_origins=("*",))
    assert anyone.lets_in("https://elsewhere.example") and not anyone.lets_in("null")
