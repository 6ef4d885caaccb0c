"""The run page's waterfall and tree of runs, in a real browser against a real server."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx2
from _inspector_support import start_run
from _server_support import OPERATOR, Server, wait_until
from playwright.sync_api import Page, expect

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _events(server: Server, run_id: str) -> list[dict[str, object]]:
    with server.client(OPERATOR) as client:
        return list(client.get(f"/v1/runs/{run_id}/events").json()["events"])


def _ms(events: list[dict[str, object]], seq: int) -> int:
    """Event `seq`'s time after `run_started`, each time in whole ms (as a browser parses it)."""

    def whole_ms(event: dict[str, object]) -> int:
        return (datetime.fromisoformat(str(event["at"])) - EPOCH) // timedelta(milliseconds=1)

    return whole_ms(events[seq]) - whole_ms(events[0])


def _span(page: Page, kind: str) -> dict[str, str]:
    bar = page.locator(f"[data-testid=waterfall] [data-span][data-kind={kind}]").first
    return {name: str(bar.get_attribute(f"data-{name}")) for name in ("start-ms", "duration-ms", "seq")}


def test_a_run_with_a_retry_a_child_and_an_approval_has_a_bar_for_each(page: Page, inspector: Server, shot) -> None:
    """Invariant: one bar per model call, tool call, approval wait, retry and child run, placed at
    the journal's times (ms after run_started); the stop reason shows where it is not end_turn."""
    run = start_run(inspector, "family", "pay the invoice to ACME-Corp")
    run_id = str(run["run_id"])
    with inspector.client(OPERATOR) as client:
        wait_until(lambda: client.get(f"/v1/runs/{run_id}").json()["status"] == "awaiting_approval", "the wire to wait")
    page.goto(f"{inspector.url}/runs/{run_id}")
    waterfall = page.get_by_test_id("waterfall")
    for kind in ("model", "retry", "tool", "approval", "child"):
        expect(waterfall.locator(f"[data-span][data-kind={kind}]").first).to_be_visible()
    events = _events(inspector, run_id)
    by_type = {str(e["type"]): int(str(e["seq"])) for e in reversed(events)}  # the first of each type
    approval = _span(page, "approval")
    assert approval["seq"] == str(by_type["approval_requested"])
    assert int(approval["start-ms"]) == _ms(events, by_type["approval_requested"])
    retry = _span(page, "retry")
    assert int(retry["start-ms"]) == _ms(events, by_type["model_retry_scheduled"])
    tool = _span(page, "tool")
    completed = next(int(str(e["seq"])) for e in events if e["type"] == "tool_completed")
    assert int(tool["duration-ms"]) == _ms(events, completed) - _ms(events, by_type["tool_started"])
    expect(waterfall.locator("[data-kind=approval][data-open=true]")).to_have_count(1)
    shot(page, "waiting")

    page.get_by_test_id("approve").click()
    expect(page.locator("h1 [data-testid=status]")).to_have_text("completed")
    expect(waterfall.locator("[data-kind=approval][data-open=true]")).to_have_count(0)
    expect(waterfall.get_by_test_id("stop-reason")).to_contain_text("max_tokens")
    expect(waterfall.locator("[data-kind=model][data-stop-reason=max_tokens]")).to_have_count(1)
    expect(waterfall.locator("[data-span][data-kind=model]")).to_have_count(4)  # failed once, then three answers
    starts = [
        int(str(v))
        for v in waterfall.locator("[data-span]").evaluate_all("(bars) => bars.map((b) => b.dataset.startMs)")
    ]
    assert starts == sorted(starts) and all(s >= 0 for s in starts)
    shot(page, "completed")


def test_clicking_a_bar_shows_its_event(page: Page, inspector: Server) -> None:
    """Invariant: a bar leads to its journal event: the timeline row is marked and its JSON open."""
    run_id = str(start_run(inspector, "payer", "pay 3 to KIM")["run_id"])
    page.goto(f"{inspector.url}/runs/{run_id}")
    bar = page.locator("[data-testid=waterfall] [data-span][data-kind=approval]")
    seq = bar.get_attribute("data-seq")
    bar.click()
    row = page.locator(f'[data-testid=event][data-seq="{seq}"]')
    expect(row).to_have_class("picked")
    expect(row.locator("pre")).to_be_visible()
    expect(row.locator("pre")).to_contain_text('"type": "approval_requested"')


def test_the_run_tree_links_parent_and_child(page: Page, inspector: Server, shot) -> None:
    """Invariant: a run with a child run shows the tree with a link to the child, and the child's
    page shows the same tree with a link back to its parent."""
    run_id = str(start_run(inspector, "family", "pay the invoice to ACME-Corp")["run_id"])
    page.goto(f"{inspector.url}/runs/{run_id}")
    tree = page.get_by_test_id("run-tree")
    child = tree.get_by_test_id("tree-link")
    expect(child).to_have_count(1)
    child_id = str(child.text_content())
    with httpx2.Client(base_url=inspector.url, headers={"Authorization": f"Bearer {OPERATOR}"}) as client:
        assert client.get(f"/v1/runs/{child_id}").json()["agent"] == "researcher"
    shot(page, "parent")
    child.click()
    expect(page).to_have_url(f"{inspector.url}/runs/{child_id}")
    expect(tree.locator(f'li.here[data-run="{child_id}"]')).to_have_count(1)
    back = tree.get_by_test_id("tree-link")
    expect(back).to_have_text(run_id)
    child_bar = page.locator("[data-testid=waterfall] [data-kind=child]")
    expect(child_bar).to_have_count(0)  # the child has no children of its own
    back.click()
    expect(page.locator(f'[data-testid=waterfall] [data-kind=child][data-child="{child_id}"]')).to_have_count(1)


def test_a_call_in_flight_shows_how_long_it_has_run_so_far(page: Page, inspector: Server) -> None:
    """Invariant: a tool call with no answer yet is drawn to now (`data-live`) and its time grows
    with no event arriving: a call running for minutes never reads "0 ms so far" (its start was
    the run's latest event). Once the run ends, what it left open stops growing."""
    run_id = str(start_run(inspector, "charger", "charge me")["run_id"])  # charge_card takes an hour
    with inspector.client(OPERATOR) as client:
        started = lambda: any(e["type"] == "tool_started" for e in _events(inspector, run_id))  # noqa: E731
        wait_until(started, "the charge to start")
        page.goto(f"{inspector.url}/runs/{run_id}")
        bar = page.locator("[data-testid=waterfall] [data-span][data-kind=tool]")
        expect(bar).to_have_attribute("data-live", "")
        first = int(str(bar.get_attribute("data-duration-ms")))
        page.wait_for_timeout(2200)
        second = int(str(bar.get_attribute("data-duration-ms")))
        assert second >= first + 1500, (first, second)
        row = page.locator("[data-testid=waterfall] .wf-row", has=page.locator("[data-kind=tool][data-live]"))
        expect(row.locator(".wf-ms")).to_contain_text("so far")

        assert client.post(f"/v1/runs/{run_id}/cancel", json={}).status_code == 200
        expect(page.locator("h1 [data-testid=status]")).to_have_text("cancelled")
        expect(bar).not_to_have_attribute("data-live", "")
        ended = int(str(bar.get_attribute("data-duration-ms")))
        page.wait_for_timeout(1500)
        assert int(str(bar.get_attribute("data-duration-ms"))) == ended
