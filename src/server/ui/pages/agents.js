// The agents of serve.agents_dir (GET /api/v1/agents) and one agent's page (GET
// /api/v1/agents/{name}): its instructions, tools with their JSON schemas, skills, checks and
// limits, the canary running on it, its recent runs and the improve attempts for its folder.
import {apiPath, get, withQuery} from "../lib/api.js";
import {badge, emptyRow, errorBox, h, link, render, route, textBlock} from "../lib/dom.js";
import {formatAgo, formatTime, formatUsd, runStatus} from "../lib/format.js";
import {loadInto, pageHeader, section} from "../lib/page.js";

const RECENT_RUNS = 10;

function agentsTable(agents) {
  return h("table", {class: "data"},
    h("caption", {class: "visually-hidden"}, "Agents of serve.agents_dir"),
    h("thead", {}, h("tr", {}, ["Agent", "Description"].map((c) => h("th", {scope: "col"}, c)))),
    h("tbody", {}, agents.length ? agents.map((a) => h("tr", {},
      h("td", {}, link(a.name, "agents", a.name)),
      h("td", {}, a.error ? h("span", {class: "error-text"}, a.error) : a.description ?? ""))) :
      emptyRow(2, "No agents: start mend serve with serve.agents_dir set to a folder of agent folders.")));
}

function toolItem(tool) {
  const flags = [tool.kind, tool.read_only ? "read-only" : null,
                 tool.requires_approval ? "needs approval" : null].filter(Boolean).join(", ");
  return h("li", {class: "agent-tool", dataset: {tool: tool.name}},
    h("strong", {}, tool.name), " ", h("span", {class: "muted"}, `(${flags})`),
    tool.description ? h("p", {}, tool.description) : null,
    h("details", {}, h("summary", {}, `Schema of ${tool.name}`),
      h("pre", {class: "text"}, JSON.stringify(tool.parameters, null, 2))));
}

function checkRow(check) {
  const what = check.kind === "regex" ? `${check.must_match ? "must match" : "must not match"} ${check.pattern}`
             : check.kind === "max_bytes" ? `at most ${check.max_bytes} bytes`
             : check.kind === "command" ? (check.command || []).join(" ")
             : JSON.stringify(check.schema);
  return h("tr", {}, h("td", {}, check.tool), h("td", {}, check.kind), h("td", {}, what),
           h("td", {}, check.action), h("td", {}, check.message || ""));
}

function definition(agent) {
  const limits = agent.limits || {};
  return [
    section("Instructions", textBlock(agent.instructions)),
    section("Tools", agent.tools.length ? h("ul", {class: "plain-list"}, agent.tools.map(toolItem))
                                        : h("p", {class: "muted"}, "No tools."),
            agent.mcp_servers.length ? h("p", {}, "And the tools of the MCP servers ",
                                         agent.mcp_servers.join(", "), ".") : null),
    section("Skills", agent.skills.length ? h("ul", {class: "plain-list"}, agent.skills.map((s) =>
      h("li", {}, h("strong", {}, s.name), " — ", s.description,
        h("details", {}, h("summary", {}, `Text of ${s.name}`), textBlock(s.body)))))
      : h("p", {class: "muted"}, "No skills.")),
    section("Checks", agent.checks.length ? h("table", {class: "data"},
      h("thead", {}, h("tr", {}, ["Tool", "Kind", "Test", "Action", "Message"].map((c) => h("th", {scope: "col"}, c)))),
      h("tbody", {}, agent.checks.map(checkRow))) : h("p", {class: "muted"}, "No output checks.")),
    section("Limits", h("p", {}, `${limits.max_steps} model turns, ${formatUsd(limits.max_cost_usd)} ` +
                                 `and ${limits.max_wall_seconds} s of wall time per attempt`,
                        agent.model ? `; model ${agent.model}` : "",
                        agent.workspace ? h("span", {}, "; workspace ", h("code", {}, agent.workspace)) : null)),
  ];
}

function runsList(page) {
  const runs = page.runs || [];
  return h("table", {class: "data"},
    h("caption", {class: "visually-hidden"}, "Recent runs of this agent"),
    h("thead", {}, h("tr", {}, ["Run", "Status", "Cost", "Updated"].map((c) => h("th", {scope: "col"}, c)))),
    h("tbody", {}, runs.length ? runs.map((run) => h("tr", {},
      h("td", {}, link(run.id, "runs", run.id)),
      h("td", {}, badge(runStatus(run))),
      h("td", {class: "num"}, formatUsd(run.cost_usd)),
      h("td", {title: formatTime(run.updated_at)}, formatAgo(run.updated_at)))) : emptyRow(4, "No runs yet.")));
}

function proposalsList(attempts, dir) {
  const mine = (attempts || []).filter((a) => a.agent_dir === dir);
  if (!mine.length) return h("p", {class: "muted"}, "No improve attempts for this folder.");
  return h("ul", {class: "plain-list"}, mine.map((a) => h("li", {},
    h("a", {href: route("improve", a.attempt_id)}, a.attempt_id), " ", badge(a.outcome),
    a.proposal ? [" proposal ", badge(a.proposal)] : null)));
}

function canaryText(canary) {
  if (!canary) return h("p", {class: "muted"}, "No canary is running on this agent.");
  return h("p", {}, "A canary of proposal ", h("a", {href: route("improve", canary.proposal)}, canary.proposal),
           ` takes ${canary.percent}% of new runs since ${formatTime(canary.started_at)}`,
           canary.auto ? " and decides on its own." : "; a person promotes or rolls it back.");
}

async function showAgent(main, name, signal) {
  const body = h("div", {}, h("p", {class: "muted"}, "Loading…"));
  render(main, pageHeader("Agent " + name), h("p", {}, h("a", {href: "#/agents"}, "‹ All agents")), body);
  let agent;
  try {
    agent = await get(apiPath("agents", name), {signal});
  } catch (e) {
    if (e.name !== "AbortError") render(body, errorBox(e));
    return;
  }
  if (agent.error) {
    render(body, h("div", {class: "error-box", role: "alert"}, "This folder does not load: " + agent.error));
    return;
  }
  const runs = h("div", {});
  const proposals = h("div", {});
  render(body,
    agent.description ? h("p", {}, agent.description) : null,
    agent.agent_name !== agent.name ? h("p", {class: "muted"}, `Folder ${agent.name}; runs record it as ${agent.agent_name}.`) : null,
    section("Recent runs", runs, h("p", {}, h("a", {href: "#/runs?agent=" + encodeURIComponent(agent.agent_name)}, "All runs of this agent"))),
    section("Canary", canaryText(agent.canary)),
    section("Proposals", proposals),
    definition(agent));
  await Promise.all([
    loadInto(runs, () => get(withQuery(apiPath("runs"), {agent: agent.agent_name, limit: RECENT_RUNS}), {signal}), runsList),
    loadInto(proposals, () => get(apiPath("improve"), {signal}), (data) => proposalsList(data.attempts, agent.dir)),
  ]);
}

export async function show(main, current, signal) {
  if (current.id !== null) return showAgent(main, current.id, signal);
  const body = h("div", {}, h("p", {class: "muted"}, "Loading…"));
  render(main, pageHeader("Agents"), body);
  await loadInto(body, () => get(apiPath("agents"), {signal}), (data) => agentsTable(data.agents || []));
}
