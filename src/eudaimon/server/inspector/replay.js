// A replay beside its original (GET /v1/runs/{id}/replay): one row per step, the original's
// decision (calls and arguments, or its text) and the replay's, the first divergence marked.
import { api, el, fill, json, link, runHref } from "./shared.js";
import { revealed } from "./reveal.js";

function decisionView(decision) {
  if (!decision) return el("span", { class: "muted" }, "(no step)");
  if (decision.calls.length) {
    return decision.calls.map((c) => el("div", { class: "mono" }, "→ " + c.tool + " ", revealed(json(c.arguments))));
  }
  return el("div", { class: "text" }, revealed(decision.text));
}

export async function drawReplayDiff(section, runId) {
  const diff = await api("/v1/runs/" + encodeURIComponent(runId) + "/replay");
  const rows = diff.steps.map((s) => el("tr", {
    "data-testid": "replay-step", "data-step": s.step, "data-same": String(s.same),
    ...(s.step === diff.diverged_at ? { "data-diverged": "true", class: "diverged" } : {}),
  },
  el("td", {}, s.step, s.step === diff.diverged_at ? el("div", { class: "err", "data-testid": "first-divergence" }, "first divergence") : null),
  el("td", {}, decisionView(s.original)), el("td", {}, decisionView(s.replay))));
  fill(section,
    el("h2", {}, "Replay beside its original"),
    el("div", { class: "muted" }, "original ", link(runHref(diff.of), diff.of),
      diff.original_version ? " (" + diff.original_version + ")" : "", " · replay", diff.version ? " (" + diff.version + ")" : "",
      " · ", diff.diverged_at === null ? "same decisions throughout" : "diverged at step " + diff.diverged_at,
      " · ", link("/?replay_of=" + encodeURIComponent(diff.of), "all replays of this run")),
    el("table", {}, el("thead", {}, el("tr", {}, ["step", "original", "replay"].map((h) => el("th", {}, h)))), el("tbody", {}, rows)));
  section.hidden = false;
}
