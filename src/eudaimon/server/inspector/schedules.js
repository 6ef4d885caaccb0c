// Schedules (their next and last runs) and webhook deliveries (each attempt and the answer).
// Both lists are for operators: a viewer's key is told so instead.
import { api, el, failed, fill, labelled, link, mayOperate, runHref, when } from "./shared.js";

export function schedulesPage(main) {
  const schedules = el("tbody", { "data-testid": "schedules" });
  const deliveries = el("tbody", { "data-testid": "webhook-deliveries" });
  const columns = ["schedule", "agent", "cron", "zone", "state", "next run", "last run"];
  const head = (names) => el("thead", {}, el("tr", {}, names.map((h) => el("th", { scope: "col" }, h))));
  fill(main, el("h1", {}, "Schedules"),
    el("section", {}, el("table", { class: "stack" }, head(columns), schedules)),
    el("section", {}, el("h2", {}, "Webhook deliveries"),
      el("table", {}, head(["delivery", "event", "run", "state", "attempts", "last answer"]), deliveries)));
  if (!mayOperate()) {
    const only = (span) => el("tr", {}, el("td", { colspan: span, class: "muted" }, "Shown to operators only: use an operator's API key."));
    fill(schedules, only(7));
    fill(deliveries, only(6));
    return () => {};
  }
  api("/v1/schedules").then((answer) => {
    fill(schedules, ...answer.schedules.map((s) => labelled(columns, el("tr", { "data-schedule": s.id },
      el("td", { class: "mono" }, s.id), el("td", {}, s.agent), el("td", { class: "mono" }, s.cron), el("td", {}, s.timezone),
      el("td", {}, s.paused ? "paused" : "active"),
      el("td", { "data-testid": "next-run" }, s.next_run_at ? when(s.next_run_at) : "—"),
      el("td", { "data-testid": "last-run" }, s.last_run_id ? link(runHref(s.last_run_id), when(s.last_slot)) : "—")))));
    if (!answer.schedules.length) fill(schedules, el("tr", {}, el("td", { colspan: 7, class: "muted" }, "No schedules. Add one with `eudaimon schedules add`.")));
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
