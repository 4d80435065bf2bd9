// The model behind a trace's waterfall (docs/observe.md): spans in tree order with their depth,
// their times in milliseconds, and what each one is (attempt, model turn, tool call, recovery
// attempt, ...) with the flags the page highlights. No DOM: the unit tests import it.
import {toMillis} from "./format.js";

// Attributes arrive as an object, or in observe.db's typed form [{k, s|i|d|b|a}].
export function attributesOf(value) {
  if (!value) return {};
  if (!Array.isArray(value)) return value;
  const out = {};
  for (const item of value) {
    if (!item || typeof item.k !== "string") continue;
    for (const type of ["s", "i", "d", "b", "a"]) {
      if (type in item) out[item.k] = item[type];
    }
  }
  return out;
}

// The attributes that hold a model turn's messages; mend records them only with
// observe.capture_content = true (docs/observe.md, "Content").
export const PROMPT_KEY = "gen_ai.input.messages";
export const COMPLETION_KEY = "gen_ai.output.messages";

// What a model turn (a chat span) says of its messages: null for another span; else whether any
// was captured, and the prompt and completion as text (null when that one is absent).
export function modelContent(info) {
  if (!info || info.type !== "chat") return null;
  const text = (value) => value === undefined || value === null ? null
    : typeof value === "string" ? value : JSON.stringify(value, null, 2);
  const prompt = text(info.attrs[PROMPT_KEY]);
  const completion = text(info.attrs[COMPLETION_KEY]);
  return {captured: prompt !== null || completion !== null, prompt, completion};
}

function isTrue(value) {
  return value === true || value === "true" || value === 1;
}

export function isError(span) {
  const s = span.status;
  return s === 2 || (typeof s === "string" && s.toUpperCase() === "ERROR");
}

// What a span is, for the page: its type, a short label and the flags to highlight.
export function classify(span) {
  const attrs = attributesOf(span.attributes);
  const name = String(span.name ?? "");
  const op = attrs["gen_ai.operation.name"];
  let type = "other";
  if (op === "invoke_agent" || name.startsWith("invoke_agent")) type = "agent";
  else if (op === "chat" || name.startsWith("chat")) type = "chat";
  else if (op === "execute_tool" || name.startsWith("execute_tool")) type = "tool";
  else if (name === "mend.recovery.attempt") type = "recovery";
  else if (name.startsWith("mend.lesson") || name.startsWith("mend.reflexion")) type = "lesson";
  else if (name.startsWith("mend.memory")) type = "memory";
  const error = isError(span);
  const denied = type === "tool" &&
      (attrs["mend.tool.hook_decision"] === "denied" || attrs["error.type"] === "denied");
  const replaced = isTrue(attrs["mend.tool.replaced_by_hook"]);
  const inProgress = isTrue(attrs["mend.span.in_progress"]);
  const heal = (span.events || [])
      .filter((e) => e && e.name === "heal.action")
      .map((e) => {
        const a = attributesOf(e.attributes);
        return {action: String(a["heal.action"] ?? "action"), reason: String(a["heal.reason"] ?? ""),
                tool: a["gen_ai.tool.name"], time: toMillis(e.time)};
      });
  return {type, label: labelOf(type, name, attrs), error, denied, replaced, inProgress, heal, attrs};
}

function labelOf(type, name, attrs) {
  const step = attrs["mend.step"] !== undefined ? ` (step ${attrs["mend.step"]})` : "";
  switch (type) {
    case "agent": {
      const attempt = attrs["mend.attempt"] ? attrs["mend.attempt"] : "attempt";
      const status = attrs["mend.run.status"] ? ` → ${attrs["mend.run.status"]}` : "";
      return `${name}: ${attempt}${status}`;
    }
    case "chat":
      return `model turn ${attrs["gen_ai.request.model"] ?? ""}${step}`.replace("  ", " ");
    case "tool":
      return `tool ${attrs["gen_ai.tool.name"] ?? name.replace(/^execute_tool\s*/, "")}${step}`;
    case "recovery": {
      const n = attrs["mend.recovery.attempt"] !== undefined ? ` #${attrs["mend.recovery.attempt"]}` : "";
      const outcome = attrs["mend.recovery.outcome"] ? ` → ${attrs["mend.recovery.outcome"]}` : "";
      return `recovery attempt${n}${outcome}`;
    }
    default:
      return name;
  }
}

// Spans in tree order (each parent before its children, siblings by start time). A span whose
// parent is not in the list is a root. Returns {rows: [{span, depth, start, end, info}], start,
// end} with times in milliseconds; a span without an end (still running, or its process died)
// ends at the trace's last known time and is marked open.
export function layout(spans) {
  const items = (spans || []).filter((s) => s && s.span_id !== undefined).map((span) => ({
    span,
    start: toMillis(span.start ?? span.start_time ?? span.start_ns),
    end: toMillis(span.end ?? span.end_time ?? span.end_ns),
    info: classify(span),
    children: [],
  }));
  const byId = new Map(items.map((item) => [String(item.span.span_id), item]));
  const roots = [];
  for (const item of items) {
    const parent = byId.get(String(item.span.parent_span_id ?? ""));
    if (parent && parent !== item) parent.children.push(item);
    else roots.push(item);
  }
  const times = items.flatMap((i) => [i.start, i.end]).filter(Number.isFinite);
  const start = times.length ? Math.min(...times) : 0;
  const end = times.length ? Math.max(...times) : 0;
  const rows = [];
  const seen = new Set();
  const byStart = (a, b) => (a.start || 0) - (b.start || 0);
  const visit = (item, depth) => {
    if (seen.has(item)) return;
    seen.add(item);
    const open = !Number.isFinite(item.end) || item.info.inProgress;
    rows.push({span: item.span, depth, info: item.info, open,
               start: Number.isFinite(item.start) ? item.start : start,
               end: Number.isFinite(item.end) ? item.end : end});
    item.children.sort(byStart).forEach((child) => visit(child, depth + 1));
  };
  roots.sort(byStart).forEach((root) => visit(root, 0));
  return {rows, start, end};
}

// The waterfall's time axis. A trace often has long idle stretches (a run waiting hours for an
// approval between two attempts); drawn to scale, every span would be a sliver. Stretches where no
// span runs that are longer than a quarter of the busy time are shortened to `gapShare` of it
// each. Returns {at(t) -> position in [0, 1], gaps: [{position, duration}]}; positions are
// monotonic in t.
export function timeAxis(rows, gapShare = 0.05) {
  const spans = rows.map((r) => [r.start, Math.max(r.start, r.end)])
                    .filter(([a, b]) => Number.isFinite(a) && Number.isFinite(b))
                    .sort((x, y) => x[0] - y[0]);
  const busy = [];
  for (const [a, b] of spans) {
    const last = busy[busy.length - 1];
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else busy.push([a, b]);
  }
  if (!busy.length) return {at: () => 0, gaps: []};
  const active = busy.reduce((n, [a, b]) => n + (b - a), 0);
  // Segments of the axis: [from, to, drawn length].
  const segments = [];
  const gaps = [];
  busy.forEach(([a, b], i) => {
    if (i > 0) {
      const gapStart = busy[i - 1][1];
      const gap = a - gapStart;
      const shorten = active > 0 && gap > active * 0.25;
      segments.push([gapStart, a, shorten ? active * gapShare : gap, shorten]);
    }
    segments.push([a, b, b - a, false]);
  });
  const total = segments.reduce((n, s) => n + s[2], 0) || 1;
  let offset = 0;
  const placed = segments.map(([from, to, length, shortened]) => {
    const seg = {from, to, length, offset, shortened};
    offset += length;
    if (shortened) gaps.push({position: (seg.offset + length / 2) / total, duration: to - from});
    return seg;
  });
  const at = (t) => {
    if (!Number.isFinite(t) || t <= placed[0].from) return 0;
    for (const seg of placed) {
      if (t <= seg.to) {
        const span = seg.to - seg.from;
        return (seg.offset + (span > 0 ? ((t - seg.from) / span) * seg.length : 0)) / total;
      }
    }
    return 1;
  };
  return {at, gaps};
}

// Counts for the trace's summary line.
export function summarize(rows) {
  const count = (pred) => rows.filter(pred).length;
  return {
    spans: rows.length,
    attempts: count((r) => r.info.type === "agent"),
    modelTurns: count((r) => r.info.type === "chat"),
    toolCalls: count((r) => r.info.type === "tool"),
    denied: count((r) => r.info.denied),
    replaced: count((r) => r.info.replaced),
    errors: count((r) => r.info.error),
    heal: rows.reduce((n, r) => n + r.info.heal.length, 0),
    recoveries: count((r) => r.info.type === "recovery"),
  };
}
