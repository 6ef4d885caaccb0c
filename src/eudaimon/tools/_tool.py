"""Tools: typed functions a model may call, with the effect class that governs recovery.

`@tool` compiles a function's signature once into a JSON Schema (what the model sees) and a
validator (what its arguments must pass). A tool that fails, or is called wrongly, produces
an error result for the model; it never crashes the run.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, ClassVar, overload

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError, to_json

from eudaimon.core.effects import Effect, ToolTraits
from eudaimon.core.errors import ConfigurationError, EudaimonError
from eudaimon.core.messages import PART_TYPES, ContentPart, JsonObject, TextPart, ToolSpec, Usage, describe_part
from eudaimon.tools._numbers import odd_number, refuse_constant
from eudaimon.tools._schema import function_schema
from eudaimon.tools._time import check_timeout
from eudaimon.tools.context import ToolContext

Prepare = Callable[[ToolContext[Any], ToolSpec], "ToolSpec | Awaitable[ToolSpec | None] | None"]
"""`fn(ctx, spec)`: the spec to offer at this step (possibly changed), or None to withhold the tool."""


class ToolPolicy(StrEnum):
    """What an approval policy decides for one call."""

    ALLOW = "allow"
    DENY = "deny"
    REQUIRE_APPROVAL = "require_approval"


class ToolArgumentsError(EudaimonError, ValueError):
    """The model's arguments for a call were unusable (not JSON, or not what the tool's schema
    says); the message is the call's error result, shown to the model so it can correct them.
    A tool raises it (or `ModelRetry`) to reject arguments its schema cannot express."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolReturn:
    """A result that says more than its text: what a call that ran a child run spent, and
    which run that was. Returned by the tools `Agent.as_tool` and handoffs build."""

    output: str
    is_error: bool = False
    child_run_id: str | None = None
    usage: Usage | None = None
    cost_usd: float | None = None
    handoff_to: str | None = None
    """Set by a handoff: the receiving agent, whose answer ends this run."""


class ToolSuspended(Exception):
    """Raised by a tool whose call cannot finish now: the run waits, as it would for its own call.

    `wait="approval"`: a child run waits for a human; `wait="reconciliation"`: the call's
    outcome is unknown (a child run's, or a server that dropped the connection mid-call), so
    it must not simply run again.
    """

    def __init__(self, reason: str, *, wait: str, child_run_id: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.wait = wait
        self.child_run_id = child_run_id


@dataclass(frozen=True, slots=True, kw_only=True)
class Tool:
    """A callable the model can use. Build one with `@tool`, or directly with a JSON Schema."""

    name: str
    description: str
    parameters: dict[str, Any]
    function: Callable[..., Any]
    effect: Effect = Effect.WRITE
    idempotent: bool = False
    requires_approval: bool | None = None
    """None: approval is required exactly when the effect is IRREVERSIBLE."""
    args_model: type[BaseModel] | None = None
    context_param: str | None = None
    is_async: bool = False
    retryable: bool | None = None
    """Whether the agent's `tool_retry_policy` may run the tool again after it raised. None:
    only when a second run is harmless (READ, or WRITE declared idempotent). True: the tool's
    author says a call that raised did nothing, so running it again is safe. Recovery after a
    crash does not change: it still follows `effect` and `idempotent`."""
    max_retries: int = 1
    """How many `ModelRetry` corrections in a row the model gets before the tool refuses."""
    prepare: Prepare | None = None
    """Decides per step whether the tool is offered, and with which spec."""
    timeout_s: float | None = None
    """How long a call may take (None: the agent's `tool_timeout_s`). A READ or idempotent call
    that times out is an error result; a WRITE or IRREVERSIBLE one an unknown outcome."""
    datasource: str | None = None
    """The agent's datasource the tool writes to, in one transaction with its completion
    record (`ctx.db`): it commits exactly once, and recovery reads whether it did."""
    transacts_here: ClassVar[bool] = True
    """Whether a datasource tool's transaction is opened in this process; False for a tool
    that runs elsewhere (a Temporal activity), whose worker opens it."""
    approval_timeout_s: float | None = None
    """How long a human has to decide a call that needs approval (None: the agent's
    `approval_timeout_s`, else no deadline)."""
    on_approval_timeout: str | None = None
    """`"deny"` the call or `"cancel"` the run when the deadline passes (None: the agent's)."""
    _validator: Any = field(default=None, repr=False, compare=False)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.function(*args, **kwargs)

    @property
    def needs_approval(self) -> bool:
        return self.effect is Effect.IRREVERSIBLE if self.requires_approval is None else self.requires_approval

    @property
    def retries_on_error(self) -> bool:
        """Whether `tool_retry_policy` applies to this tool (see `retryable`)."""
        return self.traits.rerunnable if self.retryable is None else self.retryable

    @property
    def traits(self) -> ToolTraits:
        return ToolTraits(self.effect, self.idempotent, self.datasource is not None)

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.parameters)

    def compiled(self) -> Tool:
        """This tool with its JSON Schema validator built; done once, when the Agent is built.

        A tool compiled from a signature validates with its pydantic model, which holds the
        same schema; only a tool given a bare JSON Schema needs a schema validator.
        """
        if self.timeout_s is not None and not self.timeout_s > 0:
            raise ConfigurationError(f"tool {self.name!r}: timeout_s must be a positive number of seconds")
        if self.args_model is not None or self._validator is not None:
            return self
        import jsonschema  # only tools given a bare JSON Schema (MCP's, hand-written) need it

        cls = jsonschema.validators.validator_for(self.parameters)
        try:
            cls.check_schema(self.parameters)
        except jsonschema.SchemaError as exc:
            raise ConfigurationError(f"tool {self.name!r} has an invalid JSON Schema: {exc.message}") from exc
        return replace(self, _validator=cls(self.parameters))

    def decode_arguments(self, raw: JsonObject | str) -> dict[str, Any]:
        """A call's arguments as a JSON object: the model's raw text decoded (a key given twice
        refused), an object as it is. `ToolArgumentsError` when they are not a JSON object."""
        return decode_arguments(raw, self.name)

    def parse_arguments(self, raw: JsonObject | str, *, validate: bool = True) -> dict[str, Any]:
        """The keyword arguments a call's raw arguments stand for, decoded and validated.

        Validation follows JSON Schema's meaning (strict JSON types: `"2"` is not an integer);
        with `validate=False` pydantic coerces what it can. `ToolArgumentsError` says what is
        wrong, in words the model can act on.
        """
        if self.args_model is not None:
            bound = self._bind(raw, validate)
            _refuse_odd_numbers(bound, self.name)  # an integer typed `float` may have become `inf`
            return bound
        arguments = decode_arguments(raw, self.name)
        if validate and self._validator is not None:
            try:
                errors = sorted(self._validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
            except RecursionError:
                raise ToolArgumentsError(
                    f"the arguments are nested too deeply to check; send a flatter JSON object for {self.name!r}"
                ) from None
            if errors:
                detail = "; ".join(
                    f"{'.'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in errors[:5]
                )
                raise ToolArgumentsError(f"the arguments do not match the schema of {self.name!r}: {detail}")
        return arguments

    async def invoke(self, arguments: Mapping[str, Any], ctx: ToolContext[Any]) -> str:
        """Run the function on `parse_arguments`' result and render its result as text."""
        output = (await self.execute(arguments, ctx))[0]
        return output.output if isinstance(output, ToolReturn) else output

    async def execute(
        self, arguments: Mapping[str, Any], ctx: ToolContext[Any]
    ) -> tuple[str | ToolReturn, tuple[ContentPart, ...]]:
        """Run the function; its result as text (a `ToolReturn` as it is), and the images or
        documents it returned.

        Sync functions run in a worker thread, so a blocking tool does not stall other runs.
        """
        kwargs = dict(arguments)
        if self.context_param is not None:
            kwargs[self.context_param] = ctx
        if self.is_async:
            result = await self.function(**kwargs)
        else:
            result = await asyncio.to_thread(self.function, **kwargs)
            if isinstance(result, Awaitable):
                result = await result
        if isinstance(result, ToolReturn):
            return result, ()
        return render_output(result)

    def _bind(self, raw: JsonObject | str, strict: bool) -> dict[str, Any]:
        assert self.args_model is not None
        try:
            if strict:
                # JSON mode, strict: the types mean what the published JSON Schema says.
                if isinstance(raw, str):
                    decode_arguments(raw, self.name)  # refuses what pydantic would read loosely: repeated keys
                    text: str | bytes = raw
                else:
                    text = _json_text(decode_arguments(raw, self.name))
                parsed = self.args_model.model_validate_json(text or "{}", strict=True)
            else:
                parsed = self.args_model.model_validate(decode_arguments(raw, self.name))
        except ValidationError as exc:
            raise ToolArgumentsError(_describe_errors(self.name, exc)) from None
        except ToolArgumentsError:
            raise
        except (RecursionError, ValueError, TypeError) as exc:  # arguments too deep, or not JSON at all
            raise ToolArgumentsError(
                f"the arguments cannot be read ({type(exc).__name__}: nested too deeply or not JSON); "
                f"send a flatter JSON object for {self.name!r}"
            ) from None
        return dict(parsed.__dict__)


def _json_text(arguments: JsonObject) -> str | bytes:
    """Decoded arguments as JSON again, for validation in JSON mode. pydantic's encoder is a
    fraction of `json.dumps`' cost; what it refuses (a lone surrogate, a value JSON cannot
    hold) goes through `json.dumps` as it always did."""
    try:
        return to_json(arguments)
    except PydanticSerializationError:
        return json.dumps(arguments)


class _RepeatedKey(ValueError):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object, refusing a key given twice: `{"amount": 1, "amount": 1000000}` must not
    mean whichever came last (what was shown for approval may be the first)."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        keys = [key for key, _ in pairs]
        repeated = next(key for index, key in enumerate(keys) if key in keys[:index])
        raise _RepeatedKey(f"the key {repeated!r} appears more than once")
    return obj


def decode_arguments(raw: JsonObject | str, tool_name: str) -> dict[str, Any]:
    """The arguments a tool gets from a model's text, or `ToolArgumentsError` saying why none:
    strict JSON (no repeated key, no NaN), an object, numbers a tool can take. Anything that
    shows a model's arguments to a person decodes them this way, so it shows what would run."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw, object_pairs_hook=_unique_keys, parse_constant=refuse_constant) if raw.strip() else {}
        except RecursionError:
            raise ToolArgumentsError(
                f"the arguments are nested too deeply to read; send a flatter JSON object for {tool_name!r}"
            ) from None
        except ValueError as exc:
            raise ToolArgumentsError(
                f"the arguments are not valid JSON ({exc}); send a JSON object matching the schema of {tool_name!r}"
            ) from exc
    if not isinstance(raw, dict):
        raise ToolArgumentsError(f"the arguments must be a JSON object, got {type(raw).__name__}")
    _refuse_odd_numbers(raw, tool_name)
    return raw


def _refuse_odd_numbers(arguments: object, tool_name: str) -> None:
    problem = odd_number(arguments)
    if problem is not None:
        raise ToolArgumentsError(
            f"the arguments of {tool_name!r} hold a number no tool accepts ({problem}); "
            "send finite numbers, and integers within 64 bits"
        )


def _describe_errors(tool_name: str, exc: ValidationError) -> str:
    errors = exc.errors(include_url=False)
    if errors and errors[0]["type"] == "json_invalid":
        return (
            f"the arguments are not valid JSON ({errors[0]['msg']}); "
            f"send a JSON object matching the schema of {tool_name!r}"
        )
    detail = "; ".join(
        f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']} (got {e['input']!r})" for e in errors[:5]
    )
    return f"the arguments do not match the schema of {tool_name!r}: {detail}"


def render_output(result: Any) -> tuple[str, tuple[ContentPart, ...]]:
    """A tool's result as the text the model reads, and its content parts (when it returned
    `ImagePart`s or `DocumentPart`s, alone or in a list with text): the text then names each
    part, so a reader of the text alone still knows what was there."""
    if isinstance(result, str):
        return result, ()
    if isinstance(result, list | tuple):
        items = result
        if not any(isinstance(item, PART_TYPES) for item in items):
            return render_result(result), ()
    elif isinstance(result, PART_TYPES):
        items = [result]
    else:
        return render_result(result), ()
    parts: list[ContentPart] = []
    for item in items:
        if isinstance(item, PART_TYPES):
            parts.append(item)
        else:
            parts.append(TextPart(text=render_result(item)))
    if all(isinstance(p, TextPart) for p in parts):
        return "\n".join(describe_part(p) for p in parts), ()
    return "\n".join(describe_part(p) for p in parts), tuple(parts)


def render_result(result: Any) -> str:
    """Tool results reach the model as text: strings as they are, everything else as JSON."""
    if isinstance(result, str):
        return result
    if isinstance(result, BaseModel):
        return result.model_dump_json()
    return _RESULTS.encode(result)


def _json_default(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    return str(value)


_RESULTS = json.JSONEncoder(default=_json_default, ensure_ascii=False)
"""Made once: `json.dumps` with options builds an encoder every call."""


@overload
def tool(fn: Callable[..., Any], /) -> Tool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    effect: Effect | str = Effect.WRITE,
    idempotent: bool = False,
    requires_approval: bool | None = None,
    retryable: bool | None = None,
    max_retries: int = 1,
    prepare: Prepare | None = None,
    timeout_s: float | None = None,
    datasource: str | None = None,
    approval_timeout_s: float | None = None,
    on_approval_timeout: str | None = None,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    effect: Effect | str = Effect.WRITE,
    idempotent: bool = False,
    requires_approval: bool | None = None,
    retryable: bool | None = None,
    max_retries: int = 1,
    prepare: Prepare | None = None,
    timeout_s: float | None = None,
    datasource: str | None = None,
    approval_timeout_s: float | None = None,
    on_approval_timeout: str | None = None,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Turn a typed function (sync or async) into a `Tool`.

    The description is the docstring's summary; parameter descriptions come from its `Args:`
    section. A parameter annotated `ToolContext` (or `ToolContext[Deps]`) receives the call's
    context, with the run's `deps`; it is not part of the schema. The default effect is
    `WRITE`: declare `effect="read"` or `idempotent=True` when running the tool twice is
    harmless, so that recovery may re-run it.

    Args:
        name: the name the model calls it by (default: the function's name).
        description: what the model is told it does (default: the docstring's summary).
        effect: `"read"`, `"write"` or `"irreversible"` (see `Effect`).
        idempotent: a WRITE that is safe to run twice with the same idempotency key.
        requires_approval: True or False overrides the default (IRREVERSIBLE needs approval).
        retryable: Whether the agent's `tool_retry_policy` may run the tool again after it
            raised. By default only READ and idempotent tools are retried; `retryable=True`
            opts a WRITE tool in (its failures leave nothing behind), `False` opts any tool out.
        max_retries: corrections in a row the tool may ask for by raising `ModelRetry`; the
            next one is answered with an error result saying the budget is spent.
        prepare: `fn(ctx, spec)` (sync or async), asked before every model call: returns the
            `ToolSpec` to offer (possibly with another description or schema) or None to
            leave the tool out of that step. What was offered is journaled per step.
        timeout_s: how long a call may take (None: the agent's `tool_timeout_s`). A READ or
            idempotent call that outlives it is an error result, a WRITE or IRREVERSIBLE one an
            unknown outcome awaiting reconciliation (it may have acted).
        datasource: the name of one of the agent's `datasources`: the tool gets `ctx.db`, a
            connection inside a transaction that eudaimon commits with the call's completion
            record. Its writes land exactly once: a crash never leaves the call in doubt, as
            recovery reads whether it committed. The effect stays WRITE.
        approval_timeout_s: how long a human has to decide a call that needs approval; when it
            passes with no decision the call is denied (the model reads "no decision within …")
            or the run cancelled, per `on_approval_timeout` (None: the agent's settings).
        on_approval_timeout: `"deny"` or `"cancel"` (None: the agent's, by default `"deny"`).
    """

    def build(func: Callable[..., Any]) -> Tool:
        try:
            effect_value = Effect(effect)
        except ValueError:
            raise ConfigurationError(f"unknown effect {effect!r}; use 'read', 'write' or 'irreversible'") from None
        if max_retries < 0:
            raise ConfigurationError(f"tool {func.__name__!r}: max_retries must be 0 or more, got {max_retries}")
        if datasource is not None and effect_value is not Effect.WRITE:
            raise ConfigurationError(
                f"tool {func.__name__!r}: a datasource tool's effect is 'write' (its transaction commits once), "
                f"not {effect_value.value!r}"
            )
        check_timeout(approval_timeout_s, on_approval_timeout or "deny", f"tool {func.__name__!r}")
        schema = function_schema(func)
        return Tool(
            name=name or func.__name__,
            description=description if description is not None else schema.description,
            parameters=schema.parameters,
            function=func,
            effect=effect_value,
            idempotent=idempotent,
            requires_approval=requires_approval,
            args_model=schema.args_model,
            context_param=schema.context_param,
            is_async=schema.is_async,
            retryable=retryable,
            max_retries=max_retries,
            prepare=prepare,
            timeout_s=timeout_s,
            datasource=datasource,
            approval_timeout_s=approval_timeout_s,
            on_approval_timeout=on_approval_timeout,
        )

    return build(fn) if fn is not None else build


def as_tool(item: Tool | Callable[..., Any]) -> Tool:
    return item if isinstance(item, Tool) else tool(item)
