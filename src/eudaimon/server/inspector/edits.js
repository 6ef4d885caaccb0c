// An approver's edit, shown as one: what the model asked, what a human changed (from what to
// what), and what ran. The journal keeps both (`approval_decided.original_arguments` and
// `.arguments`); the Decisions table, the Conversation and the timeline all say it this way.
import { el, json } from "./shared.js";
import { revealed } from "./reveal.js";

const ABSENT = "(absent)";

export function changes(original, edited) {
  if (!original || typeof original !== "object" || !edited || typeof edited !== "object") {
    return JSON.stringify(original) === JSON.stringify(edited) ? [] : [{ key: "(arguments)", before: original, after: edited }];
  }
  const keys = [...Object.keys(original), ...Object.keys(edited).filter((k) => !(k in original))];
  return keys
    .map((key) => ({ key, before: key in original ? original[key] : ABSENT, after: key in edited ? edited[key] : ABSENT }))
    .filter((c) => JSON.stringify(c.before) !== JSON.stringify(c.after));
}

const shown = (value) => (value === ABSENT ? ABSENT : JSON.stringify(value));

export function editText(original, edited) {
  return changes(original, edited).map((c) => c.key + ": " + shown(c.before) + " → " + shown(c.after)).join("; ") || "(no change)";
}

// `decision` is a run view's decision with `arguments` (and `original_arguments`).
export function editDiff(decision) {
  return el("div", { class: "edit-diff", "data-testid": "edit-diff", "data-call": decision.call_id },
    el("span", { class: "muted" }, "edited by " + (decision.by || "?") + " before it ran: "),
    changes(decision.original_arguments, decision.arguments).map((c) => el("span", { class: "change", "data-field": c.key },
      revealed(c.key) , ": ", el("del", {}, revealed(shown(c.before))), " → ", el("ins", {}, revealed(shown(c.after))), " ")),
    el("div", { class: "mono muted", "data-testid": "ran-with" }, "ran with ", revealed(json(decision.arguments))));
}
