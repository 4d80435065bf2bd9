// Runs the official MCP TypeScript SDK's client against `mend mcp serve` over stdio and prints
// what it observed as one JSON object on stdout.
//
//   node sdk_client.mjs MEND_BINARY HOME          (starts `mend mcp serve` over stdio)
//   node sdk_client.mjs --url URL [TOKEN]         (a running `mend mcp serve --http`)
//
// It initializes, lists the tools and resources, and calls each tool once with valid arguments
// (add_fact twice with the same text, to see reinforcement), then one with invalid arguments.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const args = process.argv.slice(2);
if (args.length < 2) {
  process.stderr.write('usage: node sdk_client.mjs MEND_BINARY HOME | --url URL [TOKEN]\n');
  process.exit(2);
}

function makeTransport() {
  if (args[0] === '--url') {
    const headers = args[2] ? { Authorization: `Bearer ${args[2]}` } : {};
    return new StreamableHTTPClientTransport(new URL(args[1]), { requestInit: { headers } });
  }
  const [mend, home] = args;
  return new StdioClientTransport({
    command: mend, args: ['--home', home, 'mcp', 'serve'], stderr: 'pipe',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home },
  });
}

function structured(result) {
  return { is_error: result.isError === true, structured: result.structuredContent ?? null,
           text: (result.content ?? []).map((c) => c.text ?? '').join('') };
}

async function main() {
  const transport = makeTransport();
  const client = new Client({ name: 'mend-e2e', version: '1.0.0' });
  await client.connect(transport);
  const out = {
    server: client.getServerVersion(),
    capabilities: client.getServerCapabilities(),
    instructions: client.getInstructions() ?? null,
  };
  const tools = await client.listTools();
  out.tools = tools.tools.map((t) => ({ name: t.name, annotations: t.annotations ?? null,
                                        has_output_schema: t.outputSchema !== undefined }));
  const call = async (name, args) => structured(await client.callTool({ name, arguments: args }));
  out.calls = {};
  out.calls.add_fact = await call('add_fact', { content: 'The staging database is db-stage-2 on port 5433.', tags: ['database', 'staging'] });
  out.calls.add_fact_again = await call('add_fact', { content: 'The staging database is db-stage-2 on port 5433.', tags: ['database', 'staging'] });
  out.calls.add_lesson = await call('add_lesson', { situation: 'When deploying to staging', mistake: 'used port 5432', correction: 'Use port 5433 for the staging database.', tags: ['deploy'] });
  out.calls.search = await call('search', { query: 'staging database port', k: 5 });
  out.calls.recall = await call('recall', { task: 'which port does the staging database db-stage-2 listen on' });
  out.calls.report_failure = await call('report_failure', { task: 'migrate the staging schema', attempt: 'ran psql -p 5432', outcome: 'connection refused' });
  const factId = out.calls.add_fact.structured?.fact_id;
  out.calls.lesson_feedback = await call('lesson_feedback', { fact_id: factId, outcome: 'helped' });
  out.calls.runs = await call('runs', { limit: 5 });
  out.calls.run_missing = await call('run', { id: 'no-such-run' });
  out.calls.bad_arguments = await call('search', { k: 5 });
  const resources = await client.listResources();
  out.resources = resources.resources.map((r) => r.uri);
  const templates = await client.listResourceTemplates();
  out.templates = templates.resourceTemplates.map((r) => r.uriTemplate);
  const lessons = await client.readResource({ uri: 'mend://lessons/LESSONS.md' });
  out.lessons_text = lessons.contents[0]?.text ?? null;
  out.session_id = transport.sessionId ?? null;
  await client.close();
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((err) => {
  process.stderr.write(`${err?.constructor?.name ?? 'Error'}: ${err?.message ?? String(err)}\n`);
  process.exit(1);
});
