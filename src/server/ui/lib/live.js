// Live updates (docs/http_api.md, "Live events"): one EventSource on /api/v1/events for the whole
// tab, shared by the pages. A page asks to be refreshed when an event it cares about arrives;
// while the stream is down it is polled slowly instead, and when the stream comes back it is
// reloaded, since the server keeps no backlog of the events it missed.
//
// An EventSource cannot send the bearer token, so each connection first buys a single-use ticket
// with it (POST /api/v1/events/tickets) and passes that in the address.
import {apiPath, post} from "./api.js";
import {h} from "./dom.js";

const FIRST_RETRY_MS = 3000;
const MAX_RETRY_MS = 30000;
// Events that arrive together (a run's step, its end, a lesson) cost one refresh.
const SETTLE_MS = 150;

const listeners = new Set();
let source = null;
let state = "closed";  // "connecting", "open" or "closed"
let retryMs = FIRST_RETRY_MS;
let retryTimer = null;

export function liveState() {
  return state;
}

// Calls `fn(state)` now and whenever the stream's state changes, until `signal` aborts.
export function onLiveState(fn, signal) {
  const listener = {onEvent: () => {}, onState: fn};
  listeners.add(listener);
  signal.addEventListener("abort", () => listeners.delete(listener));
  fn(state);
}

function setState(next) {
  if (state === next) return;
  state = next;
  for (const listener of [...listeners]) listener.onState(next);
}

function scheduleReconnect() {
  if (retryTimer !== null || listeners.size === 0) return;
  retryTimer = window.setTimeout(() => {
    retryTimer = null;
    connect();
  }, retryMs);
  retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
}

async function connect() {
  if (source || state === "connecting") return;
  setState("connecting");
  let ticket;
  try {
    ticket = (await post(apiPath("events", "tickets"), {})).ticket;
  } catch {
    setState("closed");
    scheduleReconnect();
    return;
  }
  const es = new EventSource(apiPath("events") + "?ticket=" + encodeURIComponent(ticket));
  source = es;
  es.onopen = () => {
    retryMs = FIRST_RETRY_MS;
    setState("open");
  };
  es.onmessage = (message) => {
    let event;
    try {
      event = JSON.parse(message.data);
    } catch {
      return;
    }
    for (const listener of [...listeners]) listener.onEvent(event);
  };
  // The browser would reconnect with the same, spent ticket: reconnect here with a new one.
  es.onerror = () => {
    es.close();
    if (source === es) source = null;
    setState("closed");
    scheduleReconnect();
  };
}

// Calls `refresh` (async) now, again shortly after each event for which `matches(event)` is true,
// after the stream (re)opens, and every `fallbackMs` while the stream is not open (and the tab is
// visible), until `signal` aborts. Calls never overlap: one asked for while another runs follows
// it. `pollMs`, when set, also polls that often while the stream is open (for what changes without
// an event). Neither poll runs while `pollWhile()` is false.
export function live(refresh, {signal, matches = () => true, fallbackMs = 10000, pollMs = 0,
                               pollWhile = () => true}) {
  let running = false;
  let again = false;
  let settle = null;
  const run = async () => {
    if (signal.aborted) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      await refresh();
    } catch {
      // The page shows its own errors; an abort ends the page.
    } finally {
      running = false;
      if (again && !signal.aborted) {
        again = false;
        run();
      }
    }
  };
  const soon = () => {
    if (settle !== null) return;
    settle = window.setTimeout(() => {
      settle = null;
      run();
    }, SETTLE_MS);
  };
  const listener = {
    onEvent: (event) => {
      if (matches(event)) soon();
    },
    // Reloaded whenever the stream opens: what happened before, or while it was down, was not
    // sent.
    onState: (next) => {
      if (next === "open") soon();
    },
  };
  listeners.add(listener);
  const timers = [window.setInterval(() => {
    if (state !== "open" && !document.hidden && pollWhile()) run();
  }, fallbackMs)];
  if (pollMs > 0) {
    timers.push(window.setInterval(() => {
      if (state === "open" && !document.hidden && pollWhile()) run();
    }, pollMs));
  }
  signal.addEventListener("abort", () => {
    listeners.delete(listener);
    timers.forEach((t) => window.clearInterval(t));
    window.clearTimeout(settle);
  });
  connect();
  run();
}

// A small status: "live" while the stream is open, else that the page is polled.
export function liveIndicator(signal) {
  const el = h("span", {class: "live-state", role: "status"});
  onLiveState((next) => {
    el.dataset.state = next;
    el.textContent = next === "open" ? "● live" : next === "connecting" ? "connecting…" : "polling";
    el.title = next === "open" ? "Updated as the server's events arrive"
                               : "The event stream is not open: the page is read every few seconds";
  }, signal);
  return el;
}

// Whether `event` is about a run (its state, a step, a heal action) or, with `id`, about that run.
export function isRunEvent(event, id = null) {
  const type = String(event.type || "");
  const about = ["run.", "step.", "heal.", "recovery.", "hook.", "model.", "serve.", "tool."]
    .some((prefix) => type.startsWith(prefix));
  if (id === null) return about;
  return event.run === id || event.run_id === id;
}
