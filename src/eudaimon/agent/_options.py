"""What `Agent(...)` says about a keyword argument it does not take.

Python's own `TypeError: unexpected keyword argument 'base_url'` leaves a new user at a dead
end: the option exists, on the model. Connection options (`base_url`, `api_key`, `timeout`,
`client`) belong to the model because they differ per provider and because `Agent(model=a
Model object, base_url=...)` could only be ambiguous or ignored; so `Agent` does not take them,
and the error says which class (or environment variable) does. A misspelt agent option gets
the closest real one.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any

from eudaimon.core.redact import redact

MODEL_OPTIONS = frozenset(
    {"base_url", "api_key", "timeout", "client", "provider", "max_tokens_field", "default_max_tokens", "organization"}
)
"""Keyword arguments of the provider model classes (`OpenAIModel`, `AnthropicModel`)."""

_BASE_URL_ENV = {
    "openai": "OPENAI_BASE_URL",
    "openai-compatible": "OPENAI_COMPATIBLE_BASE_URL",
    "ollama": "OLLAMA_BASE_URL",
    "anthropic": "ANTHROPIC_BASE_URL",
}
_KEY_ENV = {
    "openai": "OPENAI_API_KEY",
    "openai-compatible": "OPENAI_COMPATIBLE_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
}


def misplaced_option(model: object, options: Mapping[str, Any], known: Iterable[str]) -> str:
    """What to say of the first of `options`, keywords `Agent` does not take (`known` are those
    it does): where a model option belongs, or the closest agent option to a misspelt one."""
    name = next(iter(options))
    if name in MODEL_OPTIONS:
        return _model_option(name, model, options[name])
    close = difflib.get_close_matches(name, list(known), n=1)
    hint = f"; did you mean {close[0]}=?" if close else ""
    return f"Agent() got an unexpected keyword argument {name!r}{hint}"


def _shown(option: str, value: object) -> str:
    if option in ("api_key", "client"):
        return "..."
    return repr(redact(value)) if isinstance(value, str) else repr(value)


def _model_option(option: str, model: object, value: object) -> str:
    """Where `option=` goes for `model`: the provider's model class, or its environment variable."""
    head = f"Agent() takes no {option}=: it is an option of the model, not of the agent"
    # A key is never echoed; a URL only without its password.
    shown = _shown(option, value)
    if not isinstance(model, str):
        return (
            f"{head}, and the model given is built already: pass {option}= to its class when you build it, "
            f"e.g. OpenAIModel('NAME', {option}={shown}) or AnthropicModel('NAME', {option}={shown})"
        )
    provider, _, name = model.partition(":")
    inferred = f"Agent(infer_model({model!r}, {option}={shown}), …) (from eudaimon.models import infer_model)"
    if provider == "anthropic":
        built = f"Agent(AnthropicModel({name!r}, {option}={shown}), …) (from eudaimon.models.anthropic import AnthropicModel)"
    elif provider == "openai":
        built = f"Agent(OpenAIModel({name!r}, {option}={shown}), …) (from eudaimon.models.openai import OpenAIModel)"
    else:  # a compatible server: infer_model keeps OpenAI's key away from it, as the string does
        built = ""
    env = (_BASE_URL_ENV if option == "base_url" else _KEY_ENV if option == "api_key" else {}).get(provider)
    also = f"; or set {env} and keep the string {model!r}" if env else ""
    ways = f"{inferred}, or {built}" if built else inferred
    return f"{head}. Build the model with it and pass that: {ways}{also}"
