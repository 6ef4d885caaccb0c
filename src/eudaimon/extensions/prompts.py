"""Prompt templates: system prompts with `{name}` placeholders, builders and few-shot examples.

Syntax: `{name}` (a Python identifier) is replaced by the variable's value; `{{` and `}}` are a
literal `{` and `}`; any other brace, and a placeholder without a value, stays as written, so
JSON or code in a prompt needs no escaping and a render never fails. Values are inserted as
they are: a value containing `{x}` is not expanded again.

The Agent renders its `prompt_template` once, at build, and refuses one whose
`missing_variables()` is not empty:

    system_prompt = template.render_static()
"""

from __future__ import annotations

import asyncio
import inspect
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Protocol, runtime_checkable

__all__ = [
    "DynamicContext",
    "FewShotTemplate",
    "FunctionContext",
    "PromptBuilder",
    "PromptTemplate",
]

_TOKEN = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _parse(text: str) -> tuple[tuple[str, bool], ...]:
    """The template as (literal text, False) and (variable name, True) segments, in order."""
    segments: list[tuple[str, bool]] = []
    literal: list[str] = []
    last = 0
    for match in _TOKEN.finditer(text):
        literal.append(text[last : match.start()])
        last = match.end()
        name = match.group(1)
        if name is None:
            literal.append(match.group(0)[0])  # "{{" -> "{", "}}" -> "}"
            continue
        segments.append(("".join(literal), False))
        literal = []
        segments.append((name, True))
    literal.append(text[last:])
    segments.append(("".join(literal), False))
    return tuple((s, is_var) for s, is_var in segments if is_var or s)


class PromptTemplate:
    """A prompt with `{name}` placeholders and the values set for them so far.

    Immutable: `var` returns a new template, so a base template can be shared and specialised.
    The text is parsed once, when the template is made.
    """

    __slots__ = ("_segments", "text", "variables")

    text: str
    """The template as written."""
    variables: Mapping[str, str]
    """The values set with `var` (read-only)."""

    def __init__(self, text: str, variables: Mapping[str, object] | None = None) -> None:
        self.text = text
        self.variables = MappingProxyType({k: str(v) for k, v in (variables or {}).items()})
        self._segments = _parse(text)

    def var(self, key: str, value: object) -> PromptTemplate:
        """A copy of this template with `{key}` set to `str(value)`."""
        new = PromptTemplate.__new__(PromptTemplate)
        new.text = self.text
        new.variables = MappingProxyType({**self.variables, key: str(value)})
        new._segments = self._segments
        return new

    @property
    def placeholders(self) -> tuple[str, ...]:
        """The variable names the template uses, each once, in order of first use."""
        return tuple(dict.fromkeys(s for s, is_var in self._segments if is_var))

    def missing_variables(self, provided: Iterable[str] = ()) -> tuple[str, ...]:
        """Placeholders that have no value (neither set with `var` nor in `provided`)."""
        known = set(self.variables).union(provided)
        return tuple(name for name in self.placeholders if name not in known)

    def _render(self, values: Mapping[str, str]) -> str:
        parts = []
        for s, is_var in self._segments:
            if not is_var:
                parts.append(s)
            elif s in values:
                parts.append(values[s])
            else:
                parts.append("{" + s + "}")
        return "".join(parts)

    def render_static(self) -> str:
        """The text with the values set with `var`; placeholders without one stay literal."""
        return self._render(self.variables)

    def render_with(self, overrides: Mapping[str, object]) -> str:
        """The text with the values set with `var`, `overrides` taking precedence."""
        return self._render({**self.variables, **{k: str(v) for k, v in overrides.items()}})

    async def render_dynamic(self, contexts: Iterable[DynamicContext]) -> str:
        """The text with values resolved now from `contexts` (concurrently), over those set with `var`.

        Only the contexts whose key the template uses are resolved.
        """
        used = set(self.placeholders)
        wanted = [c for c in contexts if c.key in used]
        resolved = await asyncio.gather(*(_resolve(c) for c in wanted))
        return self.render_with({c.key: value for c, value in zip(wanted, resolved, strict=True)})

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PromptTemplate):
            return NotImplemented
        return self.text == other.text and self.variables == other.variables

    def __hash__(self) -> int:
        return hash((self.text, tuple(sorted(self.variables.items()))))

    def __repr__(self) -> str:
        return f"PromptTemplate({self.text!r}, variables={dict(self.variables)!r})"


@runtime_checkable
class DynamicContext(Protocol):
    """A variable resolved when the prompt is rendered: the date, a user profile, a lookup.

    `resolve` may be `def` or `async def`.
    """

    @property
    def key(self) -> str: ...

    def resolve(self) -> str | Awaitable[str]: ...


async def _resolve(context: DynamicContext) -> str:
    value = context.resolve()
    if inspect.isawaitable(value):
        value = await value
    return str(value)


@dataclass(frozen=True, slots=True)
class FunctionContext:
    """A `DynamicContext` from a function of no arguments, sync or async."""

    key: str
    fn: Callable[[], str | Awaitable[str]]

    def resolve(self) -> str | Awaitable[str]:
        return self.fn()


@dataclass(frozen=True, slots=True)
class PromptBuilder:
    """Composes a prompt from sections: a persona, instructions, constraints, examples.

    Each method returns a new builder. Sections render in a fixed order whatever the call
    order: persona, then "Instructions:", "Constraints:" and "Examples:", each a list.
    Placeholders in the texts stay placeholders in the built template.
    """

    personas: tuple[str, ...] = ()
    instructions: tuple[str, ...] = ()
    constraints: tuple[str, ...] = ()
    examples: tuple[str, ...] = ()

    def persona(self, text: str) -> PromptBuilder:
        """Who the model is; several personas are joined into one paragraph."""
        return PromptBuilder((*self.personas, text), self.instructions, self.constraints, self.examples)

    def instruction(self, text: str) -> PromptBuilder:
        """Something the model should do."""
        return PromptBuilder(self.personas, (*self.instructions, text), self.constraints, self.examples)

    def constraint(self, text: str) -> PromptBuilder:
        """Something the model must not do, or a limit it must respect."""
        return PromptBuilder(self.personas, self.instructions, (*self.constraints, text), self.examples)

    def example(self, text: str) -> PromptBuilder:
        """An example exchange, kept verbatim (multi-line allowed)."""
        return PromptBuilder(self.personas, self.instructions, self.constraints, (*self.examples, text))

    def build(self) -> PromptTemplate:
        """The composed prompt, as a template (its `{name}` placeholders still to fill)."""
        sections: list[str] = []
        if self.personas:
            sections.append(" ".join(self.personas))
        if self.instructions:
            sections.append("Instructions:\n" + "\n".join(f"- {i}" for i in self.instructions))
        if self.constraints:
            sections.append("Constraints:\n" + "\n".join(f"- {c}" for c in self.constraints))
        if self.examples:
            sections.append("Examples:\n" + "\n\n".join(self.examples))
        return PromptTemplate("\n\n".join(sections))


@dataclass(frozen=True, slots=True)
class FewShotTemplate:
    """Example input/output pairs for in-context learning, rendered as plain text.

    Each method returns a new template.

        FewShotTemplate().example("2+2?", "4").with_prefix("Examples:").render()
        # 'Examples:\\n\\nInput: 2+2?\\nOutput: 4'
    """

    examples: tuple[tuple[str, str], ...] = ()
    prefix: str = ""
    input_label: str = "Input"
    output_label: str = "Output"

    def example(self, input: str, output: str) -> FewShotTemplate:
        """A template with one more example pair."""
        return FewShotTemplate(((*self.examples, (input, output))), self.prefix, self.input_label, self.output_label)

    def with_prefix(self, text: str) -> FewShotTemplate:
        """A template introduced by `text`."""
        return FewShotTemplate(self.examples, text, self.input_label, self.output_label)

    def with_labels(self, input_label: str, output_label: str) -> FewShotTemplate:
        """A template labelling pairs `input_label:` / `output_label:` instead of Input / Output."""
        return FewShotTemplate(self.examples, self.prefix, input_label, output_label)

    def render(self) -> str:
        """The prefix (if any), then each pair, separated by blank lines."""
        blocks = [f"{self.input_label}: {i}\n{self.output_label}: {o}" for i, o in self.examples]
        if self.prefix:
            blocks.insert(0, self.prefix)
        return "\n\n".join(blocks)
