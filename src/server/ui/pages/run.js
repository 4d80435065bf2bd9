// One run: its state and the actions it waits for, its trace as a waterfall, its transcript and
// its checkpoints (each can be forked). Polls while the run is running.
import {ApiError, apiPath, get, post} from "../lib/api.js";
import {badge, emptyRow, errorBox, h, render, route, textBlock} from "../lib/dom.js";
import {formatAgo, formatCount, formatTime, formatUsd, interruptionText, toMillis} from "../lib/format.js";
import {isRunEvent, live, liveState} from "../lib/live.js";
import {onAction, pageHeader} from "../lib/page.js";
import {runMemorySections} from "../lib/fact_runs.js";
import {awaitedCalls, runActions} from "../lib/run_actions.js";
import {waterfall} from "../lib/waterfall.js";
import {modelText, statusCell} from "./runs.js";

const POLL_MS = 2000;
const RECENT_MS = 8000;

function overview(run) {
  const why = interruptionText(run);
  const rows = [
    ["Status", why ? [statusCell(run), " ", h("span", {class: "muted"}, why)] : statusCell(run)],
    ["Agent", run.agent ? h("a", {href: route("agents", run.agent)}, run.agent) : ""],
    ["Steps", run.steps ?? ""],
    ["Attempts", run.attempts ?? ""],
    ["Model", modelText(run)],
    ["Workspace", run.workspace ? h("code", {}, run.workspace) : ""],
    ["Tokens", run.usage ? `${formatCount(run.usage.input_tokens)} in, ${formatCount(run.usage.output_tokens)} out` : ""],
    ["Cost", formatUsd(run.cost_usd)],
    ["Created", formatTime(run.created_at)],
    ["Updated", [formatTime(run.updated_at), " ", h("span", {class: "muted"}, formatAgo(run.updated_at))]],
    ["Trace", run.trace_id ? h("a", {href: route("traces", run.trace_id)}, h("code", {}, run.trace_id))
                           : h("span", {class: "muted"}, "none")],
  ];
  if (run.parent && run.parent.id) {
    rows.push(["Forked from", [h("a", {href: route("runs", run.parent.id)}, run.parent.id),
                               (run.parent.checkpoint ?? run.parent.step) !== undefined
                                 ? ` at checkpoint ${run.parent.checkpoint ?? run.parent.step}` : ""]]);
  }
  const parts = [h("dl", {class: "kv overview"}, rows.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]))];
  if (run.task) parts.push(h("h3", {}, "Task"), textBlock(run.task, 2000));
  const error = run.last_error;
  if (error) {
    parts.push(h("div", {class: "error-box"},
      h("strong", {}, error.code ?? "error"), error.class ? ` (${error.class}${error.retryable === false ? ", not retryable" : ""})` : "",
      h("br"), String(error.message ?? "")));
  }
  if (run.output) parts.push(h("h3", {}, "Output"), textBlock(run.output, 8000));
  return parts;
}

function toolCallText(call) {
  const name = call.name ?? call.function?.name ?? "tool";
  const args = call.arguments ?? call.function?.arguments ?? {};
  return `${name}(${typeof args === "string" ? args : JSON.stringify(args)})`;
}

function transcriptView(messages) {
  if (!messages.length) return h("p", {class: "muted"}, "No messages yet.");
  return h("ol", {class: "transcript"}, messages.map((m, i) => {
    const role = String(m.role ?? "");
    const head = [h("span", {class: "role role-" + (["system", "user", "assistant", "tool"].includes(role) ? role : "other")}, role),
                  h("span", {class: "muted"}, ` #${i + 1}`)];
    if (m.tool_call_id) head.push(" ", h("span", {class: "muted"}, "result of "), h("code", {}, m.tool_call_id));
    if (m.replaced_by_hook) head.push(" ", h("span", {class: "flag flag-replaced"}, "result replaced by hook"));
    if (m.hook_decision) head.push(" ", h("span", {class: "flag flag-denied"}, String(m.hook_decision) + " by a hook"));
    if (m.is_error) head.push(" ", h("span", {class: "flag flag-error"}, "error"));
    const body = [];
    if (m.content !== null && m.content !== undefined && m.content !== "") {
      body.push(textBlock(typeof m.content === "string" ? m.content : JSON.stringify(m.content, null, 2),
                          role === "system" ? 600 : 4000));
    }
    for (const call of m.tool_calls || []) {
      body.push(h("div", {class: "tool-call"}, h("span", {class: "muted"}, "calls "),
                  h("code", {}, call.id ?? ""), textBlock(toolCallText(call), 2000)));
    }
    return h("li", {class: "message message-" + (role === "tool" ? "tool" : role === "assistant" ? "assistant" : "other")},
             h("div", {class: "message-head"}, head), body);
  }));
}

function checkpointsView(run, checkpoints, signal) {
  const errors = h("div");
  const rows = checkpoints.map((c) => {
    const number = c.checkpoint ?? c.step;
    const fork = h("button", {type: "button", "aria-label": `Fork from checkpoint ${number}`}, "Fork from here");
    onAction(fork, async () => {
      const forked = await post(apiPath("runs", run.id, "fork"), {from_checkpoint: number}, {signal});
      window.location.hash = route("runs", forked.run_id);
      return forked;
    }, {errorSlot: errors, done: (f) => `Forked ${run.id} at checkpoint ${number} as ${f.run_id}.`});
    return h("tr", {}, h("td", {class: "num"}, number), h("td", {class: "num"}, c.message_count ?? c.messages ?? ""),
             h("td", {}, formatTime(c.created_at)), h("td", {}, fork));
  });
  return [errors, h("table", {class: "data"},
    h("thead", {}, h("tr", {}, ["Checkpoint", "Messages", "Saved", ""].map((c) => h("th", {scope: "col"}, c)))),
    h("tbody", {}, rows.length ? rows : emptyRow(4, "No checkpoints.")))];
}

// Accessible tabs: buttons with role tab; arrow keys move between them.
function tabs(names) {
  const list = h("div", {class: "tabs", role: "tablist", "aria-label": "Run details"});
  const panels = {};
  const buttons = names.map(([key, title]) => {
    const panel = h("div", {role: "tabpanel", id: "panel-" + key, "aria-labelledby": "tab-" + key,
                            class: "tab-panel", tabindex: "0", hidden: true});
    panels[key] = panel;
    return h("button", {type: "button", role: "tab", id: "tab-" + key, "aria-controls": "panel-" + key,
                        "aria-selected": "false", tabindex: "-1", dataset: {tab: key}}, title);
  });
  const select = (key, focus) => {
    for (const b of buttons) {
      const on = b.dataset.tab === key;
      b.setAttribute("aria-selected", String(on));
      b.tabIndex = on ? 0 : -1;
      panels[b.dataset.tab].hidden = !on;
      if (on && focus) b.focus();
    }
  };
  buttons.forEach((b, i) => {
    b.addEventListener("click", () => select(b.dataset.tab, false));
    b.addEventListener("keydown", (e) => {
      const step = e.key === "ArrowRight" ? 1 : e.key === "ArrowLeft" ? -1 : 0;
      if (!step) return;
      e.preventDefault();
      select(buttons[(i + step + buttons.length) % buttons.length].dataset.tab, true);
    });
  });
  list.append(...buttons);
  select(names[0][0], false);
  return {list, panels, select};
}

async function loadTrace(id, signal) {
  try {
    return await get(apiPath("runs", id, "trace"), {signal});
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return null;
    throw e;
  }
}

export async function show(main, current, signal) {
  const id = current.id;
  const headerTools = h("span", {class: "muted"});
  const overviewSlot = h("section", {class: "card", "aria-label": "Overview"});
  const actionSlot = h("div");
  const memory = runMemorySections(id, signal);
  const t = tabs([["trace", "Trace"], ["transcript", "Transcript"], ["checkpoints", "Checkpoints"]]);
  for (const panel of Object.values(t.panels)) render(panel, h("p", {class: "muted"}, "Loading…"));
  render(overviewSlot, h("p", {class: "muted"}, "Loading…"));
  render(main, pageHeader("Run " + id, headerTools), h("p", {}, h("a", {href: "#/runs"}, "‹ All runs")),
         actionSlot, overviewSlot, memory.element, t.list, Object.values(t.panels));
  let seen = "";
  let traceSeen = "";
  let keepPolling = true;
  // After an action the server answers 202 and changes the run on its own thread: keep looking
  // for a while even if the first answers still show the old state.
  let pollUntil = 0;
  const afterAction = () => {
    keepPolling = true;
    pollUntil = Date.now() + 15000;
  };

  const refresh = async () => {
    let data;
    try {
      data = await get(apiPath("runs", id), {signal});
    } catch (e) {
      if (e.name === "AbortError") throw e;
      render(overviewSlot, errorBox(e));
      keepPolling = !(e instanceof ApiError && e.status === 404);
      return;
    }
    // {"run": {...}, "transcript", "checkpoints"}, or the run's fields with those two beside them.
    const run = data.run || data;
    const transcript = data.transcript || run.transcript || [];
    const checkpoints = data.checkpoints || run.checkpoints || [];
    const signature = JSON.stringify([run.status, run.interrupted, run.waiting, run.updated_at, run.step,
                                      transcript.length, checkpoints.length, run.driven_here]);
    if (signature !== seen) {
      seen = signature;
      render(overviewSlot, overview(run));
      const calls = Array.isArray(run.pending_calls) ? run.pending_calls : awaitedCalls(transcript);
      render(actionSlot, runActions(run, {signal, calls, onDone: afterAction}));
      render(t.panels.transcript, transcriptView(transcript));
      render(t.panels.checkpoints, checkpointsView(run, checkpoints, signal));
    }
    await memory.load();
    try {
      const trace = await loadTrace(id, signal);
      const traceSignature = trace ? JSON.stringify((trace.spans || []).map((s) => [s.span_id, s.end, s.status])) : "none";
      if (traceSignature !== traceSeen) {
        traceSeen = traceSignature;
        render(t.panels.trace, trace ? waterfall(trace) : h("p", {class: "muted"}, "No trace is recorded for this run."));
      }
    } catch (e) {
      if (e.name === "AbortError") throw e;
      render(t.panels.trace, errorBox(e));
    }
    headerTools.textContent = "updated " + new Date().toLocaleTimeString();
    // The run's own events (a step, a tool call, its end) refresh the page. Its spans reach
    // observe.db a moment after its state (the span writer batches about every second), so a run
    // that changed in the last seconds, or that an action here just changed, is read again until
    // they are in; without the event stream a running run is polled too.
    const recent = Date.now() - toMillis(run.updated_at) < RECENT_MS;
    keepPolling = (liveState() !== "open" && run.status === "running") ||
                  Date.now() < pollUntil || recent;
  };
  live(refresh, {signal, matches: (event) => isRunEvent(event, id), fallbackMs: POLL_MS,
                 pollMs: POLL_MS, pollWhile: () => keepPolling});
}
