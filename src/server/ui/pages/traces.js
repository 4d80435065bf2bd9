// Recent traces (runs' traces and those other services sent to the OTLP receiver), and one trace
// as a waterfall.
import {apiPath, get, withQuery} from "../lib/api.js";
import {emptyRow, errorBox, h, render, route} from "../lib/dom.js";
import {formatDuration, formatTime, toMillis} from "../lib/format.js";
import {pageHeader} from "../lib/page.js";
import {attributesOf} from "../lib/spans.js";
import {waterfall} from "../lib/waterfall.js";

const PAGE_SIZE = 25;

function traceRow(trace) {
  const duration = Number.isFinite(Number(trace.duration_ms)) && trace.duration_ms !== null
    ? Number(trace.duration_ms) : toMillis(trace.end) - toMillis(trace.start);
  return h("tr", {},
    h("td", {}, h("a", {href: route("traces", trace.trace_id)}, h("code", {}, trace.trace_id ?? ""))),
    h("td", {}, trace.name ?? "", trace.has_root === false ? h("span", {class: "muted"}, " (root not received yet)") : null),
    h("td", {}, trace.service ?? ""),
    h("td", {}, formatTime(trace.start)),
    h("td", {class: "num"}, formatDuration(duration)),
    h("td", {class: "num"}, trace.spans ?? ""),
    h("td", {class: ["num", trace.errors ? "error-text" : null]}, trace.errors ?? ""),
    h("td", {}, trace.run_id ? h("a", {href: route("runs", trace.run_id)}, trace.run_id) : ""));
}

async function showTrace(main, id, signal) {
  const body = h("div", {class: "card"}, h("p", {class: "muted"}, "Loading…"));
  render(main, pageHeader("Trace " + id), h("p", {}, h("a", {href: "#/traces"}, "‹ All traces")), body);
  try {
    const trace = await get(apiPath("traces", id), {signal});
    const runIds = [...new Set((trace.spans || []).map((s) => attributesOf(s.attributes)["mend.run.id"])
                                                   .filter((r) => typeof r === "string"))];
    render(body, runIds.length ? h("p", {}, "Runs: ", runIds.map((r, i) => [i ? ", " : "",
                                 h("a", {href: route("runs", r)}, r)])) : null,
           waterfall(trace));
  } catch (e) {
    if (e.name !== "AbortError") render(body, errorBox(e));
  }
}

export async function show(main, current, signal) {
  if (current.id !== null) return showTrace(main, current.id, signal);
  const state = {cursors: [""], page: 0};
  const slot = h("div", {class: "table-wrap"});
  const pager = h("div", {class: "pager"});
  render(main, pageHeader("Traces"), slot, pager);
  const load = async () => {
    try {
      const data = await get(withQuery(apiPath("traces"), {limit: PAGE_SIZE, cursor: state.cursors[state.page]}), {signal});
      const traces = data.traces || [];
      render(slot, h("table", {class: "data"},
        h("thead", {}, h("tr", {}, ["Trace", "Name", "Service", "Started", "Duration", "Spans", "Errors", "Run"]
                                   .map((c) => h("th", {scope: "col"}, c)))),
        h("tbody", {}, traces.length ? traces.map(traceRow) : emptyRow(8, "No traces yet."))));
      const newer = h("button", {type: "button", disabled: state.page === 0}, "‹ Newer");
      const older = h("button", {type: "button", disabled: !data.next}, "Older ›");
      newer.addEventListener("click", () => { state.page -= 1; load(); });
      older.addEventListener("click", () => { state.cursors[state.page + 1] = data.next; state.page += 1; load(); });
      render(pager, newer, h("span", {}, `page ${state.page + 1}`), older);
    } catch (e) {
      if (e.name !== "AbortError") render(slot, errorBox(e));
    }
  };
  await load();
}
