// Long texts folded: a model message or a tool's output can be pages long, and drawn whole it
// made a run page thousands of pixels tall. The first lines show; a <details> opens the rest.
import { el, fill } from "./shared.js";
import { revealed } from "./reveal.js";

const MAX_CHARS = 600;
const MAX_LINES = 8;

export function folded(text, testid = "folded") {
  const value = String(text ?? "");
  const lines = value.split("\n");
  if (value.length <= MAX_CHARS && lines.length <= MAX_LINES) return revealed(value);
  let head = lines.slice(0, MAX_LINES).join("\n");
  if (head.length > MAX_CHARS) head = head.slice(0, MAX_CHARS);
  return el("details", { class: "fold", "data-testid": testid },
    el("summary", {}, el("span", { class: "fold-head" }, revealed(head + "…")), el("span", { class: "fold-more" }, "show all " + value.length.toLocaleString("en") + " characters")),
    el("div", { class: "fold-all" }, revealed(value)));
}

// A page drawn again (a waiting run's page is, every second, as its stream ends and reconnects)
// must not shut what the operator opened: folds open before stay open, by position — a
// conversation and a list of decisions only grow.
export function fillKeepingFolds(node, ...children) {
  const open = [...node.querySelectorAll("details.fold")].map((fold) => fold.open);
  fill(node, ...children);
  node.querySelectorAll("details.fold").forEach((fold, i) => { if (open[i]) fold.open = true; });
}
