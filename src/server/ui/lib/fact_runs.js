// Lessons and runs linked both ways (docs/serve.md): on a run's page, the facts and lessons given
// to it with their scores and the lesson its failure produced; on a fact's page, the runs it came
// from and those it was given to. Every text from the server stays text (dom.js).
import {apiPath, get} from "./api.js";
import {badge, emptyRow, h, link, render, textBlock} from "./dom.js";
import {formatTime, preview} from "./format.js";
import {section} from "./page.js";

export function scoreText(score) {
  return Number.isFinite(score) ? Number(score).toFixed(3) : "–";
}

// "helped", "hurt" or "pending", as the server names a run's outcome for a fact it was given.
export function outcomeBadge(outcome) {
  const kind = outcome === "helped" ? "ok" : outcome === "hurt" ? "error" : "waiting";
  return badge(String(outcome ?? "pending"), kind);
}

function countText(value) {
  return value === null || value === undefined ? "–" : String(value);
}

function givenTable(given) {
  const columns = ["Fact", "Kind", "Score", "Content", "This run", "Helped", "Hurt"];
  const rows = given.map((g) => h("tr", {dataset: {fact: g.fact_id}},
    h("td", {}, link(h("code", {}, g.fact_id), "memory", g.fact_id)),
    h("td", {}, g.category ?? h("span", {class: "muted"}, "removed")),
    h("td", {class: "num"}, scoreText(g.score)),
    h("td", {class: "content-cell"}, g.content === null || g.content === undefined
      ? h("span", {class: "muted"}, "The fact was removed.") : preview(g.content, 240)),
    h("td", {}, outcomeBadge(g.outcome)),
    h("td", {class: "num"}, countText(g.helped)),
    h("td", {class: "num"}, countText(g.hurt))));
  return h("div", {class: "table-wrap"}, h("table", {class: "data run-memory"},
    h("thead", {}, h("tr", {}, columns.map((c) => h("th", {scope: "col"}, c)))),
    h("tbody", {}, rows.length ? rows : emptyRow(columns.length, "Nothing from memory was given to this run."))));
}

function lessonsList(lessons) {
  if (!lessons.length) return h("p", {class: "muted"}, "No lesson was learned from this run.");
  return h("ul", {class: "run-lessons"}, lessons.map((l) => h("li", {dataset: {fact: l.fact_id}},
    link(h("code", {}, l.fact_id), "memory", l.fact_id), " ",
    h("span", {class: "muted"}, formatTime(l.created_at)), textBlock(l.content ?? "", 600))));
}

// The run page's two sections; `load()` reads GET /api/v1/runs/{id}/memory again (the outcome
// moves when the run ends, a lesson appears once its job is processed).
export function runMemorySections(id, signal) {
  const givenSlot = h("div", {}, h("p", {class: "muted"}, "Loading…"));
  const lessonSlot = h("div", {}, h("p", {class: "muted"}, "Loading…"));
  const element = [section("Memory given to this run", givenSlot),
                   section("Lesson from this run", lessonSlot)];
  let seen = "";
  const load = async () => {
    let data;
    try {
      data = await get(apiPath("runs", id, "memory"), {signal});
    } catch (e) {
      if (e.name === "AbortError") throw e;
      const text = h("p", {class: "muted"}, "Memory cannot be read: " + (e.message || String(e)));
      render(givenSlot, text);
      render(lessonSlot);
      return;
    }
    const signature = JSON.stringify(data);
    if (signature === seen) return;
    seen = signature;
    render(givenSlot, givenTable(data.given || []));
    render(lessonSlot, lessonsList(data.lessons || []));
  };
  return {element, load};
}

// The fact page's "Came from" and "Given to" parts.
export function factRunsView(fact) {
  const from = Array.isArray(fact.came_from) ? fact.came_from : [];
  const given = Array.isArray(fact.given_to) ? fact.given_to : [];
  const cameFrom = from.length
    ? h("p", {class: "came-from"}, "Came from run ", from.map((r, i) => [i ? ", " : "", link(r, "runs", r)]))
    : h("p", {class: "muted came-from"}, "Not learned from a run of this server.");
  const columns = ["Run", "Given", "Score", "Outcome"];
  const rows = given.map((g) => h("tr", {dataset: {run: g.run_id}},
    h("td", {}, link(g.run_id, "runs", g.run_id)),
    h("td", {}, formatTime(g.at)),
    h("td", {class: "num"}, scoreText(g.score)),
    h("td", {}, outcomeBadge(g.outcome))));
  return [cameFrom, section("Given to",
    h("div", {class: "table-wrap"}, h("table", {class: "data given-to"},
      h("thead", {}, h("tr", {}, columns.map((c) => h("th", {scope: "col"}, c)))),
      h("tbody", {}, rows.length ? rows : emptyRow(columns.length, "Not given to any run yet.")))))];
}

export function loadFact(id, signal) {
  return get(apiPath("memory", id), {signal});
}
