// The waterfall of a run: one bar per model call, tool call, approval wait, retry and child
// run, placed on one time axis from the journal's event times (ms after `run_started`). A call
// still in flight reaches now and says so (`data-live`: "3 min 10 s so far", not the time to
// the latest event, which was its own start); an approval not decided reaches now too
// (`data-waiting`), so its time waited grows. A call the run's end left open stops there. A run
// taken over after a crash (`run_taken_over`) shows what happened: the calls in flight end where
// the lost driver's last event was, and a takeover bar spans the time the run had no driver.
import { counted, el, fill, link, millis, runHref } from "./shared.js";

const QUIET_STOPS = new Set(["end_turn", "tool_use", "", undefined, null]);
const MODEL_ENDS = new Set(["model_called", "model_failed", "model_retry_scheduled", "model_context_rejected", "guardrail_rejected"]);

// Spans from the run's events (in seq order) and, for child runs, the tree's nodes.
// `now` (ms since the epoch, by default this browser's clock) is where a wait still open ends.
export function spansOf(events, tree, runId, now = Date.now()) {
  if (!events.length) return [];
  const t0 = Date.parse(events[0].at);
  const ms = (event) => Date.parse(event.at) - t0;
  const last = ms(events[events.length - 1]);
  const waitedTo = Math.max(last, now - t0);
  const bySeq = new Map(events.map((e) => [e.seq, e]));
  const spans = [];
  const openModel = new Map();   // request_id -> span
  const openTool = new Map();    // call_id -> span
  const openApproval = new Map();
  const close = (span, event) => { span.end = ms(event); span.open = false; };
  for (const event of events) {
    const t = ms(event);
    switch (event.type) {
      case "model_attempt_started": {
        const span = { kind: "model", label: "model " + (event.model || "") + " · step " + event.step, start: t, end: last, open: true, seq: event.seq };
        openModel.set(event.request_id, span); spans.push(span); break;
      }
      case "tool_started": {
        const span = { kind: "tool", label: event.tool + " · " + event.call_id + (event.attempt > 1 ? " · attempt " + event.attempt : ""), start: t, end: last, open: true, seq: event.seq, call: event.call_id };
        openTool.set(event.call_id, span); spans.push(span); break;
      }
      case "approval_requested": {
        const span = { kind: "approval", label: "approval of " + event.tool + " · " + event.call_id, start: t, end: waitedTo, open: true, waiting: true, seq: event.seq, call: event.call_id };
        openApproval.set(event.call_id, span); spans.push(span); break;
      }
      case "approval_decided": {
        const span = openApproval.get(event.call_id);
        if (span) { close(span, event); span.waiting = false; span.label += event.approved ? " · approved" : " · denied"; openApproval.delete(event.call_id); }
        break;
      }
      case "approval_timed_out": {
        const span = openApproval.get(event.call_id);
        if (span) { close(span, event); span.waiting = false; span.label += event.action === "cancel" ? " · timed out: run cancelled" : " · timed out: denied"; openApproval.delete(event.call_id); }
        break;
      }
      case "run_taken_over": {
        // The lost driver's calls end at its last event; the takeover spans the time without a driver.
        const lostEvent = bySeq.get(event.interrupted_seq);
        const lost = lostEvent ? ms(lostEvent) : t - (event.orphaned_ms || 0);
        for (const open of [openModel, openTool]) {
          for (const span of open.values()) { span.end = Math.max(span.start, lost); span.open = false; span.interrupted = true; span.label += " · interrupted: its process was lost"; }
          open.clear();
        }
        spans.push({
          kind: "takeover", start: lost, end: t, open: false, seq: event.seq, owner: event.owner, previous: event.previous_owner || "", orphaned: event.orphaned_ms,
          label: "taken over by " + event.owner + " from " + (event.previous_owner || "a driver whose lease lapsed") + " after " + millis(event.orphaned_ms || 0) + " without a driver",
        });
        break;
      }
      case "tool_completed": case "tool_outcome_unknown": case "tool_reconciled": case "tool_denied": {
        const span = openTool.get(event.call_id);
        if (span) {
          close(span, event); openTool.delete(event.call_id);
          if (event.type === "tool_completed" && event.is_error) span.label += " · error";
          if (event.type === "tool_outcome_unknown") span.label += " · outcome unknown";
        }
        break;
      }
      default:
        if (MODEL_ENDS.has(event.type)) {
          const span = openModel.get(event.request_id) || [...openModel.values()].pop();
          if (span) {
            close(span, event); openModel.delete(event.request_id);
            if (event.type === "model_called" && !QUIET_STOPS.has(event.stop_reason)) span.stop = event.stop_reason;
            if (event.type === "model_retry_scheduled") span.label += " · failed: " + firstLine(event.error);
            else if (event.type !== "model_called") span.label += " · " + event.type.replace("model_", "").replace(/_/g, " ");
          }
          if (event.type === "model_retry_scheduled") {
            // The same request is sent again after the delay: a retry bar for the wait, then a
            // model bar for the new try, which the request's next event ends.
            const delay = event.delay_ms || 0;
            spans.push({ kind: "retry", label: "retry " + event.retry_number + " after " + millis(delay) + ": " + firstLine(event.error), start: t, end: t + delay, open: false, seq: event.seq });
            const again = { kind: "model", label: (span ? span.label.split(" · ").slice(0, 2).join(" · ") : "model") + " · try " + (event.retry_number + 1), start: t + delay, end: Math.max(last, t + delay), open: true, seq: event.seq };
            openModel.set(event.request_id, again); spans.push(again);
          }
        } else if (["run_completed", "run_failed", "run_cancelled", "budget_exceeded"].includes(event.type)) {
          for (const span of [...openModel.values(), ...openTool.values(), ...openApproval.values()]) { close(span, event); span.waiting = false; }
        }
    }
  }
  for (const span of [...openModel.values(), ...openTool.values()]) {
    if (span.open) { span.end = Math.max(span.end, waitedTo); span.live = true; }
  }
  for (const node of (tree && tree.runs) || []) {
    if (node.parent_run_id !== runId || !node.created_at) continue;
    spans.push({
      kind: "child", label: "child run " + node.agent + " · " + node.run_id + " · " + node.status, child: node.run_id,
      start: Date.parse(node.created_at) - t0, end: Date.parse(node.updated_at) - t0, open: !["completed", "failed", "cancelled", "budget_exceeded"].includes(node.status),
      seq: null, call: node.call_id,
    });
  }
  spans.sort((a, b) => a.start - b.start || (a.seq ?? 1e18) - (b.seq ?? 1e18));
  return spans;
}

function firstLine(text) {
  return String(text || "").split("\n")[0].slice(0, 120);
}

function niceStep(total) {
  const rough = total / 6;
  const power = 10 ** Math.floor(Math.log10(Math.max(rough, 1)));
  return [1, 2, 5, 10].map((f) => f * power).find((s) => s >= rough) || power * 10;
}

// Draws the spans into `box`; `onPick(span)` is called when a bar is clicked.
export function drawWaterfall(box, spans, onPick) {
  if (!spans.length) { fill(box, el("p", { class: "muted" }, "Nothing has happened yet.")); return; }
  const total = Math.max(1, ...spans.map((s) => s.end));
  const step = niceStep(total);
  const axis = el("div", { class: "wf-axis", "aria-hidden": "true" });
  for (let t = 0; t <= total; t += step) {
    const tick = el("span", { class: "wf-tick" }, millis(t));
    tick.style.left = (100 * t / total) + "%";
    axis.append(tick);
  }
  const rows = spans.map((span) => {
    const duration = Math.max(0, span.end - span.start);
    const bar = el("button", {
      class: "wf-bar " + span.kind + (span.open ? " open" : ""), type: "button",
      "data-span": "", "data-kind": span.kind, "data-start-ms": Math.round(span.start), "data-duration-ms": Math.round(duration),
      "data-seq": span.seq, "data-call": span.call, "data-child": span.child, "data-stop-reason": span.stop, "data-open": span.open ? "true" : null,
      "data-waiting": span.waiting ? "" : null, "data-live": span.live ? "" : null, "data-interrupted": span.interrupted ? "true" : null,
      "data-owner": span.owner, "data-previous-owner": span.kind === "takeover" ? span.previous : null, "data-orphaned-ms": span.orphaned,
      title: span.label + " · " + millis(duration) + (span.open ? " so far" : ""),
      "aria-label": span.kind + ": " + span.label + ", " + millis(duration) + (span.waiting ? " waited so far" : span.open ? " so far" : "") + " from " + millis(span.start),
      onclick: () => onPick(span),
    });
    bar.style.left = (100 * span.start / total) + "%";
    bar.style.width = Math.max(0.4, 100 * duration / total) + "%";
    const label = el("div", { class: "wf-label" },
      el("span", { class: "wf-kind " + span.kind }, span.kind), " ",
      span.child ? link(runHref(span.child), span.label, "child-link") : span.label,
      span.stop ? el("span", { class: "wf-stop", "data-testid": "stop-reason" }, " stopped: " + span.stop) : null);
    return el("div", { class: "wf-row" }, label, el("div", { class: "wf-track" }, bar),
      el("div", { class: "wf-ms" }, millis(duration) + (span.waiting ? " waited so far" : span.interrupted ? " · lost" : span.open ? " so far" : "")));
  });
  fill(box, el("div", { class: "wf-row wf-head" }, el("div", { class: "wf-label muted" }, counted(spans.length, "span")), el("div", { class: "wf-track" }, axis), el("div", { class: "wf-ms muted" }, millis(total))), rows);
}

// The runs above and below this one, as nested lists of links.
export function drawTree(box, tree, runId) {
  const runs = (tree && tree.runs) || [];
  if (runs.length <= 1 && !(tree && tree.forked_from)) { fill(box); box.hidden = true; return; }
  box.hidden = false;
  const items = runs.map((node) => {
    const here = node.run_id === runId;
    return el("li", { "data-run": node.run_id, "data-depth": node.depth, class: "tree-depth-" + Math.min(node.depth, 8) + (here ? " here" : "") },
      here ? el("b", { class: "mono" }, node.run_id) : link(runHref(node.run_id), node.run_id, "tree-link"),
      " ", el("span", { class: "muted" }, node.agent), " ", el("span", { class: "status " + node.status }, node.status),
      node.call_id ? el("span", { class: "muted" }, " via call " + node.call_id) : null);
  });
  fill(box, el("h2", {}, "Runs in this tree"),
    tree.forked_from ? el("p", {}, "Forked from ", link(runHref(tree.forked_from.run_id), tree.forked_from.run_id + "@" + tree.forked_from.seq, "forked-from")) : null,
    runs.length > 1 ? el("ul", { class: "tree" }, items) : null);
}
