"""`eudaimon.middleware`: the public path (DESIGN §6) of `eudaimon.extensions.middleware`, where it is written."""

from eudaimon.extensions.middleware import *  # noqa: F403
from eudaimon.extensions.middleware import __all__ as __all__
