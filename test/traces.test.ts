import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { ApiClient, fetchTransport } from '../scripts/lib/api-client.ts';
import { provisionAccount, randomCpf } from '../scripts/lib/provision.ts';
import { createTestDatabase, onPostgres, type TestDatabase } from './harness.ts';
import { killAll, listenAddresses, run, sandboxBanner, started } from './processes.ts';
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.ts';

/**
 * Tracing over OTLP, with a receiver in the test: the service started with
 * OTEL_EXPORTER_OTLP_ENDPOINT sends spans, and one transfer makes one trace that spans the HTTP
 * request, its SQL (PostgreSQL's driver is instrumented; the embedded database has no driver to
 * instrument), the settlement and the webhook delivery, which carries the trace's traceparent.
 */

interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: { stringValue?: string; intValue?: string | number } }[];
}

/** An OTLP/HTTP receiver (JSON), keeping every span it is sent. */
async function otlpReceiver(): Promise<{ url: string; spans: Span[]; close(): Promise<void> }> {
  const spans: Span[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { resourceSpans?: { scopeSpans?: { spans?: Span[] }[] }[] };
      for (const resource of body.resourceSpans ?? []) for (const scope of resource.scopeSpans ?? []) spans.push(...(scope.spans ?? []));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

const attribute = (span: Span, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value?.stringValue ?? (value?.intValue === undefined ? undefined : String(value.intValue));
};

describe('traces over OTLP', () => {
  let otlp: Awaited<ReturnType<typeof otlpReceiver>>;
  let rcv: WebhookReceiver;
  let database: TestDatabase | undefined;
  let dataDir: string;
  let api: ApiClient;
  const ADMIN_TOKEN = 'traces-test-admin-token-0001';

  before(async () => {
    otlp = await otlpReceiver();
    rcv = await startWebhookReceiver();
    dataDir = mkdtempSync(join(tmpdir(), 'pix-traces-'));
    database = onPostgres ? await createTestDatabase() : undefined;
    const proc = run(['serve'], {
      ADMIN_TOKEN,
      DATA_DIR: dataDir,
      ...(database?.url ? { DATABASE_URL: database.url } : {}),
      KEY_ENCRYPTION_KEY: Buffer.alloc(32, 3).toString('base64'),
      SETTLEMENT_DELAY_MS: '100',
      WEBHOOK_CA_FILE: rcv.caFile,
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    await started(proc, sandboxBanner);
    api = new ApiClient(fetchTransport(listenAddresses(proc.stdout()).main));
  });
  after(async () => {
    killAll();
    await otlp?.close();
    await rcv?.close();
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('one transfer is one trace: its request, its SQL, its settlement and its webhook, which carries the traceparent', async () => {
    const payer = await provisionAccount(api, ADMIN_TOKEN, { fund: '50.00' });
    await payer.api.registerWebhook({ url: `${rcv.origin}/traces`, eventType: 'cash_out' });
    const key = `traces-${randomCpf()}@example.com`;
    await api.operator(ADMIN_TOKEN).registerExternalKey({ key, name: 'Recebedor', document: randomCpf(), ispb: '60746948' });
    const transfer = await payer.api.transfer({ pixKey: key, payment: { currency: 'BRL', amount: 3 } });
    const [delivered] = await rcv.waitFor(1, 20_000);
    const traceparent = delivered!.headers.traceparent;
    assert.match(traceparent ?? '', /^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/, 'the webhook carries a W3C traceparent');
    const traceId = traceparent!.split('-')[1]!;

    // Spans arrive in batches: wait for the whole trace.
    const inTrace = () => otlp.spans.filter((s) => s.traceId === traceId);
    for (let i = 0; i < 100 && !inTrace().some((s) => s.name === 'pix.webhook.deliver'); i++) await delay(100);
    const spans = inTrace();
    const names = spans.map((s) => s.name);
    const server = spans.find((s) => s.kind === 2 && !s.parentSpanId);
    assert.ok(server, `a server span roots the trace: ${names.join(', ')}`);
    assert.equal(attribute(server, 'http.route') ?? attribute(server, 'url.path') ?? attribute(server, 'http.target'), '/dict/pix');
    const requestId = attribute(server, 'pix.request_id');
    assert.ok(requestId, 'the request id is on the server span');
    assert.ok(names.includes('pix.settle'), `the settlement is in the trace: ${names.join(', ')}`);
    assert.equal(attribute(spans.find((s) => s.name === 'pix.settle')!, 'pix.transaction_id'), String(transfer.id));
    assert.ok(names.includes('pix.webhook.deliver'), 'the delivery is in the trace');
    if (onPostgres) {
      const sql = spans.filter((s) => attribute(s, 'db.system') === 'postgresql' || attribute(s, 'db.system.name') === 'postgresql');
      assert.ok(sql.length > 0, `the request's SQL is in the trace: ${names.join(', ')}`);
      for (const s of sql) assert.equal(attribute(s, 'pix.request_id'), requestId, `${s.name}: the request id on its SQL span`);
    }
  });
});

describe('without OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  it('nothing of OpenTelemetry is loaded: only src/telemetry/start.ts imports it, and only main.ts imports that, when the variable is set', async () => {
    const { readdirSync, readFileSync, statSync } = await import('node:fs');
    const root = new URL('../src/', import.meta.url).pathname;
    const files = (dir: string): string[] => readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? files(join(dir, n)) : [join(dir, n)]));
    const importers = files(root)
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
      .filter((f) => /from '(@opentelemetry\/|@fastify\/otel)|import\('(@opentelemetry\/|@fastify\/otel)/.test(readFileSync(f, 'utf8')))
      .map((f) => f.slice(root.length));
    assert.deepEqual(importers, ['telemetry/start.ts']);
    const startImporters = files(root).filter((f) => f.endsWith('.ts') && readFileSync(f, 'utf8').includes("telemetry/start.ts'")).map((f) => f.slice(root.length));
    assert.deepEqual(startImporters, ['main.ts']);
    assert.match(readFileSync(join(root, 'main.ts'), 'utf8'), /process\.env\.OTEL_EXPORTER_OTLP_ENDPOINT \? await \(await import\('\.\/telemetry\/start\.ts'\)\)/);
  });
});
