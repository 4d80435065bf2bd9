// improve attempts (docs/improve.md): the list, and one attempt's card and diff with apply and
// reject for a queued proposal.
import {apiPath, get, post} from "../lib/api.js";
import {badge, emptyRow, errorBox, field, h, render, route, textBlock} from "../lib/dom.js";
import {formatTime} from "../lib/format.js";
import {loadInto, onAction, onSubmit, pageHeader, section} from "../lib/page.js";

function attemptsTable(attempts) {
  return h("table", {class: "data"},
    h("thead", {}, h("tr", {}, ["Attempt", "Agent folder", "Outcome", "Gate", "Proposal"].map((c) => h("th", {scope: "col"}, c)))),
    h("tbody", {}, attempts.length ? attempts.map((a) => h("tr", {},
      h("td", {}, h("a", {href: route("improve", a.attempt_id)}, a.attempt_id)),
      h("td", {}, h("code", {}, a.agent_dir ?? "")),
      h("td", {}, badge(a.outcome, a.outcome)),
      h("td", {}, a.gate ?? ""),
      h("td", {}, a.proposal ? badge(a.proposal, a.proposal) : h("span", {class: "muted"}, "none")))) :
      emptyRow(5, "No improve attempts yet. Run mend improve AGENT_DIR --check CMD ...")));
}

// A unified diff with its lines classed by their first character.
export function diffView(text) {
  const lines = String(text ?? "").split("\n");
  if (lines.length && lines[lines.length - 1] === "") lines.pop();
  return h("pre", {class: "diff", tabindex: "0", "aria-label": "Proposed changes"}, lines.map((line) => {
    let cls = "ctx";
    if (line.startsWith("+++") || line.startsWith("---")) cls = "file";
    else if (line.startsWith("@@")) cls = "hunk";
    else if (line.startsWith("+")) cls = "add";
    else if (line.startsWith("-")) cls = "del";
    return h("span", {class: "diff-" + cls}, line + "\n");
  }));
}

// The audit line: `recomputed_matches` is true, false (with the first field that differs in
// `recomputed_mismatch`) or null when there is no decision to recompute.
export function auditText(attempt) {
  if (attempt.recomputed_matches === true) return "recomputed from the recorded scores: matches";
  if (attempt.recomputed_matches !== false) return "not recomputed";
  return "recomputed: DOES NOT match" + (attempt.recomputed_mismatch ? ": " + attempt.recomputed_mismatch : "");
}

// The diff: the `diff` field when the server gives one, else the part of the card that is one.
function diffOf(attempt) {
  if (attempt.diff) return attempt.diff;
  const card = String(attempt.card ?? "");
  const start = card.search(/^--- /m);
  return start >= 0 ? card.slice(start) : "";
}

function decisionControls(attempt, signal, reload) {
  const proposal = attempt.proposal;
  if (!proposal) return h("p", {class: "muted"}, "This attempt has no proposal.");
  const status = [h("p", {}, "Proposal: ", badge(proposal.status, proposal.status),
    proposal.decided_at ? h("span", {class: "muted"}, " " + formatTime(proposal.decided_at)) : null,
    proposal.note ? h("span", {}, " — " + proposal.note) : null)];
  if ((proposal.files || []).length) {
    status.push(h("p", {}, "Files: ", proposal.files.map((f, i) => [i ? ", " : "", h("code", {}, f)])));
  }
  if ((attempt.changed_files || []).length && proposal.status === "queued") {
    status.push(h("div", {class: "error-box"}, "Edited by hand since the attempt started, so applying is refused: ",
                  attempt.changed_files.map((f, i) => [i ? ", " : "", h("code", {}, f)])));
  }
  if (proposal.status !== "queued") return status;
  const errors = h("div");
  const apply = h("button", {type: "button", class: "primary"}, "Apply proposal");
  onAction(apply, async () => {
    await post(apiPath("improve", attempt.attempt_id, "apply"), {}, {signal});
    reload();
  }, {errorSlot: errors, confirmText: `Apply this proposal to ${attempt.agent_dir ?? "the agent folder"}?`,
      done: "The proposal was applied; the old files are kept as a backup."});
  const reason = h("input", {type: "text", name: "reason", placeholder: "optional"});
  const reject = h("form", {class: "inline-form"}, field("Reason for rejecting", reason),
                   h("button", {type: "submit", class: "danger"}, "Reject"));
  onSubmit(reject, async (data) => {
    await post(apiPath("improve", attempt.attempt_id, "reject"), {reason: data.get("reason") || ""}, {signal});
    reload();
  }, {errorSlot: errors, done: "The proposal was rejected."});
  return [status, h("div", {class: "actions"}, apply), reject, errors];
}

async function showAttempt(main, id, signal) {
  const body = h("div");
  render(main, pageHeader("Improve attempt " + id), h("p", {}, h("a", {href: "#/improve"}, "‹ All attempts")), body);
  const load = () => loadInto(body, () => get(apiPath("improve", id), {signal}), (attempt) => {
    const decision = attempt.decision || {};
    const diff = diffOf(attempt);
    return [
      section("Decision",
        h("dl", {class: "kv"},
          h("dt", {}, "Agent folder"), h("dd", {}, h("code", {}, attempt.agent_dir ?? "")),
          h("dt", {}, "Outcome"), h("dd", {}, badge(decision.outcome ?? attempt.outcome ?? "", decision.outcome ?? attempt.outcome)),
          h("dt", {}, "Gate"), h("dd", {}, decision.gate ?? "none"),
          h("dt", {}, "Reason"), h("dd", {}, decision.reason ?? ""),
          attempt.error
            ? [h("dt", {}, "Stopped by"), h("dd", {}, h("code", {}, attempt.error.code ?? ""), " " + (attempt.error.message ?? ""))]
            : null,
          h("dt", {}, "Audit"), h("dd", {}, auditText(attempt))),
        decisionControls(attempt, signal, load)),
      diff ? section("Diff", diffView(diff)) : null,
      section("Card", textBlock(attempt.card ?? "", 100000)),
    ];
  });
  await load();
}

export async function show(main, current, signal) {
  if (current.id !== null) return showAttempt(main, current.id, signal);
  const slot = h("div", {class: "table-wrap"});
  render(main, pageHeader("Improve"),
         h("p", {class: "muted"}, "Tested proposals for agents' instructions and skills. Nothing changes until a proposal is applied."),
         slot);
  try {
    const data = await get(apiPath("improve"), {signal});
    render(slot, attemptsTable(data.attempts || []));
  } catch (e) {
    if (e.name !== "AbortError") render(slot, errorBox(e));
  }
}
