// The web UI of mend serve: a hash router over the pages in pages/. Each page module exports
// show(main, route, signal); the signal is aborted when the user leaves the page, which stops its
// polling and its requests in flight.
import {forgetToken, onTokenChange, storedToken} from "./lib/api.js";
import {h, render} from "./lib/dom.js";
import {announce} from "./lib/page.js";
import * as agents from "./pages/agents.js";
import * as charts from "./pages/charts.js";
import * as fact from "./pages/fact.js";
import * as improve from "./pages/improve.js";
import * as lessons from "./pages/lessons.js";
import * as memory from "./pages/memory.js";
import * as metrics from "./pages/metrics.js";
import * as pending from "./pages/pending.js";
import * as run from "./pages/run.js";
import * as runs from "./pages/runs.js";
import * as sessions from "./pages/sessions.js";
import * as traces from "./pages/traces.js";

const PAGES = {
  runs: {list: runs, item: run, title: "Runs"},
  pending: {list: pending, title: "Pending"},
  memory: {list: memory, item: fact, title: "Memory"},
  traces: {list: traces, item: traces, title: "Traces"},
  lessons: {list: lessons, title: "Lessons"},
  improve: {list: improve, item: improve, title: "Improve"},
  metrics: {list: metrics, title: "Metrics"},
  charts: {list: charts, title: "Charts"},
  agents: {list: agents, item: agents, title: "Agents"},
  sessions: {list: sessions, item: sessions, title: "Sessions"},
};

// "#/runs/r-1?x=1" -> {section: "runs", id: "r-1", query: URLSearchParams("x=1")}
export function parseHash(hash) {
  const text = hash.replace(/^#\/?/, "");
  const question = text.indexOf("?");
  const path = question < 0 ? text : text.slice(0, question);
  const query = new URLSearchParams(question < 0 ? "" : text.slice(question + 1));
  const parts = path.split("/").filter(Boolean).map((p) => {
    try {
      return decodeURIComponent(p);
    } catch {
      return p;
    }
  });
  return {section: parts[0] || "runs", id: parts.length > 1 ? parts.slice(1).join("/") : null,
          query};
}

let current = null;

function markNav(section) {
  for (const a of document.querySelectorAll("#nav a")) {
    if (a.dataset.section === section) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
}

async function navigate() {
  if (current) current.abort();
  current = new AbortController();
  const route = parseHash(window.location.hash);
  const page = PAGES[route.section];
  const main = document.getElementById("main");
  markNav(route.section);
  if (!page || (route.id !== null && !page.item)) {
    document.title = "Not found · mend";
    render(main, h("h1", {}, "Not found"),
           h("p", {}, "There is no such page. ", h("a", {href: "#/runs"}, "Go to the runs.")));
    return;
  }
  const module = route.id !== null ? page.item : page.list;
  document.title = `${route.id !== null ? route.id + " · " : ""}${page.title} · mend`;
  render(main);
  try {
    await module.show(main, route, current.signal);
  } catch (e) {
    if (e.name !== "AbortError") {
      render(main, h("h1", {}, page.title), h("div", {class: "error-box", role: "alert"},
                                               e.message || String(e)));
    }
  }
}

function focusHeading() {
  const heading = document.querySelector("#main h1");
  if (heading) {
    heading.setAttribute("tabindex", "-1");
    heading.focus({preventScroll: true});
  }
}

function showTokenButton() {
  const button = document.getElementById("forget-token");
  button.hidden = !storedToken();
}

function start() {
  if (!window.location.hash) window.history.replaceState(null, "", "#/runs");
  window.addEventListener("hashchange", async () => {
    await navigate();
    focusHeading();
  });
  const forget = document.getElementById("forget-token");
  forget.addEventListener("click", () => {
    forgetToken();
    announce("The token was forgotten; the next request asks for it again.");
  });
  onTokenChange(showTokenButton);
  showTokenButton();
  navigate();
}

if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", start);
} else {
  start();
}
