// Charts over time (GET /api/v1/metrics/series): runs per agent or model calls per model, their
// failure rate, cost, tokens and mean duration, drawn as inline SVG (lib/charts.js). The choices
// are kept in the page's address (#/charts?by=model&range=7d&key=writer).
import {get, withQuery} from "../lib/api.js";
import {errorBox, field, h, render} from "../lib/dom.js";
import {formatDuration, formatTime, formatUsd} from "../lib/format.js";
import {chartModel, drawChart, METRICS} from "../lib/charts.js";
import {pageHeader, section} from "../lib/page.js";

// A range is a bucket size and how many of them end at the current bucket.
const RANGES = {
  "1h": {label: "last hour (minutes)", bucket: "minute", buckets: 60},
  "24h": {label: "last 24 hours (hours)", bucket: "hour", buckets: 24},
  "7d": {label: "last 7 days (hours)", bucket: "hour", buckets: 168},
  "30d": {label: "last 30 days (days)", bucket: "day", buckets: 30},
};
const BUCKET_MS = {minute: 60000, hour: 3600000, day: 86400000};

function rangeQuery(range, by, now = Date.now()) {
  const r = RANGES[range] || RANGES["24h"];
  const width = BUCKET_MS[r.bucket];
  const to = Math.floor(now / width) * width + width;
  const iso = (ms) => new Date(ms).toISOString().replace(/\.000Z$/, "Z");
  return {by, bucket: r.bucket, from: iso(to - r.buckets * width), to: iso(to)};
}

const CHARTS = [
  ["count", null], ["failure_rate", (v) => `${Math.round(v * 100)}%`],
  ["cost_usd", formatUsd], ["tokens", (v) => v.toLocaleString("en-US")],
  ["mean_ms", formatDuration],
];

function legend(series) {
  return h("ul", {class: "chart-legend", "aria-label": "Series"}, series.map((s, i) =>
    h("li", {}, h("span", {class: `swatch series-${i % 6}`, "aria-hidden": "true"}), s.key || "(none)")));
}

function charts(data, key) {
  const series = key ? data.series.filter((s) => s.key === key) : data.series.slice(0, 6);
  const things = data.counts === "runs" ? "runs" : "model calls";
  if (!series.some((s) => s.points.length)) {
    return h("p", {class: "empty-chart", role: "status"},
             `No ${things} in this range (${formatTime(data.from)} to ${formatTime(data.to)}).`);
  }
  const hidden = key ? 0 : data.series.length - series.length;
  return h("div", {class: "charts"},
    legend(series),
    hidden ? h("p", {class: "muted"}, `${hidden} more; choose one in the list above to see it.`) : null,
    CHARTS.map(([metric, format]) => {
      const label = metric === "count" ? things : METRICS[metric].label;
      const model = chartModel(series, metric, {from: data.from, to: data.to,
                                                bucketSeconds: data.bucket_seconds});
      return h("figure", {class: "chart-box", dataset: {metric}},
        h("figcaption", {}, label[0].toUpperCase() + label.slice(1)),
        drawChart(model, `${label} per ${data.bucket}`, format || ((v) => String(Math.round(v * 100) / 100))));
    }),
    h("p", {class: "muted"}, `Buckets of one ${data.bucket} (UTC), from observe.db: every run and model ` +
                             `call with a trace, whichever process made it.`));
}

export async function show(main, route, signal) {
  const state = {by: route.query.get("by") === "model" ? "model" : "agent",
                 range: RANGES[route.query.get("range")] ? route.query.get("range") : "24h",
                 key: route.query.get("key") || ""};
  const by = h("select", {name: "by"}, [["agent", "runs per agent"], ["model", "model calls per model"]]
    .map(([value, label]) => h("option", {value, selected: value === state.by}, label)));
  const range = h("select", {name: "range"}, Object.entries(RANGES)
    .map(([value, r]) => h("option", {value, selected: value === state.range}, r.label)));
  const key = h("select", {name: "key"}, h("option", {value: ""}, "all (up to 6)"));
  const body = h("div", {}, h("p", {class: "muted"}, "Loading…"));
  const go = () => {
    const query = withQuery("", {by: by.value, range: range.value, key: key.value}).replace(/^\?/, "");
    window.location.hash = "#/charts" + (query ? "?" + query : "");
  };
  for (const control of [by, range, key]) control.addEventListener("change", go);
  render(main, pageHeader("Charts"),
         h("form", {class: "filters", "aria-label": "Chart choices", onsubmit: (e) => e.preventDefault()},
           field("Show", by), field("Range", range), field(state.by === "model" ? "Model" : "Agent", key)),
         section("Over time", body));
  try {
    const data = await get(withQuery("/api/v1/metrics/series", rangeQuery(state.range, state.by)), {signal});
    for (const s of data.series) {
      key.append(h("option", {value: s.key, selected: s.key === state.key}, s.key || "(none)"));
    }
    if (state.key && !data.series.some((s) => s.key === state.key)) {
      key.append(h("option", {value: state.key, selected: true}, state.key));
    }
    render(body, charts(data, state.key));
  } catch (e) {
    if (e.name !== "AbortError") render(body, errorBox(e));
  }
}
