'use strict';
// A test peer: sends one small trace to an OTLP/HTTP receiver with the official OpenTelemetry JS
// SDK, as any agent instrumented with it would.
//
//   node send_spans.js URL PROTOCOL SERVICE N
//
// URL is the full traces URL (http://127.0.0.1:7070/v1/traces); PROTOCOL is `json`
// (@opentelemetry/exporter-trace-otlp-http) or `proto` (@opentelemetry/exporter-trace-otlp-proto);
// SERVICE becomes the resource's service.name; N is the number of child spans.
//
// The trace: a SERVER root span `agent.run` with N children `tool.call <i>` (INTERNAL). Every
// child carries attributes of several types: `tool.index` (int), `tool.name` (string),
// `tool.score` (double), `tool.cached` (bool), `tool.tags` (string array), `tool.sizes`
// (int array). Child 0 has status ERROR with the message "tool failed" and an event `retry` with
// `retry.attempt` (int) and `retry.reason` (string). The resource has service.name = SERVICE and
// `deployment.environment.name` = "test".
//
// Prints one JSON line on stdout, {"traceId","rootSpanId","childSpanIds":[...]}, once the spans
// are exported. Exits 0 when every export succeeded, 1 when one failed (the receiver refused the
// request or could not be reached), 2 on a usage error.
const {NodeTracerProvider, BatchSpanProcessor} = require('@opentelemetry/sdk-trace-node');
const {resourceFromAttributes} = require('@opentelemetry/resources');
const {ATTR_SERVICE_NAME} = require('@opentelemetry/semantic-conventions');
const api = require('@opentelemetry/api');
const {OTLPTraceExporter: JsonExporter} = require('@opentelemetry/exporter-trace-otlp-http');
const {OTLPTraceExporter: ProtoExporter} = require('@opentelemetry/exporter-trace-otlp-proto');

function usage(message) {
  process.stderr.write(`send_spans: ${message}\n` +
                       'usage: node send_spans.js URL json|proto SERVICE N\n');
  process.exit(2);
}

// Forwards to the real exporter and remembers every export's outcome: BatchSpanProcessor reports
// a failed export to the global error handler, which would otherwise only log it.
class RecordingExporter {
  constructor(inner) {
    this.inner = inner;
    this.exports = 0;
    this.failures = [];
  }
  export(spans, done) {
    this.inner.export(spans, (result) => {
      this.exports++;
      if (result.code !== 0) this.failures.push(String(result.error || 'export failed'));
      done(result);
    });
  }
  forceFlush() { return this.inner.forceFlush ? this.inner.forceFlush() : Promise.resolve(); }
  shutdown() { return this.inner.shutdown(); }
}

function makeTrace(tracer, children) {
  const ids = {traceId: '', rootSpanId: '', childSpanIds: []};
  const root = tracer.startSpan('agent.run', {kind: api.SpanKind.SERVER});
  root.setAttribute('agent.task', 'send spans');
  ids.traceId = root.spanContext().traceId;
  ids.rootSpanId = root.spanContext().spanId;
  const parent = api.trace.setSpan(api.context.active(), root);
  for (let i = 0; i < children; i++) {
    const child = tracer.startSpan(`tool.call ${i}`, {kind: api.SpanKind.INTERNAL}, parent);
    child.setAttributes({
      'tool.index': i,
      'tool.name': `tool-${i}`,
      'tool.score': i + 0.5,
      'tool.cached': i % 2 === 1,
      'tool.tags': ['alpha', 'beta'],
      'tool.sizes': [1, 2, 3],
    });
    if (i === 0) {
      child.addEvent('retry', {'retry.attempt': 2, 'retry.reason': 'timeout'});
      child.setStatus({code: api.SpanStatusCode.ERROR, message: 'tool failed'});
    }
    ids.childSpanIds.push(child.spanContext().spanId);
    child.end();
  }
  root.end();
  return ids;
}

async function main() {
  const [url, protocol, service, count] = process.argv.slice(2);
  if (!url || !service || count === undefined) usage('missing arguments');
  if (protocol !== 'json' && protocol !== 'proto') usage(`unknown protocol "${protocol}"`);
  const children = Number.parseInt(count, 10);
  if (!Number.isInteger(children) || children < 0 || String(children) !== count) {
    usage(`N must be a non-negative integer, got "${count}"`);
  }
  const Exporter = protocol === 'json' ? JsonExporter : ProtoExporter;
  const exporter = new RecordingExporter(new Exporter({url, timeoutMillis: 10000}));
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: service,
      'deployment.environment.name': 'test',
    }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  const ids = makeTrace(provider.getTracer('mend-otlp-sdk-peer', '1.0.0'), children);
  let flushError = null;
  try {
    await provider.forceFlush();
  } catch (err) {
    flushError = err;
  }
  await provider.shutdown().catch(() => {});
  if (flushError !== null || exporter.failures.length > 0 || exporter.exports === 0) {
    const why = flushError !== null ? String(flushError) : exporter.failures.join('; ');
    process.stderr.write(`send_spans: export to ${url} failed: ${why || 'nothing exported'}\n`);
    process.exit(1);
  }
  process.stdout.write(JSON.stringify(ids) + '\n');
}

main().catch((err) => {
  process.stderr.write(`send_spans: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
