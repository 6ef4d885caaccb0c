"""`python -m eudaimon`: the `eudaimon` command, for when the script is not on PATH."""

from eudaimon.cli import app

app(prog_name="eudaimon")
