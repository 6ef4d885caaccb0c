"""`eudaimon.retry`: the public path (DESIGN §6) of `eudaimon.extensions.retry`, where it is written."""

from eudaimon.extensions.retry import *  # noqa: F403
from eudaimon.extensions.retry import __all__ as __all__
