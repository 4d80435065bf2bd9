// The peer of bench/run_store_pg_bench: the same checkpoint saves through LangGraph.js's
// PostgreSQL checkpointer, on the same server (synchronous_commit on). Prints one JSON object.
//
//   node checkpoint_bench.mjs URL [RUNS STEPS PAYLOAD_BYTES]
//
// The checkpointer runs as fromConnString makes it, on a pg pool of 10 connections; its tables go
// in the schema mend_bench_langgraph, dropped first.
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import fs from "node:fs";
import pg from "pg";

const [url, runsArg, stepsArg, payloadArg] = process.argv.slice(2);
const runs = Number(runsArg ?? 100);
const steps = Number(stepsArg ?? 100);
const payloadBytes = Number(payloadArg ?? 4096);
const schema = "mend_bench_langgraph";

async function sql(text) {
  const client = new pg.Client({ connectionString: url, application_name: "mend-bench" });
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
  }
}

// The postmaster's CPU time with that of its exited children (the backends once they are gone),
// in seconds; null when the server's data directory is not readable here.
function serverCpuSeconds(dataDir) {
  try {
    const pid = fs.readFileSync(`${dataDir}/postmaster.pid`, "utf8").split("\n")[0];
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // utime, stime, cutime, cstime; the kernel counts in ticks of 1/100 s on Linux.
    return fields.slice(11, 15).reduce((sum, f) => sum + Number(f), 0) / 100;
  } catch {
    return null;
  }
}

function clientCpuSeconds() {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
}

// WAL fsyncs and bytes, and CPU time, once the checkpointer's connections are closed and their statistics folded
// in, as the C++ side reads them (bench/store_pg_bench_refs.cc).
async function settledCounters() {
  const client = new pg.Client({ connectionString: url, application_name: "mend-bench" });
  await client.connect();
  const read = async () => {
    const r = await client.query(
      "SELECT (SELECT wal_sync FROM pg_stat_wal) AS syncs, " +
        "pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint AS bytes, " +
        "current_setting('data_directory', true) AS dir");
    return {
      syncs: Number(r.rows[0].syncs),
      bytes: Number(r.rows[0].bytes),
      client_cpu: clientCpuSeconds(),
      server_cpu: serverCpuSeconds(r.rows[0].dir),
    };
  };
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const deadline = Date.now() + 10000;
  while (Date.now() < deadline) {
    const r = await client.query(
      "SELECT count(*) AS n FROM pg_stat_activity WHERE pid <> pg_backend_pid() " +
        "AND application_name = 'mend-bench-langgraph'");
    if (Number(r.rows[0].n) === 0) break;
    await sleep(20);
  }
  let last = await read();
  while (Date.now() < deadline) {
    await sleep(100);
    const now = await read();
    if (now.syncs === last.syncs) break;
    last = now;
  }
  await client.end();
  return last;
}

function open() {
  // fromConnString's own pool (10 connections), named so that settledCounters can wait for it.
  return new PostgresSaver(
    new pg.Pool({ connectionString: url, application_name: "mend-bench-langgraph" }),
    undefined,
    { schema },
  );
}

function checkpoint(step, channelValues) {
  return {
    v: 4,
    id: `${String(step).padStart(8, "0")}`,
    ts: new Date().toISOString(),
    channel_values: channelValues,
    channel_versions: { message: step },
    versions_seen: {},
  };
}

function payload(run, step) {
  const head = `run ${run} step ${step} `;
  return head + "x".repeat(Math.max(0, payloadBytes - head.length));
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

// RUNS runs save STEPS checkpoints each, all runs at once (each its own chain of awaited puts);
// every save carries one payload-sized message as a new version of its channel.
async function throughput(runCount, stepCount) {
  const setup = open();
  await setup.setup();
  await setup.end();
  const before = await settledCounters();
  const saver = open();
  const latencies = [];
  const oneRun = async (run) => {
    let parent;
    for (let step = 1; step <= stepCount; step++) {
      const config = { configurable: { thread_id: `run-${run}`, checkpoint_ns: "", checkpoint_id: parent } };
      const t0 = process.hrtime.bigint();
      const next = await saver.put(config, checkpoint(step, { message: payload(run, step) }),
        { source: "loop", step, parents: {} }, { message: step });
      latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      parent = next.configurable.checkpoint_id;
    }
  };
  const start = process.hrtime.bigint();
  await Promise.all(Array.from({ length: runCount }, (_, run) => oneRun(run)));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  await saver.end();
  const after = await settledCounters();
  latencies.sort((a, b) => a - b);
  const saves = runCount * stepCount;
  return {
    saves_per_s: saves / seconds,
    p50_ms: percentile(latencies, 50),
    p99_ms: percentile(latencies, 99),
    saves_per_sync: saves / Math.max(1, after.syncs - before.syncs),
    wal_bytes_per_save: (after.bytes - before.bytes) / saves,
    client_cpu_ms_per_save: ((after.client_cpu - before.client_cpu) * 1e3) / saves,
    server_cpu_ms_per_save:
      after.server_cpu === null || before.server_cpu === null
        ? null
        : ((after.server_cpu - before.server_cpu) * 1e3) / saves,
  };
}

await sql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
const many = await throughput(runs, steps);
await sql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
const single = await throughput(1, steps * 10);
await sql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
console.log(JSON.stringify({ throughput: many, single_run: single }));
