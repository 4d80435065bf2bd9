// Runs one scenario of the official OpenAI Node SDK against an OpenAI-compatible endpoint and
// prints what it observed as one JSON object on stdout.
//
//   node openai_chat.mjs plain|stream|tools|error|abort|responses|models|embeddings
//
// Environment (see README.md): MEND_TEST_OPENAI_BASE_URL, MEND_TEST_API_KEY, MEND_TEST_HEADERS,
// MEND_TEST_MODEL, MEND_TEST_PROMPT, MEND_TEST_SYSTEM, MEND_TEST_EMBEDDING_MODEL,
// MEND_TEST_EMBEDDING_INPUT, MEND_TEST_ERROR_STREAM, MEND_TEST_TIMEOUT_MS, MEND_TEST_MAX_RETRIES.

import OpenAI from 'openai';
import { describeError, env, fail, finish, headersFrom, runMain, sdkOptions } from './common.mjs';

const SCENARIOS = ['plain', 'stream', 'tools', 'error', 'abort', 'responses', 'models', 'embeddings'];

function makeClient(extra = {}) {
  return new OpenAI({
    baseURL: env('MEND_TEST_OPENAI_BASE_URL'),
    apiKey: env('MEND_TEST_API_KEY'),
    defaultHeaders: headersFrom('MEND_TEST_HEADERS'),
    ...sdkOptions(),
    ...extra,
  });
}

function model() {
  return env('MEND_TEST_MODEL', 'gpt-4o-mini');
}

function messages() {
  const list = [];
  const system = env('MEND_TEST_SYSTEM', '');
  if (system !== '') list.push({ role: 'system', content: system });
  list.push({ role: 'user', content: env('MEND_TEST_PROMPT', 'Say hello in one short sentence.') });
  return list;
}

const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Current weather of a city.',
      parameters: {
        type: 'object',
        properties: { city: { type: 'string', description: 'City name' } },
        required: ['city'],
      },
    },
  },
  {
    type: 'function',
    function: {
      name: 'read_config',
      description: 'Reads a configuration file.',
      parameters: {
        type: 'object',
        properties: { path: { type: 'string', description: 'Absolute path' } },
        required: ['path'],
      },
    },
  },
];

function parseOrNull(text) {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

async function plain() {
  const completion = await makeClient().chat.completions.create({ model: model(), messages: messages() });
  const choice = completion.choices?.[0];
  return {
    id: completion.id ?? null,
    model: completion.model ?? null,
    content: choice?.message?.content ?? null,
    finish_reason: choice?.finish_reason ?? null,
    tool_calls: choice?.message?.tool_calls ?? [],
    usage: completion.usage ?? null,
  };
}

async function stream() {
  const response = await makeClient().chat.completions.create({
    model: model(),
    messages: messages(),
    stream: true,
    stream_options: { include_usage: true },
  });
  const chunks = [];
  let text = '';
  let finishReason = null;
  for await (const chunk of response) {
    const choices = chunk.choices ?? [];
    chunks.push({ id: chunk.id ?? null, choices, usage: chunk.usage ?? null });
    for (const choice of choices) {
      if (typeof choice.delta?.content === 'string') text += choice.delta.content;
      if (choice.finish_reason) finishReason = choice.finish_reason;
    }
  }
  const last = chunks.at(-1);
  const usage = [...chunks].reverse().find((c) => c.usage)?.usage ?? null;
  return {
    chunk_count: chunks.length,
    chunks,
    text,
    finish_reason: finishReason,
    usage,
    last_chunk_empty_choices: last !== undefined && last.choices.length === 0,
    last_chunk_has_usage: last !== undefined && last.usage !== null && typeof last.usage === 'object',
    ids: [...new Set(chunks.map((c) => c.id))],
  };
}

async function tools() {
  const response = await makeClient().chat.completions.create({
    model: model(),
    messages: messages(),
    tools: TOOLS,
    stream: true,
  });
  const calls = new Map();
  let chunkCount = 0;
  let text = '';
  let finishReason = null;
  for await (const chunk of response) {
    chunkCount++;
    for (const choice of chunk.choices ?? []) {
      if (typeof choice.delta?.content === 'string') text += choice.delta.content;
      if (choice.finish_reason) finishReason = choice.finish_reason;
      for (const delta of choice.delta?.tool_calls ?? []) {
        let call = calls.get(delta.index);
        if (!call) {
          call = { index: delta.index, id: null, type: null, name: null, name_chunks: 0, arguments: '', argument_chunks: 0 };
          calls.set(delta.index, call);
        }
        if (delta.id) call.id = delta.id;
        if (delta.type) call.type = delta.type;
        if (typeof delta.function?.name === 'string' && delta.function.name !== '') {
          // Only the first chunk of a call is meant to carry the name; count any repeats.
          if (call.name === null) call.name = delta.function.name;
          call.name_chunks++;
        }
        if (typeof delta.function?.arguments === 'string' && delta.function.arguments !== '') {
          call.arguments += delta.function.arguments;
          call.argument_chunks++;
        }
      }
    }
  }
  const toolCalls = [...calls.values()]
    .sort((a, b) => a.index - b.index)
    .map((c) => ({ ...c, arguments_json: parseOrNull(c.arguments) }));
  return { chunk_count: chunkCount, text, finish_reason: finishReason, tool_calls: toolCalls };
}

async function error() {
  const streamed = env('MEND_TEST_ERROR_STREAM', '0') === '1';
  const client = makeClient({ maxRetries: 0 });
  try {
    const response = await client.chat.completions.create({ model: model(), messages: messages(), stream: streamed });
    if (streamed) {
      let count = 0;
      for await (const _chunk of response) count++;
      fail(`expected an error status, but the stream succeeded with ${count} chunks`);
    }
    fail(`expected an error status, but the request succeeded: ${JSON.stringify(response.choices?.[0]?.message?.content ?? null)}`);
  } catch (err) {
    if (!(err instanceof OpenAI.APIError)) throw err;
    return {
      streamed,
      ...describeError(err),
      is_api_error: true,
      retry_after: err.headers?.get?.('retry-after') ?? null,
    };
  }
}

async function abort() {
  const controller = new AbortController();
  const response = await makeClient().chat.completions.create(
    { model: model(), messages: messages(), stream: true, stream_options: { include_usage: true } },
    { signal: controller.signal },
  );
  let chunksRead = 0;
  let caught = null;
  try {
    for await (const _chunk of response) {
      chunksRead++;
      // Leaving the loop is how an SDK user stops a stream; a read still pending when the signal
      // fires is not always settled by the SDK, so the loop is not left waiting on one.
      controller.abort();
      break;
    }
  } catch (err) {
    caught = err;
  }
  return {
    chunks_read: chunksRead,
    chunks_after_abort: Math.max(0, chunksRead - 1),
    aborted: controller.signal.aborted,
    error_name: caught?.name ?? null,
    error_class: caught?.constructor?.name ?? null,
    error_message: caught?.message ?? null,
    ended_without_error: caught === null,
  };
}

// The text of a Responses API `response` object's output_text parts.
function responseText(response) {
  if (!response) return null;
  if (typeof response.output_text === 'string') return response.output_text;
  let text = '';
  for (const item of response.output ?? []) {
    if (item.type !== 'message') continue;
    for (const part of item.content ?? []) if (part.type === 'output_text') text += part.text;
  }
  return text;
}

async function responses() {
  const client = makeClient();
  const input = env('MEND_TEST_PROMPT', 'Say hello in one short sentence.');
  const instructions = env('MEND_TEST_SYSTEM', '');
  const request = { model: model(), input };
  if (instructions !== '') request.instructions = instructions;

  const single = await client.responses.create(request);

  const events = await client.responses.create({ ...request, stream: true });
  const eventTypes = [];
  let deltas = '';
  let completed = null;
  for await (const event of events) {
    eventTypes.push(event.type);
    if (event.type === 'response.output_text.delta') deltas += event.delta;
    if (event.type === 'response.completed') completed = event.response;
  }
  return {
    output_text: single.output_text ?? null,
    id: single.id ?? null,
    status: single.status ?? null,
    usage: single.usage ?? null,
    stream_event_types: eventTypes,
    stream_text: deltas,
    stream_completed_text: responseText(completed),
    stream_usage: completed?.usage ?? null,
  };
}

async function models() {
  const ids = [];
  for await (const entry of makeClient().models.list()) ids.push(entry.id);
  return { ids };
}

async function embeddings() {
  const result = await makeClient().embeddings.create({
    model: env('MEND_TEST_EMBEDDING_MODEL', 'text-embedding-3-small'),
    input: env('MEND_TEST_EMBEDDING_INPUT', 'The quick brown fox.'),
  });
  const vectors = result.data ?? [];
  return {
    count: vectors.length,
    dimensions: vectors[0]?.embedding?.length ?? null,
    all_dimensions: vectors.map((v) => v.embedding?.length ?? null),
    model: result.model ?? null,
    usage: result.usage ?? null,
  };
}

const HANDLERS = { plain, stream, tools, error, abort, responses, models, embeddings };

runMain(async () => {
  const scenario = process.argv[2];
  if (!SCENARIOS.includes(scenario)) fail(`usage: openai_chat.mjs ${SCENARIOS.join('|')}`);
  const observed = await HANDLERS[scenario]();
  await finish({ scenario, ...observed });
});
