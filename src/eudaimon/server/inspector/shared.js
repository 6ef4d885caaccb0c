// What every page of the inspector shares: building elements, calling the API, following a
// journal's stream, knowing who is signed in, and knowing whether the server can be reached.
// Every text that came from a run (model output, tool arguments and results, notes) is untrusted:
// it is only ever put on the page as text (textContent / text nodes), never as markup.

const KEY_STORAGE = "eudaimon.apiKey";
export const STATUSES = ["queued", "running", "awaiting_approval", "awaiting_reconciliation", "waiting", "completed", "failed", "cancelled", "budget_exceeded"];
export const ENDED = ["completed", "failed", "cancelled", "budget_exceeded"];
export const session = { root: "", whoami: null, online: true };

export function el(tag, attrs, ...children) {
  const node = tag.startsWith("svg:") ? document.createElementNS("http://www.w3.org/2000/svg", tag.slice(4)) : document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (name === "class") node.setAttribute("class", value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export const svg = (tag, attrs, ...children) => el("svg:" + tag, attrs, ...children);

// A row of a table that stacks on a phone (`table.stack`): each cell says its column's name
// (`data-label`, shown before it once the header row is hidden), so nothing is cut or squeezed.
export function labelled(names, row) {
  [...row.children].forEach((cell, i) => { if (names[i]) cell.setAttribute("data-label", names[i]); });
  return row;
}

// `replaceChildren` would write a null child as the text "null": this skips it.
export function fill(node, ...children) {
  node.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
}

// "1 run", "3 runs": a count with its noun, as an operator reads it.
export function counted(n, noun) {
  return n + " " + noun + (n === 1 ? "" : "s");
}

export function json(value) {
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}

export function when(iso) {
  return iso ? new Date(iso).toLocaleString() : "";
}

// One style for money and durations on every page (the CLI and the log lines use the same).
// A cost the server does not know (`cost_usd` null: a model with no price) is "unpriced", never
// "$0" or a dash: nothing says it was free.
export const UNPRICED = "unpriced";

export function money(value) {
  if (value === null || value === undefined) return UNPRICED;
  const v = Number(value);
  if (v === 0) return "$0.00";
  if (v < 0.0001) return "<$0.0001";
  return "$" + v.toFixed(v >= 1 ? 2 : 4);
}

// Durations: whole ms under a second, seconds to one decimal under a minute, then min and s.
export function millis(value) {
  if (value === null || value === undefined) return "—";
  const v = Math.max(0, Number(value));
  if (v < 1000) return Math.round(v) + " ms";
  if (v < 60_000) return (v / 1000).toFixed(1) + " s";
  const s = Math.round(v / 1000);
  if (s < 3600) return Math.floor(s / 60) + " min " + String(s % 60).padStart(2, "0") + " s";
  return Math.floor(s / 3600) + " h " + String(Math.floor((s % 3600) / 60)).padStart(2, "0") + " min";
}

export function statusBadge(status) {
  return el("span", { class: "status " + status, "data-testid": "status" }, status);
}

// A listed run's status; `no driver` beside a running one no process drives now (the journal
// reads `running` alike for a run at work and one whose process is gone: its lease tells).
export function runStatus(run) {
  if (!run.no_driver) return statusBadge(run.status);
  return [statusBadge(run.status), el("span", { class: "err", "data-testid": "no-driver",
    title: "No process drives this run now (the one that drove it ended or stalled); a server serving its agent on this store takes it over" },
  " no driver")];
}

export function notice(text, kind) {
  const box = document.getElementById("notice");
  fill(box, el("span", { class: kind || "ok" }, text));
  if (kind !== "err") setTimeout(() => { if (box.textContent === text) fill(box); }, 4000);
}

export function apiKey() {
  return sessionStorage.getItem(KEY_STORAGE) || "";
}

export function setApiKey(value) {
  if (value) sessionStorage.setItem(KEY_STORAGE, value); else sessionStorage.removeItem(KEY_STORAGE);
}

function headers(extra) {
  const h = Object.assign({ Accept: "application/json" }, extra || {});
  if (apiKey()) h.Authorization = "Bearer " + apiKey();
  return h;
}

// Every POST sends JSON (`{}` when there is nothing to say): the server takes no other body,
// so no cross-origin form or no-cors request can act for a page.
export async function api(path, options) {
  const init = Object.assign({}, options || {});
  const method = (init.method || "GET").toUpperCase();
  if (method !== "GET" && init.body === undefined) init.body = {};
  init.headers = headers(init.body !== undefined ? { "Content-Type": "application/json" } : {});
  if (init.body !== undefined && typeof init.body !== "string") init.body = JSON.stringify(init.body);
  let response;
  try {
    response = await fetch(session.root + path, init);
  } catch (error) {
    connection.lost();
    throw Object.assign(new Error("the server cannot be reached"), { offline: true });
  }
  connection.back();
  const text = await response.text();
  let body = null;
  try { body = text ? JSON.parse(text) : null; } catch (e) { body = { detail: text }; }
  if (!response.ok) {
    const error = new Error(describe(body, response));
    error.status = response.status;
    throw error;
  }
  return body;
}

// A 422's `detail` is a string, or FastAPI's list of {loc, msg}: either way a sentence.
function describe(body, response) {
  const detail = body && (body.message || body.detail);
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) return detail.map((d) => (d.loc ? d.loc.filter((p) => p !== "body").join(".") + ": " : "") + (d.msg || JSON.stringify(d))).join("; ");
  return response.status + " " + response.statusText;
}

export function failed(error) {
  if (error && error.offline) return;  // the banner says so
  if (error && error.status === 401) notice("This server needs an API key: enter one above (" + error.message + ")", "err");
  else notice(error && error.message ? error.message : String(error), "err");
}

// A page that keeps its data fresh: `load` now, then again after `everyMs`, one load at a time
// and never sooner than twice what the last load took (a slow store is not asked again before it
// has answered). Returns the function that stops it, for the page's cleanup.
export function reloadEvery(everyMs, load) {
  let timer = null;
  let stopped = false;
  async function tick() {
    const began = performance.now();
    await load();
    if (!stopped) timer = setTimeout(tick, Math.max(everyMs, 2 * (performance.now() - began)));
  }
  tick();
  return () => { stopped = true; clearTimeout(timer); };
}

// -- the server's reachability: a banner, actions disabled, and pages told when it is back --

const HEALTH_EVERY_MS = 1500;
const HEALTH_TIMEOUT_MS = 2000;

export const connection = {
  listeners: new Set(),
  lost() {
    if (!session.online) return;
    session.online = false;
    document.body.classList.add("offline");
    document.getElementById("offline").hidden = false;
    disableActions();
  },
  back() {
    if (session.online) return;
    session.online = true;
    document.body.classList.remove("offline");
    document.getElementById("offline").hidden = true;
    for (const button of document.querySelectorAll("[data-action][data-offline-disabled]")) {
      button.disabled = false;
      button.removeAttribute("data-offline-disabled");
    }
    for (const listener of [...this.listeners]) listener();
  },
  // Called when the server answers again: the page reloads what it shows.
  onBack(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  },
};

function disableActions() {
  for (const button of document.querySelectorAll("[data-action]")) {
    if (!button.disabled) { button.disabled = true; button.setAttribute("data-offline-disabled", ""); }
  }
}

// New action buttons made while offline start disabled too.
new MutationObserver(() => { if (!session.online) disableActions(); }).observe(document.documentElement, { childList: true, subtree: true });

export function watchHealth() {
  async function check() {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), HEALTH_TIMEOUT_MS);
    try {
      const response = await fetch(session.root + "/health", { signal: controller.signal, cache: "no-store" });
      if (response.ok) connection.back(); else connection.lost();
    } catch (error) {
      connection.lost();
    } finally {
      clearTimeout(timer);
      setTimeout(check, HEALTH_EVERY_MS);
    }
  }
  check();
}

// -- who is signed in --------------------------------------------------------------------

export async function loadWhoami() {
  const badge = document.getElementById("whoami");
  try {
    session.whoami = await api("/v1/whoami");
    fill(badge, el("b", {}, session.whoami.principal), " · ", session.whoami.role);
  } catch (error) {
    session.whoami = null;
    fill(badge, error.status === 401 ? "not signed in" : "signed in as ?");
  }
}

export function mayOperate() {
  return !!session.whoami && session.whoami.role === "operator";
}

// -- navigation ----------------------------------------------------------------------------

let router = () => {};
export function setRouter(route) { router = route; }

export function go(href, replace) {
  if (replace) history.replaceState(null, "", session.root + href);
  else history.pushState(null, "", session.root + href);
  router();
}

export function link(href, text, testid) {
  return el("a", { href: session.root + href, "data-testid": testid, onclick: (event) => {
    if (event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    go(href);
  } }, text);
}

export const runHref = (runId) => "/runs/" + encodeURIComponent(runId);

// -- following a journal -----------------------------------------------------------------

// Server-sent events over fetch, so the API key goes in a header and never in a URL. The
// server ends a stream when the run ends or waits; a run that waits can be decided anywhere
// (the CLI, another browser, another server on the same store), so the stream of a waiting run
// is opened again after `pausedEveryMs` with Last-Event-ID, and only an ended run stops it.
export function follow(path, lastId, onEvent, { pausedEveryMs = 1000 } = {}) {
  const controller = new AbortController();
  let cursor = lastId;
  let closed = false;
  (async () => {
    while (!closed) {
      let endedAs = null;
      try {
        const h = headers({ Accept: "text/event-stream" });
        if (cursor !== null && cursor !== undefined && cursor >= 0) h["Last-Event-ID"] = String(cursor);
        const response = await fetch(session.root + path, { headers: h, signal: controller.signal, cache: "no-store" });
        if (!response.ok) throw Object.assign(new Error("stream: " + response.status), { status: response.status });
        connection.back();
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          let cut;
          while ((cut = buffer.indexOf("\n\n")) >= 0) {
            const message = parseBlock(buffer.slice(0, cut));
            buffer = buffer.slice(cut + 2);
            if (!message.data) continue;
            if (message.id !== null) cursor = Number(message.id);
            const payload = JSON.parse(message.data);
            if (message.event === "end") endedAs = payload.status;
            onEvent(message.event, payload, message.id);
          }
        }
      } catch (error) {
        if (closed || error.name === "AbortError") return;
        if (error.status === 401 || error.status === 404) { failed(error); return; }
        if (!error.status) connection.lost();
      }
      if (endedAs && ENDED.includes(endedAs)) { closed = true; return; }
      await new Promise((resolve) => setTimeout(resolve, endedAs ? pausedEveryMs : 1000));
    }
  })();
  return () => { closed = true; controller.abort(); };
}

function parseBlock(block) {
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
  return message;
}
