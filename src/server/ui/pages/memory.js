// Long-term memory: search it as runs do, see what a run for a task would receive (recall), read,
// add and delete facts, with the helped/hurt counts the store keeps.
import {apiPath, del, get, post, withQuery} from "../lib/api.js";
import {emptyRow, errorBox, field, h, link, render, textBlock} from "../lib/dom.js";
import {formatTime, preview} from "../lib/format.js";
import {loadInto, onAction, onSubmit, pageHeader, section} from "../lib/page.js";

const PAGE_SIZE = 20;

function tagsText(tags) {
  if (Array.isArray(tags)) return tags.join(", ");
  return tags ? String(tags) : "";
}

function count(value) {
  return value === undefined || value === null ? "" : String(value);
}

const DETAIL_ORDER = ["id", "category", "tags", "helped", "hurt", "confidence", "source",
                      "access_count", "created_at", "last_accessed", "workspace", "superseded_by"];

function detailValue(key, value) {
  if (value === null || value === undefined || value === "") return h("span", {class: "muted"}, "–");
  if (Array.isArray(value) && value.every((v) => typeof v !== "object")) return value.join(", ");
  if (typeof value === "object") return textBlock(JSON.stringify(value, null, 2), 2000);
  if (key.endsWith("_at") || key === "last_accessed") return formatTime(value);
  return String(value);
}

function factDetail(fact) {
  const keys = [...DETAIL_ORDER.filter((k) => k in fact),
                ...Object.keys(fact).filter((k) => !DETAIL_ORDER.includes(k) && k !== "content" &&
                                                   k !== "provenance")];
  const episodes = Array.isArray(fact.provenance) ? fact.provenance : [];
  return h("div", {class: "fact-detail"}, h("p", {}, link("Open its page: the runs it was given to", "memory", fact.id)),
    textBlock(fact.content ?? "", 8000),
    h("dl", {class: "kv"}, keys.map((k) => [h("dt", {}, k), h("dd", {}, detailValue(k, fact[k]))])),
    episodes.length ? [h("h4", {}, "Where it came from"), h("ul", {}, episodes.map((e) =>
      h("li", {}, formatTime(e.at), " — task: ", preview(e.task, 200),
        e.outcome ? [" — outcome: ", preview(e.outcome, 300)] : null)))] : null);
}

// A table of facts; each row can open its details and delete the fact.
function factsTable(facts, {signal, showScore, onDeleted}) {
  const columns = [showScore && "Score", "Category", "Tags", "Content", "Helped", "Hurt", "Actions"].filter(Boolean);
  const rows = facts.flatMap((fact) => {
    const detail = h("tr", {class: "detail-row", hidden: true}, h("td", {colspan: String(columns.length)}));
    const open = h("button", {type: "button", class: "link-button", "aria-expanded": "false"}, "Details");
    open.addEventListener("click", async () => {
      const expanded = open.getAttribute("aria-expanded") === "true";
      open.setAttribute("aria-expanded", String(!expanded));
      detail.hidden = expanded;
      if (!expanded) {
        await loadInto(detail.firstChild, () => get(apiPath("memory", fact.id), {signal}),
                       (d) => factDetail(d.fact ?? d));
      }
    });
    const errors = h("span");
    const remove = h("button", {type: "button", class: "danger small", "aria-label": `Delete fact ${fact.id}`}, "Delete");
    onAction(remove, async () => {
      await del(apiPath("memory", fact.id), {signal});
      onDeleted?.(fact);
    }, {errorSlot: errors, confirmText: "Delete this fact from long-term memory?", done: `Deleted fact ${fact.id}.`});
    const cells = [
      showScore ? h("td", {class: "num"}, Number.isFinite(Number(fact.score)) ? Number(fact.score).toFixed(3) : "") : null,
      h("td", {}, fact.category ?? ""),
      h("td", {}, tagsText(fact.tags)),
      h("td", {class: "content-cell"}, textBlock(fact.content ?? "", 400)),
      h("td", {class: "num"}, count(fact.helped ?? fact.helped_count)),
      h("td", {class: "num"}, count(fact.hurt ?? fact.hurt_count)),
      h("td", {class: "row-actions"}, open, " ", remove, errors),
    ];
    return [h("tr", {dataset: {fact: fact.id}}, cells), detail];
  });
  return h("table", {class: "data facts"},
    h("thead", {}, h("tr", {}, columns.map((c) => h("th", {scope: "col"}, c)))),
    h("tbody", {}, rows.length ? rows : emptyRow(columns.length, "No facts.")));
}

// The form goes in the page's first row; its results fill `results` below it, full width.
function searchSection(signal, results) {
  const q = h("input", {type: "search", name: "q", required: true});
  const k = h("input", {type: "number", name: "k", value: "10", min: "1", max: "100", class: "narrow"});
  const form = h("form", {class: "filters", role: "search", "aria-label": "Search memory"},
                 field("Query", q), field("Results", k), h("button", {type: "submit", class: "primary"}, "Search"));
  const run = async (data) => {
    const found = await get(withQuery(apiPath("memory", "search"), {q: data.get("q"), k: data.get("k")}), {signal});
    const facts = found.results || [];
    render(results, h("section", {class: "card", "aria-label": "Search results"},
      h("h2", {}, `${facts.length} results for “${data.get("q")}”`),
      h("div", {class: "table-wrap"},
        factsTable(facts, {signal, showScore: true, onDeleted: () => run(new FormData(form))}))));
    return facts;
  };
  onSubmit(form, run, {errorSlot: results});
  return section("Search", h("p", {class: "muted"}, "The ranking runs use, without the injection gate, budget or HyDE."),
                 form);
}

function recallSection(signal) {
  const task = h("textarea", {name: "task", rows: "2", required: true});
  const out = h("div", {"aria-live": "polite"});
  const form = h("form", {class: "stack"}, field("Task", task),
                 h("div", {class: "actions"}, h("button", {type: "submit"}, "Show what a run would receive")));
  onSubmit(form, async (data) => {
    const recall = await get(withQuery(apiPath("memory", "recall"), {task: data.get("task")}), {signal});
    const facts = recall.facts || [];
    render(out,
      facts.length ? h("ol", {class: "recall-facts"}, facts.map((f) => h("li", {},
        h("span", {class: "muted"}, `${f.category ?? ""} · ${f.id ?? ""}`), textBlock(f.content ?? "", 1000))))
                   : h("p", {class: "muted"}, "No fact would be injected for this task" +
                                              (recall.reason ? `: ${recall.reason}.` : ".")),
      recall.section ? [h("h3", {}, "The prompt section"), textBlock(recall.section, 20000)] : null);
    return recall;
  }, {errorSlot: out});
  return section("What would a run for this task receive?", form, out);
}

function addSection(signal, onAdded) {
  const text = h("textarea", {name: "text", rows: "3", required: true});
  const category = h("input", {type: "text", name: "category", placeholder: "e.g. lesson, fact"});
  const tags = h("input", {type: "text", name: "tags", placeholder: "comma, separated"});
  const errors = h("div");
  const form = h("form", {class: "stack"}, field("Text", text),
    h("div", {class: "row"}, field("Category", category), field("Tags", tags)),
    h("div", {class: "actions"}, h("button", {type: "submit"}, "Add fact")), errors);
  onSubmit(form, async (data) => {
    const body = {text: data.get("text")};
    if (data.get("category")) body.category = data.get("category");
    const tagList = String(data.get("tags") || "").split(",").map((t) => t.trim()).filter(Boolean);
    if (tagList.length) body.tags = tagList;
    const added = await post(apiPath("memory"), body, {signal});
    form.reset();
    onAdded();
    return added;
  }, {errorSlot: errors, done: (r) => r.result === "reinforced" ? `The same fact exists (${r.fact_id}); it was reinforced.`
                                     : r.result === "merged" ? `A near duplicate (${r.fact_id}) absorbed the text.`
                                     : `Fact ${r.fact_id ?? ""} added.`});
  return h("details", {class: "card"}, h("summary", {}, "Add a fact"), form);
}

function browseSection(signal) {
  const state = {cursors: [""], page: 0};
  const slot = h("div", {class: "table-wrap"});
  const pager = h("div", {class: "pager"});
  const load = async () => {
    try {
      const data = await get(withQuery(apiPath("memory"), {limit: PAGE_SIZE, cursor: state.cursors[state.page]}), {signal});
      const facts = data.facts || data.results || data.items || [];
      render(slot, factsTable(facts, {signal, onDeleted: load}));
      const newer = h("button", {type: "button", disabled: state.page === 0}, "‹ Previous");
      const older = h("button", {type: "button", disabled: !data.next}, "Next ›");
      newer.addEventListener("click", () => { state.page -= 1; load(); });
      older.addEventListener("click", () => { state.cursors[state.page + 1] = data.next; state.page += 1; load(); });
      const total = data.total !== undefined ? ` of ${data.total}` : "";
      render(pager, newer, h("span", {}, `page ${state.page + 1}${total ? " ·" + total + " facts" : ""}`), older);
    } catch (e) {
      if (e.name !== "AbortError") render(slot, errorBox(e));
    }
  };
  return {element: section("All facts", slot, pager), load};
}

export async function show(main, current, signal) {
  const browse = browseSection(signal);
  const results = h("div", {"aria-live": "polite"});
  render(main, pageHeader("Memory"),
         h("div", {class: "columns"}, searchSection(signal, results), recallSection(signal)),
         results, addSection(signal, browse.load), browse.element);
  await browse.load();
}
