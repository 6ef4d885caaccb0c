"""`eudaimon.hooks`: the public path (DESIGN §6) of `eudaimon.extensions.hooks`, where it is written."""

from eudaimon.extensions.hooks import *  # noqa: F403
from eudaimon.extensions.hooks import __all__ as __all__
