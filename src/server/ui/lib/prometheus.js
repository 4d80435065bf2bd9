// A parser for the Prometheus text exposition format (what /metrics answers), enough for the
// overview page: families with their HELP, TYPE and samples. No DOM: the unit tests import it.

function unescapeLabel(text) {
  return text.replace(/\\(["\\n])/g, (_, c) => (c === "n" ? "\n" : c));
}

function parseLabels(text) {
  const labels = {};
  const re = /\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?/gy;
  let match;
  while ((match = re.exec(text)) !== null) labels[match[1]] = unescapeLabel(match[2]);
  return labels;
}

function parseValue(text) {
  if (text === "+Inf") return Infinity;
  if (text === "-Inf") return -Infinity;
  return Number(text);
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\S+)?$/;
const SUFFIXES = ["_bucket", "_sum", "_count", "_total", "_created"];

// Returns [{name, help, type, samples: [{name, labels, value}]}] in the order of the text.
export function parseMetrics(text) {
  const families = new Map();
  const family = (name) => {
    if (!families.has(name)) families.set(name, {name, help: "", type: "untyped", samples: []});
    return families.get(name);
  };
  const familyOf = (sample) => {
    if (families.has(sample)) return families.get(sample);
    for (const suffix of SUFFIXES) {
      if (sample.endsWith(suffix)) {
        const base = sample.slice(0, -suffix.length);
        if (families.has(base)) return families.get(base);
      }
    }
    return family(sample);
  };
  for (const raw of String(text).split("\n")) {
    const line = raw.trim();
    if (!line) continue;
    const meta = /^#\s+(HELP|TYPE)\s+(\S+)\s*(.*)$/.exec(line);
    if (meta) {
      const f = family(meta[2]);
      if (meta[1] === "HELP") f.help = meta[3].replace(/\\n/g, "\n").replace(/\\\\/g, "\\");
      else f.type = meta[3] || "untyped";
      continue;
    }
    if (line.startsWith("#")) continue;
    const sample = SAMPLE.exec(line);
    if (!sample) continue;
    familyOf(sample[1]).samples.push({name: sample[1], labels: parseLabels(sample[2] || ""),
                                      value: parseValue(sample[3])});
  }
  return [...families.values()];
}

// One number for a family: the sum of its samples (counters, gauges); for a histogram or
// summary, its count, sum and mean.
export function headline(family) {
  if (family.type === "histogram" || family.type === "summary") {
    const sumOf = (suffix) => family.samples.filter((s) => s.name === family.name + suffix)
                                            .reduce((n, s) => n + s.value, 0);
    const count = sumOf("_count");
    const sum = sumOf("_sum");
    return {count, sum, mean: count ? sum / count : NaN};
  }
  return {value: family.samples.reduce((n, s) => n + (Number.isFinite(s.value) ? s.value : 0), 0)};
}
