// Runs one scenario of the official Anthropic Node SDK against an Anthropic-compatible endpoint
// and prints what it observed as one JSON object on stdout.
//
//   node anthropic_messages.mjs plain|stream|system_blocks|error
//
// Environment (see README.md): MEND_TEST_ANTHROPIC_BASE_URL, MEND_TEST_API_KEY, MEND_TEST_HEADERS,
// MEND_TEST_ANTHROPIC_MODEL, MEND_TEST_ANTHROPIC_AUTH, MEND_TEST_PROMPT, MEND_TEST_SYSTEM, MEND_TEST_MAX_TOKENS,
// MEND_TEST_ERROR_STREAM, MEND_TEST_TIMEOUT_MS, MEND_TEST_MAX_RETRIES.

import Anthropic from '@anthropic-ai/sdk';
import { describeError, env, fail, finish, headersFrom, intFrom, runMain, sdkOptions } from './common.mjs';

const SCENARIOS = ['plain', 'stream', 'system_blocks', 'error'];

// MEND_TEST_ANTHROPIC_AUTH picks how the key is sent: `bearer` (default: the SDK's `apiKey`
// option, which this SDK version sends as `Authorization: Bearer <key>`) or `x-api-key` (the
// header Anthropic's own API documents, instead of the Authorization header).
function makeClient(extra = {}) {
  const key = env('MEND_TEST_API_KEY');
  const auth = env('MEND_TEST_ANTHROPIC_AUTH', 'bearer');
  const headers = headersFrom('MEND_TEST_HEADERS');
  let credentials;
  if (auth === 'bearer') {
    credentials = { apiKey: key };
  } else if (auth === 'x-api-key') {
    // The key stays the SDK's credential (so no other source is looked up); the null drops the
    // Authorization header the SDK would derive from it.
    credentials = { apiKey: key };
    headers['x-api-key'] = key;
    headers.authorization = null;
  } else {
    fail(`MEND_TEST_ANTHROPIC_AUTH must be bearer or x-api-key, got ${JSON.stringify(auth)}`);
  }
  return new Anthropic({
    baseURL: env('MEND_TEST_ANTHROPIC_BASE_URL'),
    ...credentials,
    defaultHeaders: headers,
    ...sdkOptions(),
    ...extra,
  });
}

function request(extra = {}) {
  const body = {
    model: env('MEND_TEST_ANTHROPIC_MODEL', 'claude-sonnet-4-5'),
    max_tokens: intFrom('MEND_TEST_MAX_TOKENS', 256),
    messages: [{ role: 'user', content: env('MEND_TEST_PROMPT', 'Say hello in one short sentence.') }],
  };
  const system = env('MEND_TEST_SYSTEM', '');
  if (system !== '') body.system = system;
  return { ...body, ...extra };
}

// The concatenated text blocks of a message.
function textOf(message) {
  return (message?.content ?? [])
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('');
}

function summary(message) {
  return {
    id: message.id ?? null,
    model: message.model ?? null,
    content: message.content ?? [],
    text: textOf(message),
    stop_reason: message.stop_reason ?? null,
    usage: message.usage ?? null,
  };
}

async function plain() {
  return summary(await makeClient().messages.create(request()));
}

async function stream() {
  const messageStream = makeClient().messages.stream(request());
  const eventTypes = [];
  let deltas = '';
  for await (const event of messageStream) {
    eventTypes.push(event.type);
    if (event.type === 'content_block_delta' && event.delta?.type === 'text_delta') deltas += event.delta.text;
  }
  const final = await messageStream.finalMessage();
  return { event_types: eventTypes, delta_text: deltas, ...summary(final) };
}

async function systemBlocks() {
  const system = [
    { type: 'text', text: env('MEND_TEST_SYSTEM', 'You answer tersely.') },
    {
      type: 'text',
      text: env('MEND_TEST_SYSTEM_2', 'Answer in one sentence.'),
      cache_control: { type: 'ephemeral' },
    },
  ];
  const message = await makeClient().messages.create(request({ system }));
  return { system_sent: system, ...summary(message) };
}

async function error() {
  const streamed = env('MEND_TEST_ERROR_STREAM', '0') === '1';
  const client = makeClient({ maxRetries: 0 });
  try {
    const response = await client.messages.create(request({ stream: streamed }));
    if (streamed) {
      let count = 0;
      for await (const _event of response) count++;
      fail(`expected an error status, but the stream succeeded with ${count} events`);
    }
    fail(`expected an error status, but the request succeeded: ${JSON.stringify(textOf(response))}`);
  } catch (err) {
    if (!(err instanceof Anthropic.APIError)) throw err;
    const body = err.error?.error;
    return {
      streamed,
      ...describeError(err),
      is_api_error: true,
      api_message: err.apiMessage ?? body?.message ?? null,
      error_type: err.type ?? body?.type ?? null,
      retry_after: err.headers?.get?.('retry-after') ?? null,
    };
  }
}

const HANDLERS = { plain, stream, system_blocks: systemBlocks, error };

runMain(async () => {
  const scenario = process.argv[2];
  if (!SCENARIOS.includes(scenario)) fail(`usage: anthropic_messages.mjs ${SCENARIOS.join('|')}`);
  const observed = await HANDLERS[scenario]();
  await finish({ scenario, ...observed });
});
