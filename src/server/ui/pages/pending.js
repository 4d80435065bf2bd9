// Unfinished runs: those waiting for a person (approve, deny, answer right here) and those
// interrupted or failed (resume); reloaded when a run's event arrives.
import {apiPath, get} from "../lib/api.js";
import {errorBox, h, render, route} from "../lib/dom.js";
import {formatAgo, formatTime, preview} from "../lib/format.js";
import {isRunEvent, live} from "../lib/live.js";
import {pageHeader, section} from "../lib/page.js";
import {awaitedCalls, runActions} from "../lib/run_actions.js";
import {statusCell} from "./runs.js";

const FALLBACK_POLL_MS = 5000;

// What a waiting run waits on (its question, the tool calls to approve) is in its detail, not in
// the list: it is fetched for the first few waiting runs.
const DETAILS_FOR = 20;

async function withDetails(runs, signal) {
  return Promise.all(runs.map(async (run, i) => {
    if (i >= DETAILS_FOR) return {run, calls: []};
    try {
      const data = await get(apiPath("runs", run.id), {signal});
      const detail = data.run || data;
      const calls = Array.isArray(detail.pending_calls) ? detail.pending_calls
                                                         : awaitedCalls(data.transcript || detail.transcript);
      return {run: {...run, question: detail.question ?? run.question}, calls};
    } catch (e) {
      if (e.name === "AbortError") throw e;
      return {run, calls: []};
    }
  }));
}

function runCard(run, signal, reload, calls = []) {
  const error = run.last_error;
  return h("li", {class: "card pending-run", dataset: {run: run.id}},
    h("div", {class: "pending-head"},
      h("a", {href: route("runs", run.id)}, run.id), " ",
      h("span", {class: "muted"}, run.agent ?? ""), " ", statusCell(run), " ",
      h("span", {class: "muted", title: formatTime(run.updated_at ?? run.created_at)},
        formatAgo(run.updated_at ?? run.created_at))),
    error ? h("p", {class: "error-text"}, h("code", {}, error.code ?? ""), " ", preview(error.message, 200)) : null,
    run.next_attempt_at ? h("p", {class: "muted"}, "next recovery attempt ", formatTime(run.next_attempt_at)) : null,
    runActions(run, {signal, onDone: reload, calls}));
}

export async function show(main, current, signal) {
  const waitingSlot = h("div");
  const otherSlot = h("div");
  const updated = h("span", {class: "muted"});
  render(main, pageHeader("Pending", updated),
         section("Waiting for you", waitingSlot),
         section("Interrupted, failed or quarantined", otherSlot));
  // The lists are redrawn only when they changed, so a half-typed answer is not wiped by polling.
  let seen = "";
  const load = async (force = false) => {
    try {
      const data = await get(apiPath("pending") + "?limit=200", {signal});
      const runs = data.runs || [];
      const signature = JSON.stringify(runs.map((r) => [r.id, r.status, r.interrupted, r.waiting, r.attempts, r.updated_at]));
      updated.textContent = "updated " + new Date().toLocaleTimeString();
      if (signature === seen && !force) return;
      seen = signature;
      const reload = () => window.setTimeout(() => load(true), 500);
      const waiting = await withDetails(runs.filter((r) => r.waiting), signal);
      const other = runs.filter((r) => !r.waiting);
      render(waitingSlot, waiting.length
        ? h("ul", {class: "plain"}, waiting.map((w) => runCard(w.run, signal, reload, w.calls)))
        : h("p", {class: "muted"}, "No run waits for an approval or an answer."));
      render(otherSlot, other.length
        ? h("ul", {class: "plain"}, other.map((r) => runCard(r, signal, reload)))
        : h("p", {class: "muted"}, "Nothing else is unfinished."));
    } catch (e) {
      if (e.name !== "AbortError") render(waitingSlot, errorBox(e));
    }
  };
  live(() => load(), {signal, matches: (event) => isRunEvent(event), fallbackMs: FALLBACK_POLL_MS});
}
