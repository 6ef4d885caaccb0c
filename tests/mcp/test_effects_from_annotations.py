"""Effect classes of MCP tools: annotations are believed only from a trusted server, and even
then an untrusted server's annotations can only make a tool stricter, never re-runnable."""

from __future__ import annotations

import pytest
from mcp_support import stdio_command

from eudaimon.core.effects import Effect, ToolTraits
from eudaimon.core.errors import ConfigurationError
from eudaimon.mcp import MCPTools


async def _classes(tools: MCPTools) -> dict[str, tuple[str, bool]]:
    async with tools:
        return {r.remote_name: (r.effect, r.idempotent) for r in await tools.list_tools()}


async def test_trusted_server_annotations_decide() -> None:
    """Invariant: trusted: readOnlyHint -> READ, idempotentHint -> idempotent WRITE,
    destructiveHint -> IRREVERSIBLE, no annotation -> WRITE."""
    classes = await _classes(MCPTools(command=stdio_command(), trusted=True))
    assert classes["lookup"] == ("read", False)
    assert classes["set_value"] == ("write", True)
    assert classes["delete_all"] == ("irreversible", False)
    assert classes["append_note"] == ("write", False)


async def test_untrusted_server_annotations_only_make_tools_stricter() -> None:
    """Invariant: untrusted (the default): read-only and idempotent hints are ignored (WRITE, not
    re-runnable); a destructive hint still asks for approval."""
    classes = await _classes(MCPTools(command=stdio_command()))
    assert classes["lookup"] == ("write", False)
    assert classes["set_value"] == ("write", False)
    assert classes["delete_all"] == ("irreversible", False)


async def test_per_tool_overrides_win() -> None:
    """Invariant: `effects={name: ...}` decides a tool's class whatever the server says."""
    tools = MCPTools(
        command=stdio_command(),
        effects={"append_note": Effect.READ, "delete_all": "write", "set_value": ToolTraits(Effect.WRITE, True)},
    )
    classes = await _classes(tools)
    assert classes["append_note"] == ("read", False)
    assert classes["delete_all"] == ("write", False)
    assert classes["set_value"] == ("write", True)


async def test_an_override_for_a_tool_the_server_lacks_is_a_clear_error() -> None:
    """Bug guarded: a misspelt override silently left a tool at its default class."""
    tools = MCPTools(command=stdio_command(), effects={"lookpu": "read"})
    with pytest.raises(ConfigurationError, match=r"'lookpu'.*offers: .*lookup"):
        await tools.list_tools()
    await tools.aclose()


def test_bad_options_are_clear_errors() -> None:
    """Invariant: MCPTools needs one of command or url, the command as a list, known effects."""
    with pytest.raises(ConfigurationError, match="exactly one"):
        MCPTools()
    with pytest.raises(ConfigurationError, match="as a list"):
        MCPTools(command="python server.py")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="not an effect"):
        MCPTools(command=["x"], effects={"a": "sideways"})
