import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { createClient, creditAccount, externalKey, transferRow, type TestClient } from '../../test/factories.ts';
import { adminHeaders, startTestApp, type TestApp } from '../../test/harness.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../test/webhook-receiver.ts';
import { BLOCKED_SHARDS, LEDGER_CODES } from '../modules/ledger/repo.ts';
import { settleDue } from '../modules/settlement/service.ts';
import { createTransfers } from '../modules/transfers/repo.ts';
import { deliverDue } from '../modules/webhooks/delivery.ts';
import { WebhookSender } from '../modules/webhooks/sender.ts';
import { ServiceMetrics } from './metrics.ts';

/** The samples of a scrape: `name{labels} value`, comments left out. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

describe('GET /metrics', () => {
  let t: TestApp;
  let metrics: ServiceMetrics;
  let client: TestClient;
  let rcv: WebhookReceiver;

  before(async () => {
    metrics = new ServiceMetrics();
    t = await startTestApp({ metrics });
    metrics.addPool('api', () => t.testDb.database.stats());
    client = await createClient(t);
    await creditAccount(t.db, client.accountId, 100_000n);
    rcv = await startWebhookReceiver();
  });
  after(async () => {
    await rcv.close();
    await t.close();
  });

  const scrape = async () => {
    const res = await t.app.inject({ method: 'GET', url: '/metrics', headers: adminHeaders });
    assert.equal(res.statusCode, 200, res.body);
    assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    return samples(res.body);
  };
  const value = (scraped: Map<string, number>, name: string) => scraped.get(name) ?? 0;

  it('takes the admin token', async () => {
    assert.equal((await t.app.inject({ method: 'GET', url: '/metrics' })).statusCode, 401);
    assert.equal((await t.app.inject({ method: 'GET', url: '/metrics', headers: client.headers })).statusCode, 401);
  });

  it("has every named series, Node's process metrics and the event loop's delay", async () => {
    const scraped = await scrape();
    for (const name of [
      'pix_transfers_total{stage="created"}',
      'pix_transfers_total{stage="settled"}',
      'pix_transfers_total{stage="failed"}',
      'pix_settlement_queue_depth',
      'pix_settlement_lag_seconds',
      'pix_webhook_deliveries_pending',
      'pix_webhook_oldest_pending_age_seconds',
      'pix_webhook_open_circuit_breakers',
      'pix_database_primary',
      'pix_database_connections_in_use{pool="api"}',
      'pix_database_connections_waiting{pool="api"}',
      'nodejs_eventloop_lag_p99_seconds',
      'process_cpu_user_seconds_total',
      'nodejs_heap_size_used_bytes',
    ]) {
      assert.ok(scraped.has(name), `${name} is missing`);
    }
    assert.equal(value(scraped, 'pix_database_primary'), 1);
  });

  it('transfers: created, queued, lagging, then settled or failed; requests counted by route pattern and status class', async () => {
    const start = await scrape();
    const good = await externalKey(t);
    const refusing = await externalKey(t, { behavior: 'reject' });
    for (const key of [good.key, good.key, refusing.key]) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/dict/pix',
        headers: { ...client.headers, 'x-idempotency-key': randomUUID() },
        payload: { pixKey: key, payment: { currency: 'BRL', amount: 1 } },
      });
      assert.equal(res.statusCode, 201, res.body);
    }
    t.clock.advance(5_000);
    const queued = await scrape();
    assert.equal(value(queued, 'pix_transfers_total{stage="created"}') - value(start, 'pix_transfers_total{stage="created"}'), 3);
    assert.equal(value(queued, 'pix_settlement_queue_depth'), 3);
    assert.ok(value(queued, 'pix_settlement_lag_seconds') >= 5, `lag ${value(queued, 'pix_settlement_lag_seconds')}`);
    const route = 'pix_http_request_duration_seconds_count{method="POST",route="/dict/pix",status="2xx"}';
    assert.equal(value(queued, route) - value(start, route), 3);

    await settleDue({ db: t.db, clock: t.controls!.clock, ispb: t.config.pspIspb, settlementDelayMs: 0, metrics });
    const settled = await scrape();
    assert.equal(value(settled, 'pix_transfers_total{stage="settled"}') - value(start, 'pix_transfers_total{stage="settled"}'), 2);
    assert.equal(value(settled, 'pix_transfers_total{stage="failed"}') - value(start, 'pix_transfers_total{stage="failed"}'), 1);
    assert.equal(value(settled, 'pix_settlement_queue_depth'), 0);
    assert.equal(value(settled, 'pix_settlement_lag_seconds'), 0);
  });

  it('webhooks: deliveries pending and the age of the oldest due, failures per class, open breakers', async () => {
    const path = `/metricas/${client.accountId}`;
    await t.app.inject({ method: 'POST', url: '/api/webhooks', headers: client.headers, payload: { url: `${rcv.origin}${path}`, eventType: 'cash_in' } });
    rcv.respond = (r) => (r.path === path ? 503 : 200);
    const start = await scrape();
    const key = (await t.app.inject({ method: 'POST', url: `/admin/accounts/${client.accountId}/pix-keys`, headers: adminHeaders, payload: { type: 'evp' } })).json<{ key: string }>().key;
    for (let i = 0; i < 4; i++) await t.app.inject({ method: 'POST', url: '/sandbox/pix/incoming', headers: adminHeaders, payload: { pixKey: key, amount: '1.00', payer: { name: 'Pagador', document: '52998224725' } } });
    t.clock.advance(2_000);
    const due = await scrape();
    assert.equal(value(due, 'pix_webhook_deliveries_pending') - value(start, 'pix_webhook_deliveries_pending'), 4);
    assert.ok(value(due, 'pix_webhook_oldest_pending_age_seconds') >= 2);

    const sender = new WebhookSender({ allowPrivate: true, caFile: rcv.caFile, timeoutMs: 3000, observe: (a) => metrics.webhookAttempt(a) });
    try {
      await deliverDue({ db: t.db, clock: t.controls!.clock, sender }, { limits: { perDestination: 1, perAccount: 32 }, breaker: { threshold: 3, openMs: 60_000, maxOpenMs: 60_000 } });
    } finally {
      await sender.close();
      rcv.respond = () => 200;
    }
    const failed = await scrape();
    assert.equal(value(failed, 'pix_webhook_delivery_failures_total{class="http_5xx"}') - value(start, 'pix_webhook_delivery_failures_total{class="http_5xx"}'), 3);
    assert.equal(value(failed, 'pix_webhook_open_circuit_breakers'), 1);
  });

  it('labels stay bounded: thousands of distinct paths and accounts add no series', async () => {
    const before = await scrape();
    const others: TestClient[] = [];
    for (let i = 0; i < 20; i++) others.push(await createClient(t));
    for (let i = 0; i < 2_000; i++) {
      const who = others[i % others.length]!;
      await t.app.inject({ method: 'GET', url: `/api/pix/transaction/${1_000_000 + i}`, headers: who.headers });
      await t.app.inject({ method: 'GET', url: `/nada/${randomUUID()}` });
    }
    const after = await scrape();
    const added = [...after.keys()].filter((name) => !before.has(name));
    // The two routes (and the token requests of the new accounts) once each, whatever the paths and accounts.
    assert.ok(added.length <= 3 * 12, `${added.length} new series:\n${added.join('\n')}`);
    assert.ok(after.size < 400, `${after.size} series in all`);
    for (const name of after.keys()) assert.doesNotMatch(name, /[0-9a-f]{8}-[0-9a-f]{4}|1000\d{3}|pix_[a-z0-9]{16}/, `an id in a label: ${name}`);
    assert.ok(after.has('pix_http_request_duration_seconds_count{method="GET",route="unmatched",status="4xx"}'));
  });

  it('a scrape after 10,000 accounts each made a transfer that settled has fewer than a few hundred series, and none names an account', async () => {
    const N = 10_000;
    const receiver = await externalKey(t);
    await scrape(); // the scrape's own route, counted once
    const before = await scrape();
    const now = t.clock.now();
    const tag = randomUUID().slice(0, 8);
    // The accounts, their ledger accounts and the money they get from the network in three
    // statements (the operator API would hash 10,000 client secrets); ledger_post moves the money.
    const { rows } = await sql<{ id: string }>`
      insert into accounts (name, document, document_type, branch, account_number, client_id, client_secret_hash, webhook_secret, created_at)
      select 'Conta ' || g, lpad(g::text, 11, '0'), 'CPF', '0001', ${tag} || '-' || g, 'pix_' || ${tag} || '_' || g, 'unused', 'unused', ${now}
      from generate_series(1, ${N}) g
      returning id`.execute(t.db);
    const ids = rows.map((r) => BigInt(r.id));
    await sql`
      insert into ledger_accounts (account_id, code, shard, created_at)
      select a.id, c.code, c.shard, ${now}
      from accounts a, (select ${LEDGER_CODES.available}::text as code, 0 as shard
                        union all select ${LEDGER_CODES.blocked}, s from generate_series(0, ${BLOCKED_SHARDS - 1}) s) c
      where a.account_number like ${`${tag}-%`}`.execute(t.db);
    const network = await t.db.selectFrom('ledger_accounts').select('id').where('account_id', 'is', null).where('code', '=', 'pix_network').executeTakeFirstOrThrow();
    await sql`
      select ledger_post('test_credit', null, null, ${network.id}::int8, l.id, 500, ${now}::timestamptz)
      from ledger_accounts l join accounts a on a.id = l.account_id
      where a.account_number like ${`${tag}-%`} and l.code = ${LEDGER_CODES.available}`.execute(t.db);
    // A transfer each, through the batch function POST /dict/pix uses, then settled by the worker's path.
    for (let i = 0; i < N; i += 1_000) {
      const made = await createTransfers(t.db, ids.slice(i, i + 1_000).map((accountId) => transferRow({ accountId, pixKey: receiver.key, now })), () => 0);
      assert.ok(made.every((r) => r.outcome === 'created'), JSON.stringify(made.find((r) => r.outcome !== 'created')));
    }
    const result = await settleDue({ db: t.db, clock: t.controls!.clock, ispb: t.config.pspIspb, settlementDelayMs: 0, metrics }, { limit: 1_000 });
    assert.equal(result.settled, N);

    const after = await scrape();
    assert.equal(value(after, 'pix_transfers_total{stage="settled"}') - value(before, 'pix_transfers_total{stage="settled"}'), N);
    const added = [...after.keys()].filter((name) => !before.has(name));
    assert.deepEqual(added, [], `${added.length} new series:\n${added.join('\n')}`);
    assert.ok(after.size < 400, `${after.size} series in all`);
    for (const name of after.keys()) assert.doesNotMatch(name, new RegExp(`${tag}|\\b${ids[N - 1]}\\b`), `an account in a label: ${name}`);
  });
});
