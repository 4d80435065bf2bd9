// Seeds a mend home for the browser tests with real `mend` commands against the fake LLM server:
// two runs waiting for approval (one task holds markup that must stay text), a run waiting for an
// answer, a failed run whose lesson job ends in the dead-letter queue, a run whose tool result an
// output check replaced, memory facts, and two queued improve proposals (the skill-fix scenario of
// bench/improve): one of a folder outside serve.agents_dir, one of the served agent
// `changelog-writer`, whose [improve] table gives the check and the cases (for a canary started from
// the UI, and an attempt started from it); also a failed run whose lesson a later similar run
// receives.
import {spawnSync} from "node:child_process";
import {cpSync, mkdirSync, readFileSync, writeFileSync} from "node:fs";
import path from "node:path";

export const TASKS = {
  approve: 'TASK-APPROVE: deploy release 1.2 <img src=x onerror="window.__pwned=1"> to staging',
  fail: "TASK-FAIL: summarise the quarterly report",
  replace: "TASK-REPLACE: read notes.txt and tell me what it says",
  deny: "TASK-DENY: deploy release 2.0 to production",
  ask: "TASK-ASK: deploy the hotfix where it is needed",
  migrate: "TASK-MIGRATE: deploy the payments service after its database migration",
  learned: "TASK-LEARNED: deploy the payments service after its database migration, release 3",
};

export const DENY_REASON = "not during the release freeze";
export const ANSWER = "staging, please";

const LESSON_PROMPT = "You review an AI agent's run that went wrong";

export const LESSON_TEXT =
  "<situation>When a summary task meets a model that refuses the request</situation>\n" +
  "<mistake>The run gave up after the first refusal</mistake>\n" +
  "<correction>Rephrase the request as a neutral summary of the report</correction>\n" +
  "<tags>summary, report, refusal</tags>\n";

// A failed run whose lesson is stored at once, and a later similar run that receives it: the
// lesson generator's request quotes TASK-MIGRATE, the later run's says TASK-LEARNED.
export const MIGRATE_LESSON =
  "<situation>When the payments service is deployed before its database migration ran</situation>\n" +
  "<mistake>The deploy started while the payments database migration was still pending</mistake>\n" +
  "<correction>Run the payments database migration first, then deploy the service</correction>\n" +
  "<tags>payments, migration, deploy</tags>\n";

function lessonRoutes() {
  return [
    {name: "migrate-lesson", contains: [LESSON_PROMPT, "TASK-MIGRATE"],
     responses: [{text: MIGRATE_LESSON}]},
    {name: "learned-done", contains: "TASK-LEARNED",
     responses: [{text: "The migration ran first; release 3 of the payments service is deployed."}]},
    {name: "migrate-fail", contains: "TASK-MIGRATE",
     responses: [{status: 400, error_message: "the deploy was refused: a migration is pending"}]},
  ];
}

// The fake model: lesson generator first (its request quotes the failed task), then the agents.
function routes(scenarioRoutes) {
  return [
    ...lessonRoutes(),
    // The first lesson reply is unusable (a permanent error: the job is dead-lettered); after a
    // retry the generator answers properly.
    {name: "lesson", contains: LESSON_PROMPT, cycle: false,
     responses: [{text: "I would rather not say."}, {text: LESSON_TEXT}]},
    {name: "approve-done", contains: ["TASK-APPROVE", "deployed release 1.2"],
     responses: [{text: "Release 1.2 is deployed to staging."}]},
    {name: "approve-call", contains: "TASK-APPROVE",
     responses: [{tool_calls: [{name: "deploy", id: "call_deploy", arguments: {}}]}]},
    {name: "deny-done", contains: ["TASK-DENY", DENY_REASON],
     responses: [{text: "Understood: release 2.0 is not deployed."}]},
    {name: "deny-call", contains: "TASK-DENY",
     responses: [{tool_calls: [{name: "deploy", id: "call_deploy2", arguments: {}}]}]},
    {name: "ask-done", contains: ["TASK-ASK", ANSWER],
     responses: [{text: "The hotfix goes to staging, as you said."}]},
    {name: "ask-call", contains: "TASK-ASK",
     responses: [{tool_calls: [{name: "ask_human", id: "call_ask",
                                arguments: {question: "Which environment needs the hotfix?"}}]}]},
    {name: "fail", contains: "TASK-FAIL",
     responses: [{status: 400, error_message: "the request was refused by the model"}]},
    {name: "replace-done", contains: ["TASK-REPLACE", "withheld: the file holds a key"],
     responses: [{text: "The file holds a key, so its content was withheld."}]},
    {name: "replace-call", contains: "TASK-REPLACE",
     responses: [{tool_calls: [{name: "read_file", id: "call_read", arguments: {path: "notes.txt"}}]}]},
    ...scenarioRoutes,
  ];
}

function write(file, text) {
  mkdirSync(path.dirname(file), {recursive: true});
  writeFileSync(file, text);
}

// The agent folders under `agents`.
function writeAgents(agents) {
  write(path.join(agents, "deployer", "agent.toml"),
        'name = "deployer"\ndescription = "Deploys releases."\ntools = ["deploy"]\n');
  write(path.join(agents, "deployer", "instructions.md"), "You deploy releases when asked.\n");
  write(path.join(agents, "deployer", "tools", "deploy.toml"),
        'name = "deploy"\ndescription = "Deploys the release to staging."\n' +
        'command = ["/bin/echo", "deployed release 1.2"]\n');
  write(path.join(agents, "asker", "agent.toml"), 'name = "asker"\ntools = ["ask_human"]\n');
  write(path.join(agents, "asker", "instructions.md"), "You ask when something is unclear.\n");
  write(path.join(agents, "summariser", "agent.toml"), 'name = "summariser"\ntools = []\n');
  write(path.join(agents, "summariser", "instructions.md"), "You summarise reports.\n");
  write(path.join(agents, "reader", "agent.toml"),
        'name = "reader"\ntools = ["read_file"]\nworkspace = "workspace"\n\n' +
        '[[checks]]\ntool = "read_file"\nkind = "regex"\npattern = "api_key\\\\s*="\n' +
        'must_match = false\naction = "replace"\nmessage = "withheld: the file holds a key"\n');
  write(path.join(agents, "reader", "instructions.md"), "You read files and report on them.\n");
  write(path.join(agents, "reader", "workspace", "notes.txt"), "api_key = sk-not-a-real-key\n");
}

export class Seeder {
  // Commands run in `cwd` (the test's folder), which becomes the workspace of agents without one.
  constructor({mend, home, baseUrl, cwd, log}) {
    this.mend = mend;
    this.home = home;
    this.baseUrl = baseUrl;
    this.cwd = cwd;
    this.log = log;
  }

  env() {
    return {...process.env, MEND_API_KEY: "browser-test-key", MEND_PROVIDER: "openai",
            MEND_BASE_URL: this.baseUrl, MEND_MODEL: "fake-model"};
  }

  // Runs `mend --home HOME --json ARGS`; returns {status, json, stderr}.
  mendJson(args, {allowFailure = false} = {}) {
    const result = spawnSync(this.mend, ["--home", this.home, "--json", ...args],
                             {env: this.env(), encoding: "utf8", cwd: this.cwd, timeout: 120000});
    this.log(`$ mend ${args.join(" ")} -> exit ${result.status}`);
    if (result.error) throw result.error;
    if (result.status !== 0 && !allowFailure) {
      throw new Error(`mend ${args.join(" ")} exited ${result.status}: ${result.stderr}`);
    }
    let json = null;
    try {
      json = JSON.parse(result.stdout);
    } catch {
      json = null;
    }
    return {status: result.status, json, stderr: result.stderr};
  }
}

// Writes the agents and the fake model's routes under `dir`; returns their paths.
export function prepare(dir, repo) {
  const agents = path.join(dir, "agents");
  writeAgents(agents);
  const scenario = path.join(repo, "bench", "improve", "skill-fix");
  const improveAgent = path.join(dir, "improve", "changelog-writer");
  cpSync(path.join(scenario, "agent"), improveAgent, {recursive: true});
  const check = path.join(repo, "bench", "improve", "lib", "check_answer");
  // The same agent served by mend serve: runs of it can be started from the API (a canary's), and
  // its [improve] table lets an attempt start with nothing but its name.
  const servedAgent = path.join(agents, "changelog-writer");
  cpSync(path.join(scenario, "agent"), servedAgent, {recursive: true});
  cpSync(path.join(scenario, "cases.jsonl"), path.join(servedAgent, "cases.jsonl"));
  const toml = readFileSync(path.join(servedAgent, "agent.toml"), "utf8");
  writeFileSync(path.join(servedAgent, "agent.toml"),
                toml + `\n[improve]\ncheck = [${JSON.stringify(check)}, "\${AGENT_DIR}"]\n` +
                'cases = "cases.jsonl"\n');
  const scenarioRoutes = JSON.parse(readFileSync(path.join(scenario, "routes.json"), "utf8"));
  const routesFile = path.join(dir, "routes.json");
  writeFileSync(routesFile, JSON.stringify(routes(scenarioRoutes), null, 1));
  return {agents, routesFile, improveAgent, servedAgent, cases: path.join(scenario, "cases.jsonl"),
          check};
}

function expectStatus(result, status, what) {
  const got = result.json && result.json.status;
  if (got !== status) {
    throw new Error(`${what}: expected status ${status}, got ${got} (${result.stderr.trim()})`);
  }
}

// Seeds everything; returns the ids the tests look for.
export function seed(seeder, paths) {
  const ids = {};
  for (const [text, category, tags] of [
    ["Staging deploys need the release tag pushed first.", "fact", "deploy,staging"],
    ["The quarterly report lives in reports/q3.pdf and is summarised for the board.", "fact", "report"],
    ["Prefer small, reviewable changes when editing configuration files.", "preference", "config"],
  ]) {
    seeder.mendJson(["memory", "add", text, "--category", category, "--tags", tags]);
  }
  const approve = seeder.mendJson(["run", path.join(paths.agents, "deployer"), TASKS.approve],
                                  {allowFailure: true});
  expectStatus(approve, "waiting", "the deployer run");
  ids.approve = approve.json.run_id;
  const deny = seeder.mendJson(["run", path.join(paths.agents, "deployer"), TASKS.deny],
                               {allowFailure: true});
  expectStatus(deny, "waiting", "the second deployer run");
  ids.deny = deny.json.run_id;
  const ask = seeder.mendJson(["run", path.join(paths.agents, "asker"), TASKS.ask],
                              {allowFailure: true});
  expectStatus(ask, "waiting", "the asker run");
  ids.ask = ask.json.run_id;
  // The run fails on the model's 400; its lesson job fails permanently in this process's workers
  // (the generator's first reply has no lesson) and lands in the dead-letter queue.
  const fail = seeder.mendJson(["run", path.join(paths.agents, "summariser"), TASKS.fail],
                               {allowFailure: true});
  expectStatus(fail, "failed", "the summariser run");
  ids.fail = fail.json.run_id;
  const replace = seeder.mendJson(["run", path.join(paths.agents, "reader"), TASKS.replace]);
  expectStatus(replace, "completed", "the reader run");
  ids.replace = replace.json.run_id;
  const quote = (text) => `'${text.replaceAll("'", "'\\''")}'`;
  const check = `python3 ${quote(paths.check)} ${quote(paths.improveAgent)}`;
  const improve = seeder.mendJson(["improve", paths.improveAgent, "--check", check, "--cases", paths.cases,
                                   "--held-out", "0", "--seed", "1", "--candidates", "1", "--rounds", "1",
                                   "--repeats", "2", "--concurrency", "2"]);
  if (!improve.json || improve.json.outcome !== "proposal") {
    throw new Error(`mend improve: expected a proposal, got ${JSON.stringify(improve.json)}`);
  }
  ids.improve = improve.json.attempt_id;
  seedInjectedLesson(seeder, paths, ids);
  // The served agent's attempt takes its check and cases from the folder's [improve] table.
  const served = seeder.mendJson(["improve", paths.servedAgent, "--held-out", "0", "--seed", "1",
                                  "--candidates", "1", "--rounds", "1", "--repeats", "2",
                                  "--concurrency", "2"]);
  if (!served.json || served.json.outcome !== "proposal") {
    throw new Error(`mend improve of the served agent: expected a proposal, got ${JSON.stringify(served.json)}`);
  }
  ids.canary = served.json.attempt_id;
  const lessons = seeder.mendJson(["reflect", "list"]);
  const dlq = (lessons.json && lessons.json.dlq) || [];
  if (dlq.length !== 1) throw new Error(`expected one dead letter, got ${JSON.stringify(lessons.json)}`);
  ids.deadLetter = dlq[0].id;
  return ids;
}

// A run that fails and leaves a lesson, then a later similar run that receives it in its prompt
// and completes (ids.migrate, ids.learned, ids.migrateLesson). An agent of their own, so the
// filters of other tests (the summariser's failed trace) see only what they expect.
function seedInjectedLesson(seeder, paths, ids) {
  const agent = path.join(path.dirname(paths.agents), "releaser");
  write(path.join(agent, "agent.toml"), 'name = "releaser"\ntools = []\n');
  write(path.join(agent, "instructions.md"), "You release services.\n");
  const failed = seeder.mendJson(["run", agent, TASKS.migrate], {allowFailure: true});
  expectStatus(failed, "failed", "the payments run");
  ids.migrate = failed.json.run_id;
  const learned = seeder.mendJson(["run", agent, TASKS.learned]);
  expectStatus(learned, "completed", "the second payments run");
  ids.learned = learned.json.run_id;
  const shown = seeder.mendJson(["memory", "list", "--category", "lesson"]);
  const facts = (shown.json && (shown.json.facts || shown.json)) || [];
  const lesson = facts.find((f) => String(f.content).includes("payments database migration"));
  if (!lesson) throw new Error(`the payments run left no lesson: ${JSON.stringify(shown.json)}`);
  ids.migrateLesson = lesson.id;
}
