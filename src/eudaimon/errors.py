"""eudaimon's errors; the tree is drawn in `eudaimon.core.errors`, where they are defined.

Every name `eudaimon.core.errors` has is a public error (it imports nothing, not even
`__future__`), so they are written once, there; `__all__` is read off it.
"""

from eudaimon.core import errors as _tree
from eudaimon.core.errors import *  # noqa: F403

__all__ = [
    name for name, value in vars(_tree).items() if isinstance(value, type) and value.__module__ == _tree.__name__
]
