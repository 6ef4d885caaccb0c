"""eudaimon's agents as MCP tools: each served agent is one tool, each call one durable run.

`tools/call` journals the run before anything else happens (`server.starting`, as `POST
/v1/agents/{agent}/runs` does) and answers when it ends or waits for a person, with progress
notifications on the way for a caller that asked for them. The answer names the run, so a
caller whose connection dropped reads it later as the resource `eudaimon://runs/{run_id}`,
answered from the journal like every other read.

A call that carries an idempotency key in `_meta["io.eudaimon/idempotency-key"]` (as every
call of `MCPTools` does) names its run by it: sent again, after a dropped connection or a
crash of either side, it finds the run it started and never starts a second one; with other
arguments it is refused. A call without a key starts a new run each time.

A tool's annotations say what its agent's own tools may do: read-only when every tool only
reads, destructive when one is irreversible, so a caller that trusts annotations (an
`MCPTools(trusted=True)`) gives the call the right effect class.
"""

from __future__ import annotations

import contextlib
import json
from datetime import UTC
from importlib import metadata
from typing import Any

import mcp_types as types
from fastapi import HTTPException
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError

from eudaimon.agent import Agent
from eudaimon.core.effects import Effect
from eudaimon.core.errors import EudaimonError
from eudaimon.core.events import ApprovalRequested, Event, ModelAttemptStarted, ToolStarted, ToolWaiting
from eudaimon.core.run_index import RunRow
from eudaimon.core.state import RunState, Status
from eudaimon.mcp._tools import IDEMPOTENCY_META_KEY, USAGE_META_KEY
from eudaimon.runtime.loop.clock import new_run_id
from eudaimon.server import starting
from eudaimon.server.auth import Principal
from eudaimon.server.context import ServerContext
from eudaimon.server.following import journal_batches
from eudaimon.server.ids import id_problem
from eudaimon.server.runs import idempotent_run_id
from eudaimon.server.views import spent_dict
from eudaimon.stores import index

PRINCIPAL = "eudaimon.principal"
"""Where the route leaves the principal its API key named, in the HTTP request's scope."""
RUN_URI = "eudaimon://runs/{run_id}"
"""A run as an MCP resource: its status, answer and what waits, read from the journal."""
RESOURCE_PAGE = 100
"""Runs listed per `resources/list` page (`nextCursor` for the next)."""

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "input": {"type": "string", "minLength": 1, "description": "What the agent should do."},
        "thread_id": {
            "type": "string",
            "maxLength": 256,
            "description": "A conversation to continue; without it the run has a thread of its own.",
        },
    },
    "required": ["input"],
    "additionalProperties": False,
}


def build_server(ctx: ServerContext, *, local: Principal | None = None) -> Server[Any]:
    """The MCP server of `ctx`'s agents: over HTTP each request's principal is the one its API
    key named (the route leaves it in the request); over stdio it is `local`, the user who
    started the process."""

    def _principal(rctx: ServerRequestContext[Any]) -> Principal:
        request = rctx.request
        principal = request.scope.get(PRINCIPAL) if request is not None else local
        if not isinstance(principal, Principal):
            raise MCPError(types.INVALID_REQUEST, "no principal: serve MCP with create_app(mcp=True) or `eudaimon mcp`")
        return principal

    async def list_tools(
        rctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        _principal(rctx)
        return types.ListToolsResult(tools=[agent_tool(agent) for _, agent in sorted(ctx.agents.items())])

    async def call_tool(rctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        principal = _principal(rctx)
        agent = ctx.agents.get(params.name)
        if agent is None:
            raise MCPError(
                types.INVALID_PARAMS, f"no tool {params.name!r}; this server's tools: {', '.join(sorted(ctx.agents))}"
            )
        return await _call(ctx, rctx, agent, principal, params)

    async def list_resources(
        rctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        """The runs of the served agents, most recently updated first, a page at a time."""
        _principal(rctx)
        try:
            after = index.Cursor.decode(params.cursor) if params is not None and params.cursor else None
        except index.BadCursor as exc:
            raise MCPError(types.INVALID_PARAMS, str(exc)) from None
        rows = await index.query_runs(ctx.store, index.RunQuery(limit=RESOURCE_PAGE + 1, cursor=after))
        page = rows[:RESOURCE_PAGE]
        more = len(rows) > RESOURCE_PAGE and bool(page)
        return types.ListResourcesResult(
            resources=[_run_resource(row) for row in page if row.agent in ctx.agents],
            next_cursor=index.Cursor.after(page[-1]).encode() if more else None,
        )

    async def list_templates(
        rctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        _principal(rctx)
        template = types.ResourceTemplate(
            name="run",
            uri_template=RUN_URI,
            description="A run of one of this server's agents: its status, its answer, and what waits for a person.",
            mime_type="application/json",
        )
        return types.ListResourceTemplatesResult(resource_templates=[template])

    async def read_resource(
        rctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        _principal(rctx)
        uri = str(params.uri)
        prefix = RUN_URI.removesuffix("{run_id}")
        run_id = uri.removeprefix(prefix) if uri.startswith(prefix) else ""
        events = await ctx.store.load(run_id) if run_id and "/" not in run_id else []
        state = RunState.from_events(events)
        if state is None or state.agent not in ctx.agents:
            raise MCPError(types.INVALID_PARAMS, f"no run at {uri!r}; runs are read as {RUN_URI}")
        text = json.dumps(run_summary(state), default=str)
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="application/json", text=text)]
        )

    return Server(
        "eudaimon",
        version=metadata.version("eudaimon"),
        instructions="Each tool is an agent; each call is a durable run, answered when it ends or waits for a person.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
    )


def agent_tool(agent: Agent[Any, Any]) -> types.Tool:
    """The tool that asks `agent`: its description is the agent's public one (never its system
    prompt), its annotations what the agent's tools may do. A toolset's tools are known only
    when a run lists them, so an agent with one may, for all the server knows, do anything."""
    effects = {tool.effect for tool in agent.tools.values()}
    if agent.toolsets:
        effects.add(Effect.IRREVERSIBLE)
    return types.Tool(
        name=agent.name,
        description=agent.description or f"Ask the agent {agent.name!r}; the call is a durable run.",
        input_schema=INPUT_SCHEMA,
        annotations=types.ToolAnnotations(
            read_only_hint=effects <= {Effect.READ},
            destructive_hint=Effect.IRREVERSIBLE in effects,
            idempotent_hint=False,
            open_world_hint=bool(agent.tools or agent.toolsets),
        ),
    )


def _run_resource(row: RunRow) -> types.Resource:
    return types.Resource(
        name=row.run_id,
        uri=RUN_URI.format(run_id=row.run_id),
        title=f"{row.agent} run, {row.status}",
        description=row.input_preview or None,
        mime_type="application/json",
    )


def run_summary(state: RunState) -> dict[str, Any]:
    """What a caller reads of a run: `structuredContent` of a call, and the run's resource."""
    summary: dict[str, Any] = {"run_id": state.run_id, "agent": state.agent, "status": state.status.value}
    if state.thread_id is not None:
        summary["thread_id"] = state.thread_id
    if state.status is Status.COMPLETED:
        summary["output"] = state.output or ""
        if state.structured_output is not None:
            summary["structured_output"] = state.structured_output
    if state.error:
        summary["error"] = state.error
    waiting = state.awaiting_approval()
    if waiting and state.status is Status.AWAITING_APPROVAL:
        summary["awaiting_approval"] = [{"call_id": c.id, "tool": c.name, "arguments": c.arguments} for c in waiting]
    unknown = state.unknown_outcomes()
    if unknown and state.status is Status.AWAITING_RECONCILIATION:
        summary["unknown_outcomes"] = [{"call_id": c.id, "tool": c.name} for c in unknown]
    return summary


async def _call(
    ctx: ServerContext,
    rctx: ServerRequestContext[Any],
    agent: Agent[Any, Any],
    principal: Principal,
    params: types.CallToolRequestParams,
) -> types.CallToolResult:
    if not principal.may_operate:
        return _error(f"{principal.name} is a {principal.role.value}; asking an agent needs an operator key")
    arguments = params.arguments or {}
    problem = _argument_problem(arguments)
    if problem is not None:
        return _error(f"{problem}; nothing was started")
    key = (rctx.meta or {}).get(IDEMPOTENCY_META_KEY)
    if key is not None and (not isinstance(key, str) or not key or len(key) > 200):
        return _error(f"_meta[{IDEMPOTENCY_META_KEY!r}] must be a string of 1 to 200 characters; nothing was started")
    run_id = idempotent_run_id(principal, agent.name, key) if key else new_run_id()
    try:
        await starting.start(
            ctx,
            agent,
            input=arguments["input"],
            thread_id=arguments.get("thread_id"),
            run_id=run_id,
            named_by=f"_meta key {IDEMPOTENCY_META_KEY!r}" if key else None,
            principal=principal.name,
            wait=False,
        )
    except HTTPException as exc:  # a guardrail's refusal, a key reused with other arguments
        return _error(f"{exc.detail}")
    except EudaimonError as exc:  # an agent that cannot be started from outside (it needs deps)
        return _error(f"{exc}; nothing was started")
    state = await _follow(ctx, rctx, run_id)
    return _answer(state)


async def _follow(ctx: ServerContext, rctx: ServerRequestContext[Any], run_id: str) -> RunState:
    """The run once it has ended, waits for a person or sleeps until a later time (which may be
    days: the caller is answered then, not kept), reporting its steps as progress."""
    state: RunState | None = None
    async with contextlib.aclosing(journal_batches(ctx, run_id, None)) as batches:
        async for state, events in batches:
            for event in events:
                message = _progress(event)
                if message is not None:
                    await rctx.session.report_progress(event.seq + 1, None, message)
            if state.status is Status.WAITING:
                break
    assert state is not None  # journal_batches ends only once the run has settled
    return state


def _progress(event: Event) -> str | None:
    """A step as a progress message: the calls a run makes, and where it stops."""
    data = event.data
    if isinstance(data, ModelAttemptStarted):
        return "the model is asked"
    if isinstance(data, ToolStarted):
        return f"tool {data.tool} runs"
    if isinstance(data, ApprovalRequested):
        return f"tool {data.tool} waits for a person's approval"
    if isinstance(data, ToolWaiting):
        return "a tool waits to be tried again"
    return None


def _answer(state: RunState) -> types.CallToolResult:
    summary = run_summary(state)
    link = types.ResourceLink(name=state.run_id, uri=RUN_URI.format(run_id=state.run_id), mime_type="application/json")
    if state.status is Status.COMPLETED:
        text = state.output or ""
    elif state.status.is_paused or state.status is Status.WAITING:
        text = _paused_text(state)
    else:
        text = f"run {state.run_id} {state.status.value}: {state.error or 'no answer'}"
    content: list[types.ContentBlock] = [types.TextContent(type="text", text=text), link]
    failed = state.status in (Status.FAILED, Status.BUDGET_EXCEEDED, Status.CANCELLED)
    return types.CallToolResult(
        content=content, structured_content=summary, is_error=failed, meta={USAGE_META_KEY: spent_dict(state)}
    )


def _paused_text(state: RunState) -> str:
    where = f"read it later as {RUN_URI.format(run_id=state.run_id)}"
    if state.status is Status.AWAITING_APPROVAL:
        calls = ", ".join(f"{c.name} ({c.id})" for c in state.awaiting_approval()) or "a call of a child run"
        return f"run {state.run_id} waits for a person to approve {calls}; it goes on once they decide: {where}"
    if state.status is Status.AWAITING_RECONCILIATION:
        return f"run {state.run_id} waits for an operator: the outcome of a call is unknown; {where}"
    if state.status is Status.WAITING:
        wakes = ", ".join(
            f"{p.call.name} at {p.wake_at.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC"
            for p in state.calls.values()
            if p.wake_at
        )
        return f"run {state.run_id} sleeps until it tries again ({wakes or 'later'}) and goes on by itself; {where}"
    return f"run {state.run_id} is {state.status.value}; {where}"


def _argument_problem(arguments: dict[str, Any]) -> str | None:
    extra = sorted(set(arguments) - {"input", "thread_id"})
    if extra:
        return f"unknown argument{'s' if len(extra) > 1 else ''} {', '.join(extra)}: the tool takes `input` and `thread_id`"
    text = arguments.get("input")
    if not isinstance(text, str) or not text.strip():
        return "`input` must be a non-empty string saying what the agent should do"
    thread = arguments.get("thread_id")
    if thread is not None:
        return "`thread_id` must be a string" if not isinstance(thread, str) else id_problem("thread_id", thread)
    return None


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)
