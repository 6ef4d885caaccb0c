"""Agents whose failures carry hostile text, for the log tests (`--agent _hostile_agents:NAME`).

`HOSTILE` holds what a provider's error or a tool's exception may bring back: an ANSI screen
clear, an OSC window title and hyperlink, a bell, a bidi override, and a newline that starts a
forged log record.
"""

from __future__ import annotations

from eudaimon import Agent
from eudaimon.core.errors import ModelError
from eudaimon.models import ChatRequest, FunctionModel

HOSTILE = (
    "\x1b[2J\x1b]0;owned\x07\x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\ "
    "\u202etxt.exe\u202c\nINFO:     forged record"
)


def _model_fails(request: ChatRequest) -> str:
    raise ModelError(f"provider said: {HOSTILE}", model="glitch-model", status_code=400)


def _code_raises(request: ChatRequest) -> str:
    raise RuntimeError(f"user code said: {HOSTILE}")


glitcher = Agent(FunctionModel(_model_fails, "glitch-model"), name="glitcher", memory=None)
crasher = Agent(FunctionModel(_code_raises, "crash-model"), name="crasher", memory=None)
