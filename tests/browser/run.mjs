#!/usr/bin/env node
// The web UI's browser tests: seeds a fresh mend home with real `mend` commands against the fake
// LLM server, starts `mend serve` on a free loopback port with a token, and walks the UI in
// headless Chromium (the Debian package) through playwright-core (tests/browser/package.json).
//
//   node tests/browser/run.mjs --mend PATH --fake-server PATH --out DIR
//        [--chromium PATH] [--only NAME]... [--keep] [--docs-images DIR]
//
// Each test saves a screenshot into --out; with --docs-images the tests also save the pages
// docs/serve.md shows, as DIR/ui-<page>.png (docs/images is made so). Prints one "ok"/"not ok" line per test and a final
// "N passed, N failed" line. Exit 0: all passed; 1: a test failed; 2: usage or set-up error;
// 77: skipped (no playwright-core under tests/browser/node_modules, no Chromium, or mend and
// fake_llm_server not built).
import {spawn} from "node:child_process";
import {accessSync, constants, existsSync, mkdirSync, mkdtempSync, rmSync} from "node:fs";
import os from "node:os";
import path from "node:path";
import {createInterface} from "node:readline";
import {fileURLToPath} from "node:url";

import {TESTS} from "./flows.mjs";
import {prepare, seed, Seeder} from "./seed.mjs";

const SKIP = 77;
const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "..", "..");
const TOKEN = "browser-test-token";

function usage(message) {
  console.error(`run.mjs: ${message}`);
  console.error("usage: node tests/browser/run.mjs --mend PATH --fake-server PATH --out DIR " +
                "[--chromium PATH] [--only NAME]... [--keep] [--docs-images DIR]");
  process.exit(2);
}

function parseArgs(argv) {
  const args = {chromium: process.env.MEND_CHROMIUM || "/usr/bin/chromium", only: [], keep: false};
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) usage(`${flag} needs a value`);
      return argv[++i];
    };
    if (flag === "--mend") args.mend = path.resolve(value());
    else if (flag === "--fake-server") args.fakeServer = path.resolve(value());
    else if (flag === "--out") args.out = path.resolve(value());
    else if (flag === "--chromium") args.chromium = path.resolve(value());
    else if (flag === "--only") args.only.push(value());
    else if (flag === "--docs-images") args.docsImages = path.resolve(value());
    else if (flag === "--keep") args.keep = true;
    else usage(`unknown argument ${flag}`);
  }
  for (const key of ["mend", "fakeServer", "out"]) {
    if (!args[key]) usage(`--${key === "fakeServer" ? "fake-server" : key} is required`);
  }
  return args;
}

function skip(why) {
  console.log(`SKIPPED: ${why}`);
  process.exit(SKIP);
}

function executable(file) {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

async function loadPlaywright() {
  const entry = path.join(HERE, "node_modules", "playwright-core", "index.mjs");
  if (!existsSync(entry)) {
    skip("playwright-core is not installed (run scripts/bootstrap, or npm ci in tests/browser)");
  }
  return import(entry);
}

// Starts `command`, waits for a line of its `stream` matching `pattern`; resolves to
// {child, match}. Rejects when the process exits first or after `timeoutMs`.
function startAndWait(command, args, {stream, pattern, env, cwd, timeoutMs = 20000, log}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {env, cwd, stdio: ["ignore", "pipe", "pipe"]});
    const lines = createInterface({input: child[stream]});
    const other = stream === "stdout" ? child.stderr : child.stdout;
    other.on("data", (chunk) => log(`[${path.basename(command)}] ${String(chunk).trimEnd()}`));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${command} did not start within ${timeoutMs} ms`));
    }, timeoutMs);
    let done = false;
    lines.on("line", (line) => {
      log(`[${path.basename(command)}] ${line}`);
      const match = done ? null : pattern.exec(line);
      if (match) {
        done = true;
        clearTimeout(timer);
        resolve({child, match});
      }
    });
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      if (!done) reject(new Error(`${command} exited (${code ?? signal}) before it was ready`));
    });
  });
}

function stop(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), 40000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

async function setUp(args, dir, log) {
  const paths = prepare(dir, REPO);
  const home = path.join(dir, "home");
  const fake = await startAndWait(args.fakeServer, ["--port", "0", "--routes", paths.routesFile,
                                                    "--log", path.join(dir, "model-requests.jsonl")],
                                  {stream: "stdout", pattern: /^listening on (127\.0\.0\.1:\d+)$/, log});
  try {
    const baseUrl = `http://${fake.match[1]}`;
    const seeder = new Seeder({mend: args.mend, home, baseUrl, cwd: dir, log});
    const ids = seed(seeder, paths);
    log(`seeded: ${JSON.stringify(ids)}`);
    // Port 0: the server picks a free port and prints its address on stdout.
    const serve = await startAndWait(args.mend,
      ["--home", home, "serve", "--listen", "127.0.0.1:0", "--agents-dir", paths.agents],
      {stream: "stdout", pattern: /^listening on (http:\/\/127\.0\.0\.1:\d+)\//, cwd: dir, log,
       env: {...seeder.env(), MEND_SERVE_TOKEN: TOKEN}});
    return {fake: fake.child, serve: serve.child, url: serve.match[1], ids, paths, home, seeder};
  } catch (e) {
    // The caller never sees the fake server when set-up fails part way: stop it here.
    await stop(fake.child);
    throw e;
  }
}

// Browser console errors a test must not cause: a script error, or a page resource the content
// security policy refused. Failed requests (a 401 before the token, a 404 for a missing trace) are
// the API's answers, which the page handles, so they are not errors here.
function watchConsole(page, problems) {
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() !== "error") return;
    const text = message.text();
    if (/Failed to load resource/.test(text)) return;
    problems.push(`console error: ${text}`);
  });
}

// Whether the server has a route for "METHOD /path/ID/..." (ID stands for an id that exists
// nowhere): an unknown route answers 404 "no such endpoint", a known one anything else.
async function hasRoute(url, need) {
  const [method, pattern] = need.split(" ");
  const response = await fetch(url + pattern.replaceAll("ID", "no-such-id-for-probe"), {
    method,
    headers: {"Authorization": `Bearer ${TOKEN}`, "Content-Type": "application/json"},
    body: method === "GET" ? undefined : "{}",
  });
  if (response.status !== 404) return true;
  const body = await response.json().catch(() => ({}));
  return !String(body?.error?.message ?? "").startsWith("no such endpoint");
}

async function missingRoutes(url, needs) {
  const missing = [];
  for (const need of needs || []) {
    if (!(await hasRoute(url, need))) missing.push(need);
  }
  return missing;
}

// Every control a test left on the page has a name a screen reader can say: form fields a label
// (or aria-label), buttons and links some text (or aria-label).
async function unnamedControls(page) {
  return page.evaluate(() => {
    const named = (el) => {
      if ((el.getAttribute("aria-label") || "").trim()) return true;
      if (el.getAttribute("aria-labelledby")) return true;
      if (["INPUT", "SELECT", "TEXTAREA"].includes(el.tagName)) {
        return el.type === "hidden" || [...(el.labels || [])].some((l) => l.textContent.trim());
      }
      return el.textContent.trim().length > 0;
    };
    const visible = (el) => el.getClientRects().length > 0;
    return [...document.querySelectorAll("button, a[href], input, select, textarea")]
        .filter((el) => visible(el) && !named(el))
        .map((el) => el.outerHTML.slice(0, 120));
  });
}

async function runTests(args, env, playwright, log) {
  const browser = await playwright.chromium.launch({executablePath: args.chromium, headless: true});
  const results = [];
  try {
    const selected = TESTS.filter((t) => !args.only.length || args.only.includes(t.name));
    for (const [index, test] of selected.entries()) {
      // A route the UI calls that the server lacks fails the test with a clear message rather
      // than as a page that never fills.
      const missing = await missingRoutes(env.url, test.needs);
      if (missing.length) {
        const error = new Error(`the server has no ${missing.join(", ")}`);
        results.push({name: test.name, error});
        console.log(`not ok ${index + 1} - ${test.name}\n  # ${error.message}`);
        continue;
      }
      const problems = [];
      const context = await browser.newContext({viewport: {width: 1366, height: 768}});
      if (!test.asksForToken) {
        await context.addInitScript((token) => sessionStorage.setItem("mend.token", token), TOKEN);
      }
      context.setDefaultTimeout(15000);
      const page = await context.newPage();
      watchConsole(page, problems);
      page.on("dialog", (dialog) => dialog.accept());
      const shot = path.join(args.out, `${String(index + 1).padStart(2, "0")}-${test.name}.png`);
      const t = {page, ...env, token: TOKEN, log,
                 screenshot: async (options = {}) => page.screenshot({path: shot, ...options}),
                 // The page as docs/serve.md shows it, saved only with --docs-images.
                 docsImage: async (name, options = {}) => {
                   if (!args.docsImages) return;
                   mkdirSync(args.docsImages, {recursive: true});
                   // The test's temporary folder is shown as "~", so no picture names it.
                   await page.evaluate((prefix) => {
                     const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
                     for (let n = walker.nextNode(); n; n = walker.nextNode()) {
                       if (n.nodeValue.includes(prefix)) n.nodeValue = n.nodeValue.split(prefix).join("~");
                     }
                   }, args.workDir);
                   // From the top: a page scrolled by the test would draw sticky table headers
                   // in the middle of a full-page picture.
                   await page.evaluate(() => window.scrollTo(0, 0));
                   await page.screenshot({path: path.join(args.docsImages, `ui-${name}.png`), ...options});
                 }};
      let error = null;
      try {
        await page.goto(env.url + "/");
        await test.run(t);
        const unnamed = await unnamedControls(page);
        if (unnamed.length) problems.push(`controls without a name: ${unnamed.join(" | ")}`);
        if (problems.length) throw new Error(problems.join("; "));
      } catch (e) {
        error = e;
        await page.screenshot({path: shot}).catch(() => {});
      }
      await context.close();
      results.push({name: test.name, error});
      console.log(`${error ? "not ok" : "ok"} ${index + 1} - ${test.name}`);
      if (error) console.log(`  # ${String(error.stack || error).split("\n").join("\n  # ")}`);
    }
  } finally {
    await browser.close();
  }
  return results;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (Number(process.versions.node.split(".")[0]) < 20) {
    skip(`playwright-core needs node 20 or newer, this is ${process.version}`);
  }
  const playwright = await loadPlaywright();
  if (!executable(args.chromium)) skip(`no Chromium at ${args.chromium} (apt-get install chromium)`);
  // A build that made only some test binaries (scripts/test asan-core) has neither.
  for (const file of [args.mend, args.fakeServer]) {
    if (!executable(file)) skip(`${file} is not built`);
  }
  mkdirSync(args.out, {recursive: true});
  const dir = mkdtempSync(path.join(os.tmpdir(), "mend-browser-"));
  args.workDir = dir;
  const lines = [];
  const log = (line) => lines.push(line);
  let env = null;
  let failed = 0;
  try {
    env = await setUp(args, dir, log);
    const results = await runTests(args, env, playwright, log);
    failed = results.filter((r) => r.error).length;
    console.log(`${results.length - failed} passed, ${failed} failed`);
  } catch (e) {
    console.log(`set-up failed: ${e.stack || e}`);
    failed = -1;
  } finally {
    await stop(env && env.serve);
    await stop(env && env.fake);
  }
  if (failed !== 0 || args.keep) {
    console.log(`# log of the run:\n# ${lines.join("\n# ")}`);
    console.log(`# the test's folder is kept: ${dir}`);
  } else {
    rmSync(dir, {recursive: true, force: true});
  }
  process.exit(failed === 0 ? 0 : failed < 0 ? 2 : 1);
}

main();
