// The runs list: search, filters by agent, status, thread and date, pages by cursor. The URL
// holds all of it (`?q=…&agent=…&status=…&thread_id=…&since=…&until=…&cursor=…&limit=…`), so a link,
// back and forward, and a reload all come back to the same place.
import { STATUSES, api, el, failed, fill, go, link, millis, money, reloadEvery, runHref, runStatus, when } from "./shared.js";
import { revealed } from "./reveal.js";

const FILTERS = ["q", "agent", "status", "thread_id", "since", "until", "replay_of", "version", "replays"];
const REFRESH_MS = 2000;

// The API reads `since`/`until` as UTC days (or instants), as the form gives them.
function apiQuery(params) {
  const query = new URLSearchParams({ limit: params.get("limit") || "50" });
  for (const name of [...FILTERS, "cursor"]) if (params.get(name)) query.set(name, params.get(name));
  return query;
}

// What a run came to, as listings show it: its error, else its answer, else a dash.
export function outcome(run) {
  if (run.error_preview) return el("span", { class: "err" }, revealed(run.error_preview));
  if (run.output_preview) return revealed(run.output_preview);
  return el("span", { class: "muted" }, "—");
}

export function runsPage(main) {
  const params = new URLSearchParams(location.search);
  const field = (name, attrs) => {
    const input = el("input", Object.assign({ id: "filter-" + name, name }, attrs));
    input.value = params.get(name) || "";
    return input;
  };
  const search = field("q", { type: "search", placeholder: "input, output, tool, id…", "data-testid": "run-search", "aria-label": "Search runs" });
  const agent = field("agent", { type: "text", list: "agents-seen", "data-testid": "agent-filter", size: 12 });
  const thread = field("thread_id", { type: "text", "data-testid": "thread-filter", size: 14 });
  const since = field("since", { type: "date", "data-testid": "since-filter" });
  const until = field("until", { type: "date", "data-testid": "until-filter" });
  const status = el("select", { id: "filter-status", name: "status", "data-testid": "status-filter" },
    el("option", { value: "" }, "all statuses"), STATUSES.map((s) => el("option", { value: s }, s)));
  status.value = params.get("status") || "";
  const agentsSeen = el("datalist", { id: "agents-seen" });
  const body = el("tbody", { "data-testid": "runs" });
  const pager = el("div", { class: "row", "data-testid": "pager" });
  const form = el("form", { class: "filters", role: "search", "data-testid": "run-filters" },
    el("label", { for: "filter-q" }, "Search"), search,
    el("label", { for: "filter-agent" }, "Agent"), agent, agentsSeen,
    el("label", { for: "filter-status" }, "Status"), status,
    el("label", { for: "filter-thread_id" }, "Thread"), thread,
    el("label", { for: "filter-since" }, "From"), since,
    el("label", { for: "filter-until" }, "To"), until,
    el("button", { type: "submit", class: "primary" }, "Find"),
    el("button", { type: "button", onclick: () => go("/") }, "Clear"));
  fill(main,
    el("h1", {}, "Runs"), form,
    el("section", {}, el("table", { class: "runs" }, el("thead", {}, el("tr", {}, ["run", "agent", "status", "input", "outcome", "cost", "duration", "updated"].map((h) => el("th", { scope: "col" }, h)))), body), pager));

  // A new search or filter starts at the first page, as a new history entry.
  function applied() {
    const next = new URLSearchParams();
    for (const input of [search, agent, status, thread, since, until]) if (input.value.trim()) next.set(input.name, input.value.trim());
    if (params.get("limit")) next.set("limit", params.get("limit"));
    return next;
  }
  form.addEventListener("submit", (event) => { event.preventDefault(); go("/" + (applied().toString() ? "?" + applied() : "")); });
  status.addEventListener("change", () => form.requestSubmit());
  for (const input of [since, until]) input.addEventListener("change", () => form.requestSubmit());

  function pageLink(cursor, label, testid) {
    const next = new URLSearchParams(params);
    if (cursor) next.set("cursor", cursor); else next.delete("cursor");
    return link("/" + (next.toString() ? "?" + next : ""), label, testid);
  }

  async function load() {
    try {
      const answer = await api("/v1/runs?" + apiQuery(params));
      const seen = new Set([...agentsSeen.options].map((o) => o.value));
      for (const run of answer.runs) if (!seen.has(run.agent)) { seen.add(run.agent); agentsSeen.append(el("option", { value: run.agent })); }
      fill(body, ...answer.runs.map((run) => el("tr", { "data-run": run.run_id },
        el("td", { class: "mono" }, link(runHref(run.run_id), run.run_id, "run-link")),
        el("td", {}, run.agent), el("td", {}, runStatus(run)),
        el("td", { class: "preview", "data-testid": "input-preview" }, run.input_preview ? revealed(run.input_preview) : "—"),
        el("td", { class: "preview", "data-testid": "outcome" }, outcome(run)),
        el("td", { class: "num", "data-testid": "cost" }, money(run.cost_usd)),
        el("td", { class: "num", "data-testid": "duration" }, millis(run.duration_ms)),
        el("td", { class: "time" }, when(run.updated_at)))));
      if (!answer.runs.length) fill(body, el("tr", {}, el("td", { colspan: 8, class: "muted" }, params.toString() ? "No runs match." : "No runs yet.")));
      fill(pager,
        params.get("cursor") ? pageLink(null, "First page", "first-page") : null,
        answer.next_cursor ? pageLink(answer.next_cursor, "Next page", "next-page") : null);
    } catch (error) { failed(error); }
  }
  return reloadEvery(REFRESH_MS, load);
}
