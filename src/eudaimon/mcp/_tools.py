"""`MCPTools`: an MCP server's tools as an agent's tools, with effects you can trust."""

from __future__ import annotations

import shlex
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import mcp_types
from mcp import Client, StdioServerParameters
from mcp.client._transport import TransportStreams
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from eudaimon.core.effects import Effect, ToolTraits
from eudaimon.core.errors import ConfigurationError, EudaimonError
from eudaimon.core.events import ToolRecord
from eudaimon.core.messages import Usage
from eudaimon.mcp._connection import Connection
from eudaimon.mcp._effects import EffectOverride, as_traits, check_overrides, from_annotations
from eudaimon.mcp._errors import MCPConnectionError, MCPConnectionLost
from eudaimon.tools import Tool, ToolContext, ToolReturn, ToolSuspended
from eudaimon.tools.toolsets import Toolset

IDEMPOTENCY_META_KEY = "io.eudaimon/idempotency-key"
"""The `_meta` key of every `tools/call` request that carries the call's idempotency key."""
USAGE_META_KEY = "io.eudaimon/usage"
"""The result `_meta` key under which a server says what the call spent (an eudaimon server:
what the call's run spent): `input_tokens`, `output_tokens`, `cached_tokens`, and `cost_usd`
when priced. It is added to the caller's run, so the caller's budget sees it; a server can only
make that budget stricter by it, never looser (negative or malformed counts are ignored)."""

_CTX = "_eudaimon_ctx"
"""Where the bound tool receives its `ToolContext`: a name no JSON Schema property will take."""


class MCPToolError(EudaimonError):
    """The MCP server ran the tool and reported an error (`isError`); its text is the call's error
    result, shown to the model. Nothing to do in code: the model reads it and may try again."""


class MCPTools(Toolset):
    """The tools of one MCP server, for `Agent(tools=[...])`.

    Args:
        command: a stdio server: the command that starts it, e.g. `["python", "server.py"]`.
        url: a Streamable HTTP server's endpoint, e.g. `"http://127.0.0.1:8000/mcp"`.
        headers: HTTP headers for every request (auth); never journaled or shown.
        trusted: believe the server's annotations about effects (see `eudaimon.mcp._effects`).
        effects: per-tool effect classes by the server's tool name; these always win.
        prefix: tool names become `{prefix}_{name}`, to keep two servers' names apart.
        env: for a stdio server, extra environment variables.
        cwd: for a stdio server, its working directory.
        name: how the journal and errors name this server (default: from command or URL);
            keep it stable, since a resumed run finds its server by it.
        timeout_s: how long a connection or a request may wait for an answer.
    """

    def __init__(
        self,
        command: Sequence[str] | None = None,
        *,
        url: str | None = None,
        headers: Mapping[str, str] | None = None,
        trusted: bool = False,
        effects: Mapping[str, EffectOverride] | None = None,
        prefix: str | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        name: str | None = None,
        timeout_s: float = 60.0,
    ) -> None:
        if (command is None) == (url is None):
            raise ConfigurationError("MCPTools needs exactly one of command=[...] (stdio) or url=... (Streamable HTTP)")
        if command is not None and (isinstance(command, str) or not command):
            raise ConfigurationError('MCPTools(command=...) takes the command as a list: ["python", "server.py"]')
        self.trusted = trusted
        self.prefix = prefix
        self.overrides = {n: as_traits(n, v) for n, v in (effects or {}).items()}
        if command is not None:
            label = "stdio:" + shlex.join(command)
            params = StdioServerParameters(
                command=command[0], args=list(command[1:]), env=dict(env) if env else None, cwd=cwd
            )
            make = lambda: Client(stdio_client(params))  # noqa: E731
        else:
            assert url is not None
            label = _safe_url(url)
            extra = dict(headers or {})
            make = lambda: Client(_http_transport(url, extra))  # noqa: E731
        self._source = f"mcp:{name or label}"
        self.connection = Connection(name or label, make, timeout_s=timeout_s)

    @property
    def source(self) -> str:
        return self._source

    async def list_tools(self) -> tuple[ToolRecord, ...]:
        """Connect if needed and list the server's tools, classified.

        Raises:
            MCPConnectionError: the server cannot be started or reached.
        """
        listed = await self._listing()
        check_overrides(self.overrides, {t.name for t in listed}, self.connection.label)
        return tuple(self._record(t) for t in listed)

    async def _listing(self) -> list[mcp_types.Tool]:
        tools: list[mcp_types.Tool] = []
        cursor: str | None = None
        try:
            while True:

                def send(client: Client, cursor: str | None = cursor) -> Any:
                    return client.list_tools(cursor=cursor, cache_mode="refresh")

                page = await self.connection.request(send, sent_once=False)
                tools.extend(page.tools)
                cursor = page.next_cursor
                if cursor is None:
                    return tools
        except MCPConnectionLost as exc:
            raise MCPConnectionError(self.connection.label, str(exc)) from None
        except MCPError as exc:
            raise MCPConnectionError(self.connection.label, f"tools/list failed: {exc.error.message}") from None

    def _record(self, tool: mcp_types.Tool) -> ToolRecord:
        traits = self.overrides.get(tool.name) or from_annotations(tool.annotations, trusted=self.trusted)
        return ToolRecord(
            name=f"{self.prefix}_{tool.name}" if self.prefix else tool.name,
            description=tool.description or tool.title or "",
            parameters=dict(tool.input_schema),
            effect=traits.effect.value,
            idempotent=traits.idempotent,
            source=self.source,
            remote_name=tool.name,
        )

    def bind(self, record: ToolRecord, *, offered: bool) -> Tool:
        traits = ToolTraits(Effect(record.effect), record.idempotent)
        connection, remote = self.connection, record.remote_name or record.name

        async def call(**arguments: Any) -> str | ToolReturn:
            ctx: ToolContext = arguments.pop(_CTX)
            if not offered:
                raise MCPToolError(
                    f"tool {remote!r} is no longer offered by MCP server {connection.label}; this run was started "
                    "with it, but it cannot be called now. Answer without it."
                )
            meta: Any = {IDEMPOTENCY_META_KEY: ctx.idempotency_key}
            try:
                result: mcp_types.CallToolResult = await connection.request(
                    lambda c: c.call_tool(remote, arguments, meta=meta), sent_once=not traits.rerunnable
                )
            except MCPConnectionLost as exc:
                if traits.rerunnable:  # sent twice already; running it again later does no harm
                    raise MCPToolError(str(exc)) from None
                raise ToolSuspended(
                    f"{exc}; {remote!r} may or may not have acted, so it is not sent again", wait="reconciliation"
                ) from None
            except MCPConnectionError as exc:
                raise MCPToolError(f"{exc} (nothing was sent)") from None
            except MCPError as exc:
                raise MCPToolError(f"MCP server {connection.label} refused the call: {exc.error.message}") from None
            text = render(result)
            usage, cost = spent(result)
            if usage is not None or cost is not None:  # the error text too: a failed run spent as well
                return ToolReturn(output=text, is_error=bool(result.is_error), usage=usage, cost_usd=cost)
            if result.is_error:
                raise MCPToolError(text)
            return text

        return Tool(
            name=record.name,
            description=record.description,
            parameters=dict(record.parameters) or {"type": "object", "properties": {}},
            function=call,
            effect=traits.effect,
            idempotent=traits.idempotent,
            requires_approval=record.requires_approval,
            context_param=_CTX,
            is_async=True,
        ).compiled()

    async def aclose(self) -> None:
        await self.connection.aclose()

    async def __aenter__(self) -> MCPTools:
        await self.list_tools()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"MCPTools({self.connection.label!r}, trusted={self.trusted}, prefix={self.prefix!r})"


@asynccontextmanager
async def _http_transport(url: str, headers: dict[str, str]) -> AsyncIterator[TransportStreams]:
    """Streamable HTTP with our headers; the SDK leaves closing a client it was given to us."""
    async with (
        create_mcp_http_client(headers=headers) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams


def spent(result: mcp_types.CallToolResult) -> tuple[Usage | None, float | None]:
    """What the server says the call spent (`USAGE_META_KEY`); (None, None) when it says nothing."""
    reported = (result.meta or {}).get(USAGE_META_KEY)
    if not isinstance(reported, dict):
        return None, None

    def count(key: str) -> int:
        value = reported.get(key)
        return (
            int(value) if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < 2**53 else 0
        )

    cost = reported.get("cost_usd")
    usage = Usage(count("input_tokens"), count("output_tokens"), count("cached_tokens"))
    if isinstance(cost, int | float) and not isinstance(cost, bool) and 0 <= cost < float("inf"):
        return usage, float(cost)
    return usage, None


def render(result: mcp_types.CallToolResult) -> str:
    """A tool result as the text the model sees: text blocks as they are, other blocks named."""
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            parts.append(block.text)
        elif isinstance(block, mcp_types.EmbeddedResource):
            inner = block.resource
            parts.append(inner.text if isinstance(inner, mcp_types.TextResourceContents) else f"[resource {inner.uri}]")
        elif isinstance(block, mcp_types.ResourceLink):
            parts.append(f"[resource {block.uri}]")
        else:
            parts.append(f"[{block.type} {getattr(block, 'mime_type', '')}]".replace(" ]", "]"))
    if not parts and result.structured_content is not None:
        import json

        return json.dumps(result.structured_content, ensure_ascii=False)
    return "\n".join(parts)


def _safe_url(url: str) -> str:
    """The URL without credentials or query (where tokens hide), for messages and the journal."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))
