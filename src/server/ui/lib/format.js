// Formatting of times, durations, money and token counts. No DOM: the unit tests import it.

// A time from the API as milliseconds since the epoch, with sub-millisecond precision kept:
// RFC 3339 text ("2026-01-02T03:04:05.123456789Z"), Unix nanoseconds (a number above 1e14, or a
// string of digits) or milliseconds. NaN when it is none of those.
export function toMillis(value) {
  if (value === null || value === undefined || value === "") return NaN;
  if (typeof value === "number") return value > 1e14 ? value / 1e6 : value;
  const text = String(value);
  if (/^\d+$/.test(text)) {
    const n = Number(text);
    return n > 1e14 ? n / 1e6 : n;
  }
  const match = /^(.*T\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:?\d\d)$/i.exec(text);
  if (!match) return Date.parse(text);
  const whole = Date.parse(match[1] + match[3]);
  const fraction = match[2] ? Number("0" + match[2]) * 1000 : 0;
  return whole + fraction;
}

// "2026-01-02 03:04:05" in the browser's time zone; "" for a missing time.
export function formatTime(value) {
  const ms = toMillis(value);
  if (!Number.isFinite(ms)) return value ? String(value) : "";
  const d = new Date(ms);
  const pad = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
         `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

// "3 s ago", "5 min ago", "2 h ago", "4 d ago" relative to `now` (milliseconds).
export function formatAgo(value, now = Date.now()) {
  const ms = toMillis(value);
  if (!Number.isFinite(ms)) return "";
  const seconds = Math.max(0, Math.round((now - ms) / 1000));
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86400)} d ago`;
}

// A duration given in milliseconds: "850 µs", "12.3 ms", "4.20 s", "3 min 05 s".
export function formatDuration(ms) {
  if (!Number.isFinite(ms) || ms < 0) return "";
  if (ms < 1) return `${Math.round(ms * 1000)} µs`;
  if (ms < 1000) return `${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(2)} s`;
  const minutes = Math.floor(ms / 60000);
  const seconds = Math.round((ms % 60000) / 1000);
  return `${minutes} min ${String(seconds).padStart(2, "0")} s`;
}

// A length of time given in seconds, to the minute once it is long: "45 s", "12 min",
// "3 h 05 min", "2 d 4 h".
export function formatUptime(seconds) {
  const s = Number(seconds);
  if (!Number.isFinite(s) || s < 0) return "";
  if (s < 60) return `${Math.floor(s)} s`;
  const minutes = Math.floor(s / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours} h ${String(minutes % 60).padStart(2, "0")} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

export function formatUsd(value) {
  if (value === null || value === undefined || !Number.isFinite(Number(value))) return "";
  const n = Number(value);
  return "$" + (n !== 0 && n < 0.01 ? n.toFixed(5) : n.toFixed(2));
}

export function formatCount(value) {
  if (value === null || value === undefined || value === "") return "";
  const n = Number(value);
  return Number.isFinite(n) ? n.toLocaleString("en-US") : String(value);
}

// A one-line preview of `text`, at most `max` characters.
export function preview(text, max = 120) {
  const line = String(text ?? "").replace(/\s+/g, " ").trim();
  return line.length > max ? line.slice(0, max - 1) + "…" : line;
}

// The status a person should see: a `running` run that no process drives (its process died or
// stopped) is "interrupted"; the API keeps the stored status in `status` and says so in
// `interrupted`.
export function runStatus(run) {
  return run && run.status === "running" && run.interrupted === true ? "interrupted" : run?.status ?? "";
}

// Why an interrupted run has no process, in words; "" for a run that is not interrupted.
export function interruptionText(run) {
  if (runStatus(run) !== "interrupted") return "";
  const i = run.interruption || {};
  if (i.reason === "process_gone") return `its process${i.holder ? ` (${i.holder})` : ""} is gone`;
  if (i.reason === "lease_expired") {
    return `its lease expired${i.lease_expires_at ? " at " + formatTime(i.lease_expires_at) : ""}`;
  }
  return "no process holds it";
}
