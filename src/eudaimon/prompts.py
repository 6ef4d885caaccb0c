"""`eudaimon.prompts`: the public path (DESIGN §6) of `eudaimon.extensions.prompts`, where it is written."""

from eudaimon.extensions.prompts import *  # noqa: F403
from eudaimon.extensions.prompts import __all__ as __all__
