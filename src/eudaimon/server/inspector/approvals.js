// What waits for a human on a run page: calls waiting for approval (hidden characters shown,
// identical calls told apart by id, arguments editable before approving) and calls whose
// outcome is unknown.
import { api, el, failed, fill, mayOperate, notice } from "./shared.js";
import { escapedJson, hiddenIn, revealed, revealedJson } from "./reveal.js";
import { deadlineNote } from "./countdown.js";

function sameCall(a, b) {
  return a.tool === b.tool && JSON.stringify(a.arguments) === JSON.stringify(b.arguments);
}

// A growing note box: what is typed is never cut off (it wraps and the box grows).
export function noteBox(testid, label) {
  const box = el("textarea", { rows: 1, class: "note", placeholder: label + " (optional)", "data-testid": testid, "aria-label": label });
  const grow = () => { box.style.height = "auto"; box.style.height = box.scrollHeight + 2 + "px"; };
  box.addEventListener("input", grow);
  return box;
}

export function pendingApproval(runId, call, all, decided) {
  const path = "/v1/runs/" + encodeURIComponent(runId) + "/approvals/" + encodeURIComponent(call.call_id);
  const hidden = hiddenIn([call.tool, call.arguments, call.reason]);
  const twins = all.filter((other) => other.call_id !== call.call_id && sameCall(other, call));
  const error = el("div", { class: "err", role: "alert", "data-testid": "approval-error" });
  const note = noteBox("approval-note", "Note");
  const editor = el("textarea", { class: "mono editor", rows: 6, spellcheck: "false", "data-testid": "arguments-editor", "aria-label": "Arguments to approve the call with (JSON)" }, typeof call.arguments === "string" ? call.arguments : escapedJson(call.arguments));
  const editing = el("details", { class: "edit" }, el("summary", {}, "Edit the arguments before approving"),
    el("p", { class: "muted" }, "The server checks them against the tool's parameters; the journal records what you approved."), editor);

  async function decide(event, body, label) {
    const button = event.currentTarget;
    fill(error);
    button.disabled = true;
    try {
      await api(path, { method: "POST", body });
      notice(label + ": done");
      decided();
    } catch (problem) {
      if (problem.status === 422 || problem.status === 409) fill(error, label + " was refused: " + problem.message);
      else failed(problem);
    } finally { button.disabled = false; }
  }
  function approveEdited(event) {
    let args;
    try { args = JSON.parse(editor.value); } catch (problem) { fill(error, "The arguments are not JSON: " + problem.message); return; }
    if (!args || typeof args !== "object" || Array.isArray(args)) { fill(error, "The arguments must be a JSON object ({…})."); return; }
    decide(event, { approved: true, note: note.value || null, arguments: args }, "Approve the edited call");
  }

  // With edits in the editor there is one way to approve: the edited call (or discard the edits
  // first). A plain Approve beside an edit would run the model's arguments without a word.
  const initial = editor.value;
  const approvePlain = el("button", { class: "primary", "data-action": "approve", "data-testid": "approve", onclick: (e) => editor.value === initial ? decide(e, { approved: true, note: note.value || null }, "Approve") : approveEdited(e) }, "Approve");
  const approveEditedButton = el("button", { class: "primary", "data-action": "approve", "data-testid": "approve-edited", hidden: true, onclick: approveEdited }, "Approve the edited call");
  const editedNote = el("p", { class: "warning", "data-testid": "edited-warning", hidden: true }, "You edited the arguments: approving runs the edited call, not the one shown above.");
  const discard = el("button", { "data-action": "discard-edits", "data-testid": "discard-edits", hidden: true, onclick: () => { editor.value = initial; shown(); } }, "Discard edits");
  function shown() {
    const dirty = editor.value !== initial;
    approvePlain.hidden = dirty;
    approveEditedButton.hidden = !dirty;
    discard.hidden = !dirty;
    editedNote.hidden = !dirty;
    if (dirty) editing.open = true;
  }
  editor.addEventListener("input", shown);

  const operate = mayOperate();
  return el("div", { class: "call" + (hidden.length ? " flagged" : ""), "data-testid": "pending-approval", "data-call": call.call_id, "data-hidden-chars": hidden.length || null },
    el("h2", {}, "Waiting for approval: ", el("span", { class: "mono" }, revealed(call.tool)), " ",
      el("span", { class: "muted mono", "data-testid": "call-id" }, "call " + call.call_id)),
    hidden.length ? el("p", { class: "warning", role: "alert", "data-testid": "hidden-chars-warning" },
      "⚠ This call holds " + hidden.length + " invisible or direction-changing character" + (hidden.length > 1 ? "s" : "") +
      " (" + [...new Set(hidden)].join(", ") + "), shown below as ⟨U+…⟩. What you read may not be what the tool gets.") : null,
    twins.length ? el("p", { class: "warning", "data-testid": "identical-calls" }, "Identical to call" + (twins.length > 1 ? "s " : " ") + twins.map((t) => t.call_id).join(", ") + ": decide each by its call id.") : null,
    call.reason ? el("div", { class: "muted" }, revealed(call.reason)) : null,
    call.deadline ? el("p", {}, deadlineNote(call.deadline, call.on_timeout)) : null,
    el("pre", { "data-testid": "arguments" }, revealedJson(call.arguments)),
    operate ? editing : null,
    operate ? editedNote : null,
    operate ? el("div", { class: "row decide" }, note, approvePlain, approveEditedButton, discard,
      el("button", { class: "danger", "data-action": "deny", "data-testid": "deny", onclick: (e) => decide(e, { approved: false, note: note.value || null }, "Deny") }, "Deny")) : null,
    error);
}

export function unknownOutcome(runId, call, decided) {
  const output = el("textarea", { placeholder: "what the call did, as its result", "data-testid": "reconcile-output", "aria-label": "Output" });
  const path = "/v1/runs/" + encodeURIComponent(runId) + "/reconcile/" + encodeURIComponent(call.call_id);
  async function settle(event, body, label) {
    const button = event.currentTarget;
    button.disabled = true;
    try { await api(path, { method: "POST", body }); notice(label + ": done"); decided(); } catch (problem) { failed(problem); } finally { button.disabled = false; }
  }
  return el("div", { class: "call", "data-testid": "unknown-outcome", "data-call": call.call_id },
    el("h2", {}, "Outcome unknown: ", el("span", { class: "mono" }, revealed(call.tool)), " ", el("span", { class: "muted mono", "data-testid": "call-id" }, "call " + call.call_id)),
    el("div", { class: "muted" }, "The call started but its result was never recorded. Did it happen? Give its result, or run it again."),
    el("pre", {}, revealedJson(call.arguments)),
    mayOperate() ? [output, el("div", { class: "row" },
      el("button", { class: "primary", "data-action": "reconcile", "data-testid": "settle", onclick: (e) => settle(e, { output: output.value }, "Settle") }, "Settle with this output"),
      el("button", { "data-action": "reconcile", "data-testid": "retry-call", onclick: (e) => settle(e, { retry: true }, "Retry") }, "Retry the call"))] : null);
}
