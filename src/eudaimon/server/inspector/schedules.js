// Schedules (their next and last runs) and webhook deliveries (each attempt and the answer).
// Both lists are for operators: a viewer's key is told so instead. A schedule Temporal fires
// (`engine` set) says so, and its next and last times are Temporal's own (`times_from`).
import { api, el, failed, fill, labelled, link, mayOperate, runHref, when } from "./shared.js";

export function schedulesPage(main) {
  const schedules = el("tbody", { "data-testid": "schedules" });
  const deliveries = el("tbody", { "data-testid": "webhook-deliveries" });
  const columns = ["schedule", "agent", "cron", "zone", "state", "fired by", "next run", "last run"];
  const head = (names) => el("thead", {}, el("tr", {}, names.map((h) => el("th", { scope: "col" }, h))));
  fill(main, el("h1", {}, "Schedules"),
    el("section", {}, el("table", { class: "stack" }, head(columns), schedules)),
    el("section", {}, el("h2", {}, "Webhook deliveries"),
      el("table", {}, head(["delivery", "event", "run", "state", "attempts", "last answer"]), deliveries)));
  if (!mayOperate()) {
    const only = (span) => el("tr", {}, el("td", { colspan: span, class: "muted" }, "Shown to operators only: use an operator's API key."));
    fill(schedules, only(columns.length));
    fill(deliveries, only(6));
    return () => {};
  }
  api("/v1/schedules").then((answer) => {
    fill(schedules, ...answer.schedules.map((s) => labelled(columns, el("tr", { "data-schedule": s.id },
      el("td", { class: "mono" }, s.id), el("td", {}, s.agent), el("td", { class: "mono" }, s.cron), el("td", {}, s.timezone),
      el("td", {}, s.paused ? "paused" : "active"),
      el("td", { "data-testid": "fired-by", title: s.engine || "eudaimon serve" }, s.engine ? "Temporal" : "serve"),
      nextCell(s), lastCell(s)))));
    if (!answer.schedules.length) fill(schedules, el("tr", {}, el("td", { colspan: columns.length, class: "muted" }, "No schedules. Add one with `eudaimon schedules add`.")));
  }, failed);
  api("/v1/webhooks/deliveries").then((answer) => {
    fill(deliveries, ...answer.deliveries.map((d) => {
      const last = d.attempts[d.attempts.length - 1];
      const said = !last ? "—" : last.status === null ? "unreachable" + (last.error ? " (" + last.error + ")" : "") : "HTTP " + last.status;
      return el("tr", { "data-delivery": d.id },
        el("td", { class: "mono" }, d.id), el("td", {}, d.event), el("td", { class: "mono" }, link(runHref(d.run_id), d.run_id)),
        el("td", {}, d.state), el("td", {}, d.attempts.length), el("td", {}, said));
    }));
    if (!answer.deliveries.length) {
      const why = answer.configured ? "No deliveries yet." : "This server sends no webhooks (eudaimon serve --webhook URL).";
      fill(deliveries, el("tr", {}, el("td", { colspan: 6, class: "muted" }, why)));
    }
  }, failed);
  return () => {};
}

// The next run: Temporal's next action time for a schedule Temporal fires, or why it is unknown.
function nextCell(s) {
  if (s.times_from === "unavailable") {
    return el("td", { "data-testid": "next-run", class: "muted", title: s.engine_error || "" }, "Temporal did not answer");
  }
  const said = s.next_run_at ? when(s.next_run_at) : "—";
  return el("td", { "data-testid": "next-run" }, s.times_from === "engine" ? said + " (Temporal)" : said);
}

// The last run (a link to it), and for a schedule Temporal fires, Temporal's last action time.
function lastCell(s) {
  const run = s.last_run_id ? link(runHref(s.last_run_id), when(s.last_slot)) : "—";
  if (s.times_from !== "engine") return el("td", { "data-testid": "last-run" }, run);
  const action = el("div", { class: "muted", "data-testid": "last-action" },
    s.engine_last_at ? "Temporal's last action: " + when(s.engine_last_at) : "Temporal's last action: none yet");
  return el("td", { "data-testid": "last-run" }, run, action);
}
