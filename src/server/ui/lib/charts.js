// Line charts over time as inline SVG, without a chart library. chartModel is pure (unit-tested
// in tests/browser/ui_lib_test.mjs): it turns the buckets of GET /api/v1/metrics/series into
// paths, dots and axis ticks; drawChart makes the SVG elements from that model.

// What a chart can show of a bucket. Additive values are 0 in a bucket without runs; a rate or a
// mean has no value there, and the line has a gap rather than a made-up point.
export const METRICS = {
  count: {label: "count", additive: true, value: (p) => p.count},
  failure_rate: {label: "failure rate", additive: false, value: (p) => p.failure_rate},
  cost_usd: {label: "cost (USD)", additive: true, value: (p) => p.cost_usd},
  tokens: {label: "tokens (input + output)", additive: true,
           value: (p) => p.input_tokens + p.output_tokens},
  mean_ms: {label: "mean duration (ms)", additive: false, value: (p) => p.mean_ms},
};

// The values of one series at each of `count` buckets of `bucketMs` from `fromMs` (null where the
// metric has no value).
export function bucketValues(points, metric, fromMs, bucketMs, count) {
  const m = METRICS[metric];
  const values = new Array(count).fill(m.additive ? 0 : null);
  for (const p of points) {
    const i = Math.round((Date.parse(p.start) - fromMs) / bucketMs);
    if (i >= 0 && i < count) values[i] = m.value(p);
  }
  return values;
}

// The smallest "round" number (1, 2 or 5 times a power of ten) at or above `value`; 1 for 0.
export function niceCeil(value) {
  if (!(value > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) {
    if (step * power >= value * (1 - 1e-12)) return step * power;
  }
  return 10 * power;
}

function twoDigits(n) {
  return String(n).padStart(2, "0");
}

// A tick label of a time: the date for day buckets, else the hour and minute (UTC, as the
// buckets are).
export function timeLabel(ms, bucketMs) {
  const d = new Date(ms);
  if (bucketMs >= 86400000) return `${d.getUTCFullYear()}-${twoDigits(d.getUTCMonth() + 1)}-${twoDigits(d.getUTCDate())}`;
  return `${twoDigits(d.getUTCHours())}:${twoDigits(d.getUTCMinutes())}`;
}

// The drawing of `series` ([{key, points}]) for `metric` between `from` and `to` (RFC 3339) in
// buckets of `bucketSeconds`, in a box of `width` x `height` with `pad` around the plot:
// {empty, yMax, xTicks:[{x,label}], yTicks:[{y,value}], lines:[{key, path, dots:[{x,y,value}]}]}.
// A line is cut (a new "M") where a bucket has no value; each bucket's value sits at its middle.
export function chartModel(series, metric, {from, to, bucketSeconds, width = 640, height = 200,
                                            pad = {left: 56, right: 24, top: 10, bottom: 24}}) {
  const fromMs = Date.parse(from);
  const bucketMs = bucketSeconds * 1000;
  const count = Math.max(1, Math.round((Date.parse(to) - fromMs) / bucketMs));
  const plotW = width - pad.left - pad.right;
  const plotH = height - pad.top - pad.bottom;
  // Dots mark the buckets that had runs; the zeros between them are drawn by the line alone.
  const measured = (points) => new Set(points.map((p) => Math.round((Date.parse(p.start) - fromMs) / bucketMs)));
  const valued = series.map((s) => ({key: s.key, values: bucketValues(s.points, metric, fromMs, bucketMs, count),
                                     measured: measured(s.points)}));
  const max = Math.max(0, ...valued.flatMap((s) => s.values.filter((v) => v !== null)));
  const yMax = metric === "failure_rate" ? 1 : niceCeil(max);
  const x = (i) => pad.left + ((i + 0.5) / count) * plotW;
  const y = (v) => pad.top + plotH - (v / yMax) * plotH;
  const round = (n) => Math.round(n * 10) / 10;
  const lines = valued.map(({key, values, measured: had}) => {
    let path = "";
    let open = false;
    const dots = [];
    values.forEach((v, i) => {
      if (v === null) {
        open = false;
        return;
      }
      path += `${open ? "L" : "M"}${round(x(i))} ${round(y(v))}`;
      open = true;
      if (had.has(i)) dots.push({x: round(x(i)), y: round(y(v)), value: v, start: new Date(fromMs + i * bucketMs).toISOString()});
    });
    return {key, path, dots};
  });
  const yTicks = [0, 0.25, 0.5, 0.75, 1].map((f) => ({y: round(y(f * yMax)), value: f * yMax}));
  const tickEvery = Math.max(1, Math.ceil(count / 6));
  const xTicks = [];
  for (let i = 0; i <= count; i += tickEvery) {
    xTicks.push({x: round(pad.left + (i / count) * plotW), label: timeLabel(fromMs + i * bucketMs, bucketMs)});
  }
  return {empty: series.every((s) => s.points.length === 0), yMax, xTicks, yTicks, lines,
          width, height, pad};
}

const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attributes = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attributes)) el.setAttribute(k, String(v));
  for (const c of children) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

// The SVG of a chartModel; `title` names it for screen readers and `format` writes a value.
// Lines take the colours of classes series-0 .. series-5 (style.css), by their index.
export function drawChart(model, title, format = String) {
  const {width, height, pad} = model;
  const root = svg("svg", {viewBox: `0 0 ${width} ${height}`, class: "chart", role: "img",
                           "aria-label": title});
  root.append(svg("title", {}, title));
  for (const t of model.yTicks) {
    root.append(svg("line", {x1: pad.left, x2: width - pad.right, y1: t.y, y2: t.y, class: "chart-grid"}),
                svg("text", {x: pad.left - 6, y: t.y + 4, "text-anchor": "end", class: "chart-tick"},
                    format(t.value)));
  }
  for (const t of model.xTicks) {
    root.append(svg("text", {x: t.x, y: height - 6, "text-anchor": "middle", class: "chart-tick"}, t.label));
  }
  model.lines.forEach((line, i) => {
    const cls = `series-${i % 6}`;
    root.append(svg("path", {d: line.path, class: `chart-line ${cls}`, "data-key": line.key}));
    for (const d of line.dots) {
      root.append(svg("circle", {cx: d.x, cy: d.y, r: 3, class: `chart-dot ${cls}`},
                      svg("title", {}, `${line.key || "(none)"} · ${d.start}: ${format(d.value)}`)));
    }
  });
  return root;
}
