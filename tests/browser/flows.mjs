// What the browser tests do in the UI, in order (they share one server, so later tests see what
// earlier ones changed). Each gets t = {page, url, ids, paths, home, seeder, token, screenshot,
// docsImage, log}; a thrown error fails the test.
import {readFileSync} from "node:fs";
import path from "node:path";

import {ANSWER, DENY_REASON} from "./seed.mjs";

function assert(condition, message) {
  if (!condition) throw new Error(message);
}

// Repeats `attempt` (async, returns truthy when done) until it succeeds or `ms` pass: for effects
// that happen on the server's own threads after an action was accepted.
async function eventually(what, attempt, ms = 20000) {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await attempt()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function open(t, hash) {
  await t.page.goto(`${t.url}/${hash}`);
  await t.page.locator("#main h1").first().waitFor();
}

async function tokenAndRunsList(t) {
  const {page, ids} = t;
  const dialog = page.locator("#token-dialog");
  await dialog.waitFor({state: "visible"});
  await page.getByLabel("Token", {exact: true}).fill("not-the-token");
  await page.getByRole("button", {name: "Use token"}).click();
  await page.getByText("That token was not accepted").waitFor();
  await page.getByLabel("Token", {exact: true}).fill(t.token);
  await page.getByRole("button", {name: "Use token"}).click();
  await dialog.waitFor({state: "hidden"});
  for (const id of [ids.approve, ids.fail, ids.replace]) {
    await page.getByRole("link", {name: id, exact: true}).waitFor();
  }
  await page.getByRole("button", {name: "Forget token"}).waitFor();
  await t.screenshot();
  await t.docsImage("runs");
  // The keyboard reaches the page with a visible focus ring, starting at the skip link (the token
  // is in the tab's sessionStorage now, so a reload asks for nothing).
  await page.reload();
  await page.getByRole("link", {name: ids.fail, exact: true}).waitFor();
  await page.keyboard.press("Tab");
  const focused = await page.evaluate(() => {
    const el = document.activeElement;
    return {cls: el.className, outline: getComputedStyle(el).outlineStyle};
  });
  assert(focused.cls === "skip-link", `Tab focused ${focused.cls}, not the skip link`);
  assert(focused.outline !== "none", "the focused element shows no outline");
  // The status filter keeps only the failed run.
  await page.getByLabel("Status", {exact: true}).selectOption("failed");
  await page.getByRole("link", {name: ids.approve, exact: true}).waitFor({state: "detached"});
  await page.getByRole("link", {name: ids.fail, exact: true}).waitFor();
  assert(page.url().includes("status=failed"), `the filter is not in the address: ${page.url()}`);
}

async function hostileTextStaysText(t) {
  const {page, ids} = t;
  await open(t, `#/runs/${encodeURIComponent(ids.approve)}`);
  await page.getByRole("tab", {name: "Transcript"}).click();
  await page.getByText('<img src=x onerror="window.__pwned=1">').first().waitFor();
  const injected = await page.evaluate(() => ({
    images: document.querySelectorAll("#main img").length,
    pwned: window.__pwned !== undefined,
  }));
  assert(injected.images === 0, "the run's task became an <img> element");
  assert(!injected.pwned, "the run's task ran script");
  await page.getByText("Waiting for approval of:").waitFor();
  await t.screenshot();
}

async function approveWaitingRun(t) {
  const {page, ids} = t;
  await open(t, "#/pending");
  const card = page.locator(`li[data-run="${ids.approve}"]`);
  await card.waitFor();
  await t.docsImage("pending");
  await card.getByRole("button", {name: "Approve"}).click();
  await page.getByText(`Approved ${ids.approve}`).waitFor();
  await open(t, `#/runs/${encodeURIComponent(ids.approve)}`);
  await page.locator(".overview .badge-completed").waitFor({timeout: 30000});
  await page.getByText("Release 1.2 is deployed to staging.").first().waitFor();
  // Both attempts (the send that stopped for approval, and the approval) are in the trace.
  await eventually("the approval's attempt in the trace", async () =>
    (await page.locator(".wf-row.type-agent").count()) >= 2);
  await t.screenshot();
}

async function denyFromRunPage(t) {
  const {page, ids} = t;
  await open(t, `#/runs/${encodeURIComponent(ids.deny)}`);
  await page.getByText("Waiting for approval of:").waitFor();
  await page.getByLabel("Reason for denying", {exact: true}).fill(DENY_REASON);
  await page.getByRole("button", {name: "Deny"}).click();
  await page.locator(".overview .badge-completed").waitFor({timeout: 30000});
  await page.getByText("Understood: release 2.0 is not deployed.").first().waitFor();
  await page.locator(".wf-row").first().waitFor();
  await t.screenshot();
}

async function answerQuestion(t) {
  const {page, ids} = t;
  await open(t, "#/pending");
  const card = page.locator(`li[data-run="${ids.ask}"]`);
  await card.getByText("Which environment needs the hotfix?").waitFor();
  await card.getByLabel("Your answer", {exact: true}).fill(ANSWER);
  await card.getByRole("button", {name: "Send answer"}).click();
  await page.getByText(`Answered ${ids.ask}`).waitFor();
  await open(t, `#/runs/${encodeURIComponent(ids.ask)}`);
  await page.locator(".overview .badge-completed").waitFor({timeout: 30000});
  await page.getByText("The hotfix goes to staging, as you said.").first().waitFor();
  await page.locator(".wf-row").first().waitFor();
  await t.screenshot();
}

async function startRun(t) {
  const {page} = t;
  await open(t, "#/runs");
  const form = page.locator("details.start-run");
  await form.getByText("Start a run").click();
  await form.getByLabel("Agent", {exact: true}).selectOption("reader");
  await form.getByLabel("Task", {exact: true}).fill("TASK-REPLACE: read notes.txt once more");
  await page.getByRole("button", {name: "Start run"}).click();
  await eventually("the new run's page", async () => /#\/runs\/[^/?]+$/.test(page.url()));
  await page.locator(".overview .badge-completed").waitFor({timeout: 30000});
  await page.getByText("TASK-REPLACE: read notes.txt once more").first().waitFor();
  await t.screenshot();
}

async function retryDeadLetter(t) {
  const {page, ids} = t;
  await open(t, "#/lessons");
  const row = page.locator(`tr[data-job="${ids.deadLetter}"]`);
  await row.waitFor();
  await t.docsImage("lessons");
  await row.getByRole("button", {name: `Retry lesson job ${ids.deadLetter}`}).click();
  await page.getByText("No dead letters.").waitFor();
  await t.screenshot();
  // The server's lesson workers take the job again; the generator answers properly this time and
  // the lesson becomes a memory fact.
  await open(t, "#/memory");
  await page.getByLabel("Query", {exact: true}).fill("rephrase the request as a neutral summary");
  await eventually("the lesson in memory", async () => {
    await page.getByRole("button", {name: "Search"}).click();
    await page.getByText(/^\d+ results for/).waitFor();
    return (await page.getByText("CORRECTION: Rephrase the request").count()) > 0;
  });
}

async function searchAndRecallMemory(t) {
  const {page} = t;
  await open(t, "#/memory");
  await page.getByLabel("Query", {exact: true}).fill("staging deploys");
  await page.getByRole("button", {name: "Search"}).click();
  const hit = page.locator("table.facts tr", {hasText: "Staging deploys need the release tag pushed first."});
  await hit.first().waitFor();
  await page.getByLabel("Task", {exact: true}).fill("deploy the release to staging");
  await page.getByRole("button", {name: "Show what a run would receive"}).click();
  await page.getByText("## Long-term Memory").waitFor();
  await page.locator(".recall-facts", {hasText: "Staging deploys need the release tag"}).waitFor();
  await hit.first().getByRole("button", {name: "Details"}).click();
  await page.locator(".fact-detail dt", {hasText: "helped"}).first().waitFor();
  await t.screenshot({fullPage: true});
  await t.docsImage("memory");
}

async function traceMarksReplacedResult(t) {
  const {page, ids} = t;
  await open(t, `#/runs/${encodeURIComponent(ids.replace)}`);
  const row = page.locator(".wf-row.is-replaced");
  await row.waitFor();
  await row.getByText("result replaced by hook").waitFor();
  await row.getByText("heal: replace").waitFor();
  await t.docsImage("run");
  await row.locator(".wf-label").click();
  await row.locator(".wf-detail").getByText("withheld: the file holds a key").first().waitFor();
  const turns = await page.locator(".wf-row.type-chat").count();
  assert(turns >= 2, "the model turns are not in the trace");
  // One meaning of "step": the overview's Steps are the trace's model turns.
  const steps = await page.locator(".overview dt", {hasText: /^Steps$/}).locator("xpath=following-sibling::dd[1]").textContent();
  assert(Number(steps) === turns, `the overview says ${steps} steps, the trace ${turns} model turns`);
  await t.screenshot();
  // The tabs work from the keyboard: arrow keys move between them.
  await page.getByRole("tab", {name: "Trace"}).focus();
  await page.keyboard.press("ArrowRight");
  const selected = await page.getByRole("tab", {name: "Transcript"}).getAttribute("aria-selected");
  assert(selected === "true", "ArrowRight did not select the Transcript tab");
  await page.locator(".message-tool .flag-replaced").waitFor();
  await page.keyboard.press("ArrowRight");
  await page.getByRole("button", {name: "Fork from checkpoint 1"}).waitFor();
}

async function traceListOpensATrace(t) {
  const {page, ids} = t;
  await open(t, "#/traces");
  const row = page.locator("table.data tr", {has: page.getByRole("link", {name: ids.replace, exact: true})});
  await row.waitFor();
  await t.docsImage("traces");
  await row.locator("td").first().getByRole("link").click();
  await page.locator(".wf-row.is-replaced").waitFor();
  await page.getByRole("link", {name: ids.replace, exact: true}).first().waitFor();
  await t.screenshot();
}

// The failed summariser run's trace is found by its agent and its errors; the filters are kept in
// the page's address, so a reload shows the same list, and the trace opens from it with its model
// turn saying that content capture was off.
async function traceFoundByAFilter(t) {
  const {page, ids} = t;
  await open(t, "#/traces");
  const row = (id) => page.locator("table.data tr", {has: page.getByRole("link", {name: id, exact: true})});
  await row(ids.replace).waitFor();
  await page.getByLabel("Agent").fill("summariser");
  await page.getByLabel("Status").selectOption("error");
  await page.getByRole("button", {name: "Filter", exact: true}).click();
  await row(ids.replace).waitFor({state: "detached"});
  await row(ids.fail).waitFor();
  const hash = await page.evaluate(() => window.location.hash);
  assert(hash.includes("agent=summariser") && hash.includes("status=error"),
         `the filters are not in the address: ${hash}`);
  await page.reload();
  await row(ids.fail).waitFor();
  assert(await row(ids.replace).count() === 0, "a reload lost the filter");
  assert(await page.getByLabel("Agent").inputValue() === "summariser", "the agent filter was not kept");
  assert(await page.getByLabel("Status").inputValue() === "error", "the status filter was not kept");
  assert(await page.locator("table.data tbody tr").count() === 1, "more than the failed run's trace matched");
  // A filter nothing matches says so; a bad time comes back as the API's error.
  await page.getByLabel("Model").fill("no-such-model");
  await page.getByRole("button", {name: "Filter", exact: true}).click();
  await page.getByText("No traces match.").waitFor();
  await page.getByLabel("Model").fill("");
  await page.getByRole("button", {name: "Filter", exact: true}).click();
  await row(ids.fail).locator("td").first().getByRole("link").click();
  // The seeded home runs without content capture: a model turn says so instead of showing nothing.
  await page.locator(".wf-row.type-chat .wf-label").first().click();
  await page.locator(".wf-row.type-chat .content-off").first().waitFor();
  await t.screenshot();
}

async function forkFromCheckpoint(t) {
  const {page, ids} = t;
  await open(t, `#/runs/${encodeURIComponent(ids.replace)}`);
  await page.getByRole("tab", {name: "Checkpoints"}).click();
  await page.getByRole("button", {name: "Fork from checkpoint 1"}).click();
  await eventually("the fork's page", async () => !page.url().endsWith(encodeURIComponent(ids.replace)));
  const heading = await page.locator("#main h1").first().textContent();
  assert(heading.startsWith("Run ") && heading !== `Run ${ids.replace}`, `fork page heading: ${heading}`);
  await page.locator(".overview").getByText(ids.replace).waitFor();  // "Forked from"
  // A fork is not driven until it is resumed.
  await page.getByRole("button", {name: "Resume"}).click();
  await page.locator(".overview .badge-completed").waitFor({timeout: 30000});
  await t.screenshot();
}

async function applyProposal(t) {
  const {page, ids, paths} = t;
  await open(t, "#/improve");
  await page.getByRole("link", {name: ids.improve}).click();
  await page.locator(".diff-add", {hasText: "+Name the part of the product that changed"}).waitFor();
  await page.getByText("recomputed from the recorded scores: matches").waitFor();
  await page.getByRole("button", {name: "Apply proposal"}).click();
  await page.locator(".badge-applied").first().waitFor();
  const skill = readFileSync(path.join(paths.improveAgent, "skills", "entry-format.md"), "utf8");
  assert(skill.includes("Name the part of the product that changed"), "the skill file did not change");
  await t.screenshot({fullPage: true});
}

// The seeded proposal's page: each case's passing runs in both arms with the gain (the attempt ran
// with --held-out 0, so no case is held out), both arms' cost per successful run against the cost
// gate, and the diff.
async function proposalsPage(t) {
  const {page, ids} = t;
  await open(t, "#/improve");
  await page.getByRole("link", {name: ids.improve, exact: true}).click();
  await page.getByRole("heading", {name: "Gains per case"}).waitFor();
  for (const id of ["search-fix", "cart-speedup"]) {
    const row = page.locator(`table.gains tr[data-case="${id}"]`);
    await row.locator('td[data-arm="baseline"]', {hasText: "0/2 (0%)"}).waitFor();
    await row.locator('td[data-arm="proposal"]', {hasText: "2/2 (100%)"}).waitFor();
    await row.getByText("+2", {exact: true}).waitFor();
    await row.locator(".badge-better").waitFor();
    await row.getByText("training", {exact: true}).waitFor();
  }
  await page.getByRole("heading", {name: "Cost"}).waitFor();
  for (const key of ["baseline", "proposal", "limit", "gate"]) {
    const text = await page.locator(`dl.cost [data-cost="${key}"]`).textContent();
    assert(text.trim().length > 0, `the cost's ${key} is empty`);
  }
  // The baseline never passed in this scenario: the cost gate sets no limit.
  await page.locator('dl.cost [data-cost="gate"]', {hasText: "no limit: the baseline never passed"}).waitFor();
  await page.locator(".diff-add", {hasText: "+Name the part of the product that changed"}).waitFor();
  await page.locator(".diff-del", {hasText: "-Never name the part of the product that changed."}).waitFor();
  await t.screenshot({fullPage: true});
  await t.docsImage("improve-attempt", {fullPage: true});
}

// A canary of the served agent's queued proposal started from its page, at 100% and decided by a
// person: runs of the agent started through the API show up in the panel's counts as they end,
// without a reload (the page follows the canary's events), and a rollback from the page rejects
// the proposal.
async function canaryStartedFromUi(t) {
  const {page, ids} = t;
  await open(t, `#/improve/${encodeURIComponent(ids.canary)}`);
  await page.locator('.live-state[data-state="open"]').waitFor();
  const form = page.locator("form.canary-form");
  await form.getByLabel("Share of new runs (%)").fill("100");
  assert(!(await form.getByLabel("Decide on its own (auto)").isChecked()), "auto is on by default");
  await form.getByRole("button", {name: "Start canary"}).click();
  const panel = page.locator(".canary-panel");
  await panel.locator('[data-canary="state"] .badge-running').waitFor();
  const runs = (arm, count) =>
    panel.locator(`tr[data-arm="${arm}"] td[data-count="runs"]`, {hasText: new RegExp(`^${count}$`)});
  await runs("proposal", 0).waitFor();
  // Apply is refused while the canary runs, so the page no longer offers it.
  assert(await page.getByRole("button", {name: "Apply proposal"}).count() === 0, "apply is still offered");
  await page.evaluate(() => { window.mendNotReloaded = true; });
  const tasks = ["Merged: SHOP-311 fixes search results ignoring the size filter.",
                 "Merged: SHOP-318 makes the cart page load twice as fast."];
  for (const task of tasks) {
    const response = await fetch(`${t.url}/api/v1/runs`, {
      method: "POST",
      headers: {Authorization: `Bearer ${t.token}`, "Content-Type": "application/json"},
      body: JSON.stringify({agent: "changelog-writer", task}),
    });
    assert(response.status === 202, `starting a run of changelog-writer answered ${response.status}`);
  }
  await runs("proposal", 2).waitFor({timeout: 30000});
  await runs("baseline", 0).waitFor();
  await panel.locator('tr[data-arm="proposal"] td[data-count="successes"]', {hasText: /^2$/}).waitFor();
  await panel.locator('[data-canary="recommendation"]', {hasText: "continue"}).waitFor();
  assert(await page.evaluate(() => window.mendNotReloaded === true), "the page was reloaded");
  await t.screenshot({fullPage: true});
  await t.docsImage("canary", {fullPage: true});
  await panel.getByRole("button", {name: "Roll back"}).click();
  await panel.locator('[data-canary="state"] .badge-rolled_back').waitFor();
  await panel.locator('[data-canary="decision"]', {hasText: "roll_back_manual"}).waitFor();
  await page.locator(".badge-rejected").first().waitFor();
  assert(await panel.getByRole("button", {name: "Promote"}).count() === 0, "a decided canary offers promote");
}

// An attempt of the served agent started from the improve page: its job shows how it goes and what
// it came to, and the attempts list gets the new attempt, without a reload.
async function improveStartedFromUi(t) {
  const {page} = t;
  await open(t, "#/improve");
  await page.locator('.live-state[data-state="open"]').waitFor();
  await page.evaluate(() => { window.mendNotReloaded = true; });
  const form = page.locator(".start-improve form");
  await form.getByLabel("Agent", {exact: true}).selectOption("changelog-writer");
  await form.getByLabel("Repeats", {exact: true}).fill("2");
  await form.getByLabel("Rounds", {exact: true}).fill("1");
  await form.getByLabel("Candidates", {exact: true}).fill("1");
  await form.getByLabel("Held-out fraction", {exact: true}).fill("0");
  await form.getByLabel("Seed", {exact: true}).fill("1");
  await form.getByRole("button", {name: "Start attempt"}).click();
  const job = page.locator("dl.improve-job");
  await job.locator('[data-job="state"] .badge-succeeded').waitFor({timeout: 60000});
  await job.locator('[data-job="progress"]', {hasText: /^improve: candidate \d+\/\d+ runs/}).waitFor();
  await job.locator('[data-job="outcome"] .badge-proposal').waitFor();
  await t.docsImage("improve");
  const attempt = (await job.getByRole("link").textContent()).trim();
  await page.locator(`table.data tr[data-attempt="${attempt}"] .badge-queued`).waitFor();
  assert(await page.evaluate(() => window.mendNotReloaded === true), "the page was reloaded");
  await t.screenshot({fullPage: true});
}

async function metricsOverview(t) {
  const {page} = t;
  // The store's totals as the API counts them before and after the page read them: runs that
  // finish meanwhile only make the counts grow.
  const totals = async () => {
    const response = await fetch(`${t.url}/api/v1/metrics`, {headers: {Authorization: `Bearer ${t.token}`}});
    assert(response.ok, `GET /api/v1/metrics answered ${response.status}`);
    return response.json();
  };
  const before = await totals();
  assert(before.runs.total >= 5 && before.runs.completed >= 1 && before.facts.active >= 1,
         `the seeded home should have runs and facts: ${JSON.stringify(before)}`);
  await open(t, "#/metrics");
  await page.locator('.metric[data-metric="mend_lessonq_queue_depth"]').waitFor();
  await page.locator('.stat[data-total="runs.total"]').waitFor();
  const shown = {};
  for (const key of ["runs.total", "runs.completed", "facts.active", "facts.lessons"]) {
    const text = await page.locator(`.stat[data-total="${key}"] .stat-value`).textContent();
    shown[key] = Number(text.trim().replace(/,/g, ""));
  }
  const after = await totals();
  for (const [key, value] of Object.entries(shown)) {
    const [group, name] = key.split(".");
    assert(before[group][name] <= value && value <= after[group][name],
           `${key} shows ${value}; the API said ${before[group][name]}, then ${after[group][name]}`);
  }
  // The process's counters say since when they count.
  await page.getByText(/count what this server did since it started, \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \(up \d+ (s|min)/).waitFor();
  await t.screenshot({fullPage: true});
  await t.docsImage("metrics");
  await page.getByLabel("Filter", {exact: true}).fill("lessonq");
  assert(await page.locator(".metric").count() >= 3, "the lessonq metrics are not shown");
}

// A run started through the API, not the page, appears in the open runs list and completes there:
// the page is refreshed by the server's events. It must not reload, and it waits for the event
// stream first, so the slow poll that stands in for a broken stream cannot be what showed it.
async function runAppearsLive(t) {
  const {page} = t;
  await open(t, "#/runs");
  await page.locator('.live-state[data-state="open"]').waitFor();
  await page.evaluate(() => { window.mendNotReloaded = true; });
  const id = "run-live-" + Date.now().toString(16);
  const response = await fetch(`${t.url}/api/v1/runs`, {
    method: "POST",
    headers: {Authorization: `Bearer ${t.token}`, "Content-Type": "application/json"},
    body: JSON.stringify({agent: "reader", task: "TASK-REPLACE: read notes.txt while watched", id}),
  });
  assert(response.status === 202, `starting the run answered ${response.status}`);
  const row = page.locator("table.data tr", {has: page.getByRole("link", {name: id, exact: true})});
  await row.waitFor();
  await row.locator(".badge-completed").waitFor();
  assert(await page.evaluate(() => window.mendNotReloaded === true), "the page was reloaded");
  await t.screenshot();
}

async function chartsDrawn(t) {
  const {page} = t;
  await open(t, "#/charts?by=agent&range=24h");
  // The seeded runs are drawn: a legend entry and a line per agent, with at least one dot.
  for (const agent of ["deployer", "summariser"]) {
    await page.locator(".chart-legend li", {hasText: agent}).first().waitFor();
  }
  const count = page.locator('figure[data-metric="count"] svg');
  await count.waitFor();
  assert(await count.getAttribute("role") === "img", "the chart has no img role");
  const lines = await page.locator('figure[data-metric="count"] path').count();
  assert(lines >= 4, `the runs chart draws ${lines} lines, fewer than the seeded agents`);
  await page.locator('figure[data-metric="count"] circle').first().waitFor();
  // One agent chosen in the list narrows the charts to it, and the choice is in the address.
  await page.getByLabel("Agent", {exact: true}).selectOption("summariser");
  await page.locator('figure[data-metric="count"] path[data-key="summariser"]').waitFor();
  assert(await page.locator('figure[data-metric="count"] path').count() === 1,
         "another agent is still drawn");
  assert(page.url().includes("key=summariser"), `the choice is not in the address: ${page.url()}`);
  // The summariser's run failed: its failure rate reaches the top of the chart.
  await page.locator('figure[data-metric="failure_rate"] circle').first().waitFor();
  // Per model, the model calls are drawn.
  await open(t, "#/charts?by=model&range=24h");
  await page.locator('figure[data-metric="count"] circle').first().waitFor();
  await t.screenshot();
  await t.docsImage("charts", {fullPage: true});
  // A range without runs says so instead of drawing a flat line.
  await open(t, "#/charts?by=agent&range=24h&key=no-such-agent");
  await page.getByText("No runs in this range").waitFor();
  assert(await page.locator("svg.chart").count() === 0, "an empty range drew a chart");
}

async function agentPage(t) {
  const {page, ids} = t;
  // From a run to its agent: the reader's run had its tool result replaced by a check.
  await open(t, `#/runs/${encodeURIComponent(ids.replace)}`);
  await page.locator("#main").getByRole("link", {name: "reader", exact: true}).click();
  await page.getByRole("heading", {name: "Agent reader"}).waitFor();
  await page.getByText("You read files and report on them.").waitFor();
  // A built-in tool's JSON schema, behind its disclosure.
  const tool = page.locator('li[data-tool="read_file"]');
  await tool.getByText("Schema of read_file").click();
  const schema = JSON.parse(await tool.locator("pre").textContent());
  assert(schema.type === "object" && schema.properties && schema.properties.path,
         `read_file's schema is not shown: ${JSON.stringify(schema)}`);
  // Its check and its recent runs, the seeded one among them.
  await page.locator("table.data td", {hasText: "read_file"}).first().waitFor();
  await page.getByRole("link", {name: ids.replace, exact: true}).waitFor();
  assert(page.url().includes("#/agents/reader"), `not on the agent's page: ${page.url()}`);
  await t.screenshot();
  await t.docsImage("agent", {fullPage: true});
  // A name that is not an agent is an error, not an empty page.
  await open(t, "#/agents/no-such-agent");
  await page.getByRole("alert").getByText("no agent named no-such-agent").waitFor();
}

async function sessionsPage(t) {
  const {page} = t;
  // The seeded home has no proxy conversation: the page says where sessions come from.
  await open(t, "#/sessions");
  await page.getByText("No sessions: conversations through mend proxy").waitFor();
  await open(t, "#/sessions/no-such-session");
  await page.getByRole("alert").getByText("no session no-such-session").waitFor();
}

// A run's page lists the lesson given to it (with its score); the link opens the lesson's page,
// which names the run it was learned from and the runs it was given to, and links back.
async function runInjectedLessons(t) {
  const {page, ids} = t;
  await open(t, `#/runs/${encodeURIComponent(ids.learned)}`);
  const given = page.locator("section", {has: page.getByRole("heading", {name: "Memory given to this run"})});
  const row = given.locator(`tr[data-fact="${ids.migrateLesson}"]`);
  await row.waitFor();
  const cells = await row.locator("td").allInnerTexts();
  assert(cells[1] === "lesson", `the given fact's kind is ${cells[1]}`);
  assert(/^\d+\.\d{3}$/.test(cells[2]), `the given lesson has no score: ${cells[2]}`);
  assert(cells[3].includes("payments database migration"), `the content excerpt is ${cells[3]}`);
  assert(cells[4] === "helped", `the run's outcome for the lesson is ${cells[4]}`);
  await t.screenshot();
  await t.docsImage("run-memory");
  await row.getByRole("link", {name: ids.migrateLesson}).click();
  await page.getByRole("heading", {name: `Lesson ${ids.migrateLesson}`}).waitFor();
  const from = page.locator("p.came-from");
  await from.getByRole("link", {name: ids.migrate, exact: true}).waitFor();
  const back = page.locator("table.given-to").locator(`tr[data-run="${ids.learned}"]`);
  await back.waitFor();
  const outcome = await back.locator("td").nth(3).innerText();
  assert(outcome === "helped", `the lesson's page shows ${outcome} for the run it was given to`);
  await t.screenshot();
  await t.docsImage("lesson");
  await back.getByRole("link", {name: ids.learned, exact: true}).click();
  await page.getByRole("heading", {name: `Run ${ids.learned}`}).waitFor();
  // The failed run's page names the lesson it produced.
  await open(t, `#/memory/${encodeURIComponent(ids.migrateLesson)}`);
  await page.locator("p.came-from").getByRole("link", {name: ids.migrate, exact: true}).click();
  const lesson = page.locator("section", {has: page.getByRole("heading", {name: "Lesson from this run"})});
  await lesson.locator(`li[data-fact="${ids.migrateLesson}"]`).waitFor();
}

// `needs`: the API routes a test uses; the runner checks the server has them before the test.
export const TESTS = [
  {name: "token-prompt-and-runs-list", asksForToken: true, run: tokenAndRunsList,
   needs: ["GET /api/v1/runs", "GET /api/v1/agents"]},
  {name: "hostile-text-stays-text", run: hostileTextStaysText, needs: ["GET /api/v1/runs/ID"]},
  {name: "approve-waiting-run", run: approveWaitingRun,
   needs: ["GET /api/v1/pending", "POST /api/v1/runs/ID/approve", "GET /api/v1/runs/ID",
           "GET /api/v1/runs/ID/trace"]},
  {name: "deny-from-run-page", run: denyFromRunPage,
   needs: ["GET /api/v1/runs/ID", "POST /api/v1/runs/ID/deny", "GET /api/v1/runs/ID/trace"]},
  {name: "answer-question", run: answerQuestion,
   needs: ["GET /api/v1/pending", "POST /api/v1/runs/ID/answer", "GET /api/v1/runs/ID",
           "GET /api/v1/runs/ID/trace"]},
  {name: "start-run", run: startRun,
   needs: ["GET /api/v1/runs", "GET /api/v1/agents", "POST /api/v1/runs", "GET /api/v1/runs/ID"]},
  {name: "retry-dead-letter", run: retryDeadLetter,
   needs: ["GET /api/v1/lessons/dead", "POST /api/v1/lessons/dead/ID/retry", "GET /api/v1/memory/search"]},
  {name: "search-and-recall-memory", run: searchAndRecallMemory,
   needs: ["GET /api/v1/memory/search", "GET /api/v1/memory/recall", "GET /api/v1/memory/ID"]},
  {name: "trace-marks-replaced-result", run: traceMarksReplacedResult,
   needs: ["GET /api/v1/runs/ID", "GET /api/v1/runs/ID/trace"]},
  {name: "trace-list-opens-a-trace", run: traceListOpensATrace,
   needs: ["GET /api/v1/traces", "GET /api/v1/traces/ID"]},
  {name: "trace-found-by-a-filter", run: traceFoundByAFilter,
   needs: ["GET /api/v1/traces", "GET /api/v1/traces/ID"]},
  {name: "fork-from-checkpoint", run: forkFromCheckpoint,
   needs: ["GET /api/v1/runs/ID", "POST /api/v1/runs/ID/fork", "POST /api/v1/runs/ID/resume"]},
  {name: "apply-proposal", run: applyProposal,
   needs: ["GET /api/v1/improve", "GET /api/v1/improve/ID", "POST /api/v1/improve/ID/apply"]},
  {name: "proposals-page", run: proposalsPage, needs: ["GET /api/v1/improve", "GET /api/v1/improve/ID"]},
  {name: "canary-started-from-ui", run: canaryStartedFromUi,
   needs: ["GET /api/v1/improve/ID", "POST /api/v1/improve/ID/canary", "GET /api/v1/improve/ID/canary",
           "POST /api/v1/improve/ID/rollback", "POST /api/v1/runs", "POST /api/v1/events/tickets"]},
  {name: "improve-started-from-ui", run: improveStartedFromUi,
   needs: ["POST /api/v1/improve", "GET /api/v1/improve/job", "GET /api/v1/agents",
           "POST /api/v1/events/tickets"]},
  {name: "metrics-overview", run: metricsOverview, needs: ["GET /metrics", "GET /api/v1/metrics"]},
  {name: "run-appears-live", run: runAppearsLive,
   needs: ["POST /api/v1/events/tickets", "GET /api/v1/runs", "POST /api/v1/runs"]},
  {name: "run-injected-lessons", run: runInjectedLessons,
   needs: ["GET /api/v1/runs/ID", "GET /api/v1/runs/ID/memory", "GET /api/v1/memory/ID"]},
  {name: "charts-drawn", run: chartsDrawn, needs: ["GET /api/v1/metrics/series"]},
  {name: "agent-page", run: agentPage,
   needs: ["GET /api/v1/runs/ID", "GET /api/v1/agents/ID", "GET /api/v1/runs", "GET /api/v1/improve"]},
  {name: "sessions-page", run: sessionsPage, needs: ["GET /api/v1/sessions", "GET /api/v1/sessions/ID"]},
];
