// A small overview of /metrics: one card per metric family (its total, or count and mean for a
// histogram) grouped by subsystem, with each family's labelled samples on demand.
import {get} from "../lib/api.js";
import {errorBox, field, h, render} from "../lib/dom.js";
import {parseMetrics, headline} from "../lib/prometheus.js";
import {pageHeader, poll} from "../lib/page.js";

const POLL_MS = 10000;

function number(value) {
  if (!Number.isFinite(value)) return String(value);
  if (Number.isInteger(value)) return value.toLocaleString("en-US");
  return Math.abs(value) >= 100 ? value.toFixed(1) : value.toPrecision(3);
}

// The numbers a person looks at first, when the server exports them.
const HEADLINES = [
  ["mend_runs_active", "runs running"], ["mend_runs_waiting", "runs waiting"],
  ["mend_runs_quarantined", "runs quarantined"], ["mend_runs_failed_total", "failed attempts"],
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
  render(main, pageHeader("Metrics", updated),
         h("p", {class: "muted"}, "From ", h("code", {}, "/metrics"), " (Prometheus text format), every 10 s."),
         h("div", {class: "filters"}, field("Filter", filter)), slot);
  poll(async () => {
    try {
      families = parseMetrics(await get("/metrics", {signal, text: true}));
      updated.textContent = "updated " + new Date().toLocaleTimeString();
      draw();
    } catch (e) {
      if (e.name !== "AbortError") render(slot, errorBox(e));
    }
  }, POLL_MS, signal);
}
