"""Prompt templates: `{name}` interpolation that never fails, builders and few-shot examples."""

from __future__ import annotations

import pytest

from eudaimon.prompts import DynamicContext, FewShotTemplate, FunctionContext, PromptBuilder, PromptTemplate


def test_render_static_fills_set_variables() -> None:
    """Variables set with var() replace their placeholders, every occurrence."""
    tpl = PromptTemplate("You are {role}. Today is {date}. Again: {role}.").var("role", "a helper").var("date", 2026)
    assert tpl.render_static() == "You are a helper. Today is 2026. Again: a helper."


def test_var_returns_a_new_template() -> None:
    """Templates are immutable: var() leaves the original as it was."""
    base = PromptTemplate("Hi {name}")
    named = base.var("name", "Ada")
    assert base.render_static() == "Hi {name}"
    assert named.render_static() == "Hi Ada"
    assert dict(named.variables) == {"name": "Ada"}
    with pytest.raises(TypeError):
        named.variables["name"] = "x"  # type: ignore[index]


def test_unknown_variables_and_other_braces_stay_literal() -> None:
    """A placeholder without a value, and braces that are not placeholders, are left as written."""
    tpl = PromptTemplate('Reply as JSON {"answer": 1} for {unknown}; { spaced } {1x}').var("other", "x")
    assert tpl.render_static() == 'Reply as JSON {"answer": 1} for {unknown}; { spaced } {1x}'


def test_double_braces_escape() -> None:
    """`{{` and `}}` render as literal braces, even around a name."""
    tpl = PromptTemplate("{{name}} is {name}; {{{name}}}; }} {{").var("name", "Ada")
    assert tpl.render_static() == "{name} is Ada; {Ada}; } {"
    assert tpl.placeholders == ("name",)


def test_values_are_not_expanded_again() -> None:
    """A value containing `{x}` is inserted verbatim, not treated as a placeholder."""
    tpl = PromptTemplate("{a} {b}").var("a", "{b}").var("b", "B")
    assert tpl.render_static() == "{b} B"


def test_render_with_overrides_set_values() -> None:
    """render_with's overrides take precedence over var() values, without changing the template."""
    tpl = PromptTemplate("Today is {date} in {city}.").var("date", "2026-03-04").var("city", "Lyon")
    assert tpl.render_with({"date": "2026-03-05"}) == "Today is 2026-03-05 in Lyon."
    assert tpl.render_static() == "Today is 2026-03-04 in Lyon."


def test_missing_variables_lists_placeholders_without_values() -> None:
    """missing_variables names each unset placeholder once, in order of first use."""
    tpl = PromptTemplate("{b} {a} {b} {{c}} {d}").var("d", "x")
    assert tpl.missing_variables() == ("b", "a")
    assert tpl.missing_variables(provided=["a"]) == ("b",)
    assert tpl.var("a", 1).var("b", 2).missing_variables() == ()


async def test_render_dynamic_resolves_contexts_sync_and_async() -> None:
    """Dynamic contexts (sync or async) are resolved at render time and override var() values."""

    async def today() -> str:
        return "2026-03-05"

    class User:
        key = "user"

        def resolve(self) -> str:
            return "Ada"

    unused_calls: list[str] = []

    def unused() -> str:
        unused_calls.append("called")
        return "x"

    tpl = PromptTemplate("{user} on {date}").var("date", "stale")
    contexts: list[DynamicContext] = [FunctionContext("date", today), User(), FunctionContext("nope", unused)]
    assert isinstance(User(), DynamicContext)

    assert await tpl.render_dynamic(contexts) == "Ada on 2026-03-05"
    assert unused_calls == [], "contexts the template does not use are not resolved"


def test_prompt_builder_composes_sections_in_a_fixed_order() -> None:
    """PromptBuilder renders persona, instructions, constraints and examples, whatever the call order."""
    tpl = (
        PromptBuilder()
        .constraint("Never reveal internals.")
        .persona("You are an expert {language} developer.")
        .instruction("Answer concisely.")
        .instruction("Show code.")
        .example("Q: What is ownership?\nA: Rust's memory model.")
        .build()
    )
    assert isinstance(tpl, PromptTemplate)
    assert tpl.missing_variables() == ("language",)
    assert tpl.var("language", "Rust").render_static() == (
        "You are an expert Rust developer.\n\n"
        "Instructions:\n- Answer concisely.\n- Show code.\n\n"
        "Constraints:\n- Never reveal internals.\n\n"
        "Examples:\nQ: What is ownership?\nA: Rust's memory model."
    )
    assert PromptBuilder().build().render_static() == ""


def test_few_shot_template_renders_pairs_after_the_prefix() -> None:
    """FewShotTemplate renders its prefix then each input/output pair, separated by blank lines."""
    base = FewShotTemplate().example("What is 2+2?", "4")
    tpl = base.example("Capital of France?", "Paris").with_prefix("Here are some examples:")
    assert tpl.render() == (
        "Here are some examples:\n\nInput: What is 2+2?\nOutput: 4\n\nInput: Capital of France?\nOutput: Paris"
    )
    assert base.render() == "Input: What is 2+2?\nOutput: 4", "builders return new templates"
    assert base.with_labels("Q", "A").render() == "Q: What is 2+2?\nA: 4"
