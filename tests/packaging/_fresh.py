"""A fresh interpreter for import tests: what a module loads is only visible in a new process."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import eudaimon

SRC = str(Path(eudaimon.__file__).resolve().parents[1])

# Installed into the child before anything else: the packages named in BLOCKED behave as if
# they were not installed (a meta path finder that refuses them, as a missing package is refused).
_BLOCKER = """
import sys
BLOCKED = {blocked!r}
class _NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None
sys.meta_path.insert(0, _NotInstalled())
"""


def run_python(
    code: str, *, blocked: tuple[str, ...] = (), args: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    """Run `code` in a new interpreter that imports this checkout's eudaimon, with `blocked`
    packages unimportable."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    env.pop("EUDAIMON_STORE", None)
    program = _BLOCKER.format(blocked=set(blocked)) + textwrap.dedent(code)
    return subprocess.run(
        [sys.executable, "-c", program, *args], capture_output=True, text=True, env=env, timeout=120, check=False
    )
