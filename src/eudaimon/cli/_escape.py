"""`visible`: what the CLI does to every text it did not write itself before printing it.

Model text and tool output are often untrusted web content, and a terminal interprets what it
is sent: `ESC[8m` hides the text after it, `ESC[2K ESC[1A` erases and rewrites lines, an OSC
sequence sets the window title or plants a link, a bare carriage return overprints a line, and
a right-to-left override reorders what follows. An approver shown such a doctored screen may
approve a call they never saw. So every renderer passes journal text through `visible`, which
spells each control character out (`\\x1b`, `\\r`, `\\u202e`) instead of sending it, and builds
`rich.text.Text` from the result (never markup), so `[bold]…[/]` in model text stays literal.
"""

from __future__ import annotations

from rich.text import Text

_BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x2028, 0x2029)


def _spelled(code: int) -> str:
    named = {0x0D: "\\r", 0x0B: "\\v", 0x0C: "\\f", 0x08: "\\b", 0x07: "\\a", 0x00: "\\0"}
    if code in named:
        return named[code]
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


_TABLE: dict[int, str] = {code: _spelled(code) for code in (*range(0x20), *range(0x7F, 0xA0), *_BIDI)}
del _TABLE[0x09]  # a tab only moves to the next stop: it hides nothing
_ONE_LINE = dict(_TABLE)
_MULTI_LINE = {code: text for code, text in _TABLE.items() if code != 0x0A}


def visible(text: str, *, newlines: bool = True) -> str:
    """`text` with every control character spelled out, so a terminal shows it, never obeys it.

    Args:
        text: Text from the journal, a model, a tool or an error message.
        newlines: Keep line feeds as line breaks (message bodies); with False they are spelled
            `\\x0a` too (one-line summaries, table cells that must stay one line).
    """
    return text.translate(_MULTI_LINE if newlines else _ONE_LINE)


_JSON = {code: f"\\u{code:04x}" for code in _TABLE if code >= 0x7F}


def json_visible(document: str) -> str:
    """A JSON document with the control characters JSON leaves raw (DEL, C1, bidirectional
    overrides) written as `\\uXXXX` escapes: the same JSON, safe to print.

    JSON's own encoder already escapes C0; these can only occur inside strings, where the
    escape means the same character."""
    return document.translate(_JSON)


def shown(text: str, style: str = "", *, newlines: bool = True) -> Text:
    """`visible(text)` as a `rich` `Text`: printed literally, whatever brackets it holds."""
    return Text(visible(text, newlines=newlines), style=style)
