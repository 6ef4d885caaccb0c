// A run's effects in one place: one row per call that is not READ (GET /v1/runs/{id}/effects),
// with its effect class, datasource, idempotency key, attempts, outcome, the approval behind it
// and its result. A row links to its span on the waterfall and its intent on the timeline.
import { api, el, failed, fill, json, labelled, when } from "./shared.js";
import { revealed } from "./reveal.js";

const OUTCOMES = {
  done: "done",
  committed: "committed in datasource",
  in_doubt: "in doubt",
  reconciled: "reconciled",
  denied: "denied",
  never_ran: "never ran",
  running: "running",
  awaiting_approval: "awaiting approval",
};

function outcomeText(e) {
  let text = OUTCOMES[e.outcome] || e.outcome;
  if (e.recovered) text += " (read back by recovery)";
  if (e.reconciled_by || e.reconciled_with) text += " by " + (e.reconciled_by || "an operator") + " with " + JSON.stringify(e.reconciled_with);
  // The reason usually says "denied by …" itself: "denied: denied by deadline" reads twice.
  if (e.outcome === "denied" && e.denied_reason) text = /^denied\b/.test(e.denied_reason) ? e.denied_reason : text + ": " + e.denied_reason;
  if (e.is_error && (e.outcome === "done" || e.outcome === "committed")) text += " (error)";
  return text;
}

function approvalText(a) {
  if (!a) return "";
  if (a.approved === null || a.approved === undefined) return "asked: " + a.reason;
  let text = (a.approved ? "approved" : "denied") + " by " + (a.by || "someone") + (a.decided_at ? " at " + when(a.decided_at) : "");
  if (a.edited_from !== null && a.edited_from !== undefined) text += ", edited from " + json(a.edited_from);
  return text;
}

function show(runRoot, e) {
  for (const other of runRoot.querySelectorAll(".picked")) other.classList.remove("picked");
  const span = runRoot.querySelector('[data-span][data-call="' + CSS.escape(e.call_id) + '"]');
  if (span) span.classList.add("picked");
  const row = e.started_seq === null ? null : runRoot.querySelector('[data-testid=event][data-seq="' + e.started_seq + '"]');
  if (row) {
    row.classList.add("picked");
    row.scrollIntoView({ block: "center" });
  }
}

export function effectsPanel() {
  const body = el("tbody", {});
  const columns = ["call", "tool", "effect", "datasource", "key", "attempts", "outcome", "approval", "result"];
  const section = el("section", { "data-testid": "effects" }, el("h2", {}, "Effects"),
    el("table", { class: "stack" }, el("thead", {}, el("tr", {}, columns.map((h) => el("th", { scope: "col" }, h)))), body));
  let shown = "";
  async function load(runId) {
    try {
      const answer = await api("/v1/runs/" + encodeURIComponent(runId) + "/effects");
      const key = JSON.stringify(answer.effects);
      if (key === shown) return;
      shown = key;
      if (!answer.effects.length) {
        fill(body, el("tr", {}, el("td", { colspan: 9, class: "muted" }, "No effects: no call that is not READ.")));
        return;
      }
      fill(body, ...answer.effects.map((e) => labelled(columns, el("tr", { "data-effect": e.effect, "data-call": e.call_id, "data-outcome": e.outcome },
        el("td", {}, el("button", { class: "mono call-id", "data-testid": "effect-call", "aria-label": "Show call " + e.call_id + " on the waterfall and timeline", onclick: () => show(section.parentElement || document, e) }, e.call_id)),
        el("td", { class: "tool-name" }, e.tool), el("td", {}, e.effect), el("td", {}, e.datasource || ""),
        el("td", { class: "mono", title: e.idempotency_key || "" }, (e.idempotency_key || "").slice(0, 12)),
        el("td", {}, e.attempts), el("td", { "data-testid": "effect-outcome" }, outcomeText(e)),
        el("td", { "data-testid": "effect-approval" }, approvalText(e.approval)),
        el("td", {}, revealed(e.result || ""))))));
    } catch (error) { failed(error); }
  }
  return { section, load };
}
