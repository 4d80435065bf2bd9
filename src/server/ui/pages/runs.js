// The runs list: filters by status and agent, keyset paging, live status from the server's events
// (polled while the event stream is down), and a form that starts a run of an agent the server
// knows.
import {apiPath, get, post, withQuery} from "../lib/api.js";
import {badge, emptyRow, errorBox, field, h, render, route} from "../lib/dom.js";
import {formatAgo, formatTime, interruptionText, preview, runStatus} from "../lib/format.js";
import {isRunEvent, live, liveIndicator} from "../lib/live.js";
import {onSubmit, pageHeader, section} from "../lib/page.js";

const STATUSES = ["running", "waiting", "completed", "failed", "quarantined"];
const PAGE_SIZE = 25;
const FALLBACK_POLL_MS = 5000;

// The model a run uses: the API gives a name, or {provider, model, base_url}.
export function modelText(run) {
  const m = run.model;
  if (m && typeof m === "object") return [m.provider, m.model].filter(Boolean).join(" / ");
  return [run.provider, m].filter(Boolean).join(" / ");
}

export function statusCell(run) {
  const status = runStatus(run);
  const parts = [badge(status, status)];
  // Interrupted: the stored status is still running, but no process drives the run.
  if (status === "interrupted") parts[0].title = interruptionText(run);
  if (run.waiting) {
    const what = run.waiting === "question" ? "an answer" : run.waiting;
    parts.push(" ", h("span", {class: "muted"}, "for " + what));
  }
  if (run.quarantined && run.status !== "quarantined") parts.push(" ", badge("quarantined"));
  return parts;
}

function runRow(run) {
  const error = run.last_error;
  return h("tr", {},
    h("td", {}, h("a", {href: route("runs", run.id), dataset: {key: "run:" + run.id}}, run.id)),
    h("td", {}, run.agent ? h("a", {href: route("agents", run.agent)}, run.agent) : ""),
    h("td", {}, statusCell(run)),
    h("td", {}, modelText(run)),
    h("td", {class: "num"}, run.steps ?? ""),
    h("td", {class: "num"}, run.attempts ?? ""),
    h("td", {class: "error-cell", title: error ? error.message : null},
      error ? [h("code", {}, error.code ?? ""), " ", preview(error.message, 80)] : ""),
    h("td", {title: formatTime(run.updated_at)}, formatAgo(run.updated_at)));
}

function runsTable(runs) {
  const body = h("tbody", {}, runs.length ? runs.map(runRow) : emptyRow(8, "No runs match."));
  return h("table", {class: "data"},
    h("caption", {class: "visually-hidden"}, "Runs, newest first"),
    h("thead", {}, h("tr", {}, ["Run", "Agent", "Status", "Model", "Steps", "Attempts", "Last error",
                                "Updated"].map((c) => h("th", {scope: "col"}, c)))),
    body);
}

// Re-rendering the table every few seconds must not take the keyboard focus away.
function keepFocus(container, update) {
  const active = document.activeElement;
  const key = active && container.contains(active) ? active.dataset.key : null;
  update();
  if (key) {
    const again = container.querySelector(`[data-key="${CSS.escape(key)}"]`);
    if (again) again.focus();
  }
}

function filterForm(state, reload) {
  const status = h("select", {name: "status"},
    h("option", {value: ""}, "any status"),
    STATUSES.map((s) => h("option", {value: s, selected: s === state.status}, s)));
  const agents = h("datalist", {id: "agent-names"});
  const agent = h("input", {name: "agent", type: "search", value: state.agent, list: "agent-names",
                            placeholder: "any agent", autocomplete: "off"});
  const form = h("form", {class: "filters", role: "search", "aria-label": "Filter runs"},
    field("Status", status), field("Agent", agent), agents,
    h("button", {type: "submit"}, "Filter"));
  const apply = () => {
    state.status = status.value;
    state.agent = agent.value.trim();
    state.cursors = [""];
    state.page = 0;
    reload();
  };
  status.addEventListener("change", apply);
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    apply();
  });
  return {form, agents};
}

function startForm(agents, signal) {
  const agentNames = agents.map((a) => a.name);
  const agent = h("select", {name: "agent", required: true},
    agents.map((a) => h("option", {value: a.name, disabled: Boolean(a.error)},
                        a.error ? `${a.name} (does not load: ${a.error})` : a.name)));
  const task = h("textarea", {name: "task", rows: "3", required: true});
  const errors = h("div");
  const form = h("form", {class: "stack"},
    field("Agent", agent), field("Task", task),
    h("div", {class: "actions"}, h("button", {type: "submit", class: "primary"}, "Start run")),
    errors);
  onSubmit(form, async (data) => {
    const started = await post(apiPath("runs"), {agent: data.get("agent"), task: data.get("task")},
                               {signal});
    window.location.hash = route("runs", started.run_id);
    return started;
  }, {errorSlot: errors, done: (r) => `Started run ${r.run_id}.`});
  return h("details", {class: "card start-run"}, h("summary", {}, "Start a run"),
           agentNames.length ? form
                             : h("p", {class: "muted"}, "No agents: start mend serve with serve.agents_dir set to a folder of agent folders."));
}

export async function show(main, current, signal) {
  const state = {status: current.query.get("status") || "", agent: current.query.get("agent") || "",
                 cursors: [""], page: 0, live: true};
  const tableSlot = h("div", {class: "table-wrap"});
  const pager = h("div", {class: "pager"});
  const updated = h("span", {class: "muted"});
  const liveBox = h("input", {type: "checkbox", checked: true});
  liveBox.addEventListener("change", () => { state.live = liveBox.checked; });
  const startSlot = h("div");

  const load = async () => {
    const query = {limit: PAGE_SIZE, status: state.status, agent: state.agent,
                   cursor: state.cursors[state.page]};
    try {
      const data = await get(withQuery(apiPath("runs"), query), {signal});
      keepFocus(tableSlot, () => render(tableSlot, runsTable(data.runs || [])));
      renderPager(data);
      updated.textContent = "updated " + new Date().toLocaleTimeString();
    } catch (e) {
      if (e.name !== "AbortError") render(tableSlot, errorBox(e));
    }
  };
  const reload = () => {
    const params = new URLSearchParams();
    if (state.status) params.set("status", state.status);
    if (state.agent) params.set("agent", state.agent);
    const hash = route("runs") + (params.toString() ? "?" + params : "");
    window.history.replaceState(null, "", hash);
    load();
  };
  const renderPager = (data) => {
    const first = state.page * PAGE_SIZE + 1;
    const count = (data.runs || []).length;
    const newer = h("button", {type: "button", disabled: state.page === 0}, "‹ Newer");
    const older = h("button", {type: "button", disabled: !data.next}, "Older ›");
    newer.addEventListener("click", () => { state.page -= 1; reload(); });
    older.addEventListener("click", () => {
      state.cursors[state.page + 1] = data.next;
      state.page += 1;
      reload();
    });
    const total = data.total !== undefined ? ` of ${data.total}` : "";
    render(pager, newer, h("span", {}, count ? `${first}–${first + count - 1}${total}` : `0${total}`),
           older);
  };

  const {form, agents} = filterForm(state, reload);
  render(main,
    pageHeader("Runs", h("label", {class: "inline"}, liveBox, " Live"), liveIndicator(signal),
               updated),
    form, tableSlot, pager, startSlot);
  live(async () => {
    if (state.live) await load();
  }, {signal, matches: (event) => isRunEvent(event), fallbackMs: FALLBACK_POLL_MS});
  try {
    const known = (await get(apiPath("agents"), {signal})).agents || [];
    render(agents, known.map((a) => h("option", {value: a.name})));
    render(startSlot, startForm(known, signal));
  } catch (e) {
    if (e.name === "AbortError") return;
    render(startSlot, section("Start a run", errorBox(e)));
  }
}
