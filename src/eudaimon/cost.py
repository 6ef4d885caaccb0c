"""`eudaimon.cost`: the public path (DESIGN §6) of `eudaimon.extensions.cost`, where it is written."""

from eudaimon.extensions.cost import *  # noqa: F403
from eudaimon.extensions.cost import __all__ as __all__
