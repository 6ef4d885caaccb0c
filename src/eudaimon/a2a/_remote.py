"""`A2AAgent`: a remote A2A agent as one of an agent's tools, called through the official client.

The call's idempotency key (stable across retries, resumes and crashes) is the A2A message's
`messageId`. A caller that crashed mid-call and is resumed sends the same message again; a
server that recognises message ids (eudaimon's do, and say so in their card with the
`IDEMPOTENT_MESSAGES` extension) answers with the task the first send started, which the tool
then follows to its end (the stream, or `GetTask` and `SubscribeToTask` when the stream breaks)
instead of starting the work twice. That is why the tool is declared `idempotent=True` by
default: running it again is asking for the same task again. Against a server that does not
deduplicate message ids, pass `idempotent=False`: a call cut by a crash then becomes
`tool_outcome_unknown`, for an operator to settle, as any WRITE does.

The remote task's id is journaled with the call: it ends the tool's output
(`[A2A task ID]`), in the `tool_completed` event, where the model and the inspector see it.
"""

from __future__ import annotations

import asyncio
import functools
import json
import ssl
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import httpx
from a2a.client import A2AClientError, A2AClientTimeoutError, Client, ClientConfig, ClientFactory
from a2a.client.card_resolver import A2ACardResolver
from a2a.helpers import get_data_parts, get_text_parts
from a2a.types.a2a_pb2 import (
    AgentCard,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskState,
)
from a2a.utils.errors import UnsupportedOperationError
from google.protobuf.json_format import MessageToDict

from eudaimon.a2a._tasks import USAGE_KEY
from eudaimon.core.effects import Effect
from eudaimon.core.errors import ConfigurationError, EudaimonError
from eudaimon.core.messages import Usage
from eudaimon.tools import Tool, ToolContext, ToolReturn

SETTLED = frozenset(
    {
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_FAILED,
        TaskState.TASK_STATE_CANCELED,
        TaskState.TASK_STATE_REJECTED,
        TaskState.TASK_STATE_INPUT_REQUIRED,
        TaskState.TASK_STATE_AUTH_REQUIRED,
    }
)
FOLLOW_PAUSE_S = 0.5
"""How long the tool waits before it looks at a task again after its stream broke."""


class A2AToolError(EudaimonError):
    """The remote agent's task did not complete (it failed, was cancelled or rejected, or waits
    for input); the message, shown to the model as the call's error result, says which and names
    the task."""


def A2AAgent(  # named as the thing it stands for, as DESIGN §9 names it
    url: str,
    *,
    name: str | None = None,
    description: str | None = None,
    effect: Effect | str = Effect.WRITE,
    idempotent: bool = True,
    requires_approval: bool | None = None,
    headers: Mapping[str, str] | None = None,
    timeout_s: float = 60.0,
) -> Tool:
    """A remote A2A agent as a tool taking one string, `input`; its answer is the call's result.

    Args:
        url: the agent's base URL, where `/.well-known/agent-card.json` is
            (an eudaimon server: `http://host:port/a2a/AGENT`).
        name: the tool's name (default: the URL's last path segment); keep it stable, since a
            resumed run finds its tool by it.
        description: what the model reads (default: names the remote agent).
        effect: what the remote agent may do: WRITE by default (another agent may act);
            `"read"` for one that only answers, `"irreversible"` to ask a human first.
        idempotent: whether calling again after a crash is safe, because the remote side
            deduplicates message ids (see the module docstring). False: a call cut by a crash
            has an unknown outcome.
        requires_approval: None: exactly when `effect` is IRREVERSIBLE.
        headers: HTTP headers for every request (an API key); never journaled or shown.
        timeout_s: how long one HTTP request (or a quiet stream) may wait for an answer.
            A task is followed through a restart of the remote server for as long as the
            call may last (the agent's `tool_timeout_s`).
    """
    tool_name = name or _name_from(url)
    card: list[AgentCard] = []  # fetched once, on the first call

    async def ask(input: str, ctx: ToolContext) -> ToolReturn:
        timeout = httpx.Timeout(timeout_s, connect=min(timeout_s, 10.0))
        async with httpx.AsyncClient(headers=dict(headers or {}), timeout=timeout, verify=_tls()) as http:
            if not card:
                card.append(await A2ACardResolver(http, url).get_agent_card())
            client = ClientFactory(ClientConfig(httpx_client=http, streaming=True)).create(card[0])
            try:
                task = await _send_and_follow(client, input, ctx.idempotency_key, resend=idempotent)
            finally:
                await client.close()
        return _answer(task, url)

    return Tool(
        name=tool_name,
        description=description or f"Ask the remote A2A agent at {url}; it answers `input` with a task of its own.",
        parameters={
            "type": "object",
            "properties": {"input": {"type": "string", "description": "What to ask the agent."}},
            "required": ["input"],
            "additionalProperties": False,
        },
        function=ask,
        effect=Effect(effect),
        idempotent=idempotent,
        requires_approval=requires_approval,
        context_param="ctx",
        is_async=True,
    ).compiled()


@functools.cache
def _tls() -> ssl.SSLContext:
    """httpx's default TLS context, built once: building it costs tens of milliseconds, which a
    client per call would pay on every call."""
    return httpx.create_ssl_context()


def _name_from(url: str) -> str:
    segment = urlsplit(url).path.rstrip("/").rpartition("/")[2]
    cleaned = "".join(c if c.isalnum() or c in "_-" else "_" for c in segment)
    if not cleaned:
        raise ConfigurationError(f"A2AAgent({url!r}) needs name=...: its URL has no path segment to name the tool by")
    return cleaned


async def _send_and_follow(client: Client, text: str, message_id: str, *, resend: bool) -> Task:
    """Send the message (the same id on every attempt), then follow its task until it settles:
    the send's own stream usually carries it to the end; when the stream breaks or stops early,
    `GetTask` and `SubscribeToTask` take over. With `resend` (an idempotent tool: the remote
    dedupes message ids), a send the remote dropped unanswered is sent again."""
    message = Message(message_id=message_id, role=Role.ROLE_USER, parts=[Part(text=text)])
    seen = Task()
    while True:
        try:
            async for response in client.send_message(SendMessageRequest(message=message)):
                _fold(seen, response)
                if seen.status.state in SETTLED:
                    return seen
            break
        except A2AClientError as exc:
            if not _transient(exc):
                raise
            if seen.id:
                break  # the task is known: follow it
            if not resend:
                raise  # the remote may have taken the message; only a person can tell
            # The remote went before it answered, perhaps after it journaled the message: the
            # same message id again finds that task on a remote that dedupes (eudaimon does).
            await asyncio.sleep(FOLLOW_PAUSE_S)
    if not seen.id:
        raise A2AToolError("the remote agent answered without a task; nothing to follow")
    while True:
        try:
            task = await client.get_task(GetTaskRequest(id=seen.id))
            if task.status.state in SETTLED:
                return task
            async for response in client.subscribe(SubscribeToTaskRequest(id=seen.id)):
                if _settles(response):
                    break
        except UnsupportedOperationError:
            continue  # the task ended between the read and the subscription: read it again
        except A2AClientError as exc:
            if not _transient(exc):
                raise
            await asyncio.sleep(FOLLOW_PAUSE_S)  # the remote is restarting: its journal keeps the task


def _transient(exc: A2AClientError) -> bool:
    """A network failure or a timeout (the remote restarting), not an answer such as 401 or 404."""
    return isinstance(exc, A2AClientTimeoutError) or isinstance(exc.__cause__, httpx.RequestError)


def _fold(task: Task, response: StreamResponse) -> None:
    """What a stream response says about the task, into `task`."""
    if response.HasField("task"):
        task.CopyFrom(response.task)
    elif response.HasField("status_update"):
        task.id = task.id or response.status_update.task_id
        task.status.CopyFrom(response.status_update.status)
        if response.status_update.metadata:
            task.metadata.update(_plain(MessageToDict(response.status_update.metadata)))
    elif response.HasField("artifact_update"):
        task.id = task.id or response.artifact_update.task_id
        artifact = response.artifact_update.artifact
        kept = [a for a in task.artifacts if a.artifact_id != artifact.artifact_id]
        del task.artifacts[:]
        task.artifacts.extend([*kept, artifact])


def _settles(response: StreamResponse) -> bool:
    if response.HasField("task"):
        return response.task.status.state in SETTLED
    return response.HasField("status_update") and response.status_update.status.state in SETTLED


def _spent(task: Task) -> tuple[Usage | None, float | None]:
    """What the remote run spent, when the remote says (an eudaimon server does, under
    `USAGE_KEY`); other A2A agents report nothing, and nothing is added."""
    if USAGE_KEY not in task.metadata:
        return None, None
    spent = _plain(MessageToDict(task.metadata)).get(USAGE_KEY)
    if not isinstance(spent, dict):
        return None, None

    def count(key: str) -> int:
        value = spent.get(key)
        return int(value) if isinstance(value, int | float) and value >= 0 else 0

    usage = Usage(count("input_tokens"), count("output_tokens"), count("cached_tokens"))
    cost = spent.get("cost_usd")
    return usage, float(cost) if isinstance(cost, int | float) and cost >= 0 else None


def _answer(task: Task, url: str) -> ToolReturn:
    """The completed task's artifacts as text (data parts as JSON), ending with the task's id,
    with what the remote run spent."""
    if task.status.state != TaskState.TASK_STATE_COMPLETED:
        said = " ".join(get_text_parts(task.status.message.parts)) if task.status.HasField("message") else ""
        state = TaskState.Name(task.status.state).removeprefix("TASK_STATE_").lower().replace("_", "-")
        raise A2AToolError(f"the remote agent's task {task.id} at {url} is {state}" + (f": {said}" if said else ""))
    pieces: list[str] = []
    for artifact in task.artifacts:
        pieces.extend(get_text_parts(artifact.parts))
        pieces.extend(json.dumps(_plain(d), ensure_ascii=False) for d in get_data_parts(artifact.parts))
    usage, cost = _spent(task)
    return ToolReturn(output="\n".join(pieces) + f"\n\n[A2A task {task.id}]", usage=usage, cost_usd=cost)


def _plain(value: Any) -> Any:
    """A data part's value with the floats protobuf made of whole numbers turned back into ints."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
