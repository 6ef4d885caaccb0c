// The eudaimon inspector: plain JavaScript, no build step, nothing fetched but this server's API.
// Every text that came from a run (model output, tool arguments and results, notes) is untrusted:
// it is only ever put on the page as text (textContent / text nodes), never as markup.
"use strict";

const KEY_STORAGE = "eudaimon.apiKey";
const STATUSES = ["running", "awaiting_approval", "awaiting_reconciliation", "completed", "failed", "cancelled", "budget_exceeded"];
let stopPage = () => {};
let ROOT = "";  // where the app is mounted: "" at the root of its server

// -- small helpers ---------------------------------------------------------------------------

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (name === "class") node.className = value;
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// `replaceChildren` would write a null child as the text "null": this skips it.
function fill(node, ...children) {
  node.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
}

function json(value) {
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}

function when(iso) {
  return iso ? new Date(iso).toLocaleString() : "";
}

function money(value) {
  return value === null || value === undefined ? "—" : "$" + Number(value).toFixed(6);
}

function statusBadge(status) {
  return el("span", { class: "status " + status, "data-testid": "status" }, status);
}

function notice(text, kind) {
  const box = document.getElementById("notice");
  fill(box, el("span", { class: kind || "ok" }, text));
  if (kind !== "err") setTimeout(() => { if (box.textContent === text) fill(box, ); }, 4000);
}

function apiKey() {
  return sessionStorage.getItem(KEY_STORAGE) || "";
}

function headers(extra) {
  const h = Object.assign({ Accept: "application/json" }, extra || {});
  if (apiKey()) h.Authorization = "Bearer " + apiKey();
  return h;
}

async function api(path, options) {
  const init = Object.assign({}, options || {});
  init.headers = headers(init.body ? { "Content-Type": "application/json" } : {});
  if (init.body && typeof init.body !== "string") init.body = JSON.stringify(init.body);
  const response = await fetch(ROOT + path, init);
  const text = await response.text();
  let body = null;
  try { body = text ? JSON.parse(text) : null; } catch (e) { body = { detail: text }; }
  if (!response.ok) {
    const detail = body && (body.message || body.detail);
    const error = new Error(typeof detail === "string" ? detail : response.status + " " + response.statusText);
    error.status = response.status;
    throw error;
  }
  return body;
}

function failed(error) {
  if (error && error.status === 401) notice("This server needs an API key: enter one above (" + error.message + ")", "err");
  else notice(error && error.message ? error.message : String(error), "err");
}

// Server-sent events over fetch, so the API key goes in a header and never in a URL.
function follow(path, lastId, onEvent, onEnd) {
  const controller = new AbortController();
  let cursor = lastId;
  let closed = false;
  (async () => {
    while (!closed) {
      try {
        const h = headers({ Accept: "text/event-stream" });
        if (cursor !== null && cursor !== undefined) h["Last-Event-ID"] = String(cursor);
        const response = await fetch(ROOT + path, { headers: h, signal: controller.signal });
        if (!response.ok) throw Object.assign(new Error("stream: " + response.status), { status: response.status });
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = "";
        let ended = false;
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          let cut;
          while ((cut = buffer.indexOf("\n\n")) >= 0) {
            const block = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            const message = { id: null, event: "message", data: "" };
            for (const line of block.split("\n")) {
              if (line.startsWith(":")) continue;
              const colon = line.indexOf(":");
              const field = colon < 0 ? line : line.slice(0, colon);
              const data = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
              if (field === "id") message.id = data;
              else if (field === "event") message.event = data;
              else if (field === "data") message.data += (message.data ? "\n" : "") + data;
            }
            if (!message.data) continue;
            if (message.id !== null) cursor = Number(message.id);
            const payload = JSON.parse(message.data);
            if (message.event === "end") ended = true;
            onEvent(message.event, payload, message.id);
          }
        }
        if (ended) { closed = true; onEnd(); return; }
      } catch (error) {
        if (closed || error.name === "AbortError") return;
        if (error.status === 401 || error.status === 404) { failed(error); return; }
      }
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  })();
  return () => { closed = true; controller.abort(); };
}

// -- pages -----------------------------------------------------------------------------------

function route() {
  stopPage();
  stopPage = () => {};
  const main = document.getElementById("main");
  const path = decodeURIComponent(location.pathname).slice(ROOT.length) || "/";
  let match;
  if ((match = path.match(/^\/runs\/(.+)$/))) runPage(main, match[1]);
  else if ((match = path.match(/^\/threads\/(.+)$/))) threadPage(main, match[1]);
  else if (path === "/threads") threadsPage(main);
  else runsPage(main);
}

function link(href, text, testid) {
  return el("a", { href: ROOT + href, "data-testid": testid, onclick: (event) => { event.preventDefault(); history.pushState(null, "", ROOT + href); route(); } }, text);
}

function runsPage(main) {
  const params = new URLSearchParams(location.search);
  const filter = el("select", { id: "status-filter", "data-testid": "status-filter" },
    el("option", { value: "" }, "all statuses"), STATUSES.map((s) => el("option", { value: s }, s)));
  filter.value = params.get("status") || "";
  const body = el("tbody", { "data-testid": "runs" });
  const more = el("div", { class: "row" });
  fill(main, 
    el("h1", {}, "Runs"),
    el("div", { class: "filters" }, el("label", { for: "status-filter" }, "Status"), filter, el("span", { class: "muted" }, "updates live")),
    el("section", {}, el("table", {}, el("thead", {}, el("tr", {}, ["run", "agent", "status", "thread", "events", "updated"].map((h) => el("th", {}, h)))), body), more),
  );
  let pages = 1;
  async function load() {
    try {
      const rows = [];
      let cursor = null;
      for (let page = 0; page < pages; page++) {
        const query = new URLSearchParams({ limit: "50" });
        if (filter.value) query.set("status", filter.value);
        if (cursor) query.set("cursor", cursor);
        const answer = await api("/v1/runs?" + query);
        rows.push(...answer.runs);
        cursor = answer.next_cursor;
        if (!cursor) break;
      }
      fill(body, ...rows.map((run) => el("tr", { "data-run": run.run_id },
        el("td", { class: "mono" }, link("/runs/" + encodeURIComponent(run.run_id), run.run_id, "run-link")),
        el("td", {}, run.agent), el("td", {}, statusBadge(run.status)),
        el("td", {}, run.thread_id ? link("/threads/" + encodeURIComponent(run.thread_id), run.thread_id) : ""),
        el("td", {}, run.event_count), el("td", {}, when(run.updated_at)))));
      if (!rows.length) fill(body, el("tr", {}, el("td", { colspan: 6, class: "muted" }, "No runs" + (filter.value ? " with status " + filter.value : "") + ".")));
      fill(more, cursor ? el("button", { onclick: () => { pages += 1; load(); } }, "More") : "");
    } catch (error) { failed(error); }
  }
  filter.addEventListener("change", () => {
    const query = filter.value ? "?status=" + filter.value : "";
    history.replaceState(null, "", ROOT + "/" + query);
    load();
  });
  load();
  const timer = setInterval(load, 2000);
  stopPage = () => clearInterval(timer);
}

function messageView(message) {
  const kind = message.is_error ? "error" : message.role;
  return el("div", { class: "msg " + kind, "data-testid": "message" },
    el("div", { class: "role" }, message.role + (message.tool_call_id ? " · " + message.tool_call_id : "")),
    message.content ? el("div", { class: "text" }, message.content) : null,
    message.tool_calls.map((call) => el("div", { class: "mono" }, "→ " + call.name + " " + json(call.arguments))));
}

function summarize(event) {
  switch (event.type) {
    case "run_started": return "input: " + event.input;
    case "model_attempt_started": return "step " + event.step + " · " + (event.model || "");
    case "model_called": {
      const calls = (event.message.tool_calls || []).map((c) => c.name).join(", ");
      return "step " + event.step + ": " + (calls ? "calls " + calls : (event.message.content || "")).slice(0, 160);
    }
    case "approval_requested": return event.tool + " waits for approval";
    case "approval_decided": return (event.approved ? "approved" : "denied") + " by " + (event.by || "?") + (event.note ? ": " + event.note : "");
    case "tool_started": return event.tool + " (attempt " + (event.attempt || 1) + ")";
    case "tool_completed": return event.tool + (event.is_error ? " failed: " : " → ") + String(event.output).slice(0, 160);
    case "tool_outcome_unknown": return event.tool + ": outcome unknown";
    case "tool_reconciled": return (event.retry ? "retry" : "settled: " + event.output) + " by " + (event.by || "?");
    case "tool_denied": return event.tool + ": " + (event.reason || "denied");
    case "run_completed": return String(event.output).slice(0, 160);
    case "run_failed": return event.error;
    case "run_cancelled": return (event.reason || "cancelled") + (event.by ? " by " + event.by : "");
    default: return "";
  }
}

function runPage(main, runId) {
  const title = el("h1", {}, "Run ", el("span", { class: "mono" }, runId), " ");
  const facts = el("div", { class: "facts", "data-testid": "facts" });
  const actions = el("div", { class: "row" });
  const waiting = el("div", { "data-testid": "waiting" });
  const conversation = el("div", { "data-testid": "conversation" });
  const live = el("div", { class: "live mono", "data-testid": "live" });
  const decisions = el("tbody", { "data-testid": "decisions" });
  const steps = el("tbody", { "data-testid": "steps" });
  const timeline = el("tbody", { "data-testid": "timeline" });
  const slider = el("input", { type: "range", min: 0, max: 0, value: 0, id: "travel", "data-testid": "travel", "aria-label": "Time travel: the state after event" });
  const travelLabel = el("div", { class: "muted", "data-testid": "travel-label" }, "Move the slider to see the run as it was after any event.");
  const travelState = el("div", { "data-testid": "travel-state" });
  fill(main, 
    title, facts, actions, waiting,
    el("div", { class: "grid" },
      el("div", {},
        el("section", {}, el("h2", {}, "Conversation"), conversation, el("div", { class: "muted" }, "live:"), live),
        el("section", {}, el("h2", {}, "Time travel"), slider, travelLabel, travelState)),
      el("div", {},
        el("section", {}, el("h2", {}, "Decisions"), el("table", {}, el("thead", {}, el("tr", {}, ["seq", "what", "call", "by", "note / output"].map((h) => el("th", {}, h)))), decisions)),
        el("section", {}, el("h2", {}, "Usage per step"), el("table", {}, el("thead", {}, el("tr", {}, ["step", "model", "in", "out", "cost", "ms"].map((h) => el("th", {}, h)))), steps)),
        el("section", {}, el("h2", {}, "Timeline"), el("table", { class: "timeline" }, el("thead", {}, el("tr", {}, ["seq", "type", "time", "summary", ""].map((h) => el("th", {}, h)))), timeline)))),
  );

  let lastSeq = -1;
  let waitingKey = null;
  let stop = () => {};
  let refreshing = null;
  let view = null;

  function act(label, path, body, cls) {
    return el("button", { class: cls || "", "data-testid": label.toLowerCase().replace(/\W+/g, "-"), onclick: async (event) => {
      event.target.disabled = true;
      try {
        const answer = await api(path, { method: "POST", body: body ? body() : {} });
        notice(label + ": done");
        if (answer && answer.run_id && answer.run_id !== runId) { history.pushState(null, "", ROOT + "/runs/" + encodeURIComponent(answer.run_id)); route(); return; }
        await refresh();
        startStream();
      } catch (error) { failed(error); } finally { event.target.disabled = false; }
    } }, label);
  }

  function render(run) {
    view = run;
    fill(title, "Run ", el("span", { class: "mono" }, run.run_id), " ", statusBadge(run.status));
    fill(facts, 
      el("span", {}, "agent ", el("b", {}, run.agent)),
      run.thread_id ? el("span", {}, "thread ", link("/threads/" + encodeURIComponent(run.thread_id), run.thread_id)) : null,
      el("span", {}, "steps ", el("b", { "data-testid": "steps-count" }, run.steps)),
      el("span", {}, "tokens ", el("b", {}, run.usage.input_tokens + " in / " + run.usage.output_tokens + " out")),
      el("span", {}, "cost ", el("b", {}, money(run.cost_usd))),
      el("span", {}, "events ", el("b", {}, run.event_count)),
      run.parent ? el("span", {}, "forked from ", link("/runs/" + encodeURIComponent(run.parent.run_id), run.parent.run_id + "@" + run.parent.seq)) : null,
      run.error ? el("span", { class: "err" }, run.error) : null);
    const ended = ["completed", "failed", "cancelled", "budget_exceeded"].includes(run.status);
    fill(actions, 
      !ended && run.status === "running" && !run.driven_here ? act("Resume", "/v1/runs/" + encodeURIComponent(runId) + "/resume") : null,
      !ended ? act("Cancel run", "/v1/runs/" + encodeURIComponent(runId) + "/cancel", null, "danger") : null);
    // Rebuilt only when what waits changes: a refresh must not wipe a note being typed.
    const key = JSON.stringify([run.pending_approvals.map((c) => c.call_id), run.unknown_outcomes.map((c) => c.call_id)]);
    if (key !== waitingKey) {
      waitingKey = key;
      const blocks = [];
      for (const call of run.pending_approvals) {
        const note = el("input", { type: "text", placeholder: "note (optional)", "data-testid": "approval-note", "aria-label": "Note" });
        const path = "/v1/runs/" + encodeURIComponent(runId) + "/approvals/" + encodeURIComponent(call.call_id);
        blocks.push(el("div", { class: "call", "data-testid": "pending-approval", "data-call": call.call_id },
          el("h2", {}, "Waiting for approval: ", el("span", { class: "mono" }, call.tool)),
          call.reason ? el("div", { class: "muted" }, call.reason) : null,
          el("pre", { "data-testid": "arguments" }, json(call.arguments)),
          el("div", { class: "row" }, note,
            act("Approve", path, () => ({ approved: true, note: note.value || null }), "primary"),
            act("Deny", path, () => ({ approved: false, note: note.value || null }), "danger"))));
      }
      for (const call of run.unknown_outcomes) {
        const output = el("textarea", { placeholder: "what the call did, as its result", "data-testid": "reconcile-output", "aria-label": "Output" });
        const path = "/v1/runs/" + encodeURIComponent(runId) + "/reconcile/" + encodeURIComponent(call.call_id);
        blocks.push(el("div", { class: "call", "data-testid": "unknown-outcome", "data-call": call.call_id },
          el("h2", {}, "Outcome unknown: ", el("span", { class: "mono" }, call.tool)),
          el("div", { class: "muted" }, "The call started but its result was never recorded. Did it happen? Give its result, or run it again."),
          el("pre", {}, json(call.arguments)), output,
          el("div", { class: "row" },
            act("Settle with this output", path, () => ({ output: output.value }), "primary"),
            act("Retry the call", path, () => ({ retry: true })))));
      }
      fill(waiting, ...blocks);
    }
    fill(conversation, ...run.messages.filter((m) => m.role !== "system").map(messageView));
    fill(decisions, ...run.decisions.map((d) => el("tr", { "data-testid": "decision" },
      el("td", {}, d.seq),
      el("td", {}, d.kind === "approval" ? (d.approved ? "approved" : "denied") : d.kind === "reconcile" ? (d.retry ? "retry" : "settled") : "cancelled"),
      el("td", { class: "mono" }, d.call_id || ""), el("td", { "data-testid": "decided-by" }, d.by || "—"),
      el("td", {}, d.note || d.output || ""))));
    if (!run.decisions.length) fill(decisions, el("tr", {}, el("td", { colspan: 5, class: "muted" }, "No human decisions yet.")));
    fill(steps, ...run.step_usage.map((s) => el("tr", {},
      el("td", {}, s.step), el("td", {}, s.model), el("td", {}, s.usage.input_tokens), el("td", {}, s.usage.output_tokens),
      el("td", {}, money(s.cost_usd)), el("td", {}, s.duration_ms))));
  }

  function addEvent(event) {
    if (event.seq <= lastSeq) return;
    lastSeq = event.seq;
    const raw = el("pre", { hidden: true }, JSON.stringify(event, null, 2));
    timeline.append(el("tr", { "data-testid": "event", "data-seq": event.seq },
      el("td", {}, event.seq), el("td", { class: "mono" }, event.type), el("td", {}, when(event.at)),
      el("td", { class: "summary" }, summarize(event), raw),
      el("td", {},
        el("button", { onclick: () => { raw.hidden = !raw.hidden; } }, "JSON"), " ",
        act("Fork here", "/v1/runs/" + encodeURIComponent(runId) + "/fork", () => ({ at_seq: event.seq })))));
    const atEnd = Number(slider.value) === Number(slider.max);
    slider.max = String(lastSeq);
    if (atEnd) slider.value = String(lastSeq);
  }

  async function refresh() {
    if (refreshing) return refreshing;
    refreshing = (async () => {
      try { render(await api("/v1/runs/" + encodeURIComponent(runId))); } catch (error) { failed(error); } finally { refreshing = null; }
    })();
    return refreshing;
  }

  function startStream() {
    stop();
    stop = follow("/v1/runs/" + encodeURIComponent(runId) + "/events/stream", lastSeq, (kind, data) => {
      if (kind === "text_delta") { live.append(data.text); return; }
      if (kind === "tool_call_start") { live.append("\n→ " + data.name + " "); return; }
      if (kind === "tool_call_delta") { live.append(data.arguments_delta); return; }
      if (kind === "tool_call_end") { live.append("\n"); return; }
      if (kind === "end") { fill(live, ); refresh(); return; }
      if (kind === "model_called") fill(live, );
      addEvent(data);
      refresh();
    }, () => refresh());
  }

  slider.addEventListener("input", async () => {
    const seq = Number(slider.value);
    try {
      const state = await api("/v1/runs/" + encodeURIComponent(runId) + "/state?at_seq=" + seq);
      const row = timeline.querySelector('[data-seq="' + seq + '"]');
      const type = row ? row.children[1].textContent : "";
      fill(travelLabel, "State after event " + seq + (type ? " (" + type + ")" : "") + ": ", statusBadge(state.status),
        " · " + state.steps + " step(s) · " + state.messages.length + " message(s)" + (state.pending.length ? " · waiting: " + state.pending.map((p) => p.tool).join(", ") : ""));
      fill(travelState, ...state.messages.filter((m) => m.role !== "system").map(messageView));
    } catch (error) { failed(error); }
  });

  refresh().then(startStream);
  stopPage = () => stop();
}

function threadsPage(main) {
  const body = el("tbody", { "data-testid": "threads" });
  fill(main, el("h1", {}, "Threads"),
    el("section", {}, el("table", {}, el("thead", {}, el("tr", {}, ["thread", "agent", "runs", "finished", "last active"].map((h) => el("th", {}, h)))), body)));
  api("/v1/threads").then((answer) => {
    fill(body, ...answer.threads.map((t) => el("tr", {},
      el("td", {}, link("/threads/" + encodeURIComponent(t.thread_id), t.thread_id)), el("td", {}, t.agent),
      el("td", {}, t.runs), el("td", {}, t.finished), el("td", {}, when(t.updated_at)))));
    if (!answer.threads.length) fill(body, el("tr", {}, el("td", { colspan: 5, class: "muted" }, "No threads yet.")));
  }, failed);
}

function threadPage(main, threadId) {
  fill(main, el("h1", {}, "Thread ", el("span", { class: "mono" }, threadId)));
  api("/v1/threads/" + encodeURIComponent(threadId)).then((t) => {
    main.append(
      el("div", { class: "facts" },
        el("span", {}, "turns ", el("b", {}, t.turn_count)),
        el("span", {}, "tokens ", el("b", {}, t.usage.input_tokens + " in / " + t.usage.output_tokens + " out")),
        el("span", {}, "cost ", el("b", {}, money(t.cost_usd))),
        el("span", {}, "guardrail streak ", el("b", {}, t.guardrail_retries))),
      el("section", {}, el("h2", {}, "Runs, oldest first"), el("table", {},
        el("thead", {}, el("tr", {}, ["run", "status", "events", "updated"].map((h) => el("th", {}, h)))),
        el("tbody", {}, t.runs.map((run) => el("tr", {},
          el("td", { class: "mono" }, link("/runs/" + encodeURIComponent(run.run_id), run.run_id)), el("td", {}, statusBadge(run.status)),
          el("td", {}, run.event_count), el("td", {}, when(run.updated_at))))))));
  }, failed);
}

// -- start -----------------------------------------------------------------------------------

document.addEventListener("DOMContentLoaded", () => {
  ROOT = (document.body.dataset.root || "").replace(/\/$/, "");
  const input = document.getElementById("api-key");
  input.value = apiKey();
  document.getElementById("key-form").addEventListener("submit", (event) => {
    event.preventDefault();
    if (input.value) sessionStorage.setItem(KEY_STORAGE, input.value); else sessionStorage.removeItem(KEY_STORAGE);
    notice(input.value ? "API key kept for this browser session" : "API key cleared");
    route();
  });
  for (const a of document.querySelectorAll("header a")) {
    a.addEventListener("click", (event) => { event.preventDefault(); history.pushState(null, "", a.getAttribute("href")); route(); });
  }
  window.addEventListener("popstate", route);
  route();
});
