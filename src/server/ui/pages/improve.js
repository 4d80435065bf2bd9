// improve attempts (docs/improve.md): the list with a form that starts an attempt of an agent the
// server knows (and its progress, live), and one attempt: its decision, the gains per case, the
// cost against the gate, the diff and the card, with apply, reject and a canary for a queued
// proposal, and the canary's panel (arms, rates, what the rule says) kept up to date by the
// server's events.
import {apiPath, get, post} from "../lib/api.js";
import {badge, emptyRow, errorBox, field, h, render, route, textBlock} from "../lib/dom.js";
import {formatTime} from "../lib/format.js";
import {live, liveIndicator} from "../lib/live.js";
import {onAction, onSubmit, pageHeader, section} from "../lib/page.js";

const FALLBACK_POLL_MS = 5000;

function attemptsTable(attempts) {
  return h("table", {class: "data"},
    h("thead", {}, h("tr", {}, ["Attempt", "Agent folder", "Outcome", "Gate", "Proposal"].map((c) => h("th", {scope: "col"}, c)))),
    h("tbody", {}, attempts.length ? attempts.map((a) => h("tr", {dataset: {attempt: a.attempt_id}},
      h("td", {}, h("a", {href: route("improve", a.attempt_id)}, a.attempt_id)),
      h("td", {}, h("code", {}, a.agent_dir ?? "")),
      h("td", {}, badge(a.outcome, a.outcome)),
      h("td", {}, a.gate ?? ""),
      h("td", {}, a.proposal ? badge(a.proposal, a.proposal) : h("span", {class: "muted"}, "none")))) :
      emptyRow(5, "No improve attempts yet. Start one below, or run mend improve AGENT_DIR.")));
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

// "2/3 (67%)": passing runs out of `runs`, with the rate.
export function passText(passes, runs) {
  if (!Number.isFinite(passes) || !Number.isFinite(runs) || runs <= 0) return "";
  return `${passes}/${runs} (${Math.round((100 * passes) / runs)}%)`;
}

// A gain in passing runs: "+2", "0", "−1"; "" when not recorded (an audit folder from before gains
// were recorded).
export function gainText(gain) {
  if (gain === null || gain === undefined || !Number.isFinite(Number(gain))) return "";
  const n = Number(gain);
  return n > 0 ? "+" + n : n < 0 ? "\u2212" + -n : "0";
}

// Dollars with enough digits for small per-run costs; "n/a" for an undefined figure.
export function usdText(value) {
  if (value === null || value === undefined || !Number.isFinite(Number(value))) return "n/a";
  const n = Number(value);
  if (n === 0) return "$0";
  return "$" + (n >= 0.01 ? n.toFixed(4) : n.toPrecision(3));
}

// What the cost gate says about the recorded figures: within the limit, above it, or no limit.
export function costGateText(cost, gate) {
  if (!cost) return "not recorded (an attempt from before mend recorded costs)";
  const percent = Math.round(100 * Number(cost.max_cost_increase ?? 0));
  if (cost.limit_usd === null || cost.limit_usd === undefined) {
    return "no limit: the baseline never passed, so any cost is within it";
  }
  if (gate === "cost") return `refused: above the limit (baseline + ${percent}%)`;
  if (cost.after_per_success_usd === null || cost.after_per_success_usd === undefined) {
    return `no passing run of the proposal to cost (limit: baseline + ${percent}%)`;
  }
  return `within the limit (baseline + ${percent}%)`;
}

// Whether `event` is about the canary of proposal `id` (any proposal when `id` is null).
export function isCanaryEvent(event, id = null) {
  const type = String(event.type || "");
  if (!type.startsWith("canary.")) return false;
  return id === null || event.proposal === id;
}

// Whether `event` changes what the attempts list or the improve job shows.
export function isImproveEvent(event) {
  const type = String(event.type || "");
  return type.startsWith("improve.") || type.startsWith("canary.");
}

// "12.5% (4.1%–29.0%)": a failure rate with its 95% interval.
export function rateText(rate, interval) {
  const pct = (x) => (100 * Number(x)).toFixed(1) + "%";
  if (!Number.isFinite(Number(rate))) return "";
  const [low, high] = Array.isArray(interval) ? interval : [];
  return Number.isFinite(Number(low)) && Number.isFinite(Number(high))
    ? `${pct(rate)} (${pct(low)}\u2013${pct(high)})` : pct(rate);
}

// The diff: the `diff` field when the server gives one, else the part of the card that is one.
function diffOf(attempt) {
  if (attempt.diff) return attempt.diff;
  const card = String(attempt.card ?? "");
  const start = card.search(/^--- /m);
  return start >= 0 ? card.slice(start) : "";
}

// The gains per case: each case's passing runs of the baseline and of the judged candidate.
function gainsSection(attempt) {
  const decision = attempt.decision;
  const cases = (decision && decision.cases) || [];
  if (!decision) return null;
  const arm = attempt.outcome === "proposal" ? "Proposal" : `Candidate ${decision.candidate}`;
  const rows = cases.map((c) => h("tr", {dataset: {case: c.id}},
    h("th", {scope: "row"}, h("code", {}, c.id)),
    h("td", {}, c.held_out ? h("span", {class: "held-out"}, "held out") : "training"),
    h("td", {class: "num", dataset: {arm: "baseline"}}, passText(c.before, c.runs)),
    h("td", {class: "num", dataset: {arm: "proposal"}}, passText(c.after, c.runs)),
    h("td", {class: ["num", Number(c.gain) > 0 ? "gain-up" : Number(c.gain) < 0 ? "gain-down" : null]},
      gainText(c.gain)),
    h("td", {}, badge(c.verdict, c.verdict))));
  return section("Gains per case",
    h("p", {class: "muted"}, "Passing runs out of K per case, baseline against ", arm.toLowerCase(),
      ". Held-out cases are never shown to the editor; they count in the gates. A verdict needs a difference of a strict majority of K."),
    h("div", {class: "table-wrap"}, h("table", {class: "data gains"},
      h("thead", {}, h("tr", {}, ["Case", "Split", "Baseline", arm, "Gain", "Verdict"].map((c) => h("th", {scope: "col"}, c)))),
      h("tbody", {}, rows.length ? rows : emptyRow(6, "No case was recorded with the decision.")))));
}

// The cost per successful run of both arms against the cost gate's limit.
function costSection(attempt) {
  const decision = attempt.decision;
  if (!decision) return null;
  const cost = decision.cost;
  const arm = attempt.outcome === "proposal" ? "Proposal" : `Candidate ${decision.candidate}`;
  const totals = (t) => t ? `${usdText(t.total_usd)} over ${t.runs} runs, ${t.passes} passing` : "";
  return section("Cost",
    cost ? h("dl", {class: "kv cost"},
      h("dt", {}, "Baseline per successful run"), h("dd", {dataset: {cost: "baseline"}}, usdText(cost.before_per_success_usd),
        h("span", {class: "muted"}, " — " + totals(cost.before))),
      h("dt", {}, arm + " per successful run"), h("dd", {dataset: {cost: "proposal"}}, usdText(cost.after_per_success_usd),
        h("span", {class: "muted"}, " — " + totals(cost.after))),
      h("dt", {}, "Limit"), h("dd", {dataset: {cost: "limit"}}, usdText(cost.limit_usd)),
      h("dt", {}, "Cost gate"), h("dd", {dataset: {cost: "gate"}}, costGateText(cost, decision.gate)))
      : h("p", {class: "muted"}, costGateText(null)));
}

function canaryForm(attempt, signal, refresh) {
  const errors = h("div");
  const percent = h("input", {type: "number", name: "percent", min: "0.1", max: "100", step: "any",
                              value: "10", required: true});
  const auto = h("input", {type: "checkbox", name: "auto"});
  const form = h("form", {class: "inline-form canary-form", "aria-label": "Start a canary"},
    field("Share of new runs (%)", percent),
    h("label", {class: "inline"}, auto, " Decide on its own (auto)"),
    h("button", {type: "submit"}, "Start canary"));
  onSubmit(form, async (data) => {
    await post(apiPath("improve", attempt.attempt_id, "canary"),
               {percent: Number(data.get("percent")), auto: data.get("auto") === "on"}, {signal});
    await refresh(true);
  }, {errorSlot: errors, done: "The canary started: new runs of the agent take an arm."});
  return [h("h3", {}, "Try it on live runs first"),
          h("p", {class: "muted"}, "A canary gives the proposal to a share of the agent's new runs without changing its folder, and compares both arms' failures."),
          form, errors];
}

function decisionControls(attempt, canary, signal, refresh) {
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
  if (canary && canary.state === "running") {
    status.push(h("p", {class: "muted"}, "It is being canaried: promote or roll it back below."));
    return status;
  }
  const errors = h("div");
  const apply = h("button", {type: "button", class: "primary"}, "Apply proposal");
  onAction(apply, async () => {
    await post(apiPath("improve", attempt.attempt_id, "apply"), {}, {signal});
    await refresh(true);
  }, {errorSlot: errors, confirmText: `Apply this proposal to ${attempt.agent_dir ?? "the agent folder"}?`,
      done: "The proposal was applied; the old files are kept as a backup."});
  const reason = h("input", {type: "text", name: "reason", placeholder: "optional"});
  const reject = h("form", {class: "inline-form"}, field("Reason for rejecting", reason),
                   h("button", {type: "submit", class: "danger"}, "Reject"));
  onSubmit(reject, async (data) => {
    await post(apiPath("improve", attempt.attempt_id, "reject"), {reason: data.get("reason") || ""}, {signal});
    await refresh(true);
  }, {errorSlot: errors, done: "The proposal was rejected."});
  return [status, h("div", {class: "actions"}, apply), reject, errors, canaryForm(attempt, signal, refresh)];
}

function armRow(arm, label) {
  const cell = (key, value) => h("td", {class: "num", dataset: {count: key}}, String(value ?? 0));
  return h("tr", {dataset: {arm: label}},
    h("th", {scope: "row"}, label),
    cell("runs", arm.runs), cell("successes", arm.successes), cell("completed", arm.completed),
    cell("checks_failed", arm.checks_failed), cell("failed", arm.failed),
    cell("no_progress", arm.no_progress), cell("quarantined", arm.quarantined),
    h("td", {class: "num", dataset: {count: "failure_rate"}}, arm.runs ? rateText(arm.failure_rate, arm.failure_interval) : "—"),
    h("td", {class: "num"}, arm.successes ? usdText(arm.cost_per_success) : "n/a"));
}

// The canary of a proposal: its arms' counts and rates, what the rule says, the decision, and
// promote / roll back while it runs and waits for a person.
function canaryPanel(canary, signal, refresh) {
  const [baseline, proposal] = canary.arms || [];
  const rec = canary.recommendation || {};
  const running = canary.state === "running";
  const errors = h("div");
  const controls = [];
  if (running && !canary.auto) {
    const promote = h("button", {type: "button", class: "primary"}, "Promote");
    onAction(promote, async () => {
      await post(apiPath("improve", canary.proposal, "promote"), {}, {signal});
      await refresh(true);
    }, {errorSlot: errors, confirmText: `Promote this proposal into ${canary.agent_dir}?`,
        done: "The canary was promoted: the proposal is in the agent folder."});
    const rollback = h("button", {type: "button", class: "danger"}, "Roll back");
    onAction(rollback, async () => {
      await post(apiPath("improve", canary.proposal, "rollback"), {}, {signal});
      await refresh(true);
    }, {errorSlot: errors, confirmText: "Roll this canary back? The proposal is rejected.",
        done: "The canary was rolled back: the proposal is rejected."});
    controls.push(h("div", {class: "actions"}, promote, rollback));
  }
  return h("div", {class: "canary-panel"}, section("Canary",
    h("dl", {class: "kv canary"},
      h("dt", {}, "State"), h("dd", {dataset: {canary: "state"}}, badge(canary.state, canary.state)),
      h("dt", {}, "Share"), h("dd", {}, `${canary.percent}% of new runs take the proposal`),
      h("dt", {}, "Decides"), h("dd", {}, canary.auto ? "on its own, by the rule (auto)" : "when a person promotes or rolls it back"),
      h("dt", {}, "Started"), h("dd", {}, formatTime(canary.started_at)),
      h("dt", {}, "P(worse)"), h("dd", {dataset: {canary: "p-worse"}}, Number.isFinite(Number(rec.probability_worse))
        ? Number(rec.probability_worse).toFixed(4) : "",
        h("span", {class: "muted"}, " — the probability that the proposal fails more often")),
      h("dt", {}, "The rule says"), h("dd", {dataset: {canary: "recommendation"}}, h("strong", {}, rec.verdict ?? ""),
        rec.reason ? ": " + rec.reason : ""),
      canary.decided_at ? [h("dt", {}, "Decision"), h("dd", {dataset: {canary: "decision"}},
        h("strong", {}, canary.verdict ?? ""), " ", h("span", {class: "muted"}, formatTime(canary.decided_at)),
        canary.reason ? h("div", {}, canary.reason) : null)] : null),
    h("div", {class: "table-wrap"}, h("table", {class: "data canary-arms"},
      h("caption", {class: "visually-hidden"}, "Canary arms"),
      h("thead", {}, h("tr", {}, ["Arm", "Runs", "Successes", "Completed", "Checks failed", "Failed", "No progress",
                                   "Quarantined", "Failure rate (95%)", "Cost/success"].map((c) => h("th", {scope: "col"}, c)))),
      h("tbody", {}, baseline ? armRow(baseline, "baseline") : null, proposal ? armRow(proposal, "proposal") : null))),
    controls, errors));
}

async function showAttempt(main, id, signal) {
  const body = h("div");
  const canarySlot = h("div");
  render(main, pageHeader("Improve attempt " + id, liveIndicator(signal)),
         h("p", {}, h("a", {href: "#/improve"}, "‹ All attempts")), canarySlot, body);
  render(body, h("p", {class: "muted"}, "Loading…"));
  let attempt = null;
  let canary = null;
  let shownKey = null;
  // The attempt's sections are drawn again only when what they show changed (a form being filled
  // in keeps its text while canary runs come in); the canary panel each time.
  const draw = () => {
    const key = JSON.stringify([attempt, canary && canary.state]);
    if (key !== shownKey) {
      shownKey = key;
      const decision = attempt.decision || {};
      const diff = diffOf(attempt);
      render(body,
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
          decisionControls(attempt, canary, signal, refresh)),
        gainsSection(attempt),
        costSection(attempt),
        diff ? section("Diff", diffView(diff)) : null,
        section("Card", textBlock(attempt.card ?? "", 100000)));
    }
    render(canarySlot, canary ? canaryPanel(canary, signal, refresh) : null);
  };
  const readCanary = async () => {
    try {
      return await get(apiPath("improve", id, "canary"), {signal});
    } catch (e) {
      if (e.status === 404) return null;  // none was started
      throw e;
    }
  };
  // Reads the canary; the attempt too when asked, the first time and whenever the canary's state
  // changed (a start or a decision changes the proposal).
  async function refresh(withAttempt = false) {
    try {
      const next = await readCanary();
      const changed = (next && next.state) !== (canary && canary.state);
      canary = next;
      if (withAttempt || changed || attempt === null) attempt = await get(apiPath("improve", id), {signal});
      draw();
    } catch (e) {
      if (e.name === "AbortError") return;
      if (attempt === null) render(body, errorBox(e));
      else render(canarySlot, errorBox(e));
    }
  }
  live(() => refresh(false), {signal, matches: (event) => isCanaryEvent(event, id), fallbackMs: FALLBACK_POLL_MS});
}

// The latest improve job of this server (POST /api/v1/improve): its state, progress and outcome.
function jobView(job) {
  if (!job) return null;
  const attempt = job.attempt_id
    ? h("a", {href: route("improve", job.attempt_id)}, job.attempt_id) : h("span", {class: "muted"}, "not recorded yet");
  return h("dl", {class: "kv improve-job", dataset: {state: job.state}},
    h("dt", {}, "Agent"), h("dd", {}, job.agent),
    h("dt", {}, "State"), h("dd", {dataset: {job: "state"}}, badge(job.state, job.state)),
    h("dt", {}, "Started"), h("dd", {}, formatTime(job.started_at)),
    h("dt", {}, "Attempt"), h("dd", {}, attempt),
    h("dt", {}, "Progress"), h("dd", {dataset: {job: "progress"}}, job.progress ?? h("span", {class: "muted"}, "starting…")),
    job.state === "succeeded" ? [h("dt", {}, "Outcome"), h("dd", {dataset: {job: "outcome"}}, badge(job.outcome, job.outcome),
      job.proposal ? [" — proposal ", badge(job.proposal, job.proposal)] : null)] : null,
    job.error ? [h("dt", {}, "Error"), h("dd", {class: "error-text"}, h("code", {}, job.error.code), " " + job.error.message)] : null);
}

function numberField(label, name, value, {min, max, step = "1", hint} = {}) {
  return field(label, h("input", {type: "number", name, value: String(value), min, max, step, required: true}), hint);
}

// Starts an attempt of an agent of serve.agents_dir: the check and the cases come from its folder's
// [improve] table, the page only chooses the agent and the numbers.
function startForm(agents, signal, onStarted) {
  const agent = h("select", {name: "agent", required: true},
    agents.map((a) => h("option", {value: a.name, disabled: Boolean(a.error)},
                        a.error ? `${a.name} (does not load: ${a.error})` : a.name)));
  const seed = h("input", {type: "number", name: "seed", min: "0", step: "1", placeholder: "random"});
  const errors = h("div");
  const form = h("form", {class: "stack"},
    field("Agent", agent, "Its agent.toml needs an [improve] table with the check command and the cases file."),
    h("div", {class: "row"},
      numberField("Repeats", "repeats", 3, {min: "2", max: "100", hint: "runs per case and arm"}),
      numberField("Rounds", "rounds", 2, {min: "1", max: "20"}),
      numberField("Candidates", "candidates", 2, {min: "1", max: "20", hint: "per round"}),
      numberField("Held-out fraction", "held_out_fraction", 0.25, {min: "0", max: "0.99", step: "0.05"}),
      field("Seed", seed, "of the held-out split")),
    h("div", {class: "actions"}, h("button", {type: "submit", class: "primary"}, "Start attempt")),
    errors);
  onSubmit(form, async (data) => {
    const body = {agent: data.get("agent"), repeats: Number(data.get("repeats")), rounds: Number(data.get("rounds")),
                  candidates: Number(data.get("candidates")), held_out_fraction: Number(data.get("held_out_fraction"))};
    if (data.get("seed") !== "") body.seed = Number(data.get("seed"));
    const job = await post(apiPath("improve"), body, {signal});
    onStarted(job);
    return job;
  }, {errorSlot: errors, done: (job) => `Started an improve attempt of ${job.agent}.`});
  return form;
}

export async function show(main, current, signal) {
  if (current.id !== null) return showAttempt(main, current.id, signal);
  const slot = h("div", {class: "table-wrap"});
  const jobSlot = h("div");
  const startSlot = h("div");
  render(main, pageHeader("Improve", liveIndicator(signal)),
         h("p", {class: "muted"}, "Tested proposals for agents' instructions and skills. Nothing changes until a proposal is applied."),
         slot,
         h("section", {class: "card start-improve", "aria-labelledby": "start-improve"},
           h("h2", {id: "start-improve"}, "Start an improve attempt"),
           h("p", {class: "muted"}, "The server runs one attempt at a time and queues its proposal for you here."),
           jobSlot, startSlot));
  const loadList = async () => {
    try {
      const data = await get(apiPath("improve"), {signal});
      render(slot, attemptsTable(data.attempts || []));
    } catch (e) {
      if (e.name !== "AbortError") render(slot, errorBox(e));
    }
  };
  const loadJob = async () => {
    try {
      render(jobSlot, jobView(await get(apiPath("improve", "job"), {signal})));
    } catch (e) {
      if (e.name === "AbortError") return;
      render(jobSlot, e.status === 404 ? null : errorBox(e));
    }
  };
  live(async () => {
    await Promise.all([loadList(), loadJob()]);
  }, {signal, matches: isImproveEvent, fallbackMs: FALLBACK_POLL_MS});
  try {
    const known = (await get(apiPath("agents"), {signal})).agents || [];
    render(startSlot, known.length
      ? startForm(known, signal, (job) => render(jobSlot, jobView(job)))
      : h("p", {class: "muted"}, "No agents: start mend serve with serve.agents_dir set to a folder of agent folders."));
  } catch (e) {
    if (e.name !== "AbortError") render(startSlot, errorBox(e));
  }
}
