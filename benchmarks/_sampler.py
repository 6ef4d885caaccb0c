"""A sampling profiler over every thread of a process (py-spy is not at hand here).

Temporal's Python SDK runs workflow activations on threads of its own, which cProfile and
pyinstrument (one thread each) do not see. `start(path)` samples every thread's stack every
`interval_s` and, at exit (or SIGTERM), writes to `path` the functions seen busy, inclusive and
as the leaf, as shares of the busy samples (a thread parked in a wait is not busy).

    FLEET_SAMPLE=/tmp/worker.txt python -m peers.fleet_loop eudaimon …
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from types import FrameType

_IDLE = {
    "select",
    "poll",
    "epoll",
    "wait",
    "_wait_for_tstate_lock",
    "get",
    "sleep",
    "acquire",
    "_worker",
    "run_forever",
}


def _name(frame: FrameType) -> str:
    code = frame.f_code
    return f"{Path(code.co_filename).name}:{code.co_name}"


def _thread_cpu() -> list[tuple[str, float]]:
    """CPU seconds by thread name (threads of one name summed), from /proc."""
    names = {t.native_id: t.name for t in threading.enumerate()}
    tick = os.sysconf("SC_CLK_TCK")
    by: Counter[str] = Counter()
    for task in Path("/proc/self/task").iterdir():
        fields = (task / "stat").read_text().rpartition(")")[2].split()
        comm = (task / "comm").read_text().strip()
        name = names.get(int(task.name), f"native:{comm}").rstrip("0123456789_-")
        by[name] += (int(fields[11]) + int(fields[12])) / tick
    return by.most_common(15)


def start(path: str, interval_s: float = 0.005) -> None:
    inclusive: Counter[str] = Counter()
    leaves: Counter[str] = Counter()
    busy = [0, 0]
    me = [0]

    def sample() -> None:
        me[0] = threading.get_ident()
        while True:
            time.sleep(interval_s)
            for ident, frame in sys._current_frames().items():
                if ident == me[0]:
                    continue
                busy[1] += 1
                if frame.f_code.co_name in _IDLE:
                    continue
                busy[0] += 1
                leaves[_name(frame)] += 1
                seen: set[str] = set()
                f: FrameType | None = frame
                while f is not None:
                    name = _name(f)
                    if name not in seen:
                        seen.add(name)
                        inclusive[name] += 1
                    f = f.f_back

    def report() -> None:
        total = max(busy[0], 1)
        lines = [f"busy samples {busy[0]} of {busy[1]} thread samples", "", "CPU s by thread:"]
        lines += [f"{cpu:7.2f} {name}" for name, cpu in _thread_cpu()]
        lines += ["", "inclusive:"] + [f"{100 * n / total:6.1f}% {k}" for k, n in inclusive.most_common(70)]
        lines += ["", "leaf:"] + [f"{100 * n / total:6.1f}% {k}" for k, n in leaves.most_common(40)]
        Path(path).write_text("\n".join(lines) + "\n")

    threading.Thread(target=sample, daemon=True).start()
    atexit.register(report)

    def on_term(*_: object) -> None:
        report()
        os._exit(0)

    signal.signal(signal.SIGTERM, on_term)
