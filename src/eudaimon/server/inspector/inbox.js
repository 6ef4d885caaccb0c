// The inbox: every call waiting for a person, across runs and agents, oldest first, with its
// deadline counting down, its arguments as the tool will get them, and the actions the
// signed-in key allows (approve and deny here; a reconciliation is settled on its run's page).
// A list invites quick clicks, so approving here asks twice for a call that cannot be undone
// (or whose effect the run did not record), and not at all for one whose text hides characters:
// that one is approved on its run's page, where they are explained.
import { api, el, failed, fill, labelled, link, notice, reloadEvery, runHref, when } from "./shared.js";
import { hiddenIn, revealed, revealedJson } from "./reveal.js";
import { deadlineNote } from "./countdown.js";

const REFRESH_MS = 5000;
const CONFIRM_MS = 10000;
const armed = new Map(); // "run call" -> when the first click's confirmation lapses; kept across refreshes

function undoable(item) {
  return item.effect === "read" || item.effect === "write";
}

function approveButton(item, decide) {
  const key = item.run_id + " " + item.call_id;
  const button = el("button", { class: "primary", "data-testid": "inbox-approve" });
  const show = () => {
    const ready = (armed.get(key) || 0) > Date.now();
    button.textContent = ready ? "Confirm: this cannot be undone" : "Approve…";
    button.className = ready ? "danger" : "primary";
    button.dataset.armed = ready ? "true" : "false";
  };
  if (undoable(item)) {
    button.textContent = "Approve";
    button.onclick = (e) => decide(e, true);
    return button;
  }
  button.onclick = (e) => {
    if ((armed.get(key) || 0) > Date.now()) { armed.delete(key); decide(e, true); return; }
    armed.set(key, Date.now() + CONFIRM_MS);
    show();
    setTimeout(() => { if ((armed.get(key) || 0) <= Date.now()) armed.delete(key); if (button.isConnected) show(); }, CONFIRM_MS + 50);
  };
  show();
  return button;
}

function actions(item, reload, hidesCharacters) {
  const path = "/v1/runs/" + encodeURIComponent(item.run_id) + "/approvals/" + encodeURIComponent(item.call_id);
  async function decide(event, approved) {
    const button = event.currentTarget;
    button.disabled = true;
    try {
      await api(path, { method: "POST", body: { approved } });
      notice((approved ? "Approved " : "Denied ") + item.call_id);
      reload();
    } catch (problem) {
      failed(problem);
      button.disabled = false;
    }
  }
  const buttons = [];
  if (item.actions.includes("approve") && hidesCharacters) buttons.push(link(runHref(item.run_id), "Review on the run's page", "inbox-review"));
  else if (item.actions.includes("approve")) buttons.push(approveButton(item, decide));
  if (item.actions.includes("deny")) buttons.push(el("button", { class: "danger", "data-testid": "inbox-deny", onclick: (e) => decide(e, false) }, "Deny"));
  if (item.actions.includes("reconcile")) buttons.push(link(runHref(item.run_id), "Settle on the run's page", "inbox-settle"));
  return buttons.length ? el("div", { class: "row" }, buttons) : el("span", { class: "muted" }, "view only");
}

export function inboxPage(main) {
  const body = el("tbody", { "data-testid": "inbox-items" });
  const columns = ["waiting since", "agent", "run", "call", "arguments", "deadline", "actions"];
  const table = el("table", { "data-testid": "inbox", class: "stack" },
    el("caption", {}, "Calls waiting for a decision, oldest first"),
    el("thead", {}, el("tr", {}, columns.map((h) => el("th", { scope: "col" }, h)))),
    body);
  fill(main, el("h1", {}, "Inbox"), el("section", {}, table));
  let stopped = false;
  let asked = 0;
  // A decision reloads at once while a refresh may still be on its way: only the answer to the
  // latest load is shown, or a slow older one would bring back a call just decided.
  async function load() {
    const mine = ++asked;
    try {
      const answer = await api("/v1/inbox");
      if (stopped || mine !== asked) return;
      fill(body, ...answer.items.map((item) => row(item, load)));
      if (!answer.items.length) fill(body, el("tr", {}, el("td", { colspan: 7, class: "muted", "data-testid": "inbox-empty" }, "Nothing waits for a decision.")));
    } catch (problem) { failed(problem); }
  }
  function row(item, reload) {
    const hides = hiddenIn([item.tool, item.arguments, item.reason]).length > 0;
    return labelled(columns, el("tr", { "data-testid": "inbox-item", "data-run": item.run_id, "data-call": item.call_id, "data-kind": item.kind },
        el("td", {}, when(item.asked_at)),
        el("td", {}, item.agent),
        el("td", { class: "mono" }, link(runHref(item.run_id), item.run_id)),
        el("td", {}, el("span", { class: "mono" }, revealed(item.tool)), " ", el("span", { class: "muted mono" }, item.call_id),
          el("div", { class: "muted" }, item.kind === "approval" ? "approval" : "outcome unknown",
            item.effect ? el("span", { class: item.effect === "irreversible" ? "effect irreversible" : "effect", "data-testid": "inbox-effect" }, item.effect) : null),
          item.reason ? el("div", { class: "muted", "data-testid": "inbox-reason" }, revealed(item.reason)) : null,
          hides ? el("p", { class: "warning", role: "alert", "data-testid": "inbox-hidden-chars" }, "⚠ Hidden characters, shown as ⟨U+…⟩: approve on the run's page.") : null),
        el("td", {}, el("pre", { "data-testid": "inbox-arguments" }, revealedJson(item.arguments))),
        el("td", {}, deadlineNote(item.deadline, item.on_timeout)),
        el("td", {}, actions(item, reload, hides))));
  }
  const stop = reloadEvery(REFRESH_MS, load);
  return () => { stopped = true; stop(); };
}
