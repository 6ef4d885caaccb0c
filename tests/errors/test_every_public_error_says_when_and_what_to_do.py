"""Every public error class has a docstring of its own saying when it is raised and what to do."""

from __future__ import annotations

import importlib
import inspect

import pytest

# Packages whose `__all__` a user imports errors from.
PUBLIC = ["eudaimon.errors", "eudaimon.tools", "eudaimon.models", "eudaimon.stores", "eudaimon.memory", "eudaimon.mcp"]


def _public_errors() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for module_name in PUBLIC:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            value = getattr(module, name)
            if inspect.isclass(value) and issubclass(value, BaseException | Warning):
                found[f"{module_name}.{name}"] = value
    return found


ERRORS = _public_errors()


def test_the_errors_module_exports_every_eudaimon_error() -> None:
    """Every `EudaimonError` defined in `eudaimon.core.errors` can be imported from `eudaimon.errors`."""
    core = importlib.import_module("eudaimon.core.errors")
    errors = importlib.import_module("eudaimon.errors")
    defined = {
        name
        for name, value in vars(core).items()
        if inspect.isclass(value) and issubclass(value, Exception | Warning) and not name.startswith("_")
    }
    assert defined - set(errors.__all__) == set()


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_an_error_class_documents_itself(name: str) -> None:
    """Its own docstring (not one inherited), long enough to say when and what to do."""
    cls = ERRORS[name]
    doc = cls.__dict__.get("__doc__") or ""
    assert len(" ".join(doc.split())) >= 80, f"{name}: {doc!r}"


def test_the_public_errors_are_found() -> None:
    """The walk above sees the errors it must (so the parametrized test cannot pass on nothing)."""
    assert {
        "eudaimon.errors.MissingExtra",
        "eudaimon.errors.ConfigurationError",
        "eudaimon.tools.ToolArgumentsError",
    } <= set(ERRORS)
