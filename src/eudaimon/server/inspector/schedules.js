// Schedules (their next and last runs) and webhook deliveries (each attempt and the answer).
// Both lists are for operators: a viewer's key is told so instead. A schedule Temporal fires
// (`engine` set) says so, and its next and last times are Temporal's own (`times_from`).
// An operator pauses, resumes and removes a schedule here (removal asks first); the lists
// reload by themselves, so a page left open shows the next run, not the one it was opened at.
import { api, el, failed, fill, labelled, link, mayOperate, notice, reloadEvery, runHref, when } from "./shared.js";

const RELOAD_EVERY_MS = 5000;

export function schedulesPage(main) {
  const schedules = el("tbody", { "data-testid": "schedules" });
  const deliveries = el("tbody", { "data-testid": "webhook-deliveries" });
  const columns = ["schedule", "agent", "cron", "zone", "state", "fired by", "next run", "last run", "actions"];
  const removeDialog = el("dialog", { class: "fork", "data-testid": "remove-confirm", "aria-labelledby": "remove-title" });
  const head = (names) => el("thead", {}, el("tr", {}, names.map((h) => el("th", { scope: "col" }, h))));
  fill(main, el("h1", {}, "Schedules"),
    el("section", {}, el("table", { class: "stack" }, head(columns), schedules)),
    el("section", {}, el("h2", {}, "Webhook deliveries"),
      el("table", {}, head(["delivery", "event", "run", "state", "attempts", "last answer"]), deliveries)),
    removeDialog);
  if (!mayOperate()) {
    const only = (span) => el("tr", {}, el("td", { colspan: span, class: "muted" }, "Shown to operators only: use an operator's API key."));
    fill(schedules, only(columns.length));
    fill(deliveries, only(6));
    return () => {};
  }
  async function loadSchedules() {
    try {
      const answer = await api("/v1/schedules");
      fill(schedules, ...answer.schedules.map((s) => labelled(columns, el("tr", { "data-schedule": s.id },
        el("td", { class: "mono" }, s.id), el("td", {}, s.agent), el("td", { class: "mono" }, s.cron), el("td", {}, s.timezone),
        el("td", { "data-testid": "state" }, s.paused ? "paused" : "active"),
        el("td", { "data-testid": "fired-by", title: s.engine || "eudaimon serve" }, s.engine ? "Temporal" : "serve"),
        nextCell(s), lastCell(s), actionsCell(s)))));
      if (!answer.schedules.length) fill(schedules, el("tr", {}, el("td", { colspan: columns.length, class: "muted" }, "No schedules. Add one with `eudaimon schedules add`.")));
    } catch (problem) { failed(problem); }
  }

  async function loadDeliveries() {
    try {
      const answer = await api("/v1/webhooks/deliveries");
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
    } catch (problem) { failed(problem); }
  }

  const path = (s) => "/v1/schedules/" + encodeURIComponent(s.id);

  async function act(button, label, request) {
    button.disabled = true;
    try {
      await request();
      notice(label + ": done");
      await loadSchedules();
    } catch (problem) { failed(problem); } finally { button.disabled = false; }
  }

  function actionsCell(s) {
    const pause = el("button", { "data-action": "pause", "data-testid": s.paused ? "resume" : "pause",
      onclick: (e) => act(e.currentTarget, (s.paused ? "Resume " : "Pause ") + s.id,
        () => api(path(s) + "/pause", { method: "POST", body: { paused: !s.paused } })) }, s.paused ? "Resume" : "Pause");
    const remove = el("button", { class: "danger", "data-action": "remove", "data-testid": "remove", onclick: () => askToRemove(s) }, "Remove");
    return el("td", {}, el("div", { class: "row" }, pause, remove));
  }

  function askToRemove(s) {
    const confirm = el("button", { class: "danger", "data-action": "remove", "data-testid": "remove-confirmed", onclick: (e) => {
      const removing = act(e.currentTarget, "Remove " + s.id, () => api(path(s), { method: "DELETE" }));
      removeDialog.close();
      return removing;
    } }, "Remove it");
    fill(removeDialog,
      el("h2", { id: "remove-title" }, "Remove schedule " + s.id + "?"),
      el("p", {}, s.agent + " will no longer be started at '" + s.cron + "' (" + s.timezone + "). The runs it started stay. " +
        "To stop it for a while instead, pause it."),
      el("div", { class: "row" }, confirm, el("button", { "data-testid": "remove-cancel", onclick: () => removeDialog.close() }, "Keep it")));
    removeDialog.showModal();
  }

  const stops = [reloadEvery(RELOAD_EVERY_MS, loadSchedules), reloadEvery(RELOAD_EVERY_MS, loadDeliveries)];
  return () => stops.forEach((stop) => stop());
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
