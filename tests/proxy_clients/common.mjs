// Helpers shared by the client scripts: configuration from the environment, the one JSON object
// printed on stdout at the end, and the one-line error on stderr.

import { writeSync } from 'node:fs';

// The value of environment variable `name`; `fallback` when it is unset or empty, and a fatal
// error when it is required (fallback undefined) and missing.
export function env(name, fallback) {
  const value = process.env[name];
  if (value !== undefined && value !== '') return value;
  if (fallback === undefined) fail(`environment variable ${name} is required`);
  return fallback;
}

// A JSON object of header names to string values from environment variable `name`, {} when unset.
export function headersFrom(name) {
  const text = process.env[name];
  if (text === undefined || text === '') return {};
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    fail(`${name} is not valid JSON: ${e.message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    fail(`${name} must be a JSON object of header names to values`);
  }
  const headers = {};
  for (const [key, value] of Object.entries(parsed)) headers[key] = String(value);
  return headers;
}

// A non-negative integer from environment variable `name`, `fallback` when unset.
export function intFrom(name, fallback) {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  if (!/^\d+$/.test(text)) fail(`${name} must be a non-negative integer, got ${JSON.stringify(text)}`);
  return Number(text);
}

// The client options every script shares: SDK request timeout and retries.
//   MEND_TEST_TIMEOUT_MS   per-request timeout of the SDK (default 60000)
//   MEND_TEST_MAX_RETRIES  SDK retries (default: the SDK's own default)
export function sdkOptions() {
  const options = { timeout: intFrom('MEND_TEST_TIMEOUT_MS', 60000) };
  const retries = intFrom('MEND_TEST_MAX_RETRIES', undefined);
  if (retries !== undefined) options.maxRetries = retries;
  return options;
}

// Writes `text` to stdout and resolves once it has been handed to the OS, so that a line is
// visible to a reader of a pipe before the script blocks or exits.
export function writeOut(text) {
  return new Promise((resolve, reject) => {
    process.stdout.write(text, (err) => (err ? reject(err) : resolve()));
  });
}

// Prints the observation as one JSON line and exits 0 once stdout is flushed.
export async function finish(observed) {
  await writeOut(JSON.stringify(observed) + '\n');
  process.exit(0);
}

// Prints a one-line error on stderr and exits 1.
export function fail(message) {
  writeSync(2, String(message).replace(/\s*\n\s*/g, ' ').trim() + '\n');
  process.exit(1);
}

// Runs `main`, turning any failure into the one-line error and exit status 1.
// A scenario whose promise never settles (nothing left for the event loop to wait on) is an error
// too, rather than a silent exit 0 with nothing printed.
export function runMain(main) {
  process.on('beforeExit', () => fail('the scenario never settled: node ran out of work'));
  main().catch((err) => {
    const name = err?.constructor?.name ?? 'Error';
    const status = err?.status !== undefined && err?.status !== null ? ` (status ${err.status})` : '';
    fail(`${name}${status}: ${err?.message ?? String(err)}`);
  });
}

// A plain-JSON copy of an error's details as an SDK exposes them.
export function describeError(err) {
  return {
    error_class: err?.constructor?.name ?? null,
    name: err?.name ?? null,
    status: err?.status ?? null,
    message: err?.message ?? null,
    code: err?.code ?? null,
    type: err?.type ?? null,
    param: err?.param ?? null,
    error: err?.error ?? null,
    request_id: err?.requestID ?? err?.request_id ?? null,
  };
}
