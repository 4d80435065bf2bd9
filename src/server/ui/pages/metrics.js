// A small overview of /metrics: one card per metric family (its total, or count and mean for a
// histogram) grouped by subsystem, with each family's labelled samples on demand. The process's
// counters start at zero with the server, so the page says since when they count, and shows the
// store's totals (/api/v1/metrics: runs by status, facts, lessons) above them.
import {apiPath, get} from "../lib/api.js";
import {errorBox, field, h, render} from "../lib/dom.js";
import {formatTime, formatUptime} from "../lib/format.js";
import {parseMetrics, headline} from "../lib/prometheus.js";
import {pageHeader, poll, section} from "../lib/page.js";

const POLL_MS = 10000;

function number(value) {
  if (!Number.isFinite(value)) return String(value);
  if (Number.isInteger(value)) return value.toLocaleString("en-US");
  return Math.abs(value) >= 100 ? value.toFixed(1) : value.toPrecision(3);
}

// The numbers a person looks at first, when the server exports them. The runs by status are the
// store's, shown above with the other store totals.
const HEADLINES = [
  ["mend_runs_failed_total", "failed attempts"],
  ["mend_lessonq_queue_depth", "lessons queued"], ["mend_lessonq_dlq_size", "dead letters"],
  ["mend_provider_requests_total", "model requests"], ["mend_provider_cost_usd_total", "model cost (USD)"],
  ["mend_heal_actions_total", "heal actions"], ["mend_recovery_outage", "provider outage"],
];

function headlines(families) {
  const byName = new Map(families.map((f) => [f.name, f]));
  const shown = HEADLINES.filter(([name]) => byName.has(name));
  if (!shown.length) return null;
  return h("div", {class: "stats", "aria-label": "Summary"}, shown.map(([name, label]) =>
    h("div", {class: "stat", dataset: {metric: name}},
      h("span", {class: "stat-value"}, number(headline(byName.get(name)).value ?? NaN)),
      h("span", {class: "stat-label"}, label))));
}

const STORE_TOTALS = [
  ["runs", "total", "runs"], ["runs", "running", "running"], ["runs", "waiting", "waiting"],
  ["runs", "completed", "completed"], ["runs", "failed", "failed"],
  ["runs", "quarantined", "quarantined"], ["facts", "active", "facts"],
  ["facts", "lessons", "lessons"], ["facts", "superseded", "superseded facts"],
];

function storeTotals(totals) {
  return h("div", {class: "stats", "aria-label": "Store totals"}, STORE_TOTALS.map(([group, key, label]) =>
    h("div", {class: "stat", dataset: {total: `${group}.${key}`}},
      h("span", {class: "stat-value"}, number(Number(totals[group]?.[key] ?? NaN))),
      h("span", {class: "stat-label"}, label))));
}

function sinceText(totals) {
  return `Counters (names ending in _total, and histograms) count what this server did since it ` +
         `started, ${formatTime(totals.started_at)} (up ${formatUptime(totals.uptime_seconds)}); ` +
         `gauges are current values.`;
}

function groupOf(name) {
  const match = /^([a-z]+)_([a-z]+)_/.exec(name);
  return match ? `${match[1]}_${match[2]}` : name.split("_")[0];
}

function labelsText(labels) {
  const entries = Object.entries(labels);
  return entries.length ? entries.map(([k, v]) => `${k}="${v}"`).join(", ") : "(no labels)";
}

function familyCard(family) {
  const top = headline(family);
  const unit = family.name.endsWith("_seconds") ? " s" : family.name.endsWith("_bytes") ? " B" : "";
  let value;
  if ("value" in top) value = number(top.value) + unit;
  else if (!top.count) value = "no observations";
  else value = `${number(top.count)} × mean ${number(top.mean)}${unit}`;
  const histogram = family.type === "histogram" || family.type === "summary";
  const samples = histogram ? [] : family.samples;
  return h("div", {class: "metric", dataset: {metric: family.name}},
    h("span", {class: "metric-value"}, value),
    h("span", {class: "metric-name"}, family.name),
    family.help ? h("span", {class: "metric-help"}, family.help) : null,
    samples.length > 1 ? h("details", {}, h("summary", {}, `${samples.length} series`),
      h("table", {class: "data compact"}, h("tbody", {}, samples.map((s) =>
        h("tr", {}, h("td", {}, h("code", {}, s.name.slice(family.name.length) || ""), " ", labelsText(s.labels)),
          h("td", {class: "num"}, number(s.value))))))) : null);
}

export async function show(main, current, signal) {
  const filter = h("input", {type: "search", placeholder: "e.g. lessonq", autocomplete: "off"});
  const slot = h("div");
  const updated = h("span", {class: "muted"});
  let families = [];
  const draw = () => {
    // Keep the series lists a person opened across redraws.
    const open = new Set([...slot.querySelectorAll(".metric details[open]")]
                             .map((d) => d.closest(".metric").dataset.metric));
    const words = filter.value.trim().toLowerCase();
    const shown = families.filter((f) => !words || f.name.includes(words) || f.help.toLowerCase().includes(words));
    const groups = new Map();
    for (const f of shown) {
      const g = groupOf(f.name);
      if (!groups.has(g)) groups.set(g, []);
      groups.get(g).push(f);
    }
    render(slot, words ? null : headlines(families), shown.length
      ? h("div", {class: "metric-groups"}, [...groups.entries()].map(([g, list]) =>
          h("section", {class: "card", "aria-label": g}, h("h2", {}, g),
            h("div", {class: "metrics-grid"}, list.map(familyCard)))))
      : h("p", {class: "muted"}, "No metric matches."));
    for (const d of slot.querySelectorAll(".metric details")) {
      if (open.has(d.closest(".metric").dataset.metric)) d.open = true;
    }
  };
  filter.addEventListener("input", draw);
  const storeSlot = h("div");
  const since = h("p", {class: "since"}, "Counters count since this server started.");
  render(main, pageHeader("Metrics", updated),
         h("p", {class: "muted"}, "From ", h("code", {}, "/metrics"), " (Prometheus text format) and ",
           h("code", {}, "/api/v1/metrics"), ", every 10 s."),
         section("In the store", h("p", {class: "muted"},
                   "Every run and fact of this home, whichever process made them."), storeSlot),
         section("This server", since, h("div", {class: "filters"}, field("Filter", filter)), slot));
  poll(async () => {
    const [text, totals] = await Promise.allSettled([
      get("/metrics", {signal, text: true}), get(apiPath("metrics"), {signal})]);
    for (const result of [text, totals]) {
      if (result.status === "rejected" && result.reason.name === "AbortError") return;
    }
    if (totals.status === "fulfilled") {
      render(storeSlot, storeTotals(totals.value));
      since.textContent = sinceText(totals.value);
    } else {
      render(storeSlot, errorBox(totals.reason));
    }
    if (text.status === "fulfilled") {
      families = parseMetrics(text.value);
      draw();
    } else {
      render(slot, errorBox(text.reason));
    }
    updated.textContent = "updated " + new Date().toLocaleTimeString();
  }, POLL_MS, signal);
}
