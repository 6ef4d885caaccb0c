"""What crosses between the workflow and its activities, and how big content stays out of it.

Temporal keeps every activity's input and result in the workflow's history, and refuses a
payload over about 2 MB. So nothing here carries a run's history: a model request names the
run's messages by position in the journal (the activity folds them from the store), and any
string longer than `inline_limit` (a huge tool output, a long answer, a long message loaded
from memory, an image a tool returned) is stashed in the store and travels as a reference,
`\\x00eudaimon:blob:<key>` — or, for binary content (`"data"`, base64 in JSON), the base64 of
that reference, so that the workflow can hold it as bytes. The journal append resolves
references before writing, so the journal only ever holds content. Stashed content is kept
under a key of its run's, and deleted when the run's workflow has finished (`unstash`).
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import functools
import hashlib
import json
import typing
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from pydantic import TypeAdapter

from eudaimon.core.messages import ContentPart, Message
from eudaimon.models.base import ChatResponse
from eudaimon.runtime.loop.datasource_calls import Committed
from eudaimon.tools import ToolReturn

INLINE_LIMIT = 16 * 1024
"""Strings longer than this (in characters) travel as store references: what grows with the
conversation (a long document in the history, a tool's big result) stays in the store, and
Temporal's history holds references to it."""
PAYLOAD_BUDGET = 1 << 20
"""Bytes of JSON an activity's result may carry: half of Temporal's 2 MB limit. Strings each
under `inline_limit` can add up past it (a run that starts with a dozen long messages)."""
FINE_LIMIT = 1024
"""The inline limit a result over `PAYLOAD_BUDGET` is made again with."""

CONTINUED = "continued"
"""What the `settled` Update answers when the run goes on in a new execution: ask that one."""
CONTINUING = "Continuing"
"""The type of a decision refused while the run moves to a new execution: send it again."""
WORKFLOW_FAILED = "WorkflowFailed"
"""The type of the error `settled` answers with when the execution fails."""
CARRIED_REFUSED = "CarriedBatchRefused"
"""The type of the error an activity answers when the journal refused the batch it carried
(something outside appended to the run): the effect did not run; the workflow reloads."""
DATASOURCE_UNREACHED = "DatasourceUnreachable"
"""The type of the (retried) error a datasource tool's activity answers when the datasource
failed eudaimon's own statements: once Temporal's attempts are spent, the workflow looks the
call up and runs it again (`OutcomeLost`); the model is never shown it."""
APPEND_FAILED = "AppendFailed"
"""The type of the error a model activity answers when the batch it carried could not be
appended (the store did not answer): the workflow appends it on its own, then calls again."""

_MARK = "\x00eudaimon:blob:"
_B64_MARK = base64.b64encode(_MARK.encode()).decode()
"""A reference as binary content: `_MARK` is 15 bytes, so its base64 is a fixed prefix."""


@dataclass(frozen=True, slots=True)
class LoadInput:
    run_id: str
    inline_limit: int = INLINE_LIMIT
    from_snapshot: bool = False
    """Return the run's latest snapshot and the events after it, not every event."""


@dataclass(frozen=True, slots=True)
class AppendInput:
    run_id: str
    expected_seq: int
    events: list[str]
    """Each event as its journal JSON, possibly holding blob references."""
    snapshot_every: int = 0
    """Save the run's state with the batch when it crosses a multiple of this (0: never)."""


@dataclass(frozen=True, slots=True)
class UnstashInput:
    run_id: str
    keys: list[str]


@dataclass(frozen=True, slots=True)
class ModelInput:
    run_id: str
    seq: int
    """The request's history is the run's messages after event `seq`."""
    messages: list[Any]
    """`[start, end]` ranges of the run's messages, or a message (JSON) that is not one of them."""
    tools: list[Any] | None = None
    """None: the agent's own tool specs; else the specs sent (middleware changed them)."""
    temperature: float | None = None
    max_tokens: int | None = None
    inline_limit: int = INLINE_LIMIT
    journal: AppendInput | None = None
    """The batch recording this attempt (`model_attempt_started`), appended by the activity
    before it calls the model: the attempt is durable before the call, in one round trip."""


@dataclass(frozen=True, slots=True)
class ToolInput:
    run_id: str
    call_id: str
    tool: str
    arguments: dict[str, Any]
    idempotency_key: str
    attempt: int
    inline_limit: int = INLINE_LIMIT
    step: int = 0
    deps: SentDeps | None = None
    """The deps the run was prompted with, when they could travel (`_deps`)."""
    journal: AppendInput | None = None
    """The batch recording this call's intent (`tool_started`), appended by the activity
    before it runs the tool: the intent is durable before the effect, in one round trip."""


@dataclass(frozen=True, slots=True)
class SentDeps:
    """A run's deps on their way to the workers: JSON when they could travel, else only the
    name of their type (they stayed in the process that prompted)."""

    type_name: str
    value: Any = None
    """`to_jsonable_python(deps)`; None when `kept`."""
    kept: bool = False
    """The deps could not be serialized: the workers' own deps stand in for them."""
    plain: bool = True
    """`value` is the deps themselves (plain JSON), not the JSON form of a richer object."""


@dataclass(frozen=True, slots=True)
class DecisionInput:
    """A human's decision, sent as an Update: an approval, or a reconciliation."""

    call_id: str
    approved: bool | None = None
    output: str | None = None
    retry: bool = False
    by: str | None = None
    note: str | None = None
    arguments: dict[str, Any] | None = None
    """An approver's edit of the call's arguments, checked by the sender against the schema."""


@dataclass(frozen=True, slots=True)
class CancelInput:
    """A request to cancel the run, sent as an Update: why and who, for its `run_cancelled`."""

    reason: str
    by: str | None = None


@dataclass(frozen=True, slots=True)
class RunInput:
    run_id: str
    agent: str
    """The agent's name: the worker maps it to the module that builds it."""
    inline_limit: int = INLINE_LIMIT
    tool_timeout_s: float = 3600.0
    model_timeout_s: float = 600.0
    heartbeat_timeout_s: float = 30.0
    read_attempts: int = 5
    """Attempts Temporal gives a READ or idempotent tool's activity (same idempotency key)."""
    extra: dict[str, Any] = field(default_factory=dict)
    deps: SentDeps | None = None
    continue_after_events: int = 0
    """Continue as new once the workflow's history holds this many events (0: only when
    Temporal suggests it)."""
    generation: int = 0
    """How many times this run's workflow has continued as new."""
    journal: list[str] | None = None
    """A new run's journal (its `run_started`, as journal JSON) when it is small enough to
    travel: the first execution then needs no `eudaimon.load` activity."""
    local_appends: bool = False
    """Append batches no effect's activity carries (the run's last, a decision's) with a local
    activity: no round trip through the Temporal server (`_seams.JournalStore`). Set by the
    engine for runs it starts; a history recorded before it has no such field and replays
    with the `eudaimon.append` activity it scheduled."""
    local_reads: bool = False
    """Run READ tools as local activities, inside the workflow task that schedules them: no
    round trip through the Temporal server, and one marker in the history where an activity
    and the workflow task it ends take six events (`_seams.activity_tools`). Set by the engine
    for runs it starts; a history recorded before it has no such field and replays with the
    `eudaimon.tool` activity it scheduled."""
    patched: bool = False
    """The run started under a release that has every patch of the workflow's run before it
    (`workflow.patched` in `_workflow`): each is taken without asking Temporal, which would
    record a marker and a search-attribute upsert for it, two history events a run. Set by
    the engine for runs it starts; a history recorded before it has no such field and
    replays asking, as it was recorded. It covers the patches of the release that added it
    (those `_workflow._patched`, `_timers`, `_change` and `_children` take it for) and no
    later one: a patch added after it must ask `workflow.patched` itself, or a run started
    under this release would take the new path on replay without its marker."""


MESSAGE: TypeAdapter[Message] = TypeAdapter(Message)
RESPONSE: TypeAdapter[ChatResponse] = TypeAdapter(ChatResponse)
PARTS: TypeAdapter[list[ContentPart]] = TypeAdapter(list[ContentPart])
RETURNED: TypeAdapter[ToolReturn] = TypeAdapter(ToolReturn)

ToolResultPayload = str | dict[str, Any]
"""What the tool activity returns: the output text alone (what most tools give), or
`{"output", "parts"}` (images or documents beside it), or `{"returned": ToolReturn}`, or
`{"retry_after": {"seconds", "reason"}}` (the tool raised `RetryAfter`: `_timers.wait_result`)."""


def encode_tool_result(output: str | ToolReturn, parts: tuple[Any, ...]) -> ToolResultPayload:
    if isinstance(output, Committed):
        # A datasource call: `is_error` and `recovered` only when set, so a plain commit's
        # result is what it always was (recorded histories replay).
        said: dict[str, Any] = {"output": output.output, "parts": PARTS.dump_python(list(parts), mode="json")}
        said.update({k: True for k in ("is_error", "recovered") if getattr(output, k)})
        return said if len(said) > 2 else encode_tool_result(output.output, parts)
    if isinstance(output, ToolReturn):
        return {"returned": RETURNED.dump_python(output, mode="json")}
    if parts:
        return {"output": output, "parts": PARTS.dump_python(list(parts), mode="json")}
    return output


def decode_tool_result(result: Any) -> tuple[str | ToolReturn, tuple[Any, ...]]:
    """A tool activity's result as `Tool.execute` gives it. A plain string is also what
    workers before content parts returned, so recorded histories still replay."""
    if isinstance(result, str):
        return result, ()
    if isinstance(result, dict) and "returned" in result:
        return RETURNED.validate_python(result["returned"]), ()
    if isinstance(result, dict) and isinstance(result.get("output"), str):
        parts = tuple(PARTS.validate_python(result.get("parts") or []))
        if result.get("is_error") or result.get("recovered"):
            said = Committed(
                output=result["output"], is_error=bool(result.get("is_error")), recovered=bool(result.get("recovered"))
            )
            return said, parts
        return result["output"], parts
    raise ValueError(f"a tool activity returned {type(result).__name__}, not a tool result")


def is_ref(text: str) -> bool:
    return text.startswith((_MARK, _B64_MARK))


def run_prefix(run_id: str) -> str:
    """The stash keys of one run start with this. A stashed blob is kept as the snapshot of a
    pseudo-run of its own (`run:<run id>~blob~<digest>`): the one snapshot `EventStore`'s
    protocol deletes by key is a run's, with `delete_run`, so that is how it is unstashed."""
    return f"{run_id}~blob~"


def blob_key(run_id: str, text: str) -> str:
    """Content-addressed within the run: stashing the same text twice (a retried activity)
    writes one blob, and one run's stash is never another's."""
    return "run:" + run_prefix(run_id) + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def ref_for(key: str, binary: bool = False) -> str:
    ref = _MARK + key
    return base64.b64encode(ref.encode()).decode() if binary else ref


def key_of(ref: str) -> str:
    if ref.startswith(_MARK):
        return ref[len(_MARK) :]
    try:
        return base64.b64decode(ref, validate=True).decode()[len(_MARK) :]
    except (binascii.Error, UnicodeDecodeError) as exc:
        raise ValueError(f"a malformed stash reference: {ref[:60]!r}") from exc


def to_refs(value: Any, limit: int, blobs: dict[str, str], run_id: str, binary: bool = False) -> Any:
    """`value` (JSON) with every string longer than `limit` replaced by a reference; the
    content goes into `blobs` by key, for the caller to stash in the store. A `"data"` field
    is binary content in base64: its reference is base64 too, so it still decodes to bytes."""
    if isinstance(value, str):
        if len(value) <= limit or is_ref(value):
            return value
        key = blob_key(run_id, value)
        blobs[key] = value
        return ref_for(key, binary)
    if isinstance(value, dict):
        return {k: to_refs(v, limit, blobs, run_id, k == "data") for k, v in value.items()}
    if isinstance(value, list):
        return [to_refs(v, limit, blobs, run_id) for v in value]
    return value


def resolve(value: Any, blobs: dict[str, str]) -> Any:
    """`value` (JSON) with every reference replaced by the content `blobs` holds for it."""
    if isinstance(value, str):
        return blobs[key_of(value)] if is_ref(value) else value
    if isinstance(value, dict):
        return {k: resolve(v, blobs) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, blobs) for v in value]
    return value


def may_hold_refs(text: str) -> bool:
    """Whether a JSON text may name stashed content (cheaper than parsing it to find out)."""
    return "eudaimon:blob:" in text or _B64_MARK in text


def refs_in(value: Any, found: set[str] | None = None) -> set[str]:
    """The blob keys a JSON value refers to."""
    found = set() if found is None else found
    if isinstance(value, str):
        if is_ref(value):
            found.add(key_of(value))
    elif isinstance(value, dict):
        for item in value.values():
            refs_in(item, found)
    elif isinstance(value, list):
        for item in value:
            refs_in(item, found)
    return found


def message_ranges(messages: Sequence[Message], journal: Sequence[Message]) -> list[Any]:
    """Name each request message by its position in the run's messages when it is one of them
    (the same object, or else an equal copy: a middleware that rebuilds the list copies them),
    else carry it whole: middleware may have added or rewritten some. Without the copies, a
    middleware that copies would carry the whole conversation in every model call's input,
    and the history would grow with the call's position again."""
    encoded: list[Any] = []
    position = 0
    for message in messages:
        found = _position(message, journal, position)
        if found < 0:
            encoded.append(MESSAGE.dump_python(message, mode="json"))
            continue
        last = encoded[-1] if encoded else None
        if isinstance(last, list) and last[1] == found:
            last[1] = found + 1
        else:
            encoded.append([found, found + 1])
        position = found + 1
    return encoded


def _position(message: Message, journal: Sequence[Message], start: int) -> int:
    """Where `message` is among the run's messages from `start` on: the same object first, an
    equal one else; -1 when neither. (Role and length are compared before the whole message,
    so that a list of rewritten messages costs little more to search than before.)"""
    for index in range(start, len(journal)):
        if journal[index] is message:
            return index
    role, size = message.role, len(message.content)
    for index in range(start, len(journal)):
        other = journal[index]
        if other.role == role and len(other.content) == size and other == message:
            return index
    return -1


def json_bytes(value: Any) -> int:
    """How many bytes `value` takes as the JSON a payload carries."""
    return len(dumps(value).encode())


def dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


_D = TypeVar("_D")


def received(cls: type[_D], value: Any) -> _D:
    """An activity's input as `cls`, from the JSON object it arrived as.

    Activities take their input as a plain dict and build it here: Temporal's converter
    resolves a dataclass's type hints (`typing.get_type_hints`) on every payload it decodes,
    a tenth of a fleet worker's CPU; these are resolved once per class. A key `cls` does not
    know is ignored, as the converter does (an input sent by a newer release)."""
    if isinstance(value, cls):
        return value
    nested: dict[str, Any] = _nested(cast(Hashable, cls))
    kwargs = {k: _built(nested[k], v) for k, v in value.items() if k in nested}
    return cls(**kwargs)


def _built(cls: type | None, value: Any) -> Any:
    return received(cls, value) if cls is not None and value is not None else value


@functools.cache
def _nested(cls: Hashable) -> dict[str, type | None]:
    """Each field of the dataclass `cls`, with the dataclass its value holds (if any)."""
    hints = typing.get_type_hints(cls)
    out: dict[str, type | None] = {}
    for f in dataclasses.fields(cast(Any, cls)):
        hint = hints[f.name]
        found = [t for t in (hint, *typing.get_args(hint)) if isinstance(t, type) and dataclasses.is_dataclass(t)]
        out[f.name] = found[0] if found else None
    return out
