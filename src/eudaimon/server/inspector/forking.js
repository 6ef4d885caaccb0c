// Forking with care: a fork re-runs what the parent did after the fork point, so before it is
// made the page lists the WRITE and IRREVERSIBLE calls the parent ran after that event and
// asks; the fork may also be created without starting it (started later with Resume).
import { api, el, failed, fill, go, runHref } from "./shared.js";
import { revealedJson } from "./reveal.js";

const CAREFUL = new Set(["write", "irreversible", "unknown"]);

// The calls with effects the parent started after `atSeq`: the server knows each tool's effect.
export async function askToFork(dialog, runId, atSeq) {
  let effects;
  try {
    const answer = await api("/v1/runs/" + encodeURIComponent(runId) + "/effects?after_seq=" + atSeq);
    effects = answer.calls.filter((c) => CAREFUL.has(c.effect));
  } catch (problem) { failed(problem); return; }
  const path = "/v1/runs/" + encodeURIComponent(runId) + "/fork";
  const error = el("p", { class: "err", role: "alert" });
  async function fork(event, start) {
    const button = event.currentTarget;
    button.disabled = true;
    try {
      const child = await api(path, { method: "POST", body: { at_seq: atSeq, start } });
      dialog.close();
      go(runHref(child.run_id));
    } catch (problem) { fill(error, problem.message); failed(problem); } finally { button.disabled = false; }
  }
  fill(dialog,
    el("h2", { id: "fork-title" }, "Fork this run after event " + atSeq + "?"),
    el("p", {}, "The fork keeps the history up to event " + atSeq + " and goes on from there as a new run."),
    effects.length
      ? [el("p", { class: "warning", "data-testid": "fork-effects-warning" }, "After this point the parent ran " + effects.length + " call" + (effects.length > 1 ? "s" : "") +
          " with effects. A fork that is started may run them again (with new idempotency keys):"),
        el("ul", { "data-testid": "fork-effects" }, effects.map((c) => el("li", { "data-call": c.call_id, "data-effect": c.effect },
          el("b", {}, c.effect.toUpperCase()), " ", el("span", { class: "mono" }, c.tool + " · " + c.call_id + " (event " + c.seq + ") "), el("code", {}, revealedJson(c.arguments)))))]
      : el("p", { "data-testid": "fork-effects-none" }, "The parent ran no WRITE or IRREVERSIBLE call after this point."),
    el("div", { class: "row" },
      el("button", { class: effects.length ? "danger" : "primary", "data-action": "fork", "data-testid": "fork-and-start", onclick: (e) => fork(e, true) }, "Fork and run it"),
      el("button", { "data-action": "fork", "data-testid": "fork-without-start", onclick: (e) => fork(e, false) }, "Fork, but do not start it"),
      el("button", { "data-testid": "fork-cancel", onclick: () => dialog.close() }, "Keep the run as it is")),
    error);
  dialog.showModal();
}

