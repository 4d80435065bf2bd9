'use strict';
// A test OTLP/HTTP trace receiver. Listens on 127.0.0.1 (an ephemeral port), prints
// "listening on 127.0.0.1:<port>", then one JSON line per POST /v1/traces:
//   {"status":<answer>,"contentType":"...","request":<normalized ExportTraceServiceRequest>}
// Protobuf bodies are decoded with the generated definitions shipped in
// @opentelemetry/otlp-transformer; JSON bodies are parsed, their hex ids turned into bytes and
// converted through the same definitions, so both encodings print the same normalized form: ids
// as lowercase hex, 64-bit integers as decimal strings, enums as numbers.
// Options: --fail-first N answers the first N requests with 503 and "Retry-After: 1".
const http = require('http');
const path = require('path');

const root = require(path.join(__dirname, 'node_modules', '@opentelemetry', 'otlp-transformer',
                               'build', 'src', 'generated', 'root.js'));
const Request = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

let failFirst = 0;
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--fail-first') failFirst = parseInt(args[++i], 10);
}

const ID_FIELDS = new Set(['traceId', 'spanId', 'parentSpanId']);

function hexIdsToBytes(value, key) {
  if (Array.isArray(value)) return value.map((v) => hexIdsToBytes(v, ''));
  if (value !== null && typeof value === 'object') {
    const out = {};
    for (const [k, v] of Object.entries(value)) out[k] = hexIdsToBytes(v, k);
    return out;
  }
  if (ID_FIELDS.has(key) && typeof value === 'string') return Buffer.from(value, 'hex');
  return value;
}

function bytesToHex(value) {
  if (value instanceof Uint8Array) return Buffer.from(value).toString('hex');
  if (Array.isArray(value)) return value.map(bytesToHex);
  if (value !== null && typeof value === 'object') {
    const out = {};
    for (const [k, v] of Object.entries(value)) out[k] = bytesToHex(v);
    return out;
  }
  return value;
}

function normalize(message) {
  const object = Request.toObject(message, {longs: String, enums: Number, bytes: Buffer});
  return bytesToHex(object);
}

function decode(contentType, body) {
  if (contentType === 'application/x-protobuf') return Request.decode(body);
  if (contentType === 'application/json') {
    const parsed = hexIdsToBytes(JSON.parse(body.toString('utf8')), '');
    const error = Request.verify(Request.fromObject(parsed));
    if (error) throw new Error(error);
    return Request.fromObject(parsed);
  }
  throw new Error('unexpected content type ' + contentType);
}

let seen = 0;
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const contentType = req.headers['content-type'] || '';
    const line = {path: req.url, contentType, headers: {'x-test': req.headers['x-test'] || ''}};
    if (req.method !== 'POST' || req.url !== '/v1/traces') {
      res.writeHead(404).end();
      return;
    }
    seen++;
    if (seen <= failFirst) {
      line.status = 503;
      process.stdout.write(JSON.stringify(line) + '\n');
      res.writeHead(503, {'Retry-After': '1'}).end();
      return;
    }
    try {
      line.request = normalize(decode(contentType, Buffer.concat(chunks)));
      line.status = 200;
    } catch (e) {
      line.status = 400;
      line.error = String(e && e.message);
    }
    process.stdout.write(JSON.stringify(line) + '\n');
    res.writeHead(line.status, {'Content-Type': contentType}).end();
  });
});

server.listen(0, '127.0.0.1', () => {
  process.stdout.write('listening on 127.0.0.1:' + server.address().port + '\n');
});
