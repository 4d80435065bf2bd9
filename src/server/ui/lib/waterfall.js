// A trace drawn as a waterfall: one row per span in tree order, a bar for its time within the
// trace, and the highlights of docs/observe.md: model turns, tool calls, denied calls and other
// failed spans, results a hook replaced, heal actions (span events) and recovery attempts. Each
// row is a button that opens the span's attributes, status and events.
import {h, textBlock} from "./dom.js";
import {formatDuration, formatTime} from "./format.js";
import {COMPLETION_KEY, PROMPT_KEY, layout, modelContent, summarize, timeAxis} from "./spans.js";

const MAX_ROWS = 3000;

const TYPE_NAMES = {agent: "attempt", chat: "model", tool: "tool", recovery: "recovery",
                    lesson: "lesson", memory: "memory", other: "span"};

function flags(info, open) {
  const out = [];
  if (info.denied) out.push(h("span", {class: "flag flag-denied"}, "denied"));
  else if (info.error) out.push(h("span", {class: "flag flag-error"}, "error"));
  if (info.replaced) out.push(h("span", {class: "flag flag-replaced"}, "result replaced by hook"));
  for (const heal of info.heal) {
    out.push(h("span", {class: "flag flag-heal"}, "heal: " + heal.action));
  }
  if (open) out.push(h("span", {class: "flag flag-open"}, "did not end"));
  return out;
}

function valueText(value) {
  return typeof value === "string" ? value : JSON.stringify(value);
}

// A model turn's prompt and completion, or why they are not there: mend records them only with
// content capture on, so an empty panel would look like a turn without messages.
function contentSection(content) {
  if (!content.captured) {
    return [h("h4", {}, "Prompt and completion"),
            h("p", {class: "muted content-off"}, "Not recorded: content capture was off when this " +
              "span was written (observe.capture_content = false, the default).")];
  }
  return [h("h4", {}, "Prompt"), content.prompt === null ? h("p", {class: "muted"}, "none recorded")
                                                         : textBlock(content.prompt),
          h("h4", {}, "Completion"), content.completion === null
            ? h("p", {class: "muted"}, "none recorded") : textBlock(content.completion)];
}

function details(row) {
  const span = row.span;
  const content = modelContent(row.info);
  const attrs = Object.entries(row.info.attrs)
    .filter(([k]) => !content || (k !== PROMPT_KEY && k !== COMPLETION_KEY))
    .sort(([a], [b]) => a.localeCompare(b));
  const parts = [
    h("dl", {class: "kv"},
      h("dt", {}, "span"), h("dd", {}, h("code", {}, span.span_id ?? "")),
      h("dt", {}, "kind"), h("dd", {}, span.kind ?? ""),
      h("dt", {}, "start"), h("dd", {}, formatTime(span.start)),
      h("dt", {}, "duration"), h("dd", {}, row.open ? "did not end" : formatDuration(row.end - row.start)),
      h("dt", {}, "status"), h("dd", {}, String(span.status ?? "") +
                                      (span.status_message ? ": " + span.status_message : ""))),
  ];
  if (row.info.heal.length) {
    parts.push(h("h4", {}, "Heal actions"), h("ul", {class: "heal-list"},
      row.info.heal.map((e) => h("li", {}, h("strong", {}, e.action), e.tool ? ` on ${e.tool}` : "",
                                 e.reason ? ": " + e.reason : ""))));
  }
  if (content) parts.push(...contentSection(content));
  const others = (span.events || []).filter((e) => e && e.name !== "heal.action");
  if (others.length) {
    parts.push(h("h4", {}, "Events"), h("ul", {}, others.map((e) => h("li", {},
      String(e.name ?? ""), " ", h("span", {class: "muted"}, formatTime(e.time))))));
  }
  if (attrs.length) {
    parts.push(h("h4", {}, "Attributes"), h("table", {class: "data compact"},
      h("tbody", {}, attrs.map(([k, v]) => h("tr", {}, h("th", {scope: "row"}, k),
                                            h("td", {}, h("code", {class: "wrap"}, valueText(v))))))));
  }
  if ((span.links || []).length) {
    parts.push(h("h4", {}, "Links"), h("pre", {class: "text"}, JSON.stringify(span.links, null, 2)));
  }
  return parts;
}

function percent(value) {
  return Math.max(0, Math.min(100, value)).toFixed(3) + "%";
}

function spanRow(row, axis) {
  const info = row.info;
  const classes = ["wf-row", "type-" + info.type, info.error && "is-error", info.denied && "is-denied",
                   info.replaced && "is-replaced", row.open && "is-open"];
  const detail = h("div", {class: "wf-detail", hidden: true});
  const label = h("button", {type: "button", class: "wf-label", "aria-expanded": "false",
                             style: {"padding-left": (0.4 + row.depth * 1.1) + "em"}},
    h("span", {class: "wf-type"}, TYPE_NAMES[info.type]), " ",
    h("span", {class: "wf-name"}, info.label), " ", flags(info, row.open));
  label.addEventListener("click", () => {
    const open = label.getAttribute("aria-expanded") !== "true";
    label.setAttribute("aria-expanded", String(open));
    if (open && !detail.firstChild) detail.append(...details(row));
    detail.hidden = !open;
  });
  const left = axis.at(row.start) * 100;
  const size = Math.max((axis.at(row.end) - axis.at(row.start)) * 100, 0.3);
  const track = h("div", {class: "wf-track", "aria-hidden": "true"},
    axis.gaps.map((g) => h("span", {class: "wf-gap", style: {left: percent(g.position * 100)}})),
    h("span", {class: "wf-bar", style: {left: percent(left), width: percent(Math.min(size, 100 - left))}}),
    info.heal.filter((e) => Number.isFinite(e.time)).map((e) =>
      h("span", {class: "wf-mark", title: `heal ${e.action}: ${e.reason}`,
                 style: {left: percent(axis.at(e.time) * 100)}})));
  const duration = h("span", {class: "wf-dur"}, row.open ? "—" : formatDuration(row.end - row.start));
  return h("li", {class: classes}, label, track, duration, detail);
}

function plural(n, one, many) {
  return `${n} ${n === 1 ? one : many}`;
}

function summaryLine(s) {
  const bits = [plural(s.spans, "span", "spans"), plural(s.attempts, "attempt", "attempts"),
                plural(s.modelTurns, "model turn", "model turns"),
                plural(s.toolCalls, "tool call", "tool calls")];
  if (s.denied) bits.push(`${s.denied} denied`);
  if (s.replaced) bits.push(plural(s.replaced, "result", "results") + " replaced by a hook");
  if (s.errors) bits.push(plural(s.errors, "failed span", "failed spans"));
  if (s.heal) bits.push(plural(s.heal, "heal action", "heal actions"));
  if (s.recoveries) bits.push(plural(s.recoveries, "recovery attempt", "recovery attempts"));
  return bits.join(" · ");
}

const LEGEND = [["agent", "attempt"], ["chat", "model turn"], ["tool", "tool call"],
                ["denied", "denied / failed"], ["replaced", "result replaced by hook"],
                ["heal", "heal action"], ["recovery", "recovery attempt"]];

export function waterfall(trace) {
  const model = layout(trace.spans || []);
  if (!model.rows.length) return h("p", {class: "muted"}, "This trace has no spans.");
  const rows = model.rows.slice(0, MAX_ROWS);
  const axis = timeAxis(model.rows);
  const idle = axis.gaps.length
    ? ` · ${plural(axis.gaps.length, "idle stretch", "idle stretches")} shortened (dashed): ` +
      axis.gaps.map((g) => formatDuration(g.duration)).join(", ")
    : "";
  return h("div", {class: "waterfall"},
    h("p", {class: "wf-summary"}, summaryLine(summarize(model.rows)),
      " · ", formatDuration(model.end - model.start), " in all", idle),
    h("ul", {class: "legend", "aria-label": "Legend"},
      LEGEND.map(([key, text]) => h("li", {}, h("span", {class: "swatch swatch-" + key}), text))),
    h("ol", {class: "wf-rows", "aria-label": "Spans of trace " + (trace.trace_id ?? "")},
      rows.map((row) => spanRow(row, axis))),
    model.rows.length > MAX_ROWS
      ? h("p", {class: "muted"}, `Only the first ${MAX_ROWS} of ${model.rows.length} spans are shown.`)
      : null);
}
