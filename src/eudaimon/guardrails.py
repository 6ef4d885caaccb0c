"""`eudaimon.guardrails`: the public path (DESIGN §6) of `eudaimon.extensions.guardrails`, where it is written."""

from eudaimon.extensions.guardrails import *  # noqa: F403
from eudaimon.extensions.guardrails import __all__ as __all__
