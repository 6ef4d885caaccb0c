"""The `eudaimon` command (`eudaimon.cli:app`): run agents, play the demo, read and decide runs."""

from eudaimon.cli.app import app

__all__ = ["app"]
