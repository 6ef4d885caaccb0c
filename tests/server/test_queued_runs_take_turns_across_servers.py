"""Two servers on one journal start a thread's queued runs one at a time, in the order they were
queued, whichever server accepted each: the thread's lease and the journal's turn order decide,
not the process."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import httpx2
from _queue_support import Backend, QueueServer, all_completed, begun


def _start(client: httpx2.Client, text: str) -> dict[str, Any]:
    answer = client.post("/v1/agents/gated/runs", json={"input": text, "thread_id": "shared-desk"})
    assert answer.status_code == 202, answer.text
    run: dict[str, Any] = answer.json()
    return run


def test_two_servers_take_turns_on_one_thread(backend: Backend, tmp_path: Path) -> None:
    one = QueueServer(tmp_path / "runs.db", backend=backend).start()
    two: QueueServer | None = None
    try:
        two = one.again()
        with one.client() as first, two.client() as second:
            runs = [_start(first, "desk-1")]
            begun(one, "desk-1")
            runs += [_start(second, "desk-2"), _start(first, "desk-3"), _start(second, "desk-4")]
            assert [r["status"] for r in runs[1:]] == ["queued"] * 3
            one.open_gate()
            all_completed(first, [r["run_id"] for r in runs])
        lines = one.model_lines()
        begins = [line.split(" ", 1)[1] for line in lines if line.startswith("begin")]
        assert begins == ["desk-1", "desk-2", "desk-3", "desk-4"], lines
        for index, line in enumerate(lines):  # each began after the one before it ended
            if line.startswith("begin desk-") and line != "begin desk-1":
                before = f"end desk-{int(line[-1]) - 1}"
                assert before in lines[:index], lines
    finally:
        one.stop()
        if two is not None:
            two.stop()


def test_wait_true_answers_when_the_run_ends_on_another_server(backend: Backend, tmp_path: Path) -> None:
    """Invariant: `?wait=true` answers when the run ends or waits, also when another server on
    the journal drives it: the start sent again (same `run_id`) to a second server while the
    first drives the run answers with the run completed, not still running."""
    one = QueueServer(tmp_path / "runs.db", backend=backend).start()
    two: QueueServer | None = None
    try:
        two = one.again()
        start = {"input": "desk-9", "thread_id": "desk-9", "run_id": "desk-9-run"}
        with one.client() as first:
            assert first.post("/v1/agents/gated/runs", json=start).status_code == 202
        begun(one, "desk-9")
        answers: list[httpx2.Response] = []

        def wait_on_two() -> None:
            assert two is not None
            with two.client() as second:
                answers.append(second.post("/v1/agents/gated/runs?wait=true", json=start))

        waiter = threading.Thread(target=wait_on_two)
        waiter.start()
        waiter.join(1.0)  # a start answered at once (the bug) has answered by now
        one.open_gate()
        waiter.join(60)
        [answer] = answers
        assert answer.status_code == 200 and answer.json()["status"] == "completed", answer.text
    finally:
        one.stop()
        if two is not None:
            two.stop()
