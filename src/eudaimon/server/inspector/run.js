// A run's page: what it is, what waits for a human, its waterfall and tree, the conversation,
// the decisions, usage, every event, and time travel. It follows the journal's stream for as
// long as the run has not ended, so a decision made anywhere shows here.
import { ENDED, api, connection, el, failed, fill, follow, json, link, mayOperate, millis, money, notice, runHref, statusBadge, when } from "./shared.js";
import { revealed, revealedJson } from "./reveal.js";
import { fillKeepingFolds, folded } from "./fold.js";
import { summarize } from "./summaries.js";
import { drawTree, drawWaterfall, spansOf } from "./waterfall.js";
import { pendingApproval, unknownOutcome } from "./approvals.js";
import { askToFork } from "./forking.js";
import { editDiff } from "./edits.js";
import { effectsPanel } from "./effects.js";
import { drawReplayDiff } from "./replay.js";

function messageView(message, toolNames, edits = new Map()) {
  const kind = message.is_error ? "error" : message.role;
  const name = message.tool_call_id ? toolNames.get(message.tool_call_id) : null;
  return el("div", { class: "msg " + kind, "data-testid": "message" },
    el("div", { class: "role" }, el("span", { class: "role-name" }, message.role),
      name ? [" · ", el("span", { class: "tool-name", "data-testid": "tool-name" }, name)] : null,
      message.tool_call_id ? [" · ", el("span", { class: "call-id mono", "data-testid": "call-id" }, message.tool_call_id)] : null),
    message.content ? el("div", { class: "text" }, folded(message.content, "folded-message")) : null,
    message.tool_calls.flatMap((call) => [el("div", { class: "mono" }, "→ " + call.name + " ", el("span", { class: "call-id", "data-testid": "call-id" }, call.id), " ", folded(json(call.arguments), "folded-arguments")),
      edits.has(call.id) ? editDiff(edits.get(call.id)) : null]));
}

function toolNamesOf(messages) {
  const names = new Map();
  for (const m of messages) for (const c of m.tool_calls) names.set(c.id, c.name);
  return names;
}

export function runPage(main, runId) {
  const title = el("h1", {}, "Run ", el("span", { class: "mono" }, runId), " ");
  const facts = el("div", { class: "facts", "data-testid": "facts" });
  const actions = el("div", { class: "row" });
  const waiting = el("div", { "data-testid": "waiting" });
  const waterfall = el("div", { class: "waterfall", "data-testid": "waterfall" });
  const tree = el("section", { "data-testid": "run-tree", hidden: true });
  const replayDiff = el("section", { "data-testid": "replay-diff", hidden: true });
  let replayDrawn = false;
  const conversation = el("div", { "data-testid": "conversation" });
  const live = el("div", { class: "live mono", "data-testid": "live", "aria-live": "off" });
  const liveBox = el("div", { class: "live-box", hidden: true }, el("h3", { class: "muted" }, "Model output as it streams"), live);
  const decisions = el("tbody", { "data-testid": "decisions" });
  const steps = el("tbody", { "data-testid": "steps" });
  const timeline = el("tbody", { "data-testid": "timeline" });
  const effects = effectsPanel();
  const forkDialog = el("dialog", { class: "fork", "data-testid": "fork-confirm", "aria-labelledby": "fork-title" });
  const ticks = el("datalist", { id: "travel-events" });
  const slider = el("input", { type: "range", min: 0, max: 0, value: 0, id: "travel", list: "travel-events", "data-testid": "travel", "aria-describedby": "travel-at" });
  const travelAt = el("div", { class: "travel-at mono", id: "travel-at", "data-testid": "travel-at" });
  const travelLabel = el("div", { class: "muted", "data-testid": "travel-label" }, "Move the slider to see the run as it was after any event.");
  const travelState = el("div", { "data-testid": "travel-state" });
  fill(main,
    title, facts, actions, waiting, replayDiff,
    el("section", {}, el("h2", {}, "Waterfall"), waterfall), tree, effects.section,
    el("div", { class: "grid" },
      el("div", {},
        el("section", {}, el("h2", {}, "Conversation"), conversation, liveBox),
        el("section", {}, el("h2", {}, el("label", { for: "travel" }, "Time travel")), slider, ticks, travelAt, travelLabel, travelState)),
      el("div", {},
        el("section", {}, el("h2", {}, "Decisions"), el("table", {}, el("thead", {}, el("tr", {}, ["seq", "what", "call", "by", "note / output"].map((h) => el("th", { scope: "col" }, h)))), decisions)),
        el("section", {}, el("h2", {}, "Usage per step"), el("table", {}, el("thead", {}, el("tr", {}, ["step", "model", "in", "out", "cost", "time"].map((h) => el("th", { scope: "col" }, h)))), steps)))),
    el("section", {}, el("h2", {}, "Timeline"), el("table", { class: "timeline" }, el("thead", {}, el("tr", {}, ["seq", "type", "time", "summary", "actions"].map((h) => el("th", { scope: "col" }, h)))), timeline)),
    forkDialog);

  const events = [];
  let treeView = null;
  let lastSeq = -1;
  let waitingKey = null;
  let stop = () => {};
  let refreshing = null;
  let again = false;
  let drawQueued = false;

  function act(label, action, path, cls) {
    return el("button", { class: cls || "", "data-action": action, "data-testid": label.toLowerCase().replace(/\W+/g, "-"), onclick: async (event) => {
      const button = event.currentTarget;
      button.disabled = true;
      try {
        await api(path, { method: "POST", body: {} });
        notice(label + ": done");
        await refresh();
      } catch (error) { failed(error); } finally { button.disabled = false; }
    } }, label);
  }

  // Resume applies to a fork made not to start (its last event the copied run_started, held),
  // never to a running run: a run whose driver was lost is taken over by the recovery sweep.
  function heldFork() {
    const last = events[events.length - 1];
    return !!last && last.type === "run_started" && !!last.parent && !!last.parent.held;
  }

  function labelSlider() {
    const seq = Number(slider.value);
    const row = timeline.querySelector('[data-seq="' + seq + '"]');
    const text = "event " + seq + " of " + lastSeq + (row ? ": " + row.dataset.type : "");
    slider.setAttribute("aria-valuetext", text);
    fill(travelAt, text);
  }

  function pick(span) {
    if (span.child) return;
    const row = timeline.querySelector('[data-seq="' + span.seq + '"]');
    if (!row) return;
    for (const other of timeline.querySelectorAll(".picked")) other.classList.remove("picked");
    row.classList.add("picked");
    row.querySelector("pre").hidden = false;
    row.scrollIntoView({ block: "center" });
    row.querySelector("button").focus({ preventScroll: true });
  }

  function redraw() {
    if (drawQueued) return;
    drawQueued = true;
    requestAnimationFrame(() => { drawQueued = false; drawWaterfall(waterfall, spansOf(events, treeView, runId), pick); });
  }

  async function loadTree() {
    try { treeView = await api("/v1/runs/" + encodeURIComponent(runId) + "/tree"); drawTree(tree, treeView, runId); redraw(); } catch (error) { failed(error); }
  }

  // The journal reads "running" whether a process is at work or was killed: the run's lease tells,
  // and a lease lapses without an event, so a running run's page asks again every few seconds.
  let driverCheck = null;
  function driverFact(run) {
    clearTimeout(driverCheck);
    if (run.status !== "running" || run.driven_by_engine) return null;
    driverCheck = setTimeout(refresh, 5000);
    if (run.driver) return el("span", { "data-testid": "driver" }, "driven by ", el("b", { class: "mono" }, run.driver.owner));
    return el("span", { class: "err", "data-testid": "no-driver" },
      "no process drives this run now (the one that drove it ended or stalled): a server serving its agent on this store takes it over");
  }

  function render(run) {
    const operate = mayOperate();
    fill(title, "Run ", el("span", { class: "mono" }, run.run_id), " ", statusBadge(run.status));
    fill(facts,
      el("span", {}, "agent ", el("b", {}, run.agent)),
      run.thread_id ? el("span", {}, "thread ", link("/threads/" + encodeURIComponent(run.thread_id), run.thread_id)) : null,
      el("span", {}, "steps ", el("b", { "data-testid": "steps-count" }, run.steps)),
      el("span", {}, "tokens ", el("b", {}, run.usage.input_tokens + " in / " + run.usage.output_tokens + " out")),
      el("span", { title: run.unpriced || null }, "cost ", el("b", { "data-testid": "run-cost" }, money(run.cost_usd))),
      el("span", {}, "events ", el("b", {}, run.event_count)),
      driverFact(run),
      run.version ? el("span", {}, "version ", el("b", { "data-testid": "version" }, run.version)) : null,
      run.replay_of ? el("span", {}, "replay of ", link(runHref(run.replay_of), run.replay_of)) : null,
      (run.agent_changes || []).map((c) => el("span", { class: "err", "data-testid": "agent-change" },
        "agent changed to " + (c.version || "?") + ": " + (c.changes.join("; ") || "unnamed parts"))),
      run.parent ? el("span", {}, "forked from ", link(runHref(run.parent.run_id), run.parent.run_id + "@" + run.parent.seq)) : null,
      run.error ? el("span", { class: "err" }, run.error) : null);
    if (run.replay_of && !replayDrawn) {
      replayDrawn = true;
      drawReplayDiff(replayDiff, runId).catch((error) => { replayDrawn = false; failed(error); });
    }
    const ended = ENDED.includes(run.status);
    const base = "/v1/runs/" + encodeURIComponent(runId);
    fill(actions,
      operate && !run.driven_here && heldFork() ? act("Resume", "resume", base + "/resume") : null,
      operate && !ended ? act("Cancel run", "cancel", base + "/cancel", "danger") : null);
    // Rebuilt only when what waits changes: a refresh must not wipe a note being typed.
    const key = JSON.stringify([operate, run.pending_approvals.map((c) => c.call_id), run.unknown_outcomes.map((c) => c.call_id)]);
    if (key !== waitingKey) {
      waitingKey = key;
      fill(waiting,
        run.pending_approvals.map((call) => pendingApproval(runId, call, run.pending_approvals, refresh)),
        run.unknown_outcomes.map((call) => unknownOutcome(runId, call, refresh)));
    }
    const edits = new Map(run.decisions.filter((d) => d.kind === "approval" && d.arguments).map((d) => [d.call_id, d]));
    fillKeepingFolds(conversation, ...run.messages.filter((m) => m.role !== "system").map((m) => messageView(m, toolNamesOf(run.messages), edits)));
    fillKeepingFolds(decisions, ...run.decisions.map((d) => el("tr", { "data-testid": "decision" },
      el("td", {}, d.seq),
      el("td", {}, d.kind === "approval" ? (d.approved ? "approved" : "denied") : d.kind === "reconcile" ? (d.retry ? "retry" : "settled") : "cancelled"),
      el("td", { class: "mono call-id", "data-testid": "call-id" }, d.call_id || ""), el("td", { "data-testid": "decided-by" }, d.by || "—"),
      el("td", {}, folded(d.note || d.output || "", "folded-decision"), d.arguments ? editDiff(d) : null))));
    if (!run.decisions.length) fill(decisions, el("tr", {}, el("td", { colspan: 5, class: "muted" }, "No human decisions yet.")));
    fill(steps, ...run.step_usage.map((s) => el("tr", {},
      el("td", {}, s.step), el("td", {}, s.model), el("td", {}, s.usage.input_tokens), el("td", {}, s.usage.output_tokens),
      el("td", { "data-testid": "step-cost" }, money(s.cost_usd)), el("td", {}, millis(s.duration_ms)))));
  }

  function addEvent(event) {
    if (event.seq <= lastSeq) return;
    lastSeq = event.seq;
    events.push(event);
    const raw = el("pre", { hidden: true }, revealedJson(event));
    timeline.append(el("tr", { "data-testid": "event", "data-seq": event.seq, "data-type": event.type },
      el("td", {}, event.seq), el("td", { class: "mono" }, event.type), el("td", { class: "time" }, when(event.at)),
      el("td", { class: "summary", "data-testid": "summary" }, revealed(summarize(event)), raw),
      el("td", { class: "buttons" },
        el("button", { "aria-label": "JSON of event " + event.seq, onclick: () => { raw.hidden = !raw.hidden; } }, "JSON"), " ",
        mayOperate() && event.type !== "run_queued" ? el("button", { "data-action": "fork", "data-testid": "fork-here", onclick: () => askToFork(forkDialog, runId, event.seq) }, "Fork here") : null)));
    const atEnd = Number(slider.value) === Number(slider.max);
    slider.max = String(lastSeq);
    if (atEnd) slider.value = String(lastSeq);
    ticks.append(el("option", { value: event.seq, label: event.seq + " " + event.type }));
    labelSlider();
    if (["run_started", "tool_completed", "tool_outcome_unknown", "approval_requested", "handed_off"].includes(event.type) || ENDED.includes(event.type.replace("run_", ""))) loadTree();
    redraw();
  }

  // One GET at a time; a change while it is in flight asks for one more after it.
  async function refresh() {
    if (refreshing) { again = true; return refreshing; }
    refreshing = (async () => {
      do {
        again = false;
        try { render(await api("/v1/runs/" + encodeURIComponent(runId))); } catch (error) { failed(error); }
        await effects.load(runId);
      } while (again);
      refreshing = null;
    })();
    return refreshing;
  }

  // The streamed text shows, under its heading, only while there is some.
  function streamed(text) { live.append(text); liveBox.hidden = false; }
  function quiet() { fill(live); liveBox.hidden = true; }

  function startStream() {
    stop();
    stop = follow("/v1/runs/" + encodeURIComponent(runId) + "/events/stream", lastSeq, (kind, data) => {
      if (kind === "text_delta") { streamed(data.text); return; }
      if (kind === "tool_call_start") { streamed("\n→ " + data.name + " "); return; }
      if (kind === "tool_call_delta") { streamed(data.arguments_delta); return; }
      if (kind === "tool_call_end") { streamed("\n"); return; }
      if (kind === "end") { quiet(); refresh(); return; }
      if (kind === "model_called") quiet();
      addEvent(data);
      refresh();
    });
  }

  slider.addEventListener("input", async () => {
    const seq = Number(slider.value);
    labelSlider();
    try {
      const state = await api("/v1/runs/" + encodeURIComponent(runId) + "/state?at_seq=" + seq);
      const row = timeline.querySelector('[data-seq="' + seq + '"]');
      const type = row ? row.dataset.type : "";
      fill(travelLabel, "State after event " + seq + (type ? " (" + type + ")" : "") + ": ", statusBadge(state.status),
        " · " + state.steps + " step(s) · " + state.messages.length + " message(s)" + (state.pending.length ? " · waiting: " + state.pending.map((p) => p.tool).join(", ") : ""));
      fill(travelState, ...state.messages.filter((m) => m.role !== "system").map((m) => messageView(m, toolNamesOf(state.messages))));
    } catch (error) { failed(error); }
  });

  refresh().then(startStream);
  loadTree();
  const unback = connection.onBack(() => { refresh(); loadTree(); });
  // A wait or a call still open grows: its bar is drawn again every second while one is on the page.
  const ticking = setInterval(() => { if (waterfall.querySelector("[data-waiting], [data-live]")) redraw(); }, 1000);
  return () => { stop(); unback(); clearInterval(ticking); };
}
