// The threads list and one thread's runs: the conversation, what was asked and answered in each.
import { api, el, failed, fill, link, money, runHref, runStatus, when } from "./shared.js";
import { revealed } from "./reveal.js";
import { outcome } from "./runs.js";

export function threadsPage(main) {
  const body = el("tbody", { "data-testid": "threads" });
  fill(main, el("h1", {}, "Threads"),
    el("section", {}, el("table", {}, el("thead", {}, el("tr", {}, ["thread", "agent", "runs", "finished", "last active"].map((h) => el("th", { scope: "col" }, h)))), body)));
  api("/v1/threads").then((answer) => {
    fill(body, ...answer.threads.map((t) => el("tr", {},
      el("td", {}, link("/threads/" + encodeURIComponent(t.thread_id), t.thread_id)), el("td", {}, t.agent),
      el("td", {}, t.runs), el("td", {}, t.finished), el("td", {}, when(t.updated_at)))));
    if (!answer.threads.length) fill(body, el("tr", {}, el("td", { colspan: 5, class: "muted" }, "No threads yet.")));
  }, failed);
  return () => {};
}

export function threadPage(main, threadId) {
  fill(main, el("h1", {}, "Thread ", el("span", { class: "mono" }, threadId)));
  api("/v1/threads/" + encodeURIComponent(threadId)).then((t) => {
    main.append(
      el("div", { class: "facts" },
        el("span", {}, "turns ", el("b", {}, t.turn_count)),
        el("span", {}, "tokens ", el("b", {}, t.usage.input_tokens + " in / " + t.usage.output_tokens + " out")),
        el("span", {}, "cost ", el("b", {}, money(t.cost_usd))),
        el("span", {}, "guardrail streak ", el("b", {}, t.guardrail_retries))),
      el("section", {}, el("h2", {}, "Runs, oldest first"), el("table", {},
        el("thead", {}, el("tr", {}, ["run", "status", "asked", "answered", "events", "updated"].map((h) => el("th", { scope: "col" }, h)))),
        el("tbody", {}, t.runs.map((run) => el("tr", { "data-testid": "thread-run" },
          el("td", { class: "mono" }, link(runHref(run.run_id), run.run_id)), el("td", {}, runStatus(run)),
          el("td", { class: "preview", "data-testid": "thread-asked" }, run.input_preview ? revealed(run.input_preview) : "—"),
          el("td", { class: "preview", "data-testid": "thread-answered" }, outcome(run)),
          el("td", {}, run.event_count), el("td", {}, when(run.updated_at))))))));
  }, failed);
  return () => {};
}
