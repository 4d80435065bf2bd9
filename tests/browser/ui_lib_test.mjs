// Unit tests of the web UI's modules that need no DOM (node --test): time parsing and formatting,
// the trace waterfall's model, the Prometheus text parser, links built from data, and the tool
// calls an approval is for, and the audit line, gains, costs and canary figures of an improve
// attempt.
import assert from "node:assert/strict";
import {test} from "node:test";

import {safeHref} from "../../src/server/ui/lib/dom.js";
import {formatDuration, formatUptime, formatUsd, interruptionText, preview, runStatus, toMillis}
  from "../../src/server/ui/lib/format.js";
import {headline, parseMetrics} from "../../src/server/ui/lib/prometheus.js";
import {auditText, costGateText, gainText, isCanaryEvent, isImproveEvent, passText, rateText, usdText}
  from "../../src/server/ui/pages/improve.js";
import {awaitedCalls} from "../../src/server/ui/lib/run_actions.js";
import {attributesOf, classify, layout, modelContent, summarize, timeAxis}
  from "../../src/server/ui/lib/spans.js";
import {fromLocalInput, toLocalInput} from "../../src/server/ui/pages/traces.js";

test("toMillis keeps sub-millisecond precision of RFC 3339 times", () => {
  const base = Date.parse("2026-01-02T03:04:05Z");
  assert.equal(toMillis("2026-01-02T03:04:05Z"), base);
  assert.equal(toMillis("2026-01-02T03:04:05.123456789Z"), base + 123.456789);
  assert.equal(toMillis("2026-01-02T05:04:05.5+02:00"), base + 500);
});

test("toMillis reads Unix nanoseconds and milliseconds", () => {
  assert.equal(toMillis(1700000000123456789), 1700000000123.4568);
  assert.equal(toMillis("1700000000000000000"), 1700000000000);
  assert.equal(toMillis(1700000000000), 1700000000000);
  assert.ok(Number.isNaN(toMillis(null)));
  assert.ok(Number.isNaN(toMillis("yesterday")));
});

test("durations, money and previews read well", () => {
  assert.equal(formatDuration(0.25), "250 µs");
  assert.equal(formatDuration(1.234), "1.2 ms");
  assert.equal(formatDuration(250), "250 ms");
  assert.equal(formatDuration(4200), "4.20 s");
  assert.equal(formatDuration(185000), "3 min 05 s");
  assert.equal(formatDuration(-1), "");
  assert.equal(formatUsd(0.00123), "$0.00123");
  assert.equal(formatUsd(1.5), "$1.50");
  assert.equal(formatUsd(null), "");
  assert.equal(preview("a\n  b\tc", 10), "a b c");
  assert.equal(preview("x".repeat(20), 10), "xxxxxxxxx…");
});

test("the server's uptime reads in the largest units that matter", () => {
  assert.equal(formatUptime(0), "0 s");
  assert.equal(formatUptime(59.9), "59 s");
  assert.equal(formatUptime(60), "1 min");
  assert.equal(formatUptime(3599), "59 min");
  assert.equal(formatUptime(3 * 3600 + 5 * 60 + 9), "3 h 05 min");
  assert.equal(formatUptime(2 * 86400 + 4 * 3600 + 59), "2 d 4 h");
  assert.equal(formatUptime(-1), "");
  assert.equal(formatUptime(undefined), "");
});

test("a running run no process drives shows as interrupted, with the reason", () => {
  const killed = {status: "running", interrupted: true,
                  interruption: {reason: "process_gone", holder: "mend-42@host-a", lease_expires_at: null}};
  assert.equal(runStatus(killed), "interrupted");
  assert.equal(interruptionText(killed), "its process (mend-42@host-a) is gone");
  const expired = {status: "running", interrupted: true,
                   interruption: {reason: "lease_expired", holder: "replica-b",
                                  lease_expires_at: "2026-01-02T03:04:05Z"}};
  assert.match(interruptionText(expired), /^its lease expired at /);
  assert.equal(interruptionText({status: "running", interrupted: true, interruption: {reason: "not_held"}}),
               "no process holds it");
  // Driven, finished or from a server without the field: the stored status as it is.
  assert.equal(runStatus({status: "running", interrupted: false}), "running");
  assert.equal(runStatus({status: "running"}), "running");
  assert.equal(runStatus({status: "failed", interrupted: false}), "failed");
  assert.equal(interruptionText({status: "running", interrupted: false}), "");
});

test("links built from data stay inside the UI", () => {
  assert.equal(safeHref("#/runs/r-1"), "#/runs/r-1");
  assert.equal(safeHref("/metrics"), "/metrics");
  assert.equal(safeHref("javascript:alert(1)"), "#");
  assert.equal(safeHref("//evil.example/x"), "#");
  assert.equal(safeHref("https://evil.example/"), "#");
});

const T0 = "2026-01-02T03:04:05.000000000Z";
function at(ms) {
  return new Date(Date.parse(T0) + ms).toISOString();
}

const SPANS = [
  {span_id: "t1", parent_span_id: "a1", name: "execute_tool read_file", start: at(30), end: at(40),
   status: "error", status_message: "withheld",
   attributes: {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "read_file",
                "mend.step": 1, "mend.tool.replaced_by_hook": true, "error.type": "tool_error"},
   events: [{name: "heal.action", time: at(35),
             attributes: {"heal.action": "replace", "heal.reason": "output matches"}}]},
  {span_id: "a1", parent_span_id: null, name: "invoke_agent reader", start: at(0), end: at(100),
   status: "ok", attributes: {"gen_ai.operation.name": "invoke_agent", "mend.attempt": "send",
                              "mend.run.status": "completed"}},
  {span_id: "c1", parent_span_id: "a1", name: "chat fake-model", start: at(10), end: at(20),
   status: "ok", attributes: {"gen_ai.operation.name": "chat", "gen_ai.request.model": "fake-model",
                              "mend.step": 1}},
  {span_id: "t2", parent_span_id: "a1", name: "execute_tool deploy", start: at(50), end: at(51),
   status: "ERROR", attributes: [{k: "gen_ai.operation.name", s: "execute_tool"},
                                 {k: "gen_ai.tool.name", s: "deploy"},
                                 {k: "mend.tool.hook_decision", s: "denied"}]},
  {span_id: "r1", parent_span_id: "gone", name: "mend.recovery.attempt", start: at(60),
   status: "unset", attributes: {"mend.recovery.attempt": 2, "mend.recovery.outcome": "failed",
                                 "mend.span.in_progress": true}},
];

test("layout orders spans as a tree, children by start time", () => {
  const model = layout(SPANS);
  assert.deepEqual(model.rows.map((r) => [r.span.span_id, r.depth]),
                   [["a1", 0], ["c1", 1], ["t1", 1], ["t2", 1], ["r1", 0]]);
  assert.equal(model.end - model.start, 100);
  const open = model.rows.find((r) => r.span.span_id === "r1");
  assert.equal(open.open, true, "a span without an end is open");
  assert.equal(open.end, model.end);
});

test("classify names what a span is and flags what the page highlights", () => {
  const replaced = classify(SPANS[0]);
  assert.equal(replaced.type, "tool");
  assert.equal(replaced.label, "tool read_file (step 1)");
  assert.equal(replaced.replaced, true);
  assert.equal(replaced.error, true);
  assert.equal(replaced.denied, false);
  assert.deepEqual(replaced.heal.map((e) => [e.action, e.reason]), [["replace", "output matches"]]);
  const denied = classify(SPANS[3]);
  assert.equal(denied.denied, true);
  assert.equal(denied.label, "tool deploy");
  assert.equal(classify(SPANS[1]).label, "invoke_agent reader: send → completed");
  assert.equal(classify(SPANS[2]).type, "chat");
  assert.equal(classify(SPANS[4]).label, "recovery attempt #2 → failed");
  assert.deepEqual(summarize(layout(SPANS).rows),
                   {spans: 5, attempts: 1, modelTurns: 1, toolCalls: 2, denied: 1, replaced: 1,
                    errors: 2, heal: 1, recoveries: 1});
});

test("typed attributes from observe.db become a plain object", () => {
  assert.deepEqual(attributesOf([{k: "a", s: "x"}, {k: "b", i: 3}, {k: "c", b: false},
                                 {k: "d", a: ["p"]}, {nok: 1}]),
                   {a: "x", b: 3, c: false, d: ["p"]});
  assert.deepEqual(attributesOf(null), {});
});

test("parseMetrics reads families, labels with escapes and histograms", () => {
  const text = [
    "# HELP mend_lessonq_queue_depth Jobs waiting.",
    "# TYPE mend_lessonq_queue_depth gauge",
    "mend_lessonq_queue_depth 3",
    "# TYPE mend_runs_total counter",
    'mend_runs_total{status="completed",agent="a \\"q\\" b"} 5',
    'mend_runs_total{status="failed"} 2 1700000000',
    "# TYPE mend_step_seconds histogram",
    'mend_step_seconds_bucket{le="+Inf"} 4',
    "mend_step_seconds_sum 2",
    "mend_step_seconds_count 4",
    "not a metric line",
    "",
  ].join("\n");
  const families = parseMetrics(text);
  assert.deepEqual(families.map((f) => [f.name, f.type, f.samples.length]),
                   [["mend_lessonq_queue_depth", "gauge", 1], ["mend_runs_total", "counter", 2],
                    ["mend_step_seconds", "histogram", 3]]);
  assert.equal(families[0].help, "Jobs waiting.");
  assert.deepEqual(families[1].samples[0].labels, {status: "completed", agent: 'a "q" b'});
  assert.deepEqual(headline(families[1]), {value: 7});
  assert.deepEqual(headline(families[2]), {count: 4, sum: 2, mean: 0.5});
});

test("awaitedCalls are the newest assistant turn's calls without a result", () => {
  const transcript = [
    {role: "user", content: "go"},
    {role: "assistant", tool_calls: [{id: "c1", name: "read_file"}]},
    {role: "tool", tool_call_id: "c1", content: "ok"},
    {role: "assistant", tool_calls: [{id: "c2", name: "deploy"}, {id: "c3", name: "notify"}]},
    {role: "tool", tool_call_id: "c2", content: "done"},
  ];
  assert.deepEqual(awaitedCalls(transcript).map((c) => c.id), ["c3"]);
  assert.deepEqual(awaitedCalls([{role: "user", content: "x"}]), []);
});

test("timeAxis shortens idle stretches and keeps busy time to scale", () => {
  const rows = [{start: 0, end: 10}, {start: 2, end: 4}, {start: 1000, end: 1010}];
  const axis = timeAxis(rows);
  assert.equal(axis.gaps.length, 1);
  assert.equal(axis.gaps[0].duration, 990);
  // Busy: 20 ms; the gap is drawn as 5% of that (1 ms), so the axis is 21 units long.
  assert.equal(axis.at(0), 0);
  assert.equal(axis.at(10), 10 / 21);
  assert.equal(axis.at(1000), 11 / 21);
  assert.equal(axis.at(1010), 1);
  assert.ok(axis.at(500) > axis.at(10) && axis.at(500) < axis.at(1000));
  // A short pause between busy stretches is drawn to scale.
  const close = timeAxis([{start: 0, end: 10}, {start: 12, end: 20}]);
  assert.equal(close.gaps.length, 0);
  assert.equal(close.at(12), 12 / 20);
  assert.equal(timeAxis([]).at(5), 0);
});

test("auditText says whether the recorded decision was recomputed and what differs", () => {
  assert.equal(auditText({recomputed_matches: true}), "recomputed from the recorded scores: matches");
  // null: the attempt has no decision to recompute (unfinished, failed or nothing evaluated).
  assert.equal(auditText({recomputed_matches: null}), "not recomputed");
  assert.equal(auditText({}), "not recomputed");
  assert.equal(auditText({recomputed_matches: false}), "recomputed: DOES NOT match");
  assert.equal(auditText({recomputed_matches: false,
                          recomputed_mismatch: "cases[1].verdict: recorded better, recomputed same (case a)"}),
               "recomputed: DOES NOT match: cases[1].verdict: recorded better, recomputed same (case a)");
});

test("a model turn's prompt and completion, or that content capture was off", () => {
  const chat = (attributes) => modelContent(classify({name: "chat fake-model", attributes}));
  assert.deepEqual(chat({"gen_ai.operation.name": "chat"}),
                   {captured: false, prompt: null, completion: null});
  assert.deepEqual(chat({"gen_ai.input.messages": "hi", "gen_ai.output.messages": "hello"}),
                   {captured: true, prompt: "hi", completion: "hello"});
  assert.deepEqual(chat([{k: "gen_ai.output.messages", s: "hello"}]),
                   {captured: true, prompt: null, completion: "hello"});
  assert.equal(modelContent(classify({name: "execute_tool read", attributes: {}})), null);
});

test("the traces filters' times go to the local time inputs and back", () => {
  const local = toLocalInput("2025-01-31T09:00:05Z");
  assert.match(local, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
  assert.equal(fromLocalInput(local), "2025-01-31T09:00:05Z");
  assert.equal(toLocalInput(""), "");
  assert.equal(toLocalInput("yesterday"), "");
  assert.equal(fromLocalInput(""), "");
});

test("charts: buckets fill additive metrics with zero and leave rates empty", async () => {
  const {bucketValues} = await import("../../src/server/ui/lib/charts.js");
  const from = Date.parse("2026-01-01T00:00:00Z");
  const points = [{start: "2026-01-01T01:00:00Z", count: 2, failed: 1, failure_rate: 0.5,
                   cost_usd: 0.25, input_tokens: 10, output_tokens: 5, mean_ms: 40}];
  assert.deepEqual(bucketValues(points, "count", from, 3600000, 3), [0, 2, 0]);
  assert.deepEqual(bucketValues(points, "tokens", from, 3600000, 3), [0, 15, 0]);
  assert.deepEqual(bucketValues(points, "failure_rate", from, 3600000, 3), [null, 0.5, null]);
  assert.deepEqual(bucketValues(points, "mean_ms", from, 3600000, 3), [null, 40, null]);
});

test("charts: niceCeil rounds up to 1, 2 or 5 times a power of ten", async () => {
  const {niceCeil} = await import("../../src/server/ui/lib/charts.js");
  assert.equal(niceCeil(0), 1);
  assert.equal(niceCeil(3), 5);
  assert.equal(niceCeil(5), 5);
  assert.equal(niceCeil(0.013), 0.02);
  assert.equal(niceCeil(1200), 2000);
  assert.equal(niceCeil(7), 10);
});

test("charts: the model places buckets at their middle, cuts gaps and labels the axes", async () => {
  const {chartModel} = await import("../../src/server/ui/lib/charts.js");
  const series = [{key: "writer", points: [
    {start: "2026-01-01T00:00:00Z", count: 4, failure_rate: 0.25, mean_ms: 10},
    {start: "2026-01-01T02:00:00Z", count: 1, failure_rate: 1, mean_ms: 30}]}];
  const opts = {from: "2026-01-01T00:00:00Z", to: "2026-01-01T04:00:00Z", bucketSeconds: 3600,
                width: 400, height: 200, pad: {left: 0, right: 0, top: 0, bottom: 0}};
  const counts = chartModel(series, "count", opts);
  assert.equal(counts.empty, false);
  assert.equal(counts.yMax, 5);
  // Four buckets of 100 px: middles at 50, 150, 250, 350; zeros in the empty buckets.
  assert.equal(counts.lines[0].path, "M50 40L150 200L250 160L350 200");
  assert.deepEqual(counts.lines[0].dots.map((d) => d.value), [4, 1]);
  assert.deepEqual(counts.xTicks.map((t) => t.label), ["00:00", "01:00", "02:00", "03:00", "04:00"]);
  assert.deepEqual(counts.yTicks.map((t) => t.value), [0, 1.25, 2.5, 3.75, 5]);
  const rates = chartModel(series, "failure_rate", opts);
  assert.equal(rates.yMax, 1);
  assert.equal(rates.lines[0].path, "M50 150M250 0");
  assert.equal(rates.lines[0].dots.length, 2);
  assert.equal(rates.lines[0].dots[1].start, "2026-01-01T02:00:00.000Z");
});

test("charts: no points is an empty chart, never a flat line of data", async () => {
  const {chartModel} = await import("../../src/server/ui/lib/charts.js");
  const model = chartModel([], "count", {from: "2026-01-01T00:00:00Z",
                                        to: "2026-01-02T00:00:00Z", bucketSeconds: 86400});
  assert.equal(model.empty, true);
  assert.deepEqual(model.lines, []);
  assert.deepEqual(model.xTicks.map((t) => t.label), ["2026-01-01", "2026-01-02"]);
});

test("an improve attempt's gains per case read as runs, rates and signed gains", () => {
  assert.equal(passText(2, 3), "2/3 (67%)");
  assert.equal(passText(0, 2), "0/2 (0%)");
  assert.equal(passText(1, 0), "");
  assert.equal(gainText(3), "+3");
  assert.equal(gainText(0), "0");
  assert.equal(gainText(-2), "\u22122");
  assert.equal(gainText(null), "");  // an audit folder from before gains were recorded
});

test("an improve attempt's costs say what the cost gate made of them", () => {
  assert.equal(usdText(0.03), "$0.0300");
  assert.equal(usdText(0.0000450), "$0.0000450");
  assert.equal(usdText(null), "n/a");
  assert.equal(usdText(0), "$0");
  const cost = {before_per_success_usd: 0.03, after_per_success_usd: 0.01, limit_usd: 0.045,
                max_cost_increase: 0.5};
  assert.equal(costGateText(cost, null), "within the limit (baseline + 50%)");
  assert.equal(costGateText({...cost, after_per_success_usd: 0.09}, "cost"),
               "refused: above the limit (baseline + 50%)");
  assert.match(costGateText({...cost, limit_usd: null}, null), /^no limit: the baseline never passed/);
  assert.match(costGateText({...cost, after_per_success_usd: null}, null), /^no passing run/);
  assert.match(costGateText(null, null), /^not recorded/);
});

test("canary events are told apart by type and proposal", () => {
  const run = {type: "canary.run", proposal: "imp-20261202T101500-3fa2c1d0", arm: "baseline"};
  assert.ok(isCanaryEvent(run));
  assert.ok(isCanaryEvent(run, "imp-20261202T101500-3fa2c1d0"));
  assert.ok(!isCanaryEvent(run, "imp-20261202T101500-00000000"));
  assert.ok(!isCanaryEvent({type: "run.completed", run: "r-1"}));
  assert.ok(isImproveEvent({type: "improve.progress", line: "improve: baseline 1/4 runs"}));
  assert.ok(isImproveEvent({type: "canary.decided"}));
  assert.ok(!isImproveEvent({type: "heal.action"}));
  assert.equal(rateText(0.125, [0.041, 0.29]), "12.5% (4.1%\u201329.0%)");
  assert.equal(rateText(0, null), "0.0%");
});
