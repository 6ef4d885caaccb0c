"""The inspector's pages fit a 1,280 px screen and a phone (no horizontal scroll: the page's
scrollWidth is its width), read money and durations in one style, say "unpriced" where a price is
unknown, fold long messages with a way to open them, and offer actions only where they apply."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from _inspector_support import docs_shot, open_page, replayed_runs, start_run
from _server_support import OPERATOR, Server
from playwright.sync_api import Browser, Page, expect

LONG = "pay 5 to LONGWORDPAYEE " + " ".join(f"word{i}" for i in range(900)) + " " + "x" * 400
SCREENS = {"desktop-1280": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
DURATION = re.compile(r"^(\d+ ms|\d+\.\d s|\d+ min \d\d s|\d+ h \d\d min|—)$")
MONEY = re.compile(r"^(\$\d+\.\d{2,4}|<\$0\.0001|unpriced)$")


@pytest.fixture(scope="module")
def runs(inspector: Server) -> dict[str, str]:
    done = start_run(inspector, "ticker", "ticks=2", wait=True)
    _, replay = replayed_runs(inspector)
    with inspector.client(OPERATOR) as client:
        body = {"agent": "ticker", "input": "ticks=0", "schedule_id": "weekday-mornings", "cron": "0 9 * * 1-5"}
        assert client.post("/v1/schedules", json={**body, "timezone": "Europe/Paris"}).status_code == 201
    return {
        "long": str(start_run(inspector, "payer", LONG)["run_id"]),
        "done": str(done["run_id"]),
        "thread": str(done["thread_id"]),
        "effects": str(start_run(inspector, "refunder", "refund A-17 and pay ALICE")["run_id"]),
        "replay": replay,
    }


PAGES = [
    ("/", "[data-testid=runs] [data-run]"),
    ("/runs/{long}", "[data-testid=pending-approval]"),
    ("/runs/{done}", "[data-testid=waterfall] [data-span]"),
    ("/dashboard", "[data-testid=dashboard-agent]"),
    ("/threads", "[data-testid=threads] a"),
    ("/threads/{thread}", "h2"),
    ("/inbox", "[data-testid=inbox] [data-testid=inbox-item]"),
    ("/schedules", "[data-testid=schedules] [data-schedule]"),
    ("/runs/{effects}", "[data-testid=effects] [data-effect]"),
    ("/runs/{replay}", "[data-testid=replay-diff] [data-testid=replay-step]"),
]


@pytest.fixture(params=list(SCREENS), ids=list(SCREENS))
def screen(request: pytest.FixtureRequest, browser: Browser, inspector: Server) -> Iterator[Page]:
    page = open_page(browser, inspector, OPERATOR)
    page.set_viewport_size(SCREENS[request.param])
    yield page
    page.context.close()


def _overflow(page: Page) -> int:
    return int(page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth"))


@pytest.mark.parametrize(("path", "ready"), PAGES)
def test_no_page_scrolls_sideways(screen: Page, inspector: Server, runs: dict[str, str], path: str, ready: str) -> None:
    """Invariant: at 1,280 px and at 390 px each page is no wider than the screen."""
    screen.goto(inspector.url + path.format(**runs))
    expect(screen.locator(ready).first).to_be_visible()
    screen.wait_for_timeout(300)
    assert _overflow(screen) <= 0, f"{path} is {_overflow(screen)} px wider than the screen"


@pytest.mark.parametrize(("path", "ready"), PAGES)
def test_no_page_logs_an_error(
    browser: Browser, inspector: Server, runs: dict[str, str], path: str, ready: str
) -> None:
    """Invariant: opening a page writes no error to the browser's console: no request the server
    refuses (the favicon's included, which a browser asks for once, by itself) and no script error.
    Each page is opened first in a browser context of its own, its key already kept."""
    context = browser.new_context()
    context.add_init_script(f"sessionStorage.setItem('eudaimon.apiKey', {OPERATOR!r})")
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(inspector.url + path.format(**runs))
        expect(page.locator(ready).first).to_be_visible()
        page.wait_for_timeout(500)
    finally:
        context.close()
    assert errors == []


@pytest.mark.parametrize(
    ("path", "ready"),
    [
        ("/inbox", "[data-testid=inbox] [data-testid=inbox-item]"),
        ("/schedules", "[data-testid=schedules] [data-schedule]"),
        ("/runs/{effects}", "[data-testid=effects] [data-effect]"),
        ("/runs/{replay}", "[data-testid=replay-diff] [data-testid=replay-step]"),
    ],
    ids=["inbox", "schedules", "effects", "replay"],
)
def test_this_rounds_panels_fit_without_scrolling_inside(
    screen: Page, inspector: Server, runs: dict[str, str], path: str, ready: str, shot
) -> None:
    """Invariant: the inbox, the schedules, the effects panel and a replay's diff are no wider than
    their section at 1,280 px and at 390 px (on a phone their tables stack, one card per row, each
    cell named), and an id on a button (the effects panel's call) is never broken letter by letter."""
    screen.goto(inspector.url + path.format(**runs))
    found = screen.locator(ready).first
    expect(found).to_be_visible()
    screen.wait_for_timeout(300)
    inside = int(found.evaluate("(e) => { const s = e.closest('section'); return s.scrollWidth - s.clientWidth; }"))
    assert inside <= 0, f"{path}: {ready} is in a section {inside} px wider than itself"
    for button in screen.get_by_test_id("effect-call").all():
        box = button.bounding_box()
        assert box is not None and box["height"] < 40, f"the call button {button.inner_text()!r} wraps: {box}"
    shot(screen, "panel")


def test_the_runs_list_at_1280_shows_every_column(screen: Page, inspector: Server, runs: dict[str, str], shot) -> None:
    """Invariant: the list's last column is inside the screen; durations and costs have one style,
    and a run of a model with no price reads "unpriced"."""
    rows = screen.get_by_test_id("runs")
    expect(rows.locator(f'[data-run="{runs["done"]}"]')).to_be_visible()
    width = screen.viewport_size["width"] if screen.viewport_size else 0
    if width == 1280:
        right = screen.evaluate(
            "Math.max(...[...document.querySelectorAll('table.runs th')].map((c) => c.getBoundingClientRect().right))"
        )
        assert right <= width
        shot(screen, "runs-1280")
        docs_shot(screen, "runs-list-1280")
    durations = rows.get_by_test_id("duration").all_inner_texts()
    costs = rows.get_by_test_id("cost").all_inner_texts()
    assert durations and all(DURATION.match(d.strip()) for d in durations), durations
    assert costs and all(MONEY.match(c.strip()) for c in costs), costs
    assert rows.locator(f'[data-run="{runs["done"]}"] [data-testid=cost]').inner_text().strip() == "unpriced"


def test_unpriced_reads_the_same_on_every_page(page: Page, inspector: Server, runs: dict[str, str]) -> None:
    """Invariant: a cost no price is known for is `null` in the API and "unpriced" on the run
    page and the dashboard, never "$0" or a dash."""
    with inspector.client(OPERATOR) as client:
        answer = client.get(f"/v1/runs/{runs['done']}").json()
        assert answer["cost_usd"] is None and "no price is known for ticker-model" in answer["unpriced"]
    page.goto(f"{inspector.url}/runs/{runs['done']}")
    expect(page.get_by_test_id("facts")).to_contain_text("cost unpriced")
    for cell in page.get_by_test_id("step-cost").all_inner_texts():
        assert cell.strip() == "unpriced"
    page.goto(f"{inspector.url}/dashboard")
    card = page.locator("[data-testid=dashboard-agent][data-agent=ticker]")
    expect(card.get_by_test_id("agent-cost")).to_have_text("unpriced")
    expect(card.get_by_test_id("day-cost").first).to_have_text("unpriced")


def test_a_long_message_is_folded_and_opens(page: Page, inspector: Server, runs: dict[str, str]) -> None:
    """Invariant: a long message shows its first lines and a "show all" that opens the rest; the
    page stays short until then."""
    page.goto(f"{inspector.url}/runs/{runs['long']}")
    fold = page.get_by_test_id("conversation").get_by_test_id("folded-message").first
    expect(fold).to_be_visible()
    expect(fold).not_to_have_attribute("open", "")
    assert int(page.evaluate("document.documentElement.scrollHeight")) < 3000
    fold.locator("summary").click()
    expect(fold).to_have_attribute("open", "")
    expect(fold).to_contain_text("x" * 400)


def test_an_opened_message_stays_open_while_the_page_is_drawn_again(page: Page, inspector: Server) -> None:
    """Invariant: a fold the operator opened stays open when the page draws the run again — on the
    refresh a waiting run's page makes every second (its event stream ends and reconnects), and
    when the run moves on and the conversation grows. It shut within a second before."""
    run_id = str(start_run(inspector, "payer", LONG)["run_id"])
    page.goto(f"{inspector.url}/runs/{run_id}")
    fold = page.get_by_test_id("conversation").get_by_test_id("folded-message").first
    expect(page.get_by_test_id("pending-approval")).to_be_visible()
    fold.locator("summary").click()
    expect(fold).to_have_attribute("open", "")
    for _ in range(2):  # two of the page's own reloads of the run, after the click
        with page.expect_response(lambda r: r.url.endswith(f"/v1/runs/{run_id}") and r.request.method == "GET"):
            pass
    page.wait_for_timeout(100)  # the answer drawn
    assert fold.get_attribute("open") == "", "a refresh shut the opened message"
    messages = page.get_by_test_id("conversation").get_by_test_id("message")
    before = messages.count()
    page.get_by_test_id("approve").click()
    expect(messages).not_to_have_count(before)
    expect(page.locator("h1 [data-testid=status]")).to_have_text("completed")
    assert fold.get_attribute("open") == "", "the grown conversation shut the opened message"


def test_actions_only_where_they_apply(page: Page, inspector: Server, runs: dict[str, str]) -> None:
    """Invariant: no Resume on a run that is running or waiting (only a fork made not to start
    has one), no Cancel on an ended run, and no empty "live:" label."""
    page.goto(f"{inspector.url}/runs/{runs['long']}")
    expect(page.get_by_test_id("pending-approval")).to_be_visible()
    expect(page.get_by_test_id("resume")).to_have_count(0)
    expect(page.get_by_test_id("cancel-run")).to_be_visible()
    expect(page.get_by_text("live:", exact=True)).to_have_count(0)
    page.goto(f"{inspector.url}/runs/{runs['done']}")
    expect(page.locator("h1 [data-testid=status]")).to_have_text("completed")
    expect(page.get_by_test_id("resume")).to_have_count(0)
    expect(page.get_by_test_id("cancel-run")).to_have_count(0)


def test_the_slider_names_its_events(page: Page, inspector: Server, runs: dict[str, str]) -> None:
    """Invariant: the time-travel slider says which event it is at (aria-valuetext and a visible
    label) and marks each event."""
    page.goto(f"{inspector.url}/runs/{runs['done']}")
    expect(page.locator("[data-testid=event][data-type=run_completed]")).to_have_count(1)
    slider = page.get_by_test_id("travel")
    last = int(str(slider.get_attribute("max")))
    expect(slider).to_have_attribute("aria-valuetext", f"event {last} of {last}: run_completed")
    slider.evaluate("(s) => { s.value = '1'; s.dispatchEvent(new Event('input')); }")
    expect(slider).to_have_attribute("aria-valuetext", f"event 1 of {last}: run_started")
    expect(page.get_by_test_id("travel-at")).to_have_text(f"event 1 of {last}: run_started")
    expect(page.locator("#travel-events option")).to_have_count(last + 1)
