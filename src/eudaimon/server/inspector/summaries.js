// One line per journal event for the timeline: what happened, in words (every event type has
// its line: `test_every_event_type_has_a_summary` reads the types from the journal's own list).
import { editText } from "./edits.js";
import { millis, when } from "./shared.js";

const cut = (text, n = 160) => String(text ?? "").slice(0, n);

export function summarize(event) {
  switch (event.type) {
    case "run_queued": return "queued" + (event.principal ? " by " + event.principal : "") + " · input: " + cut(event.input);
    case "run_started": return "input: " + cut(event.input);
    case "model_attempt_started": return "step " + event.step + " · " + (event.model || "model") + " asked";
    case "model_called": {
      const calls = (event.message.tool_calls || []).map((c) => c.name).join(", ");
      const stop = event.stop_reason && !["end_turn", "tool_use"].includes(event.stop_reason) ? " [stopped: " + event.stop_reason + "]" : "";
      return "step " + event.step + ": " + cut(calls ? "calls " + calls : (event.message.content || "")) + stop;
    }
    case "model_retry_scheduled": return "step " + event.step + ": retry " + event.retry_number + " in " + millis(event.delay_ms) + " after: " + cut(event.error);
    case "model_context_rejected": return "step " + event.step + ": the request was too long for the model (budget " + event.input_budget_tokens + " tokens): " + cut(event.error);
    case "model_failed": return "step " + event.step + ": the model failed" + (event.model ? " (" + event.model + ")" : "") + ": " + cut(event.error);
    case "guardrail_rejected": return "step " + event.step + ": guardrail " + event.guardrail + " rejected the answer: " + cut(event.feedback);
    case "finish_rejected": return "step " + event.step + ": the answer was refused" + (event.by_validator ? " by a validator" : "") + ": " + cut(event.reason);
    case "approval_requested": return event.tool + " (" + event.call_id + ") waits for approval" + (event.reason ? ": " + cut(event.reason) : "");
    case "approval_decided": return (event.approved ? "approved " : "denied ") + event.call_id + " by " + (event.by || "?") + (event.arguments ? " with edited arguments (" + editText(event.original_arguments, event.arguments) + ")" : "") + (event.note ? ": " + cut(event.note) : "");
    case "tool_started": return event.tool + " (" + event.call_id + ", attempt " + (event.attempt || 1) + ")";
    case "tool_completed": return event.tool + " (" + event.call_id + ")" + (event.is_error ? " failed: " : " → ") + cut(event.output);
    case "tool_outcome_unknown": return event.tool + " (" + event.call_id + "): outcome unknown";
    case "tool_reconciled": return event.call_id + ": " + (event.retry ? "to be run again" : "settled: " + cut(event.output)) + " by " + (event.by || "?");
    case "tool_denied": return event.tool + " (" + event.call_id + "): " + (event.reason || "denied");
    case "approval_timed_out": return event.call_id + ": " + (event.note || "no decision") + " (" + (event.action === "cancel" ? "run cancelled" : "denied") + " at the deadline " + when(event.deadline) + ")";
    case "tool_waiting": return event.tool + " (" + event.call_id + ") waits until " + when(event.wake_at) + (event.reason ? ": " + cut(event.reason) : "");
    case "tool_woke": return event.call_id + ": woke; runs again";
    case "agent_replaced": return "agent changed (" + (event.previous_version || "?") + " → " + (event.version || "?") + "): " + cut((event.changes || []).join("; ") || "unnamed parts") + (event.voided && event.voided.length ? "; approvals void: " + event.voided.join(", ") : "");
    case "handed_off": return "handed off to " + event.agent + " (run " + event.to_run_id + ")";
    case "attempt_traced": return "trace " + event.trace_id;
    case "run_taken_over": return "taken over by " + event.owner + " from " + (event.previous_owner || "a driver whose lease lapsed") + " after " + millis(event.orphaned_ms || 0) + " without a driver (its last event #" + event.interrupted_seq + ")";
    case "budget_exceeded": return event.reason + ": spent " + event.spent + " of " + event.limit;
    case "run_completed": return cut(event.output);
    case "run_failed": return (event.kind ? event.kind + ": " : "") + cut(event.error, 300);
    case "run_cancelled": return (event.reason || "cancelled") + (event.by ? " by " + event.by : "");
    default: return event.type;
  }
}
