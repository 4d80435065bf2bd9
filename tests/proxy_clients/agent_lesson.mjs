// Runs one agent of the OpenAI Agents SDK (Chat Completions model) through two conversations and
// prints what it observed as one JSON object on stdout.
//
//   node agent_lesson.mjs
//
// The agent has one function tool, read_config({path}). Reading a path that is not among the
// known files returns an error-looking string as the tool's output (`Error: no such file <path>`),
// which the SDK passes back to the model like any other output; a known path returns its content.
// Conversation 1 runs MEND_TEST_TASK_1; then the script prints `ready-for-second` on stdout and
// waits for one line (or end of input) on stdin; then conversation 2 runs MEND_TEST_TASK_2.
// MEND_TEST_CONVERSATIONS=1 or =2 runs only that conversation (no wait), so a test can run the
// two in separate processes with the proxy restarted in between.
//
// Environment (see README.md): MEND_TEST_OPENAI_BASE_URL, MEND_TEST_API_KEY, MEND_TEST_HEADERS,
// MEND_TEST_HEADERS_2, MEND_TEST_MODEL, MEND_TEST_TASK_1, MEND_TEST_TASK_2,
// MEND_TEST_AGENT_INSTRUCTIONS, MEND_TEST_CONFIG_FILES, MEND_TEST_AGENT_STREAM,
// MEND_TEST_MAX_TURNS, MEND_TEST_TIMEOUT_MS, MEND_TEST_MAX_RETRIES.

import { createInterface } from 'node:readline';
import OpenAI from 'openai';
import { Agent, OpenAIChatCompletionsModel, run, setTracingDisabled, tool } from '@openai/agents';
import { z } from 'zod';
import { env, fail, finish, headersFrom, intFrom, runMain, sdkOptions, writeOut } from './common.mjs';

const DEFAULT_FILES = { '/srv/app/app.conf': 'port = 8080\nlog_level = info\n' };
const DEFAULT_INSTRUCTIONS =
  'You run the app in production. Use the read_config tool to read configuration files, ' +
  'then answer the question briefly.';

function configFiles() {
  const text = env('MEND_TEST_CONFIG_FILES', '');
  if (text === '') return DEFAULT_FILES;
  let files;
  try {
    files = JSON.parse(text);
  } catch (e) {
    fail(`MEND_TEST_CONFIG_FILES is not valid JSON: ${e.message}`);
  }
  if (files === null || typeof files !== 'object' || Array.isArray(files)) {
    fail('MEND_TEST_CONFIG_FILES must be a JSON object of paths to contents');
  }
  return files;
}

// One line from stdin, or null at end of input.
function readLine() {
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin, terminal: false });
    let done = false;
    const settle = (value) => {
      if (done) return;
      done = true;
      rl.close();
      process.stdin.pause();
      resolve(value);
    };
    rl.once('line', (line) => settle(line));
    rl.once('close', () => settle(null));
  });
}

function makeModel(headersVariable) {
  const client = new OpenAI({
    baseURL: env('MEND_TEST_OPENAI_BASE_URL'),
    apiKey: env('MEND_TEST_API_KEY'),
    defaultHeaders: headersFrom(headersVariable),
    ...sdkOptions(),
  });
  return new OpenAIChatCompletionsModel(client, env('MEND_TEST_MODEL', 'gpt-4o-mini'));
}

async function conversation(number, task, headersVariable, files) {
  const toolCalls = [];
  const readConfig = tool({
    name: 'read_config',
    description: 'Reads a configuration file and returns its content.',
    parameters: z.object({ path: z.string().describe('Absolute path of the file') }),
    execute: async ({ path }) => {
      const output = Object.hasOwn(files, path) ? String(files[path]) : `Error: no such file ${path}`;
      toolCalls.push({ name: 'read_config', arguments: { path }, output, failed: output.startsWith('Error:') });
      return output;
    },
  });
  const agent = new Agent({
    name: 'ops',
    instructions: env('MEND_TEST_AGENT_INSTRUCTIONS', DEFAULT_INSTRUCTIONS),
    model: makeModel(headersVariable),
    tools: [readConfig],
  });
  const streamed = env('MEND_TEST_AGENT_STREAM', '0') === '1';
  const maxTurns = intFrom('MEND_TEST_MAX_TURNS', 10);
  let result;
  if (streamed) {
    result = await run(agent, task, { stream: true, maxTurns });
    for await (const _event of result) {
      // Drain the events; the run completes when they end.
    }
    await result.completed;
    if (result.error) throw result.error;
  } else {
    result = await run(agent, task, { maxTurns });
  }
  return {
    conversation: number,
    task,
    streamed,
    final_output: result.finalOutput ?? null,
    model_responses: result.rawResponses.length,
    tool_calls: toolCalls,
    items: result.newItems.map((item) => item.type),
  };
}

runMain(async () => {
  // Traces would be exported to OpenAI's own endpoint; the runs must reach only the base URL.
  setTracingDisabled(true);
  const files = configFiles();
  const task1 = env('MEND_TEST_TASK_1', 'What port does the app listen on? Its config is /etc/app.conf.');
  const task2 = env('MEND_TEST_TASK_2', 'What log level does the app use? Its config is /etc/app.conf.');

  const which = env('MEND_TEST_CONVERSATIONS', 'both');
  if (!['1', '2', 'both'].includes(which)) fail('MEND_TEST_CONVERSATIONS must be 1, 2 or both');
  const secondHeaders = process.env.MEND_TEST_HEADERS_2 ? 'MEND_TEST_HEADERS_2' : 'MEND_TEST_HEADERS';
  const runs = [];
  let line = null;
  if (which !== '2') runs.push(await conversation(1, task1, 'MEND_TEST_HEADERS', files));
  if (which === 'both') {
    await writeOut('ready-for-second\n');
    line = await readLine();
  }
  if (which !== '1') runs.push(await conversation(2, task2, secondHeaders, files));

  await finish({
    scenario: 'agent_lesson',
    framework: '@openai/agents',
    continued_on: which !== 'both' ? 'not asked' : line === null ? 'end of input' : 'line',
    runs,
  });
});
