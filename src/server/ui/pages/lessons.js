// The lesson queue (docs/lesson_queue.md): its depth, the jobs waiting or retrying, and the dead
// letters, which can be retried or purged.
import {apiPath, get, post} from "../lib/api.js";
import {emptyRow, errorBox, h, render, textBlock} from "../lib/dom.js";
import {formatDuration, preview} from "../lib/format.js";
import {live} from "../lib/live.js";
import {onAction, pageHeader, section} from "../lib/page.js";

const FALLBACK_POLL_MS = 5000;
// Jobs moved by another process (the CLI, a worker on another replica) publish nothing here:
// those show within this long.
const QUEUE_POLL_MS = 60000;

// A run's end can queue a lesson job; the workers publish what became of each one
// (reflexion.job_stored, _skipped, _retrying, _dead_lettered).
function touchesLessons(event) {
  const type = String(event.type || "");
  return type.startsWith("reflexion.") || type === "run.failed" || type === "run.completed" ||
         type.startsWith("recovery.");
}

function stat(label, value) {
  return h("div", {class: "stat"}, h("span", {class: "stat-value"}, String(value ?? "–")),
           h("span", {class: "stat-label"}, label));
}

function jobRows(jobs, actions) {
  return jobs.map((job) => h("tr", {dataset: {job: job.id}},
    h("td", {}, h("code", {}, job.id ?? "")),
    h("td", {}, job.trigger ?? ""),
    h("td", {class: "num"}, job.attempts ?? ""),
    h("td", {}, Number.isFinite(Number(job.age_seconds)) ? formatDuration(Number(job.age_seconds) * 1000) : ""),
    h("td", {class: "content-cell"}, textBlock(preview(job.task, 300), 300)),
    h("td", {class: "error-cell"}, job.last_error ? textBlock(job.last_error, 300) : ""),
    actions ? h("td", {class: "row-actions"}, actions(job)) : null));
}

function jobsTable(jobs, empty, actions) {
  const columns = ["Job", "Trigger", "Attempts", "Age", "Task", "Last error", actions ? "" : null].filter((c) => c !== null);
  return h("table", {class: "data"},
    h("thead", {}, h("tr", {}, columns.map((c) => h("th", {scope: "col"}, c)))),
    h("tbody", {}, jobs.length ? jobRows(jobs, actions) : emptyRow(columns.length, empty)));
}

export async function show(main, current, signal) {
  const stats = h("div", {class: "stats"});
  const pendingSlot = h("div", {class: "table-wrap"});
  const deadSlot = h("div", {class: "table-wrap"});
  const errors = h("div");
  const updated = h("span", {class: "muted"});
  const drain = h("button", {type: "button"}, "Drain the queue");

  let seen = "";
  const load = async (force = false) => {
    try {
      const [summary, pending, dead] = await Promise.all([
        get(apiPath("lessons"), {signal}),
        get(apiPath("lessons", "pending"), {signal}),
        get(apiPath("lessons", "dead"), {signal}),
      ]);
      updated.textContent = "updated " + new Date().toLocaleTimeString();
      const signature = JSON.stringify([summary, pending, dead]);
      if (signature === seen && !force) return;
      seen = signature;
      render(stats, stat("queued", summary.queue_depth), stat("WAL records", summary.wal_records),
             stat("dead letters", summary.dlq_size));
      render(pendingSlot, jobsTable(pending.pending || [], "No lesson job is waiting."));
      render(deadSlot, jobsTable(dead.dlq || [], "No dead letters.", deadActions));
    } catch (e) {
      if (e.name !== "AbortError") render(errors, errorBox(e));
    }
  };
  const deadActions = (job) => {
    const retry = h("button", {type: "button", "aria-label": `Retry lesson job ${job.id}`}, "Retry");
    const purge = h("button", {type: "button", class: "danger", "aria-label": `Purge lesson job ${job.id}`}, "Purge");
    onAction(retry, async () => {
      await post(apiPath("lessons", "dead", job.id, "retry"), {}, {signal});
      await load(true);
    }, {errorSlot: errors, done: `Job ${job.id} is queued again.`});
    onAction(purge, async () => {
      await post(apiPath("lessons", "dead", job.id, "purge"), {}, {signal});
      await load(true);
    }, {errorSlot: errors, confirmText: "Purge this dead letter? Its lesson is lost.", done: `Job ${job.id} was purged.`});
    return [retry, " ", purge];
  };
  onAction(drain, async () => {
    const result = await post(apiPath("lessons", "drain"), {}, {signal});
    await load(true);
    return result;
  }, {errorSlot: errors, done: (r) => r && r.succeeded !== undefined
      ? `Drained: ${r.succeeded} stored, ${r.skipped} skipped, ${r.retried} retried, ` +
        `${r.dead_lettered} dead-lettered, ${r.remaining} remaining.`
      : "The queue was drained."});

  render(main, pageHeader("Lessons", updated), errors, stats,
         section("Waiting or retrying", pendingSlot, h("div", {class: "actions"}, drain)),
         section("Dead letters", h("p", {class: "muted"},
                   "Jobs that failed permanently or ran out of attempts. Retry queues one again; purge deletes it."),
                 deadSlot));
  live(() => load(), {signal, matches: touchesLessons, fallbackMs: FALLBACK_POLL_MS,
                      pollMs: QUEUE_POLL_MS});
}
