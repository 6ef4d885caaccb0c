"""Server logs that cannot leak a credential or take over the terminal that shows them.

Log lines carry text from outside: request paths and query strings (uvicorn's access log),
model and tool errors, ids. Two things must never reach a log as they came:

- **credentials**: a key sent as `?api_key=…` (refused, but logged verbatim by the access
  log), a DSN's password in an error. Every line goes through `core.redact`.
- **control and bidi characters**: ANSI/OSC escapes can clear a terminal, rewrite its title or
  plant a hyperlink; a newline forges a log record; bidi overrides make a line read otherwise.
  Each such character of a message is written as an escape (`\\x1b`, `\\u202e`, `\\n`). A
  traceback keeps its line breaks, but every line of it is indented, so none can pass for a
  record of its own.

`SafeLogs` is a `logging.Filter` that does both, once per record, for every handler it is on.
`eudaimon serve` configures uvicorn with it on every handler and a root handler for the
`eudaimon.*` loggers (`log_config()`); `create_app`'s lifespan puts it on the handlers present
when the app starts (`install()`), which covers an app served by uvicorn directly. An app that
mounts eudaimon's and enters its lifespan gets the same; one that configures logging later
should add `SafeLogs()` to its own handlers.
"""

from __future__ import annotations

import copy
import logging
import unicodedata
from collections.abc import Callable, Mapping
from typing import Any

from eudaimon.core.redact import redact

ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_MARK = "_eudaimon_safe"
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_TRACEBACKS = logging.Formatter()


def escaped(text: str, *, keep_newlines: bool = False) -> str:
    """`text` with every control, format (bidi, zero-width), surrogate and line-separator
    character written as a Python escape; with `keep_newlines`, `\\n` stays a line break."""
    if text.isprintable() and text.isascii():
        return text
    out = []
    for char in text:
        if (char == "\n" and keep_newlines) or unicodedata.category(char) not in ESCAPED_CATEGORIES:
            out.append(char)
        elif char in _NAMED:
            out.append(_NAMED[char])
        elif ord(char) < 0x100:
            out.append(f"\\x{ord(char):02x}")
        else:
            out.append(f"\\u{ord(char):04x}" if ord(char) < 0x10000 else f"\\U{ord(char):08x}")
    return "".join(out)


def shown(value: object) -> str:
    """A value as a log line may show it: credentials masked, invisible characters escaped."""
    return escaped(redact(str(value)))


def _block(text: str) -> str:
    """A traceback or stack: escaped, its lines kept, every line indented under its record."""
    return "\n".join("  " + line for line in escaped(redact(text), keep_newlines=True).split("\n"))


class SafeLogs(logging.Filter):
    """Mask credentials and escape invisible characters in a record before any handler writes it."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, _MARK, False):
            return True
        setattr(record, _MARK, True)
        if record.name == "uvicorn.access" and isinstance(record.args, tuple):
            # uvicorn's access formatter reads the args (client, method, path, version, status)
            record.args = tuple(shown(a) if isinstance(a, str) else a for a in record.args)
        else:
            try:
                message = record.getMessage()
            except Exception:  # a bad format string: a logging call must still never raise
                message = f"{record.msg} {record.args!r}"
            record.msg = shown(message)
            record.args = None
        record.__dict__.pop("color_message", None)  # uvicorn's coloured copy of the raw message
        if record.exc_info and not record.exc_text:
            record.exc_text = _TRACEBACKS.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = _block(record.exc_text)
        if record.stack_info:
            record.stack_info = _block(record.stack_info)
        return True


LOGGERS = ("", "uvicorn", "uvicorn.error", "uvicorn.access")


def install() -> Callable[[], None]:
    """Put `SafeLogs` on every handler of the root and uvicorn loggers (and on logging's last
    resort, which writes records when no handler is configured); return what undoes it."""
    handlers = {id(h): h for name in LOGGERS for h in logging.getLogger(name).handlers}
    if logging.lastResort is not None:
        handlers[id(logging.lastResort)] = logging.lastResort
    added: list[tuple[logging.Handler, SafeLogs]] = []
    for handler in handlers.values():
        if not any(isinstance(f, SafeLogs) for f in handler.filters):
            safe = SafeLogs()
            handler.addFilter(safe)
            added.append((handler, safe))

    def undo() -> None:
        for handler, safe in added:
            handler.removeFilter(safe)

    return undo


def log_config(base: Mapping[str, Any]) -> dict[str, Any]:
    """uvicorn's logging configuration `base` with `SafeLogs` on every handler, and a root
    handler on stderr for the `eudaimon.*` loggers (warnings and worse)."""
    config = copy.deepcopy(dict(base))
    config.setdefault("filters", {})["eudaimon_safe"] = {"()": SafeLogs}
    for handler in config.get("handlers", {}).values():
        handler["filters"] = [*handler.get("filters", []), "eudaimon_safe"]
    config["root"] = {"handlers": ["default"], "level": "WARNING"}
    # Takeovers and recoveries are what an operator reads after a crash: one line each.
    config.setdefault("loggers", {})["eudaimon.recovery"] = {"level": "INFO"}
    return config
