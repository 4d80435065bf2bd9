// Recent traces (runs' traces and those other services sent to the OTLP receiver), and one trace
// as a waterfall.
import {apiPath, get, withQuery} from "../lib/api.js";
import {emptyRow, errorBox, field, h, render, route} from "../lib/dom.js";
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

// The list's filters, as the API names them (docs/http_api.md, "Traces"); the page's address
// carries the same names, so a filtered view can be bookmarked and survives a reload.
const FILTERS = ["agent", "service", "status", "model", "from", "to", "error_text"];

// An RFC 3339 time as the value of a datetime-local input (local time, to the second), and back.
export function toLocalInput(rfc3339) {
  const d = new Date(rfc3339);
  if (!rfc3339 || Number.isNaN(d.getTime())) return "";
  return new Date(d.getTime() - d.getTimezoneOffset() * 60000).toISOString().slice(0, 19);
}

export function fromLocalInput(value) {
  const d = new Date(value);
  return !value || Number.isNaN(d.getTime()) ? "" : d.toISOString().replace(/\.000Z$/, "Z");
}

function filterForm(state, apply) {
  const text = (name, placeholder) => h("input", {name, type: "search", value: state[name],
                                                  placeholder, autocomplete: "off"});
  const controls = {
    agent: text("agent", "any agent"),
    service: text("service", "any service"),
    status: h("select", {name: "status"},
      [["", "any status"], ["ok", "ok"], ["error", "with errors"]]
        .map(([value, label]) => h("option", {value, selected: value === state.status}, label))),
    model: text("model", "any model"),
    from: h("input", {name: "from", type: "datetime-local", step: "1", value: toLocalInput(state.from)}),
    to: h("input", {name: "to", type: "datetime-local", step: "1", value: toLocalInput(state.to)}),
    error_text: text("error_text", "text in errors"),
  };
  const labels = {agent: "Agent", service: "Service", status: "Status", model: "Model",
                  from: "Started from", to: "Started before", error_text: "Error text"};
  const clearButton = h("button", {type: "button"}, "Clear");
  const form = h("form", {class: "filters", role: "search", "aria-label": "Filter traces"},
    FILTERS.map((name) => field(labels[name], controls[name])),
    h("button", {type: "submit"}, "Filter"), clearButton);
  const read = () => {
    for (const name of FILTERS) {
      const value = controls[name].value.trim();
      state[name] = name === "from" || name === "to" ? fromLocalInput(value) : value;
    }
    apply();
  };
  controls.status.addEventListener("change", read);
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    read();
  });
  clearButton.addEventListener("click", () => {
    for (const name of FILTERS) controls[name].value = "";
    read();
  });
  return form;
}

function filtered(state) {
  return FILTERS.some((name) => state[name]);
}

export async function show(main, current, signal) {
  if (current.id !== null) return showTrace(main, current.id, signal);
  const state = {cursors: [""], page: 0};
  for (const name of FILTERS) state[name] = current.query.get(name) || "";
  const slot = h("div", {class: "table-wrap"});
  const pager = h("div", {class: "pager"});
  const load = async () => {
    const query = {limit: PAGE_SIZE, cursor: state.cursors[state.page]};
    for (const name of FILTERS) query[name] = state[name];
    try {
      const data = await get(withQuery(apiPath("traces"), query), {signal});
      const traces = data.traces || [];
      render(slot, h("table", {class: "data"},
        h("caption", {class: "visually-hidden"}, "Traces, newest first"),
        h("thead", {}, h("tr", {}, ["Trace", "Name", "Service", "Started", "Duration", "Spans", "Errors", "Run"]
                                   .map((c) => h("th", {scope: "col"}, c)))),
        h("tbody", {}, traces.length ? traces.map(traceRow)
                                     : emptyRow(8, filtered(state) ? "No traces match." : "No traces yet."))));
      const first = state.page * PAGE_SIZE + 1;
      const total = data.total !== undefined ? ` of ${data.total}` : "";
      const newer = h("button", {type: "button", disabled: state.page === 0}, "‹ Newer");
      const older = h("button", {type: "button", disabled: !data.next}, "Older ›");
      newer.addEventListener("click", () => { state.page -= 1; load(); });
      older.addEventListener("click", () => { state.cursors[state.page + 1] = data.next; state.page += 1; load(); });
      render(pager, newer, h("span", {}, traces.length ? `${first}–${first + traces.length - 1}${total}`
                                                       : `0${total}`), older);
    } catch (e) {
      if (e.name !== "AbortError") {
        render(slot, errorBox(e));
        render(pager);
      }
    }
  };
  const apply = () => {
    const params = new URLSearchParams();
    for (const name of FILTERS) if (state[name]) params.set(name, state[name]);
    window.history.replaceState(null, "", route("traces") + (params.toString() ? "?" + params : ""));
    state.cursors = [""];
    state.page = 0;
    load();
  };
  render(main, pageHeader("Traces"), filterForm(state, apply), slot, pager);
  await load();
}
