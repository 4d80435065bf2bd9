// The reference for bench/run_store_bench: the same checkpoint workloads through LangGraph.js's
// SQLite checkpointer, at the same durability (WAL, synchronous=FULL). Prints one JSON object.
//
//   node checkpoint_bench.mjs DIR [RUNS STEPS PAYLOAD_BYTES LONG_RUN_STEPS LONG_PAYLOAD_BYTES]
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import fs from "node:fs";
import path from "node:path";

const [dir, runsArg, stepsArg, payloadArg, longArg, longPayloadArg] = process.argv.slice(2);
const runs = Number(runsArg ?? 100);
const steps = Number(stepsArg ?? 100);
const payloadBytes = Number(payloadArg ?? 4096);
const longRunSteps = Number(longArg ?? 500);
const longPayloadBytes = Number(longPayloadArg ?? 1024);

function open(file) {
  const saver = SqliteSaver.fromConnString(file);
  saver.setup();
  saver.db.pragma("synchronous = FULL");
  return saver;
}

function checkpoint(step, channelValues) {
  return {
    v: 4,
    id: `${String(step).padStart(8, "0")}`,
    ts: new Date().toISOString(),
    channel_values: channelValues,
    channel_versions: { messages: step },
    versions_seen: {},
  };
}

function payload(run, step, bytes = payloadBytes) {
  const head = `run ${run} step ${step} `;
  return head + "x".repeat(Math.max(0, bytes - head.length));
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

// Throughput: RUNS runs advance STEPS steps each, interleaved; every save carries one payload.
async function throughput() {
  const saver = open(path.join(dir, "throughput.db"));
  const latencies = [];
  const parents = new Array(runs).fill(undefined);
  const start = process.hrtime.bigint();
  for (let step = 1; step <= steps; step++) {
    for (let run = 0; run < runs; run++) {
      const config = { configurable: { thread_id: `run-${run}`, checkpoint_ns: "", checkpoint_id: parents[run] } };
      const t0 = process.hrtime.bigint();
      const next = await saver.put(config, checkpoint(step, { message: payload(run, step) }), { step });
      latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      parents[run] = next.configurable.checkpoint_id;
    }
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  latencies.sort((a, b) => a - b);
  saver.db.close();
  return { saves_per_s: (runs * steps) / seconds, p50_ms: percentile(latencies, 50), p99_ms: percentile(latencies, 99) };
}

// Disk: one run of LONG_RUN_STEPS steps whose state is its conversation (each step adds one
// payload-sized message), as a LangGraph agent with a messages channel stores it.
async function disk() {
  const file = path.join(dir, "long.db");
  const saver = open(file);
  const messages = [];
  let parent;
  for (let step = 1; step <= longRunSteps; step++) {
    messages.push(payload(0, step, longPayloadBytes));
    const config = { configurable: { thread_id: "long", checkpoint_ns: "", checkpoint_id: parent } };
    const next = await saver.put(config, checkpoint(step, { messages }), { step });
    parent = next.configurable.checkpoint_id;
  }
  saver.db.pragma("wal_checkpoint(TRUNCATE)");
  saver.db.close();
  let bytes = 0;
  for (const suffix of ["", "-wal", "-shm"]) {
    if (fs.existsSync(file + suffix)) bytes += fs.statSync(file + suffix).size;
  }
  return { disk_bytes: bytes, payload_bytes: longRunSteps * longPayloadBytes };
}

const result = { throughput: await throughput(), disk: await disk() };
console.log(JSON.stringify(result));
