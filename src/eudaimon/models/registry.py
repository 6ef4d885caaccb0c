"""`"provider:model"` strings to `Model` instances."""

from __future__ import annotations

import difflib
import importlib
from typing import Any

from eudaimon.core.errors import ConfigurationError, MissingExtra
from eudaimon.models.base import Model

# provider -> (module, factory function); modules are imported only when a provider is used,
# so that an agent on one provider does not need the others' SDKs.
_PROVIDERS: dict[str, tuple[str, str]] = {
    "openai": ("eudaimon.models.openai", "from_model_string"),
    "openai-compatible": ("eudaimon.models.openai", "from_model_string"),
    "ollama": ("eudaimon.models.openai", "from_model_string"),
    "anthropic": ("eudaimon.models.anthropic", "from_model_string"),
}


def infer_model(spec: Model | str, **options: Any) -> Model:
    """Resolve `"openai:gpt-4o-mini"`, `"anthropic:…"`, `"ollama:…"`; pass a `Model` through."""
    if not isinstance(spec, str):
        return spec
    provider, sep, name = spec.partition(":")
    if not sep or not name:
        raise ConfigurationError(f"model {spec!r} must be written 'provider:model', e.g. 'openai:gpt-4o-mini'")
    target = _PROVIDERS.get(provider)
    if target is None:
        close = difflib.get_close_matches(provider, _PROVIDERS, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else f"; known providers: {', '.join(sorted(_PROVIDERS))}"
        raise ConfigurationError(f"unknown model provider {provider!r}{hint}")
    module_name, factory = target
    try:
        module = importlib.import_module(module_name)
    except MissingExtra:
        raise
    except ImportError as exc:
        raise ConfigurationError(f"provider {provider!r} is not available: {exc}") from exc
    model: Model = getattr(module, factory)(provider, name, **options)
    return model
