"""Arguments an approver edited: checked against the tool's schema, then judged by the approval
policy, before they are journaled.

An approver may correct a call before it runs (a smaller amount, another account). What they
send must be what the tool accepts, or the run would go on to an error the approver never saw:
so the edit is refused, naming the problem, and nothing is written. The schema is the agent's
tool when the caller has the agent; otherwise the one the journal recorded (a toolset's tool,
or the specs a step offered). Where neither is known the edit is only checked to be a JSON
object; the runtime validates it again before the call runs, as it does every call.

An edit is a new call: an approver who may approve a $500 refund must not turn it into a $50,000
one the policy would never let through. So the agent's approval policy judges the edited call
(`judged_edit`): DENY refuses the approval, with nothing written and the call still waiting;
ALLOW or REQUIRE_APPROVAL let the human's approval stand (a human is deciding already).
"""

from __future__ import annotations

import inspect
import json
from typing import TYPE_CHECKING, Any

from eudaimon.core.errors import EditDenied, InvalidArguments
from eudaimon.core.messages import JsonObject, ToolCall
from eudaimon.core.state import RunState
from eudaimon.tools import RequireApproval, Tool, ToolArgumentsError, ToolPolicy
from eudaimon.tools._numbers import odd_number

if TYPE_CHECKING:
    from eudaimon.runtime.loop.config import ApprovalPolicy


def checked_edit(state: RunState, call_id: str, arguments: object, tool: Tool | None = None) -> JsonObject:
    """`arguments` as journaled for `approval_decided`, or `InvalidArguments` saying why not."""
    progress = state.calls.get(call_id)
    name = progress.call.name if progress is not None else "?"
    where = f"the edited arguments of call {call_id!r} ({name})"
    if not isinstance(arguments, dict) or not all(isinstance(key, str) for key in arguments):
        raise InvalidArguments(f"{where} must be a JSON object, got {type(arguments).__name__}")
    problem = odd_number(arguments)
    if problem is not None:
        raise InvalidArguments(
            f"{where} hold a number no tool accepts ({problem}); send finite numbers, and integers within 64 bits"
        )
    try:
        json.dumps(arguments, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidArguments(f"{where} are not JSON ({exc})") from None
    checker = tool if tool is not None and tool.name == name else _journaled_tool(state, name)
    if checker is not None:
        try:
            checker.parse_arguments(arguments, validate=True)
        except ToolArgumentsError as exc:
            raise InvalidArguments(f"{where} were refused: {exc}") from None
    return arguments


async def judged_edit(
    state: RunState, call_id: str, arguments: JsonObject, tool: Tool | None, policy: ApprovalPolicy | None
) -> None:
    """Refuse (`EditDenied`, with the policy's word) an edit the approval policy denies.

    The policy sees the edited call as it would see the model's: its arguments decoded and
    validated (`checked_edit` first). A policy that raises does not refuse: a human is deciding.
    """
    checked = checked_edit(state, call_id, arguments, tool)
    progress = state.calls.get(call_id)
    if policy is None or tool is None or progress is None:
        return
    call = ToolCall(call_id, progress.call.name, tool.decode_arguments(checked))
    try:
        verdict = policy(call, tool)
        if inspect.isawaitable(verdict):
            verdict = await verdict
        # A deadline-bearing RequireApproval is a REQUIRE_APPROVAL: the human's approval stands.
        judged = ToolPolicy.REQUIRE_APPROVAL if isinstance(verdict, RequireApproval) else ToolPolicy(verdict)
    except Exception:  # a policy's bug: the human's approval stands, as for any call it cannot judge
        return
    if judged is ToolPolicy.DENY:
        shown = json.dumps(checked, ensure_ascii=False)
        raise EditDenied(
            f"the approval policy denies call {call_id!r} ({call.name}) with the edited arguments {shown[:500]}; "
            "nothing was recorded and the call still waits: approve it as asked, edit it within the policy, or deny it"
        )


def _journaled_tool(state: RunState, name: str) -> Tool | None:
    """A stand-in for the tool `name` built from the schema the journal holds, if any."""
    schema: dict[str, Any] | None = None
    for spec in state.offered_tools or ():
        if spec.name == name:
            schema = dict(spec.parameters)
    for record in state.tools:
        if record.name == name:
            schema = dict(record.parameters)
    if not schema:
        return None
    return Tool(name=name, description="", parameters=schema, function=_never).compiled()


def _never(**_: Any) -> None:  # pragma: no cover - a stand-in validates, it never runs
    raise AssertionError("a schema stand-in never runs")
