// Deadlines as countdowns: an element per deadline, its text brought up to date every second
// by one timer for the whole page (`data-deadline` holds the ISO time, for tests and scripts).
import { el } from "./shared.js";

function left(deadline) {
  const ms = new Date(deadline).getTime() - Date.now();
  if (ms <= 0) return "the deadline passed";
  const s = Math.ceil(ms / 1000);
  if (s < 120) return s + " s left";
  if (s < 7200) return Math.floor(s / 60) + " min " + (s % 60) + " s left";
  if (s < 172800) return Math.floor(s / 3600) + " h " + Math.floor((s % 3600) / 60) + " min left";
  return Math.floor(s / 86400) + " days left";
}

function tick() {
  for (const node of document.querySelectorAll("[data-countdown]")) {
    const text = left(node.dataset.deadline);
    if (node.textContent !== text) node.textContent = text;
    node.classList.toggle("overdue", text === "the deadline passed");
  }
}

let timer = null;

// A deadline and what it does: "decide by …, 42 s left; then the call is denied".
export function deadlineNote(deadline, onTimeout) {
  if (!deadline) return el("span", { class: "muted", "data-testid": "no-deadline" }, "no deadline");
  if (timer === null) timer = setInterval(tick, 1000);
  const then = onTimeout === "cancel" ? "then the run is cancelled" : "then the call is denied";
  return el("span", { class: "deadline", "data-testid": "deadline", "data-deadline": deadline },
    "decide by " + new Date(deadline).toLocaleString() + " · ",
    el("b", { "data-countdown": "", "data-deadline": deadline, "data-testid": "countdown", role: "timer", "aria-live": "off" }, left(deadline)),
    " · " + then);
}
