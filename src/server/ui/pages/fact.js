// One fact (a lesson, most often) of long-term memory: its text and counts, the run it was
// learned from, and the runs it was given to with each one's outcome (docs/serve.md).
import {ApiError} from "../lib/api.js";
import {errorBox, h, render, textBlock} from "../lib/dom.js";
import {factRunsView, loadFact} from "../lib/fact_runs.js";
import {formatTime} from "../lib/format.js";
import {pageHeader} from "../lib/page.js";

function overview(fact) {
  const tags = Array.isArray(fact.tags) ? fact.tags.join(", ") : "";
  const rows = [
    ["Kind", fact.category ?? ""],
    ["Tags", tags],
    ["Helped", String(fact.helped ?? 0)],
    ["Hurt", String(fact.hurt ?? 0)],
    ["Source", fact.source ?? ""],
    ["Created", formatTime(fact.created_at)],
    ["Last given", formatTime(fact.last_accessed)],
  ];
  if (fact.superseded_by) rows.push(["Superseded by", fact.superseded_by]);
  return h("section", {class: "card", "aria-label": "Fact"}, textBlock(fact.content ?? "", 8000),
           h("dl", {class: "kv overview"}, rows.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)])));
}

export async function show(main, current, signal) {
  const id = current.id;
  const body = h("div", {}, h("p", {class: "muted"}, "Loading…"));
  render(main, pageHeader("Fact " + id), h("p", {}, h("a", {href: "#/memory"}, "‹ Memory")), body);
  let fact;
  try {
    fact = await loadFact(id, signal);
  } catch (e) {
    if (e.name === "AbortError") throw e;
    render(body, e instanceof ApiError && e.status === 404
      ? h("p", {class: "muted"}, "There is no fact " + id + " (it may have been deleted).")
      : errorBox(e));
    return;
  }
  if (fact.category === "lesson") main.querySelector("h1").textContent = "Lesson " + id;
  render(body, overview(fact), factRunsView(fact));
}
