// Sessions: the conversations of mend proxy (GET /api/v1/sessions), and one conversation as the
// thread of its model calls in order, each linked to its trace. Runs of `mend chat` are runs, not
// sessions: they are on the runs page.
import {apiPath, get, withQuery} from "../lib/api.js";
import {badge, emptyRow, errorBox, h, link, render, route} from "../lib/dom.js";
import {formatDuration, formatTime, formatUsd} from "../lib/format.js";
import {loadInto, pageHeader, section} from "../lib/page.js";

const LIST_SIZE = 50;

function sessionsTable(sessions) {
  return h("table", {class: "data"},
    h("caption", {class: "visually-hidden"}, "Sessions, latest call first"),
    h("thead", {}, h("tr", {}, ["Session", "Agent", "First call", "Last call", "Calls", "Cost"]
      .map((c) => h("th", {scope: "col"}, c)))),
    h("tbody", {}, sessions.length ? sessions.map((s) => h("tr", {},
      h("td", {}, link(s.id, "sessions", s.id)),
      h("td", {}, s.agent ?? ""),
      h("td", {}, formatTime(s.first)),
      h("td", {}, formatTime(s.last)),
      h("td", {class: "num"}, s.call_count),
      h("td", {class: "num"}, formatUsd(s.cost_usd)))) :
      emptyRow(6, "No sessions: conversations through mend proxy (or mend serve with proxy.upstream) appear here.")));
}

function callsTable(calls) {
  return h("ol", {class: "plain-list session-thread"}, calls.map((c, i) => h("li", {dataset: {call: String(i + 1)}},
    h("strong", {}, `${i + 1}. ${formatTime(c.start)}`), " ",
    c.status === "error" ? badge("error") : null, " ",
    c.model ?? "", c.route ? h("span", {class: "muted"}, ` ${c.route}`) : null,
    c.http_status !== null && c.http_status !== undefined ? h("span", {class: "muted"}, ` → ${c.http_status}`) : null,
    h("div", {}, `${formatDuration(c.duration_ms)}`,
      c.input_tokens !== null ? `, ${c.input_tokens} tokens in, ${c.output_tokens ?? 0} out` : "",
      c.cost_usd !== null ? `, ${formatUsd(c.cost_usd)}` : "", " · ",
      h("a", {href: route("traces", c.trace_id)}, "trace")))));
}

async function showSession(main, id, signal) {
  const body = h("div", {}, h("p", {class: "muted"}, "Loading…"));
  render(main, pageHeader("Session " + id), h("p", {}, h("a", {href: "#/sessions"}, "‹ All sessions")), body);
  try {
    const s = await get(apiPath("sessions", id), {signal});
    render(body,
      h("p", {}, s.agent ? `Agent ${s.agent}; ` : "", `${s.call_count} calls from ${formatTime(s.first)} to ` +
        `${formatTime(s.last)}, ${formatUsd(s.cost_usd)}.`),
      section("Calls in order", s.calls.length ? callsTable(s.calls) : h("p", {class: "muted"}, "No calls.")));
  } catch (e) {
    if (e.name !== "AbortError") render(body, errorBox(e));
  }
}

export async function show(main, current, signal) {
  if (current.id !== null) return showSession(main, current.id, signal);
  const body = h("div", {}, h("p", {class: "muted"}, "Loading…"));
  render(main, pageHeader("Sessions"),
         h("p", {class: "muted"}, "Conversations through mend proxy, each the thread of its model calls " +
                                  "(X-Mend-Session names one). Runs of mend chat are on the runs page."),
         body);
  await loadInto(body, () => get(withQuery(apiPath("sessions"), {limit: LIST_SIZE}), {signal}),
                 (data) => sessionsTable(data.sessions || []));
}
