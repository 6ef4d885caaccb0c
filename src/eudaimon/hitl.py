"""`eudaimon.hitl`: the public path (DESIGN §6) of `eudaimon.extensions.hitl`, where it is written."""

from eudaimon.extensions.hitl import *  # noqa: F403
from eudaimon.extensions.hitl import __all__ as __all__
