// pg-boss's fetch+complete rate at several backlogs, the workload of bench/lessonq_pg_bench.cc:
// for each backlog N a fresh schema gets N + JOBS jobs (insert() in batches of 1000, then VACUUM
// ANALYZE, untimed); then CONCURRENCY loops each fetch one job and complete it until JOBS jobs are
// done. The clock runs from the first fetch until the last completion has returned. Prints one
// JSON object on stdout; progress goes to stderr.
//
//   node queue_bench.mjs URL [BACKLOGS JOBS CONCURRENCY]
import { createRequire } from 'node:module';
import pg from 'pg';
import { PgBoss } from 'pg-boss';

const [url, backlogArg = '1000,10000,100000', jobsArg = '2000', concurrencyArg = '4'] =
  process.argv.slice(2);
if (!url) {
  console.error('usage: node queue_bench.mjs URL [BACKLOGS JOBS CONCURRENCY]');
  process.exit(2);
}
const backlogs = backlogArg.split(',').map(Number);
const jobs = Number(jobsArg);
const concurrency = Number(concurrencyArg);
const queue = 'lessons';
const version = createRequire(import.meta.url)('pg-boss/package.json').version;

async function sql(text) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

async function measure(backlog) {
  const schema = `pgboss_bench_${backlog}`;
  await sql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  // Its background maintenance and scheduling stay off, so they cost nothing during the timing.
  const boss = new PgBoss({
    connectionString: url, schema, max: concurrency + 2, supervise: false, schedule: false,
  });
  boss.on('error', (error) => console.error('pg-boss:', error));
  await boss.start();
  await boss.createQueue(queue);
  console.error(`pg-boss: backlog ${backlog}, filling`);
  const total = backlog + jobs;
  for (let first = 0; first < total; first += 1000) {
    const batch = [];
    for (let i = first; i < Math.min(total, first + 1000); i++) {
      batch.push({
        data: {
          task: `Edit the large Go file number ${i}`,
          attempt: 'rewrote the whole file at once',
          outcome: 'ERROR: file too large',
          trigger: 'error',
        },
      });
    }
    await boss.insert(queue, batch);
  }
  await sql('VACUUM ANALYZE');
  console.error(`pg-boss: backlog ${backlog}, ${jobs} fetch+complete`);
  let taken = 0;
  let done = 0;
  const start = process.hrtime.bigint();
  async function loop() {
    while (taken < jobs) {
      taken++;
      const [job] = await boss.fetch(queue);
      if (!job) break;
      await boss.complete(queue, job);
      done++;
    }
  }
  await Promise.all(Array.from({ length: concurrency }, loop));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  await boss.stop({ graceful: false, wait: true });
  await sql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  return { backlog, jobs: done, seconds, jobs_per_s: done / seconds };
}

const results = [];
for (const backlog of backlogs) results.push(await measure(backlog));
console.log(JSON.stringify({ version, concurrency, results }));
