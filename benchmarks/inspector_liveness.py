"""How soon a run page shows what happened elsewhere, and that its server went away.

A real `eudaimon serve` and headless Chromium: five times, a run waits for approval with its
page open, `eudaimon runs approve` (another process, the same SQLite journal) decides, and the
time until the page shows `approval_decided` is taken; three times, the server is killed
(SIGKILL) and the time until the offline banner shows is taken, then it is started again on its
port and the time until the banner goes is taken.

    PYTHONPATH=src python benchmarks/inspector_liveness.py
"""

import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests" / "server" / "inspector"), str(ROOT / "tests" / "server")]

from _server_support import (  # noqa: E402
    ARGS,
    OPERATOR,
    Server,
)
from playwright.sync_api import sync_playwright  # noqa: E402
from test_run_page_never_lies import _cli_approve  # noqa: E402

from conftest import inspector_server, open_page, start_run  # noqa: E402

d = Path(tempfile.mkdtemp())
s = inspector_server(d / "runs.db").start()
shown, offline, back = [], [], []
try:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        page = open_page(b, s, OPERATOR)
        for i in range(5):
            run_id = start_run(s, "payer", f"pay {i} to LAT")["run_id"]
            page.goto(f"{s.url}/runs/{run_id}")
            page.get_by_test_id("pending-approval").wait_for()
            _cli_approve(s.db, run_id, "wire_1", "x")
            t = time.perf_counter()
            page.locator('[data-testid=event][data-type="approval_decided"]').wait_for()
            shown.append((time.perf_counter() - t) * 1000)
        for _ in range(3):
            s.kill()
            t = time.perf_counter()
            page.get_by_test_id("offline").wait_for(state="visible")
            offline.append((time.perf_counter() - t) * 1000)
            s = Server(s.db, port=s.port, env=s.env, args=s.args, log=s.log).start()
            t = time.perf_counter()
            page.get_by_test_id("offline").wait_for(state="hidden")
            back.append((time.perf_counter() - t) * 1000)
finally:
    s.stop()
for name, v in (("CLI approval -> on page", shown), ("kill -> banner", offline), ("server ready -> banner gone", back)):
    print(f"{name:30} median {statistics.median(v):6.0f} ms  worst {max(v):6.0f} ms  n={len(v)}")
