// The actions a person takes on a run: approve or deny a tool call it waits on, answer its
// question, resume it. Used by the run page and the pending page.
import {apiPath, post} from "./api.js";
import {field, h, textBlock} from "./dom.js";
import {interruptionText} from "./format.js";
import {onAction, onSubmit} from "./page.js";

// The tool calls of the newest assistant turn that have no result yet: what an approval is for.
export function awaitedCalls(transcript) {
  const messages = transcript || [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role !== "assistant" || !(m.tool_calls || []).length) continue;
    const answered = new Set(messages.slice(i + 1).filter((x) => x.role === "tool")
                                 .map((x) => x.tool_call_id));
    return m.tool_calls.filter((c) => !answered.has(c.id));
  }
  return [];
}

function callText(call) {
  const args = typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments ?? {});
  return `${call.name ?? call.function?.name ?? "tool"}(${args})`;
}

// Approve / deny (with an optional reason) for a run waiting for approval.
function approvalForm(run, calls, {signal, onDone, errors}) {
  const approve = h("button", {type: "button", class: "primary"}, "Approve");
  onAction(approve, async () => {
    await post(apiPath("runs", run.id, "approve"), {}, {signal});
    onDone?.("approved");
  }, {errorSlot: errors, done: `Approved ${run.id}; the run continues.`});
  const reason = h("input", {type: "text", name: "reason", placeholder: "optional"});
  const deny = h("form", {class: "inline-form"}, field("Reason for denying", reason),
                 h("button", {type: "submit", class: "danger"}, "Deny"));
  onSubmit(deny, async (data) => {
    await post(apiPath("runs", run.id, "deny"), {reason: data.get("reason") || ""}, {signal});
    onDone?.("denied");
  }, {errorSlot: errors, done: `Denied the call of ${run.id}; the run continues without it.`});
  return [
    calls.length ? h("div", {}, h("p", {}, "Waiting for approval of:"),
                     calls.map((c) => textBlock(callText(c), 2000)))
                 : h("p", {}, "Waiting for approval of a tool call."),
    h("div", {class: "row approval-row"}, h("div", {class: "actions"}, approve), deny),
  ];
}

function answerForm(run, {signal, onDone, errors}) {
  const text = h("textarea", {name: "text", rows: "3", required: true});
  const form = h("form", {class: "stack"}, field("Your answer", text),
                 h("div", {class: "actions"}, h("button", {type: "submit", class: "primary"}, "Send answer")));
  onSubmit(form, async (data) => {
    await post(apiPath("runs", run.id, "answer"), {text: data.get("text")}, {signal});
    onDone?.("answered");
  }, {errorSlot: errors, done: `Answered ${run.id}; the run continues.`});
  return [
    h("p", {}, "The agent asks:"),
    run.question ? h("blockquote", {class: "question"}, textBlock(run.question, 4000))
                 : h("p", {class: "muted"}, "(the question is shown on the run's page)"),
    form,
  ];
}

// The controls for `run`'s state; null when there is nothing to do. `calls` are the tool calls
// awaiting approval when known.
export function runActions(run, {signal, onDone, calls = []} = {}) {
  const errors = h("div");
  const options = {signal, onDone, errors};
  if (run.waiting === "approval") return h("div", {class: "run-actions"}, approvalForm(run, calls, options), errors);
  if (run.waiting === "question") return h("div", {class: "run-actions"}, answerForm(run, options), errors);
  // A running run nobody here drives (a fork, or one whose process died) can be resumed; the
  // server refuses (409) while another process holds its lease.
  const idle = run.status === "running" && run.driven_here === false;
  if (run.status === "failed" || run.status === "quarantined" || idle) {
    const resume = h("button", {type: "button"}, "Resume");
    onAction(resume, async () => {
      await post(apiPath("runs", run.id, "resume"), {}, {signal});
      onDone?.("resumed");
    }, {errorSlot: errors, done: `Resuming ${run.id}.`});
    const why = interruptionText(run);
    return h("div", {class: "run-actions"},
      why ? h("p", {}, `This run was interrupted: ${why}. Resume continues it from its last checkpoint.`)
          : idle ? h("p", {}, "This server is not driving this run (a fork starts this way, and so does a run whose process stopped).") : null,
      h("div", {class: "actions"}, resume), errors);
  }
  return null;
}
